"""lax.conv_general_dilated against JAX in one process: the conv2d of #16's mark (NHWC,
3x3, 64 -> 64 channels, 56x56, SAME) at batch 1, 4 and 8, best of 5 after a warm-up, with
time per output element so that the scaling shows. Run: `make bench`.
"""

from __future__ import annotations

import time

import jax
import numpy as np

import ember
import ember.lax as lax

DN = ("NHWC", "HWIO", "NHWC")


def best(f, *args) -> float:
    f(*args).block_until_ready()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        f(*args).block_until_ready()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ours = ember.jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                                           dimension_numbers=DN))
    theirs = jax.jit(lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                                               dimension_numbers=DN))
    print("| conv2d 3x3 64->64 56x56 | Ember ms | JAX ms | Ember/JAX | Ember ns / output |")
    print("| --- | --- | --- | --- | --- |")
    for batch in (1, 4, 8):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch, 56, 56, 64)).astype(np.float32)
        w = (rng.standard_normal((3, 3, 64, 64)) / 24).astype(np.float32)
        te = best(ours, ember.device_put(x), ember.device_put(w))
        tj = best(theirs, jax.device_put(x), jax.device_put(w))
        print(f"| batch {batch} | {te * 1e3:.2f} | {tj * 1e3:.2f} | {te / tj:.2f} | "
              f"{te / (batch * 56 * 56 * 64) * 1e9:.2f} |", flush=True)


if __name__ == "__main__":
    main()
