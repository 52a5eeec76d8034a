"""The uniform distribution on [loc, loc + scale]: `jax.scipy.stats.uniform`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp

from ._common import floats


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = floats(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return enp.where(enp.isnan(x), np.nan, enp.where(inside, -enp.log(scale), -np.inf))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = floats(x, loc, scale)
    z = (x - loc) / scale
    return enp.where(enp.isnan(z), np.nan, enp.clip(z, 0.0, 1.0))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = floats(q, loc, scale)
    return enp.where((q >= 0) & (q <= 1), q * scale + loc, np.nan)
