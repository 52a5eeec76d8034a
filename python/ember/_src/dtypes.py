"""JAX's type promotion lattice, with weakly typed Python scalars, and dtype defaults."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ember import config
from ember.dialect.types import SUPPORTED_DTYPES, ShapedArray, bfloat16
from ember.runtime import Array, Device, get as get_device, platform_of, put

_b, _i8, _i16, _i32, _i64 = (np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32,
                                                   np.int64))
_u8, _u16, _u32, _u64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
_f16, _f32, _f64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
_bf16 = bfloat16
_c64, _c128 = np.dtype(np.complex64), np.dtype(np.complex128)
# Weak kinds: the types of Python int/float/complex scalars (and of weakly typed arrays).
INT_WEAK, FLOAT_WEAK, COMPLEX_WEAK = "i*", "f*", "c*"

_EDGES: dict[Any, tuple] = {
    _b: (INT_WEAK,),
    INT_WEAK: (_u8, _i8),
    _u8: (_i16, _u16), _u16: (_i32, _u32), _u32: (_i64, _u64), _u64: (FLOAT_WEAK,),
    _i8: (_i16,), _i16: (_i32,), _i32: (_i64,), _i64: (FLOAT_WEAK,),
    FLOAT_WEAK: (COMPLEX_WEAK, _bf16, _f16), _bf16: (_f32,), _f16: (_f32,),
    _f32: (_f64, _c64), _f64: (_c128,), COMPLEX_WEAK: (_c64,), _c64: (_c128,), _c128: (),
}


@functools.cache
def _upper(node) -> frozenset:
    """Every node at or above `node` in the lattice."""
    return frozenset({node}).union(*(_upper(n) for n in _EDGES[node]))


@functools.cache
def _join(nodes: frozenset):
    common = frozenset.intersection(*(_upper(n) for n in nodes))
    # The least upper bound is the common node that all other common nodes sit above.
    for candidate in common:
        if common <= _upper(candidate):
            return candidate
    raise TypeError(f"no common type for {sorted(map(str, nodes))}")


def default_int() -> np.dtype:
    return _i64 if config.read("ember_enable_x64") else _i32


def default_float() -> np.dtype:
    return _f64 if config.read("ember_enable_x64") else _f32


def default_complex() -> np.dtype:
    return _c128 if config.read("ember_enable_x64") else _c64


def canonicalize(dtype: Any) -> np.dtype:
    """64-bit types narrow to 32-bit unless x64 is enabled (as in JAX)."""
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"ember does not support dtype {dtype}; supported: "
                        f"{[str(d) for d in SUPPORTED_DTYPES]}")
    if not config.read("ember_enable_x64"):
        dtype = {_i64: _i32, _u64: _u32, _f64: _f32, _c128: _c64}.get(dtype, dtype)
    return dtype


def _node(dtype: np.dtype, weak: bool):
    if not weak:
        return dtype
    return {"i": INT_WEAK, "u": INT_WEAK, "f": FLOAT_WEAK, "V": FLOAT_WEAK,
            "c": COMPLEX_WEAK}.get(dtype.kind, dtype)


def promote(*types: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """(dtype, weak) of the result of combining values of these (dtype, weak) types."""
    joined = _join(frozenset(_node(d, w) for d, w in types))
    if joined == INT_WEAK:
        return default_int(), True
    if joined == FLOAT_WEAK:
        return default_float(), True
    if joined == COMPLEX_WEAK:
        return default_complex(), True
    return canonicalize(joined), False


def result_type(*args: Any) -> np.dtype:
    return promote(*(dtype_and_weak(a) for a in args))[0]


def promote_types(a: Any, b: Any) -> np.dtype:
    return promote((np.dtype(a), False), (np.dtype(b), False))[0]


def dtype_and_weak(x: Any) -> tuple[np.dtype, bool]:
    """The (dtype, weak_type) a value has when it enters an ember computation."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):  # before float: np.float64 is a float
        return canonicalize(x.dtype), False  # NumPy scalars are strongly typed, as in JAX
    if isinstance(x, bool):
        return _b, False
    if isinstance(x, int):
        return default_int(), True
    if isinstance(x, float):
        return default_float(), True
    if isinstance(x, complex):
        return default_complex(), True
    if isinstance(x, (np.dtype, type)):
        return canonicalize(x), False
    if isinstance(getattr(x, "dtype", None), np.dtype):  # jnp.int32 and other dtype-likes
        return canonicalize(x.dtype), False
    raise TypeError(f"ember cannot interpret a value of type {type(x).__name__} as an array")


def default_device() -> Device:
    """The runtime device `ember_default_device` names."""
    return get_device(platform_of(config.read("ember_default_device")))


def as_array(x: Any, device: Device | None = None) -> Array:
    """`x` as an ember.Array with the dtype it has in JAX (a copy of host data; ember arrays
    pass through, or are copied to `device` when they live on another)."""
    if isinstance(x, Array):
        if device is None or x.device == device:
            return x
        return put(np.asarray(x), x.aval, device)
    dtype, weak = dtype_and_weak(x)
    value = np.asarray(x, dtype)
    return put(value, ShapedArray(value.shape, dtype, weak), device or default_device())


def check_python_int(x: Any, dtype: np.dtype) -> None:
    """A Python int must fit the integer type it becomes (as JAX checks); NumPy would wrap
    it silently when converting an int64 array."""
    if type(x) is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} is too large to convert to {dtype} (the "
                                f"range is {info.min} to {info.max}); pass a NumPy array "
                                f"of a wider type, or turn on ember_enable_x64")


def is_python_scalar(x: Any) -> bool:
    return type(x) in (int, float, bool, complex)
