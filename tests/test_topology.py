"""The CPU device comes up wherever Python runs: IREE's topology query failing (a VM whose
node lists no cores), cgroup quotas, cpusets, and EMBER_NUM_THREADS."""

import os
import subprocess
import sys

import pytest

from ember.runtime import topology

SCRIPT = """
import logging, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
logging.getLogger("ember").setLevel(logging.DEBUG)
import numpy as np, ember, ember.numpy as jnp
a = np.arange(512 * 512, dtype=np.float32).reshape(512, 512) / 512**2
print(float(ember.jit(lambda x: (x @ x).sum())(a)), float((a.astype(np.float64) @ a).sum()))
print([d.platform for d in ember.devices()])
"""


def _run(**env: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, **env)  # the suite's compilation cache: one compile for all
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)


def _check(res: subprocess.CompletedProcess) -> None:
    assert res.returncode == 0, res.stderr[-2000:]
    got, want = map(float, res.stdout.splitlines()[0].split())
    assert got == pytest.approx(want, rel=1e-4)
    assert res.stdout.splitlines()[1] == "['cpu']"


@pytest.mark.runtime
def test_a_failing_topology_query_falls_back_to_the_usable_cores():
    """IREE's own query fails here as it did on the 13-core VM (there: a node with no usable
    cores; here: a node that does not exist): Ember builds the executor from the cores
    sched_getaffinity lists, says so once, and computes."""
    res = _run(IREE_PY_RUNTIME_FLAGS="--task_topology_nodes=7")
    _check(res)
    said = [line for line in res.stderr.splitlines() if "topology failed" in line]
    assert len(said) == 1
    assert f"runs {len(os.sched_getaffinity(0))} worker threads" in said[0]


@pytest.mark.runtime
def test_ember_num_threads_sets_the_worker_count():
    res = _run(EMBER_NUM_THREADS="3")
    _check(res)
    assert "local-task runs 3 worker threads (EMBER_NUM_THREADS=3)" in res.stderr


@pytest.mark.runtime
def test_a_bad_ember_num_threads_names_the_variable():
    res = _run(EMBER_NUM_THREADS="zero")
    assert res.returncode != 0
    assert "EMBER_NUM_THREADS requires a positive number of worker threads, got 'zero'" \
        in res.stderr


@pytest.mark.unit
@pytest.mark.parametrize("text, want", [("200000 100000", 2), ("150000 100000", 2),
                                        ("50000 100000", 1), ("max 100000", None)])
def test_cgroup_v2_quota(tmp_path, text, want):
    (tmp_path / "cpu.max").write_text(text + "\n")
    assert topology.cgroup_quota(tmp_path) == want


@pytest.mark.unit
@pytest.mark.parametrize("quota, want", [("300000", 3), ("-1", None)])
def test_cgroup_v1_quota(tmp_path, quota, want):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text(quota)
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000")
    assert topology.cgroup_quota(tmp_path) == want


@pytest.mark.unit
def test_no_cgroup_files_no_quota(tmp_path):
    assert topology.cgroup_quota(tmp_path) is None


@pytest.mark.unit
def test_a_quota_below_the_cores_caps_the_workers(monkeypatch):
    monkeypatch.delenv(topology.ENV, raising=False)
    monkeypatch.setattr(topology, "usable_cores", lambda: 13)
    monkeypatch.setattr(topology, "cgroup_quota", lambda: 4)
    assert topology.chosen().count == 4
    assert topology.fallback().count == 4
    monkeypatch.setattr(topology, "cgroup_quota", lambda: None)
    assert topology.chosen().count is None  # IREE's topology first
    assert topology.fallback().count == 13
    assert topology.fallback().flags() == ("--task_topology_nodes=current",
                                           "--task_topology_group_count=13")
