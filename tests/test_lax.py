"""ember.lax control flow against plain Python, under jit and eagerly."""

import jax  # the oracle (a test dependency)
import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
from ember import lax
from ember.compiler.loops import UNROLL
from helpers import assert_close, check_cases_under_jit


@ember.jit
def branchy(x, p):
    return lax.cond(p > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)


@given(st.integers(-5, 5), st.lists(st.floats(-100, 100, width=32), min_size=3, max_size=3))
def test_cond_picks_the_branch_at_run_time(p, values):
    x = np.array(values, np.float32)
    assert_close(branchy(x, p), x * 2 if p > 0 else x - 1)


def test_cond_with_closures_pytrees_and_integer_predicates():
    @ember.jit
    def f(x, scale, k):
        def big(t):
            return {"a": t[0] * scale, "b": t[1] + 1}

        def small(t):
            return {"a": t[0] - scale, "b": t[1] * 0}

        return lax.cond(k, big, small, (x, k))

    x = np.arange(3, dtype=np.float32)
    out = f(x, np.float32(3), 2)
    assert_close(out["a"], x * 3)
    assert int(out["b"]) == 3
    out = f(x, np.float32(3), 0)
    assert_close(out["a"], x - 3)
    assert int(out["b"]) == 0


@given(st.integers(0, 12), st.integers(-3, 20))
def test_fori_loop_with_traced_bounds_matches_python(lower, upper):
    f = ember.jit(lambda lo, hi, x: lax.fori_loop(lo, hi, lambda i, v: v * 2 + i, x))
    expected = 1
    for i in range(lower, upper):
        expected = expected * 2 + i
    assert int(f(lower, upper, 1)) == np.int32(expected)  # zero-trip loops included


@given(st.floats(0.5, 4.0, width=32), st.integers(0, 15))
def test_while_loop_with_a_pytree_carry_and_closure(base, limit):
    @ember.jit
    def f(x, y, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * y), (0, x))

    x = np.ones(3, np.float32)
    count, value = f(x, np.float32(base), limit)
    assert int(count) == limit
    assert_close(value, x * np.float32(base) ** limit, rtol=1e-5)


def test_nested_control_flow():
    @ember.jit
    def collatz_steps(n):
        def step(c):
            k, steps = c
            even = jnp.equal(k, (k / 2).astype(jnp.int32) * 2)
            k = lax.cond(even, lambda v: (v / 2).astype(jnp.int32), lambda v: 3 * v + 1, k)
            return k, steps + 1

        return lax.while_loop(lambda c: c[0] != 1, step, (n, 0))[1]

    for n, steps in [(1, 0), (6, 8), (27, 111)]:
        assert int(collatz_steps(n)) == steps


def test_loops_compile_to_scf_not_unrolled():
    f = ember.jit(lambda x: lax.fori_loop(0, 100, lambda i, v: v + jnp.sum(v) * 0.01, x))
    lowered = f.lower(np.ones(2, np.float32))
    ember_text = lowered.as_text("ember")
    # ember-unroll-loops: 12 trips of 8 bodies, then the original loop's 4 trips left
    assert ember_text.count('"ember.for"') == 2 and ember_text.count("ember.reduce_sum") == 9
    linalg = lowered.as_text("linalg")
    assert linalg.count("scf.for") == 2 and "func.call" not in linalg
    assert "stream.topology" in linalg  # what lets IREE keep loop carries in place
    expected = np.ones(2, np.float32)
    for _ in range(100):
        expected = expected + expected.sum() * np.float32(0.01)
    assert_close(f(np.ones(2, np.float32)), expected)
    # An elementwise body is one kernel: the loop inside a linalg.generic.
    g = ember.jit(lambda x: lax.fori_loop(0, 100, lambda i, v: v + 1.0, x))
    lowered = g.lower(np.ones(2, np.float32))
    assert '"ember.elementwise_for"' in lowered.as_text("ember")
    assert lowered.as_text("linalg").count("scf.for") == 1
    assert_close(g(np.ones(2, np.float32)), np.full(2, 101, np.float32))


def test_control_flow_ops_carry_regions():
    """ember.if / ember.case / ember.while hold their bodies as regions ending in ember.yield;
    closed-over values are used inside the region directly, and work there stays there."""
    def f(i, x):
        y = x * 3.0
        branches = [lambda v: v + y, lambda v: v * 10.0, lambda v: -v]
        z = lax.switch(i, branches, x)
        return lax.cond(i > 1, lambda v: jnp.exp(v), lambda v: v - y, z)

    lowered = ember.jit(f).lower(1, np.ones(2, np.float32))
    text = lowered.as_text("ember")
    assert text.count('"ember.case"') == 1 and text.count('"ember.if"') == 1
    traced = ember.jit(f).trace(1, np.ones(2, np.float32)).ir
    assert traced.count('"ember.yield"') == 5 and "func.func private" not in text
    case = text[text.index('"ember.case"'):]
    assert case.index('"ember.exp"') > case.index('"ember.if"')  # exp inside the if's region
    linalg = lowered.as_text("linalg")
    assert linalg.count("scf.if") == 3 and '"ember.' not in linalg
    x = np.arange(2, dtype=np.float32)
    for i in range(-1, 4):
        z = [x + 3 * x, x * 10, -x][min(max(i, 0), 2)]
        assert_close(ember.jit(f)(i, x), np.exp(z) if i > 1 else z - 3 * x)


def test_concrete_control_flow_runs_eagerly():
    assert lax.cond(True, lambda v: v + 1, lambda v: v - 1, 1) == 2
    assert lax.fori_loop(0, 4, lambda i, v: v + i, 0) == 6
    out = lax.while_loop(lambda v: v < 10, lambda v: v * 3, jnp.asarray(1))
    assert int(out) == 27


def test_branch_mismatch_shows_both_pytrees():
    f = ember.jit(lambda x: lax.cond(x > 0, lambda v: v, lambda v: (v, v), x))
    with pytest.raises(TypeError, match=r"cond requires true_fun and false_fun to return the "
                       r"same pytree .*true_fun: i32\[\] and false_fun: \('i32\[\]', "
                       r"'i32\[\]'\)"):
        f(1)


def test_carry_mismatch_shows_both_pytrees():
    f = ember.jit(lambda x: lax.while_loop(lambda v: v < 3, lambda v: v * 0.5, x))
    with pytest.raises(TypeError, match=r"body_fun to return the carry's .* got carry i32\[\] "
                       r"but body_fun returned f32\[\]"):
        f(1)
    g = ember.jit(lambda x: lax.while_loop(lambda v: v, lambda v: v, x))
    with pytest.raises(TypeError, match="cond_fun to return a boolean scalar"):
        g(np.ones(2, np.float32))


@given(st.integers(-3, 6))
def test_switch_clamps_the_index_like_jax(index):
    branches = [lambda v: v + 1.0, lambda v: v * 10.0, lambda v: -v]
    f = ember.jit(lambda i, x: lax.switch(i, branches, x))
    x = np.arange(3, dtype=np.float32)
    expected = branches[min(max(index, 0), 2)](x)
    assert_close(f(index, x), expected)
    assert_close(lax.switch(index, branches, x), expected)  # eagerly, too


def _scan_reference(xs, reverse):
    carry, ys = np.float32(0), []
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in order:
        carry = np.float32(carry * 0.5 + xs[i])
        ys.append(carry * 2)
    if reverse:
        ys.reverse()
    return carry, np.array(ys, np.float32).reshape(len(xs))


@given(st.integers(0, 9), st.booleans())
def test_scan_matches_python_including_empty_and_reversed(n, reverse):
    def step(c, x):
        c = c * 0.5 + x
        return c, c * 2

    xs = np.arange(n, dtype=np.float32) - 3
    f = ember.jit(lambda init, v: lax.scan(step, init, v, reverse=reverse))
    carry, ys = f(np.float32(0), xs)
    ref_carry, ref_ys = _scan_reference(xs, reverse)
    assert_close(carry, np.asarray(ref_carry, np.float32))
    assert_close(ys, ref_ys)


def test_scan_with_pytrees_and_closures():
    w = np.array([[0.5, -1.0], [1.0, 0.25]], np.float32)

    @ember.jit
    def rnn(w, h0, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x["in"])
            return h, {"h": h, "norm": jnp.sum(h * h)}

        return lax.scan(cell, h0, xs)

    xs = {"in": np.arange(8, dtype=np.float32).reshape(4, 2) / 8}
    h, ys = rnn(w, np.zeros(2, np.float32), xs)
    ref_h, ref_hs = np.zeros(2, np.float32), []
    for x in xs["in"]:
        ref_h = np.tanh(ref_h @ w + x)
        ref_hs.append(ref_h)
    assert_close(h, ref_h, rtol=1e-5)
    assert_close(ys["h"], np.stack(ref_hs), rtol=1e-5)
    assert_close(ys["norm"], (np.stack(ref_hs) ** 2).sum(1), rtol=1e-5)
    assert rnn.lower(w, np.zeros(2, np.float32), xs).as_text("linalg").count("scf.for") == 1


@pytest.mark.parametrize("kept", [(), ("h",), ("h", "norm")])
@few_examples()
@given(st.sampled_from([17, 24]), st.booleans(), st.integers(0, 2**32 - 1))
def test_scan_outputs_nobody_reads_are_not_stacked(kept, n, reverse, seed):
    """`h, _ = lax.scan(...)`: the stacked outputs the caller drops are never written (no
    insert a step), those it reads are, and both agree with JAX's scan. Over 16 steps or
    more: unrolled, with and without a rest."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, 3)).astype(np.float32)
    xs = rng.standard_normal((n, 3)).astype(np.float32)

    def run(np_, lax_, w, xs):
        def cell(c, x):
            h, t = c
            h = np_.tanh(h @ w + x)
            return (h, t + h), {"h": h, "norm": np_.sum(h * h)}

        (h, t), ys = lax_.scan(cell, (np_.zeros(3), np_.zeros(3)), xs, reverse=reverse)
        return t, {k: ys[k] for k in kept}

    f = ember.jit(lambda w, xs: run(jnp, lax, w, xs))
    got, want = f(w, xs), jax.jit(lambda w, xs: run(jax.numpy, jax.lax, w, xs))(w, xs)
    assert_close(got[0], np.asarray(want[0]), rtol=1e-5, atol=1e-5)
    for k in kept:
        assert_close(got[1][k], np.asarray(want[1][k]), rtol=1e-5, atol=1e-5)
    text = f.lower(w, xs).as_text("ember")
    inserts = UNROLL + (n % UNROLL > 0)  # a step's insert in the unrolled body and the rest
    assert text.count("ember.dynamic_update_slice") == len(kept) * inserts


def test_scan_errors():
    with pytest.raises(ValueError, match="agree on one leading axis length"):
        lax.scan(lambda c, x: (c, x), 0, {"a": np.ones(3), "b": np.ones(4)})
    f = ember.jit(lambda xs: lax.scan(lambda c, x: (c * 1.5, x), 1, xs))
    with pytest.raises(TypeError, match=r"scan requires f to return the carry's .* got carry "
                       r"i32\[\] but f returned f32\[\]"):
        f(np.ones(3, np.float32))


def test_range_of_a_traced_value_is_a_concretization_error():
    from ember.errors import ConcretizationTypeError, TracerIntegerConversionError

    def f(n):
        return sum(range(n))

    with pytest.raises(TracerIntegerConversionError, match="argument n"):
        ember.jit(f)(3)
    with pytest.raises(ConcretizationTypeError):
        ember.jit(lambda n: jnp.arange(n))(3)


F = np.array([[1.5, -2.5, 0.5, -0.0], [3.25, -1.0, 2.0, 7.5]], np.float32)
G = np.array([[0.5, 2.0, -1.0, 4.0], [1.0, -3.0, 2.0, 0.25]], np.float32)
I32 = np.array([[0, -1, 7, 255], [2**31 - 1, -(2**31), 12, 3]], np.int32)
LAX = {  # JAX's lax names Ember lacked (#16): each against jax.lax, under jit
    "binary": lambda lx: [f(F, G) for f in (lx.add, lx.sub, lx.mul, lx.max, lx.min, lx.pow,
                                             lx.eq, lx.ne, lx.lt, lx.le, lx.gt, lx.ge)],
    "bitwise": lambda lx: [lx.bitwise_and(I32, 6), lx.bitwise_or(I32, 6),
                           lx.bitwise_xor(I32, 6), lx.bitwise_not(I32)],
    "unary": lambda lx: [f(G) for f in (lx.abs, lx.ceil, lx.floor, lx.cos, lx.cosh, lx.sin,
                                         lx.sinh, lx.tanh, lx.exp, lx.sign, lx.neg,
                                         lx.is_finite, lx.square, lx.logistic, lx.erfc)]
    + [lx.log(np.abs(G)), lx.sqrt(np.abs(G)), lx.acos(G / 4), lx.asin(G / 4), lx.atan(G)],
    "round": lambda lx: [lx.round(F), lx.round(F, 1), lx.round(np.float32(0.49999997))],
    "integer_pow": lambda lx: [lx.integer_pow(F, 3), lx.integer_pow(F, -2)],
    "clamp_select_n": lambda lx: [lx.clamp(-1.0, F, 2.0), lx.select_n(F > 0, F, G),
                                  lx.select_n(np.array([[0, 1, 2, 1]] * 2, np.int32), F, G,
                                              F * 2)],
    "convert": lambda lx: [lx.convert_element_type(F, np.int32), lx.iota(np.int32, 5),
                           lx.full((2, 3), 1.5, np.float32), lx.full_like(F, 2)],
    "population_count": lambda lx: lx.population_count(I32),
    # complex whatever the input (jnp.conj keeps a real dtype; found by benchmarks/ops.py)
    "conj": lambda lx: [lx.conj(F), lx.conj(F.astype(np.complex64) * (1 + 2j))],
    "nextafter": lambda lx: [lx.nextafter(F, G), lx.nextafter(G, G),
                             lx.nextafter(np.float32([0.0, 0.0, 1.0]),
                                          np.float32([1.0, -1.0, np.nan]))],
    "broadcast": lambda lx: [lx.broadcast(G, (3,)), lx.broadcast_in_dim(G[0], (2, 3, 4),
                                                                         (2,)),
                             lx.broadcast_in_dim(G[:, :1], (2, 5), (0, 1))],
    "reshape": lambda lx: [lx.reshape(F, (4, 2)), lx.reshape(F, (4, 2), (1, 0)),
                           lx.transpose(F, (1, 0)), lx.rev(F, (0, 1)), lx.collapse(
                               F[None], 0, 2)],
    "dims": lambda lx: [lx.squeeze(F[None, :, None], (0, 2)), lx.expand_dims(F, (0, 3)),
                        lx.concatenate([F, G], 1)],
    "slices": lambda lx: [lx.slice(F, (0, 1), (2, 4), (1, 2)), lx.slice_in_dim(F, 1, 3,
                                                                               axis=1),
                          lx.index_in_dim(F, 1, 1, False), lx.dynamic_slice_in_dim(F, 1, 2, 1),
                          lx.dynamic_index_in_dim(F, 1, 0, False),
                          lx.dynamic_update_slice_in_dim(F, G[:, :2], 1, 1),
                          lx.dynamic_update_index_in_dim(F, G[0], 1, 0),
                          # negative starts count from the end (JAX's default), then clamp
                          lx.dynamic_slice(F, (-1, -3), (1, 2)),
                          lx.dynamic_slice(F, (0, -9), (2, 2)),
                          lx.dynamic_update_slice(F, G[:1, :2], (-1, -2)),
                          lx.dynamic_slice(F, (0, 3), (2, 2), allow_negative_indices=False)],
    "pad": lambda lx: [lx.pad(F, np.float32(9), [(1, 2, 1), (0, -1, 0)]),
                       lx.pad(F, np.float32(0), [(-1, 0, 0), (2, 0, 2)])],
    "dot": lambda lx: [lx.dot(F, G.T), lx.dot_general(
        F[None].repeat(3, 0), G[None].repeat(3, 0), (((2,), (2,)), ((0,), (0,)))),
        lx.dot_general(F, G, (((0,), (0,)), ((), ()))),
        lx.dot(F, G.T, preferred_element_type=np.float32)],
    "reductions": lambda lx: [lx.reduce_sum(F, (1,)), lx.reduce_prod(F, (0,)),
                              lx.reduce_max(F, (0, 1)), lx.reduce_min(F, (1,)),
                              lx.reduce_and(F > 0, (1,)), lx.reduce_or(F > 0, (1,)),
                              lx.argmax(F, 1, np.int32), lx.argmin(F, 0, np.int32)],
    "running": lambda lx: [lx.cumsum(F, 1), lx.cumsum(F, 1, reverse=True), lx.cumprod(F, 0),
                           lx.cummax(F, 1, True), lx.cummin(F, 1), lx.cumlogsumexp(F, 1),
                           lx.cumlogsumexp(np.float32([[-1000, 0, -5], [3, -np.inf, 80]]), 1,
                                           True),
                           lx.cumlogsumexp(np.float32([[-1000, 0, -5], [3, -np.inf, 80]]), 0)],
    "map": lambda lx: lx.map(lambda row: row * 2 + 1, F),
    "reduce_window": lambda lx: [
        lx.reduce_window(F[None, :, :, None], -np.inf, lx.max, (1, 2, 2, 1), (1, 1, 2, 1),
                         "SAME"),
        lx.reduce_window(F, np.float32(0), lx.add, (2, 3), (1, 1), "VALID"),
        lx.reduce_window(F, np.float32(1), lx.mul, (1, 2), (1, 1), ((1, 0), (0, 1)),
                         window_dilation=(1, 2))],
}


GROUPS = 3  # the cases run under jit, a few to a module: compiles are what tests cost


@pytest.mark.parametrize("group", range(GROUPS))
def test_lax_names_match_jax(group):
    import jax

    check_cases_under_jit(LAX, sorted(LAX)[group::GROUPS], lax, jax.lax)


def test_lax_does_not_promote():
    with pytest.raises(TypeError, match=r"lax.add requires arguments of one dtype, got "
                                        r"float32, int32"):
        lax.add(F, I32)
    assert lax.add(F, 1).dtype == np.float32  # Python scalars are weak
    with pytest.raises(ValueError, match="broadcast_in_dim requires"):
        lax.broadcast_in_dim(F, (2, 4), (1, 0))


def test_conv_general_dilated_matches_jax():
    import jax

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 9, 8, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    cases = [((1, 1), "SAME", None), ((2, 2), "VALID", None), ((1, 2), ((1, 0), (2, 1)), (2, 1))]
    ours = ember.jit(lambda a, b: [lax.conv_general_dilated(
        a, b, s, p, rhs_dilation=d, dimension_numbers=dn) for s, p, d in cases])(x, w)
    for got, (s, p, d) in zip(ours, cases, strict=True):
        want = jax.lax.conv_general_dilated(x, w, s, p, rhs_dilation=d, dimension_numbers=dn)
        assert_close(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    xc, wc = np.transpose(x, (0, 3, 1, 2)), np.transpose(w, (3, 2, 0, 1))  # NCHW, OIHW
    assert_close(np.asarray(ember.jit(lambda a, b: lax.conv_general_dilated(
        a, b, (1, 1), "SAME"))(xc, wc)),
                 np.asarray(jax.lax.conv_general_dilated(xc, wc, (1, 1), "SAME")),
                 rtol=1e-5, atol=1e-5)
    with pytest.raises(NotImplementedError, match="feature_group_count=1"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn,
                                 feature_group_count=3)


_X = np.arange(60, dtype=np.float32).reshape(5, 4, 3) / 7
_O = np.ones((5, 4), np.float32)
_U = np.random.default_rng(5).normal(size=(4, 4)).astype(np.float32)


def _gathers(lx):
    g = lx.GatherDimensionNumbers
    rows = g(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,))
    points = g(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    windows = g(offset_dims=(1, 2, 3), collapsed_slice_dims=(), start_index_map=(0, 1))
    batched = g(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,),
                operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    out_of_bounds = np.array([[0, 1], [4, 3], [-1, 2]])
    return [lx.gather(_X, np.array([[1], [4]]), rows, (1, 4, 3)),
            lx.gather(_X, np.array([[0, 1], [4, 3], [2, 2]]), points, (1, 1, 3)),
            lx.gather(_X, out_of_bounds, windows, (2, 2, 3)),  # clipped by default
            lx.gather(_X, out_of_bounds, windows, (2, 2, 3), mode="clip"),
            lx.gather(_X, out_of_bounds, windows, (2, 2, 3), mode="fill", fill_value=-1.0),
            lx.gather(_X, np.array([[[1]], [[3]], [[0]], [[2]], [[1]]]), batched, (1, 1, 3))]


def _scatters(lx):
    s = lx.ScatterDimensionNumbers
    rows = s(update_window_dims=(1,), inserted_window_dims=(0,),
             scatter_dims_to_operand_dims=(0,))
    points = s(update_window_dims=(), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1))
    windows = s(update_window_dims=(1, 2), inserted_window_dims=(),
                scatter_dims_to_operand_dims=(0, 1))
    row_idx = np.array([[1], [4], [1], [7]])  # a repeated row, one out of bounds
    point_idx = np.array([[0, 1], [4, 3], [2, 2], [2, 2], [-1, 0]])
    out = [lx.scatter(_O, np.array([[3], [0]]), _U[:2], rows),
           lx.scatter_add(_O, row_idx, _U, rows, mode="clip"),
           lx.scatter_sub(_O, point_idx, _U.reshape(-1)[:5], points),
           lx.scatter_add(_O, np.array([[0, 1], [3, 3]]), _U[:2, :2, None].repeat(2, 2),
                          windows, mode="promise_in_bounds")]
    for op in (lx.scatter_add, lx.scatter_mul, lx.scatter_min, lx.scatter_max):
        out.append(op(_O, row_idx, _U, rows))
        out.append(op(_O, point_idx, _U.reshape(-1)[:5], points, mode="drop"))
    return out


def test_gather_and_scatter_with_dimension_numbers_match_jax():
    import jax

    cases = {"gathers": _gathers, "scatters": _scatters}
    check_cases_under_jit(cases, sorted(cases), lax, jax.lax)
    # derivatives and batching come from the ops they are made of
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 1),
                                    start_index_map=(0, 1))
    jdn = jax.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 1),
                                         start_index_map=(0, 1))
    idx = np.array([[0, 1], [4, 3], [0, 1]])
    assert_close(ember.grad(lambda x: jnp.sum(lax.gather(x, idx, dn, (1, 1, 3)) ** 2))(_X),
                 jax.grad(lambda x: jax.numpy.sum(jax.lax.gather(x, idx, jdn, (1, 1, 3)) ** 2))(
                     _X))
    with pytest.raises(ValueError, match="gather requires one slice size per operand dim"):
        lax.gather(_X, idx, dn, (2, 1, 3))
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        lax.gather(_X, idx, dn, (1, 1, 3), mode="wrap")


def test_lgamma_and_digamma_and_their_gradients_match_jax():
    """lax.lgamma and lax.digamma (compositions: Lanczos and the reflection, the asymptotic
    series and the reflection) and their derivatives, under jit, against JAX's: both sides
    of 1/2 where the branches meet, negative non-integers, large arguments; the poles (0,
    the negative integers) and +-inf as JAX has them. A branch not taken must not make the
    gradient nan (log(0) of the reflection at a positive integer did)."""
    x = np.concatenate([np.linspace(0.05, 12, 40), [0.4999, 0.5, 0.5001, 1.0, 2.0, 3.0, 150.0],
                        np.linspace(-4.7, -0.3, 12)]).astype(np.float32)
    poles = np.array([0.0, -0.0, -1.0, -3.0, np.inf, -np.inf, np.nan], np.float32)
    for name in ("lgamma", "digamma"):
        ours, theirs = getattr(lax, name), getattr(jax.lax, name)
        both = np.concatenate([x, poles])
        assert_close(ember.jit(ours)(both), theirs(both), rtol=2e-5, atol=1e-5)
        grads = ember.jit(ember.vmap(ember.grad(ours)))(x)
        assert_close(grads, jax.vmap(jax.grad(theirs))(x), rtol=1e-3, atol=1e-4)


def test_erf_inv_gradient_matches_jax():
    """Found by the value sweep's gradient form: erf_inv's +-inf at +-1 was x * inf in a
    branch not taken, which made every gradient nan (and ndtri's, norm.ppf's)."""
    x = np.linspace(-0.999, 0.999, 101).astype(np.float32)
    got = ember.jit(ember.vmap(ember.grad(lax.erf_inv)))(x)
    assert_close(got, jax.vmap(jax.grad(jax.lax.erf_inv))(x), rtol=1e-4, atol=1e-5)
