"""The Cauchy distribution: `jax.scipy.stats.cauchy`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp

from ._common import floats, standardized


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = standardized(x, loc, scale)
    return -np.log(np.pi) - enp.log(scale) - enp.log1p(z * z)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return 0.5 + enp.arctan(standardized(x, loc, scale)[0]) / np.pi


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return 0.5 - enp.arctan(standardized(x, loc, scale)[0]) / np.pi


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.log(sf(x, loc, scale))


def _quantile(p: Any, loc: Any, scale: Any) -> Any:
    """The quantile of probability p: -inf at 0, inf at 1, nan outside [0, 1] (SciPy's;
    tan(pi (p - 1/2)) at the ends is a large finite number)."""
    inside = loc + scale * enp.tan(np.pi * (p - 0.5))
    ends = enp.where(p == 0, -np.inf, np.inf)
    return enp.where((p < 0) | (p > 1), np.nan, enp.where((p == 0) | (p == 1), ends, inside))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = floats(q, loc, scale)
    return _quantile(q, loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = floats(q, loc, scale)
    return _quantile(1.0 - q, loc, scale)
