"""`ember.scipy.special`: erf and friends, as `jax.scipy.special` has them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax, numpy as enp
from ember.dialect import ops
from ember.numpy import _base


def erf(x: Any) -> Any:
    return _base._unary_float(ops.ERF)(x)


def erfinv(x: Any) -> Any:
    return lax.erf_inv(x)


def erfc(x: Any) -> Any:
    return lax.erfc(x)


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
