"""lax's special functions: log-gamma and digamma, composed of elementwise ops (so they fuse
with what reads them, and their derivatives come from the composition)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp
from ember.numpy._base import _promoted

# Lanczos' approximation, g = 7 and 9 terms (Numerical Recipes' and Godfrey's coefficients):
# Gamma(z + 1) = sqrt(2 pi) t^(z + 1/2) e^-t A(z), t = z + g + 1/2, for z + 1 >= 1/2.
_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _float(x: Any) -> Any:
    return _promoted(x, to_float=True)[0]


def _sin_pi(x: Any) -> Any:
    """|sin(pi x)|, computed from x's distance to the nearest integer (exact for any x)."""
    return enp.abs(enp.sin(np.pi * (x - enp.round(x))))


def _lgamma_right(x: Any) -> Any:
    """log Gamma(x) for x >= 1/2 (Lanczos)."""
    z = x - 1.0
    series = _LANCZOS[0] + sum(c / (z + k) for k, c in enumerate(_LANCZOS[1:], 1))
    t = z + (_G + 0.5)
    return 0.5 * np.log(2 * np.pi) + (z + 0.5) * enp.log(t) - t + enp.log(series)


def lgamma(x: Any) -> Any:
    """log |Gamma(x)|: Lanczos from 1/2 up, the reflection log(pi / |sin(pi x)|) -
    lgamma(1 - x) below; inf at 0 and the negative integers (and at +-inf)."""
    x = _float(x)
    left = x < 0.5
    right = _lgamma_right(enp.where(left, 1.0 - x, x))
    # the reflection of 1/2 where it is not taken: no log(0) whose gradient would be nan
    reflected = np.log(np.pi) - enp.log(_sin_pi(enp.where(left, x, 0.5))) - right
    out = enp.where(left, reflected, right)
    pole = (x <= 0) & (x == enp.floor(x))
    return enp.where(pole | enp.isinf(x), np.inf, out)


# digamma(w) for w >= 6.5: log w - 1/(2w) - sum B_2k / (2k w^2k), to k = 6.
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma: from 1/2 up, six steps of psi(y) = psi(y + 1) -
    1/y and the asymptotic series; below, the reflection psi(1 - x) - pi / tan(pi x); nan at
    0 and the negative integers."""
    x = _float(x)
    left = x < 0.5
    y = enp.where(left, 1.0 - x, x)
    shift = sum(1.0 / (y + k) for k in range(6))
    w = y + 6.0
    inv2 = 1.0 / (w * w)
    tail, power = 0.0, inv2
    for c in _DIGAMMA_SERIES:
        tail = tail + c * power
        power = power * inv2
    right = enp.log(w) - 0.5 / w - tail - shift
    r = enp.where(left, x, 0.25)  # not at an integer where the reflection is not taken
    r = r - enp.round(r)
    reflected = right - np.pi / enp.tan(np.pi * r)
    out = enp.where(left, reflected, right)
    return enp.where((x <= 0) & (x == enp.floor(x)), np.nan, out)


__all__ = ["digamma", "lgamma"]
