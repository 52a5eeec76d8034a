"""tools/gpu_check.py: the host half builds the bundle (CUDA modules and the runtime-only
wheels); the device half, run here on the CPU from a bundle built for it, installs those
wheels into a venv without the compiler, runs every module and checks its values."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ember
from ember.tools import gpu_check

TOOL = Path(gpu_check.__file__)


def test_the_cuda_bundle_holds_every_case_and_the_runtime_wheels(tmp_path):
    manifest = gpu_check.build(tmp_path / "b", "cuda", small=False, wheels=True, python="3.12")
    assert [c["name"] for c in manifest["cases"]] == [c.name for c in gpu_check.CASES]
    for case in manifest["cases"]:
        loaded = ember.load(tmp_path / "b" / case["module"])
        assert loaded.target == "cuda:sm_80"
        assert [list(a.shape) for a in loaded.in_avals] == case["shapes"]
    wheels = sorted(p.name.split("-")[0] for p in (tmp_path / "b" / "wheels").glob("*.whl"))
    assert {"ember", "iree_base_runtime", "numpy", "optree", "ml_dtypes"} <= set(wheels)
    assert not any(w.startswith("iree_base_compiler") for w in wheels)
    assert all("cp312" in p.name or "py3-none" in p.name
               for p in (tmp_path / "b" / "wheels").glob("*.whl"))
    size = sum(p.stat().st_size for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert size < 64 << 20, size  # what may travel to the device machine


def test_the_device_half_installs_runs_and_checks_a_bundle(tmp_path):
    bundle = tmp_path / "b"
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([sys.executable, TOOL, "build", bundle, "--target", "cpu", "--small",
                    "--python", python], check=True, capture_output=True, timeout=600)
    res = subprocess.run([sys.executable, bundle / "gpu_check.py", "run", bundle, "--platform",
                          "cpu", "--reps", "2", "--no-jax", "--json", tmp_path / "rows.json"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert len(rows) == len(gpu_check.CASES)
    assert all(r["ok"] and r["ember_ms"] > 0 for r in rows), rows
    assert "| selu (small) | ok |" in res.stdout
    venv_python = bundle / "venv" / "bin" / "python"
    no_compiler = subprocess.run([venv_python, "-c", "import ember; print(ember.HAS_COMPILER)"],
                                 capture_output=True, text=True, timeout=120)
    assert no_compiler.stdout.strip() == "False", no_compiler.stderr


def test_a_wrong_value_fails_the_run(tmp_path, monkeypatch):
    bundle = tmp_path / "b"
    gpu_check.build(bundle, "cpu", small=True, wheels=False, python="")
    wrong = dataclasses.replace(gpu_check.CASES[0], fn=lambda xp, lax, x: x)  # reference
    monkeypatch.setattr(gpu_check, "CASES", [wrong, *gpu_check.CASES[1:]])
    rows = gpu_check.run(bundle, "cpu", reps=1, use_jax=True)
    assert [r["ok"] for r in rows] == [False] + [True] * (len(rows) - 1)
    assert all(r["jax_ms"] > 0 for r in rows)
    assert "| selu (small) | WRONG |" in gpu_check.table(rows, json.loads(
        (bundle / "manifest.json").read_text()), "cpu")


@pytest.mark.parametrize("argv", [["run", "/nonexistent"], ["build"]])
def test_usage_errors_are_one_line(argv):
    res = subprocess.run([sys.executable, TOOL, *argv], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr
