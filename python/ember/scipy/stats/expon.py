"""The exponential distribution: `jax.scipy.stats.expon` (0 density below loc)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp

from ._common import floats, standardized


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = standardized(x, loc, scale)
    return enp.where(z < 0, -np.inf, -z - enp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = standardized(x, loc, scale)
    return enp.where(z < 0, 0.0, -enp.expm1(-z))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = standardized(x, loc, scale)
    return enp.where(z < 0, -np.inf, enp.log(-enp.expm1(-z)))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = standardized(x, loc, scale)
    return enp.where(z < 0, 1.0, enp.exp(-z))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = standardized(x, loc, scale)
    return enp.where(z < 0, 0.0, -z)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = floats(q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    return enp.where(inside, -enp.log1p(-q) * scale + loc, np.nan)
