"""`vmap` as a transformation of traced ember IR.

The function is traced on one batch element's shapes into a region of the current trace
(ad.traced_region), and its ops are replayed with each row's batching rule from
`ember.dialect.batching`: values that depend on a batched input carry a leading batch axis,
the others stay as they are. The result is ordinary ember IR, so vmap composes with jit
and with grad (per-example gradients: `vmap(grad(loss), in_axes=(None, 0))`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import optree

from ember import tree_util
from ember.dialect import batching, ir as eir, ops
from ember.dialect.types import ShapedArray

from . import custom
from .ad import _B, _staged, per_function, traced_region
from .core import Regions, Tracer, current_trace
from .dispatch import bind

_NS = tree_util.NAMESPACE


def _axes_per_leaf(args: tuple, in_axes: Any) -> list[int | None]:
    """in_axes (an int or None for all arguments, or one entry per positional argument, each
    a pytree prefix of that argument with int or None leaves, as JAX's) as one axis per
    leaf."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not isinstance(in_axes, tuple):
        in_axes = (in_axes,) * len(args)
    if len(in_axes) != len(args):
        raise ValueError(f"vmap requires in_axes with one entry per positional argument "
                         f"({len(args)}), got {len(in_axes)}")
    out = []
    for i, (arg, axes) in enumerate(zip(args, in_axes, strict=True)):
        try:
            full = optree.tree_broadcast_prefix(axes, arg, none_is_leaf=True, namespace=_NS)
        except ValueError as e:
            raise ValueError(f"vmap in_axes specification must be a tree prefix of the "
                             f"corresponding value, got specification {axes!r} for argument "
                             f"{i} of structure "
                             f"{optree.tree_structure(arg, namespace=_NS)}") from e
        leaves = optree.tree_leaves(full, none_is_leaf=True, namespace=_NS)
        for axis in leaves:
            if axis is not None and not isinstance(axis, int):
                raise TypeError(f"vmap requires in_axes leaves that are an int or None, got "
                                f"{axis!r} for argument {i}")
        out += leaves
    return out


def _move_to_front(x: Tracer, axis: int) -> Tracer:
    nd = x.aval.ndim
    axis = axis % nd
    if axis == 0:
        return x
    perm = (axis, *[d for d in range(nd) if d != axis])
    return bind(ops.TRANSPOSE, x, permutation=perm)


def _move_from_front(x: Tracer, axis: int) -> Tracer:
    nd = x.aval.ndim
    axis = axis % nd
    if axis == 0:
        return x
    rest = list(range(1, nd))
    perm = tuple(rest[:axis] + [0] + rest[axis:])
    return bind(ops.TRANSPOSE, x, permutation=perm)


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None) -> Callable:
    """`fun` mapped over an axis of its arguments (`in_axes`: an int or None, for all
    arguments or one per positional argument), the results stacked along `out_axes` (an
    int, or None for results that do not depend on the batch)."""
    name = f"vmap({getattr(fun, '__name__', type(fun).__name__)})"

    def run(*args: Any) -> Any:
        trace = current_trace()
        leaves = [trace.lift(x) for x in optree.tree_leaves(args, namespace=_NS)]
        axes = _axes_per_leaf(args, in_axes)
        sizes = {t.aval.shape[a % t.aval.ndim] for t, a in zip(leaves, axes, strict=True)
                 if a is not None and t.aval.ndim}
        for t, a in zip(leaves, axes, strict=True):
            if a is not None and not -t.aval.ndim <= a < max(t.aval.ndim, 1):
                raise ValueError(f"{name} requires in_axes within each argument's rank, got "
                                 f"axis {a} for {t.aval.str_short()}")
        if axis_size is not None:
            sizes.add(axis_size)
        if len(sizes) != 1:
            raise ValueError(f"{name} requires one size for the mapped axes, got "
                             f"{sorted(sizes) or 'no mapped axis (pass axis_size)'}")
        (n,) = sizes
        inputs = [_move_to_front(t, a) if a is not None else t
                  for t, a in zip(leaves, axes, strict=True)]
        flags = [a is not None for a in axes]
        avals = [ShapedArray(t.aval.shape[1:], t.aval.dtype) if f else t.aval
                 for t, f in zip(inputs, flags, strict=True)]

        def visit(block, in_tree, out_tree):
            env = {v: (t, f) for v, t, f in zip(block.arguments, inputs, flags, strict=True)}
            outs = _replay(trace, block, env, n)
            return out_tree, outs

        out_tree, outs = traced_region(fun, args, avals, name, visit)
        return optree.tree_unflatten(out_tree, _place_outputs(outs, out_tree, out_axes, n,
                                                              name))

    # vmap(f) made again with the same axes is the same function (see ad.per_function)
    return per_function(fun, ("vmap", repr(in_axes), repr(out_axes), axis_size),
                        lambda: _staged(run))


def _replay(trace, block, env: dict, n: int) -> list[tuple[Tracer, bool]]:
    def get(value):
        found = env.get(value)
        if found is None:  # a value of an enclosing trace: the same for every element
            found = env[value] = (Tracer(trace, eir.aval_of(value), value, frozenset()),
                                  False)
        return found

    for op in block.operations:
        op = op.operation
        row = eir.opdef(op)
        if row is ops.YIELD:
            return [get(v) for v in op.operands]
        _, _, params = eir.read(op)
        operands = [get(v) for v in op.operands]
        xs, flags = [t for t, _ in operands], [f for _, f in operands]
        if row in (ops.IF, ops.CASE):  # every branch, then a select (JAX's batched cond)
            branches = [_replay(trace, region.blocks[0], env, n) for region in op.regions]
            done = _select_branches(row, xs[0], flags[0], branches, n)
        elif row is ops.FOR and not (flags[0] or flags[1]):
            done = _batched_for(trace, op, xs, flags, env, n)
        elif row is ops.FOR:
            done = _batched_for_bounds(trace, op, xs, flags, env, n)
        elif row is ops.WHILE:
            done = _batched_while(trace, op, xs, flags, env, n)
        elif row is ops.CALL:
            done = _batched_call(trace, op, params["key"], operands, env, n)
        elif row.regions:
            raise NotImplementedError(f"vmap of {row.name} is not supported yet "
                                      f"({batching.NOT_YET.get(row, 'no rule')})")
        elif not any(flags):
            results = bind(row, *xs, **params)
            done = [(t, False) for t in (results if isinstance(results, list) else [results])]
        else:
            rule = batching.RULES.get(row)
            if rule is None:
                raise NotImplementedError(
                    f"vmap of {row.name} is not supported yet "
                    f"({batching.NOT_YET.get(row, 'no rule')})")
            done = [(t, True) for t in rule(_B, n, xs, flags, params)]
        for value, result in zip(op.results, done, strict=True):
            env[value] = result
    raise AssertionError("a traced region ends in ember.yield")


def _batched_call(trace, op, key: str, operands: list, env: dict, n: int
                  ) -> list[tuple[Tracer, bool]]:
    """A call with a rule of its own (custom_vjp, custom_jvp), batched: one call of the body
    batched, whose rule is the original rule mapped over the batch (as JAX batches a
    custom_vjp's fwd and bwd), so grad of vmap still uses the user's rule. A checkpoint's
    body is replayed inline (its rule only trades memory for time)."""
    body = op.regions[0].blocks[0]
    if key.startswith("checkpoint") or not any(f for _, f in operands):
        return _replay(trace, body, {**env, **dict(zip(body.arguments, operands,
                                                       strict=True))}, n)
    inner = custom.rule(key)
    args = [batching.batch(_B, n, t, f) for t, f in operands]

    def batched_body(*xs: Tracer) -> list[Tracer]:
        outs = _replay(current_trace(), body, {**env, **{a: (x, True) for a, x in zip(
            body.arguments, xs, strict=True)}}, n)
        return [batching.batch(_B, n, t, f) for t, f in outs]

    def make_rule(in_tree, out_tree):
        def vjp(b, cts, leaves, free, _body):
            def one(ls, cs):
                grads = inner(b, list(cs), list(ls), [], None)
                return [b.dense(g, x) for g, x in zip(grads, ls, strict=False)]
            return [*vmap(one)(list(leaves), list(cts)), *[None] * len(free)]
        return vjp

    outs = custom.call(batched_body, tuple(args), key.rstrip("0123456789"), make_rule)
    return [(t, True) for t in outs]


def _batched_for(trace, op, xs: list, flags: list[bool], env: dict, n: int
                 ) -> list[tuple[Tracer, bool]]:
    """One loop over the batch: a carry is batched if its initial value is or the body makes
    it so (found by tracing the body again until the carries' flags settle)."""
    lower, upper, *inits = xs
    carried = list(flags[2:])
    body = op.regions[0].blocks[0]
    while True:
        avals = [ShapedArray((n, *x.aval.shape), x.aval.dtype) if c and not f else x.aval
                 for x, f, c in zip(inits, flags[2:], carried, strict=True)]
        regions = Regions(trace, 1)
        try:
            with regions.trace(0, "body", "", [lower.aval, *avals],
                               [f"body argument {j}" for j in range(len(avals) + 1)]) as sub:
                inner = {**env, body.arguments[0]: (sub.args[0], False)}
                inner.update((a, (t, c)) for a, t, c in zip(
                    list(body.arguments)[1:], sub.args[1:], carried, strict=True))
                outs = _replay(trace, body, inner, n)
                settled = [c or f for c, (_, f) in zip(carried, outs, strict=True)]
                if settled == carried:
                    sub.finish([batching.batch(_B, n, t, not c or f)
                                for (t, f), c in zip(outs, carried, strict=True)])
            if settled != carried:
                carried = settled
                continue
            start = [batching.batch(_B, n, x, not c or f)
                     for x, f, c in zip(inits, flags[2:], carried, strict=True)]
            results = bind(ops.FOR, lower, upper, *start, regions=regions,
                           results=tuple(avals))
            return list(zip(results, carried, strict=True))
        finally:
            regions.discard()


def _batched_while(trace, op, xs: list, flags: list[bool], env: dict, n: int
                   ) -> list[tuple[Tracer, bool]]:
    """One loop over the batch, as JAX's: every carry batched; it runs while the predicate
    holds for some element, and an element whose predicate is false keeps its carries."""
    avals = [x.aval if f else ShapedArray((n, *x.aval.shape), x.aval.dtype)
             for x, f in zip(xs, flags, strict=True)]
    cond, body = (region.blocks[0] for region in op.regions)

    def predicate(args) -> tuple[Tracer, bool]:
        inner = {**env, **{a: (t, True) for a, t in zip(cond.arguments, args, strict=True)}}
        return _replay(trace, cond, inner, n)[0]

    regions = Regions(trace, 2)
    try:
        with regions.trace(0, "cond", "", avals, [f"carry {j}" for j in range(len(xs))]) as sub:
            p, batched = predicate(sub.args)
            if batched:
                hits = bind(ops.REDUCE_MAX, bind(ops.CONVERT, p, dtype=np.dtype(np.int32)),
                            axes=(0,))
                p = bind(ops.COMPARE, hits, _B.scalar(0, hits.aval), direction="GT")
            sub.finish([p])
        with regions.trace(1, "body", "", avals, [f"carry {j}" for j in range(len(xs))]) as sub:
            p, batched = predicate(sub.args)
            inner = {**env, **{a: (t, True) for a, t in zip(body.arguments, sub.args,
                                                             strict=True)}}
            outs = [batching.batch(_B, n, t, f) for t, f in _replay(trace, body, inner, n)]
            if batched:
                outs = [bind(ops.SELECT, bind(ops.BROADCAST_IN_DIM, p, shape=new.aval.shape,
                                              broadcast_dimensions=(0,)), new, old)
                        for new, old in zip(outs, sub.args, strict=True)]
            sub.finish(outs)
        start = [batching.batch(_B, n, x, f) for x, f in zip(xs, flags, strict=True)]
        results = bind(ops.WHILE, *start, regions=regions, results=tuple(avals))
        return [(r, True) for r in results]
    finally:
        regions.discard()


def _batched_for_bounds(trace, op, xs: list, flags: list[bool], env: dict, n: int
                        ) -> list[tuple[Tracer, bool]]:
    """A loop whose bounds differ per element, as JAX's: a while loop over the batch whose
    index is a carry; an element past its upper bound keeps its carries."""
    lower, upper, *inits = [batching.batch(_B, n, x, f) for x, f in zip(xs, flags, strict=True)]
    avals = [lower.aval, *[x.aval for x in inits]]
    body = op.regions[0].blocks[0]

    def running(i: Tracer) -> Tracer:
        return bind(ops.COMPARE, i, upper, direction="LT")

    regions = Regions(trace, 2)
    try:
        with regions.trace(0, "cond", "", avals, [f"carry {j}" for j in range(len(avals))]
                           ) as sub:
            hits = bind(ops.REDUCE_MAX, bind(ops.CONVERT, running(sub.args[0]),
                                             dtype=np.dtype(np.int32)), axes=(0,))
            sub.finish([bind(ops.COMPARE, hits, _B.scalar(0, hits.aval), direction="GT")])
        with regions.trace(1, "body", "", avals, [f"carry {j}" for j in range(len(avals))]
                           ) as sub:
            i, *carries = sub.args
            inner = {**env, **{a: (t, True) for a, t in zip(body.arguments, sub.args,
                                                             strict=True)}}
            outs = [batching.batch(_B, n, t, f) for t, f in _replay(trace, body, inner, n)]
            outs = [bind(ops.ADD, i, _B.scalar(1, i.aval)), *outs]
            p = running(i)
            sub.finish([bind(ops.SELECT, bind(ops.BROADCAST_IN_DIM, p, shape=new.aval.shape,
                                              broadcast_dimensions=(0,)), new, old)
                        for new, old in zip(outs, sub.args, strict=True)])
        results = bind(ops.WHILE, lower, *inits, regions=regions, results=tuple(avals))
        return [(r, True) for r in results[1:]]
    finally:
        regions.discard()


def _select_branches(row, selector: Tracer, selector_batched: bool,
                     branches: list[list[tuple[Tracer, bool]]], n: int
                     ) -> list[tuple[Tracer, bool]]:
    """The branches' results chosen per element: `where(pred, then, else)` for ember.if,
    a chain of `index == i` for ember.case (its index is clamped already)."""
    if row is ops.IF:
        zero = _B.scalar(0, selector.aval)
        conditions = [bind(ops.COMPARE, selector, zero, direction="NE")]
        order = [0]  # branch 0 where the predicate holds, else branch 1
    else:
        conditions = [bind(ops.COMPARE, selector, _B.scalar(i, selector.aval), direction="EQ")
                      for i in range(len(branches) - 1)]
        order = list(range(len(branches) - 1))
    out = []
    for k in range(len(branches[0])):
        values = [b[k] for b in branches]
        batched = selector_batched or any(f for _, f in values)
        ts = [batching.batch(_B, n, t, f) if batched else t for t, f in values]
        shape = ts[0].aval.shape
        result = ts[-1]
        for i, cond in zip(reversed(order), reversed(conditions), strict=True):
            dims = (0,) if selector_batched else ()
            wide = bind(ops.BROADCAST_IN_DIM, cond, shape=shape, broadcast_dimensions=dims)
            result = bind(ops.SELECT, wide, ts[i], result)
        out.append((result, batched))
    return out


def _place_outputs(outs: list[tuple[Tracer, bool]], out_tree: Any, out_axes: Any, n: int,
                   name: str) -> list[Any]:
    """Each output leaf with its batch axis at its entry of `out_axes` (a tree prefix of the
    output, as JAX's, or one entry per leaf)."""
    skeleton = optree.tree_unflatten(out_tree, list(range(len(outs))))
    try:
        out_axes = optree.tree_leaves(optree.tree_broadcast_prefix(
            out_axes, skeleton, none_is_leaf=True, namespace=_NS), none_is_leaf=True,
            namespace=_NS)
    except ValueError:
        if not (isinstance(out_axes, (list, tuple)) and len(out_axes) == len(outs)):
            raise ValueError(f"{name} requires out_axes that is a tree prefix of the output "
                             f"{out_tree} or has one entry per output leaf ({len(outs)}), got "
                             f"{out_axes!r}") from None
    placed = []
    for (t, batched), axis in zip(outs, out_axes, strict=True):
        if axis is None:
            if batched:
                raise ValueError(f"{name} got out_axes=None for an output that depends on "
                                 f"the mapped axis ({t.aval.str_short()} per element)")
            placed.append(t)
            continue
        t = t if batched else batching.batch(_B, n, t, False)
        placed.append(_move_from_front(t, axis))
    return placed

