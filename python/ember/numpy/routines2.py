"""More NumPy routines composed of the others: integer gcd and lcm, NaN-ignoring quantiles,
gradients of sampled functions, keyed sorts, selection and removal, set operations, and
applying a function along axes."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.dialect.types import kind

from . import creation as _cr, reductions as _rd, shapes as _sh, ufuncs as _uf
from ._base import _promoted, asarray
from .indexing import unique

# ------------------------------------------------------------------------------ integers


def gcd(x1: Any, x2: Any) -> Any:
    """The greatest common divisor of integers (gcd(0, 0) is 0): as many of Euclid's steps
    as the dtype's widest pair needs (Lame's bound: five per decimal digit of the smaller),
    each a no-op once the remainder is 0; ember-reroll makes a loop of them."""
    a, b = _promoted(x1, x2)
    if kind(a.dtype) not in "iu":
        raise TypeError(f"gcd requires integers, got {a.dtype}")
    a, b = _uf.absolute(a), _uf.absolute(b)
    digits = len(str(np.iinfo(a.dtype).max))
    for _ in range(5 * digits + 2):
        nonzero = b != 0
        a, b = (_rd.where(nonzero, b, a),
                _rd.where(nonzero, _uf.remainder(a, _rd.where(nonzero, b, 1)), 0))
    return a


def lcm(x1: Any, x2: Any) -> Any:
    """The least common multiple of integers (0 where either is 0)."""
    a, b = _promoted(x1, x2)
    g = gcd(a, b)
    safe = _rd.where(g == 0, 1, g)
    return _rd.where(g == 0, 0, _uf.absolute(a // safe * b))


# ---------------------------------------------------------------- NaN-ignoring quantiles


def nanquantile(a: Any, q: Any, axis: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """The q-th quantiles of the values that are not NaN, linearly interpolated (NaN where
    all are NaN); the quantiles' axis first, as in NumPy."""
    if method != "linear" or weights is not None:
        raise NotImplementedError(f"nanquantile supports method='linear' without weights, "
                                  f"got method={method!r}")
    qs = np.asarray(q, np.float64)
    if qs.ndim > 1 or ((qs < 0) | (qs > 1)).any():
        raise ValueError(f"nanquantile requires q in [0, 1], a number or a 1-d sequence, "
                         f"got {q}")
    a = asarray(a)
    s, axes = _rd._sorted_along("nanquantile", a, axis)  # NaN last
    count = _rd.sum(_uf.logical_not(_uf.isnan(s)), axis=-1, keepdims=True)
    last = _uf.maximum(count - 1, 0).astype(s.dtype)
    outs = []
    for p in qs.reshape(-1):
        pos = last * float(p)
        lo = _uf.floor(pos)
        hi = _uf.minimum(lo + 1, last)
        at_lo = _sh.take_along_axis(s, lo.astype(np.int32), -1)
        at_hi = _sh.take_along_axis(s, hi.astype(np.int32), -1)
        value = (at_lo + (pos - lo) * (at_hi - at_lo))[..., 0]
        value = _rd.where(count[..., 0] == 0, np.nan, value)
        outs.append(_rd._keep(a, value, axes, keepdims))
    return outs[0] if qs.ndim == 0 else _sh.stack(outs)


def nanpercentile(a: Any, q: Any, axis: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *,
                  weights: Any = None) -> Any:
    """nanquantile with q in percent."""
    return nanquantile(a, np.asarray(q, np.float64) / 100, axis, overwrite_input, method,
                       keepdims, weights=weights)


def nanmedian(a: Any, axis: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """The median of the values that are not NaN."""
    return nanquantile(a, 0.5, axis, keepdims=keepdims)


# -------------------------------------------------------------------- sampled gradients


def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """The gradient of sampled values along each axis: central differences inside, one-sided
    at the ends (first order), spacing 1, a scalar each or one for all (uniform spacing)."""
    f = asarray(f)
    if kind(f.dtype) not in "fc":
        f = f.astype(np.float32)
    axes = list(range(f.ndim)) if axis is None else (
        [axis % f.ndim] if isinstance(axis, int) else [a % f.ndim for a in axis])
    if edge_order not in (None, 1):
        raise NotImplementedError(f"gradient supports edge_order=1, got {edge_order}")
    spacing = list(varargs) if len(varargs) == len(axes) else list(varargs) * len(axes) \
        if len(varargs) == 1 else [1.0] * len(axes)
    if any(np.ndim(h) for h in spacing):
        raise NotImplementedError("gradient supports scalar spacings (one per axis)")
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        g = _sh.moveaxis(f, ax, -1)
        if g.shape[-1] < 2:
            raise ValueError(f"gradient requires at least 2 samples along axis {ax}, got "
                             f"shape {f.shape}")
        inner = (g[..., 2:] - g[..., :-2]) / (2.0 * h)
        first = (g[..., 1:2] - g[..., :1]) / h
        last = (g[..., -1:] - g[..., -2:-1]) / h
        out.append(_sh.moveaxis(_sh.concatenate([first, inner, last], axis=-1), -1, ax))
    return out[0] if len(out) == 1 else out


# ----------------------------------------------------------------------- keyed sorting


def lexsort(keys: Any, axis: int = -1) -> Any:
    """The indices sorting by the last key, ties broken by the one before, and so on (stable
    sorts from the first key to the last)."""
    keys = [asarray(k) for k in keys] if not hasattr(keys, "ndim") else [
        asarray(keys)[i] for i in range(asarray(keys).shape[0])]
    if not keys:
        raise TypeError("lexsort requires at least one key")
    order = _rd.argsort(keys[0], axis=axis, stable=True)
    for key in keys[1:]:
        by = _rd.argsort(_sh.take_along_axis(key, order, axis), axis=axis, stable=True)
        order = _sh.take_along_axis(order, by, axis)
    return order


def sort_complex(a: Any) -> Any:
    """Sorted by real part, then imaginary part, as a complex array."""
    a = asarray(a)
    out = _rd.sort(a, axis=-1)
    return out if kind(out.dtype) == "c" else out.astype(np.complex64)


# ---------------------------------------------------------------- selection and removal


def choose(a: Any, choices: Any, mode: str = "raise") -> Any:
    """choices[a[i]][i] for each position i (a and the choices broadcast together); mode
    'clip' clips a to the choices, 'wrap' wraps it ('raise' needs concrete a)."""
    a = asarray(a)
    stacked = _sh.stack([asarray(c) for c in choices]) if not hasattr(choices, "ndim") \
        else asarray(choices)
    n = stacked.shape[0]
    if mode == "raise":
        host = np.asarray(a)
        if host.size and (host.min() < 0 or host.max() >= n):
            raise ValueError(f"choose: an index is out of range for {n} choices (pass "
                             f"mode='clip' or 'wrap')")
    elif mode == "clip":
        a = _uf.clip(a, 0, n - 1)
    elif mode == "wrap":
        a = a % n
    else:
        raise ValueError(f"choose requires mode 'raise', 'clip' or 'wrap', got {mode!r}")
    shape = np.broadcast_shapes(a.shape, stacked.shape[1:])
    stacked = _sh.reshape(stacked, (n, *(1,) * (len(shape) + 1 - stacked.ndim),
                                    *stacked.shape[1:]))
    stacked = _sh.broadcast_to(stacked, (n, *shape))
    index = _sh.broadcast_to(a, shape)[None].astype(np.int32)
    return _sh.take_along_axis(stacked, index, 0)[0]


def _concrete_mask(name: str, condition: Any) -> np.ndarray:
    try:
        return np.asarray(condition).astype(bool)
    except Exception as e:
        raise ValueError(f"{name} requires a condition known while tracing (its result's "
                         f"length depends on it): pass size=") from e


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """The slices along `axis` (of the flattened a when None) where condition is true; with
    `size` (under jit), the first `size` of them, the rest fill_value."""
    a = asarray(a)
    if axis is None:
        a, axis = _sh.ravel(a), 0
    axis %= a.ndim
    n = a.shape[axis]
    if size is None:
        keep = np.flatnonzero(_concrete_mask("compress", condition))
        return _sh.take(a, asarray(keep[keep < n].astype(np.int32)), axis=axis)
    condition = _sh.ravel(asarray(condition)).astype(np.bool_)[:n]
    if condition.shape[0] < n:
        condition = _sh.concatenate([condition, _cr.zeros((n - condition.shape[0],),
                                                            np.bool_)])
    # the k-th kept slice's index lands at position k (dropped past `size`)
    rank = _rd.cumsum(condition.astype(np.int32)) - 1
    slots = _rd.where(condition, rank, size)
    index = _cr.zeros((size,), np.int32).at[slots].set(_cr.arange(n, dtype=np.int32))
    taken = _sh.take(a, index, axis=axis)
    shape = [1] * a.ndim
    shape[axis] = size
    filled = _sh.reshape(_cr.arange(size) < _rd.sum(condition.astype(np.int32)), shape)
    return _rd.where(filled, taken, _sh.full_like(taken, fill_value))


def extract(condition: Any, arr: Any, *, size: int | None = None,
            fill_value: Any = 0) -> Any:
    """The elements of the flattened arr where the flattened condition is true."""
    return compress(_sh.ravel(asarray(condition)), _sh.ravel(asarray(arr)), size=size,
                    fill_value=fill_value)


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """arr without the slices at indices `obj` (a slice, an integer or integers known while
    tracing) along `axis` (of the flattened arr when None)."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = _sh.ravel(arr), 0
    n = arr.shape[axis]
    drop = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj).reshape(-1)
    keep = np.setdiff1d(np.arange(n), drop % n if drop.size else drop)
    return _sh.take(arr, asarray(keep.astype(np.int32)), axis=axis)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """arr with `values` inserted before the indices `obj` (an integer, a slice or integers
    known while tracing) along `axis` (of the flattened arr when None), as NumPy places
    them."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = _sh.ravel(arr), 0
    axis %= arr.ndim
    n = arr.shape[axis]
    values = asarray(values).astype(arr.dtype)
    values = _sh.reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)
    shape = list(arr.shape)
    if not isinstance(obj, slice) and np.ndim(obj) == 0:  # one index: values are a block
        index = int(obj) + (n if int(obj) < 0 else 0)
        values = _sh.moveaxis(values, 0, axis)
        shape[axis] = values.shape[axis]
        parts = [_sh.take(arr, asarray(np.arange(index, dtype=np.int32)), axis=axis),
                 _sh.broadcast_to(values, tuple(shape)),
                 _sh.take(arr, asarray(np.arange(index, n, dtype=np.int32)), axis=axis)]
        return _sh.concatenate(parts, axis=axis)
    at = np.arange(*obj.indices(n)) if isinstance(obj, slice) else np.asarray(obj).reshape(-1)
    at = np.where(at < 0, at + n, at)
    shape[axis] = len(at)
    joined = _sh.concatenate([arr, _sh.broadcast_to(values, tuple(shape))], axis=axis)
    # each value goes before its index, values at one index in their order
    order = np.argsort(np.concatenate([np.arange(n), at - 0.5]), kind="stable")
    return _sh.take(joined, asarray(order.astype(np.int32)), axis=axis)


# ---------------------------------------------------------------------- set operations


def _set_op(name: str, combine: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    def run(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
            fill_value: Any = None) -> Any:
        a, b = _sh.ravel(asarray(ar1)), _sh.ravel(asarray(ar2))
        try:
            host = combine(np.asarray(a), np.asarray(b))
        except Exception as e:
            raise ValueError(f"{name} requires values known while tracing (its result's "
                             f"length depends on them)") from e
        out = asarray(host.astype(np.result_type(np.asarray(a).dtype, np.asarray(b).dtype)))
        if size is None:
            return out
        fill = (out[0] if out.shape[0] else 0) if fill_value is None else fill_value
        pad = builtins.max(size - out.shape[0], 0)
        return _sh.concatenate([out[:size], _cr.full((pad,), fill, out.dtype)])
    run.__name__ = run.__qualname__ = name
    return run


setdiff1d = _set_op("setdiff1d", np.setdiff1d)
setxor1d = _set_op("setxor1d", np.setxor1d)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted distinct values of both."""
    both = _sh.concatenate([_sh.ravel(asarray(ar1)), _sh.ravel(asarray(ar2))])
    return unique(both, size=size, fill_value=fill_value)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: Any = None) -> Any:
    """The sorted values both hold (with their first indices in each, `return_indices`)."""
    a, b = np.asarray(asarray(ar1)).ravel(), np.asarray(asarray(ar2)).ravel()
    common, ia, ib = np.intersect1d(a, b, return_indices=True)
    if size is not None:
        raise NotImplementedError("intersect1d with size= is not supported yet")
    out = asarray(common)
    if return_indices:
        return out, asarray(ia.astype(np.int32)), asarray(ib.astype(np.int32))
    return out


# -------------------------------------------------------------------- applying functions


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """func1d on every 1-D slice along `axis` (vmapped over the others); its result's dims
    take the axis' place."""
    from ember._src.batching import vmap

    arr = asarray(arr)
    axis %= arr.ndim
    fn = lambda v: func1d(v, *args, **kwargs)  # noqa: E731
    for _ in range(arr.ndim - 1):
        fn = vmap(fn)
    moved = _sh.moveaxis(arr, axis, -1)
    out = asarray(fn(moved))
    extra = out.ndim - (arr.ndim - 1)
    return _sh.moveaxis(out, list(range(arr.ndim - 1, out.ndim)),
                        list(range(axis, axis + extra))) if extra else out


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """func(a, axis) for each axis in turn, its result kept at a's rank."""
    a = asarray(a)
    for ax in axes:
        b = asarray(func(a, ax))
        a = b if b.ndim == a.ndim else _sh.expand_dims(b, ax)
    return a


__all__ = ["apply_along_axis", "apply_over_axes", "choose", "compress", "delete", "extract",
           "gcd", "gradient", "insert", "intersect1d", "lcm", "lexsort", "nanmedian",
           "nanpercentile", "nanquantile", "setdiff1d", "setxor1d", "sort_complex",
           "union1d"]
