"""`ember.scipy.signal`: JAX's `jax.scipy.signal` convolutions and detrending (the spectral
estimates stft, istft, welch, csd are not here yet)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import lax, numpy as enp
from ember._src import dtypes as _dt

_MODES = ("full", "same", "valid")


def _padding(mode: str, kernel: Sequence[int]) -> list[tuple[int, int]]:
    """Per dim, the padding of the input that gives `mode`'s output (as SciPy's)."""
    if mode == "full":
        return [(k - 1, k - 1) for k in kernel]
    if mode == "same":
        return [(k - 1 - (k - 1) // 2, (k - 1) // 2) for k in kernel]
    return [(0, 0)] * len(kernel)


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """The N-dimensional convolution of in1 and in2 (of one rank): `mode` 'full' (every
    overlap), 'same' (in1's shape, centered) or 'valid' (full overlaps only)."""
    if mode not in _MODES:
        raise ValueError(f"convolve requires mode in {_MODES}, got {mode!r}")
    in1, in2 = enp.asarray(in1), enp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"convolve requires inputs of one rank, got shapes {in1.shape} and "
                         f"{in2.shape}")
    if in1.ndim == 0:
        return in1 * in2
    if mode == "valid" and all(b >= a for a, b in zip(in1.shape, in2.shape, strict=True)):
        in1, in2 = in2, in1  # SciPy's: the larger one slides over the smaller
    if mode == "valid" and any(a < b for a, b in zip(in1.shape, in2.shape, strict=True)):
        raise ValueError(f"convolve in 'valid' mode requires one input at least as large as "
                         f"the other in every dim, got {in1.shape} and {in2.shape}")
    dtype = enp.result_type(in1, in2)
    if dtype.kind not in "fc":
        dtype = _dt.default_float()
    kernel = enp.flip(in2.astype(dtype))
    out = lax.conv_general_dilated(in1.astype(dtype)[None, None], kernel[None, None],
                                   (1,) * in1.ndim, _padding(mode, in2.shape))
    return out[0, 0]


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """The N-dimensional cross-correlation: the convolution with in2 reversed (and
    conjugated)."""
    in2 = enp.asarray(in2)
    return convolve(in1, enp.flip(enp.conj(in2)), mode, method, precision)


def _two_d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: float) -> None:
    if enp.ndim(in1) != 2 or enp.ndim(in2) != 2:
        raise ValueError(f"{name} requires 2-D inputs, got {enp.shape(in1)} and "
                         f"{enp.shape(in2)}")
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name} supports boundary='fill' with fillvalue=0, got "
                                  f"{boundary!r} and {fillvalue}")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Any:
    _two_d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Any:
    """The 2-D cross-correlation; its 'same' output starts k // 2 into the full one along a
    dim of kernel length k (SciPy's; correlate's starts (k - 1) // 2 in: they differ for
    even k)."""
    _two_d("correlate2d", in1, in2, boundary, fillvalue)
    if mode != "same":
        return correlate(in1, in2, mode)
    full = correlate(in1, in2, "full")
    (n0, n1), (k0, k1) = enp.shape(in1), enp.shape(in2)
    return full[k0 // 2:k0 // 2 + n0, k1 // 2:k1 // 2 + n1]


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Sequence[int] | None = None
                ) -> Any:
    """convolve's result (computed directly: the same values, to rounding)."""
    if axes is not None:
        raise NotImplementedError("fftconvolve supports axes=None (every axis)")
    return convolve(in1, in2, mode)


def detrend(data: Any, axis: int = -1, type: str = "linear", bp: Any = 0,  # noqa: A002
            overwrite_data: None = None) -> Any:
    """data less its mean ('constant') or its least-squares line ('linear') along `axis`."""
    if type not in ("linear", "constant"):
        raise ValueError(f"detrend requires type 'linear' or 'constant', got {type!r}")
    if not (isinstance(bp, int) and bp == 0):
        raise NotImplementedError("detrend supports bp=0 (no breakpoints)")
    data = enp.asarray(data)
    data = data.astype(_dt.default_float()) if data.dtype.kind not in "fc" else data
    y = enp.moveaxis(data, axis, -1)
    centered = y - enp.mean(y, axis=-1, keepdims=True)
    if type == "constant":
        return enp.moveaxis(centered, -1, axis)
    n = y.shape[-1]
    t = enp.arange(n, dtype=y.dtype) - (n - 1) / 2.0
    slope = enp.sum(t * centered, axis=-1, keepdims=True) / enp.sum(t * t)
    return enp.moveaxis(centered - slope * t, -1, axis)


__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]
