"""Lowerings of the indexing ops: slices (static and dynamic), reversal, gathers, scatters."""

from __future__ import annotations

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.types import Dim, ShapedArray, kind, symbolic

from .emitter import (
    Emitter,
    View,
    affine_map,
    etype,
    identity_map,
    iterators,
    template_params,
    ttype,
)
from .walk import producer


def _clamped_offsets(em: Emitter, starts: list[str], avals: list[ShapedArray],
                     shape: tuple[int, ...], sizes: tuple[int, ...]) -> list[str]:
    """Index values for run-time starts, clamped to [0, dim - size] as XLA does."""
    offsets = []
    for start, aval, dim, size in zip(starts, avals, shape, sizes, strict=True):
        scalar, idx, lo, hi, clamped = (em.fresh("i") for _ in range(5))
        em.emit(f"{scalar} = tensor.extract {start}[] : {ttype(aval)}")
        cast = "index_castui" if kind(aval.dtype) == "u" else "index_cast"
        em.emit(f"{idx} = arith.{cast} {scalar} : {etype(aval)} to index")
        em.emit(f"{lo} = arith.constant 0 : index")
        em.emit(f"{hi} = arith.constant {dim - size} : index")
        em.emit(f"{clamped} = arith.maxsi {idx}, {lo} : index")
        final = em.fresh("i")
        em.emit(f"{final} = arith.minsi {clamped}, {hi} : index")
        offsets.append(final)
    return offsets


def lower_dynamic_slice(em, op, args, avals, params, result) -> str:
    x = avals[0]
    offsets = _clamped_offsets(em, args[1:], avals[1:], x.shape, tuple(params["sizes"]))
    name = em.fresh()
    em.emit(f"{name} = tensor.extract_slice {args[0]}[{', '.join(offsets)}] "
            f"[{', '.join(map(str, result.shape))}] [{', '.join(['1'] * x.ndim)}] : "
            f"{ttype(x)} to {ttype(result)}")
    return name


def lower_dynamic_update_slice(em, op, args, avals, params, result) -> str:
    offsets = window_offsets(em, args, avals, params)
    return inserted(em, args[1], args[0], offsets, avals, params)


def window_offsets(em: Emitter, args: list[str], avals: list[ShapedArray],
                   params) -> list[str]:
    """An ember.dynamic_update_slice's offsets (of `args`: destination, update, starts),
    clamped so that its strided window fits."""
    x, update = avals[0], avals[1]
    extents = tuple((u - 1) * s + 1 if u else 0 for u, s in zip(update.shape,
                                                                params["strides"],
                                                                strict=True))
    return _clamped_offsets(em, args[2:], avals[2:], x.shape, extents)


def inserted(em: Emitter, update: str, dest: str, offsets: list[str],
             avals: list[ShapedArray], params) -> str:
    """`update` inserted into `dest` at `offsets` (window_offsets') with the op's strides."""
    x, u = avals[0], avals[1]
    name = em.fresh()
    em.emit(f"{name} = tensor.insert_slice {update} into {dest}[{', '.join(offsets)}] "
            f"[{', '.join(map(str, u.shape))}] [{', '.join(map(str, params['strides']))}] : "
            f"{ttype(u)} into {ttype(x)}")
    return name


def lower_after(em, op, args, avals, params, result) -> str:
    """util.optimization_barrier of the operand and the values to wait for: IREE neither
    reorders nor fuses across it."""
    return em.barrier(args, avals)[0]


def lower_copy(em, op, args, avals, params, result) -> str:
    """A copy IREE cannot see through: each element is picked over a zero by a condition
    behind an optimization barrier (true at run time), so no pattern folds the copy into its
    operand, which is read through a barrier too, so a splat constant's copy does not become
    a fill that IREE merges with another copy's (two loops starting from one buffer). It
    reads the operand where it writes: contiguous vector loads at any rank (read at a hidden
    offset instead, a copy of several dims became a gather once IREE flattened its loops:
    1.7 ms for 100^3 float32, 0.25 ms this way). The copy of a splat constant is a fill of
    a fresh buffer with its element read through a barrier (distinct for each copy): IREE
    filled a temporary with the splat and copied it over, twice the passes and a buffer the
    size of the result (2000 row updates of a zeros((4096, 1024)) started by 14.5 ms of
    fill and copy a call)."""
    (x,) = avals
    splat = None if op is None else _splat_element(op.operands[0])
    if splat is not None:
        element, kept, name = em.scalar(x.dtype, splat), em.fresh("c"), em.fresh()
        init = em.empty(result)
        em.emit(f"{kept} = util.optimization_barrier {element} : {etype(x)}")
        em.emit(f"{name} = linalg.fill ins({kept} : {etype(x)}) outs({init} : {ttype(result)}) "
                f"-> {ttype(result)}")
        return name
    (source,) = em.barrier(args, avals)
    return _picked(em, source, result)


def _picked(em: Emitter, source: str, aval: ShapedArray) -> str:
    """`source` read where it is written, each element picked over a zero by a condition
    behind an optimization barrier (true at run time): a generic no pattern folds away."""
    true, keep = em.fresh("c"), em.fresh("c")
    em.emit(f"{true} = arith.constant true")
    em.emit(f"{keep} = util.optimization_barrier {true} : i1")
    zero = em.scalar(aval.dtype, 0)

    def body(b, _):
        out = em.fresh("y")
        em.emit(f"  {out} = arith.select {keep}, {b[0]}, {zero} : {etype(aval)}")
        return out

    return em.generic([(source, aval, identity_map(aval.ndim))], em.empty(aval), aval,
                      identity_map(aval.ndim), iterators(aval.ndim), body)


def _splat_element(value) -> np.ndarray | None:
    """The element of `value` when it is a splat ember.constant, else None."""
    op = producer(value)
    if op is None or eir.opdef(op) is not ops.CONSTANT:
        return None
    attr = op.attributes["value"]
    return eir.splat_value(attr) if mlir.DenseElementsAttr(attr).is_splat else None


def lower_slice(em, op, args, avals, params, result) -> str:
    if args[0] in em.gathered:
        args = em.barrier(args[:1], avals[:1])
    name = em.fresh()
    join = lambda v: ", ".join(map(str, v))  # noqa: E731
    # An empty slice may start at the end; MLIR wants every offset inside its dimension.
    starts = [s if n else 0 for s, n in zip(params["start_indices"], result.shape, strict=True)]
    em.emit(f"{name} = tensor.extract_slice {args[0]}[{join(starts)}] "
            f"[{join(result.shape)}] [{join(params['strides'])}] : {ttype(avals[0])} to "
            f"{ttype(result)}")
    if any(s != 1 for s in params["strides"]) or args[0] in em.views:
        em.views[name] = View(args[0], avals[0], tuple(
            f"d{k} * {step} + {start}" for k, (start, step) in
            enumerate(zip(starts, params["strides"], strict=True))))
    return name


def extract(em: Emitter, value: str, aval: ShapedArray, coords: list[str]) -> str:
    """Emits (in a generic's body) a read of `value` at `coords`, from the value it views
    where it is a view (Emitter.views); returns the element's name."""
    while value in em.views:
        view = em.views[value]
        coords = [_apply(em, expr, coords) for expr in view.where]
        value, aval = view.source, view.aval
    out = em.fresh("e")
    em.emit(f"  {out} = tensor.extract {value}[{', '.join(coords)}] : {ttype(aval)}")
    return out


def _apply(em: Emitter, expr: str, dims: list[str]) -> str:
    """affine.apply of `expr` over d0, d1, ... bound to `dims` (in a generic's body)."""
    at = em.fresh("s")
    names = ", ".join(f"d{k}" for k in range(len(dims)))
    em.emit(f"  {at} = affine.apply affine_map<({names}) -> ({expr})>({', '.join(dims)})")
    return at


def lower_rev(em, op, args, avals, params, result) -> str:
    """Reversal along dims before the last: on CPUs, whole rows copied in mirrored order
    ((1000, 1000) f32 along its first dim: 907 -> 292 us). Otherwise mirrored coordinates
    read with tensor.extract (a reversing index map such as `(d0) -> (5 - d0)` breaks
    IREE's tiling)."""
    dims = set(params["dimensions"])
    x = avals[0]
    lead = max(dims, default=-1) + 1
    if em.cpu and _copies_rows(x, lead):
        return _mirrored_rows(em, args[0], x, lead, dims, result)

    def body(_, __):
        coords = [_mirrored_index(em, d, n, d in dims) for d, n in enumerate(result.shape)]
        return extract(em, args[0], x, coords)

    return em.generic([], em.empty(result), result, identity_map(result.ndim),
                      iterators(result.ndim), body)


def _mirrored_index(em: Emitter, d: int, n: int, mirrored: bool) -> str:
    """Emits the body lines of loop dim `d`'s index, as n - 1 - i where `mirrored`."""
    i = em.fresh("r")
    em.emit(f"  {i} = linalg.index {d} : index")
    if not mirrored:
        return i
    last, out = em.fresh("r"), em.fresh("r")
    em.emit(f"  {last} = arith.constant {n - 1} : index")
    em.emit(f"  {out} = arith.subi {last}, {i} : index")
    return out


def _mirrored_rows(em: Emitter, source: str, x: ShapedArray, lead: int, dims: set[int],
                   result: ShapedArray) -> str:
    """The rows of `x`'s first `lead` dims in mirrored order along `dims`: each row's number
    computed from its coordinates (n - 1 - i along a reversed dim, row-major), then
    gathered."""
    positions = ShapedArray(x.shape[:lead], np.dtype(np.int64))

    def body(_, __):
        total = _mirrored_index(em, 0, x.shape[0], 0 in dims)
        for d in range(1, lead):  # total * n_d + i_d
            n, scaled, summed = em.fresh("r"), em.fresh("r"), em.fresh("r")
            em.emit(f"  {n} = arith.constant {x.shape[d]} : index")
            em.emit(f"  {scaled} = arith.muli {total}, {n} : index")
            i = _mirrored_index(em, d, x.shape[d], d in dims)
            em.emit(f"  {summed} = arith.addi {scaled}, {i} : index")
            total = summed
        value = em.fresh("r")
        em.emit(f"  {value} = arith.index_cast {total} : index to i64")
        return value

    pos = em.generic([], em.empty(positions), positions, identity_map(lead), iterators(lead),
                     body)
    return _gather_rows(em, source, x, lead, pos, positions, result)


# On CPU targets, a gather of whole rows (take along the leading axis, a reversal of leading dims)
# copies them with iree_linalg_ext.gather: contiguous vector loads, where reading each element at a
# loaded coordinate (tensor.extract) is a hardware gather. The rows are viewed as (length / k, k), k
# the largest multiple of 8 from 16 to ROW_VIEW_LANES that divides their length and is below it,
# else 8 (pieces of 50 failed to compile for aarch64: IREE's NEON masked stores; pieces of 40 run as
# fast on x86); rows no such k divides (shorter than 16 among them) read element by element (see
# _row_lanes). IREE then tiles whole pieces of k, where a flat row of 1000 was cut into tiles of 50
# (Ember against itself in one process, (1000, 1000) f32: half its rows by index 269 -> 173 us,
# mirrored 421 -> 292 us, with k = 8). Pieces of 16 or 8 against 32 to 64 (Zen 4, medians of 15
# rounds, JAX alongside): flip + 1 of (1000, 1000) 247 -> 156 us (k = 50; JAX 150), of (1000, 1024)
# 178 -> 153 (JAX 254), of (1000, 768) 148 -> 127 (JAX 203); half the rows by index 155 -> 121 us
# (JAX 125), 118 -> 104, 96 -> 84. Pieces of 128 and 200: slower again.
ROW_VIEW_LANES = 64


def _normalized_index(em: Emitter, i: str, idx: ShapedArray, n: int) -> str:
    """Emits the body lines that turn index value `i` into a position in [0, n): negative
    counts from the end, then clamped (as JAX's indexing does)."""
    cast = "index_castui" if kind(idx.dtype) == "u" else "index_cast"
    pos, size, zero, neg, wrapped, low, top, clamped, final = (em.fresh("g") for _ in range(9))
    em.emit(f"  {pos} = arith.{cast} {i} : {etype(idx)} to index")
    em.emit(f"  {size} = arith.constant {n} : index")
    em.emit(f"  {zero} = arith.constant 0 : index")
    em.emit(f"  {neg} = arith.cmpi slt, {pos}, {zero} : index")
    em.emit(f"  {wrapped} = arith.addi {pos}, {size} : index")
    em.emit(f"  {low} = arith.select {neg}, {wrapped}, {pos} : index")
    em.emit(f"  {top} = arith.constant {n - 1} : index")
    em.emit(f"  {clamped} = arith.maxsi {low}, {zero} : index")
    em.emit(f"  {final} = arith.minsi {clamped}, {top} : index")
    return final


def lower_take(em, op, args, avals, params, result) -> str:
    """A gather; indices are normalized (negative from the end) and clamped, as JAX's
    indexing does. Rows of the leading axis are copied whole on CPUs (_row_gather: 500 of
    1000 f32 rows of 1000, 370 -> 173 us); otherwise a linalg.generic over the result
    extracts each element."""
    x, idx = avals
    axis, k = params["axis"], idx.ndim
    if em.cpu and axis == 0 and _copies_rows(x, 1) and not symbolic(idx.shape) and result.size:
        return _row_gather(em, args, x, idx, result)
    idx_map = affine_map(result.ndim, [f"d{axis + j}" for j in range(k)])

    def body(bargs, _):
        final = _normalized_index(em, bargs[0], idx, x.shape[axis])
        coords = []
        for d in range(x.ndim):
            if d == axis:
                coords.append(final)
                continue
            c = em.fresh("g")
            em.emit(f"  {c} = linalg.index {d if d < axis else d + k - 1} : index")
            coords.append(c)
        return extract(em, args[0], x, coords)

    return em.generic([(args[1], idx, idx_map)], em.empty(result), result,
                      identity_map(result.ndim), iterators(result.ndim), body)


def _row_gather(em: Emitter, args: list[str], x: ShapedArray, idx: ShapedArray,
                result: ShapedArray) -> str:
    """x[idx] for rows of the leading axis: the normalized positions, then the rows."""
    positions = ShapedArray(idx.shape, np.dtype(np.int64))

    def body(bargs, _):
        final, value = _normalized_index(em, bargs[0], idx, x.shape[0]), em.fresh("g")
        em.emit(f"  {value} = arith.index_cast {final} : index to i64")
        return value

    pos = em.generic([(args[1], idx, identity_map(idx.ndim))], em.empty(positions), positions,
                     identity_map(idx.ndim), iterators(idx.ndim), body)
    return _gather_rows(em, args[0], x, 1, pos, positions, result)


def _gather_rows(em: Emitter, source: str, x: ShapedArray, lead: int, pos: str,
                 positions: ShapedArray, result: ShapedArray) -> str:
    """Rows of `source` (its first `lead` dims flattened, the rest a row) at `pos` (i64 row
    numbers, in bounds), in `result`'s shape: iree_linalg_ext.gather of the rows' view."""
    count, length = positions.size, int(np.prod(x.shape[lead:]))
    lanes = _row_lanes(length)
    row = (length // lanes, lanes)
    rows = ShapedArray((x.size // length, *row), x.dtype)
    out = ShapedArray((count, *row), x.dtype)
    flat_pos = ShapedArray((count,), positions.dtype)
    name = em.fresh()
    em.emit(f"{name} = iree_linalg_ext.gather dimension_map = [0] "
            f"ins({em.reshape(source, x, rows)}, {em.reshape(pos, positions, flat_pos)} : "
            f"{ttype(rows)}, {ttype(flat_pos)}) outs({em.empty(out)} : {ttype(out)}) -> "
            f"{ttype(out)}")
    # Read through a generic IREE cannot fold: it roots the dispatch, into which IREE then
    # fuses the positions too (a gather at the root left them a dispatch of their own): 500
    # of 1000 f32 rows of 1000, 175 -> 162 us and 320 -> 293 (a slower hour).
    picked = _picked(em, em.reshape(name, out, result), result)
    em.gathered.add(picked)
    return picked


def _copies_rows(x: ShapedArray, lead: int) -> bool:
    """Whether a gather over `x`'s first `lead` dims copies rows: static, not empty, not
    complex (IREE vectorizes no complex `vector.transfer_read`), rows that _row_lanes cuts
    into pieces."""
    return (0 < lead < x.ndim and not symbolic(x.shape) and x.size > 0 and kind(x.dtype) != "c"
            and _row_lanes(int(np.prod(x.shape[lead:]))) is not None)


def _row_lanes(length: int) -> int | None:
    """The pieces a gathered row of `length` elements is viewed in (see ROW_VIEW_LANES), or
    None: a row viewed whole (flat, or one piece) made IREE vectorize a scatter fused after
    the gather as one vector of all the gathered rows, which it refuses to compile."""
    return next((k for k in (*range(ROW_VIEW_LANES, 15, -8), 8) if length % k == 0
                 and k < length), None)


_SCATTER_COMBINE = {"add": ops.ADD, "mul": ops.MUL, "min": ops.MIN, "max": ops.MAX}


def lower_scatter(em, op, args, avals, params, result) -> str:
    """IREE's iree_linalg_ext.scatter, which costs the updates, not the operand. It has no
    bounds checks, so out-of-range updates are first made harmless: for add/mul/min/max an
    identity element at position 0; for set a repeat of the last in-range update (or, when
    there is none, element 0's own value). Repeated positions combine in order for
    add/mul/min/max; for set one of them wins (JAX leaves that unspecified too)."""
    x, pos, upd = avals
    n, k = x.shape[0], pos.shape[0]
    if n == 0 or k == 0:
        return args[0]
    combine = params["combine"]
    fill_p, fill_u = _scatter_fallback(em, args, avals, combine)

    def pick(fallback: str, elem: str):
        def body(bargs, _):  # (position, value): the value if the position is in range
            out = em.fresh("s")
            ok = _in_range(em, bargs[0], pos, n)
            em.emit(f"  {out} = arith.select {ok}, {bargs[-1]}, {fallback} : {elem}")
            return out
        return body

    line = identity_map(1)
    positions = em.generic([(args[1], pos, line)], em.empty(pos), pos, line, iterators(1),
                           pick(fill_p, etype(pos)))
    updates = em.generic([(args[1], pos, line), (args[2], upd, line)], em.empty(upd), upd,
                         line, iterators(1), pick(fill_u, etype(upd)))
    column = ShapedArray((k, 1), pos.dtype)
    indices = em.reshape(positions, pos, column)
    name, u, o = em.fresh(), em.fresh("u"), em.fresh("o")
    em.emit(f"{name} = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) "
            f"ins({updates}, {indices} : {ttype(upd)}, {ttype(column)}) "
            f"outs({args[0]} : {ttype(x)}) {{")
    em.emit(f"^bb0({u}: {etype(x)}, {o}: {etype(x)}):")
    new = u
    row = _SCATTER_COMBINE.get(combine)
    if row is not None:
        template = row.scalar(kind(x.dtype), template_params([x, x], x, {}))
        new = em.scalar_body(template, [o, u], etype(x), etype(x))
    em.emit(f"  iree_linalg_ext.yield {new} : {etype(x)}")
    em.emit(f"}} -> {ttype(x)}")
    return name


def _in_range(em: Emitter, p: str, pos: ShapedArray, n: int) -> str:
    """0 <= p < n, for a position scalar `p` of `pos`'s dtype, inside a generic body."""
    zero, top, ge, lt, ok = (em.fresh("s") for _ in range(5))
    em.emit(f"  {zero} = arith.constant 0 : {etype(pos)}")
    em.emit(f"  {top} = arith.constant {n} : {etype(pos)}")
    em.emit(f"  {ge} = arith.cmpi sge, {p}, {zero} : {etype(pos)}")
    em.emit(f"  {lt} = arith.cmpi slt, {p}, {top} : {etype(pos)}")
    em.emit(f"  {ok} = arith.andi {ge}, {lt} : i1")
    return ok


def _scatter_fallback(em: Emitter, args: list[str], avals: list[ShapedArray],
                      combine: str) -> tuple[str, str]:
    """The (position, update) scalars that replace an out-of-range update."""
    x, pos, upd = avals
    p0, u0 = em.fresh("c"), em.fresh("c")
    em.emit(f"{p0} = arith.constant 0 : {etype(pos)}")
    if combine != "set":
        identity = {"add": 0, "mul": 1, "min": _extreme(x, high=True),
                    "max": _extreme(x, high=False)}[combine]
        text = str(int(identity)) if x.dtype == np.bool_ else eir.literal(identity, x.dtype)
        em.emit(f"{u0} = arith.constant {text} : {etype(x)}")
        return p0, u0
    # The last in-range update: a max-reduction of (in range ? k : -1) over the updates.
    scalar = ShapedArray((), np.dtype(np.int32))

    def last_body(bargs, out):
        ok = _in_range(em, bargs[0], pos, x.shape[0])
        k, ki, none, cand, best = (em.fresh("s") for _ in range(5))
        em.emit(f"  {k} = linalg.index 0 : index")
        em.emit(f"  {ki} = arith.index_cast {k} : index to i32")
        em.emit(f"  {none} = arith.constant -1 : i32")
        em.emit(f"  {cand} = arith.select {ok}, {ki}, {none} : i32")
        em.emit(f"  {best} = arith.maxsi {out}, {cand} : i32")
        return best

    last = em.generic([(args[1], pos, identity_map(1))], em.filled(scalar, -1), scalar,
                      affine_map(1, []), iterators(0, 1), last_body)
    li, has, at, idx = (em.fresh("c") for _ in range(4))
    em.emit(f"{li} = tensor.extract {last}[] : tensor<i32>")
    zero = em.fresh("c")
    em.emit(f"{zero} = arith.constant 0 : i32")
    em.emit(f"{has} = arith.cmpi sge, {li}, {zero} : i32")
    em.emit(f"{at} = arith.maxsi {li}, {zero} : i32")
    em.emit(f"{idx} = arith.index_cast {at} : i32 to index")
    lp, lu, first, c0 = (em.fresh("c") for _ in range(4))
    em.emit(f"{lp} = tensor.extract {args[1]}[{idx}] : {ttype(pos)}")
    em.emit(f"{lu} = tensor.extract {args[2]}[{idx}] : {ttype(upd)}")
    em.emit(f"{c0} = arith.constant 0 : index")
    em.emit(f"{first} = tensor.extract {args[0]}[{c0}] : {ttype(x)}")
    fp = em.fresh("c")
    em.emit(f"{fp} = arith.select {has}, {lp}, {p0} : {etype(pos)}")
    em.emit(f"{u0} = arith.select {has}, {lu}, {first} : {etype(x)}")
    return fp, u0


def _extreme(aval: ShapedArray, high: bool):
    if aval.dtype == np.bool_:
        return high
    if kind(aval.dtype) == "f":
        return np.inf if high else -np.inf
    info = np.iinfo(aval.dtype)
    return info.max if high else info.min



def lower_concatenate(em, op, args, avals, params, result) -> str:
    """Each operand inserted into an empty result at its offset along `dimension`."""
    acc, offset, d = em.empty(result), 0, params["dimension"]
    for name, aval in zip(args, avals, strict=True):
        if aval.shape[d] == 0:
            continue
        offsets = ["0"] * result.ndim
        offsets[d] = str(offset)
        new = em.fresh()
        sizes = [em.size(n) if isinstance(n, Dim) else str(n) for n in aval.shape]
        em.emit(f"{new} = tensor.insert_slice {name} into {acc}[{', '.join(offsets)}] "
                f"[{', '.join(sizes)}] [{', '.join(['1'] * result.ndim)}] : "
                f"{ttype(aval)} into {ttype(result)}")
        acc, offset = new, offset + aval.shape[d]
    return acc
