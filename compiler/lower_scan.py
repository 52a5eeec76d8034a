"""Lowerings of ember.cumulative and ember.sort to IREE's iree_linalg_ext.scan / .sort."""

from __future__ import annotations

from ember.dialect.scan_ops import COMBINERS
from ember.dialect.types import ShapedArray, kind

from .emitter import Emitter, etype, results_lhs, ttype


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
    combined = em.scalar_body(op.scalar(kind(x.dtype), params), [a, b], etype(x), etype(x))
    em.emit(f"  iree_linalg_ext.yield {combined} : {etype(x)}")
    em.emit(f"}} -> {ttype(result)}, {ttype(acc_aval)}")
    return f"{name}#0"


_LESS = {"f": "olt", "i": "slt", "u": "ult", "b": "ult"}


def _compare(em: Emitter, predicate: str, a: str, b: str, aval: ShapedArray) -> str:
    name = em.fresh("p")
    op = "cmpf" if kind(aval.dtype) == "f" else "cmpi"
    em.emit(f"  {name} = arith.{op} {predicate}, {a}, {b} : {etype(aval)}")
    return name


def _or(em: Emitter, a: str, b: str, op: str = "ori") -> str:
    name = em.fresh("p")
    em.emit(f"  {name} = arith.{op} {a}, {b} : i1")
    return name


def lower_sort(em, op, args, avals, params, result) -> str:
    """Keys and payload are sorted together (one out when they are the same value: the op
    may not name one tensor twice). Function arguments may be outs: IREE clones them."""
    keys, payload = avals
    k = kind(keys.dtype)
    same = args[0] == args[1]
    outs = args[:1] if same else args
    types = [keys] if same else [keys, payload]
    name = em.fresh()
    x, y, px, py = (em.fresh(s) for s in ("x", "y", "px", "py"))
    lhs, results = results_lhs(name, len(outs))
    em.emit(f"{lhs} = iree_linalg_ext.sort dimension({params['dimension']}) "
            f"outs({', '.join(outs)} : {', '.join(ttype(t) for t in types)}) {{")
    block = f"{x}: {etype(keys)}, {y}: {etype(keys)}"
    if not same:
        block += f", {px}: {etype(payload)}, {py}: {etype(payload)}"
    em.emit(f"^bb0({block}):")
    less = _compare(em, _LESS[k], x, y, keys)
    if k == "f":  # NaN sorts last
        nan_last = _or(em, _compare(em, "ord", x, x, keys), _compare(em, "uno", y, y, keys),
                       "andi")
        less = _or(em, less, nan_last)
    if not same:  # ties (NaNs tie with each other) ordered by payload: a stable argsort
        tied = _compare(em, "oeq" if k == "f" else "eq", x, y, keys)
        if k == "f":
            tied = _or(em, tied, _or(em, _compare(em, "uno", x, x, keys),
                                     _compare(em, "uno", y, y, keys), "andi"))
        tie = _or(em, tied, _compare(em, _LESS[kind(payload.dtype)], px, py, payload), "andi")
        less = _or(em, less, tie)
    em.emit(f"  iree_linalg_ext.yield {less} : i1")
    em.emit(f"}} -> {', '.join(ttype(t) for t in types)}")
    return results[-1]
