"""Eager ops on small host arrays by their NumPy references (ember/_src/host_eval.py): every
row of ember.dialect.exact gives its kernel's bits (in 32 bits in the op sweep, in 64 bits
here), and eager calls made of them compile nothing."""

import numpy as np
import pytest
import test_op_sweep as sweep
from conftest import few_examples
from hypothesis import HealthCheck, given, settings, strategies as st

import ember
import ember.numpy as enp
from ember._src import eager, host_eval
from ember.dialect import exact as exact_rows
from ember.dialect.types import ShapedArray


def check_row(row, cases):
    """Each case run by the kernel (a jitted module: never on the host) and by host_eval."""
    for (args, params), actual in zip(cases, sweep.run_ops(row, cases), strict=True):
        sweep.check_host_bits(row, args, params, actual)


def check_sweep(name):
    """The op sweep's cases of the row `name`, a module of them per example."""
    row = next(r for r in exact_rows.EXACT if r.name == name)

    @few_examples(2)
    @given(st.lists(sweep.case_for(row), min_size=sweep.CASES_PER_MODULE,
                    max_size=sweep.CASES_PER_MODULE))
    def check(cases):
        check_row(row, cases)

    check()


# The float32 (and int32, ...) cases of every exact row are checked by the op sweep itself
# (test_op_sweep.test_op_matches_numpy): its modules' results against host_eval, bit for bit.
WIDE = {"f": np.dtype(np.float64), "i": np.dtype(np.int64), "b": np.dtype(np.bool_),
        "u": np.dtype(np.uint32), "c": np.dtype(np.complex128)}
ELEMENTWISE = sorted(r.name for r in exact_rows.EXACT
                     if r in (sweep.O.ADD, sweep.O.SUB, sweep.O.MUL, sweep.O.DIV, sweep.O.REM,
                              sweep.O.MAX, sweep.O.MIN, sweep.O.SQRT, sweep.O.COMPARE,
                              sweep.O.ROUND, sweep.O.SELECT, sweep.O.CONVERT,
                              sweep.O.REDUCE_MAX, sweep.O.SHIFT_RIGHT))


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_exact_rows_give_the_kernels_bits_in_64_bits(name, monkeypatch):
    monkeypatch.setattr(sweep, "DTYPES", WIDE)
    ember.config.update("ember_enable_x64", True)
    try:
        check_sweep(name)
    finally:
        ember.config.update("ember_enable_x64", False)


def test_values_compiled_code_flushes_run_the_kernel():
    """Subnormal operands or results: the host declines, the eager call runs the kernel
    (which flushes them to zero), so an eager result never depends on where it ran."""
    tiny = np.array([1e-40, -1e-40, 1.0, 3e-39], np.float32)
    assert host_eval.run(sweep.O.ADD, [tiny, tiny], {}, ShapedArray((4,), tiny.dtype)) is None
    half = np.array([2.0 ** -126, 1.0], np.float32)
    assert host_eval.run(sweep.O.MUL, [half, np.float32(0.5) * np.ones(2, np.float32)], {},
                         ShapedArray((2,), half.dtype)) is None  # a subnormal result
    got = np.asarray(enp.asarray(tiny) + enp.asarray(tiny))
    where = np.asarray(enp.where(enp.asarray(tiny) > 0, enp.asarray(tiny), 0.0))
    sweep.assert_same_bits(got, np.asarray(ember.jit(lambda x: x + x)(tiny)), "add")
    sweep.assert_same_bits(where, np.asarray(ember.jit(
        lambda x: enp.where(x > 0, x, 0.0))(tiny)), "where")
    assert got.tolist() == [0.0, 0.0, 2.0, 0.0]  # NumPy's would keep 2e-40, -2e-40, 6e-39


def test_eager_calls_of_exact_ops_compile_nothing_and_match_jit(no_disk_cache):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    a[0, :3] = [np.nan, -0.0, np.inf]
    b = rng.integers(-5, 5, (16, 8)).astype(np.int32)
    calls = {
        "add": lambda x, i: x + x, "mul": lambda x, i: x * 2.0,
        "maximum": lambda x, i: enp.maximum(x, 0.0), "where": lambda x, i: enp.where(
            x > 0, x, 0.0), "argmax": lambda x, i: enp.argmax(x, axis=1),
        "sqrt": lambda x, i: enp.sqrt(enp.abs(x)), "floor_divide": lambda x, i: i // 3,
        "integer sum": lambda x, i: enp.sum(i, axis=0), "max": lambda x, i: enp.max(x),
        "clip": lambda x, i: enp.clip(x, -0.5, 0.5), "astype": lambda x, i: i.astype(
            np.float32), "transpose": lambda x, i: x.T[1:3],
        # ops of no operands (iota) on the default device
        "tri": lambda x, i: enp.tri(3, 5, 1), "eye": lambda x, i: enp.eye(4, dtype=int),
    }
    ea, eb = enp.asarray(a), enp.asarray(b)
    with ember.count_events("eager_compile") as compiles:
        eager = {name: np.asarray(fn(ea, eb)) for name, fn in calls.items()}
    assert compiles() == 0
    for name, fn in calls.items():
        sweep.assert_same_bits(eager[name], np.asarray(ember.jit(fn)(a, b)), name)


def test_large_or_inexact_eager_ops_run_kernels(no_disk_cache):
    ember.clear_caches()
    with ember.count_events("eager_compile") as compiles:
        big = enp.ones((256, 256), np.float32)  # 64K elements: the kernel, on worker threads
        np.testing.assert_array_equal(np.asarray(big + big), np.full((256, 256), 2.0))
        np.testing.assert_allclose(np.asarray(enp.exp(enp.zeros(4))), np.ones(4))
    assert compiles() == 2


def test_products_feeding_adds_are_compiled_as_the_kernel_fuses_them():
    """A kernel computes x * y + z as one fused multiply-add (one rounding): an eager
    composite with a float product reaching an add runs its kernel, not op by op on the
    host (hypot and interp gave other bits than their jitted versions on host)."""
    def hosted(fn, *args):
        traced = ember.jit(fn).trace(*args)
        kernel = traced.lower().compile
        return host_eval.program(traced, kernel, eager.row_reduction) is not None

    x, y = (np.random.default_rng(1).standard_normal((2, 200)).astype(np.float32))
    assert not hosted(lambda a, b: a * b + a, x, y)
    assert not hosted(lambda a, b: a - (-(a * b)).astype(np.float64), x, y)
    assert not hosted(lambda a, b: enp.where(a > 0, a * b, b).T - b, x, y)
    assert hosted(lambda a, b: enp.where(a * b > 0, a * b, b), x, y)  # no add: exact
    assert hosted(lambda a, b: (a * 3) * b + 1, x.astype(np.int32), y.astype(np.int32))
    xp = np.sort(y)
    ex, ey, exp_ = enp.asarray(x), enp.asarray(y), enp.asarray(xp)
    sweep.assert_same_bits(enp.hypot(ex, ey), ember.jit(enp.hypot)(x, y), "hypot")
    sweep.assert_same_bits(enp.interp(ex, exp_, ex * 3), ember.jit(
        lambda a, b: enp.interp(a, b, a * 3))(x, xp), "interp")


@st.composite
def reductions(draw):
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=0, max_size=3)))
    axes = draw(st.sets(st.integers(0, len(shape) - 1))) if shape else set()
    axis = draw(st.sampled_from([None, tuple(sorted(axes))]))
    dtype = draw(st.sampled_from([np.float32, np.int32, np.complex64]))
    return shape, axis, dtype, draw(st.sampled_from(["sum", "mean"]))


@settings(few_examples(10), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reductions())
def test_eager_sums_and_means_share_one_kernel_per_dtype(no_disk_cache, case):
    """Eager sums and means over any axes of small host arrays reduce the rows of a matrix
    (host_eval.as_rows): one float32 kernel serves them all (the first example compiles it,
    NumPy checks every value)."""
    shape, axis, dtype, name = case
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype) * 3
    x = x if np.dtype(dtype).kind != "i" else x.astype(np.int32)
    enp.sum(enp.ones((2, 3), np.float32), axis=0)  # the float32 kernel, compiled once
    with ember.count_events("eager_compile") as compiles:
        got = getattr(enp, name)(enp.asarray(x), axis=axis)
    want = getattr(np, name)(x.astype(np.complex128 if dtype is np.complex64 else np.float64),
                             axis=axis)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
    if dtype is not np.complex64:  # int32 means: float32 sums of the converted values
        assert compiles() == 0, (shape, axis, dtype, name)


def test_eager_calls_with_scalars_key_on_their_types_and_check_every_value():
    """Eager calls with Python scalars take the fast key (the scalar's type); each value
    is still checked: a flushable scalar, operand or result runs the kernel, an int out of
    int32's range raises, and host data passed in is never a result's memory."""
    x = enp.asarray(np.linspace(-3, 3, 64, dtype=np.float32))
    i = enp.asarray(np.arange(64, dtype=np.int32))
    for _ in range(2):  # the second call from the fast key
        assert (x + 1).dtype == np.float32 and (i + 1).dtype == np.int32
        assert (i + 1.0).dtype == np.float32 and (i * True).dtype == np.int32
        np.testing.assert_array_equal(np.asarray(i + 1), np.arange(1, 65))
        with pytest.raises(OverflowError, match="too large"):
            i + 2 ** 40
    tiny = enp.asarray(np.full(64, 1e-39, np.float32))
    for _ in range(2):
        sweep.assert_same_bits(x * 1e-40, np.zeros(64, np.float32) * np.sign(
            np.asarray(x)), "a subnormal scalar")  # flushed to a signed zero
        sweep.assert_same_bits(tiny + 0.0, np.zeros(64, np.float32), "a subnormal operand")
        sweep.assert_same_bits(x * 1e-38, ember.jit(lambda a: a * 1e-38)(x), "a subnormal result")
    host = np.arange(64, dtype=np.float32)
    out = enp.add(host, 1.0)
    host[:] = -1
    np.testing.assert_array_equal(np.asarray(out), np.arange(1, 65))
