"""The CPU matrix: every representative program (programs.py) compiles for every CPU users
run, whatever CPU compiles it. IREE cross-compiles for any LLVM CPU without running the
code, so Ember's CPU-specific choices (the -cpu/-avx512 lowerings, data tiling, fusion) are
checked for CPUs this machine is not: a training step that compiled for AVX-512 CPUs failed
for every AVX2 one ("large vector sizes").

`make test` compiles the training step for every CPU; `.ci/run` sets EMBER_CPU_MATRIX=all
for every program (or a comma list of program names).
"""

import os

import pytest

import ember
from programs import PROGRAMS, Program

X86 = ("x86-64", "x86-64-v2", "x86-64-v3", "haswell", "znver2", "znver3", "znver4",
       "skylake-avx512", "icelake-server", "sapphirerapids")
# `make test`'s matrix: the program that failed for every CPU without AVX-512 (a data-tiled
# product with two readers fused in); .ci/run compiles every program.
QUICK = ("train_step_b128",)


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
@pytest.mark.parametrize("cpu", X86)
@pytest.mark.parametrize("program", _programs(), ids=lambda p: p.name)
def test_compiles_for_every_cpu(program, cpu):
    compiled = compile_for(program, f"cpu:{cpu}")
    assert b"IREE" in compiled.vmfb[:256]  # a VM flatbuffer (in a zip when it embeds code)
