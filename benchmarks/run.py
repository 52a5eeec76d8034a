"""Ember against JAX and NumPy, same machine, same process, as ratios (Ember / JAX).

Each case is timed in interleaved rounds (Ember and JAX in turn, then NumPy's), so noise from a
shared machine hits all of them alike; a time is the median round's, and the table also gives
the ratio of the best rounds. A row whose cost is its memory traffic or
its arithmetic also says how close Ember comes to this machine's limit: the bytes it must
move (or the FLOPs it must do) over its time, against NumPy's copy bandwidth and matmul rate
measured in the same run. Writes benchmarks/ratios.png. Run: `make bench`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import ember
import ember.numpy as enp

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # JAX is the optional peer
    jax = jnp = None


def _mean_call(fn: Callable[[], object], number: int) -> float:
    """Mean of `number` calls, each waited for, as the seed times them:
    `%timeit f(x).block_until_ready()`."""
    start = time.perf_counter()
    for _ in range(number):
        out = fn()
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
    return (time.perf_counter() - start) / number


# NumPy's BLAS threads (OpenBLAS) spin for ~0.1 s after each call, taking a core from whatever
# runs next on this 2-core machine: after a NumPy matmul, Ember's MLP forward took 2.0 ms
# against 0.88 alone, and JAX's 1.4 against 1.0. So NumPy's rounds run after the others', and
# the next row waits for its threads to go idle.
_BLAS_SPIN_S = 0.3


def measure(fns: dict[str, Callable[[], object]], number: int,
            rounds: int) -> dict[str, list[float]]:
    """Per function, the time of each of `rounds` rounds (a mean of `number` calls): Ember and
    JAX in turn, then NumPy's rounds."""
    for fn in fns.values():  # warm up: compile and fill caches
        fn()
    time.sleep(_BLAS_SPIN_S)
    times: dict[str, list[float]] = {name: [] for name in fns}
    peers = [name for name in fns if name != "numpy"]
    for _ in range(rounds):
        for name in peers:
            times[name].append(_mean_call(fns[name], number))
    for _ in range(rounds if "numpy" in fns else 0):
        times["numpy"].append(_mean_call(fns["numpy"], number))
    time.sleep(_BLAS_SPIN_S)
    return times


def median(times: dict[str, list[float]]) -> dict[str, float]:
    """The median round's time per function: what a call typically costs on a shared machine
    (the best round flatters whichever peer has the lower noise floor)."""
    return {name: statistics.median(t) for name, t in times.items()}


def selu(np_, x, alpha=1.67, lambda_=1.05):
    return lambda_ * np_.where(x > 0, x, alpha * np_.exp(x) - alpha)


def softmax(np_, x):
    e = np_.exp(x - np_.max(x, axis=-1, keepdims=True))
    return e / np_.sum(e, axis=-1, keepdims=True)


def layernorm(np_, x):
    mean = np_.mean(x, axis=-1, keepdims=True)
    var = np_.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / np_.sqrt(var + 1e-5)


def attention_scores(np_, q, k):
    return np_.einsum("bqd,bkd->bqk", q, k)


def total(np_, x):
    return np_.sum(x)


def matmul_relu(np_, a, b):
    return np_.maximum(a @ b, 0.0)


def mlp(np_, x, w1, b1, w2, b2, w3, b3):
    """MNIST-sized MLP forward (784-512-512-10), ReLU between layers."""
    h = np_.maximum(x @ w1 + b1, 0.0)
    h = np_.maximum(h @ w2 + b2, 0.0)
    return h @ w3 + b3


def fori_update(np_, x):
    if np_ is np:
        for _ in range(1000):
            x = x * 0.99 + 0.01
        return x
    lax = ember.lax if np_ is enp else jax.lax
    return lax.fori_loop(0, 1000, lambda i, v: v * 0.99 + 0.01, x)


def rnn_scan(np_, h0, xs, w, u):
    """A tanh RNN cell over 100 steps (batch 64, hidden 256)."""
    def cell(h, x):
        h = np_.tanh(h @ w + x @ u)
        return h, h

    if np_ is np:
        hs = []
        h = h0
        for x in xs:
            h, _ = cell(h, x)
            hs.append(h)
        return h
    lax = ember.lax if np_ is enp else jax.lax
    return lax.scan(cell, h0, xs)[0]


def sort_1m(np_, x):
    return np_.sort(x)


def argsort_1m(np_, x):
    return np_.argsort(x)


def top_k(np_, x):
    if np_ is np:
        return np.sort(np.partition(x, -10)[-10:])[::-1]
    return (ember.lax if np_ is enp else jax.lax).top_k(x, 10)[0]


def interior_set(np_, a):
    if np_ is np:
        a = a.copy()
        a[1:-1, 1:-1, 1:-1] = a[1:-1, 1:-1, 1:-1] * 2.0
        return a
    return a.at[1:-1, 1:-1, 1:-1].set(a[1:-1, 1:-1, 1:-1] * 2.0)


def heat3d(np_, a, b):
    """npbench's heat_3d (20 steps), written with .at[].set and fori_loop."""
    def sweep(a, b):
        inner = a[1:-1, 1:-1, 1:-1]
        new = (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * inner + a[:-2, 1:-1, 1:-1])
               + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * inner + a[1:-1, :-2, 1:-1])
               + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * inner + a[1:-1, 1:-1, :-2]) + inner)
        if np_ is np:
            b = b.copy()
            b[1:-1, 1:-1, 1:-1] = new
            return b
        return b.at[1:-1, 1:-1, 1:-1].set(new)

    def step(t, ab):
        a, b = ab
        b = sweep(a, b)
        return sweep(b, a), b

    if np_ is np:
        ab = (a, b)
        for t in range(1, 20):
            ab = step(t, ab)
        return ab[0]
    return (ember.lax if np_ is enp else jax.lax).fori_loop(1, 20, step, (a, b))[0]


def scatter_loop(np_, x, idx, v):
    """100 scatter-adds of 1K updates into a 1M carry (time / 100: one scatter's cost)."""
    if np_ is np:
        x = x.copy()
        for _ in range(100):
            np.add.at(x, idx, v)
        return x
    lax = ember.lax if np_ is enp else jax.lax
    return lax.fori_loop(0, 100, lambda i, c: c.at[idx].add(v), x)


def dense_pass(np_, x):
    return x * 2.0


def row_gather(np_, x, idx):
    return x[idx]


def flip_rows(np_, x):
    return np_.flip(x, 0) + 1.0


def cases(quick: bool):
    rng = np.random.default_rng(0)
    x1m = rng.standard_normal(1_000_000).astype(np.float32)
    tiny = np.ones(4, np.float32)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    s = rng.standard_normal((4096, 1024)).astype(np.float32)

    def ember_and_jax(name, fn, *host, eager=False, number=20, work=None):
        """A row; `work` is ("B", bytes moved) or ("FLOP", operations), for the roofline."""
        ember_args = [ember.device_put(h) for h in host]
        ember_fn = (lambda *xs: fn(enp, *xs)) if eager else ember.jit(lambda *xs: fn(enp, *xs))
        row = {"ember": lambda: ember_fn(*ember_args), "numpy": lambda: fn(np, *host)}
        if jax is not None:
            jax_args = [jax.device_put(h) for h in host]
            jax_fn = (lambda *xs: fn(jnp, *xs)) if eager else jax.jit(lambda *xs: fn(jnp, *xs))
            row["jax"] = lambda: jax_fn(*jax_args)
        return name, row, number, work

    yield ember_and_jax("dispatch x+1 (f32[4])", lambda np_, x: x + 1, tiny, number=2000)
    yield chained(tiny)
    yield newton_grad_made_each_step()
    yield ember_and_jax("SELU 1M f32, jit", selu, x1m, number=20, work=("B", 2 * x1m.nbytes))
    yield ember_and_jax("SELU 1M f32, eager", selu, x1m, eager=True, number=5,
                        work=("B", 2 * x1m.nbytes))
    yield ember_and_jax("softmax 4096x1024, jit", softmax, s, number=5 if quick else 10,
                        work=("B", 2 * s.nbytes))
    yield ember_and_jax("layernorm 4096x1024, jit", layernorm, s, number=5 if quick else 10,
                        work=("B", 2 * s.nbytes))
    q, k = (rng.standard_normal((8, 512, 64)).astype(np.float32) for _ in range(2))
    yield ember_and_jax("einsum attention scores 8x512x64, jit", attention_scores, q, k,
                        number=5 if quick else 10, work=("FLOP", 2 * 8 * 512 * 512 * 64))
    yield ember_and_jax("sum over 16M f32, jit", total,
                        rng.standard_normal(16 * 2**20).astype(np.float32), number=5,
                        work=("B", 64 * 2**20))
    yield ember_and_jax("matmul+relu 1024^2, jit", matmul_relu, a, a, number=3 if quick else 5,
                        work=("FLOP", 2 * 1024**3))
    shapes = [(784, 512), (512, 512), (512, 10)]
    layers = [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
               rng.standard_normal(n).astype(np.float32) * 0.1) for m, n in shapes]
    yield ember_and_jax("MLP forward 784-512-512-10, batch 256, jit", mlp,
                        rng.standard_normal((256, 784)).astype(np.float32),
                        *[t for layer in layers for t in layer], number=10 if quick else 20,
                        work=("FLOP", 2 * 256 * sum(m * n for m, n in shapes)))
    yield ember_and_jax("fori_loop 1000 steps on f32[256], jit", fori_update,
                        rng.standard_normal(256).astype(np.float32), number=20)
    yield ember_and_jax("scan RNN cell, 100 steps, batch 64, hidden 256, jit", rnn_scan,
                        np.zeros((64, 256), np.float32),
                        rng.standard_normal((100, 64, 256)).astype(np.float32) * 0.1,
                        rng.standard_normal((256, 256)).astype(np.float32) * 0.05,
                        rng.standard_normal((256, 256)).astype(np.float32) * 0.05, number=3)
    m = rng.standard_normal(1 << 20).astype(np.float32)
    yield ember_and_jax("sort 1M f32, jit", sort_1m, m, number=2)
    yield ember_and_jax("argsort 1M f32, jit", argsort_1m, m, number=2)
    yield ember_and_jax("top_k (k=10) of 1M f32, jit", top_k, m, number=2)
    yield ember_and_jax(".at[1:-1,1:-1,1:-1].set on 25^3, jit", interior_set,
                        rng.random((25, 25, 25), dtype=np.float32), number=50)
    yield ember_and_jax("heat-3d (npbench) 50^3, 20 steps, jit", heat3d,
                        rng.random((50, 50, 50), dtype=np.float32),
                        rng.random((50, 50, 50), dtype=np.float32), number=3)
    yield ember_and_jax("dense pass x*2 over 1M f32, jit", dense_pass, m, number=50,
                        work=("B", 2 * m.nbytes))
    rows = rng.standard_normal((1000, 1000)).astype(np.float32)
    yield ember_and_jax("x[idx]: 500 of 1000 rows of f32[1000,1000], jit", row_gather, rows,
                        rng.integers(0, 1000, 500).astype(np.int32), number=20,
                        work=("B", 2 * rows.nbytes // 2))
    yield ember_and_jax("flip(x, 0) + 1 on f32[1000,1000], jit", flip_rows, rows, number=20,
                        work=("B", 2 * rows.nbytes))
    yield ember_and_jax("100 scatter-adds of 1K into 1M f32 (loop), jit", scatter_loop, m,
                        rng.integers(0, 1 << 20, 1024).astype(np.int32),
                        rng.random(1024, dtype=np.float32), number=3)


def chained(tiny: np.ndarray):
    """100 dependent tiny calls, then one sync: dispatch-bound, chained on fences."""
    def chain(f, x):
        def run():
            y = x
            for _ in range(100):
                y = f(y)
            return y
        return run

    row = {"ember": chain(ember.jit(lambda v: v + 1), ember.device_put(tiny)),
           "numpy": chain(lambda v: v + 1, tiny)}
    if jax is not None:
        row["jax"] = chain(jax.jit(lambda v: v + 1), jax.device_put(tiny))
    return "100 chained x+1, one sync", row, 20, None


def newton_grad_made_each_step():
    """10 gradient steps of one f, eagerly, each making grad(f) again as a Python loop is
    written (NumPy: the derivative by hand): the transformation's code must be reused, not
    traced and compiled every step."""
    x0 = np.linspace(0, 1, 64, dtype=np.float32)

    def steps(grad, x):
        def run():
            y = x
            for _ in range(10):
                y = y - 0.1 * grad()(y)
            return y
        return run

    def f(np_):
        return lambda v: np_.sum(np_.sin(v) * v + v * v * 0.5)

    ember_f = f(enp)
    row = {"ember": steps(lambda: ember.grad(ember_f), ember.device_put(x0)),
           "numpy": steps(lambda: lambda v: np.cos(v) * v + np.sin(v) + v, x0)}
    if jax is not None:
        jax_f = f(jnp)
        row["jax"] = steps(lambda: jax.grad(jax_f), jax.device_put(x0))
    return "10 eager steps of grad(f) made each step, f32[64]", row, 5, None


def dispatch_fraction() -> str:
    """The seed's async example: how much of a 1000x1000 matmul's time the call itself takes."""
    x = np.random.default_rng(1).standard_normal((1000, 1000)).astype(np.float32)
    rows = [("Ember", ember.jit(lambda a: enp.dot(a, a) + 3.0), ember.device_put(x))]
    if jax is not None:
        rows.append(("JAX", jax.jit(lambda a: jnp.dot(a, a) + 3.0), jax.device_put(x)))
    parts = []
    for name, f, arg in rows:
        f(arg).block_until_ready()
        best = float("inf")
        for _ in range(10):
            start = time.perf_counter()
            out = f(arg)
            called = time.perf_counter()
            out.block_until_ready()
            best = min(best, (called - start) / (time.perf_counter() - start))
        parts.append(f"{name} {best * 100:.1f}%")
    return "dispatch of a 1000x1000 matmul, share of its run time: " + ", ".join(parts)


def peaks() -> dict[str, float]:
    """This machine's limits as NumPy reaches them: copy bandwidth over 64 MiB (twice the
    last-level cache here) in bytes/s, and a 2048^2 f32 matmul's FLOP/s."""
    x = np.ones(16 * 2**20, np.float32)
    y = np.empty_like(x)
    a = np.ones((2048, 2048), np.float32)
    t = {name: min(times) for name, times in
         measure({"copy": lambda: np.copyto(y, x), "matmul": lambda: a @ a}, 3, 5).items()}
    return {"B": 2 * x.nbytes / t["copy"], "FLOP": 2 * 2048**3 / t["matmul"]}


def roofline(work: tuple[str, int] | None, seconds: float, peak: dict[str, float]) -> str:
    if work is None:
        return "-"
    unit, amount = work
    rate = amount / seconds
    scaled = f"{rate / 1e9:.1f} GB/s" if unit == "B" else f"{rate / 1e9:.0f} GFLOP/s"
    return f"{scaled} ({rate / peak[unit]:.0%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--png", default=None,
                        help="where to draw the chart (default: ratios.png beside this file, "
                             "when every case runs)")
    args = parser.parse_args()
    rounds = 3 if args.quick else 21
    peak = peaks()
    print(f"Machine limits (NumPy, this run): copy {peak['B'] / 1e9:.1f} GB/s, "
          f"f32 matmul {peak['FLOP'] / 1e9:.0f} GFLOP/s.\n")
    print("| case | Ember | JAX | NumPy | Ember/JAX | best rounds' Ember/JAX | Ember/NumPy "
          "| Ember rate (of limit) |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = {}
    for name, fns, number, work in cases(args.quick):
        if args.only not in name:
            continue
        times = measure(fns, number, rounds)
        t = median(times)
        jax_t = t.get("jax")
        vs_jax = best_vs_jax = "n/a"
        if jax_t:
            ratios[name] = t["ember"] / jax_t
            vs_jax = f"{ratios[name]:.2f}"
            best_vs_jax = f"{min(times['ember']) / min(times['jax']):.2f}"
        print(f"| {name} | {_fmt(t['ember'])} | {_fmt(jax_t) if jax_t else 'n/a'} | "
              f"{_fmt(t['numpy'])} | {vs_jax} | {best_vs_jax} | {t['ember'] / t['numpy']:.2f} | "
              f"{roofline(work, t['ember'], peak)} |", flush=True)
    print("\n" + dispatch_fraction())
    png = args.png or (None if args.only else str(Path(__file__).with_name("ratios.png")))
    if png and ratios:
        chart(ratios, png)


def chart(ratios: dict[str, float], path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("(matplotlib missing: no chart; pip install matplotlib)")
        return
    names = list(ratios)[::-1]
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(names) + 1))
    values = [ratios[n] for n in names]
    bars = ax.barh(names, values, color=["tab:green" if v <= 1 else "tab:red" for v in values])
    ax.bar_label(bars, [f"{v:.2f}" for v in values], fontsize=7, padding=2)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.set_xlabel("Ember / JAX, median rounds (log scale; left of 1 is faster than JAX)")
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"\nchart: {path}")


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
