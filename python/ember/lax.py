"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`.

Under a trace, each branch or loop body is traced once into a private function of the module
and called by an `ember.cond` / `ember.while` op (lowered to `scf.if` / `scf.while`); values
it closes over become extra operands. Outside a trace they run as plain Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import numpy as enp
from ember import tree_util
from ember._src.core import Trace, bind, current_trace
from ember.dialect import ops
from ember.dialect.types import ShapedArray


def _where(fun: Callable) -> str:
    code = getattr(fun, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else "<unknown>"


def _describe(tree: Any, avals: list[ShapedArray]) -> str:
    return str(tree_util.tree_unflatten(tree, [a.str_short() for a in avals]))


def _trace_function(fun: Callable, what: str, tree: Any, avals: list[ShapedArray],
                    parent: Trace, splat: bool = False) -> tuple[Trace, Any, list[ShapedArray]]:
    """Trace `fun` on abstract arguments into a private function of the parent's module;
    with `splat`, the argument tree is a tuple of positional arguments."""
    name = getattr(fun, "__name__", what)
    names = [f"{what} argument {i}" for i in range(len(avals))]
    with Trace(name, _where(fun), avals, names, parent=parent) as trace:
        args = tree_util.tree_unflatten(tree, trace.args)
        out = fun(*args) if splat else fun(args)
        leaves, out_tree = tree_util.tree_flatten(out)
        out_avals = trace.finish(leaves)
    return trace, out_tree, out_avals


def _same_types(a: list[ShapedArray], b: list[ShapedArray]) -> bool:
    return [(x.shape, x.dtype) for x in a] == [(y.shape, y.dtype) for y in b]


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`; both are traced."""
    if current_trace() is None:
        return true_fun(*operands) if bool(np.asarray(pred)) else false_fun(*operands)
    pred = enp.asarray(pred)
    if pred.shape != () or pred.dtype.kind not in "biu":
        raise TypeError(f"cond requires a scalar bool or integer predicate, got "
                        f"{pred.aval.str_short()}")
    leaves, tree = tree_util.tree_flatten(operands)
    leaves = [enp.asarray(x) for x in leaves]
    avals = [x.aval for x in leaves]
    parent = current_trace()
    false_t, false_tree, false_avals = _trace_function(false_fun, "false_fun", tree, avals,
                                                       parent, splat=True)
    true_t, true_tree, true_avals = _trace_function(true_fun, "true_fun", tree, avals, parent,
                                                    splat=True)
    if true_tree != false_tree or not _same_types(true_avals, false_avals):
        raise TypeError(
            f"cond requires true_fun and false_fun to return the same pytree of shapes and "
            f"dtypes, got true_fun: {_describe(true_tree, true_avals)} and false_fun: "
            f"{_describe(false_tree, false_avals)}")
    if not true_avals:
        raise TypeError("cond requires branches that return at least one array")
    results = tuple(ShapedArray(t.shape, t.dtype, t.weak_type and f.weak_type)
                    for t, f in zip(true_avals, false_avals, strict=True))
    outs = bind(ops.COND, pred, *leaves, *false_t.captures, *true_t.captures,
                branches=(false_t.symbol, true_t.symbol),
                captures=(len(false_t.captures), len(true_t.captures)), results=results)
    return tree_util.tree_unflatten(true_tree, outs)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """`while cond_fun(val): val = body_fun(val)`, compiled as one loop (scf.while)."""
    if current_trace() is None:
        val = init_val
        while bool(np.asarray(cond_fun(val))):
            val = body_fun(val)
        return val
    leaves, tree = tree_util.tree_flatten(init_val)
    leaves = [enp.asarray(x) for x in leaves]
    avals = [x.aval for x in leaves]
    parent = current_trace()
    cond_t, _, cond_avals = _trace_function(cond_fun, "cond_fun", tree, avals, parent)
    if len(cond_avals) != 1 or cond_avals[0].shape != () or cond_avals[0].dtype != np.bool_:
        raise TypeError(f"while_loop requires cond_fun to return a boolean scalar, got "
                        f"{[a.str_short() for a in cond_avals]}")
    body_t, body_tree, body_avals = _trace_function(body_fun, "body_fun", tree, avals, parent)
    if body_tree != tree or not _same_types(body_avals, avals):
        raise TypeError(
            f"while_loop requires body_fun to return the carry's pytree of shapes and dtypes, "
            f"got carry {_describe(tree, avals)} but body_fun returned "
            f"{_describe(body_tree, body_avals)}")
    outs = bind(ops.WHILE, *leaves, *cond_t.captures, *body_t.captures,
                functions=(cond_t.symbol, body_t.symbol),
                captures=(len(cond_t.captures), len(body_t.captures)), results=tuple(avals))
    return tree_util.tree_unflatten(tree, outs)


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """`for i in range(lower, upper): val = body_fun(i, val)`; bounds may be traced."""
    if current_trace() is None and all(isinstance(b, int) for b in (lower, upper)):
        val = init_val
        for i in range(lower, upper):
            val = body_fun(i, val)
        return val

    def keep_going(carry):
        return carry[0] < carry[1]

    def step(carry):
        i, stop, val = carry
        return i + 1, stop, body_fun(i, val)

    return while_loop(keep_going, step, (lower, upper, init_val))[2]


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """`branches[index](*operands)`, with `index` clamped to the valid range (as JAX does)."""
    if not branches:
        raise ValueError("switch requires at least one branch, got none")
    if current_trace() is None:
        i = min(max(int(np.asarray(index)), 0), len(branches) - 1)
        return branches[i](*operands)
    if len(branches) == 1:
        return branches[0](*operands)
    index = enp.minimum(enp.maximum(enp.asarray(index), 0), len(branches) - 1)

    def rest(*ops: Any) -> Any:  # branches[1:], selected by index - 1
        return switch(index - 1, branches[1:], *ops)

    return cond(index == 0, branches[0], rest, *operands)
