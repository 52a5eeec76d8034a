"""Sorts (the merge-sort lowering) against NumPy and JAX: stable, NaN last, -0.0 tied with
0.0, duplicates, descending, along any axis; lax.sort, sort_key_val, top_k, partition."""

import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.numpy as enp
from helpers import assert_close

# (shape, axis): a power of two, padded lengths, a leading axis, one element. Few shapes, so
# compiles stay bounded while values vary freely.
CASES = [((256,), 0), ((65,), -1), ((3, 130), 1), ((97, 2), 0), ((2, 1), 1)]


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
    import jax.numpy as jnp
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
    import jax.numpy as jnp
    x = np.random.default_rng(0).integers(0, 4, 300).astype(np.int32)
    for fn in ("sort", "argsort"):
        assert_close(getattr(enp, fn)(x, descending=True),
                     np.asarray(getattr(jnp, fn)(x, descending=True)))


def test_rows_are_merged_in_passes():
    """scf.for loops over merge kernels (linalg.generic), never iree_linalg_ext.sort
    (quadratic on the CPU, and in place on its outs)."""
    long = ember.jit(enp.sort).lower(np.zeros(1 << 20, np.float32)).as_text("linalg")
    assert "iree_linalg_ext.sort" not in long
    assert long.count("scf.for") == 3  # 20 passes in three kernels of at most 7
    short = ember.jit(enp.sort).lower(np.zeros(5, np.float32)).as_text("linalg")
    assert short.count("scf.for") == 1 and "tensor.insert_slice" in short  # padded to 8


def test_sorting_never_writes_its_operand():
    """`(sort(x), x)` once returned the sorted x twice, and an eager sort(a) sorted `a`."""
    a = enp.asarray(np.array([3.0, 1.0, 2.0], np.float32))
    assert_close(enp.sort(a), np.array([1.0, 2.0, 3.0], np.float32))
    assert_close(a, np.array([3.0, 1.0, 2.0], np.float32))
    both = ember.jit(lambda x: (enp.sort(x), x + 0))(a)
    assert_close(both[1], np.array([3.0, 1.0, 2.0], np.float32))
    assert_close(a, np.array([3.0, 1.0, 2.0], np.float32))


@few_examples(4)
@given(st.data())
def test_lax_sorts_top_k_and_partition_match_jax(data):
    import jax

    from ember import lax

    shape = data.draw(st.sampled_from([(2, 90), (7,)]))  # k below is static: few values
    # No NaN (JAX's partition negates its input) and no -0.0 (XLA's top_k orders -0.0 below
    # 0.0 while its sort ties them, as ours does).
    keys = data.draw(_values(np.float32, shape).filter(lambda a: not np.isnan(a).any())) + 0.0
    ties = data.draw(_values(np.int32, shape))
    payload = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    num_keys = data.draw(st.integers(1, 2))
    k = data.draw(st.sampled_from([0, 5]))
    pairs = [
        (lax.sort((ties, keys, payload), num_keys=num_keys),
         jax.lax.sort((ties, keys, payload), num_keys=num_keys)),
        (lax.sort_key_val(ties, payload), jax.lax.sort_key_val(ties, payload)),
        (lax.top_k(keys, k), jax.lax.top_k(keys, k)),
        ((enp.partition(keys, k), enp.argpartition(ties, k)),
         (jax.numpy.partition(keys, k), jax.numpy.argpartition(ties, k))),
    ]
    for ours, theirs in pairs:
        for a, b in zip(ours, theirs, strict=True):
            assert_close(a, np.asarray(b))


def test_sort_errors_name_the_argument():
    from ember import lax

    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((np.zeros(3), np.zeros(3)), num_keys=3)
    with pytest.raises(ValueError, match="k=9"):
        lax.top_k(np.zeros(3), 9)
    with pytest.raises(ValueError, match="kth"):
        enp.partition(np.zeros(3), 3)


def test_top_k_of_long_rows_searches_blocks_like_jax():
    """Rows over 16 blocks of 64 take the block path (block maxima, then k blocks sorted):
    ties, NaN, -inf and a padded last block agree with JAX's top_k."""
    import jax

    from ember import lax

    rng = np.random.default_rng(3)
    x = rng.integers(0, 20, (2, 1100)).astype(np.float32)
    x[0, [5, 900]] = np.nan
    x[1, :] = -np.inf
    x[1, [7, 1099]] = 3.0
    for k in (1, 3):
        ours, theirs = lax.top_k(x, k), jax.lax.top_k(x, k)
        assert_close(ours[0], np.asarray(theirs[0]))
        assert_close(ours[1], np.asarray(theirs[1]))
