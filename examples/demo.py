"""Ember in one minute: trace, inspect every stage, and watch jit beat eager on SELU."""

import time

import numpy as np

import ember
import ember.numpy as jnp


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def best_ms(fn, repeat=20):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn().block_until_ready()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    small = jnp.arange(4.0)
    lowered = ember.jit(selu).lower(small)
    print("== ember dialect (after ember-canonicalize) ==")
    print(lowered.as_text("ember"))
    print("== linalg (what IREE receives) ==")
    print(lowered.as_text("linalg"))

    x = jnp.arange(1_000_000)
    selu_jit = ember.jit(selu)
    start = time.perf_counter()
    selu_jit(x).block_until_ready()
    print(f"first jit call (trace + compile): {(time.perf_counter() - start) * 1e3:.0f} ms")
    selu(x).block_until_ready()  # compile each eager op once

    eager, jitted = best_ms(lambda: selu(x), 5), best_ms(lambda: selu_jit(x))
    print(f"SELU on 1M float32: eager {eager:.2f} ms, jit {jitted:.2f} ms "
          f"({eager / jitted:.1f}x faster)")
    host = np.arange(1_000_000, dtype=np.float32)
    with np.errstate(over="ignore"):
        expected = 1.05 * np.where(host > 0, host, 1.67 * np.exp(host) - 1.67)
    np.testing.assert_allclose(np.asarray(selu_jit(x)), expected, rtol=1e-6)
    print("jit result matches NumPy")


if __name__ == "__main__":
    main()
