"""Compile-time benchmarks: a new user's first eager calls, cold compile, warm start from
the persistent cache, and the cost of a cache hit as the number of cached signatures grows.
Run: `make bench`."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np

import ember
import ember.numpy as enp
from ember._src.signature import CacheKey
from ember.dialect.types import ShapedArray

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None


def selu(np_, x):
    return 1.05 * np_.where(x > 0, x, 1.67 * np_.exp(x) - 1.67)


def mlp(np_, x, w1, w2, w3):
    h = np_.maximum(x @ w1, 0.0)
    h = np_.maximum(h @ w2, 0.0)
    logits = h @ w3
    e = np_.exp(logits - np_.max(logits, axis=-1, keepdims=True))
    return e / np_.sum(e, axis=-1, keepdims=True)


def _first_call(fn, args) -> float:
    start = time.perf_counter()
    out = fn(*args)
    out.block_until_ready()
    return time.perf_counter() - start


def compile_times(name, fn, args, rounds: int = 3):
    """Best of `rounds` cold compiles (fresh function, empty disk cache) and warm starts
    (in-memory caches dropped, disk cache kept), with JAX's cold compile beside them."""
    cold = warm = jax_cold = float("inf")
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as root:
            ember.config.update("ember_compilation_cache_dir", root)
            jitted = ember.jit(lambda *xs: fn(enp, *xs))
            cold = min(cold, _first_call(jitted, args))
            ember.clear_caches()
            warm = min(warm, _first_call(jitted, args))
        ember.config.update("ember_compilation_cache_dir", "off")
        if jax is not None:
            jax.clear_caches()
            jax_cold = min(jax_cold, _first_call(jax.jit(lambda *xs: fn(jnp, *xs)), args))
    return name, cold, warm, jax_cold


def dispatch_vs_cache_size() -> tuple[float, float]:
    """Cache-hit cost with 1 entry, then with 1,000 (999 synthetic keys of other shapes
    added to the same function's cache: the lookup is what grows, if anything)."""
    f = ember.jit(lambda x: x + 1)
    x = ember.device_put(np.ones(4, np.float32))
    f(x)
    one = min(timeit.repeat(lambda: f(x), number=3000, repeat=7)) / 3000
    compiled = next(iter(f._cache.values()))
    key = next(k for k in f._cache if isinstance(k, CacheKey))
    for n in range(1, 1000):
        aval = ShapedArray((n + 4,), np.dtype(np.float32))
        f._cache[key._replace(in_avals=(aval,))] = compiled
        f._cache[(aval,)] = compiled
    many = min(timeit.repeat(lambda: f(x), number=3000, repeat=7)) / 3000
    return one, many


def _eager_calls(np_, n: int) -> None:
    """Issue #14's first minute: 14 eager calls on small arrays."""
    a = np_.asarray(np.linspace(-1, 1, n * 8, dtype=np.float32).reshape(n, 8))
    b = np_.asarray(np.linspace(0, 2, 8 * 4, dtype=np.float32).reshape(8, 4))
    for out in (np_.exp(a), a + a, a * 2.0, np_.sum(a, axis=0), np_.mean(a), a @ b, a.T,
                a.reshape(-1), np_.maximum(a, 0.0), np_.where(a > 0, a, 0.0), np_.sqrt(b),
                np_.concatenate([a, a]), a[1:3], np_.argmax(a, axis=1)):
        out.block_until_ready()


def _eager_child(lib: str) -> None:
    """In a fresh process (empty caches): the 14 calls, the same on new shapes, x[i] for 20
    values of i. Prints `case seconds compiles` lines."""
    if lib == "ember":
        np_ = enp
        ember.config.update("ember_compilation_cache_dir", tempfile.mkdtemp())
        from ember._src import events
        count = lambda: events._counts["eager_compile"]  # noqa: E731
    else:
        np_ = jnp
        count = lambda: 0  # noqa: E731
    for case, run in (("first use", lambda: _eager_calls(np_, 16)),
                      ("same calls, new shapes", lambda: _eager_calls(np_, 24)),
                      ("x[i] for 20 i", lambda: [x[i].block_until_ready()
                                                 for x in [np_.arange(50)]
                                                 for i in range(1, 21)])):
        c0, start = count(), time.perf_counter()
        run()
        print(f"{case}\t{time.perf_counter() - start}\t{count() - c0}", flush=True)


def eager_first_use() -> None:
    rows = {}
    for lib in ("ember", "jax") if jax is not None else ("ember",):
        out = subprocess.run([sys.executable, __file__, "--eager-child", lib], check=True,
                             capture_output=True, text=True, env={**os.environ}).stdout
        for line in out.strip().splitlines():
            case, seconds, compiles = line.split("\t")
            rows.setdefault(case, {})[lib] = (float(seconds), int(compiles))
    print("| eager, fresh process, empty cache | Ember | compiles | JAX | Ember/JAX |")
    print("|---|---|---|---|---|")
    for case, by in rows.items():
        (t, n), jt = by["ember"], by.get("jax", (float("nan"), 0))[0]
        print(f"| {case} | {t:.2f} s | {n} | {jt:.2f} s | {t / jt:.1f} |")
    print()


def dynamic_batch() -> None:
    """The MLP jitted with dynamic_dims over batch sizes 1..64 against the static-shape jit:
    compiles, and the steady-state time at batch 64."""
    rng = np.random.default_rng(0)
    ws = [enp.asarray(rng.standard_normal(s).astype(np.float32) * 0.05)
          for s in ((784, 512), (512, 256), (256, 10))]
    def model(x, w1, w2, w3):
        return mlp(enp, x, w1, w2, w3)

    fns = {"dynamic_dims": ember.jit(model, dynamic_dims={"x": {0: "batch"}}),
           "static": ember.jit(model)}
    with tempfile.TemporaryDirectory() as root:
        ember.config.update("ember_compilation_cache_dir", root)
        print("| MLP 784-512-256-10, batch 1..64 | compiles | batch 64, per call |")
        print("|---|---|---|")
        times = {}
        for name, f in fns.items():
            with ember.count_events("compile") as n:
                start = time.perf_counter()
                for batch in range(1, 65):
                    f(rng.standard_normal((batch, 784)).astype(np.float32), *ws)
                total = time.perf_counter() - start
            x = enp.asarray(rng.standard_normal((64, 784)).astype(np.float32))
            f(x, *ws).block_until_ready()
            times[name] = min(timeit.repeat(lambda f=f, x=x: f(x, *ws).block_until_ready(),
                                            number=50, repeat=7)) / 50
            print(f"| {name} | {n()} ({total:.1f} s for the 64 calls) | "
                  f"{times[name] * 1e6:.0f} us |", flush=True)
        ember.config.update("ember_compilation_cache_dir", "off")
    print(f"\ndynamic_dims / static at batch 64: {times['dynamic_dims'] / times['static']:.2f}\n")


IREE_PHASES = ("input", "abi", "preprocessing", "global-optimization", "dispatch-creation",
               "flow", "stream", "executable-sources", "executable-targets")


def _breakdown_round(i: int) -> dict[str, float]:
    from ember.compiler import iree_driver
    from ember.runtime import Executable, get as get_device

    times: dict[str, float] = {}

    def timed(name, fn):
        start = time.perf_counter()
        out = fn()
        times[name] = time.perf_counter() - start
        return out

    x = np.ones(1_000_000, np.float32)
    f = ember.jit(lambda x: selu(enp, x) + i)  # a new constant: no cache serves it
    traced = timed("Ember: trace", lambda: f.trace(x))
    lowered = timed("Ember: passes and lowering to linalg", traced.lower)
    text, tgt = lowered.as_text("linalg"), iree_driver.target(lowered.target)
    for phase in IREE_PHASES:
        timed(f"IREE: up to {phase}", lambda p=phase: iree_driver.compile_to_phase(text, tgt, p))
    vmfb = timed("IREE: the whole compile (vmfb)", lambda: iree_driver.compile_text(text, tgt))
    timed("runtime: load the module", lambda: Executable(
        vmfb, get_device("cpu"), [], [], lowered.placement.parallel))
    return times


def breakdown(rounds: int = 5) -> None:
    """Where one cold compile of SELU goes: Ember's trace and passes, IREE up to each of its
    phases (the differences are each phase's share), the module's load. Best of `rounds`
    after one that warms Python's caches (the process's first trace imports and builds
    what later ones reuse: 0.27 s more)."""
    _breakdown_round(-1)
    runs = [_breakdown_round(i) for i in range(rounds)]
    best = {name: min(r[name] for r in runs) for name in runs[0]}
    print("| one cold compile of SELU (f32[1M]) | time | this step |")
    print("|---|---|---|")
    previous = 0.0
    for name, t in best.items():
        step = t - previous if name.startswith("IREE: up to") else t
        previous = t if name.startswith("IREE: up to") else previous
        print(f"| {name} | {t * 1e3:.0f} ms | {step * 1e3:.0f} ms |")
    print()


def main() -> None:
    breakdown()
    eager_first_use()
    dynamic_batch()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1_000_000).astype(np.float32)
    batch = rng.standard_normal((128, 784)).astype(np.float32)
    ws = [rng.standard_normal(s).astype(np.float32) * 0.05
          for s in ((784, 512), (512, 256), (256, 10))]
    print("| program | Ember cold | Ember warm (disk) | warm/cold | JAX cold | Ember cold/JAX |")
    print("|---|---|---|---|---|---|")
    for name, cold, warm, jax_cold in (compile_times("SELU", selu, [x]),
                                       compile_times("MLP 784-512-256-10", mlp, [batch, *ws])):
        jax_text = f"{jax_cold * 1e3:.0f} ms" if jax else "n/a"
        ratio = f"{cold / jax_cold:.2f}" if jax else "n/a"
        print(f"| {name} | {cold * 1e3:.0f} ms | {warm * 1e3:.0f} ms | {warm / cold:.2f} | "
              f"{jax_text} | {ratio} |", flush=True)
    one, many = dispatch_vs_cache_size()
    print(f"\ncache-hit dispatch: {one * 1e6:.1f} us with 1 signature, {many * 1e6:.1f} us "
          f"with 1,000 ({many / one:.2f}x)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--eager-child"]:
        _eager_child(sys.argv[2])
    else:
        main()
