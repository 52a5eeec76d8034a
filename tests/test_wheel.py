"""The wheel, not the editable install: built from the tree, installed into a fresh virtual
environment, imported and run from outside the source tree (a hand-written package list once
left out ember.scipy, and `import ember` failed from the wheel). And a runtime-only install:
the wheel with iree-base-runtime, NumPy, optree and ml_dtypes and no IREE compiler loads and
runs a module the full install compiled (docs/guide.md, "Installing the runtime only"); whatever
would trace or compile says which package it needs."""

import fcntl
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.compiler import iree_driver
from ember.runtime import device

ROOT = Path(__file__).resolve().parent.parent
# The runtime's dependencies: the project's, without the compiler (and the test extras).
RUNTIME_DEPS = [d for d in importlib.metadata.distribution("ember").requires
                if "extra ==" not in d and not d.startswith("iree-base-compiler")]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

SMOKE = """
import os, sys
import numpy as np
import ember, ember.numpy as jnp, ember.scipy.special as special
assert ember.HAS_COMPILER and ember.__file__.startswith(sys.prefix), ember.__file__
f = ember.jit(lambda x: special.erf(x) + jnp.sum(x))
print(np.round(np.asarray(f(np.zeros(3, np.float32))), 3).tolist())
"""
RUN = """
import json, sys
import numpy as np
import ember
assert not ember.HAS_COMPILER and ember.__file__.startswith(sys.prefix), ember.__file__
try:
    import iree.compiler
    raise SystemExit("iree.compiler is importable")
except ModuleNotFoundError:
    pass
f = ember.load(sys.argv[1])
x = ember.device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
y = ember.block_until_ready(f(x, np.float32(2)))
assert isinstance(y, ember.Array), type(y)
refused = {}
for use in ("ember.jit(abs)", "__import__('ember.numpy')"):
    try:
        eval(use)
    except ember.errors.CompilerNotInstalled as e:
        refused[use] = str(e)
print(json.dumps({"y": np.asarray(y).tolist(), "dtype": str(y.dtype), "refused": refused,
                  "devices": [d.platform for d in ember.devices()]}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    wheels = tmp_path_factory.mktemp("wheels")
    # setuptools builds in the tree (build/, *.egg-info): one build at a time across workers
    (ROOT / "build").mkdir(exist_ok=True)
    with open(ROOT / "build" / ".wheel-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT),
                        "-w", str(wheels)], check=True, capture_output=True, timeout=600)
    (found,) = wheels.glob("ember-*.whl")
    return found


def _venv(tmp_path: Path, wheel: Path, deps: Path) -> Path:
    """A fresh venv with the wheel, and its dependencies from `deps` (not the network; a
    plain path, so the test environment's editable `ember` finder does not run)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], check=True, capture_output=True, text=True)
    Path(site.stdout.strip(), "deps.pth").write_text(f"{deps}\n")
    return python


def test_the_wheel_installs_imports_and_runs(tmp_path, wheel):
    python = _venv(tmp_path, wheel, Path(sysconfig.get_path("purelib")))
    env = {**ENV, "EMBER_COMPILATION_CACHE_DIR": "off"}
    res = subprocess.run([python, "-c", SMOKE], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip() == "[0.0, 0.0, 0.0]"
    tool = subprocess.run([python.parent / "ember-opt", "--list-passes"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert tool.returncode == 0 and "--ember-fuse" in tool.stdout, tool.stderr[-2000:]


def _installed_files(requirements: list[str]) -> set[str]:
    """The top-level files and folders (in a namespace package like iree, its subfolders)
    the distributions of `requirements` and of what they require installed here."""
    todo, seen, found = list(requirements), set(), set()
    while todo:
        name = re.match(r"[A-Za-z0-9_.-]+", todo.pop())[0].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        dist = importlib.metadata.distribution(name)
        todo += [r for r in dist.requires or () if "extra ==" not in r]
        for file in dist.files:
            parts = file.parts
            if parts[0] == ".." or parts[0].endswith(".dist-info") or parts[0] == "__pycache__":
                continue
            namespace = len(parts) > 2 and not (file.locate().parents[len(parts) - 2] /
                                                "__init__.py").exists()
            found.add("/".join(parts[:2] if namespace else parts[:1]))
    return found


def test_a_runtime_only_install_runs_a_saved_module(tmp_path, wheel):
    f = ember.jit(lambda x, s: jnp.tanh(x) * s + 1)
    path = tmp_path / "f.vmfb"
    f.lower(np.zeros((2, 3), np.float32), np.float32(0)).compile().save(path)
    deps, site = tmp_path / "deps", Path(sysconfig.get_path("purelib"))
    for name in _installed_files(RUNTIME_DEPS):  # iree/compiler stays out
        (deps / name).parent.mkdir(parents=True, exist_ok=True)
        (deps / name).symlink_to(site / name)
    python = _venv(tmp_path, wheel, deps)
    res = subprocess.run([python, "-c", RUN, str(path)], cwd=tmp_path, env=ENV,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    expected = np.tanh(np.arange(6, dtype=np.float32).reshape(2, 3)) * 2 + 1
    np.testing.assert_allclose(out["y"], expected, rtol=1e-6)
    assert out["dtype"] == "float32" and out["devices"] == ["cpu"]
    assert list(out["refused"]) == ["ember.jit(abs)", "__import__('ember.numpy')"]
    assert all("pip install iree-base-compiler==3.13.0" in e for e in out["refused"].values())
    tool = subprocess.run([python.parent / "ember-opt", "--list-passes"], env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert tool.returncode == 1 and "ember-opt: ember-opt requires Ember's compiler" in \
        tool.stderr, tool.stderr[-2000:]


def test_the_kernel_names_every_feature_llvm_finds_on_this_cpu():
    """The runtime reads the CPU's features from /proc/cpuinfo (it has no compiler to ask):
    none of what LLVM lists for this machine may look missing, or code compiled here for
    this machine's CPU by name would be refused."""
    name, features = iree_driver.cpu_features(iree_driver.target("cpu"))
    assert len(features) > 20 and device.missing_cpu_features(features) == []
    assert device.missing_cpu_features(frozenset({"+avx2", "+zzzz"})) == ["zzzz"]
    other = iree_driver.cpu_features(iree_driver.target(f"cpu:{name}"))[1]
    assert device.missing_cpu_features(other) == []
