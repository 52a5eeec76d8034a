"""`ember.scipy.special`: erf and friends, as `jax.scipy.special` has them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax
from ember import numpy as enp
from ember.dialect import ops
from ember.numpy import _base


def erf(x: Any) -> Any:
    return _base._unary_float(ops.ERF)(x)


def erfinv(x: Any) -> Any:
    return lax.erf_inv(x)


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
    return enp.where(a > 1, tail, 1 - erf(x)).astype(dtype)


def expit(x: Any) -> Any:
    # 1 / (1 + exp(-x)) overflows harmlessly to 0 for very negative x (exp -> inf).
    return 1 / (1 + enp.exp(-enp.asarray(x)))


def logit(x: Any) -> Any:
    x = enp.asarray(x)
    return enp.log(x / (1 - x))


def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = enp.asarray(a)
    peak = enp.max(x, axis=axis, keepdims=True)
    peak = enp.where((peak > -np.inf) & (peak < np.inf), peak, 0)  # all -inf: no nan
    out = enp.log(enp.sum(enp.exp(x - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else enp.reshape(out, _reduced_shape(x.shape, axis))


def _reduced_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    if axis is None:
        return ()
    axes = {a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(d for i, d in enumerate(shape) if i not in axes)


__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "logsumexp"]
