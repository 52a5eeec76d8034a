"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`.

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

    if isinstance(upper, int):  # a static bound stays a constant, not a loop carry
        return while_loop(lambda c: c[0] < upper, lambda c: (c[0] + 1, body_fun(*c)),
                          (lower, init_val))[1]

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


def _leading_length(xs_leaves: list[Any], length: int | None) -> int:
    lengths = {int(np.shape(x)[0]) for x in xs_leaves if np.ndim(x) > 0}
    if any(np.ndim(x) == 0 for x in xs_leaves):
        raise ValueError("scan requires every leaf of xs to have a leading axis, got a scalar")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ValueError(f"scan requires xs leaves (and length) to agree on one leading axis "
                         f"length, got {sorted(lengths) or 'no xs and no length'}")
    return lengths.pop()


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:
    """`carry, y = f(carry, x)` over the leading axis of `xs`; returns the final carry and the
    stacked ys. Compiled as one loop; `unroll` is accepted for JAX compatibility (IREE runs
    the loop either way)."""
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    n = _leading_length(xs_leaves, length)
    if current_trace() is None:
        return _scan_eagerly(f, init, xs_leaves, xs_tree, n, reverse)
    xs_arrays = [enp.asarray(x) for x in xs_leaves]
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in xs_arrays]
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    carry_avals = [enp.asarray(c).aval for c in carry_leaves]
    y_avals, y_tree = _scan_output_types(f, carry_tree, carry_avals, xs_tree, x_avals)
    ys_init = [enp.zeros((n, *a.shape), a.dtype) for a in y_avals]
    if n == 0:  # nothing to slice: the carry as given, and empty stacks
        return init, tree_util.tree_unflatten(y_tree, ys_init)
    if n == 1:  # one step, no loop (IREE 3.13 crashes compiling a 1-trip slicing loop)
        x = [enp.reshape(a, a.shape[1:]) for a in xs_arrays]
        carry, y = f(init, tree_util.tree_unflatten(xs_tree, x))
        ys = [enp.reshape(enp.asarray(v).astype(a.dtype), (1, *a.shape))
              for v, a in zip(tree_util.tree_leaves(y), y_avals, strict=True)]
        return carry, tree_util.tree_unflatten(y_tree, ys)
    zero = np.int32(0)

    def body(i, state):
        carry, ys = state
        index = (n - 1) - i if reverse else i
        x = [enp.reshape(bind(ops.DYNAMIC_SLICE, a, index, *[zero] * (a.ndim - 1),
                              sizes=(1, *a.shape[1:])), a.shape[1:]) for a in xs_arrays]
        carry, y = f(carry, tree_util.tree_unflatten(xs_tree, x))
        ys = [bind(ops.DYNAMIC_UPDATE_SLICE, buf,
                   enp.reshape(enp.asarray(v).astype(buf.dtype), (1, *buf.shape[1:])), index,
                   *[zero] * (buf.ndim - 1))
              for buf, v in zip(ys, tree_util.tree_leaves(y), strict=True)]
        return carry, ys

    carry, ys = fori_loop(0, n, body, (init, ys_init))
    return carry, tree_util.tree_unflatten(y_tree, ys)


def _scan_output_types(f, carry_tree, carry_avals, xs_tree, x_avals):
    """The ys' types, from tracing `f` once (the probe function is dropped as dead code)."""
    in_tree = tree_util.tree_structure((tree_util.tree_unflatten(carry_tree, carry_avals),
                                        tree_util.tree_unflatten(xs_tree, x_avals)))
    _, out_tree, out_avals = _trace_function(f, "f", in_tree, carry_avals + x_avals,
                                             current_trace(), splat=True)
    carry_out, y_out = tree_util.tree_unflatten(out_tree, out_avals)
    carry_out_leaves, carry_out_tree = tree_util.tree_flatten(carry_out)
    if carry_out_tree != carry_tree or not _same_types(carry_out_leaves, carry_avals):
        raise TypeError(f"scan requires f to return the carry's pytree of shapes and dtypes, "
                        f"got carry {_describe(carry_tree, carry_avals)} but f returned "
                        f"{_describe(carry_out_tree, carry_out_leaves)}")
    y_leaves, y_tree = tree_util.tree_flatten(y_out)
    return y_leaves, y_tree


def _scan_eagerly(f, init, xs_leaves, xs_tree, n, reverse):
    carry, ys = init, []
    host = [np.asarray(x) for x in xs_leaves]
    for i in (reversed(range(n)) if reverse else range(n)):
        carry, y = f(carry, tree_util.tree_unflatten(xs_tree, [h[i] for h in host]))
        ys.append([np.asarray(v) for v in tree_util.tree_leaves(y)])
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    y_tree = tree_util.tree_structure(y)
    stacked = [enp.asarray(np.stack(parts)) for parts in zip(*ys, strict=True)]
    return carry, tree_util.tree_unflatten(y_tree, stacked)
