"""The logistic distribution: `jax.scipy.stats.logistic`."""

from __future__ import annotations

from typing import Any

from ember import nn, numpy as enp
from ember.scipy import special

from ._common import floats, standardized


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = standardized(x, loc, scale)
    z = enp.abs(z)  # the density is even: -inf at both ends, never inf - inf
    return -z - 2.0 * nn.softplus(-z) - enp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return special.expit(standardized(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return special.expit(-standardized(x, loc, scale)[0])


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = floats(x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = floats(x, loc, scale)
    return -special.logit(x) * scale + loc
