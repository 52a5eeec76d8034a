"""Creation, broadcasting, reshaping, slicing and padding, with lax's signatures."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import numpy as enp
from ember._src.dispatch import bind
from ember.dialect import ops

from .elementwise import _one_dtype


def iota(dtype: Any, size: int) -> Any:
    return enp.arange(size, dtype=dtype)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    return enp.full(shape, fill_value, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    x = enp.asarray(x)
    return enp.full(x.shape if shape is None else shape, fill_value,
                    x.dtype if dtype is None else dtype)


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """operand with dims of `sizes` added in front."""
    operand = enp.asarray(operand)
    return enp.broadcast_to(operand, (*sizes, *operand.shape))


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    """operand's dim i becomes dim broadcast_dimensions[i] of `shape` (size 1 or equal)."""
    operand = enp.asarray(operand)
    dims = tuple(broadcast_dimensions)
    if len(dims) != operand.ndim or list(dims) != sorted(set(dims)) or any(
            not 0 <= d < len(shape) or operand.shape[i] not in (1, shape[d])
            for i, d in enumerate(dims)):
        raise ValueError(f"lax.broadcast_in_dim requires one increasing dimension of {shape} "
                         f"per operand dim, each of size 1 or equal, got {dims} for shape "
                         f"{tuple(operand.shape)}")
    view = enp.reshape(operand, tuple(operand.shape[dims.index(d)] if d in dims else 1
                                      for d in range(len(shape))))
    return enp.broadcast_to(view, tuple(shape))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None):
    operand = enp.asarray(operand)
    if dimensions is not None:
        operand = enp.transpose(operand, tuple(dimensions))
    return enp.reshape(operand, tuple(new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    return enp.transpose(operand, tuple(permutation))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    return enp.flip(operand, tuple(dimensions)) if dimensions else enp.asarray(operand)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    return enp.squeeze(array, tuple(dimensions)) if dimensions else enp.asarray(array)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    out = enp.asarray(array)
    for d in sorted(d % (out.ndim + len(dimensions)) for d in dimensions):
        out = enp.expand_dims(out, d)
    return out


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    return enp.concatenate(_one_dtype("concatenate", *operands), axis=dimension)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    operand = enp.asarray(operand)
    stop = operand.ndim if stop_dimension is None else stop_dimension
    shape = operand.shape
    size = int(np.prod(shape[start_dimension:stop]))
    return enp.reshape(operand, (*shape[:start_dimension], size, *shape[stop:]))


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    operand = enp.asarray(operand)
    strides = strides or (1,) * operand.ndim
    return operand[tuple(builtins.slice(s, e, k) for s, e, k
                         in zip(start_indices, limit_indices, strides, strict=True))]


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    operand = enp.asarray(operand)
    index = [builtins.slice(None)] * operand.ndim
    index[axis] = builtins.slice(start_index, limit_index, stride)
    return operand[tuple(index)]


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    out = slice_in_dim(operand, index, index + 1 if index != -1 else None, 1, axis)
    return out if keepdims else enp.squeeze(out, axis)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int,
                         axis: int = 0) -> Any:
    operand = enp.asarray(operand)
    starts = [0] * operand.ndim
    starts[axis] = start_index
    sizes = list(operand.shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0,
                         keepdims: bool = True) -> Any:
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else enp.squeeze(out, axis)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any,
                                axis: int) -> Any:
    operand = enp.asarray(operand)
    starts = [0] * operand.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Any:
    operand, update = enp.asarray(operand), enp.asarray(update)
    if update.ndim == operand.ndim - 1:
        update = enp.expand_dims(update, axis)
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]):
    """Each dim padded by (low, high, interior): `interior` values between elements, low and
    high at the ends (negative ones crop), as lax.pad."""
    operand = enp.asarray(operand)
    if len(padding_config) != operand.ndim:
        raise ValueError(f"lax.pad requires one (low, high, interior) per dim of "
                         f"{tuple(operand.shape)}, got {padding_config}")
    out = operand
    for axis, (lo, hi, interior) in enumerate(padding_config):
        if interior < 0:
            raise ValueError(f"lax.pad requires interior padding >= 0, got {interior}")
        n = out.shape[axis]
        if interior and n > 1:
            shape = list(out.shape)
            shape[axis] = n + (n - 1) * interior
            index = [builtins.slice(None)] * out.ndim
            index[axis] = builtins.slice(None, None, interior + 1)
            out = enp.full(tuple(shape), padding_value, out.dtype).at[tuple(index)].set(out)
        widths = [(0, 0)] * out.ndim
        widths[axis] = (builtins.max(lo, 0), builtins.max(hi, 0))
        out = enp.pad(out, widths, constant_values=padding_value)
        index = [builtins.slice(None)] * out.ndim
        index[axis] = builtins.slice(-lo if lo < 0 else None, hi if hi < 0 else None)
        out = out[tuple(index)]
    return out


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int],
                  *, allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """The window of `slice_sizes` at `start_indices` (traced or not; negative ones count
    from the end unless `allow_negative_indices` is False), the starts clamped so that the
    window fits, as in JAX."""
    x = enp.asarray(operand)
    starts = _starts("dynamic_slice", x, start_indices, allow_negative_indices)
    return bind(ops.DYNAMIC_SLICE, x, *starts, sizes=tuple(int(n) for n in slice_sizes))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """`operand` with `update` written at `start_indices` (negative ones from the end,
    clamped to fit, as in JAX)."""
    x = enp.asarray(operand)
    update = enp.asarray(update).astype(x.dtype)
    starts = _starts("dynamic_update_slice", x, start_indices, allow_negative_indices)
    return bind(ops.DYNAMIC_UPDATE_SLICE, x, update, *starts, strides=(1,) * x.ndim)


def _starts(name: str, x: Any, start_indices: Sequence[Any],
            negative: bool | Sequence[bool]) -> list[Any]:
    if len(start_indices) != x.ndim:
        raise ValueError(f"{name} requires one start index per dimension ({x.ndim}), got "
                         f"{len(start_indices)}")
    negative = [negative] * x.ndim if isinstance(negative, bool) else list(negative)
    starts = [enp.asarray(s) for s in start_indices]
    for s in starts:
        if s.shape or s.dtype.kind not in "iu":
            raise TypeError(f"{name} requires scalar integer start indices, got "
                            f"{s.dtype}{list(s.shape)}")
    return [enp.where(s < 0, s + n, s).astype(np.int32) if wrap and s.dtype.kind == "i"
            else s.astype(np.int32)
            for s, n, wrap in zip(starts, x.shape, negative, strict=True)]
