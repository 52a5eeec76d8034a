"""Refs (seed: "In-place updates with refs"): mutable arrays updated in place under jit."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
from helpers import assert_close


def test_seed_sin_inplace_keeps_the_buffer():
    @ember.jit
    def sin_inplace(x_ref):
        x_ref[...] = jnp.sin(x_ref[...])

    x_ref = ember.new_ref(jnp.arange(3.0))
    before = x_ref.unsafe_buffer_pointer()
    assert repr(x_ref) == "Ref([0., 1., 2.], dtype=float32)"
    assert sin_inplace(x_ref) is None
    assert x_ref.unsafe_buffer_pointer() == before
    assert_close(x_ref[...], np.sin(np.arange(3, dtype=np.float32)))
    traced = sin_inplace.trace(x_ref).ir  # refs are in the dialect until ember-bufferize
    assert "!ember.ref<tensor<3xf32>>" in traced and '"ember.ref_get"' in traced
    assert '"ember.ref_set"' in traced
    ember_ir = sin_inplace.lower(x_ref).as_text("ember")
    assert "ember.aliased_result = 0" in ember_ir and "ember.ref" in ember_ir


@given(st.integers(-3, 2), st.floats(-5, 5, width=32))
def test_indexed_reads_and_writes_match_numpy(i, v):
    @ember.jit
    def update(r, v):
        r[i] = r[i] * 2 + v
        r[0, 1:3] = r[0, 1:3] - 1
        return jnp.sum(r[...])

    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = ember.new_ref(host)
    pointer = r.unsafe_buffer_pointer()
    total = update(r, np.float32(v))
    expected = host.copy()
    expected[i] = expected[i] * 2 + np.float32(v)
    expected[0, 1:3] -= 1
    assert_close(r[...], expected)
    assert_close(total, expected.sum(), rtol=1e-5, atol=1e-4)
    assert r.unsafe_buffer_pointer() == pointer


def test_unsafe_in_place_update_is_copied_back_correctly():
    """`r @ w` cannot be written into r while it is read: the pass says so, the call copies
    the result back, and the pointer still does not change."""
    @ember.jit
    def step(r, w):
        r[...] = r[...] @ w

    host = np.arange(16, dtype=np.float32).reshape(4, 4)
    w = np.arange(16, dtype=np.float32).reshape(4, 4)[::-1].copy() / 10
    r = ember.new_ref(host)
    pointer = r.unsafe_buffer_pointer()
    assert 'ember.not_aliased = "read by ember.dot_general' in step.lower(r, w).as_text("ember")
    step(r, w)
    assert_close(r[...], host @ w, rtol=1e-5, atol=1e-4)
    assert r.unsafe_buffer_pointer() == pointer


def test_refs_outside_jit():
    r = ember.new_ref(np.zeros(4, np.float32))
    pointer = r.unsafe_buffer_pointer()
    r[1:3] = 5
    r[-1] = jnp.asarray(2.0)
    assert_close(r[...], np.array([0, 5, 5, 2], np.float32))
    assert r.unsafe_buffer_pointer() == pointer


def test_ref_errors():
    r = ember.new_ref(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="returned a Ref: refs are updated in place"):
        ember.jit(lambda r: r)(r)
    with pytest.raises(ValueError, match="same Ref twice"):
        ember.jit(lambda a, b: a[...] + b[...])(r, r)
    with pytest.raises(IndexError, match="strided slices are not supported"):
        ember.jit(lambda r: r[::2])(r)
    with pytest.raises(NotImplementedError, match="inside ember.lax control flow"):
        ember.jit(lambda r, p: ember.lax.cond(p, lambda: r[...], lambda: r[...] * 2))(r, True)
