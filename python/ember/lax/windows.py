"""Windowed ops: `reduce_window` and `conv_general_dilated`."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import numpy as enp

from .elementwise import _one_dtype
from .shapes import pad

_WINDOW_COMBINERS = {"add": enp.add, "mul": enp.multiply, "max": enp.maximum,
                     "min": enp.minimum}


def _padding_pairs(padding: Any, shape: Sequence[int], window: Sequence[int],
                   strides: Sequence[int], dilation: Sequence[int]) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(shape)
        if padding.upper() == "SAME":
            pairs = []
            for n, w, s, d in zip(shape, window, strides, dilation, strict=True):
                extent = (w - 1) * d + 1
                out = -(-n // s)
                total = builtins.max((out - 1) * s + extent - n, 0)
                pairs.append((total // 2, total - total // 2))
            return pairs
        raise ValueError(f"padding requires 'VALID', 'SAME' or (low, high) pairs, got "
                         f"{padding!r}")
    return [tuple(p) for p in padding]


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Pooling: `computation` (lax.add, lax.mul, lax.max or lax.min) over every window,
    starting from init_value (padding is init_value too). Each of the window's offsets is
    one strided slice of the padded operand, and the slices combine elementwise (one fused
    kernel)."""
    combine = _WINDOW_COMBINERS.get(getattr(computation, "__name__", ""))
    if combine is None:
        raise NotImplementedError(f"lax.reduce_window supports lax.add, lax.mul, lax.max and "
                                  f"lax.min as computation, got {computation!r}")
    if base_dilation is not None and any(d != 1 for d in base_dilation):
        raise NotImplementedError("lax.reduce_window does not support base_dilation yet")
    x = enp.asarray(operand)
    window = tuple(window_dimensions)
    strides = tuple(window_strides or (1,) * x.ndim)
    dilation = tuple(window_dilation or (1,) * x.ndim)
    if not len(window) == len(strides) == len(dilation) == x.ndim:
        raise ValueError(f"lax.reduce_window requires one window size, stride and dilation "
                         f"per dim of {tuple(x.shape)}, got {window}, {strides}, {dilation}")
    pairs = _padding_pairs(padding, x.shape, window, strides, dilation)
    init = enp.asarray(init_value).astype(x.dtype)
    x = pad(x, init, [(lo, hi, 0) for lo, hi in pairs])
    out_shape = [(n - ((w - 1) * d + 1)) // s + 1
                 for n, w, s, d in zip(x.shape, window, strides, dilation, strict=True)]
    result = None
    for offset in np.ndindex(*window):
        starts = [o * d for o, d in zip(offset, dilation, strict=True)]
        part = x[tuple(builtins.slice(b, b + (m - 1) * s + 1, s)
                       for b, m, s in zip(starts, out_shape, strides, strict=True))]
        result = part if result is None else combine(result, part)
    return combine(result, init)


def _conv_specs(dimension_numbers: Any, ndim: int) -> tuple[str, str, str]:
    if dimension_numbers is None:
        spatial = "HWDXYZ"[:ndim - 2] if ndim - 2 <= 3 else None
        if spatial is None:
            raise NotImplementedError("lax.conv_general_dilated supports 1 to 3 spatial dims")
        return "NC" + spatial, "OI" + spatial, "NC" + spatial
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        return lhs, rhs, out
    raise NotImplementedError("lax.conv_general_dilated takes dimension_numbers as three "
                              "strings ('NHWC', 'HWIO', 'NHWC') or None")


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """A convolution as JAX's: one matmul of the (strided, dilated) input slice against the
    kernel's (in, out) matrix per kernel offset, summed (a 3x3 kernel is 9 matmuls)."""
    lhs, rhs = (enp.asarray(x) for x in _one_dtype("conv_general_dilated", lhs, rhs))
    if feature_group_count != 1 or batch_group_count != 1:
        raise NotImplementedError("lax.conv_general_dilated supports feature_group_count=1 "
                                  "and batch_group_count=1 only")
    if lhs_dilation is not None and any(d != 1 for d in lhs_dilation):
        raise NotImplementedError("lax.conv_general_dilated does not support lhs_dilation "
                                  "(transposed convolutions) yet")
    lhs_spec, rhs_spec, out_spec = _conv_specs(dimension_numbers, lhs.ndim)
    spatial = [c for c in lhs_spec if c not in "NC"]
    # the input as (N, spatial..., C), the kernel as (spatial..., I, O)
    x = enp.transpose(lhs, [lhs_spec.index(c) for c in ("N", *spatial, "C")])
    k = enp.transpose(rhs, [rhs_spec.index(c) for c in (*spatial, "I", "O")])
    window = k.shape[:len(spatial)]
    strides = tuple(window_strides)
    dilation = tuple(rhs_dilation or (1,) * len(spatial))
    if x.shape[-1] != k.shape[-2]:
        raise ValueError(f"lax.conv_general_dilated requires the input's {x.shape[-1]} "
                         f"features to be the kernel's input features, got {k.shape[-2]}")
    pairs = _padding_pairs(padding, x.shape[1:-1], window, strides, dilation)
    x = enp.pad(x, [(0, 0), *pairs, (0, 0)])
    out_sizes = [(n - ((w - 1) * d + 1)) // s + 1
                 for n, w, s, d in zip(x.shape[1:-1], window, strides, dilation, strict=True)]
    out = None
    for offset in np.ndindex(*window):
        starts = [o * d for o, d in zip(offset, dilation, strict=True)]
        part = x[(builtins.slice(None), *(builtins.slice(b, b + (m - 1) * s + 1, s)
                                        for b, m, s in zip(starts, out_sizes, strides,
                                                           strict=True)))]
        term = enp.matmul(part, k[offset])
        out = term if out is None else enp.add(out, term)
    out = enp.transpose(out, [("N", *spatial, "C").index(c) for c in out_spec])
    return out if preferred_element_type is None else out.astype(preferred_element_type)
