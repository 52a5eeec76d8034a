"""NumPy indexing with JAX's semantics: `x[idx]` and `x.at[idx].set/add/multiply/min/max/get`.

`x[idx]`: integers (static, or traced, which clamp as JAX's retrieval does), slices with any
step, `None`, `...`, integer arrays (gathers: negative indices count from the end, out of
range ones clamp) and boolean masks on concrete arrays. A traced boolean mask has no static
shape: NonConcreteBooleanIndexError.

`x.at[idx].op(v)`: the same indices select the elements to update; out-of-range updates are
dropped, as JAX's scatter does. Arrays are immutable: `x[i] = v` raises a TypeError that
points here.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from ember import errors
from ember.dialect import ops
from ember.dialect.types import ShapedArray
from ember.runtime import Array, put
from ember.runtime.executable import PARALLEL_MIN_ELEMENTS

from .._src import dtypes as _dt
from .._src.core import Tracer, current_trace
from .._src.dispatch import bind
from .._src.host_eval import on_host
from .._src.jit import EagerFunction
from . import _base, creation as _cr, reductions as _red, shapes as _sh, ufuncs as _uf
from .ufuncs import _where_values

_IMPORTED = set(globals())  # what this module defines is exported: the rest


def _is_array_index(i: Any) -> bool:
    return isinstance(i, (list, np.ndarray, Array, Tracer)) and np.ndim(i) > 0


def _normalize(x: Any, idx: Any) -> list[Any]:
    """A list of entries, one per axis or None, with `...` expanded and boolean masks made
    integer arrays."""
    idx = list(idx) if isinstance(idx, tuple) else [idx]
    _check_masks(x, idx)
    out = []
    for i in idx:
        if isinstance(i, list):
            i = np.asarray(i)
            if i.dtype == object:
                raise IndexError(f"indices must be rectangular integer lists, got {i!r}")
        if isinstance(i, (bool, np.bool_)):
            raise IndexError("a Python bool is not an index; use a boolean array mask")
        is_mask = getattr(i, "dtype", None) == np.bool_ and np.ndim(i) > 0
        if is_mask and isinstance(i, Tracer):
            raise errors.NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got a traced mask of shape "
                f"{i.aval.str_short()}. Its True count decides the result's shape, which jit "
                f"must know. Use ember.numpy.where(mask, x, fill) (same shape), or "
                f"x.sum(where=...)-style reductions, or index outside jit.")
        if is_mask:
            out.extend(np.nonzero(np.asarray(i)))
        elif isinstance(i, slice):  # bounds that are integer arrays: their values (JAX's)
            out.append(slice(*(b if b is None else operator.index(b)
                               for b in (i.start, i.stop, i.step))))
        else:
            out.append(i)
    consumed = sum(e is not None and e is not Ellipsis for e in out)
    if sum(e is Ellipsis for e in out) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > np.ndim(x):
        raise IndexError(f"too many indices for array: array is {np.ndim(x)}-dimensional, "
                         f"but {consumed} were indexed")
    ellipsis = [k for k, e in enumerate(out) if e is Ellipsis]
    if ellipsis:
        at = ellipsis[0]
        out[at:at + 1] = [slice(None)] * (np.ndim(x) - consumed)
        return out
    return out + [slice(None)] * (np.ndim(x) - consumed)


def _check_masks(x: Any, idx: list[Any]) -> None:
    """A boolean mask must have the shape of the axes it indexes (NumPy's and JAX's rule; a
    shorter one indexed the first elements)."""
    def consumed(i: Any) -> int:
        if i is None or i is Ellipsis:
            return 0
        return np.ndim(i) if getattr(i, "dtype", None) == np.bool_ else 1

    idx = [np.asarray(i) if isinstance(i, list) else i for i in idx]
    axis, rest = 0, np.ndim(x) - sum(consumed(i) for i in idx)
    for i in idx:
        if i is Ellipsis:
            axis += max(rest, 0)
            continue
        if getattr(i, "dtype", None) == np.bool_ and np.ndim(i) > 0:
            want = tuple(np.shape(x)[axis:axis + np.ndim(i)])
            for k, (n, m) in enumerate(zip(want, np.shape(i), strict=False)):
                if n != m:
                    raise IndexError(f"boolean index did not match indexed array along axis "
                                     f"{axis + k}; size of axis is {n} but size of "
                                     f"corresponding boolean axis is {m}")
        axis += consumed(i)


def _in_bounds(i: int, n: int, axis: int) -> int:
    """A static index made non-negative; IndexError (NumPy's) out of bounds."""
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i % n


def _static_int(i: Any) -> int | None:
    if isinstance(i, (int, np.integer)):
        return int(i)
    if isinstance(i, (Array, np.ndarray)) and i.ndim == 0 and i.dtype.kind in "iu":
        return int(i)
    return None


def getitem(x: Any, idx: Any) -> Any:
    x = _base.asarray(x)
    entries = _normalize(x, idx)
    if any(_is_array_index(e) for e in entries):
        return _advanced(x, entries)
    if current_trace() is None:
        return _eager_basic(x, entries)
    # Basic part: slices and integers, one axis each; array indices keep their axis whole.
    starts, limits, strides, flips, squeeze, dynamic = [], [], [], [], [], {}
    axis = 0
    for e in entries:
        if e is None:
            continue
        n = x.shape[axis]
        if isinstance(e, slice):  # a whole axis asks nothing of a symbolic size
            start, stop, step = (0, n, 1) if e == slice(None) else e.indices(n)
            if step < 0:  # reverse, then slice forward
                flips.append(axis)
                count = len(range(start, stop, step))
                start = n - 1 - start
                stop, step = start + (count - 1) * -step + 1 if count else start, -step
            starts.append(start)
            limits.append(max(stop, start))
            strides.append(step)
        elif _static_int(e) is not None:
            i = _in_bounds(_static_int(e), n, axis)
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeeze.append(axis)
        elif isinstance(e, Tracer) and e.ndim == 0 and e.dtype.kind in "iu":
            dynamic[axis] = e
            starts.append(0)
            limits.append(1)
            strides.append(1)
            squeeze.append(axis)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None, and "
                             f"integer or boolean arrays are valid indices, got {e!r}")
        axis += 1
    y = bind(ops.REV, x, dimensions=tuple(flips)) if flips else x
    if dynamic:
        y = _dynamic_part(y, dynamic)
    if (tuple(starts), tuple(limits), tuple(strides)) != ((0,) * x.ndim, x.shape,
                                                            (1,) * x.ndim):
        y = bind(ops.SLICE, y, start_indices=tuple(starts), limit_indices=tuple(limits),
                 strides=tuple(strides))
    kept = [a for a in range(x.ndim) if a not in squeeze]
    y = _sh.reshape(y, tuple(y.shape[a] for a in kept))
    new_axes = _new_axes(entries)
    if not new_axes:
        return y
    shape = list(y.shape)
    for pos in new_axes:
        shape.insert(pos, 1)
    return _sh.reshape(y, tuple(shape))


def _eager_basic(x: Array, entries: list[Any]) -> Any:
    """Eager basic indexing, one module: the integers are its operands, not constants in it
    (x[i] for 20 values of i compiles once; they are checked and made non-negative here),
    and it is shape-polymorphic where the index needs no sizes (x[i], x[:, None])."""
    template, ints, axis = [], [], 0
    for e in entries:
        i = _static_int(e)
        if i is not None:
            ints.append(np.int32(_in_bounds(i, x.shape[axis], axis)))
            template.append(int)
        else:  # None or a slice (unhashable before Python 3.12)
            template.append(e if e is None else (e.start, e.stop, e.step))
        axis += e is not None
    if on_host([x], x.device):  # a small array in host memory: NumPy's basic indexing, copied
        it = iter(ints)
        y = x._to_numpy()[tuple(int(next(it)) if e is int else e if e is None else slice(*e)
                                for e in template)]
        if y.size < PARALLEL_MIN_ELEMENTS:
            return put(y, ShapedArray(y.shape, x.dtype, x.weak_type), x.device)
    return _GETITEM_BASIC(x, tuple(template), *ints)


def _getitem_basic(x: Any, template: tuple, *ints: Any) -> Any:
    it = iter(ints)
    return getitem(x, tuple(next(it) if e is int else e if e is None else slice(*e)
                            for e in template))


_GETITEM_BASIC = EagerFunction(_getitem_basic, static_argnums=(1,))


def _advanced(x: Any, entries: list[Any]) -> Any:
    """NumPy's advanced indexing: integers count as (0-d) index arrays too. The gather reads
    `x` itself and the slices apply to its result (a gather of a slice fused into one
    dispatch made IREE 3.13's CPU codegen fail)."""
    if any(e is None for e in entries):
        raise NotImplementedError("None together with integer-array indices is not "
                                  "supported yet; index in two steps")
    arrays, basic = [], []
    for axis, e in enumerate(entries):
        if isinstance(e, slice):
            basic.append((axis, e))
        elif isinstance(e, (int, np.integer)) or _is_array_index(e) or (
                np.ndim(e) == 0 and getattr(e, "dtype", np.dtype(np.int32)).kind in "iu"):
            arrays.append((axis, e))
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None, and "
                             f"integer or boolean arrays are valid indices, got {e!r}")
    for _, e in arrays:
        dtype = getattr(e, "dtype", None) or np.asarray(e).dtype
        if np.dtype(dtype).kind not in "iu":
            raise IndexError(f"array indices must be integers or booleans, got {dtype}")
    y = _gather(x, arrays)
    axes = [a for a, _ in arrays]
    width = y.ndim - (x.ndim - len(axes))  # dims the broadcast indices contribute
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    rest = [e for _, e in basic]
    if adjacent:
        before = [e for a, e in basic if a < axes[0]]
        after = [e for a, e in basic if a > axes[-1]]
        index = before + [slice(None)] * width + after
    else:
        index = [slice(None)] * width + rest
    return getitem(y, tuple(index)) if any(e != slice(None) for e in index) else y


def _dynamic_part(x: Any, dynamic: dict[int, Tracer]) -> Any:
    """Traced integers: a size-1 dynamic slice per axis (negative counts from the end; the
    start clamps, as JAX's retrieval does)."""
    starts = []
    for a in range(x.ndim):
        if a in dynamic:
            i = _base.asarray(dynamic[a]).astype(np.int32)
            starts.append(_where_values(i < 0, i + x.shape[a], i))
        else:
            starts.append(np.int32(0))
    sizes = tuple(1 if a in dynamic else n for a, n in enumerate(x.shape))
    return bind(ops.DYNAMIC_SLICE, x, *starts, sizes=sizes)


def _gather(y: Any, arrays: list[tuple[int, Any]]) -> Any:
    """NumPy's advanced indexing over the integer arrays `arrays` ((axis of y, indices)):
    adjacent ones put the broadcast index shape where they stand, separated ones in front."""
    if not arrays:
        return y
    axes = [a for a, _ in arrays]
    index = [_base.asarray(e) for _, e in arrays]
    shape = np.broadcast_shapes(*(tuple(i.shape) for i in index))
    index = [_sh.broadcast_to(i, shape) for i in index]
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    if not adjacent:  # move the indexed axes to the front
        rest = [a for a in range(y.ndim) if a not in axes]
        y = _sh.transpose(y, axes + rest)
        axes = list(range(len(axes)))
    first = axes[0]
    dims = [y.shape[a] for a in axes]
    if len(axes) > 1:  # one merged axis, one flat index (each component normalized first)
        flat = None
        for i, n, stride in zip(index, dims, _strides(dims), strict=True):
            i = i.astype(np.int32)
            i = _uf.minimum(_uf.maximum(_where_values(i < 0, i + n, i), 0), n - 1)
            flat = i * stride if flat is None else flat + i * stride
        y = _sh.reshape(y, y.shape[:first] + (math.prod(dims),) + y.shape[axes[-1] + 1:])
        index = [flat]
    return bind(ops.TAKE, y, index[0], axis=first)


def _strides(dims: list[int]) -> list[int]:
    return [math.prod(dims[k + 1:]) for k in range(len(dims))]


def _new_axes(entries: list[Any]) -> list[int]:
    """Result positions of `None` entries (basic indexing)."""
    positions, out = [], 0
    for e in entries:
        if e is None:
            positions.append(out)
            out += 1
        elif isinstance(e, slice):
            out += 1
    return positions


# ----------------------------------------------------------------------------- x.at[idx]

class AtIndexer:
    """`x.at`: `x.at[idx]` selects what a functional update changes."""

    __slots__ = ("_x",)

    def __init__(self, x: Any):
        self._x = x

    def __getitem__(self, idx: Any) -> _Update:
        return _Update(self._x, idx)


class _Update:
    """`x.at[idx]`: functional updates of the selected elements."""

    __slots__ = ("_x", "_idx")

    def __init__(self, x: Any, idx: Any):
        self._x, self._idx = x, idx

    def get(self) -> Any:
        return getitem(self._x, self._idx)

    def set(self, values: Any) -> Any:
        return self._scatter(values, "set")

    def add(self, values: Any) -> Any:
        return self._scatter(values, "add")

    def multiply(self, values: Any) -> Any:
        return self._scatter(values, "mul")

    mul = multiply

    def min(self, values: Any) -> Any:
        return self._scatter(values, "min")

    def max(self, values: Any) -> Any:
        return self._scatter(values, "max")

    def _scatter(self, values: Any, combine: str) -> Any:
        x = _base.asarray(self._x)
        entries = _normalize(x, self._idx)
        if not any(_is_array_index(e) for e in entries):
            return _update_window(x, entries, values, combine)
        positions = _flat_positions(x, entries)
        if positions is None:
            positions = _positions(x, self._idx)
        updates = _sh.broadcast_to(_base.asarray(values).astype(x.dtype), positions.shape)
        flat = bind(ops.SCATTER, _sh.reshape(x, (x.size,)),
                    _sh.reshape(positions, (positions.size,)),
                    _sh.reshape(updates, (updates.size,)), combine=combine)
        return _sh.reshape(flat, x.shape)


_COMBINE = {"add": ops.ADD, "mul": ops.MUL, "min": ops.MIN, "max": ops.MAX}


def _update_window(x: Any, entries: list[Any], values: Any, combine: str) -> Any:
    """Basic indexing (integers, slices, None): the selected elements form one strided window,
    so the update is one ember.dynamic_update_slice (an in-place tensor.insert_slice) that
    costs the window's size, not the array's. Out-of-range integers drop the update, as JAX's
    scatter does: static ones at trace time, traced ones by writing the old values back."""
    starts, sizes, strides, flips, in_range = [], [], [], [], []
    selected = []  # the shape of x[idx], which the values broadcast to (NumPy's rule)
    dropped = False
    axis = 0
    for e in entries:
        if e is None:
            selected.append(1)
            continue
        n = x.shape[axis]
        if isinstance(e, slice):  # a whole axis asks nothing of a symbolic size
            start, stop, step = (0, n, 1) if e == slice(None) else e.indices(n)
            count = len(range(start, stop, step))
            selected.append(count)
            if step < 0:  # the same elements, visited forward; the update is reversed
                start, step = start + (count - 1) * step if count else 0, -step
                flips.append(axis)
            starts.append(np.int32(start))
            sizes.append(count)
            strides.append(step)
        elif _static_int(e) is not None:
            i = _static_int(e)
            dropped |= not -n <= i < n
            starts.append(np.int32(i % n if -n <= i < n else 0))
            sizes.append(1)
            strides.append(1)
        elif isinstance(e, Tracer) and e.ndim == 0 and e.dtype.kind in "iu":
            i = e.astype(np.int32)
            i = _where_values(i < 0, i + n, i)
            in_range.append((i >= 0) & (i < n))
            starts.append(i)
            sizes.append(1)
            strides.append(1)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None, and "
                             f"integer or boolean arrays are valid indices, got {e!r}")
        axis += 1
    update = _sh.broadcast_to(_base.asarray(values).astype(x.dtype), tuple(selected))
    if dropped or 0 in sizes:
        return x
    update = _sh.reshape(update, tuple(sizes))
    if flips:
        update = bind(ops.REV, update, dimensions=tuple(flips))
    if combine != "set" or in_range:
        old = _window(x, starts, sizes, strides)
        if combine != "set":
            update = bind(_COMBINE[combine], old, update)
        if in_range:
            ok = in_range[0]
            for flag in in_range[1:]:
                ok = ok & flag
            update = _where_values(ok, update, old)
    return bind(ops.DYNAMIC_UPDATE_SLICE, x, update, *starts, strides=tuple(strides))


def _window(x: Any, starts: list[Any], sizes: list[int], strides: list[int]) -> Any:
    """The elements a strided window selects: a dynamic slice of the span, then the stride."""
    extents = tuple((n - 1) * s + 1 for n, s in zip(sizes, strides, strict=True))
    span = bind(ops.DYNAMIC_SLICE, x, *starts, sizes=extents)
    if all(s == 1 for s in strides):
        return span
    return bind(ops.SLICE, span, start_indices=(0,) * x.ndim, limit_indices=extents,
                strides=tuple(strides))


def _flat_positions(x: Any, entries: list[Any]) -> Any | None:
    """Integer (array) indices on every axis: the flat positions computed from them, -1 where
    any component is out of range; None for other mixes (slices, None), left to the table."""
    if len(entries) != x.ndim or any(e is None or isinstance(e, slice) for e in entries):
        return None
    flat = valid = None
    for e, n, stride in zip(entries, x.shape, _strides(list(x.shape)), strict=True):
        i = _base.asarray(e).astype(np.int32)
        i = _where_values(i < 0, i + n, i)
        ok = (i >= 0) & (i < n)
        flat = i * stride if flat is None else flat + i * stride
        valid = ok if valid is None else valid & ok
    return _where_values(valid, flat, -1)


def _positions(x: Any, idx: Any) -> Any:
    """The flat position of each selected element, or -1 where an index is out of range (its
    update is dropped): `idx` applied to a table of positions padded by one -1 per axis, with
    out-of-range indices sent to the padding. The table depends on the shape only: it is
    made on the host (as an iota graph, IREE's constant evaluation failed to compile it)."""
    table = np.full(tuple(n + 1 for n in x.shape), -1, np.int32)
    table[tuple(slice(0, n) for n in x.shape)] = np.arange(x.size, dtype=np.int32).reshape(
        x.shape)
    entries = _normalize(x, idx)
    sent, axis, traced = [], 0, False
    for e in entries:
        if e is None:
            sent.append(e)
            continue
        n = x.shape[axis]
        if isinstance(e, slice):  # a whole axis asks nothing of a symbolic size
            start, stop, step = (0, n, 1) if e == slice(None) else e.indices(n)
            sent.append(slice(start, stop if stop >= 0 else None, step))
        elif _static_int(e) is not None:
            i = _static_int(e)
            sent.append(i % n if -n <= i < n else n)
        elif isinstance(e, np.ndarray):
            i = np.where(e < 0, e.astype(np.int64) + n, e)
            sent.append(np.where((i < 0) | (i >= n), n, i))
        else:  # traced integers and device arrays: out of range -> the padding
            i = _base.asarray(e).astype(np.int32)
            i = _where_values(i < 0, i + n, i)
            sent.append(_where_values((i < 0) | (i >= n), n, i))
            traced = True
        axis += 1
    if not traced:  # everything static: the positions are a constant
        return _base.asarray(table[tuple(sent)])
    return getitem(table, tuple(sent))


def immutable(self: Any, idx: Any, value: Any) -> None:
    raise TypeError(f"'{type(self).__name__}' object does not support item assignment: ember "
                    f"arrays are immutable, as in JAX. Use x = x.at[idx].set(value) (or .add, "
                    f".multiply, .min, .max) for a functional update.")


def _sort_less(x: Any, y: Any) -> Any:
    """x < y in sort order: NaN after every number."""
    return _uf.logical_or(_uf.less(x, y), _uf.logical_and(_uf.isnan(y),
                                                          _uf.logical_not(_uf.isnan(x))))


@_base._eager_jit("side", "method")
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None,
                 *, method: str = "scan") -> Any:
    """Where v's values would go in the sorted 1-d a to keep it sorted: a binary search of
    ceil(log2(n + 1)) unrolled steps, each a gather (NaN sorts last, as in NumPy)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted requires side 'left' or 'right', got {side!r}")
    a = _base.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"searchsorted requires a 1-d array a, got shape {tuple(a.shape)}")
    if sorter is not None:
        a = _sh.take(a, sorter)
    a, v = _base._promote_only(a, v)
    n = a.shape[0]
    lo = _uf.multiply(_cr.zeros(v.shape, np.int32), 1)
    hi = _uf.add(lo, n)
    for _ in range(max(n, 1).bit_length()):
        active = _uf.less(lo, hi)
        mid = _uf.right_shift(_uf.add(lo, hi), 1)
        probe = _sh.take(a, _uf.minimum(mid, max(n - 1, 0)), mode="clip") if n else v
        go = _sort_less(probe, v) if side == "left" else _uf.logical_not(_sort_less(v, probe))
        go = _uf.logical_and(active, go)
        lo = _where_values(go, _uf.add(mid, 1), lo)
        hi = _where_values(_uf.logical_and(active, _uf.logical_not(go)), mid, hi)
    return lo.astype(_dt.default_int())


@_base._eager_jit("period")
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of (xp, fp) at x; xp increasing."""
    if period is not None:
        raise NotImplementedError("interp does not support period yet")
    xp, fp = _base.asarray(xp), _base.asarray(fp)
    if xp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
        raise ValueError(f"interp requires 1-d xp and fp of one non-zero length, got shapes "
                         f"{tuple(xp.shape)} and {tuple(fp.shape)}")
    x, xp, fp = _base._promote_only(x, xp, fp)
    if x.dtype.kind != "f":
        x, xp, fp = (t.astype(_dt.default_float()) for t in (x, xp, fp))
    n = xp.shape[0]
    i = _uf.clip(searchsorted(xp, x, side="right"), 1, max(n - 1, 1))
    before = _uf.subtract(i, 1)
    x0, x1 = _sh.take(xp, before, mode="clip"), _sh.take(xp, i, mode="clip")
    f0, f1 = _sh.take(fp, before, mode="clip"), _sh.take(fp, i, mode="clip")
    dx = _uf.subtract(x1, x0)
    slope = _uf.true_divide(_uf.subtract(f1, f0), _where_values(_uf.equal(dx, 0), 1, dx))
    out = _uf.add(f0, _uf.multiply(slope, _uf.subtract(x, x0)))
    out = _where_values(_uf.equal(dx, 0), f0, out) if n > 1 else _uf.add(
        _uf.multiply(x, 0), f0)
    out = _where_values(_uf.less(x, _sh.take(xp, 0)), fp[0] if left is None else left, out)
    return _where_values(_uf.greater(x, _sh.take(xp, n - 1)),
                         fp[n - 1] if right is None else right, out)


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None) -> Any:
    """Counts (or summed weights) of each non-negative int in x. Under jit `length` must be
    given (the result's shape cannot depend on x's values); values at or past it are
    dropped, as in JAX."""
    x = _base.asarray(x)
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise ValueError(f"bincount requires a 1-d array of integers, got {x.dtype} of shape "
                         f"{tuple(x.shape)}")
    if length is None:
        if isinstance(x, Tracer) or current_trace() is not None:
            raise errors.ConcretizationTypeError(
                "bincount under jit requires length= (the number of bins): the result's "
                "shape cannot depend on the values of x")
        length = int(np.max(np.asarray(x), initial=-1)) + 1
    return _bincount(x, weights, max(int(length), int(minlength)))


@_base._eager_jit("length")  # eagerly one module a length, once the length is known
def _bincount(x: Any, weights: Any, length: int) -> Any:
    w = _cr.ones(x.shape, _dt.default_int()) if weights is None else _base.asarray(weights)
    zeros = _cr.zeros((length,), w.dtype)
    keep = _uf.logical_and(_uf.greater_equal(x, 0), _uf.less(x, length))
    return AtIndexer(zeros)[_where_values(keep, x, length)].add(w)  # length: dropped


class _UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _sorted_groups(x: Any, equal_nan: bool) -> tuple[Any, Any, Any, Any]:
    """x flattened and sorted (stably), the sorting order, where each group of equal values
    starts, and each sorted element's group."""
    flat = _sh.ravel(_base.asarray(x))
    order = _red.argsort(flat, stable=True).astype(np.int32)
    s = _sh.take(flat, order)
    differs = _uf.not_equal(s[1:], s[:-1])
    if s.dtype.kind == "f" and equal_nan:
        differs = _uf.logical_and(differs, _uf.logical_not(_uf.logical_and(
            _uf.isnan(s[1:]), _uf.isnan(s[:-1]))))
    first = _sh.concatenate([_cr.ones((min(flat.shape[0], 1),), bool), differs])
    return s, order, first, _uf.subtract(_red.cumsum(first.astype(np.int32)), 1)


def _unique_sized(x: Any, size: int, fill_value: Any, equal_nan: bool) -> _UniqueAllResult:
    s, order, first, group = _sorted_groups(x, equal_nan)
    n = s.shape[0]
    fill = (s[0] if n else _cr.zeros((), s.dtype)) if fill_value is None else fill_value
    # each group's value is its first element's (of -0.0 and 0.0, the first in x)
    values = AtIndexer(_sh.broadcast_to(_base.asarray(fill).astype(s.dtype), (size,)))[
        _where_values(first, group, size)].set(s)
    counts = AtIndexer(_cr.zeros((size,), _dt.default_int()))[group].add(1)
    indices = AtIndexer(_cr.full((size,), max(n - 1, 0), np.int32))[group].min(order)
    inverse = AtIndexer(_cr.zeros((n,), _dt.default_int()))[order].set(
        group.astype(_dt.default_int()))
    return _UniqueAllResult(values, indices.astype(_dt.default_int()),
                           _sh.reshape(inverse, _base.asarray(x).shape), counts)


# Eagerly, two modules a signature: one counts the values, one finds them.
_COUNT_UNIQUE = EagerFunction(lambda x, equal_nan: _red.sum(_sorted_groups(x, equal_nan)[2]),
                              static_argnums=(1,))
_UNIQUE_SIZED = EagerFunction(_unique_sized, static_argnums=(1, 2, 3))


def _unique(x: Any, size: int | None, fill_value: Any, equal_nan: bool = True,
            name: str = "unique") -> _UniqueAllResult:
    """The sorted distinct values of x (flattened), the first index of each, each element's
    group, and the counts. Their number is a shape: known eagerly, `size` under jit (cut to
    it, or padded with fill_value, by default the least value)."""
    traced = isinstance(x, Tracer) or current_trace() is not None
    if size is None:
        if traced:
            raise errors.ConcretizationTypeError(
                f"{name} under jit requires size= (how many values to return): the number "
                f"of distinct values is a shape, and cannot depend on the values of x")
        size = int(_COUNT_UNIQUE(x, equal_nan))
    if traced or not isinstance(fill_value, (int, float, bool, type(None))):
        return _unique_sized(x, size, fill_value, equal_nan)
    return _UNIQUE_SIZED(x, size, fill_value, equal_nan)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted distinct values of ar (flattened), with what return_* ask for, as
    jnp.unique; `size` under jit."""
    if axis is not None:
        raise NotImplementedError("unique supports axis=None (the flattened array) only")
    parts = _unique(ar, size, fill_value, equal_nan)
    out = [parts.values] + [p for flag, p in ((return_index, parts.indices),
                                              (return_inverse, parts.inverse_indices),
                                              (return_counts, parts.counts)) if flag]
    return out[0] if len(out) == 1 else tuple(out)


# The array API's unique_* count every NaN as a value of its own (jnp.unique merges them).
def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    return _unique(x, size, fill_value, False, "unique_values").values


def unique_counts(x: Any, /, *, size: int | None = None,
                  fill_value: Any = None) -> _UniqueCountsResult:
    parts = _unique(x, size, fill_value, False, "unique_counts")
    return _UniqueCountsResult(parts.values, parts.counts)


def unique_inverse(x: Any, /, *, size: int | None = None,
                   fill_value: Any = None) -> _UniqueInverseResult:
    parts = _unique(x, size, fill_value, False, "unique_inverse")
    return _UniqueInverseResult(parts.values, parts.inverse_indices)


def unique_all(x: Any, /, *, size: int | None = None,
               fill_value: Any = None) -> _UniqueAllResult:
    return _unique(x, size, fill_value, False, "unique_all")


__all__ = [n for n in globals() if n not in _IMPORTED and not n.startswith("_")]
