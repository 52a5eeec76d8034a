"""`ember-canonicalize`: dead-code removal (dead loop carries too), constant folding, algebraic
identities and CSE.

Upstream `canonicalize` cannot touch `ember.*` ops (it does not know they are pure), so Ember
drives its own patterns through MLIR's greedy rewriter. Which pattern applies to which op is
decided by traits and rows of the op table, never by spelling op names here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir as mlir, rewrite

from ember.dialect import ir as eir, ops
from ember.dialect.ops import OpDef, Trait
from ember.dialect.types import kind, symbolic

from .walk import body, functions, has_uses, producer

# Fold constants only while the result stays small, or when every operand is a splat.
FOLD_LIMIT = 1024

Pattern = Callable[[mlir.Operation, rewrite.PatternRewriter], bool]


def _constant_op(value: mlir.Value) -> mlir.Operation | None:
    op = producer(value)
    return op if op is not None and eir.opdef(op) is ops.CONSTANT else None


def _constant_value(value: mlir.Value) -> np.ndarray | None:
    op = _constant_op(value)
    return None if op is None else eir.elements_value(op.attributes["value"])


def _splat_scalar(value: mlir.Value) -> np.ndarray | None:
    """The element of a splat constant as a 0-d array, without materializing the splat."""
    op = _constant_op(value)
    if op is None or not mlir.DenseElementsAttr(op.attributes["value"]).is_splat:
        return None
    return eir.splat_value(op.attributes["value"])


def _replace_with_constant(op, rewriter, value: np.ndarray) -> None:
    with rewriter.ip, op.location:
        const = eir.build(ops.CONSTANT, [], {"value": value},
                          eir.aval_of(op.results[0]))
    rewriter.replace_op(op, [const.result])


def _replace_with_value(op, rewriter, value: mlir.Value) -> bool:
    if value.type != op.results[0].type:
        return False
    rewriter.replace_op(op, [value])
    return True


# ----------------------------------------------------------------------------- patterns

def erase_dead(op, rewriter) -> bool:
    if has_uses(op) or _has_side_effects(op):
        return False
    rewriter.erase_op(op)
    return True


def _has_side_effects(op: mlir.Operation) -> bool:
    """Whether a region op holds something that must run (debug printing) even when its
    results are unused."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                row = eir.opdef(inner.operation)
                if row is not None and row.has(Trait.SIDE_EFFECTS) or \
                        _has_side_effects(inner.operation):
                    return True
    return False


def fold_constants(op, rewriter) -> bool:
    # Every fold needs constant operands: look at their producers before reading the op
    # (reading parses its types and attributes; most ops never fold).
    if not op.operands or any(_constant_op(v) is None for v in op.operands):
        return False
    row, avals, params = eir.read(op)
    if row.has(Trait.CONSTANT) or row.has(Trait.CONTROL_FLOW):
        return False
    result = eir.aval_of(op.results[0])
    if symbolic(result.shape):  # a constant has a size (a splat broadcast stays one)
        return False
    if kind(result.dtype) == "c":  # complex literals stay ember.complex of two constants
        return False
    if result.size > FOLD_LIMIT:
        return _fold_splats(op, rewriter, row, params, result)
    values = [_constant_value(v) for v in op.operands]
    if any(v is None for v in values):
        return False
    folded = np.asarray(row.reference(*values, **params), result.dtype)
    _replace_with_constant(op, rewriter, folded.reshape(result.shape))
    return True


def _fold_splats(op, rewriter, row: OpDef, params: dict, result) -> bool:
    """Splat in, splat out: elementwise and data-movement ops need only one element."""
    if not (row.has(Trait.ELEMENTWISE) or row.has(Trait.DATA_MOVEMENT)):
        return False
    scalars = [_splat_scalar(v) for v in op.operands]
    if any(s is None for s in scalars):
        return False
    if row.has(Trait.ELEMENTWISE):
        scalar = np.asarray(row.reference(*scalars, **params), result.dtype)
    else:
        scalar = scalars[0]
    with rewriter.ip, op.location:
        const = eir.build(ops.CONSTANT, [], {"value": np.broadcast_to(scalar, result.shape)},
                          result)
    rewriter.replace_op(op, [const.result])
    return True


def _identity_operand(op, unit: float) -> mlir.Value | None:
    """The other operand when one operand is the splat constant `unit`."""
    lhs, rhs = op.operands
    for mine, other in ((rhs, lhs), (lhs, rhs)):
        scalar = _splat_scalar(mine)
        if scalar is not None and scalar == unit:
            if mine is rhs or eir.opdef(op).has(Trait.COMMUTATIVE):
                return other
    return None


def _make_identity(unit: float) -> Pattern:
    def fold_identity(op, rewriter) -> bool:
        if eir.aval_of(op.results[0]).dtype == np.bool_:
            return False
        other = _identity_operand(op, unit)
        return other is not None and _replace_with_value(op, rewriter, other)

    fold_identity.__name__ = f"fold_identity_{unit}"
    return fold_identity


def fold_noop_data_movement(op, rewriter) -> bool:
    """reshape/broadcast to the same type, convert to the same dtype, transpose by identity."""
    row, avals, params = eir.read(op)
    if row is ops.TRANSPOSE and tuple(params["permutation"]) != tuple(range(avals[0].ndim)):
        return False
    return _replace_with_value(op, rewriter, op.operands[0])


def fold_transpose_of_transpose(op, rewriter) -> bool:
    inner = producer(op.operands[0])
    if inner is None or eir.opdef(inner) is not ops.TRANSPOSE:
        return False
    outer_perm = eir.read(op)[2]["permutation"]
    inner_perm = eir.read(inner)[2]["permutation"]
    perm = tuple(inner_perm[p] for p in outer_perm)
    source = inner.operands[0]
    if perm == tuple(range(len(perm))):
        return _replace_with_value(op, rewriter, source)
    with rewriter.ip, op.location:
        new = eir.build(ops.TRANSPOSE, [source], {"permutation": perm},
                        eir.aval_of(op.results[0]))
    rewriter.replace_op(op, [new.result])
    return True


def fold_transpose_of_unit_dims(op, rewriter) -> bool:
    """A transpose that moves only dims of size 1 (the others keep their order) is a
    reshape: no data moves (vmap and grad make them around outer products)."""
    _, avals, params = eir.read(op)
    shape = avals[0].shape
    moved = [d for d in params["permutation"] if shape[d] != 1]
    if moved != sorted(moved):
        return False
    with rewriter.ip, op.location:
        new = eir.build(ops.RESHAPE, [op.operands[0]], {}, eir.aval_of(op.results[0]))
    rewriter.replace_op(op, [new.result])
    return True


def fold_transpose_of_dot(op, rewriter) -> bool:
    """A transpose that swaps a product's free dims (batch dims first, kept) is the product
    of the operands in the other order: grad makes them (the weight's cotangent of
    `x @ w` is `(g^T x)^T`), and the product writes the layout the transpose would copy to."""
    dot = producer(op.operands[0])
    if dot is None or eir.opdef(dot) is not ops.DOT_GENERAL or len(list(dot.results[0].uses)) > 1:
        return False
    _, (lhs, rhs), params = eir.read(dot)
    batch = len(params["lhs_batch"])
    lfree = lhs.ndim - batch - len(params["lhs_contracting"])
    rfree = rhs.ndim - batch - len(params["rhs_contracting"])
    swapped = (*range(batch), *range(batch + lfree, batch + lfree + rfree),
               *range(batch, batch + lfree))
    if tuple(eir.read(op)[2]["permutation"]) != swapped:
        return False
    flipped = {f"{a}_{k}": params[f"{b}_{k}"] for a, b in (("lhs", "rhs"), ("rhs", "lhs"))
               for k in ("contracting", "batch")}
    with rewriter.ip, op.location:
        new = eir.build(ops.DOT_GENERAL, [dot.operands[1], dot.operands[0]], flipped,
                        eir.aval_of(op.results[0]))
    rewriter.replace_op(op, [new.result])
    return True


def fold_reshape_of_reshape(op, rewriter) -> bool:
    inner = producer(op.operands[0])
    if inner is None or eir.opdef(inner) is not ops.RESHAPE:
        return False
    with rewriter.ip, op.location:
        new = eir.build(ops.RESHAPE, [inner.operands[0]], {}, eir.aval_of(op.results[0]))
    rewriter.replace_op(op, [new.result])
    return True


def fold_empty_reduction(op, rewriter) -> bool:
    """A reduction of no elements is its combiner's identity (0 for a sum, -inf for a max),
    as XLA folds it: IREE's compiler died of a division by zero (SIGFPE, the process gone) on
    the float64 moments fusion of `std` over a (0, 3) array."""
    x, result = eir.aval_of(op.operands[0]), eir.aval_of(op.results[0])
    if symbolic(x.shape) or symbolic(result.shape) or x.size != 0:
        return False
    if kind(result.dtype) == "c":  # complex literals are ember.complex of two constants
        return False
    identity = eir.opdef(op).init(result.dtype)
    _replace_with_constant(op, rewriter, np.full(result.shape, identity, result.dtype))
    return True


def fold_unit_reduction(op, rewriter) -> bool:
    """A reduction over dims of one element each is a reshape, as XLA folds it: IREE folded
    a reduction of one element into a copy, and with the argument donated to that result the
    copy's source and target were one buffer (a runtime error, "ranges overlap")."""
    x, result = eir.aval_of(op.operands[0]), eir.aval_of(op.results[0])
    axes = eir.read(op)[2]["axes"]
    if (symbolic(x.shape) or x.dtype != result.dtype or x.size == 0
            or any(x.shape[a] != 1 for a in axes)):
        return False
    with rewriter.ip, op.location:
        new = eir.build(ops.RESHAPE, [op.operands[0]], {}, result)
    rewriter.replace_op(op, [new.result])
    return True


_SPECIFIC: dict[OpDef, tuple[Pattern, ...]] = {
    ops.ADD: (_make_identity(0),),
    ops.SUB: (_make_identity(0),),
    ops.MUL: (_make_identity(1),),
    ops.DIV: (_make_identity(1),),
    ops.TRANSPOSE: (fold_noop_data_movement, fold_transpose_of_transpose,
                    fold_transpose_of_unit_dims, fold_transpose_of_dot),
    ops.RESHAPE: (fold_noop_data_movement, fold_reshape_of_reshape),
    ops.BROADCAST_IN_DIM: (fold_noop_data_movement,),
    ops.CONVERT: (fold_noop_data_movement,),
}


def _adapt(pattern: Pattern) -> Callable:
    """MLIR's Python patterns report success by returning a falsy value."""

    def run(op, rewriter):
        return not pattern(op.operation, rewriter)

    return run


def patterns() -> rewrite.FrozenRewritePatternSet:
    """All patterns, built once per call (frozen sets are tied to the context)."""
    pset = rewrite.RewritePatternSet()
    for row in ops.OPS.values():
        if not row.has(Trait.PURE):  # side effects (debug printing) stay where they are
            continue
        pset.add(row.name, _adapt(erase_dead), benefit=3)
        pset.add(row.name, _adapt(fold_constants), benefit=2)
        for pattern in _SPECIFIC.get(row, ()):
            pset.add(row.name, _adapt(pattern))
        if row.has(Trait.REDUCTION):
            pset.add(row.name, _adapt(fold_empty_reduction))
            pset.add(row.name, _adapt(fold_unit_reduction))
    return pset.freeze()


def eliminate_common_subexpressions(block: mlir.Block, seen: dict | None = None) -> None:
    """Pure ember ops with the same operands, attributes and type are computed once. Inside a
    region, an op the enclosing block already computed is reused (it dominates the region);
    ops with regions are never merged."""
    seen = {} if seen is None else seen
    for op in list(block.operations):
        op = op.operation
        row = eir.opdef(op)
        for region in op.regions:
            for inner in region.blocks:
                eliminate_common_subexpressions(inner, dict(seen))
        if row is None or not row.has(Trait.PURE) or row.regions:
            continue
        # Attributes are uniqued in the context: equal ones are the same object (and hash
        # without printing a constant's megabytes).
        attrs = tuple(sorted(((n, op.attributes[n]) for n in op.attributes), key=lambda a: a[0]))
        key = (op.name, tuple(op.operands), attrs, str(op.results[0].type))
        first = seen.setdefault(key, op)
        if first is not op:
            op.results[0].replace_all_uses_with(first.results[0])
            op.erase()


def _in_block(op: mlir.Operation, block: mlir.Block) -> mlir.Operation:
    """`op`, or the op of `block` whose regions hold it."""
    while op.block != block:
        op = op.parent.operation
    return op


def _carry_feeds_only_itself(arg: mlir.BlockArgument, block: mlir.Block, k: int) -> bool:
    """Whether the values `block` computes from `arg` (an op reading it inside a nested
    region counts as reading it) reach nothing but its terminator's operand `k`, through
    pure ops."""
    end, work, seen = list(block.operations)[-1].operation, [arg], set()
    while work:
        for use in work.pop().uses:
            user = _in_block(use.owner.operation, block)
            if user == end:
                if use.operand_number != k:
                    return False
                continue
            row = eir.opdef(user)
            if row is None or not row.has(Trait.PURE) or _has_side_effects(user):
                return False
            for r in user.results:
                if r not in seen:
                    seen.add(r)
                    work.append(r)
    return True


def _dead_carries(loop: mlir.Operation) -> list[int]:
    """The carries of an ember.for or ember.while whose results nobody reads and whose
    values feed only their own next value (a scan's stacked outputs the caller drops)."""
    sig, n = eir.carries(loop), len(loop.regions)
    body_block = loop.regions[-1].blocks[0]
    args = list(body_block.arguments)[sig.argument_of(n - 1, n, 0):]
    conds = [list(r.blocks[0].arguments) for r in loop.regions[:-1]]  # ember.while's cond
    return [k for k, result in enumerate(loop.results)
            if not any(True for _ in result.uses)
            and not any(any(True for _ in cond[k].uses) for cond in conds)
            and _carry_feeds_only_itself(args[k], body_block, k)]


def drop_dead_carries(block: mlir.Block) -> None:
    """Remove the dead carries (`_dead_carries`) of the loops in `block` and in nested
    regions, inner loops first, with the ops that computed them. XLA drops them too: JAX's
    `h, _ = lax.scan(cell, h0, xs)` stacks no outputs."""
    for op in list(block.operations):
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                drop_dead_carries(inner)
        if eir.carries(op) is None:
            continue
        dead = _dead_carries(op)
        if dead and len(dead) < len(op.results):  # a loop with none left is erase_dead's
            _drop_carries(op, dead)


def _drop_carries(loop: mlir.Operation, dead: list[int]) -> None:
    row, _, params = eir.read(loop)
    first = row.carries.operand  # the bounds stay
    keep = [k for k in range(len(loop.results)) if k not in dead]
    operands = list(loop.operands)
    results = tuple(params["results"][k] for k in keep)
    with mlir.InsertionPoint(loop), loop.location:
        new = eir.build(row, operands[:first] + [operands[first + k] for k in keep],
                        dict(params, results=results), results, regions=len(loop.regions))
    for k, result in zip(keep, new.results, strict=True):
        loop.results[k].replace_all_uses_with(result)
    body_block = loop.regions[-1].blocks[0]
    *members, end = [o.operation for o in body_block.operations]
    with mlir.InsertionPoint(end), end.location:
        eir.build(ops.YIELD, [end.operands[k] for k in keep], {}, ())
    end.erase()
    for member in reversed(members):  # what computed the dead carries: read by nothing now
        if not has_uses(member) and eir.opdef(member).has(Trait.PURE) \
                and not _has_side_effects(member):
            member.erase()
    for j, region in enumerate(loop.regions):  # ember.while's cond, then the body
        for k in reversed(dead):
            region.blocks[0].erase_argument(row.carries.argument_of(j, len(loop.regions), k))
    for old, region in zip(loop.regions, new.regions, strict=True):
        old.blocks[0].append_to(region)
    loop.erase()


def inline_calls(block: mlir.Block) -> None:
    """Every ember.call replaced by its body (innermost first): its rules matter only to the
    transformations, which have run by now, and the passes after see one straight line."""
    for op in list(block.operations):
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                inline_calls(inner)
        if eir.opdef(op) is not ops.CALL:
            continue
        inner = op.regions[0].blocks[0]
        for arg, operand in zip(inner.arguments, op.operands, strict=True):
            arg.replace_all_uses_with(operand)
        *members, end = [o.operation for o in inner.operations]
        for member in members:
            member.move_before(op)
        for result, value in zip(op.results, end.operands, strict=True):
            result.replace_all_uses_with(value)
        op.erase()


@dataclass(frozen=True)
class Canonicalize:
    name = "ember-canonicalize"
    description = ("Inline ember.call; fold constants and identities (x*1, x+0, transpose of "
                   "transpose), CSE, DCE (dead loop carries too)")

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                inline_calls(body(func))
            frozen = patterns()
            for _ in range(2):  # CSE can expose folds, folds can expose duplicates
                for func in functions(module):
                    drop_dead_carries(body(func))
                rewrite.apply_patterns_and_fold_greedily(module, frozen)
                for func in functions(module):
                    eliminate_common_subexpressions(body(func))
