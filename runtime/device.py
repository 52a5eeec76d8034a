"""The process-wide IREE instance and devices.

On the CPU, Ember holds two IREE devices over the same host memory: `local-task` runs a
module's dispatches on worker threads (all cores), `local-sync` runs them on the calling
thread. Waking the workers costs ~45 us per call on the 2-core development machine against
~3 us for local-sync, so each executable picks one by its work size (see executable.py).
Buffers from either device are host memory and are passed freely between them.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import iree.runtime as rt
from iree.runtime import _binding, flags as rt_flags

from . import topology

# Devices, contexts and modules live in process-wide caches until exit; nanobind would list
# each of them as "leaked" at interpreter shutdown. They are not leaks: silence the checker.
_binding.disable_leak_checker()

# Platform -> IREE drivers (the first allocates and runs parallel work; a second, if any,
# runs small modules inline). The names match the compile targets in compiler/iree_driver.py.
_PLATFORMS = {
    "cpu": ("local-task", "local-sync"),
    "cuda": ("cuda",),
    "vulkan": ("vulkan",),
    "rocm": ("hip",),
}


@functools.cache
def instance() -> rt.VmInstance:
    return rt.VmInstance()


def _immortal(obj):
    """Never destroyed, not even at interpreter exit: arrays that outlive the device's Python
    object (a global in the user's module, say) would otherwise free into a dead allocator."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    return obj


_THREADED = frozenset({"local-task"})  # drivers that run work on threads of their own
_started: set[str] = set()


# The CPU drivers' allocator keeps freed buffers for reuse: IREE's heap allocator zero-fills
# each buffer it hands out (4 MiB: 214-220 us, where a reused one takes 1.3 us), which an
# inline module's result and every device_put paid. At most 256 MiB of freed buffers of up to
# 64 MiB each, 32 of them, stay with each device (IREE's unbounded cache kept 2.7 GB after
# 52 distinct sizes). Same process, runs in turn with the plain allocator (3 each): 100
# scatter-adds into a 1M carry (an inline module) 874-891 -> 636-648 us, device_put of 4 MiB
# 570-671 -> 406-424 us; x + 1 over 1M, SELU and matmul+relu within noise.
_CACHING = "caching:device_local=64mib;256mib;32"
_CACHED_DRIVERS = frozenset({"local-task", "local-sync"})


@functools.cache
def _hal_device(driver: str) -> rt.HalDevice:
    _started.add(driver)
    if driver not in _THREADED:
        return _immortal(_create(driver, topology.Workers(None, "")))
    workers = topology.chosen()
    try:
        device = _create(driver, workers)
    except (RuntimeError, ValueError) as e:  # IREE raises ValueError for a bad topology
        if workers.count is not None:
            raise
        # IREE's topology query found no cores (some VMs) or failed: count them ourselves.
        workers = topology.fallback()
        topology.logger.debug("IREE's CPU topology failed (%s); %s runs %s worker threads "
                              "(%s)", str(e).splitlines()[0], driver, workers.count,
                              workers.reason)
        device = _create(driver, workers)
    else:
        if workers.count is not None:
            topology.logger.debug("%s runs %s worker threads (%s)", driver, workers.count,
                                  workers.reason)
    return _immortal(device)


def _create(driver: str, workers: topology.Workers) -> rt.HalDevice:
    if workers.flags():  # read by the driver when it creates its executor
        rt_flags.parse_flags(*workers.flags())
    allocators = [_CACHING] if driver in _CACHED_DRIVERS else None
    return rt.get_driver(driver).create_default_device(allocators=allocators)


# Whether this process was forked after a threaded device started: the child has the device
# but not its worker threads, and work submitted to it would never run.
threads_lost = False


def _after_fork_in_child() -> None:
    global threads_lost
    threads_lost = threads_lost or bool(_started & _THREADED)


os.register_at_fork(after_in_child=_after_fork_in_child)


DebugHandler = Callable[[str, Sequence[rt.HalBufferView]], None]
_debug_handlers: list[DebugHandler] = []


def on_debug_trace(handler: DebugHandler) -> None:
    """Receive `(key, buffer views)` for every trace op a module executes (debug printing);
    the handler runs on the thread executing the module and must copy what it keeps."""
    _debug_handlers.append(handler)


def _dispatch_debug_trace(key: str, views: Sequence[rt.HalBufferView]) -> None:
    for handler in _debug_handlers:
        handler(key, views)


_DEBUG_SINK = _immortal(rt.HalModuleDebugSink(_dispatch_debug_trace))


@functools.cache
def _hal_module(driver: str) -> rt.VmModule:
    return rt.create_hal_module(instance(), _hal_device(driver), debug_sink=_DEBUG_SINK)


@dataclass(frozen=True)
class Device:
    """A runtime device Ember can place arrays on and run modules on."""

    platform: str  # "cpu", "cuda", ...
    id: int = 0

    @property
    def drivers(self) -> tuple[str, ...]:
        return _PLATFORMS[self.platform]

    @property
    def hal(self) -> rt.HalDevice:
        """The device that allocates arrays (the first driver)."""
        return _hal_device(self.drivers[0])

    def hal_for(self, parallel: bool) -> tuple[rt.HalDevice, rt.VmModule]:
        """The device (and its HAL module) that runs a module: in a process forked after
        the worker threads started, every module runs inline (the threads are gone)."""
        inline = not parallel or threads_lost
        driver = self.drivers[1] if inline and len(self.drivers) > 1 else self.drivers[0]
        return _hal_device(driver), _hal_module(driver)

    def __repr__(self) -> str:
        return f"{self.platform.capitalize()}Device(id={self.id})"


def platform_of(name: str) -> str:
    """The platform that runs code for a device or compile-target name: "cpu", "cpu-async"
    and "cpu:znver4" run on the CPU, "cuda:sm_90" on CUDA."""
    kind = name.partition(":")[0]
    return "cpu" if kind in ("cpu", "cpu-async") else kind


# /proc/cpuinfo's flags whose LLVM features have other names, and those names; the rest
# match once both drop their separators ("avx512_bf16" is "avx512bf16", "sse4_1" "sse4.1").
_LLVM_NAMES = {
    "lm": ("64bit",), "fpu": ("x87",), "pni": ("sse3",), "sse4_2": ("sse4.2", "crc32"),
    "bmi1": ("bmi",), "abm": ("lzcnt",), "pclmulqdq": ("pclmul",), "lahf_lm": ("sahf",),
    "rdrand": ("rdrnd",), "sha_ni": ("sha",), "3dnowprefetch": ("prfchw",),
    "user_shstk": ("shstk",),
}
# System instructions no array kernel executes (LLVM emits them only for their intrinsics),
# which virtual machines or the kernel often hide from /proc/cpuinfo while LLVM still lists
# them for the host (Linux clears rdseed on Zen 5, whose RDSEED is faulty).
_NOT_CHECKED = frozenset({"64bit", "x87", "mwaitx", "rdpru", "wbnoinvd", "pku", "shstk",
                          "invpcid", "rdpid", "sgx", "kl", "widekl", "uintr", "ptwrite",
                          "rdseed", "rdrnd", "movdiri", "movdir64b", "prefetchi", "enqcmd",
                          "serialize", "cldemote", "waitpkg", "clzero", "clflushopt", "clwb",
                          "tsxldtrk", "hreset", "pconfig"})


# AVX10.1 is a name for the AVX-512 set of Sapphire Rapids: LLVM lists it (as "avx10.1",
# "avx10.1-256", "avx10.1-512") where CPUID says so, and kernels before AVX10 support list
# only its members; code for it uses nothing beyond them.
_AVX10_1 = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma",
                      "avx512vbmi", "avx512vbmi2", "avx512bitalg", "avx512vnni", "avx512bf16",
                      "avx512vpopcntdq", "avx512fp16"})


def _squashed(feature: str) -> str:
    return feature.lstrip("+").replace("_", "").replace("-", "").replace(".", "")


@functools.cache
def _cpuinfo() -> tuple[str, frozenset[str] | None]:
    """This CPU's model name and its features as /proc/cpuinfo names them, squashed (None
    where they cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return "unknown", None
    fields: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():  # the first processor's entry
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = (fields.get("flags") or fields.get("Features") or "").split()
    features = frozenset(_squashed(n) for f in flags for n in _LLVM_NAMES.get(f, (f,)))
    if _AVX10_1 <= features:
        features |= {"avx101", "avx101256", "avx101512"}
    return fields.get("model name", "unknown"), features or None


def cpu_model() -> str:
    return _cpuinfo()[0]


def missing_cpu_features(needed: frozenset[str]) -> list[str] | None:
    """Which of `needed` (LLVM's names: "+avx512f") this CPU lacks, so that code using them
    would die of SIGILL; None where the CPU's features cannot be read. Asks the kernel, not
    the compiler, so that a runtime-only install checks saved modules too."""
    have = _cpuinfo()[1]
    if have is None:
        return None
    return sorted(f.lstrip("+") for f in needed
                  if f.lstrip("+") not in _NOT_CHECKED and _squashed(f) not in have)


def get(platform: str = "cpu") -> Device:
    """The device for a platform name; raises with the choices when unknown or absent."""
    if platform not in _PLATFORMS:
        raise ValueError(f"device requires one of {sorted(_PLATFORMS)}, got {platform!r}")
    dev = Device(platform)
    reason = _unavailable(platform)
    if reason:
        raise RuntimeError(f"no {platform} device on this machine ({reason}); devices "
                           f"available: {', '.join(d.platform for d in devices())}")
    return dev


@functools.cache
def _unavailable(platform: str) -> str:
    """Why a platform's device cannot be created here ("" when it can)."""
    try:
        Device(platform).hal  # noqa: B018 - creating it is the only reliable probe
    except Exception as e:  # a missing driver library raises RuntimeError or ValueError
        return str(e).splitlines()[0].split("; ", 1)[-1].strip().rstrip(":")
    return ""


@functools.cache
def devices() -> tuple[Device, ...]:
    """The devices this machine can run on (the CPU always)."""
    return tuple(Device(p) for p in _PLATFORMS if p == "cpu" or not _unavailable(p))


def default() -> Device:
    return get("cpu")
