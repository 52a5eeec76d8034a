"""Batching rules of the op table: for each row, the op applied to a batch of operands.

A rule is `rule(b, n, xs, batched, params) -> results`: `xs` are the operands, each either
batched (its leading axis is the batch, of size `n`) or not (`batched[i]` False: the same
value for every batch element); every result is batched, its batch axis leading. `b` is
the builder the transformation passes in (see derivatives.py). Rows without operands
(constants, iota) never see a batch. Every row is in RULES or NOT_YET; tests/test_vmap.py
checks the table is covered.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import ops
from .opdef import OpDef, Trait

Rule = Callable[..., list]


def _e(b, row: OpDef, *xs, **params):
    return b.emit(row, *xs, **params)


def batch(b, n: int, x, batched: bool):
    """`x` with a leading batch axis (broadcast when it has none)."""
    if batched:
        return x
    shape = b.aval(x).shape
    return _e(b, ops.BROADCAST_IN_DIM, x, shape=(n, *shape),
              broadcast_dimensions=tuple(range(1, len(shape) + 1)))


def _all(b, n, xs, batched):
    return [batch(b, n, x, f) for x, f in zip(xs, batched, strict=True)]


def _leading(row: OpDef) -> Rule:
    """A row already batched over its operands' leading dims: the batch is one more."""
    return lambda b, n, xs, batched, p: [_e(b, row, *_all(b, n, xs, batched))]


def _elementwise(row: OpDef) -> Rule:
    def rule(b, n, xs, batched, params):
        return [_e(b, row, *_all(b, n, xs, batched), **params)]
    return rule


def _shifted(key: str) -> Callable:
    return lambda p: tuple(int(d) + 1 for d in p[key])


def _unary_axes(row: OpDef, key: str, scalar: bool = False) -> Rule:
    """Rows of one operand whose `key` names axes: each moves one place right."""
    def rule(b, n, xs, batched, params):
        new = dict(params)
        new[key] = int(params[key]) + 1 if scalar else _shifted(key)(params)
        return [_e(b, row, xs[0], **new)]
    return rule


def _broadcast_in_dim(b, n, xs, batched, p):
    return [_e(b, ops.BROADCAST_IN_DIM, xs[0], shape=(n, *p["shape"]),
               broadcast_dimensions=(0, *_shifted("broadcast_dimensions")(p)))]


def _reshape(b, n, xs, batched, p):
    return [_e(b, ops.RESHAPE, xs[0], shape=(n, *p["shape"]))]


def _dimension_size(b, n, xs, batched, p):
    size = _e(b, ops.DIMENSION_SIZE, xs[0], dimension=int(p["dimension"]) + 1,
              dtype=p["dtype"])
    return [batch(b, n, size, False)]  # the same for every element of the batch


def _transpose(b, n, xs, batched, p):
    return [_e(b, ops.TRANSPOSE, xs[0], permutation=(0, *_shifted("permutation")(p)))]


def _slice(b, n, xs, batched, p):
    return [_e(b, ops.SLICE, xs[0], start_indices=(0, *p["start_indices"]),
               limit_indices=(n, *p["limit_indices"]), strides=(1, *p["strides"]))]


def _concatenate(b, n, xs, batched, p):
    return [_e(b, ops.CONCATENATE, *_all(b, n, xs, batched), dimension=int(p["dimension"]) + 1)]


def _sort(b, n, xs, batched, p):
    return [_e(b, ops.SORT, *_all(b, n, xs, batched), dimension=int(p["dimension"]) + 1)]


def _cumulative(b, n, xs, batched, p):
    return [_e(b, ops.CUMULATIVE, xs[0], axis=int(p["axis"]) + 1, combiner=p["combiner"])]


def _dynamic_slice(b, n, xs, batched, p):
    """Shared starts: one slice with the batch axis whole. Starts per element: a gather of
    each element's window from the flattened operand."""
    if not any(batched[1:]):
        return [_e(b, ops.DYNAMIC_SLICE, xs[0], b.index(0), *xs[1:], sizes=(n, *p["sizes"]))]
    x = batch(b, n, xs[0], batched[0])
    sizes = tuple(p["sizes"])
    shape = b.aval(x).shape
    pos = _window_positions(b, n, shape[1:], sizes, (1,) * len(sizes), xs[1:], batched[1:])
    flat = _e(b, ops.RESHAPE, x, shape=(int(np.prod(shape)),))
    out = _e(b, ops.TAKE, flat, _e(b, ops.RESHAPE, pos, shape=(n * int(np.prod(sizes)),)),
             axis=0)
    return [_e(b, ops.RESHAPE, out, shape=(n, *sizes))]


def _dynamic_update_slice(b, n, xs, batched, p):
    """Shared starts: one update with the batch axis whole. Starts per element: a scatter
    of each element's window into the flattened operand."""
    x, u = _all(b, n, xs[:2], batched[:2])
    if not any(batched[2:]):
        return [_e(b, ops.DYNAMIC_UPDATE_SLICE, x, u, b.index(0), *xs[2:],
                   strides=(1, *p["strides"]))]
    shape, sizes = b.aval(x).shape, b.aval(u).shape[1:]
    pos = _window_positions(b, n, shape[1:], sizes, tuple(p["strides"]), xs[2:], batched[2:])
    count = n * int(np.prod(sizes))
    out = _e(b, ops.SCATTER, _e(b, ops.RESHAPE, x, shape=(int(np.prod(shape)),)),
             _e(b, ops.RESHAPE, pos, shape=(count,)), _e(b, ops.RESHAPE, u, shape=(count,)),
             combine="set")
    return [_e(b, ops.RESHAPE, out, shape=shape)]


def _window_positions(b, n, shape, sizes, strides, starts, batched):
    """For each batch element, the positions in its flattened operand (n, *shape) of a window
    of `sizes` (every `strides` element) at its `starts`, each clamped so the window fits,
    as dynamic_slice clamps: int32 of shape (n, *sizes)."""
    i32 = np.dtype(np.int32)
    full = (n, *sizes)
    like = b.like(full, i32)
    steps = [int(np.prod(shape[d:], dtype=np.int64)) for d in range(len(shape) + 1)]

    def iota(d):
        return _e(b, ops.IOTA, dimension=d, shape=full, dtype=i32)

    pos = _e(b, ops.MUL, iota(0), b.scalar(steps[0], like))
    for d, (start, f) in enumerate(zip(starts, batched, strict=True)):
        s_aval = b.aval(start)
        if s_aval.dtype != i32:
            start = _e(b, ops.CONVERT, start, dtype=i32)
        last = max(shape[d] - ((sizes[d] - 1) * strides[d] + 1), 0)
        start = _e(b, ops.MIN, _e(b, ops.MAX, start, b.scalar(0, b.aval(start))),
                   b.scalar(last, b.aval(start)))
        start = _e(b, ops.BROADCAST_IN_DIM, start, shape=full,
                   broadcast_dimensions=(0,) if f else ())
        along = _e(b, ops.ADD, start, _e(b, ops.MUL, iota(d + 1), b.scalar(strides[d], like)))
        pos = _e(b, ops.ADD, pos, _e(b, ops.MUL, along, b.scalar(steps[d + 1], like)))
    return pos


def _dot_general(b, n, xs, batched, p):
    """The batch axis is a batch dimension of both (if both are batched), else a free one
    of the batched operand, moved to the front of the result."""
    lc, rc, lb, rb = (tuple(int(d) for d in p[k]) for k in (
        "lhs_contracting", "rhs_contracting", "lhs_batch", "rhs_batch"))
    a, w = xs
    ba, bw = batched
    shift = lambda dims, flag: tuple(d + 1 for d in dims) if flag else dims  # noqa: E731
    new = {"lhs_contracting": shift(lc, ba), "rhs_contracting": shift(rc, bw),
           "lhs_batch": shift(lb, ba), "rhs_batch": shift(rb, bw)}
    if ba and bw:
        new["lhs_batch"] = (0, *new["lhs_batch"])
        new["rhs_batch"] = (0, *new["rhs_batch"])
        return [_e(b, ops.DOT_GENERAL, a, w, **new)]
    out = _e(b, ops.DOT_GENERAL, a, w, **new)
    if ba:  # a's dim 0 is its first free dim: right after the batch dims
        axis = len(lb)
    else:  # w's dim 0 comes after the batch dims and all of a's free dims
        a_free = b.aval(a).ndim - len(lc) - len(lb)
        axis = len(lb) + a_free
    return [_to_front(b, out, axis)]


def _to_front(b, x, axis: int):
    if axis == 0:
        return x
    nd = b.aval(x).ndim
    perm = (axis, *[d for d in range(nd) if d != axis])
    return _e(b, ops.TRANSPOSE, x, permutation=perm)


def _take(b, n, xs, batched, p):
    """Along `axis + 1` for a batched operand and shared indices; otherwise the batch is
    folded into the gathered axis (operand flattened over (batch, axis), the indices
    offset by each element's row)."""
    x, idx = xs
    bx, bi = batched
    axis = int(p["axis"])
    if not bi:
        return [_e(b, ops.TAKE, x, idx, axis=axis + 1)]
    if not bx:
        out = _e(b, ops.TAKE, x, idx, axis=axis)  # the batch axis lands at `axis`
        return [_to_front(b, out, axis)]
    shape = b.aval(x).shape  # (n, *s)
    m = shape[axis + 1]
    nd = len(shape)
    perm = (0, axis + 1, *[d for d in range(1, nd) if d != axis + 1])
    moved = _e(b, ops.TRANSPOSE, x, permutation=perm) if axis else x
    rest = tuple(shape[d] for d in perm[2:])
    flat = _e(b, ops.RESHAPE, moved, shape=(n * m, *rest))
    i_aval = b.aval(idx)
    i32 = np.dtype(np.int32)
    like = b.like(i_aval.shape, i32)
    i = idx if i_aval.dtype == i32 else _e(b, ops.CONVERT, idx, dtype=i32)
    zero, size = b.scalar(0, like), b.scalar(m, like)
    i = _e(b, ops.SELECT, _e(b, ops.COMPARE, i, zero, direction="LT"), _e(b, ops.ADD, i, size), i)
    i = _e(b, ops.MIN, _e(b, ops.MAX, i, zero), b.scalar(max(m - 1, 0), like))
    rows = _e(b, ops.IOTA, dimension=0, shape=i_aval.shape, dtype=i32)
    i = _e(b, ops.ADD, i, _e(b, ops.MUL, rows, size))
    out = _e(b, ops.TAKE, flat, i, axis=0)  # (n, *I, *rest)
    k = len(i_aval.shape) - 1  # the index dims after the batch
    if axis == 0:
        return [out]
    # out: (n, I..., rest...) where rest = s without axis; put I back at `axis`
    lead = list(range(1 + k, 1 + k + axis))
    perm_out = (0, *lead, *range(1, 1 + k), *range(1 + k + axis, b.aval(out).ndim))
    return [_e(b, ops.TRANSPOSE, out, permutation=perm_out)]


def _scatter(b, n, xs, batched, p):
    """1-d scatters of every batch element as one, over the flattened (batch, n) operand;
    out-of-range positions stay out of range."""
    x, pos, upd = _all(b, n, xs, batched)
    m = b.aval(x).shape[1]
    k = b.aval(pos).shape[1]
    like = b.aval(pos)
    zero, size = b.scalar(0, like), b.scalar(m, like)
    inside = _e(b, ops.AND, _e(b, ops.COMPARE, pos, zero, direction="GE"),
                _e(b, ops.COMPARE, pos, size, direction="LT"))
    rows = _e(b, ops.IOTA, dimension=0, shape=like.shape, dtype=like.dtype)
    shifted = _e(b, ops.ADD, pos, _e(b, ops.MUL, rows, size))
    flat_pos = _e(b, ops.SELECT, inside, shifted, b.scalar(-1, like))
    out = _e(b, ops.SCATTER, _e(b, ops.RESHAPE, x, shape=(n * m,)),
             _e(b, ops.RESHAPE, flat_pos, shape=(n * k,)),
             _e(b, ops.RESHAPE, upd, shape=(n * k,)), combine=p["combine"])
    return [_e(b, ops.RESHAPE, out, shape=(n, m))]


RULES: dict[OpDef, Rule] = {
    op: _elementwise(op) for op in ops.OPS.values() if op.has(Trait.ELEMENTWISE)
}
def _after(b, n, xs, batched, p):
    """The operand batched; the values it waits for as they are."""
    return [_e(b, ops.AFTER, batch(b, n, xs[0], batched[0]), *xs[1:])]


RULES.update({
    ops.AFTER: _after,
    ops.COPY: _elementwise(ops.COPY),
    ops.BROADCAST_IN_DIM: _broadcast_in_dim,
    ops.RESHAPE: _reshape,
    ops.TRANSPOSE: _transpose,
    ops.DIMENSION_SIZE: _dimension_size,
    ops.REV: _unary_axes(ops.REV, "dimensions"),
    ops.REDUCE_SUM: _unary_axes(ops.REDUCE_SUM, "axes"),
    ops.REDUCE_MAX: _unary_axes(ops.REDUCE_MAX, "axes"),
    ops.REDUCE_MIN: _unary_axes(ops.REDUCE_MIN, "axes"),
    ops.REDUCE_PROD: _unary_axes(ops.REDUCE_PROD, "axes"),
    ops.CUMULATIVE: _cumulative,
    ops.SORT: _sort,
    ops.SLICE: _slice,
    ops.CONCATENATE: _concatenate,
    ops.DYNAMIC_SLICE: _dynamic_slice,
    ops.DYNAMIC_UPDATE_SLICE: _dynamic_update_slice,
    ops.DOT_GENERAL: _dot_general,
    **{row: _leading(row) for row in ops.LINALG_OPS},
    ops.TAKE: _take,
    ops.SCATTER: _scatter,
})

NOT_YET: dict[OpDef, str] = {
    ops.CONSTANT: "no operands: never batched",
    ops.IOTA: "no operands: never batched",
    ops.FUSION: "made by a pass after batching, never traced",
    ops.ELEMENTWISE_FOR: "made by a pass after batching, never traced",
    ops.IF: "batched by the transformation itself: every branch, then a select",
    ops.CASE: "batched by the transformation itself: every branch, then a select chain",
    ops.CALL: "batched by the transformation itself: one call of the batched body whose "
              "rule is the original rule mapped over the batch (a checkpoint: inline)",
    ops.WHILE: "batched by the transformation itself: every carry batched, run while some "
               "element's predicate holds, the others keeping their carries",
    ops.FOR: "batched by the transformation itself: one loop, its carries batched as the "
             "body needs (bounds per element: a while loop, as JAX's)",
    ops.YIELD: "a terminator",
    ops.DEBUG_PRINT: "a side effect",
    ops.REF_GET: "refs",
    ops.REF_SET: "refs",
}
