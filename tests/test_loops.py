"""Loops in place and in kernels: random loop bodies against NumPy.

Elementwise bodies become one kernel (ember.elementwise_for); bodies that update a carry
with .at[] write it in place, except where the old value is still read after the update
(then IREE must copy it): every variant must give NumPy's answer, and the caller's arrays
are never written.
"""

import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st

import ember
import ember.numpy as enp
from ember import lax
from helpers import assert_close

# name: (ember/numpy step on carries a, b, the index i, and an outside array w)
ELEMENTWISE = {
    "scale": lambda m, a, b, i, w: (a * 0.5 + b, b),
    "index": lambda m, a, b, i, w: (a + i, b - 1.0),
    "swap": lambda m, a, b, i, w: (b, a),
    "max": lambda m, a, b, i, w: (m.maximum(a, w), m.minimum(b, a)),
    "where": lambda m, a, b, i, w: (m.where(a > b, a - b, b - a), b * 0.75),
    "outside": lambda m, a, b, i, w: (a * w + 1.0, b + w),
}


@few_examples(8)
@given(st.lists(st.sampled_from(sorted(ELEMENTWISE)), min_size=1, max_size=3),
       st.sampled_from([(16,), (3, 5), ()]), st.integers(0, 6))
def test_elementwise_loop_bodies_run_as_one_kernel(steps, shape, trips):
    rng = np.random.default_rng(len(steps) + trips)
    a0, b0, w = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))

    def body(m, i, ab):
        a, b = ab
        for name in steps:
            a, b = ELEMENTWISE[name](m, a, b, i, w)
        return a, b

    f = ember.jit(lambda a, b, n: lax.fori_loop(0, n, lambda i, ab: body(
        enp, i.astype(np.float32), ab), (a, b)))
    a, b = a0.copy(), b0.copy()
    for i in range(trips):
        a, b = body(np, np.float32(i), (a, b))
    got = f(a0, b0, np.int32(trips))
    assert_close(got[0], a, rtol=1e-5, atol=1e-5)
    assert_close(got[1], b, rtol=1e-5, atol=1e-5)
    assert '"ember.elementwise_for"' in f.lower(a0, b0, np.int32(trips)).as_text("ember")


@few_examples(10)
@given(st.lists(st.sampled_from(sorted(ELEMENTWISE)), min_size=1, max_size=3),
       st.sampled_from([7, 8, 20, 33]), st.booleans(), st.sampled_from(["carries", "after",
                                                                       "middle"]))
def test_python_unrolled_steps_reroll_into_one_kernel_and_match_numpy(steps, trips, prologue,
                                                                      end):
    """ember-reroll: a Python loop of identical elementwise steps, traced unrolled, is one
    ember.elementwise_for of one step (from REROLL_MIN_TRIPS steps on), whether its first
    step reads the arguments or a value made before it, and whatever reads its carries
    after; steps that differ (the "index" step adds the Python loop's counter) or fewer
    steps stay unrolled. A step's value kept from the middle leaves the steps after it."""
    rng = np.random.default_rng(trips + len(steps))
    a0, b0 = (rng.standard_normal((3, 5)).astype(np.float32) for _ in range(2))
    w = rng.uniform(-0.9, 0.9, (3, 5)).astype(np.float32)  # else `outside` amplifies rounding

    def program(m, a, b):
        a = a * 2.0 if prologue else a
        kept = a
        for t in range(trips):
            for name in steps:
                a, b = ELEMENTWISE[name](m, a, b, t, w)
            kept = a if t == 3 else kept
        return {"carries": (a, b), "after": (a + b, b), "middle": (a, kept)}[end]

    f = ember.jit(lambda a, b: program(enp, a, b))
    for got, want in zip(f(a0, b0), program(np, a0, b0), strict=True):
        assert_close(got, want, rtol=1e-5, atol=1e-5)
    rerolled = '"ember.elementwise_for"' in f.lower(a0, b0).as_text("ember")
    if "index" in steps or trips < 8:
        assert not rerolled
    elif trips >= 20 and set(steps) != {"swap"}:
        assert rerolled


def test_kernels_of_many_carries_fit_the_dispatch_bindings():
    """A kernel writes one buffer per lane and carry, and IREE binds at most 32 buffers to a
    dispatch: 4 carries at 8 lanes made 36 and the module failed to load. Lanes shrink to
    fit (4 carries: 4 lanes; 12: 1), and a loop that fits no lane count (20 carries) stays
    a loop of dispatches; each against NumPy."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal(64).astype(np.float32)

    def step(m, c):
        return tuple(v * 0.5 + c[(k + 1) % len(c)] + w for k, v in enumerate(c))

    for n, kernel in ((4, True), (12, True), (20, False)):
        xs = tuple(rng.standard_normal(64).astype(np.float32) for _ in range(n))
        f = ember.jit(lambda xs: lax.fori_loop(0, 5, lambda i, c: step(enp, c), xs))
        want = xs
        for _ in range(5):
            want = step(np, want)
        for got, expected in zip(f(xs), want, strict=True):
            assert_close(got, expected, rtol=1e-5, atol=1e-5)
        text = f.lower(xs).as_text("ember")
        assert ('"ember.elementwise_for"' in text) == kernel, n


# Update bodies on a carry x (8 x 4) with the trip index i: (ember step, numpy step).
def _np_set(x, i, v):
    x = x.copy()
    x[i % 8] = v
    return x


UPDATES = {
    "set": (lambda x, i: x.at[i % 8].set(i * 1.0),
            lambda x, i: _np_set(x, i, i * 1.0)),
    "add_row": (lambda x, i: x.at[i % 8, 1:].add(x[(i + 1) % 8, 1:]),
                lambda x, i: _np_add_row(x, i)),
    "old_read_after": (lambda x, i: x.at[i % 8].set(-1.0) + x,  # old x read after update
                       lambda x, i: _np_set(x, i, -1.0) + x),
    "fork": (lambda x, i: x.at[0].set(2.0) * x.at[1].set(3.0),  # two updates of one value
             lambda x, i: _np_set(x, 0, 2.0) * _np_set(x, 1, 3.0)),
    "elementwise": (lambda x, i: x * 0.5, lambda x, i: x * 0.5),
}


def _np_add_row(x, i):
    x = x.copy()
    x[i % 8, 1:] += x[(i + 1) % 8, 1:]
    return x


@few_examples(10)
@given(st.lists(st.sampled_from(sorted(UPDATES)), min_size=1, max_size=3), st.integers(1, 9))
def test_loops_updating_a_carry_in_place_match_numpy(steps, trips):
    x0 = np.arange(32, dtype=np.float32).reshape(8, 4) / 8
    kept = ember.device_put(x0)

    def body(i, x):
        for name in steps:
            x = UPDATES[name][0](x, i)
        return x

    got = ember.jit(lambda x, n: lax.fori_loop(0, n, body, x))(kept, np.int32(trips))
    x = x0.copy()
    for i in range(trips):
        for name in steps:
            x = UPDATES[name][1](x, i)
    assert_close(got, x, rtol=1e-5, atol=1e-5)
    assert_close(kept, x0)  # the argument was copied, not written


@few_examples(6)
@given(st.lists(st.sampled_from(sorted(UPDATES)), min_size=1, max_size=2),
       st.integers(-3, 3), st.sampled_from([0, 5, 16, 21, 40]))
def test_loops_of_known_trip_counts_unroll_and_match_numpy(steps, lower, trips):
    """ember-unroll-loops: 8 bodies a trip when the count is known and at least 16, the
    trips left in the original loop; inside a loop of traced bounds too."""
    x0 = np.arange(32, dtype=np.float32).reshape(8, 4) / 8

    def body(i, x):
        for name in steps:
            x = UPDATES[name][0](x, i)
        return x

    def f(x, n):
        inner = lax.fori_loop(lower, lower + trips, body, x)
        return inner, lax.fori_loop(0, n, lambda j, y: lax.fori_loop(
            lower, lower + trips, body, y), x)

    jitted = ember.jit(f)
    got, twice = jitted(x0, np.int32(2))
    x = x0.copy()
    for i in range(lower, lower + trips):
        for name in steps:
            x = UPDATES[name][1](x, i)
    assert_close(got, x, rtol=1e-5, atol=1e-5)
    y = x.copy()
    for i in range(lower, lower + trips):
        for name in steps:
            y = UPDATES[name][1](y, i)
    assert_close(twice, y, rtol=1e-4, atol=1e-4)
    if len(steps) == 1 and steps != ["elementwise"]:  # small, and not one kernel
        text = jitted.lower(x0, np.int32(2)).as_text("ember")
        unrolled = trips >= 16
        assert text.count('"ember.for"') == 3 + 2 * (unrolled and trips % 8 > 0), text
        updates = text.count("ember.dynamic_update_slice")
        assert updates >= 16 if unrolled else updates <= 4, text


def test_scan_stacks_in_place_and_reads_xs_without_copies():
    """The scan's stacked ys and its xs reads stay in place: IREE's stream phase for a
    100-step scan holds no copy of the stacked (100, 64, 256) buffer."""
    from ember.compiler import iree_driver

    def rnn(h, xs, w):
        def cell(h, x):
            h = enp.tanh(h @ w + x)
            return h, h
        return lax.scan(cell, h, xs)

    args = (np.zeros((64, 256), np.float32), np.zeros((100, 64, 256), np.float32),
            np.zeros((256, 256), np.float32))
    text = ember.jit(rnn).lower(*args).as_text("linalg")
    stream = iree_driver.compile_to_phase(text, iree_driver.target("cpu"), "stream")
    stacked = 100 * 64 * 256 * 4
    copies = [line for line in stream.splitlines()
              if "stream.cmd.copy" in line and f", %c{stacked} :" in line]
    assert not copies, copies


@pytest.mark.parametrize("first,second", [(3, 2), (16, 3)])
def test_host_loops_writing_one_buffer_in_place_run_on_the_workers(first, second):
    """Two host loops writing one carried buffer in place, a product in their body (worker
    threads: 256 x 100 by 100 x 100 a trip, too narrow for Ember's register tiles), and a
    scan whose unrolled loop leaves trips (50 = 6 x 8 + 2). IREE recorded command buffers
    naming buffers whose queue allocation was still waiting, and the local-task driver failed
    every call ("transient buffer has not been committed"); values against NumPy."""
    rng = np.random.default_rng(0)
    n = first + second
    h0 = np.zeros((256, 100), np.float32)
    xs = (rng.standard_normal((max(n, 50), 256, 100)) * 0.1).astype(np.float32)
    w = (rng.standard_normal((100, 100)) * 0.1).astype(np.float32)

    def loops(h, xs):
        def body(i, carry):
            h, buf = carry
            h = enp.tanh(h @ w + xs[i])
            return h, buf.at[i].set(h)

        carry = lax.fori_loop(0, first, body, (h, enp.zeros((n, 256, 100), np.float32)))
        return lax.fori_loop(first, n, body, carry)

    def scan(h, xs):
        return lax.scan(lambda c, x: (enp.tanh(c @ w + x),) * 2, h, xs)

    want, stack = h0.astype(np.float64), []
    for x in xs:
        want = np.tanh(want @ w + x)
        stack.append(want)
    h, buf = ember.jit(loops)(h0, xs)
    assert_close(buf, np.stack(stack[:n]).astype(np.float32), rtol=1e-4, atol=1e-5)
    assert_close(h, stack[n - 1].astype(np.float32), rtol=1e-4, atol=1e-5)
    h, ys = ember.jit(scan)(h0, xs[:50])
    assert_close(ys, np.stack(stack[:50]).astype(np.float32), rtol=1e-4, atol=1e-5)
    assert_close(h, stack[49].astype(np.float32), rtol=1e-4, atol=1e-5)


@pytest.mark.unit
def test_the_last_compile_attempt_fences_host_loops_results():
    """What compile_text tries when IREE failed otherwise (a sort's merge passes, read beside
    a gather of the sorted value's source: "circular dependency"): each host loop's result
    read through a barrier, but where another loop starts from it, and a kernel's own loop
    left alone."""
    from ember.compiler.iree_fences import fence_host_loops

    text = """func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %a) -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
        iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %k = scf.for %j = %c0 to %c3 step %c1 iter_args(%v = %in) -> (f32) {
        %w = arith.mulf %v, %v : f32
        scf.yield %w : f32
      }
      linalg.yield %k : f32
    } -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  %q = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %r) -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  }
  return %r, %q : tensor<4xf32>, tensor<4xf32>
}"""
    fenced = fence_host_loops(text)
    assert "%1 = util.optimization_barrier %0 : tensor<4xf32>" in fenced
    assert "iter_args(%arg2 = %0)" in fenced  # the second loop starts from the first's
    assert "%3 = util.optimization_barrier %2 : tensor<4xf32>" in fenced
    assert "return %1, %3" in fenced
    assert fenced.count("util.optimization_barrier") == 2  # none for the kernel's loop
    plain = "func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}"
    assert fence_host_loops(plain) is plain
