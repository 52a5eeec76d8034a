"""ember.numpy.linalg and ember.scipy.linalg against NumPy/SciPy in float64 (and JAX for the
conventions), with tolerances scaled by the condition number, batched and under jit."""

import numpy as np
import pytest
import scipy.linalg
from conftest import few_examples
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
import ember.scipy.linalg as elinalg
from helpers import assert_close, setting

SHAPES = [(3, 3), (2, 2, 5, 5)]  # a few shapes: each one is a compile
EPS = {np.float32: 1.2e-7, np.float64: 2.3e-16}


def _matrices(seed: int, shape, dtype, spd: bool = False) -> np.ndarray:
    """Well-conditioned but not diagonal-dominant: Q1 diag(s) Q2 with s in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    n = shape[-1]
    q1 = np.linalg.qr(rng.standard_normal((*shape[:-2], n, n)))[0]
    q2 = q1 if spd else np.linalg.qr(rng.standard_normal((*shape[:-2], n, n)))[0]
    s = rng.uniform(0.5, 2.0, (*shape[:-2], 1, n)) * rng.choice([-1, 1], (*shape[:-2], 1, n))
    s = np.abs(s) if spd else s
    return ((q1 * s) @ np.swapaxes(q2, -1, -2)).astype(dtype)


def _close(got, want, tol: float) -> None:
    got = np.asarray(got)
    assert_close(got, np.asarray(want).astype(got.dtype), rtol=tol, atol=tol)


def _tol(dtype, a) -> float:
    return 50 * EPS[dtype] * float(np.max(np.linalg.cond(a.astype(np.float64))))


cases = st.tuples(st.sampled_from(SHAPES), st.integers(0, 2**31), st.booleans())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solve_inv_det_slogdet_match_numpy(dtype):
    @few_examples(4)
    @given(cases, st.integers(1, 3))
    def check(case, k):
        shape, seed, under_jit = case
        a = _matrices(seed, shape, dtype)
        b = np.random.default_rng(seed + 1).standard_normal((*shape[:-1], k)).astype(dtype)
        wrap = ember.jit if under_jit else (lambda f: f)
        tol = _tol(dtype, a)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        with setting("ember_enable_x64", dtype == np.float64):
            x = np.asarray(wrap(jnp.linalg.solve)(a, b))
            assert x.dtype == dtype and x.shape == b.shape
            _close(x, np.linalg.solve(a64, b64), tol)
            _close(wrap(jnp.linalg.inv)(a), np.linalg.inv(a64), tol)
            _close(wrap(jnp.linalg.det)(a), np.linalg.det(a64), tol)
            sign, logdet = wrap(jnp.linalg.slogdet)(a)
            want_sign, want_log = np.linalg.slogdet(a64)
            _close(sign, want_sign, 0)
            _close(logdet, want_log, tol)

    check()


def test_elimination_across_panels_and_padding():
    """37 unknowns are three panels of the blocked elimination, the last one padded: values,
    the permutation's sign (a shuffled identity: every pivot 1, only the sign left) and
    singular matrices (a zero row, a zero column) as NumPy has them."""
    n = 37
    a = _matrices(5, (2, n, n), np.float32)
    b = np.random.default_rng(6).standard_normal((2, n, 2)).astype(np.float32)
    tol = _tol(np.float32, a)
    _close(jnp.linalg.solve(a, b), np.linalg.solve(a.astype(np.float64), b), tol)
    _close(jnp.linalg.inv(a), np.linalg.inv(a.astype(np.float64)), tol)
    shuffled = np.eye(n, dtype=np.float32)[np.random.default_rng(7).permutation(n)]
    zero_row = a[0].copy()
    zero_row[30] = 0
    zero_column = a[1].copy()
    zero_column[:, 20] = 0
    cases = np.stack([a[0], shuffled, zero_row, zero_column])
    sign, logdet = jnp.linalg.slogdet(cases)
    want_sign, want_log = np.linalg.slogdet(cases.astype(np.float64))
    assert np.asarray(sign).tolist() == want_sign.tolist()
    _close(np.asarray(logdet)[:2], want_log[:2], 1e-5)
    assert np.asarray(logdet)[2:].tolist() == [-np.inf] * 2
    det = np.asarray(jnp.linalg.det(cases))
    assert det[1] == np.linalg.det(shuffled) and det[2:].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_and_triangular_solves_match_scipy(dtype):
    @few_examples(4)
    @given(cases, st.booleans(), st.sampled_from([0, 1, "T"]), st.booleans())
    def check(case, lower, trans, unit):
        shape, seed, under_jit = case
        spd = _matrices(seed, shape, dtype, spd=True)
        tol = _tol(dtype, spd)
        wrap = ember.jit if under_jit else (lambda f: f)
        with setting("ember_enable_x64", dtype == np.float64):
            factor = np.asarray(wrap(jnp.linalg.cholesky)(spd))
            _close(factor, np.linalg.cholesky(spd.astype(np.float64)), tol)
            assert_close(np.asarray(elinalg.cholesky(spd)), np.swapaxes(factor, -1, -2))
            a, b = spd[(0,) * (spd.ndim - 2)], spd[(0,) * (spd.ndim - 2)][:, :1]
            a = a + np.eye(a.shape[-1], dtype=dtype)  # triangles of it are well conditioned
            x = np.asarray(wrap(lambda a, b: elinalg.solve_triangular(
                a, b, trans=trans, lower=lower, unit_diagonal=unit))(a, b))
            want = scipy.linalg.solve_triangular(a.astype(np.float64), b.astype(np.float64),
                                                 trans=trans, lower=lower, unit_diagonal=unit)
            _close(x, want, 100 * tol)

    check()


def test_conventions_match_jax(jax):
    """Singular matrices (det 0, slogdet sign 0 and -inf), vectors as b, norms."""
    import jax.numpy as jjnp

    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    assert float(jnp.linalg.det(singular)) == 0.0 == float(jjnp.linalg.det(singular))
    sign, logdet = jnp.linalg.slogdet(np.zeros((3, 3), np.float32))
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    a = _matrices(3, (4, 4), np.float32)
    v = np.arange(4, dtype=np.float32)
    assert jnp.linalg.solve(a, v).shape == (4,)
    assert_close(np.asarray(jnp.linalg.solve(a, v)), np.asarray(jjnp.linalg.solve(a, v)),
                 rtol=1e-5, atol=1e-5)
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    for ord_, axis in [(None, None), (None, 1), (2, -1), (1, 0), (np.inf, 2), (-np.inf, 1),
                       (0, 2), (3, 1), (0.5, 0), ("fro", (1, 2)), (1, (1, 2)),
                       (-1, (2, 1)), (np.inf, (0, 2)), (-np.inf, (1, 2))]:
        for keepdims in (False, True):
            got = jnp.linalg.norm(x, ord_, axis, keepdims)
            want = jjnp.linalg.norm(x, ord_, axis, keepdims)
            assert got.shape == want.shape, (ord_, axis, keepdims)
            assert_close(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-6)
    _close(jnp.linalg.norm(x[0]), np.linalg.norm(x[0]), 1e-6)
    m = a[:3, :3]
    for n in (0, 1, 3, -2):
        _close(jnp.linalg.matrix_power(m, n), np.linalg.matrix_power(m.astype(np.float64), n),
               1e-4)


def test_errors_name_the_function_and_the_fix():
    with pytest.raises(ValueError, match=r"linalg.inv requires square matrices .* \(3, 4\)"):
        jnp.linalg.inv(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match=r"solve requires b of shape \(3,\) or"):
        jnp.linalg.solve(np.eye(3, dtype=np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="integer power"):
        jnp.linalg.matrix_power(np.eye(2), 1.5)
    with pytest.raises(ValueError, match="matrix ord in"):
        jnp.linalg.norm(np.eye(3, dtype=np.float32), 3)
    with pytest.raises(ValueError, match="mode 'reduced', 'complete' or 'r'"):
        jnp.linalg.qr(np.eye(3, dtype=np.float32), mode="full")
    with pytest.raises(ValueError, match=r"eigh requires square matrices .* \(2, 3\)"):
        jnp.linalg.eigh(np.zeros((2, 3), np.float32))
    for f in (jnp.linalg.svd, jnp.linalg.solve_triangular, jnp.linalg.inv):
        with pytest.raises(NotImplementedError, match="of complex matrices"):
            f(*[np.eye(2, dtype=np.complex64)] * (2 if f is jnp.linalg.solve_triangular
                                                  else 1))
    with pytest.raises(ValueError, match="trans in 0, 1, 2"):
        elinalg.solve_triangular(np.eye(2), np.ones(2), trans="X")


def test_on_the_cpu_lapack_is_called_and_the_loops_agree():
    """On Ember's CPU runtime solve (and inv, built on it), slogdet, det and eigh are calls
    of the host module's LAPACK functions; with ember_cpu_lapack off (as ember-compile
    traces) they are loops of ember ops, which any IREE runtime runs. Both match NumPy, in
    float32 and float64, batched, inside a loop (a host call every trip), and on a singular
    matrix (solve not finite, as JAX's; det 0, slogdet 0 and -inf)."""
    def program(a, b):
        x = jnp.linalg.solve(a, b)
        # three trips, each solving with the last trip's solution
        looped = ember.lax.fori_loop(0, 3, lambda i, y: jnp.linalg.solve(a, y), b)
        sym = a + jnp.swapaxes(a, -1, -2)
        spd = a @ jnp.swapaxes(a, -1, -2)
        factor = jnp.linalg.cholesky(spd)
        return x, jnp.linalg.inv(a), looped, jnp.linalg.slogdet(a), jnp.linalg.det(a), (
            sym, jnp.linalg.eigh(sym)), (spd, factor, elinalg.solve_triangular(
                factor, b, lower=True), elinalg.solve_triangular(factor, b, trans=1,
                                                                  lower=True))

    a = _matrices(1, (2, 6, 6), np.float64)
    b = np.random.default_rng(1).standard_normal((2, 6, 2))
    tol = _tol(np.float64, a)
    want_loop = b
    for _ in range(3):
        want_loop = np.linalg.solve(a, want_loop)
    for lapack in (True, False):
        with setting("ember_enable_x64", True), setting("ember_cpu_lapack", lapack):
            f = ember.jit(program)
            text = f.lower(a, b).as_text("linalg")
            for name in ("solve", "slogdet", "eigh", "cholesky", "triangular_solve"):
                assert (f"ember_host.{name}_f64" in text) is lapack
            x, inverse, looped, (sign, log), det, (sym, (w, v)), (spd, factor, tri, tri_t) = f(
                a, b)
            spd, factor = np.asarray(spd), np.asarray(factor)
            _close(factor, np.linalg.cholesky(spd), tol)
            _close(tri, scipy.linalg.solve_triangular(factor, b, lower=True), tol)
            _close(tri_t, scipy.linalg.solve_triangular(factor, b, trans=1, lower=True), tol)
            assert x.dtype == np.float64
            _close(x, np.linalg.solve(a, b), tol)
            _close(inverse, np.linalg.inv(a), tol)
            _close(looped, want_loop, 10 * tol)
            want_sign, want_log = np.linalg.slogdet(a)
            assert np.array_equal(sign, want_sign)
            _close(log, want_log, tol)
            _close(det, np.linalg.det(a), tol)
            sym, w, v = (np.asarray(t) for t in (sym, w, v))
            _close(w, np.linalg.eigvalsh(sym), tol)
            _close(sym @ v, v * w[..., None, :], tol * np.abs(w).max())
            _close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(6), v.shape), tol)
        with setting("ember_cpu_lapack", lapack):
            zero = np.zeros((3, 3), np.float32)
            singular = np.asarray(jnp.linalg.solve(zero, np.ones(3, np.float32)))
            assert singular.dtype == np.float32 and not np.isfinite(singular).any()
            assert [float(t) for t in jnp.linalg.slogdet(zero)] == [0.0, -np.inf]
            assert float(jnp.linalg.det(zero)) == 0.0
            not_definite = np.asarray(jnp.linalg.cholesky(-np.eye(3, dtype=np.float32)))
            assert np.isnan(np.diagonal(not_definite)).all()


@pytest.mark.parametrize("lapack", [True, False])
def test_gradients_and_vmap_through_the_factorizations_match_jax(lapack):
    """Reverse mode and vmap go through the factorizations: the LAPACK rows' rules on the
    CPU, the loops (fori_loop with static bounds) elsewhere."""
    import jax
    import jax.numpy as J

    rng = np.random.default_rng(0)
    a = (rng.normal(size=(4, 4)) + 4 * np.eye(4)).astype(np.float32)
    b = rng.normal(size=(4,)).astype(np.float32)
    spd = (a @ a.T).astype(np.float32)
    w = rng.normal(size=(4, 3)).astype(np.float32)
    tall = np.concatenate([a[:, :3], w[:1]])  # (5, 3)

    def singular(np_, m):  # what no choice of the singular vectors' signs changes
        u, s, vt = np_.linalg.svd(m, full_matrices=False)
        return np_.sum(s ** 3) + np_.sum((u @ vt) * w)

    cases = [(lambda np_, m: np_.sum(np_.linalg.solve(m, b) ** 2), a),
             (lambda np_, m: np_.sum(np_.linalg.inv(m)) + np_.linalg.slogdet(m)[1]
              + np_.linalg.det(m), a),
             (lambda np_, m: np_.sum(np_.linalg.cholesky(m)), spd),
             (lambda np_, m: np_.sum(np_.linalg.eigh(m)[0] ** 2), spd),
             (singular, a[:, :3]),
             (lambda np_, m: np_.sum(np_.linalg.qr(m)[0] * tall) + np_.sum(np_.linalg.qr(m)[1]),
              tall)]
    fs, ms = zip(*cases, strict=True)
    batches = [np.stack([m, m * 1.1]) for m in ms]
    with setting("ember_cpu_lapack", lapack):  # every case in one module (one compile)
        grads, batched = ember.jit(lambda ms, batches: (
            [ember.grad(lambda v, f=f: f(jnp, v))(m) for f, m in zip(fs, ms, strict=True)],
            [ember.vmap(lambda v, f=f: f(jnp, v))(x) for f, x in zip(fs, batches, strict=True)]))(
                ms, batches)
    for f, m, batch, grad, values in zip(fs, ms, batches, grads, batched, strict=True):
        assert_close(grad, jax.grad(lambda v, f=f: f(J, v))(m), rtol=1e-3, atol=1e-4)
        assert_close(values, jax.vmap(lambda v, f=f: f(J, v))(batch), rtol=1e-4, atol=1e-4)


# (m, n) shapes of the decompositions: square, tall, wide and batched, odd and even (a
# tournament of Jacobi rotations pads an odd count).
DECOMPOSED = [(4, 4), (7, 4), (2, 3, 5)]


def _general(seed: int, shape, dtype) -> np.ndarray:
    """Q1 diag(s) Q2 with s in [0.5, 2] of a rectangular shape."""
    rng = np.random.default_rng(seed)
    m, n = shape[-2:]
    q1 = np.linalg.qr(rng.standard_normal((*shape[:-2], m, m)))[0][..., :min(m, n)]
    q2 = np.linalg.qr(rng.standard_normal((*shape[:-2], n, n)))[0][..., :min(m, n)]
    s = rng.uniform(0.5, 2.0, (*shape[:-2], 1, min(m, n)))
    return ((q1 * s) @ np.swapaxes(q2, -1, -2)).astype(dtype)


def _orthonormal_columns(q, tol) -> None:
    q = np.asarray(q, np.float64)
    _close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]),
                                                       (*q.shape[:-2], q.shape[-1],
                                                        q.shape[-1])), tol)


def _decompositions(x):
    """The other factorizations of x in one module (each is a loop or two: a module each
    would be a compile each). The reduced SVD is a module of its own: IREE 3.13 fails at run
    time on all of them in one 4x4 module ("indirect buffer reference slot 0 is out range of
    the declared binding capacity of the command buffer")."""
    sym = jnp.swapaxes(x, -1, -2) @ x - 1.5 * jnp.eye(x.shape[-1], dtype=x.dtype)
    return (jnp.linalg.svd(x)[0], jnp.linalg.qr(x), jnp.linalg.qr(x, mode="complete"), sym,
            jnp.linalg.eigh(sym))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_svd_and_qr_match_numpy(dtype):
    @few_examples(2)  # two modules of loops an example: ~7 s cold
    @given(st.sampled_from(DECOMPOSED), st.integers(0, 2**31))
    def check(shape, seed):
        a = _general(seed, shape, dtype)
        a64 = a.astype(np.float64)
        tol = 100 * EPS[dtype] * max(shape[-2:])
        with setting("ember_enable_x64", dtype == np.float64):
            u, s, vt = ember.jit(lambda x: jnp.linalg.svd(x, full_matrices=False))(a)
            uf, (q, r), (qc, rc), sym, (w, v) = ember.jit(_decompositions)(a)
        _close(s, np.linalg.svd(a64, compute_uv=False), tol)
        _close(np.asarray(u) * np.asarray(s)[..., None, :] @ np.asarray(vt), a64, tol)
        _orthonormal_columns(u, tol)
        _orthonormal_columns(np.swapaxes(np.asarray(vt), -1, -2), tol)
        assert uf.shape[-2:] == (shape[-2],) * 2  # full_matrices: square, orthonormal
        _orthonormal_columns(uf, tol)
        qn, rn = np.linalg.qr(a64)
        _close(q, qn, tol)  # LAPACK's signs
        _close(r, rn, tol)
        assert np.all(np.tril(np.asarray(r), -1) == 0)
        assert qc.shape[-2:] == (shape[-2],) * 2 and rc.shape == a.shape
        _close(np.asarray(qc, np.float64) @ np.asarray(rc, np.float64), a64, tol)
        sym = np.asarray(sym, np.float64)
        scale = float(np.abs(sym).max()) * sym.shape[-1]
        _close(np.asarray(w) / scale, np.linalg.eigvalsh(sym) / scale, tol)
        _orthonormal_columns(v, tol)
        v, w = np.asarray(v, np.float64), np.asarray(w, np.float64)
        _close(sym @ v / scale, v * w[..., None, :] / scale, tol)

    check()


def test_pinv_lstsq_rank_and_spectral_norms_match_numpy_and_jax(jax):
    import jax.numpy as jjnp

    rng = np.random.default_rng(5)
    a = rng.normal(size=(6, 4)).astype(np.float32)
    b = rng.normal(size=(6, 2)).astype(np.float32)
    low = np.outer(np.arange(1.0, 7.0), np.arange(1.0, 5.0)).astype(np.float32)  # rank 1
    _close(jnp.linalg.pinv(a), np.linalg.pinv(a.astype(np.float64)), 1e-5)  # eager: a module

    def cases(ns):
        x = a.reshape(2, 3, 4)
        return {"pinv": ns.linalg.pinv(low), "ranks": (ns.linalg.matrix_rank(low),
                                                       ns.linalg.matrix_rank(a)),
                "lstsq": (ns.linalg.lstsq(a, b), ns.linalg.lstsq(a, b[:, 0])),
                "norms": [ns.linalg.norm(x, o, ax, k) for o, ax in
                          [(2, (1, 2)), (-2, (2, 1)), ("nuc", (0, 2))] for k in (False, True)],
                "eigh": ns.linalg.eigh(np.diag(np.array([3.0, -1.0, 2.0], np.float32))),
                "svdvals": ns.linalg.svdvals(np.diag(np.array([1.0, 3.0, 2.0], np.float32))),
                "qr_r": ns.linalg.qr(a, mode="r")}

    ours, theirs = ember.jit(lambda: cases(jnp))(), cases(jjnp)
    for name in ours:
        for g, w in zip(jax.tree.leaves(ours[name]), jax.tree.leaves(theirs[name]),
                        strict=True):
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
            if name != "eigh":
                _close(g, w, 1e-5)
    assert [int(r) for r in ours["ranks"]] == [1, 4]
    w, v = ours["eigh"]
    assert np.array_equal(np.asarray(w), [-1, 2, 3])  # ascending, as JAX
    assert np.array_equal(np.abs(np.asarray(v)), np.eye(3)[:, [1, 2, 0]])
    assert np.array_equal(np.asarray(ours["svdvals"]), [3, 2, 1])  # descending


def test_eigh_differentiates_and_batches_like_jax(jax):
    """JAX's eigh rule (a custom_jvp): forward and reverse mode of functions that do not
    depend on the eigenvectors' signs, and vmap through the Jacobi sweeps."""
    import jax.numpy as J

    rng = np.random.default_rng(7)
    a = rng.normal(size=(4, 4)).astype(np.float32)
    a = a + a.T
    c = rng.normal(size=(4,)).astype(np.float32)

    def f(np_, m):
        w, v = np_.linalg.eigh(m)
        return np_.sum(w * c) + np_.sum((v * v) @ c)

    assert_close(ember.grad(lambda m: f(jnp, m))(a), jax.grad(lambda m: f(J, m))(a),
                 rtol=1e-3, atol=1e-4)
    t = rng.normal(size=(4, 4)).astype(np.float32)
    _, ours = ember.jvp(lambda m: f(jnp, m), (a,), (t,))
    _, theirs = jax.jvp(lambda m: f(J, m), (a,), (t,))
    assert_close(ours, theirs, rtol=1e-3, atol=1e-4)
    both = np.stack([a, a * 2 + 1])
    assert_close(ember.vmap(lambda m: jnp.linalg.eigvalsh(m))(both),
                 jax.vmap(lambda m: J.linalg.eigvalsh(m))(both), rtol=1e-5, atol=1e-5)


def test_the_array_api_linalg_extension_matches_jax(jax):
    import jax.numpy as jjnp

    x = np.random.default_rng(9).normal(size=(2, 3, 4)).astype(np.float32)

    def cases(ns):
        la = ns.linalg
        return (la.vector_norm(x), la.vector_norm(x, axis=(0, 2), keepdims=True, ord=1),
                la.matrix_norm(x), la.matrix_norm(x, ord=np.inf, keepdims=True),
                la.trace(x[:, :3, :3], offset=1), la.diagonal(x, offset=-1),
                la.cross(x[..., :3], x[..., 1:]), la.vecdot(x, x), la.outer(x[0, 0], x[1, 1]),
                la.matrix_transpose(x), la.matmul(x, la.matrix_transpose(x)),
                la.tensordot(x, x, axes=([1, 2], [1, 2])))

    for a, b in zip(ember.jit(lambda: cases(jnp))(), cases(jjnp), strict=True):
        assert np.shape(a) == np.shape(b)
        _close(a, b, 1e-5)


_C = np.array([1.0, 2.0, 3.0], np.float32)
_R = np.array([1.0, 5.0, 6.0, 7.0], np.float32)
_A = np.array([2.0, 3.0, 4.0, -1.0], np.float32)
STRUCTURED = [
    ("block_diag", (np.eye(2, dtype=np.float32), np.ones((1, 3), np.float32), np.float32(5))),
    ("circulant", (_C,)), ("toeplitz", (_C, _R)), ("toeplitz", (_C,)), ("hankel", (_C, _R)),
    ("hankel", (_C,)), ("companion", (_A,)), ("leslie", (_A, _C)), ("fiedler", (_A,)),
    ("hilbert", (4,)), ("pascal", (5,)), ("pascal", (5, "lower")), ("pascal", (5, "upper")),
    ("invpascal", (5,)), ("invpascal", (4, "lower")), ("invpascal", (4, "upper")),
    ("helmert", (5,)), ("helmert", (5, True)), ("hadamard", (8,)), ("dft", (4,)),
    ("dft", (4, "sqrtn")), ("dft", (3, "n")),
]


@pytest.mark.parametrize("name,args", STRUCTURED,
                         ids=[f"{n}-{k}" for k, (n, _) in enumerate(STRUCTURED)])
def test_structured_matrices_match_jax(name, args):
    """scipy.linalg's structured matrices: those of entries gathered from them (and under
    jit), those of a size built on the host."""
    import jax.scipy.linalg as jsl

    want = getattr(jsl, name)(*args)
    assert_close(getattr(elinalg, name)(*args), want)
    if not isinstance(args[0], int):
        assert_close(ember.jit(getattr(elinalg, name))(*args), want)


@pytest.mark.parametrize("name", ["convolve", "correlate", "fftconvolve", "convolve2d",
                                  "correlate2d"])
def test_signal_convolutions_match_jax(name):
    """scipy.signal's convolutions in their three modes, odd and even kernels, 1-D and 2-D,
    a kernel larger than the input ('valid' swaps them, as SciPy's)."""
    import jax.scipy.signal as jss

    import ember.scipy.signal as ess

    rng = np.random.default_rng(0)
    a1, k1, k1o = (rng.standard_normal(n).astype(np.float32) for n in (9, 4, 3))
    a2, k2, k2o = (rng.standard_normal(s).astype(np.float32) for s in ((6, 7), (3, 2), (3, 3)))
    pairs = [(a2, k2), (a2, k2o)] if name.endswith("2d") else [
        (a1, k1), (a1, k1o), (a2, k2), (k1, a1)]
    for mode in ("full", "same", "valid"):
        for a, k in pairs:
            want = getattr(jss, name)(a, k, mode=mode)
            assert_close(getattr(ess, name)(a, k, mode=mode), want, rtol=1e-4, atol=1e-5)


def test_detrend_matches_jax():
    import jax.scipy.signal as jss

    import ember.scipy.signal as ess

    data = np.random.default_rng(1).standard_normal((6, 7)).astype(np.float32)
    for kind in ("linear", "constant"):
        for axis in (0, -1):
            assert_close(ess.detrend(data, axis=axis, type=kind),
                         jss.detrend(data, axis=axis, type=kind), rtol=1e-4, atol=1e-5)
