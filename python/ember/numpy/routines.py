"""NumPy routines composed of the others: NaN-ignoring reductions and scans, membership and
binning, integration and differences, and helpers over shapes and indices."""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.dialect.types import kind

from . import contractions as _ct, creation as _cr, reductions as _rd, shapes as _sh, ufuncs as _uf
from ._base import _promoted, asarray
from .indexing import searchsorted

euler_gamma = float(np.euler_gamma)


# ------------------------------------------------------------------ NaN-ignoring reductions


def _without_nan(a: Any, fill: Any) -> Any:
    a = asarray(a)
    return _rd.where(_uf.isnan(a), fill, a) if kind(a.dtype) in "fc" else a


def nanprod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Any:
    """The product of the elements that are not NaN (and that `where` holds), times
    `initial`."""
    a = _without_nan(a, 1)
    if where is not None:
        a = _rd.where(where, a, 1)
    result = _rd.prod(a, axis=axis, dtype=dtype, keepdims=keepdims)
    return result if initial is None else result * initial


def nancumsum(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """The running sum, NaN counting as 0."""
    return _rd.cumsum(_without_nan(a, 0), axis=axis, dtype=dtype)


def nancumprod(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """The running product, NaN counting as 1."""
    return _rd.cumprod(_without_nan(a, 1), axis=axis, dtype=dtype)


def _nan_arg(name: str, arg, fill: float):
    def run(a: Any, axis: int | None = None, keepdims: bool | None = None) -> Any:
        a = asarray(a)
        if kind(a.dtype) not in "fc":
            return arg(a, axis=axis, keepdims=bool(keepdims))
        nan = _uf.isnan(a)
        index = arg(_rd.where(nan, fill, a), axis=axis, keepdims=bool(keepdims))
        return _rd.where(_rd.all(nan, axis=axis, keepdims=bool(keepdims)), -1, index)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"The index of the {name[6:]} of the elements not NaN (-1 where all are)."
    return run


nanargmax = _nan_arg("nanargmax", _rd.argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", _rd.argmin, np.inf)


# ------------------------------------------------------------- membership, binning, equality


def isin(element: Any, test_elements: Any, assume_unique: bool = False,
         invert: bool = False, *, method: str = "auto") -> Any:
    """Whether each element is among test_elements (compared with all of them: their count
    times element's elements of work)."""
    element, tests = asarray(element), _sh.ravel(asarray(test_elements))
    found = _rd.any(_sh.expand_dims(element, -1) == tests, axis=-1)
    return _uf.logical_not(found) if invert else found


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """The index of the bin each x falls in (bins increasing or decreasing; `right` closes
    the bins on the right)."""
    x, bins = asarray(x), asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize requires 1-D bins, got shape {bins.shape}")
    side = "left" if right else "right"
    if bins.shape[0] < 2:
        return searchsorted(bins, x, side=side)
    increasing = searchsorted(bins, x, side=side)
    decreasing = bins.shape[0] - searchsorted(_sh.flip(bins), x, side=side)
    return _rd.where(bins[-1] >= bins[0], increasing, decreasing)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether the two broadcast to one shape and are equal there (False where they do not
    broadcast)."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return asarray(False)
    return _rd.all(a1 == a2)


def isscalar(element: Any) -> bool:
    """Python and NumPy scalars, and arrays of no dims."""
    if isinstance(element, (bool, int, float, complex, np.generic)):
        return True
    return getattr(element, "ndim", None) == 0


def iterable(y: Any) -> bool:
    try:
        iter(y)
    except TypeError:
        return False
    return True


# ------------------------------------------------------------ integration and differences


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of y along `axis` by the trapezoidal rule, at points x (spaced dx)."""
    y = asarray(y)
    y = y.astype(np.float32) if kind(y.dtype) not in "fc" else y
    y = _sh.moveaxis(y, axis, -1)
    mid = (y[..., 1:] + y[..., :-1]) * 0.5
    if x is None:
        return _rd.sum(mid, axis=-1) * dx
    x = asarray(x)
    x = _sh.moveaxis(x, axis, -1) if x.ndim > 1 else x
    return _rd.sum(mid * (x[..., 1:] - x[..., :-1]), axis=-1)


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """The differences of the flattened array, with to_begin before and to_end after."""
    flat = _sh.ravel(asarray(ary))
    parts = [flat[1:] - flat[:-1]]
    if to_begin is not None:
        parts.insert(0, _sh.ravel(asarray(to_begin)).astype(flat.dtype))
    if to_end is not None:
        parts.append(_sh.ravel(asarray(to_end)).astype(flat.dtype))
    return _sh.concatenate(parts)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """p with jumps over max(discont, period / 2) along `axis` moved by whole periods."""
    (p,) = _promoted(p, to_float=True)
    half = period / 2
    discont = half if discont is None else _uf.maximum(discont, half)
    p = _sh.moveaxis(p, axis, -1)
    dd = p[..., 1:] - p[..., :-1]
    ddmod = _uf.remainder(dd + half, period) - half
    ddmod = _rd.where((ddmod == -half) & (dd > 0), half, ddmod)
    correction = _rd.where(_uf.absolute(dd) < discont, 0.0, ddmod - dd)
    fixed = p[..., 1:] + _rd.cumsum(correction, axis=-1)
    return _sh.moveaxis(_sh.concatenate([p[..., :1], fixed], axis=-1), -1, axis)


# ------------------------------------------------------------------------ shapes, indices


def fabs(x: Any, /) -> Any:
    """|x| as a float (integers too)."""
    (x,) = _promoted(x, to_float=True)
    return _uf.absolute(x)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """arr and values joined along `axis` (both flattened when it is None)."""
    if axis is None:
        return _sh.concatenate([_sh.ravel(asarray(arr)), _sh.ravel(asarray(values))])
    return _sh.concatenate([arr, values], axis=axis)


def diagflat(v: Any, k: int = 0) -> Any:
    """A matrix with the flattened v on its k-th diagonal."""
    return _sh.diag(_sh.ravel(asarray(v)), k)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """m turned k quarter turns in the plane of `axes` (from the first toward the second)."""
    m = asarray(m)
    if len(axes) != 2 or axes[0] % m.ndim == axes[1] % m.ndim:
        raise ValueError(f"rot90 requires two different axes, got {axes}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return _sh.flip(_sh.flip(m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return _sh.transpose(_sh.flip(m, axes[1]), perm)
    return _sh.flip(_sh.transpose(m, perm), axes[1])


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """`axis` moved to before position `start` (NumPy's older moveaxis)."""
    a = asarray(a)
    axis, n = axis % a.ndim, a.ndim
    if not -n <= start <= n:
        raise ValueError(f"rollaxis requires start in [{-n}, {n}], got {start}")
    start = start % (n + 1) if start < 0 else start
    if start > axis:
        start -= 1
    return _sh.moveaxis(a, axis, start)


def resize(a: Any, new_shape: Any) -> Any:
    """a's elements repeated in order to fill new_shape."""
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    flat = _sh.ravel(asarray(a))
    size = math.prod(new_shape)
    if flat.shape[0] == 0 or size == 0:
        return _cr.zeros(new_shape, flat.dtype)
    repeats = -(-size // flat.shape[0])
    return _sh.reshape(_sh.tile(flat, repeats)[:size], new_shape)


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    shape = arr.shape
    return _sh.tril_indices(shape[-2], k, shape[-1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    shape = arr.shape
    return _sh.triu_indices(shape[-2], k, shape[-1])


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    shape = asarray(arr).shape
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from requires an array of equal dims (at least 2), "
                         f"got shape {shape}")
    return _sh.diag_indices(shape[0], len(shape))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """a with its main diagonal set to val (repeated as needed; a tall matrix's diagonal
    starts again below the square with `wrap`, as NumPy's). Arrays are immutable, so
    inplace=False is required, as in JAX."""
    if inplace:
        raise NotImplementedError("fill_diagonal cannot write in place (arrays are "
                                  "immutable): pass inplace=False and use the result")
    a = asarray(a)
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise ValueError(f"fill_diagonal requires a matrix or an array of equal dims, got "
                         f"shape {a.shape}")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else a.shape[1] * a.shape[1]
    else:
        step, end = 1 + int(np.cumprod(a.shape[:-1]).sum()), a.size
    flat = np.arange(0, builtins.min(end, a.size), step)
    values = resize(asarray(val).astype(a.dtype), (len(flat),))
    return _sh.reshape(_sh.ravel(a).at[asarray(flat)].set(values), a.shape)


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinates of flat indices in `shape` (negative ones counted from the end, out
    of range ones clipped, as JAX's)."""
    indices = asarray(indices)
    shape = tuple(int(d) for d in shape)
    size = math.prod(shape)
    flat = _uf.clip(_rd.where(indices < 0, indices + size, indices), 0, builtins.max(
        size - 1, 0))
    out, stride = [], size
    for d in shape:
        stride //= d
        out.append((flat // stride) % d)
    return tuple(out)


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:
    """Flat indices of coordinates in `dims`: mode "clip" clips each, "wrap" wraps it;
    "raise" needs concrete coordinates (as JAX's)."""
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index requires one index per dim ({len(dims)}), got "
                         f"{len(multi_index)}")
    if order not in "CF" or len(order) != 1:
        raise ValueError(f"ravel_multi_index requires order 'C' or 'F', got {order!r}")
    coords = [asarray(i) for i in multi_index]
    if mode == "raise":
        for c, d in zip(coords, dims, strict=True):
            host = np.asarray(c)
            if host.size and (host.min() < 0 or host.max() >= d):
                raise ValueError(f"ravel_multi_index: an index is out of range for a dim of "
                                 f"{d} (pass mode='clip' or 'wrap')")
    elif mode == "clip":
        coords = [_uf.clip(c, 0, d - 1) for c, d in zip(coords, dims, strict=True)]
    elif mode == "wrap":
        coords = [c % d for c, d in zip(coords, dims, strict=True)]
    else:
        raise ValueError(f"ravel_multi_index requires mode 'raise', 'clip' or 'wrap', got "
                         f"{mode!r}")
    order_dims = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    out, stride = 0, 1
    for k in order_dims:
        out = out + coords[k] * stride
        stride *= dims[k]
    out = asarray(out)
    return out.astype(dtype) if dtype is not None else out


def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix times vector over the last axes, batched: (..., m, n) by (..., n)."""
    return _ct.matmul(x1, _sh.expand_dims(asarray(x2), -1))[..., 0]


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Conjugated vector times matrix, batched: (..., m) by (..., m, n)."""
    return _ct.matmul(_sh.expand_dims(_uf.conjugate(asarray(x1)), -2), x2)[..., 0, :]


__all__ = ["append", "array_equiv", "diag_indices_from", "diagflat", "digitize", "ediff1d",
           "euler_gamma", "fabs", "fill_diagonal", "isin", "isscalar", "iterable", "matvec",
           "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanprod", "ravel_multi_index",
           "resize", "rollaxis", "rot90", "trapezoid", "tril_indices_from", "triu_indices_from",
           "unravel_index", "unwrap", "vecmat"]
