"""ember.numpy.fft against JAX (ducc on the CPU) and NumPy (pocketfft) in one process:
complex64 transforms of batch 64 rows at several lengths (one matrix product at 64, four-step
splits at 1024 and 4096, Bluestein's chirp at the prime 1021), best of 5 after a warm-up,
with time per n log2 n of a row so that the scaling shows. Run: `make bench`.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from linalg import best  # benchmarks/ is the script's directory: its first sys.path entry

import ember
import ember.numpy as enp

LENGTHS = (64, 1021, 1024, 4096)
ROWS = 64


def main() -> None:
    print("| fft | n | Ember ms | JAX ms | NumPy ms | Ember/JAX | Ember ns / (n log2 n) a row |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        x = (rng.normal(size=(ROWS, n)) + 1j * rng.normal(size=(ROWS, n))).astype(np.complex64)
        te = best(ember.jit(enp.fft.fft), ember.device_put(x))
        tj = best(jax.jit(jnp.fft.fft), jax.device_put(x))
        tn = best(np.fft.fft, x)
        unit = ROWS * n * math.log2(n)
        print(f"| c64 {ROWS} rows | {n} | {te * 1e3:.2f} | {tj * 1e3:.2f} | {tn * 1e3:.2f} | "
              f"{te / tj:.1f} | {te / unit * 1e9:.2f} |", flush=True)


if __name__ == "__main__":
    main()
