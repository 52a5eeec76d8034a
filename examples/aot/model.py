"""A small model compiled ahead of time by examples/aot/CMakeLists.txt (and the tests)."""

import ember.numpy as enp
from ember import lax


def selu(x, alpha=1.67, scale=1.05):
    return scale * enp.where(x > 0, x, alpha * enp.exp(x) - alpha)


def power_sum(x, k, n):
    """sum(x) ** k, looped n times (n is static: a compile-time constant)."""
    return lax.fori_loop(0, n, lambda i, acc: acc + enp.sum(x) ** k, enp.zeros((), x.dtype))
