"""ember.grad / vjp / jvp: every differentiable row against central finite differences in
float64 and against jax.grad, programs (MLP loss, softmax cross-entropy, layernorm, Newton's
method) against JAX, composition with jit (both orders), with itself and with pytrees."""

import jax  # the oracle (a test dependency)
import jax.ad_checkpoint  # noqa: F401 - checkpoint_name, for the oracle
import numpy as np
import optree
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
from ember.dialect import OPS, derivatives, ops as O
from helpers import assert_close, setting

J = jax.numpy


def test_every_row_is_differentiable_zero_or_not_yet():
    """No row silently lacks a rule: each is in exactly one of the three."""
    vjp, zero, not_yet = set(derivatives.VJP), set(derivatives.ZERO), set(derivatives.NOT_YET)
    assert not (vjp & zero or vjp & not_yet or zero & not_yet)
    missing = {op.name for op in OPS.values()} - {op.name for op in vjp | zero | not_yet}
    assert not missing, sorted(missing)


# Differentiable elementwise rows, with a domain where they are smooth.
UNARY = {
    O.EXP: (-2, 2), O.EXP2: (-2, 2), O.EXPM1: (-2, 2), O.LOG: (0.2, 3), O.LOG1P: (-0.5, 3),
    O.LOG2: (0.2, 3), O.SQRT: (0.2, 3), O.RSQRT: (0.2, 3), O.CBRT: (0.2, 3),
    O.TANH: (-2, 2), O.SIN: (-3, 3), O.COS: (-3, 3), O.TAN: (-1, 1), O.ASIN: (-0.8, 0.8),
    O.ACOS: (-0.8, 0.8), O.ATAN: (-3, 3), O.SINH: (-2, 2), O.COSH: (-2, 2),
    O.ASINH: (-3, 3), O.ACOSH: (1.2, 3), O.ATANH: (-0.8, 0.8), O.ERF: (-2, 2),
    O.ABS: (0.1, 2), O.NEG: (-2, 2), O.COPY: (-2, 2),
}
BINARY = {O.ADD: (-2, 2), O.SUB: (-2, 2), O.MUL: (-2, 2), O.DIV: (0.5, 2), O.POW: (0.5, 2),
          O.MAX: (-2, 2), O.MIN: (-2, 2), O.ATAN2: (0.3, 2), O.REM: (0.3, 2),
          O.COPYSIGN: (0.3, 2)}


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


@pytest.fixture
def x64():
    with setting("ember_enable_x64", True):
        yield


def _bind(op):
    from ember._src.dispatch import bind

    return lambda *xs: bind(op, *xs)


def _each(names, check):
    """check(i) for each name's index; the failures together, by name."""
    failed = {}
    for i, name in enumerate(names):
        try:
            check(i)
        except AssertionError as e:
            failed[name] = str(e).strip().splitlines()[-3:]
    assert not failed, failed


def test_unary_rules_match_finite_differences():
    """Every unary row in one module (a compile each took 25 s of the suite): row i of the
    argument is op i's points in its smooth domain."""
    rows = sorted(UNARY, key=lambda o: o.name)
    x, w = np.stack([np.linspace(*UNARY[op], 7) for op in rows]), np.arange(1.0, 8.0)
    with setting("ember_enable_x64", True):
        g = np.asarray(ember.grad(lambda v: sum(
            jnp.sum(_bind(op)(v[i]) * w) for i, op in enumerate(rows)))(x))

    def check(i):
        want = _numeric_grad(lambda v: np.sum(rows[i].reference(v) * w), x[i])
        assert_close(g[i], want, rtol=1e-5, atol=1e-6)

    _each([op.name for op in rows], check)


def test_binary_rules_match_finite_differences():
    """Every binary row in one module, in both operands (row i: op i's points)."""
    rows = sorted(BINARY, key=lambda o: o.name)
    rng = np.random.default_rng(0)
    a, b = (np.stack([rng.uniform(*BINARY[op], 6) for op in rows]) for _ in range(2))
    r = rows.index(O.REM)  # away from the jumps at multiples of b
    a[r] = a[r] * 3
    a[r] = np.where(np.abs(np.remainder(a[r], b[r])) < 0.05, a[r] + 0.1, a[r])
    with setting("ember_enable_x64", True):
        ga, gb = (np.asarray(g) for g in ember.grad(lambda u, v: sum(
            jnp.sum(_bind(op)(u[i], v[i])) for i, op in enumerate(rows)), argnums=(0, 1))(a, b))

    def check(i):
        op = rows[i]
        assert_close(ga[i], _numeric_grad(lambda u: np.sum(op.reference(u, b[i])), a[i]),
                     rtol=1e-5, atol=1e-5)
        if op is not O.COPYSIGN:  # copysign's derivative in the sign operand is zero
            assert_close(gb[i], _numeric_grad(lambda v: np.sum(op.reference(a[i], v)), b[i]),
                         rtol=1e-5, atol=1e-5)

    _each([op.name for op in rows], check)


STRUCTURAL = {
    # (a full float64 reduction of a product of two operands hits an IREE vector.contract
    # bug: "invalid accumulator/result vector shape")
    "broadcast_in_dim": lambda a: jnp.sum(jnp.broadcast_to(a[:, :1], (3, 4, 4)) ** 2 + a),
    "reshape_transpose": lambda a: jnp.sum(jnp.reshape(a.T, (2, 8)) ** 2),
    "rev": lambda a: jnp.sum(jnp.flip(a, axis=1) * a),
    "reduce_sum_max_min": lambda a: jnp.sum(jnp.max(a, axis=1) + jnp.min(a, axis=0) ** 2),
    "dot_general": lambda a: jnp.sum((a @ a.T) ** 2) + jnp.sum(jnp.einsum("ij,kj->ik", a, a)),
    "slice": lambda a: jnp.sum(a[1:3, ::2] ** 2),
    "dynamic_slice": lambda a: jnp.sum(ember.lax.dynamic_slice(a, (1, 3), (2, 2)) ** 3),
    "dynamic_update_slice": lambda a: jnp.sum(
        ember.lax.dynamic_update_slice(a, a[:2, :2] * 3.0, (2, 1)) ** 2),
    "update": lambda a: jnp.sum(a.at[1:3, 0].set(a[0, :2] * 3.0) ** 2) + jnp.sum(
        a.at[::2, 1::2].set(a[:2, 2:] ** 2) ** 2) + jnp.sum(a.at[1::2].add(a[:2] * a[2:]) ** 3),
    "concatenate": lambda a: jnp.sum(jnp.concatenate([a, a ** 2], axis=1) ** 2),
    "take": lambda a: jnp.sum(a[np.array([0, 2, 2, -1])] ** 2),
    "cumsum": lambda a: jnp.sum(jnp.cumsum(a, axis=1) ** 2),
    "select_convert": lambda a: jnp.sum(jnp.where(a > 0, a, 0.5 * a) * (a > 0.3)),
    # a zero among the factors: the product of the others, not a division
    "reduce_prod_sort_scatter": lambda a: (
        jnp.sum(jnp.prod(a.at[1, 2].set(0.0), axis=1)) + jnp.prod(a[0]) +
        jnp.sum(jnp.sort(a, axis=0) * jnp.arange(4.0)) +
        jnp.sum(a[0].at[np.array([1, 3, 1, 7])].add(a[1] * 2.0) ** 2) +
        jnp.sum(a[2].at[np.array([1, 3, 1, -9])].set(a[3] ** 2) ** 2)),
    # running products with a zero and odd lengths; extrema; scatters that multiply (a zero
    # update, a position written twice), take maxima and minima
    "running_and_scatter_extrema": lambda a: (
        jnp.sum(jnp.cumprod(a.at[1, 2].set(0.0), axis=1) ** 2) +
        jnp.sum(jnp.cumprod(a.reshape(16)[:13] * 0.9) ** 2) +
        jnp.sum(ember.lax.cummax(a, axis=0) * a) +
        jnp.sum(ember.lax.cummin(a[1:], axis=1) ** 2) +
        jnp.sum(a[0].at[np.array([1, 3, 1, 7])].multiply(a[1].at[2].set(0.0)) ** 2) +
        jnp.sum(a[2].at[np.array([0, 3, 0, -9])].max(a[3]) ** 2) +
        jnp.sum(a[1].at[np.array([2, 2, 1])].min(a[3, :3]) ** 2)),
    "control_flow": lambda a: _control_flow(a),
}


def _control_flow(a):
    lax = ember.lax
    total = lax.cond(jnp.sum(a) > 0, lambda: jnp.sum(jnp.sin(a) * a),
                     lambda: jnp.sum(a ** 3))
    total += lax.switch(1, [lambda v: v[0].sum(), lambda v: (v[1] ** 2).sum()], a)
    total += jnp.sum(lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c * a[i]), a[3]))

    def step(h, x):  # a recurrence, a cond inside, stacked outputs
        h = jnp.tanh(h * a[0] + x)
        return h, lax.cond(x[0] > 0, lambda: jnp.sum(h) * x[1], lambda: jnp.sum(h ** 2))

    for reverse in (False, True):
        h, ys = lax.scan(step, a[1], a, reverse=reverse)
        total += jnp.sum(h) + jnp.sum(ys * jnp.arange(1.0, 5.0))
    return total


def test_structural_rules_match_finite_differences(x64):
    """Every structural rule against float64 central differences of the forward pass: the
    functions in one module, each reading its own slice of the argument, so one pass of
    perturbations serves them all (two compiles, not one a function and its grad each)."""
    names = sorted(STRUCTURAL)
    fns = [STRUCTURAL[n] for n in names]
    xs = np.stack([np.random.default_rng(1).normal(size=(4, 4))] * len(fns))
    def each(v):
        return jnp.stack([f(v[i]) for i, f in enumerate(fns)])

    forward = ember.jit(each)
    g = np.asarray(ember.grad(lambda v: jnp.sum(each(v)))(xs))
    want, eps = np.zeros_like(xs), 1e-6
    for e in np.ndindex(4, 4):
        up, down = xs.copy(), xs.copy()
        up[(slice(None), *e)] += eps
        down[(slice(None), *e)] -= eps
        want[(slice(None), *e)] = (np.asarray(forward(up)) - np.asarray(forward(down))) / (
            2 * eps)
    _each(names, lambda i: assert_close(g[i], want[i], rtol=1e-4, atol=1e-5))


def _mlp_loss(np_, params, x, y):
    h = np_.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    shifted = logits - np_.max(logits, axis=1, keepdims=True)
    logp = shifted - np_.log(np_.sum(np_.exp(shifted), axis=1, keepdims=True))
    return -np_.mean(np_.take_along_axis(logp, y[:, None], axis=1))


def _layernorm(np_, x):
    m = np_.mean(x, axis=-1, keepdims=True)
    v = np_.var(x, axis=-1, keepdims=True)
    return np_.sum(((x - m) / np_.sqrt(v + 1e-5)) ** 3)


@few_examples(4)
@given(st.integers(0, 2**31 - 1), st.sampled_from([(4, 8, 16, 3), (7, 5, 6, 2)]))
def test_programs_match_jax(seed, dims):
    rng = np.random.default_rng(seed)
    n, d, h, k = dims
    params = {"w1": rng.normal(size=(d, h)).astype(np.float32) / 3,
              "b1": rng.normal(size=h).astype(np.float32),
              "w2": rng.normal(size=(h, k)).astype(np.float32) / 3,
              "b2": np.zeros(k, np.float32)}
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = rng.integers(0, k, size=n)
    # the data are arguments, not constants of the traced function: examples of one shape
    # share their compiled modules
    ours = ember.grad(lambda p, v, t: _mlp_loss(jnp, p, v, t))(params, x, y)
    theirs = jax.grad(lambda p: _mlp_loss(J, p, x, y))(params)
    for key in params:
        assert_close(ours[key], theirs[key], rtol=1e-4, atol=1e-5)
    assert_close(ember.grad(lambda v: _layernorm(jnp, v))(x),
                 jax.grad(lambda v: _layernorm(J, v))(x), rtol=1e-4, atol=1e-4)
    value, g = ember.value_and_grad(lambda p, v, t: _mlp_loss(jnp, p, v, t), argnums=(0, 1))(
        params, x, y)
    jvalue, jg = jax.value_and_grad(lambda p, v: _mlp_loss(J, p, v, y), argnums=(0, 1))(
        params, x)
    assert_close(value, jvalue, rtol=1e-5)
    assert_close(g[1], jg[1], rtol=1e-4, atol=1e-5)


def test_composes_with_jit_both_ways_and_closures():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    f = lambda p, v: jnp.sum(jnp.tanh(p * v) ** 2)  # noqa: E731
    g = lambda p, v: J.sum(J.tanh(p * v) ** 2)  # noqa: E731
    p = np.ones((2, 3), np.float32)
    want = jax.grad(g)(p, x)
    assert_close(ember.jit(ember.grad(f))(p, x), want)
    assert_close(ember.grad(ember.jit(f))(p, x), want)
    # a closure over the jitted function's own argument: the usual training step
    step = ember.jit(lambda q, v: q - 0.1 * ember.grad(lambda r: f(r, v))(q))
    assert_close(step(p, x), jax.jit(lambda q, v: q - 0.1 * jax.grad(lambda r: g(r, v))(q))(
        p, x))


def test_training_step_with_donation_updates_in_place():
    """A donated parameter is updated in place by the step's compiled module."""
    x = np.random.default_rng(0).normal(size=(64, 32)).astype(np.float32)

    def step(w, v):
        return w - 0.01 * ember.grad(lambda u: jnp.mean((v @ u) ** 2))(w)

    lowered = ember.jit(step, donate_argnums=0).lower(np.ones((32, 8), np.float32), x)
    assert lowered.unusable_donations == []
    w = ember.device_put(np.ones((32, 8), np.float32))
    out = ember.jit(step, donate_argnums=0)(w, x)
    want = jax.jit(lambda u, v: u - 0.01 * jax.grad(lambda t: J.mean((v @ t) ** 2))(u))(
        np.ones((32, 8), np.float32), x)
    assert_close(out, want, rtol=1e-5)
    assert w.is_deleted()


def test_higher_order_and_forward_mode():
    f = lambda t: jnp.sin(t) * t ** 3  # noqa: E731
    g = lambda t: J.sin(t) * t ** 3  # noqa: E731
    assert_close(ember.grad(ember.grad(f))(1.3), jax.grad(jax.grad(g))(1.3), rtol=1e-5)
    assert_close(ember.grad(ember.grad(ember.grad(f)))(0.7),
                 jax.grad(jax.grad(jax.grad(g)))(0.7), rtol=1e-4)
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    t = np.linspace(0, 2, 5, dtype=np.float32)
    out, tangent = ember.jvp(lambda v: jnp.exp(v) * jnp.cos(v), (x,), (t,))
    jout, jtangent = jax.jvp(lambda v: J.exp(v) * J.cos(v), (x,), (t,))
    assert_close(out, jout)
    assert_close(tangent, jtangent, rtol=1e-5)
    y, f_vjp = ember.vjp(lambda v: jnp.outer(v, v), x)
    jy, jf_vjp = jax.vjp(lambda v: J.outer(v, v), x)
    ct = np.arange(25, dtype=np.float32).reshape(5, 5)
    assert_close(y, jy)
    assert_close(f_vjp(ct)[0], jf_vjp(ct)[0], rtol=1e-5)


def test_newton_step():
    """The lecture's Newton's method: x - f(x) / f'(x) with f' from grad."""
    f = lambda v: v ** 3 - 2.0 * v - 5.0  # noqa: E731
    df = ember.grad(f)
    v = 2.0
    for _ in range(6):
        v = v - f(v) / df(v)
    assert abs(float(v) - 2.0945514815423265) < 1e-5


def test_aux_stop_gradient_and_errors():
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    g, aux = ember.grad(lambda v: (jnp.sum(v ** 2), v * 2), has_aux=True)(x)
    assert_close(g, 2 * x)
    assert_close(aux, 2 * x)
    assert_close(ember.grad(lambda v: jnp.sum(v * ember.lax.stop_gradient(v)))(x), x)
    with pytest.raises(TypeError, match="grad.*requires real-valued inputs.*int32"):
        ember.grad(lambda v: jnp.sum(v))(np.arange(3))
    # with allow_int, an integer input's gradient is JAX's float0 zeros (vjp's too)
    g = ember.grad(lambda v, n: jnp.sum(v * n), argnums=(0, 1), allow_int=True)(x, np.arange(4))
    jg = jax.grad(lambda v, n: J.sum(v * n), argnums=(0, 1), allow_int=True)(x, np.arange(4))
    assert_close(g[0], jg[0])
    assert g[1].dtype == jg[1].dtype == jax.dtypes.float0 and g[1].shape == (4,)
    assert ember.vjp(lambda v, n: v * n, x, np.arange(4))[1](x)[1].dtype == jax.dtypes.float0
    with pytest.raises(TypeError, match="requires a real scalar output.*f32\\[4\\]"):
        ember.grad(lambda v: v * 2)(x)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop or lax.fori_loop with dynamic"):
        ember.grad(lambda v: jnp.sum(ember.lax.while_loop(
            lambda c: jnp.sum(c) < 10.0, lambda c: c * 2, v)))(x + 2)
    with pytest.raises(ValueError, match="fori_loop with static start/stop"):
        ember.grad(lambda v, n: jnp.sum(ember.lax.fori_loop(0, n, lambda i, c: c * 2, v)))(
            x, np.int32(3))


def test_ties_and_zeros_share_gradients_as_in_jax():
    # equal elements in running and scattered extrema, zeros in running products
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 5.0], np.float32)
    w = np.arange(1.0, 8.0, dtype=np.float32)
    i = np.array([1, 1, 4, 2, 6, 6])
    cases = [
        (lambda v: jnp.sum(ember.lax.cummax(v) * w), lambda v: J.sum(jax.lax.cummax(v) * w)),
        (lambda v: jnp.sum(ember.lax.cummin(v[::-1]) * w),
         lambda v: J.sum(jax.lax.cummin(v[::-1]) * w)),
        (lambda v: jnp.sum(jnp.cumprod(v) * w), lambda v: J.sum(J.cumprod(v) * w)),
        (lambda v: jnp.sum(v.at[i].max(v[:6]) * w), lambda v: J.sum(v.at[i].max(v[:6]) * w)),
        (lambda v: jnp.sum(v.at[i].min(v[1:]) * w), lambda v: J.sum(v.at[i].min(v[1:]) * w)),
    ]
    for ours, theirs in cases:
        assert_close(ember.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-6)
    # a position multiplied twice (JAX's rule needs unique positions: the oracle multiplies
    # once by the product of both updates)
    assert_close(ember.grad(lambda v: jnp.sum(v.at[i[2:]].multiply(v[:4]) * w))(x),
                 jax.grad(lambda v: J.sum(v.at[np.array([4, 2, 6])].multiply(
                     J.stack([v[0], v[1], v[2] * v[3]]), unique_indices=True) * w))(x),
                 rtol=1e-6)


def test_jacobians_and_hessian_match_jax():
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = [(lambda v: jnp.sin(v) * jnp.sum(v ** 2), lambda v: J.sin(v) * J.sum(v ** 2), x),
             (lambda v: jnp.tanh(v) @ m.T, lambda v: J.tanh(v) @ m.T, m)]
    for ours, theirs, arg in cases:
        assert_close(ember.jacrev(ours)(arg), jax.jacrev(theirs)(arg), rtol=1e-5, atol=1e-6)
        assert_close(ember.jacfwd(ours)(arg), jax.jacfwd(theirs)(arg), rtol=1e-5, atol=1e-6)
    assert_close(ember.hessian(lambda v: jnp.sum(jnp.sin(v) * v ** 3))(x),
                 jax.hessian(lambda v: J.sum(J.sin(v) * v ** 3))(x), rtol=1e-5, atol=1e-5)
    assert_close(ember.jit(ember.jacrev(lambda v: jnp.exp(v) * 2.0))(x),
                 jax.jacrev(lambda v: J.exp(v) * 2.0)(x), rtol=1e-6)
    # pytrees of outputs, tuples of argnums, aux
    def pair(np_):
        return lambda a, b: ({"s": np_.sum(a * b), "v": np_.tanh(a) * b[0]}, a[1:] * 2)
    for ours, theirs in ((ember.jacrev, jax.jacrev), (ember.jacfwd, jax.jacfwd)):
        got = ours(pair(jnp), argnums=(0, 1), has_aux=True)(x, m[1])
        want = theirs(pair(J), argnums=(0, 1), has_aux=True)(x, m[1])
        assert optree.tree_structure(got) == optree.tree_structure(want)
        for g, w in zip(optree.tree_leaves(got), optree.tree_leaves(want), strict=True):
            assert_close(g, w, rtol=1e-6, atol=1e-7)
    assert_close(ember.hessian(lambda a, b: jnp.sum(jnp.sin(a) * b ** 2), argnums=1)(x, m[0]),
                 jax.hessian(lambda a, b: J.sum(J.sin(a) * b ** 2), argnums=1)(x, m[0]),
                 rtol=1e-6, atol=1e-7)
    # one batched backward pass, not one per output element
    w = np.random.default_rng(0).normal(size=(64, 64)).astype(np.float32) / 8
    text = ember.jit(ember.jacrev(lambda v: jnp.tanh(w @ v))).lower(x[:1].repeat(64)).as_text(
        "traced")
    assert text.count("ember.tanh") <= 2 and text.count("ember.dot_general") <= 4


def test_small_integer_powers_are_products_as_in_jax():
    """x ** 2 is JAX's integer_pow (products, exact for integers), and so is its gradient:
    no pow is left in the differentiated IR."""
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    for n in (0, 1, 2, 3, 5):
        assert_close(enp_pow(x, n), np.asarray(J.asarray(x) ** n), rtol=0, atol=0)
    assert (jnp.arange(5) ** 3).dtype == np.int32
    text = ember.jit(ember.grad(lambda v: jnp.sum(v ** 3))).lower(x).as_text("ember")
    assert "ember.pow" not in text
    assert_close(ember.grad(lambda v: jnp.sum(v ** 3))(x), 3 * x ** 2, rtol=1e-6)


def enp_pow(x, n):
    return jnp.asarray(x) ** n


def _rnn_loss(np_, lax_, params, xs):
    def step(h, x):
        h = np_.tanh(h @ params["w"] + x @ params["u"] + params["b"])
        return h, np_.sum(h ** 2)

    h, per_step = lax_.scan(step, np_.zeros((xs.shape[1], params["w"].shape[0])), xs)
    return np_.mean(h) + np_.sum(per_step)


@few_examples(3)
@given(st.integers(0, 2**31 - 1), st.sampled_from([(2, 3, 4, 5), (9, 2, 3, 4), (1, 4, 2, 3)]))
def test_rnn_through_scan_matches_jax(seed, dims):
    """Reverse mode through scan: the parameters (closed over) and the sequence (the xs)."""
    steps, batch, d, h = dims
    rng = np.random.default_rng(seed)
    params = {"w": rng.normal(size=(h, h)).astype(np.float32) / 2,
              "u": rng.normal(size=(d, h)).astype(np.float32),
              "b": rng.normal(size=h).astype(np.float32)}
    xs = rng.normal(size=(steps, batch, d)).astype(np.float32)
    ours = ember.grad(lambda p, v: _rnn_loss(jnp, ember.lax, p, v), argnums=(0, 1))(params, xs)
    theirs = jax.grad(lambda p, v: _rnn_loss(J, jax.lax, p, v), argnums=(0, 1))(params, xs)
    for key in params:
        assert_close(ours[0][key], theirs[0][key], rtol=1e-4, atol=1e-5)
    assert_close(ours[1], theirs[1], rtol=1e-4, atol=1e-5)


@few_examples()
@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 20]))
def test_loops_backward_read_the_saved_carries_instead_of_computing_them(seed, steps):
    """The backward pass of a loop reads the carries saved after each step where the step's
    rules want its results (tanh's output), so the forward products are not computed again:
    two products forward, four backward (two each), not six. Carries passed through
    unchanged, set to a constant, counted in integers or updated from another carry keep
    JAX's gradients."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(4, 4)).astype(np.float32) / 2
    u = rng.normal(size=(3, 4)).astype(np.float32)
    xs = rng.normal(size=(steps, 2, 3)).astype(np.float32)

    def loss(np_, lax_, w, u, xs):
        def step(i, c):
            h, kept, zero, n, t = c
            h = np_.tanh(h @ w + xs[i] @ u)
            return h, kept, np_.zeros_like(zero), n + 1, t * 0.5 + h * kept
        h0 = np_.ones((2, 4)) * 0.1
        h, kept, zero, n, t = lax_.fori_loop(0, steps, step,
                                             (h0, h0 * 2, h0, np_.int32(0), h0))
        return np_.sum(h ** 2) + np_.sum(t * zero) + np_.sum(t) * n + np_.sum(kept)

    f = ember.jit(ember.grad(lambda *a: loss(jnp, ember.lax, *a), argnums=(0, 1, 2)))
    ours = f(w, u, xs)
    theirs = jax.grad(lambda *a: loss(J, jax.lax, *a), argnums=(0, 1, 2))(w, u, xs)
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, np.asarray(b), rtol=1e-4, atol=1e-5)
    backward = f.lower(w, u, xs).as_text("ember").split('"ember.for"')[-1]
    assert backward.count("ember.dot_general") == 4, backward


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalar_loop_carries_through_every_function_match_jax(dtype):
    """A scalar carried through a loop runs as host code in IREE's VM, which has no
    math.copysign, cosh, float64 tan, arith.maxnumf or complex ops: bodies with those stay
    kernels (value_and_grad of such loops through arcsinh, arctan2, sinh's derivative, complex
    sqrt, tanh, exp and log failed to compile)."""
    def step(np_, s):
        terms = [np_.sin(s), np_.cos(s), np_.tan(s), np_.sinh(s), np_.arctanh(s * 0.1),
                 np_.arctan(s), np_.arctan2(s, 2.0), np_.expm1(s), np_.log1p(s),
                 np_.arcsinh(s), np_.arccosh(s + 2.0), np_.real(np_.exp(s + 1j)),
                 np_.real(np_.sqrt(s - 1j)), np_.real(np_.tanh(s + 1j)),
                 np_.real(np_.log(s + 1j)), s ** 1.5]
        return sum(terms) * 0.05 + 0.1

    def run(np_, lax):
        return lambda v: lax.fori_loop(0, 3, lambda i, s: step(np_, s), v)

    x = dtype(0.5)
    with setting("ember_enable_x64", dtype == np.float64):
        value, grad = ember.jit(ember.value_and_grad(run(jnp, ember.lax)))(x)
    with jax.enable_x64(dtype == np.float64):
        want, want_grad = jax.value_and_grad(run(J, jax.lax))(x)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    assert np.asarray(value).dtype == dtype
    assert_close(value, want, rtol=tol)
    assert_close(grad, want_grad, rtol=10 * tol)


def test_control_flow_in_forward_mode_and_higher_order():
    """jvp (the transpose of the vjp), grad of grad and the hessian through cond and loops."""
    lax, jlax = ember.lax, jax.lax

    def f(np_, lx, v):
        c = lx.cond(v[0] > 0, lambda: np_.sin(v) * v[1], lambda: v ** 3)
        return np_.sum(lx.fori_loop(0, 3, lambda i, s: np_.tanh(s * v), c))

    x = np.array([0.5, -0.3, 0.8], np.float32)
    t = np.array([1.0, 2.0, -1.0], np.float32)
    out, tangent = ember.jvp(lambda v: f(jnp, lax, v), (x,), (t,))
    jout, jtangent = jax.jvp(lambda v: f(J, jlax, v), (x,), (t,))
    assert_close(out, jout, rtol=1e-5)
    assert_close(tangent, jtangent, rtol=1e-4, atol=1e-6)
    assert_close(ember.hessian(lambda v: f(jnp, lax, v))(x),
                 jax.hessian(lambda v: f(J, jlax, v))(x), rtol=1e-3, atol=1e-5)
    def w(np_, lx):  # forward mode through while_loop, which reverse mode refuses
        def f(v):
            c = lx.while_loop(lambda c: c[1] < 5,
                              lambda c: (np_.sin(c[0]) * v + c[0], c[1] + 1), (v, 0))
            return np_.sum(c[0] ** 2)
        return f

    out, tangent = ember.jvp(w(jnp, lax), (x,), (t,))
    jout, jtangent = jax.jvp(w(J, jlax), (x,), (t,))
    assert_close(out, jout, rtol=1e-5)
    assert_close(tangent, jtangent, rtol=1e-4)
    assert_close(ember.jacfwd(w(jnp, lax))(x), jax.jacfwd(w(J, jlax))(x), rtol=1e-4,
                 atol=1e-5)
    # forward mode through a scan is one loop carrying tangents: nothing saved a step
    s = lambda np_, lx, v: np_.sum(lx.scan(  # noqa: E731
        lambda h, xi: (np_.tanh(h * v + xi), np_.sum(h)), np_.zeros(3), np.stack([x, t]))[1])
    text = ember.jit(lambda v: ember.jvp(lambda u: s(jnp, lax, u), (v,), (x,))[1]).lower(
        x).as_text("ember")
    assert text.count('"ember.for"') == 1
    assert_close(ember.jvp(lambda u: s(jnp, lax, u), (x,), (t,))[1],
                 jax.jvp(lambda u: s(J, jlax, u), (x,), (t,))[1], rtol=1e-5, atol=1e-6)
    g = lambda np_, lx, s: lx.scan(lambda c, xi: (np_.sin(c * xi), c), s, x)[0]  # noqa: E731
    assert_close(ember.grad(ember.grad(lambda s: g(jnp, lax, s)))(0.7),
                 jax.grad(jax.grad(lambda s: g(J, jlax, s)))(0.7), rtol=1e-4)


def _custom_loss(lib, np_):
    @lib.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (np_.clip(g, -1.0, 1.0),))

    @lib.custom_jvp
    def logsumexp(x):
        return np_.log(np_.sum(np_.exp(x)))

    @logsumexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        y = logsumexp(x)
        return y, np_.sum(np_.exp(x - y) * t)

    @lib.custom_vjp
    def scaled(x, k):  # a deliberately wrong derivative: twice the true one in x
        return x * k

    scaled.defvjp(lambda x, k: (x * k, k), lambda k, g: (g * k * 2.0, np_.sum(g) * 0.0))

    def loss(x):
        h = lib.checkpoint(lambda v: np_.tanh(np_.sin(v) * v))(x)
        return (np_.sum(clip_gradient(h * 10.0) ** 2) + logsumexp(x) +
                np_.sum(scaled(x, 3.0)))
    return loss


def test_custom_rules_and_checkpoint_match_jax():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    ours, theirs = _custom_loss(ember, jnp), _custom_loss(jax, J)
    assert_close(ember.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-5, atol=1e-6)
    assert_close(ember.jit(ours)(x), jax.jit(theirs)(x), rtol=1e-6)
    both = np.stack([x, 2 * x])
    assert_close(ember.vmap(ember.grad(ours))(both), jax.vmap(jax.grad(theirs))(both),
                 rtol=1e-5, atol=1e-6)
    # grad of vmap: the batched calls keep the users' rules (`scaled`'s is wrong on purpose)
    assert_close(ember.grad(lambda b: jnp.sum(ember.vmap(ours)(b)))(both),
                 jax.grad(lambda b: J.sum(jax.vmap(theirs)(b)))(both), rtol=1e-5, atol=1e-6)
    # forward mode through custom_jvp (JAX refuses jvp of a custom_vjp function; Ember
    # transposes the bwd rule, which is linear in its cotangent)
    @ember.custom_jvp
    def softplus(v):
        return jnp.log1p(jnp.exp(v))

    softplus.defjvps(lambda t, out, v: t / (1 + jnp.exp(-v)))
    t = np.arange(5, dtype=np.float32)
    _, tangent = ember.jvp(lambda v: jnp.sin(softplus(v)), (x,), (t,))
    _, jtangent = jax.jvp(lambda v: J.sin(jax.nn.softplus(v)), (x,), (t,))
    assert_close(tangent, jtangent, rtol=1e-5, atol=1e-6)
    # checkpoint: the backward pass computes sin again, after the cotangent is known
    text = ember.jit(ember.grad(ours)).lower(x).as_text("ember")
    assert "ember.after" in text and text.count("ember.sin") >= 2


def test_checkpoint_policies_choose_what_is_computed_again():
    rng = np.random.default_rng(3)
    w, x = (rng.normal(size=s).astype(np.float32) for s in ((8, 8), (4, 8)))

    def loss(lib, np_, policy):
        def block(w, x):
            h = lib.ad_checkpoint.checkpoint_name(np_.tanh(x @ w), "h")
            return np_.sin(h @ w)
        return lambda w, x: np_.sum(lib.checkpoint(block, policy=policy)(w, x) ** 2)

    def policies(lib):
        p = lib.checkpoint_policies
        return {"none": None, "nothing": p.nothing_saveable, "everything": p.everything_saveable,
                "dots": p.dots_saveable, "unbatched_dots": p.dots_with_no_batch_dims_saveable,
                "h": p.save_only_these_names("h"), "not_h": p.save_any_names_but_these("h"),
                "h_or_dots": p.save_from_both_policies(p.save_only_these_names("h"),
                                                       p.dots_saveable)}

    want = jax.grad(loss(jax, J, None))(w, x)
    counts = {}
    for (name, ours), theirs in zip(policies(ember).items(), policies(jax).values(),
                                    strict=True):
        assert_close(ember.grad(loss(ember, jnp, ours))(w, x), want, rtol=1e-5, atol=1e-5)
        assert_close(jax.grad(loss(jax, J, theirs))(w, x), want, rtol=1e-5, atol=1e-5)
        text = ember.jit(ember.grad(loss(ember, jnp, ours))).lower(w, x).as_text("ember")
        counts[name] = (text.count("ember.dot_general"), text.count("ember.tanh"))
    # forward: 2 products, 1 tanh; backward: 3 products, and what is computed again
    assert counts["none"] == counts["nothing"] == counts["not_h"] == (7, 2)
    assert counts["everything"] == counts["h_or_dots"] == (5, 1)
    # tanh reads only a kept product: the forward pass's is kept too (JAX computes it again)
    assert counts["dots"] == counts["unbatched_dots"] == (5, 1)
    assert counts["h"] == (6, 1)  # h @ w again
    with pytest.raises(TypeError, match="checkpoint requires a policy"):
        ember.checkpoint(lambda v: v, policy="dots")


def test_custom_rule_errors():
    x = np.ones(3, np.float32)

    @ember.custom_vjp
    def f(v):
        return v * 2

    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function f"):
        ember.grad(lambda v: jnp.sum(f(v)))(x)
    f.defvjp(lambda v: (v * 2, None), lambda _, g: (g, g))
    with pytest.raises(TypeError, match="f's bwd must return a tuple of 1 cotangents"):
        ember.grad(lambda v: jnp.sum(f(v)))(x)
    f.defvjp(lambda v: (v * 2, None), lambda _, g: (jnp.sum(g),))
    with pytest.raises(ValueError, match="f's bwd must return cotangents of the arguments' "
                                         "shapes, but output 0 is f32\\[\\]"):
        ember.grad(lambda v: jnp.sum(f(v)))(x)


def test_gradients_of_a_registered_dataclass():
    """Parameters as a registered dataclass: the gradient is one of the same class, its meta
    fields kept."""
    import dataclasses
    import functools

    @functools.partial(ember.tree_util.register_dataclass, data_fields=["w", "b"],
                       meta_fields=["relu"])
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        relu: bool

    def loss(np_, layer, x):
        y = x @ layer.w + layer.b
        return np_.sum((np_.maximum(y, 0) if layer.relu else y) ** 2)

    w = np.array([[1.0, -1.0], [0.5, 2.0]], np.float32)
    b = np.array([0.1, -0.2], np.float32)
    x = np.array([[1.0, 1.0], [-2.0, 0.5]], np.float32)
    g = ember.grad(lambda p: loss(jnp, p, x))(Layer(w, b, True))
    jw, jb = jax.grad(lambda w_, b_: loss(J, Layer(w_, b_, True), x), argnums=(0, 1))(w, b)
    assert isinstance(g, Layer) and g.relu is True
    assert_close(g.w, jw)
    assert_close(g.b, jb)


def test_transformations_made_again_of_one_function_trace_once():
    """grad(f), value_and_grad, vmap, jacrev, jacfwd and hessian made again every step of a
    Python loop (as Newton's method is written) are the same function, traced and compiled
    once, as jit's cache is per function; a fresh lambda each step still gets its own."""
    def f(x):
        return jnp.sum(jnp.sin(x) * x + x * x * 0.5)

    x = jnp.asarray(np.linspace(0, 1, 8, dtype=np.float32))
    makers = [lambda: ember.grad(f), lambda: ember.value_and_grad(f),
              lambda: ember.vmap(ember.grad(f)), lambda: ember.jacrev(f),
              lambda: ember.jacfwd(f), lambda: ember.hessian(f)]
    for make in makers:
        make()(x[None] if make is makers[2] else x)  # the first: traces and compiles
        with ember.count_events("trace") as traces:
            for _ in range(3):
                got = make()(x[None] if make is makers[2] else x)
        assert traces() == 0, make
    want = jax.hessian(lambda v: jax.numpy.sum(jax.numpy.sin(v) * v + v * v * 0.5))(
        np.asarray(x))
    assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert ember.grad(f) is ember.grad(f) and ember.grad(f) is not ember.grad(f, argnums=(0,))
