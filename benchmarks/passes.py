"""How the time of Ember's own passes grows with program size: a Python loop of n steps
(2n elementwise ops, sharing two constants) traced, then each pass of the ember phase run
on it, at 100, 1,000 and 10,000 ops, per op; JAX's trace and lowering (to StableHLO) of the
same program is the peer. A pass that is not linear shows as a growing time per op; the
last column is each pass's time per op at the largest size against the smallest (the run
exits non-zero above 2).

    python benchmarks/passes.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import ember
import ember.numpy as enp
from ember.compiler import passes, pipeline

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # JAX is the optional peer
    jax = jnp = None

BOUND = 2.0


def chain(steps: int):
    def f(x):
        for _ in range(steps):
            x = x * 1.0001 + 0.5
        return x
    return f


def ember_times(steps: int) -> dict[str, float]:
    """Seconds for tracing and for each pass of the ember phase."""
    start = time.perf_counter()
    traced = ember.jit(chain(steps)).trace(enp.ones(8))
    times = {"trace": time.perf_counter() - start}
    module = pipeline.clone(traced.module)
    for name in pipeline.EMBER_PASSES:
        start = time.perf_counter()
        passes.run(module, (name,))
        times[name] = time.perf_counter() - start
    return times


def jax_time(steps: int) -> float | None:
    if jax is None:
        return None
    start = time.perf_counter()
    jax.jit(chain(steps)).lower(jnp.ones(8, np.float32)).as_text()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 ops only")
    args = parser.parse_args()
    sizes = [50, 500] if args.quick else [50, 500, 5000]  # steps: 2 ops each
    rows = {n: (ember_times(n), jax_time(n)) for n in sizes}
    names = list(rows[sizes[0]][0])
    print(f"{'ops':>6} " + " ".join(f"{n:>20}" for n in names) + f" {'JAX trace+lower':>16}")
    for n, (times, peer) in rows.items():
        ops = 2 * n
        cells = " ".join(f"{times[k] / ops * 1e6:>17.1f} us" for k in names)
        peer_cell = f"{peer / ops * 1e6:>13.1f} us" if peer is not None else f"{'-':>16}"
        print(f"{ops:>6} {cells} {peer_cell}")
    small, large = rows[sizes[0]][0], rows[sizes[-1]][0]
    growth = {k: (large[k] / (2 * sizes[-1])) / max(small[k] / (2 * sizes[0]), 1e-9)
              for k in names}
    print("growth of time per op, largest/smallest: " +
          ", ".join(f"{k} {g:.2f}" for k, g in growth.items()))
    # Passes that take microseconds at the smallest size are all noise there: bound only
    # those whose time is measurable.
    broken = [k for k, g in growth.items() if g > BOUND and large[k] > 0.05]
    if broken:
        print(f"not linear: {broken}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
