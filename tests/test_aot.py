"""Ahead-of-time compilation: ember-compile, .vmfb files run by IREE's own tools, ember.load,
GPU targets compiled without a GPU, and the CMake function."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ember
import ember.numpy as enp
from ember.errors import CompileError
from ember.tools.ember_compile import load_function
from helpers import assert_close

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples" / "aot" / "model.py"
BIN = Path(sys.executable).parent
GPU_FORMATS = {"cuda": "cuda-nvptx-fb", "vulkan": "vulkan-spirv-fb", "rocm": "rocm-hsaco-fb"}


def selu(x, alpha=1.67, scale=1.05):
    return scale * enp.where(x > 0, x, alpha * enp.exp(x) - alpha)


def _run_module(vmfb: Path, function: str, *inputs: str) -> str:
    out = subprocess.run([BIN / "iree-run-module", f"--module={vmfb}", f"--function={function}",
                          *(f"--input={i}" for i in inputs)],
                         capture_output=True, text=True, check=True)
    return out.stdout


def _values(output: str) -> np.ndarray:
    """The numbers of iree-run-module's first result line (`4xf32=1 2 3`)."""
    line = next(ln for ln in output.splitlines() if "=" in ln and "hal" not in ln)
    return np.array(line.split("=", 1)[1].replace("[", " ").replace("]", " ").split(),
                    np.float32)


def _ember_compile(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BIN / "ember-compile", *args], capture_output=True, text=True)


def test_ember_compile_runs_with_iree_run_module(tmp_path):
    out = tmp_path / "power_sum.vmfb"
    done = _ember_compile(f"{MODEL}:power_sum", "--arg", "f32[4]", "--arg", "i32[]",
                          "--static", "n=3", "-o", str(out))
    assert done.returncode == 0, done.stderr
    got = _values(_run_module(out, "power_sum", "4xf32=1,2,3,4", "i32=2"))
    power_sum = load_function(f"{MODEL}:power_sum")
    expected = ember.jit(power_sum, static_argnames="n")(
        np.arange(1, 5, dtype=np.float32), np.int32(2), n=3)
    assert_close(got.reshape(()), expected)
    assert got.tolist() == [300.0]  # 3 * (1+2+3+4)**2


def test_a_symbolic_dim_runs_at_every_size(tmp_path):
    """`--arg f32[?,3]`: one vmfb for every row count, in iree-run-module and ember.load."""
    out = tmp_path / "selu.vmfb"
    done = _ember_compile(f"{MODEL}:selu", "--arg", "f32[?,3]", "-o", str(out))
    assert done.returncode == 0, done.stderr
    loaded = ember.load(out)
    assert loaded.signature() == "(f32[_0,3]) -> (f32[_0,3])"
    for rows in (2, 5):
        x = np.linspace(-2, 2, rows * 3, dtype=np.float32).reshape(rows, 3)
        expected = np.asarray(ember.jit(selu)(x))
        values = ",".join(f"{v:.6f}" for v in x.ravel())
        got = _values(_run_module(out, "selu", f"{rows}x3xf32={values}"))
        assert_close(got.reshape(rows, 3), expected, rtol=1e-5, atol=1e-5)
        assert_close(np.asarray(loaded(x)), expected)
    with pytest.raises(TypeError, match=r"requires argument 0 to be f32\[.*,3\]"):
        loaded(np.ones((2, 4), np.float32))


@pytest.fixture(scope="module")
def saved_selu(tmp_path_factory):
    path = tmp_path_factory.mktemp("selu") / "selu.vmfb"
    compiled = ember.jit(selu).lower(np.ones(6, np.float32)).compile()
    compiled.save(path)
    return path, compiled


@given(st.lists(st.floats(-20, 20, width=32), min_size=6, max_size=6))
def test_saved_module_matches_jit_everywhere(saved_selu, values):
    """jit, ember.load (from a file and from bytes) and iree-run-module agree."""
    path, compiled = saved_selu
    x = np.array(values, np.float32)
    expected = np.asarray(ember.jit(selu)(x))
    assert_close(ember.load(path)(x), expected)
    assert_close(ember.load(compiled.vmfb)(x), expected)
    text = "6xf32=" + ",".join(repr(float(v)) for v in x)
    np.testing.assert_allclose(_values(_run_module(path, "selu", text)), expected,
                               rtol=1e-5, atol=1e-5)  # iree-run-module prints 6 digits


def test_emit_ember_and_linalg(tmp_path):
    done = _ember_compile(f"{MODEL}:selu", "--arg", "f32[8]", "--emit", "ember")
    assert done.returncode == 0 and '"ember.exp"' in done.stdout
    out = tmp_path / "selu.mlir"
    done = _ember_compile(f"{MODEL}:selu", "--arg", "f32[8]", "--emit", "linalg", "-o", str(out))
    assert done.returncode == 0
    text = out.read_text()
    assert "func.func @selu" in text and "linalg.generic" in text and '"ember.' not in text



def test_ember_compile_writes_no_host_calls(tmp_path):
    """In process a CPU solve calls LAPACK through Ember's host module; a file from
    ember-compile is for any IREE runtime, so it holds the solve's loops instead."""
    source = tmp_path / "solver.py"
    source.write_text("import ember.numpy as jnp\n\n\ndef solve(a, b):\n"
                      "    return jnp.linalg.solve(a, b)\n")
    done = _ember_compile(f"{source}:solve", "--arg", "f32[4,4]", "--arg", "f32[4]",
                          "--emit", "linalg")
    assert done.returncode == 0, done.stderr
    assert "func.func @solve" in done.stdout and "ember_host" not in done.stdout
    lowered = ember.jit(load_function(f"{source}:solve")).lower(
        np.eye(4, dtype=np.float32), np.ones(4, np.float32))
    assert "call @ember_host.solve_f32" in lowered.as_text("linalg")

@pytest.mark.parametrize("args, message", [
    (["nope.py:f"], "no such file: nope.py"),
    ([f"{MODEL}"], "path/to/file.py:function"),
    ([f"{MODEL}:nope"], "has no function 'nope'; it defines: power_sum, selu"),
    ([f"{MODEL}:selu", "--arg", "f33[8]"], "an array type is written like f32[3,4]"),
    ([f"{MODEL}:selu", "--arg", "f32[8]", "--target", "tpu"], "compile target requires one of"),
    ([f"{MODEL}:power_sum", "--arg", "f32[4]", "--arg", "i32[]"], "missing 1 required"),
    ([f"{MODEL}:selu", "--arg", "f32[8]", "--static", "3=x"], "--static requires NAME=VALUE"),
])
def test_ember_compile_errors(args, message):
    done = _ember_compile(*args)
    assert done.returncode != 0
    assert "ember-compile: error:" in done.stderr and message in done.stderr
    assert "Traceback" not in done.stderr


def test_load_keeps_pytrees_and_checks_arguments(tmp_path):
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "stats": (enp.sum(x), enp.max(x))}

    params = {"w": np.float32(2), "b": np.ones(3, np.float32)}
    x = np.arange(3, dtype=np.float32)
    ember.jit(f).lower(params, x).compile().save(tmp_path / "f.vmfb")
    loaded = ember.load(tmp_path / "f.vmfb")
    out = loaded(params, x)
    assert set(out) == {"y", "stats"} and len(out["stats"]) == 2
    assert_close(out["y"], 2 * x + 1)
    assert_close(out["stats"][1], np.float32(2))
    assert loaded.signature() == "(f32[3], f32[], f32[3]) -> (f32[], f32[], f32[3])"
    with pytest.raises(TypeError, match=r"requires argument 2 to be f32\[3\].*got f32\[4\]"):
        loaded(params, np.zeros(4, np.float32))
    with pytest.raises(TypeError, match=r"requires argument 2 to be f32\[3\].*got i32\[3\]"):
        loaded(params, np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="structured as"):
        loaded(x, params)


def test_a_saved_donating_module_donates_when_loaded(tmp_path):
    """The module writes into a donated argument's buffer: `ember.load`'s callable donates
    it as jit does (the caller's array becomes invalid) instead of changing it in place."""
    n = 1 << 16
    step = ember.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
    lowered = step.lower(np.zeros(n, np.float32), np.zeros(n, np.float32))
    assert lowered.unusable_donations == []  # written in place
    lowered.compile().save(tmp_path / "step.vmfb")
    loaded = ember.load(tmp_path / "step.vmfb")
    p, g = ember.device_put(np.ones(n, np.float32)), ember.device_put(np.ones(n, np.float32))
    assert_close(loaded(p, g), np.full(n, 0.5, np.float32))
    assert p.is_deleted() and not g.is_deleted()
    with pytest.raises(RuntimeError, match="donated to"):
        np.asarray(p)
    host = np.ones(n, np.float32)  # host data is copied in, never written
    assert_close(loaded(host, g), np.full(n, 0.5, np.float32))
    assert (host == 1).all()
    with pytest.raises(ValueError, match="same array at argument 0 and argument 1"):
        loaded(g, g)


def test_load_rejects_what_ember_did_not_make(tmp_path):
    with pytest.raises(ValueError, match="requires a .vmfb made by IREE"):
        ember.load(b"not a module")
    plain = tmp_path / "plain.vmfb"
    src = tmp_path / "plain.mlir"
    src.write_text("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  return %a : tensor<2xf32>\n}\n")
    subprocess.run([BIN / "iree-compile", str(src), "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu",
                    "--iree-llvmcpu-target-cpu=generic", "-o", str(plain)], check=True)
    with pytest.raises(ValueError, match="made by Ember.*no ember.abi signature"):
        ember.load(plain)


@pytest.mark.parametrize("target", sorted(GPU_FORMATS))
def test_gpu_targets_compile_without_a_gpu(tmp_path, target):
    compiled = ember.jit(selu, device=target).lower(np.ones(16, np.float32)).compile()
    assert compiled.target.startswith(target + ":")
    path = tmp_path / f"selu_{target}.vmfb"
    compiled.save(path)
    dump = subprocess.run([BIN / "iree-dump-module", str(path)], capture_output=True,
                          text=True, check=True).stdout
    assert GPU_FORMATS[target] in dump
    assert re.search(rf'ember.abi: .*"target":"{target}:', dump)
    loaded = ember.load(path)
    assert loaded.target == compiled.target
    if target not in {d.platform for d in ember.devices()}:
        with pytest.raises(RuntimeError, match=rf"compiled for target {target}:\w+ and needs a "
                                               rf"{target} device.*devices available: cpu"):
            loaded(np.ones(16, np.float32))


def test_cuda_arch_is_selectable(tmp_path):
    compiled = ember.jit(selu, device="cuda:sm_86").lower(np.ones(4, np.float32)).compile()
    assert compiled.target == "cuda:sm_86"
    # IREE 3.13 has no Hopper target: sm_80 PTX (the default) is what runs there.
    with pytest.raises(CompileError, match="missing GPU target"):
        ember.jit(selu, device="cuda:sm_90").lower(np.ones(4, np.float32)).compile()
    with pytest.raises(ValueError, match="compile target requires one of"):
        ember.jit(selu, device="cuda:").lower(np.ones(4, np.float32))


def test_default_device_chooses_the_target():
    ember.config.update("ember_default_device", "vulkan")
    try:
        compiled = ember.jit(selu).lower(np.ones(4, np.float32)).compile()
    finally:
        ember.config.update("ember_default_device", "cpu")
    assert compiled.target == "vulkan:ampere"
    cpu = ember.config.read("ember_cpu")  # EMBER_CPU names the CPU "cpu" compiles for
    assert ember.jit(selu).lower(np.ones(4, np.float32)).compile().target == (
        f"cpu:{cpu}" if cpu else "cpu")


@pytest.mark.gpu
@pytest.mark.skipif("cuda" not in {d.platform for d in ember.devices()},
                    reason="no CUDA device on this machine (needs an NVIDIA GPU and driver)")
def test_runs_on_cuda():
    x = np.linspace(-3, 3, 1 << 16, dtype=np.float32)
    got = ember.jit(selu, device="cuda")(x)
    assert got.device.platform == "cuda"
    assert_close(got, np.where(x > 0, 1.05 * x, 1.05 * (1.67 * np.exp(x) - 1.67)))


def test_cmake_example_builds_and_runs(tmp_path):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    cmake, ctest = (shutil.which(tool, path=env["PATH"]) for tool in ("cmake", "ctest"))
    assert cmake and ctest, "cmake comes with the test extras (pyproject.toml)"
    build = tmp_path / "build"
    for cmd in ([cmake, "-S", str(MODEL.parent), "-B", str(build)],
                [cmake, "--build", str(build)],
                [ctest, "--test-dir", str(build), "--output-on-failure"]):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    assert {p.name for p in build.glob("*.vmfb")} == {"selu.vmfb", "power_sum.vmfb",
                                                      "selu_cuda.vmfb"}
