"""`ember.debug.print`: printing that survives compilation.

Under a trace it stages an `ember.debug_print` op (lowered to IREE's `flow.tensor.trace`);
each time the compiled code runs, the runtime's debug sink hands the values back and they are
printed with the format string, in program order, before the call's results are ready.
Modules that do not print carry no trace ops and pay nothing.
"""

from __future__ import annotations

import builtins
import hashlib
from typing import Any

import numpy as np

from ember import numpy as enp, tree_util
from ember._src.core import Tracer, current_trace
from ember._src.dispatch import bind
from ember.dialect import ops
from ember.runtime import device

# key -> (format, argument tree, avals). Keys hash their contents, so the same program gets
# the same key in every process (and its compiled form stays in the persistent cache).
_FORMATS: dict[str, tuple[str, Any, list]] = {}


def print(fmt: str, *args: Any, **kwargs: Any) -> None:  # noqa: A001 - JAX's name
    """`fmt.format(*args, **kwargs)` with the values of `args` at run time."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    if current_trace() is None and not any(isinstance(x, Tracer) for x in leaves):
        values = [np.asarray(x) for x in leaves]
        builtins.print(_format(fmt, tree, values), flush=True)
        return
    arrays = [enp.asarray(x) for x in leaves]
    avals = [a.aval for a in arrays]
    digest = hashlib.sha256(f"{fmt}|{tree}|{avals}".encode()).hexdigest()[:16]
    key = f"ember.debug.{digest}"
    _FORMATS[key] = (fmt, tree, avals)
    bind(ops.DEBUG_PRINT, *arrays, key=key)


def _format(fmt: str, tree: Any, values: list[np.ndarray]) -> str:
    values = [v[()] if v.ndim == 0 else v for v in values]  # scalars take format specs
    args, kwargs = tree_util.tree_unflatten(tree, values)
    return fmt.format(*args, **kwargs)


def _on_trace(key: str, views: list) -> None:
    entry = _FORMATS.get(key)
    if entry is None:
        return
    fmt, tree, avals = entry
    # (A print without values traces one unread placeholder: zip stops at the avals.)
    values = [np.array(view.map().asarray(list(a.shape), a.dtype)) if a.size
              else np.zeros(a.shape, a.dtype) for view, a in zip(views, avals, strict=False)]
    builtins.print(_format(fmt, tree, values), flush=True)


device.on_debug_trace(_on_trace)
