"""Nothing foreign runs: a module's results are checked against what its signature promises,
a saved signature must be the one IREE compiled, CPU names are checked before LLVM sees
them, and code for a CPU with instructions this one lacks is refused rather than run."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.compiler import iree_driver, pipeline
from ember.runtime import Executable, default, device
from helpers import assert_close

N = 10000


@pytest.fixture(scope="module")
def compiled():
    return ember.jit(lambda x: x * 2).lower(jnp.zeros(N)).compile()


def _patched(vmfb: bytes, old: str, new: str) -> bytes:
    assert len(old) == len(new) and vmfb.count(old.encode()) == 1
    return vmfb.replace(old.encode(), new.encode())


def test_results_are_checked_against_the_signature(compiled):
    """A module whose results are not what the runtime was told is refused before any
    Array is made of them (one read at the claimed size would read past the buffer)."""
    from ember.dialect.types import parse_short

    exe = Executable(compiled.vmfb, default(), [parse_short(f"f32[{N}]")],
                     [parse_short("f64[99999]")], compiled.executable.parallel, name="f")
    with pytest.raises(RuntimeError, match=r"f returned result 0 of shape \[10000\].*promises "
                                           r"\(f64\[99999\]\)"):
        exe([ember.device_put(np.ones(N, np.float32))])
    two = Executable(compiled.vmfb, default(), [parse_short(f"f32[{N}]")],
                     [parse_short(f"f32[{N}]")] * 2, compiled.executable.parallel, name="g")
    with pytest.raises(RuntimeError, match="g returned 1 results"):
        two([ember.device_put(np.ones(N, np.float32))])


def test_the_one_result_fast_path_checks_its_result_until_one_passes():
    """The cached call of a one-result module of static shapes checks its result at its
    first call (the shape is a constant of the module), and at every call until one
    passes; the call before any check is the same refusal."""
    from ember.dialect.types import parse_short

    small = ember.jit(lambda x: x * 2).lower(jnp.zeros(4)).compile()
    exe = Executable(small.vmfb, default(), [parse_short("f32[4]")],
                     [parse_short("f32[5]")], small.executable.parallel, name="h")
    call = exe.caller(first_only=True)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"h returned result 0 of shape \[4\]"):
            call([ember.device_put(np.ones(4, np.float32))])
    good = Executable(small.vmfb, default(), [parse_short("f32[4]")],
                      [parse_short("f32[4]")], small.executable.parallel, name="h")
    call = good.caller(first_only=True)
    for i in range(3):
        assert_close(call([ember.device_put(np.full(4, i, np.float32))]),
                     np.full(4, 2.0 * i, np.float32))


@pytest.mark.parametrize("field", ["out_avals", "in_avals"])
def test_a_signature_edited_after_compiling_is_refused(compiled, field):
    bad = _patched(compiled.vmfb, f'"{field}":["f32[{N}]"]', f'"{field}":["f64[99999]"]')
    with pytest.raises(ValueError, match=r"says .*f64\[99999\].* compiled as .*"
                                         r"tensor<10000xf32>.*compile it again"):
        ember.load(bad)


def test_a_malformed_signature_is_a_clear_error(compiled):
    bad = _patched(compiled.vmfb, '"in_avals":[', '"in_avals":{')
    with pytest.raises(ValueError, match="well-formed ember.abi signature; <bytes> has a "
                                         "damaged one"):
        ember.load(bad)
    bad = _patched(compiled.vmfb, '"in_avals":["f32[', '"in_avals":["q32[')
    with pytest.raises(ValueError, match="damaged one"):
        ember.load(bad)


def test_code_for_a_cpu_with_more_instructions_is_refused(compiled):
    """A module saved on a machine with AMX (in its signature) does not run here: SIGILL
    would kill the process."""
    meta = json.loads(compiled.executable._function.reflection["ember.abi"])
    assert meta["cpu"] == iree_driver.cpu_features(iree_driver.target(compiled.target))[0]
    assert_close(ember.load(compiled.vmfb)(np.ones(N, np.float32)), np.full(N, 2, np.float32))
    first = meta["cpu_features"][0]
    forged = "+" + "z" * (len(first) - 1)  # a feature no CPU has, of the same length
    bad = _patched(compiled.vmfb, f'"cpu_features":["{first}"', f'"cpu_features":["{forged}"')
    with pytest.raises(RuntimeError, match=f"uses instructions this CPU .* lacks: {forged[1:]}"):
        ember.load(bad)(np.ones(N, np.float32))


def test_code_for_another_machine_is_compiled_and_saved_but_not_run(tmp_path):
    """cpu:aarch64:NAME cross-compiles for a 64-bit Arm CPU: the module is saved and loads
    its signature here, and a call says which machine it needs (it would not execute)."""
    f = ember.jit(lambda x: jnp.sin(x) * 2, device="cpu:aarch64:neoverse-v2")
    path = tmp_path / "arm.vmfb"
    f.lower(jnp.zeros(4)).compile().save(path)
    loaded = ember.load(path)
    for call in (lambda: f(jnp.ones(4)), lambda: loaded(np.ones(4, np.float32))):
        with pytest.raises(RuntimeError, match=r"an aarch64 CPU \(neoverse-v2\), and this "
                                               r"machine is x86_64"):
            call()
    with pytest.raises(ValueError, match=r"a CPU LLVM knows for aarch64 CPUs: one of .*"
                                         r"neoverse-n1"):
        ember.jit(lambda x: x, device="cpu:aarch64:haswell").lower(jnp.zeros(4))
    with pytest.raises(ValueError, match=r"machines: x86_64, aarch64"):
        ember.jit(lambda x: x, device="cpu:riscv64:generic").lower(jnp.zeros(4))


def test_a_named_cpu_lacking_here_is_compiled_but_not_run():
    """The first of three ever newer Intel CPUs that has instructions this machine lacks
    (AMX on most machines; a Sapphire Rapids has them but not Granite Rapids' AMX-FP16)."""
    for name in ("sapphirerapids", "graniterapids", "diamondrapids"):
        needs = iree_driver.cpu_features(iree_driver.target(f"cpu:{name}"))[1]
        missing = device.missing_cpu_features(needs)
        if missing:
            break
    f = ember.jit(lambda x: x * 2, device=f"cpu:{name}")
    lowered = f.lower(jnp.zeros(4))
    assert lowered.compile().vmfb  # compiling for it works anywhere
    with pytest.raises(RuntimeError, match=rf"CPU {name}\) and uses instructions this "
                                           rf"CPU .* lacks: .*{re.escape(missing[0])}"):
        f(jnp.ones(4))
    assert_close(ember.jit(lambda x: x * 2, device="cpu:x86-64-v2")(jnp.ones(4)),
                 np.full(4, 2, np.float32))


UNKNOWN_CPU = """
import ember, ember.numpy as jnp
try:
    ember.jit(lambda x: x * 2, device="cpu:not-a-cpu")(jnp.ones(4))
except ValueError as e:
    print("raised:", e)
print("alive")
"""


def test_an_unknown_cpu_name_raises_and_the_process_lives():
    res = subprocess.run([sys.executable, "-c", UNKNOWN_CPU], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "raised: jit of <lambda>: device compile target 'cpu:not-a-cpu' requires a CPU " \
           "LLVM knows" in res.stdout
    assert "x86-64-v3" in res.stdout and res.stdout.rstrip().endswith("alive")


def test_the_cache_key_holds_the_cpu_not_the_word_host():
    parts = dict(pipeline.cache_key("module {}", "cpu").parts)
    name, features = iree_driver.cpu_features(iree_driver.target("cpu"))
    assert parts["cpu"].startswith(name + " ") and "+avx" in parts["cpu"]
    assert set(parts["cpu"].split(" ", 1)[1].split(",")) == features
    other = dict(pipeline.cache_key("module {}", "cpu:x86-64-v2").parts)
    assert other["cpu"] != parts["cpu"]
