"""The CPU matrix: every representative program (programs.py) compiles for every CPU users
run, whatever CPU compiles it. IREE cross-compiles for any LLVM CPU without running the
code, so Ember's CPU-specific choices (the -cpu/-avx512 lowerings, data tiling, fusion) are
checked for CPUs this machine is not: a training step that compiled for AVX-512 CPUs failed
for every AVX2 one ("large vector sizes").

`make test` compiles the training step for every CPU; `.ci/run` sets EMBER_CPU_MATRIX=all
for every program on a CPU of each class (or a comma list of program names, for every CPU).
"""

import os

import pytest

import ember
from programs import PROGRAMS, Program

X86 = ("x86-64", "x86-64-v2", "x86-64-v3", "haswell", "znver2", "znver3", "znver4",
       "skylake-avx512", "icelake-server", "sapphirerapids")
# Cross-compiled for 64-bit Arm (NEON; SVE2 on Neoverse V2; Apple's): compiled, not run.
ARM = ("aarch64:neoverse-n1", "aarch64:neoverse-v2", "aarch64:apple-m1")
CPUS = X86 + ARM
# `make test`'s matrix: the program that failed for every CPU without AVX-512 (a data-tiled
# product with two readers fused in), for every CPU; .ci/run compiles every program for a
# CPU of each instruction-set class (SSE2, AVX2, AVX-512 in halves, AVX-512, with FP16; NEON,
# SVE2).
QUICK = ("train_step_b128",)
CLASSES = ("x86-64", "haswell", "znver4", "skylake-avx512", "sapphirerapids",
           "aarch64:neoverse-n1", "aarch64:neoverse-v2")


def _pairs() -> list[tuple[Program, str]]:
    if os.environ.get("EMBER_CPU_MATRIX", "") == "all":
        return [(p, cpu) for p in PROGRAMS for cpu in (CPUS if p.name in QUICK else CLASSES)]
    return [(p, cpu) for p in _programs() for cpu in CPUS]


def _programs() -> list[Program]:
    asked = os.environ.get("EMBER_CPU_MATRIX", "")
    if asked == "all":
        return list(PROGRAMS)
    names = asked.split(",") if asked else QUICK
    known = {p.name: p for p in PROGRAMS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"EMBER_CPU_MATRIX requires 'all' or program names of "
                         f"tests/programs.py, got {unknown}")
    return [known[n] for n in names]


def compile_for(program: Program, device: str) -> ember.Compiled:
    before = ember.config.read("ember_enable_x64")
    ember.config.update("ember_enable_x64", program.x64)
    try:
        return ember.jit(program.fun, device=device, **program.jit).lower(
            *program.args).compile()
    finally:
        ember.config.update("ember_enable_x64", before)


@pytest.mark.compile
@pytest.mark.parametrize("program, cpu", _pairs(), ids=lambda v: getattr(v, "name", v))
def test_compiles_for_every_cpu(program, cpu):
    compiled = compile_for(program, f"cpu:{cpu}")
    assert b"IREE" in compiled.vmfb[:256]  # a VM flatbuffer (in a zip when it embeds code)


def _batches() -> list[int]:
    return [1, 7, 64, 128, 300] if os.environ.get("EMBER_CPU_MATRIX") == "all" else [128]


@pytest.mark.runtime
@pytest.mark.parametrize("batch", _batches())
def test_the_training_step_matches_jax(batch):
    """The issue's MLP training step (value_and_grad, SGD, the parameters donated) on this
    machine, against JAX: the loss and every updated parameter."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from programs import MLP_SIZES, train_step

    rng = np.random.default_rng(batch)
    params = [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
               rng.standard_normal(n).astype(np.float32) * 0.1)
              for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:], strict=True)]
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]

    def jax_step(params, x, y):
        def loss(params):
            h = x
            for w, b in params[:-1]:
                h = jax.nn.relu(h @ w + b)
            w, b = params[-1]
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ w + b) * y, axis=-1))
        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

    want_params, want_loss = jax.jit(jax_step)(params, x, y)
    mine = ember.tree_util.tree_map(ember.device_put, params)
    got_params, got_loss = ember.jit(train_step, donate_argnums=0)(mine, x, y)
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-5)
    for got, want in zip(ember.tree_util.tree_leaves(got_params),
                         jax.tree.leaves(want_params), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-6)
