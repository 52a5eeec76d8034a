"""`ember.nn.initializers`: JAX's `jax.nn.initializers`, functions (key, shape, dtype) -> an
array of initial weights, drawn with ember.random (whose bits are JAX's, so a key gives
JAX's weights)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ember import numpy as enp, random
from ember._src import dtypes as _dt


class Initializer(Protocol):
    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None,
                 out_sharding: Any = None) -> Any: ...


def _float(dtype: Any) -> np.dtype:
    return _dt.default_float() if dtype is None else _dt.canonicalize(dtype)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    return enp.zeros(tuple(shape), _float(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    return enp.ones(tuple(shape), _float(dtype))


def _initializer(draw: Callable[[Any, tuple[int, ...], np.dtype], Any], default: Any
                 ) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        return draw(key, tuple(shape), _float(dtype))
    return init


def constant(value: Any, dtype: Any = None) -> Initializer:
    """Every weight `value`."""
    return _initializer(lambda key, shape, dt: enp.full(shape, value, dt), dtype)


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform on [0, scale)."""
    return _initializer(lambda key, shape, dt: random.uniform(key, shape, dt) * scale, dtype)


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Normal of mean 0 and standard deviation `stddev`."""
    return _initializer(lambda key, shape, dt: random.normal(key, shape, dt) * stddev, dtype)


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """`stddev` times a standard normal truncated to [lower, upper]."""
    return _initializer(lambda key, shape, dt: random.truncated_normal(
        key, lower, upper, shape, dt) * stddev, dtype)


def _axes(axis: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))


def _fans(shape: tuple[int, ...], in_axis, out_axis, batch_axis) -> tuple[float, float]:
    """(fan in, fan out): the input and output dims' sizes, each times the receptive field
    (the dims that are neither, nor batch dims)."""
    if len(shape) < 1:
        raise ValueError(f"variance_scaling requires an array of rank >= 1, got shape {shape}")
    ins, outs = _axes(in_axis, len(shape)), _axes(out_axis, len(shape))
    batch = _axes(batch_axis, len(shape))
    field = math.prod(d for i, d in enumerate(shape) if i not in ins + outs + batch)
    return (math.prod(shape[i] for i in ins) * field, math.prod(shape[i] for i in outs) * field)


def variance_scaling(scale: Any, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Weights of variance scale / n, n the fan in, the fan out, their mean or their
    geometric mean (`mode`), drawn from a truncated normal, a normal or a uniform law."""
    denominators = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o,
                    "fan_avg": lambda i, o: (i + o) / 2, "fan_geo_avg": lambda i, o: (i * o) ** 0.5}
    if mode not in denominators:
        raise ValueError(f"variance_scaling requires mode in {sorted(denominators)}, got "
                         f"{mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"variance_scaling requires distribution 'truncated_normal', "
                         f"'normal' or 'uniform', got {distribution!r}")

    def draw(key, shape, dt):
        variance = scale / denominators[mode](*_fans(shape, in_axis, out_axis, batch_axis))
        if distribution == "truncated_normal":
            # the standard deviation of a standard normal truncated to [-2, 2]
            stddev = math.sqrt(variance) / 0.87962566103423978
            return random.truncated_normal(key, -2.0, 2.0, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * math.sqrt(variance)
        return random.uniform(key, shape, dt, -1.0, 1.0) * math.sqrt(3 * variance)

    return _initializer(draw, dtype)


def _scaled(scale: float, mode: str, distribution: str, name: str):
    def make(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
             batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"variance_scaling({scale}, {mode!r}, {distribution!r})."
    return make


glorot_uniform = xavier_uniform = _scaled(1.0, "fan_avg", "uniform", "glorot_uniform")
glorot_normal = xavier_normal = _scaled(1.0, "fan_avg", "truncated_normal", "glorot_normal")
lecun_uniform = _scaled(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = kaiming_uniform = _scaled(2.0, "fan_in", "uniform", "he_uniform")
he_normal = kaiming_normal = _scaled(2.0, "fan_in", "truncated_normal", "he_normal")


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """`scale` times a matrix with orthonormal columns (or rows, if there are fewer rows
    than columns): Q of the QR of a normal matrix, its columns' signs fixed by R's diagonal;
    other dims are flattened into the rows."""
    def draw(key, shape, dt):
        if len(shape) < 2:
            raise ValueError(f"orthogonal requires a shape of rank >= 2, got {shape}")
        cols = shape[column_axis]
        rows = math.prod(shape) // cols
        tall = (rows, cols) if rows >= cols else (cols, rows)
        q, r = enp.linalg.qr(random.normal(key, tall, dt))
        q = q * enp.sign(enp.diagonal(r))
        if rows < cols:
            q = q.T
        rest = tuple(d for i, d in enumerate(shape) if i != column_axis % len(shape))
        return enp.moveaxis(enp.reshape(q, (*rest, cols)), -1, column_axis) * scale
    return _initializer(draw, dtype)


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None
                     ) -> Initializer:
    """A convolution kernel (spatial dims, in, out) that is 0 but at its spatial center,
    where it is an orthogonal in x out matrix (Xiao et al.'s delta-orthogonal)."""
    def draw(key, shape, dt):
        if not 3 <= len(shape) <= 5:
            raise ValueError(f"delta_orthogonal requires a shape of rank 3 to 5, got {shape}")
        if shape[-2] > shape[-1]:
            raise ValueError(f"delta_orthogonal requires in <= out channels, got {shape}")
        center = orthogonal(scale, column_axis, dt)(key, shape[-2:], dt)
        middle = tuple(d // 2 for d in shape[:-2])
        return enp.zeros(shape, dt).at[middle].set(center)
    return _initializer(draw, dtype)


__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]
