"""`ember-window-stores`: an update written into its window by the dispatch computing it.

`x.at[1:-1, 1:-1].set(f(...))` is an ember.dynamic_update_slice of an elementwise result. IREE
computed the update into a buffer of its own, then copied it into the window with a dispatch
of its own (strided windows: `slow_memcpy`): two passes over the window and a temporary.
This pass moves the update into one ember.fusion with the computation that produces it (an
elementwise op or an elementwise fusion), which ember-lower-to-linalg emits as a
`flow.dispatch.region` of the generic and the insert: IREE then writes the window in place,
through a binding of the destination tied to the result. npbench's heat-3d (50^3, 20 steps):
4 dispatches a step -> 2, 2.44 -> 1.43 ms in iree-benchmark-module.

It runs after ember-bufferize, which has given every destination the caller still owns a copy.
It leaves alone an update read by ops before the insert, and one computed from the
destination itself through views of it (slices, reshapes; the dispatch would read what its
other workgroups write). Other readers of the update read the window of the result instead.
CPU targets only (ember_passes).
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.ops import Trait
from ember.dialect.types import symbolic

from .walk import body, clone_mapped, functions, producer

# How many ops the search for a view of the destination among the update's inputs visits
# before it gives up (and leaves the insert alone).
VIEW_SEARCH = 64


def _elementwise_result(op: mlir.Operation) -> bool:
    """Whether `op` computes one array elementwise: an elementwise op, or a fusion whose
    result is one (not a reduction's)."""
    row = eir.opdef(op)
    if row is None or len(op.results) != 1:
        return False
    if row is ops.FUSION:
        end = list(op.regions[0].blocks[0].operations)[-1]
        inner = producer(end.operands[0])
        row = None if inner is None else eir.opdef(inner)
        return row is not None and row.has(Trait.ELEMENTWISE)
    return row.has(Trait.ELEMENTWISE)


def _views(value: mlir.Value, target: mlir.Value) -> bool | None:
    """Whether `value` may share `target`'s buffer: it is `target`, or made from it by data
    movement IREE may fold into a read of it (None: too far to tell)."""
    work, seen = [value], set()
    while work:
        v = work.pop()
        if v == target:
            return True
        op = producer(v)
        if op is None or op in seen:
            continue
        seen.add(op)
        if len(seen) > VIEW_SEARCH:
            return None
        row = eir.opdef(op)
        if row is ops.AFTER or (row is not None and row.has(Trait.DATA_MOVEMENT)):
            work.extend(op.operands)
    return False


def _in_block(op: mlir.Operation, block: mlir.Block) -> mlir.Operation | None:
    """`op`, or the op of `block` whose regions hold it."""
    while op is not None:
        op = op.operation
        if op.block == block:
            return op
        op = op.parent
    return None


def _mergeable(insert: mlir.Operation, order: dict[mlir.Operation, int],
               block: mlir.Block) -> mlir.Operation | None:
    """The producer of `insert`'s update when the two can be one fusion, else None."""
    dest, update, *starts = list(insert.operands)
    source = producer(update)
    if source is None or source not in order or not _elementwise_result(source):
        return None
    if dest == update:  # x.at[:].set(x): the fusion would read the value it replaces
        return None
    window = eir.aval_of(update).shape
    if symbolic(eir.aval_of(dest).shape) or symbolic(window) or 1 in window:
        return None  # IREE 3.13 stored x.at[0]'s (1, 4, 3) window (a unit dim, a whole
        # dim after it) scrambled
    if not all((p := producer(s)) is not None and eir.opdef(p) is ops.CONSTANT
               for s in starts):  # run-time starts (a loop's rows) are left to IREE,
        return None               # which writes a contiguous row in place already
    for use in update.uses:  # the update's other readers come after the insert
        user = _in_block(use.owner.operation, block)
        if user != insert and (user is None or order[user] < order[insert]):
            return None
    for use in dest.uses:  # the destination's come before it and only read it: it is
        user = _in_block(use.owner.operation, block)  # written in place (IREE 3.13 crashed
        if user == insert:  # on an insert tied to a buffer an earlier one also wrote)
            continue
        if (user is None or order[user] > order[insert] or user.regions
                or eir.opdef(user) in (ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER)):
            return None
    others = sum(1 for _ in update.uses) > 1
    if others and any(s != 1 for s in eir.read(insert)[2]["strides"]):
        return None  # its other readers would need a strided window
    if any(_views(v, dest) is not False for v in source.operands):
        return None
    return source


def _merge(insert: mlir.Operation, source: mlir.Operation) -> None:
    """One ember.fusion, in `insert`'s place (and order), computing `source`'s result and
    inserting it; the update's other readers read the result's window, just after."""
    dest, update, *starts = list(insert.operands)
    inputs: dict[mlir.Value, None] = dict.fromkeys([*source.operands, dest, *starts])
    result = eir.aval_of(insert.results[0])
    with mlir.InsertionPoint(insert), insert.location:
        fusion = eir.build(ops.FUSION, list(inputs), {"results": (result,)}, (result,),
                           regions=1)
    block = mlir.Block.create_at_start(fusion.regions[0], [v.type for v in inputs],
                                       [insert.location] * len(inputs))
    mapping = dict(zip(inputs, block.arguments, strict=True))
    with mlir.InsertionPoint(block), insert.location:
        if eir.opdef(source) is ops.FUSION:  # its members, reading the new block's values
            inner = source.regions[0].blocks[0]
            mapping.update(zip(inner.arguments, [mapping[v] for v in source.operands],
                               strict=True))
            *members, end = list(inner.operations)
            clone_mapped(members, mapping)
            mapping[update] = mapping[end.operands[0]]
        else:
            clone_mapped([source], mapping)
        clone_mapped([insert], mapping)
        eir.build(ops.YIELD, [mapping[insert.results[0]]], {}, ())
    written = fusion.results[0]
    insert.results[0].replace_all_uses_with(written)
    if any(use.owner.operation != insert for use in update.uses):
        with mlir.InsertionPoint(insert), insert.location:
            window = eir.build(ops.DYNAMIC_SLICE, [written, *starts],
                               {"sizes": list(eir.aval_of(update).shape)},
                               eir.aval_of(update))
        update.replace_all_uses_with(window.results[0])
    insert.erase()
    source.erase()


def window_stores(block: mlir.Block) -> None:
    """Merge inside `block` and the regions of its ops (not a fusion's: elementwise only)."""
    for op in list(block.operations):
        if eir.opdef(op.operation) is not ops.FUSION:
            for region in op.operation.regions:
                for inner in region.blocks:
                    window_stores(inner)
    start = 0
    while (merged := _merge_next(block, start)) is not None:
        start = merged


def _merge_next(block: mlir.Block, start: int) -> int | None:
    """Merge the first mergeable insert from position `start` of `block`; its position
    afterwards (None: none is left). The order is read afresh each time: an op's key is its
    address, which an erased op's successor may take."""
    block_ops = [o.operation for o in block.operations]
    order = {op: i for i, op in enumerate(block_ops)}
    for i in range(start, len(block_ops)):
        op = block_ops[i]
        if eir.opdef(op) is ops.DYNAMIC_UPDATE_SLICE:
            source = _mergeable(op, order, block)
            if source is not None:
                _merge(op, source)
                return i  # the fusion takes the insert's place, one up (the source left)
    return None


@dataclass(frozen=True)
class WindowStores:
    name: str = "ember-window-stores"
    description: str = ("An insert of an elementwise result joins the fusion computing it, "
                        "lowered to one dispatch writing the window in place")

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                window_stores(body(func))
