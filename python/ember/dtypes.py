"""`ember.dtypes`: JAX's `jax.dtypes`: dtype facts and promotion, from Ember's one promotion
lattice (_src/dtypes.py)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ember._src import dtypes as _dt

bfloat16 = ml_dtypes.bfloat16
finfo = ml_dtypes.finfo  # NumPy's, extended to bfloat16 and the float8 types
iinfo = ml_dtypes.iinfo  # NumPy's, extended to int4 and uint4
# The tangent dtype of integer and boolean values (a void of no bytes), as JAX's.
float0 = np.dtype([("float0", np.void, 0)])


class TypePromotionError(ValueError):
    """Raised where two dtypes have no promotion (JAX's strict promotion mode)."""


class extended(np.generic):  # noqa: N801 - JAX's name
    """The scalar type above dtypes that are not NumPy's (JAX's PRNG keys)."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """The scalar type of typed PRNG keys."""


_ML_FLOATS = {np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                    ml_dtypes.float8_e5m2)}
# ml_dtypes' narrow integers (a byte each in NumPy) and the bits they hold.
_NARROW_INTS = {np.dtype(ml_dtypes.int4): (np.signedinteger, 4),
                np.dtype(ml_dtypes.uint4): (np.unsignedinteger, 4),
                np.dtype(ml_dtypes.int2): (np.signedinteger, 2),
                np.dtype(ml_dtypes.uint2): (np.unsignedinteger, 2)}


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype Ember computes in for `dtype`: 64-bit types narrow to 32 bits unless x64
    is enabled."""
    return _dt.canonicalize(dtype)


def issubdtype(a: Any, b: Any) -> bool:
    """np.issubdtype that also places bfloat16 and the float8 types under np.floating, and
    int4, uint4, int2 and uint2 under their integer kinds, as JAX's does."""
    if isinstance(b, type) and issubclass(b, extended):
        return isinstance(a, type) and issubclass(a, b)
    try:
        dtype = np.dtype(a)
    except TypeError:
        return False
    if dtype in _ML_FLOATS and b in (np.floating, np.inexact, np.number, np.generic):
        return True
    if dtype in _NARROW_INTS:
        if b in (_NARROW_INTS[dtype][0], np.integer, np.number, np.generic):
            return True
        try:
            return np.dtype(b) == dtype
        except TypeError:  # another abstract kind (np.floating, ...)
            return False
    return bool(np.issubdtype(dtype, b))


def itemsize_bits(dtype: Any) -> int:
    """The bits one element takes (4 for int4, whose NumPy itemsize is a byte)."""
    dtype = np.dtype(dtype)
    if dtype in _NARROW_INTS:
        return _NARROW_INTS[dtype][1]
    if dtype.kind in "iu":
        return int(iinfo(dtype).bits)
    if dtype.kind == "f":
        return int(finfo(dtype).bits)
    return dtype.itemsize * 8


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype combining the arguments gives (Python scalars weakly typed); with
    `return_weak_type_flag`, (dtype, weak)."""
    dtype, weak = _dt.promote(*(_dt.dtype_and_weak(a) for a in args))
    return (dtype, weak) if return_weak_type_flag else dtype


def scalar_type_of(x: Any) -> type:
    """The Python scalar type of x's dtype: bool, int, float or complex."""
    dtype, _ = _dt.dtype_and_weak(x)
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[dtype.kind]


__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]
