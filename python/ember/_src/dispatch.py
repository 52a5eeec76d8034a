"""`bind(op, *operands, **params)`, the one door into the dialect.

Under a trace it appends an `ember.*` op. With concrete arrays and no trace it runs the op
alone (JAX's op-by-op dispatch), as `eager` decides: on the host or by a kernel, for the
device its operands are on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.dialect.ops import OpDef
from ember.dialect.types import ShapedArray
from ember.runtime import put

from . import eager
from .core import Regions, Tracer, check_alive, current_trace
from .dtypes import as_array, default_device


def bind(op: OpDef, *operands: Any, regions: Regions | None = None, **params: Any) -> Any:
    for x in operands:
        if isinstance(x, Tracer):
            check_alive(x)
    trace = current_trace()
    if trace is not None:
        return trace.emit(op, operands, params, regions)
    return eager.run_op(op, [as_array(x) for x in operands], params)


def constant(value: np.ndarray, weak: bool = False) -> Any:
    """A literal: an IR constant under a trace, a device array otherwise."""
    trace = current_trace()
    if trace is not None:
        return trace.emit_constant(value, weak)
    return put(value, ShapedArray(value.shape, value.dtype, weak), default_device())
