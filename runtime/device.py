"""The process-wide IREE instance and devices.

A device has two keys (after iree-turbine): `target` says which compiled code it runs (the
compiler's concern) and `driver` says which loaded contexts it can share.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import iree.runtime as rt
from iree.runtime import _binding

# Devices, contexts and modules live in process-wide caches until exit; nanobind would list
# each of them as "leaked" at interpreter shutdown. They are not leaks: silence the checker.
_binding.disable_leak_checker()

# Ember's target names -> (IREE runtime driver, compile target name).
_DRIVERS = {"cpu": "local-task", "cpu-sync": "local-sync", "cuda": "cuda", "vulkan": "vulkan",
            "rocm": "hip"}


@functools.cache
def instance() -> rt.VmInstance:
    return rt.VmInstance()


@dataclass(frozen=True)
class Device:
    """A runtime device Ember can place arrays on and run modules on."""

    platform: str  # "cpu", "cuda", ...
    driver: str  # IREE driver name
    id: int = 0

    @functools.cached_property
    def hal(self) -> rt.HalDevice:
        return rt.get_driver(self.driver).create_default_device()

    @functools.cached_property
    def hal_module(self) -> rt.VmModule:
        return rt.create_hal_module(instance(), self.hal)

    def __repr__(self) -> str:
        return f"{self.platform.capitalize()}Device(id={self.id})"


@functools.cache
def get(platform: str = "cpu") -> Device:
    """The device for a platform name; raises with the choices when unknown or absent."""
    driver = _DRIVERS.get(platform)
    if driver is None:
        raise ValueError(f"device requires one of {sorted(_DRIVERS)}, got {platform!r}")
    dev = Device(platform, driver)
    try:
        dev.hal  # noqa: B018 - create it now so a missing device fails here, clearly
    except Exception as e:
        raise RuntimeError(f"no {platform} device on this machine ({e}); available: "
                           f"{[d.platform for d in devices()]}") from None
    return dev


@functools.cache
def devices() -> tuple[Device, ...]:
    return (Device("cpu", _DRIVERS["cpu"]),)


def default() -> Device:
    return get("cpu")
