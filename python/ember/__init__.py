"""Ember: a JIT and AOT compiler for array programs, built on MLIR and IREE."""

from __future__ import annotations

import contextlib as _contextlib
import importlib.util as _importlib_util
import logging as _logging
import sys as _sys
from typing import Any

# The runtime half (saved modules, arrays, devices) needs only iree-base-runtime; everything
# that traces or compiles needs iree-base-compiler too (docs/guide.md, "Installing the
# runtime only").
from ember import config, errors, tree, tree_util
from ember._src.aot import Loaded, load
from ember._src.dtypes import as_array as _as_array
from ember.dialect.types import ShapedArray
from ember.runtime import Array, Device, devices as _devices, get as _get_device

HAS_COMPILER = _importlib_util.find_spec("iree.compiler") is not None
if HAS_COMPILER:
    from ember import ad_checkpoint, debug, dtypes, lax, nn, numpy, ops, random, scipy
    from ember._src import array_methods as _array_methods
    from ember._src.ad import grad, jvp, linearize, value_and_grad, vjp
    from ember._src.batching import vmap
    from ember._src.custom import checkpoint, checkpoint_policies, custom_jvp, custom_vjp, remat
    from ember._src.events import count_events
    from ember._src.jacobians import hessian, jacfwd, jacrev
    from ember._src.jit import JitFunction, clear_caches, eval_shape, jit
    from ember._src.ref import Ref, new_ref
    from ember._src.stages import Compiled, Lowered, ShapeDtypeStruct, Traced
    from ember.numpy import (
        fft as _fft,  # noqa: F401 - ember.numpy.fft (it uses jit)
        linalg as _linalg,  # noqa: F401 - ember.numpy.linalg (it uses lax)
    )

    _array_methods.install()
else:
    def __getattr__(name: str) -> Any:
        if name in __all__:
            raise errors.CompilerNotInstalled(f"ember.{name}")
        raise AttributeError(f"module 'ember' has no attribute {name!r}")

__version__ = "0.1.0"



class _Stderr(_logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (it is often replaced after import)."""

    @property
    def stream(self):
        return _sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


# Cache-miss explanations and compile logs are for people: print them plainly to stderr.
_logger = _logging.getLogger("ember")
if not _logger.handlers:
    _handler = _Stderr()
    _handler.setFormatter(_logging.Formatter("%(message)s"))
    _logger.addHandler(_handler)
    _logger.propagate = False


def devices(platform: str | None = None) -> list[Device]:
    found = list(_devices())
    return [d for d in found if platform is None or d.platform == platform]


def device_put(x: Any, device: Device | str | None = None) -> Any:
    """Copy host data (or a pytree of it) to a device; ember arrays pass through."""
    dev = _get_device(device) if isinstance(device, str) else (device or _get_device(
        config.read("ember_default_device")))
    return tree_util.tree_map(lambda leaf: _as_array(leaf, dev), x)


@_contextlib.contextmanager
def checking_leaks():
    """Within this block, tracing raises UnexpectedTracerError for leaked tracers."""
    before = config.read("ember_check_tracer_leaks")
    config.update("ember_check_tracer_leaks", True)
    try:
        yield
    finally:
        config.update("ember_check_tracer_leaks", before)


def block_until_ready(tree: Any) -> Any:
    for leaf in tree_util.tree_leaves(tree):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return tree


__all__ = [
    "Array", "Compiled", "Device", "JitFunction", "Loaded", "Lowered", "ShapeDtypeStruct",
    "ShapedArray", "Traced", "ad_checkpoint", "block_until_ready", "checking_leaks",
    "checkpoint", "checkpoint_policies",
    "clear_caches", "config", "count_events", "custom_jvp", "custom_vjp", "debug", "dtypes",
    "device_put", "devices", "errors", "eval_shape", "grad", "hessian", "jacfwd", "jacrev",
    "jit", "jvp", "lax", "linearize", "remat", "value_and_grad", "vjp", "vmap",
    "load", "new_ref", "Ref", "nn", "numpy", "ops", "random", "scipy", "tree", "tree_util",
]
