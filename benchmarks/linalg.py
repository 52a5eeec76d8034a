"""ember.numpy.linalg against JAX (LAPACK) and NumPy in one process: solve with one
right-hand side, inv, slogdet, cholesky, a lower triangular solve (SciPy's for NumPy's
column), qr, eigh and svd of well-conditioned float32
matrices at several sizes, best of 5 after a warm-up, with time per n^3 so that the scaling
shows. Run: `make bench`.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
import scipy.linalg

import ember
import ember.numpy as enp
import ember.scipy.linalg

SIZES = (64, 256, 512)


def best(f, *args, reps: int = 5) -> float:
    f(*args)  # warm-up: compiles
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        out = f(*args)
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    print("| op | n | Ember ms | JAX ms | NumPy ms | Ember/JAX | Ember ns / n^3 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in SIZES:
        rng = np.random.default_rng(0)
        a = (rng.standard_normal((n, n)) + np.sqrt(n) * np.eye(n)).astype(np.float32)
        spd = (a @ a.T / n + np.eye(n)).astype(np.float32)
        b = rng.standard_normal((n, 1)).astype(np.float32)
        lower = np.linalg.cholesky(spd)
        rows = {
            "solve": (enp.linalg.solve, jnp.linalg.solve, np.linalg.solve, (a, b)),
            "inv": (enp.linalg.inv, jnp.linalg.inv, np.linalg.inv, (a,)),
            "slogdet": (lambda x: enp.linalg.slogdet(x)[1], lambda x: jnp.linalg.slogdet(x)[1],
                        lambda x: np.linalg.slogdet(x)[1], (a,)),
            "cholesky": (enp.linalg.cholesky, jnp.linalg.cholesky, np.linalg.cholesky, (spd,)),
            "solve_triangular": (
                lambda x, y: ember.scipy.linalg.solve_triangular(x, y, lower=True),
                lambda x, y: jax.scipy.linalg.solve_triangular(x, y, lower=True),
                lambda x, y: scipy.linalg.solve_triangular(x, y, lower=True), (lower, b)),
            # one result of each (the last computed): best() waits for one array
            "qr": (lambda x: enp.linalg.qr(x)[1], lambda x: jnp.linalg.qr(x)[1],
                   lambda x: np.linalg.qr(x)[1], (a,)),
            "eigh": (lambda x: enp.linalg.eigh(x)[1], lambda x: jnp.linalg.eigh(x)[1],
                     lambda x: np.linalg.eigh(x)[1], (spd,)),
            "svd": (lambda x: enp.linalg.svd(x)[0], lambda x: jnp.linalg.svd(x)[0],
                    lambda x: np.linalg.svd(x)[0], (a,)),
        }
        for name, (ours, theirs, numpy_f, args) in rows.items():
            ours_args = [ember.device_put(x) for x in args]
            te = best(ember.jit(ours), *ours_args)
            tj = best(jax.jit(theirs), *[jax.device_put(x) for x in args])
            tn = best(numpy_f, *args)
            print(f"| {name} | {n} | {te * 1e3:.2f} | {tj * 1e3:.2f} | {tn * 1e3:.2f} | "
                  f"{te / tj:.1f} | {te / n ** 3 * 1e9:.2f} |", flush=True)


if __name__ == "__main__":
    main()
