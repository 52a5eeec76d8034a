"""`bind(op, *operands, **params)`, the one door into the dialect.

Under a trace it appends an `ember.*` op. With concrete arrays and no trace it runs the op
alone (JAX's op-by-op dispatch), compiled once per signature along the same stages as
ember.jit (Traced -> Lowered -> Compiled), for the device its operands are on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import optree

from ember import config
from ember.dialect import ops
from ember.dialect.ops import OpDef
from ember.dialect.types import ShapedArray
from ember.runtime import Array, Device, platform_of, put
from ember.runtime.executable import PARALLEL_MIN_ELEMENTS

from . import polymorphic
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


# Ops that only move elements (their NumPy reference is exact): eagerly, on small arrays in
# host memory whose values are ready, they are a host copy into a buffer of the result's own,
# not a kernel: no compile on first use (0.4-0.9 s each here), and ~2 us a call instead of a
# dispatch. Larger arrays, arrays still being computed and other devices run the kernel.
_HOST_COPIES = frozenset({ops.RESHAPE, ops.TRANSPOSE, ops.BROADCAST_IN_DIM, ops.SLICE, ops.REV,
                          ops.CONCATENATE, ops.COPY})


def on_host(arrays: list[Array]) -> bool:
    """Whether eager data movement on `arrays` is a host copy (see _HOST_COPIES): small,
    ready, on the CPU."""
    return bool(arrays) and all(a.device.platform == "cpu" and a._fence is None
                                and a.size < PARALLEL_MIN_ELEMENTS for a in arrays)


def _host_copy(op: OpDef, arrays: list[Array], params: dict) -> Array | None:
    if not on_host(arrays):
        return None
    aval = op.infer(*(a.aval for a in arrays), **params)
    if aval.size >= PARALLEL_MIN_ELEMENTS:
        return None
    return put(op.reference(*(a._to_numpy() for a in arrays), **params), aval, arrays[0].device)


def _eager(op: OpDef, arrays: list[Array], params: dict) -> Array:
    if op in _HOST_COPIES:
        out = _host_copy(op, arrays, params)
        if out is not None:
            return out
    device = arrays[0].device if arrays else default_device()
    x64, default, _ = config.in_key()
    key = (op, tuple(a.aval for a in arrays), _freeze(params), device, default, x64)
    compiled = _EAGER.get(key)
    if compiled is None:
        avals = key[1]
        signature = CacheKey(optree.tree_structure((0,) * len(avals)), avals, (),
                             device_name(device), x64)
        compiled = _EAGER[key] = polymorphic.compile_for(
            signature, lambda k: _trace(op, k, params), _EAGER, (op, key[2]))
    return compiled.call_arrays(arrays)


def _trace(op: OpDef, key: CacheKey, params: dict) -> Traced:
    avals = key.in_avals
    with Trace(op.name, "<eager>", avals, [f"x{i}" for i in range(len(avals))]) as trace:
        out = trace.emit(op, trace.args, params)
    out_avals = trace.finish([out])
    return Traced(key, trace, optree.tree_structure(0), out_avals, event="eager_compile")
