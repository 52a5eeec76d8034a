"""Refs: mutable arrays (seed: "In-place updates with refs").

Outside `jit` a Ref owns one device buffer and `r[idx] = v` writes into it. Passed to a jitted
function it is a `!ember.ref` argument, read and written with `ember.ref_get` / `ember.ref_set`;
ember-bufferize turns those into values and writes the last one back into the same buffer
(in place when that is provably safe, else by a copy after the call), so the buffer pointer
never changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.dialect import ops
from ember.dialect.types import RefAval
from ember.runtime import Array

from .core import Tracer, current_trace
from .dispatch import as_array, bind

# Refs are a tracer-level feature: built from the tracer and the dialect's ops alone (not
# from ember.numpy, which is built on jit, which knows refs).


def new_ref(x: Any) -> Ref:
    """A mutable array holding a copy of `x`."""
    if isinstance(x, Tracer):
        raise TypeError("new_ref requires a concrete array: create refs outside jit and pass "
                        "them in")
    return Ref(as_array(np.array(x)))  # a buffer of its own


class Ref:
    """A mutable array: `r[...]`, `r[idx]` read; `r[...] = v`, `r[idx] = v` write in place."""

    __slots__ = ("_array",)

    def __init__(self, array: Array):
        self._array = array

    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    aval = property(lambda self: RefAval(self._array.shape, self._array.dtype))

    def _view(self) -> np.ndarray:
        """The buffer as a writable NumPy array (host memory on the CPU)."""
        array = self._array.block_until_ready()
        if array.size == 0:
            return np.zeros(array.shape, array.dtype)
        return array._buffer.map().asarray(list(array.shape), array.dtype)

    def __getitem__(self, idx: Any) -> Any:
        return as_array(np.array(self._view()[_host_index(idx)]))

    def __setitem__(self, idx: Any, value: Any) -> None:
        if isinstance(value, Tracer):
            raise TypeError("a Ref passed as an argument is written inside jit; this Ref is "
                            "not an argument of the function being traced")
        self._view()[_host_index(idx)] = np.asarray(value)

    def unsafe_buffer_pointer(self) -> int:
        return self._view().ctypes.data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = np.array(self._view())
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        body = np.array2string(self._view(), separator=", ", prefix="Ref(")
        return f"Ref({body}, dtype={self.dtype})"

    def _write_back(self, result: Array, in_place: bool) -> None:
        """After a call: the ref's last value, written into its own buffer by the call when
        `in_place`, else copied there now."""
        if in_place:
            self._array = result  # the same buffer, with the call's completion fence
        else:
            self._view()[...] = np.asarray(result)


def _host_index(idx: Any) -> Any:
    return tuple(int(i) if isinstance(i, Array) else i for i in idx) \
        if isinstance(idx, tuple) else int(idx) if isinstance(idx, Array) else idx


class TracedRef:
    """A Ref argument while its function is traced."""

    __slots__ = ("_ref", "path")

    def __init__(self, ref: Tracer, path: str):
        self._ref, self.path = ref, path

    shape = property(lambda self: self._ref.aval.shape)
    dtype = property(lambda self: self._ref.aval.dtype)
    ndim = property(lambda self: len(self._ref.aval.shape))

    def _check(self) -> None:
        if current_trace() is not self._ref.trace:
            raise NotImplementedError(
                f"the ref {self.path} is read or written inside ember.lax control flow, "
                f"which refs do not support yet: read it before (r[...]) and write the "
                f"result after.")

    def __getitem__(self, idx: Any) -> Any:
        self._check()
        value = bind(ops.REF_GET, self._ref)
        starts, sizes, squeeze = _basic_index(self.shape, idx, self.path)
        if sizes == self.shape and not squeeze:
            return value
        part = bind(ops.DYNAMIC_SLICE, value, *starts, sizes=sizes)
        return bind(ops.RESHAPE, part,
                    shape=tuple(n for i, n in enumerate(sizes) if i not in squeeze))

    def __setitem__(self, idx: Any, new: Any) -> None:
        self._check()
        starts, sizes, _ = _basic_index(self.shape, idx, self.path)
        update = current_trace().lift(new)
        if update.aval.dtype != self.dtype:
            update = bind(ops.CONVERT, update, dtype=self.dtype, weak_type=False)
        if sizes == self.shape:
            value = _broadcast(update, self.shape, self.path)
        else:
            update = bind(ops.RESHAPE, _broadcast(update, _squeezed(sizes, idx, self.shape),
                                                  self.path), shape=sizes)
            value = bind(ops.DYNAMIC_UPDATE_SLICE, bind(ops.REF_GET, self._ref), update,
                         *starts, strides=(1,) * len(sizes))
        bind(ops.REF_SET, self._ref, value)

    def __repr__(self) -> str:
        return f"TracedRef<{self._ref.aval.str_short()}>"


def _broadcast(x: Tracer, shape: tuple[int, ...], path: str) -> Tracer:
    """NumPy's broadcast of `x` to `shape`."""
    if x.aval.shape == tuple(shape):
        return x
    lead = len(shape) - len(x.aval.shape)
    if lead < 0 or any(d not in (1, t) for d, t in zip(x.aval.shape, shape[lead:],
                                                        strict=True)):
        raise ValueError(f"ref {path}: a value of shape {x.aval.shape} cannot be written to a "
                         f"part of shape {tuple(shape)}")
    return bind(ops.BROADCAST_IN_DIM, x, shape=tuple(shape),
                broadcast_dimensions=tuple(range(lead, len(shape))))


def _squeezed(sizes: Sequence[int], idx: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    _, _, squeeze = _basic_index(shape, idx, "")
    return tuple(n for i, n in enumerate(sizes) if i not in squeeze)


def _basic_index(shape: tuple[int, ...], idx: Any, path: str):
    """(start indices, sizes, squeezed dims) for `...`, integers (static or traced, which
    clamp as JAX's dynamic indexing does) and unit-step slices."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    if sum(i is Ellipsis for i in idx) > 1:
        raise IndexError(f"ref {path}: an index can only have a single ellipsis")
    if Ellipsis in idx:
        at = idx.index(Ellipsis)
        idx = idx[:at] + (slice(None),) * (len(shape) - len(idx) + 1) + idx[at + 1:]
    if len(idx) > len(shape):
        raise IndexError(f"ref {path}: too many indices for an array of {len(shape)} dims")
    idx = idx + (slice(None),) * (len(shape) - len(idx))
    starts, sizes, squeeze = [], [], []
    for d, (i, n) in enumerate(zip(idx, shape, strict=True)):
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                raise IndexError(f"ref {path}: strided slices are not supported on refs yet; "
                                 f"read r[...] and slice the value")
            starts.append(np.int32(start))
            sizes.append(max(stop - start, 0))
        elif isinstance(i, (int, np.integer)):
            if not -n <= i < n:
                raise IndexError(f"ref {path}: index {i} is out of bounds for axis {d} with "
                                 f"size {n}")
            starts.append(np.int32(i % n))
            sizes.append(1)
            squeeze.append(d)
        elif isinstance(i, (Tracer, Array)) and i.shape == () and i.dtype.kind in "iu":
            starts.append(i)
            sizes.append(1)
            squeeze.append(d)
        else:
            raise IndexError(f"ref {path}: indices must be integers, unit-step slices or ..., "
                             f"got {i!r}")
    return starts, tuple(sizes), squeeze
