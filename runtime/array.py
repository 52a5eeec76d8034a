"""`ember.Array`: an array in a device buffer, with its abstract value known up front."""

from __future__ import annotations

import os
import time
import weakref
from typing import Any

import iree.runtime as rt
import numpy as np

from ember.dialect.types import ShapedArray, bfloat16

from . import device as _device

_ELEMENT = {
    np.dtype(np.bool_): rt.HalElementType.BOOL_8,
    np.dtype(np.int8): rt.HalElementType.SINT_8,
    np.dtype(np.int16): rt.HalElementType.SINT_16,
    np.dtype(np.int32): rt.HalElementType.SINT_32,
    np.dtype(np.int64): rt.HalElementType.SINT_64,
    np.dtype(np.uint8): rt.HalElementType.UINT_8,
    np.dtype(np.uint16): rt.HalElementType.UINT_16,
    np.dtype(np.uint32): rt.HalElementType.UINT_32,
    np.dtype(np.uint64): rt.HalElementType.UINT_64,
    np.dtype(np.float16): rt.HalElementType.FLOAT_16,
    bfloat16: rt.HalElementType.BFLOAT_16,
    np.dtype(np.float32): rt.HalElementType.FLOAT_32,
    np.dtype(np.float64): rt.HalElementType.FLOAT_64,
    np.dtype(np.complex64): rt.HalElementType.COMPLEX_64,
    np.dtype(np.complex128): rt.HalElementType.COMPLEX_128,
}
_MEMORY = rt.MemoryType.DEVICE_LOCAL
_USAGE = rt.BufferUsage.DEFAULT
_HOST_VISIBLE = int(rt.MemoryType.HOST_VISIBLE)


# How long a host wait polls, yielding its core, before it blocks. IREE's blocking wait on
# local-task spins when it wakes (it unlinks its waiter node, which the signalling worker may
# still hold), and a woken thread that preempts that worker spins until the scheduler moves
# one of them: on 2 cores, a 16M-element sum took 2.5 ms a call on average (p90 6.0 ms),
# 1.1 ms when polled (p90 1.5), its waiting thread's CPU time 0.94 -> 0.14 ms. A yielding
# poll takes only a core no other thread wants; past this, the wait blocks.
_POLL_NS = 20_000_000


def wait(fence: rt.HalFence) -> None:
    """Wait for `fence`: poll it, yielding the core between polls, for up to _POLL_NS, then
    block. A failed fence raises."""
    if fence.wait(timeout=0):
        return
    deadline = time.perf_counter_ns() + _POLL_NS
    while time.perf_counter_ns() < deadline:
        os.sched_yield()
        if fence.wait(timeout=0):
            return
    fence.wait()


def _staging_copy(hal: rt.HalDevice, source: rt.HalBuffer) -> rt.HalBuffer:
    """A host-visible copy of a device-only buffer (as iree.runtime's DeviceArray does)."""
    staging = hal.allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED),
        allocation_size=source.byte_length())
    semaphore = hal.create_semaphore(0)
    hal.queue_copy(source, staging, wait_semaphores=rt.HalFence.create_at(semaphore, 0),
                   signal_semaphores=rt.HalFence.create_at(semaphore, 1))
    wait(rt.HalFence.create_at(semaphore, 1))
    return staging


class _Owner:
    """What a host view's memory belongs to (the buffer view, the buffer, its mapping), as
    the view's base: IREE's mapped array holds none of them, and a view outliving its Array
    (the temporary in `np.asarray(put(a)).ravel()`) read memory the allocator had given to
    the next array. An object that is not an ndarray, so NumPy keeps it as every derived
    view's base (it collapses chains of ndarrays)."""

    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, view: np.ndarray, owners: tuple):
        self.__array_interface__ = view.__array_interface__
        self._keep = (view, owners)


def _kept(view: np.ndarray, owners: tuple) -> np.ndarray:
    """An ndarray over `view`'s memory whose base keeps `owners` alive (the array interface
    spells ml_dtypes' types, bfloat16, as raw bytes: viewed back as `view`'s dtype)."""
    out = np.asarray(_Owner(view, owners))
    return out if out.dtype == view.dtype else out.view(view.dtype)


class Array:
    """A device-resident array, and a future: `shape`/`dtype` never wait; reading values
    does. `_fence` is the work that produces it (None once known complete)."""

    # `_no_tiny`, unset until an eager op on the host looks: True once its values are known
    # to hold no float that compiled code flushes to zero (ember/_src/host_eval.py)
    __slots__ = ("aval", "_buffer", "device", "_fence", "_producer", "_invalid", "_view",
                 "_no_tiny", "__weakref__")
    __array_priority__ = 100

    def __init__(self, aval: ShapedArray, buffer: rt.HalBufferView, device: _device.Device,
                 fence: rt.HalFence | None = None, producer: str = ""):
        self.aval = aval
        self._buffer = buffer
        self.device = device
        self._fence = fence
        self._producer = producer
        self._invalid: str | None = None  # why this array may no longer be used (donation)
        self._view: weakref.ref[np.ndarray] | None = None  # np.asarray's view of the buffer

    # -- metadata, no waiting
    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- lifetime
    def is_deleted(self) -> bool:
        return self._invalid is not None

    def _invalidate(self, why: str) -> None:
        self._invalid, self._buffer = why, None  # in this order: see Executable's calls

    def _copy(self) -> Array:
        """The same values in a buffer of their own."""
        return put(self._to_numpy(), self.aval, self.device)

    def _viewed_as(self, aval: ShapedArray) -> Array:
        """The same buffer seen at another shape of as many elements (a row-major
        reshape). It shares this array's memory: only for a call to read it, never to
        hand to the user (a donation of either would change the other)."""
        self._check_valid()
        view = rt.HalBufferView(self._buffer.get_buffer(), list(aval.shape),
                                self._buffer.element_type)
        return Array(aval, view, self.device, self._fence, self._producer)

    def _donate(self, why: str) -> Array:
        """Hand the buffer over to a call that writes into it; this array is invalid from
        now on. A buffer NumPy still views (`np.asarray(a)` is a view) is copied first: the
        view must keep its values."""
        self._check_valid()
        view = self._view() if self._view is not None else None
        if view is not None:
            moved = put(view, self.aval, self.device)
        else:
            moved = Array(self.aval, self._buffer, self.device, self._fence, self._producer)
        self._invalidate(why)
        return moved

    def _check_valid(self) -> None:
        if self._invalid is not None:
            raise RuntimeError(f"Array {self.aval.str_short()} is no longer valid: {self._invalid}"
                               f". A donated array must not be used after the call; keep a "
                               f"copy, or do not donate it.")

    # -- values
    def block_until_ready(self) -> Array:
        """Wait for the work producing this array; a device failure raises here."""
        if self._invalid is not None:
            self._check_valid()
        fence = self._fence
        if fence is not None:
            try:
                wait(fence)
            except Exception as e:
                raise RuntimeError(f"{self._producer or 'an ember computation'} failed on "
                                   f"{self.device}: {e}") from None
            self._fence = None
        return self

    def is_ready(self) -> bool:
        """Whether the work producing this array is done, without waiting (as
        `jax.Array.is_ready`). Work that failed is done: reading the array raises."""
        self._check_valid()
        fence = self._fence
        if fence is None:
            return True
        try:
            done = fence.wait(timeout=0)
        except Exception:
            return True  # block_until_ready raises, with the producer's name
        if done:
            self._fence = None
        return bool(done)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """`np.asarray(a)` is a read-only view of the device buffer (host memory on the CPU);
        `np.array(a)` copies."""
        out = self._to_numpy()
        if dtype is not None and np.dtype(dtype) != out.dtype:
            return out.astype(dtype)
        return out.copy() if copy else out

    def _to_numpy(self) -> np.ndarray:
        self.block_until_ready()  # raises for a donated array
        if self.size == 0:
            return np.zeros(self.shape, self.dtype)
        view = self._view() if self._view is not None else None
        if view is not None:
            return view
        buffer = self._buffer.get_buffer()
        mapped = buffer.memory_type() & _HOST_VISIBLE
        if not mapped:  # GPU memory: copy through staging
            buffer = _staging_copy(self.device.hal, buffer)
        mapping = buffer.map()
        view = _kept(mapping.asarray(list(self.shape), self.dtype), (self._buffer, buffer,
                                                                     mapping))
        view.flags.writeable = False  # arrays are immutable
        if mapped:
            self._view = weakref.ref(view)
        return view

    def item(self) -> Any:
        return self._to_numpy().item()

    def tolist(self) -> Any:
        return self._to_numpy().tolist()

    def __bool__(self) -> bool:
        return bool(self._to_numpy())

    def __int__(self) -> int:
        return int(self._to_numpy())

    def __float__(self) -> float:
        return float(self._to_numpy())

    def __complex__(self) -> complex:
        return complex(self._to_numpy())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu" or self.ndim:
            raise TypeError(f"only integer scalar arrays can be converted to an index, got "
                            f"{self.aval.str_short()}")
        return int(self._to_numpy())

    __hash__ = None  # arrays are mutable-looking values, as in JAX: not usable as static args

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        body = np.array2string(self._to_numpy(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype}{weak})"

    def __str__(self) -> str:
        return str(self._to_numpy())

    def __format__(self, spec: str) -> str:
        return format(self._to_numpy().item() if self.ndim == 0 else self._to_numpy(), spec)


def put(value: np.ndarray, aval: ShapedArray, device: _device.Device) -> Array:
    """A host array in a device buffer of its own, always a copy (as JAX copies): the caller
    may write its array at any time, also while work reading the copy is queued, and no
    result of a call can be its memory (a 16 MiB copy costs ~2 ms here)."""
    host = np.ascontiguousarray(value, dtype=aval.dtype).reshape(aval.shape)  # keeps 0-d
    if host.size == 0:
        host = np.zeros((1,), aval.dtype)  # IREE cannot allocate an empty copy source
    buffer = device.hal.allocator.allocate_buffer_copy(
        memory_type=_MEMORY, allowed_usage=_USAGE, device=device.hal, buffer=host,
        element_type=_ELEMENT[aval.dtype])
    if value.size == 0 or host.shape != aval.shape:
        buffer = rt.HalBufferView(buffer.get_buffer(), list(aval.shape), _ELEMENT[aval.dtype])
    return Array(aval, buffer, device)
