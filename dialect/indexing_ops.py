"""Rows of the op table for indexing: static strided slices, reversal and gathers."""

from __future__ import annotations

import numpy as np

from .opdef import Attr, OpDef, Trait, require as _require
from .types import ShapedArray, kind

_MOVE = frozenset({Trait.PURE, Trait.DATA_MOVEMENT})
_VIEW = _MOVE | {Trait.VIEW}


def _slice() -> OpDef:
    def infer(x: ShapedArray, *, start_indices, limit_indices, strides) -> ShapedArray:
        ok = (len(start_indices) == len(limit_indices) == len(strides) == x.ndim and all(
            0 <= s <= lim <= d and st > 0 for s, lim, st, d in zip(
                start_indices, limit_indices, strides, x.shape, strict=True)))
        _require(ok, "ember.slice", f"0 <= start <= limit <= dim and stride > 0 for {x.shape}",
                 (tuple(start_indices), tuple(limit_indices), tuple(strides)))
        shape = tuple(-(-(lim - s) // st) for s, lim, st in zip(start_indices, limit_indices,
                                                                 strides, strict=True))
        return ShapedArray(shape, x.dtype, x.weak_type)

    def reference(x, *, start_indices, limit_indices, strides):
        return x[tuple(slice(s, lim, st) for s, lim, st in zip(start_indices, limit_indices,
                                                               strides, strict=True))]

    return OpDef("ember.slice", ("operand",), infer, reference, _VIEW,
                 {"start_indices": Attr.I64_ARRAY, "limit_indices": Attr.I64_ARRAY,
                  "strides": Attr.I64_ARRAY},
                 doc="A static strided slice (XLA's slice): positive strides only.")


def _rev() -> OpDef:
    def infer(x: ShapedArray, *, dimensions) -> ShapedArray:
        _require(all(0 <= d < x.ndim for d in dimensions) and
                 len(set(dimensions)) == len(dimensions), "ember.rev",
                 f"distinct dimensions of a rank-{x.ndim} operand", tuple(dimensions))
        return x

    def reference(x, *, dimensions):
        return np.flip(x, axis=tuple(dimensions)) if len(dimensions) else x

    return OpDef("ember.rev", ("operand",), infer, reference, _MOVE,
                 {"dimensions": Attr.I64_ARRAY}, doc="Reverse the order along `dimensions`.")


def _take() -> OpDef:
    def infer(x: ShapedArray, indices: ShapedArray, *, axis) -> ShapedArray:
        _require(0 <= axis < x.ndim, "ember.take", f"an axis of a rank-{x.ndim} operand", axis)
        _require(kind(indices.dtype) in "iu", "ember.take", "integer indices",
                 indices.str_short())
        _require(x.shape[axis] > 0 or indices.size == 0, "ember.take",
                 "a non-empty axis to index", x.shape)
        return ShapedArray(x.shape[:axis] + indices.shape + x.shape[axis + 1:], x.dtype,
                           x.weak_type)

    def reference(x, indices, *, axis):
        n = x.shape[axis]
        idx = np.where(indices < 0, indices.astype(np.int64) + n, indices)
        return np.take(x, np.clip(idx, 0, max(n - 1, 0)), axis=axis)

    return OpDef("ember.take", ("operand", "indices"), infer, reference, _MOVE,
                 {"axis": Attr.I64},
                 doc="Gather along `axis`: negative indices count from the end, and out of "
                     "range ones are clamped, as JAX's indexing does.")


_COMBINE = {"set": lambda old, new: new, "add": np.add, "mul": np.multiply,
            "min": np.minimum, "max": np.maximum}


def _scatter() -> OpDef:
    def infer(x: ShapedArray, positions: ShapedArray, updates: ShapedArray, *,
              combine) -> ShapedArray:
        _require(x.ndim == positions.ndim == updates.ndim == 1 and
                 positions.shape == updates.shape and kind(positions.dtype) == "i" and
                 updates.dtype == x.dtype, "ember.scatter",
                 "a 1-D operand, and 1-D integer positions and updates of one length",
                 (x.str_short(), positions.str_short(), updates.str_short()))
        _require(combine in _COMBINE, "ember.scatter", f"combine in {sorted(_COMBINE)}",
                 combine)
        return x

    def reference(x, positions, updates, *, combine):
        out = np.array(x)
        for p, u in zip(positions.tolist(), updates, strict=True):
            if 0 <= p < out.size:
                out[p] = _COMBINE[combine](out[p], u)
        return out

    return OpDef("ember.scatter", ("operand", "positions", "updates"), infer, reference,
                 _MOVE, {"combine": Attr.STRING},
                 doc="out = operand; for each k in order: out[positions[k]] = combine(out[...], "
                     "updates[k]); positions outside the operand are dropped (JAX's scatter).")


def _concatenate() -> OpDef:
    def infer(*xs: ShapedArray, dimension) -> ShapedArray:
        _require(len(xs) >= 1 and all(x.ndim == xs[0].ndim for x in xs) and
                 0 <= dimension < xs[0].ndim, "ember.concatenate",
                 f"operands of one rank and a dimension below it (dimension={dimension})",
                 [x.str_short() for x in xs])
        others = {x.shape[:dimension] + x.shape[dimension + 1:] for x in xs}
        _require(len(others) == 1 and len({x.dtype for x in xs}) == 1, "ember.concatenate",
                 f"operands of one dtype whose shapes differ only in dimension {dimension}",
                 [x.str_short() for x in xs])
        size = sum(x.shape[dimension] for x in xs)
        shape = xs[0].shape[:dimension] + (size,) + xs[0].shape[dimension + 1:]
        return ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))

    def reference(*xs, dimension):
        return np.concatenate(xs, axis=dimension)

    return OpDef("ember.concatenate", ("*operands",), infer, reference, _MOVE,
                 {"dimension": Attr.I64}, doc="Join operands along `dimension`.")


CONCATENATE = _concatenate()
SCATTER = _scatter()
SLICE = _slice()
REV = _rev()
TAKE = _take()
