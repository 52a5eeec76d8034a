"""`ember-reroll`: the steps of a Python loop unrolled into the trace become a counted loop.

`for _ in range(n): x = step(x)` traces n copies of the step's ops, and IREE and LLVM compile
every copy: the first call's time grows with n, where a loop's body compiles once. The pass
finds runs of identical steps in a function's body (the same ops, attributes and types in the
same order, each step reading the one before it the same way, and the same values from
before the run) and puts REROLL_MIN_TRIPS or more of them in an `ember.for` of one step.

It does so only where the loop becomes one kernel (ember-loop-kernels: elementwise in its
carries), where each element runs every trip in registers as the unrolled chain's fusions
did. A loop the host runs would pay a submission a trip that the unrolled chain does not.

Finding the steps is linear in the body's ops for each step length up to REROLL_MAX_STEP (a
vectorized comparison of op signatures); only the longest candidate runs are checked op by
op.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.ops import Trait
from ember.dialect.types import ShapedArray

from .loops import becomes_kernel
from .walk import body, clone_mapped, functions, producer

# Fewer trips, or fewer ops in all, compile fast enough unrolled: a kernel holds a copy of
# its step for each of its lanes (up to loops.LANES), so fewer trips than that compile no
# faster as a loop.
REROLL_MIN_TRIPS = 8
REROLL_MIN_OPS = 32
# Carries of more elements stay unrolled: there a kernel's trips in registers run slower
# than the unrolled chain's fusions, which IREE vectorizes itself.
REROLL_MAX_ELEMENTS = 1 << 16
# The longest step looked for, in ops, and how many candidate runs are checked op by op.
REROLL_MAX_STEP = 512
_TRIES = 8

Slot = tuple[int, int]  # a carry: (position of its op in the step, result number)


def _rerollable(op: mlir.Operation) -> bool:
    row = eir.opdef(op)
    return (row is not None and row.has(Trait.PURE) and not op.regions
            and not row.has(Trait.TERMINATOR))


def _signature(op: mlir.Operation) -> tuple:
    """What two ops of two steps must share besides how they read their operands."""
    return (op.name, tuple((a, str(op.attributes[a])) for a in op.attributes),
            tuple(str(v.type) for v in op.operands), tuple(str(r.type) for r in op.results))


def _result_number(value: mlir.Value) -> int:
    return mlir.OpResult(value).result_number


@dataclass
class _Block:
    """A block's ops in order, with where each is and what it reads."""

    ops: list[mlir.Operation]
    index: dict[mlir.Operation, int]
    signatures: list[tuple]

    @classmethod
    def of(cls, block: mlir.Block) -> _Block:
        ops_ = [op.operation for op in block.operations]
        return cls(ops_, {op: i for i, op in enumerate(ops_)}, [_signature(op) for op in ops_])

    def where(self, value: mlir.Value) -> int:
        """The index of `value`'s producer in the block; -1 for values from outside it."""
        op = producer(value)
        return self.index.get(op, -1) if op is not None else -1

    def user_index(self, op: mlir.Operation) -> int:
        """The index of the op of this block that is or holds `op`."""
        while op not in self.index:
            op = op.parent.operation
        return self.index[op]

    @functools.cached_property
    def reach(self) -> list[int]:
        """For each op, the index of its last user in the block (-1 for none)."""
        return [max((self.user_index(u.owner.operation) for r in op.results for u in r.uses),
                    default=-1) for op in self.ops]

    def same_step(self, i: int, length: int, start: int) -> bool:
        """Whether op i + length reads as op i does, one step on: the same value from before
        `start`, or the result of the op `length` after the one op i reads."""
        a, b = self.ops[i], self.ops[i + length]
        if self.signatures[i] != self.signatures[i + length] or not _rerollable(a):
            return False
        for v, w in zip(a.operands, b.operands, strict=True):
            if v == w:
                if self.where(v) >= start:
                    return False
            elif (self.where(v) < 0 or self.where(w) - self.where(v) != length
                  or _result_number(v) != _result_number(w)):
                return False
        return True


@dataclass(frozen=True)
class _Steps:
    """`trips` steps of `length` ops from op `start`, carrying `slots`; the first step reads
    `inits` for them."""

    start: int
    length: int
    trips: int
    slots: tuple[Slot, ...]
    inits: tuple[mlir.Value, ...]

    @property
    def end(self) -> int:
        return self.start + self.length * self.trips


def _candidates(block: _Block) -> list[tuple[int, int, int]]:
    """(step length, first, end) of the runs of ops whose signatures repeat with a period,
    longest first (each op from first to before end has the signature of the op a step
    later): each a run that may hold REROLL_MIN_TRIPS steps."""
    ids: dict[tuple, int] = {}
    codes = np.array([ids.setdefault(s, len(ids)) for s in block.signatures], dtype=np.int64)
    found = []
    for length in range(1, min(REROLL_MAX_STEP, len(codes) // REROLL_MIN_TRIPS) + 1):
        same = np.concatenate(([0], (codes[:-length] == codes[length:]).astype(np.int8), [0]))
        edges = np.diff(same)
        for s, e in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            if e - s + length >= max(REROLL_MIN_OPS, REROLL_MIN_TRIPS * length):
                found.append((int(e - s) + length, length, int(s), int(e)))
    found.sort(key=lambda c: (-c[0], c[1]))
    return [c[1:] for c in found[:_TRIES]]


def _run(block: _Block, length: int, first: int, end: int) -> tuple[int, int] | None:
    """The longest run [a, c) of ops from `first` to before `end` each reading as the op a
    step later does (so ops a to c + length - 1 repeat with period `length`)."""
    best, begin = None, None
    for i in range(first, end + 1):
        if i < end and block.same_step(i, length, first):
            begin = i if begin is None else begin
        elif begin is not None:
            if best is None or i - begin > best[1] - best[0]:
                best = (begin, i)
            begin = None
    return best


def _carried(block: _Block, start: int, length: int) -> dict[Slot, None] | None:
    """The slots the step after the one at `start` reads of it; None where it reads a value
    of an earlier step (a carry older than one trip)."""
    slots: dict[Slot, None] = {}
    for k in range(length):
        for v, w in zip(block.ops[start + k].operands, block.ops[start + length + k].operands,
                        strict=True):
            if v == w:  # one value from before the steps
                continue
            at = block.where(w)
            if at < start:
                return None
            if at < start + length:
                slots[(at - start, _result_number(w))] = None
    return slots


def _first_values(block: _Block, first: int, length: int,
                  slots: dict[Slot, None]) -> tuple[mlir.Value, ...] | None:
    """Where the ops from `first` are a step like the one after them but for what they read
    in place of the carries (a function's argument, say): those values, by slot."""
    inits: dict[Slot, mlir.Value] = {}
    then = first + length
    for k in range(length):
        a, b = block.ops[first + k], block.ops[then + k]
        if block.signatures[first + k] != block.signatures[then + k] or not _rerollable(a):
            return None
        for v, w in zip(a.operands, b.operands, strict=True):
            at = block.where(w)
            if first <= at < then:  # a carry: v is its first value
                slot = (at - first, _result_number(w))
                if slot not in slots or block.where(v) >= first or (
                        inits.setdefault(slot, v) != v):
                    return None
            elif at >= then:  # a value of the step's own
                if block.where(v) != at - length or (
                        _result_number(v) != _result_number(w)):
                    return None
            elif v != w:  # a value from before the steps
                return None
    return tuple(inits[s] for s in slots) if len(inits) == len(slots) else None


def _used_after(block: _Block, steps: _Steps) -> bool:
    """Whether what is used after the steps is carries of the last one."""
    last = steps.end - steps.length
    if any(block.reach[at] >= steps.end for at in range(steps.start, last)):
        return False
    for at in range(last, steps.end):
        for r, result in enumerate(block.ops[at].results):
            for use in result.uses:
                if block.user_index(use.owner.operation) >= steps.end and (
                        (at - last, r) not in steps.slots):
                    return False
    return True


def _steps(block: _Block, length: int, run: tuple[int, int]) -> _Steps | None:
    """The best placing of whole steps in ops that repeat with period `length` (`run`, as
    _run gives it): the fewest carries, then the most ops covered. The step before the run
    joins as the first trip where it differs only in the values it carries in; a step
    whose values are read after the steps (kept from the middle of the Python loop) ends
    them, so they begin after the last such step."""
    best = None
    a, c = run
    for start in range(a, a + length):
        trips = (c + length - start) // length
        if trips < 2:
            break
        slots = _carried(block, start, length)
        if slots is None:
            continue
        end = start + trips * length
        kept = [j for j in range(trips - 1)
                if max(block.reach[start + j * length:start + (j + 1) * length]) >= end]
        first = start + (kept[-1] + 1) * length if kept else start
        trips = (end - first) // length
        inits = _first_values(block, first - length, length, slots) if (
            not kept and first >= length) else None
        if inits is not None:
            steps = _Steps(first - length, length, trips + 1, tuple(slots), inits)
        else:  # the step before reads them by the period
            steps = _Steps(first, length, trips, tuple(slots), tuple(
                block.ops[first - length + q].results[r] for q, r in slots))
        if (steps.trips < max(2, REROLL_MIN_TRIPS) or steps.trips * length < REROLL_MIN_OPS
                or not _used_after(block, steps)):
            continue
        if best is None or (len(steps.slots), -steps.trips) < (len(best.slots), -best.trips):
            best = steps
    return best


def _index(value: int) -> mlir.Value:
    return eir.build(ops.CONSTANT, [], {"value": np.asarray(value, np.int32)},
                     ShapedArray((), np.dtype(np.int32))).result


def _reroll(block: _Block, steps: _Steps) -> bool:
    """Replace the steps with an ember.for of one of them, if it becomes a kernel."""
    start, length, end = steps.start, steps.length, steps.end
    step = block.ops[start + length:start + 2 * length]  # it reads the step before
    carried = [block.ops[start + q].results[r] for q, r in steps.slots]
    last = [block.ops[end - length + q].results[r] for q, r in steps.slots]
    results = tuple(eir.aval_of(v) for v in last)
    if any(a.size > REROLL_MAX_ELEMENTS for a in results):
        return False
    where = block.ops[end]
    with mlir.InsertionPoint(where), where.location:
        loop = eir.build(ops.FOR, [_index(0), _index(steps.trips), *steps.inits],
                         {"results": results}, results, regions=1)
        inner = mlir.Block.create_at_start(
            loop.regions[0], [mlir.RankedTensorType.get([], mlir.IntegerType.get_signless(32)),
                              *(v.type for v in carried)],
            [where.location] * (1 + len(carried)))
    mapping = dict(zip(carried, list(inner.arguments)[1:], strict=True))
    with mlir.InsertionPoint(inner), where.location:
        clone_mapped(step, mapping)
        eir.build(ops.YIELD, [mapping[block.ops[start + length + q].results[r]]
                              for q, r in steps.slots], {}, ())
    if not becomes_kernel(loop):
        loop.erase()
        return False
    for value, result in zip(last, loop.results, strict=True):
        value.replace_all_uses_with(result)
    for op in reversed(block.ops[start:end]):
        op.erase()
    return True


def reroll_block(block: mlir.Block) -> int:
    """Reroll the repeated steps in `block`; returns how many loops it made."""
    made, tried = 0, set()
    while True:
        ops_ = _Block.of(block)
        if len(ops_.ops) < REROLL_MIN_OPS:
            return made
        for length, first, end in _candidates(ops_):
            run = _run(ops_, length, first, end)
            steps = _steps(ops_, length, run) if run is not None else None
            if steps is None or (length, ops_.ops[steps.start]) in tried:
                continue
            tried.add((length, ops_.ops[steps.start]))
            if _reroll(ops_, steps):
                made += 1
                break
        else:
            return made


@dataclass(frozen=True)
class Reroll:
    name = "ember-reroll"
    description = ("Put the identical steps of a loop unrolled in the trace in an ember.for "
                   "of one step, where it becomes one kernel")

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                reroll_block(body(func))
