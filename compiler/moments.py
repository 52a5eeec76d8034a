"""`ember-moments` (CPU targets): a variance in one pass over the data.

Σ(x - m)², with `m` computed from Σx over the same dims of the same float32 x (the
variance of layernorm, `var` and `std`), takes two passes over x: the mean's, then the
deviations'. For any per-row m, Σ(x - m)² = Σx² - 2mΣx + nm²; this pass computes Σx and
Σx² from x converted to float64 and the identity in float64, clamped at zero, then
converts back. ember-fuse-cpu fuses the two sums into one generic: one pass over x
(layernorm 4096x1024: 0.75 -> 0.67 ms, best of 40 alternating rounds).

Numerics: products of float32 values are exact in float64, and the float64 sums round at
2^-53, so the cancellation in Σx² - m(2Σx - n·m) costs about 2^-53·n·(1 + mean²/variance)
relative at worst: below float32's 2^-24 while n·mean²/variance < 2^29. Both forms also
carry the float32 mean's rounding, (m - mean)² ~ 2^-48·mean², which dominates far from zero.
tests/test_fuse.py holds the result to NumPy's float64 two passes within 1e-5 relative plus
that term, or within twice JAX's error, with |mean|/std up to 1e7.

Only float32 x is rewritten (float64 has no wider type, and GPU backends pay dearly for
float64), only outside loops, and only where the sums run in one step (split_reduction.py),
as ember-fuse-cpu fuses them only then.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.types import ShapedArray, symbolic

from .fuse import axes_of
from .split_reduction import split_reduction
from .walk import body, functions, has_uses, producer

F64 = np.dtype(np.float64)


def _of(value: mlir.Value, row) -> mlir.Operation | None:
    op = producer(value)
    return op if op is not None and eir.opdef(op) is row else None


def _per_row(mean: mlir.Value, dims: list[int], domain: tuple, axes: list[int]) -> bool:
    """Whether broadcast_in_dim(mean, dims) into `domain` repeats one value along `axes`
    and reads mean's dims in order: a reshape of mean then has the reduced shape."""
    shape = eir.aval_of(mean).shape
    return (dims == sorted(set(dims))
            and all(shape[j] == (1 if d in axes else domain[d]) for j, d in enumerate(dims))
            and all(d in dims or domain[d] == 1 for d in range(len(domain)) if d not in axes))


def _depends_on(value: mlir.Value, target: mlir.Operation,
                order: dict[mlir.Operation, int]) -> bool:
    """Whether `value` is computed from `target`'s result (ops of the block after it)."""
    work, seen = [value], set()
    while work:
        op = producer(work.pop())
        if op is None or op not in order or order[op] < order[target] or op in seen:
            continue
        if op == target:
            return True
        seen.add(op)
        work.extend(op.operands)
    return False


def _match(q: mlir.Operation, order: dict) -> tuple | None:
    """(x, m, the sum of x, the ops from q back to the broadcast) for
    q = Σ((x - broadcast(m))²) with m computed from Σx."""
    if eir.opdef(q) is not ops.REDUCE_SUM or eir.aval_of(q.results[0]).dtype != np.float32:
        return None
    square = _of(q.operands[0], ops.MUL)
    if square is None or square.operands[0] != square.operands[1]:
        return None
    dev = _of(square.operands[0], ops.SUB)
    spread = None if dev is None else _of(dev.operands[1], ops.BROADCAST_IN_DIM)
    if spread is None:
        return None
    x, mean = dev.operands[0], spread.operands[0]
    domain, axes = eir.aval_of(x).shape, axes_of(q)
    if (symbolic(domain) or eir.aval_of(x).dtype != np.float32
            or split_reduction(ShapedArray(domain, F64), axes,
                               ShapedArray(eir.aval_of(q.results[0]).shape, F64)) is not None
            or not _per_row(mean, list(eir.read(spread)[2]["broadcast_dimensions"]),
                            domain, axes)):
        return None
    for use in x.uses:
        s = use.owner.operation
        if (eir.opdef(s) is ops.REDUCE_SUM and s in order and axes_of(s) == axes
                and _depends_on(mean, s, order)):
            return x, mean, s, (q, square, dev, spread)
    return None


def _build(row, operands: list[mlir.Value], result: ShapedArray, **params) -> mlir.Value:
    return eir.build(row, operands, params, result).results[0]


def _rewrite(x: mlir.Value, mean: mlir.Value, s: mlir.Operation,
             chain: tuple[mlir.Operation, ...]) -> None:
    q = chain[0]
    axes = axes_of(q)
    xa, rows = eir.aval_of(x), eir.aval_of(q.results[0])
    wide, wide_rows = ShapedArray(xa.shape, F64), ShapedArray(rows.shape, F64)
    n = int(np.prod([xa.shape[a] for a in axes]))
    with mlir.InsertionPoint(s), s.location:
        x64 = _build(ops.CONVERT, [x], wide)
        total = _build(ops.REDUCE_SUM, [x64], wide_rows, axes=axes)
        squares = _build(ops.REDUCE_SUM, [_build(ops.MUL, [x64, x64], wide)], wide_rows,
                         axes=axes)
        s.results[0].replace_all_uses_with(_build(ops.CONVERT, [total], rows))
    with mlir.InsertionPoint(q), q.location:
        m = mean
        if eir.aval_of(m).shape != rows.shape:
            m = _build(ops.RESHAPE, [m], ShapedArray(rows.shape, eir.aval_of(m).dtype))
        m = _build(ops.CONVERT, [m], wide_rows)

        def splat(v: float) -> mlir.Value:
            return _build(ops.CONSTANT, [], wide_rows, value=np.full(rows.shape, v, F64))

        # Σx² - m (2Σx - n m)
        twice = _build(ops.MUL, [total, splat(2.0)], wide_rows)
        inner = _build(ops.SUB, [twice, _build(ops.MUL, [m, splat(n)], wide_rows)], wide_rows)
        spread = _build(ops.SUB, [squares, _build(ops.MUL, [m, inner], wide_rows)], wide_rows)
        spread = _build(ops.MAX, [spread, splat(0.0)], wide_rows)
        q.results[0].replace_all_uses_with(_build(ops.CONVERT, [spread], rows))
    for op in (*chain, s):  # the deviations stay while the output reads them
        if not has_uses(op):
            op.erase()


def moments_block(block: mlir.Block) -> None:
    """Rewrite each match in `block`, each sum of x once."""
    order = {op.operation: i for i, op in enumerate(block.operations)}
    matches, sums = [], set()
    for q in order:
        found = _match(q, order)
        if found is not None and found[2] not in sums:
            sums.add(found[2])
            matches.append(found)
    for match in matches:
        _rewrite(*match)


@dataclass(frozen=True)
class Moments:
    name: str = "ember-moments"
    description: str = ("Compute a sum of squared deviations from a mean of the same float32 "
                        "data in one pass: Σx and Σx² in float64 (CPU targets)")

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                moments_block(body(func))
