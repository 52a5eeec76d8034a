"""How Ember's costs grow with the work: each row at several sizes, time per unit, against JAX
in the same run, so that a cost growing faster than the work shows at a glance.

Rows: loop-carried state (scan with stacked outputs, a tiny fori_loop body), slice updates
(`.at[interior].set` on n^3, one row written per loop step into arrays of growing height),
sorting, the heat-3d stencil from npbench, dense kernels (a sum, layernorm, a matmul), and
compile time: a fresh program's first call per op, at 50 to 800 unrolled steps.
Each row also checks its own growth (the last column): Ember's time per unit at the largest
size against the smallest, within the bound the work allows (1.2 for linear rows; sorting may
grow with log n). `make bench` runs it; it exits non-zero when a bound is broken, and writes
benchmarks/scaling.png.

    python benchmarks/scaling.py [--quick] [--only NAME] [--png PATH]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from run import measure, median  # the same timing as the main table

import ember
import ember.numpy as enp

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # JAX is the optional peer
    jax = jnp = None


@dataclass
class Row:
    name: str
    unit: str
    sizes: list[int]
    make: Callable[[object, int], tuple[Callable, tuple]]  # (numpy module, size) -> fn, args
    work: Callable[[int], float]  # units of work at a size
    bound: float = 1.2  # allowed growth of time per unit from the smallest to the largest
    number: int = 5
    cold: bool = False  # time a fresh function's first call (compile included), not calls


def _lax(np_):
    return ember.lax if np_ is enp else jax.lax


def scan_rnn(np_, steps):
    rng = np.random.default_rng(0)
    h0 = np.zeros((64, 256), np.float32)
    xs = rng.standard_normal((steps, 64, 256)).astype(np.float32) * 0.1
    w = rng.standard_normal((256, 256)).astype(np.float32) * 0.05

    def f(h, xs, w):
        def cell(h, x):
            h = np_.tanh(h @ w + x)
            return h, h
        return _lax(np_).scan(cell, h, xs)  # stacked ys: the carry that used to be copied

    return f, (h0, xs, w)


def fori_tiny(np_, steps):
    def f(x):
        return _lax(np_).fori_loop(0, steps, lambda i, c: c * 0.999 + 0.001, x)
    return f, (np.ones(256, np.float32),)


def interior_set(np_, n):
    def f(a):
        return a.at[1:-1, 1:-1, 1:-1].set(a[1:-1, 1:-1, 1:-1] * 2.0)
    return f, (np.random.default_rng(0).random((n, n, n), dtype=np.float32),)


def row_updates(np_, height):
    """2000 one-row updates of a (height, 1024) array made inside the function: the cost of
    an update must not depend on the height (the zeros it starts from are spread over the
    2000)."""
    def f(v):
        a = np_.zeros((height, 1024), np.float32)
        body = lambda i, a: a.at[i * 7 % height].set(v + i.astype(np.float32))  # noqa: E731
        return _lax(np_).fori_loop(0, 2000, body, a)
    return f, (np.ones(1024, np.float32),)


def sort(np_, n):
    return (lambda x: np_.sort(x)), (np.random.default_rng(0).standard_normal(n)
                                     .astype(np.float32),)


def argsort(np_, n):
    return (lambda x: np_.argsort(x)), (np.random.default_rng(1).standard_normal(n)
                                        .astype(np.float32),)


def total(np_, n):
    """A sum to one element: two steps from 2^18 elements (compiler/split_reduction.py)."""
    return (lambda x: np_.sum(x)), (np.random.default_rng(2).standard_normal(n)
                                    .astype(np.float32),)


def layernorm(np_, rows):
    """Two row reductions and a tail: one dispatch with IREE's aggressive fusion."""
    def f(x):
        mean = np_.mean(x, axis=-1, keepdims=True)
        var = np_.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) / np_.sqrt(var + 1e-5)
    return f, (np.random.default_rng(3).standard_normal((rows, 1024)).astype(np.float32),)


def heat3d(np_, n, steps=20):
    """npbench's heat_3d: two 7-point stencil sweeps a step, written with .at[].set."""
    def sweep(a, b):
        inner = a[1:-1, 1:-1, 1:-1]
        return b.at[1:-1, 1:-1, 1:-1].set(
            0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * inner + a[:-2, 1:-1, 1:-1])
            + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * inner + a[1:-1, :-2, 1:-1])
            + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * inner + a[1:-1, 1:-1, :-2]) + inner)

    def f(a, b):
        def step(t, ab):
            a, b = ab
            b = sweep(a, b)
            return sweep(b, a), b
        return _lax(np_).fori_loop(1, steps, step, (a, b))

    rng = np.random.default_rng(0)
    return f, (rng.random((n, n, n), dtype=np.float32), rng.random((n, n, n), dtype=np.float32))


def unrolled(np_, steps):
    """`x = sin(x) * 1.0001 + 0.5` unrolled in Python: a program growing op by op, compiled
    cold (ember-reroll makes a loop of its identical steps again, compiler/reroll.py)."""
    def f(x):
        for _ in range(steps):
            x = np_.sin(x) * 1.0001 + 0.5
        return x
    return f, (np.linspace(0, 1, 8, dtype=np.float32),)


def unrolled_different(np_, steps):
    """The same steps, each multiplying by a constant of its own: no two steps alike, so the
    chain stays unrolled and ember-fuse cuts it into fusions of bounded size
    (compiler/fuse.py)."""
    def f(x):
        for k in range(steps):
            x = np_.sin(x) * (1.0 + k * 1e-6) + 0.5
        return x
    return f, (np.linspace(0, 1, 8, dtype=np.float32),)


def matmul_relu(np_, n):
    """relu(a @ b) of n x n f32: packed into 12 x 32 register tiles on AVX-512 CPUs
    (ember-lower-to-linalg-avx512), rows and columns zero-padded to whole tiles below 2000."""
    rng = np.random.default_rng(4)
    return (lambda a, b: np_.maximum(a @ b, 0.0)), tuple(
        rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))


ROWS = [
    Row("scan RNN 64x256, stacked ys", "step", [50, 100, 200, 400], scan_rnn, float, number=3),
    Row("fori_loop tiny body, f32[256]", "step", [250, 1000, 4000], fori_tiny, float),
    Row(".at[1:-1,1:-1,1:-1].set on n^3", "element", [25, 50, 100], interior_set,
        lambda n: float(n ** 3), bound=2.0),
    # At h = 4096 the array (16 MB) leaves the caches: JAX's time per update grows 3.8x there.
    Row("2000 row updates in a loop, (h, 1024)", "update", [256, 1024, 4096], row_updates,
        lambda h: 2000.0, bound=4.0, number=2),
    Row("sort f32", "element", [1 << 10, 1 << 14, 1 << 18, 1 << 20], sort, float,
        bound=3.0, number=3),
    Row("argsort f32", "element", [1 << 10, 1 << 14, 1 << 18, 1 << 20], argsort, float,
        bound=3.0, number=3),
    Row("heat-3d (npbench), 20 steps", "cell-step", [20, 40, 80], heat3d,
        lambda n: 19.0 * 2 * (n - 2) ** 3, bound=2.0, number=3),
    # From 4 MiB (in the L3 cache) to 64 MiB (in DRAM), memory-bound rows slow per element.
    Row("sum f32 to one element", "element", [1 << 20, 1 << 22, 1 << 24], total, float,
        bound=2.5),
    Row("layernorm (rows, 1024) f32", "element", [1024, 4096, 16384], layernorm,
        lambda r: r * 1024.0, bound=2.5),
    # Compute-bound: per multiply-add no dearer at 2000^2 than at 250^2 (where the packs are
    # a larger share).
    Row("matmul+relu n x n f32", "Mflop", [250, 500, 1000, 2000], matmul_relu,
        lambda n: 2.0 * n ** 3 / 1e6, number=3),
    # Compile time per op (the first call, nothing cached) must not grow with the program.
    Row("unrolled sin steps, first call", "op", [50, 100, 200, 400, 800], unrolled,
        lambda n: 3.0 * n, bound=1.3, cold=True),
    Row("unrolled sin steps that differ, first call", "op", [50, 100, 200, 400, 800],
        unrolled_different, lambda n: 3.0 * n, bound=1.3, cold=True),
]


def first_call(row: Row, size: int) -> dict[str, float]:
    """Seconds of a fresh function's first call, Ember (its persistent cache off) and JAX."""
    times = {}
    before = ember.config.read("ember_compilation_cache_dir")
    ember.config.update("ember_compilation_cache_dir", "off")
    try:
        fn, host = row.make(enp, size)
        start = time.perf_counter()
        ember.block_until_ready(ember.jit(fn)(*host))
        times["ember"] = time.perf_counter() - start
    finally:
        ember.config.update("ember_compilation_cache_dir", before)
    if jax is not None:
        fn, host = row.make(jnp, size)
        start = time.perf_counter()
        _ready(jax.jit(fn)(*host))
        times["jax"] = time.perf_counter() - start
    return times


def run_row(row: Row, quick: bool) -> Iterator[tuple[int, float, float | None]]:
    """(size, Ember's seconds per unit, JAX's) for each size."""
    for size in row.sizes:
        if row.cold:
            t = first_call(row, size)
            yield size, t["ember"] / row.work(size), (t["jax"] / row.work(size)
                                                      if "jax" in t else None)
            continue
        fn, host = row.make(enp, size)
        ember_fn, ember_args = ember.jit(fn), [ember.device_put(h) for h in host]
        fns = {"ember": lambda f=ember_fn, a=ember_args: ember.block_until_ready(f(*a))}
        if jax is not None:
            jax_fn, _ = row.make(jnp, size)
            jf, jax_args = jax.jit(jax_fn), [jax.device_put(h) for h in host]
            fns["jax"] = lambda f=jf, a=jax_args: _ready(f(*a))
        t = median(measure(fns, row.number, 2 if quick else 5))
        work = row.work(size)
        yield size, t["ember"] / work, (t["jax"] / work if "jax" in t else None)


def _ready(out):
    return jax.block_until_ready(out)


def _fmt(seconds: float) -> str:
    if seconds < 1e-6:
        return f"{seconds * 1e9:.2f} ns"
    return f"{seconds * 1e6:.2f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--only", default="", help="rows whose name contains this")
    parser.add_argument("--png", default=None,
                        help="where to draw the chart (default: scaling.png beside this file, "
                             "when every row runs)")
    args = parser.parse_args()
    print("| row | size | Ember per unit | JAX per unit | Ember/JAX |")
    print("|---|---|---|---|---|")
    results, broken = {}, []
    for row in ROWS:
        if args.only not in row.name:
            continue
        points = list(run_row(row, args.quick))
        results[row.name] = (row, points)
        for size, ours, theirs in points:
            ratio = f"{ours / theirs:.2f}" if theirs else "n/a"
            print(f"| {row.name} | {size} | {_fmt(ours)}/{row.unit} | "
                  f"{_fmt(theirs) + '/' + row.unit if theirs else 'n/a'} | {ratio} |",
                  flush=True)
        growth = points[-1][1] / points[0][1]
        verdict = "ok" if growth <= row.bound else "BROKEN"
        if verdict != "ok":
            broken.append(row.name)
        print(f"| {row.name} | growth {points[0][0]} -> {points[-1][0]} | {growth:.2f}x "
              f"per unit (bound {row.bound}) | {verdict} | |", flush=True)
    png = args.png or (None if args.only else str(Path(__file__).with_name("scaling.png")))
    if png:
        _chart(results, png)
    if broken:
        print(f"\ncosts growing faster than the work: {', '.join(broken)}")
        return 1
    return 0


def _chart(results: dict, path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no chart; pip install matplotlib)")
        return
    cols = 3
    rows = math.ceil(len(results) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, (name, (row, points)) in zip(axes.flat, results.items(), strict=False):
        sizes = [p[0] for p in points]
        ax.loglog(sizes, [p[1] * 1e6 for p in points], "o-", label="Ember")
        if all(p[2] for p in points):
            ax.loglog(sizes, [p[2] * 1e6 for p in points], "s--", label="JAX")
        ax.set_xticks(sizes, [str(n) for n in sizes], fontsize=8)
        ax.tick_params(axis="x", which="minor", bottom=False, labelbottom=False)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("size")
        ax.set_ylabel(f"us per {row.unit}")
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(results):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"\nchart: {path}")


if __name__ == "__main__":
    sys.exit(main())
