"""`ember.scipy.linalg`: the parts of `jax.scipy.linalg` that Ember has."""

from __future__ import annotations

from typing import Any

from ember import numpy as enp
from ember.numpy import linalg as _linalg
from ember.numpy.linalg import det, inv, solve, solve_triangular

from ._structured import (
    block_diag,
    circulant,
    companion,
    dft,
    fiedler,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)

__all__ = ["block_diag", "cholesky", "circulant", "companion", "det", "dft", "fiedler",
           "hadamard", "hankel", "helmert", "hilbert", "inv", "invpascal", "leslie", "pascal",
           "solve", "solve_triangular", "toeplitz"]


def cholesky(a: Any, lower: bool = False) -> Any:
    """The Cholesky factor, upper by default (as SciPy and JAX's scipy.linalg)."""
    factor = _linalg.cholesky(a)
    return factor if lower else enp.swapaxes(factor, -1, -2)
