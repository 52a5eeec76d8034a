"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`.

Under a trace, each branch or loop body is traced once into a region of an `ember.if` /
`ember.case` / `ember.while` / `ember.for` op (lowered to `scf.if` / `scf.if` chains /
`scf.while` / `scf.for`); regions see the enclosing function's values, so closures need
nothing special. Outside a trace they run as plain Python.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import numpy as enp, tree_util
from ember._src.core import Regions, current_trace, defined_at
from ember._src.dispatch import bind
from ember.dialect import ops
from ember.dialect.types import ShapedArray


def _describe(tree: Any, avals: list[ShapedArray]) -> str:
    return str(tree_util.tree_unflatten(tree, [a.str_short() for a in avals]))


def _trace_region(regions: Regions, i: int, fun: Callable, what: str, tree: Any = None,
                  avals: Sequence[ShapedArray] = (), call: Callable | None = None
                  ) -> tuple[Any, list[ShapedArray]]:
    """Trace `fun` into region `i`: on fresh arguments of `avals` (a loop carry, unflattened
    with `tree`), or through `call()` (a branch, which sees the enclosing values)."""
    names = [f"{what} argument {j}" for j in range(len(avals))]
    with regions.trace(i, getattr(fun, "__name__", what), defined_at(fun), avals, names) as trace:
        out = call() if call is not None else fun(tree_util.tree_unflatten(tree, trace.args))
        leaves, out_tree = tree_util.tree_flatten(out)
        out_avals = trace.finish(leaves)
    return out_tree, out_avals


def _same_types(a: list[ShapedArray], b: list[ShapedArray]) -> bool:
    return [(x.shape, x.dtype) for x in a] == [(y.shape, y.dtype) for y in b]


def _branches(op, selector: Any, branches: Sequence[Callable], operands: tuple,
              requirement: str, labels: Sequence[str]) -> Any:
    """Trace every branch into a region of `op` (ember.if or ember.case); all must agree."""
    regions = Regions(current_trace(), len(branches))
    try:
        traced = [_trace_region(regions, i, fun, labels[i], call=lambda f=fun: f(*operands))
                  for i, fun in enumerate(branches)]
        tree0, avals0 = traced[0]
        for i, (tree, avals) in enumerate(traced[1:], start=1):
            if tree != tree0 or not _same_types(avals, avals0):
                raise TypeError(
                    f"{requirement} to return the same pytree of shapes and dtypes, got "
                    f"{labels[0]}: {_describe(tree0, avals0)} and {labels[i]}: "
                    f"{_describe(tree, avals)}")
        if not avals0:
            raise TypeError(f"{requirement} to return at least one array")
        results = tuple(ShapedArray(a.shape, a.dtype, all(t[1][j].weak_type for t in traced))
                        for j, a in enumerate(avals0))
        outs = bind(op, selector, regions=regions, results=results)
    finally:
        regions.discard()
    return tree_util.tree_unflatten(tree0, outs)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`; both are traced."""
    if current_trace() is None:
        return true_fun(*operands) if bool(np.asarray(pred)) else false_fun(*operands)
    pred = enp.asarray(pred)
    if pred.shape != () or pred.dtype.kind not in "biu":
        raise TypeError(f"cond requires a scalar bool or integer predicate, got "
                        f"{pred.aval.str_short()}")
    return _branches(ops.IF, pred, (true_fun, false_fun), operands,
                     "cond requires true_fun and false_fun", ("true_fun", "false_fun"))


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """`branches[index](*operands)`, with `index` clamped to the valid range (as JAX does)."""
    if not branches:
        raise ValueError("switch requires at least one branch, got none")
    if current_trace() is None:
        i = builtins.min(builtins.max(int(np.asarray(index)), 0), len(branches) - 1)
        return branches[i](*operands)
    index = enp.asarray(index)
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"switch requires a scalar integer index, got {index.aval.str_short()}")
    if len(branches) == 1:
        return branches[0](*operands)
    index = enp.minimum(enp.maximum(index, 0), len(branches) - 1).astype(np.int32)
    return _branches(ops.CASE, index, tuple(branches), operands,
                     "switch requires every branch",
                     [f"branches[{i}]" for i in range(len(branches))])


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
    regions = Regions(current_trace(), 2)
    try:
        _, cond_avals = _trace_region(regions, 0, cond_fun, "cond_fun", tree, avals)
        if len(cond_avals) != 1 or cond_avals[0].shape != () or \
                cond_avals[0].dtype != np.bool_:
            raise TypeError(f"while_loop requires cond_fun to return a boolean scalar, got "
                            f"{[a.str_short() for a in cond_avals]}")
        body_tree, body_avals = _trace_region(regions, 1, body_fun, "body_fun", tree, avals)
        if body_tree != tree or not _same_types(body_avals, avals):
            raise TypeError(
                f"while_loop requires body_fun to return the carry's pytree of shapes and "
                f"dtypes, got carry {_describe(tree, avals)} but body_fun returned "
                f"{_describe(body_tree, body_avals)}")
        outs = bind(ops.WHILE, *leaves, regions=regions, results=tuple(avals))
    finally:
        regions.discard()
    return tree_util.tree_unflatten(tree, outs)


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """`for i in range(lower, upper): val = body_fun(i, val)`; bounds may be traced. Compiled
    as one counted loop (scf.for), its carries updated in place."""
    if current_trace() is None:
        val = init_val
        for i in range(int(np.asarray(lower)), int(np.asarray(upper))):
            val = body_fun(i, val)
        return val
    lower, upper = _bounds(lower, upper)
    leaves, tree = tree_util.tree_flatten(init_val)
    leaves = [enp.asarray(x) for x in leaves]
    avals = [x.aval for x in leaves]
    in_tree = tree_util.tree_structure((0, tree_util.tree_unflatten(tree, avals)))
    regions = Regions(current_trace(), 1)
    try:
        body_tree, body_avals = _trace_region(regions, 0, lambda args: body_fun(*args),
                                              "body_fun", in_tree, [lower.aval, *avals])
        if body_tree != tree or not _same_types(body_avals, avals):
            raise TypeError(
                f"fori_loop requires body_fun to return the carry's pytree of shapes and "
                f"dtypes, got carry {_describe(tree, avals)} but body_fun returned "
                f"{_describe(body_tree, body_avals)}")
        outs = bind(ops.FOR, lower, upper, *leaves, regions=regions, results=tuple(avals))
    finally:
        regions.discard()
    return tree_util.tree_unflatten(tree, outs)


def _bounds(lower: Any, upper: Any) -> tuple[Any, Any]:
    """Scalar integer bounds of one dtype (Python ints take the other bound's dtype)."""
    bounds = [enp.asarray(b) for b in (lower, upper)]
    for name, b in zip(("lower", "upper"), bounds, strict=True):
        if b.shape != () or b.dtype.kind not in "iu":
            raise TypeError(f"fori_loop requires scalar integer bounds, got {name} "
                            f"{b.aval.str_short()}")
    dtype = enp.result_type(*bounds)  # JAX's promotion: a Python int takes the other's dtype
    return tuple(b.astype(dtype) for b in bounds)


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
                   *[zero] * (buf.ndim - 1), strides=(1,) * buf.ndim)
              for buf, v in zip(ys, tree_util.tree_leaves(y), strict=True)]
        return carry, ys

    carry, ys = fori_loop(0, n, body, (init, ys_init))
    return carry, tree_util.tree_unflatten(y_tree, ys)


def _scan_output_types(f, carry_tree, carry_avals, xs_tree, x_avals):
    """The ys' types, from tracing `f` once into a region that is then thrown away."""
    in_tree = tree_util.tree_structure((tree_util.tree_unflatten(carry_tree, carry_avals),
                                        tree_util.tree_unflatten(xs_tree, x_avals)))
    probe = Regions(current_trace(), 1)
    try:
        out_tree, out_avals = _trace_region(probe, 0, lambda args: f(*args), "f", in_tree,
                                            carry_avals + x_avals)
    finally:
        probe.discard()
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
