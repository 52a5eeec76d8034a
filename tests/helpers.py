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
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)
