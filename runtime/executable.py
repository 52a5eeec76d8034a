"""A compiled module loaded on a device, and the one call that runs it."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence

import iree.runtime as rt

from ember.dialect.types import ShapedArray

from . import device as _device
from .array import Array

# Below this many elements in its largest argument or result, a module runs on the calling
# thread (local-sync, ~3 us per call); above, on the worker threads (local-task, ~45 us to
# wake them here, repaid by parallel kernels: 1024^2 matmul 13 ms vs 27 ms). A module with
# loops pays that wake-up on every trip, so its trips' work decides (200 one-row updates of
# a (256, 1024) array: 91 us a trip on local-task, 7 us on local-sync).
PARALLEL_MIN_ELEMENTS = 1 << 15


def runs_in_parallel(in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray],
                     trip_work: int | None = None) -> bool:
    if trip_work is not None:
        return trip_work >= PARALLEL_MIN_ELEMENTS
    return max((a.size for a in (*in_avals, *out_avals)), default=0) >= PARALLEL_MIN_ELEMENTS


def entry_name(module: rt.VmModule) -> str:
    """Ember modules export one function (named after the user's function)."""
    return next(n for n in module.function_names if not n.startswith("__"))


class Executable:
    """A `.vmfb` loaded on one device.

    A parallel executable (compiled with IREE's coarse-fences ABI, run on local-task) waits
    on its inputs' fences on the device, not the host, and returns before its work is done:
    each result carries the fence. An inline one (synchronous ABI, local-sync) is done on
    return and its results carry none.
    """

    __slots__ = ("vmfb", "device", "name", "out_avals", "parallel", "call", "_invoke",
                 "_function", "_n_in", "_n_out", "_hal", "_lock", "_outs", "_last",
                 "__weakref__")

    def __init__(self, vmfb: bytes, device: _device.Device, in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray], name: str = ""):
        self.vmfb = vmfb
        self.device = device
        self.name = name
        self.out_avals = tuple(out_avals)
        module = rt.VmModule.copy_buffer(_device.instance(), vmfb)
        self._function = module.lookup_function(entry_name(module))
        # The module says which ABI it was compiled with (compilation.target_for chose it).
        self.parallel = self._function.reflection.get("iree.abi.model") == "coarse-fences"
        hal, hal_module = device.hal_for(self.parallel)
        self._invoke = rt.VmContext(_device.instance(), modules=[hal_module, module]).invoke
        self._n_in, self._n_out = len(in_avals), len(self.out_avals)
        self._outs = tuple(enumerate(self.out_avals))
        self._hal = hal
        self._lock = threading.Lock()  # a VM context runs one invocation at a time
        # `call(args) -> [Array]`, the dispatch fast path, bound once to the right ABI.
        self.call = self._call_async if self.parallel else self._call_inline
        self._last: rt.HalFence | None = None  # the latest call's completion
        if self.parallel:
            _PARALLEL.add(self)

    def __call__(self, args: Sequence[Array]) -> list[Array]:
        return self.call(args)

    def _call_async(self, args: Sequence[Array]) -> list[Array]:
        slot = _slot()
        slot.epoch += 1  # odd: this thread is between reading its arguments and submitting
        try:
            inputs = _VariantList(self._n_in + 2)
            pending = [a._fence for a in args if a._fence is not None]
            for a in args:
                buffer = a._buffer
                if buffer is None:
                    a._check_valid()  # donated earlier: raises
                inputs.push_ref(buffer)
            inputs.push_ref(_READY if not pending else
                            pending[0] if len(pending) == 1 else _Fence.join(pending))
            # Calls may finish out of order: each signals a semaphore of its own.
            signal = _Fence.create_at(self._hal.create_semaphore(0), 1)
            inputs.push_ref(signal)
            self._last = signal
            outputs = _VariantList(self._n_out)
            with self._lock:
                self._invoke(self._function, inputs, outputs)
        except RuntimeError as e:  # e.g. an input's producer failed
            raise self._failed(e) from None
        finally:
            slot.epoch += 1
        device, get, name = self.device, outputs.get_as_object, self.name
        return [Array(aval, get(i, _BufferView), device, signal, name) for i, aval in self._outs]

    def _call_inline(self, args: Sequence[Array]) -> list[Array]:
        """Synchronous ABI on local-sync: done on return. Inputs still being produced by
        worker threads are waited for first."""
        slot = _slot()
        slot.epoch += 1  # odd: this thread is reading its arguments
        try:
            inputs = _VariantList(self._n_in)
            for a in args:
                buffer = a._buffer
                if a._fence is not None or buffer is None:
                    buffer = a.block_until_ready()._buffer  # a donated array raises
                inputs.push_ref(buffer)
            outputs = _VariantList(self._n_out)
            with self._lock:
                self._invoke(self._function, inputs, outputs)
        except RuntimeError as e:
            raise self._failed(e) from None
        finally:
            slot.epoch += 1
        device, get = self.device, outputs.get_as_object
        return [Array(aval, get(i, _BufferView), device) for i, aval in self._outs]

    def _failed(self, error: Exception) -> RuntimeError:
        return RuntimeError(f"{self.name} failed on {self.device}: {error}")


_PARALLEL: weakref.WeakSet[Executable] = weakref.WeakSet()


class _Slot:
    """A thread's call epoch: odd while the thread is inside a call (reading its arguments'
    buffers, running inline or submitting to the workers)."""

    __slots__ = ("epoch", "__weakref__")

    def __init__(self) -> None:
        self.epoch = 0


_THREAD = threading.local()
_SLOTS: weakref.WeakSet[_Slot] = weakref.WeakSet()  # one a thread, gone with the thread
_SLOTS_LOCK = threading.Lock()


def _slot() -> _Slot:
    try:
        return _THREAD.slot
    except AttributeError:
        slot = _THREAD.slot = _Slot()
        with _SLOTS_LOCK:
            _SLOTS.add(slot)
        return slot


def wait_for_readers() -> None:
    """Wait until no call can still read a buffer about to be written in place (a donated
    one, invalidated before this): calls other threads are inside now (inline ones run to
    the end; a call that reads an argument after its invalidation raises instead), then the
    work every call handed to the worker threads."""
    me = _slot()
    with _SLOTS_LOCK:
        busy = [(s, s.epoch) for s in _SLOTS if s.epoch & 1 and s is not me]
    for slot, epoch in busy:
        while slot.epoch == epoch:
            time.sleep(1e-5)
    for exe in list(_PARALLEL):
        if exe._last is not None:
            exe._last.wait()


_VariantList, _BufferView, _Fence = rt.VmVariantList, rt.HalBufferView, rt.HalFence
_READY = rt.HalFence(0)  # a fence with no timepoints: already satisfied
