"""`ember.jit`: trace once per signature, compile with IREE, call from a cache.

Traced -> Lowered -> Compiled mirror JAX's staged API; each stage can print itself.
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import optree

from ember import config, errors, tree_util
from ember.dialect.types import RefAval
from ember.runtime import Array, platform_of

from . import caches, compilation, eager, events, host_eval, polymorphic
from .arguments import Arguments, fun_name, leaf_aval
from .core import Trace, _local as _traces, defined_at
from .ref import Ref, TracedRef
from .signature import CacheKey, explain
from .stages import Compiled, Lowered, Traced

logger = logging.getLogger("ember")
_NS = tree_util.NAMESPACE


# ----------------------------------------------------------------------------- signatures

# Python scalars whose aval follows from their type and the settings (an int's, within
# int32's range: a larger one may not fit the default int)
_SCALAR_TYPES = frozenset((bool, float, complex))
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1
_WITH_SCALARS = object()  # ends a fast key with scalars among its arguments


class JitFunction:
    """A function compiled on first call per signature, then called from the cache."""

    # What its traces and compiles count as (events), and whether a call runs on its first
    # Array operand's device (eager calls: their key then holds it) rather than the jit's
    # or the default one.
    _events = ("trace", "compile")
    _on_operands_device = False

    def __init__(self, fun: Callable, static_argnums=None, static_argnames=None,
                 donate_argnums=None, donate_argnames=None, device: str | None = None,
                 dynamic_dims: Mapping[str, Mapping[int, str]] | None = None):
        if not callable(fun):
            raise TypeError(f"jit requires a callable, got {fun!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.arguments = Arguments(fun, static_argnums, static_argnames, donate_argnums,
                                   donate_argnames)
        if device is not None:
            try:
                compilation.place(device)
            except ValueError as e:
                raise ValueError(f"jit of {fun_name(fun)}: device {e}") from None
        self.device = device
        self.dynamic_dims = _dynamic_dims(fun_name(fun), dynamic_dims)
        self._cache = caches.cache_for(fun, (*self.arguments.key(), device,
                                             tuple((k, tuple(v.items()))
                                                   for k, v in self.dynamic_dims.items())))
        # The latest call of one Array, matched by identity before any hashing: (the
        # settings' tuple, the argument's aval, the entry's bound call).
        self._latest: tuple[Any, Any, Any] = _NO_CALL
        _JITTED.add(self)  # clear_caches forgets it

    def __repr__(self) -> str:
        return f"<ember.jit of {fun_name(self.fun)}>"

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    # -- the cached call: flatten -> key -> lookup -> (compile on miss) -> invoke -> unflatten
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        settings, aval, call = self._latest
        if (len(args) == 1 and type(args[0]) is Array and args[0].aval is aval
                and config._in_key is settings and not kwargs and not _traces.stack):
            return call(args)  # the same aval and settings objects as the latest call
        if _traces.stack:  # nested jit: inline into the enclosing trace
            return self.fun(*args, **kwargs)
        if not kwargs and self.arguments.plain:  # fast path: positional Arrays and scalars
            if len(args) == 1 and type(args[0]) is Array and not self._on_operands_device:
                # the commonest, without a loop; an entry under one aval takes one array
                settings, aval = _in_key(), args[0].aval
                compiled = self._cache.get((settings, aval))
                if compiled is not None:
                    out = compiled.call_arrays(args)
                    # bound to the executable from its first call on (see Compiled._call)
                    self._latest = (settings, aval, compiled.call_arrays)
                    return out
            else:
                fast = self._fast_key(args)
                compiled = self._cache.get(fast) if fast is not None else None
                if compiled is not None:
                    if fast[-1] is _WITH_SCALARS:
                        return compiled.call_leaves(list(args))
                    return compiled.call_arrays(args)
        key, leaves = self._key(args, kwargs)
        try:
            compiled = self._cache.get(key)
        except TypeError:  # an unhashable static value
            raise self.arguments.unhashable(key.static) from None
        if compiled is None:
            compiled = self._compile_once(key, args, kwargs)
        if self.arguments.plain and not kwargs:
            fast = self._fast_key(args)
            if fast is not None:
                self._cache[fast] = compiled
        return compiled.call_leaves(leaves)

    def _fast_key(self, args: tuple) -> tuple | None:
        """The fast path's key for positional Arrays and Python scalars (None for any other
        argument): the settings in the key, each Array's aval and each scalar's type (which
        with the settings is its aval); for calls on their operands' device, the first
        Array's device too; last, `_WITH_SCALARS` if there are scalars."""
        parts: list[Any] = [config.in_key()]
        device, arrays_only = None, True
        for a in args:
            t = type(a)
            if t is Array:
                parts.append(a.aval)
                if device is None:
                    device = a.device
            elif t in _SCALAR_TYPES or (t is int and _INT32_MIN <= a <= _INT32_MAX):
                parts.append(t)  # an int out of int32's range: its aval is checked
                arrays_only = False
            else:
                return None
        if self._on_operands_device:
            parts.append(device)
        if not arrays_only:
            parts.append(_WITH_SCALARS)
        return tuple(parts)

    def _compile_once(self, key: CacheKey, args: tuple, kwargs: dict) -> Compiled:
        def compile_() -> Compiled:
            self._explain_miss(key, args, kwargs)
            return self._compile(key, args, kwargs)

        return _compile_once(self._cache, key, compile_)

    def _compile(self, key: CacheKey, args: tuple, kwargs: dict) -> Compiled:
        def trace(k: CacheKey) -> Traced:
            return self._trace(k, args, kwargs, hoist=True)

        if self.dynamic_dims:
            pattern = polymorphic.named(
                fun_name(self.fun), key.in_avals,
                self.arguments.leaf_paths(*self.arguments.split(args, kwargs)[:2]),
                self.dynamic_dims)
            if pattern is not None:
                return polymorphic.compile_for(key, trace, self._cache, pattern=pattern,
                                               fun=fun_name(self.fun))
        return trace(key).lower().compile()

    def _explain_miss(self, key: CacheKey, args: tuple, kwargs: dict) -> None:
        if not config.read("ember_explain_cache_misses"):
            return
        dyn_args, dyn_kwargs, _ = self.arguments.split(args, kwargs)
        previous = [k for k in self._cache if isinstance(k, CacheKey)]
        name = getattr(self.fun, "__name__", None) or fun_name(self.fun)
        logger.warning(explain(name, defined_at(self.fun), id(self.fun), key,
                               self.arguments.leaf_paths(dyn_args, dyn_kwargs), previous))

    def _key(self, args: tuple, kwargs: dict) -> tuple[CacheKey, list[Any]]:
        dyn_args, dyn_kwargs, static = self.arguments.split(args, kwargs)
        leaves, tree = optree.tree_flatten((dyn_args, dyn_kwargs), namespace=_NS)
        try:
            avals = tuple([x.aval if type(x) is Array else leaf_aval(x) for x in leaves])
        except errors.UnexpectedTracerError:
            raise
        except (TypeError, OverflowError):
            raise self.arguments.bad_argument(dyn_args, dyn_kwargs) from None
        x64, device, cpu, lapack = config.in_key()
        if self.device is not None:
            device = self.device
        elif self._on_operands_device:
            device = next((compilation.device_name(x.device) for x in leaves if type(x) is Array),
                          device)
        if cpu and device == "cpu":  # ember_cpu names the CPU "cpu" compiles for
            device = f"cpu:{cpu}"
        return CacheKey(tree, avals, static, device, x64, lapack), leaves

    def call_one_array(self, a: Array, *statics: Any, **kw_statics: Any) -> Any:
        """The call of a function whose only array is its first argument (ember.numpy's
        reductions: `sum(x, axis=0)`), keyed without flattening: 7 us, not 15."""
        key = ("one array", config.in_key(), a.device, a.aval, statics,
               tuple(kw_statics.items()))
        compiled = self._cache.get(key)
        if compiled is None:
            args = (a, *statics)
            full, _ = self._key(args, kw_statics)
            compiled = self._cache.get(full) or self._compile_once(full, args, kw_statics)
            self._cache[key] = compiled
        return compiled.call_arrays([a])

    # -- staged API
    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        key, _ = self._key(args, kwargs)
        return self._trace(key, args, kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        key, _ = self._key(args, kwargs)
        return self._trace(key, args, kwargs).lower()

    def _trace(self, key: CacheKey, args: tuple, kwargs: dict, hoist: bool = False) -> Traced:
        """With `hoist` (calls, not the staged API: a saved module must hold its data),
        large constants are passed as arguments."""
        events.emit(self._events[0])
        dyn_args, dyn_kwargs, _ = self.arguments.split(args, kwargs)
        names = self.arguments.leaf_paths(dyn_args, dyn_kwargs)
        trace = Trace(fun_name(self.fun), defined_at(self.fun), key.in_avals, names,
                      self.arguments.fix_for, hoist=hoist)
        trace.lapack = key.lapack and key.device.partition(":")[0] == "cpu"
        with trace:
            leaves = [TracedRef(t, name) if isinstance(t.aval, RefAval) else t
                      for t, name in zip(trace.args, names, strict=True)]
            tracers = optree.tree_unflatten(key.in_tree, leaves)
            full_args, full_kwargs = self.arguments.merge(*tracers, args, kwargs)
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = optree.tree_flatten(out, namespace=_NS)
            if any(isinstance(x, (TracedRef, Ref)) for x in out_leaves):
                raise TypeError(f"{fun_name(self.fun)} returned a Ref: refs are updated in "
                                f"place and cannot be returned from jit; return its value "
                                f"(r[...]) instead.")
            out_avals = trace.finish(out_leaves)
        del tracers, full_args, full_kwargs, out, out_leaves, leaves  # only leaks hold them
        trace.check_leaks()
        return Traced(key, trace, out_tree, out_avals,
                      self.arguments.donated_leaves(args, kwargs), names,
                      event=self._events[1], key_of=self._key)


class EagerFunction(JitFunction):
    """A function of ember.numpy run eagerly, through jit's cache: it runs on its operands'
    device, compiles one kernel per pattern of shapes (or none, running small exact
    programs on the host), counts as eager traces and compiles, and explains no misses."""

    _events = ("eager_trace", "eager_compile")
    _on_operands_device = True

    def __init__(self, fun: Callable, static_argnums=None, static_argnames=None):
        super().__init__(fun, static_argnums=static_argnums, static_argnames=static_argnames)

    def _compile(self, key: CacheKey, args: tuple, kwargs: dict) -> Compiled:
        def trace(k: CacheKey) -> Traced:
            return self._trace(k, args, kwargs, hoist=True)

        def kernel() -> Compiled:
            return polymorphic.compile_for(key, trace, self._cache)

        if host_eval.small(key.in_avals) and platform_of(key.device) == "cpu":
            # op by op, if every op is exact or a row reduction: few or no compiles
            hosted = host_eval.program(trace(key), kernel, eager.row_reduction)
            if hosted is not None:
                return hosted
        return kernel()

    def _explain_miss(self, key: CacheKey, args: tuple, kwargs: dict) -> None:
        pass  # a kernel per pattern of shapes: a miss is no surprise


def _dynamic_dims(fun: str, dims: Any) -> dict[str, dict[int, str]]:
    """`{"x": {0: "batch"}}`: argument (leaf path) -> axis -> dim name, checked."""
    if not dims:
        return {}
    ok = isinstance(dims, Mapping) and all(
        isinstance(path, str) and isinstance(axes, Mapping) and all(
            isinstance(a, int) and not isinstance(a, bool) and isinstance(n, str)
            and n.isidentifier() for a, n in axes.items()) for path, axes in dims.items())
    if not ok:
        raise TypeError(f"jit of {fun} requires dynamic_dims to map argument names to "
                        f"{{axis: dim name}} (e.g. {{'x': {{0: 'batch'}}}}), got {dims!r}")
    return {path: dict(axes) for path, axes in dims.items()}


class _Pending:
    """A compile in flight, awaited by other threads that miss on the same key."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Compiled | None = None
        self.error: BaseException | None = None

    def wait(self) -> Compiled | None:
        """The compiled function; the compile's error (a bad program fails for everyone);
        None when the compiling thread was interrupted (Ctrl-C, SystemExit: its own
        ending, after which a waiter compiles for itself)."""
        self.done.wait()
        if isinstance(self.error, Exception):
            raise self.error
        return self.result


_INFLIGHT: dict[tuple, _Pending] = {}
_INFLIGHT_LOCK = threading.Lock()


def _compile_once(cache: dict, key: CacheKey, compile_: Callable[[], Compiled]) -> Compiled:
    """`cache[key]`, compiled by `compile_` on a miss; threads missing on the same key wait
    for the one compiling it."""
    slot = (id(cache), key)
    with _INFLIGHT_LOCK:
        compiled = cache.get(key)
        if compiled is not None:
            return compiled
        pending = _INFLIGHT.get(slot)
        owner = pending is None
        if owner:
            pending = _INFLIGHT[slot] = _Pending()
    if not owner:
        compiled = pending.wait()
        if compiled is None:  # the compiling thread was interrupted: not our failure
            return _compile_once(cache, key, compile_)
        return compiled
    try:
        compiled = compile_()
        cache[key] = compiled
        pending.result = compiled
    except BaseException as e:
        pending.error = e
        raise
    finally:
        with _INFLIGHT_LOCK:
            del _INFLIGHT[slot]
        pending.done.set()
    compiled.warn_unusable_donations()
    return compiled
_in_key = config.in_key  # read on every cached call: one global lookup, not two
_NO_CALL = (object(), object(), None)  # matches no call
_JITTED: weakref.WeakSet[JitFunction] = weakref.WeakSet()

def clear_caches() -> None:
    """Drop every traced and compiled function (jitted functions keep their cache dicts, so
    these are emptied in place)."""
    caches.clear()
    for jitted in list(_JITTED):
        jitted._latest = _NO_CALL


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes `fun` would return, as ShapeDtypeStructs, without running it."""
    return JitFunction(fun).trace(*args, **kwargs).out_info


def jit(fun: Callable | None = None, *, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, device: str | None = None,
        dynamic_dims: Mapping[str, Mapping[int, str]] | None = None) -> Any:
    """Compile `fun` with Ember. Without `fun`, returns a decorator (the factory form).

    `dynamic_dims` (beyond JAX's jit): `{"x": {0: "batch"}}` compiles one module for every
    size of those dims (2 and up; sizes 0 and 1 compile their own), keyed on the rest of
    the shapes. Arguments are named as in cache-miss explanations (`x`, `params['w']`);
    dims that share a name must agree at each call."""
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                   device=device, dynamic_dims=dynamic_dims)
    if fun is None:
        return lambda f: JitFunction(f, **options)
    return JitFunction(fun, **options)
