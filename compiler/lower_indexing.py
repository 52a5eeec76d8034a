"""Lowerings of the indexing ops: slices (static and dynamic), reversal, gathers, scatters."""

from __future__ import annotations

import numpy as np

from ember.dialect import ops
from ember.dialect.types import ShapedArray, kind

from .emitter import (
    Emitter,
    affine_map,
    derived,
    etype,
    identity_map,
    iterators,
    ttype,
)


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
    x, update = avals[0], avals[1]
    strides = tuple(params["strides"])
    extents = tuple((u - 1) * s + 1 if u else 0 for u, s in zip(update.shape, strides,
                                                                strict=True))
    offsets = _clamped_offsets(em, args[2:], avals[2:], x.shape, extents)
    name = em.fresh()
    em.emit(f"{name} = tensor.insert_slice {args[1]} into {args[0]}[{', '.join(offsets)}] "
            f"[{', '.join(map(str, update.shape))}] [{', '.join(map(str, strides))}] : "
            f"{ttype(update)} into {ttype(x)}")
    return name


def lower_slice(em, op, args, avals, params, result) -> str:
    name = em.fresh()
    join = lambda v: ", ".join(map(str, v))  # noqa: E731
    # An empty slice may start at the end; MLIR wants every offset inside its dimension.
    starts = [s if n else 0 for s, n in zip(params["start_indices"], result.shape, strict=True)]
    em.emit(f"{name} = tensor.extract_slice {args[0]}[{join(starts)}] "
            f"[{join(result.shape)}] [{join(params['strides'])}] : {ttype(avals[0])} to "
            f"{ttype(result)}")
    return name


def lower_rev(em, op, args, avals, params, result) -> str:
    """Reads mirrored coordinates with tensor.extract (a reversing index map such as
    `(d0) -> (5 - d0)` breaks IREE's tiling)."""
    dims = set(params["dimensions"])

    def body(_, __):
        coords = []
        for d, n in enumerate(result.shape):
            i = em.fresh("r")
            em.emit(f"  {i} = linalg.index {d} : index")
            if d in dims:
                last, mirrored = em.fresh("r"), em.fresh("r")
                em.emit(f"  {last} = arith.constant {n - 1} : index")
                em.emit(f"  {mirrored} = arith.subi {last}, {i} : index")
                i = mirrored
            coords.append(i)
        out = em.fresh("r")
        em.emit(f"  {out} = tensor.extract {args[0]}[{', '.join(coords)}] : {ttype(avals[0])}")
        return out

    return em.generic([], em.empty(result), result, identity_map(result.ndim),
                      iterators(result.ndim), body)


def lower_take(em, op, args, avals, params, result) -> str:
    """A gather as a linalg.generic over the result whose body extracts from the operand;
    indices are normalized (negative from the end) and clamped, as JAX's indexing does."""
    x, idx = avals
    axis, k = params["axis"], idx.ndim
    idx_map = affine_map(result.ndim, [f"d{axis + j}" for j in range(k)])

    def body(bargs, _):
        i, n, zero, neg, wrapped, top, low, clamped = (em.fresh("g") for _ in range(8))
        cast = "index_castui" if kind(idx.dtype) == "u" else "index_cast"
        em.emit(f"  {i} = arith.{cast} {bargs[0]} : {etype(idx)} to index")
        em.emit(f"  {n} = arith.constant {x.shape[axis]} : index")
        em.emit(f"  {zero} = arith.constant 0 : index")
        em.emit(f"  {neg} = arith.cmpi slt, {i}, {zero} : index")
        em.emit(f"  {wrapped} = arith.addi {i}, {n} : index")
        em.emit(f"  {low} = arith.select {neg}, {wrapped}, {i} : index")
        em.emit(f"  {top} = arith.constant {x.shape[axis] - 1} : index")
        em.emit(f"  {clamped} = arith.maxsi {low}, {zero} : index")
        final = em.fresh("g")
        em.emit(f"  {final} = arith.minsi {clamped}, {top} : index")
        coords = []
        for d in range(x.ndim):
            if d == axis:
                coords.append(final)
                continue
            c = em.fresh("g")
            em.emit(f"  {c} = linalg.index {d if d < axis else d + k - 1} : index")
            coords.append(c)
        out = em.fresh("g")
        em.emit(f"  {out} = tensor.extract {args[0]}[{', '.join(coords)}] : {ttype(x)}")
        return out

    return em.generic([(args[1], idx, idx_map)], em.empty(result), result,
                      identity_map(result.ndim), iterators(result.ndim), body)


_SCATTER_COMBINE = {"add": ops.ADD, "mul": ops.MUL, "min": ops.MIN, "max": ops.MAX}


def lower_scatter(em, op, args, avals, params, result) -> str:
    """Each output element folds the updates aimed at it, in order (O(N*K): meant for the
    small updates of `.at[]`); positions out of range match nothing, so they are dropped.
    Two reductions (was any update aimed here; their combined value) then one select: the
    operand is never a linalg `outs`, which IREE may write in place into the caller's
    buffer (seen with an argument as `outs`; iree-org/iree#16168)."""
    x, pos, upd = avals
    row = _SCATTER_COMBINE.get(params["combine"])
    inputs = [(args[1], pos, affine_map(2, ["d1"])), (args[2], upd, affine_map(2, ["d1"]))]
    flag = ShapedArray(x.shape, np.dtype(np.bool_))

    def matches(bargs) -> str:
        j, j_int, match = (em.fresh("s") for _ in range(3))
        em.emit(f"  {j} = linalg.index 0 : index")
        em.emit(f"  {j_int} = arith.index_cast {j} : index to {etype(pos)}")
        em.emit(f"  {match} = arith.cmpi eq, {bargs[0]}, {j_int} : {etype(pos)}")
        return match

    def found_body(bargs, out):
        hit = em.fresh("s")
        em.emit(f"  {hit} = arith.ori {out}, {matches(bargs)} : i1")
        return hit

    def value_body(bargs, out):
        match, picked = matches(bargs), em.fresh("s")
        new = bargs[1]
        if row is not None:
            template = row.scalar(kind(x.dtype), derived([x, x], x, {}))
            new = em.scalar_body(template, [out, bargs[1]], etype(x), etype(x))
        em.emit(f"  {picked} = arith.select {match}, {new}, {out} : {etype(x)}")
        return picked

    out_map, its = affine_map(2, ["d0"]), iterators(1, 1)
    found = em.generic(inputs, em.filled(flag, False), flag, out_map, its, found_body)
    first = {"mul": 1, "min": _extreme(x, high=True), "max": _extreme(x, high=False)}
    value = em.generic(inputs, em.filled(x, first.get(params["combine"], 0)), x, out_map, its,
                       value_body)

    def combine(bargs, _):
        new = bargs[2]
        if row is not None:
            template = row.scalar(kind(x.dtype), derived([x, x], x, {}))
            new = em.scalar_body(template, [bargs[1], bargs[2]], etype(x), etype(x))
        out = em.fresh("s")
        em.emit(f"  {out} = arith.select {bargs[0]}, {new}, {bargs[1]} : {etype(x)}")
        return out

    ident = identity_map(1)
    return em.generic([(found, flag, ident), (args[0], x, ident), (value, x, ident)],
                      em.empty(x), x, ident, iterators(1), combine)


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
        em.emit(f"{new} = tensor.insert_slice {name} into {acc}[{', '.join(offsets)}] "
                f"[{', '.join(map(str, aval.shape))}] [{', '.join(['1'] * result.ndim)}] : "
                f"{ttype(aval)} into {ttype(result)}")
        acc, offset = new, offset + aval.shape[d]
    return acc
