"""Eager execution of single ops (`bind` outside a trace): where each runs, decided here;
ember.numpy's eager functions (`jit.EagerFunction`) take the same three ways.

Each eager computation runs by the first of these that serves it:
- on the host, by NumPy references that give the kernels' bits (`host_eval`): small CPU
  arrays (or none: an iota on the CPU), every op exact (`ember.dialect.exact`), no value
  compiled code would flush; no compile, microseconds a call;
- a row reduction (`host_eval.ROW_REDUCTIONS`) on the host's rows, by its one shared kernel;
- a kernel of the shapes' pattern (`polymorphic`): one compile per pattern, not per shape.
A single op (`bind` with concrete operands) is run like a program of that one op, its
kernels kept in jit's per-function caches (`ember.clear_caches` drops them too).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import optree

from ember import config
from ember.dialect.exact import exact
from ember.dialect.ops import OpDef
from ember.dialect.types import Dim, ShapedArray
from ember.runtime import Array, Device, put

from . import host_eval, polymorphic
from .caches import cache_for
from .compilation import device_name
from .core import Trace
from .signature import CacheKey
from .stages import Traced


def run_op(op: OpDef, arrays: list[Array], params: dict) -> Array:
    """`op` on concrete `arrays` (ember's `bind` outside a trace)."""
    device = host_eval.device_of(arrays)
    if host_eval.on_host(arrays, device):
        out = _on_host(op, arrays, params, device)
        if out is not None:
            return out
        if op in host_eval.ROW_REDUCTIONS:
            rows = host_eval.as_rows(arrays[0]._to_numpy(), params["axes"])
            if rows is not None:
                out = row_reduction(op, rows, params, device)
                return put(out, ShapedArray(out.shape, out.dtype), device)
    return _kernel(op, arrays, params, device)


def _on_host(op: OpDef, arrays: list[Array], params: dict, device: Device) -> Array | None:
    """`op` by its NumPy reference, where that gives the kernel's bits on small host arrays
    (host_eval): no compile on first use, and no dispatch."""
    avals = [a.aval for a in arrays]
    aval = op.infer(*avals, **params)
    if not isinstance(aval, ShapedArray) or not exact(op, avals, aval) or \
            not host_eval.small([aval]):
        return None
    return host_eval.call(op, arrays, params, aval, device)


def row_reduction(op: OpDef, rows: tuple[np.ndarray, tuple], params: dict,
                  device: Device) -> np.ndarray:
    """A row reduction (host_eval.ROW_REDUCTIONS) of `rows` (host_eval.as_rows: the matrix
    and the result's shape) by its one shared kernel, to a host array of its own."""
    matrix, shape = rows
    out = _kernel(op, [put(matrix, ShapedArray(matrix.shape, matrix.dtype), device)],
                  {**params, "axes": (1,)}, device)
    return np.array(out._to_numpy()).reshape(shape)  # its own memory: `out` goes now


def _freeze(params: dict) -> tuple:
    return tuple(sorted((k, str(v) if isinstance(v, np.dtype) else v)
                        for k, v in params.items()))


# The caches.cache_for dict of each op and parameters, found by one lookup (ember.clear_caches
# empties those dicts in place, so they stay the ones to use).
_CACHES: dict[tuple, dict] = {}


def _kernel(op: OpDef, arrays: list[Array], params: dict, device: Device) -> Array:
    """`op` on `arrays`, on `device`, by its eager kernel, compiled once per signature."""
    x64, default, cpu, _ = config.in_key()
    frozen = _freeze(params)
    cache = _CACHES.get((op, frozen))
    if cache is None:
        cache = _CACHES[(op, frozen)] = cache_for(op, ("eager", frozen))
    key = (tuple(a.aval for a in arrays), device, default, cpu, x64)
    compiled = cache.get(key)
    if compiled is None:
        avals = key[0]
        name = device_name(device)
        signature = CacheKey(optree.tree_structure((0,) * len(avals)), avals, (),
                             f"cpu:{cpu}" if cpu and name == "cpu" else name, x64)
        compiled = cache[key] = polymorphic.compile_for(
            signature, lambda k: _trace(op, k, params), cache, (),
            pattern=_rows_pattern(op, avals, params), strict=False)
    return compiled.call_arrays(arrays)


def _rows_pattern(op: OpDef, avals: tuple[ShapedArray, ...],
                  params: dict) -> tuple[ShapedArray, ...] | None:
    """A row reduction's one pattern, f32[s0,s1] (`host_eval.as_rows`): sizes 1 too, so that
    a full reduction's single row shares the kernel."""
    if op not in host_eval.ROW_REDUCTIONS or avals[0].ndim != 2 or params["axes"] != (1,):
        return None
    return (dataclasses.replace(avals[0], shape=(Dim("s0"), Dim("s1"))),)


def _trace(op: OpDef, key: CacheKey, params: dict) -> Traced:
    avals = key.in_avals
    with Trace(op.name, "<eager>", avals, [f"x{i}" for i in range(len(avals))]) as trace:
        out = trace.emit(op, trace.args, params)
    out_avals = trace.finish([out])
    return Traced(key, trace, optree.tree_structure(0), out_avals, event="eager_compile")


__all__ = ["row_reduction", "run_op"]
