"""ember.vmap against jax.vmap: each batching rule over random shapes and mapped axes,
composition with jit and grad (per-example gradients), in_axes/out_axes/axis_size."""

import jax  # the oracle (a test dependency)
import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
from ember.dialect import OPS, batching
from helpers import assert_close

J = jax.numpy


def test_every_row_has_a_batching_rule_or_says_why_not():
    rules, not_yet = set(batching.RULES), set(batching.NOT_YET)
    assert not rules & not_yet
    missing = {op.name for op in OPS.values()} - {op.name for op in rules | not_yet}
    assert not missing, sorted(missing)


W = np.random.default_rng(9).normal(size=(3, 2)).astype(np.float32)
IDX = np.array([0, 2, -1])

# (ember function, jax function): per-element functions of an f32[4, 3] value.
CASES = {
    "elementwise": lambda np_: lambda a: np_.sin(a) * 2.0 + np_.maximum(a, 0.5),
    "compare_select": lambda np_: lambda a: np_.where(a > 0, a, -a * 3),
    "convert": lambda np_: lambda a: (a * 10).astype(np.int32).astype(np.float32),
    "reductions": lambda np_: lambda a: np_.sum(a, axis=0) + np_.max(a, axis=1).sum(),
    "matmul": lambda np_: lambda a: a @ W,
    "matmul_rhs": lambda np_: lambda a: W.T @ a.T,
    "einsum": lambda np_: lambda a: np_.einsum("ij,ik->jk", a, a),
    "reshape_transpose": lambda np_: lambda a: a.T.reshape(2, 6),
    "broadcast": lambda np_: lambda a: np_.broadcast_to(a[:, :1], (2, 4, 3)),
    "slices": lambda np_: lambda a: np_.concatenate([a[1:, ::2], a[:1, 1:3]], axis=0),
    "flip_cumsum": lambda np_: lambda a: np_.cumsum(np_.flip(a, axis=1), axis=0),
    "sort": lambda np_: lambda a: np_.sort(a, axis=1),
    "gather": lambda np_: lambda a: a[IDX],
    "take_axis1": lambda np_: lambda a: np_.take(a, IDX, axis=1),
    "update": lambda np_: lambda a: a.at[1:3, 0].set(a[0, :2]),
    "scatter_add": lambda np_: lambda a: a.reshape(-1).at[IDX].add(1.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
@few_examples(3)
@given(axis=st.sampled_from([0, 1, -1]), size=st.sampled_from([1, 5]),
       seed=st.integers(0, 2**31 - 1))
def test_batching_rules_match_jax(name, axis, size, seed):
    x = np.random.default_rng(seed).normal(size=(4, 3)).astype(np.float32)
    batch = np.stack([x * (i + 1) for i in range(size)], axis=axis % 3)
    ours = ember.vmap(CASES[name](jnp), in_axes=axis)(batch)
    theirs = jax.vmap(CASES[name](J), in_axes=axis)(batch)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_batched_indices_and_unbatched_operands():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4, 3)).astype(np.float32)
    idx = rng.integers(-4, 4, size=(5, 2))
    assert_close(ember.vmap(lambda a, i: a[i])(x, idx), jax.vmap(lambda a, i: a[i])(x, idx))
    assert_close(ember.vmap(lambda a, i: jnp.take(a, i % 3, axis=1))(x, idx),
                 jax.vmap(lambda a, i: J.take(a, i % 3, axis=1))(x, idx))
    table = x[0]
    assert_close(ember.vmap(lambda i: jnp.asarray(table)[i])(idx),
                 jax.vmap(lambda i: J.asarray(table)[i])(idx))
    assert_close(ember.vmap(lambda a, i: a.reshape(-1).at[i].add(1.0))(x, idx),
                 jax.vmap(lambda a, i: a.reshape(-1).at[i].add(1.0))(x, idx))
    assert_close(ember.vmap(lambda a, b: a * b, in_axes=(0, None))(x, table),
                 jax.vmap(lambda a, b: a * b, in_axes=(0, None))(x, table))
    ws = np.stack([W] * 5)
    assert_close(ember.vmap(lambda a, b: a @ b)(x, ws), jax.vmap(lambda a, b: a @ b)(x, ws),
                 rtol=1e-5)
    # a start per element (some out of range: clamped), shared or batched operands, a
    # gradient through them
    starts = np.array([0, 3, -2, 1, 9], np.int32)
    el, jl = ember.lax, jax.lax
    cases = [
        (lambda a, s: el.dynamic_slice(a, (s, 1), (2, 2)),
         lambda a, s: jl.dynamic_slice(a, (s, 1), (2, 2)), (0, 0)),
        (lambda a, s: el.dynamic_slice(a, (s % 2, s), (3, 2)),
         lambda a, s: jl.dynamic_slice(a, (s % 2, s), (3, 2)), (None, 0)),
        (lambda a, s: el.dynamic_update_slice(a, a[:2, :2] * 2.0, (s, s)),
         lambda a, s: jl.dynamic_update_slice(a, a[:2, :2] * 2.0, (s, s)), (0, 0)),
        (lambda a, s: el.dynamic_update_slice(a, jnp.ones((1, 3)), (s, 0)),
         lambda a, s: jl.dynamic_update_slice(a, J.ones((1, 3)), (s, 0)), (None, 0)),
    ]
    for ours, theirs, axes in cases:
        arg = x if axes[0] == 0 else x[0]
        assert_close(ember.vmap(ours, in_axes=axes)(arg, starts),
                     jax.vmap(theirs, in_axes=axes)(arg, starts))
    ours, theirs, _ = cases[2]
    assert_close(ember.grad(lambda a: jnp.sum(ember.vmap(ours)(a, starts) ** 2))(x),
                 jax.grad(lambda a: J.sum(jax.vmap(theirs)(a, starts) ** 2))(x))


def test_axes_and_sizes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_close(ember.vmap(lambda a: a.T, out_axes=1)(x), jax.vmap(lambda a: a.T,
                                                                    out_axes=1)(x))
    assert_close(ember.vmap(lambda a: jnp.sum(a), in_axes=2)(x),
                 jax.vmap(lambda a: J.sum(a), in_axes=2)(x))
    assert_close(ember.vmap(lambda: jnp.ones(3), axis_size=4)(),
                 jax.vmap(lambda: J.ones(3), axis_size=4)())
    out = ember.vmap(lambda a, b: (a + 1, b), in_axes=(0, None), out_axes=(0, None))(x, 2.0)
    assert_close(out[0], x + 1)
    assert float(out[1]) == 2.0
    with pytest.raises(ValueError, match="one size for the mapped axes"):
        ember.vmap(lambda a, b: a + b)(x, x[:1])
    with pytest.raises(ValueError, match="out_axes=None for an output that depends"):
        ember.vmap(lambda a: a * 2, out_axes=None)(x)


def test_per_example_gradients_and_composition():
    rng = np.random.default_rng(1)
    p = rng.normal(size=(3,)).astype(np.float32)
    xs = rng.normal(size=(6, 3)).astype(np.float32)
    ys = rng.normal(size=(6,)).astype(np.float32)

    def loss(np_):
        return lambda q, a, b: np_.sum((np_.tanh(a @ q) - b) ** 2)

    ours = ember.vmap(ember.grad(loss(jnp)), in_axes=(None, 0, 0))(p, xs, ys)
    theirs = jax.vmap(jax.grad(loss(J)), in_axes=(None, 0, 0))(p, xs, ys)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    assert_close(ember.jit(ember.vmap(ember.grad(loss(jnp)), in_axes=(None, 0, 0)))(p, xs, ys),
                 theirs, rtol=1e-5, atol=1e-6)
    g = ember.grad(lambda a: jnp.sum(ember.vmap(lambda r: jnp.tanh(r @ W))(a)))(xs)
    assert_close(g, jax.grad(lambda a: J.sum(jax.vmap(lambda r: J.tanh(r @ W))(a)))(xs),
                 rtol=1e-5, atol=1e-6)
    nested = ember.vmap(ember.vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))
    assert_close(nested(xs[0], xs[:2]), jax.vmap(jax.vmap(lambda a, b: a * b,
                                                           in_axes=(0, None)),
                                                  in_axes=(None, 0))(xs[0], xs[:2]))


def test_cond_and_switch_under_vmap_select_per_element():
    """A batched predicate (or index) runs every branch and selects, as JAX does."""
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(3, 2)

    def ours(a):
        return ember.lax.cond(jnp.sum(a) > 0, lambda v: v * 2, lambda v: -v, a)

    def theirs(a):
        return jax.lax.cond(J.sum(a) > 0, lambda v: v * 2, lambda v: -v, a)

    assert_close(ember.vmap(ours)(x), jax.vmap(theirs)(x))
    branches = [lambda v: v + 1, lambda v: v * 10, lambda v: v - 5]
    idx = np.array([0, 2, 7])  # out of range: clamped to the last branch
    assert_close(ember.vmap(lambda i, a: ember.lax.switch(i, branches, a))(idx, x),
                 jax.vmap(lambda i, a: jax.lax.switch(i, branches, a))(idx, x))
    assert_close(ember.vmap(lambda a: ember.lax.cond(True, lambda v: v + 1.0,
                                                      lambda v: v, a))(x), x + 1)


def test_loops_match_jax():
    """fori_loop / scan: one loop, carries batched as the body needs (a carry starting
    unbatched becomes batched through the body); while_loop: each element stops on its own
    predicate; and per-example gradients through scan."""
    lax = ember.lax
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(5, 7, 3)).astype(np.float32)  # 5 sequences of 7 steps
    w = (rng.normal(size=(3, 3)) / 2).astype(np.float32)

    def rnn(np_, lx):
        def f(w, seq):
            h, ys = lx.scan(lambda h, x: (np_.tanh(h @ w + x), np_.sum(h)), np_.zeros(3), seq)
            return np_.sum(h) + np_.sum(ys)
        return f

    def newton(np_, lx):
        def f(a):  # sqrt(a), a different number of steps per element
            return lx.while_loop(lambda c: np_.abs(c[0] * c[0] - a) > 1e-4 * a,
                                 lambda c: ((c[0] + a / c[0]) / 2, c[1] + 1), (a, 0))
        return f

    assert_close(ember.vmap(rnn(jnp, lax), in_axes=(None, 0))(w, xs),
                 jax.vmap(rnn(J, jax.lax), in_axes=(None, 0))(w, xs), rtol=1e-5, atol=1e-5)
    assert_close(ember.vmap(ember.grad(rnn(jnp, lax)), in_axes=(None, 0))(w, xs),
                 jax.vmap(jax.grad(rnn(J, jax.lax)), in_axes=(None, 0))(w, xs),
                 rtol=1e-4, atol=1e-5)
    a = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    assert_close(ember.vmap(lambda v: lax.fori_loop(0, 3, lambda i, c: c + v * i,
                                                    jnp.zeros(2)))(a), a * 3)
    # bounds per element: a while loop over the batch, as JAX's
    lo, hi = np.array([0, 2, 1], np.int32), np.array([3, 2, 5], np.int32)
    assert_close(ember.vmap(lambda v, b, e: lax.fori_loop(b, e, lambda i, c: c * 2 + i, v))(
        a, lo, hi), jax.vmap(lambda v, b, e: jax.lax.fori_loop(b, e, lambda i, c: c * 2 + i,
                                                              v))(a, lo, hi))
    roots, steps = ember.vmap(newton(jnp, lax))(np.array([1.0, 4.0, 100.0, 1e4], np.float32))
    jroots, jsteps = jax.vmap(newton(J, jax.lax))(np.array([1.0, 4.0, 100.0, 1e4], np.float32))
    assert_close(roots, np.asarray(jroots), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(steps), np.asarray(jsteps))


def test_pytree_in_axes_and_linearize():
    """in_axes as a pytree prefix of each argument (JAX's rule); linearize's jvp."""
    p = {"w": np.ones((3, 2), np.float32), "b": np.arange(8, dtype=np.float32).reshape(4, 2)}
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    f = lambda np_: (lambda q, v: np_.tanh(v @ q["w"] + q["b"]))  # noqa: E731
    axes = ({"w": None, "b": 0}, 0)
    assert_close(ember.vmap(f(jnp), in_axes=axes)(p, x), jax.vmap(f(J), in_axes=axes)(p, x),
                 rtol=1e-6)
    with pytest.raises(ValueError, match="in_axes specification must be a tree prefix"):
        ember.vmap(f(jnp), in_axes=({"w": None}, 0))(p, x)
    with pytest.raises(TypeError, match="in_axes leaves that are an int or None"):
        ember.vmap(f(jnp), in_axes=("0", 0))(p, x)
    out, f_jvp = ember.linearize(lambda v: jnp.sin(v) * v, x)
    jout, jf_jvp = jax.linearize(lambda v: J.sin(v) * v, x)
    assert_close(out, jout)
    assert_close(f_jvp(np.ones_like(x)), jf_jvp(np.ones_like(x)), rtol=1e-6)
