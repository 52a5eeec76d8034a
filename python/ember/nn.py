"""`ember.nn`: activation functions and friends, as `jax.nn` has them, from ember.numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp


def relu(x: Any) -> Any:
    return enp.maximum(x, 0)


def relu6(x: Any) -> Any:
    return enp.minimum(enp.maximum(x, 0), 6)


def sigmoid(x: Any) -> Any:
    # 1 / (1 + exp(-x)) overflows harmlessly to 0 for very negative x (exp -> inf).
    return 1 / (1 + enp.exp(-enp.asarray(x)))


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
        from ember.scipy.special import erf
        return 0.5 * x * (1 + erf(x * float(1 / np.sqrt(2))))  # Python floats: weak
    return 0.5 * x * (1 + enp.tanh(float(np.sqrt(2 / np.pi)) * (x + 0.044715 * x * x * x)))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = enp.asarray(x)
    peak = enp.max(x, axis=axis, keepdims=True)
    peak = enp.where((peak > -np.inf) & (peak < np.inf), peak, 0)  # all -inf: no nan
    out = enp.log(enp.sum(enp.exp(x - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else enp.reshape(out, _reduced_shape(x.shape, axis))


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


def _reduced_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    if axis is None:
        return ()
    axes = {a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(d for i, d in enumerate(shape) if i not in axes)
