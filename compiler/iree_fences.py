"""ember-iree-fences: util.optimization_barriers where IREE 3.13 miscompiles without one.

Each rule is a shape of the linalg module that IREE's passes mishandle, found by the fuzzer
(tests/fuzz.py) and fenced here, after the linalg phase's canonicalization, whichever
lowering made it:
- A one-element tensor.extract_slice expanded to a higher rank: BubbleUpExpandShapes made an
  invalid slice of it ("expected rank to be smaller or equal to the other rank": a fuzzed
  x[2:3, 0:1].reshape(1, 1, 1)) or crashed the process (a fori_loop kernel reading one
  element of a sum, expanded to 1 x 1). The value is one element: the barrier costs nothing.
- A transpose of a result of a linalg.generic with several: IREE's transpose propagation
  rewrote the generic into one with fewer outputs than it yields ("expected number of
  yield values (2) to match the number of inits"; a fuzzed max(x - y, axis=1) returned
  beside (x - y).T). The transpose stays a dispatch of its own, as it was.

A rule that costs run time is tried only when IREE has failed without it (`fence_host_loops`,
iree_driver.compile_text's last attempt):
- A host loop's results (scf.for / scf.while outside any kernel): IREE fused the dispatch
  reading a result with one computing the loop's initial value's sibling, and its stream
  partitioning failed ("circular dependency: input operation uses partition output"; a
  sort's merge passes, read beside a gather of the sorted value's source). One barrier a
  result: a barrier joining values of different kinds of buffer does not compile (see
  ember-bufferize). Not always: barriers after a sort's pass loops slowed top_k down (see
  the benchmarks); fori_loop's results are fenced always (lower_regions._fenced).
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir as mlir

from ember.dialect import ir as eir

from .walk import producer

_LOOPS = ("scf.for", "scf.while")


def _one_element(value: mlir.Value) -> bool:
    t = value.type
    return isinstance(t, mlir.RankedTensorType) and all(d == 1 for d in t.shape)


@dataclass(frozen=True)
class IreeFences:
    name: str = "ember-iree-fences"
    description: str = ("Barriers where IREE 3.13 miscompiles: a one-element slice expanded "
                        "to a higher rank, a transpose of one of several results")

    def run(self, module: mlir.Operation) -> None:
        fenced = []  # the ops that read their first operand through a barrier

        def visit(op: mlir.Operation) -> mlir.WalkResult:
            src = producer(op.operands[0]) if len(op.operands) else None
            if src is None:
                pass
            elif op.name == "tensor.expand_shape":
                if src.name == "tensor.extract_slice" and _one_element(op.operands[0]):
                    fenced.append(op)
            elif op.name == "linalg.transpose":
                if _after_several_results(src):
                    fenced.append(op)
            return mlir.WalkResult.ADVANCE

        module.walk(visit)
        for op in fenced:
            _fence(op.operands[0], [(op, 0)], op)


def _after_several_results(op: mlir.Operation, depth: int = 8) -> bool:
    """Whether `op` is a linalg.generic with several results, or reads one through a chain
    of linalg.generic ops (IREE propagates a transpose back through them: 3 unrolled steps of
    `c - mean(c)`, then `.T`)."""
    seen, work = set(), [(op, 0)]
    while work:
        node, d = work.pop()
        if node is None or node in seen or node.name != "linalg.generic" or d > depth:
            continue
        seen.add(node)
        if len(node.results) > 1:
            return True
        work.extend((producer(v), d + 1) for v in node.operands)
    return False


def _fence(value: mlir.Value, users: list[tuple[mlir.Operation, int]],
           before: mlir.Operation) -> None:
    """`users` (op, operand number) read `value` through a barrier placed before `before`."""
    with mlir.InsertionPoint(before), before.location:
        fence = mlir.Operation.create("util.optimization_barrier", results=[value.type],
                                      operands=[value])
    for user, k in users:
        user.operands[k] = fence.results[0]


def _on_the_host(op: mlir.Operation) -> bool:
    """Whether `op` is outside every kernel (linalg or iree_linalg_ext op)."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name.startswith(("linalg.", "iree_linalg_ext.")):
            return False
        parent = parent.parent
    return True


def fence_host_loops(text: str) -> str:
    """`text` (a linalg module) with every host loop's results read through barriers, but
    where another loop starts from them; `text` itself when it has no such loop."""
    with eir.LOCK, eir.context():
        module = mlir.Module.parse(text)
        loops = []

        def visit(op: mlir.Operation) -> mlir.WalkResult:
            if op.name in _LOOPS and _on_the_host(op):
                loops.append(op)
            return mlir.WalkResult.ADVANCE

        module.operation.walk(visit)
        fenced = False
        for loop in loops:
            block_ops = [o.operation for o in loop.block.operations]
            after = block_ops[block_ops.index(loop) + 1]  # a loop never ends its block
            for result in loop.results:
                users = [(u.owner.operation, u.operand_number) for u in result.uses]
                users = [(u, k) for u, k in users if u.name not in _LOOPS]
                if users:
                    _fence(result, users, after)
                    fenced = True
        return str(module) if fenced else text
