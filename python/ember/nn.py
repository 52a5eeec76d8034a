"""`ember.nn`: activation functions and friends, as `jax.nn` has them, from ember.numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp
from ember.scipy.special import (
    erf,
    expit as sigmoid,
    logsumexp as logsumexp,  # as jax.nn has it
)


def relu(x: Any) -> Any:
    return enp.maximum(x, 0)


def relu6(x: Any) -> Any:
    return enp.minimum(enp.maximum(x, 0), 6.0)  # integers give floats, as in JAX


def silu(x: Any) -> Any:
    return x * sigmoid(x)


swish = silu


def softplus(x: Any) -> Any:
    """log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|))."""
    x = enp.asarray(x)
    return enp.maximum(x, 0) + enp.log(1 + enp.exp(-enp.absolute(x)))


def gelu(x: Any, approximate: bool = True) -> Any:
    """The tanh approximation (JAX's default) or the exact x * Phi(x), Phi from erf."""
    x = enp.asarray(x)
    if not approximate:
        return 0.5 * x * (1 + erf(x * float(1 / np.sqrt(2))))  # Python floats: weak
    return 0.5 * x * (1 + enp.tanh(float(np.sqrt(2 / np.pi)) * (x + 0.044715 * x * x * x)))


def softmax(x: Any, axis: int = -1) -> Any:
    x = enp.asarray(x)
    e = enp.exp(x - enp.max(x, axis=axis, keepdims=True))
    return e / enp.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Any, axis: int = -1) -> Any:
    x = enp.asarray(x)
    shifted = x - enp.max(x, axis=axis, keepdims=True)
    return shifted - enp.log(enp.sum(enp.exp(shifted), axis=axis, keepdims=True))


def standardize(x: Any, axis: Any = -1, epsilon: float = 1e-5) -> Any:
    x = enp.asarray(x)
    centered = x - enp.mean(x, axis=axis, keepdims=True)
    return centered / enp.sqrt(enp.var(x, axis=axis, keepdims=True) + epsilon)


def one_hot(x: Any, num_classes: int, dtype: Any = np.float32) -> Any:
    x = enp.asarray(x)
    classes = enp.arange(num_classes, dtype=x.dtype)
    return enp.astype(enp.expand_dims(x, -1) == classes, dtype)
