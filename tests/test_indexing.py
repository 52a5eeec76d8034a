"""Indexing with JAX's semantics against NumPy: x[idx] and x.at[idx], eagerly and under jit."""


import jax  # the oracle (a test dependency)
import numpy as np
import pytest
from conftest import few_examples
from hypothesis import assume, given, strategies as st

import ember
import ember.numpy as jnp
from ember.errors import NonConcreteBooleanIndexError
from helpers import assert_close

SHAPE = (4, 5, 3)
HOST = np.arange(60, dtype=np.float32).reshape(SHAPE) - 20


def _slices(n):
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return st.builds(slice, bound, bound, step)


@st.composite
def basic_indices(draw):
    """Integers in range, slices with any step (incl. negative and out-of-range bounds),
    None and an Ellipsis."""
    entries = []
    for n in SHAPE[:draw(st.integers(0, 3))]:
        entries.append(draw(st.one_of(st.integers(-n, n - 1), _slices(n))))
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if draw(st.booleans()):
        entries.append(Ellipsis)
    return tuple(entries)


@given(basic_indices())
def test_basic_indexing_matches_numpy(idx):
    expected = HOST[idx]
    assert_close(jnp.asarray(HOST)[idx], expected)


@given(basic_indices())
def test_basic_indexing_under_jit(idx):
    assert_close(ember.jit(lambda x: x[idx])(HOST), HOST[idx])


@st.composite
def advanced_indices(draw):
    """One or two integer arrays (negative allowed), adjacent or not, with slices."""
    axes = sorted(draw(st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True)))
    shape = draw(st.sampled_from([(2,), (2, 3), ()])) if len(axes) == 1 else (3,)
    idx = []
    for a, n in enumerate(SHAPE):
        if a in axes:
            idx.append(np.asarray(draw(st.lists(st.integers(-n, n - 1),
                                                min_size=int(np.prod(shape)),
                                                max_size=int(np.prod(shape)))),
                                  np.int32).reshape(shape))
        else:  # integers count as advanced indices when arrays are present (NumPy)
            idx.append(draw(st.one_of(st.just(slice(None)), st.just(slice(1, None, 2)),
                                      st.integers(-n, n - 1))))
    return tuple(idx)


@given(advanced_indices())
def test_integer_array_indexing_matches_numpy(idx):
    assert_close(jnp.asarray(HOST)[idx], HOST[idx])
    arrays = [k for k, i in enumerate(idx) if isinstance(i, np.ndarray)]

    def traced(x, *values):  # the integer arrays are traced arguments; slices stay static
        full = list(idx)
        for k, v in zip(arrays, values, strict=True):
            full[k] = v
        return x[tuple(full)]

    assert_close(ember.jit(traced)(HOST, *(idx[k] for k in arrays)), HOST[idx])


def test_traced_integers_and_gathers_clamp_like_jax(jax):
    x = jnp.asarray(HOST)
    f = ember.jit(lambda x, i, j: (x[i], x[:, j]))
    for i in (-6, -1, 0, 3, 7):
        j = np.array([i, -1, 9], np.int32)
        got = f(x, i, j)
        want = jax.jit(lambda x, i, j: (x[i], x[:, j]))(HOST, i, j)
        for g, w in zip(got, want, strict=True):
            assert_close(g, np.asarray(w))


_ROW_DTYPES = [np.float32, np.float16, jnp.bfloat16, np.int8, np.uint16, np.bool_, np.complex64]


@few_examples(8)
@given(st.sampled_from(_ROW_DTYPES), st.sampled_from([(7, 16), (5, 4, 8), (3, 33), (1, 20)]),
       st.sampled_from([(), (4,), (2, 3)]), st.data())
def test_row_gathers_copy_whole_rows_like_jax(dtype, shape, idx_shape, data):
    """Gathers of rows of 16 or more elements along the leading axis (copied whole, see
    lower_take): x[i] clamps, jnp.take fills out-of-range rows, negative count from the end;
    under jit and eagerly (index arrays), against JAX."""
    n = shape[0]
    host = (np.arange(np.prod(shape)).reshape(shape) * 7 % 23 - 11).astype(dtype)
    idx = np.asarray(data.draw(st.lists(st.integers(-2 * n - 1, 2 * n), min_size=int(
        np.prod(idx_shape)), max_size=int(np.prod(idx_shape)))), np.int32).reshape(idx_shape)
    for fn in (lambda np_, x, i: x[i], lambda np_, x, i: np_.take(x, i, axis=0)):
        want = np.asarray(jax.jit(lambda x, i, fn=fn: fn(jax.numpy, x, i))(host, idx))
        assert_close(ember.jit(lambda x, i, fn=fn: fn(jnp, x, i))(host, idx), want)
        if idx.ndim:  # eagerly, a 0-d index is a static integer: bounds-checked (NumPy's)
            assert_close(fn(jnp, jnp.asarray(host), idx), want)


@pytest.mark.parametrize("width", [16, 20, 48, 64, 997])
def test_gathered_rows_feed_a_scatter_and_a_row_sum(width):
    """Rows gathered by index and scatter-added back, and summed along the row, against
    NumPy. A row viewed whole (flat, or as one piece) made IREE vectorize the scatter fused
    after the gather as one vector of all the rows (500 x 20, 500 x 48 floats), which it
    refuses to compile."""
    rng = np.random.default_rng(width)
    x = rng.standard_normal((1000, width)).astype(np.float32)
    idx = rng.integers(0, 1000, 500).astype(np.int32)
    want = np.zeros_like(x)
    np.add.at(want, idx, x[idx])
    assert_close(ember.jit(lambda x, i: jnp.zeros_like(x).at[i].add(x[i]))(x, idx), want,
                 rtol=1e-6, atol=1e-6)
    assert_close(ember.jit(lambda x, i: jnp.sum(jnp.flip(x, 0)[i], axis=1))(x, idx),
                 x[::-1][idx].sum(axis=1), rtol=1e-5, atol=1e-5)


@few_examples(8)
@given(st.sampled_from(_ROW_DTYPES), st.sampled_from([(3, 16), (2, 3, 4, 16), (5, 2, 17)]),
       st.data())
def test_reversals_match_numpy(dtype, shape, data):
    """flip over any set of axes (rows copied in mirrored order when the last axis stays),
    alone and feeding an elementwise op, under jit and eagerly."""
    axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=3)))
    host = (np.arange(np.prod(shape)).reshape(shape) * 5 % 19 - 9).astype(dtype)
    want = np.flip(host, axes)
    assert_close(ember.jit(lambda x: jnp.flip(x, axes))(host), want)
    assert_close(jnp.flip(jnp.asarray(host), axes), want)
    if dtype != np.bool_:
        assert_close(ember.jit(lambda x: jnp.flip(x, axes) * 2)(host), want * 2)


def test_boolean_masks_on_concrete_arrays():
    mask = HOST > 10
    assert_close(jnp.asarray(HOST)[mask], HOST[mask])
    assert_close(jnp.asarray(HOST)[:, HOST[0, :, 0] > -18], HOST[:, HOST[0, :, 0] > -18])


def test_traced_boolean_mask_raises_with_the_fix():
    with pytest.raises(NonConcreteBooleanIndexError, match="boolean indices must be concrete"
                       ".*jnp|ember.numpy.where"):
        ember.jit(lambda x: x[x > 3])(HOST)


def test_arrays_are_immutable():
    x = jnp.asarray(HOST)
    with pytest.raises(TypeError, match=r"immutable.*x.at\[idx\].set"):
        x[0] = 1
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4"):
        x[4]  # noqa: B018
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]  # noqa: B018


def _np_at(x, idx, op, v):
    out = x.copy()
    if op == "set":
        out[idx] = v
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                 "max": np.maximum}[op]
        ufunc.at(out, idx, v)
    return out


@given(st.one_of(basic_indices(), advanced_indices()),
       st.sampled_from(["set", "add", "multiply", "min", "max"]),
       st.floats(-4, 4, width=32))
def test_at_updates_match_numpy(idx, op, value):
    if any(isinstance(i, np.ndarray) and i.ndim == 2 for i in idx):
        return  # NumPy's ufunc.at broadcasts these differently; covered by the case below
    expected = _np_at(HOST, idx, op, np.float32(value))
    assert_close(getattr(jnp.asarray(HOST).at[idx], op)(np.float32(value)), expected)
    jitted = ember.jit(lambda x, v: getattr(x.at[idx], op)(v))(HOST, np.float32(value))
    assert_close(jitted, expected)


def test_at_drops_out_of_range_updates_like_jax(jax):
    x = jnp.asarray(HOST)
    f = ember.jit(lambda x, i: x.at[i].add(100.0))
    g = jax.jit(lambda x, i: x.at[i].add(100.0))
    for i in (-5, -1, 2, 4, 9):
        assert_close(f(x, i), np.asarray(g(HOST, i)))
    idx = np.array([0, 0, 7, -1], np.int32)  # repeats accumulate; 7 is dropped
    assert_close(x.at[idx].add(1.0), np.asarray(jax.numpy.asarray(HOST).at[idx].add(1.0)))
    assert_close(x.at[1:3, ::2].get(), HOST[1:3, ::2])


def test_updates_never_touch_the_input():
    x = jnp.asarray(HOST)
    before = np.array(x)
    for op in ("set", "add", "multiply", "min", "max"):
        getattr(x.at[:, ::2], op)(2.0).block_until_ready()
    assert_close(x, before)


@given(basic_indices(), st.sampled_from(["set", "add", "multiply", "min", "max"]),
       st.booleans())
def test_window_updates_with_array_values_and_traced_integers(idx, op, traced):
    """Basic indices update one strided window (ember.dynamic_update_slice): values of the
    selected shape land in order (reversed steps too), and traced integers, out of range
    included, behave as static ones (out of range drops the update, as JAX does)."""
    values = (np.arange(HOST[idx].size, dtype=np.float32) - 7).reshape(HOST[idx].shape)
    expected = _np_at(HOST, idx, op, values)
    ints = [k for k, e in enumerate(idx) if isinstance(e, int)]

    def update(x, v, *traced_ints):
        entries = list(idx)
        for k, i in zip(ints, traced_ints, strict=False):
            entries[k] = i
        return getattr(x.at[tuple(entries)], op)(v)

    args = [np.int32(idx[k]) for k in ints] if traced else []
    f = ember.jit(update) if traced else ember.jit(lambda x, v: update(x, v))
    assert_close(f(HOST, values, *args), expected)
    shifted = [np.int32(idx[k] + 100) for k in ints]  # out of range: dropped
    if traced and ints:
        assert_close(f(HOST, values, *shifted), HOST)


def test_window_updates_lower_to_an_insert_not_a_dense_pass():
    """x.at[slices] costs the window, not the array: one tensor.insert_slice of the update,
    no generic over the whole array, when x is donated or made inside the function. An
    argument the caller keeps is copied once first (IREE would write into it)."""
    def interior(a):
        return a.at[1:-1, 1:-1, 1:-1].set(a[1:-1, 1:-1, 1:-1] * 2.0)

    x = np.zeros((25, 25, 25), np.float32)
    for f in (ember.jit(interior, donate_argnums=0), ember.jit(lambda a: interior(a + 1.0))):
        text = f.lower(x).as_text("linalg")
        assert text.count("tensor.insert_slice") == 1
        dense = [line for line in text.splitlines()
                 if "linalg.generic" in line and "outs(" in line and "25x25x25" in
                 line.split("outs(")[1]]
        assert len(dense) == (0 if f.lower(x).as_text("ember").count("ember.donated") else 1)
    kept = ember.jit(interior).lower(x)
    assert kept.as_text("ember").count('"ember.copy"(%arg0)') == 1
    # the window is read from the argument, not the copy; the copy reads no coordinates
    assert '"ember.slice"(%arg0)' in kept.as_text("ember")
    assert "tensor.extract " not in kept.as_text("linalg")


@few_examples(8)
@given(st.data())
def test_window_stores_write_elementwise_updates_in_place(data):
    """An elementwise update of a static window, any steps, is computed by the dispatch that
    writes it (ember-window-stores: one flow.dispatch.region, IREE writing the window in
    place), against NumPy: from another array, from a kept argument's own windows (read from
    the argument, written into its copy), and in a loop over two carries (heat-3d's shape).
    The caller's arrays keep their values."""
    shape = tuple(data.draw(st.lists(st.integers(3, 7), min_size=1, max_size=3)))
    window = []
    for n in shape:  # at least two elements a dim (the pass leaves unit dims alone)
        step = data.draw(st.integers(1, 2))
        start = data.draw(st.integers(0, n - 1 - step))
        window.append(slice(start, data.draw(st.integers(start + step + 1, n)), step))
    window = tuple(window)
    assume(np.empty(shape)[window].shape != shape)  # a whole-array "window" is no insert
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    shifted = tuple(slice(0, n) for n in a[window].shape)  # another window, same shape

    def other(a, b):
        return b.at[window].set(a[window] * 2.0 + a[shifted])

    def own(a):
        return a.at[window].set(jnp.exp(a[shifted]) - a[window])

    def loop(a, b):
        def step(i, ab):
            a, b = ab
            b = b.at[window].set(a[window] * 0.5 + a[shifted])
            return a.at[window].set(b[shifted] - b[window] * 0.25), b
        return ember.lax.fori_loop(0, 3, step, (a, b))

    def host_loop(a, b):
        a, b = a.copy(), b.copy()
        for _ in range(3):
            b[window] = a[window] * 0.5 + a[shifted]
            a[window] = b[shifted] - b[window] * 0.25
        return a, b

    want = b.copy()
    want[window] = a[window] * 2 + a[shifted]
    mine = a.copy()
    mine[window] = np.exp(a[shifted]) - a[window]
    cases = [(other, (a, b), want, 1), (own, (a,), mine, 1), (loop, (a, b), host_loop(a, b), 2)]
    for f, args, expected, stores in cases:
        jitted = ember.jit(f)
        assert jitted.lower(*args).as_text("linalg").count("flow.dispatch.region") == stores
        kept = [ember.device_put(x) for x in args]
        got = jitted(*kept)
        for g, e in zip(got if isinstance(got, tuple) else (got,),
                        expected if isinstance(expected, tuple) else (expected,), strict=True):
            assert_close(g, e, rtol=1e-5, atol=1e-5)
        for k, x in zip(kept, args, strict=True):
            assert_close(k, x)


@pytest.mark.parametrize("shape, steps", [((17, 19), 3), ((9,), 4), ((6, 7, 8), 2),
                                          ((17, 19), 1)])
def test_python_unrolled_stencils_match_jax(shape, steps):
    """Jacobi steps unrolled in Python, each an update of the interior computed from the
    last step's windows: ember-window-stores merged one insert, erased its ops and then read
    its order of the block by addresses a later op had taken (KeyError at 3 steps of
    (17, 19))."""
    interior = (slice(1, -1),) * len(shape)

    def shifted(a, axis, by):
        return a[tuple(slice(1 + by, a.shape[d] - 1 + by) if d == axis else slice(1, -1)
                       for d in range(a.ndim))]

    def stencil(a):
        for _ in range(steps):
            near = sum(shifted(a, d, s) for d in range(a.ndim) for s in (-1, 1))
            a = a.at[interior].set(near / (2 * a.ndim))
        return a

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert_close(ember.jit(stencil)(x), jax.jit(stencil)(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(7,), (5, 6), (4, 5, 6)])
def test_updates_of_a_kept_argument_read_its_old_values(shape):
    """Updates of an argument the caller keeps go to a copy of it, and its reads to the
    argument: an update computed from the argument's own windows, a second update of it,
    and the argument itself, returned together, against NumPy; the caller's array keeps its
    values."""
    host = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 5
    inner, above, below = (tuple(slice(*b) for _ in shape)
                           for b in ((1, -1), (2, None), (0, -2)))
    corner = (0,) * len(shape)

    def f(a):
        return (a.at[inner].set(a[above] + a[below] * 2.0), a.at[corner].add(100.0),
                a * 1.0, a)

    y = host.copy()
    y[inner] = host[above] + host[below] * 2
    z = host.copy()
    z[corner] += 100
    x = jnp.asarray(host)
    for out in (ember.jit(f)(x), f(x)):
        for got, want in zip(out, (y, z, host, host), strict=True):
            assert_close(got, want)
    assert_close(x, host)


@given(st.sampled_from(["set", "add", "multiply", "min", "max"]), st.data())
def test_integer_array_updates_scatter_like_jax(op, data):
    """Integer-array .at updates are a real scatter: repeated positions combine (add, mul,
    min, max; set positions drawn unique, JAX leaves their winner unspecified), out-of-range
    ones (either side, and past -n) are dropped, the argument is never written."""
    n = 300
    x = np.linspace(-3, 3, n, dtype=np.float32)
    positions = st.integers(-2 * n, 2 * n)
    idx = np.asarray(data.draw(st.lists(positions, min_size=1, max_size=40,
                                        unique=op == "set")), np.int32)
    if op == "set":  # unique after wrapping negatives too
        wrapped = np.where(idx < 0, idx + n, idx)
        keep = [i for i, w in enumerate(wrapped) if list(wrapped).index(w) == i]
        idx = idx[keep]
    v = np.arange(idx.size, dtype=np.float32) / 4 - 2
    import jax.numpy as jnp_
    expected = np.asarray(getattr(jnp_.asarray(x).at[idx], op)(v))
    arg = ember.device_put(x)
    got = ember.jit(lambda a, i, u: getattr(a.at[i], op)(u))(arg, idx, v)
    assert_close(got, expected)
    assert_close(arg, x)


def test_a_boolean_mask_must_have_the_shape_of_its_axes():
    """NumPy's and JAX's rule: a shorter mask raised nothing and indexed the first elements."""
    with pytest.raises(IndexError, match="along axis 0; size of axis is 3 but size of "
                                         "corresponding boolean axis is 2"):
        jnp.zeros(3)[jnp.asarray([True, False])]
    with pytest.raises(IndexError, match="along axis 0"):
        jnp.zeros(3)[[True, False]]
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(IndexError, match="along axis 1; size of axis is 4 but .* is 3"):
        jnp.asarray(x)[:, np.array([True, False, True])]
    with pytest.raises(IndexError, match="along axis 1"):
        jnp.asarray(x)[..., np.array([True, False])]
    mask = np.array([True, False, True, True])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[..., mask]), x[..., mask])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[x > 4]), x[x > 4])


def test_slice_bounds_may_be_concrete_integer_arrays():
    """x[start:stop] with 0-d integer arrays as bounds uses their values, as JAX does (the
    array API suite slices with counts it read from an array); traced bounds say so."""
    x = np.arange(10.0, dtype=np.float32)
    got = jnp.asarray(x)[jnp.asarray(2):np.int64(9):jnp.asarray(3)]
    np.testing.assert_array_equal(np.asarray(got), x[2:9:3])
    with pytest.raises(ember.errors.TracerIntegerConversionError):
        ember.jit(lambda x, k: x[:k])(x, jnp.asarray(3))


_READERS = {
    "loop": lambda np_, lax, c: lax.fori_loop(0, 4, lambda i, c: np_.maximum(c, c * c - 1.0), c),
    "elementwise": lambda np_, lax, c: np_.sin(c) * 3,
    "transpose": lambda np_, lax, c: np_.transpose(c) * 3,
    "reduction": lambda np_, lax, c: np_.sum(c, axis=0),
    "slice": lambda np_, lax, c: c[1:3] * 2,
}


@pytest.mark.parametrize("reader", sorted(_READERS))
@pytest.mark.parametrize("beside", [False, True])
@pytest.mark.parametrize("how", ["set", "add", "scatter"])
def test_updates_after_reads_of_the_old_value_match_jax(reader, beside, how):
    """A value read (by `reader`), then updated in place, both results returned, with or
    without an independent dispatch beside them (IREE 3.13 elided its copy before the update
    and, given another dispatch to run beside it, ran the update before the read)."""
    def program(np_, lax, x, y):
        v = x.at[4, 2:4].add(x[4, 2:4] * 2 + 1)  # a value of the program's own
        old = _READERS[reader](np_, lax, v)
        at = v.at[np_.array([3, 0])] if how == "scatter" else v.at[3:4, 0:1]
        new = at.set(v[3:4, 0:1] * 2 + 1) if how == "set" else at.add(7.0)
        return (new, old, y.astype(np_.float32) * 0.5) if beside else (new, old)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 5)).astype(np.float32) * 1.5
    y = rng.integers(-5, 5, (4, 4)).astype(np.int32)
    want = jax.jit(lambda a, b: program(jax.numpy, jax.lax, a, b))(x, y)
    got = ember.jit(lambda a, b: program(jnp, ember.lax, a, b))(x, y)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, rtol=1e-5)


_SHARED_READS = {  # a read of a (5, 5) value, to the same shape
    "reversal": lambda np_, x: np_.flip(x, 0),
    "transpose": lambda np_, x: np_.transpose(x),
    "roll": lambda np_, x: np_.roll(x, 2, axis=1),
    "gather": lambda np_, x: np_.take(x, np_.array([4, 0, 3, 1, 2]), axis=0),
    "elementwise": lambda np_, x: np_.abs(x),
    "broadcast": lambda np_, x: np_.broadcast_to(x[2], (5, 5)),
}


@pytest.mark.parametrize("read", sorted(_SHARED_READS))
@pytest.mark.parametrize("write", ["donated", "set"])
def test_writes_wait_for_reads_that_several_ops_consume(read, write):
    """A read of a buffer written in place (a donated argument's, or an update's), whose
    result two ops consume, one of them the write's: IREE computed a cheap read (a
    reversal) again inside the other consumer's dispatch, which the write did not wait
    for."""
    def program(np_, x, k):
        if write == "donated":
            v = _SHARED_READS[read](np_, x)
            return v + k, v * k
        w = x * k + 1  # a value of the program's own, updated in place
        v = _SHARED_READS[read](np_, w)
        return w.at[1:3, 2].set(v[0, :2] + k), v * k, v - 1

    rng = np.random.default_rng(0)
    x = rng.integers(-8, 9, (5, 5)).astype(np.int32)
    want = jax.jit(lambda a, b: program(jax.numpy, a, b))(x, np.int32(3))
    f = ember.jit(lambda a, b: program(jnp, a, b),
                  donate_argnums=0 if write == "donated" else ())
    got = f(jnp.asarray(x), np.int32(3))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


# Views of a strided view, each read by every op that reads elements one at a time
# (tensor.extract in a generic's body): IREE folds the view into the reading dispatch and
# once failed to translate a read of a strided slice to LLVM. One jitted function a chain.
_STRIDED = {"every other column": lambda x: x[:, ::2], "reversed rows, odd columns":
            lambda x: x[::-1, 1::2]}
_VIEWS = {
    "itself": lambda np_, v: v,
    "transposed": lambda np_, v: np_.transpose(v),
    "flattened": lambda np_, v: v.reshape(-1),
    "transposed, flattened": lambda np_, v: np_.transpose(v).reshape(-1),
    "flattened, reshaped, transposed": lambda np_, v: np_.transpose(v.reshape(-1).reshape(
        v.shape[1], v.shape[0])),
    "transposed, strided": lambda np_, v: np_.transpose(v)[::2, 1:],
    "expanded, transposed": lambda np_, v: np_.transpose(v[None], (2, 0, 1)),
    "broadcast": lambda np_, v: np_.broadcast_to(v, (2, *v.shape)),
    "scaled": lambda np_, v: v * 2,
}
_ELEMENT_READS = (
    lambda np_, v: v[::-1],
    lambda np_, v: np_.flip(v),
    lambda np_, v: np_.flip(v, -1),
    lambda np_, v: np_.take(v, np_.array([1, 0, 1]), axis=0, mode="clip"),
    lambda np_, v: np_.take(v, np_.array([1, 0, 1]), axis=-1, mode="clip"),
    lambda np_, v: np_.roll(v, 1, axis=0),
    lambda np_, v: np_.sort(v, axis=0),
    lambda np_, v: np_.cumsum(v, axis=0),
)


@pytest.mark.parametrize("view", _VIEWS)
@pytest.mark.parametrize("strided", _STRIDED)
def test_element_reads_of_views_of_strided_views_match_jax(strided, view):
    def chain(np_, x):
        v = _VIEWS[view](np_, _STRIDED[strided](x))
        return [read(np_, v) for read in _ELEMENT_READS]

    x = np.arange(42, dtype=np.float32).reshape(6, 7) / 2 - 3
    got = ember.jit(lambda x: chain(jnp, x))(x)
    want = jax.jit(lambda x: chain(jax.numpy, x))(x)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w)


_SELF_UPDATES = {  # v: an elementwise result of the program's own, f32[6, 5]
    "itself, whole": lambda v: v.at[:].set(v),
    "itself, all rows": lambda v: v.at[0:6].set(v),
    "its own window": lambda v: v.at[1:3].set(v[1:3]),
    "shifted down a row": lambda v: v.at[1:].set(v[:-1]),
    "shifted, scaled": lambda v: v.at[:, 1:].set(v[:, :-1] * 2 + 1),
    "its transpose's window": lambda v: v.at[:5].set(v[:5, :].T[:, :5].T * 3),
    "its rows, scattered": lambda v: v.at[np.array([4, 1])].set(v[:2]),
    "its rows, scatter-added": lambda v: v.at[np.array([0, 1])].add(v[1:3]),
}


@pytest.mark.parametrize("update", _SELF_UPDATES)
def test_updates_made_of_their_destination_match_numpy(update):
    """An update computed from the value it is written into (x.at[:].set(x) made
    ember-window-stores' fusion read the value it replaced: it did not compile)."""
    x = np.arange(30, dtype=np.float32).reshape(6, 5) / 4 - 3

    def program(x):
        return _SELF_UPDATES[update](jnp.floor(x * 2.0) + 0.5)

    want = np.floor(x * 2.0) + 0.5
    want = np.asarray(_SELF_UPDATES[update](jax.numpy.asarray(want)))
    assert_close(ember.jit(program)(x), want)
    assert_close(program(jnp.asarray(x)), want)


@few_examples(6)
@given(st.integers(1, 7), st.sampled_from([None, 1, 4, 9]),
       st.sampled_from([np.float32, np.int32]), st.integers(0, 2 ** 16))
def test_segment_reductions_match_jax(rows, num_segments, dtype, seed):
    """ember.ops' segment_sum/prod/max/min against jax.ops': repeated and unsorted ids, ids
    out of range and negative (dropped), segments without rows (the combine's identity),
    num_segments given (the four under one jit) or found from the ids (eagerly)."""
    rng = np.random.default_rng(seed)
    data = rng.integers(-4, 5, (rows, 3)).astype(dtype)
    ids = rng.integers(-1, 6, rows).astype(np.int32)
    names = ("segment_sum", "segment_prod", "segment_max", "segment_min")
    wants = [np.asarray(getattr(jax.ops, n)(data, ids, num_segments)) for n in names]
    if num_segments is None:
        gots = [getattr(ember.ops, n)(data, ids) for n in names]
    else:
        gots = ember.jit(lambda d, i: [getattr(ember.ops, n)(d, i, num_segments)
                                       for n in names])(data, ids)
    for name, got, want in zip(names, gots, wants, strict=True):
        got = np.asarray(got)
        np.testing.assert_array_equal(got, want, err_msg=name)
        assert got.dtype == want.dtype, name
