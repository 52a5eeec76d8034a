"""The rest of `jax.numpy`'s ufuncs, each one op row or a composition of rows written as
JAX writes it, so results (and corner cases like x // 0) agree with JAX.

Compositions run eagerly as one compiled module (`_fused`), never op by op.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ember.dialect import ops
from ember.dialect.types import kind

from .. import numpy as _np
from .._src import dtypes as _dt
from .._src.core import bind

_fused, _nary, _unary_float, _promoted = _np._fused, _np._nary, _np._unary_float, _np._promoted
asarray, where = _np.asarray, _np._where_values


def _float_unary(op):
    def fn(x: Any) -> Any:
        return _unary_float(op)(x)

    fn.__name__ = op.name.removeprefix("ember.")
    return fn


exp2 = _float_unary(ops.EXP2)
expm1 = _float_unary(ops.EXPM1)
log1p = _float_unary(ops.LOG1P)
log2 = _float_unary(ops.LOG2)
tan = _float_unary(ops.TAN)
arcsin = _float_unary(ops.ASIN)
arccos = _float_unary(ops.ACOS)
arctan = _float_unary(ops.ATAN)
sinh = _float_unary(ops.SINH)
cosh = _float_unary(ops.COSH)
arcsinh = _float_unary(ops.ASINH)
arccosh = _float_unary(ops.ACOSH)
arctanh = _float_unary(ops.ATANH)
cbrt = _float_unary(ops.CBRT)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def _float_binary(op):
    def fn(x: Any, y: Any) -> Any:
        return _nary(op, True)(x, y)

    fn.__name__ = op.name.removeprefix("ember.")
    return fn


arctan2 = atan2 = _float_binary(ops.ATAN2)
copysign = _float_binary(ops.COPYSIGN)


@_fused
def log10(x: Any) -> Any:
    return _np.multiply(log2(x), float(np.log10(2.0)))  # a weak scalar: keeps float16


def _rounding(op):
    """floor/ceil/trunc/rint: integers and booleans come back unchanged, as in JAX."""

    def fn(x: Any) -> Any:
        x = asarray(x)
        return x if kind(x.dtype) in "biu" else _unary_float(op)(x)

    fn.__name__ = op.name.removeprefix("ember.")
    return fn


floor, ceil, trunc = (_rounding(o) for o in (ops.FLOOR, ops.CEIL, ops.TRUNC))
fix = trunc


def rint(x: Any) -> Any:
    """Half to even; integers become floats (as in NumPy and JAX)."""
    return _unary_float(ops.ROUND)(x)


def round(a: Any, decimals: int = 0) -> Any:  # noqa: A001
    """Half to even, as np.round; `decimals` scales by 10**decimals first."""
    a = asarray(a)
    if a.dtype == np.bool_:
        raise TypeError("round requires a numeric array, got bool; convert with "
                        ".astype(int) first")
    if kind(a.dtype) in "iu" and decimals >= 0:
        return a
    if decimals == 0:
        return rint(a)
    return _round_scaled(int(decimals))(a)


@functools.cache
def _round_scaled(decimals: int):
    @_fused
    def impl(a: Any) -> Any:
        if kind(a.dtype) in "biu":  # negative decimals on integers: round in float, cast back
            f = _np.astype(a, _dt.default_float())
            return _np.astype(_np.multiply(rint(_np.true_divide(f, 10.0 ** -decimals)),
                                           10.0 ** -decimals), a.dtype)
        factor = 10.0 ** decimals
        return _np.true_divide(rint(_np.multiply(a, factor)), factor)

    return impl


around = round


# ----------------------------------------------------------------------------- predicates

def isfinite(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) != "f":
        return _np.full(x.shape, True, np.bool_)
    return bind(ops.IS_FINITE, x)


def isnan(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) != "f":
        return _np.full(x.shape, False, np.bool_)
    return _np.not_equal(x, x)


@_fused
def isinf(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) != "f":
        return _np.full(x.shape, False, np.bool_)
    return _np.equal(_np.absolute(x), np.inf)


def isposinf(x: Any) -> Any:
    return _np.logical_and(isinf(x), _np.greater(x, 0))


def isneginf(x: Any) -> Any:
    return _np.logical_and(isinf(x), _np.less(x, 0))


@_fused
def signbit(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) != "f":
        return _np.less(x, 0)
    return _np.less(copysign(1.0, x), 0)


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """nan -> `nan`, +-inf -> the dtype's largest finite values (or the given ones)."""
    x = asarray(x)
    if kind(x.dtype) != "f":
        return x
    info = np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    return _nan_to_num(x, np.asarray(nan, x.dtype), np.asarray(posinf, x.dtype),
                       np.asarray(neginf, x.dtype))


@_fused
def _nan_to_num(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    out = where(isnan(x), nan, x)
    out = where(_np.equal(x, np.inf), posinf, out)
    return where(_np.equal(x, -np.inf), neginf, out)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    a, b = _promoted(a, b)
    if kind(a.dtype) != "f":
        return _np.equal(a, b)
    close = _np.less_equal(_np.absolute(_np.subtract(a, b)),
                           _np.add(atol, _np.multiply(rtol, _np.absolute(b))))
    out = _np.logical_or(_np.equal(a, b), _np.logical_and(close, isfinite(b)))
    return _np.logical_or(out, _np.logical_and(isnan(a), isnan(b))) if equal_nan else out


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Any:
    return _np.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = _np.equal(a1, a2)
    if equal_nan:
        eq = _np.logical_or(eq, _np.logical_and(isnan(a1), isnan(a2)))
    return _np.all(eq)


# ----------------------------------------------------------------------------- integer ops

def _integers(name: str, *xs: Any) -> None:
    for x in xs:
        dtype = _dt.dtype_and_weak(x)[0] if not hasattr(x, "dtype") else x.dtype
        if kind(np.dtype(dtype)) not in "bui":
            raise TypeError(f"{name} requires integer or boolean arguments, got {dtype}; "
                            f"convert with .astype(int) first")


def bitwise_xor(x: Any, y: Any) -> Any:
    _integers("bitwise_xor", x, y)
    return _nary(ops.XOR)(x, y)


def bitwise_not(x: Any) -> Any:
    return _np.invert(x)


def logical_xor(x: Any, y: Any) -> Any:
    return bind(ops.XOR, *_promoted(_np._bool_arg(x), _np._bool_arg(y)))


def _shift(name: str, op):
    def fn(x: Any, y: Any) -> Any:
        _integers(name, x, y)
        if kind(_dt.promote(_dt.dtype_and_weak(x), _dt.dtype_and_weak(y))[0]) == "b":
            raise TypeError(f"{name} requires integer arguments, got booleans")
        return _nary(op)(x, y)

    fn.__name__ = name
    return fn


left_shift = bitwise_left_shift = _shift("left_shift", ops.SHIFT_LEFT)
right_shift = bitwise_right_shift = _shift("right_shift", ops.SHIFT_RIGHT)


# ----------------------------------------------------------------------------- division

def _numeric(name: str, x: Any, y: Any) -> list[Any]:
    x, y = _promoted(x, y, name=name)
    if x.dtype == np.bool_:
        x, y = (_np.astype(v, np.int8) for v in (x, y))
    return [x, y]


@_fused
def floor_divide(x: Any, y: Any) -> Any:
    x, y = _numeric("floor_divide", x, y)
    k = kind(x.dtype)
    if k == "u":
        return bind(ops.DIV, x, y)
    if k == "i":
        quotient = bind(ops.DIV, x, y)
        fix_down = _np.logical_and(_np.not_equal(_np.sign(x), _np.sign(y)),
                                   _np.not_equal(bind(ops.REM, x, y), 0))
        return where(fix_down, _np.subtract(quotient, 1), quotient)
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    """CPython's float_divmod (floatobject.c), as JAX has it."""
    mod = bind(ops.REM, x, y)
    corrected = where(_np.equal(y, 0), x, _np.subtract(x, mod))
    div = bind(ops.DIV, corrected, y)
    ind = _np.logical_and(_np.not_equal(mod, 0), _np.not_equal(_np.sign(y), _np.sign(mod)))
    mod = where(ind, _np.add(mod, y), mod)
    div = where(ind, _np.subtract(div, 1.0), div)
    return rint(div), mod


@_fused
def remainder(x: Any, y: Any) -> Any:
    x, y = _numeric("remainder", x, y)
    if kind(y.dtype) in "iu":
        y = where(_np.equal(y, 0), np.ones((), y.dtype), y)
    trunc_mod = bind(ops.REM, x, y)
    do_plus = _np.logical_and(_np.not_equal(_np.less(trunc_mod, 0), _np.less(y, 0)),
                              _np.not_equal(trunc_mod, 0))
    return where(do_plus, _np.add(trunc_mod, y), trunc_mod)


mod = remainder


@_fused
def fmod(x: Any, y: Any) -> Any:
    x, y = _numeric("fmod", x, y)
    if kind(y.dtype) in "iu":  # NumPy and JAX: fmod(x, 0) is 0 for integers
        safe = where(_np.equal(y, 0), np.ones((), y.dtype), y)
        return where(_np.equal(y, 0), np.zeros((), x.dtype), bind(ops.REM, x, safe))
    return bind(ops.REM, x, y)


def divmod(x: Any, y: Any) -> tuple[Any, Any]:  # noqa: A001
    return floor_divide(x, y), remainder(x, y)


@_fused
def reciprocal(x: Any) -> Any:
    return _np.true_divide(1, x) if kind(asarray(x).dtype) == "f" else \
        floor_divide(1, x)


@_fused
def hypot(x: Any, y: Any) -> Any:
    """sqrt(x^2 + y^2) without overflow: max * sqrt(1 + (min/max)^2)."""
    x, y = (_np.absolute(v) for v in _promoted(x, y, to_float=True))
    big, small = _np.maximum(x, y), _np.minimum(x, y)
    safe = where(_np.equal(big, 0), 1.0, big)
    ratio = _np.true_divide(small, safe)
    out = _np.multiply(big, _np.sqrt(_np.add(1.0, _np.multiply(ratio, ratio))))
    return where(_np.logical_or(isinf(x), isinf(y)), np.inf, out)  # hypot(inf, nan) = inf


def deg2rad(x: Any) -> Any:
    return _np.multiply(_promoted(x, to_float=True)[0], np.pi / 180)


def rad2deg(x: Any) -> Any:
    return _np.multiply(_promoted(x, to_float=True)[0], 180 / np.pi)


radians, degrees = deg2rad, rad2deg


@_fused
def logaddexp(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y, to_float=True)
    amax = _np.maximum(x, y)
    delta = _np.subtract(x, y)
    return where(isnan(delta), _np.add(x, y),
                 _np.add(amax, log1p(_np.exp(_np.negative(_np.absolute(delta))))))


@_fused
def logaddexp2(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y, to_float=True)
    amax = _np.maximum(x, y)
    delta = _np.subtract(x, y)
    tail = _np.true_divide(log1p(exp2(_np.negative(_np.absolute(delta)))), float(np.log(2.0)))
    return where(isnan(delta), _np.add(x, y), _np.add(amax, tail))


@_fused
def fmax(x: Any, y: Any) -> Any:
    """The larger, ignoring a NaN (NumPy's fmax)."""
    x, y = _promoted(x, y)
    return where(isnan(y), x, where(isnan(x), y, _np.maximum(x, y)))


@_fused
def fmin(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y)
    return where(isnan(y), x, where(isnan(x), y, _np.minimum(x, y)))


def float_power(x: Any, y: Any) -> Any:
    dtype = _dt.canonicalize(np.float64)
    return _np.power(_np.astype(asarray(x), dtype), _np.astype(asarray(y), dtype))


def select(condlist: list, choicelist: list, default: Any = 0) -> Any:
    """The first choice whose condition holds, else `default` (as np.select)."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select requires as many conditions as choices, got "
                         f"{len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise ValueError("select requires at least one condition, got none")
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choicelist), strict=True):
        cond = asarray(cond)
        if cond.dtype != np.bool_:
            raise TypeError(f"select requires boolean conditions, got {cond.dtype}")
        out = where(cond, choice, out)
    return out


__all__ = [n for n in dir() if not n.startswith("_")
           and n not in ("annotations", "functools", "np", "Any", "ops", "kind", "bind",
                         "asarray", "where")]
