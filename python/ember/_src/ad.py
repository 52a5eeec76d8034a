"""Automatic differentiation as a transformation of traced ember IR.

`vjp` traces the function into a region of the current trace (so it sees the values around
it, as a closure over a jitted function's arguments does), then replays that region's ops
into the trace with `bind`, keeping each op's operands and result, and runs the backward pass
with each row's rule from `ember.dialect.derivatives`. Rules are ember ops, so the backward
pass is differentiable again: grad of grad, and `jvp` as the transpose of a vjp (the vjp is
linear in its cotangent). Outside a trace, each transformation runs as one `jit` of its own,
compiled once per signature; under one it inlines.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from ember import tree_util
from ember.dialect import derivatives, ops
from ember.dialect import ir as eir
from ember.dialect.types import ShapedArray, kind

from .core import Regions, Tracer, current_trace, defined_at
from .dispatch import bind, constant
from .jit import JitFunction

_NS = tree_util.NAMESPACE


class _Builder:
    """What derivative rules build with: ops of the current trace."""

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
    def index(i: int) -> Any:
        return constant(np.asarray(i, np.int32))


_B = _Builder()


def _float(aval: ShapedArray) -> bool:
    return kind(aval.dtype) == "f"


class _Tape:
    """A function's ops replayed into the current trace: its outputs, and for the backward
    pass each op's row and params with the tracers of its operands and result. Values are
    numbered while the traced region exists (it is erased once replayed)."""

    def __init__(self, fun: Callable, args: Sequence[Any], name: str):
        trace = current_trace()
        self.inputs = [trace.lift(x) for x in optree.tree_leaves(tuple(args), namespace=_NS)]

        def visit(block, in_tree, out_tree):
            self.in_tree, self.out_tree = in_tree, out_tree
            self._numbers: dict[Any, int] = {}
            self.arg_keys = [self._key(v) for v in block.arguments]
            self.values: dict[int, Tracer] = dict(zip(self.arg_keys, self.inputs,
                                                      strict=True))
            # (row, operand keys, operand tracers, result key, result tracer, params)
            self.entries: list[tuple] = []
            self.output_keys = self._replay(trace, block)
            self.outputs = [self.values[k] for k in self.output_keys]
            del self._numbers

        traced_region(fun, args, [t.aval for t in self.inputs], name, visit)

    def _key(self, value: Any) -> int:
        return self._numbers.setdefault(value, len(self._numbers))

    def _replay(self, trace, block) -> list[int]:
        def get(value) -> tuple[int, Tracer]:
            key = self._key(value)
            if key not in self.values:  # a value of an enclosing trace: visible as it is
                self.values[key] = Tracer(trace, eir.aval_of(value), value, frozenset())
            return key, self.values[key]

        for op in block.operations:
            op = op.operation
            if eir.opdef(op) is ops.YIELD:
                return [get(v)[0] for v in op.operands]
            row, _, params = eir.read(op)
            if row.regions or row.has(ops.Trait.SIDE_EFFECTS):
                raise NotImplementedError(
                    f"differentiating through {row.name} is not supported yet "
                    f"({derivatives.NOT_YET.get(row, 'no rule')})")
            pairs = [get(v) for v in op.operands]
            keys, inputs = [k for k, _ in pairs], [t for _, t in pairs]
            result = bind(row, *inputs, **params)
            key = self._key(op.results[0])
            self.values[key] = result
            self.entries.append((row, keys, inputs, key, result, params))
        raise AssertionError("a traced region ends in ember.yield")

    def backward(self, cts: Sequence[Any]) -> list[Any]:
        """The cotangents of the inputs, for cotangents of the outputs (None: zero)."""
        grads: dict[int, Any] = {}
        for key, ct in zip(self.output_keys, cts, strict=True):
            if ct is not None:
                _accumulate(grads, key, ct)
        for row, keys, inputs, key, result, params in reversed(self.entries):
            ct = grads.pop(key, None)
            if ct is None or not _float(result.aval) or row in derivatives.ZERO:
                continue
            rule = derivatives.VJP.get(row)
            if rule is None:
                raise NotImplementedError(
                    f"the derivative of {row.name} is not supported yet "
                    f"({derivatives.NOT_YET.get(row, 'no rule')})")
            for k, t, g in zip(keys, inputs, rule(_B, ct, inputs, result, params),
                               strict=True):
                if g is not None and _float(t.aval):
                    _accumulate(grads, k, g)
        return [grads.get(k) for k in self.arg_keys]

    def grads(self, cts: Sequence[Any]) -> list[Any]:
        """backward, for cotangents of the first outputs (the rest: zero), zeros filled in
        for inputs no cotangent reached."""
        full = list(cts) + [None] * (len(self.outputs) - len(cts))
        return [g if g is not None else _zeros_like(t)
                for g, t in zip(self.backward(full), self.inputs, strict=True)]


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
    grads[value] = ct if value not in grads else bind(ops.ADD, grads[value], ct)


def _zeros_like(t: Tracer) -> Any:
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


_STAGED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _staged_for(fun: Callable, kind: str, make: Callable[[], Callable]) -> Callable:
    """One staged runner per (function, kind), so repeated eager calls of vjp or jvp on a
    function compile once, as jit's cache does."""
    try:
        per_fun = _STAGED.setdefault(fun, {})
    except TypeError:  # not weak-referenceable
        return _staged(make())
    if kind not in per_fun:
        per_fun[kind] = _staged(make())
    return per_fun[kind]


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
        return staged_backward(tuple(primals), ct)

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


def _name(fun: Callable) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False,
                   _name_as: str = "value_and_grad") -> Callable:
    """A function returning `(fun(*args), gradient)` (`((value, aux), gradient)` with
    has_aux): the gradient of a real scalar output with respect to the arguments `argnums`
    (a tuple of gradients for a tuple of argnums)."""
    if holomorphic:
        raise NotImplementedError("holomorphic=True needs complex numbers, which Ember does "
                                  "not have yet")
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    name = f"{_name_as}({_name(fun)})"

    def run(*args: Any) -> Any:
        _check_argnums(nums, len(args), name)
        diff = tuple(args[i] for i in nums)
        _check_inputs(diff, name, allow_int)

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
        if len(value_leaves) != 1 or value_leaves[0].shape != () or not _float(
                value_leaves[0].aval):
            got = ", ".join(x.aval.str_short() for x in value_leaves)
            raise TypeError(f"{name} requires a real scalar output (a float of shape ()), got "
                            f"{got or 'nothing'}; for other outputs use ember.vjp")
        cts = [_B.scalar(1.0, value_leaves[0].aval)]
        grads = _input_grads(tape, cts)
        return out, (grads[0] if isinstance(argnums, int) else grads)

    staged = _staged(run)
    staged.__name__ = name
    return staged


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The gradient of a real scalar function (with has_aux: `(gradient, aux)`)."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, _name_as="grad")

    def call(*args: Any) -> Any:
        out, g = vg(*args)
        return (g, out[1]) if has_aux else g

    call.__name__ = f"grad({_name(fun)})"
    return call


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """`(fun(*primals), the directional derivative along tangents)`: the transpose of the
    vjp, which is linear in its cotangent."""
    primals, tangents = tuple(primals), tuple(tangents)
    if optree.tree_structure(primals, namespace=_NS) != optree.tree_structure(
            tangents, namespace=_NS):
        raise TypeError("jvp requires primals and tangents of one structure")

    def run(primals, tangents):
        tape = _Tape(fun, primals, _name(fun))
        outs = optree.tree_unflatten(tape.out_tree, tape.outputs)
        main = _split_aux(outs, "jvp")[0] if has_aux else outs
        main_leaves, main_tree = optree.tree_flatten(main, namespace=_NS)

        seeds = [_zeros_like(t) for t in main_leaves]
        transposed = _Tape(lambda *cts: tape.grads(cts), seeds, "jvp")
        out_tangents = transposed.grads([current_trace().lift(t) for t in
                                         optree.tree_leaves(tangents, namespace=_NS)])
        result = (main, optree.tree_unflatten(main_tree, out_tangents))
        return (*result, _split_aux(outs, "jvp")[1]) if has_aux else result

    return _staged_for(fun, f"jvp {has_aux}", lambda: run)(primals, tangents)


def _check_argnums(nums: tuple[int, ...], n: int, name: str) -> None:
    for i in nums:
        if not -n <= i < n:
            raise ValueError(f"{name} requires argnums within the {n} positional "
                             f"arguments, got {i}")


def _check_inputs(diff: tuple, name: str, allow_int: bool) -> None:
    for leaf in optree.tree_leaves(diff, namespace=_NS):
        dtype = np.result_type(leaf) if not hasattr(leaf, "dtype") else leaf.dtype
        if kind(np.dtype(dtype)) != "f" and not allow_int:
            raise TypeError(
                f"{name} requires real-valued inputs (input dtype that is a sub-dtype of "
                f"np.floating), but got {np.dtype(dtype).name}. If you want to use Boolean- "
                f"or integer-valued inputs, use vjp or set allow_int to True.")


def _one_hots(aval: ShapedArray) -> list[Any]:
    eye = np.eye(max(aval.size, 1), dtype=aval.dtype)[:aval.size]
    return [constant(row.reshape(aval.shape)) for row in eye]


def jacrev(fun: Callable, argnums: int = 0, has_aux: bool = False) -> Callable:
    """The Jacobian by reverse mode: one backward pass per output element (shape: the
    output's then the input's). Until vmap batches them, for small outputs."""
    return _jacobian(fun, argnums, has_aux, "jacrev")


def jacfwd(fun: Callable, argnums: int = 0, has_aux: bool = False) -> Callable:
    """The Jacobian by forward mode: one tangent per input element (shape: the output's then
    the input's). Until vmap batches them, for small inputs."""
    return _jacobian(fun, argnums, has_aux, "jacfwd")


def _jacobian(fun: Callable, argnums: int, has_aux: bool, mode: str) -> Callable:
    if not isinstance(argnums, int):
        raise NotImplementedError(f"{mode} of several argnums is not supported yet")

    def run(*args: Any) -> Any:
        _check_argnums((argnums,), len(args), mode)
        x = current_trace().lift(args[argnums])
        if not _float(x.aval):
            raise TypeError(f"{mode} requires a real-valued (floating) input, got "
                            f"{x.aval.str_short()}")

        def of_x(v):
            full = list(args)
            full[argnums] = v
            return fun(*full)

        tape = _Tape(of_x, (x,), _name(fun))
        outs = optree.tree_unflatten(tape.out_tree, tape.outputs)
        main, aux = _split_aux(outs, mode) if has_aux else (outs, None)
        leaves = optree.tree_leaves(main, namespace=_NS)
        if len(leaves) != 1:
            raise NotImplementedError(f"{mode} of a function with several outputs is not "
                                      f"supported yet")
        y = leaves[0]
        if mode == "jacrev":
            rows = [tape.grads([ct])[0] for ct in _one_hots(y.aval)]
            jac = _stack(rows, y.aval.shape + x.aval.shape)
        else:
            transposed = _Tape(lambda ct: tape.grads([ct])[0], (_zeros_like(y),), mode)
            cols = [transposed.grads([t])[0] for t in _one_hots(x.aval)]
            jac = _stack(cols, x.aval.shape + y.aval.shape)
            nx, ny = x.aval.ndim, y.aval.ndim
            perm = tuple(range(nx, nx + ny)) + tuple(range(nx))
            jac = bind(ops.TRANSPOSE, jac, permutation=perm) if nx and ny else jac
        return (jac, aux) if has_aux else jac

    return _staged(run)


def _stack(parts: list[Any], shape: tuple[int, ...]) -> Any:
    rows = [bind(ops.RESHAPE, p, shape=(1, p.aval.size)) for p in parts]
    flat = rows[0] if len(rows) == 1 else bind(ops.CONCATENATE, *rows, dimension=0)
    return bind(ops.RESHAPE, flat, shape=shape)


def hessian(fun: Callable, argnums: int = 0) -> Callable:
    """jacfwd(jacrev(fun)), as JAX."""
    return jacfwd(jacrev(fun, argnums), argnums)
