"""Polynomials (coefficients highest power first, as NumPy's poly* functions), window
functions and geometric sequences."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import creation as _cr, shapes as _sh, ufuncs as _uf
from ._base import _promoted, asarray


def _coefficients(name: str, p: Any, rank: int | None = 1) -> Any:
    """p as an array of coefficients along its first axis (of `rank` dims, when given)."""
    p = asarray(p)
    if p.ndim < 1 or (rank is not None and p.ndim != rank):
        raise ValueError(f"{name} requires a {rank or 'non-scalar'}-D array of coefficients, "
                         f"got shape {p.shape}")
    return p


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """p[0] x^(n-1) + ... + p[n-1] by Horner's rule (`unroll` changes nothing here: the
    loop is unrolled in the trace)."""
    p = _coefficients("polyval", p, None)
    p, x = (asarray(v) for v in _promoted_pair(p, x))
    out = _cr.zeros_like(x)
    for k in range(p.shape[0]):
        out = out * x + p[k]
    return out


def _promoted_pair(p: Any, x: Any) -> tuple[Any, Any]:
    dtype = np.result_type(asarray(p).dtype, asarray(x).dtype)
    return asarray(p).astype(dtype), asarray(x).astype(dtype)


def _padded(a: Any, n: int) -> Any:
    """Zeros before a's first axis up to length n (the highest powers come first)."""
    if a.shape[0] >= n:
        return a
    return _sh.concatenate([_cr.zeros((n - a.shape[0], *a.shape[1:]), a.dtype), a])


def polyadd(a1: Any, a2: Any) -> Any:
    a1, a2 = _coefficients("polyadd", a1, None), _coefficients("polyadd", a2, None)
    n = max(a1.shape[0], a2.shape[0])
    a1, a2 = _promoted(_padded(a1, n), _padded(a2, n))
    return a1 + a2


def polysub(a1: Any, a2: Any) -> Any:
    a1, a2 = _coefficients("polysub", a1, None), _coefficients("polysub", a2, None)
    n = max(a1.shape[0], a2.shape[0])
    a1, a2 = _promoted(_padded(a1, n), _padded(a2, n))
    return a1 - a2


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product's coefficients: the full convolution of the two."""
    from .contractions import convolve

    a1, a2 = _coefficients("polymul", a1), _coefficients("polymul", a2)
    if trim_leading_zeros:
        a1, a2 = (_trimmed(a) for a in (a1, a2))
    return convolve(a1, a2)


def _trimmed(a: Any) -> Any:
    host = np.asarray(a)  # needs the values: not under jit, as in JAX
    nonzero = np.flatnonzero(host)
    return a[nonzero[0]:] if nonzero.size else a[-1:]


def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative's coefficients."""
    p = _coefficients("polyder", p)
    if m < 0:
        raise ValueError(f"polyder requires an order m >= 0, got {m}")
    for _ in range(m):
        n = p.shape[0]
        if n <= 1:
            return _cr.zeros((0,), p.dtype) if n == 0 else p[:0]
        p = p[:-1] * _cr.arange(n - 1, 0, -1).astype(p.dtype)
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative's coefficients, the integration constants `k` (a scalar or m
    of them, the first integration's first; 0 by default)."""
    p = asarray(_coefficients("polyint", p))
    if m < 0:
        raise ValueError(f"polyint requires an order m >= 0, got {m}")
    if p.dtype.kind not in "fc":
        p = p.astype(np.float32)
    constants = _cr.zeros((m,), p.dtype) if k is None else _sh.broadcast_to(
        asarray(k).astype(p.dtype), (m,))
    for j in range(m):
        n = p.shape[0]
        p = _sh.concatenate([p / _cr.arange(n, 0, -1).astype(p.dtype), constants[j:j + 1]])
    return p


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Columns x^(N-1), ..., x, 1 (or the other way, `increasing`)."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError(f"vander requires a 1-D x, got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    powers = _cr.arange(n) if increasing else _cr.arange(n - 1, -1, -1)
    return _uf.power(_sh.expand_dims(x, 1), _sh.expand_dims(powers.astype(x.dtype), 0))


# ----------------------------------------------------------------------------- windows


def _window(M: int, values) -> Any:
    M = int(M)
    if M < 1:
        return asarray(np.zeros((0,), np.float32))
    if M == 1:
        return asarray(np.ones((1,), np.float32))
    n = np.arange(M, dtype=np.float64)
    return asarray(values(n, M).astype(np.float32))


def hamming(M: int) -> Any:
    return _window(M, lambda n, M: 0.54 - 0.46 * np.cos(2 * np.pi * n / (M - 1)))


def hanning(M: int) -> Any:
    return _window(M, lambda n, M: 0.5 - 0.5 * np.cos(2 * np.pi * n / (M - 1)))


def blackman(M: int) -> Any:
    return _window(M, lambda n, M: 0.42 - 0.5 * np.cos(2 * np.pi * n / (M - 1))
                   + 0.08 * np.cos(4 * np.pi * n / (M - 1)))


def bartlett(M: int) -> Any:
    return _window(M, lambda n, M: 1 - np.abs(2 * n / (M - 1) - 1))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """`num` numbers from start to stop, evenly spaced on a log scale (negative ends keep
    their sign; the ends are exact)."""
    start, stop = (asarray(v) for v in _promoted(start, stop, to_float=True))
    sign = _uf.sign(start)
    log_start, log_stop = _uf.log10(start * sign), _uf.log10(stop * sign)
    out = sign * _uf.power(10.0, _sh.linspace(log_start, log_stop, num, endpoint=endpoint))
    if num > 0:
        out = out.at[0].set(start)
        if endpoint and num > 1:
            out = out.at[-1].set(stop)
    if axis:
        out = _sh.moveaxis(out, 0, axis)
    return out if dtype is None else out.astype(dtype)


__all__ = ["bartlett", "blackman", "geomspace", "hamming", "hanning", "polyadd", "polyder",
           "polyint", "polymul", "polysub", "polyval", "vander"]
