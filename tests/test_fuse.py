"""ember-fuse: fused programs give the same answers and never more dispatches."""

import functools

import jax  # the oracle (a test dependency)
import jax.numpy as jax_np
import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st
from tolerances import tolerance

import ember
import ember.numpy as jnp
from ember.compiler import fuse, iree_driver, pipeline
from helpers import assert_close, setting


def selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)


def softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def layernorm(x):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5)


def gelu(x):
    return 0.5 * x * (1 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def _dispatches(fun, args, passes):
    module = pipeline.clone(ember.jit(fun).trace(*args).module)
    saved, pipeline.EMBER_PASSES = pipeline.EMBER_PASSES, passes
    try:
        pipeline.optimize(module)
        texts = {"ember": str(module)}
        pipeline.lower(module)
        texts["linalg"] = str(module)
    finally:
        pipeline.EMBER_PASSES = saved
    return texts, iree_driver.dispatch_count(texts["linalg"], iree_driver.target("cpu"))


@pytest.mark.parametrize("fun", [selu, softmax, layernorm, gelu])
def test_fusion_never_adds_dispatches(fun):
    x = np.random.default_rng(0).normal(size=(64, 256)).astype(np.float32)
    plain, before = _dispatches(fun, (x,), ("ember-canonicalize",))
    fused, after = _dispatches(fun, (x,), ("ember-canonicalize", "ember-fuse"))
    assert after <= before, (before, after)
    assert fused["linalg"].count("linalg.generic") <= plain["linalg"].count("linalg.generic")
    if fun in (selu, gelu):  # one elementwise chain: one ember.fusion, one linalg.generic
        assert fused["ember"].count('"ember.fusion"') == 1
        assert fused["linalg"].count("linalg.generic") == 1
    reference = {selu: lambda v: np.where(v > 0, 1.05 * v, 1.05 * (1.67 * np.exp(v) - 1.67)),
                 softmax: lambda v: np.exp(v - v.max(-1, keepdims=True)) / np.exp(
                     v - v.max(-1, keepdims=True)).sum(-1, keepdims=True),
                 layernorm: lambda v: (v - v.mean(-1, keepdims=True)) / np.sqrt(
                     v.var(-1, keepdims=True) + 1e-5),
                 gelu: lambda v: 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v**3)))}
    # The default pipeline fuses.
    assert_close(ember.jit(fun)(x), reference[fun](x).astype(np.float32), rtol=1e-4, atol=1e-5)


def test_fusion_merges_what_iree_alone_splits(monkeypatch):
    """A column reduction of an elementwise product: IREE's default fusion forms 2
    dispatches, the fused reduction (one linalg.generic) is 1, as is IREE's aggressive
    fusion (which Ember tries first where it compiles: iree_driver.attempts)."""
    def col_reduce(x, v):
        return jnp.sum(jnp.exp(x) * v, axis=0)

    x = np.random.default_rng(1).normal(size=(256, 512)).astype(np.float32)
    v = np.linspace(-1, 1, 512, dtype=np.float32)
    unfused, fused = ("ember-canonicalize",), ("ember-canonicalize", "ember-fuse")
    assert [_dispatches(col_reduce, (x, v), p)[1] for p in (unfused, fused)] == [1, 1]
    monkeypatch.setattr(iree_driver, "attempts", lambda text, tgt: (tgt,))
    assert [_dispatches(col_reduce, (x, v), p)[1] for p in (unfused, fused)] == [2, 1]
    assert_close(ember.jit(col_reduce)(x, v), (np.exp(x) * v).sum(0), rtol=1e-4, atol=1e-3)


def test_reducing_over_a_dimension_only_a_broadcast_makes():
    """A fused reduction whose loop has a dim that no input reads (the broadcast made it):
    linalg needs an operand that spans it (it failed to parse: non-invertible maps)."""
    x = np.random.default_rng(1).normal(size=(4, 4)).astype(np.float32)
    f = lambda a: jnp.sum(jnp.broadcast_to(a[:, :1], (3, 4, 4)) ** 2 + a)  # noqa: E731
    assert_close(ember.jit(f)(x), np.sum(np.broadcast_to(x[:, :1], (3, 4, 4)) ** 2 + x),
                 rtol=1e-5)
    g = lambda a: jnp.sum(jnp.broadcast_to(a, (5, 4, 4)), axis=(0, 1))  # noqa: E731
    assert_close(ember.jit(g)(x), np.sum(np.broadcast_to(x, (5, 4, 4)), axis=(0, 1)),
                 rtol=1e-5)


def test_layernorm_is_one_dispatch_and_gathers_take_the_plain_target():
    """IREE's aggressive fusion puts layernorm's two reductions and its elementwise tail in
    one dispatch (default fusion: two, with the centred data written between them); modules
    it cannot compile (a gather reading another op's result) take the plain target."""
    x = np.random.default_rng(2).normal(size=(64, 256)).astype(np.float32)
    assert _dispatches(layernorm, (x,), ("ember-canonicalize", "ember-fuse"))[1] == 1

    def gathered_softmax(x, i):
        logp = jax_like_log_softmax(x)
        return jnp.take_along_axis(logp, i[:, None], axis=1)

    i = np.arange(64, dtype=np.int32) % 256
    texts, _ = _dispatches(gathered_softmax, (x, i), ("ember-canonicalize", "ember-fuse"))
    assert iree_driver.attempts(texts["linalg"], iree_driver.target("cpu"))[0] == (
        iree_driver.target("cpu"))
    assert iree_driver.attempts(_dispatches(layernorm, (x,), ())[0]["linalg"],
                                iree_driver.target("cpu"))[0] != iree_driver.target("cpu")
    logp = x - x.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    assert_close(ember.jit(gathered_softmax)(x, i), logp[np.arange(64), i][:, None],
                 rtol=1e-5, atol=1e-5)
    wide = x.astype(np.float64)
    expected = (wide - wide.mean(1, keepdims=True)) / np.sqrt(wide.var(1, keepdims=True) + 1e-5)
    assert_close(ember.jit(layernorm)(x), expected.astype(np.float32), rtol=1e-4, atol=1e-4)


def jax_like_log_softmax(x):
    shifted = x - jnp.max(x, axis=1, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))


def softmax_and_exp(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True), e


@few_examples(6)
@given(rows=st.integers(1, 24), cols=st.sampled_from([1, 5, 256, 1024, 1025, 2048]),
       dtype=st.sampled_from([np.float16, np.float32, np.float64]), seed=st.integers(0, 99))
def test_cpu_fusion_keeps_the_reduced_chain_and_matches_numpy(rows, cols, dtype, seed):
    """ember-fuse-cpu: the exp that softmax's sum and division read is the sum's fusion's
    second result (rows of 2 elements to 4 KiB), also returned; values as NumPy's in
    float64."""
    x = np.random.default_rng(seed).normal(scale=4, size=(rows, cols)).astype(dtype)
    with setting("ember_enable_x64", dtype == np.float64):
        lowered = ember.jit(softmax_and_exp).lower(x)
        got = lowered.compile()(x)
    # rows of one element have no reduction left (ember-canonicalize: a reshape)
    kept = 1 < cols and cols * np.dtype(dtype).itemsize <= fuse.KEPT_ROW_BYTES
    assert (":2 = linalg.generic" in lowered.as_text("linalg")) == kept
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max(-1, keepdims=True))
    for a, b in zip(got, (e / e.sum(-1, keepdims=True), e), strict=True):
        assert_close(a, b.astype(dtype), **tolerance(dtype, approx=True))


def test_only_cpu_targets_keep_the_reduced_chain():
    """IREE's GPU backends fail to distribute a generic with a reduced and a kept output
    (IREE 3.13): their pipeline fuses with plain ember-fuse, and a softmax compiles for
    CUDA. On the CPU softmax stays one dispatch, also in a module IREE's aggressive fusion
    does not take (a loop: the plain target), whose values are right too."""
    assert "ember-fuse-cpu" in pipeline.ember_passes("cpu-async")
    assert "ember-fuse-cpu" not in pipeline.ember_passes("cuda:sm_80")
    x = np.random.default_rng(3).normal(size=(64, 256)).astype(np.float32)
    cuda = ember.jit(softmax, device="cuda").lower(x)
    assert ':2 = "ember.fusion"' not in cuda.as_text("ember")
    cuda.compile()
    texts, count = _dispatches(softmax, (x,), pipeline.ember_passes("cpu"))
    assert ":2 = linalg.generic" in texts["linalg"] and count == 1

    def looped(v):
        return softmax(ember.lax.fori_loop(0, 3, lambda i, a: a * 0.5, v))

    lowered = ember.jit(looped).lower(x)
    assert ":2 = linalg.generic" in lowered.as_text("linalg")
    first = iree_driver.attempts(lowered.as_text("linalg"), iree_driver.target("cpu"))[0]
    assert iree_driver._AGGRESSIVE_FUSION not in first.flags
    e = np.exp(x * 0.125 - (x * 0.125).max(1, keepdims=True))
    assert_close(lowered.compile()(x), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def moments(np_, x):
    """layernorm, var and std over the last axis, written with `np_` (Ember's or JAX's)."""
    m = np_.mean(x, axis=-1, keepdims=True)
    v = np_.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / np_.sqrt(v + 1e-5), np_.var(x, axis=-1), np_.std(x, axis=-1)


@few_examples(8)
@given(rows=st.integers(1, 9), cols=st.sampled_from([1, 2, 7, 256, 1024, 1031]),
       offset=st.sampled_from([0.0, 1.0, -300.0, 1e4]),
       scale=st.sampled_from([1e-3, 1.0, 1e3]),
       shape=st.sampled_from(["normal", "outlier first", "constant"]),
       seed=st.integers(0, 99))
def test_one_pass_variance_matches_numpy_on_ill_conditioned_rows(rows, cols, offset, scale,
                                                                 shape, seed):
    """ember-moments: the variance of float32 rows from Σx and Σx² in float64, in one pass,
    against NumPy's two passes in float64 on the same data, and as close as JAX's: rows far
    from zero (|mean| / std up to 1e7), an outlier as the first element, constant rows
    (variance 0, never negative: std is no NaN)."""
    rng = np.random.default_rng(seed)
    x = offset + scale * rng.normal(size=(rows, cols))
    if shape == "outlier first":
        x[:, 0] = offset + 1e3 * scale * np.sqrt(cols)
    if shape == "constant":
        x[:] = offset + scale
    x = x.astype(np.float32)
    lowered = ember.jit(lambda v: moments(jnp, v)).lower(x)
    if cols > 1:  # (a sum over one element is the element: no sums left)
        assert '"ember.convert"' in lowered.as_text("ember")  # the rewrite fired
    got = lowered.compile()(x)
    wide = x.astype(np.float64)
    mean = wide.mean(-1, keepdims=True)
    var = ((wide - mean) ** 2).mean(-1, keepdims=True)
    # Both forms deviate from a float32 mean m: |m - mean| ~ 2^-24 |mean|, which adds
    # (m - mean)^2 to the variance and shifts each deviation.
    shift = 4 * 2.0**-24 * np.abs(mean[:, 0])
    normed = (wide - mean) / np.sqrt(var + 1e-5)
    want = (normed, var[:, 0], np.sqrt(var[:, 0]))
    bounds = (1e-4 * np.abs(normed) + (shift / np.sqrt(var[:, 0] + 1e-5))[:, None],
              1e-5 * want[1] + shift**2, 1e-5 * want[2] + shift)
    theirs = jax.jit(lambda v: moments(jax_np, v))(x)
    for ours, jaxs, exact, bound in zip(got, theirs, want, bounds, strict=True):
        ours = np.asarray(ours, np.float64)
        err, jax_err = np.abs(ours - exact), np.abs(np.asarray(jaxs, np.float64) - exact)
        assert np.all(err <= np.maximum(bound, 2 * jax_err)), (err, jax_err, exact)
    assert np.all(np.asarray(got[1]) >= 0)


def test_moments_only_for_cpu_targets():
    """GPU backends keep the two-pass form (float64 is slow or missing there)."""
    assert "ember-moments" in pipeline.ember_passes("cpu")
    assert "ember-moments" not in pipeline.ember_passes("cuda:sm_80")


@pytest.mark.runtime
@pytest.mark.parametrize("name", ["sum", "maximum", "polynomial", "loop"])
def test_fusions_of_many_inputs_fit_the_dispatch_bindings(name):
    """IREE binds at most 32 buffers to a dispatch, and its dispatch formation does not
    count them: a sum of 40 arrays was one dispatch of 41, and its module failed to load.
    ember-fuse stops a group at FUSION_INPUTS inputs and reads the rest through a barrier.
    Elementwise chains over 45 arrays (and a loop body over 40), against NumPy."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(16).astype(np.float32) for _ in range(45)]
    programs = {
        "sum": lambda m, xs: sum(xs[1:], xs[0]),
        "maximum": lambda m, xs: functools.reduce(m.maximum, xs),
        "polynomial": lambda m, xs: sum((x * x * k for k, x in enumerate(xs)), xs[0] * 0),
        "loop": lambda m, xs: _loop(m, xs[0], xs[1:41]),
    }
    f = programs[name]
    got = ember.jit(lambda *xs: f(jnp, xs))(*xs)
    assert_close(got, f(np, xs), rtol=1e-5, atol=1e-4)
    text = ember.jit(lambda *xs: f(jnp, xs)).lower(*xs).as_text("ember")
    assert '"ember.after"' in text and text.count('"ember.fusion"') >= 2


def _loop(m, c, ws):
    step = lambda i, c: sum((c * w for w in ws), c * 0) * 0.01  # noqa: E731
    if m is np:
        for i in range(3):
            c = step(i, c)
        return c
    return ember.lax.fori_loop(0, 3, step, c)


# Fusions of several results (a value kept beside what is computed from it), each result
# then transposed: IREE 3.13's transpose propagation failed on a generic of several results.
_SEVERAL = {
    "elementwise": lambda np_, x: (x * x, x - 1),
    "reduced beside its input": lambda np_, x: (np_.max(x - 1, axis=1), x - 1),
    "sum beside its input": lambda np_, x: (np_.sum(np_.exp(x), axis=-1), np_.exp(x)),
    "softmax beside its exp": lambda np_, x: (
        np_.exp(x) / np_.sum(np_.exp(x), axis=-1, keepdims=True), np_.exp(x)),
}


@pytest.mark.parametrize("fusion", _SEVERAL)
def test_transposed_results_of_multi_result_fusions_match_jax(fusion):
    def program(np_, x, transpose):
        return [transpose(np_, r) for r in _SEVERAL[fusion](np_, x)]

    for shape in ((2, 3), (2, 3, 4)):
        x = (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 5) / 8
        for transpose in (lambda np_, r: np_.transpose(r),
                          lambda np_, r: np_.moveaxis(r, 0, -1) * 2):
            got = ember.jit(lambda x, t=transpose: program(jnp, x, t))(x)
            want = jax.jit(lambda x, t=transpose: program(jax_np, x, t))(x)
            for g, w in zip(got, want, strict=True):
                assert_close(g, w, rtol=2e-6)
