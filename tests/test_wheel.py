"""The wheel, not the editable install: built from the tree, installed into a fresh virtual
environment, imported and run from outside the source tree (a hand-written package list once
left out ember.scipy, and `import ember` failed from the wheel)."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SMOKE = """
import os, sys
import numpy as np
import ember, ember.numpy as jnp, ember.scipy.special as special
assert ember.__file__.startswith(sys.prefix), ember.__file__
f = ember.jit(lambda x: special.erf(x) + jnp.sum(x))
print(np.round(np.asarray(f(np.zeros(3, np.float32))), 3).tolist())
"""


def test_the_wheel_installs_imports_and_runs(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT),
                    "-w", str(wheels)], check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("ember-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    # The dependencies (IREE, NumPy, ...) come from the test environment, not the network:
    # its site-packages as a plain path, so its editable `ember` finder does not run.
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], check=True, capture_output=True, text=True)
    Path(site.stdout.strip(), "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["EMBER_COMPILATION_CACHE_DIR"] = "off"
    res = subprocess.run([python, "-c", SMOKE], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip() == "[0.0, 0.0, 0.0]"
    tool = subprocess.run([venv / "bin" / "ember-opt", "--list-passes"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert tool.returncode == 0 and "--ember-fuse" in tool.stdout, tool.stderr[-2000:]
