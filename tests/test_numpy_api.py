"""Reductions, shape functions, sorting and contractions of ember.numpy against jax.numpy
(values and result dtypes) and NumPy (values), over random shapes (0-size, rank 0), dtypes
and values (inf, nan, ties), eagerly and under jit."""

import jax  # the oracle (a test dependency)
import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import tolerance

import ember
import ember.numpy as enp
from helpers import assert_close, check_cases_under_jit, setting

jnp = jax.numpy

F32, I32, U8, B = (np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.bool_))
SHAPES = [(), (5,), (2, 3), (0, 3), (2, 1, 4)]


def arrays(dtype, shape, ties=False):
    if dtype == F32:
        finite = st.floats(-100, 100, width=32, allow_subnormal=False)
        if ties:
            finite = st.sampled_from([-1.0, 0.0, 2.0, -0.0])
        return hnp.arrays(dtype, shape, elements=st.one_of(
            finite, st.sampled_from([np.inf, -np.inf, np.nan])))
    if dtype == B:
        return hnp.arrays(dtype, shape)
    lo, hi = (0, 9) if dtype == U8 else (-9, 9) if ties else (-1000, 1000)
    return hnp.arrays(dtype, shape, elements=st.integers(lo, hi))


def axes_for(ndim):
    single = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    tuples = st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple) \
        if ndim else st.just(())
    return st.one_of(st.none(), single, tuples)


def compare(ours, theirs, approx=False):
    theirs = np.asarray(theirs)
    assert_close(np.asarray(ours), theirs, **tolerance(theirs.dtype, approx))


def run(data, fn, *args):
    """fn's result eagerly or under jit, drawn per example: both modes are covered at half
    the compiles (each new signature is a fresh IREE compile)."""
    return [ember.jit(fn)(*args) if data.draw(st.booleans(), "jit") else fn(*args)]


REDUCTIONS = {  # name: (dtypes, takes a tuple axis, approximate)
    "sum": ((F32, I32, U8, B), True, True), "prod": ((F32, I32), True, True),
    "max": ((F32, I32, U8), True, False), "min": ((F32, I32, B), True, False),
    "mean": ((F32, I32), True, True), "var": ((F32,), True, True),
    "std": ((F32,), True, True), "any": ((F32, I32, B), True, False),
    "all": ((F32, I32, B), True, False), "argmax": ((F32, I32), False, False),
    "argmin": ((F32, I32, U8), False, False), "nansum": ((F32,), True, True),
    "nanmax": ((F32,), True, False), "count_nonzero": ((F32, I32), True, False),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_match_jax(name):
    dtypes, tuple_axis, approx = REDUCTIONS[name]

    @few_examples()
    @given(st.data())
    def check(data):
        shape = data.draw(st.sampled_from(SHAPES))
        x = data.draw(arrays(data.draw(st.sampled_from(dtypes)), shape, ties=True))
        axis = data.draw(axes_for(len(shape)) if tuple_axis else st.one_of(
            st.none(), st.integers(-len(shape), len(shape) - 1) if shape else st.none()))
        keepdims = data.draw(st.booleans())
        try:
            expected = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
        except ValueError:  # empty argmax/max: the same refusal is expected of Ember
            with pytest.raises(ValueError):
                getattr(enp, name)(x, axis=axis, keepdims=keepdims)
            return
        for got in run(data, lambda v: getattr(enp, name)(v, axis=axis, keepdims=keepdims),
                              x):
            compare(got, expected, approx)

    check()


RUNNING = ["cumsum", "cumprod", "sort", "argsort"]


@pytest.mark.parametrize("name", RUNNING)
def test_running_and_sorting_match_numpy_and_jax(name):
    @few_examples()
    @given(st.data())
    def check(data):
        shape = data.draw(st.sampled_from(SHAPES[1:]))
        x = data.draw(arrays(data.draw(st.sampled_from((F32, I32, B))), shape, ties=True))
        axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
        expected = getattr(jnp, name)(x, axis=axis)
        if name in ("sort", "argsort"):
            kw = {"kind": "stable"} if name == "argsort" else {}
            assert_close(getattr(np, name)(x, axis=axis, **kw).astype(np.asarray(expected).dtype),
                         np.asarray(expected))
        for got in run(data, lambda v: getattr(enp, name)(v, axis=axis), x):
            compare(got, expected, approx=name == "cumprod")

    check()


def test_descending_sorts_keep_ties_in_order():
    x = np.array([[3, 1, 3, 2, 1, 3]], np.int32)
    for fn in ("sort", "argsort"):
        compare(getattr(enp, fn)(x, descending=True), getattr(jnp, fn)(x, descending=True))


# name: how to call it on one array (the same lambda runs on enp and jnp)
SHAPE_FUNCS = {
    "ravel": lambda m, x: m.ravel(x),
    "swapaxes": lambda m, x: m.swapaxes(x, 0, -1),
    "moveaxis": lambda m, x: m.moveaxis(x, 0, -1),
    "squeeze": lambda m, x: m.squeeze(m.expand_dims(x, 0)),
    "split": lambda m, x: m.array_split(x, 2, axis=-1)[-1],
    "tile": lambda m, x: m.tile(x, (2, 1)),
    "repeat": lambda m, x: m.repeat(x, 2, axis=-1),
    "repeat_none": lambda m, x: m.repeat(x, 3),
    "flip": lambda m, x: m.flip(x),
    "flip_axis": lambda m, x: m.flip(x, -1),
    "roll": lambda m, x: m.roll(x, 2, axis=-1),
    "roll_none": lambda m, x: m.roll(x, -3),
    "pad_constant": lambda m, x: m.pad(x, 1, constant_values=7),
    "pad_edge": lambda m, x: m.pad(x, [(0, 2)] * x.ndim, mode="edge"),
    "pad_reflect": lambda m, x: m.pad(x, [(1, 1)] * x.ndim, mode="reflect"),
    "pad_wrap": lambda m, x: m.pad(x, [(2, 1)] * x.ndim, mode="wrap"),
    "tril": lambda m, x: m.tril(m.atleast_2d(x), -1),
    "triu": lambda m, x: m.triu(m.atleast_2d(x), 1),
    "broadcast_arrays": lambda m, x: m.broadcast_arrays(x, m.ones((2, 1) + x.shape[1:],
                                                                  x.dtype))[0],
    "full_like": lambda m, x: m.full_like(x, 3),
    "take": lambda m, x: m.take(x, m.asarray([0, -1, 2, 9]), axis=-1),
    "take_along_axis": lambda m, x: m.take_along_axis(x, m.argsort(x, axis=-1), axis=-1),
    "diagonal": lambda m, x: m.diagonal(m.atleast_2d(x), 1),
    "concat_stack": lambda m, x: m.concatenate([m.stack([x, x]), m.stack([x])]),
}
NONEMPTY = {"pad_edge", "pad_reflect", "pad_wrap", "take", "roll", "roll_none"}


@pytest.mark.parametrize("name", sorted(SHAPE_FUNCS))
def test_shape_functions_match_jax(name):
    fn = SHAPE_FUNCS[name]

    @few_examples()
    @given(st.data())
    def check(data):
        shape = data.draw(st.sampled_from([(5,), (2, 3), (3, 4)] if name in NONEMPTY
                                          else SHAPES[1:]))
        x = data.draw(arrays(data.draw(st.sampled_from((F32, I32))), shape))
        expected = fn(jnp, x)
        for got in run(data, lambda v: fn(enp, v), x):
            compare(got, expected)

    check()


def test_creation_functions_match_jax():
    for args in [(0, 1, 7), (2.5, -1, 4), (0, 10, 1), (3, 4, 0)]:
        compare(enp.linspace(*args), jnp.linspace(*args), approx=True)
        compare(enp.linspace(*args, endpoint=False), jnp.linspace(*args, endpoint=False),
                approx=True)
    for n, m, k in [(3, None, 0), (3, 5, 1), (4, 2, -1)]:
        compare(enp.eye(n, m, k), jnp.eye(n, m, k))
        compare(enp.tri(n, m, k), jnp.tri(n, m, k))
    compare(enp.identity(4, np.int32), jnp.identity(4, np.int32))
    v = np.arange(1, 4, dtype=np.float32)
    for k in (-2, 0, 1):
        compare(enp.diag(v, k), jnp.diag(v, k))


@st.composite
def einsum_case(draw):
    letters = "abcde"
    sizes = {c: draw(st.integers(1, 3)) for c in letters}
    n_ops = draw(st.integers(1, 3))
    specs = [draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3))
             for _ in range(n_ops)]
    if n_ops == 1 and len(specs[0]) >= 2 and draw(st.booleans()):
        specs[0][1] = specs[0][0]  # a repeated subscript: a diagonal
    used = sorted(set("".join("".join(s) for s in specs)))
    out = draw(st.permutations(used).map(lambda p: p[:draw(st.integers(0, len(p)))]))
    operands = [draw(hnp.arrays(F32, tuple(sizes[c] for c in s),
                                elements=st.floats(-4, 4, width=32))) for s in specs]
    return ",".join("".join(s) for s in specs) + "->" + "".join(out), operands


@few_examples(15)
@given(einsum_case())
def test_einsum_matches_numpy(case):
    subscripts, operands = case
    expected = np.einsum(subscripts, *operands).astype(np.float32)
    got = enp.einsum(subscripts, *operands)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-4)


def test_contractions_match_numpy():
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (4, 3)))
    cases = [(enp.tensordot(a, b, 1), np.tensordot(a, b, 1)),
             (enp.tensordot(a, b, ([1, 2], [1, 0])), np.tensordot(a, b, ([1, 2], [1, 0]))),
             (enp.vdot(b, b), np.vdot(b, b)), (enp.inner(a, b.T), np.inner(a, b.T)),
             (enp.outer(b, b[0]), np.outer(b, b[0])), (enp.kron(b, b[:2]), np.kron(b, b[:2])),
             (enp.einsum("...ij,jk->...ik", a, b), np.einsum("...ij,jk->...ik", a, b)),
             (ember.jit(lambda q, k: enp.einsum("bqd,bkd->bqk", q, k))(a, a),
              np.einsum("bqd,bkd->bqk", a, a))]
    for got, expected in cases:
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


def test_bad_shapes_name_the_function_and_both_shapes():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 2), np.float32)
    with pytest.raises(ValueError, match=r"tensordot.*\(2, 3\).*\(4, 2\)"):
        enp.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="einsum subscripts 'ijk'"):
        enp.einsum("ijk,jl->il", a, b)
    with pytest.raises(ValueError, match=r"split requires .*3 equal|2 equal"):
        enp.split(a, 2, axis=1)
    with pytest.raises(ValueError, match="argmax requires a non-empty axis"):
        enp.argmax(np.ones((0,), np.float32))
    with pytest.raises(TypeError, match=r"ember.sub does not support bool.*astype"):
        enp.subtract(a > 0, a > 0)  # JAX raises TypeError too
    with pytest.raises(TypeError, match="bitwise_xor requires integer"):
        enp.bitwise_xor(a, a)
    with pytest.raises(ValueError, match=r"add requires shapes that broadcast.*\(2, 3\).*\(4, 2\)"):
        enp.add(a, b)


def test_one_argument_where_is_concrete_nonzero():
    a = np.array([[0, 1, 0], [2, 0, 3]], np.int32)
    for got, expected in zip(enp.where(a), np.nonzero(a), strict=True):
        compare(got, expected.astype(np.int32))
    compare(enp.argwhere(a), np.argwhere(a).astype(np.int32))
    compare(enp.flatnonzero(a), np.flatnonzero(a).astype(np.int32))
    with pytest.raises(ember.errors.ConcretizationTypeError, match="three-argument where"):
        ember.jit(lambda v: enp.where(v > 0))(a)


X = np.array([[1.5, -np.inf, 3.0, np.nan], [np.inf, -2.0, 0.0, 4.0]], np.float32)
FINITE = np.array([[1.5, -1.0, 3.0, 2.0], [0.5, -2.0, 0.0, 4.0]], np.float32)
PUBLIC = {  # functions no other test reaches: each against jax.numpy, values and dtype
    "zeros_like": lambda np_: np_.zeros_like(FINITE, dtype=np.int32),
    "ones_like": lambda np_: np_.ones_like(FINITE),
    "ptp": lambda np_: np_.ptp(FINITE, axis=1),
    "nanmean": lambda np_: np_.nanmean(np.where(np.isinf(X), 1.0, X), axis=1),
    "isposinf": lambda np_: np_.isposinf(X),
    "isneginf": lambda np_: np_.isneginf(X),
    "allclose": lambda np_: np_.allclose(FINITE, FINITE + 1e-7),
    "array_equal": lambda np_: np_.array_equal(FINITE, FINITE.copy()),
    "float_power": lambda np_: np_.float_power(np.abs(FINITE), 2.5),
    "hsplit": lambda np_: np_.hsplit(FINITE, 2)[1],
    "vsplit": lambda np_: np_.vsplit(FINITE, 2)[0],
    "fliplr": lambda np_: np_.fliplr(FINITE),
    "flipud": lambda np_: np_.flipud(FINITE),
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_functions_match_jax(name):
    ours, theirs = PUBLIC[name](enp), PUBLIC[name](jnp)
    assert_close(ours, np.asarray(theirs), rtol=1e-6)


def test_allclose_and_array_equal_say_no():
    assert bool(enp.allclose(FINITE, FINITE + 1e-3)) is bool(jnp.allclose(FINITE, FINITE + 1e-3))
    assert bool(enp.array_equal(FINITE, FINITE + 1)) is False
    assert bool(enp.array_equal(FINITE, FINITE[:1])) is False


def test_empty_like_has_the_shape_and_dtype():
    out = enp.empty_like(FINITE, dtype=np.int8)
    assert out.shape == FINITE.shape and out.dtype == np.int8


def test_scalar_types_are_dtypes_and_constructors():
    """jnp.int32 is a dtype everywhere NumPy takes one, and callable, as in JAX."""
    for name in ("bool_", "int8", "int32", "uint8", "uint32", "float16", "float32",
                 "bfloat16", "complex64"):
        ours, theirs = getattr(enp, name), getattr(jnp, name)
        assert np.dtype(ours) == np.dtype(theirs) and ours == np.dtype(theirs)
        assert np.zeros(2, ours).dtype == np.dtype(theirs)
        got, want = ours(3), theirs(3)
        assert isinstance(got, ember.Array) and got.shape == () and got.dtype == want.dtype
        assert_close(got, want)
    assert_close(enp.float32(enp.arange(3)), jnp.float32(jnp.arange(3)))
    assert ember.jit(lambda x: enp.int32(x) + 1)(2.7).dtype == np.int32
    assert enp.arange(3).dtype == enp.int32 and {enp.float32: 1}[np.dtype(np.float32)] == 1
    # what is no dtype compares unequal (np.dtype raises ValueError for some of them)
    assert enp.float32 != ("not", "a", "dtype", 1) and enp.int32 != {"a": 1}
    assert enp.issubdtype(enp.bfloat16, enp.floating) == jnp.issubdtype(jnp.bfloat16,
                                                                         jnp.floating)
    assert enp.issubdtype(enp.uint8, enp.integer) and not enp.issubdtype(enp.int8,
                                                                         enp.floating)


def test_copies_own_their_buffers():
    x = ember.device_put(np.arange(4, dtype=np.float32))
    for copied in (enp.copy(x), x.copy(), enp.array(x), enp.asarray(x, copy=True)):
        assert copied is not x
        donate = ember.jit(lambda a: a * 2, donate_argnums=0)
        assert_close(donate(copied), np.arange(4, dtype=np.float32) * 2)
        assert_close(x, np.arange(4, dtype=np.float32))  # untouched by the donation
    assert enp.asarray(x) is x
    assert_close(ember.jit(lambda a: enp.copy(a) + 1)(x), np.arange(4, dtype=np.float32) + 1)
    m = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_close(enp.asarray(m).mT, jnp.asarray(m).mT)


@pytest.mark.parametrize("fun", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_functions_of_the_array_api(fun):
    for x, kwargs in ((np.array([200, 100, 3], np.uint8), {}),
                      (np.array([True, False, True]), {"include_initial": True}),
                      (np.arange(6, dtype=np.float32).reshape(2, 3),
                       {"axis": 1, "include_initial": True}),
                      (np.arange(6, dtype=np.int8).reshape(3, 2), {"axis": 0})):
        ours, theirs = getattr(enp, fun)(x, **kwargs), getattr(jnp, fun)(x, **kwargs)
        assert ours.dtype == theirs.dtype, (x.dtype, kwargs, ours.dtype, theirs.dtype)
        assert_close(ours, theirs)
    with pytest.raises(ValueError, match=f"{fun} requires axis"):
        getattr(enp, fun)(np.ones((2, 2)))


def test_variance_correction_is_ddof():
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    for f in ("var", "std"):
        assert_close(getattr(enp, f)(x, axis=1, correction=1),
                     getattr(jnp, f)(x, axis=1, correction=1), rtol=1e-6)
    with pytest.raises(ValueError, match="var requires ddof or correction"):
        enp.var(x, ddof=1, correction=1)


V = np.array([0.5, -1.0, 3.0, 2.0, 2.0, np.nan], np.float32)
SORTED = np.array([-1.0, 0.5, 2.0, 2.0, 3.0, np.nan], np.float32)
INTS = np.array([0, 3, 1, 3, 7, 0], np.int32)
W = np.array([0.5, 1.0, 2.0, 1.0], np.float32)
ADDED = {  # the array API's and NumPy's functions added for #16: each against jax.numpy
    "concat": lambda np_: np_.concat([FINITE, X], axis=1),
    "permute_dims": lambda np_: np_.permute_dims(FINITE[None], (2, 0, 1)),
    "matrix_transpose": lambda np_: np_.matrix_transpose(FINITE[None]),
    "pow": lambda np_: np_.pow(np.abs(FINITE), 1.5),
    "bitwise_invert": lambda np_: np_.bitwise_invert(INTS),
    "unstack": lambda np_: np_.unstack(FINITE, axis=1),
    "dstack": lambda np_: np_.dstack([FINITE, FINITE]),
    "column_stack": lambda np_: np_.column_stack([W, W]),
    "meshgrid_xy": lambda np_: np_.meshgrid(W, V[:3], INTS[:2].astype(np.float32)),
    "meshgrid_ij_sparse": lambda np_: np_.meshgrid(W, V[:3], indexing="ij", sparse=True),
    "diff": lambda np_: np_.diff(FINITE, n=2, axis=1),
    "diff_prepend": lambda np_: np_.diff(FINITE, axis=0, prepend=0.0, append=FINITE[:1]),
    "diff_bool": lambda np_: np_.diff(FINITE > 0),
    "heaviside": lambda np_: np_.heaviside(X, 0.5),
    "sinc": lambda np_: np_.sinc(FINITE),
    "ldexp": lambda np_: np_.ldexp(FINITE, INTS[:4]),
    "modf": lambda np_: np_.modf(X),
    "real_imag_conj": lambda np_: (np_.real(FINITE), np_.imag(FINITE), np_.conj(FINITE)),
    "angle": lambda np_: np_.angle(np.array([-2.0, -0.0, 0.0, 3.0, np.nan], np.float32)),
    "angle_deg": lambda np_: np_.angle(FINITE, deg=True),
    "quantile": lambda np_: np_.quantile(FINITE, 0.3, axis=1),
    "quantile_many": lambda np_: np_.quantile(FINITE, np.array([0.0, 0.25, 1.0]), axis=0,
                                              keepdims=True),
    "percentile": lambda np_: np_.percentile(FINITE, 75),
    "median": lambda np_: (np_.median(FINITE), np_.median(FINITE[:, :3], axis=1),
                           np_.median(X, axis=0, keepdims=True)),
    "quantile_nan": lambda np_: np_.quantile(X, 0.5, axis=1),
    "average": lambda np_: np_.average(FINITE, axis=1, weights=W),
    "average_returned": lambda np_: np_.average(FINITE, axis=0, returned=True),
    "nanvar": lambda np_: np_.nanvar(np.where(np.isinf(X), 1.0, X), axis=1, ddof=1),
    "nanstd": lambda np_: np_.nanstd(np.where(np.isinf(X), 1.0, X)),
    "cov": lambda np_: np_.cov(FINITE),
    "cov_y": lambda np_: np_.cov(FINITE[0], W, bias=True),
    "corrcoef": lambda np_: np_.corrcoef(FINITE, rowvar=False),
    "vecdot": lambda np_: np_.vecdot(FINITE, W),
    "cross": lambda np_: np_.cross(FINITE[:, :3], FINITE[::-1, 1:]),
    "cross_2d": lambda np_: np_.cross(FINITE[:, :2], FINITE[:, 2:]),
    "logspace": lambda np_: np_.logspace(0, 2, 5, base=2.0),
    "tril_triu_indices": lambda np_: (*np_.tril_indices(4, -1), *np_.triu_indices(3, 1, 5)),
    "diag_indices": lambda np_: np_.diag_indices(3),
    "indices": lambda np_: np_.indices((2, 3)),
    "searchsorted": lambda np_: (np_.searchsorted(SORTED, V), np_.searchsorted(SORTED, V,
                                                                               side="right")),
    "searchsorted_sorter": lambda np_: np_.searchsorted(V[:5], W, sorter=np.argsort(V[:5])),
    "interp": lambda np_: np_.interp(np.array([-3.0, 0.0, 0.5, 1.7, 2.0, 9.0], np.float32),
                                     SORTED[:5], W.repeat(2)[:5]),
    "bincount": lambda np_: np_.bincount(INTS, minlength=9, length=9),
    "bincount_weights": lambda np_: np_.bincount(INTS, weights=V.clip(0, 1), length=4),
    "clip_array_api": lambda np_: np_.clip(FINITE, min=-0.5, max=2.5),
    "nextafter": lambda np_: (np_.nextafter(X, FINITE), np_.nextafter(
        np.float32([0.0, 0.0, -0.0, 1.0, np.inf]), np.float32([1.0, -1.0, -1.0, 1.0, 0.0]))),
    "convolve": lambda np_: [np_.convolve(W, V[:3], mode) for mode in ("full", "same",
                                                                       "valid")],
    "correlate": lambda np_: [np_.correlate(V[:3], W, mode) for mode in ("full", "same",
                                                                        "valid")],
    "repeat_traced": lambda np_: np_.repeat(FINITE, INTS[:4] % 3, axis=1,
                                            total_repeat_length=7),
}


GROUPS = 4  # the cases run under jit, a few to a module: compiles are what tests cost


@pytest.mark.parametrize("group", range(GROUPS))
def test_added_functions_match_jax(group):
    check_cases_under_jit(ADDED, sorted(ADDED)[group::GROUPS], enp, jnp)


def test_added_functions_work_under_jit_and_say_what_they_need():
    f = ember.jit(lambda v, q: (enp.searchsorted(SORTED, v), enp.bincount(q, length=9),
                                enp.quantile(v, 0.5), enp.diff(v)))
    got = f(V, INTS)
    want = (jnp.searchsorted(SORTED, V), jnp.bincount(INTS, length=9), jnp.quantile(V, 0.5),
            jnp.diff(V))
    for a, b in zip(got, want, strict=True):
        assert_close(np.asarray(a), np.asarray(b), rtol=1e-6)
    assert_close(np.asarray(enp.bincount(INTS)), np.bincount(INTS).astype(np.int32))  # eager
    counts = enp.asarray(INTS[:4] % 3)
    assert_close(np.asarray(enp.repeat(FINITE, counts, axis=1)),  # eager: counts are known
                 np.repeat(FINITE, INTS[:4] % 3, axis=1))
    with pytest.raises(TypeError, match="total_repeat_length"):
        ember.jit(lambda r: enp.repeat(FINITE, r, axis=1))(counts)
    with pytest.raises(ember.errors.ConcretizationTypeError, match="bincount under jit "
                                                                    "requires length="):
        ember.jit(enp.bincount)(INTS)
    assert enp.isdtype(np.int8, "signed integer") and enp.isdtype(np.float16, "numeric")
    assert enp.isdtype(enp.bfloat16, "real floating") and not enp.isdtype(np.uint8, "bool")
    assert enp.isdtype(np.float32, ("integral", np.float32))
    assert enp.__array_api_version__ == "2024.12" and enp.newaxis is None


UNIQUE_INPUTS = [np.array([[3, 1, 2], [3, 3, 0]], np.int32),
                 np.array([2.0, np.nan, 1.0, np.nan, 2.0, -0.0, 0.0], np.float32),
                 np.array([True, False, True])]


@pytest.mark.parametrize("i", range(len(UNIQUE_INPUTS)))
def test_unique_family_matches_jax(i):
    """Eagerly (the count of values is known) and under jit with size=; NaNs merged by
    jnp.unique, distinct in the array API's unique_*; -0.0 vs 0.0: the first in x."""
    x = UNIQUE_INPUTS[i]
    cases = {
        "unique": lambda np_: np_.unique(x, return_index=True, return_inverse=True,
                                         return_counts=True),
        "unique_all": lambda np_: tuple(np_.unique_all(x)),
        "unique_counts": lambda np_: tuple(np_.unique_counts(x)),
        "unique_inverse": lambda np_: tuple(np_.unique_inverse(x)),
        "unique_values": lambda np_: (np_.unique_values(x),),
    }
    for case in cases.values():
        for got, want in zip(case(enp), case(jnp), strict=True):
            assert_close(np.asarray(got), np.asarray(want))
            assert np.signbit(np.asarray(got)).tolist() == np.signbit(np.asarray(want)).tolist()
    sized = ember.jit(lambda v: enp.unique(v, return_counts=True, size=6, fill_value=0))(x)
    for got, want in zip(sized, jnp.unique(x, return_counts=True, size=6, fill_value=0),
                         strict=True):
        assert_close(np.asarray(got), np.asarray(want))
    with pytest.raises(ember.errors.ConcretizationTypeError, match="unique_values under jit "
                                                                    "requires size="):
        ember.jit(enp.unique_values)(x)


def test_array_api_devices_and_namespace_info():
    cpu = ember.devices()[0]
    for make in (lambda d: enp.zeros(3, device=d), lambda d: enp.ones((2,), np.int32, device=d),
                 lambda d: enp.full(2, 7.0, device=d), lambda d: enp.arange(4, device=d),
                 lambda d: enp.asarray([1, 2], device=d), lambda d: enp.eye(2, device=d),
                 lambda d: enp.linspace(0, 1, 3, device=d),
                 lambda d: enp.zeros_like(FINITE, device=d), lambda d: enp.empty((2,), device=d)):
        assert make("cpu").device == cpu and make(cpu).device == cpu
    x = enp.asarray(FINITE)
    assert x.to_device("cpu") is x and x.__array_namespace__() is enp
    assert_close(ember.jit(lambda v: v.to_device("cpu") + enp.zeros(4, device="cpu"))(FINITE),
                 FINITE)
    info = enp.__array_namespace_info__()
    assert info.default_device() == cpu and info.devices() == [cpu]
    assert info.capabilities()["data-dependent shapes"] is False
    assert info.default_dtypes()["real floating"] == np.float32
    assert "float64" not in info.dtypes() and set(info.dtypes(kind="bool")) == {"bool"}
    assert "float16" not in info.dtypes()  # the standard's dtypes only (as jax.numpy's)
    with setting("ember_enable_x64", True):
        assert "float64" in info.dtypes(kind="real floating")
        assert info.default_dtypes()["integral"] == np.int64
    with pytest.raises(ValueError, match="device requires one of"):
        enp.zeros(2, device="tpu")
    # the array API's signatures: `device=` shows in each creation function's, `min`/`max`
    # are clip's names (a_min/a_max still taken), `copy=` on reshape and astype, `upper=`
    import inspect
    for f in (enp.arange, enp.zeros, enp.empty_like, enp.eye, enp.full_like, enp.linspace):
        assert "device" in inspect.signature(f).parameters, f.__name__
    assert_close(enp.clip(FINITE, min=0.0, max=2.0), np.clip(FINITE, 0.0, 2.0))
    assert_close(enp.clip(FINITE, a_max=1.0), np.minimum(FINITE, 1.0))
    assert_close(enp.clip(FINITE), FINITE)  # neither bound: the values as they are (JAX)
    # sign of either zero is +0 (the array API, NumPy)
    assert np.signbit(np.asarray(enp.sign(np.array([-0.0, 0.0], np.float32)))).tolist() == [
        False, False]
    assert_close(enp.reshape(FINITE, (-1,), copy=True), FINITE.reshape(-1))
    assert enp.astype(FINITE, np.int32, copy=False, device="cpu").device == cpu
    # jnp.int32 and its kin are dtypes to result_type; vecdot conjugates x1 and keeps the
    # promoted dtype (JAX's)
    assert enp.result_type(enp.int32, enp.float32, np.int8) == np.float32
    u8, z = np.array([200, 100], np.uint8), np.array([1j, 2.0], np.complex64)
    assert enp.vecdot(u8, u8).dtype == jnp.vecdot(u8, u8).dtype == np.uint8
    assert complex(enp.vecdot(z, z)) == complex(jnp.vecdot(z, z)) == 5
    spd = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
    assert_close(enp.linalg.cholesky(spd, upper=True), np.linalg.cholesky(spd).T, rtol=1e-6)


def test_dlpack_both_ways():
    x = enp.asarray(FINITE)
    assert_close(np.from_dlpack(x), FINITE)
    assert_close(np.asarray(jnp.from_dlpack(x)), FINITE)  # JAX reads it
    assert_close(np.asarray(enp.from_dlpack(jnp.asarray(FINITE))), FINITE)
    host = FINITE.copy()
    ours = enp.from_dlpack(host)
    host[0, 0] = 99.0  # a copy: the caller's memory can change, ours does not
    assert float(ours[0, 0]) == 1.5 and x.__dlpack_device__() == (1, 0)


_M = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [2.0, -1.0, 0.5]], np.float32)
_X = np.linspace(-3, 7, 12).astype(np.float32).reshape(3, 4)
_BINS = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
_P = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
# (name, args, kwargs) of routines whose arguments the value sweep (api_values.py) does not
# make: bins, index tuples, polynomials, shapes, keywords.
ROUTINES = [
    ("nanprod", (_M,), {}), ("nanprod", (_M,), {"axis": 1}), ("nancumsum", (_M,), {"axis": 0}),
    ("nancumprod", (_M,), {}), ("nanargmax", (_M,), {"axis": 1}),
    ("nanargmin", (_M,), {"axis": 0}), ("nanargmax", (_X,), {}),
    ("isin", (_X, np.array([1.0, -3.0, 7.0], np.float32)), {}),
    ("isin", (_X, _BINS), {"invert": True}), ("digitize", (_X, _BINS), {}),
    ("digitize", (_X, _BINS), {"right": True}), ("digitize", (_X, _BINS[::-1].copy()), {}),
    ("array_equiv", (_X, _X[:1]), {}), ("trapezoid", (_X,), {}),
    ("trapezoid", (_X, np.arange(4.0, dtype=np.float32)), {}),
    ("trapezoid", (_X,), {"axis": 0, "dx": 0.5}),
    ("ediff1d", (_X,), {"to_begin": np.float32(9), "to_end": np.array([1, 2], np.float32)}),
    ("unwrap", (np.array([0, 3, 6.5, 0.2, 7, -6], np.float32),), {}),
    ("fabs", (np.array([-2, 3], np.int32),), {}), ("append", (_X, _X), {}),
    ("append", (_X, _X), {"axis": 1}), ("diagflat", (_X[:1],), {"k": 1}),
    ("rot90", (_X,), {}), ("rot90", (_X, 2), {}), ("rot90", (_X, 3), {}),
    ("rot90", (_X, -1, (1, 0)), {}), ("rollaxis", (np.zeros((2, 3, 4, 5)), 3, 1), {}),
    ("rollaxis", (np.zeros((2, 3, 4, 5)), 1, 4), {}), ("resize", (np.arange(5), (2, 4)), {}),
    ("resize", (_X, 7), {}), ("tril_indices_from", (_X,), {}),
    ("triu_indices_from", (_X,), {"k": 1}), ("diag_indices_from", (np.zeros((3, 3)),), {}),
    ("fill_diagonal", (_X, 9.0), {"inplace": False}),
    ("fill_diagonal", (np.zeros((7, 3), np.float32), np.array([1.0, 2.0], np.float32)),
     {"inplace": False}),
    ("unravel_index", (np.array([10, -1, 3, 0]), (2, 3)), {}),
    ("ravel_multi_index", ((np.array([1, 5]), np.array([2, 1])), (2, 3)), {"mode": "clip"}),
    ("ravel_multi_index", ((np.array([1, 0]), np.array([2, 1])), (2, 3)), {"order": "F"}),
    ("matvec", (np.ones((2, 3, 4), np.float32), _X[0]), {}), ("vecmat", (_X[:, 0], _X), {}),
    ("polyval", (_P, _X), {}), ("polyadd", (_P, _P[:2]), {}), ("polysub", (_P[:2], _P), {}),
    ("polymul", (_P, _P[:3]), {}), ("polyder", (_P, 2), {}), ("polyint", (_P, 2), {}),
    ("polyint", (_P, 1, 3.0), {}), ("vander", (_X[0],), {}), ("vander", (_X[0], 3, True), {}),
    ("hamming", (7,), {}), ("hanning", (6,), {}), ("blackman", (5,), {}), ("bartlett", (5,), {}),
    ("geomspace", (1.0, 1000.0, 4), {}), ("geomspace", (-1.0, -100.0, 5, False), {}),
]
_I1 = np.array([12, -18, 0, 7, 0, 35], np.int32)
_I2 = np.array([8, 24, 5, 0, 0, -21], np.int32)
_M4 = np.array([[1.0, np.nan, 3.0, 7.0], [np.nan] * 4, [2.0, -1.0, 0.5, 4.0]], np.float32)
_K1 = np.array([1, 0, 1, 0, 2], np.int32)
_K2 = np.array([5.0, 3.0, 1.0, 3.0, 0.0], np.float32)
ROUTINES += [
    ("gcd", (_I1, _I2), {}), ("lcm", (_I1, _I2), {}), ("nanmedian", (_M4,), {}),
    ("nanmedian", (_M4,), {"axis": 1}), ("nanquantile", (_M4, 0.3), {"axis": 1}),
    ("nanquantile", (_M4, np.array([0.1, 0.9])), {"axis": 0, "keepdims": True}),
    ("nanpercentile", (_M4, 75), {}), ("gradient", (_X,), {}),
    ("gradient", (_X, 0.5), {"axis": 1}), ("gradient", (_X[0],), {}),
    ("lexsort", ((_K2, _K1),), {}), ("sort_complex", (np.array([3, 1, 2], np.float32),), {}),
    ("choose", (np.array([0, 2, 1, 0], np.int32), [_X[0], _X[1], _X[2]]), {}),
    ("choose", (np.array([[0, 3]], np.int32), [_X[0][:2], _X[1][:2]]), {"mode": "wrap"}),
    ("choose", (np.array([0, 5, 1, -1], np.int32), _X[:, :4]), {"mode": "clip"}),
    ("compress", (np.array([True, False, True]), _X), {"axis": 0}),
    ("compress", (np.array([False, True, True, False, True]), _X), {}),
    ("compress", (np.array([True, False, True]), _X), {"axis": 0, "size": 3, "fill_value": -7}),
    ("extract", (_X > 2, _X), {}), ("delete", (_X, 1), {"axis": 1}),
    ("delete", (_X, np.array([0, 2])), {}), ("delete", (_X, slice(0, 3, 2)), {"axis": 1}),
    ("insert", (_X, 1, 9.0), {"axis": 1}),
    ("insert", (_X, np.array([1, 1, 3]), np.array([7.0, 8.0, 9.0], np.float32)), {}),
    ("insert", (_X, 2, np.array([5.0, 6.0, 7.0], np.float32)), {"axis": 1}),
    ("insert", (_X, np.array([0, 2]), 0.0), {"axis": 0}),
    ("setdiff1d", (_I1, _I2), {}), ("setxor1d", (_I1, _I2), {}), ("union1d", (_I1, _I2), {}),
    ("intersect1d", (_I1, _I2), {}), ("union1d", (_I1, _I2), {"size": 12, "fill_value": -1}),
    ("apply_along_axis", (lambda v: v * 2 + v.sum(), 1, _X), {}),
    ("apply_along_axis", (lambda v: v[:2], 0, _X), {}),
    ("apply_over_axes", (lambda a, ax: a.sum(axis=ax), _X, [0, 1]), {}),
]


@pytest.mark.parametrize("name,args,kwargs", ROUTINES,
                         ids=[f"{n}-{k}" for k, (n, _, _) in enumerate(ROUTINES)])
def test_routines_match_jax(name, args, kwargs):
    got = getattr(enp, name)(*args, **kwargs)
    want = getattr(jax.numpy, name)(*args, **kwargs)
    got, want = (x if isinstance(x, tuple) else (x,) for x in (got, want))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_routines_that_go_beyond_jax():
    """fill_diagonal's wrap (NumPy's; JAX refuses it), array_equiv of shapes that do not
    broadcast (False, as NumPy; JAX raises), isscalar of 0-d arrays and scalars."""
    tall = np.zeros((7, 3), np.float32)
    want = tall.copy()
    np.fill_diagonal(want, [1.0, 2.0], wrap=True)
    assert_close(enp.fill_diagonal(tall, np.array([1.0, 2.0], np.float32), wrap=True,
                                   inplace=False), want)
    assert not bool(enp.array_equiv(_X, _X[:, :2]))
    assert [enp.isscalar(v) for v in (1.0, np.float32(1), np.array(1.0), [1], _X)] == [
        True, True, True, False, False]
    with pytest.raises(NotImplementedError, match="inplace=False"):
        enp.fill_diagonal(_X, 1.0)


def test_host_routines_hand_over_ember_arrays(tmp_path):
    """Files, buffers, printing and the index tricks are NumPy's on the host, their arrays
    Ember's, with JAX's values."""
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    enp.save(tmp_path / "x.npy", enp.asarray(x))
    loaded = enp.load(tmp_path / "x.npy")
    assert isinstance(loaded, ember.Array)
    assert_close(loaded, x)
    assert_close(enp.frombuffer(x.tobytes(), np.float32), x.ravel())
    assert enp.array_str(enp.asarray(x)) == np.array_str(x)
    for ours, theirs in ((enp.mgrid[0:2, 0:3], jnp.mgrid[0:2, 0:3]),
                         (enp.r_[1:4, 7], jnp.r_[1:4, 7]),
                         (enp.c_[np.ones(2), np.zeros(2)], jnp.c_[np.ones(2), np.zeros(2)]),
                         (enp.fromfunction(lambda i, k: i + 2 * k, (2, 3)),
                          jnp.fromfunction(lambda i, k: i + 2 * k, (2, 3)))):
        assert_close(ours, theirs)
    for ours, theirs in ((enp.ogrid[0:2, 0:3], jnp.ogrid[0:2, 0:3]),
                         (enp.ix_(np.arange(2), np.arange(3)), jnp.ix_(np.arange(2),
                                                                       np.arange(3)))):
        for a, b in zip(ours, theirs, strict=True):
            assert_close(a, b)
    assert enp.s_[1:3] == np.s_[1:3] and enp.bool(1).dtype == np.bool_
    assert np.dtype(enp.single) == np.float32 and np.dtype(enp.csingle) == np.complex64
