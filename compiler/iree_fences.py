"""ember-iree-fences: util.optimization_barriers where IREE 3.13 miscompiles without one.

Each rule is a shape of the linalg module that IREE's passes mishandle, found by the fuzzer
(tests/fuzz.py) and fenced here, after the linalg phase's canonicalization, whichever
lowering made it:
- A one-element tensor.extract_slice expanded to a higher rank: BubbleUpExpandShapes made an
  invalid slice of it ("expected rank to be smaller or equal to the other rank": a fuzzed
  x[2:3, 0:1].reshape(1, 1, 1)) or crashed the process (a fori_loop kernel reading one
  element of a sum, expanded to 1 x 1). The value is one element: the barrier costs nothing.
- A host loop's results (scf.for / scf.while outside any kernel): IREE fused the dispatch
  reading a result with one computing the loop's initial value's sibling, and its stream
  partitioning failed ("circular dependency: input operation uses partition output"; a
  fori_loop, then a sort's merge passes). One barrier a result: a barrier joining values of
  different kinds of buffer does not compile (see ember-bufferize).
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir as mlir

_LOOPS = ("scf.for", "scf.while")


def _op(owner) -> mlir.Operation | None:
    return owner.operation if hasattr(owner, "operation") else None


def _one_element(value: mlir.Value) -> bool:
    t = value.type
    return isinstance(t, mlir.RankedTensorType) and all(d == 1 for d in t.shape)


def _on_the_host(op: mlir.Operation) -> bool:
    """Whether `op` is outside every kernel (linalg or iree_linalg_ext op)."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name.startswith(("linalg.", "iree_linalg_ext.")):
            return False
        parent = parent.parent
    return True


def _fence(value: mlir.Value, users: list[tuple[mlir.Operation, int]],
           before: mlir.Operation) -> None:
    """`users` (op, operand number) read `value` through a barrier placed before `before`."""
    with mlir.InsertionPoint(before), before.location:
        fence = mlir.Operation.create("util.optimization_barrier", results=[value.type],
                                      operands=[value])
    for user, k in users:
        user.operands[k] = fence.results[0]


@dataclass(frozen=True)
class IreeFences:
    name: str = "ember-iree-fences"
    description: str = ("Barriers where IREE 3.13 miscompiles: a one-element slice expanded "
                        "to a higher rank, a host loop's results")

    def run(self, module: mlir.Operation) -> None:
        expands, loops = [], []

        def visit(op: mlir.Operation) -> mlir.WalkResult:
            if op.name == "tensor.expand_shape":
                src = _op(op.operands[0].owner)
                if src is not None and src.name == "tensor.extract_slice" and \
                        _one_element(op.operands[0]):
                    expands.append(op)
            elif op.name in _LOOPS and _on_the_host(op):
                loops.append(op)
            return mlir.WalkResult.ADVANCE

        module.walk(visit)
        for op in expands:
            _fence(op.operands[0], [(op, 0)], op)
        for loop in loops:
            after = _next(loop)
            for result in loop.results:
                users = [(u.owner.operation if hasattr(u.owner, "operation") else u.owner,
                          u.operand_number) for u in result.uses]
                if users:
                    _fence(result, users, after)


def _next(op: mlir.Operation) -> mlir.Operation:
    """The op after `op` in its block (a loop is never a block's terminator)."""
    ops = [o.operation for o in op.block.operations]
    return ops[ops.index(op) + 1]
