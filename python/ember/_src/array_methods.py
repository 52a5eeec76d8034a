"""Operators and methods shared by `ember.Array` and tracers, defined once from ember.numpy."""

from __future__ import annotations

import numpy as np

from ember import numpy as enp
from ember.numpy import indexing
from ember.runtime import Array

from .core import Tracer


def _swap(f):
    return lambda self, other: f(other, self)


_METHODS = {
    "__add__": enp.add, "__radd__": _swap(enp.add),
    "__sub__": enp.subtract, "__rsub__": _swap(enp.subtract),
    "__mul__": enp.multiply, "__rmul__": _swap(enp.multiply),
    "__truediv__": enp.true_divide, "__rtruediv__": _swap(enp.true_divide),
    "__pow__": enp.power, "__rpow__": _swap(enp.power),
    "__matmul__": enp.matmul, "__rmatmul__": _swap(enp.matmul),
    "__neg__": enp.negative, "__pos__": enp.positive, "__abs__": enp.absolute,
    "__lt__": enp.less, "__le__": enp.less_equal, "__gt__": enp.greater,
    "__ge__": enp.greater_equal, "__eq__": enp.equal, "__ne__": enp.not_equal,
    "__and__": enp.bitwise_and, "__rand__": _swap(enp.bitwise_and),
    "__or__": enp.bitwise_or, "__ror__": _swap(enp.bitwise_or),
    "__invert__": enp.invert,
    "__xor__": enp.bitwise_xor, "__rxor__": _swap(enp.bitwise_xor),
    "__floordiv__": enp.floor_divide, "__rfloordiv__": _swap(enp.floor_divide),
    "__mod__": enp.remainder, "__rmod__": _swap(enp.remainder),
    "__divmod__": enp.divmod, "__rdivmod__": _swap(enp.divmod),
    "__lshift__": enp.left_shift, "__rlshift__": _swap(enp.left_shift),
    "__rshift__": enp.right_shift, "__rrshift__": _swap(enp.right_shift),
    "astype": enp.astype, "reshape": lambda self, *shape: enp.reshape(
        self, shape[0] if len(shape) == 1 else shape),
    "transpose": lambda self, *axes: enp.transpose(self, axes or None),
    "sum": enp.sum, "max": enp.max, "min": enp.min, "mean": enp.mean, "prod": enp.prod,
    "var": enp.var, "std": enp.std, "any": enp.any, "all": enp.all, "argmax": enp.argmax,
    "argmin": enp.argmin, "cumsum": enp.cumsum, "cumprod": enp.cumprod, "sort": enp.sort,
    "argsort": enp.argsort, "clip": enp.clip, "round": enp.round, "ravel": enp.ravel,
    "flatten": enp.ravel, "squeeze": enp.squeeze, "swapaxes": enp.swapaxes,
    "dot": enp.dot, "take": enp.take, "repeat": enp.repeat,
    "copy": enp.copy, "conj": enp.conjugate, "conjugate": enp.conjugate,
    "real": property(enp.real), "imag": property(enp.imag),
    "T": property(lambda self: enp.transpose(self)),
    "mT": property(lambda self: enp.swapaxes(self, -1, -2)),
    "__getitem__": indexing.getitem, "__setitem__": indexing.immutable,
    "at": property(indexing.AtIndexer),
    "to_device": lambda self, device, /, *, stream=None: self if isinstance(self, Tracer)
    else enp._base._on(self, device),
    "__array_namespace__": lambda self, *, api_version=None: enp,
    # DLPack: a host copy of the value (CPU buffers; the copy keeps the array immutable)
    "__dlpack__": lambda self, /, *, stream=None, max_version=None, dl_device=None, copy=None: (
        np.array(self).__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device,
                                  copy=copy)),
    "__dlpack_device__": lambda self: (1, 0),  # kDLCPU
}


def install() -> None:
    for cls in (Array, Tracer):
        for name, method in _METHODS.items():
            setattr(cls, name, method)
        cls.__hash__ = None
