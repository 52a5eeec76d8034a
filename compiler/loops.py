"""`ember-loop-kernels`: counted loops that are elementwise in their carries become one kernel.

An `ember.for` runs one or more dispatches a trip, each started from the host. When every op
of its body is elementwise over the carries' one shape (or over scalars, such as the
induction variable), with constants, broadcasts of scalars and values of that shape or
scalars from outside, each element's trips depend on that element alone: the loop can move
inside a single linalg.generic, where each element runs every trip in registers. The pass
turns such a loop into an `ember.elementwise_for` (the IR shows the decision); anything else
in the body (a contraction, a reduction, a slice, a nested region, a side effect) keeps it an
`ember.for`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.ops import Trait
from ember.dialect.types import ShapedArray

from .iree_driver import MAX_BINDINGS
from .walk import body, clone_mapped, functions, producer


def _elementwise_body(loop: mlir.Operation) -> bool:
    block = loop.regions[0].blocks[0]
    carries = [eir.aval_of(a) for a in list(block.arguments)[1:]]
    if not carries or len({c.shape for c in carries}) != 1:
        return False
    shapes = {carries[0].shape, ()}
    inside = set()
    for op in block.operations:
        op = op.operation
        row = eir.opdef(op)
        if row is ops.YIELD:
            break
        fits = row is not None and not op.regions and (
            row.has(Trait.ELEMENTWISE) or row is ops.CONSTANT
            or (row is ops.BROADCAST_IN_DIM and eir.aval_of(op.operands[0]).shape == ()))
        if not fits or any(eir.aval_of(r).shape not in shapes for r in op.results):
            return False
        for v in op.operands:  # values from outside: of the carries' shape, or scalars
            if v not in inside and v.owner != block and eir.aval_of(v).shape not in shapes:
                return False
        inside.update(op.results)
    return True


# A kernel invocation carries this many elements side by side at most (lower_regions): one
# generic operand per lane and carry; LLVM's SLP vectorizer packs them into vector ops.
LANES = 16


def outside_values(block: mlir.Block) -> list[mlir.Value]:
    """The values from outside the loop that its body's ops (its yield aside) read, in
    order."""
    members = [op.operation for op in block.operations][:-1]
    made = {r for op in members for r in op.results}
    outside = []
    for op in members:
        for v in op.operands:
            if v not in made and v.owner != block and v not in outside:
                outside.append(v)
    return outside


def kernel_lanes(size: int, carries: int, outside: int) -> int | None:
    """How many elements a kernel invocation of an ember.elementwise_for carries side by
    side: the most, up to LANES, that divides `size` and keeps its dispatch within IREE's
    bindings (one per carry and value from outside it reads, and one per lane and carry it
    writes: a loop of 4 carries took 36 at 8 lanes, and IREE refused to load the module);
    None where even one lane takes too many."""
    for lanes in (LANES, 8, 4, 2, 1):
        if size % lanes == 0 and carries + outside + lanes * carries <= MAX_BINDINGS:
            return lanes
    return None


def _each_for(block: mlir.Block, rewrite: Callable[[mlir.Operation], bool]) -> int:
    """`rewrite` each ember.for in `block` and in nested regions, inner ones first; returns
    how many it changed."""
    made = 0
    for op in list(block.operations):
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                made += _each_for(inner, rewrite)
        made += eir.opdef(op) is ops.FOR and rewrite(op)
    return made


def _data_constants(block: mlir.Block) -> list[mlir.Operation]:
    """The constants of a loop body other than splats: a kernel reads them as inputs."""
    return [op.operation for op in block.operations if eir.opdef(op.operation) is ops.CONSTANT
            and not mlir.DenseElementsAttr(op.operation.attributes["value"]).is_splat]


def becomes_kernel(op: mlir.Operation) -> bool:
    """Whether ember-loop-kernels makes the ember.for `op` one kernel."""
    if not _elementwise_body(op):
        return False
    block = op.regions[0].blocks[0]
    carries = list(block.arguments)[1:]
    outside = len(outside_values(block)) + len(_data_constants(block))
    return kernel_lanes(eir.aval_of(carries[0]).size, len(carries), outside) is not None


def _as_kernel(op: mlir.Operation) -> bool:
    """An ember.for elementwise in its carries as an ember.elementwise_for."""
    if not becomes_kernel(op):
        return False
    for constant in _data_constants(op.regions[0].blocks[0]):
        constant.move_before(op)
    _, _, params = eir.read(op)
    with mlir.InsertionPoint(op), op.location:
        kernel = eir.build(ops.ELEMENTWISE_FOR, list(op.operands), params,
                           params["results"], regions=1)
    op.regions[0].blocks[0].append_to(kernel.regions[0])
    for old, new in zip(op.results, kernel.results, strict=True):
        old.replace_all_uses_with(new)
    op.erase()
    return True


def kernel_loops(block: mlir.Block) -> int:
    """Turn the eligible ember.for ops in `block` (and in nested regions) into
    ember.elementwise_for; returns how many."""
    return _each_for(block, _as_kernel)


def trip_work(module: mlir.Operation) -> int | None:
    """The most elements one trip of an innermost loop computes on (an insert or a scatter
    counts its update, not the array it writes into), over the module's loops; None without
    loops. Tiny trips should not pay for waking worker threads on every trip; an outer
    loop's own work runs once per run of its inner loops, so the innermost trips decide (a
    blocked solve of 512 equations: 512 trips over a 512x35 panel, 32 of a matrix product)."""
    work = None
    for func in functions(module):
        for loop in _loops(body(func)):
            own = list(_own_ops(loop.regions))
            if any(eir.carries(op) is not None for op in own):
                continue
            for op in own:
                row = eir.opdef(op)
                if row in (ops.RESHAPE, ops.CONSTANT):  # views and data: no work a trip
                    continue
                sizes = [eir.aval_of(v).size for v in _work_values(op, row)
                         if str(v.type).startswith("tensor<")]
                work = max([work or 0, *sizes, _product_work(op, row)])
    return work


# A product's trip is worth the worker threads well before its result is: it counts its
# multiply-adds over MULTIPLY_ADDS_PER_ELEMENT (2^21 of them reach the threshold of 2^15
# elements). A tanh RNN scan of 100 steps (two products a step, hidden h, batch b), on the
# worker threads against the calling thread in turn in one process: b x h = 64 x 256 (2^22
# multiply-adds a product) 24.3 -> 18.4 and 24.2 -> 17.7 ms (JAX 23.1, 22.1), 32 x 256
# (2^21) 14.0 -> 12.4 and 13.1 -> 10.9, 16 x 512 (2^22) 27.0 -> 18.9; at 2^20 the calling
# thread stays ahead (16 x 256: 4.3 against 6.8 ms, 64 x 128: 6.2 against 7.4).
MULTIPLY_ADDS_PER_ELEMENT = 64


def product_work(module: mlir.Operation) -> int:
    """The most multiply-adds a product of the module does, over MULTIPLY_ADDS_PER_ELEMENT
    (0 without products): what a call's product weighs for the worker threads."""
    return max((_product_work(op, eir.opdef(op)) for func in functions(module)
                for op in _own_ops([func.regions[0]])), default=0)


def _product_work(op: mlir.Operation, row) -> int:
    """A contraction's multiply-adds (its result's elements times its contracted dims')
    over MULTIPLY_ADDS_PER_ELEMENT; 0 for other ops."""
    if row is None or not row.has(Trait.CONTRACTION):
        return 0
    _, (lhs, _), params = eir.read(op)
    depth = ShapedArray(tuple(lhs.shape[d] for d in params["lhs_contracting"]), lhs.dtype)
    return eir.aval_of(op.results[0]).size * depth.size // MULTIPLY_ADDS_PER_ELEMENT


def _loops(block: mlir.Block):
    """The loops whose trips the host runs (the rows with carries: an elementwise loop is
    one kernel, an op like any other)."""
    for op in block.operations:
        op = op.operation
        if eir.carries(op) is not None:
            yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _loops(inner)


def _own_ops(regions):
    """The ops in `regions`, nested ones too, but not the insides of loops (an elementwise
    loop is one kernel; a host loop has trips of its own)."""
    for region in regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                yield op
                if eir.carries(op) is None and eir.opdef(op) is not ops.ELEMENTWISE_FOR:
                    yield from _own_ops(op.regions)


# Host loops with small trips pay the host's cost of a trip (the VM's loop, a submission and
# its wait: ~2 us on the calling thread) on top of each dispatch's (~1 us). Unrolled by
# UNROLL, one trip runs UNROLL bodies in one submission: 2000 one-row updates of a
# (256, 1024) array went 2.0-2.1 -> 0.9-1.0 us an update (16 bodies: 1.1-1.2, 32: 1.0), the
# module compiling as fast (0.45-0.61 s either way). Only loops with a known trip count of at
# least 2 * UNROLL, and bodies without regions of at most UNROLL_MAX_ARRAY_OPS ops on arrays
# (scalar index arithmetic aside, at most UNROLL_MAX_OPS in all), each computing on at most
# UNROLL_MAX_WORK elements (an insert or a scatter counts its update): a trip of more work
# hides the host's cost, and a large body multiplies the compile.
UNROLL = 8
UNROLL_MAX_OPS = 64
UNROLL_MAX_ARRAY_OPS = 8
UNROLL_MAX_WORK = 1 << 15


def _constant_int(value: mlir.Value) -> int | None:
    op = producer(value)
    if op is None or eir.opdef(op) is not ops.CONSTANT:
        return None
    return int(eir.elements_value(op.attributes["value"]))


def _work_values(op: mlir.Operation, row) -> list[mlir.Value]:
    """The values whose elements `op` computes: an insert or a scatter its update, not the
    array it writes into."""
    if row in (ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER):
        return list(op.operands)[1:2]
    return list(op.results)


def _unrollable(loop: mlir.Operation) -> tuple[int, int] | None:
    """(lower bound, trip count) of an ember.for worth unrolling, else None."""
    lower, upper = (_constant_int(v) for v in list(loop.operands)[:2])
    if lower is None or upper is None or upper - lower < 2 * UNROLL:
        return None
    block = loop.regions[0].blocks[0]
    own = [op.operation for op in block.operations][:-1]  # without the yield
    if len(own) > UNROLL_MAX_OPS or any(op.regions for op in own):
        return None
    arrays = 0
    for op in own:
        row = eir.opdef(op)
        if row is None:
            return None
        avals = [eir.aval_of(v) for v in _work_values(op, row)
                 if str(v.type).startswith("tensor<")]
        if any(a.size > UNROLL_MAX_WORK for a in avals):
            return None
        arrays += row not in (ops.CONSTANT, ops.RESHAPE) and any(a.shape for a in avals)
    return (lower, upper - lower) if arrays <= UNROLL_MAX_ARRAY_OPS else None


def _scalar(value: int, dtype) -> mlir.Value:
    return eir.build(ops.CONSTANT, [], {"value": np.asarray(value, dtype)},
                     ShapedArray((), np.dtype(dtype))).result


def _unroll(loop: mlir.Operation, lower: int, trips: int) -> None:
    """`loop` as a loop of trips // UNROLL trips of UNROLL bodies each, then (when the count
    is not a multiple) the original loop over the trips left."""
    _, operands, params = eir.read(loop)
    dtype = operands[0].dtype
    count, body_block = trips // UNROLL, loop.regions[0].blocks[0]
    with mlir.InsertionPoint(loop), loop.location:
        unrolled = eir.build(ops.FOR, [_scalar(0, dtype), _scalar(count, dtype),
                                       *ops.FOR.carries.of(loop.operands)],
                             params, params["results"], regions=1)
        block = mlir.Block.create_at_start(unrolled.regions[0],
                                           [a.type for a in body_block.arguments],
                                           [loop.location] * len(body_block.arguments))
    index = ShapedArray((), np.dtype(dtype))
    with mlir.InsertionPoint(block), loop.location:
        first = eir.build(ops.MUL, [block.arguments[0], _scalar(UNROLL, dtype)], {},
                          index).result
        carries = list(block.arguments)[1:]
        for u in range(UNROLL):  # trip lower + UNROLL * j + u
            i = eir.build(ops.ADD, [first, _scalar(lower + u, dtype)], {}, index).result
            mapping = dict(zip(body_block.arguments, [i, *carries], strict=True))
            *body_ops, end = [op.operation for op in body_block.operations]
            clone_mapped(body_ops, mapping)
            carries = [mapping.get(v, v) for v in end.operands]
        eir.build(ops.YIELD, carries, {}, ())
    if trips % UNROLL == 0:
        for old, new in zip(loop.results, unrolled.results, strict=True):
            old.replace_all_uses_with(new)
        loop.erase()
        return
    with mlir.InsertionPoint(loop), loop.location:  # the rest: the original loop
        loop.operands[0] = _scalar(lower + count * UNROLL, dtype)
    for k, result in enumerate(unrolled.results):
        loop.operands[2 + k] = result


def _unrolled(op: mlir.Operation) -> bool:
    bounds = _unrollable(op)
    if bounds is not None:
        _unroll(op, *bounds)
    return bounds is not None


def unroll_loops(block: mlir.Block) -> int:
    """Unroll the eligible ember.for ops in `block` (and in nested regions); returns how
    many."""
    return _each_for(block, _unrolled)


@dataclass(frozen=True)
class UnrollLoops:
    name = "ember-unroll-loops"
    description = (f"Run {UNROLL} trips of a host loop with a small body and a known trip "
                   f"count in each trip: one submission for {UNROLL} bodies")

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                unroll_loops(body(func))


@dataclass(frozen=True)
class LoopKernels:
    name = "ember-loop-kernels"
    description = ("Run counted loops that are elementwise in their carries as one kernel "
                   "(ember.elementwise_for): the loop inside the elementwise body")

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                kernel_loops(body(func))
