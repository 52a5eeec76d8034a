"""ember.nn against jax.nn (the oracle, when installed) and NumPy formulas."""

import jax  # the oracle (a test dependency)
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember import nn
from helpers import assert_close

VALUES = hnp.arrays(np.float32, st.sampled_from([(6,), (3, 4)]),
                    elements=st.floats(-30, 30, width=32))
NAMES = ["relu", "relu6", "sigmoid", "silu", "softplus", "gelu", "softmax", "log_softmax",
         "logsumexp", "standardize"]


@pytest.mark.parametrize("name", NAMES)
@given(x=VALUES)
def test_matches_jax_nn(name, x):
    expected = np.asarray(getattr(jax.nn, name)(x))
    atol = 2e-5
    if name == "standardize":  # rounding in the mean, amplified by 1/sqrt(var + eps)
        var = x.astype(np.float64).var(-1, keepdims=True)
        atol = 2e-5 + 8 * np.spacing(np.abs(x).max()) / np.sqrt(var + 1e-5)
    for got in (getattr(nn, name)(x), ember.jit(getattr(nn, name))(x)):
        got = np.asarray(got)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert np.all(np.abs(got - expected) <= atol + 2e-5 * np.abs(expected)), (got, expected)


def test_one_hot_and_edge_values():
    labels = np.array([0, 2, 1, 5], np.int32)
    assert_close(nn.one_hot(labels, 3), np.asarray(jax.nn.one_hot(labels, 3)))
    x = np.array([-np.inf, -np.inf], np.float32)
    assert_close(nn.logsumexp(x), np.float32(-np.inf))
    assert_close(nn.softplus(np.array([-100.0, 100.0], np.float32)),
                 np.array([0.0, 100.0], np.float32))
    z = np.linspace(-6, 6, 49, dtype=np.float32)
    assert_close(nn.gelu(z, approximate=False),
                 np.asarray(jax.nn.gelu(z, approximate=False)), rtol=2e-5, atol=1e-6)


_INITIALIZERS = [
    ("zeros", None), ("ones", None), ("constant", (0.5,)), ("uniform", (0.3,)),
    ("normal", (2.0,)), ("truncated_normal", (1.5,)), ("glorot_uniform", ()),
    ("glorot_normal", ()), ("xavier_uniform", ()), ("xavier_normal", ()), ("lecun_uniform", ()),
    ("lecun_normal", ()), ("he_uniform", ()), ("he_normal", ()), ("kaiming_uniform", ()),
    ("kaiming_normal", ()), ("variance_scaling", (0.7, "fan_geo_avg", "normal")),
    ("variance_scaling", (2.0, "fan_out", "uniform", 0, 1)), ("orthogonal", (1.3,)),
    ("orthogonal", (1.0, 0)), ("delta_orthogonal", ()),
]


@pytest.mark.parametrize("name,args", _INITIALIZERS,
                         ids=[f"{n}-{k}" for k, (n, _) in enumerate(_INITIALIZERS)])
def test_initializers_give_jax_weights(name, args):
    """ember.random draws JAX's bits, so each initializer gives JAX's weights for a key:
    fans from the in, out and receptive-field dims, the three laws, orthogonal (wide and
    tall) and delta-orthogonal kernels."""
    ours, theirs = (getattr(m.nn.initializers, name) for m in (ember, jax))
    if args is not None:
        ours, theirs = ours(*args), theirs(*args)
    shapes = [(3, 3, 4, 6)] if name == "delta_orthogonal" else [(5, 7), (7, 5), (3, 4, 6)]
    for shape in shapes:
        got = ours(ember.random.PRNGKey(3), shape)
        want = theirs(jax.random.PRNGKey(3), shape)
        assert_close(got, want, rtol=2e-5, atol=2e-6)
