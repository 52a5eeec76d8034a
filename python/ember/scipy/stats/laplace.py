"""The Laplace distribution: `jax.scipy.stats.laplace`."""

from __future__ import annotations

from typing import Any

from ember import numpy as enp

from ._common import standardized


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = standardized(x, loc, scale)
    return -enp.abs(z) - enp.log(2.0 * scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = standardized(x, loc, scale)
    below = 0.5 * enp.exp(enp.minimum(z, 0.0))
    return enp.where(z <= 0, below, 1.0 - 0.5 * enp.exp(-enp.maximum(z, 0.0)))
