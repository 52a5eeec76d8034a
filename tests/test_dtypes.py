"""Dtypes: JAX's promotion lattice with weak Python scalars, x64 mode, float16/bfloat16/
unsigned arithmetic through IREE, astype, finfo/iinfo."""

import itertools

import jax  # the oracle (a test dependency)
import ml_dtypes
import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import tolerance

import ember
import ember.numpy as enp
from helpers import assert_close, setting

jnp = jax.numpy

NARROW = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float16,
          ml_dtypes.bfloat16, np.float32]


def test_promotion_table_is_jaxs():
    for a, b in itertools.product(NARROW, repeat=2):
        assert enp.promote_types(a, b) == jnp.promote_types(a, b), (a, b)


@pytest.mark.parametrize("dtype", NARROW)
def test_weak_python_scalars_do_not_widen(dtype):
    x = np.ones(3, dtype)
    for scalar in (1, 2.5, True):
        if dtype == np.bool_ and isinstance(scalar, float):
            continue
        expected = (jnp.asarray(x) + scalar).dtype
        assert enp.result_type(x, scalar) == expected, (dtype, scalar)
        assert (enp.asarray(x) + scalar).dtype == expected
        assert ember.jit(lambda v, s=scalar: v * s)(x).dtype == expected


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.uint16, np.uint32,
                                   np.int8, np.int16])
def test_arithmetic_in_narrow_dtypes(dtype):
    dtype = np.dtype(dtype)

    @few_examples(5)
    @given(hnp.arrays(dtype, (6,), elements=st.integers(0, 100).map(float)
                      if dtype.kind in "fV" else st.integers(0, 100)),
           hnp.arrays(dtype, (6,), elements=st.integers(1, 20).map(float)
                      if dtype.kind in "fV" else st.integers(1, 20)))
    def check(x, y):
        expected = [jnp.add(x, y), jnp.multiply(x, y), jnp.maximum(x, y),
                    jnp.floor_divide(x, y), jnp.sum(x), jnp.cumsum(y)]
        got = ember.jit(lambda a, b: [enp.add(a, b), enp.multiply(a, b), enp.maximum(a, b),
                                      enp.floor_divide(a, b), enp.sum(a), enp.cumsum(b)])(x, y)
        for g, e in zip(got, expected, strict=True):
            e = np.asarray(e)
            assert_close(np.asarray(g), e, **tolerance(e.dtype, approx=True))
        if dtype.kind in "fV":
            e = np.asarray(jnp.exp(x / 50))
            assert_close(np.asarray(enp.exp(x / 50)), e, **tolerance(e.dtype, approx=True))

    check()


def test_astype_follows_numpy_conversions():
    x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 300.0], np.float32)
    for dtype in (np.int32, np.uint8, np.bool_, np.float16, ml_dtypes.bfloat16):
        safe = x if dtype != np.uint8 else np.abs(x) % 256  # out of range is undefined
        assert_close(enp.asarray(safe).astype(dtype), safe.astype(dtype))
    b = np.array([True, False])
    assert_close(enp.asarray(b).astype(np.float32), b.astype(np.float32))
    wide = np.random.default_rng(0).integers(-2**31, 2**31 - 1, 500).astype(np.int32)
    assert_close(enp.asarray(wide).astype(ml_dtypes.bfloat16),  # rounds to nearest even
                 wide.astype(ml_dtypes.bfloat16))
    i = np.array([-1, 300], np.int32)
    assert_close(enp.asarray(i).astype(np.uint8), i.astype(np.uint8))  # wraps, as NumPy
    assert_close(enp.asarray(x).astype(np.complex64), x.astype(np.complex64))
    with pytest.raises(TypeError, match="does not support dtype float128"):
        enp.asarray(x).astype(np.longdouble)


def test_finfo_and_iinfo():
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32):
        assert enp.finfo(dtype).eps == jnp.finfo(dtype).eps
        assert enp.finfo(dtype).max == jnp.finfo(dtype).max
    assert enp.iinfo(np.int8).min == -128 and enp.iinfo(enp.uint16).max == 65535
    assert enp.bfloat16 == np.dtype(ml_dtypes.bfloat16)


def test_x64_gives_64_bit_defaults_and_real_float64():
    ember.config.update("ember_enable_x64", True)
    try:
        assert enp.arange(3).dtype == np.int64
        assert enp.zeros(2).dtype == np.float64
        x = np.array([1 / 3, 1e-300, 2.0**60], np.float64)
        got = ember.jit(lambda v: v * 3.0 + 1e-20)(x)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(got), x * 3.0 + 1e-20)
        big = np.array([2**40 + 1], np.int64)
        np.testing.assert_array_equal(np.asarray(ember.jit(lambda v: v * 2)(big)), big * 2)
    finally:
        ember.config.update("ember_enable_x64", False)
    assert enp.arange(3).dtype == np.int32
    assert enp.asarray(np.zeros(2, np.float64)).dtype == np.float32


OVERFLOWS = {
    "jit argument": lambda np_: np_.jit(lambda x: x * 2)(2**40),
    "array of a list": lambda np_: np_.numpy.array([2**40, 1]),
    "scalar operand": lambda np_: np_.numpy.ones(2, np.int32) + 2**40,
    "array of a scalar": lambda np_: np_.numpy.asarray(-(2**31) - 1),
}


@pytest.mark.parametrize("case", sorted(OVERFLOWS))
def test_python_ints_out_of_int32_raise_as_in_jax(case):
    with pytest.raises(OverflowError):
        OVERFLOWS[case](jax)
    with pytest.raises(OverflowError, match=r"too large to convert to int32|out of bounds"):
        OVERFLOWS[case](ember)


def test_python_ints_that_fit_still_pass_and_numpy_arrays_convert_as_in_jax():
    assert_close(ember.jit(lambda x: x * 2)(2**30 - 1), np.int32(2**31 - 2))
    assert_close(enp.array([2**31 - 1, -(2**31)]), np.array([2**31 - 1, -(2**31)], np.int32))
    wide = np.array([2**40 + 3], np.int64)  # a NumPy array narrows silently, as in JAX
    assert_close(enp.array(wide), np.asarray(jnp.array(wide)))
    assert_close(ember.jit(lambda x: x + 1)(wide), np.asarray(jax.jit(lambda x: x + 1)(wide)))


@pytest.mark.parametrize("scalar", [np.float64(2.5), np.float32(2.5), np.int64(3), np.int16(3)])
def test_numpy_scalars_are_strongly_typed_as_in_jax(scalar):
    """np.float64 is a subclass of Python float, but not a weak scalar."""
    for dtype in (np.float16, np.int8):
        ours = enp.ones(2, dtype) * scalar
        theirs = jnp.ones(2, dtype) * scalar
        assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), dtype
    out = ember.jit(lambda x: x)(scalar)
    ref = jax.jit(lambda x: x)(scalar)
    assert (out.dtype, out.weak_type) == (ref.dtype, ref.weak_type)


def test_complex_values_are_arrays_and_long_doubles_are_named_as_unsupported():
    out = ember.jit(lambda x: x)(1 + 2j)  # a weak complex64, as in JAX
    assert out.dtype == np.complex64 and out.weak_type and complex(out) == 1 + 2j
    assert np.array_equal(np.asarray(enp.array([1 + 2j, 3])), np.array([1 + 2j, 3], np.complex64))
    with pytest.raises(TypeError, match="does not support dtype complex256"):
        enp.array(np.array([1j], np.clongdouble))


_INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


@pytest.mark.parametrize("src", [np.float32, np.float16, ml_dtypes.bfloat16, np.float64])
def test_float_to_int_conversions_saturate_as_jaxs(src):
    """NaN converts to 0 and values past an integer type's range to its min or max, as XLA's
    convert does (fptosi/fptoui of them is undefined: an int32 of inf was INT_MIN, a uint8 of
    -2.5 was 254); jit, eager and constant folding alike."""
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 0.5, -0.5, 1e20, 127.9, 128.0,
                  -128.0, -129.0, 255.9, 256.0, 65535.9, 2147483520.0]).astype(src)
    wide = src == np.float64
    ints = _INTS + ([np.int64, np.uint64] if wide else [])
    with setting("ember_enable_x64", wide), jax.enable_x64(wide):
        ours = ember.jit(lambda v: [v.astype(t) for t in ints])(x)
        folded = ember.jit(lambda: [enp.asarray(x).astype(t) for t in ints])()
        eager = [enp.asarray(x).astype(t) for t in ints[:2]]
        theirs = jax.jit(lambda v: [v.astype(t) for t in ints])(x)
    for t, a, b, c in zip(ints, ours, folded, theirs, strict=True):
        want = np.asarray(c)
        assert np.asarray(a).dtype == want.dtype == np.dtype(t)
        np.testing.assert_array_equal(np.asarray(a), want, err_msg=np.dtype(t).name)
        np.testing.assert_array_equal(np.asarray(b), want, err_msg=np.dtype(t).name)
    for t, a in zip(ints, eager, strict=False):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(theirs[ints.index(t)]))


def test_the_dtypes_module_matches_jax():
    """ember.dtypes against jax.dtypes: promotion (weak Python scalars), subtypes of
    ml_dtypes' floats and narrow integers, their bits, scalar types, float0."""
    import jax.dtypes as jd

    import ember.dtypes as ed

    for args in ((1, 2.0), (np.int32(1), 2.0), (np.float32(1), 1j), (True, 1),
                 (np.int8(1), np.uint8(1)), (ml_dtypes.bfloat16, np.float32)):
        assert ed.result_type(*args) == jd.result_type(*args), args
        assert ed.result_type(*args, return_weak_type_flag=True) == jd.result_type(
            *args, return_weak_type_flag=True), args
    for a, b in ((ml_dtypes.bfloat16, np.floating), ("int4", np.signedinteger),
                 ("uint4", np.signedinteger), ("int4", np.integer), ("int4", "int4"),
                 ("int4", np.floating), (np.float32, "float32"), (None, np.floating),
                 (np.int16, np.unsignedinteger)):
        assert ed.issubdtype(a, b) == jd.issubdtype(a, b), (a, b)
    assert ed.issubdtype(ed.prng_key, ed.extended)
    for t in ("int4", "uint4", "float32", "bfloat16", "bool", "complex64", "uint8"):
        assert ed.itemsize_bits(t) == jd.itemsize_bits(t), t
    for x in (3.0, 2, True, 1j, np.float32(1), np.int8(1)):
        assert ed.scalar_type_of(x) is jd.scalar_type_of(x), x
    assert ed.float0 == jd.float0
    assert ed.canonicalize_dtype("float64") == jd.canonicalize_dtype("float64")
    assert ed.finfo(ml_dtypes.bfloat16).eps == jd.finfo(ml_dtypes.bfloat16).eps
    assert issubclass(ed.TypePromotionError, ValueError)
