"""`ember-bufferize`: refs become values, donated arguments and refs hold results in place,
and arguments the caller keeps are never written.

IREE writes result k into an argument's buffer when the argument carries
`{iree.abi.output = k}`, and does no hazard analysis of its own: if the argument is still read
after (or while) the result is written, answers are silently wrong. This pass ties an
argument only when every read of it happens in the same-index elementwise step that computes
the one result it reaches; otherwise the result gets a buffer of its own (still correct) and
the reason is recorded. An argument written in place through a view (a reshaped update) is
tied to no result that does not reach it that way: the write's value holds its buffer.
Decisions are attributes on the argument, so `ember-opt` shows them:

    {ember.donated, ember.aliased_result = 0 : i64}
    {ember.donated, ember.not_aliased = "read by ember.dot_general (a contraction)"}

IREE also writes in place into any function argument that reaches a tied op (an insert or a
scatter into it, directly or as a loop's initial carry; iree-org/iree#16168), so an argument
the caller still owns gets an `ember.copy` before such a write. Values made inside the
function are updated in place: outside loops IREE copies one only while its old value is
still read, but a loop's carries are updated in the initial value's buffer regardless, so a
shared initial carry (used again, or a constant) gets a copy too.

Every result owns its buffer: IREE returns an argument's buffer for a result that is the
argument (or a reshape of it, or a branch or loop that may pass it through), and one buffer
for a value returned twice. Such a result would change when the argument, or the other
result, is later donated; it gets an `ember.copy`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.ops import Trait

from .walk import body, functions, producer

DONATED = "ember.donated"
REF = "ember.ref"
ELIMINATED = (ops.REF_GET, ops.REF_SET)  # this pass turns them into values
ALIASED = "ember.aliased_result"
NOT_ALIASED = "ember.not_aliased"

_KIND = {Trait.CONTRACTION: "a contraction", Trait.REDUCTION: "a reduction",
         Trait.DATA_MOVEMENT: "data movement", Trait.CONTROL_FLOW: "control flow",
         Trait.SIDE_EFFECTS: "a side effect"}


class Unsafe(Exception):
    """Why an argument cannot share its buffer with a result."""


def _describe(op: mlir.Operation) -> str:
    row = eir.opdef(op)
    kinds = [k for t, k in _KIND.items() if row is not None and row.has(t)]
    return f"{op.name} ({kinds[0]})" if kinds else op.name


def _same_index_read(user: mlir.Operation, operand: int) -> mlir.Operation | None:
    """None when `user` reads its operand `operand` only element by element, at the index
    it writes; else the op that reads it otherwise (for the reason)."""
    row = eir.opdef(user)
    if row is not None and row.has(Trait.ELEMENTWISE):
        return None
    if row in (ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER) and operand == 0:  # the rest stays
        return None
    if row is not ops.FUSION:
        return user
    inner = [o.operation for o in user.regions[0].blocks[0].operations]
    if eir.opdef(inner[-2]).has(Trait.REDUCTION):
        return inner[-2]
    for use in user.regions[0].blocks[0].arguments[operand].uses:
        reader = use.owner.operation
        if not eir.opdef(reader).has(Trait.ELEMENTWISE):
            return reader
    return None


def results_reached(arg: mlir.Value, func_body: mlir.Block
                    ) -> tuple[set[int], list[tuple[mlir.Operation, str]], set]:
    """The result indices `arg` flows into through same-index elementwise steps, and the
    other reads of it (with the reason each would be unsafe): those are safe only if they
    are done before the result that takes the buffer is written (see `_writes_after`).
    Raises Unsafe for reads that never are."""
    reached, seen, work, others = set(), set(), [arg], []
    while work:
        value = work.pop()
        for use in value.uses:
            user = use.owner.operation
            if user.name == "func.return":
                reached.add(use.operand_number)
                continue
            if user.block != func_body:
                raise Unsafe(f"read inside the region of {_describe(user.parent)}")
            other = _same_index_read(user, use.operand_number)
            if other is not None:
                where = "" if other == user else f" in an {user.name}"
                others.append((user, f"read by {_describe(other)}{where}"))
                continue
            if any(eir.aval_of(r).shape != eir.aval_of(value).shape for r in user.results):
                raise Unsafe(f"read by {_describe(user)}, whose result has another shape")
            if user not in seen:  # operations hash and compare by identity
                seen.add(user)
                work.extend(user.results)
    return reached, others, seen


_ROOTS = (Trait.CONTRACTION, Trait.REDUCTION)


def _is_root(op: mlir.Operation) -> bool:
    """A contraction or reduction (or a fusion rooted at one): the core of a dispatch."""
    row = eir.opdef(op)
    if row is ops.FUSION:
        inner = [o.operation for o in op.regions[0].blocks[0].operations]
        return eir.opdef(inner[-2]).has(Trait.REDUCTION)
    return row is not None and any(row.has(t) for t in _ROOTS)


def _writes_after(reader: mlir.Operation, result: mlir.Value) -> bool:
    """Whether `reader` is certainly done before the op computing `result` writes: it must
    be an ancestor of that op, outside the ops IREE may fuse into the writer's dispatch (its
    elementwise and data-movement producers, through at most one contraction or reduction:
    a transposed read folded into a matmul, or a matmul whose epilogue is the writer)."""
    writer = result.owner
    if not hasattr(writer, "operation"):
        return False  # a block argument: never written by this function
    group, work = set(), [(writer.operation, False)]
    while work:  # the writer's possible dispatch
        op, crossed = work.pop()
        if op in group:
            continue
        row = eir.opdef(op)
        if row is ops.AFTER:  # an ordering edge: nothing before it shares the dispatch
            continue
        root = _is_root(op) or row is None or (row is not ops.FUSION and
                                               row.has(Trait.CONTROL_FLOW))
        if root and crossed:
            continue
        group.add(op)
        for v in op.operands:
            if hasattr(v.owner, "operation"):
                work.append((v.owner.operation, crossed or root))
    return reader not in group and reader in _ancestors(writer.operation)


def decide(arg: mlir.Value, results: list[mlir.Value], taken: set[int],
           func_body: mlir.Block, only: int | None = None) -> int:
    """The result index to write into `arg`'s buffer (`only` that one, for a ref); raises
    Unsafe with the reason."""
    candidates = [k for k, r in enumerate(results) if r.type == arg.type and k not in taken
                  and (only is None or k == only)]
    if not candidates:
        raise Unsafe(f"no unclaimed result of type {arg.type}")
    reached, others, chain = results_reached(arg, func_body)
    if len(reached) > 1:
        raise Unsafe(f"also read by results {sorted(reached)}: only one may be written into it")
    if reached:
        (k,) = reached
        if k not in candidates:
            raise Unsafe(f"it flows into result {k}, which is not a free result of its type")
    else:  # not read on the way to a result: any result of its type may use the buffer
        writer = written_in_place(arg)
        if writer is not None:  # unless a write into it (through a view) holds a value there
            raise Unsafe(f"written in place by {_describe(writer)} through a view: its "
                         f"buffer holds that value, which no result takes over")
        k = next((c for c in candidates if all(_writes_after(op, results[c])
                                               for op, _ in others)), candidates[0])
    late = [(op, why) for op, why in others if not _writes_after(op, results[k])]
    if late:
        _order_after(arg, results[k], chain, late)
    for op, why in others:
        if not _writes_after(op, results[k]):
            raise Unsafe(why)
    return k


def _ancestors(op: mlir.Operation) -> set:
    seen, work = set(), [op]
    while work:
        for v in work.pop().operands:
            if hasattr(v.owner, "operation") and v.owner.operation not in seen:
                seen.add(v.owner.operation)
                work.append(v.owner.operation)
    return seen


def _order_after(arg: mlir.Value, result: mlir.Value, chain: set,
                 late: list[tuple[mlir.Operation, str]]) -> None:
    """Make the reads in `late` happen before the write: the operands the write's chain
    takes from elsewhere pass through an ember.after of the readers' results (an ordering
    edge IREE neither reorders nor fuses across). Raises Unsafe when a reader depends on
    the write itself (no order can put it first)."""
    writer = result.owner
    if not hasattr(writer, "operation"):
        raise Unsafe(late[0][1])
    writer = writer.operation
    for op, why in late:
        if writer == op or writer in _ancestors(op):
            raise Unsafe(why)
    before = _ancestors(writer)
    points = [writer, *(c for c in chain if c != writer and c in before)]
    _hoist([op for op, _ in late], points)
    deps = [r for op, _ in late for r in op.results]
    fenced: dict[mlir.Value, mlir.Value] = {}
    for op in points:
        edges = []  # (operand number, what it waits for) of the operands from elsewhere
        for i, v in enumerate(list(op.operands)):
            if not hasattr(v.owner, "operation"):  # an argument: there before any op runs
                continue
            owner = v.owner.operation
            if owner in chain or owner == writer:
                continue
            edges.append((i, [v, *(d for d in deps if d != v and not _read_for(d, v))]))
        # The op waits for all its operands: edges on those IREE can order (values with
        # buffers of their own, see _own_buffer) suffice; a start index stays as it is.
        usable = [(i, waits) for i, waits in edges if all(_own_buffer(w) for w in waits)]
        if edges and not usable:
            raise Unsafe(f"{late[0][1]}, and IREE cannot order the write after it")
        for i, waits in usable:
            waits = _computed_once(waits, fenced, (op, i))
            if waits[1:] or waits[0] not in fenced.values():  # else that edge orders it
                with mlir.InsertionPoint(op), op.location:  # (alone, it still stops fusion)
                    waits = [eir.build(ops.AFTER, waits, {}, eir.aval_of(waits[0])).results[0]]
            op.operands[i] = waits[0]


def _computed_once(values: list[mlir.Value], fenced: dict[mlir.Value, mlir.Value],
                   at: tuple[mlir.Operation, int] | None = None) -> list[mlir.Value]:
    """`values` as a write waits for them: each used anywhere but at `at` (the operand that
    will wait) behind an ordering edge that all its users read it through (made once, kept
    in `fenced`). IREE computes such a value once, in a dispatch of its own; left bare, it
    computed a cheap one (a reversal, a broadcast) again inside another consumer's
    dispatch, which the write did not wait for, so that read saw the written buffer."""
    out = []
    for value in values:
        uses = [(u.owner.operation, u.operand_number) for u in value.uses]
        if value not in fenced and any(use != at for use in uses):
            with mlir.InsertionPoint.after(value.owner), value.owner.location:
                fenced[value] = eir.build(ops.AFTER, [value], {}, eir.aval_of(value)).results[0]
            for user, k in uses:
                user.operands[k] = fenced[value]
        out.append(fenced.get(value, value))
    return out


def _read_for(view: mlir.Value, value: mlir.Value) -> bool:
    """Whether `view` (a view of the argument) is read only on the way to `value`: then the
    edge waiting for `value` orders those reads too (x.at[w].set(x[w] * 2) waits for the
    product, which read the window), and the view need not join it."""
    op, made = producer(view), producer(value)
    if op is None or made is None or not eir.opdef(op).has(Trait.VIEW):
        return False
    before = _ancestors(made) | {made}
    return all(use.owner.operation in before for use in view.uses)


def _own_buffer(value: mlir.Value) -> bool:
    """Whether IREE gives `value` a buffer of its own, made by the op computing it: not an
    argument or a view of one, not a constant, not a value written in place into another
    (an update, a scatter, a loop's carries). IREE 3.13 fails to compile an optimization
    barrier (ember.after) joining values of different kinds of buffer ("all of {operands,
    results} have same type"), so ordering edges join only values of their own, and not
    a value the function returns (its buffer is the caller's, of another kind)."""
    if _returned(value):
        return False
    op = producer(value)
    while op is not None and eir.opdef(op) is ops.AFTER:
        op = producer(op.operands[0])
    row = None if op is None else eir.opdef(op)
    if row is None or row in (ops.CONSTANT, ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER):
        return False
    return not row.has(Trait.VIEW) and (row is ops.FUSION or not row.has(Trait.CONTROL_FLOW))


def _returned(value: mlir.Value) -> bool:
    """Whether the function returns `value`'s buffer: it, a view of it, or what is written
    into it in place (or handed on through loop carries and branches, see `_passed_on`)."""
    def onward(user: mlir.Operation, k: int) -> list[mlir.Value]:
        if eir.opdef(user) is ops.AFTER:  # an ordering edge passes its first operand on
            return list(user.results) if k == 0 else []
        passed = _passed_on(user, k)
        return list(user.results) if passed is None else passed

    return any(user.name == "func.return" for user, _, _ in _reach(value, onward))


def _hoist(readers: list[mlir.Operation], points: list[mlir.Operation]) -> None:
    """Move the `readers` (and what they read that is computed later) up before the first of
    `points`, where the ordering edges to them go: a reader after the write (a loop reading
    the donated argument after a fusion that writes into it) must run first, and its
    results must be defined where the edges use them. Raises Unsafe when a reader depends
    on one of the points or lies in another block."""
    block = points[0].block
    position = {op: i for i, op in enumerate(o.operation for o in block.operations)}
    if any(op not in position for op in [*readers, *points]):
        raise Unsafe("the write and the reads it must follow are in different blocks")
    first = min(points, key=position.__getitem__)
    moved = set()
    for reader in readers:
        needed = {reader, *_ancestors(reader)}
        if needed & set(points):
            raise Unsafe(f"{_describe(reader)} reads what the write computes")
        moved |= {op for op in needed if op in position and position[op] > position[first]}
    for op in sorted(moved, key=position.__getitem__):
        op.move_before(first)


def _arg_attrs(func: mlir.Operation) -> list[dict[str, mlir.Attribute]]:
    n = len(body(func).arguments)
    if "arg_attrs" not in func.attributes:
        return [{} for _ in range(n)]
    return [{a.name: a.attr for a in mlir.DictAttr(d)}
            for d in mlir.ArrayAttr(func.attributes["arg_attrs"])]


def _set_arg_attrs(func: mlir.Operation, attrs: list[dict[str, mlir.Attribute]]) -> None:
    func.attributes["arg_attrs"] = mlir.ArrayAttr.get([mlir.DictAttr.get(d) for d in attrs])


def mark_donated(func: mlir.Operation, donated: list[bool]) -> None:
    """The pass's input: flag the donated arguments of `func` (pipeline.optimize does it
    from the caller's mask)."""
    with eir.LOCK, func.context:
        attrs = _arg_attrs(func)
        for i, flag in enumerate(donated):
            if flag:
                attrs[i][DONATED] = mlir.UnitAttr.get()
        _set_arg_attrs(func, attrs)


def decisions(func: mlir.Operation) -> dict[int, int | str]:
    """After the pass: donated argument index -> the result it holds, or why none."""
    out: dict[int, int | str] = {}
    for i, attrs in enumerate(_arg_attrs(func)):
        if ALIASED in attrs:
            out[i] = mlir.IntegerAttr(attrs[ALIASED]).value
        elif NOT_ALIASED in attrs:
            out[i] = mlir.StringAttr(attrs[NOT_ALIASED]).value
    return out


def eliminate_refs(func: mlir.Operation) -> dict[int, int]:
    """Refs become values: each `!ember.ref` argument turns into a tensor argument marked
    `ember.ref`, reads take the latest written value, and the last value of each ref is
    appended to the results. Returns ref argument index -> its result index."""
    block = body(func)
    refs = [i for i, a in enumerate(block.arguments) if str(a.type).startswith("!ember.ref<")]
    if not refs:
        return {}
    current = {}
    for i in refs:
        arg = block.arguments[i]
        arg.set_type(eir.mlir_type(str(arg.type).removeprefix("!ember.ref<")[:-1]))
        current[i] = arg
    index = {block.arguments[i]: i for i in refs}
    for op in list(block.operations):
        op = op.operation
        row = eir.opdef(op)
        if row is ops.REF_GET:
            op.results[0].replace_all_uses_with(current[index[op.operands[0]]])
            op.erase()
        elif row is ops.REF_SET:
            current[index[op.operands[0]]] = op.operands[1]
            op.erase()
    ret = list(block.operations)[-1].operation
    values = [*ret.operands, *(current[i] for i in refs)]
    n = len(ret.operands)
    with mlir.InsertionPoint(ret), ret.location:
        mlir.Operation.create("func.return", operands=values)
    ret.erase()
    func.attributes["function_type"] = mlir.TypeAttr.get(mlir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in values]))
    attrs = _arg_attrs(func)
    for i in refs:
        attrs[i][REF] = mlir.UnitAttr.get()
    _set_arg_attrs(func, attrs)
    return {i: n + j for j, i in enumerate(refs)}


def _carried(loop: mlir.Operation, k: int) -> list[mlir.Value]:
    """Where carry k of an ember.for / ember.while lives on: its region arguments and the
    loop's result."""
    sig, n = eir.carries(loop), len(loop.regions)
    return [*(r.blocks[0].arguments[sig.argument_of(j, n, k)]
              for j, r in enumerate(loop.regions)), loop.results[k]]


def _passed_on(user: mlir.Operation, k: int) -> list[mlir.Value] | None:
    """The values operand k of `user` hands its buffer on to (views, loop carries, region
    results), or None where `user` writes it in place (an ember.dynamic_update_slice or
    ember.scatter into it, which IREE does in place)."""
    row = eir.opdef(user)
    if row in (ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER) and k == 0:
        return None
    if row is not None and row.has(Trait.VIEW):  # a slice or reshape views it
        return list(user.results) if k == 0 else []
    if row is not None and row.carries is not None:
        k -= row.carries.operand  # the bounds carry nothing
        return _carried(user, k) if k >= 0 else []
    if row is ops.YIELD:
        parent = user.parent.operation
        if eir.carries(parent) is not None:
            if len(user.operands) == len(parent.results):  # the body's, not cond's
                return _carried(parent, k)
        elif len(parent.results) > k:  # a branch of ember.if / ember.case
            return [parent.results[k]]
    return []


def _reach(value: mlir.Value, onward):
    """(user, operand number, onward(user, operand number)) for every use of `value` and,
    in turn, of the values `onward` hands it on to (None: to none)."""
    seen, work = set(), [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            user, k = use.owner.operation, use.operand_number
            handed = onward(user, k)
            yield user, k, handed
            work.extend(handed or [])


def written_in_place(value: mlir.Value) -> mlir.Operation | None:
    """The in-place write (see `_passed_on`) that `value`'s buffer may reach, through
    views (slices, reshapes), loop carries and region results."""
    return next((user for user, _, handed in _reach(value, _passed_on) if handed is None),
                None)


def protect_arguments(func: mlir.Operation, attrs: list[dict]) -> None:
    """An argument not tied to a result (the caller's, or donated where the donation was
    unusable: IREE would still write into it while it is read) that
    would be written in place gets a fresh copy first, which the writes then go to. Its
    reads stay on the argument, so they need not wait for the copy: an update computed from
    the argument's own windows runs beside the copy, not after it."""
    block = body(func)
    for i, arg in enumerate(block.arguments):
        if ALIASED in attrs[i] or written_in_place(arg) is None:
            continue
        first = list(block.operations)[0].operation
        with mlir.InsertionPoint(first), first.location:
            copy = eir.build(ops.COPY, [arg], {}, (eir.aval_of(arg),))
        for use in list(arg.uses):
            user, k = use.owner.operation, use.operand_number
            onward = _passed_on(user, k) if user != copy.operation else []
            if onward is None or any(written_in_place(v) is not None for v in onward):
                user.operands[k] = copy.results[0]


def _shared(value: mlir.Value) -> bool:
    """Whether `value`'s buffer may hold another value too: it has other uses, is a view
    (a reshape) of such a value, or is a constant (IREE merges equal constants)."""
    if sum(1 for _ in value.uses) > 1:
        return True
    op = producer(value)
    row = eir.opdef(op) if op is not None else None
    if row is ops.RESHAPE:
        return _shared(op.operands[0])
    return row is ops.CONSTANT


def _loops(block: mlir.Block):
    for op in block.operations:
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                yield from _loops(inner)
        if eir.carries(op) is not None:
            yield op


def protect_loop_inits(func: mlir.Operation) -> None:
    """A loop's initial carry that the loop writes in place and that is shared (see
    `_shared`) gets a fresh copy: IREE updates scf.for / scf.while carries in the initial
    value's buffer without checking whether that buffer is still read (a value the function
    uses again, or the same constant starting two loops, came back overwritten)."""
    for loop in list(_loops(body(func))):
        sig, n = eir.carries(loop), len(loop.regions)
        for k in range(len(loop.results)):
            init = loop.operands[sig.operand + k]
            arg = loop.regions[-1].blocks[0].arguments[sig.argument_of(n - 1, n, k)]
            if not _shared(init) or written_in_place(arg) is None:
                continue
            with mlir.InsertionPoint(loop), loop.location:
                copy = eir.build(ops.COPY, [init], {}, (eir.aval_of(init),))
            loop.operands[sig.operand + k] = copy.results[0]


def _buffer_roots(value: mlir.Value) -> set[mlir.Value]:
    """The values whose buffer `value` may be, as IREE bufferizes: itself, or what it views
    (a slice's or reshape's operand) or passes through (a branch's yields, a loop's initial
    and yielded carries)."""
    roots, seen, work = set(), set(), [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        owner = v.owner
        if isinstance(owner, mlir.Block):  # a block argument
            loop = owner.owner.operation if owner.owner is not None else None
            sig = eir.carries(loop) if loop is not None else None
            if sig is None:
                roots.add(v)  # the function's argument
                continue
            k = v.arg_number - (sig.argument if owner == loop.regions[-1].blocks[0] else 0)
            if k < 0:
                roots.add(v)  # ember.for's induction variable
                continue
            work.extend(_passed_through(loop, k))
            continue
        op = owner.operation if hasattr(owner, "operation") else owner
        row = eir.opdef(op)
        if row is not None and row.has(Trait.VIEW):
            work.append(op.operands[0])
        elif row in (ops.IF, ops.CASE):
            k = v.result_number
            work.extend(list(r.blocks[0].operations)[-1].operation.operands[k]
                        for r in op.regions)
        elif row is not None and row.carries is not None:
            work.extend(_passed_through(op, v.result_number))
        else:
            roots.add(v)
    return roots


def _passed_through(loop: mlir.Operation, k: int) -> list[mlir.Value]:
    """Carry k of a loop: its initial value and what the body yields for it."""
    body_yield = list(loop.regions[-1].blocks[0].operations)[-1].operation
    return [loop.operands[eir.carries(loop).operand + k], body_yield.operands[k]]


def protect_reread(func: mlir.Operation) -> None:
    """An in-place write (of the function's own block) into a buffer whose old value is
    still read where IREE does not look writes into a copy of its destination: a result
    returning it as it was (x[1:3].reshape(2) and its .at[1].set(...), both returned: the
    first came back updated), or a loop's body capturing it (a scatter into a scan's xs
    after the scan gave the scan the scattered rows). IREE keeps a buffer from in-place
    writes only while later ops of the same block read it."""
    block = body(func)
    ops_ = [o.operation for o in block.operations]
    ret = ops_[-1]
    reread = [_buffer_roots(r) for r in ret.operands]
    reread += [_buffer_roots(r) for op in ops_ for r in op.results
               if any(use.owner.operation.block != block for use in r.uses)]
    for op in ops_:
        if eir.opdef(op) not in (ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER):
            continue
        dest = op.operands[0]
        old = _buffer_roots(dest)
        if not any(roots & old and op.results[0] not in roots for roots in reread):
            continue
        with mlir.InsertionPoint(op), op.location:
            copy = eir.build(ops.COPY, [dest], {}, (eir.aval_of(dest),))
        op.operands[0] = copy.results[0]


def copy_overlapping_updates(func: mlir.Operation) -> None:
    """An in-place write whose update views its own destination's buffer (x.at[1:].set(
    x[:-1])) writes a copy of the update: IREE copied the window within the one buffer and
    its runtime refused the call ("source and target ranges overlap within the same
    buffer")."""
    for block in list(_blocks(body(func))):
        for op in [o.operation for o in block.operations]:
            row = eir.opdef(op)
            if row not in (ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER):
                continue
            k = 1 if row is ops.DYNAMIC_UPDATE_SLICE else 2
            update = op.operands[k]
            if not _buffer_roots(update) & _buffer_roots(op.operands[0]):
                continue
            with mlir.InsertionPoint(op), op.location:
                copy = eir.build(ops.COPY, [update], {}, (eir.aval_of(update),))
            op.operands[k] = copy.results[0]


def _blocks(block: mlir.Block):
    yield block
    for op in block.operations:
        for region in op.operation.regions:
            for inner in region.blocks:
                yield from _blocks(inner)


def _earlier_readers(writer: mlir.Operation) -> list[mlir.Operation]:
    """The ops of `writer`'s block before it that read its destination's buffer (through
    views), other than the ops it is computed from."""
    block, computed_from = writer.block, _ancestors(writer)
    order = {op: i for i, op in enumerate(o.operation for o in block.operations)}
    found, seen, work = [], set(), list(_buffer_roots(writer.operands[0]))
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            user = use.owner.operation
            row = eir.opdef(user)
            if use.operand_number == 0 and (row is ops.AFTER or (row is not None
                                                                 and row.has(Trait.VIEW))):
                work.extend(user.results)
                continue
            while user is not None and user not in order:  # a use in a region: its op
                parent = user.parent
                user = parent.operation if parent is not None else None
            if (user is not None and user != writer and user not in computed_from
                    and order[user] < order[writer] and user not in found):
                found.append(user)
    return found


def order_writes_after_reads(func: mlir.Operation) -> None:
    """An in-place write waits for the earlier reads of its destination: an ordering edge
    (ember.after) from their results to the value written, or, where IREE cannot join them
    (see `_own_buffer`), a copy of the destination to write into. IREE 3.13 elided its own
    copy before such a write (the write being the destination's last use in program order)
    and then scheduled the write beside an independent dispatch, before the reads: they
    read the updated values."""
    for block in list(_blocks(body(func))):
        for writer in [o.operation for o in block.operations]:
            row = eir.opdef(writer)
            if row not in (ops.DYNAMIC_UPDATE_SLICE, ops.SCATTER):
                continue
            readers = _earlier_readers(writer)
            if not readers:
                continue
            waits = [r for op in readers for r in op.results]
            payload = 1 if row is ops.DYNAMIC_UPDATE_SLICE else 2
            value = writer.operands[payload]
            if waits and all(_own_buffer(w) for w in [value, *waits]):
                waits = _computed_once(waits, {})
                with mlir.InsertionPoint(writer), writer.location:
                    after = eir.build(ops.AFTER, [value, *waits], {}, eir.aval_of(value))
                writer.operands[payload] = after.results[0]
                continue
            dest = writer.operands[0]
            with mlir.InsertionPoint(writer), writer.location:
                copy = eir.build(ops.COPY, [dest], {}, (eir.aval_of(dest),))
                # behind a barrier: IREE fused the write into the copy's dispatch with the
                # update's producer, and failed to distribute that
                fenced = eir.build(ops.AFTER, [copy.results[0]], {}, eir.aval_of(dest))
            writer.operands[0] = fenced.results[0]


def own_results(func: mlir.Operation, attrs: list[dict]) -> None:
    """A result whose buffer may be a kept argument's, or another result's, gets a copy."""
    block = body(func)
    ret = list(block.operations)[-1].operation
    owner: dict[mlir.Value, int] = {}  # buffer root -> the result holding it (-1: the caller)
    for i, arg in enumerate(block.arguments):
        owner[arg] = mlir.IntegerAttr(attrs[i][ALIASED]).value if ALIASED in attrs[i] else (
            -2 if DONATED in attrs[i] else -1)  # a donated argument's buffer is free to take
    for k, value in enumerate(list(ret.operands)):
        roots = _buffer_roots(value)
        if all(owner.get(r, -2) in (-2, k) for r in roots):
            owner.update((r, k) for r in roots)
            continue
        with mlir.InsertionPoint(ret), ret.location:
            copy = eir.build(ops.COPY, [value], {}, (eir.aval_of(value),))
        ret.operands[k] = copy.results[0]


@dataclass(frozen=True)
class Bufferize:
    name = "ember-bufferize"
    description = ("Turn refs into values written back in place; tie refs and donated "
                   "arguments to results where provably safe (iree.abi.output); copy kept "
                   "arguments before an in-place write (ember.copy)")

    def run(self, module: mlir.Operation) -> None:
        with module.context:
            for func in functions(module):
                if "sym_visibility" not in func.attributes:  # the entry (and, in lit, each)
                    self._run(func)

    @staticmethod
    def _run(func: mlir.Operation) -> None:
        ref_results = eliminate_refs(func)
        block = body(func)
        results = list(list(block.operations)[-1].operands)
        attrs = _arg_attrs(func)
        taken: set[int] = set(ref_results.values())  # a ref's own result is for it alone
        for i, arg in enumerate(block.arguments):
            if DONATED not in attrs[i] and REF not in attrs[i]:
                continue
            attrs[i].pop(ALIASED, None)
            attrs[i].pop(NOT_ALIASED, None)
            only = ref_results.get(i)
            try:
                k = decide(arg, results, taken - {only}, block, only)
            except Unsafe as why:
                attrs[i][NOT_ALIASED] = mlir.StringAttr.get(str(why))
                continue
            taken.add(k)
            attrs[i][ALIASED] = mlir.IntegerAttr.get(mlir.IntegerType.get_signless(64), k)
        _set_arg_attrs(func, attrs)
        protect_arguments(func, attrs)
        protect_loop_inits(func)
        protect_reread(func)
        copy_overlapping_updates(func)
        order_writes_after_reads(func)
        own_results(func, attrs)
