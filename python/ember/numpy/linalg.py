"""`ember.numpy.linalg`: norms, solves, inverses, determinants and the Cholesky factor, batched
over leading dimensions as in `jax.numpy.linalg`.

Where the code runs on Ember's CPU runtime (and ember_cpu_lapack is on), the solves,
determinants and the Cholesky factor are LAPACK's: rows of dialect/linalg_ops.py that call
the runtime's host module. Elsewhere (GPU code, ember-compile's files) the factorizations
are loops of ember ops (`lax.fori_loop`, one trip a column) whose trips
are elementwise work with masks, so nothing has a shape that depends on the trip: O(n^3)
work, O(n) trips. Blocked Gauss-Jordan elimination with partial pivoting gives `solve`,
`inv`, `det` and `slogdet` (a trip works on a panel of columns; each panel's transform
reaches the rest of the matrix as one matrix product); a right-looking Cholesky, blocked the
same way, gives `cholesky`; substitution gives `solve_triangular`. Each function is jitted: an
eager call is one module, a call under jit inlines.

This module comes after the rest of `ember.numpy` (it builds on `ember.lax`'s loops); `import
ember` makes it `ember.numpy.linalg`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax, numpy as enp
from ember._src import dtypes
from ember._src.dispatch import bind
from ember._src.jit import jit
from ember.dialect import ops

from . import decompositions
from .decompositions import *  # noqa: F403 - qr, eigh, svd and what they give
from .decompositions import SlogdetResult, _lapack, _real_matrix, svdvals

__all__ = ["cholesky", "cross", "det", "diagonal", "inv", "matmul", "matrix_norm",
           "matrix_power", "matrix_transpose", "norm", "outer", "slogdet", "solve",
           "solve_triangular", "tensordot", "trace", "vecdot", "vector_norm",
           *decompositions.__all__]


# Columns a panel of the blocked elimination takes at a time, and of the blocked Cholesky
# (whose trips are cheaper: a panel alone; its products, 32 deep, are data-tiled: 512 x 512
# in 8.7-9.8 ms, 11.7-13.2 ms with panels of 16).
_BLOCK = 16
_CHOLESKY_BLOCK = 32


def _index(n: int) -> Any:
    return enp.arange(n, dtype=np.int32)


def _column(m: Any, k: Any) -> Any:
    """m[..., :, k] for a traced k."""
    starts = [0] * (m.ndim - 1) + [k]
    return lax.dynamic_slice(m, starts, (*m.shape[:-1], 1))[..., 0]


def _row(m: Any, k: Any) -> Any:
    """m[..., k, :] for a traced k."""
    starts = [0] * (m.ndim - 2) + [k, 0]
    return lax.dynamic_slice(m, starts, (*m.shape[:-2], 1, m.shape[-1]))[..., 0, :]


def _eliminate(m: Any, n: int, singular_ok: bool) -> tuple[Any, Any, Any]:
    """Blocked Gauss-Jordan elimination with partial pivoting of the first n columns of m
    (..., n, n + k). Rows are not swapped: step k takes as pivot the unused row p with the
    largest |m[p, k]|, scales it to 1 there and clears column k in every other row. Returns
    the remaining columns in pivot order (the solution), the pivots (..., n or more, in no
    order; padding's are 1) and the sign of the permutation (...). With `singular_ok`, a
    zero pivot is left unscaled (det is then 0, not nan).

    The steps go a panel of `_BLOCK` columns at a time. A panel's steps run on the panel
    alone, beside the columns of the transform they make (each pivot row's identity column,
    put in as the row becomes a pivot: until then no step touches it) and three columns of
    bookkeeping per row (whether it is a pivot yet, its pivot, the step that took it), so a
    step is an argmax, a gather of the pivot row and one elementwise pass over the panel.
    The rest of m then takes the panel's transform in one matrix product."""
    block = min(n, _BLOCK)
    size = -(-n // block) * block  # n padded with identity rows and columns to whole panels
    rows = _index(size)
    if size != n:
        pad = [(0, 0)] * (m.ndim - 2) + [(0, size - n)]
        unit = (rows[:, None] == rows) & (rows >= n)  # 1 on the padding's diagonal
        m = enp.concatenate([enp.pad(m[..., :n], [*pad, (0, size - n)]) + unit.astype(m.dtype),
                             enp.pad(m[..., n:], [*pad, (0, 0)])], axis=-1)
    batch = m.shape[:-2]
    used, pivot_of = 2 * block, 2 * block + 1  # bookkeeping columns, then the step's
    cols = _index(2 * block + 3)

    def step(j, state):
        k, panel = state  # panel: (..., size, cols)
        column = _column(panel, j)
        taken = _column(panel, used) != 0
        p = enp.argmax(enp.where(taken, -1, enp.abs(column)), axis=-1).astype(np.int32)
        is_p = (rows == p[..., None])[..., :, None]  # (..., size, 1)
        row = enp.take_along_axis(panel, p[..., None, None], axis=-2)  # (..., 1, cols)
        pivot = _column(row, j)  # (..., 1)
        divisor = enp.where(pivot == 0, 1, pivot) if singular_ok else pivot
        row = (row + (cols == block + j)) / divisor[..., None]
        eliminated = enp.where(is_p, row, panel - enp.where(is_p, 0, column[..., None]) * row)
        book = enp.where(cols == used, 1, enp.where(cols == pivot_of, pivot[..., None],
                                                    (k + j).astype(m.dtype)))
        return k, enp.where(cols < used, eliminated, enp.where(is_p, book, panel))

    def panel_step(i, state):
        m, book = state  # book: (..., size, 3)
        k = i * block
        panel = lax.dynamic_slice(m, [0] * (m.ndim - 1) + [k], (*batch, size, block))
        _, panel = lax.fori_loop(0, block, step, (k, enp.concatenate(
            [panel, enp.zeros_like(panel), book], axis=-1)))
        book = panel[..., used:]
        # (..., size, block): row r took step k + j of this panel
        picked = (book[..., :1] != 0) & (book[..., 2:].astype(np.int32) == k + _index(block))
        chosen = enp.sum(enp.where(picked, rows[:, None], 0), axis=-2)  # (..., block)
        pivot_rows = enp.take_along_axis(m, chosen[..., :, None], axis=-2)
        m = m + enp.matmul(panel[..., block:used] - picked.astype(m.dtype), pivot_rows)
        return m, book

    m, book = lax.fori_loop(0, size // block, panel_step,
                            (m, enp.zeros((*batch, size, 3), m.dtype)))
    # The step that took each row is a permutation; its inverse orders the solution's rows
    # (a scatter: IREE 3.13 fails to compile a reduction that feeds a gather).
    at = book[..., 2].astype(np.int32).reshape(-1, size)
    at = at + size * _index(at.shape[0])[:, None]
    order = enp.zeros(at.size, np.int32).at[at.reshape(-1)].set(
        enp.broadcast_to(rows, at.shape).reshape(-1)).reshape(*batch, size)
    # the permutation's sign: the parity of its inversions (pairs i < j, order[i] > order[j])
    inversions = enp.sum((order[..., :, None] > order[..., None, :]) & (rows[:, None] < rows),
                         axis=(-1, -2))
    sign = enp.where(inversions % 2 == 0, 1, -1).astype(m.dtype)
    # whole rows, then the solution's columns (IREE 3.13 fails to compile a gather from a
    # column slice)
    solution = enp.take_along_axis(m, order[..., :n, None], axis=-2)[..., size:]
    return solution, book[..., 1], sign


def _system(name: str, a: Any, b: Any) -> tuple[Any, Any, bool]:
    """a (..., n, n) and b (n,) or (..., n, k) broadcast to one batch, b as (..., n, k), and
    whether b was a vector."""
    b = enp.asarray(b).astype(a.dtype)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(f"{name} requires b of shape ({n},) or (..., {n}, k) for a of shape "
                         f"{tuple(a.shape)}, got {tuple(enp.shape(b))}")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (enp.broadcast_to(a, (*batch, n, n)), enp.broadcast_to(b, (*batch, n, b.shape[-1])),
            vector)


@jit
@enp._base._eager_jit()
def solve(a: Any, b: Any) -> Any:
    """x with a @ x = b: b of shape (n,) or (..., n, k), as in NumPy 2 and JAX."""
    a, b, vector = _system("jnp.linalg.solve", _real_matrix("solve", a, square=True), b)
    if _lapack(a, b):
        x = bind(ops.SOLVE, a, b)
    else:
        x, _, _ = _eliminate(enp.concatenate([a, b], axis=-1), a.shape[-1], singular_ok=False)
    return x[..., 0] if vector else x


@jit
@enp._base._eager_jit()
def inv(a: Any) -> Any:
    a = _real_matrix("inv", a, square=True)
    n = a.shape[-1]
    return solve(a, enp.broadcast_to(enp.eye(n, dtype=a.dtype), a.shape))


@jit
@enp._base._eager_jit()
def slogdet(a: Any) -> tuple[Any, Any]:
    """(sign, log|det|), as jnp.linalg.slogdet; sign 0 and log -inf for a singular a."""
    a = _real_matrix("slogdet", a, square=True)
    if _lapack(a):
        both = bind(ops.SLOGDET, a)
        return SlogdetResult(both[..., 0], both[..., 1])
    _, pivots, sign = _eliminate(a, a.shape[-1], singular_ok=True)
    sign = sign * enp.prod(enp.sign(pivots), axis=-1)
    return SlogdetResult(sign, enp.sum(enp.log(enp.abs(pivots)), axis=-1))


@jit
@enp._base._eager_jit()
def det(a: Any) -> Any:
    a = _real_matrix("det", a, square=True)
    if _lapack(a):
        return bind(ops.SLOGDET, a)[..., 2]
    _, pivots, sign = _eliminate(a, a.shape[-1], singular_ok=True)
    return sign * enp.prod(pivots, axis=-1)


def cholesky(a: Any, *, upper: bool = False) -> Any:
    """The lower factor L of a = L L^T (a symmetrized first, as JAX does; with `upper`, its
    transpose U of a = U^T U); nan where a is not positive definite."""
    lower = _cholesky(a)
    return enp.swapaxes(lower, -1, -2) if upper else lower


@jit
@enp._base._eager_jit()
def _cholesky(a: Any) -> Any:
    """Right-looking blocked Cholesky: a panel of `_CHOLESKY_BLOCK` columns of what is left
    of a is factored a column a trip (each a rank-one update of the panel), then the panel's
    outer product leaves what the next panels factor, in one matrix product."""
    a = _real_matrix("cholesky", a, square=True)
    a = (a + enp.swapaxes(a, -1, -2)) / 2
    if _lapack(a):
        return bind(ops.CHOLESKY, a)
    n = a.shape[-1]
    block = min(n, _CHOLESKY_BLOCK)
    size = -(-n // block) * block  # n padded with an identity block to whole panels
    rows, cols = _index(size), _index(block)
    if size != n:
        pad = [(0, 0)] * (a.ndim - 2) + [(0, size - n)] * 2
        a = enp.pad(a, pad) + ((rows[:, None] == rows) & (rows >= n)).astype(a.dtype)
    batch = a.shape[:-2]

    def step(j, state):
        k, panel = state  # columns k.. k + block of what is left of a: (..., size, block)
        v = _column(panel, j)
        d = enp.sqrt(lax.dynamic_slice(v, [0] * len(batch) + [k + j], (*batch, 1)))
        column = enp.where(rows > k + j, v / d, enp.where(rows == k + j, d, 0))
        head = lax.dynamic_slice(column, [0] * len(batch) + [k], (*batch, block))
        rest = panel - column[..., :, None] * head[..., None, :]
        return k, enp.where(cols > j, rest, enp.where(cols == j, column[..., :, None], panel))

    def panel_step(i, state):
        left, factor = state
        k = i * block
        starts = [0] * (len(batch) + 1) + [k]
        _, panel = lax.fori_loop(0, block, step, (k, lax.dynamic_slice(
            left, starts, (*batch, size, block))))
        left = left - enp.matmul(panel, enp.swapaxes(panel, -1, -2))
        return left, lax.dynamic_update_slice(factor, panel, starts)

    _, factor = lax.fori_loop(0, size // block, panel_step, (a, enp.zeros_like(a)))
    return factor[..., :n, :n]


@enp._base._eager_jit("trans", "lower", "unit_diagonal")
def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """x with op(a) @ x = b for a triangular a, as jax.scipy.linalg.solve_triangular (trans
    0/'N', 1/'T', 2/'C'); only a's triangle is read. b of shape (n,) or (..., n, k)."""
    trans = {"N": 0, "T": 1, "C": 2}.get(trans, trans) if isinstance(trans, str) else trans
    if trans not in (0, 1, 2):
        raise ValueError(f"solve_triangular requires trans in 0, 1, 2, 'N', 'T', 'C', got "
                         f"{trans!r}")
    return _solve_triangular(a, b, trans != 0, bool(lower), bool(unit_diagonal))


@jit(static_argnums=(2, 3, 4))
def _solve_triangular(a: Any, b: Any, transpose: bool, lower: bool, unit: bool) -> Any:
    a = _real_matrix("solve_triangular", a, square=True)
    n = a.shape[-1]
    if transpose:
        a, lower = enp.swapaxes(a, -1, -2), not lower
    keep = enp.tril(enp.ones((n, n), bool)) if lower else enp.triu(enp.ones((n, n), bool))
    a, b, vector = _system("solve_triangular", enp.where(keep, a, 0), b)
    if _lapack(a, b):
        x = _lapack_triangular(a, b, lower, unit)
        return x[..., 0] if vector else x
    rows = _index(n)

    def step(i, x):
        k = i if lower else n - 1 - i  # forward or back substitution
        row = _row(a, k)  # (..., n): the unknowns not yet found are zero in x
        rhs = _row(b, k) - enp.sum(row[..., :, None] * x, axis=-2)
        if not unit:
            rhs = rhs / enp.sum(enp.where(rows == k, row, 0), axis=-1)[..., None]
        return enp.where((rows == k)[:, None], rhs[..., None, :], x)

    x = lax.fori_loop(0, n, step, enp.zeros_like(b))
    return x[..., 0] if vector else x


def _lapack_triangular(a: Any, b: Any, lower: bool, unit: bool) -> Any:
    """The row (lower, non-unit) on a (already masked to its triangle): a unit diagonal is
    written in, an upper a is reversed (rows and columns) to a lower one, b's rows with it."""
    if unit:
        a = enp.where(enp.eye(a.shape[-1], dtype=bool), enp.ones((), a.dtype), a)
    if lower:
        return bind(ops.TRIANGULAR_SOLVE, a, b)
    x = bind(ops.TRIANGULAR_SOLVE, enp.flip(a, axis=(-2, -1)), enp.flip(b, axis=-2))
    return enp.flip(x, axis=-2)


def matrix_power(a: Any, n: int) -> Any:
    """a multiplied by itself n times (n an int; negative: of the inverse), by squaring."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"jnp.linalg.matrix_power requires an integer power n, got {n!r}")
    a = enp.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"jnp.linalg.matrix_power requires square matrices (..., n, n), "
                         f"got shape {tuple(a.shape)}")
    if n < 0:
        a, n = inv(a), -n
    result = None
    while True:
        if n & 1:
            result = a if result is None else enp.matmul(result, a)
        n >>= 1
        if not n:
            break
        a = enp.matmul(a, a)
    if result is None:
        return enp.broadcast_to(enp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return result


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector norms (ord None, 2, 1, inf, -inf, 0, any p) and matrix norms (None, 'fro', 1,
    -1, inf, -inf, and from the singular values 2, -2, 'nuc') over `axis`, as
    jnp.linalg.norm."""
    x = enp.asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(dtypes.default_float())
    a = enp.abs(x)  # real: the magnitudes of complex entries
    if axis is None:
        if ord is None:
            out = enp.sqrt(enp.sum(a * a))
            return enp.reshape(out, (1,) * x.ndim) if keepdims else out
        axis = tuple(range(x.ndim)) if x.ndim <= 2 else None
        if axis is None:
            raise ValueError(f"jnp.linalg.norm requires axis for ord={ord!r} on an array of "
                             f"{x.ndim} dimensions")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(ax % x.ndim for ax in axes)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return enp.sqrt(enp.sum(a * a, axis=axes, keepdims=keepdims))
        if ord == np.inf:
            return enp.max(a, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return enp.min(a, axis=axes, keepdims=keepdims)
        if ord == 0:
            return enp.sum(x != 0, axis=axes, keepdims=keepdims).astype(a.dtype)
        if ord == 1:
            return enp.sum(a, axis=axes, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"jnp.linalg.norm: ord {ord!r} is a matrix norm; a vector norm "
                             f"(axis={axis!r}) takes a number")
        p = float(ord)
        return enp.sum(a ** p, axis=axes, keepdims=keepdims) ** (1 / p)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"jnp.linalg.norm requires one axis or two distinct axes, got "
                         f"{axis!r}")
    rows, cols = axes
    if ord is None or ord == "fro":
        return enp.sqrt(enp.sum(a * a, axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        sum_over, then = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = enp.sum(a, axis=sum_over, keepdims=True)
        pick = enp.max if ord in (1, np.inf) else enp.min
        out = pick(sums, axis=then, keepdims=True)
        return out if keepdims else enp.squeeze(out, axis=axes)
    if ord in (2, -2, "nuc"):
        s = svdvals(enp.moveaxis(x, axes, (-2, -1)))
        out = {2: enp.max, -2: enp.min, "nuc": enp.sum}[ord](s, axis=-1)
        return enp.expand_dims(out, axes) if keepdims else out
    raise ValueError(f"jnp.linalg.norm requires a matrix ord in None, 'fro', 'nuc', 1, -1, 2, "
                     f"-2, inf, -inf, got {ord!r}")


# ----------------------------------------------------------------------------- array API
# The standard's linalg extension: ember.numpy's functions over the last axes.

matmul, matrix_transpose, outer, tensordot = (enp.matmul, enp.matrix_transpose, enp.outer,
                                              enp.tensordot)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    return enp.cross(x1, x2, axis=axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    return enp.diagonal(x, offset, axis1=-2, axis2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    return enp.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    return enp.vecdot(x1, x2, axis=axis)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> Any:  # noqa: A002
    """The vector norm over `axis` (all axes by default, several axes flattened into one)."""
    x = enp.asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis))
    axes = tuple(a % max(x.ndim, 1) for a in axes)
    kept = [d for d in range(x.ndim) if d not in axes]
    flat = enp.reshape(enp.transpose(x, (*kept, *axes)),
                       (*(x.shape[d] for d in kept), -1))
    out = norm(flat, ord, axis=-1)
    return enp.expand_dims(out, axes) if keepdims else out
