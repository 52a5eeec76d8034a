"""A training step, Ember against JAX in one process: an MLP 784-512-512-10, softmax
cross-entropy, SGD, the parameters donated (updated in place), at several batch sizes, time
per step and per example, best of interleaved rounds; then per-example gradients of a
linear model (vmap of grad). Run: `make bench`.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

import ember
import ember.numpy as enp

SIZES = (784, 512, 512, 10)
BATCHES = (32, 128, 512)


def loss(np_, params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np_.maximum(h, 0.0)
    shifted = h - np_.max(h, axis=1, keepdims=True)
    logp = shifted - np_.log(np_.sum(np_.exp(shifted), axis=1, keepdims=True))
    return -np_.mean(np_.sum(logp * y, axis=1))


def make_step(lib, np_):
    def step(params, x, y):
        grads = lib.grad(lambda p: loss(np_, p, x, y))(params)
        return [(w - 0.01 * gw, b - 0.01 * gb)
                for (w, b), (gw, gb) in zip(params, grads, strict=True)]

    return lib.jit(step, donate_argnums=0)


def init(rng):
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:], strict=True)]


def time_steps(lib, step, params, x, y, steps: int) -> tuple[float, object]:
    start = time.perf_counter()
    for _ in range(steps):
        params = step(params, x, y)
    lib.block_until_ready(params)
    return (time.perf_counter() - start) / steps, params


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"MLP {'-'.join(map(str, SIZES))} training step (SGD, params donated)")
    print(f"{'batch':>6} {'ember ms':>10} {'jax ms':>9} {'ratio':>6} {'ember us/example':>17}")
    for batch in BATCHES:
        x = rng.normal(size=(batch, SIZES[0])).astype(np.float32)
        y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], batch)]
        best = {}
        states = {"ember": ember.device_put(init(rng)), "jax": jax.device_put(init(rng))}
        libs = {"ember": ember, "jax": jax}
        steps = {"ember": make_step(ember, enp), "jax": make_step(jax, jnp)}
        inputs = {"ember": (ember.device_put(x), ember.device_put(y)),
                  "jax": (jax.device_put(x), jax.device_put(y))}
        for name in steps:  # compile and warm up
            _, states[name] = time_steps(libs[name], steps[name], states[name],
                                         *inputs[name], 2)
        for _ in range(5):
            for name in steps:
                t, states[name] = time_steps(libs[name], steps[name], states[name],
                                             *inputs[name], 10)
                best[name] = min(best.get(name, float("inf")), t)
        e, j = best["ember"], best["jax"]
        print(f"{batch:>6} {e * 1e3:>10.2f} {j * 1e3:>9.2f} {e / j:>6.2f} "
              f"{e / batch * 1e6:>17.2f}")
        check = [np.asarray(a) for pair in states["ember"] for a in pair]
        assert all(np.all(np.isfinite(c)) for c in check)


def per_example() -> None:
    """vmap(grad) of a linear least-squares loss, d = 256, at several batch sizes."""
    rng = np.random.default_rng(1)
    d = 256
    print(f"\nper-example gradients, linear model d={d} (vmap of grad)")
    print(f"{'batch':>6} {'ember us':>10} {'jax us':>9} {'ratio':>6} {'ember us/example':>17}")

    def make(lib, np_):
        def loss(w, x, y):
            return (np_.dot(x, w) - y) ** 2
        return lib.jit(lib.vmap(lib.grad(loss), in_axes=(None, 0, 0)))

    for batch in (64, 256, 1024):
        w = rng.normal(size=d).astype(np.float32)
        x = rng.normal(size=(batch, d)).astype(np.float32)
        y = rng.normal(size=batch).astype(np.float32)
        fns = {"ember": make(ember, enp), "jax": make(jax, jnp)}
        args = {"ember": [ember.device_put(a) for a in (w, x, y)],
                "jax": [jax.device_put(a) for a in (w, x, y)]}
        best = {}
        for name, f in fns.items():
            f(*args[name]).block_until_ready()
        for _ in range(5):
            for name, f in fns.items():
                start = time.perf_counter()
                for _ in range(20):
                    out = f(*args[name])
                out.block_until_ready()
                best[name] = min(best.get(name, float("inf")),
                                 (time.perf_counter() - start) / 20)
        assert np.allclose(np.asarray(fns["ember"](*args["ember"])),
                           np.asarray(fns["jax"](*args["jax"])), rtol=1e-4, atol=1e-4)
        e, j = best["ember"], best["jax"]
        print(f"{batch:>6} {e * 1e6:>10.1f} {j * 1e6:>9.1f} {e / j:>6.2f} "
              f"{e / batch * 1e6:>17.3f}")


def rnn_through_scan() -> None:
    """The gradient of an RNN's loss through lax.scan (the parameters and the sequence), at
    several lengths: the time per step must stay flat (a loop that copied its carries or
    its cotangents every step would grow with the length)."""
    rng = np.random.default_rng(2)
    batch, d, h = 32, 64, 128
    print(f"\nRNN gradient through scan, batch {batch}, input {d}, hidden {h}")
    print(f"{'steps':>6} {'ember ms':>10} {'jax ms':>9} {'ratio':>6} {'ember us/step':>14}")

    def make(lib, np_, lax_):
        def loss(w, u, xs):
            def step(s, x):
                s = np_.tanh(s @ w + x @ u)
                return s, np_.sum(s)
            s, ys = lax_.scan(step, np_.zeros((batch, h)), xs)
            return np_.sum(s ** 2) + np_.sum(ys)
        return lib.jit(lib.grad(loss, argnums=(0, 1, 2)))

    fns = {"ember": make(ember, enp, ember.lax), "jax": make(jax, jnp, jax.lax)}
    for steps in (64, 256, 1024):
        w = (rng.normal(size=(h, h)) / np.sqrt(h)).astype(np.float32)
        u = (rng.normal(size=(d, h)) / np.sqrt(d)).astype(np.float32)
        xs = rng.normal(size=(steps, batch, d)).astype(np.float32)
        args = {"ember": [ember.device_put(a) for a in (w, u, xs)],
                "jax": [jax.device_put(a) for a in (w, u, xs)]}
        best = {}
        for name, f in fns.items():
            jax.block_until_ready(f(*args[name])) if name == "jax" else \
                ember.block_until_ready(f(*args[name]))
        for _ in range(3):
            for name, f in fns.items():
                start = time.perf_counter()
                for _ in range(3):
                    out = f(*args[name])
                (jax if name == "jax" else ember).block_until_ready(out)
                best[name] = min(best.get(name, float("inf")),
                                 (time.perf_counter() - start) / 3)
        for a, b in zip(fns["ember"](*args["ember"]), fns["jax"](*args["jax"]), strict=True):
            assert np.allclose(np.asarray(a), np.asarray(b), rtol=1e-3, atol=1e-3)
        e, j = best["ember"], best["jax"]
        print(f"{steps:>6} {e * 1e3:>10.2f} {j * 1e3:>9.2f} {e / j:>6.2f} "
              f"{e / steps * 1e6:>14.1f}")


if __name__ == "__main__":
    main()
    per_example()
    rnn_through_scan()
