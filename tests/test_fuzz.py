"""The program fuzzer (fuzz.py): its machinery, and every program it found failing, shrunk,
as a regression test against JAX (jit and eager). Its fixed-seed budget runs in .ci/run
(`python tests/fuzz.py --seconds 90`)."""

import random
import warnings
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import pytest

import fuzz

# (source as the fuzzer printed it, inputs, donated?): each failed on the commit that fixed it.
FOUND = [
    # sin of a carry grown past 1e6 in a scan's body (host code): its Cody-Waite reduction
    # was two roundings a step there, one (a contracted multiply-add) in vector code
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v1 = lax.fori_loop(0, 4, lambda i, c: np_.maximum(c, c * c - 1.0), x0)
    v2 = lax.scan(lambda c, x: (c + x, np_.sin(c) * x), np_.ones((), np_.float32), v1)[1]
    return (v2,)""", {"x0": ((6,), "float32")}, False),
    # a transpose of an elementwise generic reading one of several results (IREE's transpose
    # propagation made a generic yielding more values than it has outputs)
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v2 = B.unrolled(3, lambda c: c - np_.mean(c) * 0.5, x0)
    v3 = np_.transpose(v2, (1, 0))
    return (v3,)""", {"x0": ((4, 2), "float32")}, False),
    # a donated argument written in place through a view (the scatter's flattening reshape)
    # was also given to the loop's result: the loop wrote over the returned update
    ("""def program(B, x0, i1, x2):
    np_, lax = B.np, B.lax
    v2 = x0.at[i1].max(np_.ones((1, 6), np_.float32))
    v4 = B.unrolled(17, lambda c, d: (d, (c + d) * 0.5 + x2 * 0.25), v2, v2 * 0.5)
    return (v4, v2,)""", {"x0": ((6, 6), "float32"), "i1": ((1,), "int32"), "x2": ((), "float32")},
     True),
    # ember-bufferize ordered the write after a reader defined later ("does not dominate")
    ("""def program(B, x0, x1):
    np_, lax = B.np, B.lax
    v2 = (x1 / (np_.abs(x0) + 1.0))
    v3 = lax.fori_loop(0, 3, lambda i, c: np_.maximum(c, c * c - 1.0), x0)
    v4 = v3.reshape((5, 1, 2))
    return (v4, v2,)""", {"x0": ((5, 2), "float32"), "x1": ((2,), "float32")}, True),
    # an ordering edge joined a view of the argument with a computed value (IREE refused it)
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v2 = x0.at[1:2:1].add((x0[1:2:1] * 2 + 1))
    return (v2,)""", {"x0": ((2,), "float32")}, True),
    ("""def program(B, x0, i3):
    np_, lax = B.np, B.lax
    v9 = x0.at[i3].max(np_.ones((1, 1), np_.int32))
    v10 = (v9 * x0)
    return (v10,)""", {"x0": ((6, 1), "int32"), "i3": ((1,), "int32")}, True),
    # ... a reader that depends on the write's own chain was moved above it
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v6 = np_.floor(x0 * 2.5)
    v7 = np_.sort(v6, axis=0)
    v8 = np_.sort(v7, axis=1)
    return (v8,)""", {"x0": ((5, 1), "float32")}, True),
    ("""def program(B, x0, x1):
    np_, lax = B.np, B.lax
    v2 = (x0 & x1)
    v3 = v2.at[1:5:2, 2:4:1, 2:5:2].add((v2[1:5:2, 2:4:1, 2:5:2] * 2 + 1))
    return (v3,)""", {"x0": ((6, 4, 6), "int32"), "x1": ((1, 4, 1), "int32")}, True),
    # a reversed read of a strided window: IREE could not translate it to LLVM
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v2 = x0[0:2:1, 1:5:2]
    v6 = v2.at[::-1, 0:2:1].add((v2[::-1, 0:2:1] * 2 + 1))
    return (v6,)""", {"x0": ((6, 6), "float32")}, False),
    # a scatter into a value a scan's body captured ran before the scan read it
    ("""def program(B, x0, i4):
    np_, lax = B.np, B.lax
    v1 = (x0.astype(np_.float32) + 0.5)
    v3 = lax.scan(lambda c, x: (c + x, np_.sin(c) * x), np_.ones((6,), np_.float32), v1)[1]
    v9 = v1.at[i4].set(np_.ones((1, 6), np_.float32))
    return (v9, v3,)""", {"x0": ((6, 6), "int32"), "i4": ((1,), "int32")}, False),
    # a donated argument returned as it was, and scattered into (IREE wrote into it in place)
    ("""def program(B, x0, i2):
    np_, lax = B.np, B.lax
    v7 = x0.at[i2].max(np_.ones((4,), np_.float32))
    return (v7, x0,)""", {"x0": ((6,), "float32"), "i2": ((4,), "int32")}, True),
    # a view of an argument returned, and updated in place through a slice of it
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v2 = np_.sin(x0)
    v3 = x0[1:3:1, 0:1:1]
    v4 = v3.reshape((2,))
    v6 = v4.at[1:2:1].set((v4[1:2:1] * 2 + 1))
    v9 = np_.where(v2 > x0, v2, x0)
    return (v9, v4, v6, v2,)""", {"x0": ((3, 1), "float32")}, False),
    # a reduction of one element, tied to the donated argument: IREE copied the buffer onto
    # itself ("source and target ranges overlap")
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v1 = np_.max(x0, axis=0, keepdims=True)
    v2 = v1.astype(np_.float32) * 0.5
    v3 = v2.reshape((1, 1, 1))
    return (v3, v1,)""", {"x0": ((1,), "int32")}, True),
    # a loop's result read by a dispatch IREE fused with its initial value's sibling
    # ("circular dependency: input operation uses partition output")
    ("""def program(B, x0, x1):
    np_, lax = B.np, B.lax
    v2 = x0.astype(np_.float32) * 0.5
    v4 = lax.fori_loop(0, 3, lambda i, c: c.at[0].add(1.0), v2)
    v5 = (x0.astype(np_.float32) + 0.5)
    v6 = np_.maximum(v4, x1)
    v9 = np_.floor(np_.clip(v5, -64, 64) * 2.0).astype(np_.int32)
    return (v9, v6,)""", {"x0": ((2, 6), "int32"), "x1": ((1,), "float32")}, False),
    # found on the 13-core host (AVX2), stop 65. A one-element slice expanded (IREE made an
    # invalid slice of it):
    ("""def program(B, x0, x1):
    np_, lax = B.np, B.lax
    v1 = np_.matmul(x0, x1)
    v5 = v1[2:3:1, 0:1:1]
    v6 = v5.reshape((1, 1, 1))
    v10 = np_.log1p(np_.abs(v6))
    return (v10, v1, v6,)""", {"x0": ((3, 2), "float32"), "x1": ((2, 3), "float32")}, False),
    # a reversed read of a reshaped strided view (IREE could not translate it to LLVM)
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v3 = x0[2:6:2, 3:4:1]
    v4 = np_.transpose(v3, (1, 0))
    v5 = v4[0:1:1, ::-1]
    v6 = (v5.astype(np_.float32) + 0.5)
    return (v6,)""", {"x0": ((6, 4), "int32")}, False),
    # an ordering edge joined a returned value (the caller's buffer) with one of IREE's own
    ("""def program(B, x0, x2):
    np_, lax = B.np, B.lax
    v2 = np_.exp(np_.tanh(x0))
    v3 = np_.max(v2, axis=1)
    v5 = np_.log1p(np_.abs(v2))
    return (x2, v3, v5,)""", {"x0": ((5, 2), "float32"), "x2": ((1,), "float32")}, True),
    # a slice of a row gather: IREE moved it into the gather's dispatch, then failed to
    # distribute that
    ("""def program(B, x0, i1):
    np_, lax = B.np, B.lax
    v1 = x0.reshape((1, 1, 18))
    v2 = np_.broadcast_to(v1[:1], (6, 1, 18)) + np_.arange(6.0).reshape((6, 1, 1))
    v3 = v2.at[i1].set(np_.ones((3, 1, 18), np_.float32))
    return (v3,)""", {"x0": ((1, 3, 6), "float32"), "i1": ((3,), "int32")}, False),
    # an ordering edge (a write after the reads of its destination) joined a value of the
    # caller's buffer with one of IREE's own
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v1 = lax.fori_loop(0, 4, lambda i, c: c.at[0].add(1.0), x0)
    v3 = x0.at[0:5:1, 4:5:1].add((x0[0:5:1, 4:5:1] * 2 + 1))
    v4 = v3.reshape((15, 2))
    return (v4, v1, v3,)""", {"x0": ((5, 6), "float32")}, False),
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v1 = np_.flip(x0, 0)
    v3 = v1.at[0:5:2, 0:1:1, 3:4:1].mul((v1[0:5:2, 0:1:1, 3:4:1] * 2 + 1))
    return (v3,)""", {"x0": ((6, 1, 4), "float32")}, True),
    # a one-element slice expanded for a loop kernel: IREE crashed the process
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v2 = (x0 > 0.5)
    v3 = np_.where(v2, x0, -x0)
    v5 = np_.broadcast_to(v3[:1], (6,)) + np_.arange(6.0).reshape((6,))
    v8 = (v5 * 0.5 + 0.25)
    v9 = v8[2:3:1]
    v10 = lax.fori_loop(0, 0, lambda i, c: np_.maximum(c, c * c - 1.0), v9)
    return (v10,)""", {"x0": ((5,), "float32")}, False),
    ("""def program(B, x0, x1, x2, i3, i4):
    np_, lax = B.np, B.lax
    v2 = x1.astype(np_.float32) * 0.5
    v3 = np_.maximum(x0, x2)
    v4 = (v3 | -2)
    v5 = np_.sort(v4, axis=0)
    v9 = v3[i4]
    v10 = (i3 * v9)
    return (v10, v2, v5,)""", {"x0": ((6,), "int32"), "x1": ((), "int32"), "x2": ((), "int32"),
                               "i3": ((4,), "int32"), "i4": ((4,), "int32")}, False),
    # found on the 13-core host, stop 67: a reversed read of a transposed strided view (IREE
    # could not translate it to LLVM; the class: test_indexing's views of strided views)
    ("""def program(B, x0):
    np_, lax = B.np, B.lax
    v1 = x0[0:2:1, 0:5:2]
    v2 = np_.transpose(v1, (1, 0))
    v3 = v2[::-1, ::-1]
    return (v3,)""", {"x0": ((2, 5), "float32")}, False),
    # found here (Zen 4), stop 67: a reversal of a donated argument, consumed by the result
    # written into its buffer and by another (IREE computed the reversal again inside the
    # other's dispatch, after the write; the class: test_indexing's shared reads)
    ("""def program(B, x0, x2, x3):
    np_, lax = B.np, B.lax
    v2 = np_.flip(x0, 0)
    v3 = (v2 & x2)
    v4 = (v2 * x3)
    v6 = v4.astype(np_.float32) * 0.5
    return (v6, v3, v4,)""", {"x0": ((2, 2, 2), "int32"), "x2": ((2, 1), "int32"),
                               "x3": ((), "int32")}, True),
    # found here, stop 67: a transpose of one of a fusion's two results (IREE's transpose
    # propagation made an invalid generic; the class: test_fuse's multi-result fusions)
    ("""def program(B, x0, x1):
    np_, lax = B.np, B.lax
    v1 = (x0 - x1)
    v2 = np_.max(v1, axis=1)
    v5 = np_.transpose(v1, (1, 0))
    v7 = (x1.astype(np_.float32) + 0.5)
    return (v7, v2, v5,)""", {"x0": ((2, 3), "int32"), "x1": ((2, 3), "int32")}, False),
    # found here, stop 67: an elementwise result written into itself (ember-window-stores'
    # fusion read the value it replaced; the class: test_indexing's updates made of their
    # destination, which also found updates viewing it refused by IREE's runtime)
    ("""def program(B, x1):
    np_, lax = B.np, B.lax
    v5 = np_.floor(np_.clip(x1, -64, 64) * 2.0).astype(np_.int32)
    v7 = v5.at[0:2:1].set(v5)
    v9 = (v7.astype(np_.float32) + 0.5)
    return (v9,)""", {"x1": ((2,), "float32")}, False),
]


@pytest.fixture(scope="module")
def env():
    return fuzz.backends()


@pytest.mark.parametrize("source, inputs, donate", FOUND)
def test_found_programs_match_jax(env, source, inputs, donate):
    program = fuzz.parse(source, inputs, donate, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unusable donations are fine here
        outcome = fuzz.run(program, env)
        assert outcome.failure == "", outcome.detail


@pytest.mark.unit
def test_generated_programs_are_well_typed():
    """JAX runs (nearly) every generated program: the generator's types and shapes hold."""
    refused = []
    for seed in range(150):
        program = fuzz.generate(seed)
        fun = program.function()
        try:
            jax.eval_shape(lambda *a, f=fun: f(fuzz.backend(jnp, jax.lax), *a),
                           *program.values())
        except Exception as e:  # noqa: BLE001 - counted, then shown
            refused.append(f"{seed}: {type(e).__name__}: {e}")
    assert len(refused) <= 3, "\n".join(refused)


@pytest.mark.unit
def test_shrinking_finds_the_planted_bug():
    """Ember replaced by JAX with a wrong `tanh`: a failing program shrinks to the
    statements that reach a tanh, and the printed source still fails."""
    class Wrong:
        def __getattr__(self, name):
            return getattr(jnp, name)

        @staticmethod
        def tanh(x):
            return jnp.tanh(x) + 1.0

    fake = SimpleNamespace(jit=lambda f, **kw: jax.jit(f), device_put=jnp.asarray)
    env = (fake, fuzz.backend(Wrong(), jax.lax), jax,
           fuzz.backend(jnp, jax.lax))
    rng, failing = random.Random(0), None
    while failing is None:
        program = fuzz.generate(rng.randrange(1 << 30), size=10)
        if "tanh(" in program.source() and len(program.body) >= 6:
            outcome = fuzz.run(program, env)
            failing = outcome if outcome.failure else None
    small = fuzz.shrink(failing, env, budget_s=60)
    assert small.failure == failing.failure
    assert len(small.program.body) < len(failing.program.body)
    assert "tanh(" in small.program.source()
    assert fuzz.run(fuzz.parse(small.program.source(),
                               {v.name: (v.shape, v.dtype) for v in small.program.inputs},
                               small.program.donate, small.program.seed), env).failure
    assert small.program.source() in fuzz.report(small)


@pytest.mark.unit
def test_a_failure_only_beside_other_programs_finds_its_fewest_companions():
    """Ember replaced by JAX, wrong in the first program's first result only when a jitted
    function holds several programs: the failure does not reproduce alone, so the fuzzer
    reports the one companion it needs (not the whole batch)."""
    def jit(f, **kw):
        def call(*args):
            out = jax.jit(f)(*args)
            if len(out) > 1:  # several programs in one function
                first = list(out[0])
                first[0] = first[0] + 1
                out[0] = tuple(first)
            return out
        return call

    fake = SimpleNamespace(jit=jit, device_put=jnp.asarray)
    j = fuzz.backend(jnp, jax.lax)
    env = (fake, j, jax, j)
    batch = [fuzz.generate(s) for s in range(4)]
    assert fuzz.run(batch[0], env).failure == ""
    assert fuzz.run_batch(batch, env)[0].failure == "jit: values"
    beside = fuzz.companions(batch, 0, env)
    assert len(beside) == 1 and beside[0] in batch[1:]
    assert fuzz.companions(batch[:1], 0, env) == []
