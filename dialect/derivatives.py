"""Derivative rules of the op table: for each row, its vector-Jacobian product.

A rule is `rule(b, ct, xs, y, params) -> [cotangent of each operand, or None]`: `ct` is the
cotangent of the op's result `y`, `xs` its operands, `params` what the row was built with,
and `b` a builder from the layer that runs the transformation (`b.emit(row, *operands,
**params)`; `b.scalar(value, like)`, a constant of the shape and dtype of a value or aval;
`b.like(shape, dtype)`, an aval; `b.index(i)`, an int32 scalar; `b.aval(x)`; for control
flow `b.vjp`, `b.branches`, `b.loop`, `b.dense`, `b.into_zeros`, `b.add_into`, and
`b.custom(key)`, a user's rule). So rules are ember ops too and can themselves be
differentiated (grad of grad; jvp transposes them).

Why VJP rules per row rather than JAX's JVP + transpose: Ember's grad is reverse mode over
traced ember IR, and every rule written as ember ops is again differentiable, which gives
forward mode (the vjp of a vjp, linear in its cotangent) without a second set of rules; only
while_loop, which has no vjp, has a forward rule of its own (in the transformation).

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
}


# Complex numbers follow JAX's convention: a cotangent of z = a + ib is df/da - i df/db, so
# holomorphic rules are the real ones (ct * f'(z)), and the real-valued parts transpose to
# complex(ct, 0) (real), complex(0, -ct) (imag).
def _abs(b, ct, xs, y, p):
    """sign(x) for reals; for a complex x, ct conj(x) / |x| (0 at 0)."""
    x = xs[0]
    if kind(b.aval(x).dtype) != "c":
        return [_mul(b, ct, _e(b, ops.SIGN, x))]
    return [_mul(b, _complex(b, ct, _c(b, 0.0, ct)), _e(b, ops.CONJ, _e(b, ops.SIGN, x)))]


def _complex(b, re, im):
    return _e(b, ops.COMPLEX, re, im)


VJP.update({
    ops.ABS: _abs,
    ops.REAL: lambda b, ct, xs, y, p: [_complex(b, ct, _c(b, 0.0, ct))],
    ops.IMAG: lambda b, ct, xs, y, p: [_complex(b, _c(b, 0.0, ct), _neg(b, ct))],
    ops.CONJ: lambda b, ct, xs, y, p: [_e(b, ops.CONJ, ct)],
    ops.COMPLEX: lambda b, ct, xs, y, p: [_e(b, ops.REAL, ct), _neg(b, _e(b, ops.IMAG, ct))],
})


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
    if kind(source) not in "fc":
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


def _eye_mask(b, aval, keep: str):
    """Where the (i, j) of each matrix of `aval` is on ("EQ") or below ("GT") the diagonal."""
    nd = aval.ndim
    i, j = (_e(b, ops.IOTA, dimension=d, shape=aval.shape, dtype=np.int32)
            for d in (nd - 2, nd - 1))
    return _e(b, ops.COMPARE, i, j, direction=keep)


def _matrix_t(b, x):
    nd = b.aval(x).ndim
    return _e(b, ops.TRANSPOSE, x, permutation=(*range(nd - 2), nd - 1, nd - 2))


def _outer(b, g, y):
    """g y^T, matrix by matrix over the leading dims."""
    nd = b.aval(g).ndim
    batch = tuple(range(nd - 2))
    return _e(b, ops.DOT_GENERAL, g, y, lhs_contracting=(nd - 1,), rhs_contracting=(nd - 1,),
              lhs_batch=batch, rhs_batch=batch)


def _solve(b, ct, xs, y, p):
    """x = a^-1 b: b's cotangent solves with a^T, a's is minus its outer product with x
    (matrix by matrix over the leading dims)."""
    g = _e(b, ops.SOLVE, _matrix_t(b, xs[0]), ct)
    return [_neg(b, _outer(b, g, y)), g]


def _slogdet(b, ct, xs, y, p):
    """(sign, log|det|, det): the sign is piecewise constant; d log|det| = tr(a^-1 da) and
    d det = det tr(a^-1 da), so a's cotangent is their weight times a^-T."""
    a = xs[0]
    aval = b.aval(a)
    nd = aval.ndim

    def part(x, i):
        return _e(b, ops.SLICE, x, start_indices=(*[0] * (nd - 2), i),
                  limit_indices=(*aval.shape[:-2], i + 1), strides=(1,) * (nd - 1))

    weight = _add(b, part(ct, 1), _mul(b, part(ct, 2), part(y, 2)))  # (..., 1)
    eye = _e(b, ops.CONVERT, _eye_mask(b, aval, "EQ"), dtype=aval.dtype, weak_type=False)
    inverse_t = _matrix_t(b, _e(b, ops.SOLVE, a, eye))
    weight = _e(b, ops.BROADCAST_IN_DIM, weight, shape=aval.shape,
                broadcast_dimensions=tuple(range(nd - 1)))
    return [_mul(b, weight, inverse_t)]


def _upper_t_solve(b, lower, x):
    """lower^-T x with the lower-triangular row: the reversal J of rows and columns turns the
    upper L^T into a lower J L^T J, and L^T y = x is (J L^T J)(J y) = J x."""
    nd = b.aval(lower).ndim
    rows, both = (nd - 2,), (nd - 2, nd - 1)
    flipped = _e(b, ops.REV, _matrix_t(b, lower), dimensions=both)
    y = _e(b, ops.TRIANGULAR_SOLVE, flipped, _e(b, ops.REV, x, dimensions=rows))
    return _e(b, ops.REV, y, dimensions=rows)


def _lower_part(b, x, diagonal: float = 1.0):
    """x below the diagonal, `diagonal` times x on it, zero above."""
    aval = b.aval(x)
    zero = _c(b, 0, aval)
    on = _e(b, ops.SELECT, _eye_mask(b, aval, "EQ"), _mul(b, x, _c(b, diagonal, aval)), zero)
    return _e(b, ops.SELECT, _eye_mask(b, aval, "GT"), x, on)


def _triangular_solve(b, ct, xs, y, p):
    """x = L^-1 b (L = tril(a)): b's cotangent is L^-T ct, a's minus its outer product with
    x, on and below the diagonal (the only part of a read)."""
    g = _upper_t_solve(b, xs[0], ct)
    return [_neg(b, _lower_part(b, _outer(b, g, y))), g]


def _cholesky(b, ct, xs, y, p):
    """a = L L^T: a's cotangent is L^-T Phi(L^T ct) L^-1, Phi the lower triangle with half
    its diagonal (the adjoint of L's tangent L Phi(L^-1 da L^-T); only a's lower triangle
    is read, so that is where it goes: symmetrizing first, as jnp.linalg.cholesky does,
    spreads it)."""
    nd = b.aval(y).ndim
    batch = tuple(range(nd - 2))
    product = _e(b, ops.DOT_GENERAL, y, ct, lhs_contracting=(nd - 2,),
                 rhs_contracting=(nd - 2,), lhs_batch=batch, rhs_batch=batch)  # L^T ct
    z = _upper_t_solve(b, y, _lower_part(b, product, 0.5))  # L^-T Phi
    full = _matrix_t(b, _upper_t_solve(b, y, _matrix_t(b, z)))  # (L^-T z^T)^T = z L^-1
    # only the lower triangle of a is read: its (i, j) below the diagonal stands for both
    return [_lower_part(b, _add(b, full, _matrix_t(b, full)), 0.5)]


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
    """Into zeros at the window, left unbuilt (`b.into_zeros`): a loop that slices one step
    of an array (scan's xs) adds its cotangent into that step in place."""
    return [b.into_zeros(b.aval(xs[0]), ct, xs[1:]), *([None] * (len(xs) - 1))]


def _dynamic_update_slice(b, ct, xs, y, p):
    """The operand's: the cotangent with the written elements zeroed. The update's: the
    cotangent at the written elements (a strided update's: every `strides` element of the
    window it spans, clamped as the update's is)."""
    x, update, *starts = xs
    strides = tuple(p["strides"])
    u_aval = b.aval(update)
    ct_x = _e(b, ops.DYNAMIC_UPDATE_SLICE, ct, _zeros(b, u_aval), *starts, strides=strides)
    extents = tuple((u - 1) * s + 1 if u else 0 for u, s in zip(u_aval.shape, strides,
                                                                strict=True))
    ct_u = _e(b, ops.DYNAMIC_SLICE, ct, *starts, sizes=extents)
    if extents != u_aval.shape:
        ct_u = _e(b, ops.SLICE, ct_u, start_indices=(0,) * len(extents), limit_indices=extents,
                  strides=strides)
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
    """sum: a reversed running sum. prod/max/min: the vjp of the same running reduction
    written as a parallel prefix scan of slices and combines, as JAX differentiates them
    (exact with zeros, no division; ties in max/min split the same way as JAX's)."""
    axis = int(p["axis"])
    if p["combiner"] == "sum":
        flipped = _e(b, ops.REV, ct, dimensions=(axis,))
        summed = _e(b, ops.CUMULATIVE, flipped, axis=axis, combiner="sum")
        return [_e(b, ops.REV, summed, dimensions=(axis,))]
    combine = {"prod": ops.MUL, "max": ops.MAX, "min": ops.MIN}[p["combiner"]]
    return b.vjp(lambda x: [_prefix_scan(b, x, axis, combine)], [xs[0]], [ct])


def _prefix_scan(b, x, axis: int, combine: OpDef):
    """Inclusive running `combine` along `axis` in O(log n) rounds: combine neighbouring
    pairs, scan the pairs (the odd positions' results), then the even positions from them."""
    n = b.aval(x).shape[axis]
    if n < 2:
        return x

    def take(v, start, stop, stride=1):
        shape = b.aval(v).shape
        lo, hi, st = [0] * len(shape), list(shape), [1] * len(shape)
        lo[axis], hi[axis], st[axis] = start, stop, stride
        return _e(b, ops.SLICE, v, start_indices=tuple(lo), limit_indices=tuple(hi),
                  strides=tuple(st))

    odd = _prefix_scan(b, _e(b, combine, take(x, 0, n - 1, 2), take(x, 1, n, 2)), axis,
                       combine)
    m = n // 2  # odd positions
    rest = take(x, 2, n, 2)
    even = _e(b, combine, take(odd, 0, m - 1) if n % 2 == 0 else odd, rest) if n > 2 else None
    even = take(x, 0, 1) if even is None else _e(b, ops.CONCATENATE, take(x, 0, 1), even,
                                                 dimension=axis)
    return _interleave(b, even, odd, axis)


def _interleave(b, even, odd, axis: int):
    """even[0], odd[0], even[1], ... along `axis` (even as long as odd or one longer)."""
    e_shape, o_len = b.aval(even).shape, b.aval(odd).shape[axis]
    e_len = e_shape[axis]
    if o_len < e_len:  # a stand-in last odd element, cut off again at the end
        shape = b.aval(even).shape
        lo = [0] * len(shape)
        lo[axis] = e_len - 1
        odd = _e(b, ops.CONCATENATE, odd, _e(b, ops.SLICE, even, start_indices=tuple(lo),
                                             limit_indices=shape, strides=(1,) * len(shape)),
                 dimension=axis)
    pair = (*e_shape[:axis + 1], 1, *e_shape[axis + 1:])
    both = _e(b, ops.CONCATENATE, _e(b, ops.RESHAPE, even, shape=pair),
              _e(b, ops.RESHAPE, odd, shape=pair), dimension=axis + 1)
    shape = list(e_shape)
    shape[axis] = 2 * e_len
    out = _e(b, ops.RESHAPE, both, shape=tuple(shape))
    if o_len == e_len:
        return out
    hi = list(shape)
    hi[axis] = e_len + o_len
    return _e(b, ops.SLICE, out, start_indices=(0,) * len(shape), limit_indices=tuple(hi),
              strides=(1,) * len(shape))


def _reduce_prod(b, ct, xs, y, p):
    """The product of the other elements, from running products from both ends (no
    division, so zeros are handled): the reduced axes move last and are flattened."""
    x = xs[0]
    aval = b.aval(x)
    axes = sorted(int(a) for a in p["axes"])
    keep = [d for d in range(aval.ndim) if d not in axes]
    perm = (*keep, *axes)
    lead = tuple(aval.shape[d] for d in keep)
    k = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
    if k == 0 or aval.size == 0:
        return [_zeros(b, aval)]
    moved = x if perm == tuple(range(aval.ndim)) else _e(b, ops.TRANSPOSE, x,
                                                         permutation=perm)
    flat = _e(b, ops.RESHAPE, moved, shape=(*lead, k))
    last = len(lead)
    one = _c(b, 1, b.like((*lead, 1), aval.dtype))

    def window(v, start, stop):
        return _e(b, ops.SLICE, v, start_indices=(0,) * last + (start,),
                  limit_indices=(*lead, stop), strides=(1,) * (last + 1))

    def running(v):
        return _e(b, ops.CUMULATIVE, v, axis=last, combiner="prod")

    before = running(flat)
    after = _e(b, ops.REV, running(_e(b, ops.REV, flat, dimensions=(last,))),
               dimensions=(last,))
    if k > 1:
        before = _e(b, ops.CONCATENATE, one, window(before, 0, k - 1), dimension=last)
        after = _e(b, ops.CONCATENATE, window(after, 1, k), one, dimension=last)
    else:
        before = after = one
    spread = _e(b, ops.BROADCAST_IN_DIM, ct, shape=(*lead, k),
                broadcast_dimensions=tuple(range(last)))
    g = _e(b, ops.RESHAPE, _mul(b, _mul(b, before, after), spread),
           shape=tuple(aval.shape[d] for d in perm))
    inverse = tuple(perm.index(d) for d in range(aval.ndim))
    return [g if perm == tuple(range(aval.ndim)) else _e(b, ops.TRANSPOSE, g,
                                                          permutation=inverse)]


def _sort(b, ct, xs, y, p):
    """Back through the permutation: the sort's order (a sort of indices by the keys) is,
    as keys, the inverse permutation, so sorting the cotangent by it puts each element back
    where it came from. The keys get none (a sort is piecewise constant in them)."""
    keys = xs[0]
    d = int(p["dimension"])
    shape = b.aval(keys).shape
    order = _e(b, ops.SORT, keys, _e(b, ops.IOTA, dimension=d, shape=shape, dtype=np.int32),
               dimension=d)
    return [None, _e(b, ops.SORT, order, ct, dimension=d)]


def _scatter(b, ct, xs, y, p):
    """`add`: the operand's cotangent passes through, each update's is the cotangent at its
    position. `set`: overwritten positions get none, and an update gets the cotangent only
    if it is the last write to its position (found by scattering the update numbers).
    `mul`: the operand's is scaled by the product of its updates; an update's by the
    operand and the product of the others (JAX supports only unique positions here).
    `min`/`max`: shared evenly by the operand and updates equal to the result (JAX's)."""
    x, positions, u = xs
    combine = p["combine"]
    n, m = b.aval(x).shape[0], b.aval(positions).shape[0]
    pos_aval = b.aval(positions)
    inside = _e(b, ops.AND,
                _e(b, ops.COMPARE, positions, _c(b, 0, pos_aval), direction="GE"),
                _e(b, ops.COMPARE, positions, _c(b, n, pos_aval), direction="LT"))
    zeros = _zeros(b, b.like((m,), b.aval(ct).dtype))
    if n == 0:
        return [ct, None, zeros]

    def at(v):  # v at each update's position
        return _e(b, ops.TAKE, v, positions, axis=0)

    def scattered(start, v, how):
        return _e(b, ops.SCATTER, start, positions, v, combine=how)

    gathered = at(ct)
    if combine == "add":
        return [ct, None, _e(b, ops.SELECT, inside, gathered, zeros)]
    if combine == "set":
        i32 = np.dtype(np.int32)
        number = _e(b, ops.IOTA, dimension=0, shape=(m,), dtype=i32)
        writer = scattered(_c(b, -1, b.like((n,), i32)), number, "set")
        last = _e(b, ops.AND, inside, _e(b, ops.COMPARE, at(writer), number,
                                         direction="EQ"))
        return [scattered(ct, zeros, "set"), None, _e(b, ops.SELECT, last, gathered, zeros)]
    x_aval, u_aval = b.aval(x), b.aval(u)
    if combine == "mul":
        ones_n, ones_m = _c(b, 1, x_aval), _c(b, 1, u_aval)
        zero_u = _e(b, ops.COMPARE, u, _c(b, 0, u_aval), direction="EQ")
        # per position: the product of its nonzero updates and the number of zero ones
        nonzero = at(scattered(ones_n, _e(b, ops.SELECT, zero_u, ones_m, u), "mul"))
        zero_count = at(scattered(_zeros(b, x_aval), _e(b, ops.SELECT, zero_u, ones_m,
                                                         _zeros(b, u_aval)), "add"))
        none, one = [_e(b, ops.COMPARE, zero_count, _c(b, k, u_aval), direction="EQ")
                     for k in (0, 1)]
        safe_u = _e(b, ops.SELECT, zero_u, ones_m, u)
        others = _e(b, ops.SELECT, zero_u, _e(b, ops.SELECT, one, nonzero, _zeros(b, u_aval)),
                    _e(b, ops.SELECT, none, _div(b, nonzero, safe_u), _zeros(b, u_aval)))
        g_u = _mul(b, _mul(b, gathered, at(x)), others)
        return [_mul(b, ct, scattered(ones_n, u, "mul")), None,
                _e(b, ops.SELECT, inside, g_u, zeros)]
    kept = _e(b, ops.COMPARE, x, y, direction="EQ")
    won = _e(b, ops.AND, inside, _e(b, ops.COMPARE, u, at(y), direction="EQ"))
    one_n = _c(b, 1, x_aval)
    count = scattered(_e(b, ops.SELECT, kept, one_n, _zeros(b, x_aval)),
                      _e(b, ops.SELECT, won, _c(b, 1, u_aval), _zeros(b, u_aval)), "add")
    share = _div(b, ct, _e(b, ops.MAX, count, one_n))
    return [_e(b, ops.SELECT, kept, share, _zeros(b, x_aval)), None,
            _e(b, ops.SELECT, won, at(share), zeros)]


# -- control flow. Rules of ops with regions take the list of the results' cotangents and
# their operands followed by the values their regions read from outside (`free`); params
# carry each region as a function (`bodies`: region arguments, then the free values) and
# `free`, their count.

def _split_free(xs, p):
    free = xs[len(xs) - p["free"]:]
    return xs[:len(xs) - p["free"]], free


def _branches(row):
    def rule(b, cts, xs, ys, p):
        """The same branch runs backward: each branch is the vjp of its forward branch."""
        (selector,), free = _split_free(xs, p)
        diff = [i for i, f in enumerate(free) if kind(b.aval(f).dtype) == "f"]

        def backward(body):
            def run():
                gs = b.vjp(body, free, cts)
                return [b.dense(gs[i], free[i]) for i in diff]
            return run

        grads = [None] * len(free)
        if diff:
            outs = b.branches(row, selector, [backward(body) for body in p["bodies"]])
            for i, g in zip(diff, outs, strict=True):
                grads[i] = g
        return [None, *grads]
    return rule


_DYNAMIC_LOOP = ("Reverse-mode differentiation does not work for lax.while_loop or "
                 "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using "
                 "fori_loop with static start/stop.")


def _while(b, cts, xs, ys, p):
    raise ValueError(_DYNAMIC_LOOP)


def _for_forward(b, xs, p):
    """The loop, also saving each step's carries (before the step) in stacks, and the last
    step's after it at row n: the backward pass reads them in reverse. Carries only written
    at a slice (a scan's stacked outputs) are not saved. Only loops with static bounds are
    differentiable in reverse."""
    (lower, upper, *carries), free = _split_free(xs, p)
    body = p["bodies"][0]
    if p["bounds"] is None:
        return b.loop(lower, upper, lambda i, *c: body(i, *c, *free), carries), None
    lo, hi = p["bounds"]
    n = max(hi - lo, 0)
    saved = [j for j in range(len(carries)) if j not in p["write_only"]]
    if n == 0 or not saved:
        return b.loop(lower, upper, lambda i, *c: body(i, *c, *free), carries), []
    m = len(carries)
    stacks = [_zeros(b, b.like((n + 1, *b.aval(carries[j]).shape), b.aval(carries[j]).dtype))
              for j in saved]

    def step(i, *state):
        cs, st = state[:m], state[m:]
        at = _sub(b, i, b.index(lo, b.aval(i).dtype))
        st = [_put_row(b, s, cs[j], at) for s, j in zip(st, saved, strict=True)]
        return [*body(i, *cs, *free), *st]

    out = b.loop(lower, upper, step, [*carries, *stacks])
    stacks = [_put_row(b, s, out[j], b.index(n)) for s, j in zip(out[m:], saved, strict=True)]
    return out[:m], dict(zip(saved, stacks, strict=True))


def _put_row(b, stack, value, at):
    """`stack` with `value` as its row `at`."""
    shape = b.aval(value).shape
    return _e(b, ops.DYNAMIC_UPDATE_SLICE, stack, _e(b, ops.RESHAPE, value, shape=(1, *shape)),
              at, *[b.index(0)] * len(shape), strides=(1,) * (len(shape) + 1))


def _row(b, stack, at, like):
    """Row `at` of `stack`, shaped as `like`."""
    shape = b.aval(like).shape
    return _e(b, ops.RESHAPE, _e(b, ops.DYNAMIC_SLICE, stack, at, *[b.index(0)] * len(shape),
                                 sizes=(1, *shape)), shape=shape)


def _for(b, cts, xs, ys, p):
    """A loop backward over the steps in reverse: each step is the vjp of the forward step
    on the carries saved for it, reading the saved carries after it where the step's rules
    want its results (a tanh's derivative its output), as JAX saves residuals, instead of
    computing them again (an RNN cell's products); the free values' cotangents add up in
    carries (a slice a step, as a scan reads its xs, in place)."""
    if p["bounds"] is None:
        raise ValueError(_DYNAMIC_LOOP)
    (lower, upper, *carries), free = _split_free(xs, p)
    body, stacks = p["bodies"][0], p["residuals"]
    lo, hi = p["bounds"]
    n, m = max(hi - lo, 0), len(carries)
    diff = [j for j in range(m) if kind(b.aval(carries[j]).dtype) == "f"]
    diff_free = [f for f in range(len(free)) if kind(b.aval(free[f]).dtype) == "f"]
    if n == 0:
        return [None, None, *[cts[j] if j in diff else None for j in range(m)],
                *[None] * len(free)]
    i_dtype = b.aval(lower).dtype

    def step(j, *state):
        ct_carries, acc = state[:len(diff)], state[len(diff):]
        i = _sub(b, b.index(hi - 1, i_dtype), j)
        at = _sub(b, i, b.index(lo, i_dtype))
        cs = [ys[k] if k not in stacks else _row(b, stacks[k], at, ys[k]) for k in range(m)]
        after = _add(b, at, b.index(1, i_dtype))
        outs = [None if k not in stacks else _row(b, stacks[k], after, ys[k])
                for k in range(m)]
        out_cts = [None] * m
        for k, ct in zip(diff, ct_carries, strict=True):
            out_cts[k] = ct
        gs = b.vjp(lambda *a: body(i, *a), [*cs, *free], out_cts, outs)
        return [*[b.dense(gs[k], cs[k]) for k in diff],
                *[b.add_into(a, gs[m + f]) for a, f in zip(acc, diff_free, strict=True)]]

    inits = [cts[k] for k in diff] + [_zeros(b, b.aval(free[f])) for f in diff_free]
    if not inits:
        return [None] * len(xs)
    out = b.loop(b.index(0, i_dtype), b.index(n, i_dtype), step, inits)
    grads = [None] * (2 + m + len(free))
    for k, g in zip(diff, out[:len(diff)], strict=True):
        grads[2 + k] = g
    for f, g in zip(diff_free, out[len(diff):], strict=True):
        grads[2 + m + f] = g
    return grads


def _call(b, cts, xs, ys, p):
    """The function's own rule (custom_vjp, custom_jvp, checkpoint), by key."""
    args, free = _split_free(xs, p)
    return b.custom(p["key"])(b, cts, list(args), list(free), p["bodies"][0])


# Rows whose forward pass under differentiation differs from the op: (b, operands + free,
# params) -> (results, residuals for the rule, as params["residuals"]).
FORWARD: dict[OpDef, Callable] = {ops.FOR: _for_forward}

VJP.update({
    ops.REDUCE_PROD: _reduce_prod,
    ops.SORT: _sort,
    ops.SCATTER: _scatter,
    ops.IF: _branches(ops.IF),
    ops.CALL: _call,
    ops.AFTER: lambda b, ct, xs, y, p: [ct, *[None] * (len(xs) - 1)],  # an ordering edge
    ops.CASE: _branches(ops.CASE),
    ops.WHILE: _while,
    ops.FOR: _for,
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
    ops.SOLVE: _solve,
    ops.SLOGDET: _slogdet,
    ops.TRIANGULAR_SOLVE: _triangular_solve,
    ops.CHOLESKY: _cholesky,
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
    ops.ELEMENTWISE_FOR: "made by a pass after differentiation, never traced",
    ops.EIGH: "bound only inside jnp.linalg.eigh's custom_jvp, whose rule (JAX's) is used",
    ops.SVD: "bound only inside jnp.linalg.svd's custom_jvp, whose rule is used",
    ops.QR: "bound only inside jnp.linalg.qr's custom_jvp, whose rule is used",
    ops.FUSION: "made by a pass after differentiation, never traced",
    ops.YIELD: "a terminator",
    ops.DEBUG_PRINT: "a side effect",
    ops.REF_GET: "refs",
    ops.REF_SET: "refs",
}
