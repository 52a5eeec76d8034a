"""`ember.ops`: JAX's `jax.ops`, the segment reductions: `data`'s rows combined by the segment
each belongs to, as scatters into an array of the segments."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp
from ember.dialect.types import kind


def _segments(name: str, combine: str, data: Any, segment_ids: Any, num_segments: Any,
              identity: Any) -> Any:
    data, ids = enp.asarray(data), enp.asarray(segment_ids)
    if kind(ids.dtype) not in "iu":
        raise TypeError(f"{name} requires integer segment_ids, got {ids.dtype}")
    if ids.ndim != 1 or not data.ndim or ids.shape[0] != data.shape[0]:
        raise ValueError(f"{name} requires one segment id per row of data (shape {data.shape}),"
                         f" got segment_ids of shape {ids.shape}")
    if num_segments is None:
        try:
            num_segments = int(np.max(np.asarray(ids), initial=-1)) + 1
        except Exception as e:
            raise ValueError(f"{name} requires num_segments where segment_ids are not known "
                             f"(under jit or vmap): pass num_segments=") from e
    # Ids out of [0, num_segments) are dropped, negative ones too (not counted from the end).
    ids = enp.where(ids < 0, num_segments, ids)
    out = enp.full((num_segments, *data.shape[1:]), identity(data.dtype), data.dtype)
    return getattr(out.at[ids], combine)(data)


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if kind(dtype) == "f" else (False if dtype == np.bool_ else
                                               np.iinfo(dtype).min)


def _highest(dtype: np.dtype) -> Any:
    return np.inf if kind(dtype) == "f" else (True if dtype == np.bool_ else
                                              np.iinfo(dtype).max)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The sum of each segment's rows (0 for a segment without rows). The hints
    (`indices_are_sorted`, `unique_indices`, `bucket_size`) change no result."""
    return _segments("segment_sum", "add", data, segment_ids, num_segments, lambda d: 0)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None,
                 out_sharding: Any = None) -> Any:
    """The product of each segment's rows (1 for a segment without rows)."""
    return _segments("segment_prod", "multiply", data, segment_ids, num_segments, lambda d: 1)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The maximum of each segment's rows (the dtype's lowest for one without rows)."""
    return _segments("segment_max", "max", data, segment_ids, num_segments, _lowest)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The minimum of each segment's rows (the dtype's highest for one without rows)."""
    return _segments("segment_min", "min", data, segment_ids, num_segments, _highest)


__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
