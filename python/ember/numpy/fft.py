"""`ember.numpy.fft`: discrete Fourier transforms as in `jax.numpy.fft`, built on ember ops.

A transform of length n along one axis is a product with the DFT matrix for small n, and
Cooley-Tukey's four-step split n = n1 * n2 otherwise: a DFT of length n1 (a matrix
product), a twiddle product, then a transform of length n2 (recursively), so its work is
O(n (n1 + n2 + ...)) over the factors of n and every step is a contraction or an elementwise
op IREE fuses. A length with a large prime factor uses Bluestein's chirp: a circular
convolution of a power-of-two length, computed with the same transforms. Matrices and
twiddles are constants computed in float64.

Every function is jitted (its sizes and axes static): an eager call is one module, a call
under jit inlines. `import ember` makes it `ember.numpy.fft`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import numpy as enp
from ember._src import dtypes
from ember._src.jit import jit
from ember.dialect.types import complex_dtype

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]

_DIRECT = 64  # lengths up to this are one matrix product
_NORMS = (None, "backward", "ortho", "forward")


def _split(n: int) -> int:
    """The first factor n1 of a four-step split of n: the largest divisor up to _DIRECT
    (0 when n has none, a prime above _DIRECT)."""
    return max((d for d in range(2, min(n - 1, _DIRECT) + 1) if n % d == 0), default=0)


def _roots(shape: tuple[int, ...], exponent: np.ndarray, n: int, sign: int, dtype) -> Any:
    """exp(sign 2 pi i exponent / n) as a complex constant (angles reduced mod n in
    integers first, so large exponents lose nothing)."""
    angle = sign * 2 * np.pi * (np.asarray(exponent, np.int64) % n) / n
    return enp.asarray(np.exp(1j * angle).reshape(shape).astype(dtype))


def _dft_last(x: Any, sign: int) -> Any:
    """The unnormalized transform along the last axis of complex `x` (sign -1: forward)."""
    n = x.shape[-1]
    if n <= 1:
        return x
    if n <= _DIRECT:
        k = np.arange(n)
        return enp.matmul(x, _roots((n, n), np.outer(k, k), n, sign, x.dtype))
    n1 = _split(n)
    if n1 == 0:
        return _bluestein(x, sign)
    n2 = n // n1
    lead = x.shape[:-1]
    a = enp.reshape(x, (*lead, n1, n2))  # a[j1, j2] = x[n2 j1 + j2]
    k = np.arange(n1)
    w1 = _roots((n1, n1), np.outer(k, k), n1, sign, x.dtype)
    b = enp.einsum("...jm,jk->...km", a, w1)  # a DFT of length n1 over j1
    b = b * _roots((n1, n2), np.outer(np.arange(n1), np.arange(n2)), n, sign, x.dtype)
    c = _dft_last(b, sign)  # [k1, k2]: output index k1 + n1 k2
    return enp.reshape(enp.swapaxes(c, -1, -2), (*lead, n))


def _bluestein(x: Any, sign: int) -> Any:
    """A transform of any length n as a convolution with the chirp w_k = e^(sign i pi k^2/n)
    of power-of-two length m >= 2n - 1: X_k = w_k sum_j (x_j w_j) conj(w)_(k-j)."""
    n = x.shape[-1]
    m = 1 << (2 * n - 2).bit_length()
    k = np.arange(n)
    chirp = np.exp(sign * 1j * np.pi * ((k * k) % (2 * n)) / n)
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = np.conj(chirp)
    kernel[m - n + 1:] = np.conj(chirp[1:][::-1])
    kernel_hat = np.fft.fft(kernel)  # a constant: its transform is computed once, here
    pad = [(0, 0)] * (x.ndim - 1) + [(0, m - n)]
    a = enp.pad(x * enp.asarray(chirp.astype(x.dtype)), pad)
    conv = _dft_last(_dft_last(a, -1) * enp.asarray(kernel_hat.astype(x.dtype)), 1)
    return conv[..., :n] * enp.asarray((chirp / m).astype(x.dtype))


def _complex(a: Any) -> Any:
    a = enp.asarray(a)
    if a.dtype.kind == "c":
        return a
    return a.astype(complex_dtype(a.dtype if a.dtype.kind == "f" else dtypes.default_float()))


def _along(a: Any, axis: int, part: slice) -> Any:
    return a[(slice(None),) * axis + (part,)]


def _sized(a: Any, n: int, axis: int) -> Any:
    """`a` cut or zero-padded to length n along `axis`."""
    size = a.shape[axis]
    if n < size:
        return _along(a, axis, slice(0, n))
    if n > size:
        pad = [(0, 0)] * a.ndim
        pad[axis] = (0, n - size)
        return enp.pad(a, pad)
    return a


def _check(name: str, a: Any, n: Any, axis: int, norm: Any) -> int:
    if norm not in _NORMS:
        raise ValueError(f"jnp.fft.{name} requires norm in {_NORMS}, got {norm!r}")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"jnp.fft.{name} requires an axis within the {a.ndim} dims of its "
                         f"argument, got axis={axis}")
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 1):
        raise ValueError(f"jnp.fft.{name} requires a positive length n, got {n!r}")
    return axis % a.ndim


def _scale(x: Any, n: int, norm: Any, inverse: bool) -> Any:
    if norm == "ortho":
        return x * (1 / math.sqrt(n))
    if (norm == "forward") != inverse:
        return x * (1 / n)
    return x


def _transform(a: Any, n: int, axis: int, norm: Any, inverse: bool) -> Any:
    x = enp.moveaxis(_sized(_complex(a), n, axis), axis, -1)
    y = _scale(_dft_last(x, 1 if inverse else -1), n, norm, inverse)
    return enp.moveaxis(y, -1, axis)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _fft(a: Any, n: int, axis: int, norm: Any) -> Any:
    return _transform(a, n, axis, norm, inverse=False)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _ifft(a: Any, n: int, axis: int, norm: Any) -> Any:
    return _transform(a, n, axis, norm, inverse=True)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The discrete Fourier transform along `axis` (cut or zero-padded to length `n`)."""
    a = enp.asarray(a)
    axis = _check("fft", a, n, axis, norm)
    return _fft(a, a.shape[axis] if n is None else int(n), axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse transform of `fft`."""
    a = enp.asarray(a)
    axis = _check("ifft", a, n, axis, norm)
    return _ifft(a, a.shape[axis] if n is None else int(n), axis, norm)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _rfft(a: Any, n: int, axis: int, norm: Any) -> Any:
    full = _transform(a, n, axis, norm, inverse=False)
    return _along(full, axis, slice(0, n // 2 + 1))


@functools.partial(jit, static_argnums=(1, 2, 3))
def _irfft(a: Any, n: int, axis: int, norm: Any) -> Any:
    """The Hermitian spectrum completed (X_(n-k) = conj(X_k)), then an inverse transform
    whose real part is the signal (the imaginary parts of X_0 and X_(n/2) drop out)."""
    m = n // 2 + 1
    half = _sized(_complex(a), m, axis)
    tail = enp.conj(_along(half, axis, slice(n - m, 0, -1)))
    full = enp.concatenate([half, tail], axis=axis)
    return enp.real(_transform(full, n, axis, norm, inverse=True))


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a real signal: its n // 2 + 1 non-negative frequencies."""
    a = enp.asarray(a)
    if a.dtype.kind == "c":
        raise TypeError(f"jnp.fft.rfft requires a real input, got {a.dtype}; use "
                        f"jnp.fft.fft for complex signals")
    axis = _check("rfft", a, n, axis, norm)
    return _rfft(a, a.shape[axis] if n is None else int(n), axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The real signal of length n (default 2 (m - 1)) whose rfft is `a`."""
    a = enp.asarray(a)
    axis = _check("irfft", a, n, axis, norm)
    return _irfft(a, 2 * (a.shape[axis] - 1) if n is None else int(n), axis, norm)


def _axes_and_sizes(name: str, a: Any, s: Any, axes: Any) -> tuple[list[int], list[int]]:
    if axes is None:
        axes = list(range(-len(s), 0)) if s is not None else list(range(a.ndim))
    axes = [int(ax) for ax in axes]
    if s is not None and len(s) != len(axes):
        raise ValueError(f"jnp.fft.{name} requires one size in s per axis, got s={s} and "
                         f"axes={axes}")
    if len({ax % max(a.ndim, 1) for ax in axes}) != len(axes):
        raise ValueError(f"jnp.fft.{name} requires distinct axes, got {axes}")
    sizes = list(s) if s is not None else [None] * len(axes)
    return axes, sizes


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """The transform over several axes (all by default), one after another."""
    a = enp.asarray(a)
    axes, sizes = _axes_and_sizes("fftn", a, s, axes)
    for ax, n in zip(axes, sizes, strict=True):
        a = fft(a, n, ax, norm)
    return _complex(a)  # also over no axes (a 0-d array)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    a = enp.asarray(a)
    axes, sizes = _axes_and_sizes("ifftn", a, s, axes)
    for ax, n in zip(axes, sizes, strict=True):
        a = ifft(a, n, ax, norm)
    return _complex(a)  # also over no axes (a 0-d array)


_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The real spectrum of a signal with Hermitian symmetry, given its first half `a`:
    irfft of its conjugate, scaled the other way (NumPy's)."""
    a = enp.asarray(a)
    _check("hfft", a, n, axis, norm)
    return irfft(enp.conj(a), n, axis, _SWAPPED[norm])


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of hfft: the conjugate of rfft, scaled the other way (NumPy's)."""
    a = enp.asarray(a)
    _check("ihfft", a, n, axis, norm)
    return enp.conj(rfft(a, n, axis, _SWAPPED[norm]))


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """rfft over the last of `axes`, then fft over the others."""
    a = enp.asarray(a)
    axes, sizes = _axes_and_sizes("rfftn", a, s, axes)
    a = rfft(a, sizes[-1], axes[-1], norm)
    for ax, n in zip(axes[:-1], sizes[:-1], strict=True):
        a = fft(a, n, ax, norm)
    return a


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """ifft over all but the last of `axes`, then irfft over the last."""
    a = enp.asarray(a)
    axes, sizes = _axes_and_sizes("irfftn", a, s, axes)
    for ax, n in zip(axes[:-1], sizes[:-1], strict=True):
        a = ifft(a, n, ax, norm)
    return irfft(a, sizes[-1], axes[-1], norm)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    return fftn(a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    return ifftn(a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    return rfftn(a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    return irfftn(a, s, axes, norm)


def _integer(name: str, n: Any) -> None:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"{name} requires an integer n (the transform's length), got "
                        f"{n!r}: pass int(n)")


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an n-point transform: [0, 1, ..., -1] / (d n)."""
    _integer("fftfreq", n)
    k = np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return enp.asarray(k / (d * n), dtype or dtypes.default_float(), device=device)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The non-negative sample frequencies of an n-point rfft."""
    _integer("rfftfreq", n)
    return enp.asarray(np.arange(n // 2 + 1) / (d * n), dtype or dtypes.default_float(),
                       device=device)


def fftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """The zero frequency moved to the middle (a roll by half of each axis)."""
    x = enp.asarray(x)
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if isinstance(axes, int) else tuple(axes))
    return enp.roll(x, tuple(x.shape[ax] // 2 for ax in axes), axes)


def ifftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """The inverse of `fftshift`."""
    x = enp.asarray(x)
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if isinstance(axes, int) else tuple(axes))
    return enp.roll(x, tuple(-(x.shape[ax] // 2) for ax in axes), axes)
