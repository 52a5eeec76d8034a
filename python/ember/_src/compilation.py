"""IR texts to a compiled module, through the persistent cache: the one place that decides
whether IREE runs, and says so (events, compile log, disk-miss explanations)."""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ember import config
from ember.compiler import iree_driver, pipeline
from ember.compiler.disk_cache import DiskCache
from ember.dialect.types import ShapedArray
from ember.runtime import Device, platform_of
from ember.runtime.executable import unloadable

from . import events

logger = logging.getLogger("ember")
_OFF = {"", "off", "none", "false", "0"}
LONG_COMPILE_S = 2.0  # a compile this long says so at INFO, even without ember_log_compiles


def cache_dir() -> Path | None:
    value = config.read("ember_compilation_cache_dir")
    if value is False or (isinstance(value, str) and value.strip().lower() in _OFF):
        return None
    if value is None:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "ember"
    return Path(value)


@functools.lru_cache(maxsize=8)
def _disk_cache(root: Path, max_bytes: int) -> DiskCache:
    return DiskCache(root, max_bytes)


def disk_cache() -> DiskCache | None:
    root = cache_dir()
    if root is None:
        return None
    cache = _disk_cache(root, int(config.read("ember_compilation_cache_max_size")))
    return cache if cache.usable else None


@dataclass(frozen=True)
class Placement:
    """Where compiled code runs, decided once per lowering and carried to the runtime: the
    device name asked for, the IREE target compiled for, the runtime platform that runs it,
    and whether it runs on worker threads (then with IREE's coarse-fences ABI)."""

    device: str  # "cpu", "cuda", "cuda:sm_90", ...
    target: str  # an iree_driver target name: "cpu", "cpu-async", "cuda:sm_90", ...
    platform: str  # a runtime platform: "cpu", "cuda", ...
    parallel: bool
    tiled: bool = True  # CPU matmuls in the data-tiled layout (see iree_driver.untiled)

    def compile_target(self) -> iree_driver.Target:
        tgt = iree_driver.target(self.target)
        return tgt if self.tiled else iree_driver.untiled(tgt)


def device_name(device: Device) -> str:
    """The device name eager work on `device` compiles for: `ember_default_device` when it
    names this platform (it may pick an architecture: cuda:sm_90), else the platform."""
    default = config.read("ember_default_device")
    return default if platform_of(default) == device.platform else device.platform


def place(device: str, parallel: bool = False, matrices: bool = True) -> Placement:
    """The placement for a device name; on the CPU, `parallel` code (big enough to repay
    waking the worker threads, see runtime.executable.runs_in_parallel) runs on them, and
    matmuls are data-tiled where some contraction multiplies two matrices (`matrices`).
    Raises ValueError naming the choices for an unknown device."""
    kind, colon, arch = device.partition(":")
    parallel = kind == "cpu" and parallel
    tiled = kind != "cpu" or matrices
    cpu = config.read("ember_cpu")
    if kind == "cpu" and not colon and cpu:  # the CPU "cpu" compiles for
        colon, arch = ":", cpu
    name = ("cpu-async" if parallel else "cpu") + colon + arch if kind == "cpu" else device
    try:
        target = iree_driver.target(name).name
    except ValueError as e:
        if kind == "cpu" and arch == cpu:
            raise ValueError(f"ember_cpu (EMBER_CPU) names the CPU to compile for: {e}") \
                from None
        raise
    return Placement(device, target, platform_of(target), parallel, tiled)


def to_vmfb(texts: dict[str, str], name: str, in_avals: Sequence[ShapedArray],
            target: iree_driver.Target, abi: str = "", event: str = "compile") -> bytes:
    """The vmfb for lowered `texts`, from disk when an identical program was compiled."""
    signature = str([a.str_short() for a in in_avals])
    cache = disk_cache()
    key = pipeline.cache_key(texts["ember"], target, abi) if cache else None
    if cache is not None:
        vmfb, why = cache.get(key)
        broken = unloadable(vmfb) if vmfb is not None else ""
        if broken:  # its checksum holds, but what it holds is no module: compile it again
            cache.discard(key, f"IREE cannot load it: {broken}")
            vmfb, why = None, "the entry could not be loaded"
        if vmfb is not None:
            events.emit("disk_hit")
            return vmfb
        events.emit("disk_miss")
        if config.read("ember_explain_cache_misses"):
            logger.warning("PERSISTENT CACHE MISS for %s: %s", name, why)
    start = time.perf_counter()
    vmfb = iree_driver.compile_text(texts["linalg"], target, name=name)
    events.emit(event)
    seconds = time.perf_counter() - start
    if config.read("ember_log_compiles"):
        logger.warning("Finished compiling %s for %s in %.1f ms", name, signature,
                       seconds * 1e3)
    elif seconds > LONG_COMPILE_S:
        logger.info("Compiling %s for %s took %.1f s (ember_log_compiles logs every "
                    "compile)", name, signature, seconds)
    if cache is not None:
        cache.put(key, vmfb)
    return vmfb
