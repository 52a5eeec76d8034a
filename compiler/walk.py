"""Small helpers over the IR that every pass needs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from iree.compiler import ir as mlir


def functions(module: mlir.Operation) -> Iterator[mlir.Operation]:
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            yield op.operation


def entry(module: mlir.Operation) -> mlir.Operation:
    """The module's entry: its one public function (helpers are private)."""
    return next(f for f in functions(module) if "sym_visibility" not in f.attributes)


def body(func: mlir.Operation) -> mlir.Block:
    return func.regions[0].blocks[0]


def producer(value: mlir.Value) -> mlir.Operation | None:
    """The operation defining `value`, or None for a block argument."""
    owner = value.owner
    return owner.operation if isinstance(owner, mlir.OpView) else (
        owner if isinstance(owner, mlir.Operation) else None)


def clone_mapped(ops: Iterable[mlir.Operation], mapping: dict[mlir.Value, mlir.Value]) -> None:
    """Clone `ops` at the current insertion point, each clone reading `mapping[v]` for the
    operands `mapping` has; the clones' results join `mapping` as they are made."""
    for op in ops:
        op = op.operation
        new = op.clone()
        for i, v in enumerate(op.operands):
            new.operands[i] = mapping.get(v, v)
        mapping.update(zip(op.results, new.results, strict=True))


def has_uses(op: mlir.Operation) -> bool:
    return any(True for r in op.results for _ in r.uses)
