"""Array creation: full, zeros, ones, arange and their _like forms.
"""

from __future__ import annotations

import numpy as np

from ember.dialect import ops
from ember.dialect.types import kind

from .._src import dtypes as _dt
from .._src.core import Tracer, current_trace
from .._src.dispatch import bind, constant
from ..errors import ConcretizationTypeError
from ._base import _ARRAY_TYPES, _aval, _broadcast, _nary, _placed, astype

_IMPORTED = set(globals())  # what this module defines is exported: the rest


@_placed
def full(shape, fill_value, dtype=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype is None:
        dtype = _dt.dtype_and_weak(fill_value)[0]
    dtype = _dt.canonicalize(dtype)
    if isinstance(fill_value, _ARRAY_TYPES):
        if np.broadcast_shapes(fill_value.shape, shape) != shape:
            raise ValueError(f"full requires a fill_value that broadcasts to {shape}, got "
                             f"shape {fill_value.shape}")
        return _broadcast(astype(fill_value, dtype), shape)
    if current_trace() is None:
        return constant(np.full(shape, fill_value, dtype))
    return _broadcast(constant(np.asarray(fill_value, dtype)), shape)


@_placed
def zeros(shape, dtype=None):
    return full(shape, 0, _dt.default_float() if dtype is None else dtype)


@_placed
def ones(shape, dtype=None):
    return full(shape, 1, _dt.default_float() if dtype is None else dtype)


@_placed
def zeros_like(a, dtype=None):
    return zeros(np.shape(a) if not isinstance(a, _ARRAY_TYPES) else a.shape,
                 dtype or _aval(a).dtype)


@_placed
def ones_like(a, dtype=None):
    return ones(a.shape if isinstance(a, _ARRAY_TYPES) else np.shape(a),
                dtype or _aval(a).dtype)


@_placed
def arange(start, stop=None, step=1, dtype=None):
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, Tracer):
            raise ConcretizationTypeError(
                f"arange requires a concrete {name} (its value sets the shape), got a traced "
                f"{v.aval.str_short()}. Mark the argument static (static_argnums) or pass a "
                f"Python number.")
    if stop is None:
        start, stop = 0, start
    values = np.arange(start, stop, step)
    if dtype is None:
        dtype = _dt.default_float() if values.dtype.kind == "f" else _dt.default_int()
    dtype = _dt.canonicalize(dtype)
    if current_trace() is None or values.size <= 1:
        return constant(values.astype(dtype))
    index = bind(ops.IOTA, dimension=0, shape=(values.size,),
                 dtype=dtype if kind(dtype) in "fiu" else _dt.default_int())
    return _nary(ops.ADD)(_nary(ops.MUL)(index, np.asarray(step, dtype)),
                         np.asarray(start, dtype))


__all__ = [n for n in globals() if n not in _IMPORTED and not n.startswith("_")]
