"""`gather` and the `scatter` family with XLA's dimension numbers."""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ember import numpy as enp
from ember._src.dispatch import bind
from ember.dialect import ops

from .shapes import broadcast_in_dim

# -- gather and scatter with XLA's dimension numbers, as lax.gather / lax.scatter*. Each is
# one flat gather (or scatter) of the operand: every output (update) element's position in
# the operand is computed from iotas and the start indices, so derivatives and batching
# come from the ops they are made of.

class GatherDimensionNumbers(NamedTuple):
    """How a gather's output dims map to the operand's and the start indices' (XLA's)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's update dims map to the operand's and the indices' (XLA's)."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds windows: CLIP moves them in, FILL_OR_DROP fills a gather's with
    `fill_value` and drops a scatter's, PROMISE_IN_BOUNDS (the caller promised none) clips a
    gather's and drops a scatter's, as XLA's CPU code does. A gather's default is
    PROMISE_IN_BOUNDS, a scatter's FILL_OR_DROP (JAX's)."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(mode: Any) -> GatherScatterMode:
        if isinstance(mode, GatherScatterMode):
            return mode
        if mode is None or mode in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        try:
            return GatherScatterMode(mode)
        except ValueError:
            raise ValueError(f'Unknown gather mode "{mode}"') from None


def _window_positions(name: str, operand_shape: tuple[int, ...], indices: Any,
                      out_shape: tuple[int, ...], window_dims: Sequence[int],
                      window_of: Sequence[int | None], start_map: Sequence[int],
                      operand_batching: Sequence[int], indices_batching: Sequence[int],
                      sizes: Sequence[int], clip: bool) -> tuple[Any, Any]:
    """(the flat operand position of each element of `out_shape`, whether its window is in
    bounds). `window_dims`: the output dims that run along a window; `window_of[d]`: which
    of them runs along operand dim d (None: a collapsed or batching dim, size 1)."""
    i32 = np.dtype(np.int32)
    batch_dims = [p for p in range(len(out_shape)) if p not in window_dims]
    idx = enp.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name} requires integer indices, got {idx.dtype}")
    if idx.ndim != len(batch_dims) + 1 or idx.shape[-1] != len(start_map):
        raise ValueError(f"{name} requires indices of shape (*batch, {len(start_map)}) with "
                         f"{len(batch_dims)} batch dims for an output of shape {out_shape}, "
                         f"got {tuple(idx.shape)}")
    idx = idx.astype(i32)

    def spread(v: Any) -> Any:  # a value over the indices' batch dims, over the output
        return broadcast_in_dim(v, out_shape, tuple(batch_dims))

    strides = [int(np.prod(operand_shape[d + 1:], dtype=np.int64))
               for d in range(len(operand_shape))]
    flat = enp.zeros(out_shape, i32)
    inside = enp.ones(out_shape, bool)
    for d, n in enumerate(operand_shape):
        if d in start_map:
            start = spread(idx[..., start_map.index(d)])
            last = n - sizes[d]
            inside = inside & (start >= 0) & (start <= last)
            start = enp.clip(start, 0, builtins.max(last, 0))
        elif d in operand_batching:
            axis = indices_batching[operand_batching.index(d)]
            start = broadcasted_iota(i32, out_shape, batch_dims[axis])
        else:
            start = enp.zeros(out_shape, i32)
        if window_of[d] is not None:
            start = start + broadcasted_iota(i32, out_shape, window_of[d])
        flat = flat + start * strides[d]
    return flat, (None if clip else inside)


def _window_layout(operand_ndim: int, window_dims: Sequence[int], skipped: Sequence[int]
                   ) -> list[int | None]:
    """For each operand dim, the output (update) dim that runs along it: the window dims
    in order over the dims not skipped (collapsed/inserted or batching)."""
    it = iter(sorted(window_dims))
    return [None if d in skipped else next(it) for d in range(operand_ndim)]


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """Counting 0, 1, ... along `dimension` of an array of `shape`."""
    return bind(ops.IOTA, dimension=int(dimension), shape=tuple(int(n) for n in shape),
                dtype=np.dtype(dtype))


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: Any = None, fill_value: Any = None) -> Any:
    """XLA's gather, as lax.gather: the index vectors are the last dim of `start_indices`."""
    x = enp.asarray(operand)
    dn = GatherDimensionNumbers(*(tuple(int(d) for d in v) for v in dimension_numbers))
    mode = GatherScatterMode.from_any("promise_in_bounds" if mode is None else mode)
    sizes = tuple(int(s) for s in slice_sizes)
    skipped = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    if len(sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(
            sizes, x.shape, strict=True)) or any(sizes[d] != 1 for d in skipped):
        raise ValueError(f"gather requires one slice size per operand dim, within it, and 1 "
                         f"for collapsed and batching dims; got {sizes} for {x.shape}")
    idx = enp.asarray(start_indices)
    window = [sizes[d] for d in range(x.ndim) if d not in skipped]
    out_ndim = idx.ndim - 1 + len(window)
    if len(dn.offset_dims) != len(window) or any(not 0 <= d < out_ndim
                                                  for d in dn.offset_dims):
        raise ValueError(f"gather requires one offset dim per dim of the slice not collapsed "
                         f"({len(window)}) within the output's {out_ndim} dims, got "
                         f"{dn.offset_dims}")
    batch = iter(idx.shape[:-1])
    offsets = dict(zip(sorted(dn.offset_dims), window, strict=True))
    out_shape = tuple(offsets[p] if p in offsets else next(batch) for p in range(out_ndim))
    flat, inside = _window_positions(
        "gather", x.shape, idx, out_shape, dn.offset_dims,
        _window_layout(x.ndim, dn.offset_dims, skipped), dn.start_index_map,
        dn.operand_batching_dims, dn.start_indices_batching_dims, sizes,
        mode is not GatherScatterMode.FILL_OR_DROP)
    if 0 in x.shape:
        return enp.zeros(out_shape, x.dtype)
    out = bind(ops.TAKE, enp.reshape(x, (-1,)), enp.reshape(flat, (-1,)), axis=0)
    out = enp.reshape(out, out_shape)
    if inside is None:
        return out
    if fill_value is None:
        fill_value = (np.nan if x.dtype.kind in "fc" else True if x.dtype.kind == "b" else
                      np.iinfo(x.dtype).min if x.dtype.kind == "i" else np.iinfo(x.dtype).max)
    return enp.where(inside, out, enp.asarray(fill_value, x.dtype))


def _scatter(name: str, combine: str, operand: Any, scatter_indices: Any, updates: Any,
             dimension_numbers: ScatterDimensionNumbers, mode: Any) -> Any:
    x = enp.asarray(operand)
    u = enp.asarray(updates).astype(x.dtype)
    dn = ScatterDimensionNumbers(*(tuple(int(d) for d in v) for v in dimension_numbers))
    mode = GatherScatterMode.from_any(mode)
    skipped = (*dn.inserted_window_dims, *dn.operand_batching_dims)
    layout = _window_layout(x.ndim, dn.update_window_dims, skipped)
    if len(dn.update_window_dims) + len(skipped) != x.ndim:
        raise ValueError(f"{name} requires one update window dim per operand dim not "
                         f"inserted or batching ({x.ndim - len(skipped)}), got "
                         f"{dn.update_window_dims}")
    sizes = [1 if w is None else u.shape[w] for w in layout]
    flat, inside = _window_positions(
        name, x.shape, scatter_indices, tuple(u.shape), dn.update_window_dims, layout,
        dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
        dn.scatter_indices_batching_dims, sizes, mode is GatherScatterMode.CLIP)
    if inside is not None:  # dropped windows: a position past the operand is not written
        flat = enp.where(inside, flat, -1)
    out = bind(ops.SCATTER, enp.reshape(x, (-1,)), enp.reshape(flat, (-1,)),
               enp.reshape(u, (-1,)), combine=combine)
    return enp.reshape(out, x.shape)


def _scatter_op(name: str, combine: str) -> Callable:
    def op(operand: Any, scatter_indices: Any, updates: Any,
           dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
           unique_indices: bool = False, mode: Any = None) -> Any:
        return _scatter(name, combine, operand, scatter_indices, updates, dimension_numbers,
                        mode)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"XLA's scatter combining with {combine}, as lax.{name}: the index vectors "
                  f"are the last dim of `scatter_indices`.")
    return op


scatter = _scatter_op("scatter", "set")
scatter_add = _scatter_op("scatter_add", "add")


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """XLA's scatter subtracting the updates, as lax.scatter_sub."""
    return _scatter("scatter_sub", "add", operand, scatter_indices,
                    -enp.asarray(updates).astype(enp.asarray(operand).dtype),
                    dimension_numbers, mode)
scatter_mul = _scatter_op("scatter_mul", "mul")
scatter_min = _scatter_op("scatter_min", "min")
scatter_max = _scatter_op("scatter_max", "max")
