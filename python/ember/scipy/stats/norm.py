"""The normal distribution: `jax.scipy.stats.norm`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp
from ember.scipy import special

from ._common import floats, standardized


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = standardized(x, loc, scale)
    return -0.5 * z * z - enp.log(scale) - 0.5 * np.log(2 * np.pi)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return special.ndtr(standardized(x, loc, scale)[0])


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return special.log_ndtr(standardized(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return special.ndtr(-standardized(x, loc, scale)[0])


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return special.log_ndtr(-standardized(x, loc, scale)[0])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = floats(q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = floats(q, loc, scale)
    return -special.ndtri(q) * scale + loc
