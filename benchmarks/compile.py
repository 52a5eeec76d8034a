"""Compile-time benchmarks: cold compile, warm start from the persistent cache, and the cost
of a cache hit as the number of cached signatures grows. Run: `make bench`."""

from __future__ import annotations

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


def main() -> None:
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
    main()
