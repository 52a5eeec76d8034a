"""Lowerings of ember.cumulative and ember.sort to IREE's iree_linalg_ext.scan / .sort."""

from __future__ import annotations

from ember.dialect.scan_ops import COMBINERS
from ember.dialect.types import ShapedArray, kind

from .emitter import Emitter, etype, identity_map, iterators, ttype


def _copy(em: Emitter, value: str, aval: ShapedArray) -> str:
    """A fresh tensor holding `value`: the ext ops write their outs in place, and an out that
    is a function argument would let IREE write into the caller's buffer."""
    return em.generic([(value, aval, identity_map(aval.ndim))], em.empty(aval), aval,
                      identity_map(aval.ndim), iterators(aval.ndim), lambda b, _: b[0])


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
    keys, payload = avals
    k = kind(keys.dtype)
    outs = [_copy(em, args[0], keys), _copy(em, args[1], payload)]
    name = em.fresh()
    x, y, px, py = (em.fresh(s) for s in ("x", "y", "px", "py"))
    em.emit(f"{name}:2 = iree_linalg_ext.sort dimension({params['dimension']}) "
            f"outs({outs[0]}, {outs[1]} : {ttype(keys)}, {ttype(payload)}) {{")
    em.emit(f"^bb0({x}: {etype(keys)}, {y}: {etype(keys)}, {px}: {etype(payload)}, "
            f"{py}: {etype(payload)}):")
    less = _compare(em, _LESS[k], x, y, keys)
    same = _compare(em, "oeq" if k == "f" else "eq", x, y, keys)
    if k == "f":  # NaN sorts last, and NaNs tie with each other
        nan_last = _or(em, _compare(em, "ord", x, x, keys), _compare(em, "uno", y, y, keys),
                       "andi")
        less = _or(em, less, nan_last)
        both_nan = _or(em, _compare(em, "uno", x, x, keys), _compare(em, "uno", y, y, keys),
                       "andi")
        same = _or(em, same, both_nan)
    tie = _or(em, same, _compare(em, _LESS[kind(payload.dtype)], px, py, payload), "andi")
    em.emit(f"  iree_linalg_ext.yield {_or(em, less, tie)} : i1")
    em.emit(f"}} -> {ttype(keys)}, {ttype(payload)}")
    return f"{name}#1"
