"""`bind(op, *operands, **params)`, the one door into the dialect.

Under a trace it appends an `ember.*` op. With concrete arrays and no trace it runs the op
alone (JAX's op-by-op dispatch), compiled once per signature along the same stages as
ember.jit (Traced -> Lowered -> Compiled), for the device its operands are on.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import optree

from ember import config
from ember.dialect.exact import exact
from ember.dialect.ops import OpDef
from ember.dialect.types import Dim, ShapedArray
from ember.runtime import Array, Device, platform_of, put

from . import host_eval, polymorphic
from .core import Regions, Trace, Tracer, check_alive, current_trace
from .dtypes import as_array, default_device
from .signature import CacheKey
from .stages import Compiled, Traced


def bind(op: OpDef, *operands: Any, regions: Regions | None = None, **params: Any) -> Any:
    for x in operands:
        if isinstance(x, Tracer):
            check_alive(x)
    trace = current_trace()
    if trace is not None:
        return trace.emit(op, operands, params, regions)
    return _eager(op, [as_array(x) for x in operands], params)


def constant(value: np.ndarray, weak: bool = False) -> Any:
    """A literal: an IR constant under a trace, a device array otherwise."""
    trace = current_trace()
    if trace is not None:
        return trace.emit_constant(value, weak)
    return put(value, ShapedArray(value.shape, value.dtype, weak), default_device())


_EAGER: dict[tuple, Compiled] = {}


def clear_cache() -> None:
    _EAGER.clear()


def _freeze(params: dict) -> tuple:
    return tuple(sorted((k, str(v) if isinstance(v, np.dtype) else v)
                        for k, v in params.items()))


def device_name(device: Device) -> str:
    """The device name eager ops on `device` compile for: `ember_default_device` when it
    names this platform (it may pick an architecture: cuda:sm_90), else the platform."""
    default = config.read("ember_default_device")
    return default if platform_of(default) == device.platform else device.platform


def _on_host(op: OpDef, arrays: list[Array], params: dict, device: Device) -> Array | None:
    """`op` by its NumPy reference, where that gives the kernel's bits on small host arrays
    (host_eval): no compile on first use, ~2 us a call instead of a dispatch."""
    avals = [a.aval for a in arrays]
    aval = op.infer(*avals, **params)
    if not isinstance(aval, ShapedArray) or not exact(op, avals, aval) or \
            not host_eval.small([aval]):
        return None
    return host_eval.call(op, arrays, params, aval, device)


def _eager(op: OpDef, arrays: list[Array], params: dict) -> Array:
    # An op of no operands (iota, a constant) is on the host when the default device is.
    device = arrays[0].device if arrays else default_device()
    if host_eval.on_host(arrays) or (not arrays and device.platform == "cpu"):
        out = _on_host(op, arrays, params, device)
        if out is not None:
            return out
        if op in host_eval.ROW_REDUCTIONS:
            rows = host_eval.as_rows(arrays[0]._to_numpy(), params["axes"])
            if rows is not None:
                out = row_reduction(op, rows, params, device)
                return put(out, ShapedArray(out.shape, out.dtype), device)
    return _kernel(op, arrays, params)


def row_reduction(op: OpDef, rows: tuple[np.ndarray, tuple], params: dict,
                  device: Device) -> np.ndarray:
    """A row reduction (host_eval.ROW_REDUCTIONS) of `rows` (host_eval.as_rows: the matrix
    and the result's shape) by its one shared kernel, to a host array of its own."""
    matrix, shape = rows
    out = _kernel(op, [put(matrix, ShapedArray(matrix.shape, matrix.dtype), device)],
                  {**params, "axes": (1,)})
    return np.array(out._to_numpy()).reshape(shape)  # its own memory: `out` goes now


def _kernel(op: OpDef, arrays: list[Array], params: dict) -> Array:
    """`op` on `arrays` by its eager kernel, compiled once per signature."""
    device = arrays[0].device if arrays else default_device()
    x64, default, cpu, _ = config.in_key()
    key = (op, tuple(a.aval for a in arrays), _freeze(params), device, default, cpu, x64)
    compiled = _EAGER.get(key)
    if compiled is None:
        avals = key[1]
        name = device_name(device)
        signature = CacheKey(optree.tree_structure((0,) * len(avals)), avals, (),
                             f"cpu:{cpu}" if cpu and name == "cpu" else name, x64)
        compiled = _EAGER[key] = polymorphic.compile_for(
            signature, lambda k: _trace(op, k, params), _EAGER, (op, key[2]),
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
