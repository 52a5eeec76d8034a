"""The Pareto distribution of shape b: `jax.scipy.stats.pareto` (0 density below loc +
scale)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp

from ._common import floats


def _z(x: Any, b: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any]:
    x, b, loc, scale = floats(x, b, loc, scale)
    return (x - loc) / scale, b, scale


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, b, scale = _z(x, b, loc, scale)
    inside = enp.log(b) - enp.log(scale) - (b + 1.0) * enp.log(enp.maximum(z, 1.0))
    return enp.where(z < 1, -np.inf, inside)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, b, loc, scale))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, b, _ = _z(x, b, loc, scale)
    return enp.where(z < 1, 0.0, -b * enp.log(enp.maximum(z, 1.0)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logsf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return -enp.expm1(logsf(x, b, loc, scale))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.log(cdf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, b, loc, scale = floats(q, b, loc, scale)
    inside = (q >= 0) & (q <= 1)
    return enp.where(inside, scale * enp.exp(-enp.log1p(-q) / b) + loc, np.nan)
