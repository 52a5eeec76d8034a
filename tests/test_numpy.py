"""ember.numpy against NumPy (and JAX when installed): broadcasting, size 0, inf/nan, dtypes."""

import contextlib
import warnings

import ml_dtypes
import numpy as np
import pytest
from conftest import few_examples
from hypothesis import example, given, strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.numpy as enp
from ember.compiler import iree_driver, pipeline
from ember.dialect import VerifyError
from ember.dialect.types import bfloat16
from helpers import assert_close, setting

F32, F64, I32 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)
# Shape pairs that broadcast, including size 0 and rank 0.
PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((), (2, 2)), ((0, 3), (3,)),
         ((4, 0), (1, 0))]


def arrays(dtype, shape, finite=False):
    if dtype == F32:
        elements = st.floats(-1e3, 1e3, width=32, allow_subnormal=False)
        if not finite:
            elements = st.one_of(elements, st.sampled_from([np.inf, -np.inf, np.nan]))
    else:
        elements = st.integers(-1000, 1000)
    return hnp.arrays(dtype, shape, elements=elements)


@st.composite
def binary_case(draw, dtypes=(F32, I32)):
    shapes = draw(st.sampled_from(PAIRS))
    if draw(st.booleans()):
        shapes = shapes[::-1]
    dtype = draw(st.sampled_from(dtypes))
    return draw(arrays(dtype, shapes[0])), draw(arrays(dtype, shapes[1]))


BINARY = {
    "add": (enp.add, np.add), "subtract": (enp.subtract, np.subtract),
    "multiply": (enp.multiply, np.multiply), "maximum": (enp.maximum, np.maximum),
    "minimum": (enp.minimum, np.minimum), "less": (enp.less, np.less),
    "greater_equal": (enp.greater_equal, np.greater_equal), "equal": (enp.equal, np.equal),
    "not_equal": (enp.not_equal, np.not_equal),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_broadcast_like_numpy(name):
    ours, ref = BINARY[name]
    jitted = ember.jit(ours)

    @given(binary_case())
    def check(case):
        x, y = case
        with np.errstate(all="ignore"):
            expected = ref(x, y)
        assert_close(ours(x, y), expected)
        assert_close(jitted(x, y), expected)

    check()


@given(binary_case(dtypes=(F32,)))
def test_true_divide_and_power(case):
    x, y = case
    with np.errstate(all="ignore"):
        assert_close(enp.true_divide(x, y), x / y, rtol=1e-6)
        assert_close(ember.jit(lambda a, b: a ** 2 + abs(b) ** 0.5)(x, y),
                     x ** 2 + np.abs(y) ** np.float32(0.5), rtol=2e-5)


def test_integer_division_gives_float_like_jax():
    out = enp.true_divide(np.array([1, 2], np.int32), 2)
    assert out.dtype == F32
    assert_close(out, np.array([0.5, 1.0], np.float32))


UNARY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin,
         "cos": np.cos, "abs": np.abs, "negative": np.negative, "floor": np.floor,
         "ceil": np.ceil, "sign": np.sign}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(x=arrays(F32, st.sampled_from([(5,), (0,), (2, 3)])))
def test_unary_math(name, x):
    with np.errstate(all="ignore"):
        expected = UNARY[name](x)
    assert_close(getattr(enp, name)(x), expected, rtol=3e-6, atol=1e-6)


def test_unary_math_on_ints_promotes_to_float():
    out = enp.exp(np.array([0, 1], np.int32))
    assert out.dtype == F32
    assert_close(out, np.exp(np.array([0, 1], np.float32)), rtol=1e-6)


@st.composite
def reduction_case(draw):
    shape = draw(st.sampled_from([(4,), (2, 3), (2, 0, 3), (3, 1, 2)]))
    dtype = draw(st.sampled_from([F32, I32]))
    x = draw(arrays(dtype, shape, finite=True))
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                          st.sets(st.integers(0, len(shape) - 1), min_size=1).map(tuple)))
    return x, axis, draw(st.booleans())


@given(reduction_case())
def test_sum_and_mean(case):
    x, axis, keepdims = case
    assert_close(enp.sum(x, axis=axis, keepdims=keepdims),  # int32 stays int32, as in JAX
                 np.sum(x, axis=axis, keepdims=keepdims).astype(x.dtype), rtol=1e-5, atol=1e-3)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice is NaN
        expected = np.mean(x.astype(np.float32), axis=axis, keepdims=keepdims)
    assert_close(enp.mean(x, axis=axis, keepdims=keepdims), expected.astype(np.float32),
                 rtol=1e-5, atol=1e-3)


@given(reduction_case())
def test_max_and_min(case):
    x, axis, keepdims = case
    axes = range(x.ndim) if axis is None else np.atleast_1d(axis)
    if any(x.shape[a] == 0 for a in axes):
        with pytest.raises(ValueError, match="max requires a non-empty reduced axis"):
            enp.max(x, axis=axis)
        return
    assert_close(enp.max(x, axis=axis, keepdims=keepdims), np.max(x, axis=axis,
                                                                   keepdims=keepdims))
    assert_close(enp.min(x, axis=axis, keepdims=keepdims), np.min(x, axis=axis,
                                                                   keepdims=keepdims))


# Reductions of 2^18+ elements to a few run in two steps (compiler/split_reduction.py): each
# reduced layout here takes that path (the first and last of both arrays, the run of axes
# 1-2, a prime length that does not split), one module per dtype, values drawn.
@pytest.mark.parametrize("dtype", [F32, I32])
@given(seed=st.integers(0, 2**32 - 1))
def test_large_reductions_split_in_two_steps(dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, (3, 4, 32768)).astype(dtype)
    y = rng.integers(-50, 50, (262147,)).astype(dtype)
    x.flat[rng.integers(0, x.size)] = 99  # a maximum that only one chunk sees

    @ember.jit
    def reduce(x, y):
        return (enp.sum(x), enp.sum(x, axis=(1, 2)), enp.max(x, axis=(0, 2)), enp.min(x),
                enp.sum(x.reshape(-1, 4), axis=0), enp.all(x < 99), enp.sum(y), enp.max(y),
                enp.mean(x))

    wide = x.astype(np.float64)
    expected = (wide.sum(), wide.sum(axis=(1, 2)), x.max(axis=(0, 2)), x.min(),
                wide.reshape(-1, 4).sum(axis=0), np.all(x < 99), y.astype(np.float64).sum(),
                y.max(), wide.mean())
    for got, want in zip(reduce(x, y), expected, strict=True):
        assert_close(got, np.asarray(want).astype(np.asarray(got).dtype), rtol=1e-6)


# Whole sums of an argument split in two steps (1000 x 1024: 1000 chunks, the last of 32
# workgroups takes 8 rows, not 31; 1000 x 1000: chunks that 512 lanes do not divide).
SPLIT_SUMS = [((1 << 18,), F32), ((3 << 18,), F32), ((512, 1024), F32), ((1000, 1024), F32),
              ((3 << 18,), F64), ((1000, 1000), F32)]


@pytest.mark.parametrize("shape,dtype", SPLIT_SUMS, ids=str)
@given(seed=st.integers(0, 2**32 - 1), special=st.sampled_from([None, np.inf, -np.inf, np.nan]),
       at=st.integers(0, (1 << 18) - 1))
@few_examples()
def test_split_sums_match_numpy(shape, dtype, seed, special, at):
    """Every element reaches the sum once, wherever the chunks and workgroups end: the float64
    sum of NumPy within float rounding, a planted inf or nan wins."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    if special is not None:
        x.reshape(-1)[-1 - at] = special
    with setting("ember_enable_x64", dtype == F64):
        got = np.asarray(ember.jit(enp.sum)(x))
    want = x.astype(np.float64).sum()
    if not np.isfinite(want):
        assert_close(got, np.asarray(want, dtype))
    else:
        tolerance = np.finfo(dtype).eps * np.abs(x).astype(np.float64).sum() * 4
        assert abs(float(got) - want) <= tolerance, (float(got), want)


def _narrow_reductions(np_, x):
    e = np_.exp(x - np_.max(x, axis=-1, keepdims=True))  # kept by the sum's fusion (CPU)
    return (np_.sum(x, axis=-1), np_.sum(x), np_.mean(x, axis=-1), np_.var(x, axis=-1),
            np_.prod(x[:, :16], axis=-1), np_.sum(e, axis=-1), e)


@few_examples(4)
@given(dtype=st.sampled_from([np.float16, bfloat16]), rows=st.integers(1, 4),
       cols=st.sampled_from([16, 300, 2048, 4099]), seed=st.integers(0, 2**16))
def test_narrow_float_reductions_are_computed_in_float32_as_jaxs(dtype, rows, cols, seed):
    """float16/bfloat16 sums and products accumulate in float32 and means and variances are
    computed in it, each rounded once, as jax.numpy's: within 0.55 of a unit in the last place
    (ulp) of the exact result (in float64 from the same inputs), and one of JAX's. The sum of
    exps that softmax keeps (one fusion) too: accumulated in float16, 2048 of them drew 5."""
    import jax

    x = (np.random.default_rng(seed).random((rows, cols)) * 2).astype(dtype)
    got = ember.jit(lambda x: _narrow_reductions(enp, x))(x)
    theirs = jax.jit(lambda x: _narrow_reductions(jax.numpy, x))(x)
    wide = x.astype(np.float64)
    exact = (*_narrow_reductions(np, wide)[:5], np.asarray(got[-1], np.float64).sum(-1))
    bits = ml_dtypes.finfo(dtype).nmant

    def ulps(a, b):
        b = np.asarray(b, np.float64)
        ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(b), ml_dtypes.finfo(dtype).tiny)))
                      - bits)
        return np.abs(np.asarray(a, np.float64) - b) / ulp

    for i, (g, t, e) in enumerate(zip(got[:-1], theirs[:-1], exact, strict=True)):
        assert g.dtype == t.dtype == dtype
        assert ulps(g, e).max() <= 0.55, (i, ulps(g, e))
        if i < 5:  # JAX's exps skip bfloat16 roundings between ops (XLA's CPU backend)
            assert ulps(g, t).max() <= 1, (i, ulps(g, t))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0)])
def test_reductions_of_no_elements_are_their_identities(shape):
    """A reduction over no elements folds to its identity (ember-canonicalize): the float64
    moments fusion of std over (0, 3) had killed the process (IREE's compiler: SIGFPE)."""
    x = np.ones(shape, np.float32)
    f = ember.jit(lambda x: (enp.std(x), enp.var(x, axis=0), enp.mean(x, axis=1),
                             enp.sum(x, axis=0), enp.prod(x), enp.max(x, axis=1 - shape.index(0))))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = (np.std(x), np.var(x, axis=0), np.mean(x, axis=1), np.sum(x, axis=0),
                np.prod(x), np.max(x, axis=1 - shape.index(0)))
    for got, expected in zip(f(x), want, strict=True):
        assert_close(got, np.asarray(expected, np.float32))
    c = x.astype(np.complex64)  # complex ones are left to IREE (no complex constants)
    with np.errstate(all="ignore"):
        want = (np.mean(c), np.sum(c, axis=0), np.prod(c, axis=1))
    got = ember.jit(lambda c: (enp.mean(c), enp.sum(c, axis=0), enp.prod(c, axis=1)))(c)
    for g, expected in zip(got, want, strict=True):
        assert_close(g, np.asarray(expected, np.complex64))


def test_reductions_propagate_nan():
    x = np.array([[1.0, np.nan], [2.0, 3.0]], np.float32)
    assert_close(enp.max(x, axis=1), np.max(x, axis=1))
    assert_close(enp.sum(x, axis=0), np.sum(x, axis=0))


def test_sum_of_bool_counts():
    out = enp.sum(np.array([True, True, False]))
    assert out.dtype == I32 and int(out) == 2


MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 2)), ((3, 4), (4,)),
                 ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((0, 4), (4, 3))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@given(data=st.data())
def test_matmul_and_dot(shapes, data):
    a = data.draw(arrays(F32, shapes[0], finite=True))
    b = data.draw(arrays(F32, shapes[1], finite=True))
    assert_close(enp.matmul(a, b), np.matmul(a, b), rtol=1e-4, atol=1e-2)
    if len(shapes[0]) <= 2 and len(shapes[1]) <= 2:
        assert_close(ember.jit(enp.dot)(a, b), np.dot(a, b), rtol=1e-4, atol=1e-2)


# Products that ember-lower-to-linalg-avx512 packs into 12 x 32 tiles (2^25+ multiply-adds;
# rows padded to 12: 60, 100; columns to 32: 430, 580, 700; depths in blocks of 128 and a
# remainder), from each layout of the operands.
PACKED_SHAPES = [(48, 1024, 700), (100, 801, 430), (60, 977, 580)]


@contextlib.contextmanager
def register_tiles():
    """CPU modules lowered by ember-lower-to-linalg-avx512 whatever this CPU is (the pipeline
    picks it on full-width AVX-512 only; the tiles are IR, compiled for this CPU)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "linalg_passes", lambda target: (
            "ember-lower-to-linalg-avx512", *pipeline.LINALG_PASSES[1:])
            if iree_driver.is_cpu(target) else pipeline.LINALG_PASSES)
        yield


@given(mkn=st.sampled_from(PACKED_SHAPES), transposed=st.tuples(st.booleans(), st.booleans()),
       seed=st.integers(0, 2**32 - 1))
def test_packed_matmul_against_numpy_and_jax(mkn, transposed, seed):
    """Ember's register tiles on any CPU, the pipeline's choice here or not."""
    import jax  # the oracle (a test dependency)

    m, k, n = mkn
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n)))
    args = (a.T.copy() if transposed[0] else a, b.T.copy() if transposed[1] else b)

    def product(np_, x, y):
        return (x.T if transposed[0] else x) @ (y.T if transposed[1] else y)

    with register_tiles():
        f = ember.jit(lambda x, y: product(enp, x, y))
        assert "linalg.mmt4d" in f.lower(*args).as_text("linalg")
        out = np.asarray(f(*args))
    expected = np.asarray(jax.jit(lambda x, y: product(jax.numpy, x, y))(*args))
    assert out.shape == expected.shape and out.dtype == expected.dtype
    # A float32 product's rounding grows as eps * sqrt(depth) * sum|a_i b_i|, each element its
    # own. Ember's accumulators walk the whole depth and JAX's add up blocks of it: over 15
    # seeds of each shape Ember's worst element drew 0.08-0.11 of that bound, JAX's 0.02 in
    # one 1024-deep case (errors of 1.5e-4 and 5.4e-5 on values near 30). Each is checked
    # against the exact product, and the two against each other.
    exact = a.astype(np.float64) @ b
    bound = np.finfo(np.float32).eps * np.sqrt(k) * (np.abs(a).astype(np.float64) @ np.abs(b))
    for got in (out, expected):
        assert np.all(np.abs(got - exact) <= bound / 4), np.max(np.abs(got - exact) / bound)
    assert np.all(np.abs(out.astype(np.float64) - expected) <= bound / 2)


def test_a_scans_weights_are_packed_once_before_its_loop():
    """The linalg phase hoists loop-invariant work (LICM): an RNN cell's weight, read but
    never changed by the scan, is packed before the loop (in ember-lower-to-linalg-avx512's
    lowering, which packs products), and its values match a Python loop's."""
    rng = np.random.default_rng(0)
    h0, w = rng.standard_normal((48, 128)).astype(np.float32), (
        rng.standard_normal((128, 128)) * 0.05).astype(np.float32)  # packed: in a loop
    xs = rng.standard_normal((20, 48, 128)).astype(np.float32)

    def rnn(h, xs, w):
        return ember.lax.scan(lambda c, x: (enp.tanh(c @ w + x), None), h, xs)[0]

    with register_tiles():
        text = ember.jit(rnn).lower(h0, xs, w).as_text("linalg")
    packs = [line for line in text.splitlines() if "linalg.pack %arg2" in line]
    assert len(packs) == 1 and text.index(packs[0]) < text.index("scf.for"), text
    want = h0.astype(np.float64)
    for x in xs:
        want = np.tanh(want @ w + x)
    assert_close(ember.jit(rnn)(h0, xs, w), want.astype(np.float32), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("spec", ["ij,jk->ki", "ji,jk->ki", "bij,bjk->bki", "bij,bkj->bki"])
@given(seed=st.integers(0, 2**32 - 1))
def test_transposed_products_are_products_of_swapped_operands(spec, seed):
    """A product whose result is transposed (grad's weight cotangents, einsum's output
    order) computes the swapped product, with no transpose left, and NumPy's values."""
    rng = np.random.default_rng(seed)
    shape = dict(zip("bijk", (3, 5, 4, 6), strict=True))
    a, b = (rng.standard_normal([shape[c] for c in s]).astype(np.float32)
            for s in spec.split("->")[0].split(","))
    f = ember.jit(lambda a, b: enp.einsum(spec, a, b))
    assert_close(f(a, b), np.einsum(spec, a, b), rtol=1e-5, atol=1e-5)
    assert "ember.transpose" not in f.lower(a, b).as_text("ember")


def test_matmul_operator_and_int():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_close(ember.jit(lambda x, y: x @ y)(a, a.T), a @ a.T)


def test_matmul_shape_errors():
    with pytest.raises(ValueError, match=r"matmul requires a.shape\[-1\] == b.shape\[-2\]"):
        enp.matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))


@given(arrays(F32, (2, 3, 4)), st.sampled_from([(6, 4), (-1,), (4, -1, 2), (24, 1)]))
def test_reshape_transpose_broadcast(x, shape):
    assert_close(enp.reshape(x, shape), np.reshape(x, shape))
    assert_close(enp.transpose(x), np.transpose(x))
    assert_close(enp.transpose(x, (1, 0, 2)), np.transpose(x, (1, 0, 2)))
    assert_close(ember.jit(lambda a: a.T.reshape(shape))(x), x.T.reshape(shape))
    assert_close(enp.broadcast_to(x[:, :1], (5, 2, 3, 4)), np.broadcast_to(x[:, :1],
                                                                           (5, 2, 3, 4)))


def test_shape_errors_name_the_function():
    with pytest.raises(ValueError, match="cannot reshape array of size 6"):
        enp.reshape(np.ones((2, 3)), (4,))
    with pytest.raises(ValueError, match="broadcast_to requires"):
        enp.broadcast_to(np.ones(3), (2, 4))
    with pytest.raises(ValueError, match=r"ember.add requires shapes that broadcast together, "
                       r"got \[\(3,\), \(4,\)\]"):
        enp.add(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"sum requires axis in \[-2, 2\)"):
        enp.sum(np.ones((2, 3)), axis=2)


@given(binary_case())
def test_where(case):
    x, y = case
    cond = (x > 0) if x.dtype == F32 else (x % 2 == 0)
    assert_close(enp.where(cond, x, y), np.where(cond, x, y))
    assert_close(ember.jit(lambda c, a, b: enp.where(c, a, b))(cond, x, y), np.where(cond, x, y))


@given(arrays(F32, (6,), finite=True), st.sampled_from([np.int32, np.bool_, np.float16,
                                                        np.uint8]))
def test_astype(x, dtype):
    x = np.clip(x, 0, 200)
    assert_close(enp.asarray(x).astype(dtype), x.astype(dtype))


def test_creation():
    assert_close(enp.arange(5), np.arange(5, dtype=np.int32))
    assert_close(enp.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25, dtype=np.float32))
    assert_close(ember.jit(lambda: enp.arange(2, 11, 3))(), np.arange(2, 11, 3).astype(I32))
    assert_close(ember.jit(lambda: enp.arange(0.0, 1.0, 0.125))(),
                 np.arange(0.0, 1.0, 0.125, dtype=np.float32))
    assert_close(enp.zeros((2, 3)), np.zeros((2, 3), np.float32))
    assert_close(enp.ones(3, enp.int32), np.ones(3, np.int32))
    assert_close(enp.full((2,), 7), np.full((2,), 7, np.int32))
    assert_close(ember.jit(lambda: enp.full((2, 2), 1.5))(), np.full((2, 2), 1.5, np.float32))
    assert_close(enp.array([1, 2, 3]), np.array([1, 2, 3], np.int32))
    assert_close(enp.asarray(np.arange(3.0)), np.arange(3.0, dtype=np.float32))


# -- dtype promotion, checked against JAX when installed

DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16",
          "float32"]


def test_promotion_table_matches_jax(jax):
    import jax.numpy as jnp

    for a in DTYPES:
        for b in DTYPES:
            ours = enp.promote_types(np.dtype(getattr(jnp, a)), np.dtype(getattr(jnp, b)))
            assert ours == jnp.promote_types(getattr(jnp, a), getattr(jnp, b)), (a, b)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "float32"])
def test_weak_scalars_do_not_widen_like_jax(jax, dtype):
    import jax.numpy as jnp

    x = np.ones(2, dtype)
    for scalar in (2, 2.5):
        expected = jnp.asarray(x) * scalar
        ours = enp.asarray(x) * scalar
        assert ours.dtype == expected.dtype, (dtype, scalar)
        assert ours.weak_type == expected.weak_type
    weak = ember.jit(lambda a: a + 1.0)(3)
    assert weak.dtype == np.float32 and weak.weak_type


def test_selu_matches_jax(jax):
    import jax.numpy as jnp

    def selu(np_, x, alpha=1.67, lambda_=1.05):
        return lambda_ * np_.where(x > 0, x, alpha * np_.exp(x) - alpha)

    x = np.linspace(-5, 5, 101).astype(np.float32)
    expected = np.asarray(jax.jit(lambda v: selu(jnp, v))(x))
    assert_close(ember.jit(lambda v: selu(enp, v))(x), expected, rtol=2e-6, atol=1e-6)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.integers(-2, 1),
       st.sampled_from([np.float32, np.int32]))
def test_concatenate_and_stack_match_numpy(sizes, axis, dtype):
    arrays = [np.arange(2 * n, dtype=dtype).reshape(2, n).T.copy() for n in sizes]  # (n, 2)
    arrays = [a if axis % 2 == 0 else a.T.copy() for a in arrays]
    got = enp.concatenate(arrays, axis=axis)
    assert_close(got, np.concatenate(arrays, axis=axis))
    same = [np.full((2, 3), k, dtype) for k in range(len(sizes))]
    stack_axis = axis % 3
    assert_close(enp.stack(same, axis=stack_axis), np.stack(same, axis=stack_axis))
    assert_close(ember.jit(lambda *xs: enp.stack(xs, axis=stack_axis))(*same),
                 np.stack(same, axis=stack_axis))
    assert_close(enp.vstack(same), np.vstack(same))
    assert_close(enp.hstack(same), np.hstack(same))


def test_concatenate_errors_name_the_shapes():
    with pytest.raises(VerifyError, match=r"differ only in dimension 0.*f32\[2,3\].*f32\[2,4\]"):
        enp.concatenate([np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)])
    with pytest.raises(ValueError, match="stack requires arrays of one shape"):
        enp.stack([np.ones(2), np.ones(3)])


@given(hnp.arrays(np.float32, st.sampled_from([(5,), (3, 4)]),
                  elements=st.floats(-100, 100, width=32)),
       st.sampled_from([None, 0, -1, (0,)]), st.integers(0, 1), st.booleans())
def test_var_std_match_numpy(x, axis, ddof, keepdims):
    if axis is not None and x.ndim == 1 and axis not in (0, -1, (0,)):
        return
    expected = np.var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    assert_close(enp.var(x, axis=axis, ddof=ddof, keepdims=keepdims), expected.astype(np.float32),
                 rtol=1e-4, atol=1e-3)
    assert_close(ember.jit(lambda v: enp.std(v, axis=axis, ddof=ddof, keepdims=keepdims))(x),
                 np.std(x, axis=axis, ddof=ddof, keepdims=keepdims).astype(np.float32),
                 rtol=1e-4, atol=1e-3)


@given(hnp.arrays(np.float32, (6,), elements=st.floats(-10, 10, width=32)),
       st.floats(-5, 0, width=32), st.floats(0, 5, width=32))
def test_clip_matches_numpy(x, lo, hi):
    assert_close(enp.clip(x, np.float32(lo), np.float32(hi)), np.clip(x, lo, hi))
    assert_close(enp.clip(x, a_max=np.float32(hi)), np.clip(x, None, hi))
    ints = np.arange(-3, 4, dtype=np.int32)
    assert_close(enp.clip(ints, -1, 2), np.clip(ints, -1, 2))


SUMMED_UNARY = {"negative": np.negative, "exp": np.exp, "tanh": np.tanh, "abs": np.abs,
                "sin": np.sin, "square": np.square, "positive": np.positive}


@given(name=st.sampled_from(sorted(SUMMED_UNARY)), rows=st.integers(2, 9), cols=st.integers(2, 9),
       b_is=st.sampled_from(["a column", "a row", "a matrix", "a row, summed whole",
                             "a row, a 3-D product"]), seed=st.integers(0, 2**16))
@example(name="square", rows=2, cols=2, b_is="a row, summed whole", seed=0)  # crashed IREE
def test_a_sum_of_a_unary_op_times_an_input_keeps_the_unary_op(name, rows, cols, b_is, seed):
    """IREE's data tiling took sum(f(a) * b) for a contraction and dropped f; a plain
    product summed whole, or a 3-D one, failed to compile (or crashed the compiler): a
    square (a * a) summed whole with a row did until it counted as a unary op."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
    b = rng.uniform(-2, 2, rows if b_is == "a column" else (rows, cols) if b_is == "a matrix"
                    else cols).astype(np.float32)
    f, ref = getattr(enp, name), SUMMED_UNARY[name]
    if b_is == "a row, summed whole":
        got = ember.jit(lambda a, b: enp.sum(f(a) * b))(a, b)
        expected = (ref(a) * b).sum()
    elif b_is == "a row, a 3-D product":
        got = ember.jit(lambda a, b: enp.sum(f(a)[None] * b, axis=(1, 2)))(a, b)
        expected = (ref(a)[None] * b).sum(axis=(1, 2))
    elif b_is == "a column":
        got = ember.jit(lambda a, b: (f(a) * b[:, None]).sum(0))(a, b)
        expected = (ref(a) * b[:, None]).sum(0)
    else:
        got = ember.jit(lambda a, b: enp.sum(b * f(a), axis=1))(a, b)
        expected = (b * ref(a)).sum(1)
    assert_close(np.asarray(got), expected, rtol=1e-5, atol=1e-5)
