"""`ember.nn`: activation functions and friends, as `jax.nn` has them, from ember.numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp
from ember.nn import initializers as initializers
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


# ------------------------------------------------------------------ more of jax.nn's activations
# Each as JAX documents it; integers give floats (a float constant takes part in each).


def tanh(x: Any, /) -> Any:
    return enp.tanh(x)


def identity(x: Any) -> Any:
    return enp.asarray(x)


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x where x > 0, alpha (e^x - 1) elsewhere (expm1 of 0 where x > 0: no overflow)."""
    x = enp.asarray(x)
    positive = x > 0
    return enp.where(positive, x, alpha * enp.expm1(enp.where(positive, 0.0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha (e^(min(x, 0) / alpha) - 1)."""
    x = enp.asarray(x)
    return enp.maximum(x, 0.0) + alpha * enp.expm1(enp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Any:
    """scale * elu(x, alpha), the self-normalizing constants of Klambauer et al."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    x = enp.asarray(x)
    return enp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1]."""
    x = enp.asarray(x)
    return enp.where(x > 1, 1, enp.where(x < -1, -1, x))  # integers stay integers (JAX)


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6."""
    return relu6(enp.asarray(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x)."""
    x = enp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x), finite for every finite x."""
    return -softplus(-enp.asarray(x))


def log1mexp(x: Any) -> Any:
    """log(1 - e^-x) for x > 0: log1p(-e^-x) above log 2, log(-expm1(-x)) below (each where
    it keeps its digits, Maechler's note)."""
    x = enp.asarray(x)
    return enp.where(x > np.log(2.0), enp.log1p(-enp.exp(-x)), enp.log(-enp.expm1(-x)))


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """log(mean(e^x)) over `axis`, of the elements `where` holds."""
    x = enp.asarray(x)
    if where is None:
        count = x.size if axis is None else int(np.prod(
            [x.shape[a] for a in ((axis,) if isinstance(axis, int) else axis)]))
        total = logsumexp(x, axis=axis, keepdims=keepdims)
        return total - np.log(count) if count else total
    where = enp.broadcast_to(enp.asarray(where), x.shape)
    masked = enp.where(where, x, -np.inf)
    count = enp.sum(where, axis=axis, keepdims=keepdims)
    return logsumexp(masked, axis=axis, keepdims=keepdims) - enp.log(count.astype(x.dtype))


def mish(x: Any) -> Any:
    """x tanh(softplus(x))."""
    x = enp.asarray(x)
    return x * enp.tanh(softplus(x))


def soft_sign(x: Any) -> Any:
    """x / (|x| + 1)."""
    x = enp.asarray(x)
    return x / (enp.absolute(x) + 1.0)


def squareplus(x: Any, b: Any = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2."""
    x = enp.asarray(x)
    return (x + enp.sqrt(x * x + b)) / 2.0


def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between."""
    x = enp.asarray(x)
    return enp.where(x <= -1.0, 0.0, enp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4.0))


def sparse_sigmoid(x: Any) -> Any:
    """(x + 1) / 2 clipped to [0, 1]: sparse_plus's derivative."""
    return 0.5 * enp.clip(enp.asarray(x) + 1.0, 0.0, 2.0)


def glu(x: Any, axis: int = -1) -> Any:
    """The first half of `axis` times the sigmoid of the second."""
    x = enp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu requires an even length along axis {axis}, got shape {x.shape}")
    first, second = enp.split(x, 2, axis=axis)
    return first * sigmoid(second)
