"""Buffer donation with JAX's rules, made safe by ember-bufferize (seed: "Buffer donation")."""

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
from helpers import assert_close


def _pointer(a) -> int:
    return np.asarray(a).ctypes.data


def _put(shape, value=1.0):
    return ember.device_put(np.full(shape, value, np.float32))


def add(x, y):
    return x + y


def test_seed_donation_reuses_the_buffer_and_invalidates_the_input():
    x, y = _put((2, 3)), _put((2, 3))
    before = _pointer(y)
    z = ember.jit(add, donate_argnums=(1,))(x, y)
    assert_close(z, np.full((2, 3), 2, np.float32))
    assert _pointer(z) == before  # the result lives in y's buffer
    assert y.is_deleted() and not x.is_deleted()
    with pytest.raises(RuntimeError, match=r"no longer valid: it was donated to jit_add"):
        y + 1  # noqa: B018
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(y)


def test_keyword_arguments_are_not_donated_by_argnums():
    def update_fn(params, state):
        return params + 1, state * 2

    params, state = _put(3), _put(3)
    ember.jit(update_fn, donate_argnums=(0, 1))(params=params, state=state)
    assert not params.is_deleted() and not state.is_deleted()
    ember.jit(update_fn, donate_argnames="state")(params, state=state)
    assert state.is_deleted() and not params.is_deleted()


def test_donate_argnames_also_reaches_a_positional_argument():
    x = _put(3)
    ember.jit(lambda x: x * 2, donate_argnames="x")(x)
    assert x.is_deleted()


def test_pytree_arguments_donate_every_leaf():
    def add_ones(xs):
        return [x + 1 for x in xs]

    xs = [_put((2, 3)), _put((3, 4))]
    pointers = [_pointer(a) for a in xs]
    out = ember.jit(add_ones, donate_argnums=0)(xs)
    assert all(a.is_deleted() for a in xs)
    assert [_pointer(o) for o in out] == pointers
    assert_close(out[1], np.full((3, 4), 2, np.float32))


def _warned(fun, *args, **jit_options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ember.jit(fun, **jit_options)(*args)
    return out, [str(w.message) for w in caught if w.category is UserWarning]


W = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
HAZARDS = [  # (function, reason in the warning): IREE alone would give wrong answers here
    (lambda x, w: x @ w, "read by ember.dot_general (a contraction)"),
    (lambda x, w: (jnp.exp(x), x + w), "also read by results [0, 1]"),
]
# Reads that can be done before the write: ember-bufferize orders them first (ember.after,
# util.optimization_barrier, which IREE neither reorders nor fuses across) and ties.
ORDERED = [
    lambda x, w: x.T + w,
    lambda x, w: x - jnp.sum(x, axis=0),
    lambda x, w: x - 0.1 * (x @ w),
    lambda x, w: x - 0.1 * (w @ (x @ w)),
]


@pytest.mark.parametrize("fun, reason", HAZARDS)
def test_unsafe_ties_fall_back_and_give_numpy_answers(fun, reason):
    host = np.arange(16, dtype=np.float32).reshape(4, 4) / 7
    expected = fun(host, W) if not isinstance(fun(host, W), tuple) else fun(host, W)
    x = ember.device_put(host)
    out, messages = _warned(fun, x, W, donate_argnums=0)
    for got, want in zip(out if isinstance(out, tuple) else (out,),
                         expected if isinstance(expected, tuple) else (expected,), strict=True):
        assert_close(got, np.asarray(want, np.float32), rtol=1e-5, atol=1e-5)
    assert x.is_deleted()  # donated means gone, tied or not
    (message,) = messages
    assert message.startswith("Some donated buffers were not usable: f32[4,4] at x (")
    assert reason in message


@pytest.mark.parametrize("fun", ORDERED)
def test_reads_before_the_write_are_ordered_first_and_tied(fun):
    host = np.arange(16, dtype=np.float32).reshape(4, 4) / 7
    expected = np.asarray(fun(host, W), np.float32)
    lowered = ember.jit(fun, donate_argnums=0).lower(host, W)
    assert lowered.unusable_donations == []
    x = ember.device_put(host)
    out, messages = _warned(fun, x, W, donate_argnums=0)
    assert messages == []
    assert_close(out, expected, rtol=1e-5, atol=1e-5)
    assert x.is_deleted()


def _loop_after_its_reader(x, w):
    """The fuzzer's seed 3: a fusion reads x into the result x's buffer takes, and a loop
    carrying x comes after it (an ordering edge to a value defined later)."""
    first = w[0] / (jnp.abs(x) + 1.0)
    return ember.lax.fori_loop(0, 3, lambda i, c: jnp.maximum(c, c * c - 1.0), x), first


def _window_of_itself(x, w):
    """The fuzzer's seed 32: an update of a window computed from the window (IREE cannot
    order a write after reads that are views of the argument)."""
    return x.at[1:2].add(x[1:2] * 2 + 1)


def _numpy_loop_after_its_reader(x, w):
    first = w[0] / (np.abs(x) + 1.0)
    for _ in range(3):
        x = np.maximum(x, x * x - 1.0)
    return x, first


def _numpy_window_of_itself(x, w):
    x = x.copy()
    x[1:2] += x[1:2] * 2 + 1
    return x


@pytest.mark.parametrize("fun, reference", [(_loop_after_its_reader, _numpy_loop_after_its_reader),
                                            (_window_of_itself, _numpy_window_of_itself)])
def test_fuzzed_donations_compile_and_match_numpy(fun, reference):
    """Programs the fuzzer (tests/fuzz.py) found failing to compile with x donated: an
    ordering edge placed before the reader it waits for ("operand does not dominate"), and
    one joining an argument's view with a computed value (IREE: "all of {operands,
    results} have same type")."""
    host = np.arange(10, dtype=np.float32).reshape(5, 2) / 4
    out, _ = _warned(fun, ember.device_put(host), W[:, :2], donate_argnums=0)
    want = reference(host, W[:, :2])
    for got, expected in zip(out if isinstance(out, tuple) else (out,),
                             want if isinstance(want, tuple) else (want,), strict=True):
        assert_close(got, np.asarray(expected, np.float32), rtol=1e-5, atol=1e-5)


def test_unusable_donation_lists_each_leaf_by_path():
    def f(params, x):
        return jnp.sum(params["w"] * x)

    params = {"w": _put(3)}
    _, messages = _warned(f, params, _put(3), donate_argnums=(0, 1))
    (message,) = messages
    assert "f32[3] at params['w'] (no unclaimed result" in message
    assert "f32[3] at x (no unclaimed result" in message


def test_strict_donation_turns_the_warning_into_an_error():
    ember.config.update("ember_strict_donation", True)
    try:
        with pytest.raises(ValueError, match="not usable.*ember_strict_donation is on"):
            ember.jit(lambda x: jnp.sum(x), donate_argnums=0)(_put(3))
    finally:
        ember.config.update("ember_strict_donation", False)


def test_a_donated_array_passed_twice_is_refused():
    x = _put(3)
    with pytest.raises(ValueError, match="same array at x and y, and one of them is donated"):
        ember.jit(add, donate_argnums=1)(x, x)
    assert not x.is_deleted()


def test_donated_numpy_data_is_copied_not_overwritten():
    host = np.ones(64, np.float32)
    out = ember.jit(lambda x: x * 3, donate_argnums=0)(host)
    assert_close(out, np.full(64, 3, np.float32))
    assert (host == 1).all()


def test_donation_waits_for_calls_still_reading_the_buffer():
    """A large async call reads y; donating y to the next call must not overwrite it early."""
    n = 1 << 18
    y = _put(n, 2.0)
    slow = ember.jit(lambda y: jnp.sum(jnp.exp(y) * y))  # runs on worker threads
    total = slow(y)
    ember.jit(lambda y: y * 0, donate_argnums=0)(y)
    assert_close(total, np.float32(np.exp(2.0) * 2 * n), rtol=1e-3)  # f32 sum of 2^18


OPS = {
    "exp": lambda a: jnp.exp(a), "neg": lambda a: -a, "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b, "matmul": lambda a, b: a @ b, "T": lambda a: a.T,
}
NP_OPS = {
    "exp": np.exp, "neg": np.negative, "add": np.add, "mul": np.multiply,
    "matmul": np.matmul, "T": np.transpose,
}


@st.composite
def graphs(draw):
    """Random programs over 3 square inputs: steps of elementwise ops, matmuls and
    transposes, any of the values returned, any of the inputs donated."""
    steps = []
    n_values = 3
    for _ in range(draw(st.integers(1, 5))):
        name = draw(st.sampled_from(sorted(OPS)))
        arity = 2 if name in ("add", "mul", "matmul") else 1
        steps.append((name, [draw(st.integers(0, n_values - 1)) for _ in range(arity)]))
        n_values += 1
    outs = draw(st.lists(st.integers(0, n_values - 1), min_size=1, max_size=3, unique=True))
    donated = draw(st.lists(st.integers(0, 2), max_size=3, unique=True))
    return steps, outs, tuple(sorted(donated))


def _run(steps, outs, values, ops):
    values = list(values)
    for name, args in steps:
        values.append(ops[name](*(values[i] for i in args)))
    return tuple(values[i] for i in outs)


@given(graphs(), st.integers(0, 2**31 - 1))
def test_random_graphs_with_random_donations_match_numpy(graph, seed):
    steps, outs, donated = graph
    rng = np.random.default_rng(seed)
    host = [rng.uniform(-1, 1, (4, 4)).astype(np.float32) for _ in range(3)]
    expected = _run(steps, outs, host, NP_OPS)
    args = [ember.device_put(h) for h in host]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ember.jit(lambda a, b, c: _run(steps, outs, (a, b, c), OPS),
                        donate_argnums=donated)(*args)
    for g, e in zip(got, expected, strict=True):
        assert_close(g, e.astype(np.float32), rtol=1e-4, atol=1e-4)
    assert [a.is_deleted() for a in args] == [i in donated for i in range(3)]


# A donated argument written in place through a view (an update whose indices make Ember
# flatten it, a reshaped update, a row), the update returned, and another result of its type
# computed after it: the other result must not take the argument's buffer, which holds the
# update (the fuzzer found a loop's result written over it). Both against JAX.
_WRITES = ("scatter", "reshaped", "row")
_AFTER = ("loop", "elementwise", "reduction", "product")


@pytest.mark.parametrize("after", _AFTER)
@pytest.mark.parametrize("write", _WRITES)
def test_a_buffer_written_in_place_through_a_view_keeps_its_value(write, after):
    import jax
    import jax.numpy as jnp_

    x = np.random.default_rng(3).standard_normal((6, 6)).astype(np.float32)
    i = np.array([2], np.int32)

    def program(np_mod, fori, x, i):
        y = {"scatter": lambda: x.at[i].max(np_mod.ones((1, 6), np_mod.float32)),
             "reshaped": lambda: x.reshape(36).at[5].set(9.0).reshape(6, 6),
             "row": lambda: x.at[2].add(1.0)}[write]()
        other = {"loop": lambda: fori(0, 9, lambda k, c: c * 0.5 + 1.0, y * 2.0),
                 "elementwise": lambda: np_mod.sin(y) * 2.0 + 1.0,
                 "reduction": lambda: y - np_mod.mean(y, axis=0),
                 "product": lambda: y @ y}[after]()
        return other, y

    want = jax.jit(lambda x, i: program(jnp_, jax.lax.fori_loop, x, i))(x, i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unusable donation is fine here
        got = ember.jit(lambda x, i: program(jnp, ember.lax.fori_loop, x, i),
                        donate_argnums=0)(ember.device_put(x), i)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, rtol=1e-5, atol=1e-5)
