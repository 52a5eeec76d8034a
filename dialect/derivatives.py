"""Derivative rules of the op table: for each row, its vector-Jacobian product.

A rule is `rule(b, ct, xs, y, params) -> [cotangent of each operand, or None]`: `ct` is the
cotangent of the op's result `y`, `xs` its operands, `params` what the row was built with,
and `b` a builder from the layer that runs the transformation (`b.emit(row, *operands,
**params)`; `b.scalar(value, like)`, a constant of the shape and dtype of a value or aval;
`b.like(shape, dtype)`, an aval; `b.index(i)`, an int32 scalar; `b.aval(x)`). So rules are
ember ops too and can themselves be differentiated (grad of grad; jvp is the transpose of
a vjp).

Why VJP rules per row rather than JAX's JVP + transpose: Ember's grad is reverse mode over
traced ember IR, and every rule written as ember ops is again differentiable, which gives
forward mode (the vjp of a vjp, linear in its cotangent) without a second set of rules.

Every row is in exactly one of VJP (differentiable), ZERO (differentiable with a zero
derivative, or with results no derivative flows through: comparisons, integers, bits) and
NOT_YET (with the reason); tests/test_grad.py checks the table is covered.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import ops
from .opdef import OpDef
from .types import kind

Rule = Callable[..., list]


def _e(b, row: OpDef, *xs, **params):
    return b.emit(row, *xs, **params)


def _mul(b, x, y):
    return _e(b, ops.MUL, x, y)


def _div(b, x, y):
    return _e(b, ops.DIV, x, y)


def _neg(b, x):
    return _e(b, ops.NEG, x)


def _add(b, x, y):
    return _e(b, ops.ADD, x, y)


def _sub(b, x, y):
    return _e(b, ops.SUB, x, y)


def _c(b, value, like):
    return b.scalar(value, like)


def _unary(derivative: Callable) -> Rule:
    """ct * f'(x), with f'(x) written from x and y = f(x)."""
    def rule(b, ct, xs, y, params):
        return [_mul(b, ct, derivative(b, xs[0], y))]
    return rule


VJP: dict[OpDef, Rule] = {
    ops.ADD: lambda b, ct, xs, y, p: [ct, ct],
    ops.SUB: lambda b, ct, xs, y, p: [ct, _neg(b, ct)],
    ops.MUL: lambda b, ct, xs, y, p: [_mul(b, ct, xs[1]), _mul(b, ct, xs[0])],
    ops.DIV: lambda b, ct, xs, y, p: [_div(b, ct, xs[1]), _neg(b, _div(b, _mul(b, ct, y),
                                                                        xs[1]))],
    ops.NEG: lambda b, ct, xs, y, p: [_neg(b, ct)],
    ops.COPY: lambda b, ct, xs, y, p: [ct],
    ops.EXP: _unary(lambda b, x, y: y),
    ops.EXP2: _unary(lambda b, x, y: _mul(b, y, _c(b, np.log(2.0), y))),
    ops.EXPM1: _unary(lambda b, x, y: _add(b, y, _c(b, 1.0, y))),
    ops.LOG: lambda b, ct, xs, y, p: [_div(b, ct, xs[0])],
    ops.LOG1P: lambda b, ct, xs, y, p: [_div(b, ct, _add(b, xs[0], _c(b, 1.0, y)))],
    ops.LOG2: lambda b, ct, xs, y, p: [_div(b, ct, _mul(b, xs[0], _c(b, np.log(2.0), y)))],
    ops.SQRT: lambda b, ct, xs, y, p: [_div(b, _mul(b, ct, _c(b, 0.5, y)), y)],
    ops.RSQRT: lambda b, ct, xs, y, p: [_mul(b, ct, _div(b, _mul(b, y, _c(b, -0.5, y)),
                                                          xs[0]))],
    ops.CBRT: lambda b, ct, xs, y, p: [_div(b, ct, _mul(b, _c(b, 3.0, y), _mul(b, y, y)))],
    ops.TANH: _unary(lambda b, x, y: _sub(b, _c(b, 1.0, y), _mul(b, y, y))),
    ops.SIN: _unary(lambda b, x, y: _e(b, ops.COS, x)),
    ops.COS: _unary(lambda b, x, y: _neg(b, _e(b, ops.SIN, x))),
    ops.TAN: _unary(lambda b, x, y: _add(b, _c(b, 1.0, y), _mul(b, y, y))),
    ops.ASIN: _unary(lambda b, x, y: _e(b, ops.RSQRT, _sub(b, _c(b, 1.0, y), _mul(b, x, x)))),
    ops.ACOS: _unary(lambda b, x, y: _neg(b, _e(b, ops.RSQRT, _sub(b, _c(b, 1.0, y),
                                                                      _mul(b, x, x))))),
    ops.ATAN: lambda b, ct, xs, y, p: [_div(b, ct, _add(b, _c(b, 1.0, y),
                                                          _mul(b, xs[0], xs[0])))],
    ops.SINH: _unary(lambda b, x, y: _e(b, ops.COSH, x)),
    ops.COSH: _unary(lambda b, x, y: _e(b, ops.SINH, x)),
    ops.ASINH: _unary(lambda b, x, y: _e(b, ops.RSQRT, _add(b, _mul(b, x, x), _c(b, 1.0, y)))),
    ops.ACOSH: _unary(lambda b, x, y: _e(b, ops.RSQRT, _mul(b, _sub(b, x, _c(b, 1.0, y)),
                                                           _add(b, x, _c(b, 1.0, y))))),
    ops.ATANH: lambda b, ct, xs, y, p: [_div(b, ct, _sub(b, _c(b, 1.0, y),
                                                          _mul(b, xs[0], xs[0])))],
    ops.ERF: _unary(lambda b, x, y: _mul(b, _c(b, 2.0 / np.sqrt(np.pi), y),
                                         _e(b, ops.EXP, _neg(b, _mul(b, x, x))))),
    ops.ABS: _unary(lambda b, x, y: _e(b, ops.SIGN, x)),
}


def _pow(b, ct, xs, y, p):
    """d(x^a)/dx = a x^(a-1) (0 where a = 0, as JAX); d/da = log(x) y (0 where x = 0)."""
    x, a = xs
    one, zero = _c(b, 1.0, y), _c(b, 0.0, y)
    dx = _mul(b, a, _e(b, ops.POW, x, _sub(b, a, one)))
    dx = _e(b, ops.SELECT, _e(b, ops.COMPARE, a, zero, direction="EQ"), zero, dx)
    x_zero = _e(b, ops.COMPARE, x, zero, direction="EQ")
    safe = _e(b, ops.SELECT, x_zero, one, x)
    da = _e(b, ops.SELECT, x_zero, zero, _mul(b, _e(b, ops.LOG, safe), y))
    return [_mul(b, ct, dx), _mul(b, ct, da)]


def _extremum(direction: str) -> Rule:
    """max/min: the cotangent goes to the chosen operand, split evenly on ties (JAX)."""
    def rule(b, ct, xs, y, p):
        x1, x2 = xs
        half, one, zero = _c(b, 0.5, y), _c(b, 1.0, y), _c(b, 0.0, y)
        wins = _e(b, ops.COMPARE, x1, x2, direction=direction)
        ties = _e(b, ops.COMPARE, x1, x2, direction="EQ")
        w1 = _e(b, ops.SELECT, ties, half, _e(b, ops.SELECT, wins, one, zero))
        return [_mul(b, ct, w1), _mul(b, ct, _sub(b, one, w1))]
    return rule


def _select(b, ct, xs, y, p):
    zero = _c(b, 0.0, y)
    return [None, _e(b, ops.SELECT, xs[0], ct, zero), _e(b, ops.SELECT, xs[0], zero, ct)]


def _atan2(b, ct, xs, y, p):
    num, den = xs
    norm = _add(b, _mul(b, num, num), _mul(b, den, den))
    return [_div(b, _mul(b, ct, den), norm), _neg(b, _div(b, _mul(b, ct, num), norm))]


def _rem(b, ct, xs, y, p):
    quotient = _e(b, ops.TRUNC, _div(b, xs[0], xs[1]))
    return [ct, _neg(b, _mul(b, ct, quotient))]


def _copysign(b, ct, xs, y, p):
    """|x1| with x2's sign: the derivative in x1 is sign(x1) sign(y)."""
    return [_mul(b, ct, _mul(b, _e(b, ops.SIGN, xs[0]), _e(b, ops.SIGN, y))), None]


def _convert(b, ct, xs, y, p):
    source = b.aval(xs[0]).dtype
    if kind(source) != "f":
        return [None]
    return [ct if source == b.aval(ct).dtype else _e(b, ops.CONVERT, ct, dtype=source)]


# ----------------------------------------------------------------------------- structure

def _sum_to(b, ct, shape: tuple[int, ...], dims: tuple[int, ...]):
    """Undo broadcast_in_dim(x, shape=ct's, broadcast_dimensions=dims) for x of `shape`."""
    out_shape = b.aval(ct).shape
    summed = tuple(d for d in range(len(out_shape)) if d not in dims or
                   shape[dims.index(d)] != out_shape[d])
    if summed:
        ct = _e(b, ops.REDUCE_SUM, ct, axes=summed)
    return ct if b.aval(ct).shape == shape else _e(b, ops.RESHAPE, ct, shape=shape)


def _broadcast_in_dim(b, ct, xs, y, p):
    return [_sum_to(b, ct, b.aval(xs[0]).shape, tuple(p["broadcast_dimensions"]))]


def _reshape(b, ct, xs, y, p):
    return [_e(b, ops.RESHAPE, ct, shape=b.aval(xs[0]).shape)]


def _transpose(b, ct, xs, y, p):
    perm = tuple(p["permutation"])
    return [_e(b, ops.TRANSPOSE, ct, permutation=tuple(int(i) for i in np.argsort(perm)))]


def _rev(b, ct, xs, y, p):
    return [_e(b, ops.REV, ct, dimensions=tuple(p["dimensions"]))]


def _unreduce(b, ct, x_shape: tuple[int, ...], axes: tuple[int, ...]):
    """A reduction's result (over `axes`) broadcast back to the operand's shape."""
    kept = tuple(d for d in range(len(x_shape)) if d not in axes)
    return _e(b, ops.BROADCAST_IN_DIM, ct, shape=x_shape, broadcast_dimensions=kept)


def _reduce_sum(b, ct, xs, y, p):
    return [_unreduce(b, ct, b.aval(xs[0]).shape, tuple(p["axes"]))]


def _reduce_extremum(b, ct, xs, y, p):
    """To the elements equal to the result, shared evenly among ties (JAX)."""
    x = xs[0]
    shape, axes = b.aval(x).shape, tuple(p["axes"])
    hits = _e(b, ops.CONVERT, _e(b, ops.COMPARE, x, _unreduce(b, y, shape, axes),
                                 direction="EQ"), dtype=b.aval(x).dtype)
    count = _e(b, ops.REDUCE_SUM, hits, axes=axes)
    return [_mul(b, hits, _unreduce(b, _div(b, ct, count), shape, axes))]


def _dot_general(b, ct, xs, y, p):
    """Each operand's cotangent is a contraction of the result's with the other operand,
    transposed back to the operand's layout."""
    a, w = xs
    lc, rc, lb, rb = (tuple(p[k]) for k in ("lhs_contracting", "rhs_contracting",
                                            "lhs_batch", "rhs_batch"))
    a_nd, w_nd = b.aval(a).ndim, b.aval(w).ndim
    a_free = [d for d in range(a_nd) if d not in lc + lb]
    w_free = [d for d in range(w_nd) if d not in rc + rb]
    nb = len(lb)
    batch = tuple(range(nb))

    def side(other, other_free, other_batch, ct_free, own_batch, own_free, own_contract,
             other_contract):
        g = _e(b, ops.DOT_GENERAL, ct, other, lhs_contracting=tuple(ct_free),
               rhs_contracting=tuple(other_free), lhs_batch=batch, rhs_batch=other_batch)
        # g's dims: batch, then own free dims, then own contracting dims in the order of
        # the other operand's contracting dims sorted.
        order = list(own_batch) + list(own_free) + [
            own_contract[other_contract.index(d)] for d in sorted(other_contract)]
        perm = tuple(order.index(d) for d in range(len(order)))
        return g if perm == tuple(range(len(perm))) else _e(b, ops.TRANSPOSE, g,
                                                             permutation=perm)

    ct_w_free = [nb + len(a_free) + i for i in range(len(w_free))]
    ct_a_free = [nb + i for i in range(len(a_free))]
    da = side(w, w_free, rb, ct_w_free, lb, a_free, lc, rc)
    dw = side(a, a_free, lb, ct_a_free, rb, w_free, rc, lc)
    return [da, dw]


def _zeros(b, aval):
    return b.scalar(0.0, aval)


def _slice(b, ct, xs, y, p):
    """Into zeros of the operand's shape, at the slice's (strided) window."""
    x_aval = b.aval(xs[0])
    starts = [b.index(s) for s in p["start_indices"]]
    return [_e(b, ops.DYNAMIC_UPDATE_SLICE, _zeros(b, x_aval), ct, *starts,
               strides=tuple(p["strides"]))]


def _dynamic_slice(b, ct, xs, y, p):
    x_aval = b.aval(xs[0])
    ones = (1,) * x_aval.ndim
    return [_e(b, ops.DYNAMIC_UPDATE_SLICE, _zeros(b, x_aval), ct, *xs[1:], strides=ones),
            *([None] * (len(xs) - 1))]


def _dynamic_update_slice(b, ct, xs, y, p):
    x, update, *starts = xs
    strides = tuple(p["strides"])
    if any(s != 1 for s in strides):
        raise NotImplementedError("the derivative of a strided update (x.at[::k].set) is not "
                                  "supported yet")
    u_aval = b.aval(update)
    ct_x = _e(b, ops.DYNAMIC_UPDATE_SLICE, ct, _zeros(b, u_aval), *starts, strides=strides)
    ct_u = _e(b, ops.DYNAMIC_SLICE, ct, *starts, sizes=u_aval.shape)
    return [ct_x, ct_u, *([None] * len(starts))]


def _concatenate(b, ct, xs, y, p):
    dim = int(p["dimension"])
    out, offset = [], 0
    shape = b.aval(ct).shape
    for x in xs:
        n = b.aval(x).shape[dim]
        start = [0] * len(shape)
        limit = list(shape)
        start[dim], limit[dim] = offset, offset + n
        out.append(_e(b, ops.SLICE, ct, start_indices=tuple(start), limit_indices=tuple(limit),
                      strides=(1,) * len(shape)))
        offset += n
    return out


def _take(b, ct, xs, y, p):
    """Scatter-add into zeros at the flat positions the gather read (indices normalized and
    clamped as the gather did)."""
    x, idx = xs
    x_aval, i_aval = b.aval(x), b.aval(idx)
    axis, n = int(p["axis"]), b.aval(x).shape[int(p["axis"])]
    outer, inner = int(np.prod(x_aval.shape[:axis])), int(np.prod(x_aval.shape[axis + 1:]))
    grid = (outer, i_aval.size, inner)
    i32 = np.dtype(np.int32)
    idx = _e(b, ops.RESHAPE, idx, shape=(i_aval.size,))
    if i_aval.dtype != i32:
        idx = _e(b, ops.CONVERT, idx, dtype=i32)
    zero, size = b.scalar(0, b.like((i_aval.size,), i32)), b.scalar(n, b.like((i_aval.size,),
                                                                               i32))
    idx = _e(b, ops.SELECT, _e(b, ops.COMPARE, idx, zero, direction="LT"), _add(b, idx, size),
             idx)
    idx = _e(b, ops.MIN, _e(b, ops.MAX, idx, zero),
             b.scalar(max(n - 1, 0), b.like((i_aval.size,), i32)))
    a = _e(b, ops.IOTA, dimension=0, shape=grid, dtype=i32)
    c = _e(b, ops.IOTA, dimension=2, shape=grid, dtype=i32)
    i = _e(b, ops.BROADCAST_IN_DIM, idx, shape=grid, broadcast_dimensions=(1,))
    like = b.like(grid, i32)
    pos = _add(b, _mul(b, _add(b, _mul(b, a, b.scalar(n, like)), i), b.scalar(inner, like)), c)
    total = int(np.prod(grid))
    flat = _e(b, ops.SCATTER, _zeros(b, b.like((x_aval.size,), x_aval.dtype)),
              _e(b, ops.RESHAPE, pos, shape=(total,)),
              _e(b, ops.RESHAPE, ct, shape=(total,)), combine="add")
    return [_e(b, ops.RESHAPE, flat, shape=x_aval.shape), None]


def _cumulative(b, ct, xs, y, p):
    if p["combiner"] != "sum":
        raise NotImplementedError(f"the derivative of a cumulative {p['combiner']} is not "
                                  f"supported yet")
    axis = int(p["axis"])
    flipped = _e(b, ops.REV, ct, dimensions=(axis,))
    summed = _e(b, ops.CUMULATIVE, flipped, axis=axis, combiner="sum")
    return [_e(b, ops.REV, summed, dimensions=(axis,))]


VJP.update({
    ops.POW: _pow,
    ops.MAX: _extremum("GT"),
    ops.MIN: _extremum("LT"),
    ops.SELECT: _select,
    ops.ATAN2: _atan2,
    ops.REM: _rem,
    ops.COPYSIGN: _copysign,
    ops.CONVERT: _convert,
    ops.BROADCAST_IN_DIM: _broadcast_in_dim,
    ops.RESHAPE: _reshape,
    ops.TRANSPOSE: _transpose,
    ops.REV: _rev,
    ops.REDUCE_SUM: _reduce_sum,
    ops.REDUCE_MAX: _reduce_extremum,
    ops.REDUCE_MIN: _reduce_extremum,
    ops.DOT_GENERAL: _dot_general,
    ops.SLICE: _slice,
    ops.DYNAMIC_SLICE: _dynamic_slice,
    ops.DYNAMIC_UPDATE_SLICE: _dynamic_update_slice,
    ops.CONCATENATE: _concatenate,
    ops.TAKE: _take,
    ops.CUMULATIVE: _cumulative,
})

# A zero derivative, or results no derivative flows through (booleans, integers, bits).
ZERO: frozenset[OpDef] = frozenset({
    ops.SIGN, ops.FLOOR, ops.CEIL, ops.ROUND, ops.TRUNC, ops.COMPARE, ops.AND, ops.OR,
    ops.NOT, ops.XOR, ops.IS_FINITE, ops.SHIFT_LEFT, ops.SHIFT_RIGHT, ops.BITCAST_CONVERT,
    ops.CONSTANT, ops.IOTA, ops.STOP_GRADIENT, ops.DIMENSION_SIZE,
})

NOT_YET: dict[OpDef, str] = {
    ops.REDUCE_PROD: "the product's derivative needs the products of the other elements",
    ops.SORT: "needs the permutation the sort applied",
    ops.SCATTER: "needs the gather of the cotangent at the scattered positions",
    ops.IF: "control flow (lax.cond)",
    ops.CASE: "control flow (lax.switch)",
    ops.WHILE: "control flow (lax.while_loop)",
    ops.FOR: "control flow (lax.fori_loop, lax.scan)",
    ops.ELEMENTWISE_FOR: "made by a pass after differentiation, never traced",
    ops.FUSION: "made by a pass after differentiation, never traced",
    ops.AFTER: "made by a pass after differentiation, never traced",
    ops.YIELD: "a terminator",
    ops.DEBUG_PRINT: "a side effect",
    ops.REF_GET: "refs",
    ops.REF_SET: "refs",
}
