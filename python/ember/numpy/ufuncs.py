"""The rest of `jax.numpy`'s ufuncs, each one op row or a composition of rows written as
JAX writes it, so results (and corner cases like x // 0) agree with JAX.

Compositions run eagerly as one compiled module (`_eager_elementwise`), never op by op.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ember.dialect import ops
from ember.dialect.types import kind

from .._src import dtypes as _dt
from .._src.dispatch import bind
from . import _base, creation as _cr
from ._base import (
    _aval,
    _broadcast,
    _eager_elementwise,
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
def true_divide(x, y): return _base._divide(True)(x, y)
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
    return _eager_elementwise(impl)
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

    return _eager_elementwise(compare)


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
    return _base._eager_elementwise(impl)


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


@_eager_elementwise
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
    out = asarray(a)  # neither bound: `a` as it is (JAX, the array API)
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
_op_log1p = _float_unary(ops.LOG1P)
log2 = _float_unary(ops.LOG2)
tan = _float_unary(ops.TAN)
_real_sinh = _float_unary(ops.SINH)
_real_cosh = _float_unary(ops.COSH)


def _sinh_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """sinh(a + bj) = sinh a cos b + j cosh a sin b as (re, im), with C99's infinities and
    NaNs."""
    re = multiply(_real_sinh(a), cos(b))
    im = multiply(_real_cosh(a), sin(b))
    zero_b, zero_a = equal(b, 0), equal(a, 0) & ~isfinite(b)
    wild = isinf(a) & ~isfinite(b)
    re = _where_values(wild, np.inf, _where_values(zero_a, a, re))  # its sign is free: NumPy's
    im = _where_values(wild, np.nan, _where_values(zero_b, b, im))
    return re, im


def _cosh_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """cosh(a + bj) = cosh a cos b + j sinh a sin b as (re, im), with C99's infinities and
    NaNs."""
    re = multiply(_real_cosh(a), cos(b))
    im = multiply(_real_sinh(a), sin(b))
    wild = isinf(a) & ~isfinite(b)
    zero_b = equal(b, 0)
    im = _where_values(zero_b & isinf(a), multiply(b, copysign(1.0, a)), im)
    im = _where_values(zero_b & isnan(a), b, im)
    im = _where_values(equal(a, 0) & ~isfinite(b), 0.0, im)
    return _where_values(wild, np.inf, re), _where_values(wild, np.nan, im)


cbrt = _float_unary(ops.CBRT)


# -- inverse trigonometric and hyperbolic functions of complex numbers: on the first
# quadrant (|re|, |im|), by formulas without cancellation there (log1p near 0 and 1), then
# the signs put back by the functions' symmetries; infinities and NaNs follow C99's
# special values (as the array API states them), which the formulas alone would not give.

def _parts(z: Any) -> tuple[Any, Any]:
    return bind(ops.REAL, z), bind(ops.IMAG, z)


def _cplx(re: Any, im: Any) -> Any:
    return bind(ops.COMPLEX, re, im)


def _special(x: Any, y: Any, rules: list, general: tuple[Any, Any]) -> tuple[Any, Any]:
    """(re, im) of the first rule whose condition holds, else `general`."""
    re, im = general
    for cond, (r, i) in reversed(rules):
        re, im = _where_values(cond, r, re), _where_values(cond, i, im)
    return re, im


def _csqrt(x: Any, y: Any) -> tuple[Any, Any]:
    """sqrt(x + yj) as (re, im), without cancellation (the branch cut follows the sign of
    y, -0 too): t = sqrt((|x| + |z|) / 2), the other part |y| / 2t."""
    t = sqrt(multiply(add(absolute(x), hypot(x, y)), 0.5))
    other = true_divide(absolute(y), multiply(t, 2.0))
    other = _where_values(equal(t, 0), 0.0, other)
    right = greater_equal(x, 0)
    return _where_values(right, t, other), copysign(_where_values(right, other, t), y)


def _kahan(a: Any, b: Any) -> tuple[Any, Any, Any, Any]:
    """sqrt(1 - z) and sqrt(1 + z) of z = a + bj, as (r1, i1, r2, i2)."""
    r1, i1 = _csqrt(subtract(1.0, a), negative(b))
    r2, i2 = _csqrt(add(1.0, a), b)
    return r1, i1, r2, i2


def _asin_kahan(a: Any, b: Any) -> tuple[Any, Any]:
    """asin(a + bj) by Kahan's formulas (accurate for finite inputs of moderate size)."""
    r1, i1, r2, i2 = _kahan(a, b)
    return (arctan2(a, subtract(multiply(r1, r2), multiply(i1, i2))),
            _real_asinh(subtract(multiply(r1, i2), multiply(i1, r2))))


def _big(x: Any) -> float:
    return float(np.sqrt(np.finfo(x.dtype).max) / 4)  # squares overflow past it


def _asinh_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """asinh(a + bj) as (re, im): odd and conjugate-symmetric; asinh(w) = -i asin(i w)."""
    x, y = absolute(a), absolute(b)
    p, q = _asin_kahan(negative(y), x)
    far_re, far_im = _parts(add(log(_cplx(x, y)), np.log(2.0)))
    large = greater(maximum(x, y), _big(x))
    re, im = _where_values(large, far_re, q), _where_values(large, far_im, negative(p))
    nan, inf = isnan(x) | isnan(y), isinf(x) | isinf(y)
    re, im = _special(x, y, [
        (isinf(x) & isnan(y), (np.inf, np.nan)),
        (isnan(x) & isinf(y), (np.inf, np.nan)),
        (isnan(x) & equal(y, 0), (np.nan, y)),
        (nan, (np.nan, np.nan)),
        (inf, (np.inf, arctan2(y, x))),
    ], (re, im))
    return copysign(re, a), copysign(im, b)


def _acosh_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """acosh(a + bj) as (re, im) by Kahan's formulas: conjugate-symmetric, its real part
    never negative."""
    y = absolute(b)
    rm, im_m = _csqrt(subtract(a, 1.0), y)
    rp, ip = _csqrt(add(a, 1.0), y)
    re = _real_asinh(add(multiply(rm, rp), multiply(im_m, ip)))
    im = multiply(2.0, arctan2(im_m, rp))
    far_re, far_im = _parts(add(log(_cplx(a, y)), np.log(2.0)))
    large = greater(maximum(absolute(a), y), _big(y))
    re, im = _where_values(large, far_re, re), _where_values(large, far_im, im)
    inf = isinf(a) | isinf(y)
    re, im = _special(a, y, [
        (inf & (isnan(a) | isnan(y)), (np.inf, np.nan)),
        (equal(a, 0) & isnan(y), (np.nan, np.pi / 2)),
        (isnan(a) | isnan(y), (np.nan, np.nan)),
        (inf, (np.inf, arctan2(y, a))),
    ], (re, im))
    return re, copysign(im, b)


def _atanh_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """atanh(a + bj) as (re, im): odd and conjugate-symmetric. With x, y = |a|, |b|:
    log1p(4x / ((1 - x)^2 + y^2)) / 4 and atan2(2y, (1 - x)(1 + x) - y^2) / 2 (the difference
    of log1p(z) and log1p(-z) cancelled: atanh(-1.03e8 + 4.5e-5j) had a real part of -0 for
    -9.7e-9); past the squares' overflow x / |z|^2 scaled by max(x, y), and pi/2."""
    x, y = absolute(a), absolute(b)
    one_minus = subtract(1.0, x)
    # 4x / ((1 - x)^2 + y^2) = q^2, q = 2 sqrt(x) / hypot(1 - x, y); log1p(q^2) is 2 log q
    # where q^2 would overflow (or the squares underflow: atanh(1 + 1e-30j))
    q = divide(multiply(2.0, sqrt(x)), hypot(one_minus, y))
    re = _where_values(greater(q, _big(a)), multiply(log(q), 0.5),
                       multiply(_op_log1p(multiply(q, q)), 0.25))
    im = multiply(arctan2(multiply(2.0, y), subtract(multiply(one_minus, add(1.0, x)),
                                                     multiply(y, y))), 0.5)
    m = maximum(x, y)
    xs, ys = divide(x, m), divide(y, m)
    far = divide(divide(xs, add(multiply(xs, xs), multiply(ys, ys))), m)
    huge = greater(m, _big(a))
    re, im = _where_values(huge, far, re), _where_values(huge, np.pi / 2, im)
    re, im = _special(x, y, [
        (isinf(y), (0.0, np.pi / 2)),
        (isinf(x) & isnan(y), (0.0, np.nan)),
        (isinf(x), (0.0, np.pi / 2)),
        (equal(x, 1) & equal(y, 0), (np.inf, 0.0)),
        (equal(x, 0) & isnan(y), (0.0, np.nan)),
        (isnan(x) | isnan(y), (np.nan, np.nan)),
    ], (re, im))
    return copysign(re, a), copysign(im, b)


def _rotated(parts):
    """f(z) = -i g(i z) from g's parts (asin from asinh, atan from atanh)."""
    def run(a: Any, b: Any) -> tuple[Any, Any]:
        p, q = parts(negative(b), a)
        return q, negative(p)
    return run


def _acos_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """acos(a + bj) by Kahan's formulas; for infinities, NaNs and huge inputs pi/2 - asin
    (C99's special values follow from it)."""
    r1, i1, r2, i2 = _kahan(a, b)
    re = multiply(2.0, arctan2(r1, r2))
    im = _real_asinh(subtract(multiply(r2, i1), multiply(i2, r1)))
    p, q = _rotated(_asinh_parts)(a, b)
    other = ~(isfinite(a) & isfinite(b)) | greater(maximum(absolute(a), absolute(b)), _big(a))
    return (_where_values(other, subtract(np.pi / 2, p), re),
            _where_values(other, negative(q), im))


def _by_parts(row, parts, name: str):
    """`name`: `row` on real numbers; on complex ones, `parts` of their real and imaginary
    parts (one module when eager, compiled once per signature)."""
    real = _float_unary(row)

    def impl(z: Any) -> Any:
        return _cplx(*parts(*_parts(z)))

    impl.__name__ = impl.__qualname__ = f"complex_{name}"
    complex_fn = _base._eager_elementwise(impl)

    def fn(x: Any) -> Any:
        x = asarray(x)
        return complex_fn(x) if kind(x.dtype) == "c" else real(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}; of complex numbers too (principal branch, C99's special values)."
    return fn


def _log1p_parts(a: Any, b: Any) -> tuple[Any, Any]:
    """log1p(a + bj) as (re, im): re = log|1 + z| = log1p(a (2 + a) + b^2) / 2 (no cancellation
    near 0; log|1 + z| where squares would overflow), im = atan2(b, 1 + a); log1p(-1 + 0j) is
    -inf + 0j (MLIR's complex.log1p gives nan there)."""
    one = add(a, 1.0)
    near = multiply(log1p(add(multiply(a, add(a, 2.0)), multiply(b, b))), 0.5)
    far = log(hypot(one, b))
    re = _where_values(greater(maximum(absolute(a), absolute(b)), _big(a)), far, near)
    return _where_values(isinf(a) | isinf(b), np.inf, re), arctan2(b, one)


_real_asinh = _float_unary(ops.ASINH)
sinh = _by_parts(ops.SINH, _sinh_parts, "sinh")
cosh = _by_parts(ops.COSH, _cosh_parts, "cosh")
log1p = _by_parts(ops.LOG1P, _log1p_parts, "log1p")
arcsinh = _by_parts(ops.ASINH, _asinh_parts, "arcsinh")
arccosh = _by_parts(ops.ACOSH, _acosh_parts, "arccosh")
arctanh = _by_parts(ops.ATANH, _atanh_parts, "arctanh")
arcsin = _by_parts(ops.ASIN, _rotated(_asinh_parts), "arcsin")
arccos = _by_parts(ops.ACOS, _acos_parts, "arccos")
arctan = _by_parts(ops.ATAN, _rotated(_atanh_parts), "arctan")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def _float_binary(op):
    def fn(x: Any, y: Any) -> Any:
        return _nary(op, True)(x, y)

    fn.__name__ = op.name.removeprefix("ember.")
    return fn


arctan2 = atan2 = _float_binary(ops.ATAN2)
copysign = _float_binary(ops.COPYSIGN)


@_eager_elementwise
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
    @_eager_elementwise
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


@_eager_elementwise
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


@_eager_elementwise
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


@_eager_elementwise
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


@_eager_elementwise
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


@_eager_elementwise
def remainder(x: Any, y: Any) -> Any:
    x, y = _numeric("remainder", x, y)
    if kind(y.dtype) in "iu":
        y = _where_values(equal(y, 0), np.ones((), y.dtype), y)
    trunc_mod = bind(ops.REM, x, y)
    do_plus = logical_and(not_equal(less(trunc_mod, 0), less(y, 0)),
                              not_equal(trunc_mod, 0))
    return _where_values(do_plus, add(trunc_mod, y), trunc_mod)


mod = remainder


@_eager_elementwise
def fmod(x: Any, y: Any) -> Any:
    x, y = _numeric("fmod", x, y)
    if kind(y.dtype) in "iu":  # NumPy and JAX: fmod(x, 0) is 0 for integers
        safe = _where_values(equal(y, 0), np.ones((), y.dtype), y)
        return _where_values(equal(y, 0), np.zeros((), x.dtype), bind(ops.REM, x, safe))
    return bind(ops.REM, x, y)


def divmod(x: Any, y: Any) -> tuple[Any, Any]:  # noqa: A001
    return floor_divide(x, y), remainder(x, y)


@_eager_elementwise
def reciprocal(x: Any) -> Any:
    """1 / x; integers and booleans give floats (JAX's; NumPy's integer reciprocal floors)."""
    return true_divide(1, x)


@_eager_elementwise
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


@_eager_elementwise
def logaddexp(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y, to_float=True)
    amax = maximum(x, y)
    delta = subtract(x, y)
    return _where_values(isnan(delta), add(x, y),
                 add(amax, log1p(exp(negative(absolute(delta))))))


@_eager_elementwise
def logaddexp2(x: Any, y: Any) -> Any:
    x, y = _promoted(x, y, to_float=True)
    amax = maximum(x, y)
    delta = subtract(x, y)
    tail = true_divide(log1p(exp2(negative(absolute(delta)))), float(np.log(2.0)))
    return _where_values(isnan(delta), add(x, y), add(amax, tail))


@_eager_elementwise
def fmax(x: Any, y: Any) -> Any:
    """The larger, ignoring a NaN (NumPy's fmax)."""
    x, y = _promoted(x, y)
    return _where_values(isnan(y), x, _where_values(isnan(x), y, maximum(x, y)))


@_eager_elementwise
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
    if kind(x.dtype) not in "fc":  # integers and booleans give floats, as in JAX
        x = x.astype(_dt.default_float())
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
