"""The basics every part of `ember.numpy` builds on: dtypes, asarray, promotion and
broadcasting of operands, and eagerly fused op wrappers.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from ember.dialect import ops
from ember.dialect.opdef import VerifyError
from ember.dialect.types import SUPPORTED_DTYPES, ShapedArray, bfloat16 as _bfloat16, kind
from ember.runtime import Array, devices as runtime_devices, get as get_device

from .._src import dtypes as _dt
from .._src.core import Tracer, current_trace
from .._src.dispatch import bind, constant
from .._src.jit import EagerFunction

_IMPORTED = set(globals())  # what this module defines is exported: the rest


ndarray = Array


class _ScalarType:
    """`jnp.int32` and its kin, as JAX has them: a dtype (NumPy reads its `dtype`, so
    `np.dtype(jnp.int32)`, `np.zeros(3, jnp.int32)` and `x.dtype == jnp.int32` work) that is
    also callable: `jnp.int32(5)` is a 0-d int32 array, `jnp.float32(x)` converts `x`."""

    __slots__ = ("dtype", "__name__")

    def __init__(self, dtype: Any):
        self.dtype = np.dtype(dtype)
        self.__name__ = self.dtype.name

    def __call__(self, x: Any = 0) -> Any:
        return asarray(x, self.dtype)

    def __eq__(self, other: object) -> bool:
        try:
            return self.dtype == np.dtype(other)
        except (TypeError, ValueError):  # not a dtype (np.dtype raises either)
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __repr__(self) -> str:
        return f"ember.numpy.{self.__name__}"


bool_ = _ScalarType(np.bool_)
int8, int16, int32, int64 = (_ScalarType(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (_ScalarType(t) for t in (np.uint8, np.uint16, np.uint32,
                                                          np.uint64))
float16, float32, float64 = (_ScalarType(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = _ScalarType(_bfloat16)
complex64, complex128 = _ScalarType(np.complex64), _ScalarType(np.complex128)
complex_ = complex128
# NumPy's other names for them (64-bit ones narrow to 32 bits unless x64 is enabled; `bool`
# is bound in __init__, where no code of the package reads the builtin)
single, double, float_ = float32, float64, float64
csingle, cdouble = complex64, complex128
int_, uint = int64, uint64
# The abstract kinds, for issubdtype (bfloat16 counts as floating, as in JAX).
generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating = np.complexfloating
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
character, flexible, object_ = np.character, np.flexible, np.object_
ComplexWarning = np.exceptions.ComplexWarning
pi, e, inf, nan = np.pi, np.e, np.inf, np.nan
result_type = _dt.result_type
promote_types = _dt.promote_types
finfo = ml_dtypes.finfo  # NumPy's, extended to bfloat16
iinfo = ml_dtypes.iinfo
dtype = np.dtype


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """NumPy's, with bfloat16 a floating type (ml_dtypes' is not one to NumPy)."""
    try:
        if np.dtype(arg1) == _bfloat16:
            return arg2 in (np.floating, np.inexact, np.number, np.generic) or (
                not isinstance(arg2, type) and np.dtype(arg2) == _bfloat16)
    except TypeError:
        pass
    return np.issubdtype(arg1, arg2)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    return np.can_cast(from_, to, casting)

_ARRAY_TYPES = (Array, Tracer)




def _aval(x: Any) -> ShapedArray:
    if isinstance(x, _ARRAY_TYPES):
        return x.aval
    dtype, weak = _dt.dtype_and_weak(x)
    return ShapedArray(np.shape(x), dtype, weak)


def _placed(f: Callable) -> Callable:
    """`f` with the array API's `device=` keyword: its result is put on that device (a
    Device or a platform name). Under a trace the jitted function's placement holds."""
    @functools.wraps(f)
    def run(*args: Any, device: Any = None, **kwargs: Any) -> Any:
        out = f(*args, **kwargs)
        return out if device is None or current_trace() is not None else _on(out, device)

    sig = inspect.signature(f)
    run.__signature__ = sig.replace(parameters=[*sig.parameters.values(), inspect.Parameter(
        "device", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return run


def _on(x: Any, device: Any) -> Any:
    return _dt.as_array(x, get_device(device) if isinstance(device, str) else device)


def asarray(x: Any, dtype: Any = None, copy: bool | None = None, *,
            device: Any = None) -> Any:
    """An ember array for `x` (no copy for ember arrays and tracers of the right dtype,
    unless `copy`; host data is always copied to the device), on `device` if given."""
    if device is not None and current_trace() is None:
        return _on(asarray(x, dtype, copy), device)
    if copy and isinstance(x, Array):  # host data is copied to the device anyway
        out = asarray(x, dtype)
        return _copy(out) if out is x else out
    if isinstance(x, _ARRAY_TYPES):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, (list, tuple)) and builtins.any(isinstance(v, _ARRAY_TYPES) for v in x):
        out = _stack_rows([asarray(v) for v in x])
        return out if dtype is None else astype(out, dtype)
    if dtype is not None:
        return constant(np.asarray(x, _dt.canonicalize(dtype)))
    if _dt.is_python_scalar(x):
        value_dtype, weak = _dt.dtype_and_weak(x)
        return constant(np.asarray(x, value_dtype), weak)
    value = np.asarray(x)
    if not isinstance(x, (np.ndarray, np.generic)):  # Python ints must fit, as in JAX
        return constant(np.asarray(x, _dt.canonicalize(value.dtype)))
    return constant(value.astype(_dt.canonicalize(value.dtype), copy=False))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An ember array with the value of a DLPack producer on the host (a NumPy array, a
    torch CPU tensor, an ember or JAX CPU array): copied, as every host value is."""
    return asarray(np.from_dlpack(x), device=device)


def array(x: Any, dtype: Any = None, copy: bool = True, *, device: Any = None) -> Any:
    """asarray, copying by default (as np.array and jnp.array)."""
    return asarray(x, dtype, copy=copy, device=device)


def copy(a: Any) -> Any:
    """A copy of `a` in a buffer of its own (what donating it cannot touch)."""
    return asarray(a, copy=True)


def _copy(x: Any) -> Any:
    # Under a trace, values are immutable: the copy is the value (bufferization decides).
    return x if isinstance(x, Tracer) else bind(ops.COPY, x)


def _lift(x: Any, dtype: np.dtype, weak: bool) -> Any:
    """`x` as an array of `dtype`, converting (or materializing a scalar) as needed."""
    if isinstance(x, _ARRAY_TYPES):
        if x.dtype == dtype:
            return x
        return bind(ops.CONVERT, x, dtype=dtype, weak_type=weak)
    return constant(np.asarray(x, dtype=dtype), weak and _dt.is_python_scalar(x))


def _broadcast(x: Any, shape: tuple[int, ...]) -> Any:
    if tuple(x.shape) == tuple(shape):
        return x
    lead = len(shape) - x.ndim
    return bind(ops.BROADCAST_IN_DIM, x, shape=tuple(shape),
                broadcast_dimensions=tuple(range(lead, len(shape))))


def _shape_of(*xs: Any, name: str = "broadcast") -> tuple[int, ...]:
    shapes = [tuple(x.shape) if isinstance(x, _ARRAY_TYPES) else np.shape(x) for x in xs]
    ndim = builtins.max(map(len, shapes), default=0)
    out = []
    for axis in range(-ndim, 0):  # NumPy's rule, also for symbolic dims (types.Dim)
        sizes = {s[axis] for s in shapes if len(s) >= -axis and s[axis] != 1}
        if len(sizes) > 1:
            raise ValueError(f"{name} requires shapes that broadcast together, got {shapes}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _promoted(*xs: Any, to_float: bool = False, name: str = "broadcast") -> list[Any]:
    dtype, weak = _dt.promote(*(_dt.dtype_and_weak(x) for x in xs))
    if to_float and kind(dtype) not in "fc":
        dtype = _dt.default_float()
    shape = _shape_of(*xs, name=name)
    return [_broadcast(_lift(x, dtype, weak), shape) for x in xs]


def _eager_as_one_module(impl, elementwise: bool = False):
    """Outside a trace, run `impl` as one compiled module, so scalar broadcasts and dtype
    conversions fuse into the op instead of each materializing an array (eager SELU on 1M
    floats: 10 dispatches become 6). Compiled once per signature, like any jit.

    An `elementwise` impl whose array arguments share one shape of rank 3 or more (the
    others scalars) runs on them seen as matrices (the trailing axes merged): one kernel
    serves every rank from 2 up (a matrix, a batch of matrices, of images). Matrices call
    their kernel directly (views cost ~15 us a call: most eager calls are on them)."""
    jitted = EagerFunction(impl)

    @functools.wraps(impl)
    def run(*xs: Any) -> Any:
        if current_trace() is not None:
            return impl(*xs)
        shape = _common_shape(xs) if elementwise else None
        if shape is None:
            return jitted(*xs)
        out = jitted(*(_flat(x) for x in xs))
        return out._viewed_as(_as_shape(out.aval, shape))

    return run


def _eager_elementwise(impl):
    """`_eager_as_one_module` for an elementwise function (a ufunc)."""
    return _eager_as_one_module(impl, elementwise=True)


def _common_shape(xs: tuple) -> tuple[int, ...] | None:
    """The one shape of rank 3 or more (and not empty) that every argument but scalars has
    (None if there is none)."""
    shapes = {x.shape for x in xs if type(x) is Array and x.ndim}
    if len(shapes) != 1 or any(type(x) is not Array and np.ndim(x) for x in xs):
        return None
    (shape,) = shapes
    return shape if len(shape) > 2 and 0 not in shape else None


def _flat(x: Any) -> Any:
    """An array argument seen as a matrix, its trailing axes merged (for the call to read:
    it shares x's buffer)."""
    if type(x) is not Array or not x.ndim:
        return x
    return x._viewed_as(_as_shape(x.aval, (x.shape[0], x.size // x.shape[0])))


@functools.lru_cache(maxsize=1024)
def _as_shape(aval: ShapedArray, shape: tuple[int, ...]) -> ShapedArray:
    """`aval` at another shape (kept: an aval is hashed on each call it is a key of)."""
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _eager_jit(*statics: str):
    """`_eager_as_one_module` for a function of several arrays and static parameters (named
    `statics`): eager `interp(x, xp, fp)` is one module, not two dozen eager kernels of
    ~0.3 s each to compile (6.8 s cold; searchsorted 5.5 s, take_along_axis 5.5 s). Unhashable
    statics run op by op."""
    def wrap(impl):
        positional = (inspect.Parameter.POSITIONAL_ONLY,
                      inspect.Parameter.POSITIONAL_OR_KEYWORD)
        nums = tuple(i for i, p in enumerate(inspect.signature(impl).parameters.values())
                     if p.name in statics and p.kind in positional)
        jitted = EagerFunction(impl, static_argnums=nums, static_argnames=statics)

        @functools.wraps(impl)
        def run(*args: Any, **kwargs: Any) -> Any:
            if current_trace() is not None or any(isinstance(a, Tracer) for a in args):
                return impl(*args, **kwargs)
            try:
                hash((tuple(args[i] for i in nums if i < len(args)),
                      tuple(v for k, v in kwargs.items() if k in statics)))
            except TypeError:
                return impl(*args, **kwargs)
            return jitted(*args, **kwargs)

        return run
    return wrap


def _eager_with_statics(impl):
    """`_eager_as_one_module` for a function of one array whose other parameters (axis,
    keepdims, dtype, ddof) are static: eager `mean(x, axis=0)` is one compiled module (it
    was a reduction and a division, argmax nine), compiled once per array signature and
    static values. Unhashable statics (an axis list) run op by op."""
    params = list(inspect.signature(impl).parameters.values())[1:]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    jitted = EagerFunction(impl,
                           static_argnums=tuple(i for i, p in enumerate(params, 1)
                                                if p.kind in positional),
                           static_argnames=tuple(p.name for p in params))

    @functools.wraps(impl)
    def run(a: Any, *args: Any, **kwargs: Any) -> Any:
        if current_trace() is not None or isinstance(a, Tracer):
            return impl(a, *args, **kwargs)
        try:
            hash((args, tuple(kwargs.values())))
        except TypeError:
            return impl(a, *args, **kwargs)
        return jitted.call_one_array(a if isinstance(a, Array) else asarray(a), *args,
                                     **kwargs)

    return run


@functools.cache
def _nary(op, to_float: bool = False):
    def impl(*xs: Any) -> Any:
        args = _promoted(*xs, to_float=to_float, name=op.name)
        try:
            return bind(op, *args)
        except VerifyError as e:  # a dtype the op does not take (bool - bool, say)
            raise TypeError(f"{op.name} does not support {args[0].dtype} arguments ({e}); "
                            f"convert them with .astype(...) first") from None

    impl.__name__ = impl.__qualname__ = op.name.removeprefix("ember.")
    return _eager_elementwise(impl)


@functools.cache
def _divide(to_float: bool):
    """x / y as XLA's CPU computes it: a float divisor broadcast to a larger shape (a scalar,
    a row of sums) is inverted once and multiplied, x * (1 / y), which is JAX's bits and a
    multiply per element instead of a divide (softmax 4096x1024: 1.57 -> 1.37 ms)."""
    def impl(x: Any, y: Any) -> Any:
        dtype, weak = _dt.promote(_dt.dtype_and_weak(x), _dt.dtype_and_weak(y))
        if to_float and kind(dtype) not in "fc":
            dtype = _dt.default_float()
        shape = _shape_of(x, y, name="ember.div")
        x, y = _lift(x, dtype, weak), _lift(y, dtype, weak)
        try:
            if kind(dtype) == "f" and tuple(y.shape) != shape:
                inverse = bind(ops.DIV, _broadcast(_lift(1, dtype, weak), tuple(y.shape)), y)
                return bind(ops.MUL, _broadcast(x, shape), _broadcast(inverse, shape))
            return bind(ops.DIV, _broadcast(x, shape), _broadcast(y, shape))
        except VerifyError as e:  # a dtype the op does not take (bool / bool, say)
            raise TypeError(f"ember.div does not support {dtype} arguments ({e}); "
                            f"convert them with .astype(...) first") from None

    impl.__name__ = impl.__qualname__ = "true_divide" if to_float else "div"
    return _eager_elementwise(impl)


@functools.cache
def _unary_float(op):
    def impl(x: Any) -> Any:
        dtype, weak = _dt.dtype_and_weak(x)
        if kind(dtype) not in "fc":
            dtype = _dt.default_float()
        if dtype.itemsize == 2:  # float16/bfloat16: computed in float32, as XLA's CPU does
            out = bind(op, _lift(x, np.dtype(np.float32), weak))
            return bind(ops.CONVERT, out, dtype=dtype, weak_type=weak)
        return bind(op, _lift(x, dtype, weak))

    impl.__name__ = impl.__qualname__ = op.name.removeprefix("ember.")
    return _eager_elementwise(impl)


def _stack_rows(values: list[Any]) -> Any:
    """`values` (arrays of one shape) stacked along a new leading axis, promoted."""
    shapes = {tuple(v.shape) for v in values}
    if len(shapes) != 1:
        raise ValueError(f"asarray requires sequences of one shape, got {sorted(shapes)}")
    dtype, weak = _dt.promote(*(_dt.dtype_and_weak(v) for v in values))
    rows = [bind(ops.RESHAPE, _lift(v, dtype, weak), shape=(1, *v.shape)) for v in values]
    return rows[0] if len(rows) == 1 else bind(ops.CONCATENATE, *rows, dimension=0)


def _promote_only(*xs: Any) -> list[Any]:
    dtype, weak = _dt.promote(*(_dt.dtype_and_weak(x) for x in xs))
    return [_lift(x, dtype, weak) for x in xs]


def astype(x, dtype, /, *, copy: bool = True, device: Any = None) -> Any:
    """`x` converted to `dtype` (arrays are immutable: `copy` changes nothing observable), on
    `device` if given."""
    if device is not None:
        return _on(astype(x, dtype), device)
    x = asarray(x)
    dtype = _dt.canonicalize(dtype)
    return x if x.dtype == dtype and not x.weak_type else bind(ops.CONVERT, x, dtype=dtype)


def shape(a) -> tuple[int, ...]:
    return tuple(_aval(a).shape)


def ndim(a) -> int:
    return len(shape(a))


def size(a) -> int:
    return math.prod(shape(a))


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether `dtype` is of `kind` (a dtype, one of the array API's kind names, or a tuple
    of them), as the array API standard defines it."""
    dtype = np.dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype requires a dtype or one of {sorted(_KINDS)}, got "
                             f"{kind!r}")
        floating = dtype == ml_dtypes.bfloat16 and "f" in _KINDS[kind]
        return dtype.kind in _KINDS[kind] or floating
    return dtype == np.dtype(kind)


_ARRAY_API_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                               "uint32", "uint64", "float32", "float64", "complex64",
                               "complex128"})


class _NamespaceInfo:
    """What `__array_namespace_info__()` tells of ember.numpy (the array API's inspection
    object)."""

    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self) -> Any:
        return _dt.default_device()

    def devices(self) -> list[Any]:
        return list(runtime_devices())

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        return {"real floating": _dt.default_float(), "complex floating": _dt.default_complex(),
                "integral": _dt.default_int(), "indexing": _dt.default_int()}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype]:
        found = {}
        for d in SUPPORTED_DTYPES:
            d = np.dtype(d)
            # the standard's dtypes (not float16, bfloat16), 64-bit ones only with x64
            if d.name not in _ARRAY_API_DTYPES or _dt.canonicalize(d) != d:
                continue
            if kind is None or isdtype(d, kind):
                found[d.name] = d
        return found


def __array_namespace_info__() -> _NamespaceInfo:
    return _NamespaceInfo()


__all__ = [n for n in globals() if n not in _IMPORTED and not n.startswith("_")]
