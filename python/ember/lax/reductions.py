"""Products, reductions, running reductions and `map`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import numpy as enp

from .control_flow import scan
from .elementwise import _one_dtype


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    lhs, rhs = _one_dtype("dot", lhs, rhs)
    out = enp.dot(lhs, rhs)
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """JAX's dot_general: ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch));
    the result's dims are the batch dims, then lhs's free dims, then rhs's."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = (enp.asarray(x) for x in _one_dtype("dot_general", lhs, rhs))
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lnames, rnames = [None] * lhs.ndim, [None] * rhs.ndim
    for i, j in zip(lb, rb, strict=True):
        lnames[i] = rnames[j] = next(letters)
    for i, j in zip(lc, rc, strict=True):
        lnames[i] = rnames[j] = next(letters)
    lnames = [n or next(letters) for n in lnames]
    rnames = [n or next(letters) for n in rnames]
    out = [lnames[i] for i in lb] + [n for i, n in enumerate(lnames) if i not in (*lb, *lc)] + \
        [n for i, n in enumerate(rnames) if i not in (*rb, *rc)]
    result = enp.einsum(f"{''.join(lnames)},{''.join(rnames)}->{''.join(out)}", lhs, rhs)
    return result if preferred_element_type is None else result.astype(preferred_element_type)


def _reducer(name: str, fn: Callable) -> Callable:
    def reduce_op(operand: Any, axes: Sequence[int]) -> Any:
        return fn(operand, axis=tuple(axes))

    reduce_op.__name__ = reduce_op.__qualname__ = name
    return reduce_op


reduce_sum, reduce_prod = _reducer("reduce_sum", enp.sum), _reducer("reduce_prod", enp.prod)
reduce_max, reduce_min = _reducer("reduce_max", enp.max), _reducer("reduce_min", enp.min)
reduce_and, reduce_or = _reducer("reduce_and", enp.all), _reducer("reduce_or", enp.any)


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    return enp.argmax(operand, axis=axis).astype(index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    return enp.argmin(operand, axis=axis).astype(index_dtype)


def _running(name: str, fn: Callable) -> Callable:
    def running(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        operand = enp.asarray(operand)
        if not reverse:
            return fn(operand, axis=axis)
        return enp.flip(fn(enp.flip(operand, axis), axis=axis), axis)

    running.__name__ = running.__qualname__ = name
    return running


cumsum, cumprod = _running("cumsum", enp.cumsum), _running("cumprod", enp.cumprod)
cummax, cummin = _running("cummax", enp.cummax), _running("cummin", enp.cummin)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """log(cumsum(exp(x))): a scan of logaddexp along `axis`, so that no element is shifted
    by a maximum it has not seen (one shift for all lost x = [-1000, 0]'s first value)."""
    operand = enp.asarray(operand)
    moved = enp.moveaxis(operand, axis, 0)

    def step(total, x):
        total = enp.logaddexp(total, x)
        return total, total

    start = enp.full(moved.shape[1:], -np.inf, moved.dtype)
    return enp.moveaxis(scan(step, start, moved, reverse=reverse)[1], 0, axis)


def map(f: Callable, xs: Any) -> Any:  # noqa: A001 - JAX's name
    """f applied to each leading slice of xs (a pytree), one after another, as a scan."""
    return scan(lambda carry, x: (carry, f(x)), None, xs)[1]
