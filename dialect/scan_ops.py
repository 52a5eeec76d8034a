"""Rows of the op table for products, running (cumulative) reductions and sorting.

The last two lower to IREE's own `iree_linalg_ext.scan` and `iree_linalg_ext.sort`, which
linalg has no equivalent of.
"""

from __future__ import annotations

import numpy as np

from .families import (
    MAX_BODY,
    MIN_BODY,
    PRODUCT_BODY,
    SUM_BODY,
    by_kind,
    highest,
    lowest,
    reduction,
)
from .opdef import Attr, OpDef, Trait, require as _require
from .types import ShapedArray, kind

REDUCE_PROD = reduction("reduce_prod", np.prod, PRODUCT_BODY, lambda d: 1, "Product over `axes`.")

# combiner name -> (scalar body, identity, NumPy accumulate)
COMBINERS = {
    "sum": (SUM_BODY, lambda d: 0, np.add.accumulate),
    "prod": (PRODUCT_BODY, lambda d: 1, np.multiply.accumulate),
    "max": (MAX_BODY, lowest, np.maximum.accumulate),
    "min": (MIN_BODY, highest, np.minimum.accumulate),
}


def _cumulative() -> OpDef:
    name = "ember.cumulative"

    def infer(x: ShapedArray, *, axis: int, combiner: str) -> ShapedArray:
        _require(0 <= axis < x.ndim, name, f"axis in [0, {x.ndim})", axis)
        _require(combiner in COMBINERS, name, f"combiner in {sorted(COMBINERS)}", combiner)
        # IREE's CPU codegen fails on an i1 scan: booleans are scanned as integers.
        _require(kind(x.dtype) in ("iufc" if combiner in ("sum", "prod") else "iuf"), name,
                 "an integer or float operand (complex for sums and products)", x.dtype)
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def reference(x, *, axis, combiner):
        with np.errstate(all="ignore"):
            return COMBINERS[combiner][2](x, axis=axis).astype(x.dtype)

    def scalar(k: str, attrs) -> str:
        return by_kind(COMBINERS[attrs["combiner"]][0])(k, attrs)

    return OpDef(name, ("operand",), infer, reference, frozenset({Trait.PURE}),
                 {"axis": Attr.I64, "combiner": Attr.STRING}, scalar=scalar,
                 doc="Inclusive running sum/prod/max/min along `axis` (cumsum, cummax...).")


def _sort() -> OpDef:
    name = "ember.sort"

    def infer(keys: ShapedArray, payload: ShapedArray, *, dimension: int) -> ShapedArray:
        _require(keys.shape == payload.shape, name, "keys and payload of one shape",
                 (keys.shape, payload.shape))
        _require(0 <= dimension < keys.ndim, name, f"dimension in [0, {keys.ndim})",
                 dimension)
        _require(kind(keys.dtype) != "c", name, "real keys (complex numbers have no order; "
                 "sort by their real part or abs)", keys.dtype)
        return ShapedArray(payload.shape, payload.dtype, payload.weak_type)

    def reference(keys, payload, *, dimension):
        order = np.argsort(keys, axis=dimension, kind="stable")
        return np.take_along_axis(payload, order, axis=dimension)

    return OpDef(name, ("keys", "payload"), infer, reference, frozenset({Trait.PURE}),
                 {"dimension": Attr.I64},
                 doc="`payload` permuted as a stable ascending sort of `keys` along "
                     "`dimension` (NaN last): sort is sort(x, x), argsort sort(x, iota).")


CUMULATIVE = _cumulative()
SORT = _sort()
__all__ = ["COMBINERS", "CUMULATIVE", "REDUCE_PROD", "SORT"]
