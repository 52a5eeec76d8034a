"""`ember.scipy.special`: erf and friends, as `jax.scipy.special` has them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax, numpy as enp
from ember.dialect import ops
from ember.numpy import _base


def erf(x: Any) -> Any:
    return _base._unary_float(ops.ERF)(x)


def erfinv(x: Any) -> Any:
    return lax.erf_inv(x)


def erfc(x: Any) -> Any:
    return lax.erfc(x)


def expit(x: Any) -> Any:
    # 1 / (1 + exp(-x)) overflows harmlessly to 0 for very negative x (exp -> inf).
    return 1 / (1 + enp.exp(-enp.asarray(x)))


def logit(x: Any) -> Any:
    x = enp.asarray(x)
    return enp.log(x / (1 - x))


def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = enp.asarray(a)
    peak = enp.max(x, axis=axis, keepdims=True)
    peak = enp.where((peak > -np.inf) & (peak < np.inf), peak, 0)  # all -inf: no nan
    out = enp.log(enp.sum(enp.exp(x - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else enp.reshape(out, _reduced_shape(x.shape, axis))


def _reduced_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    if axis is None:
        return ()
    axes = {a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# ------------------------------------------------------------------ gamma, beta and relatives


def _floats(*xs: Any) -> list[Any]:
    return _base._promoted(*xs, to_float=True)


def gammaln(x: Any) -> Any:
    """log |Gamma(x)| (lax.lgamma)."""
    return lax.lgamma(x)


def gammasgn(x: Any) -> Any:
    """The sign of Gamma(x): 1 above 0 (and at +0), -1 at -0 and where floor(x) is odd below
    0, nan at the negative integers and -inf."""
    (x,) = _floats(x)
    odd = enp.fmod(enp.floor(x), 2.0) != 0
    negative = enp.where(x == 0, enp.signbit(x), (x < 0) & odd)
    sign = enp.where(negative, -1.0, 1.0).astype(x.dtype)
    bad = ((x < 0) & (x == enp.floor(x))) | (x == -np.inf) | enp.isnan(x)
    return enp.where(bad, np.nan, sign)


def gamma(x: Any) -> Any:
    """Gamma(x) as its sign times e^lgamma(x)."""
    return gammasgn(x) * enp.exp(lax.lgamma(x))


def loggamma(x: Any) -> Any:
    """The principal log of Gamma for real x: lgamma above 0, nan elsewhere (where Gamma
    may be negative)."""
    (x,) = _floats(x)
    return enp.where(x > 0, lax.lgamma(x), np.nan)


def digamma(x: Any) -> Any:
    return lax.digamma(x)


def betaln(a: Any, b: Any) -> Any:
    """log |B(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    a, b = _floats(a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a: Any, b: Any) -> Any:
    """B(a, b), its sign from the three Gammas'."""
    a, b = _floats(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * enp.exp(betaln(a, b))


def factorial(n: Any, exact: bool = False) -> Any:
    """Gamma(n + 1), 0 below 0."""
    if exact:
        raise NotImplementedError("factorial(exact=True) has no array version: pass "
                                  "exact=False (as JAX requires)")
    (n,) = _floats(n)
    return enp.where(n < 0, 0.0, enp.exp(lax.lgamma(n + 1.0)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """N choose k as Gamma functions (0 where k < 0 or k > N); with repetition, N + k - 1
    choose k."""
    N, k = _floats(N, k)
    if repetition:
        N = N + k - 1.0
    value = enp.exp(lax.lgamma(N + 1.0) - lax.lgamma(k + 1.0) - lax.lgamma(N - k + 1.0))
    return enp.where((k >= 0) & (k <= N), value, 0.0)


def poch(z: Any, m: Any) -> Any:
    """The rising factorial Gamma(z + m) / Gamma(z) (1 where m is 0)."""
    z, m = _floats(z, m)
    ratio = gammasgn(z + m) * gammasgn(z) * enp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    return enp.where(m == 0, 1.0, ratio)


def multigammaln(a: Any, d: int) -> Any:
    """The multivariate log-gamma of dimension d: sum of lgamma(a - j/2), j < d, plus
    d (d - 1) / 4 log pi."""
    d = int(d)
    (a,) = _floats(a)
    return sum(lax.lgamma(a - j / 2.0) for j in range(d)) + d * (d - 1) / 4.0 * np.log(np.pi)


# ---------------------------------------------------------- information and transformations


def xlogy(x: Any, y: Any) -> Any:
    """x log y, 0 where x is 0 (whatever y)."""
    x, y = _floats(x, y)
    zero = x == 0
    return enp.where(zero, 0.0, x * enp.log(enp.where(zero, 1.0, y)))


def xlog1py(x: Any, y: Any) -> Any:
    """x log(1 + y), 0 where x is 0 (whatever y)."""
    x, y = _floats(x, y)
    zero = x == 0
    return enp.where(zero, 0.0, x * enp.log1p(enp.where(zero, 0.0, y)))


def entr(x: Any) -> Any:
    """-x log x above 0, 0 at 0, -inf below 0."""
    (x,) = _floats(x)
    inside = enp.where(x > 0, -xlogy(x, x), enp.where(x == 0, 0.0, -np.inf))
    return enp.where(enp.isnan(x), np.nan, inside)


def rel_entr(p: Any, q: Any) -> Any:
    """p log(p / q) where both are positive, 0 where p is 0 and q >= 0, inf elsewhere."""
    p, q = _floats(p, q)
    both = (p > 0) & (q > 0)
    value = xlogy(p, p) - xlogy(p, enp.where(both, q, 1.0))
    out = enp.where(both, value, enp.where((p == 0) & (q >= 0), 0.0, np.inf))
    return enp.where(enp.isnan(p) | enp.isnan(q), np.nan, out)


def kl_div(p: Any, q: Any) -> Any:
    """p log(p / q) - p + q where both are positive, q where p is 0 and q >= 0, inf
    elsewhere."""
    p, q = _floats(p, q)
    both = (p > 0) & (q > 0)
    value = rel_entr(p, q) - p + q
    out = enp.where(both, value, enp.where((p == 0) & (q >= 0), q, np.inf))
    return enp.where(enp.isnan(p) | enp.isnan(q), np.nan, out)


def boxcox(x: Any, lmbda: Any) -> Any:
    """(x^lmbda - 1) / lmbda, log x where lmbda is 0."""
    x, lmbda = _floats(x, lmbda)
    return enp.where(lmbda == 0, enp.log(x), enp.expm1(lmbda * enp.log(x)) / lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """((1 + x)^lmbda - 1) / lmbda, log1p(x) where lmbda is 0."""
    x, lmbda = _floats(x, lmbda)
    return enp.where(lmbda == 0, enp.log1p(x), enp.expm1(lmbda * enp.log1p(x)) / lmbda)


def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as SciPy's)."""
    (x,) = _floats(x)
    e = enp.exp(x - enp.max(x, axis=axis, keepdims=True))
    return e / enp.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """x - logsumexp(x) over `axis` (all axes by default, as SciPy's)."""
    (x,) = _floats(x)
    shifted = x - enp.max(x, axis=axis, keepdims=True)
    return shifted - enp.log(enp.sum(enp.exp(shifted), axis=axis, keepdims=True))


# ------------------------------------------------------------------------- the normal law


def ndtr(x: Any) -> Any:
    """The standard normal CDF, erfc(-x / sqrt 2) / 2."""
    (x,) = _floats(x)
    return 0.5 * erfc(-x * float(1 / np.sqrt(2)))


def ndtri(p: Any) -> Any:
    """The standard normal quantile, sqrt 2 erfinv(2p - 1): nan outside [0, 1]."""
    (p,) = _floats(p)
    return float(np.sqrt(2)) * erfinv(2.0 * p - 1.0)


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """log ndtr(x): log1p(-ndtr(-x)) above 0 (log of a number near 1 keeps no digits), log
    ndtr(x) down to a lower bound, and below it (where ndtr underflows) the asymptotic series
    -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum_n (-1)^n (2n - 1)!! / x^2n),
    `series_order` terms."""
    if not 0 <= int(series_order) <= 30:
        raise ValueError(f"log_ndtr requires series_order in [0, 30], got {series_order}")
    (x,) = _floats(x)
    lower = -20.0 if x.dtype == np.float64 else -10.0
    middle = enp.log(ndtr(enp.clip(x, lower, 0.0)))
    high = enp.log1p(-ndtr(-enp.maximum(x, 0.0)))
    low_x = enp.minimum(x, lower)
    x2 = low_x * low_x
    term, total, double_factorial = 1.0, 1.0, 1.0
    for n in range(1, int(series_order) + 1):
        double_factorial *= 2 * n - 1
        term = term / x2
        total = total + (-1) ** n * double_factorial * term
    low = -0.5 * x2 - enp.log(-low_x) - 0.5 * np.log(2 * np.pi) + enp.log(total)
    return enp.where(x > 0, high, enp.where(x < lower, low, middle))


__all__ = ["beta", "betaln", "boxcox", "boxcox1p", "comb", "digamma", "entr", "erf", "erfc",
           "erfinv", "expit", "factorial", "gamma", "gammaln", "gammasgn", "kl_div",
           "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln",
           "ndtr", "ndtri", "poch", "rel_entr", "softmax", "xlog1py", "xlogy"]
