"""The rest of `jax.numpy`'s ufuncs, each one op row or a composition of rows written as
JAX writes it, so results (and corner cases like x // 0) agree with JAX.

Compositions run eagerly as one compiled module (`_eager_as_one_module`), never op by op.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ember.dialect import ops
from ember.dialect.types import kind

from .._src import dtypes as _dt
from .._src.dispatch import bind
from . import _base
from . import creation as _cr
from ._base import (
    _aval,
    _broadcast,
    _eager_as_one_module,
    _nary,
    _promoted,
    _shape_of,
    _unary_float,
    asarray,
)

_IMPORTED = set(globals())  # what this module defines is exported: the rest


def add(x, y): return _nary(ops.ADD)(x, y)
def subtract(x, y): return _nary(ops.SUB)(x, y)
def multiply(x, y): return _nary(ops.MUL)(x, y)
def true_divide(x, y): return _nary(ops.DIV, True)(x, y)
def power(x, y):
    """x ** y; a small Python int exponent is multiplications (JAX's integer_pow: exact
    for integers, and its derivative is a product, not a pow)."""
    if (type(y) is int and 0 <= y <= _MAX_INTEGER_POW and isinstance(x, _base._ARRAY_TYPES)
            and kind(x.dtype) in "fiuc"):
        return _integer_pow(y)(x)
    return _nary(ops.POW)(x, y)


_MAX_INTEGER_POW = 16


@functools.cache
def _integer_pow(n: int):
    def impl(x: Any) -> Any:
        result, base, k = None, x, n
        while k:  # exponentiation by squaring
            if k & 1:
                result = base if result is None else bind(ops.MUL, result, base)
            k >>= 1
            if k:
                base = bind(ops.MUL, base, base)
        return result if result is not None else _cr.full(x.shape, 1, x.dtype)

    impl.__name__ = impl.__qualname__ = f"integer_pow_{n}"
    return _eager_as_one_module(impl)
def maximum(x, y): return _extremum(ops.MAX)(x, y)
def minimum(x, y): return _extremum(ops.MIN)(x, y)
def exp(x): return _unary_float(ops.EXP)(x)
def log(x): return _unary_float(ops.LOG)(x)
def sqrt(x): return _unary_float(ops.SQRT)(x)
def tanh(x): return _unary_float(ops.TANH)(x)
def sin(x): return _unary_float(ops.SIN)(x)
def cos(x): return _unary_float(ops.COS)(x)
def negative(x): return _nary(ops.NEG)(x)
def absolute(x): return _nary(ops.ABS)(x)
def sign(x): return _nary(ops.SIGN)(x)
def positive(x): return asarray(x)
def square(x): return multiply(x, x)


divide = true_divide
abs = absolute


def _compare(direction: str):
    def compare(x, y):
        return bind(ops.COMPARE, *_promoted(x, y), direction=direction)

    return _eager_as_one_module(compare)


equal, not_equal = _compare("EQ"), _compare("NE")
less, less_equal = _compare("LT"), _compare("LE")
greater, greater_equal = _compare("GT"), _compare("GE")


def _bool_arg(x: Any) -> Any:
    x = asarray(x)
    return x if x.dtype == np.bool_ else not_equal(x, 0)


@functools.cache
def _extremum(op):
    """max/min; of complex numbers in lexicographic order (real part, then imaginary part),
    as XLA orders them for JAX."""
    def impl(x: Any, y: Any) -> Any:
        x, y = _promoted(x, y, name=op.name)
        if kind(x.dtype) != "c":
            return bind(op, x, y)
        direction = "GT" if op is ops.MAX else "LT"
        (rx, ix), (ry, iy) = ((bind(ops.REAL, v), bind(ops.IMAG, v)) for v in (x, y))
        first = bind(ops.OR, bind(ops.COMPARE, rx, ry, direction=direction), bind(
            ops.AND, bind(ops.COMPARE, rx, ry, direction="EQ"),
            bind(ops.COMPARE, ix, iy, direction=direction)))
        return bind(ops.SELECT, first, x, y)

    impl.__name__ = impl.__qualname__ = op.name.removeprefix("ember.")
    return _base._eager_as_one_module(impl)


def logical_and(x, y): return bind(ops.AND, *_promoted(_bool_arg(x), _bool_arg(y)))
def logical_or(x, y): return bind(ops.OR, *_promoted(_bool_arg(x), _bool_arg(y)))
def logical_not(x): return bind(ops.NOT, _bool_arg(x))


def _int_or_bool(name: str, *xs: Any) -> None:
    for x in xs:
        if kind(_aval(x).dtype) not in "bui":
            raise TypeError(f"{name} requires integer or boolean arguments, got "
                            f"{_aval(x).dtype}")


def bitwise_and(x, y):
    _int_or_bool("bitwise_and", x, y)
    return _nary(ops.AND)(x, y)


def bitwise_or(x, y):
    _int_or_bool("bitwise_or", x, y)
    return _nary(ops.OR)(x, y)


def invert(x):
    _int_or_bool("invert", x)
    return _nary(ops.NOT)(x)


@_eager_as_one_module
def _where_values(condition, x, y):
    shape = _shape_of(condition, x, y, name="where")
    x, y = _promoted(x, y)
    return bind(ops.SELECT, _broadcast(_bool_arg(condition), shape), _broadcast(x, shape),
                _broadcast(y, shape))


def clip(a, /, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002 - the API's names
    """`a` limited to [min, max] (either may be None; `a_min`/`a_max` are NumPy's older
    names for them, as JAX still takes), with JAX's promotion."""
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if a_min is None and a_max is None:
        raise ValueError("clip requires a_min or a_max (min or max), got neither")
    out = asarray(a)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out





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
_real_sinh = _float_unary(ops.SINH)
_real_cosh = _float_unary(ops.COSH)


def sinh(x: Any) -> Any:
    """sinh; of a complex z, -i sin(i z)."""
    x = asarray(x)
    return multiply(-1j, sin(multiply(1j, x))) if kind(x.dtype) == "c" else _real_sinh(x)


def cosh(x: Any) -> Any:
    """cosh; of a complex z, cos(i z)."""
    x = asarray(x)
    return cos(multiply(1j, x)) if kind(x.dtype) == "c" else _real_cosh(x)

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


@_eager_as_one_module
def log10(x: Any) -> Any:
    return multiply(log2(x), float(np.log10(2.0)))  # a weak scalar: keeps float16


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
    if kind(a.dtype) == "c":  # each part, as JAX
        return bind(ops.COMPLEX, round(real(a), decimals), round(imag(a), decimals))
    if decimals == 0:
        return rint(a)
    return _round_scaled(int(decimals))(a)


@functools.cache
def _round_scaled(decimals: int):
    @_eager_as_one_module
    def impl(a: Any) -> Any:
        if kind(a.dtype) in "biu":  # negative decimals on integers: round in float, cast back
            f = _base.astype(a, _dt.default_float())
            return _base.astype(multiply(rint(true_divide(f, 10.0 ** -decimals)),
                                           10.0 ** -decimals), a.dtype)
        factor = 10.0 ** decimals
        return true_divide(rint(multiply(a, factor)), factor)

    return impl


around = round


# ----------------------------------------------------------------------------- predicates

def isfinite(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) == "c":
        return logical_and(isfinite(real(x)), isfinite(imag(x)))
    if kind(x.dtype) != "f":
        return _cr.full(x.shape, True, np.bool_)
    return bind(ops.IS_FINITE, x)


def isnan(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) == "c":
        return logical_or(isnan(real(x)), isnan(imag(x)))
    if kind(x.dtype) != "f":
        return _cr.full(x.shape, False, np.bool_)
    return not_equal(x, x)


@_eager_as_one_module
def isinf(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) == "c":
        return logical_or(isinf(real(x)), isinf(imag(x)))
    if kind(x.dtype) != "f":
        return _cr.full(x.shape, False, np.bool_)
    return equal(absolute(x), np.inf)


def isposinf(x: Any) -> Any:
    return logical_and(isinf(x), greater(x, 0))


def isneginf(x: Any) -> Any:
    return logical_and(isinf(x), less(x, 0))


@_eager_as_one_module
def signbit(x: Any) -> Any:
    x = asarray(x)
    if kind(x.dtype) != "f":
        return less(x, 0)
    return less(copysign(1.0, x), 0)


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


@_eager_as_one_module
def _nan_to_num(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    out = _where_values(isnan(x), nan, x)
    out = _where_values(equal(x, np.inf), posinf, out)
    return _where_values(equal(x, -np.inf), neginf, out)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    a, b = _promoted(a, b)
    if kind(a.dtype) not in "fc":
        return equal(a, b)
    close = less_equal(absolute(subtract(a, b)),
                           add(atol, multiply(rtol, absolute(b))))
    out = logical_or(equal(a, b), logical_and(close, isfinite(b)))
    return logical_or(out, logical_and(isnan(a), isnan(b))) if equal_nan else out


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
    return invert(x)


def logical_xor(x: Any, y: Any) -> Any:
    return bind(ops.XOR, *_promoted(_bool_arg(x), _bool_arg(y)))


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
        x, y = (_base.astype(v, np.int8) for v in (x, y))
    return [x, y]


@_eager_as_one_module
def floor_divide(x: Any, y: Any) -> Any:
    x, y = _numeric("floor_divide", x, y)
    k = kind(x.dtype)
    if k == "u":
        return bind(ops.DIV, x, y)
    if k == "i":
        quotient = bind(ops.DIV, x, y)
        fix_down = logical_and(not_equal(sign(x), sign(y)),
                                   not_equal(bind(ops.REM, x, y), 0))
        return _where_values(fix_down, subtract(quotient, 1), quotient)
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    """CPython's float_divmod (floatobject.c), as JAX has it."""
    mod = bind(ops.REM, x, y)
    corrected = _where_values(equal(y, 0), x, subtract(x, mod))
    div = bind(ops.DIV, corrected, y)
    ind = logical_and(not_equal(mod, 0), not_equal(sign(y), sign(mod)))
    mod = _where_values(ind, add(mod, y), mod)
    div = _where_values(ind, subtract(div, 1.0), div)
    return rint(div), mod


@_eager_as_one_module
def remainder(x: Any, y: Any) -> Any:
    x, y = _numeric("remainder", x, y)
    if kind(y.dtype) in "iu":
        y = _where_values(equal(y, 0), np.ones((), y.dtype), y)
    trunc_mod = bind(ops.REM, x, y)
    do_plus = logical_and(not_equal(less(trunc_mod, 0), less(y, 0)),
                              not_equal(trunc_mod, 0))
    return _where_values(do_plus, add(trunc_mod, y), trunc_mod)


mod = remainder


@_eager_as_one_module
def fmod(x: Any, y: Any) -> Any:
    x, y = _numeric("fmod", x, y)
    if kind(y.dtype) in "iu":  # NumPy and JAX: fmod(x, 0) is 0 for integers
        safe = _where_values(equal(y, 0), np.ones((), y.dtype), y)
        return _where_values(equal(y, 0), np.zeros((), x.dtype), bind(ops.REM, x, safe))
    return bind(ops.REM, x, y)


def divmod(x: Any, y: Any) -> tuple[Any, Any]:  # noqa: A001
    return floor_divide(x, y), remainder(x, y)


@_eager_as_one_module
def reciprocal(x: Any) -> Any:
    return true_divide(1, x) if kind(asarray(x).dtype) in "fc" else \
        floor_divide(1, x)


@_eager_as_one_module
def hypot(x: Any, y: Any) -> Any:
    """sqrt(x^2 + y^2) without overflow: max * sqrt(1 + (min/max)^2)."""
    x, y = (absolute(v) for v in _promoted(x, y, to_float=True))
    big, small = maximum(x, y), minimum(x, y)
    safe = _where_values(equal(big, 0), 1.0, big)
    ratio = true_divide(small, safe)
    out = multiply(big, sqrt(add(1.0, multiply(ratio, ratio))))
    return _where_values(logical_or(isinf(x), isinf(y)), np.inf, out)  # hypot(inf, nan) = inf


def deg2rad(x: Any) -> Any:
    return multiply(_promoted(x, to_float=True)[0], np.pi / 180)


def rad2deg(x: Any) -> Any:
    return multiply(_promoted(x, to_float=True)[0], 180 / np.pi)


radians, degrees = deg2rad, rad2deg


@_eager_as_one_module
def logaddexp(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y, to_float=True)
    amax = maximum(x, y)
    delta = subtract(x, y)
    return _where_values(isnan(delta), add(x, y),
                 add(amax, log1p(exp(negative(absolute(delta))))))


@_eager_as_one_module
def logaddexp2(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y, to_float=True)
    amax = maximum(x, y)
    delta = subtract(x, y)
    tail = true_divide(log1p(exp2(negative(absolute(delta)))), float(np.log(2.0)))
    return _where_values(isnan(delta), add(x, y), add(amax, tail))


@_eager_as_one_module
def fmax(x: Any, y: Any) -> Any:
    """The larger, ignoring a NaN (NumPy's fmax)."""
    x, y = _promoted(x, y)
    return _where_values(isnan(y), x, _where_values(isnan(x), y, maximum(x, y)))


@_eager_as_one_module
def fmin(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y)
    return _where_values(isnan(y), x, _where_values(isnan(x), y, minimum(x, y)))


def float_power(x: Any, y: Any) -> Any:
    dtype = _dt.canonicalize(np.float64)
    return power(_base.astype(asarray(x), dtype), _base.astype(asarray(y), dtype))


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
        out = _where_values(cond, choice, out)
    return out


def heaviside(x1: Any, x2: Any) -> Any:
    """0 below zero, 1 above it, x2 at it (nan stays nan)."""
    x1, x2 = _promoted(asarray(x1), x2)
    step = _where_values(less(x1, 0), 0, _where_values(greater(x1, 0), 1, x2))
    return _where_values(isnan(x1), x1, step)


def sinc(x: Any) -> Any:
    """sin(pi x) / (pi x), 1 at 0."""
    x = asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(_dt.default_float())
    is_zero = equal(x, 0)
    px = multiply(_where_values(is_zero, 1, x), float(np.pi))
    return _where_values(is_zero, 1, true_divide(sin(px), px))


def ldexp(x1: Any, x2: Any) -> Any:
    """x1 * 2**x2 for integer x2."""
    x2 = asarray(x2)
    if x2.dtype.kind not in "iu":
        raise TypeError(f"ldexp requires integer exponents x2, got {x2.dtype}")
    x1 = asarray(x1)
    x1 = x1 if x1.dtype.kind == "f" else x1.astype(_dt.default_float())
    return multiply(x1, exp2(x2.astype(x1.dtype)))


def modf(x: Any) -> tuple[Any, Any]:
    """(fractional part, integral part), both with x's sign (nan and ±inf for ±inf, as in
    JAX)."""
    x = asarray(x)
    whole = trunc(x)
    return subtract(x, whole), whole


def real(x: Any) -> Any:
    x = asarray(x)
    return bind(ops.REAL, x) if kind(x.dtype) == "c" else x


def imag(x: Any) -> Any:
    x = asarray(x)
    return bind(ops.IMAG, x) if kind(x.dtype) == "c" else _cr.zeros_like(x)


def conjugate(x: Any) -> Any:
    x = asarray(x)
    return bind(ops.CONJ, x) if kind(x.dtype) == "c" else x


conj = conjugate


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of z, arctan2(imag(z), real(z)) as in JAX: pi for negative reals and
    -0.0."""
    z = asarray(z)
    z = z if kind(z.dtype) in "fc" else z.astype(_dt.default_float())
    out = arctan2(imag(z), real(z))
    return multiply(out, 180.0 / np.pi) if deg else out


def iscomplexobj(x: Any) -> bool:
    return kind(_aval(x).dtype) == "c"


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)


def iscomplex(x: Any) -> Any:
    x = asarray(x)
    return not_equal(imag(x), 0) if kind(x.dtype) == "c" else _cr.full(x.shape, False, np.bool_)


def isreal(x: Any) -> Any:
    return logical_not(iscomplex(x))


def nextafter(x1: Any, x2: Any) -> Any:
    """The next float after x1 towards x2 (x2 where they are equal, nan where either is):
    x1's bits, one up or down."""
    x1, x2 = _promoted(asarray(x1), x2)
    if x1.dtype.kind != "f":
        x1, x2 = x1.astype(_dt.default_float()), x2.astype(_dt.default_float())
    ints = np.dtype(f"int{x1.dtype.itemsize * 8}")
    bits = bind(ops.BITCAST_CONVERT, x1, dtype=ints)
    away = equal(less(x1, x2), greater(x1, 0))  # away from zero: the magnitude's bits grow
    step = bind(ops.BITCAST_CONVERT, _where_values(away, add(bits, 1), subtract(bits, 1)),
                dtype=x1.dtype)
    tiny = bind(ops.BITCAST_CONVERT, _cr.ones_like(bits), dtype=x1.dtype)  # least subnormal
    out = _where_values(equal(x1, 0), _where_values(greater(x2, 0), tiny, negative(tiny)), step)
    out = _where_values(equal(x1, x2), x2, out)
    return _where_values(logical_or(isnan(x1), isnan(x2)), add(x1, x2), out)


pow = power  # noqa: A001 - the array API's name
bitwise_invert = invert


__all__ = [n for n in globals() if n not in _IMPORTED and not n.startswith("_")]
