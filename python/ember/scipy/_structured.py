"""SciPy's structured matrices (`jax.scipy.linalg`'s block_diag, circulant, toeplitz, ...):
those of given entries gathered from them (so they trace), those of a size alone built on
the host (exact integers for Pascal's)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import numpy as enp
from ember._src import dtypes as _dt


def _vector(name: str, v: Any) -> Any:
    """v as vectors along its last axis (a batch of them where it has more; a scalar is a
    vector of one)."""
    return enp.atleast_1d(v)


def _floats(host: np.ndarray) -> Any:
    return enp.asarray(host.astype(_dt.default_float()))


def block_diag(*arrs: Any) -> Any:
    """The arrays (each made 2-D) along the diagonal of a matrix of zeros."""
    if not arrs:
        return enp.zeros((1, 0), _dt.default_float())
    blocks = enp.atleast_2d(*arrs)
    blocks = [blocks] if len(arrs) == 1 else blocks
    dtype = enp.result_type(*blocks)
    cols = sum(b.shape[1] for b in blocks)
    rows, at = [], 0
    for b in blocks:
        row = [enp.zeros((b.shape[0], at), dtype), b.astype(dtype),
               enp.zeros((b.shape[0], cols - at - b.shape[1]), dtype)]
        rows.append(enp.concatenate(row, axis=1))
        at += b.shape[1]
    return enp.concatenate(rows, axis=0)


def circulant(c: Any) -> Any:
    """C[i, j] = c[(i - j) mod n]: c is the first column."""
    c = _vector("circulant", c)
    n = c.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return enp.take(c, enp.asarray(index.astype(np.int32)), axis=-1)


def _paired(c: Any, r: Any) -> tuple[Any, Any, Any]:
    """c and r with their batch dims broadcast alike, and the dtype they combine to."""
    dtype = enp.result_type(c, r)
    r, c = enp.broadcast_arrays(r[..., None, :], c[..., :, None])
    return c[..., 0], r[..., 0, :], dtype


def toeplitz(c: Any, r: Any = None) -> Any:
    """T[i, j] = c[i - j] on and below the diagonal, r[j - i] above it (r defaults to c's
    conjugate; r[0] is ignored)."""
    c = _vector("toeplitz", c)
    r = enp.conj(c) if r is None else _vector("toeplitz", r)
    c, r, dtype = _paired(c, r)
    values = enp.concatenate([enp.flip(r[..., 1:], -1), c], axis=-1).astype(dtype)
    n, m = c.shape[-1], r.shape[-1]
    index = m - 1 + np.arange(n)[:, None] - np.arange(m)[None, :]
    return enp.take(values, enp.asarray(index.astype(np.int32)), axis=-1)


def hankel(c: Any, r: Any = None) -> Any:
    """H[i, j] = c[i + j], continued by r[i + j - len(c) + 1] (r defaults to zeros; r[0] is
    ignored)."""
    c = _vector("hankel", c)
    r = enp.zeros_like(c) if r is None else _vector("hankel", r)
    c, r, dtype = _paired(c, r)
    values = enp.concatenate([c, r[..., 1:]], axis=-1).astype(dtype)
    index = np.arange(c.shape[-1])[:, None] + np.arange(r.shape[-1])[None, :]
    return enp.take(values, enp.asarray(index.astype(np.int32)), axis=-1)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial a (highest power first): -a[1:] / a[0] in its
    first row, ones below the diagonal."""
    a = _vector("companion", a)
    if a.shape[-1] < 2:
        raise ValueError(f"companion requires at least two coefficients, got {a.shape[-1]}")
    n = a.shape[-1] - 1
    a = a.astype(_dt.default_float()) if a.dtype.kind not in "fc" else a
    first = -a[..., 1:] / a[..., :1]
    below = enp.broadcast_to(enp.eye(n - 1, n, dtype=a.dtype), (*a.shape[:-1], n - 1, n))
    return enp.concatenate([first[..., None, :], below], axis=-2)


def leslie(f: Any, s: Any) -> Any:
    """f (fecundities) as the first row, s (survival) on the subdiagonal."""
    f, s = _vector("leslie", f), _vector("leslie", s)
    if s.shape[0] != f.shape[0] - 1:
        raise ValueError(f"leslie requires len(s) == len(f) - 1, got {s.shape[0]} and "
                         f"{f.shape[0]}")
    dtype = enp.result_type(f, s, 1.0)
    below = enp.concatenate([enp.diag(s.astype(dtype)),
                             enp.zeros((s.shape[0], 1), dtype)], axis=1)
    return enp.concatenate([f.astype(dtype)[None, :], below], axis=0)


def fiedler(a: Any) -> Any:
    """F[i, j] = |a[i] - a[j]|."""
    a = _vector("fiedler", a)
    return enp.abs(a[..., :, None] - a[..., None, :])


def hilbert(n: int) -> Any:
    """H[i, j] = 1 / (i + j + 1)."""
    i = np.arange(n)
    return _floats(1.0 / (i[:, None] + i[None, :] + 1))


def _lower_pascal(n: int) -> np.ndarray:
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=np.float64)


def pascal(n: int, kind: str | None = None) -> Any:
    """Pascal's matrix: binomial coefficients, symmetric (C(i + j, i)), lower (C(i, j)) or
    upper."""
    kind = kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal requires kind 'symmetric', 'lower' or 'upper', got {kind!r}")
    lower = _lower_pascal(n)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower @ lower.T}[kind]
    return _floats(out)


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of pascal(n, kind): exact integers, (-1)^(i + j) C(i, j) for the lower
    one."""
    kind = kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"invpascal requires kind 'symmetric', 'lower' or 'upper', got "
                         f"{kind!r}")
    i = np.arange(n)
    lower = _lower_pascal(n) * (-1.0) ** (i[:, None] + i[None, :])
    out = {"lower": lower, "upper": lower.T, "symmetric": lower.T @ lower}[kind]
    return _floats(out)


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix: orthonormal rows, the first constant (left out unless `full`)."""
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    out = h / np.sqrt(d)[:, None]
    return _floats(out if full else out[1:])


def hadamard(n: int, dtype: Any = int) -> Any:
    """Sylvester's Hadamard matrix of order n, a power of 2."""
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard requires n a positive power of 2, got {n}")
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return enp.asarray(h.astype(_dt.canonicalize(dtype)))


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n-point DFT matrix, e^(-2 pi i j k / n), scaled by 1/n ('n') or 1/sqrt(n)
    ('sqrtn')."""
    if scale not in (None, "n", "sqrtn"):
        raise ValueError(f"dft requires scale None, 'n' or 'sqrtn', got {scale!r}")
    k = np.arange(n)
    m = np.exp(-2j * np.pi * np.outer(k, k) / n)
    m = m / {None: 1.0, "n": n, "sqrtn": np.sqrt(n)}[scale]
    return enp.asarray(m.astype(_dt.canonicalize(dtype or _dt.default_complex())))


__all__ = ["block_diag", "circulant", "companion", "dft", "fiedler", "hadamard", "hankel",
           "helmert", "hilbert", "invpascal", "leslie", "pascal", "toeplitz"]
