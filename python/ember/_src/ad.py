"""Automatic differentiation as a transformation of traced ember IR.

`vjp` traces the function into a region of the current trace (so it sees the values around
it, as a closure over a jitted function's arguments does), reads that region as a program
(ops with regions kept as programs of their own, so they can be traced again), replays it
into the trace with `bind`, keeping each op's operands and results, and runs the backward
pass with each row's rule from `ember.dialect.derivatives`. Rules are ember ops, so the
backward pass is differentiable again (grad of grad). `jvp` runs each straight run of ops as
the transpose of its vjp (linear in its cotangent) and a loop as a loop carrying its
tangents (a while_loop has no vjp at all). Outside a trace, each transformation runs as one
`jit` of its own, compiled once per signature; under one it inlines.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import optree

from ember import tree_util
from ember.dialect import derivatives, ir as eir, ops
from ember.dialect.types import ShapedArray, kind

from . import custom
from .core import Regions, Tracer, current_trace, defined_at
from .dispatch import bind, constant
from .jit import JitFunction

_NS = tree_util.NAMESPACE


class _Builder:
    """What derivative rules build with: ops of the current trace, and for control flow
    the vjp of a function, branches and loops traced from Python functions."""

    emit = staticmethod(bind)

    @staticmethod
    def aval(x: Any) -> ShapedArray:
        return x.aval

    @staticmethod
    def like(shape: Sequence[int], dtype: Any) -> ShapedArray:
        return ShapedArray(tuple(shape), np.dtype(dtype))

    @staticmethod
    def scalar(value: Any, like: Any) -> Any:
        aval = like if isinstance(like, ShapedArray) else like.aval
        c = constant(np.asarray(value, aval.dtype))
        if not aval.shape:
            return c
        return bind(ops.BROADCAST_IN_DIM, c, shape=aval.shape, broadcast_dimensions=())

    @staticmethod
    def index(i: int, dtype: Any = np.int32) -> Any:
        return constant(np.asarray(i, dtype))

    @staticmethod
    def into_zeros(aval: ShapedArray, update: Any, starts: Sequence[Any]) -> _SliceCt:
        """Zeros of `aval` but for `update` at `starts`, kept unbuilt: added into a value,
        it is one in-place update of that slice, not a dense pass."""
        return _SliceCt(aval, update, tuple(starts))

    @staticmethod
    def dense(g: Any, like: Any) -> Any:
        """A cotangent as a value: zeros for None."""
        if g is None:
            return _zeros_like(like)
        return g.build() if isinstance(g, _SliceCt) else g

    @staticmethod
    def add_into(acc: Any, g: Any) -> Any:
        return acc if g is None else _add(acc, g)

    custom = staticmethod(custom.rule)

    @staticmethod
    def vjp(fun: Callable, primals: Sequence[Any], cts: Sequence[Any],
            outputs: Sequence[Any] = ()) -> list[Any]:
        """The cotangents of `primals` (None where none reached) for `cts` of the outputs
        of `fun(*primals)` (a list; None: zero). `outputs`: values already known to equal
        the outputs (None: not known), read in their place by the backward pass, so that
        the ops computing the outputs again are left unread (and removed)."""
        tape = _Tape(fun, tuple(primals), _name(fun))
        grads = tape.backward(list(cts))
        for traced, known in zip(tape.outputs, outputs, strict=False):
            if known is not None:
                _read_instead(traced, known, tape.inputs)
        return grads

    @staticmethod
    def branches(row: Any, selector: Any, funs: Sequence[Callable]) -> list[Any]:
        """`row` (ember.if / ember.case) on `selector`, its regions traced from `funs`
        (no arguments; each returns a list of one type)."""
        regions = Regions(current_trace(), len(funs))
        try:
            for i, fun in enumerate(funs):
                with regions.trace(i, _name(fun), defined_at(fun), [], []) as sub:
                    avals = sub.finish(fun())
            return list(bind(row, selector, regions=regions, results=tuple(avals)))
        finally:
            regions.discard()

    @staticmethod
    def loop(lower: Any, upper: Any, body: Callable, inits: Sequence[Any]) -> list[Any]:
        """An ember.for: `carries = body(i, *carries)` for i in [lower, upper)."""
        trace = current_trace()
        lower, upper = trace.lift(lower), trace.lift(upper)
        avals = [trace.lift(x).aval for x in inits]
        regions = Regions(trace, 1)
        try:
            with regions.trace(0, _name(body), defined_at(body), [lower.aval, *avals],
                               [f"carry {j}" for j in range(len(avals) + 1)]) as sub:
                sub.finish(body(sub.args[0], *sub.args[1:]))
            return list(bind(ops.FOR, lower, upper, *inits, regions=regions,
                             results=tuple(avals)))
        finally:
            regions.discard()


def _read_instead(traced: Any, known: Any, inputs: Sequence[Tracer]) -> None:
    """Every use of `traced`, an output the tape computed again in the current trace, reads
    `known` instead. Not for an output the tape passed through (an input, a value from
    outside) or a constant: those values have other readers."""
    value = traced.value
    op = getattr(value.owner, "operation", None)  # None: a block's argument
    if (op is None or op.block != current_trace().block or op.name == ops.CONSTANT.name
            or any(value == t.value for t in inputs)):
        return
    value.replace_all_uses_with(current_trace().lift(known).value)


def _add(acc: Any, g: Any) -> Any:
    if isinstance(acc, _SliceCt):
        acc, g = g, acc
    if isinstance(acc, _SliceCt):
        acc = acc.build()
    if not isinstance(g, _SliceCt):
        return bind(ops.ADD, acc, g)
    current = bind(ops.DYNAMIC_SLICE, acc, *g.starts, sizes=g.update.aval.shape)
    return bind(ops.DYNAMIC_UPDATE_SLICE, acc, bind(ops.ADD, current, g.update), *g.starts,
                strides=(1,) * acc.aval.ndim)


class _SliceCt:
    """The cotangent of a dynamic slice, unbuilt (see `_Builder.into_zeros`)."""

    __slots__ = ("aval", "update", "starts")

    def __init__(self, aval: ShapedArray, update: Any, starts: tuple):
        self.aval, self.update, self.starts = aval, update, starts

    def build(self) -> Any:
        return bind(ops.DYNAMIC_UPDATE_SLICE, _zeros_like(self), self.update, *self.starts,
                    strides=(1,) * self.aval.ndim)


_B = _Builder()


def _inexact(aval: ShapedArray) -> bool:
    """Whether derivatives flow through values of `aval` (floats and complex numbers)."""
    return kind(aval.dtype) in "fc"


class _Eqn(NamedTuple):
    """One op of a traced block as data: its row, operand and result value numbers and
    params; for ops with regions, each region as a `_Program` and the numbers of the values
    they read from outside the op."""

    row: Any
    ins: list[int]
    outs: list[int]
    params: dict
    bodies: list[_Program]
    free: list[int]


class _Program(NamedTuple):
    """A traced block as data: argument numbers, ops, yielded numbers, and the numbers it
    reads from outside (in order of first use)."""

    args: list[int]
    eqns: list[_Eqn]
    outs: list[int]
    free: list[int]


class _Numbering:
    """Numbers for the values of a traced block and the blocks within it, with their avals
    (and the IR values of numbers, to see the enclosing trace's values)."""

    def __init__(self):
        self.numbers: dict[Any, int] = {}
        self.avals: dict[int, ShapedArray] = {}
        self.values: dict[int, Any] = {}

    def __call__(self, value: Any) -> int:
        key = self.numbers.get(value)
        if key is None:
            key = self.numbers[value] = len(self.numbers)
            self.avals[key] = eir.aval_of(value)
            self.values[key] = value
        return key


def _extract(block: Any, number: _Numbering) -> _Program:
    args = [number(v) for v in block.arguments]
    defined, used, eqns = set(args), {}, []
    for op in block.operations:
        op = op.operation
        if eir.opdef(op) is ops.YIELD:
            outs = [number(v) for v in op.operands]
            used.update(dict.fromkeys(outs))
            free = [k for k in used if k not in defined]
            return _Program(args, eqns, outs, free)
        row, _, params = eir.read(op)
        if row.has(ops.Trait.SIDE_EFFECTS):
            raise NotImplementedError(
                f"differentiating through {row.name} is not supported yet "
                f"({derivatives.NOT_YET.get(row, 'no rule')})")
        ins = [number(v) for v in op.operands]
        bodies = [_extract(region.blocks[0], number) for region in op.regions]
        free = list(dict.fromkeys(k for body in bodies for k in body.free))
        outs = [number(v) for v in op.results]
        used.update(dict.fromkeys(ins + free))
        defined.update(outs)
        eqns.append(_Eqn(row, ins, outs, params, bodies, free))
    raise AssertionError("a traced region ends in ember.yield")


def _run(program: _Program, args: Sequence[Any], env: dict[int, Any],
         avals: dict[int, ShapedArray], record: Callable | None = None) -> list[Any]:
    """Bind `program`'s ops into the current trace on `args` (`env`: the values it reads
    from outside). `record(eqn, ins, free, env)` may bind an op itself (returning its
    results), else None."""
    env = {**env, **dict(zip(program.args, args, strict=True))}
    for eqn in program.eqns:
        ins = [env[k] for k in eqn.ins]
        outs = record(eqn, ins, [env[k] for k in eqn.free], env) if record else None
        if outs is None:
            outs = _bind_eqn(eqn, ins, env, avals)
        env.update(zip(eqn.outs, outs, strict=True))
    return [env[k] for k in program.outs]


def _bind_eqn(eqn: _Eqn, ins: list[Any], env: dict[int, Any],
              avals: dict[int, ShapedArray]) -> list[Any]:
    if not eqn.bodies:
        return [bind(eqn.row, *ins, **eqn.params)]
    regions = Regions(current_trace(), len(eqn.bodies))
    try:
        for i, body in enumerate(eqn.bodies):
            with regions.trace(i, eqn.row.name, "", [avals[k] for k in body.args],
                               [f"{eqn.row.name} argument {j}" for j in range(len(body.args))]
                               ) as sub:
                sub.finish(_run(body, sub.args, env, avals))
        return list(bind(eqn.row, *ins, regions=regions, **eqn.params))
    finally:
        regions.discard()


class _Body:
    """A region as a function of its arguments, then the op's free values (what rules of
    ops with regions get as `params["bodies"]`)."""

    def __init__(self, program: _Program, free: list[int], avals: dict[int, ShapedArray]):
        self.program, self.free, self.avals = program, free, avals

    def __call__(self, *xs: Any) -> list[Any]:
        n = len(self.program.args)
        return _run(self.program, xs[:n], dict(zip(self.free, xs[n:], strict=True)),
                    self.avals)

    def mixed(self, inputs: Sequence[Any], saved: Callable, delay: Callable) -> list[Any]:
        """The region computed again: on `delay(x)` of its `inputs` (the forward pass's),
        but for the ops `saved(row, params)` picks, which are bound on the inputs themselves
        (as are the ops they read, on demand), so they are the forward pass's own ops once
        common subexpressions merge: kept, not computed again. An op that reads only kept
        values is the forward pass's too (JAX would compute it again: more memory, the
        same values)."""
        program, n = self.program, len(self.program.args)
        producer = {k: eqn for eqn in program.eqns for k in eqn.outs}
        early = {**dict(zip(self.free, inputs[n:], strict=True)),
                 **dict(zip(program.args, inputs[:n], strict=True))}

        def on_early(eqn: _Eqn) -> list[Any]:
            for k in eqn.ins + eqn.free:
                if k not in early:
                    on_early(producer[k])
            outs = _bind_eqn(eqn, [early[k] for k in eqn.ins], early, self.avals)
            early.update(zip(eqn.outs, outs, strict=True))
            return outs

        def record(eqn, ins, free, env):
            if not saved(eqn.row, eqn.params):
                return None
            return [early[k] for k in eqn.outs] if eqn.outs[0] in early else on_early(eqn)

        late = [delay(x) for x in inputs]
        return _run(program, late[:n], dict(zip(self.free, late[n:], strict=True)),
                    self.avals, record)


def _write_only(body: _Program, j: int) -> bool:
    """Whether loop carry `j` is only ever written at a slice and carried on (a scan's
    stacked outputs): the backward pass never needs its value."""
    arg, out = body.args[j + 1], body.outs[j]
    uses = [(e, i) for e in body.eqns for i, k in enumerate(e.ins + e.free) if k == arg]
    if len(uses) != 1 or body.outs.count(out) != 1 or arg in body.outs:
        return False
    eqn, i = uses[0]
    return (eqn.row is ops.DYNAMIC_UPDATE_SLICE and i == 0 and eqn.outs[0] == out and
            not any(out in e.ins + e.free for e in body.eqns))


class _Tape:
    """A function's ops replayed into the current trace: its outputs, and for the backward
    pass each op's row and params with the tracers of its operands and results. Values are
    numbered while the traced region exists (it is erased once replayed); ops with regions
    are kept as `_Program`s, so the backward pass can trace them again."""

    def __init__(self, fun: Callable, args: Sequence[Any], name: str):
        trace = current_trace()
        self.inputs = [trace.lift(x) for x in optree.tree_leaves(tuple(args), namespace=_NS)]

        def visit(block, in_tree, out_tree):
            self.in_tree, self.out_tree = in_tree, out_tree
            number = _Numbering()
            program = _extract(block, number)
            self.avals = number.avals
            self.arg_keys = program.args
            env = {k: Tracer(trace, number.avals[k], number.values[k], frozenset())
                   for k in program.free}  # values of enclosing traces, visible as they are
            self.active = set(program.args)
            self.known: dict[int, np.ndarray] = {}
            # (eqn, operand tracers, free tracers, result tracers, params for the rule)
            self.entries: list[tuple] = []
            self.outputs = _run(program, self.inputs, env, self.avals, self._record)
            self.output_keys = program.outs

        traced_region(fun, args, [t.aval for t in self.inputs], name, visit)

    def _record(self, eqn: _Eqn, ins: list, free: list, env: dict) -> list | None:
        self._fold(eqn)
        if not any(k in self.active for k in eqn.ins + eqn.free):
            return None  # no derivative reaches it: bound as it is, not kept
        self.active.update(eqn.outs)
        params = eqn.params
        outs = None
        if eqn.bodies:
            params = {**params,
                      "bodies": [_Body(b, eqn.free, self.avals) for b in eqn.bodies],
                      "free": len(free)}
            if eqn.row is ops.FOR:
                bounds = [self.known.get(k) for k in eqn.ins[:2]]
                params["bounds"] = (None if any(v is None for v in bounds) else
                                    tuple(int(v) for v in bounds))
                params["write_only"] = frozenset(
                    j for j in range(len(eqn.outs)) if _write_only(eqn.bodies[0], j))
            forward = derivatives.FORWARD.get(eqn.row)
            if forward is not None:
                outs, params["residuals"] = forward(_B, [*ins, *free], params)
        if outs is None:
            outs = _bind_eqn(eqn, ins, env, self.avals)
        self.entries.append((eqn, ins, free, outs, params))
        return outs

    def _fold(self, eqn: _Eqn) -> None:
        """Keep the values of scalars computed from constants (a loop's bounds: they say
        whether it can run backward, and how many steps)."""
        if eqn.row is ops.CONSTANT:
            value = eqn.params["value"]
        elif (eqn.bodies or eqn.row.reference is None or len(eqn.outs) != 1 or
              self.avals[eqn.outs[0]].shape != () or
              not all(k in self.known for k in eqn.ins)):
            return
        else:
            value = eqn.row.reference(*[self.known[k] for k in eqn.ins], **eqn.params)
        if np.ndim(value) == 0:
            self.known[eqn.outs[0]] = np.asarray(value)

    def backward(self, cts: Sequence[Any]) -> list[Any]:
        """The cotangents of the inputs, for cotangents of the outputs (None: zero); a
        cotangent may be unbuilt (`_Builder.into_zeros`): see `_Builder.dense`."""
        grads: dict[int, Any] = {}
        for key, ct in zip(self.output_keys, cts, strict=True):
            if ct is not None:
                _accumulate(grads, key, ct)
        for eqn, ins, free, outs, params in reversed(self.entries):
            row = eqn.row
            out_cts = [grads.pop(k, None) for k in eqn.outs]
            if row in derivatives.ZERO or not any(
                    ct is not None and _inexact(y.aval) for ct, y in zip(out_cts, outs,
                                                                      strict=True)):
                continue
            rule = derivatives.VJP.get(row)
            if rule is None:
                raise NotImplementedError(
                    f"the derivative of {row.name} is not supported yet "
                    f"({derivatives.NOT_YET.get(row, 'no rule')})")
            if eqn.bodies:
                dense = [_B.dense(ct, y) for ct, y in zip(out_cts, outs, strict=True)]
                gs = rule(_B, dense, [*ins, *free], outs, params)
            else:
                gs = rule(_B, _B.dense(out_cts[0], outs[0]), ins, outs[0], params)
            for k, t, g in zip(eqn.ins + eqn.free, [*ins, *free], gs, strict=True):
                if g is not None and _inexact(t.aval):
                    _accumulate(grads, k, g)
        return [grads.get(k) for k in self.arg_keys]

    def grads(self, cts: Sequence[Any]) -> list[Any]:
        """backward, for cotangents of the first outputs (the rest: zero), zeros filled in
        for inputs no cotangent reached."""
        full = list(cts) + [None] * (len(self.outputs) - len(cts))
        return [_B.dense(g, t) for g, t in zip(self.backward(full), self.inputs, strict=True)]


def traced_region(fun: Callable, args: Sequence[Any], avals: Sequence[ShapedArray],
                  name: str, visit: Callable) -> Any:
    """Trace `fun` on arguments of `avals` (structured as `args`) into a region of the
    current trace, so it sees the values around it; `visit(block, in_tree, out_tree)` reads
    the region, which is erased afterwards (its values must not be kept)."""
    in_tree = optree.tree_structure(tuple(args), namespace=_NS)
    regions = Regions(current_trace(), 1)
    try:
        sub = regions.trace(0, name, defined_at(fun), avals,
                            [f"{name}.arg{i}" for i in range(len(avals))])
        with sub:
            out = fun(*optree.tree_unflatten(in_tree, sub.args))
            out_leaves, out_tree = optree.tree_flatten(out, namespace=_NS)
            sub.finish(out_leaves)
        return visit(sub.block, in_tree, out_tree)
    finally:
        regions.discard()


def _accumulate(grads: dict, value: Any, ct: Any) -> None:
    grads[value] = ct if value not in grads else _add(grads[value], ct)


def _zeros_like(t: Any) -> Any:
    return _B.scalar(0, t.aval)


def _cotangents(outputs: list[Tracer], out_tree: Any, ct_tree: Any, name: str) -> list[Any]:
    leaves, tree = optree.tree_flatten(ct_tree, namespace=_NS)
    if tree != out_tree:
        raise TypeError(f"{name} requires cotangents structured as the function's output "
                        f"{out_tree}, got {tree}")
    out = []
    for t, ct in zip(outputs, leaves, strict=True):
        ct = current_trace().lift(ct)
        if ct.aval.shape != t.aval.shape:
            raise ValueError(f"{name} requires cotangents of the outputs' shapes: "
                             f"{t.aval.str_short()}, got {ct.aval.str_short()}")
        if ct.dtype != t.dtype:
            ct = bind(ops.CONVERT, ct, dtype=t.dtype)
        out.append(ct)
    return out


def _input_grads(tape: _Tape, cts: list) -> Any:
    return optree.tree_unflatten(tape.in_tree, tape.grads(cts))


# ----------------------------------------------------------------------------- public API

def _staged(run: Callable) -> Callable:
    """Outside a trace, `run` runs as one jit of its own; inside, it inlines."""
    jitted = JitFunction(run)

    def call(*args: Any) -> Any:
        return run(*args) if current_trace() is not None else jitted(*args)

    return call


# Transformations made, by (function, options): the most recent _KEPT_TRANSFORMS of them
# (each holds its function and compiled code: a Python loop making grad of a fresh lambda
# every step must not keep them all).
_TRANSFORMS: collections.OrderedDict = collections.OrderedDict()
_KEPT_TRANSFORMS = 256


def per_function(fun: Callable, key: Any, make: Callable[[], Any]) -> Any:
    """`make()`, once per (function, key): a transformation made again of the same function
    with the same options (grad(f) inside a Python loop, hessian's jacrev of f) is the same
    function, whose staged runners have compiled already, as jit's cache does."""
    try:
        made = _TRANSFORMS.get((fun, key))
    except TypeError:  # an unhashable callable
        return make()
    if made is None:
        made = _TRANSFORMS[(fun, key)] = make()
        if len(_TRANSFORMS) > _KEPT_TRANSFORMS:
            _TRANSFORMS.popitem(last=False)
    else:
        _TRANSFORMS.move_to_end((fun, key))
    return made


def _staged_for(fun: Callable, kind: str, make: Callable[[], Callable]) -> Callable:
    """One staged runner per (function, kind), so repeated eager calls of vjp or jvp on a
    function compile once."""
    return per_function(fun, kind, lambda: _staged(make()))


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """`(fun(*primals), vjp_fn)` (and aux with `has_aux`): vjp_fn(ct) is the cotangents of
    the primals, a tuple of their structure."""
    def forward(*primals):
        tape = _Tape(fun, primals, _name(fun))
        return optree.tree_unflatten(tape.out_tree, tape.outputs)

    def backward(primals, ct):
        tape = _Tape(fun, primals, _name(fun))
        return _input_grads(tape, _cotangents_with_aux(tape, ct, has_aux))

    out = _staged_for(fun, f"vjp forward {has_aux}", lambda: forward)(*primals)
    result = out
    if has_aux:
        result, aux = _split_aux(out, "vjp")
    staged_backward = _staged_for(fun, f"vjp backward {has_aux}", lambda: backward)

    def vjp_fn(ct: Any) -> tuple:
        grads = staged_backward(tuple(primals), ct)
        return grads if current_trace() is not None else _float0_for_integers(grads, primals)

    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def _cotangents_with_aux(tape: _Tape, ct: Any, has_aux: bool) -> list:
    """The output's cotangents (with has_aux the output is (value, aux): aux gets none)."""
    if not has_aux:
        return _cotangents(tape.outputs, tape.out_tree, ct, "vjp")
    main = optree.tree_unflatten(tape.out_tree, tape.outputs)[0]
    leaves, tree = optree.tree_flatten(main, namespace=_NS)
    return _cotangents(leaves, tree, ct, "vjp")


def _split_aux(out: Any, name: str) -> tuple:
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{name} with has_aux=True requires the function to return a pair "
                        f"(output, aux), got {type(out).__name__}")
    return out[0], out[1]


FLOAT0 = np.dtype([("float0", np.void, 0)])  # jax.dtypes.float0: the tangent of an integer


def _float0_for_integers(grads: Any, inputs: Any) -> Any:
    """Outside a trace, the cotangents of integer and boolean inputs as JAX gives them:
    float0 zeros of the input's shape (under a trace they stay zeros of the input's dtype:
    a traced value cannot be float0)."""
    def fix(g, x):
        dtype = np.dtype(getattr(x, "dtype", None) or np.result_type(x))
        return np.zeros(np.shape(x), FLOAT0) if kind(dtype) not in "fc" else g
    return optree.tree_map(fix, grads, inputs, namespace=_NS)


def _name(fun: Callable) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False,
                   _name_as: str = "value_and_grad") -> Callable:
    """A function returning `(fun(*args), gradient)` (`((value, aux), gradient)` with
    has_aux): the gradient of a real scalar output with respect to the arguments `argnums`
    (a tuple of gradients for a tuple of argnums)."""
    options = (_argnums_key(argnums), has_aux, holomorphic, allow_int, _name_as)
    return per_function(fun, ("value_and_grad", *options),
                        lambda: _value_and_grad(fun, *options))


def _argnums_key(argnums: int | Sequence[int]) -> int | tuple[int, ...]:
    return argnums if isinstance(argnums, int) else tuple(argnums)


def _value_and_grad(fun: Callable, argnums: int | tuple[int, ...], has_aux: bool,
                    holomorphic: bool, allow_int: bool, _name_as: str) -> Callable:
    nums = (argnums,) if isinstance(argnums, int) else argnums
    name = f"{_name_as}({_name(fun)})"

    def run(*args: Any) -> Any:
        _check_argnums(nums, len(args), name)
        diff = tuple(args[i] for i in nums)
        _check_inputs(diff, name, allow_int, holomorphic)

        def of_diff(*d):
            full = list(args)
            for i, v in zip(nums, d, strict=True):
                full[i] = v
            return fun(*full)

        tape = _Tape(of_diff, diff, _name(fun))
        out = optree.tree_unflatten(tape.out_tree, tape.outputs)
        value = out
        if has_aux:
            value, _ = _split_aux(out, name)
        value_leaves = optree.tree_leaves(value, namespace=_NS)
        wanted = "c" if holomorphic else "f"
        if len(value_leaves) != 1 or value_leaves[0].shape != () or kind(
                value_leaves[0].dtype) != wanted:
            got = ", ".join(x.aval.str_short() for x in value_leaves)
            what = ("a complex scalar output (holomorphic=True)" if holomorphic else
                    "a real scalar output (a float of shape (); for a complex output of a "
                    "holomorphic function pass holomorphic=True)")
            raise TypeError(f"{name} requires {what}, got {got or 'nothing'}; for other "
                            f"outputs use ember.vjp")
        cts = [_B.scalar(1.0, value_leaves[0].aval)]
        grads = _input_grads(tape, cts)
        return out, (grads[0] if isinstance(argnums, int) else grads)

    staged = _staged(run)

    def call(*args: Any) -> Any:
        out, g = staged(*args)
        if current_trace() is None and allow_int:  # JAX's float0 zeros for integer inputs
            diff = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in nums)
            g = _float0_for_integers(g, diff)
        return out, g

    call.__name__ = name
    return call


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The gradient of a real scalar function (with has_aux: `(gradient, aux)`)."""
    return per_function(fun, ("grad", _argnums_key(argnums), has_aux, holomorphic, allow_int),
                        lambda: _grad(fun, argnums, has_aux, holomorphic, allow_int))


def _grad(fun: Callable, argnums: int | Sequence[int], has_aux: bool, holomorphic: bool,
          allow_int: bool) -> Callable:
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, _name_as="grad")

    def call(*args: Any) -> Any:
        out, g = vg(*args)
        return (g, out[1]) if has_aux else g

    call.__name__ = f"grad({_name(fun)})"
    return call


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """`(fun(*primals), the directional derivative along tangents)`: each straight run of
    ops is the transpose of its vjp (linear in the cotangent); a loop carries the tangents
    as carries of its own (a while_loop has no vjp; a fori_loop this way saves nothing)."""
    primals, tangents = tuple(primals), tuple(tangents)
    if optree.tree_structure(primals, namespace=_NS) != optree.tree_structure(
            tangents, namespace=_NS):
        raise TypeError("jvp requires primals and tangents of one structure")

    def run(primals, tangents):
        trace = current_trace()
        inputs = [trace.lift(x) for x in optree.tree_leaves(primals, namespace=_NS)]
        t_in = [trace.lift(t) for t in optree.tree_leaves(tangents, namespace=_NS)]

        def visit(block, in_tree, out_tree):
            number = _Numbering()
            program = _extract(block, number)
            env = {k: Tracer(trace, number.avals[k], number.values[k], frozenset())
                   for k in program.free}
            outs, t_outs = _forward(program, inputs, t_in, env, {}, number.avals)
            return out_tree, outs, [_B.dense(t, y) for t, y in zip(t_outs, outs,
                                                                     strict=True)]

        out_tree, outs, t_outs = traced_region(fun, primals, [t.aval for t in inputs],
                                               _name(fun), visit)
        out = optree.tree_unflatten(out_tree, outs)
        t_out = optree.tree_unflatten(out_tree, t_outs)
        if has_aux:
            (main, aux), (t_main, _) = _split_aux(out, "jvp"), _split_aux(t_out, "jvp")
            return main, t_main, aux
        return out, t_out

    return _staged_for(fun, f"jvp {has_aux}", lambda: run)(primals, tangents)


def _forward(program: _Program, args: Sequence[Any], tangents: Sequence[Any | None],
             env: dict[int, Any], tan: dict[int, Any], avals: dict[int, ShapedArray]
             ) -> tuple[list[Any], list[Any | None]]:
    """Forward mode over a program: its outputs and their tangents (None: zero)."""
    env = {**env, **dict(zip(program.args, args, strict=True))}
    tan = {**tan, **{k: t for k, t in zip(program.args, tangents, strict=True)
                     if t is not None and _inexact(avals[k])}}
    eqns = program.eqns
    i = 0
    while i < len(eqns):
        if eqns[i].row.carries is not None:  # a loop
            _forward_loop(eqns[i], env, tan, avals)
            i += 1
            continue
        j = i
        while j < len(eqns) and eqns[j].row.carries is None:
            j += 1
        later = {k for e in eqns[j:] for k in e.ins + e.free} | set(program.outs)
        _forward_run(eqns[i:j], later, env, tan, avals)
        i = j
    return [env[k] for k in program.outs], [tan.get(k) for k in program.outs]


def _forward_run(eqns: list[_Eqn], later: set[int], env: dict, tan: dict,
                 avals: dict[int, ShapedArray]) -> None:
    """A straight run of ops: bound through a tape, tangents by transposing its vjp."""
    defined = {k for e in eqns for k in e.outs}
    reads = list(dict.fromkeys(k for e in eqns for k in e.ins + e.free if k not in defined))
    outs = [k for e in eqns for k in e.outs if k in later]
    run = _Program(reads, eqns, outs, [])
    tape = _Tape(lambda *xs: _run(run, xs, {}, avals), tuple(env[k] for k in reads), "jvp")
    env.update(zip(outs, tape.outputs, strict=True))
    t_in = [tan.get(k) for k in reads]
    if all(t is None for t in t_in) or not outs:
        return
    seeds = [_zeros_like(y) for y in tape.outputs]
    transposed = _Tape(lambda *cts: tape.grads(cts), seeds, "jvp")
    for k, t in zip(outs, transposed.backward(t_in), strict=True):
        if t is not None and _inexact(avals[k]):
            tan[k] = _B.dense(t, env[k])


def _forward_loop(eqn: _Eqn, env: dict, tan: dict, avals: dict[int, ShapedArray]) -> None:
    """A while_loop or fori_loop carrying the tangents of its float carries alongside them
    (a fori_loop this way needs no saved carries, and any bounds)."""
    sig = eqn.row.carries
    bounds, keys = [env[k] for k in eqn.ins[:sig.operand]], sig.of(eqn.ins)
    carries = [env[k] for k in keys]
    if not any(k in tan for k in keys + eqn.free):
        env.update(zip(eqn.outs, _bind_eqn(eqn, [*bounds, *carries], env, avals),
                       strict=True))
        return
    m = len(carries)
    diff = [j for j, c in enumerate(carries) if _inexact(c.aval)]
    inits = [tan[keys[j]] if keys[j] in tan else _zeros_like(carries[j]) for j in diff]
    loop_avals = [c.aval for c in carries] + [carries[j].aval for j in diff]
    index = [bounds[0].aval] if sig.argument else []  # the body's induction variable
    names = [f"carry {j}" for j in range(len(index) + len(loop_avals))]
    regions = Regions(current_trace(), len(eqn.bodies))
    try:
        if len(eqn.bodies) > 1:  # ember.while's cond
            with regions.trace(0, "cond", "", loop_avals, names) as sub:
                sub.finish(_run(eqn.bodies[0], sub.args[:m], env, avals))
        with regions.trace(len(eqn.bodies) - 1, "body", "", index + loop_avals,
                           names) as sub:
            args = sub.args[len(index):]
            tangents = [None] * (len(index) + m)
            for j, t in zip(diff, args[m:], strict=True):
                tangents[len(index) + j] = t
            outs, t_outs = _forward(eqn.bodies[-1], [*sub.args[:len(index)], *args[:m]],
                                    tangents, env, tan, avals)
            sub.finish(outs + [_B.dense(t_outs[j], outs[j]) for j in diff])
        results = bind(eqn.row, *bounds, *carries, *inits, regions=regions,
                       results=tuple(loop_avals))
    finally:
        regions.discard()
    env.update(zip(eqn.outs, results[:m], strict=True))
    tan.update((eqn.outs[j], t) for j, t in zip(diff, results[m:], strict=True))


def linearize(fun: Callable, *primals: Any) -> tuple[Any, Callable]:
    """`(fun(*primals), f_jvp)`: f_jvp(*tangents) is the directional derivative at the
    primals (one jvp of its own per call, compiled once per signature)."""
    out = _staged_for(fun, "linearize", lambda: fun)(*primals)

    def f_jvp(*tangents: Any) -> Any:
        return jvp(fun, primals, tangents)[1]

    return out, f_jvp


def _check_argnums(nums: tuple[int, ...], n: int, name: str) -> None:
    for i in nums:
        if not -n <= i < n:
            raise ValueError(f"{name} requires argnums within the {n} positional "
                             f"arguments, got {i}")


def _check_inputs(diff: tuple, name: str, allow_int: bool, holomorphic: bool = False) -> None:
    for leaf in optree.tree_leaves(diff, namespace=_NS):
        dtype = np.result_type(leaf) if not hasattr(leaf, "dtype") else leaf.dtype
        if holomorphic and kind(np.dtype(dtype)) != "c":
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {np.dtype(dtype).name}")
        if kind(np.dtype(dtype)) not in "fc" and not allow_int:
            raise TypeError(
                f"{name} requires real-valued inputs (input dtype that is a sub-dtype of "
                f"np.floating), but got {np.dtype(dtype).name}. If you want to use Boolean- "
                f"or integer-valued inputs, use vjp or set allow_int to True.")
