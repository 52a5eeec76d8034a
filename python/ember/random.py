"""`ember.random`: JAX's PRNG API on threefry2x32, bit-identical to `jax.random`.

A key is a uint32[2] array, the form `jax.random.PRNGKey` returns (`key` returns the same:
Ember has no key dtype yet, so `key_data` and `wrap_key_data` are the identity). The counter
layout is JAX's default (`jax_threefry_partitionable`): the value at flat position i hashes
the 64-bit counter i, so the same key and shape give the same bits as JAX.

Every sampler is a composition of ember ops: the threefry rounds are uint32 adds, rotations
and xors, which ember-fuse makes one kernel. Each is jitted per shape and dtype, so an eager
call compiles once and a call under jit inlines into the caller's trace.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from ember import lax, numpy as jnp
from ember._src import dtypes as _dt
from ember._src.core import Tracer
from ember._src.jit import jit
from ember.dialect.types import kind
from ember.runtime import Array

_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


def _one_device(fun: Any) -> Any:
    """`fun` with JAX's keyword `out_sharding` (how the result is sharded over devices): Ember
    puts arrays on one device (sharding is issue #63), so only None, the default, is taken."""
    @functools.wraps(fun)
    def sample(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        if out_sharding is not None:
            raise NotImplementedError(
                f"{fun.__name__} got out_sharding={out_sharding!r}: Ember puts each array on "
                f"one device and shards nothing yet; leave out_sharding out (None)")
        return fun(*args, **kwargs)

    signature = inspect.signature(fun)
    sample.__signature__ = signature.replace(parameters=[
        *signature.parameters.values(),
        inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return sample


# ----------------------------------------------------------------------------- threefry

def _rotate_left(x: Any, d: int) -> Any:
    return jnp.left_shift(x, np.uint32(d)) | jnp.right_shift(x, np.uint32(32 - d))


def _threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """The Threefry-2x32 block cipher (20 rounds) of the counters (x1, x2) under (k1, k2)."""
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    x = [x1 + ks[0], x2 + ks[1]]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = x[0] + x[1]
            x[1] = x[0] ^ _rotate_left(x[1], r)
        x[0] = x[0] + ks[(i + 1) % 3]
        x[1] = x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x[0], x[1]


def _counters(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The 64-bit flat index of every position, as its high and low uint32 words."""
    n = math.prod(shape)
    if n >= 1 << 32:
        raise NotImplementedError(f"random arrays of 2**32 elements or more, got {shape}")
    low = jnp.reshape(jnp.arange(n, dtype=_U32), shape)
    return jnp.zeros(shape, _U32), low


def _hash(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    high, low = _counters(shape)
    return _threefry2x32(key[0], key[1], high, low)


def _bits(key: Any, width: int, shape: tuple[int, ...]) -> Any:
    bits1, bits2 = _hash(key, shape)
    if width == 64:
        wide = _UINT[64]
        return jnp.left_shift(bits1.astype(wide), wide.type(32)) | bits2.astype(wide)
    out = bits1 ^ bits2
    return out if width == 32 else out.astype(_UINT[width])


# ----------------------------------------------------------------------------- keys

def PRNGKey(seed: Any) -> Any:  # noqa: N802 - JAX's name
    """A key from an integer seed: [high word, low word] of the seed (with x64 off, the seed
    is an int32 and the high word 0), as jax.random.PRNGKey."""
    if isinstance(seed, (Array, Tracer)) or (isinstance(seed, np.ndarray) and seed.ndim):
        return _seed_array(seed)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"PRNGKey requires an integer seed, got {seed!r}")
    bits = 64 if _dt.default_int().itemsize == 8 else 32
    value = int(seed) % (1 << bits)
    return jnp.asarray(np.array([value >> 32, value & 0xFFFFFFFF], _U32))


def _seed_array(seed: Any) -> Any:
    seed = jnp.asarray(seed)
    if seed.shape or seed.dtype.kind not in "iu":
        raise TypeError(f"PRNGKey requires a scalar integer seed, got {seed.dtype}"
                        f"{list(seed.shape)}")
    low = seed.astype(_U32)
    high = (lax.shift_right_logical(seed, seed.dtype.type(32)).astype(_U32)
            if seed.dtype.itemsize == 8 else jnp.zeros((), _U32))
    return jnp.stack([high, low])


key = PRNGKey


def key_data(keys: Any) -> Any:
    """The uint32 words of `keys` (Ember's keys are those words already)."""
    return _check_key("key_data", keys)


def wrap_key_data(key_bits: Any, *, impl: Any = None) -> Any:
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"wrap_key_data supports impl='threefry2x32' only, got {impl!r}")
    return _check_key("wrap_key_data", key_bits)


def _check_key(name: str, k: Any) -> Any:
    k = jnp.asarray(k)
    if k.dtype != _U32 or not k.shape or k.shape[-1] != 2:
        raise TypeError(f"{name} requires a key: a uint32 array of shape (..., 2) as made by "
                        f"ember.random.PRNGKey or split, got {k.dtype}{list(k.shape)}")
    return k


def _one_key(name: str, k: Any) -> Any:
    k = _check_key(name, k)
    if k.shape != (2,):
        raise TypeError(f"{name} requires a single key of shape (2,), got a batch of shape "
                        f"{list(k.shape)}; index it (keys[i]) or map over it")
    return k


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
        raise ValueError(f"{name} requires a shape of non-negative ints, got {shape}")
    return tuple(int(d) for d in shape)


@jit(static_argnums=1)
def _split(k: Any, shape: tuple[int, ...]) -> Any:
    bits1, bits2 = _hash(k, shape)
    return jnp.stack([bits1, bits2], axis=len(shape))


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (shape (num, 2); a tuple `num` gives that batch shape)."""
    return _split(_one_key("split", key), _shape("split", num))


@jit
def _fold_in(k: Any, data: Any) -> Any:
    bits1, bits2 = _threefry2x32(k[0], k[1], jnp.zeros((1,), _U32), jnp.reshape(data, (1,)))
    return jnp.concatenate([bits1, bits2])


def fold_in(key: Any, data: Any) -> Any:
    """A new key made from `key` and an integer (the uint32 of `data`)."""
    if isinstance(data, (int, np.integer)):
        data = np.uint32(int(data) % (1 << 32))
    data = jnp.asarray(data)
    if data.shape or data.dtype.kind not in "iu":
        raise TypeError(f"fold_in requires a scalar integer, got {data.dtype}"
                        f"{list(data.shape)}")
    return _fold_in(_one_key("fold_in", key), data.astype(_U32))


# ----------------------------------------------------------------------------- samplers

def _float_dtype(name: str, dtype: Any) -> np.dtype:
    dtype = _dt.default_float() if dtype is None else _dt.canonicalize(dtype)
    if kind(dtype) != "f":
        raise TypeError(f"{name} requires a floating dtype, got {dtype}")
    return dtype


@jit(static_argnums=(1, 2))
def _bits_of(k: Any, width: int, shape: tuple[int, ...]) -> Any:
    return _bits(k, width, shape)


@_one_device
def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits: unsigned integers of `dtype` (uint32 by default)."""
    dtype = _U32 if dtype is None else _dt.canonicalize(dtype)
    if dtype.kind != "u":
        raise TypeError(f"bits requires an unsigned dtype, got {dtype}")
    return _bits_of(_one_key("bits", key), dtype.itemsize * 8, _shape("bits", shape))


def _unit_floats(k: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Floats in [0, 1): random mantissa bits under the exponent of 1.0, minus 1."""
    info = ml_dtypes.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    width = 8 if nmant < 8 else nbits
    raw = _bits(k, width, shape)
    uint = _UINT[nbits]
    if width != nbits:
        raw = raw.astype(uint)
    one = np.array(1.0, dtype).view(uint)
    mantissa = jnp.right_shift(raw, uint.type(width - nmant)) | one
    return lax.bitcast_convert_type(mantissa, dtype) - dtype.type(1.0)


@jit(static_argnums=(1, 2))
def _uniform(k: Any, shape: tuple[int, ...], dtype: np.dtype, minval: Any, maxval: Any) -> Any:
    minval, maxval = jnp.asarray(minval, dtype), jnp.asarray(maxval, dtype)
    floats = _unit_floats(k, shape, dtype)
    return jnp.maximum(minval, floats * (maxval - minval) + minval)


@_one_device
def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in [minval, maxval)."""
    dtype = _float_dtype("uniform", dtype)
    shape = _shape("uniform", shape)
    _broadcastable("uniform", shape, minval, maxval)
    return _uniform(_one_key("uniform", key), shape, dtype, minval, maxval)


def _broadcastable(name: str, shape: tuple[int, ...], *params: Any) -> None:
    for p in params:
        try:
            ok = np.broadcast_shapes(np.shape(p), shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name} requires parameters that broadcast to shape {shape}, "
                             f"got one of shape {np.shape(p)}")


@jit(static_argnums=(1, 2))
def _normal(k: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(k, shape, dtype, lo, dtype.type(1.0))
    return dtype.type(np.sqrt(2)) * lax.erf_inv(u)


@_one_device
def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal floats (the inverse error function of uniform floats, as JAX)."""
    return _normal(_one_key("normal", key), _shape("normal", shape),
                   _float_dtype("normal", dtype))


@jit(static_argnums=(1, 2))
def _truncated_normal(k: Any, shape: tuple[int, ...], dtype: np.dtype, lower: Any,
                      upper: Any) -> Any:
    sqrt2 = dtype.type(np.sqrt(2))
    lower, upper = jnp.asarray(lower, dtype), jnp.asarray(upper, dtype)
    a, b = lax.erf(lower / sqrt2), lax.erf(upper / sqrt2)
    out = sqrt2 * lax.erf_inv(_uniform(k, shape, dtype, a, b))
    return jnp.clip(out, _next_float(lower, 1), _next_float(upper, -1))


def _next_float(x: Any, direction: int) -> Any:
    """The float after finite `x` towards +inf (direction 1) or -inf (-1)."""
    uint = _UINT[x.dtype.itemsize * 8]
    raw = lax.bitcast_convert_type(x, uint)
    up = (x > 0) == (direction > 0)
    step = jnp.where(up, raw + uint.type(1), raw - uint.type(1))
    zero = np.array(ml_dtypes.finfo(x.dtype).smallest_subnormal * direction, x.dtype).view(uint)
    return lax.bitcast_convert_type(jnp.where(x == 0, uint.type(zero), step), x.dtype)


@_one_device
def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Any:
    """Normal floats conditioned on lower < x < upper."""
    dtype = _float_dtype("truncated_normal", dtype)
    shape = (np.broadcast_shapes(np.shape(lower), np.shape(upper)) if shape is None
             else _shape("truncated_normal", shape))
    _broadcastable("truncated_normal", shape, lower, upper)
    return _truncated_normal(_one_key("truncated_normal", key), tuple(shape), dtype, lower,
                             upper)


@jit(static_argnums=(1, 2))
def _randint(k: Any, shape: tuple[int, ...], dtype: np.dtype, minval: Any,
             maxval: Any) -> Any:
    info = np.iinfo(dtype)
    nbits = info.bits
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    too_high = maxval > _clip_integer(jnp.asarray(info.max, dtype), maxval.dtype)
    minval, maxval = _clip_integer(minval, dtype), _clip_integer(maxval, dtype)
    k1, k2 = _split(k, (2,))
    higher, lower = _bits(k1, nbits, shape), _bits(k2, nbits, shape)
    unsigned = _UINT[nbits]
    span = (maxval - minval).astype(unsigned)
    span = jnp.where(maxval <= minval, unsigned.type(1), span)  # then minval is returned
    span = jnp.where(too_high & (maxval > minval), span + unsigned.type(1), span)
    # (hi * 2**nbits + lo) % span, without overflow: 2**nbits % span by halves.
    multiplier = lax.rem(unsigned.type(1 << (nbits // 2)), span)
    multiplier = lax.rem(multiplier * multiplier, span)
    offset = lax.rem(lax.rem(higher, span) * multiplier + lax.rem(lower, span), span)
    return minval + offset.astype(dtype)


def _clip_integer(x: Any, dtype: np.dtype) -> Any:
    """`x` converted to `dtype`, clipped to its range rather than wrapped."""
    lo = max(np.iinfo(dtype).min, np.iinfo(x.dtype).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(x.dtype).max)
    return jnp.clip(x, x.dtype.type(lo), x.dtype.type(hi)).astype(dtype)


@_one_device
def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any,
            dtype: Any = None) -> Any:
    """Integers in [minval, maxval) (slightly biased when the span is not a power of two,
    as JAX's: two words of bits per value keep the bias small)."""
    dtype = _dt.default_int() if dtype is None else _dt.canonicalize(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"randint requires an integer dtype, got {dtype}")
    shape = _shape("randint", shape)
    _broadcastable("randint", shape, minval, maxval)
    bounds = [jnp.asarray(v) for v in (minval, maxval)]
    bounds = [b if b.dtype.kind in "iu" else b.astype(_dt.default_int()) for b in bounds]
    info = np.iinfo(dtype)
    if info.bits < 32:  # sampled in 32 bits (narrower spans would be biased), as JAX does
        low, high = (b.astype(np.int32) for b in bounds)
        bounds = [jnp.clip(low, int(info.min), int(info.max)),
                  jnp.clip(high, int(info.min), int(info.max) + 1)]
        return _randint(_one_key("randint", key), shape, np.dtype(np.int32),
                        *bounds).astype(dtype)
    return _randint(_one_key("randint", key), shape, dtype, *bounds)


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Any:
    """Booleans, True with probability `p`."""
    p = jnp.asarray(p)
    if kind(p.dtype) != "f":
        p = p.astype(_dt.default_float())
    shape = p.shape if shape is None else _shape("bernoulli", shape)
    _broadcastable("bernoulli", shape, p)
    return uniform(key, shape, p.dtype) < p


@jit(static_argnums=(1, 2))
def _gumbel(k: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = _uniform(k, shape, dtype, ml_dtypes.finfo(dtype).tiny, dtype.type(1.0))
    return -jnp.log(-jnp.log(u))


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    return _gumbel(_one_key("gumbel", key), _shape("gumbel", shape),
                   _float_dtype("gumbel", dtype))


@jit(static_argnums=(1, 2))
def _exponential(k: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return -jnp.log1p(-_uniform(k, shape, dtype, dtype.type(0.0), dtype.type(1.0)))


@_one_device
def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    return _exponential(_one_key("exponential", key), _shape("exponential", shape),
                        _float_dtype("exponential", dtype))


@jnp._base._eager_jit("axis", "shape")  # eagerly one module: gumbel and argmax
def categorical(key: Any, logits: Any, axis: int = -1,
                shape: Sequence[int] | None = None) -> Any:
    """Indices drawn with probabilities softmax(logits) along `axis` (the Gumbel-max trick,
    as JAX: argmax of logits plus Gumbel noise)."""
    logits = jnp.asarray(logits)
    axis = axis % logits.ndim
    batch = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = batch if shape is None else _shape("categorical", shape)
    if shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"categorical requires a shape ending in the batch shape {batch}, "
                         f"got {shape}")
    prefix = shape[:len(shape) - len(batch)]
    noise_shape = (*prefix, *batch[:axis], logits.shape[axis], *batch[axis:])
    noise = gumbel(key, noise_shape, logits.dtype)
    expanded = jnp.reshape(logits, (1,) * len(prefix) + logits.shape)
    return jnp.argmax(noise + expanded, axis=len(prefix) + axis)


@_one_device
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A shuffled arange(x) for an int `x`, else `x`'s slices along `axis` shuffled (with
    `independent`, each 1-d line along `axis` shuffled on its own)."""
    k = _one_key("permutation", key)
    if isinstance(x, (int, np.integer)):
        return _permuted_range(k, int(x))
    x = jnp.asarray(x)
    if not x.ndim:
        raise TypeError("permutation requires an int or an array of at least one dimension")
    return _permuted(k, x, axis % x.ndim, bool(independent))


@jit(static_argnums=1)
def _permuted_range(k: Any, n: int) -> Any:
    return _shuffle(k, jnp.arange(n), 0)


@jnp._base._eager_jit("axis", "independent")  # eagerly one module: the sort rounds
def _permuted(k: Any, x: Any, axis: int, independent: bool) -> Any:
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    return jnp.take(x, _shuffle(k, jnp.arange(x.shape[axis]), 0), axis=axis)


def _shuffle(k: Any, x: Any, axis: int) -> Any:
    """Sorts by fresh random 32-bit keys, enough rounds that ties are unlikely (JAX's
    heuristic: ceil(3 ln n / ln(2**32 - 1)) rounds)."""
    uint32max = np.iinfo(np.uint32).max
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(uint32max)))
    for _ in range(rounds):
        k, sub = split(k)
        _, x = lax.sort_key_val(bits(sub, x.shape), x, axis)
    return x


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True,
           p: Any = None, axis: int = 0) -> Any:
    """Samples of `a` (or of arange(a) for an int), with or without replacement, with
    probabilities `p` if given."""
    shape = _shape("choice", shape)
    arr = None if isinstance(a, (int, np.integer)) else jnp.asarray(a)
    n = int(a) if arr is None else arr.shape[axis]
    count = math.prod(shape)
    if n == 0 and count:
        raise ValueError("choice requires a non-empty a when the shape is not empty")
    if not replace and count > n:
        raise ValueError(f"choice requires shape of at most {n} elements without "
                         f"replacement, got {shape}")
    k = _one_key("choice", key)
    if p is not None:
        p = jnp.asarray(p)
        if p.shape != (n,):
            raise ValueError(f"choice requires p of shape ({n},), got {list(p.shape)}")
    return _choice(k, arr, n, shape, bool(replace), p, axis)


@jnp._base._eager_jit("n", "shape", "replace", "axis")  # eagerly one module
def _choice(k: Any, arr: Any, n: int, shape: tuple[int, ...], replace: bool, p: Any,
            axis: int) -> Any:
    count = math.prod(shape)
    if p is None:
        if replace:
            index = randint(k, shape, 0, n)
        else:
            index = jnp.reshape(permutation(k, n)[:count], shape)
    else:
        if not replace:
            g = gumbel(k, (n,), p.dtype) + jnp.log(p)
            index = jnp.reshape(jnp.argsort(-g)[:count], shape)
        else:
            cdf = jnp.cumsum(p)
            r = cdf[-1] * (1 - uniform(k, shape, cdf.dtype))
            index = jnp.sum(jnp.reshape(cdf, (1,) * len(shape) + (n,)) < r[..., None],
                            axis=-1).astype(_dt.default_int())
    if arr is None:
        return index
    return jnp.take(arr, index, axis=axis)


# ----------------------------------------------------------------------------- transforms of
# one uniform, normal or exponential draw (their values JAX's, to a few ulps: test_random)

def _param_shape(name: str, shape: Sequence[int] | None, *params: Any) -> tuple[int, ...]:
    """`shape`, checked against the parameters, or (None) their broadcast shape."""
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))
        except ValueError:
            raise ValueError(f"{name} requires parameters that broadcast together, got shapes "
                             f"{[np.shape(p) for p in params]}") from None
    shape = _shape(name, shape)
    _broadcastable(name, shape, *params)
    return shape


def _open_unit(k: Any, shape: tuple[int, ...], dtype: np.dtype, low: Any) -> Any:
    return _uniform(k, shape, dtype, low, dtype.type(1.0))


@jit(static_argnums=(1, 2, 3))
def _standard(k: Any, shape: tuple[int, ...], dtype: np.dtype, name: str) -> Any:
    info = ml_dtypes.finfo(dtype)
    if name == "cauchy":
        u = _open_unit(k, shape, dtype, info.eps)
        return jnp.tan(dtype.type(np.pi) * (u - dtype.type(0.5)))
    if name == "laplace":
        u = _open_unit(k, shape, dtype, np.nextafter(dtype.type(-1.0), dtype.type(0.0)))
        return jnp.sign(u) * jnp.log1p(-jnp.abs(u))
    if name == "logistic":
        u = _open_unit(k, shape, dtype, info.tiny)
        return jnp.log(u) - jnp.log1p(-u)
    raise AssertionError(name)


def _standard_sampler(name: str, what: str) -> Any:
    def sample(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
        return _standard(_one_key(name, key), _shape(name, shape), _float_dtype(name, dtype),
                         name)

    sample.__name__ = sample.__qualname__ = name
    sample.__doc__ = f"Standard {what} floats, from one uniform draw as JAX's."
    return _one_device(sample)


cauchy = _standard_sampler("cauchy", "Cauchy")
laplace = _standard_sampler("laplace", "Laplace")
logistic = _standard_sampler("logistic", "logistic")


@jit(static_argnums=(1, 2))
def _rayleigh(k: Any, shape: tuple[int, ...], dtype: np.dtype, scale: Any) -> Any:
    u = _open_unit(k, shape, dtype, ml_dtypes.finfo(dtype).tiny)
    return jnp.sqrt(dtype.type(-2.0) * jnp.log(u)) * jnp.asarray(scale, dtype)


@_one_device
def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Rayleigh floats of scale `scale`: scale * sqrt(-2 log u)."""
    shape = _param_shape("rayleigh", shape, scale)
    return _rayleigh(_one_key("rayleigh", key), shape, _float_dtype("rayleigh", dtype), scale)


@jit(static_argnums=(1, 2))
def _pareto(k: Any, shape: tuple[int, ...], dtype: np.dtype, b: Any) -> Any:
    return jnp.exp(_exponential(k, shape, dtype) / jnp.asarray(b, dtype))


@_one_device
def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto floats of shape parameter `b` (at least 1): exp(e / b) of an exponential e."""
    shape = _param_shape("pareto", shape, b)
    return _pareto(_one_key("pareto", key), shape, _float_dtype("pareto", dtype), b)


@jit(static_argnums=(1, 2))
def _weibull_min(k: Any, shape: tuple[int, ...], dtype: np.dtype, scale: Any,
                 concentration: Any) -> Any:
    u = _open_unit(k, shape, dtype, dtype.type(0.0))
    c = jnp.asarray(concentration, dtype)
    return jnp.power(-jnp.log1p(-u), dtype.type(1.0) / c) * jnp.asarray(scale, dtype)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] | None = None,
                dtype: Any = None) -> Any:
    """Weibull floats: scale * (-log(1 - u)) ** (1 / concentration)."""
    shape = _param_shape("weibull_min", shape, scale, concentration)
    return _weibull_min(_one_key("weibull_min", key), shape,
                        _float_dtype("weibull_min", dtype), scale, concentration)


@jit(static_argnums=(1, 2))
def _lognormal(k: Any, shape: tuple[int, ...], dtype: np.dtype, sigma: Any) -> Any:
    return jnp.exp(_normal(k, shape, dtype) * jnp.asarray(sigma, dtype))


@_one_device
def lognormal(key: Any, sigma: Any = 1.0, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Log-normal floats: exp(sigma * n) of a standard normal n."""
    shape = _param_shape("lognormal", shape, sigma)
    return _lognormal(_one_key("lognormal", key), shape, _float_dtype("lognormal", dtype),
                      sigma)


@_one_device
def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """-1 or 1 with equal probability (integers by default)."""
    dtype = _dt.default_int() if dtype is None else np.dtype(dtype)
    return (2 * bernoulli(key, 0.5, _shape("rademacher", shape)).astype(dtype) - 1).astype(dtype)


@jit(static_argnums=(1, 2))
def _maxwell(k: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return jnp.sqrt(jnp.sum(jnp.square(_normal(k, (*shape, 3), dtype)), axis=-1))


@_one_device
def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Maxwell floats: the length of a standard normal 3-vector."""
    return _maxwell(_one_key("maxwell", key), _shape("maxwell", shape),
                    _float_dtype("maxwell", dtype))


@_one_device
def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Any:
    """loc + scale * s * m: a Maxwell float m (the key's first half) and a random sign s
    (its second), of `shape` followed by the shape loc and scale broadcast to (as JAX)."""
    dtype = _float_dtype("double_sided_maxwell", dtype)
    shape = (*_shape("double_sided_maxwell", shape),
             *_param_shape("double_sided_maxwell", None, loc, scale))
    halves = _split(_one_key("double_sided_maxwell", key), (2,))
    sign = rademacher(halves[1], shape, dtype)
    return jnp.asarray(loc, dtype) + jnp.asarray(scale, dtype) * sign * _maxwell(halves[0],
                                                                                shape, dtype)


@jit(static_argnums=(1, 2))
def _triangular(k: Any, shape: tuple[int, ...], dtype: np.dtype, left: Any, mode: Any,
                right: Any) -> Any:
    left, mode, right = (jnp.asarray(v, dtype) for v in (left, mode, right))
    u = _uniform(k, shape, dtype, dtype.type(0.0), dtype.type(1.0))
    below = left + jnp.sqrt(u * (right - left) * (mode - left))
    above = right - jnp.sqrt((dtype.type(1.0) - u) * (right - left) * (right - mode))
    return jnp.where(u < (mode - left) / (right - left), below, above)


@_one_device
def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: Any = None) -> Any:
    """Triangular floats on [left, right] peaking at `mode`: the inverse CDF of a uniform."""
    shape = _param_shape("triangular", shape, left, mode, right)
    return _triangular(_one_key("triangular", key), shape, _float_dtype("triangular", dtype),
                       left, mode, right)


__all__ = ["PRNGKey", "bernoulli", "bits", "categorical", "cauchy", "choice", "exponential",
           "double_sided_maxwell", "fold_in", "gumbel", "key", "key_data", "laplace",
           "logistic", "lognormal", "maxwell", "normal", "pareto", "permutation", "rademacher",
           "randint", "rayleigh", "split", "triangular", "truncated_normal", "uniform",
           "weibull_min", "wrap_key_data"]
