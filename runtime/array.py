"""`ember.Array`: an array in a device buffer, with its abstract value known up front."""

from __future__ import annotations

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
}
# DLPack imports keep these element types exactly (others are copied).
_ALIASABLE = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8,
                                             np.int16, np.int32, np.int64, np.uint8,
                                             np.uint16, np.uint32, np.uint64))
_MEMORY = rt.MemoryType.DEVICE_LOCAL
_USAGE = rt.BufferUsage.DEFAULT
_HOST_VISIBLE = int(rt.MemoryType.HOST_VISIBLE)


def _staging_copy(hal: rt.HalDevice, source: rt.HalBuffer) -> rt.HalBuffer:
    """A host-visible copy of a device-only buffer (as iree.runtime's DeviceArray does)."""
    staging = hal.allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED),
        allocation_size=source.byte_length())
    semaphore = hal.create_semaphore(0)
    hal.queue_copy(source, staging, wait_semaphores=rt.HalFence.create_at(semaphore, 0),
                   signal_semaphores=rt.HalFence.create_at(semaphore, 1))
    rt.HalFence.create_at(semaphore, 1).wait()
    return staging


class Array:
    """A device-resident array, and a future: `shape`/`dtype` never wait; reading values
    does. `_fence` is the work that produces it (None once known complete)."""

    __slots__ = ("aval", "_buffer", "device", "_fence", "_producer", "_invalid", "__weakref__")
    __array_priority__ = 100

    def __init__(self, aval: ShapedArray, buffer: rt.HalBufferView, device: _device.Device,
                 fence: rt.HalFence | None = None, producer: str = ""):
        self.aval = aval
        self._buffer = buffer
        self.device = device
        self._fence = fence
        self._producer = producer
        self._invalid: str | None = None  # why this array may no longer be used (donation)

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
        self._buffer, self._invalid = None, why

    def _check_valid(self) -> None:
        if self._invalid is not None:
            raise RuntimeError(f"Array {self.aval.str_short()} is no longer valid: {self._invalid}"
                               f". A donated array must not be used after the call; keep a "
                               f"copy, or do not donate it.")

    # -- values
    def block_until_ready(self) -> Array:
        """Wait for the work producing this array; a device failure raises here."""
        self._check_valid()
        fence = self._fence
        if fence is not None:
            try:
                fence.wait()
            except Exception as e:
                raise RuntimeError(f"{self._producer or 'an ember computation'} failed on "
                                   f"{self.device}: {e}") from None
            self._fence = None
        return self

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
        buffer = self._buffer.get_buffer()
        if not buffer.memory_type() & _HOST_VISIBLE:  # GPU memory: copy through staging
            buffer = _staging_copy(self.device.hal, buffer)
        view = buffer.map().asarray(list(self.shape), self.dtype)  # keeps the buffer alive
        view.flags.writeable = False  # arrays are immutable
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


def put(value: np.ndarray, aval: ShapedArray, device: _device.Device,
        alias: bool = False) -> Array:
    """A host array in a device buffer: copied, or with `alias` (a call's NumPy argument)
    imported without a copy when it is 64-byte aligned, as JAX does on the CPU. The caller
    must not write an aliased array until the work reading it is done."""
    host = np.ascontiguousarray(value, dtype=aval.dtype).reshape(aval.shape)  # keeps 0-d
    if (alias and device.platform == "cpu" and host.size and host.ctypes.data % 64 == 0
            and aval.dtype in _ALIASABLE):
        return Array(aval, device.hal.from_dlpack_capsule(host.__dlpack__()), device)
    if host.size == 0:
        host = np.zeros((1,), aval.dtype)  # IREE cannot allocate an empty copy source
    buffer = device.hal.allocator.allocate_buffer_copy(
        memory_type=_MEMORY, allowed_usage=_USAGE, device=device.hal, buffer=host,
        element_type=_ELEMENT[aval.dtype])
    if value.size == 0 or host.shape != aval.shape:
        buffer = rt.HalBufferView(buffer.get_buffer(), list(aval.shape), _ELEMENT[aval.dtype])
    return Array(aval, buffer, device)
