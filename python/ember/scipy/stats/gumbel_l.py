"""The left-skewed Gumbel distribution (of minima): `jax.scipy.stats.gumbel_l`."""

from __future__ import annotations

from typing import Any

from ember import numpy as enp

from ._common import floats, standardized


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = standardized(x, loc, scale)
    return z - enp.exp(z) - enp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return -enp.exp(standardized(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logsf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return -enp.expm1(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.log(cdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    p, loc, scale = floats(p, loc, scale)
    return loc + scale * enp.log(-enp.log1p(-p))
