"""Shape manipulation, data movement and array creation beyond the basics in __init__:
all compositions of slice, rev, concatenate, take, iota and broadcast rows.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.dialect import ops
from ember.dialect.types import Dim, ShapedArray, kind, real_dtype, symbolic
from ember.runtime import Array

from .._src import dtypes as _dt
from .._src.core import current_trace
from .._src.dispatch import bind
from . import _base, creation as _cr, ufuncs as _uf
from ._base import _broadcast, _promote_only, asarray
from .ufuncs import _where_values

_IMPORTED = set(globals())  # what this module defines is exported: the rest


def reshape(a, /, shape, order: str = "C", *, copy: bool | None = None):
    """`a` with `shape` (arrays are immutable: `copy` changes nothing observable)."""
    if order != "C":
        raise NotImplementedError("reshape requires order='C'")
    a = asarray(a)
    shape = (shape,) if isinstance(shape, (int, Dim)) else tuple(
        d if isinstance(d, Dim) else int(d) for d in shape)
    if symbolic(a.shape) or symbolic(shape):  # a shape-polymorphic kernel's trace
        return a if shape == a.shape else bind(ops.RESHAPE, a, shape=shape)
    if shape.count(-1) > 1:
        raise ValueError(f"reshape requires at most one -1, got {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of shape {a.shape} into shape {shape}")
        shape = tuple(a.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != a.size:
        raise ValueError(f"cannot reshape array of size {a.size} (shape {a.shape}) into shape "
                         f"{shape}")
    if shape == a.shape:
        return a
    if isinstance(a, Array) and current_trace() is None:
        # eager: the same bytes, copied by one kernel for any shape
        flat = ShapedArray((a.size,), a.dtype, a.weak_type)
        copied = bind(ops.COPY, a._viewed_as(flat))
        return copied._viewed_as(ShapedArray(shape, a.dtype, a.weak_type))
    return bind(ops.RESHAPE, a, shape=shape)


def transpose(a, axes: Sequence[int] | None = None):
    a = asarray(a)
    perm = tuple(reversed(range(a.ndim))) if axes is None else tuple(i % a.ndim if a.ndim
                                                                     else i for i in axes)
    if sorted(perm) != list(range(a.ndim)):
        raise ValueError(f"transpose requires a permutation of range({a.ndim}), got {axes}")
    return a if perm == tuple(range(a.ndim)) else bind(ops.TRANSPOSE, a, permutation=perm)


def broadcast_to(a, shape):
    a = asarray(a)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    lead = len(shape) - a.ndim
    if lead < 0 or builtins.any(d not in (1, t)
                                for d, t in zip(a.shape, shape[lead:], strict=True)):
        raise ValueError(f"broadcast_to requires a shape that {a.shape} broadcasts to, got "
                         f"{shape}")
    return _broadcast(a, shape)


def expand_dims(a, axis: int | Sequence[int]):
    """`a` with a dim of 1 at each of `axis` (positions in the result, as NumPy's)."""
    a = asarray(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = a.ndim + len(axes)
    axes = sorted(int(ax) % ndim for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims requires distinct axes, got {axis}")
    dims = iter(a.shape)
    return reshape(a, tuple(1 if i in axes else next(dims) for i in range(ndim)))


def concatenate(arrays: Sequence[Any], axis: int | None = 0):
    if hasattr(arrays, "ndim"):  # one array: its rows are the sequence (as NumPy and JAX)
        return _concatenate_rows(asarray(arrays), axis)
    arrays = _promote_only(*arrays) if arrays else []
    if not arrays:
        raise ValueError("concatenate requires at least one array, got none")
    if axis is None:
        arrays, axis = [reshape(a, (a.size,)) for a in arrays], 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concatenate requires arrays of rank >= 1, got scalars (use stack)")
    if not -ndim <= axis < ndim:
        raise ValueError(f"concatenate requires axis in [{-ndim}, {ndim}), got {axis}")
    if len(arrays) == 1:
        return arrays[0]
    return bind(ops.CONCATENATE, *arrays, dimension=axis % ndim)


def _concatenate_rows(a: Any, axis: int | None) -> Any:
    """The rows of `a` joined along `axis` of a row: the rows' axis moved beside it, the two
    merged (one reshape, not a join of each row)."""
    if a.ndim < 2:
        raise ValueError(f"concatenate requires arrays of rank >= 1, got an array of shape "
                         f"{a.shape}, whose rows are scalars (use stack)")
    if axis is None:
        return reshape(a, (a.size,))
    ax = _axis("concatenate", axis, a.ndim - 1)
    rest = a.shape[1:]
    return reshape(moveaxis(a, 0, ax), rest[:ax] + (a.shape[0] * rest[ax],) + rest[ax + 1:])


def stack(arrays: Sequence[Any], axis: int = 0):
    arrays = [asarray(x) for x in arrays]
    if not arrays:
        raise ValueError("stack requires at least one array, got none")
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"stack requires arrays of one shape, got {sorted(shapes)}")
    if not -(arrays[0].ndim + 1) <= axis <= arrays[0].ndim:
        raise ValueError(f"stack requires axis in [{-arrays[0].ndim - 1}, {arrays[0].ndim}], "
                         f"got {axis}")
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def hstack(arrays: Sequence[Any]):
    arrays = [asarray(x) for x in arrays]
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1)


def vstack(arrays: Sequence[Any]):
    arrays = [asarray(x) for x in arrays]
    return concatenate([reshape(a, (1, a.size)) if a.ndim < 2 else a for a in arrays], 0)





def _axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} requires axis in [{-ndim}, {ndim}), got {axis} for an array "
                         f"of rank {ndim}")
    return axis % ndim


def ravel(a: Any, order: str = "C") -> Any:
    a = asarray(a)
    return reshape(a, (a.size,), order)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    a = asarray(a)
    perm = list(range(a.ndim))
    i, j = _axis("swapaxes", axis1, a.ndim), _axis("swapaxes", axis2, a.ndim)
    perm[i], perm[j] = j, i
    return transpose(a, perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    a = asarray(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis requires as many sources as destinations, got {src} and "
                         f"{dst}")
    src = [_axis("moveaxis", s, a.ndim) for s in src]
    dst = [_axis("moveaxis", d, a.ndim) for d in dst]
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return transpose(a, perm)


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    a = asarray(a)
    if axis is None:
        axes = [i for i, d in enumerate(a.shape) if d == 1]
    else:
        axes = [_axis("squeeze", i, a.ndim) for i in ((axis,) if isinstance(axis, int)
                                                      else axis)]
        for i in axes:
            if a.shape[i] != 1:
                raise ValueError(f"squeeze requires axes of length 1, got axis {i} of length "
                                 f"{a.shape[i]} in shape {a.shape}")
    return reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


def _at_least(shape_of, arrays: tuple) -> Any:
    """Each array reshaped by `shape_of` where its rank is short; one array for one, a list
    for several (as NumPy and JAX)."""
    out = [asarray(a) for a in arrays]
    out = [reshape(a, shape_of(a.shape)) for a in out]
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    return _at_least(lambda s: s or (1,), arys)


def atleast_2d(*arys: Any) -> Any:
    return _at_least(lambda s: (1,) * (2 - len(s)) + s if len(s) < 2 else s, arys)


def atleast_3d(*arys: Any) -> Any:
    """Rank 0 -> (1, 1, 1), 1 -> (1, n, 1), 2 -> (m, n, 1) (NumPy's placement)."""
    def shape_of(s):
        return {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}.get(len(s), s)
    return _at_least(shape_of, arys)


def broadcast_arrays(*args: Any) -> list[Any]:
    shape = _base._shape_of(*args, name="broadcast_arrays")
    return [broadcast_to(a, shape) for a in args]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


def _slice_axis(a: Any, axis: int, start: int, stop: int, step: int = 1) -> Any:
    starts = [0] * a.ndim
    limits = list(a.shape)
    strides = [1] * a.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    if (starts, limits, strides) == ([0] * a.ndim, list(a.shape), [1] * a.ndim):
        return a
    return bind(ops.SLICE, a, start_indices=tuple(starts), limit_indices=tuple(limits),
                strides=tuple(strides))


def split(a: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    return _split("split", a, indices_or_sections, axis, even=True)


def array_split(a: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    return _split("array_split", a, indices_or_sections, axis, even=False)


def _split(name: str, a: Any, sections: Any, axis: int, even: bool) -> list[Any]:
    a = asarray(a)
    axis = _axis(name, axis, a.ndim)
    n = a.shape[axis]
    if isinstance(sections, (int, np.integer)):
        count = int(sections)
        if count <= 0:
            raise ValueError(f"{name} requires a positive number of sections, got {count}")
        if even and n % count:
            raise ValueError(f"{name} requires an axis that divides into {count} equal "
                             f"sections, got length {n}; use array_split for unequal ones")
        size, extra = divmod(n, count)
        bounds = [0]
        for i in range(count):
            bounds.append(bounds[-1] + size + (i < extra))
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i) if i >= 0 else int(i) + n, 0), n)
                        for i in sections] + [n]
    return [_slice_axis(a, axis, lo, builtins.max(lo, hi))
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def hsplit(a: Any, sections: Any) -> list[Any]:
    return split(a, sections, axis=1 if asarray(a).ndim > 1 else 0)


def vsplit(a: Any, sections: Any) -> list[Any]:
    return split(a, sections, axis=0)


def tile(a: Any, reps: int | Sequence[int]) -> Any:
    a = asarray(a)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = builtins.max(a.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    a = reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    # Broadcast to (r0, d0, r1, d1, ...) and merge each pair.
    expanded = reshape(a, tuple(x for d in a.shape for x in (1, d)))
    target = tuple(x for r, d in zip(reps, a.shape, strict=True) for x in (r, d))
    return reshape(broadcast_to(expanded, target),
                   tuple(r * d for r, d in zip(reps, a.shape, strict=True)))


def repeat(a: Any, repeats: int | Sequence[int], axis: int | None = None,
           total_repeat_length: int | None = None) -> Any:
    """Repeat counts (one for all, or one per element along `axis`): concrete ones (ints,
    lists, arrays outside a trace), or traced ones with `total_repeat_length`, the result's
    length (cut there, or padded with the last element, as in JAX)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis("repeat", axis, a.ndim)
    if isinstance(repeats, Array) and current_trace() is None:
        repeats = np.asarray(repeats)  # eager: its values are known
    if hasattr(repeats, "aval") or total_repeat_length is not None:
        if total_repeat_length is None:
            raise TypeError("repeat requires concrete repeats, or total_repeat_length= with "
                            "traced ones (the counts set the result's shape)")
        counts = asarray(repeats).astype(np.int32)
        n = a.shape[axis]
        ends = bind(ops.CUMULATIVE, _broadcast(counts, (n,)), axis=0, combiner="sum")
        positions = _cr.arange(total_repeat_length, dtype=np.int32)
        index = _uf.minimum(bind(ops.REDUCE_SUM, _uf.less_equal(
            ends[None, :], positions[:, None]).astype(np.int32), axes=(1,)), n - 1)
        return bind(ops.TAKE, a, index, axis=axis)
    counts = np.asarray(repeats)
    if counts.ndim == 0:
        r = int(counts)
        shape = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
        expanded = reshape(a, a.shape[:axis + 1] + (1,) + a.shape[axis + 1:])
        return reshape(broadcast_to(expanded, shape),
                       a.shape[:axis] + (a.shape[axis] * r,) + a.shape[axis + 1:])
    if counts.shape != (a.shape[axis],) or (counts < 0).any():
        raise ValueError(f"repeat requires {a.shape[axis]} non-negative counts along axis "
                         f"{axis}, got {counts.tolist()}")
    index = np.repeat(np.arange(a.shape[axis], dtype=np.int32), counts)
    return bind(ops.TAKE, a, asarray(index), axis=axis)


def flip(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    a = asarray(a)
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    dims = tuple(sorted({_axis("flip", i, a.ndim) for i in axes}))
    return bind(ops.REV, a, dimensions=dims) if dims and a.ndim else a


def fliplr(a: Any) -> Any:
    return flip(a, 1)


def flipud(a: Any) -> Any:
    return flip(a, 0)


def roll(a: Any, shift: int | Sequence[int], axis: int | Sequence[int] | None = None) -> Any:
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    shifts, axes = np.broadcast_arrays(np.asarray(shifts), np.asarray(axes))
    for s, ax in zip(shifts.tolist(), axes.tolist(), strict=True):
        ax = _axis("roll", ax, a.ndim)
        n = a.shape[ax]
        if hasattr(s, "aval"):
            raise TypeError("roll requires a concrete shift")
        k = s % n if n else 0
        if k:
            a = concatenate([_slice_axis(a, ax, n - k, n), _slice_axis(a, ax, 0, n - k)],
                                ax)
    return a


def pad(array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """constant, edge, reflect, symmetric and wrap, with static widths."""
    a = asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"pad requires non-negative widths, got {pad_width}")
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"pad supports modes constant, edge, reflect, symmetric and "
                                  f"wrap, got {mode!r}")
    for ax, (before, after) in enumerate(widths.tolist()):
        if not (before or after):
            continue
        n = a.shape[ax]
        if mode == "constant":
            fill = np.broadcast_to(np.asarray(constant_values), (a.ndim, 2))[ax] \
                if np.ndim(constant_values) else (constant_values, constant_values)
            parts = []
            for width, value in ((before, fill[0]), (None, None), (after, fill[1])):
                if width is None:
                    parts.append(a)
                elif width:
                    shape = a.shape[:ax] + (width,) + a.shape[ax + 1:]
                    parts.append(_cr.full(shape, value, a.dtype))
            a = concatenate(parts, ax)
            continue
        if n == 0:
            raise ValueError(f"pad mode {mode!r} requires a non-empty axis, got axis {ax} of "
                             f"length 0")
        index = np.pad(np.arange(n), (before, after), mode=mode)
        a = bind(ops.TAKE, a, asarray(index.astype(np.int32)), axis=ax)
    return a


def _tri_mask(n: int, m: int, k: int, upper: bool) -> Any:
    rows = bind(ops.IOTA, dimension=0, shape=(n, m), dtype=np.dtype(np.int32))
    cols = bind(ops.IOTA, dimension=1, shape=(n, m), dtype=np.dtype(np.int32))
    diff = _uf.subtract(cols, rows)
    return _uf.greater_equal(diff, k) if upper else _uf.less_equal(diff, k)


def _triangle(name: str, m: Any, k: int, upper: bool) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{name} requires an array of rank >= 2, got shape {m.shape}")
    mask = _tri_mask(m.shape[-2], m.shape[-1], k, upper)
    return _where_values(mask, m, np.zeros((), m.dtype))


def tril(m: Any, k: int = 0) -> Any:
    return _triangle("tril", m, k, upper=False)


def triu(m: Any, k: int = 0) -> Any:
    return _triangle("triu", m, k, upper=True)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    mask = _tri_mask(N, N if M is None else M, k, upper=False)
    return _base.astype(mask, _dt.default_float() if dtype is None else dtype)


@_base._placed
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    n, m = operator.index(N), operator.index(N if M is None else M)
    dtype = _dt.canonicalize(_dt.default_float() if dtype is None else dtype)
    diag = _uf.equal(_uf.subtract(bind(ops.IOTA, dimension=1, shape=(n, m),
                                       dtype=np.dtype(np.int32)),
                                  bind(ops.IOTA, dimension=0, shape=(n, m),
                                       dtype=np.dtype(np.int32))), k)
    return _base.astype(diag, dtype)


@_base._placed
def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    a = asarray(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.shape[-2:]
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else
                          builtins.min(n + offset, m))
    rows = np.arange(length) + builtins.max(0, -offset)
    cols = rows + offset
    flat = reshape(a, a.shape[:-2] + (n * m,))
    return bind(ops.TAKE, flat, asarray((rows * m + cols).astype(np.int32)), axis=a.ndim - 2)


def diag(v: Any, k: int = 0) -> Any:
    v = asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag requires a 1-D or 2-D array, got shape {v.shape}")
    n = v.shape[0] + builtins.abs(k)
    # Row i holds v[i] on the diagonal for k >= 0; column j holds v[j] for k < 0.
    values = bind(ops.TAKE, v, asarray(np.minimum(np.arange(n), builtins.max(v.shape[0] - 1,
                                                                             0)).astype(
        np.int32)), axis=0) if v.shape[0] else _cr.zeros((n,), v.dtype)
    source = reshape(values, (n, 1) if k >= 0 else (1, n))
    return _where_values(eye(n, k=k, dtype=np.bool_), broadcast_to(source, (n, n)),
                 np.zeros((), v.dtype))


@_base._placed
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace requires num >= 0, got {num}")
    if dtype is None:  # floats, or complex numbers between complex ends (as JAX)
        dtype = _dt.promote(*(_dt.dtype_and_weak(v) for v in (start, stop)),
                            (_dt.default_float(), True))[0]
    dtype = _dt.canonicalize(dtype)
    compute = dtype if kind(dtype) in "fc" else _dt.default_float()
    start_, stop_ = (_base.astype(asarray(v), compute) for v in (start, stop))
    div = (num - 1) if endpoint else num
    step = _uf.true_divide(_uf.subtract(stop_, start_), builtins.max(div, 1))
    i = bind(ops.IOTA, dimension=0, shape=(num,), dtype=real_dtype(compute))
    shape = (num,) + tuple(start_.shape)
    i = reshape(i, (num,) + (1,) * start_.ndim)
    out = _uf.add(start_, _uf.multiply(i, step)) if num else _cr.zeros(shape, compute)
    if endpoint and num > 1:  # the last point is exactly stop
        is_last = _uf.equal(i, num - 1)
        out = _where_values(is_last, broadcast_to(stop_, shape), out)
    out = _base.astype(moveaxis(out, 0, axis) if start_.ndim else out, dtype)
    return (out, step) if retstep else out


@_base._placed
def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    a = asarray(a)
    return _cr.full(a.shape if shape is None else shape, fill_value,
                    a.dtype if dtype is None else dtype)


@_base._placed
def empty_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(a, 0, dtype, shape)


@_base._placed
def empty(shape: Any, dtype: Any = None) -> Any:
    return _cr.zeros(shape, dtype)


# ----------------------------------------------------------------------------- gathers

def _fill_value(dtype: np.dtype) -> Any:
    """JAX's fill for out-of-range take: NaN, the most negative int, the largest uint,
    True."""
    k = kind(dtype)
    if k in "fc":
        return np.nan
    if k == "b":
        return True
    return np.iinfo(dtype).min if k == "i" else np.iinfo(dtype).max


def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None,
         fill_value: Any = None) -> Any:
    """JAX's take: mode 'fill' (the default) gives `fill_value` for out-of-range indices;
    'clip' clamps; 'wrap' wraps. Negative indices count from the end in 'fill'."""
    a, indices = asarray(a), asarray(indices)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis("take", axis, a.ndim)
    if kind(indices.dtype) not in "iu":
        raise TypeError(f"take requires integer indices, got {indices.dtype}")
    n = a.shape[axis]
    mode = mode or "fill"
    if mode == "wrap":
        return bind(ops.TAKE, a, _uf.remainder(indices, builtins.max(n, 1)), axis=axis)
    if mode == "clip":
        return bind(ops.TAKE, a, _uf.clip(indices, 0, builtins.max(n - 1, 0)), axis=axis)
    if mode != "fill":
        raise ValueError(f"take requires mode in ('fill', 'clip', 'wrap'), got {mode!r}")
    valid = _uf.logical_and(_uf.greater_equal(indices, -n), _uf.less(indices, n))
    if n == 0:
        safe = a if indices.size == 0 else _cr.zeros(a.shape[:axis] + (1,) + a.shape[axis + 1:],
                                                     a.dtype)
        gathered = bind(ops.TAKE, safe, _cr.zeros(indices.shape, indices.dtype), axis=axis)
    else:
        gathered = bind(ops.TAKE, a, indices, axis=axis)
    mask = reshape(valid, (1,) * axis + indices.shape + (1,) * (a.ndim - axis - 1))
    fill = _fill_value(a.dtype) if fill_value is None else fill_value
    return _where_values(mask, gathered, np.asarray(fill, a.dtype))


@_base._eager_jit("axis", "mode", "fill_value")
def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Any:
    """arr[..., indices, ...] pairing each index with its position on the other axes."""
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
        indices = ravel(indices)
    axis = _axis("take_along_axis", axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError(f"take_along_axis requires indices of the array's rank {arr.ndim}, "
                         f"got shape {indices.shape}")
    shape = list(np.broadcast_shapes(
        tuple(d for i, d in enumerate(arr.shape) if i != axis),
        tuple(d for i, d in enumerate(indices.shape) if i != axis)))
    shape.insert(axis, indices.shape[axis])
    shape = tuple(shape)
    # The trailing axes the indices are broadcast over are taken whole: one take of rows
    # whose last coordinate runs with the result's (a contiguous load IREE vectorizes; a flat
    # position per element is a gather instruction per element).
    inner = arr.ndim
    while inner - 1 > axis and indices.shape[inner - 1] == 1:
        inner -= 1
    outer = shape[:inner]
    indices = broadcast_to(reshape(indices, indices.shape[:inner]), outer)
    n = arr.shape[axis]
    full = tuple(arr.shape[i] if i == axis else shape[i] for i in range(arr.ndim))
    arr = broadcast_to(arr, full)
    idx = _base.astype(indices, np.int32)
    normalized = _where_values(_uf.less(idx, 0), _uf.add(idx, n), idx)
    valid = _uf.logical_and(_uf.greater_equal(normalized, 0), _uf.less(normalized, n))
    clamped = _uf.clip(normalized, 0, builtins.max(n - 1, 0))
    flat = None
    stride = 1
    for d in reversed(range(inner)):
        coord = clamped if d == axis else bind(ops.IOTA, dimension=d, shape=outer,
                                               dtype=np.dtype(np.int32))
        term = _uf.multiply(coord, stride)
        flat = term if flat is None else _uf.add(flat, term)
        stride *= full[d]
    if math.prod(full) == 0 or math.prod(shape) == 0:
        return _cr.zeros(shape, arr.dtype)
    rows = reshape(arr, (math.prod(full[:inner]), math.prod(full[inner:])))
    out = reshape(bind(ops.TAKE, rows, ravel(flat), axis=0), shape)
    valid = reshape(valid, outer + (1,) * (arr.ndim - inner))
    if mode == "clip":
        return out
    fill = _fill_value(arr.dtype) if fill_value is None else fill_value
    return _where_values(valid, out, np.asarray(fill, arr.dtype))


newaxis = None


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """The array API's concatenate."""
    return concatenate(arrays, axis)


def permute_dims(a: Any, /, axes: Sequence[int]) -> Any:
    """The array API's transpose: `axes` is required."""
    return transpose(a, tuple(axes))


def matrix_transpose(x: Any, /) -> Any:
    """The last two axes swapped (x.mT)."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires an array of rank >= 2, got shape "
                         f"{tuple(x.shape)}")
    return swapaxes(x, -1, -2)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of x along `axis`, as a tuple."""
    x = asarray(x)
    axis = _axis("unstack", axis, x.ndim)
    return tuple(squeeze(_slice_axis(x, axis, i, i + 1), axis) for i in range(x.shape[axis]))


def dstack(arrays: Sequence[Any]) -> Any:
    arrays = [atleast_1d(x) for x in arrays]
    arrays = [reshape(a, (1, a.size, 1)) if a.ndim == 1 else
              reshape(a, (*a.shape, 1)) if a.ndim == 2 else a for a in arrays]
    return concatenate(arrays, 2)


def column_stack(arrays: Sequence[Any]) -> Any:
    arrays = [asarray(x) for x in arrays]
    return concatenate([reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in arrays], 1)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """Coordinate arrays from 1-D arrays, 'xy' (Cartesian) or 'ij' (matrix) indexing."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid requires indexing 'xy' or 'ij', got {indexing!r}")
    xi = [ravel(x) for x in xi]
    shape = [x.size for x in xi]
    if indexing == "xy" and len(xi) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xi):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(xi) > 1 else i
        view = reshape(x, tuple(x.size if d == axis else 1 for d in range(len(xi))))
        out.append(view if sparse else broadcast_to(view, tuple(shape)))
    return out


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The n-th differences along `axis`, after `prepend` and `append` (broadcast to one
    slice where scalar)."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("diff requires an array of rank >= 1, got a scalar")
    if n < 0:
        raise ValueError(f"diff requires a non-negative order n, got {n}")
    axis = _axis("diff", axis, a.ndim)
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        extra = asarray(extra)
        if extra.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            extra = broadcast_to(extra, tuple(shape))
        parts.append(extra)
    a = concatenate(parts, axis) if len(parts) > 1 else a
    for _ in range(n):
        length = a.shape[axis]
        later, earlier = _slice_axis(a, axis, 1, length), _slice_axis(a, axis, 0, length - 1)
        a = _uf.not_equal(later, earlier) if a.dtype == np.bool_ else _uf.subtract(later,
                                                                                      earlier)
    return a


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             base: float = 10.0, dtype: Any = None) -> Any:
    out = _uf.power(base, linspace(start, stop, num, endpoint))
    return out if dtype is None else out.astype(dtype)


def _index_arrays(arrays: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
    return tuple(asarray(a.astype(_dt.default_int())) for a in arrays)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _index_arrays(np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _index_arrays(np.triu_indices(n, k, m))


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    return _index_arrays(np.diag_indices(n, ndim))


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    grids = np.indices(tuple(dimensions), sparse=sparse)
    dtype = _dt.default_int() if dtype is None else dtype
    return tuple(asarray(g.astype(dtype)) for g in grids) if sparse else asarray(
        grids.astype(dtype))


__all__ = [n for n in globals() if n not in _IMPORTED and not n.startswith("_")]
