"""Lowerings of the ops with regions: ember.if / ember.case / ember.while / ember.for to scf,
and ember.fusion to one linalg.generic."""

from __future__ import annotations

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.ops import Trait
from ember.dialect.types import Dim, ShapedArray, kind

from .emitter import (
    Emitter,
    accumulator,
    affine_map,
    etype,
    identity_map,
    iterators,
    results_lhs,
    template_params,
    ttype,
)
from .loops import kernel_lanes, outside_values
from .lower_indexing import inserted, window_offsets
from .walk import producer


def _predicate(em: Emitter, value: str, aval: ShapedArray) -> str:
    """An i1 from a scalar tensor: the bool itself, or `!= 0` for integers."""
    scalar = em.fresh("p")
    em.emit(f"{scalar} = tensor.extract {value}[] : {ttype(aval)}")
    if aval.dtype == np.bool_:
        return scalar
    zero, flag = em.fresh("c"), em.fresh("p")
    em.emit(f"{zero} = arith.constant 0 : {etype(aval)}")
    em.emit(f"{flag} = arith.cmpi ne, {scalar}, {zero} : {etype(aval)}")
    return flag


def _region(em: Emitter, region: mlir.Region, arg_names: list[str] = ()) -> list[str]:
    """Lower a region's block in place (its arguments named `arg_names`); the names of the
    values its ember.yield returns."""
    block = region.blocks[0]
    for arg, name in zip(block.arguments, arg_names, strict=True):
        em.names[arg] = name
    return em.block_lowering(em, block)  # the one op loop, shared with functions


def _loop_body(em: Emitter, region: mlir.Region, arg_names: list[str]) -> list[str]:
    em.loop_depth += 1
    try:
        return _region(em, region, arg_names)
    finally:
        em.loop_depth -= 1


def lower_if(em, operation, args, avals, params, result) -> list[str]:
    results = [ttype(r) for r in params["results"]]
    flag = _predicate(em, args[0], avals[0])
    lhs, names = results_lhs(em.fresh(), len(results))
    em.emit(f"{lhs} = scf.if {flag} -> ({', '.join(results)}) {{")
    for i, region in enumerate(operation.regions):
        outs = _region(em, region)
        em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
        em.emit("} else {" if i == 0 else "}")
    return names


def lower_call(em, operation, args, avals, params, result) -> list[str]:
    """The body inline (ember-canonicalize inlines calls first; this is for IR that skipped
    it, as `ember-opt --ember-lower-to-linalg` alone)."""
    return _region(em, operation.regions[0], list(args))


def lower_case(em, operation, args, avals, params, result) -> list[str]:
    """A chain of scf.if on `index == i`, the last branch innermost (the index is clamped).
    Not scf.index_switch: IREE 3.13's stream conversion miscounts its results."""
    results = [ttype(r) for r in params["results"]]
    scalar = em.fresh("p")
    em.emit(f"{scalar} = tensor.extract {args[0]}[] : {ttype(avals[0])}")
    lhs, names = results_lhs(em.fresh(), len(results))
    regions = list(operation.regions)

    def branch(i: int, lhs: str | None) -> None:
        if i == len(regions) - 1:
            outs = _region(em, regions[i])
            em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
            return
        case, flag = em.fresh("c"), em.fresh("p")
        em.emit(f"{case} = arith.constant {i} : {etype(avals[0])}")
        em.emit(f"{flag} = arith.cmpi eq, {scalar}, {case} : {etype(avals[0])}")
        inner, inner_names = results_lhs(em.fresh(), len(results))
        em.emit(f"{lhs or inner} = scf.if {flag} -> ({', '.join(results)}) {{")
        outs = _region(em, regions[i])
        em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
        em.emit("} else {")
        branch(i + 1, None)
        em.emit("}")
        if lhs is None:  # a nested if: the enclosing else-region yields its results
            em.emit(f"  scf.yield {', '.join(inner_names)} : {', '.join(results)}")

    branch(0, lhs)
    return names


def lower_while(em, operation, args, avals, params, result) -> list[str]:
    results = [ttype(r) for r in params["results"]]
    n = len(results)
    cond_region, body_region = operation.regions
    before = [em.fresh("w") for _ in range(n)]
    after = [em.fresh("w") for _ in range(n)]
    lhs, names = results_lhs(em.fresh(), n)
    inits = ", ".join(f"{b} = {a}" for b, a in zip(before, args, strict=True))
    em.emit(f"{lhs} = scf.while ({inits}) : ({', '.join(results)}) -> ({', '.join(results)}) {{")
    (keep,) = _loop_body(em, cond_region, before)
    flag = em.fresh("p")
    em.emit(f"  {flag} = tensor.extract {keep}[] : tensor<i1>")
    em.emit(f"  scf.condition({flag}) {', '.join(before)} : {', '.join(results)}")
    em.emit("} do {")
    em.emit(f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(after, results, strict=True))}):")
    outs = _loop_body(em, body_region, after)
    em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
    em.emit("}")
    return _fenced(em, names, results)


def _fenced(em: Emitter, names: list[str], results: list[str]) -> list[str]:
    """A host loop's results, each through its own util.optimization_barrier: IREE 3.13
    fused the dispatch reading a loop's result with one computing the loop's initial value's
    sibling (x -> x * 0.5 into the loop, x + 0.5 beside it, the loop's result then read),
    and its stream partitioning failed ("circular dependency: input operation uses
    partition output"). One barrier a result: a barrier joining values of different kinds
    of buffer does not compile (see ember-bufferize)."""
    fenced = []
    for name, rtype in zip(names, results, strict=True):
        out = em.fresh("f")
        em.emit(f"{out} = util.optimization_barrier {name} : {rtype}")
        fenced.append(out)
    return fenced


def _index(em: Emitter, value: str, aval: ShapedArray) -> str:
    scalar, idx = em.fresh("i"), em.fresh("i")
    em.emit(f"{scalar} = tensor.extract {value}[] : {ttype(aval)}")
    cast = "index_castui" if kind(aval.dtype) == "u" else "index_cast"
    em.emit(f"{idx} = arith.{cast} {scalar} : {etype(aval)} to index")
    return idx


def lower_for(em, operation, args, avals, params, result) -> list[str]:
    """scf.for over index bounds; the body sees the induction variable as a scalar tensor of
    the bounds' dtype. A counted loop needs no host round trip for its condition, and with
    the module's self-topology IREE updates its carries in place (see LowerToLinalg)."""
    results = [ttype(r) for r in params["results"]]
    n = len(results)
    lower, upper = (_index(em, a, av) for a, av in zip(args[:2], avals[:2], strict=True))
    one, iv = em.fresh("c"), em.fresh("i")
    em.emit(f"{one} = arith.constant 1 : index")
    carried = [em.fresh("w") for _ in range(n)]
    lhs, names = results_lhs(em.fresh(), n)
    inits = ", ".join(f"{c} = {a}" for c, a in zip(carried, args[2:], strict=True))
    em.emit(f"{lhs} = scf.for {iv} = {lower} to {upper} step {one} iter_args({inits}) -> "
            f"({', '.join(results)}) {{")
    i_aval = avals[0]
    scalar, tensor = em.fresh("i"), em.fresh("i")
    cast = "index_castui" if kind(i_aval.dtype) == "u" else "index_cast"
    em.emit(f"  {scalar} = arith.{cast} {iv} : index to {etype(i_aval)}")
    em.emit(f"  {tensor} = tensor.from_elements {scalar} : {ttype(i_aval)}")
    outs = _loop_body(em, operation.regions[0], [tensor, *carried])
    em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
    em.emit("}")
    return _fenced(em, names, results)


def lower_elementwise_for(em, operation, args, avals, params, result) -> list[str]:
    """One linalg.generic whose body is an scf.for over scalars. Each invocation carries
    `kernel_lanes` elements side by side (the carries seen as (n / lanes, lanes), one generic
    operand per lane), whose identical chains LLVM's SLP vectorizer packs into vector ops (a
    generic with a loop inside is not vectorized by IREE: 1000 trips of c * 0.999 + 0.001
    on 256 floats took 680 us a lane at a time, 94 us with 8 lanes, 40 with 16 packed).
    Values from outside are inputs too: rank-0 ones read by every invocation."""
    block = operation.regions[0].blocks[0]
    *members, end = [op.operation for op in block.operations]
    carries = avals[2:]
    size = carries[0].size
    outside = outside_values(block)
    lanes = kernel_lanes(size, len(carries), len(outside))
    rows = size // lanes
    lower, upper = (_index(em, a, av) for a, av in zip(args[:2], avals[:2], strict=True))
    sources = list(zip(args[2:], carries, strict=True))
    sources += [(em.names[v], eir.aval_of(v)) for v in outside]
    ins, maps, shared = [], [], []  # the generic's operands; which sources all lanes share
    for k, (name, aval) in enumerate(sources):
        shared.append(k >= len(carries) and aval.ndim == 0)
        if shared[-1]:
            ins.append((name, aval))
            maps.append(affine_map(1, []))
            continue
        table = _as_lanes(em, name, aval, rows, lanes)
        for j in range(lanes):
            ins.append((table, ShapedArray((rows, lanes), aval.dtype)))
            maps.append(affine_map(1, ["d0", str(j)]))
    lane_aval = [ShapedArray((rows,), c.dtype) for c in carries]
    outs = [(em.empty(a), a) for a in lane_aval for _ in range(lanes)]
    maps += [identity_map(1)] * len(outs)
    lhs, names = results_lhs(em.fresh(), len(outs))
    em.emit(f"{lhs} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = "
            f"{iterators(1)}}} ins({', '.join(n for n, _ in ins)} : "
            f"{', '.join(ttype(a) for _, a in ins)}) outs({', '.join(o for o, _ in outs)} : "
            f"{', '.join(ttype(a) for _, a in outs)}) {{")
    bargs = [em.fresh("in") for _ in ins] + [em.fresh("out") for _ in outs]
    types = [a for _, a in ins] + [a for _, a in outs]
    em.emit(f"^bb0({', '.join(f'{b}: {etype(a)}' for b, a in zip(bargs, types, strict=True))}):")
    lane_args, at = [], 0  # per source, the block argument each lane reads
    for is_shared in shared:
        lane_args.append([bargs[at]] * lanes if is_shared else bargs[at:at + lanes])
        at += 1 if is_shared else lanes
    one, iv = em.fresh("c"), em.fresh("i")
    em.emit(f"  {one} = arith.constant 1 : index")
    carried = [[em.fresh("w") for _ in range(lanes)] for _ in carries]
    steps, step_names = results_lhs(em.fresh("r"), len(outs))
    scalar_types = ", ".join(etype(c) for c in carries for _ in range(lanes))
    inits = ", ".join(f"{w} = {b}" for ws, bs in zip(carried, lane_args, strict=False)
                      for w, b in zip(ws, bs, strict=True))
    em.emit(f"  {steps} = scf.for {iv} = {lower} to {upper} step {one} iter_args({inits}) -> "
            f"({scalar_types}) {{")
    i_scalar = em.fresh("i")
    cast = "index_castui" if kind(avals[0].dtype) == "u" else "index_cast"
    em.emit(f"  {i_scalar} = arith.{cast} {iv} : index to {etype(avals[0])}")
    yields = []
    for j in range(lanes):
        scalars = {block.arguments[0]: i_scalar}
        scalars.update((block.arguments[1 + c], carried[c][j]) for c in range(len(carries)))
        scalars.update((v, lane_args[len(carries) + k][j]) for k, v in enumerate(outside))
        _scalar_chain(em, members, scalars)
        yields.append([scalars[v] for v in end.operands])
    em.emit(f"  scf.yield {', '.join(y[c] for c in range(len(carries)) for y in yields)} : "
            f"{scalar_types}")
    em.emit("  }")
    em.emit(f"  linalg.yield {', '.join(step_names)} : {scalar_types}")
    em.emit(f"}} -> ({', '.join(ttype(a) for _, a in outs)})")
    return [_from_lanes(em, names[c * lanes:(c + 1) * lanes], carry, rows, lanes)
            for c, carry in enumerate(carries)]


def _scalar_chain(em: Emitter, members: list, scalars: dict) -> None:
    """The members' scalar bodies in order, reading and extending `scalars`."""
    for op in members:
        op_row, op_avals, op_params = eir.read(op)
        res = eir.aval_of(op.results[0])
        if op_row is ops.BROADCAST_IN_DIM:
            scalars[op.results[0]] = scalars[op.operands[0]]
        elif op_row is ops.CONSTANT:
            name = em.fresh("c")
            value = eir.splat_value(op.attributes["value"])
            text = str(int(value)) if res.dtype == np.bool_ else eir.literal(value, res.dtype)
            em.emit(f"  {name} = arith.constant {text} : {etype(res)}")
            scalars[op.results[0]] = name
        else:
            template = op_row.scalar(kind(op_avals[-1].dtype),
                                     template_params(op_avals, res, op_params))
            scalars[op.results[0]] = em.scalar_body(
                template, [scalars[v] for v in op.operands], etype(op_avals[-1]), etype(res))


def _as_lanes(em: Emitter, name: str, aval: ShapedArray, rows: int, lanes: int) -> str:
    """`name` as a (rows, lanes) table, in row-major order (a reshape: no copy)."""
    return em.reshape(name, aval, ShapedArray((rows, lanes), aval.dtype))


def _from_lanes(em: Emitter, columns: list[str], aval: ShapedArray, rows: int,
                lanes: int) -> str:
    """The lanes' (rows,) results interleaved back into `aval`'s shape."""
    table = ShapedArray((rows, lanes), aval.dtype)
    column = ShapedArray((rows, 1), aval.dtype)
    acc = em.empty(table)
    for j, col in enumerate(columns):
        tall, new = em.reshape(col, ShapedArray((rows,), aval.dtype), column), em.fresh()
        em.emit(f"{new} = tensor.insert_slice {tall} into {acc}[0, {j}] [{rows}, 1] [1, 1] : "
                f"{ttype(column)} into {ttype(table)}")
        acc = new
    return em.reshape(acc, table, aval)


def lower_fusion(em, operation, args, avals, params, result) -> str | list[str]:
    """One linalg.generic over the root's iteration domain: inputs read with identity or
    broadcast maps, the members' scalar bodies chained, a reduction root's combiner last.
    Further results (see fuse.py) are sibling reductions over the same dims, combined in the
    same generic, or the elementwise value the reduction reads, an output of the generic."""
    block = operation.regions[0].blocks[0]
    *members, end = [op.operation for op in block.operations]
    root = members[-1]
    if eir.opdef(root) is ops.DYNAMIC_UPDATE_SLICE:
        return _window_store(em, block, members, args, avals)
    outs = list(end.operands)
    keep = len(outs) == 2 and not eir.opdef(producer(outs[1])).has(Trait.REDUCTION)
    if len(outs) - keep == 1 and _mistaken_for_a_contraction(operation, block, members):
        # IREE's data tiling takes a sum of f(a) * g(b) for a contraction, f and g unary ops
        # its matcher skips as if they were casts, and drops them: (-a * b).sum(1) came out
        # as (a * b).sum(1) (IREE 3.13). The product is computed by a dispatch of its own,
        # behind a barrier IREE does not fuse across, and the sum reads it.
        operand = root.operands[0]
        aval = eir.aval_of(operand)
        product = _fused(em, block, members[:-1], [operand], args, avals)
        hidden = em.fresh()
        em.emit(f"{hidden} = util.optimization_barrier {product} : {ttype(aval)}")
        sizes = [em.size(d) for d in aval.shape if isinstance(d, Dim)]
        if sizes:  # the barrier hides the sizes too: say them again
            tied = em.fresh()
            em.emit(f"{tied} = flow.tensor.tie_shape {hidden} : {ttype(aval)}"
                    f"{{{', '.join(sizes)}}}")
            hidden = tied
        total = _fused(em, block, [root], [root.results[0]], [hidden], [aval],
                       arguments=[operand])
        return [total, product] if keep else total
    return _fused(em, block, members, outs, args, avals)


def _window_store(em, block, members: list, args: list[str], avals: list) -> str:
    """A fusion ending in an insert of its result (ember-window-stores): the generic and the
    insert in one flow.dispatch.region, which IREE lowers to one dispatch writing the window
    of the destination in place (the region's result tied to it)."""
    insert = members[-1]
    arguments, value = list(block.arguments), insert.operands[1]  # the rest are arguments
    names = [args[arguments.index(v)] if v != value else "" for v in insert.operands]
    insert_avals = [eir.aval_of(v) for v in insert.operands]
    params = eir.read(insert)[2]
    offsets = window_offsets(em, names, insert_avals, params)  # outside the dispatch
    result = ttype(insert_avals[0])
    name = em.fresh()
    em.emit(f"{name} = flow.dispatch.region -> ({result}) {{")
    update = _fused(em, block, members[:-1], [value], args, avals)
    stored = inserted(em, update, names[0], offsets, insert_avals, params)
    em.emit(f"flow.return {stored} : {result}")
    em.emit("}")
    return name


def _mistaken_for_a_contraction(operation: mlir.Operation, block: mlir.Block,
                                members: list) -> bool:
    """Whether a fused sum's body is add(mul(f(x), g(y))) with x and y inputs that both read
    a summed axis (a contraction's) and some f or g a unary op other than a conversion
    (upstream's isContractionBody skips those)."""
    root = members[-1]
    if eir.opdef(root) is not ops.REDUCE_SUM:
        return False
    summed = set(eir.read(root)[2]["axes"])
    inside = {op.results[0]: op for op in members[:-1]}
    unary = 0

    def skip(value):  # through ops of one operand (x * x, square, counts as one)
        nonlocal unary
        while value in inside and len(set(inside[value].operands)) == 1 and \
                eir.opdef(inside[value]) is not ops.BROADCAST_IN_DIM:
            unary += eir.opdef(inside[value]) is not ops.CONVERT
            value = inside[value].operands[0]
        return value

    product = inside.get(skip(root.operands[0]))
    if product is None or eir.opdef(product) is not ops.MUL:
        return False
    domain = eir.aval_of(root.operands[0]).shape
    reads = {arg: True for arg in block.arguments}  # an input read whole
    for op in members:
        if eir.opdef(op) is ops.BROADCAST_IN_DIM:  # reads the dims its operand has
            x, dims = eir.aval_of(op.operands[0]), eir.read(op)[2]["broadcast_dimensions"]
            reads[op.results[0]] = any(d in summed and x.shape[j] == domain[d]
                                       for j, d in enumerate(dims))
    if not all(reads.get(skip(v), False) for v in product.operands):
        return False
    if unary > 0:
        return True
    # IREE 3.13's CPU codegen also fails on a plain product whose factors read different
    # dims when the sum keeps no dim, or one dim and sums two: sum(a * w[None, :])
    # ("vector.contract op invalid accumulator/result vector shape"), and a (2, 2, 4) * (4,)
    # summed over its last two dims crashed the compiler. A sum keeping two dims (a matmul
    # written with broadcasts) is a contraction IREE computes right, and fast.
    broadcast_inputs = {arg for arg, outer in zip(block.arguments, operation.operands,
                                                  strict=True)
                        if (p := producer(outer)) is not None and
                        eir.opdef(p) is ops.BROADCAST_IN_DIM}  # IREE fuses them back in
    whole = [v for v in product.operands
             if skip(v) in block.arguments and skip(v) not in broadcast_inputs]
    kept = len(domain) - len(summed)
    return len(whole) < len(product.operands) and (kept == 0 or (kept == 1 and
                                                                   len(summed) >= 2))


def _fused(em, block, members: list, outs: list[mlir.Value], args: list[str], avals: list,
           arguments: list | None = None) -> str | list[str]:
    """The generic computing `outs` from the fusion's `arguments` (its block arguments,
    named `args`) through `members`. The first may be a reduction's; the others are then
    reductions over the same dims, or values those reductions read (their reduced dims
    trailing), kept as outputs. One result, or one per out."""
    arguments = list(block.arguments) if arguments is None else arguments
    roots = [producer(v) for v in outs]
    root = roots[0]
    root_row, root_avals, root_params = eir.read(root)
    result = eir.aval_of(outs[0])
    reduce = root_row.has(Trait.REDUCTION)
    domain = root_avals[0].shape if reduce else result.shape
    axes = tuple(root_params["axes"]) if reduce else ()
    order = [d for d in range(len(domain)) if d not in axes] + list(axes)  # parallel first
    inputs, reads = [], []  # generic inputs (name, aval, map); the region value each feeds
    readers = set(members)
    for i, arg in enumerate(arguments):
        if any(u.owner.operation in readers and
               eir.opdef(u.owner.operation) is not ops.BROADCAST_IN_DIM for u in arg.uses):
            inputs.append((args[i], avals[i], affine_map(len(order), [
                f"d{order.index(d)}" for d in range(len(domain))])))
            reads.append(arg)
    covered = set(range(len(order))) if inputs else set()  # loop dims some input reads
    for op in members:
        if eir.opdef(op) is ops.BROADCAST_IN_DIM:
            i = arguments.index(op.operands[0])
            dims = eir.read(op)[2]["broadcast_dimensions"]
            read = [None if avals[i].shape[j] == 1 and domain[d] != 1 else order.index(d)
                    for j, d in enumerate(dims)]
            covered.update(r for r in read if r is not None)
            inputs.append((args[i], avals[i], affine_map(len(order), [
                "0" if r is None else f"d{r}" for r in read])))
            reads.append(op.results[0])
    if len(covered) < len(order):  # a broadcast dim no input reads: a loop over it anyway
        shape = tuple(domain[d] for d in order)
        inputs.append((em.empty(ShapedArray(shape, result.dtype)),
                       ShapedArray(shape, result.dtype),
                       affine_map(len(order), [f"d{i}" for i in range(len(order))])))
        reads.append(None)

    reduced = {v for v, r in zip(outs, roots, strict=True) if eir.opdef(r).has(Trait.REDUCTION)}
    # each output's generic result: a narrow float's sum in float32 (emitter.accumulator)
    accs = [ShapedArray(a.shape, accumulator(eir.opdef(r), a.dtype)) if v in reduced else a
            for v, r in zip(outs, roots, strict=True) for a in [eir.aval_of(v)]]

    def body(bargs: list[str], *out_args: str) -> str | list[str]:
        scalars = dict(zip(reads, bargs, strict=True))  # broadcasts are read as inputs
        chain = [op for op in members if eir.opdef(op) is not ops.BROADCAST_IN_DIM
                 and op.results[0] not in reduced]
        _scalar_chain(em, chain, scalars)
        if not reduce:
            return scalars[outs[0]]
        yields = []
        for v, op, acc, wide in zip(outs, roots, out_args, accs, strict=True):
            if v not in reduced:  # a kept value
                yields.append(scalars[v])
                continue
            row, _, params = eir.read(op)
            aval = eir.aval_of(v)
            template = row.scalar(kind(aval.dtype), params)
            value = scalars[op.operands[0]]
            if wide != aval:
                value = em.extended(value, etype(aval))
            yields.append(em.scalar_body(template, [value, acc], etype(wide), etype(wide)))
        return yields if len(yields) > 1 else yields[0]

    if not reduce:
        return em.generic(inputs, em.empty(result), result, identity_map(len(order)),
                          iterators(len(order)), body)
    out_map = affine_map(len(order), [f"d{i}" for i in range(len(order) - len(axes))])
    if len(reduced) < len(outs) and order != list(range(len(domain))):
        raise ValueError("ember-lower-to-linalg requires an ember.fusion keeping the "
                         "value its reduction reads to reduce its trailing dims")
    extra = []  # a reduced output starts at its combiner's identity; a kept one is written
    for v, r, a in zip(outs[1:], roots[1:], accs[1:], strict=True):
        extra.append((em.filled(a, eir.opdef(r).init(a.dtype)), a, out_map) if v in reduced
                     else (em.empty(a), a, identity_map(len(order))))
    names = em.generic(inputs, em.filled(accs[0], root_row.init(accs[0].dtype)), accs[0],
                       out_map, iterators(len(order) - len(axes), len(axes)), body, tuple(extra))
    rounded = [n if a == eir.aval_of(v) else em.rounded(n, a, eir.aval_of(v))
               for n, a, v in zip(names if extra else [names], accs, outs, strict=True)]
    return rounded if extra else rounded[0]

