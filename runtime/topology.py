"""How many worker threads the CPU's threaded device runs, decided once per process.

IREE's `local-task` driver asks the machine's topology (cpuinfo) which cores its current
NUMA node has. On some virtual machines that query finds none, and no device comes up
("selected 1 node(s) but none contain any usable cores"), where JAX runs; and in a
container IREE counts the host's cores, not the ones the process may use. Ember asks the
kernel instead when it must: the cores this process may run on (`sched_getaffinity`, which
honours cpusets), at most the cgroup's CPU quota, or `EMBER_NUM_THREADS`.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger("ember")

ENV = "EMBER_NUM_THREADS"


@dataclass(frozen=True)
class Workers:
    """The worker count to ask IREE for (None: IREE's own topology) and why."""

    count: int | None
    reason: str

    def flags(self) -> tuple[str, ...]:
        """IREE runtime flags that build the executor from `count` groups, whatever the
        topology query would find (an explicit node list is checked before a count)."""
        if self.count is None:
            return ()
        return ("--task_topology_nodes=current", f"--task_topology_group_count={self.count}")


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask, which a cpuset restricts)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def cgroup_quota(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The CPUs a cgroup's quota allows, rounded up (None without a quota): cgroup v2's
    cpu.max ("200000 100000" is 2 CPUs, "max 100000" none), else v1's cfs files."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        if quota != "max":
            return max(1, math.ceil(int(quota) / int(period)))
        return None
    except (OSError, ValueError):
        pass
    try:
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return max(1, math.ceil(quota / period)) if quota > 0 and period > 0 else None


def _from_env() -> int | None:
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip():
        return None
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{ENV} requires a positive number of worker threads, got {raw!r}")
    return count


def chosen() -> Workers:
    """The workers to ask for before trying IREE's topology: `EMBER_NUM_THREADS`, else a
    cgroup quota below the usable cores, else IREE's own choice."""
    forced = _from_env()
    if forced is not None:
        return Workers(forced, f"{ENV}={forced}")
    cores, quota = usable_cores(), cgroup_quota()
    if quota is not None and quota < cores:
        return Workers(quota, f"a cgroup CPU quota of {quota} of {cores} usable cores")
    return Workers(None, "IREE's topology")


def fallback() -> Workers:
    """The workers to ask for when IREE's topology query failed: every usable core (up to a
    quota)."""
    cores, quota = usable_cores(), cgroup_quota()
    count = min(cores, quota) if quota else cores
    return Workers(count, f"{count} usable cores (sched_getaffinity"
                          f"{', cgroup quota' if quota and quota < cores else ''})")
