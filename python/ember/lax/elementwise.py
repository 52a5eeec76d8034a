"""Elementwise ops under lax's names and signatures: one dtype, no promotion beyond weak
Python scalars."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import numpy as enp, tree_util
from ember._src import dtypes
from ember._src.dispatch import bind
from ember.dialect import ops
from ember.dialect.types import kind
from ember.numpy import _base

# ----------------------------------------------------------------------------- elementwise
# `lax`'s names for ops ember.numpy spells differently; no implicit promotion beyond weak
# Python scalars, as in JAX's lax.

def rsqrt(x: Any) -> Any:
    return _base._unary_float(ops.RSQRT)(x)


def erf(x: Any) -> Any:
    return _base._unary_float(ops.ERF)(x)


def div(x: Any, y: Any) -> Any:
    """Truncating division for integers (x / 0 is -1), true division for floats."""
    return _base._divide(False)(x, y)


def rem(x: Any, y: Any) -> Any:
    """The remainder with the dividend's sign (C's %); x % 0 is x for integers."""
    return _base._nary(ops.REM)(x, y)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return enp.where(pred, on_true, on_false)


def shift_left(x: Any, y: Any) -> Any:
    return enp.left_shift(x, y)


def stop_gradient(x: Any) -> Any:
    """`x`, through which no derivative flows (a pytree of arrays)."""
    return tree_util.tree_map(lambda leaf: bind(ops.STOP_GRADIENT, enp.asarray(leaf)), x)


def shift_right_logical(x: Any, y: Any) -> Any:
    """Shift in zeros whatever the sign (a shift by the width or more gives 0)."""
    x = enp.asarray(x)
    if x.dtype.kind != "i":
        return enp.right_shift(x, y)
    unsigned = np.dtype(f"uint{x.dtype.itemsize * 8}")
    out = enp.right_shift(bitcast_convert_type(x, unsigned), enp.asarray(y).astype(unsigned))
    return bitcast_convert_type(out, x.dtype)


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    return enp.right_shift(x, y)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """The same bits read as `new_dtype`, which must have the operand's width."""
    x = enp.asarray(operand)
    dtype = np.dtype(new_dtype)
    if dtype.itemsize != x.dtype.itemsize or np.bool_ in (dtype, x.dtype):
        raise TypeError(f"bitcast_convert_type requires a non-bool dtype of the operand's "
                        f"width ({x.dtype}: {x.dtype.itemsize * 8} bits), got {dtype}")
    return x if dtype == x.dtype else bind(ops.BITCAST_CONVERT, x, dtype=dtype)


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision:
# the polynomial XLA evaluates for float32 erf_inv, so samples built on it match JAX's.
_ERF_INV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erf_inv(x: Any) -> Any:
    """The inverse of erf on (-1, 1); +-inf at +-1, NaN outside. float32 (and narrower
    floats, computed in float32); float64 is not supported yet."""
    x = enp.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    if dtype == np.float64:
        raise NotImplementedError("erf_inv of float64 is not supported yet (float32 is); "
                                  "convert with .astype(jnp.float32)")
    return _erf_inv32(x.astype(np.float32)).astype(dtype)


@_base._eager_as_one_module
def _erf_inv32(x: Any) -> Any:
    w = enp.negative(enp.log1p(enp.negative(x * x)))
    central = w < 5.0
    w = enp.where(central, w - 2.5, enp.sqrt(w) - 3.0)
    p = enp.where(central, np.float32(_ERF_INV_CENTRAL[0]), np.float32(_ERF_INV_TAIL[0]))
    for c, t in zip(_ERF_INV_CENTRAL[1:], _ERF_INV_TAIL[1:], strict=True):
        p = enp.where(central, np.float32(c), np.float32(t)) + p * w
    # +-inf at +-1 as constants: x * inf in the branch not taken made every gradient nan
    ends = enp.where(x > 0, np.float32(np.inf), np.float32(-np.inf))
    return enp.where(enp.abs(x) == 1.0, ends, p * x)


exp2, expm1, log1p, tan, atan2, cbrt = (enp.exp2, enp.expm1, enp.log1p, enp.tan, enp.arctan2,
                                        enp.cbrt)


# ----------------------------------------------------------------------------- JAX's names
# The rest of lax's public elementwise and structural ops, with JAX's signatures. Binary ops
# take one dtype (Python scalars are weak and adapt): lax does not promote.

def _one_dtype(name: str, *xs: Any) -> list[Any]:
    arrays = [x for x in xs if not isinstance(x, (int, float, bool, builtins.complex))]
    kinds = {np.dtype(enp.asarray(x).dtype) for x in arrays}
    if len(kinds) > 1:
        raise TypeError(f"lax.{name} requires arguments of one dtype, got "
                        f"{', '.join(sorted(str(k) for k in kinds))}: lax does not promote; "
                        f"convert one with lax.convert_element_type")
    return list(xs)


def _binary(name: str, fn: Callable) -> Callable:
    def op(x: Any, y: Any) -> Any:
        return fn(*_one_dtype(name, x, y))

    op.__name__ = op.__qualname__ = name
    return op


add, sub, mul = _binary("add", enp.add), _binary("sub", enp.subtract), \
    _binary("mul", enp.multiply)
max, min = _binary("max", enp.maximum), _binary("min", enp.minimum)  # noqa: A001
pow = _binary("pow", enp.power)  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = (_binary("bitwise_and", enp.bitwise_and),
                                        _binary("bitwise_or", enp.bitwise_or),
                                        _binary("bitwise_xor", enp.bitwise_xor))
eq, ne = _binary("eq", enp.equal), _binary("ne", enp.not_equal)
lt, le = _binary("lt", enp.less), _binary("le", enp.less_equal)
gt, ge = _binary("gt", enp.greater), _binary("ge", enp.greater_equal)
(abs, acos, asin, atan, ceil, floor, cos, cosh, sin, sinh, tanh, exp, log, sqrt, sign, neg,  # noqa: A001
 is_finite, square, bitwise_not, real, imag) = (
    enp.abs, enp.arccos, enp.arcsin, enp.arctan, enp.ceil, enp.floor, enp.cos, enp.cosh,
    enp.sin, enp.sinh, enp.tanh, enp.exp, enp.log, enp.sqrt, enp.sign, enp.negative,
    enp.isfinite, enp.square, enp.bitwise_not, enp.real, enp.imag)

_CONJUGATES = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def conj(x: Any) -> Any:
    """The complex conjugate, complex whatever the input: JAX's lax.conj makes a float32 a
    complex64 (numpy.conj keeps a real dtype)."""
    x = enp.asarray(x)
    dtype = np.dtype(x.dtype)
    if dtype in _CONJUGATES:
        x = x.astype(_CONJUGATES[dtype])
    elif dtype.kind != "c":
        raise TypeError(f"lax.conj requires float32, float64 or complex arguments, got "
                        f"{dtype}")
    return enp.conj(x)


def complex(x: Any, y: Any) -> Any:  # noqa: A001
    """x + i y for float32 or float64 x and y of one dtype (JAX's lax.complex)."""
    x, y = (enp.asarray(v) for v in _one_dtype("complex", x, y))
    dtype, _ = dtypes.promote(dtypes.dtype_and_weak(x), dtypes.dtype_and_weak(y))
    if kind(dtype) != "f":
        raise TypeError(f"lax.complex requires float arguments, got {x.dtype} and {y.dtype}")
    shape = enp.broadcast_shapes(x.shape, y.shape)
    x, y = (enp.broadcast_to(v.astype(dtype), shape) for v in (x, y))
    return bind(ops.COMPLEX, x, y)


def logistic(x: Any) -> Any:
    x = enp.asarray(x)
    return 1 / (1 + enp.exp(-x))


@_base._eager_as_one_module
def erfc(x: Any) -> Any:
    """1 - erf(x) below 1; from 1 up, where that difference would lose every digit (erfc(4)
    was 0 in float32), Laplace's continued fraction erfc(a) = e^(-a^2) / (sqrt(pi) K),
    K = a + (1/2) / (a + (2/2) / (a + ...)), 40 terms in float32 and 200 in float64 (it
    converges slowest at 1), with e^(-a^2) split as e^(-h^2) e^(-(a-h)(a+h)) for h = a in
    sixteenths (h^2 is exact), so that a^2's rounding is not magnified. float16 and
    bfloat16 are computed in float32."""
    dtype = erf(x).dtype  # the float type x computes in (erf's is unused: not compiled)
    x = enp.asarray(x).astype(np.float32 if dtype.itemsize < 4 else dtype)
    a = enp.clip(x, 1, 30)  # erfc(30) underflows: infinity too
    k = a
    for n in range(200 if dtype == np.float64 else 40, 0, -1):
        k = a + (n / 2) / k
    h = enp.trunc(a * 16) / 16
    tail = enp.exp(-h * h) * enp.exp(-(a - h) * (a + h)) / (k * float(np.sqrt(np.pi)))
    return enp.where(a > 1, tail, 1 - enp.asarray(erf(x))).astype(dtype)


def round(x: Any, rounding_method: int = 0) -> Any:  # noqa: A001
    """To the nearest integer, halves away from zero (method 0, JAX's default) or to even
    (method 1)."""
    if int(rounding_method) == 1:
        return enp.round(x)
    x = enp.asarray(x)
    whole = enp.trunc(x)
    return enp.where(enp.abs(x - whole) >= 0.5, whole + enp.sign(x), whole)


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a static integer y (products; reciprocal for negative y)."""
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow requires a static integer exponent, got {y!r}")
    return enp.power(x, int(y))


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002 - JAX's argument names
    return enp.minimum(enp.maximum(x, min), max)


def select_n(which: Any, *cases: Any) -> Any:
    """cases[which] elementwise: `which` boolean (two cases) or an integer index."""
    if not cases:
        raise ValueError("lax.select_n requires at least one case, got none")
    which = enp.asarray(which)
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        pick = enp.logical_not(which) if which.dtype == np.bool_ else which == i
        out = enp.where(pick, cases[i], out)
    return out


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    return enp.asarray(operand).astype(new_dtype)


def population_count(x: Any) -> Any:
    """The number of set bits of each integer."""
    x = enp.asarray(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"lax.population_count requires integers, got {x.dtype}")
    count = enp.zeros_like(x)
    for bit in range(x.dtype.itemsize * 8):
        count = count + enp.bitwise_and(shift_right_logical(x, bit), 1)
    return count


def nextafter(x1: Any, x2: Any) -> Any:
    """The next float after x1 towards x2 (floats of one dtype)."""
    x1, x2 = _base._promote_only(*_one_dtype("nextafter", x1, x2))
    if x1.dtype.kind != "f":
        raise TypeError(f"lax.nextafter requires floats, got {x1.dtype}")
    return enp.nextafter(x1, x2)
