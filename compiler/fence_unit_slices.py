"""ember-fence-unit-slices: a one-element slice is expanded to a higher rank only through an
optimization barrier.

IREE 3.13's BubbleUpExpandShapes moves a tensor.expand_shape above the tensor.extract_slice
it reads; for a slice of one element it made an invalid slice ("expected rank to be smaller
or equal to the other rank": a fuzzed x[2:3, 0:1].reshape(1, 1, 1)) or crashed the process
(a fori_loop kernel reading one element of a sum, expanded to 1 x 1). Such a value is one
element, so the barrier costs nothing that matters; every other slice is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir as mlir


def _one_element(value: mlir.Value) -> bool:
    t = value.type
    return isinstance(t, mlir.RankedTensorType) and all(d == 1 for d in t.shape)


@dataclass(frozen=True)
class FenceUnitSlices:
    name: str = "ember-fence-unit-slices"
    description: str = ("Read a one-element tensor.extract_slice that is expanded to a "
                        "higher rank through a util.optimization_barrier")

    def run(self, module: mlir.Operation) -> None:
        expands = []

        def visit(op: mlir.Operation) -> mlir.WalkResult:
            if op.name == "tensor.expand_shape":
                src = op.operands[0]
                owner = src.owner
                if (isinstance(owner, mlir.Operation) or hasattr(owner, "operation")) and \
                        _name(owner) == "tensor.extract_slice" and _one_element(src):
                    expands.append(op)
            return mlir.WalkResult.ADVANCE

        module.walk(visit)
        for op in expands:
            src = op.operands[0]
            with mlir.InsertionPoint(op), op.location:
                fence = mlir.Operation.create("util.optimization_barrier",
                                              results=[src.type], operands=[src])
            op.operands[0] = fence.results[0]


def _name(owner) -> str:
    return (owner.operation if hasattr(owner, "operation") else owner).name
