"""Long sorts (the merge-sort lowering, rows over SHORT_ROW) against NumPy and JAX: stable,
NaN last, -0.0 tied with 0.0, duplicates, descending, along any axis."""

import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.numpy as enp
from ember.compiler.lower_sort import SHORT_ROW
from helpers import assert_close

# (shape, axis): one power of two, one just past the short-row limit (padded), one on a
# leading axis. Few shapes, so compiles stay bounded while values vary freely.
CASES = [((256,), 0), ((SHORT_ROW + 1,), -1), ((3, 130), 1), ((97, 2), 0)]


def _values(dtype, shape):
    if dtype == np.float32:
        elements = st.one_of(st.sampled_from([0.0, -0.0, 1.5, -2.0, np.nan, np.inf, -np.inf]),
                             st.floats(-1e6, 1e6, width=32))
    elif dtype == np.uint8:
        elements = st.integers(0, 255)
    else:
        elements = st.integers(-5, 5)  # many ties
    return hnp.arrays(dtype, shape, elements=elements)


@few_examples(8)
@given(st.data())
def test_long_sorts_match_numpy_and_jax(data):
    jnp = pytest.importorskip("jax.numpy")
    shape, axis = data.draw(st.sampled_from(CASES))
    dtype = data.draw(st.sampled_from([np.float32, np.int32, np.uint8]))
    x = data.draw(_values(dtype, shape))
    jitted = data.draw(st.booleans())
    sort, argsort = (ember.jit(f, static_argnames="axis") if jitted else f
                     for f in (enp.sort, enp.argsort))
    assert_close(sort(x, axis=axis), np.sort(x, axis=axis))
    order = np.argsort(x, axis=axis, kind="stable").astype(np.int32)
    assert_close(argsort(x, axis=axis), order)
    assert_close(np.asarray(jnp.argsort(x, axis=axis)), order)  # JAX agrees on ties


def test_long_descending_sorts_keep_ties_in_order():
    jnp = pytest.importorskip("jax.numpy")
    x = np.random.default_rng(0).integers(0, 4, 300).astype(np.int32)
    for fn in ("sort", "argsort"):
        assert_close(getattr(enp, fn)(x, descending=True),
                     np.asarray(getattr(jnp, fn)(x, descending=True)))


def test_long_rows_are_merged_in_passes_short_rows_use_iree_sort():
    """Over SHORT_ROW: scf.for loops over merge kernels (linalg.generic), no
    iree_linalg_ext.sort (quadratic on the CPU); short rows keep it (one dispatch)."""
    long = ember.jit(enp.sort).lower(np.zeros(1 << 20, np.float32)).as_text("linalg")
    assert "iree_linalg_ext.sort" not in long
    assert long.count("scf.for") == 3  # 20 passes in three kernels of at most 7
    short = ember.jit(enp.sort).lower(np.zeros(SHORT_ROW, np.float32)).as_text("linalg")
    assert "iree_linalg_ext.sort" in short and "scf.for" not in short
