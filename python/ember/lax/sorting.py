"""Sorting: `sort`, `sort_key_val`, `top_k`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import numpy as enp
from ember._src.dispatch import bind
from ember.dialect import ops
from ember.numpy import _base

# ----------------------------------------------------------------------------- sorting

def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort one array, or several of one shape by their first `num_keys` (lexicographic):
    stable, NaN last. A sequence in, a tuple out."""
    single = not isinstance(operand, (tuple, list))
    arrays = [enp.asarray(operand)] if single else [enp.asarray(o) for o in operand]
    if not arrays or len({a.shape for a in arrays}) != 1:
        raise TypeError(f"sort requires one or more operands of one shape, got "
                        f"{[a.aval.str_short() for a in arrays]}")
    if not 1 <= num_keys <= len(arrays):
        raise ValueError(f"sort requires 1 <= num_keys <= {len(arrays)} (the operand count), "
                         f"got num_keys={num_keys}")
    axis = dimension % arrays[0].ndim if arrays[0].ndim else 0
    if single:
        return enp.sort(arrays[0], axis=axis)
    if num_keys == 1 and len(arrays) == 2:  # the payload moves with the keys: one sort
        return enp.sort(arrays[0], axis=axis), bind(ops.SORT, *arrays, dimension=axis)
    order = None  # stable sorts from the last key to the first: lexicographic order
    for key in reversed(arrays[:num_keys]):
        key = key if order is None else enp.take_along_axis(key, order, axis)
        step = enp.argsort(key, axis=axis)
        order = step if order is None else enp.take_along_axis(order, step, axis)
    return tuple(enp.take_along_axis(a, order, axis) for a in arrays)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """`keys` sorted along `dimension`, and `values` permuted with them."""
    return sort((keys, values), dimension=dimension, num_keys=1)


@_base._eager_with_statics  # eagerly one module (its block path is a dozen ops)
def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The k largest along the last axis, descending (NaN first, ties by lower index), and
    their int32 indices."""
    x = enp.asarray(operand)
    if x.ndim == 0 or not isinstance(k, (int, np.integer)) or not 0 <= k <= x.shape[-1]:
        raise ValueError(f"top_k requires an operand of rank >= 1 and 0 <= k <= its last "
                         f"dimension, got {x.aval.str_short()} and k={k!r}")
    order = _top_k_indices(x, int(k))
    return enp.take_along_axis(x, order, -1), order


_TOP_K_BLOCK = 64


def _top_k_indices(x: Any, k: int) -> Any:
    """Only blocks whose maximum ranks among the k largest block maxima can hold one of the k
    largest elements (ties go to lower indices, and blocks are index ranges): one pass over
    the data for the block maxima, the same search on those, then a sort of k blocks.
    Sorting everything (a full sort of 1M floats: 0.19 s) is left to short rows."""
    n, b = x.shape[-1], _TOP_K_BLOCK
    if n <= 16 * b or 4 * k * b > n:
        return enp.argsort(x, axis=-1, descending=True, dtype=np.int32)[..., :k]
    blocks = -(-n // b)
    if blocks * b != n:  # padded with keys that lose every tie (they come last)
        low = (-np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
               if x.dtype.kind in "iu" else False)
        pad = [(0, 0)] * (x.ndim - 1) + [(0, blocks * b - n)]
        x = enp.pad(x, pad, constant_values=np.asarray(low, x.dtype))
    tiles = enp.reshape(x, (*x.shape[:-1], blocks, b))
    chosen = enp.sort(_top_k_indices(enp.max(tiles, axis=-1), k), axis=-1)  # in index order
    candidates = enp.take_along_axis(tiles, chosen[..., None], axis=-2)
    positions = chosen[..., None] * b + enp.arange(b, dtype=np.int32)
    flat = (*x.shape[:-1], k * b)
    order = enp.argsort(enp.reshape(candidates, flat), axis=-1, descending=True,
                        dtype=np.int32)[..., :k]
    return enp.take_along_axis(enp.reshape(positions, flat), order, -1)
