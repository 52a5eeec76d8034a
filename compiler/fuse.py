"""`ember-fuse`: group producer/consumer chains into `ember.fusion` ops, one dispatch each.

A group has a root (an elementwise op, or a reduction) and pulls in the producers that
compute over the root's iteration domain: elementwise ops of that shape, broadcasts into it
(their operand becomes an input with a broadcasting index map) and splat constants, each
only when every use of it is inside the group (nothing is computed twice). The region is
lowered to a single linalg.generic whose body chains the members' scalar bodies, so IREE
gets one op per group and cannot split it. Groups of a single op are left alone, and so is
a reduction that runs in two steps (split_reduction.py).

`ember-fuse-cpu` (the CPU targets' pipeline) also joins a chain that a reduction reads and
later ops read too (softmax's exp) to that reduction, as one fusion with two results: the
reduction's and the chain's. IREE fuses the chain into every op reading it, and so computed
softmax's exp twice, once for the sum and once for the division; a generic with both
outputs has IREE's CPU backend keep a tile of the rows in a stack buffer instead (softmax
4096x1024: 1.30 -> 1.03 ms, best of 20 interleaved rounds). GPU backends fail to
distribute such a generic (IREE 3.13). It also fuses sibling reductions, over the same dims
of inputs they share (Σx and Σx², as ember-moments writes a variance), into one fusion
with a result each: one generic, one pass over the data.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.ops import Trait
from ember.dialect.types import ShapedArray, kind, symbolic

from .emitter import template_params
from .iree_driver import MAX_BINDINGS
from .split_reduction import split_reduction
from .walk import body, clone_mapped, functions, producer


def _shape(value: mlir.Value) -> tuple[int, ...]:
    return eir.aval_of(value).shape


def axes_of(reduction: mlir.Operation) -> list[int]:
    return sorted(eir.read(reduction)[2]["axes"])


def _joinable(op: mlir.Operation, domain: tuple[int, ...]) -> bool:
    row = eir.opdef(op)
    if row is None or len(op.results) != 1 or _shape(op.results[0]) != domain:
        return False
    if row is ops.CONSTANT:
        return mlir.DenseElementsAttr(op.attributes["value"]).is_splat
    return row.has(Trait.ELEMENTWISE) or row is ops.BROADCAST_IN_DIM


# The most values from outside a fusion reads: each is a buffer bound to its dispatch, of
# which IREE binds at most MAX_BINDINGS, with the fusion's results and what IREE fuses in
# besides (a sum of 40 arrays was one dispatch of 41 buffers, and its module failed to load).
FUSION_INPUTS = MAX_BINDINGS - 8


# The most scalar code one fusion's body may hold, in body_cost's units (a float sine is
# 86): IREE's and LLVM's time on one dispatch grows faster than its body (IREE's
# constant-expression analysis and hoisting about quadratically), so a longer chain is cut
# into fusions of at most this much, kept apart by ordering edges. Identical pieces (an
# unrolled loop's) compile once: IREE deduplicates executables. Smaller pieces cost more
# dispatches than they save (benchmarks/scaling.py's unrolled-steps row).
FUSION_BODY_COST = 1024


@functools.cache
def _row_cost(row: ops.OpDef, dtype: np.dtype, params: tuple) -> int:
    try:
        text = row.scalar(kind(dtype), template_params([], ShapedArray((), dtype), dict(params)))
    except Exception:  # a body that needs more than its own attributes: count it as one op
        return 1
    # IREE expands each math function into a polynomial of some ten to thirty ops (but a
    # fused multiply-add, one instruction)
    return len(text.splitlines()) + 10 * (text.count("math.") - text.count("math.fma "))


def body_cost(op: mlir.Operation) -> int:
    """The size of `op`'s scalar body in a fusion: its lines, math functions weighing more."""
    row = eir.opdef(op)
    if row is None or row.scalar is None or not op.results:
        return 1
    params = tuple(sorted((k, v) for k, v in eir.read(op)[2].items()
                          if isinstance(v, (int, float, str, tuple))))
    return _row_cost(row, eir.aval_of(op.results[0]).dtype, params)


def _group(roots: list[mlir.Operation], claimed: set, order: dict[mlir.Operation, int],
           refused: list[mlir.Operation] | None = None) -> list[mlir.Operation]:
    """The roots (of one iteration domain) and the producers that join them, in block
    order. A producer joins once all its users have joined (a count of its uses outside,
    less one as each joins), so each member's operands are looked at once: linear in the
    group's size, also for a constant that a thousand members share. A producer that would
    make the group read more than FUSION_INPUTS values stays out, added to `refused`."""
    root = roots[0]
    row = eir.opdef(root)
    domain = _shape(root.operands[0] if row.has(Trait.REDUCTION) else root.results[0])
    members, work = set(roots), list(roots)
    inputs = {v for r in roots for v in r.operands}  # read from outside, give or take
    cost = sum(body_cost(r) for r in roots)
    unjoined: dict[mlir.Operation, int] = {}  # producer -> its uses outside the group
    while work:
        member = work.pop()
        if eir.opdef(member) is ops.BROADCAST_IN_DIM:
            continue  # its operand is an input of the group, read with a broadcast map
        for value in member.operands:  # each a use of its producer by a member
            p = producer(value)
            if (p is None or p in members or p in claimed or p not in order
                    or not _joinable(p, domain)):
                continue
            if p not in unjoined:
                unjoined[p] = sum(1 for r in p.results for _ in r.uses)
            unjoined[p] -= 1
            if unjoined[p] == 0:
                joined = (inputs - set(p.results)) | set(p.operands)
                more = body_cost(p)
                if len(joined) > FUSION_INPUTS or cost + more > FUSION_BODY_COST:
                    if refused is not None:
                        refused.append(p)
                    continue
                inputs, cost = joined, cost + more
                members.add(p)
                work.append(p)
    return sorted(members, key=order.__getitem__)


def _apart(producer_op: mlir.Operation, group: list[mlir.Operation]) -> None:
    """The group reads `producer_op`'s result through an ember.after (lowered to an
    optimization barrier), so that IREE does not fuse the two into one dispatch again."""
    value = producer_op.results[0]
    with mlir.InsertionPoint(producer_op), producer_op.location:
        after = eir.build(ops.AFTER, [value], {}, (eir.aval_of(value),))
    after.operation.move_after(producer_op)
    members = set(group)
    for use in list(value.uses):
        user = use.owner.operation
        if user in members:
            user.operands[use.operand_number] = after.results[0]


def _split_later(op: mlir.Operation) -> bool:
    """Whether the reduction runs in two steps (split_reduction.py): IREE fuses its
    producers into the first step, where a fusion's one generic would stay on one core."""
    return split_reduction(eir.aval_of(op.operands[0]), eir.read(op)[2]["axes"],
                           eir.aval_of(op.results[0])) is not None


def _feeds_reduction(root: mlir.Operation) -> bool:
    """IREE fuses an elementwise producer into the reductions that read it (softmax: one
    dispatch) unless it is already a separate generic: such roots are left to IREE."""
    return any(eir.opdef(u.owner.operation) is not None and
               eir.opdef(u.owner.operation).has(Trait.REDUCTION)
               for r in root.results for u in r.uses)


def _inputs(group: list[mlir.Operation]) -> list[mlir.Value]:
    """The values the group's members read from outside it, in order, without repeats."""
    members = set(group)
    inputs: dict[mlir.Value, None] = {}
    for op in group:
        for v in op.operands:
            if producer(v) not in members:
                inputs.setdefault(v)
    return list(inputs)


def _outline(group: list[mlir.Operation], outputs: list[mlir.Operation],
             at: mlir.Operation) -> None:
    """Move `group` into the region of a new ember.fusion, placed before its member `at`,
    whose results replace those of the members `outputs`."""
    inputs = _inputs(group)
    results = tuple(eir.aval_of(op.results[0]) for op in outputs)
    with mlir.InsertionPoint(at), at.location:
        fusion = eir.build(ops.FUSION, inputs, {"results": results}, results, regions=1)
    block = mlir.Block.create_at_start(fusion.regions[0], [v.type for v in inputs],
                                       [at.location] * len(inputs))
    mapping = dict(zip(inputs, block.arguments, strict=True))
    with mlir.InsertionPoint(block), at.location:
        clone_mapped(group, mapping)
        eir.build(ops.YIELD, [mapping[op.results[0]] for op in outputs], {}, ())
    for op, value in zip(outputs, fusion.results, strict=True):
        op.results[0].replace_all_uses_with(value)
    for op in reversed(group):
        op.erase()


# The longest reduced row whose chain joins its reduction (ember-fuse-cpu): IREE's CPU
# backend keeps 8 such rows in a stack buffer, within the stack allocation limit that
# iree_driver sets (64 KiB; each task worker has 128 KiB of stack).
KEPT_ROW_BYTES = 4096


def _reducer_to_join(root: mlir.Operation, order: dict[mlir.Operation, int]
                     ) -> mlir.Operation | None:
    """The reduction that the elementwise chain rooted at `root` joins as its second
    result, if any: the one reduction reading it, over its trailing dims (at most
    KEPT_ROW_BYTES of them), in one step, with other readers, all after it in the block."""
    users = [u.owner.operation for u in root.results[0].uses]
    reducers = [u for u in users if (r := eir.opdef(u)) is not None and r.has(Trait.REDUCTION)]
    if (not eir.opdef(root).has(Trait.ELEMENTWISE) or len(reducers) != 1
            or len(users) == 1 or reducers[0] not in order or _split_later(reducers[0])):
        return None
    reducer = reducers[0]
    x = eir.aval_of(root.results[0])
    axes = axes_of(reducer)
    if symbolic(x.shape) or axes != list(range(len(x.shape) - len(axes), len(x.shape))):
        return None
    if int(np.prod([x.shape[a] for a in axes])) * x.dtype.itemsize > KEPT_ROW_BYTES:
        return None
    if not all(u in order and order[u] > order[reducer] for u in users if u is not reducer):
        return None  # the fusion takes the reduction's place: later readers only
    return reducer


def fuse_block(block: mlir.Block, in_loop: bool = False, keep_reduced: bool = False) -> int:
    """Fuse inside `block` (and the regions of its ops); returns the number of groups made.
    In a loop body, scalar chains are left alone: they lower to host arithmetic.
    `keep_reduced`: a chain that a reduction and later ops read joins the reduction."""
    made = 0
    for op in list(block.operations):
        row = eir.opdef(op.operation)
        if row is ops.ELEMENTWISE_FOR:
            continue  # already one kernel: its body is lowered as scalars
        for region in op.operation.regions:
            for inner in region.blocks:
                inner_loop = in_loop or row in (ops.FOR, ops.WHILE)
                made += fuse_block(inner, inner_loop, keep_reduced and not inner_loop)
    claimed: set = set()
    siblings: set = set()  # reductions in fusions of several
    groups = []  # (members, the members whose results the fusion has, the member it goes before)
    block_ops = [o.operation for o in block.operations]
    order = {op: i for i, op in enumerate(block_ops)}  # also: which ops are in this block
    for op in reversed(block_ops):
        row = eir.opdef(op)
        if op in claimed or row is None or not (row.has(Trait.ELEMENTWISE)
                                                 or row.has(Trait.REDUCTION)):
            continue
        if in_loop and not _shape(op.results[0]):
            continue
        if row.has(Trait.REDUCTION) and _split_later(op):
            continue
        roots = [op]
        if keep_reduced and row.has(Trait.REDUCTION):
            roots = _siblings(op, claimed, order)
        refused: list[mlir.Operation] = []
        group = _group(roots, claimed, order, refused)
        for p in refused:
            _apart(p, group)
        claimed.update(group)
        if len(roots) > 1:
            siblings.update(roots)
            roots.sort(key=order.__getitem__)
            groups.append((group, roots, roots[0]))
        elif not _feeds_reduction(op):
            if sum(eir.opdef(m) is not ops.CONSTANT for m in group) >= 2:
                groups.append((group, [op], op))
        elif (keep_reduced and (reducer := _reducer_to_join(op, order))
              and reducer not in siblings):
            group = sorted([*group, reducer], key=order.__getitem__)
            groups.append((group, [reducer, op], reducer))
    for group, outputs, at in groups:  # after grouping: outlining erases ops, which are
        _outline(group, outputs, at)     # invalid afterwards
    return made + len(groups)


# How far _siblings looks: uses followed from the root's inputs, nearest candidates tried
# (bounded, so that a thousand sums of one array cost linear time).
SIBLING_USES, SIBLING_CANDIDATES = 256, 8


def _siblings(root: mlir.Operation, claimed: set,
              order: dict[mlir.Operation, int]) -> list[mlir.Operation]:
    """`root` and the earlier reductions that join it in one fusion (ember-fuse-cpu): over
    the same dims of the same domain, in one step, sharing an input with it, and computable
    where the earliest of them is (the inputs of them all defined before it, no result read
    by another). The fusion reads the shared input once: Σx and Σx² in one pass."""
    axes = axes_of(root)
    domain = _shape(root.operands[0])
    shared = _inputs(_group([root], claimed, order))
    candidates, seen, work = set(), set(shared), list(shared)
    budget = SIBLING_USES
    while work and budget > 0:  # the reductions reading a shared input
        for use in work.pop().uses:
            budget -= 1
            op = use.owner.operation
            row = eir.opdef(op)
            if op in claimed or op not in order or order[op] >= order[root] or row is None:
                continue
            if (row.has(Trait.REDUCTION) and _shape(op.operands[0]) == domain
                    and axes_of(op) == axes and not _split_later(op)):
                candidates.add(op)
            elif _joinable(op, domain) and op.results[0] not in seen:
                seen.add(op.results[0])
                work.append(op.results[0])
            if budget == 0:
                break
    roots = [root]
    nearest = sorted(candidates, key=order.__getitem__, reverse=True)[:SIBLING_CANDIDATES]
    for op in nearest:
        trial = [op, *roots]
        group = _group(trial, claimed, order)
        first = order[op]
        results = {r.results[0] for r in trial}
        if all((p := producer(v)) is None or p not in order or order[p] < first
               for v in _inputs(group)) and not any(v in results for m in group
                                                    for v in m.operands):
            roots = trial
    return roots


@dataclass(frozen=True)
class Fuse:
    name: str = "ember-fuse"
    description: str = ("Group elementwise chains (with broadcast inputs) and the reductions "
                        "they feed into ember.fusion ops, each lowered to one linalg.generic")
    keep_reduced: bool = False

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                fuse_block(body(func), keep_reduced=self.keep_reduced)


FUSE_CPU = Fuse("ember-fuse-cpu", "ember-fuse, and a chain that a reduction and later ops "
                "read joins the reduction as the fusion's second result (CPU targets)", True)
