"""ember.nn against jax.nn (the oracle, when installed) and NumPy formulas."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember import nn
from helpers import assert_close

jax = pytest.importorskip("jax")  # the oracle (an optional dependency)

VALUES = hnp.arrays(np.float32, st.sampled_from([(6,), (3, 4)]),
                    elements=st.floats(-30, 30, width=32))
NAMES = ["relu", "relu6", "sigmoid", "silu", "softplus", "gelu", "softmax", "log_softmax",
         "logsumexp", "standardize"]


@pytest.mark.parametrize("name", NAMES)
@given(x=VALUES)
def test_matches_jax_nn(name, x):
    expected = np.asarray(getattr(jax.nn, name)(x))
    assert_close(getattr(nn, name)(x), expected, rtol=2e-5, atol=2e-5)
    assert_close(ember.jit(getattr(nn, name))(x), expected, rtol=2e-5, atol=2e-5)


def test_one_hot_and_edge_values():
    labels = np.array([0, 2, 1, 5], np.int32)
    assert_close(nn.one_hot(labels, 3), np.asarray(jax.nn.one_hot(labels, 3)))
    x = np.array([-np.inf, -np.inf], np.float32)
    assert_close(nn.logsumexp(x), np.float32(-np.inf))
    assert_close(nn.softplus(np.array([-100.0, 100.0], np.float32)),
                 np.array([0.0, 100.0], np.float32))
    with pytest.raises(NotImplementedError, match="needs erf"):
        nn.gelu(x, approximate=False)
