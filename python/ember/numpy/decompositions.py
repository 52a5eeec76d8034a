"""The factorizations of `ember.numpy.linalg` that are iterations, not eliminations: `qr`
(Householder reflections), `eigh` (Jacobi rotations) and `svd` (one-sided Jacobi), and what
they give: `eigvalsh`, `svdvals`, `pinv`, `lstsq`, `matrix_rank` and the spectral norms.
On Ember's CPU runtime they are LAPACK's (see linalg.py), differentiable by the custom_jvp
rules here; elsewhere, the methods below.

Jacobi's methods run as a tournament (Brent and Luk's parallel ordering): the n indices
(padded to an even count) meet in n - 1 rounds of n / 2 disjoint pairs, so a round rotates
every pair at once with O(n^2) elementwise work and two gathers of the partner rows or
columns, and a sweep (every pair once) is O(n^3). Sweeps repeat while the off-diagonal part
is above the dtype's precision (at most 30). The rounds' pairings are constants, read by the
round's index. Batched over leading dimensions; float32/float64 (other dtypes are
converted; complex matrices are not supported yet).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ember import lax, numpy as enp
from ember._src import dtypes
from ember._src.core import current_trace
from ember._src.custom import custom_jvp
from ember._src.dispatch import bind
from ember._src.jit import jit
from ember.dialect import ops

__all__ = ["eigh", "eigvalsh", "lstsq", "matrix_rank", "pinv", "qr", "svd", "svdvals"]

_MAX_SWEEPS = 30


# The results' names, as jax.numpy.linalg (and the array API standard) give them.
class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


def _lapack(*arrays: Any) -> bool:
    """Whether the code being traced runs where LAPACK does (Ember's CPU runtime, with
    ember_cpu_lapack) and the arrays have sizes to hand it: then the rows of
    dialect/linalg_ops.py stand for the loops of ember ops."""
    trace = current_trace()
    return (trace is not None and trace.root.lapack
            and all(isinstance(d, int) for x in arrays for d in x.shape))


def _real_matrix(name: str, a: Any, square: bool = False) -> Any:
    """`a` as float32/float64 matrices (..., m, n) for jnp.linalg.`name` (integers and
    narrower floats in the default float); complex ones are refused, not cut to their real
    part."""
    a = enp.asarray(a)
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        raise ValueError(f"jnp.linalg.{name} requires {'square ' if square else ''}matrices "
                         f"(..., m, n) as its argument, got shape {tuple(a.shape)}")
    if a.dtype.kind == "c":
        raise NotImplementedError(f"jnp.linalg.{name} of complex matrices is not supported "
                                  f"yet (float32 and float64 are)")
    return a if a.dtype.kind == "f" and a.dtype.itemsize >= 4 else a.astype(
        dtypes.default_float())


def _tournament(m: int) -> tuple[np.ndarray, np.ndarray]:
    """For an even m, the circle method's m - 1 rounds: partner[r, i] is whom i meets in
    round r, first[r, i] whether i is the lower index of its pair."""
    players = list(range(m))
    partner = np.zeros((m - 1, m), np.int32)
    for r in range(m - 1):
        for k in range(m // 2):
            p, q = players[k], players[m - 1 - k]
            partner[r, p], partner[r, q] = q, p
        players = [players[0], players[-1], *players[1:-1]]
    first = np.arange(m)[None, :] < partner
    return partner, first


def _pad_even(a: Any) -> tuple[Any, int]:
    """a (..., r, n) with a zero column appended when n is odd (a player that never rotates:
    its pairs have no off-diagonal part)."""
    n = a.shape[-1]
    if n % 2 == 0:
        return a, n
    return enp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, 1)]), n + 1


def _rotation(c: Any, s: Any, first: Any) -> tuple[Any, Any]:
    """Per index i of a pair (p, q): new_i = cc_i x_i + ss_i x_partner, with c, s per pair
    given at both its indices: x_p' = c x_p - s x_q, x_q' = s x_p + c x_q."""
    return c, enp.where(first, -s, s)


def _combine(x: Any, partner: Any, cc: Any, ss: Any, axis: int) -> Any:
    """Columns (axis -1) or rows (axis -2) of x replaced by their rotations."""
    other = enp.take(x, partner, axis=axis)
    if axis == -1:
        return cc[..., None, :] * x + ss[..., None, :] * other
    return cc[..., :, None] * x + ss[..., :, None] * other


def _schedule(m: int, r: Any) -> tuple[Any, Any]:
    partner, first = _tournament(m)
    return (lax.dynamic_index_in_dim(enp.asarray(partner), r, keepdims=False),
            lax.dynamic_index_in_dim(enp.asarray(first), r, keepdims=False))


def _angles(app: Any, aqq: Any, apq: Any) -> tuple[Any, Any, Any]:
    """(c, s, t = s / c) of the rotation that zeroes apq of the symmetric 2x2 [[app, apq],
    [apq, aqq]] (Golub and Van Loan's sym.schur2); the identity where apq is 0."""
    zero = apq == 0
    tau = (aqq - app) / (2 * enp.where(zero, 1, apq))
    t = enp.where(zero, 0, enp.where(tau >= 0, 1, -1) / (enp.abs(tau)
                                                         + enp.sqrt(1 + tau * tau)))
    c = 1 / enp.sqrt(1 + t * t)
    return c, t * c, t


def _sweeps(step, off, state, tol):
    """Sweeps of `step(r, state)` over the rounds while `off(state)` is above `tol`."""
    def cond(carry):
        sweep, state = carry
        return (sweep < _MAX_SWEEPS) & enp.any(off(state) > tol)

    def body(carry):
        sweep, state = carry
        return sweep + 1, step(state)

    return lax.while_loop(cond, body, (enp.asarray(0, np.int32), state))[1]


@jit
def _eigh(a: Any) -> tuple[Any, Any]:
    a = (a + enp.swapaxes(a, -1, -2)) / 2  # the lower and upper triangles averaged, as JAX
    if _lapack(a):
        both = bind(ops.EIGH, a)
        return both[..., 0, :], both[..., 1:, :]
    n = a.shape[-1]
    a, m = _pad_even(a)
    if m != n:  # the padded row too
        a = enp.pad(a, [(0, 0)] * (a.ndim - 2) + [(0, 1), (0, 0)])
    rows = enp.arange(m)
    v = enp.broadcast_to(enp.eye(m, dtype=a.dtype), a.shape)
    eps = float(np.finfo(a.dtype).eps)

    def round_(r, state):
        a, v = state
        partner, first = _schedule(m, r)
        diag = enp.diagonal(a, axis1=-2, axis2=-1)
        app = diag
        aqq = enp.take(diag, partner, axis=-1)
        # Both indices of a pair (p < q) read a[q, p], so they compute the same rotation
        # bit for bit (rounding makes a[p, q] and a[q, p] differ: a near-tie of app and aqq
        # would turn the difference into two rotations, and V would not stay orthogonal).
        pairs = rows[:, None] == partner[None, :]  # a[partner[i], i], a[i, partner[i]]
        apq = enp.where(first, enp.sum(enp.where(pairs, a, 0), axis=-2),
                        enp.sum(enp.where(enp.swapaxes(pairs, 0, 1), a, 0), axis=-1))
        lo_d, hi_d = enp.where(first, app, aqq), enp.where(first, aqq, app)
        c, s, t = _angles(lo_d, hi_d, apq)
        cc, ss = _rotation(c, s, first)
        a = _combine(_combine(a, partner, cc, ss, -1), partner, cc, ss, -2)
        # Rutishauser's form: the pair's diagonal moves by t apq and its off-diagonal entry is
        # zero, exactly (rotated, both carry the rounding of every entry of their rows).
        d = diag + enp.where(first, -t, t) * apq
        a = enp.where(rows[:, None] == rows[None, :], d[..., None, :], enp.where(pairs, 0, a))
        return a, _combine(v, partner, cc, ss, -1)

    def off(state):
        a = state[0]
        off_diag = enp.where(rows[:, None] == rows[None, :], 0, a)
        return enp.sum(off_diag * off_diag, axis=(-2, -1)) / enp.maximum(
            enp.sum(a * a, axis=(-2, -1)), np.finfo(a.dtype).tiny)

    a, v = _sweeps(lambda state: lax.fori_loop(0, m - 1, round_, state), off, (a, v),
                   (eps * eps))
    w = enp.diagonal(a, axis1=-2, axis2=-1)[..., :n]
    v = v[..., :n, :n]
    order = enp.argsort(w, axis=-1)
    return (enp.take_along_axis(w, order, axis=-1),
            enp.take_along_axis(v, order[..., None, :], axis=-1))


@custom_jvp
def _eigh_differentiable(a: Any) -> tuple[Any, Any]:
    return _eigh(a)


@_eigh_differentiable.defjvp
def _eigh_jvp(primals: tuple, tangents: tuple) -> tuple:
    """JAX's rule: with V^T dA V = M, dw = diag(M) and dV = V (F * M), F[i, j] =
    1 / (w[j] - w[i]) off the diagonal (dA symmetrized as A is)."""
    (a,), (da,) = primals, tangents
    w, v = _eigh_differentiable(a)
    da = (da + enp.swapaxes(da, -1, -2)) / 2
    m = enp.matmul(enp.swapaxes(v, -1, -2), enp.matmul(da, v))
    eye = enp.eye(a.shape[-1], dtype=a.dtype)
    f = 1 / (eye + w[..., None, :] - w[..., :, None]) - eye
    return (w, v), (enp.diagonal(m, axis1=-2, axis2=-1), enp.matmul(v, f * m))


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> tuple[Any, Any]:
    """(eigenvalues ascending, eigenvectors as columns) of symmetric matrices. The matrix is
    symmetrized ((a + a^T) / 2, JAX's default), so UPLO is not read. Differentiable (JAX's
    rule), also in reverse mode."""
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"jnp.linalg.eigh requires UPLO 'L' or 'U', got {UPLO!r}")
    return EighResult(*_eigh_differentiable(_real_matrix("eigh", a, square=True)))


def eigvalsh(a: Any, UPLO: str | None = None) -> Any:
    return eigh(a, UPLO)[0]


@jit
def _householder(a: Any) -> tuple[Any, Any]:
    """(Q (..., m, m), R (..., m, n)) by Householder reflections as LAPACK's dlarfg makes
    them (so the signs are NumPy's): R[k, k] = -sign(a_kk) |x|, and no reflection where
    nothing is below the diagonal."""
    m, n = a.shape[-2], a.shape[-1]
    rows = enp.arange(m)
    q = enp.broadcast_to(enp.eye(m, dtype=a.dtype), (*a.shape[:-2], m, m))

    def step(k, state):
        q, r = state
        x = enp.where(rows >= k, lax.dynamic_index_in_dim(r, k, axis=-1, keepdims=False), 0)
        xk = enp.sum(enp.where(rows == k, x, 0), axis=-1, keepdims=True)
        norm = enp.sqrt(enp.sum(x * x, axis=-1, keepdims=True))
        alpha = -enp.where(xk < 0, -1, 1) * norm
        v = x - enp.where(rows == k, alpha, 0)
        vnorm = enp.sqrt(enp.sum(v * v, axis=-1, keepdims=True))
        below = enp.any((rows > k) & (x != 0), axis=-1, keepdims=True)
        v = enp.where(below, v / enp.where(vnorm == 0, 1, vnorm), 0)
        r = r - 2 * v[..., :, None] * enp.sum(v[..., :, None] * r, axis=-2, keepdims=True)
        q = q - 2 * enp.sum(q * v[..., None, :], axis=-1, keepdims=True) * v[..., None, :]
        return q, r

    q, r = lax.fori_loop(0, min(m, n), step, (q, a))
    upper = enp.arange(m)[:, None] <= enp.arange(n)[None, :]
    return q, enp.where(upper, r, 0)


@custom_jvp
def _qr_tall(a: Any) -> tuple[Any, Any]:
    """The reduced QR of a (..., m, n), m >= n, by LAPACK."""
    both = bind(ops.QR, a)
    m = a.shape[-2]
    return both[..., :m, :], both[..., m:, :]


@_qr_tall.defjvp
def _qr_tall_jvp(primals: tuple, tangents: tuple) -> tuple:
    """With C = Q^T da R^-1 and W its strictly lower part minus that part's transpose (skew):
    dQ = Q (W - C) + da R^-1, dR = (C - W) R."""
    (a,), (da,) = primals, tangents
    q, r = _qr_tall(a)
    n = a.shape[-1]
    # da R^-1 = (R^-T da^T)^T, R^T lower triangular
    da_rinv = enp.swapaxes(bind(ops.TRIANGULAR_SOLVE, enp.swapaxes(r, -1, -2),
                                enp.swapaxes(da, -1, -2)), -1, -2)
    c = enp.matmul(enp.swapaxes(q, -1, -2), da_rinv)
    below = enp.where(enp.tril(enp.ones((n, n), bool), -1), c, 0)
    w = below - enp.swapaxes(below, -1, -2)
    return (q, r), (enp.matmul(q, w - c) + da_rinv, enp.matmul(c - w, r))


@jit(static_argnums=1)
def _qr(a: Any, mode: str) -> Any:
    """LAPACK's where it runs and the QR is tall and reduced (or square), whose derivative
    is _qr_tall's rule; otherwise the Householder loops (differentiable as loops)."""
    m, n = a.shape[-2:]
    if _lapack(a) and m >= n and (mode != "complete" or m == n):
        return _qr_tall(a)
    q, r = _householder(a)
    k = min(m, n)
    if mode == "reduced":
        q, r = q[..., :k], r[..., :k, :]
    return q, r[..., :k, :] if mode == "r" else r


def qr(a: Any, mode: str = "reduced") -> Any:
    """a = Q R with orthonormal Q and upper-triangular R; mode 'reduced' (Q (m, k), R (k, n),
    k = min(m, n)), 'complete' (Q (m, m), R (m, n)) or 'r' (R alone)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"jnp.linalg.qr requires mode 'reduced', 'complete' or 'r', got "
                         f"{mode!r}")
    q, r = _qr(_real_matrix("qr", a), mode)
    return r if mode == "r" else QRResult(q, r)


@jit
def _one_sided_jacobi(a: Any) -> tuple[Any, Any]:
    """(A V with orthogonal columns, V) for a (..., m, n), m >= n."""
    n = a.shape[-1]
    a, m = _pad_even(a)
    v = enp.broadcast_to(enp.eye(m, dtype=a.dtype), (*a.shape[:-2], m, m))
    eps = float(np.finfo(a.dtype).eps)

    def round_(r, state):
        a, v = state
        partner, first = _schedule(m, r)
        norms = enp.sum(a * a, axis=-2)
        gamma = enp.sum(a * enp.take(a, partner, axis=-1), axis=-2)
        other = enp.take(norms, partner, axis=-1)
        lo, hi = enp.where(first, norms, other), enp.where(first, other, norms)
        c, s, _ = _angles(lo, hi, gamma)
        cc, ss = _rotation(c, s, first)
        return _combine(a, partner, cc, ss, -1), _combine(v, partner, cc, ss, -1)

    def off(state):
        a = state[0]
        gram = enp.matmul(enp.swapaxes(a, -1, -2), a)
        d = enp.diagonal(gram, axis1=-2, axis2=-1)
        scale = enp.sqrt(enp.maximum(d[..., :, None] * d[..., None, :],
                                     np.finfo(a.dtype).tiny))
        cos = enp.where(enp.eye(m, dtype=bool), 0, gram / scale)
        return enp.max(enp.abs(cos), axis=(-2, -1))

    a, v = _sweeps(lambda state: lax.fori_loop(0, m - 1, round_, state), off, (a, v),
                   m * eps)
    return a[..., :n], v[..., :n, :n]


def _lapack_svd(a: Any, full: bool) -> tuple[Any, Any, Any]:
    m, n = a.shape[-2:]
    k = min(m, n)
    both = bind(ops.SVD, a)
    u, s, v = both[..., :m, :m], both[..., m, :k], both[..., m + 1:, :n]
    if not full:
        u, v = u[..., :k], v[..., :k]
    return u, s, enp.swapaxes(v, -1, -2)


@custom_jvp
def _svd_reduced(a: Any) -> tuple[Any, Any, Any]:
    return _lapack_svd(a, full=False) if _lapack(a) else _svd_loops(a, False, True)


@_svd_reduced.defjvp
def _svd_reduced_jvp(primals: tuple, tangents: tuple) -> tuple:
    """a = U S V^T (U (m, k), V (n, k)): with dP = U^T da V, ds = diag(dP), dU = U (F * (dP S
    + S dP^T)) + (I - U U^T) da V S^-1, dV = V (F * (S dP + dP^T S)) + (I - V V^T) da^T U
    S^-1, F[i, j] = 1 / (s[j]^2 - s[i]^2) off the diagonal (a zero singular value's
    inverse is taken as 0, as JAX does)."""
    (a,), (da,) = primals, tangents
    u, s, vt = _svd_reduced(a)
    v, ut = enp.swapaxes(vt, -1, -2), enp.swapaxes(u, -1, -2)
    dp = enp.matmul(ut, enp.matmul(da, v))
    k = s.shape[-1]
    eye = enp.eye(k, dtype=a.dtype)
    sq = s * s
    f = enp.where(eye, 0, 1 / (sq[..., None, :] - sq[..., :, None] + eye))
    row, col = s[..., None, :], s[..., :, None]  # S on the right, S on the left
    s_inv = enp.where(s == 0, 0, 1 / enp.where(s == 0, 1, s))[..., None, :]
    dpt = enp.swapaxes(dp, -1, -2)
    du = enp.matmul(u, f * (dp * row + col * dpt))
    dv = enp.matmul(v, f * (col * dp + dpt * row))
    dav = enp.matmul(da, v)
    du = du + (dav - enp.matmul(u, enp.matmul(ut, dav))) * s_inv
    datu = enp.matmul(enp.swapaxes(da, -1, -2), u)
    dv = dv + (datu - enp.matmul(v, enp.matmul(vt, datu))) * s_inv
    return (u, s, vt), (du, enp.diagonal(dp, axis1=-2, axis2=-1), enp.swapaxes(dv, -1, -2))


@custom_jvp
def _svd_full(a: Any) -> tuple[Any, Any, Any]:
    return _lapack_svd(a, full=True)


@_svd_full.defjvp
def _svd_full_jvp(primals: tuple, tangents: tuple) -> tuple:
    raise NotImplementedError("the derivative of jnp.linalg.svd with full_matrices=True is "
                              "not defined (the completion of U or V is not unique; JAX "
                              "does not define it either): use full_matrices=False")


@jit(static_argnums=(1, 2))
def _svd(a: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """LAPACK's where it runs; the loops' elsewhere. The reduced SVD (and the singular values
    from LAPACK) are differentiable by _svd_reduced's rule."""
    lapack = _lapack(a)
    if not compute_uv:
        return _svd_reduced(a)[1] if lapack else _svd_loops(a, False, False)
    if full_matrices:
        return _svd_full(a) if lapack else _svd_loops(a, True, True)
    return _svd_reduced(a)


@jit(static_argnums=(1, 2))
def _svd_loops(a: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """One-sided Jacobi: A V with orthogonal columns, their norms S, U from a QR of A V."""
    wide = a.shape[-2] < a.shape[-1]
    if wide:
        a = enp.swapaxes(a, -1, -2)
    av, v = _one_sided_jacobi(a)
    order = enp.argsort(-enp.sum(av * av, axis=-2), axis=-1)
    # The norms of the sorted columns, not the norms gathered: IREE 3.13 fails to partition
    # ("circular dependency") a module gathering both from one order.
    av = enp.take_along_axis(av, order[..., None, :], axis=-1)
    s = enp.sqrt(enp.sum(av * av, axis=-2))
    if not compute_uv:
        return s
    v = enp.take_along_axis(v, order[..., None, :], axis=-1)
    # U from a QR of A V = U S: orthonormal also where a singular value is 0, and completed
    # to a square U for full_matrices.
    q, r = _householder(av)
    n = av.shape[-1]
    signs = enp.where(enp.diagonal(r, axis1=-2, axis2=-1) < 0, -1, 1).astype(av.dtype)
    u = q[..., :n] * signs[..., None, :]
    if full_matrices:
        u = enp.concatenate([u, q[..., n:]], axis=-1)
    vt = enp.swapaxes(v, -1, -2)
    if wide:
        return enp.swapaxes(vt, -1, -2), s, enp.swapaxes(u, -1, -2)
    return u, s, vt


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """a = U diag(S) V^T, singular values descending: (U, S, Vh), or S without
    compute_uv; U (m, m) and Vh (n, n) with full_matrices, else (m, k) and (k, n)."""
    out = _svd(_real_matrix("svd", a), bool(full_matrices), bool(compute_uv))
    return SVDResult(*out) if compute_uv else out


def svdvals(x: Any) -> Any:
    return svd(x, compute_uv=False)


def _cutoff(s: Any, rtol: Any, shape: tuple[int, ...]) -> Any:
    if rtol is None:
        rtol = 10 * max(shape[-2:]) * float(np.finfo(s.dtype).eps)
    return enp.asarray(rtol, s.dtype)[..., None] * enp.max(s, axis=-1, keepdims=True)


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse: V diag(1/s) U^T over the singular values above rtol
    times the largest (default 10 max(m, n) eps, as JAX)."""
    return _pinv(_real_matrix("pinv", a), rtol if rcond is None else rcond)


@jit
def _pinv(a: Any, rtol: Any) -> Any:
    u, s, vt = _svd(a, False, True)
    keep = s > _cutoff(s, rtol, a.shape)
    inverse = enp.where(keep, 1 / enp.where(keep, s, 1), 0)
    return enp.matmul(enp.swapaxes(vt, -1, -2) * inverse[..., None, :], enp.swapaxes(u, -1, -2))


def matrix_rank(a: Any, rtol: Any = None, *, tol: Any = None) -> Any:
    """The number of singular values above rtol times the largest (or above tol); for
    fewer than two dims, 1 where any element is nonzero, else 0 (NumPy's)."""
    a = enp.asarray(a)
    if a.ndim < 2:
        return enp.any(a != 0).astype(np.int32)
    return _matrix_rank(_real_matrix("matrix_rank", a), rtol, tol)


@jit
def _matrix_rank(a: Any, rtol: Any, tol: Any) -> Any:
    s = _svd(a, False, False)
    limit = enp.asarray(tol, s.dtype)[..., None] if tol is not None else _cutoff(s, rtol,
                                                                                 a.shape)
    return enp.sum(s > limit, axis=-1)


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any, Any, Any]:
    """(x minimizing |a x - b|, the squared residual norms, a's rank, its singular values),
    as jnp.linalg.lstsq (rcond None: eps max(m, n); residuals always computed, shape (k,) or
    (1,) for a vector b)."""
    a = _real_matrix("lstsq", a)
    if a.ndim != 2:
        raise ValueError(f"jnp.linalg.lstsq requires a 2-d matrix a, got shape "
                         f"{tuple(a.shape)}")
    b = enp.asarray(b).astype(a.dtype)
    if b.shape[0] != a.shape[0] or b.ndim > 2:
        raise ValueError(f"jnp.linalg.lstsq requires b of shape ({a.shape[0]},) or "
                         f"({a.shape[0]}, k), got {tuple(b.shape)}")
    return _lstsq(a, b, rcond)


@jit
def _lstsq(a: Any, b: Any, rcond: Any) -> tuple[Any, Any, Any, Any]:
    vector = b.ndim == 1
    u, s, vt = _svd(a, False, True)
    if rcond is None:
        rcond = float(np.finfo(a.dtype).eps) * max(a.shape)
    keep = s > rcond * enp.max(s)
    inverse = enp.where(keep, 1 / enp.where(keep, s, 1), 0)
    bm = b[:, None] if vector else b
    x = enp.matmul(enp.swapaxes(vt, -1, -2),
                   inverse[:, None] * enp.matmul(enp.swapaxes(u, -1, -2), bm))
    residual = enp.sum((bm - enp.matmul(a, x)) ** 2, axis=0)  # (1,) for a vector b, as JAX
    if vector:
        x = x[:, 0]
    return x, residual, enp.sum(keep).astype(np.int32), s
