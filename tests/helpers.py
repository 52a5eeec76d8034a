"""Assertions and settings shared by the tests."""

import contextlib

import numpy as np


@contextlib.contextmanager
def setting(name, value):
    """ember.config's `name` set to `value` within the block, restored after it."""
    import ember

    before = ember.config.read(name)
    ember.config.update(name, value)
    try:
        yield
    finally:
        ember.config.update(name, before)


def assert_close(actual, expected, *, rtol=1e-5, atol=1e-6):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected)
    elif actual.dtype.kind == "c":
        np.testing.assert_allclose(actual.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)


def check_cases_under_jit(cases, names, ours, theirs, *, rtol=2e-6, atol=1e-6) -> None:
    """Each case `cases[name](namespace)` (an array or a tuple/list of them), all of `names`
    traced into one jitted module over `ours` (one compile for several cases), against the
    same case run with `theirs` (JAX), leaf by leaf: shape, dtype and values."""
    import ember

    got = ember.jit(lambda: {name: cases[name](ours) for name in names})()
    for name in names:
        mine, want = (list(t) if isinstance(t, (tuple, list)) else [t]
                      for t in (got[name], cases[name](theirs)))
        assert len(mine) == len(want), name
        for a, b in zip(mine, want, strict=True):
            assert np.shape(a) == np.shape(b), name
            assert_close(a, b, rtol=rtol, atol=atol)
