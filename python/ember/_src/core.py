"""Tracing: tracers carry abstract values and build ember IR (dispatch.bind is the door)."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import config, errors

try:  # every module that traces imports this one first
    from iree.compiler import ir as mlir
    from iree.compiler.dialects import func as func_d
except ModuleNotFoundError as e:
    if not (e.name or "").startswith("iree"):
        raise
    raise errors.CompilerNotInstalled("ember.numpy (and everything that traces)") from None

from ember.dialect import ir as eir, ops
from ember.dialect.ops import OpDef
from ember.dialect.types import ShapedArray

from . import dtypes
from .signature import call_site


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list[Trace] = []  # each thread's traces, innermost last


_local = _Local()


def _stack() -> list[Trace]:
    return _local.stack


def current_trace() -> Trace | None:
    stack = _local.stack
    return stack[-1] if stack else None


def defined_at(fun: Callable) -> str:
    """file:line where a Python function is defined (for messages and traces)."""
    code = getattr(fun, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else "<unknown>"


HOIST_BYTES = 1 << 20  # constants this large are passed as arguments of jitted functions


class Trace:
    """One function being traced: `main` of a new ember module, or (with a parent) the body
    of a region of a control-flow op, such as a branch of `cond` or a loop body. Regions see
    the values of the traces around them directly, as MLIR regions do."""

    # Whether the code runs on Ember's own CPU runtime with ember_cpu_lapack, so that
    # ember.numpy.linalg may bind the rows that call LAPACK there (set by jit on a root).
    lapack = False

    def __init__(self, fun_name: str, fun_location: str, in_avals: Sequence[ShapedArray],
                 arg_names: Sequence[str], fixes: Callable[[str], str] | None = None,
                 parent: Trace | None = None, block: mlir.Block | None = None,
                 hoist: bool = False):
        self.fun_name = fun_name
        # With `hoist`, large constants become trailing arguments of the function (their
        # values in `hoisted`) instead of literals in its IR (see emit_constant).
        self.root: Trace = parent.root if parent is not None else self
        self.hoist = hoist
        self.hoisted: list[np.ndarray] = []
        self.fun_location = fun_location
        self.fixes = fixes or (parent.fixes if parent else (lambda name: ""))
        self.parent = parent
        self.alive = True
        # With ember_check_tracer_leaks, every tracer made here, to find the ones that outlive
        # the trace (stored in a global, a closure, a list...).
        self.all_tracers: list[weakref.ref] | None = (
            [] if config.read("ember_check_tracer_leaks") else None)
        with eir.LOCK, eir.context(), mlir.Location.unknown():
            in_types = [eir.tensor_type(a) for a in in_avals]
            if parent is None:
                self.module = mlir.Module.create()
                self.module.operation.attributes["sym_name"] = mlir.StringAttr.get(
                    _symbol(fun_name))
                with mlir.InsertionPoint(self.module.body):
                    self.func = func_d.FuncOp("main", mlir.FunctionType.get(in_types, []))
                self.block = self.func.add_entry_block()
            else:
                self.module, self.func, self.block = parent.module, None, block
                for t in in_types:
                    block.add_argument(t, mlir.Location.unknown())
        self.args = [Tracer(self, aval, value, frozenset({name}))
                     for aval, value, name in zip(in_avals, self.block.arguments, arg_names,
                                                  strict=True)]
        self.constants: dict[int, Tracer] = {}

    def _enclosing(self, trace: Trace) -> bool:
        t = self.parent
        while t is not None:
            if t is trace:
                return True
            t = t.parent
        return False

    def __enter__(self) -> Trace:
        _stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        _stack().pop()
        self.alive = False

    def emit(self, op: OpDef, operands: Sequence[Any], params: dict,
             regions: Regions | None = None) -> Any:
        """Append `op`; its Tracer, or a list of them for ops with variadic results. An op
        with regions takes the blocks traced into `regions`."""
        tracers = [self.lift(x) for x in operands]
        inferred = op.infer(*(t.aval for t in tracers), **params)
        with eir.LOCK, eir.context(), mlir.Location.unknown(), mlir.InsertionPoint(self.block):
            operation = eir.build(op, [t.value for t in tracers], params, inferred,
                                  regions=regions.count if regions else 0)
            if regions is not None:
                regions.move_into(operation)
        origin = frozenset().union(*(t.origin for t in tracers))
        outs = [Tracer(self, aval, value, origin)
                for aval, value in zip(eir.results_of(inferred), operation.results, strict=True)]
        return outs if isinstance(inferred, tuple) else outs[0]

    def lift(self, x: Any) -> Tracer:
        """A tracer of this trace for `x`; concrete arrays become constants and values of
        enclosing traces become captured arguments."""
        if isinstance(x, Tracer):
            if x.trace is self:
                return x
            check_alive(x)
            if not self._enclosing(x.trace):
                raise errors.UnexpectedTracerError(
                    f"a value traced in {x.trace.describe()} was used while tracing "
                    f"{self.describe()}, which it does not enclose; pass it as an argument")
        cached = self.constants.get(id(x))
        if cached is not None and cached._source is x:
            return cached
        if isinstance(x, Tracer):  # an enclosing trace's value: visible in this region
            tracer = Tracer(self, x.aval, x.value, x.origin)
            tracer._source = x
            self.constants[id(x)] = tracer
            return tracer
        dtype, weak = dtypes.dtype_and_weak(x)
        value = np.asarray(x, dtype=dtype)
        tracer = self.emit_constant(value, weak)
        tracer._source = x
        self.constants[id(x)] = tracer
        return tracer

    def emit_constant(self, value: np.ndarray, weak: bool) -> Tracer:
        aval = ShapedArray(value.shape, value.dtype, weak)
        root = self.root
        if root.hoist and value.nbytes >= HOIST_BYTES:
            # A literal this size is printed, parsed and hashed as text at every phase (a
            # 64 MiB closure took 6 s to compile, JAX 0.7 s): it becomes an argument, passed
            # from one device copy at every call. The module no longer depends on the data.
            with eir.LOCK, eir.context():
                arg = root.block.add_argument(eir.tensor_type(aval), mlir.Location.unknown())
            root.hoisted.append(np.array(value, copy=True))  # the caller may change theirs
            return Tracer(self, aval, arg, frozenset())
        with eir.LOCK, eir.context(), mlir.Location.unknown(), mlir.InsertionPoint(self.block):
            if value.dtype.kind == "c":
                # MLIR's Python bindings cannot hold a complex elements attribute (reading
                # one raises): a complex literal is ember.complex of its two real parts.
                part = ShapedArray(value.shape, value.real.dtype)
                parts = [eir.build(ops.CONSTANT, [], {"value": np.array(v, copy=True)},
                                   part).result for v in (value.real, value.imag)]
                operation = eir.build(ops.COMPLEX, parts, {}, aval)
            else:
                operation = eir.build(ops.CONSTANT, [], {"value": value}, aval)
        return Tracer(self, aval, operation.result, frozenset())

    def finish(self, outputs: Sequence[Any]) -> list[ShapedArray]:
        """Return `outputs` from the function; gives their abstract values."""
        tracers = [self.lift(x) for x in outputs]
        with eir.LOCK, eir.context(), mlir.Location.unknown():
            with mlir.InsertionPoint(self.block):
                if self.func is None:  # a region: ember.yield
                    eir.build(ops.YIELD, [t.value for t in tracers], {}, ())
                    return [t.aval for t in tracers]
                func_d.ReturnOp([t.value for t in tracers])
            in_types = [a.type for a in self.block.arguments]
            self.func.attributes["function_type"] = mlir.TypeAttr.get(
                mlir.FunctionType.get(in_types, [t.value.type for t in tracers]))
        return [t.aval for t in tracers]

    def describe(self) -> str:
        return f"the function {self.fun_name} at {self.fun_location}"

    def check_leaks(self) -> None:
        """After tracing: raise if a tracer of this trace is still referenced."""
        if self.all_tracers is None:
            return
        self.args, self.constants = [], {}
        gc.collect()
        leaked = [t for t in (ref() for ref in self.all_tracers) if t is not None]
        if leaked:
            where = "\n".join(f"  {t!r} created at {t._created}" for t in leaked[:10])
            raise errors.UnexpectedTracerError(
                f"Leaked {len(leaked)} tracer(s) while tracing {self.describe()}: they are "
                f"still referenced after tracing ended (a global, a closure or a list kept "
                f"them). Return values from the traced function instead.\n{where}")


class Regions:
    """The regions of a control-flow op being traced. Its result types are known only once its
    regions are traced, so their blocks are first held by a placeholder op, then moved into
    the op when it is emitted (`Trace.emit(..., regions=)`)."""

    def __init__(self, trace: Trace, count: int):
        self.parent, self.count = trace, count
        with eir.LOCK, eir.context(), mlir.Location.unknown(), mlir.InsertionPoint(trace.block):
            self._holder = mlir.Operation.create("ember.regions", regions=count)

    def trace(self, i: int, fun_name: str, fun_location: str, in_avals: Sequence[ShapedArray],
              arg_names: Sequence[str]) -> Trace:
        """A trace for the body of region `i`, with arguments of `in_avals`."""
        with eir.LOCK, eir.context():
            block = mlir.Block.create_at_start(self._holder.regions[i], [])
        return Trace(fun_name, fun_location, in_avals, arg_names, parent=self.parent,
                     block=block)

    def move_into(self, operation: mlir.Operation) -> None:
        for source, target in zip(self._holder.regions, operation.regions, strict=True):
            source.blocks[0].append_to(target)
        self.discard()

    def discard(self) -> None:
        if self._holder is not None:
            with eir.LOCK:
                self._holder.erase()
            self._holder = None


def _symbol(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return f"jit_{cleaned}"


def check_alive(t: Tracer) -> None:
    if not t.trace.alive:
        raise errors.UnexpectedTracerError(
            f"Encountered an unexpected tracer: a value of type {t.aval.str_short()} created "
            f"while tracing {t.trace.describe()} was used after that trace ended. It escaped "
            f"through a global variable, a closure or a side effect. Return it from the "
            f"jitted function instead of storing it.")


class Tracer:
    """A value inside a trace: its abstract value and the IR value that computes it."""

    __slots__ = ("trace", "aval", "value", "origin", "_source", "_created", "__weakref__")
    __array_priority__ = 200

    def __init__(self, trace: Trace, aval: ShapedArray, value: mlir.Value, origin: frozenset):
        self.trace = trace
        self.aval = aval
        self.value = value
        self.origin = origin
        self._source = None
        self._created = None
        if trace.all_tracers is not None:  # leak checking: remember it and where it was made
            trace.all_tracers.append(weakref.ref(self))
            self._created = call_site()

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>with<jit>"

    __hash__ = None

    def _concretization(self, cls: type, what: str) -> Exception:
        names = sorted(self.origin)
        if names:
            plural = "s" if len(names) > 1 else ""
            because = (f"This concrete value was not available in Python because it depends "
                       f"on the value of the argument{plural} {' and '.join(names)}.")
            fixes = "\n".join(f for f in (self.trace.fixes(n) for n in names) if f)
        else:
            because = "This value was computed inside the traced function."
            fixes = ""
        return cls(f"{what} of traced array with shape {self.aval.str_short()}.\n"
                   f"The error occurred while tracing {self.trace.describe()} for jit. "
                   f"{because}\n{fixes}\nSee {errors.README}{cls.__name__}.")

    def __bool__(self) -> bool:
        raise self._concretization(errors.TracerBoolConversionError,
                                   "Attempted boolean conversion")

    def __int__(self) -> int:
        raise self._concretization(errors.TracerIntegerConversionError,
                                   "Attempted integer conversion")

    __index__ = __int__

    def __float__(self) -> float:
        raise self._concretization(errors.ConcretizationTypeError, "Attempted float conversion")

    def __complex__(self) -> complex:
        raise self._concretization(errors.ConcretizationTypeError,
                                   "Attempted complex conversion")

    def __array__(self, *args, **kwargs):
        raise self._concretization(errors.TracerArrayConversionError,
                                   "Attempted NumPy conversion (numpy.asarray)")
