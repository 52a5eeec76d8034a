"""`ember.scipy.special`: erf and friends, as `jax.scipy.special` has them."""

from __future__ import annotations

from typing import Any

from ember import numpy as enp
from ember.dialect import ops


def erf(x: Any) -> Any:
    return enp._unary_float(ops.ERF)(x)


def erfc(x: Any) -> Any:
    return 1 - erf(x)


def expit(x: Any) -> Any:
    from ember.nn import sigmoid
    return sigmoid(x)


def logit(x: Any) -> Any:
    x = enp.asarray(x)
    return enp.log(x / (1 - x))


def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    from ember.nn import logsumexp as _logsumexp
    return _logsumexp(a, axis=axis, keepdims=keepdims)


__all__ = ["erf", "erfc", "expit", "logit", "logsumexp"]
