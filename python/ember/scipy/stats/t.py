"""Student's t distribution with df degrees of freedom: `jax.scipy.stats.t`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax, numpy as enp

from ._common import floats


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = floats(x, df, loc, scale)
    z = (x - loc) / scale
    half = 0.5 * (df + 1.0)
    return (lax.lgamma(half) - lax.lgamma(0.5 * df) - 0.5 * enp.log(df * np.pi)
            - enp.log(scale) - half * enp.log1p(z * z / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return enp.exp(logpdf(x, df, loc, scale))
