"""`ember.scipy.linalg`: the parts of `jax.scipy.linalg` that Ember has."""

from __future__ import annotations

from typing import Any

from ember import numpy as enp
from ember.numpy import linalg as _linalg
from ember.numpy.linalg import det, inv, solve, solve_triangular

__all__ = ["cholesky", "det", "inv", "solve", "solve_triangular"]


def cholesky(a: Any, lower: bool = False) -> Any:
    """The Cholesky factor, upper by default (as SciPy and JAX's scipy.linalg)."""
    factor = _linalg.cholesky(a)
    return factor if lower else enp.swapaxes(factor, -1, -2)
