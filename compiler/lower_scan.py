"""Lowering of ember.cumulative to IREE's iree_linalg_ext.scan."""

from __future__ import annotations

from ember.dialect import ir as eir
from ember.dialect.scan_ops import COMBINERS
from ember.dialect.types import ShapedArray, kind

from .emitter import etype, ttype


def lower_cumulative(em, op, args, avals, params, result) -> str:
    (x,) = avals
    axis, combiner = params["axis"], params["combiner"]
    init = COMBINERS[combiner][1](x.dtype)
    acc_aval = ShapedArray(tuple(d for i, d in enumerate(x.shape) if i != axis), x.dtype)
    out, acc = em.filled(result, init), em.filled(acc_aval, init)
    name, a, b = em.fresh(), em.fresh("a"), em.fresh("b")
    em.emit(f"{name}:2 = iree_linalg_ext.scan dimension({axis}) inclusive(true) "
            f"ins({args[0]} : {ttype(x)}) outs({out}, {acc} : {ttype(result)}, "
            f"{ttype(acc_aval)}) {{")
    em.emit(f"^bb0({a}: {etype(x)}, {b}: {etype(x)}):")
    template = eir.opdef(op).scalar(kind(x.dtype), params)
    combined = em.scalar_body(template, [a, b], etype(x), etype(x))
    em.emit(f"  iree_linalg_ext.yield {combined} : {etype(x)}")
    em.emit(f"}} -> {ttype(result)}, {ttype(acc_aval)}")
    return f"{name}#0"
