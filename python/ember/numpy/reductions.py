"""Reductions beyond sum/max/min/mean: prod, argmax/argmin, any/all, running reductions,
sorting, and the NaN-ignoring variants, with NumPy's NaN rules and JAX's result dtypes.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ember.dialect import ops
from ember.dialect.types import NARROW_FLOATS, Dim, kind, symbolic

from .._src import dtypes as _dt
from .._src.core import Tracer
from .._src.dispatch import bind, constant
from ..errors import ConcretizationTypeError
from . import shapes as _sh, ufuncs as _uf
from ._base import _eager_jit, _eager_with_statics, asarray, astype
from .shapes import reshape, stack
from .ufuncs import _where_values, isclose, isnan, multiply, sqrt, subtract, true_divide

_IMPORTED = set(globals())  # what this module defines is exported: the rest


def _axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{name} requires axis in [{-ndim}, {ndim}), got {a} for an "
                             f"array of rank {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name} requires distinct axes, got {axis}")
    return tuple(sorted(out))


def _keep(x: Any, reduced: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return reduced
    return reshape(reduced, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))


def _count(a: Any, axes: tuple[int, ...], dtype: np.dtype) -> Any:
    """How many elements `axes` of `a` hold, as a 0-d `dtype` array; from the dims
    themselves when some are symbolic (a shape-polymorphic kernel's trace: `types.Dim`)."""
    static = math.prod(a.shape[i] for i in axes if not isinstance(a.shape[i], Dim))
    count = constant(np.asarray(static, dtype))
    for i in axes:
        if isinstance(a.shape[i], Dim):
            size = bind(ops.DIMENSION_SIZE, a, dimension=i, dtype=_dt.default_int())
            count = multiply(count, _to(size, dtype))
    return count


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    k = kind(dtype)
    if k in "bi" and dtype.itemsize < _dt.default_int().itemsize:
        return _dt.default_int()
    if k == "u" and dtype.itemsize < _dt.default_int().itemsize:
        return _dt.canonicalize(np.uint64)
    return dtype


def _upcast(dtype: np.dtype) -> np.dtype:
    """The dtype a mean or variance of `dtype` is computed in, as JAX's: float16 and bfloat16
    in float32, rounded once at the end. (Their sums and products accumulate in float32 in
    the lowering, as products do.)"""
    return np.dtype(np.float32) if dtype in NARROW_FLOATS else dtype


@_eager_with_statics
def sum(a, axis=None, dtype=None, keepdims: bool = False):  # noqa: A001
    a = asarray(a)
    axes = _axes("sum", axis, a.ndim)
    target = _dt.canonicalize(dtype) if dtype is not None else _sum_dtype(a.dtype)
    a = a if a.dtype == target else bind(ops.CONVERT, a, dtype=target)
    return _keep(a, bind(ops.REDUCE_SUM, a, axes=axes), axes, keepdims)


def _extremum(name: str, op):
    def reduce(a, axis=None, keepdims: bool = False):
        a = asarray(a)
        axes = _axes(name, axis, a.ndim)
        if builtins.any(a.shape[i] == 0 for i in axes):
            raise ValueError(f"{name} requires a non-empty reduced axis (zero-size array to "
                             f"reduction operation {name} which has no identity), got shape "
                             f"{a.shape} with axis={axis}")
        if kind(a.dtype) == "c":
            return _keep(a, _complex_extremum(a, axes, op), axes, keepdims)
        return _keep(a, bind(op, a, axes=axes), axes, keepdims)

    reduce.__name__ = reduce.__qualname__ = name
    return _eager_with_statics(reduce)


def _complex_extremum(a: Any, axes: tuple[int, ...], op: Any) -> Any:
    """The extremum of complex numbers in lexicographic order (real part, then imaginary
    part), as XLA orders them for JAX."""
    re, im = _uf.real(a), _uf.imag(a)
    best_re = bind(op, re, axes=axes)
    kept = tuple(d for d in range(a.ndim) if d not in axes)
    spread = bind(ops.BROADCAST_IN_DIM, best_re, shape=a.shape, broadcast_dimensions=kept)
    worst = -np.inf if op is ops.REDUCE_MAX else np.inf
    best_im = bind(op, where(_uf.equal(re, spread), im, constant(np.asarray(worst, re.dtype))),
                   axes=axes)
    return bind(ops.COMPLEX, best_re, best_im)


max = _extremum("max", ops.REDUCE_MAX)  # noqa: A001
min = _extremum("min", ops.REDUCE_MIN)  # noqa: A001
amax, amin = max, min


@_eager_with_statics
def mean(a, axis=None, dtype=None, keepdims: bool = False):
    a = asarray(a)
    axes = _axes("mean", axis, a.ndim)
    target = _dt.canonicalize(dtype) if dtype is not None else (
        a.dtype if kind(a.dtype) in "fc" else _dt.default_float())
    wide = _upcast(target) if dtype is None else target
    total = sum(astype(a, wide), axis=axes, keepdims=keepdims)
    if symbolic(a.shape):  # no symbolic dim is 0
        return _to(true_divide(total, _count(a, axes, wide)), target)
    count = math.prod(a.shape[i] for i in axes)
    return _to(true_divide(total, np.asarray(count, wide) if count else np.asarray(np.nan, wide)),
               target)


@_eager_with_statics
def var(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False, *,
        correction: int | float | None = None):
    """Mean squared deviation (two passes, as NumPy: no cancellation from E[x^2] - E[x]^2).
    `correction` is the array API's name for `ddof`."""
    ddof = _correction("var", ddof, correction)
    a = asarray(a)
    narrow = _dt.canonicalize(dtype) if dtype is not None else a.dtype
    if _upcast(narrow) != narrow:  # computed in float32, as JAX's
        return _to(var(_to(a, _upcast(narrow)), axis=axis, ddof=ddof, keepdims=keepdims),
                   narrow)
    axes = _axes("var", axis, a.ndim)
    centered = subtract(a, mean(a, axis=axes, dtype=dtype, keepdims=True))
    if kind(centered.dtype) == "c":  # |x - mean|^2: a real variance, as NumPy's and JAX's
        re, im = _uf.real(centered), _uf.imag(centered)
        squares = sum(_uf.add(multiply(re, re), multiply(im, im)), axis=axes,
                      keepdims=keepdims)
    else:
        squares = sum(multiply(centered, centered), axis=axes, keepdims=keepdims)
    if symbolic(a.shape):
        count = subtract(_count(a, axes, squares.dtype), ddof)
        return true_divide(squares, _where_values(count > 0, count, np.nan))
    count = math.prod(a.shape[i] for i in axes) - ddof
    return true_divide(squares, np.asarray(count if count > 0 else np.nan, squares.dtype))


@_eager_with_statics
def std(a, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False, *,
        correction: int | float | None = None):
    ddof = _correction("std", ddof, correction)
    return sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _correction(name: str, ddof: Any, correction: Any) -> Any:
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name} requires ddof or correction, not both (got {ddof} and "
                         f"{correction})")
    return correction


def where(condition, x=None, y=None):
    """where(c, x, y): elementwise choice. where(c) is nonzero(c): concrete input only."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where requires both x and y, or neither; got only one")
    return _where_values(condition, x, y)


def nonzero(a) -> tuple[Any, ...]:
    """Indices of the non-zero elements. Their count sets the shape, so `a` must be
    concrete: under jit this raises ConcretizationTypeError."""
    if isinstance(a, Tracer):
        raise ConcretizationTypeError(
            f"nonzero (and one-argument where) requires a concrete array (the count of "
            f"non-zero elements sets the result shape), got a traced {a.aval.str_short()}. "
            f"Use the three-argument where(c, x, y), or compute it outside jit.")
    return tuple(constant(i.astype(_dt.default_int())) for i in np.nonzero(np.asarray(a)))


def argwhere(a) -> Any:
    return stack(nonzero(a), axis=-1) if np.ndim(a) else constant(
        np.zeros((int(bool(np.asarray(a))), 0), _dt.default_int()))


def flatnonzero(a) -> Any:
    return nonzero(np.ravel(np.asarray(a)) if not isinstance(a, Tracer) else a)[0]


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Any:
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = _uf.equal(a1, a2)
    if equal_nan:
        eq = _uf.logical_or(eq, _uf.logical_and(isnan(a1), isnan(a2)))
    return all(eq)





def _to(a: Any, dtype: np.dtype) -> Any:
    return a if a.dtype == dtype else bind(ops.CONVERT, a, dtype=dtype)


@_eager_with_statics
def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    axes = _axes("prod", axis, a.ndim)
    a = _to(a, _dt.canonicalize(dtype) if dtype is not None else _sum_dtype(a.dtype))
    return _keep(a, bind(ops.REDUCE_PROD, a, axes=axes), axes, keepdims)


def _truth(a: Any) -> Any:
    a = asarray(a)
    return a if a.dtype == np.bool_ else _uf.not_equal(a, 0)


@_eager_with_statics
def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    a = _truth(a)
    axes = _axes("any", axis, a.ndim)
    return _keep(a, bind(ops.REDUCE_MAX, a, axes=axes), axes, keepdims)


@_eager_with_statics
def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    a = _truth(a)
    axes = _axes("all", axis, a.ndim)
    return _keep(a, bind(ops.REDUCE_MIN, a, axes=axes), axes, keepdims)


@_eager_with_statics
def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return sum(_truth(a), axis=axis, keepdims=keepdims)


def _flat_or(a: Any, axis: Any, name: str) -> tuple[Any, int]:
    a = asarray(a)
    if axis is None:
        return reshape(a, (-1,)), 0
    return a, _axes(name, axis, a.ndim)[0]


def _iota(shape: tuple[int, ...], axis: int, dtype: np.dtype | None = None) -> Any:
    return bind(ops.IOTA, dimension=axis, shape=tuple(shape), dtype=dtype or _dt.default_int())


def _arg_extremum(name: str, extremum):
    def reduce(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        """The first index of the extremum; of the first NaN if there is one (NumPy)."""
        x, ax = _flat_or(a, axis, name)
        if x.shape[ax] == 0:
            raise ValueError(f"{name} requires a non-empty axis (attempt to get {name} of an "
                             f"empty sequence), got shape {x.shape} with axis={axis}")
        best = extremum(x, axis=ax, keepdims=True)
        hit = _uf.equal(x, best)
        if kind(x.dtype) == "f":
            hit = where(_uf.isnan(best), _uf.isnan(x), hit)
        past_the_end = _count(x, (ax,), _dt.default_int()) if symbolic(x.shape) else x.shape[ax]
        index = where(hit, _iota(x.shape, ax), past_the_end)
        out = bind(ops.REDUCE_MIN, index, axes=(ax,))
        if not keepdims:
            return out
        if axis is None:
            return reshape(out, (1,) * asarray(a).ndim)
        return reshape(out, tuple(1 if i == ax else d for i, d in enumerate(x.shape)))

    reduce.__name__ = reduce.__qualname__ = name
    return _eager_with_statics(reduce)


argmax = _arg_extremum("argmax", max)
argmin = _arg_extremum("argmin", min)


@_eager_with_statics
def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _uf.subtract(max(a, axis=axis, keepdims=keepdims),
                        min(a, axis=axis, keepdims=keepdims))


# ----------------------------------------------------------------------------- running

def _cumulative(name: str, combiner: str):
    def run(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        x, ax = _flat_or(a, axis, name)
        if dtype is not None:
            target = _dt.canonicalize(dtype)
        elif combiner in ("sum", "prod") and x.dtype == np.bool_:
            target = _dt.default_int()  # JAX keeps other dtypes (int8 stays int8)
        else:
            target = x.dtype
        x = _to(x, target)
        if x.dtype == np.bool_:  # scanned as integers (IREE cannot scan i1)
            scanned = bind(ops.CUMULATIVE, _to(x, np.dtype(np.int8)), axis=ax,
                           combiner=combiner)
            return _to(scanned, np.dtype(np.bool_))
        return bind(ops.CUMULATIVE, x, axis=ax, combiner=combiner)

    run.__name__ = run.__qualname__ = name
    return _eager_with_statics(run)


cumsum = _cumulative("cumsum", "sum")
cumprod = _cumulative("cumprod", "prod")
def _cumulative_api(name: str, scan: Any, promote: bool):
    def run(x: Any, /, *, axis: int | None = None, dtype: Any = None,
            include_initial: bool = False) -> Any:
        x = asarray(x)
        if axis is None:
            if x.ndim != 1:
                raise ValueError(f"{name} requires axis for arrays of {x.ndim} dimensions "
                                 f"(axis=None is for 1-d arrays)")
            axis = 0
        if dtype is None and promote:
            dtype = _sum_dtype(x.dtype)
        out = scan(x, axis=axis, dtype=dtype)
        if not include_initial:
            return out
        ax = _axes(name, axis, x.ndim)[0]
        initial = np.full(out.shape[:ax] + (1,) + out.shape[ax + 1:],
                          0 if name == "cumulative_sum" else 1, out.dtype)
        return _sh.concatenate([constant(initial), out], axis=ax)

    run.__name__ = run.__qualname__ = name
    return _eager_with_statics(run)


cumulative_sum = _cumulative_api("cumulative_sum", cumsum, promote=True)  # array API
cumulative_prod = _cumulative_api("cumulative_prod", cumprod, promote=False)
cummax = _cumulative("cummax", "max")
cummin = _cumulative("cummin", "min")


# ----------------------------------------------------------------------------- sorting

def _sort_args(name: str, a: Any, axis: int | None, kind_: Any, order: Any) -> tuple[Any, int]:
    if kind_ is not None or order is not None:
        raise TypeError(f"{name} does not support 'kind' or 'order' (as in JAX); use "
                        f"stable=True, the default")
    return _flat_or(a, axis, name)


@_eager_with_statics
def sort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
         stable: bool = True, descending: bool = False) -> Any:
    """Ascending, NaN last (NumPy's order); `descending` reverses it."""
    x, ax = _sort_args("sort", a, axis, kind, order)
    out = (bind(ops.SORT, x, x, dimension=ax) if x.dtype.kind != "c" else
           _sh.take_along_axis(x, _complex_order(x, ax), ax))
    return bind(ops.REV, out, dimensions=(ax,)) if descending else out


@_eager_with_statics
def argsort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Any:
    """Indices of a stable sort; ties keep their order, descending too (as in JAX)."""
    x, ax = _sort_args("argsort", a, axis, kind, order)
    index_dtype = _dt.canonicalize(dtype) if dtype is not None else _dt.default_int()
    iota = _iota(x.shape, ax, index_dtype)
    if x.dtype.kind == "c":
        order = _complex_order(x, ax, index_dtype)
        if not descending:
            return order
        ranks = _complex_order(bind(ops.REV, x, dimensions=(ax,)), ax, index_dtype)
        last = np.asarray(x.shape[ax] - 1, index_dtype)
        return bind(ops.REV, _uf.subtract(last, ranks), dimensions=(ax,))
    if not descending:
        return bind(ops.SORT, x, iota, dimension=ax)
    # A stable ascending sort of x reversed puts ties in falling index order; reversing its
    # result makes the keys descend with ties in rising index order again.
    last = np.asarray(x.shape[ax] - 1, index_dtype)
    ranks = bind(ops.SORT, bind(ops.REV, x, dimensions=(ax,)), iota, dimension=ax)
    return bind(ops.REV, _uf.subtract(last, ranks), dimensions=(ax,))


def _complex_order(x: Any, ax: int, dtype: Any = None) -> Any:
    """The stable sorting order of complex numbers, lexicographic (real part, then
    imaginary part) as JAX sorts them: a stable sort by the imaginary parts, then by the
    real parts."""
    by_imag = bind(ops.SORT, _uf.imag(x), _iota(x.shape, ax, dtype), dimension=ax)
    real = _sh.take_along_axis(_uf.real(x), by_imag, ax)
    return bind(ops.SORT, real, by_imag, dimension=ax)


def _kth(name: str, a: Any, kth: int, axis: int) -> tuple[Any, int, int]:
    a = asarray(a)
    ax = _axes(name, axis, a.ndim)[0]
    n = a.shape[ax]
    if not isinstance(kth, (int, np.integer)) or not -n <= kth < n:
        raise ValueError(f"{name} requires an integer kth in [-{n}, {n}) for axis {axis} of "
                         f"size {n}, got {kth!r}")
    return a, ax, int(kth) % n


def _split(a: Any, ax: int, at: int) -> tuple[Any, Any]:
    n = a.shape[ax]
    idx = [slice(None)] * a.ndim
    return a[tuple(idx[:ax] + [slice(0, at)])], a[tuple(idx[:ax] + [slice(at, n)])]


@_eager_with_statics
def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """The kth smallest at position kth, the smaller ones before it (ascending), the larger
    after it (descending): JAX's layout (NumPy leaves both sides in no particular order)."""
    a, ax, k = _kth("partition", a, kth, axis)
    bottom, top = _split(sort(a, axis=ax), ax, k + 1)
    return _sh.concatenate([bottom, _sh.flip(top, ax)], axis=ax)


@_eager_with_statics
def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """Indices that partition `a`: those of the kth + 1 smallest (ascending, ties by index),
    then the others in index order, as JAX returns them."""
    a, ax, k = _kth("argpartition", a, kth, axis)
    bottom, top = _split(argsort(a, axis=ax), ax, k + 1)
    return _sh.concatenate([bottom, sort(top, axis=ax)], axis=ax)


@_eager_with_statics
def _sorted_along(name: str, a: Any, axis: Any) -> tuple[Any, tuple[int, ...]]:
    """a's values over `axis` sorted along a last axis of their own (float), and the axes."""
    axes = _axes(name, axis, a.ndim)
    kept = [i for i in range(a.ndim) if i not in axes]
    x = reshape(_sh.transpose(a, kept + list(axes)),
                tuple(a.shape[i] for i in kept) + (math.prod(a.shape[i] for i in axes),))
    x = _to(x, x.dtype if kind(x.dtype) == "f" else _dt.default_float())
    if x.shape[-1] == 0:
        raise ValueError(f"{name} requires a non-empty reduction, got shape {a.shape}")
    return sort(x, axis=-1), axes


@_eager_jit("axis", "keepdims")
def median(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The middle of the sorted values (mean of the two middles); NaN if any is NaN."""
    a = asarray(a)
    s, axes = _sorted_along("median", a, axis)
    n = s.shape[-1]
    lo, hi = (n - 1) // 2, n // 2
    middle = _uf.multiply(_uf.add(s[..., lo], s[..., hi]), 0.5)
    out = where(_uf.isnan(s[..., n - 1]), np.nan, middle)
    return _keep(a, out, axes, keepdims)


@_eager_jit("q", "axis", "method", "keepdims")
def quantile(a: Any, q: Any, axis: Any = None, method: str = "linear",
             keepdims: bool = False) -> Any:
    """The q-th quantiles (q in [0, 1], a number or a static sequence) by linear
    interpolation between the sorted values (NumPy's default method); NaN if any is NaN.
    The quantiles' axis comes first, as in NumPy."""
    if method != "linear":
        raise NotImplementedError(f"quantile supports method='linear', got {method!r}")
    qs = np.asarray(q, np.float64)
    if qs.ndim > 1 or ((qs < 0) | (qs > 1)).any():
        raise ValueError(f"quantile requires q in [0, 1], a number or a 1-d sequence, got {q}")
    a = asarray(a)
    s, axes = _sorted_along("quantile", a, axis)
    n = s.shape[-1]
    nan = _uf.isnan(s[..., n - 1])
    outs = []
    for p in np.atleast_1d(qs):
        pos = p * (n - 1)
        lo = int(np.floor(pos))
        hi, frac = builtins.min(lo + 1, n - 1), float(pos - lo)
        value = _uf.add(s[..., lo], _uf.multiply(_uf.subtract(s[..., hi], s[..., lo]), frac))
        outs.append(_keep(a, where(nan, np.nan, value), axes, keepdims))
    return outs[0] if qs.ndim == 0 else stack(outs)


def percentile(a: Any, q: Any, axis: Any = None, method: str = "linear",
               keepdims: bool = False) -> Any:
    """quantile with q in percent."""
    return quantile(a, np.asarray(q, np.float64) / 100, axis, method, keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The mean, weighted by `weights` (a's shape, or 1-d along a single axis)."""
    a = asarray(a)
    if weights is None:
        out = mean(a, axis=axis, keepdims=keepdims)
        count = _uf.multiply(_sh.full_like(out, 1), a.size // builtins.max(out.size, 1))
        return (out, count.astype(out.dtype)) if returned else out
    w = asarray(weights)
    if w.shape != a.shape:
        if axis is None or isinstance(axis, (tuple, list)) or w.ndim != 1 or \
                w.shape[0] != a.shape[axis]:
            raise ValueError(f"average requires weights of a's shape {tuple(a.shape)}, or "
                             f"1-d along one axis, got {tuple(w.shape)} for axis={axis!r}")
        shape = [1] * a.ndim
        shape[axis] = w.shape[0]
        w = _sh.broadcast_to(reshape(w, tuple(shape)), a.shape)
    total = sum(multiply(a, w), axis=axis, keepdims=keepdims)
    scale = sum(_sh.broadcast_to(w, a.shape), axis=axis, keepdims=keepdims)
    out = true_divide(total, scale)
    return (out, scale.astype(out.dtype)) if returned else out


@_eager_jit("rowvar", "bias", "ddof")
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None) -> Any:
    """The covariance matrix of the variables (rows of m, or columns when not rowvar)."""
    x = asarray(m)
    if x.ndim > 2:
        raise ValueError(f"cov requires m of rank <= 2, got shape {tuple(x.shape)}")
    x = reshape(x, (1, x.size)) if x.ndim < 2 else x
    if not rowvar and x.shape[0] != 1:
        x = _sh.transpose(x)
    if y is not None:
        y = asarray(y)
        y = reshape(y, (1, y.size)) if y.ndim < 2 else y
        if not rowvar and y.shape[0] != 1:
            y = _sh.transpose(y)
        x = _sh.concatenate([x, y], 0)
    x = _to(x, x.dtype if kind(x.dtype) == "f" else _dt.default_float())
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = subtract(x, mean(x, axis=1, keepdims=True))
    out = true_divide(sum(multiply(centered[:, None, :], centered[None, :, :]), axis=-1),
                      x.shape[1] - ddof)
    return reshape(out, ()) if out.shape == (1, 1) else out


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients, clipped to [-1, 1]."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return true_divide(c, c)
    d = sqrt(_sh.diagonal(c))
    return _uf.clip(true_divide(true_divide(c, d[:, None]), d[None, :]), -1, 1)


# ----------------------------------------------------------------------------- NaN-ignoring

@_eager_with_statics
def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    return sum(_uf.nan_to_num(a, posinf=np.inf, neginf=-np.inf) if kind(a.dtype) == "f"
                   else a, axis=axis, dtype=dtype, keepdims=keepdims)


def _nan_extremum(name: str, reduce, fill: float):
    def run(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        a = asarray(a)
        if kind(a.dtype) != "f":
            return reduce(a, axis=axis, keepdims=keepdims)
        out = reduce(where(_uf.isnan(a), fill, a), axis=axis, keepdims=keepdims)
        all_nan = all(_uf.isnan(a), axis=axis, keepdims=keepdims)
        return where(all_nan, np.nan, out)

    run.__name__ = run.__qualname__ = name
    return _eager_with_statics(run)


nanmax = _nan_extremum("nanmax", max, -np.inf)
nanmin = _nan_extremum("nanmin", min, np.inf)


@_eager_with_statics
def nanmean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    count = sum(_uf.logical_not(_uf.isnan(a)), axis=axis, keepdims=keepdims)
    total = nansum(a, axis=axis, dtype=dtype, keepdims=keepdims)
    return _uf.true_divide(total, count)


@_eager_with_statics
def nanvar(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Any:
    a = asarray(a)
    a = _to(a, a.dtype if kind(a.dtype) == "f" else _dt.default_float())
    valid = _uf.logical_not(_uf.isnan(a))
    count = sum(valid, axis=axis, keepdims=True)
    centered = where(valid, subtract(a, true_divide(nansum(a, axis=axis, keepdims=True),
                                                    count)), 0)
    total = sum(multiply(centered, centered), axis=axis, dtype=dtype, keepdims=keepdims)
    count = sum(valid, axis=axis, keepdims=keepdims)
    return true_divide(total, _uf.maximum(subtract(count, ddof), 0))


@_eager_with_statics
def nanstd(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Any:
    return sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


__all__ = [n for n in globals() if n not in _IMPORTED and not n.startswith("_")]
