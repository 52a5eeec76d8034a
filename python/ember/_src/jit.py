"""`ember.jit`: trace once per signature, compile with IREE, call from a cache.

Traced -> Lowered -> Compiled mirror JAX's staged API; each stage can print itself.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import optree

from ember import config, errors, tree_util
from ember.dialect.types import RefAval, ShapedArray
from ember.runtime import Array, platform_of

from . import compilation, dispatch, donation, dtypes, events, host_eval, polymorphic
from .core import Trace, Tracer, _local as _traces, check_alive, defined_at
from .ref import Ref, TracedRef
from .signature import CacheKey, explain
from .stages import Compiled, Lowered, ShapeDtypeStruct, Traced

logger = logging.getLogger("ember")
_NS = tree_util.NAMESPACE


# ----------------------------------------------------------------------------- signatures

# Python scalars whose aval follows from their type and the settings (an int's, within
# int32's range: a larger one may not fit the default int)
_SCALAR_TYPES = frozenset((bool, float, complex))
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1
_WITH_SCALARS = object()  # ends a fast key with scalars among its arguments


def _leaf_aval(x: Any) -> ShapedArray:
    if isinstance(x, (Array, ShapeDtypeStruct, Ref)):
        return x.aval
    if isinstance(x, Tracer):  # outside its trace: an escaped tracer
        check_alive(x)
    dtype, weak = dtypes.dtype_and_weak(x)  # raises TypeError for non-arrays
    dtypes.check_python_int(x, dtype)  # raises OverflowError
    return ShapedArray(np.shape(x), dtype, weak)


def _fun_name(fun: Callable) -> str:
    return getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or repr(fun)


class JitFunction:
    """A function compiled on first call per signature, then called from the cache."""

    def __init__(self, fun: Callable, static_argnums=None, static_argnames=None,
                 donate_argnums=None, donate_argnames=None, device: str | None = None,
                 dynamic_dims: Mapping[str, Mapping[int, str]] | None = None,
                 eager: bool = False):
        if not callable(fun):
            raise TypeError(f"jit requires a callable, got {fun!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._signature = _signature(fun)
        self.static_argnums, self.static_argnames = _static_args(
            fun, self._signature, static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = donation.normalize(
            _fun_name(fun), self._signature, _as_tuple(donate_argnums),
            _as_tuple(donate_argnames))
        if device is not None:
            try:
                compilation.place(device)
            except ValueError as e:
                raise ValueError(f"jit of {_fun_name(fun)}: device {e}") from None
        self.device = device
        self.dynamic_dims = _dynamic_dims(_fun_name(fun), dynamic_dims)
        # ember.numpy's eager calls run through jit too; they count as eager_trace/_compile
        # and are not explained as cache misses.
        self._eager = eager
        self._events = ("eager_trace", "eager_compile") if eager else ("trace", "compile")
        self._cache = _cache_for(fun, (self.static_argnums, self.static_argnames,
                                       self.donate_argnums, self.donate_argnames, device,
                                       tuple((k, tuple(v.items()))
                                             for k, v in self.dynamic_dims.items())))
        # Calls with only positional arrays can skip pytree flattening (no statics to split,
        # no donations to honor).
        self._flat_ok = not (self.static_argnums or self.static_argnames or
                             self.donate_argnums or self.donate_argnames)
        # The latest call of one Array, matched by identity before any hashing: (the
        # settings' tuple, the argument's aval, the entry's bound call).
        self._latest: tuple[Any, Any, Any] = _NO_CALL
        _JITTED.add(self)  # clear_caches forgets it

    def __repr__(self) -> str:
        return f"<ember.jit of {_fun_name(self.fun)}>"

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
        if not kwargs and self._flat_ok:  # fast path: positional Arrays and scalars
            if len(args) == 1 and type(args[0]) is Array and not self._eager:
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
            raise self._unhashable(key.static) from None
        if compiled is None:
            compiled = self._compile_once(key, args, kwargs)
        if self._flat_ok and not kwargs:
            fast = self._fast_key(args)
            if fast is not None:
                self._cache[fast] = compiled
        return compiled.call_leaves(leaves)

    def _fast_key(self, args: tuple) -> tuple | None:
        """The fast path's key for positional Arrays and Python scalars (None for any other
        argument): the settings in the key, each Array's aval and each scalar's type (which
        with the settings is its aval); for eager calls, which run where their operands are,
        the first Array's device too; last, `_WITH_SCALARS` if there are scalars."""
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
        if self._eager:
            parts.append(device)
        if not arrays_only:
            parts.append(_WITH_SCALARS)
        return tuple(parts)

    def _compile_once(self, key: CacheKey, args: tuple, kwargs: dict) -> Compiled:
        """Trace and compile on a miss; threads missing on the same key wait for one."""
        slot = (id(self._cache), key)
        with _INFLIGHT_LOCK:
            compiled = self._cache.get(key)
            if compiled is not None:
                return compiled
            pending = _INFLIGHT.get(slot)
            owner = pending is None
            if owner:
                pending = _INFLIGHT[slot] = _Pending()
        if not owner:
            compiled = pending.wait()
            if compiled is None:  # the compiling thread was interrupted: not our failure
                return self._compile_once(key, args, kwargs)
            return compiled
        try:
            if not self._eager and config.read("ember_explain_cache_misses"):
                self._explain_miss(key, args, kwargs)
            compiled = self._compile(key, args, kwargs)
            self._cache[key] = compiled
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

    def _compile(self, key: CacheKey, args: tuple, kwargs: dict) -> Compiled:
        def trace(k: CacheKey) -> Traced:
            return self._trace(k, args, kwargs, hoist=True)

        if self._eager:  # ember.numpy's eager calls: one kernel per pattern of shapes
            def kernel() -> Compiled:
                return polymorphic.compile_for(key, trace, self._cache)

            if host_eval.small(key.in_avals) and platform_of(key.device) == "cpu":
                # op by op, if every op is exact or a row reduction: few or no compiles
                hosted = host_eval.program(trace(key), kernel, dispatch.row_reduction)
                if hosted is not None:
                    return hosted
            return kernel()
        if self.dynamic_dims:
            pattern = polymorphic.named(_fun_name(self.fun), key.in_avals,
                                        self._leaf_paths(*self._split(args, kwargs)[:2]),
                                        self.dynamic_dims)
            if pattern is not None:
                return polymorphic.compile_for(key, trace, self._cache, pattern=pattern,
                                               fun=_fun_name(self.fun))
        return trace(key).lower().compile()

    def _explain_miss(self, key: CacheKey, args: tuple, kwargs: dict) -> None:
        dyn_args, dyn_kwargs, _ = self._split(args, kwargs)
        previous = [k for k in self._cache if isinstance(k, CacheKey)]
        name = getattr(self.fun, "__name__", None) or _fun_name(self.fun)
        logger.warning(explain(name, defined_at(self.fun), id(self.fun), key,
                               self._leaf_paths(dyn_args, dyn_kwargs), previous))

    def _key(self, args: tuple, kwargs: dict) -> tuple[CacheKey, list[Any]]:
        dyn_args, dyn_kwargs, static = self._split(args, kwargs)
        leaves, tree = optree.tree_flatten((dyn_args, dyn_kwargs), namespace=_NS)
        try:
            avals = tuple([x.aval if type(x) is Array else _leaf_aval(x) for x in leaves])
        except errors.UnexpectedTracerError:
            raise
        except (TypeError, OverflowError):
            raise self._bad_argument(dyn_args, dyn_kwargs) from None
        x64, device, cpu, lapack = config.in_key()
        if self.device is not None:
            device = self.device
        elif self._eager:  # ember.numpy's eager calls run on their operands' device
            device = next((dispatch.device_name(x.device) for x in leaves if type(x) is Array),
                          device)
        if cpu and device == "cpu":  # ember_cpu names the CPU "cpu" compiles for
            device = f"cpu:{cpu}"
        return CacheKey(tree, avals, static, device, x64, lapack), leaves

    def _split(self, args: tuple, kwargs: dict):
        if not self.static_argnums and not self.static_argnames:
            return args, kwargs, ()
        nums = {i if i >= 0 else i + len(args) for i in self.static_argnums}
        static = [(self._param_name(i), a) for i, a in enumerate(args) if i in nums]
        static += [(k, v) for k, v in sorted(kwargs.items()) if k in self.static_argnames]
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, tuple(static)

    def _merge(self, dyn_args: Sequence[Any], dyn_kwargs: dict, args: tuple, kwargs: dict):
        """Put static values back where the caller passed them."""
        nums = {i if i >= 0 else i + len(args) for i in self.static_argnums}
        it = iter(dyn_args)
        full_args = tuple(a if i in nums else next(it) for i, a in enumerate(args))
        full_kwargs = {k: (v if k in self.static_argnames else dyn_kwargs[k])
                       for k, v in kwargs.items()}
        return full_args, full_kwargs

    # -- errors
    def _param_name(self, i: int) -> str:
        params = list(self._signature.parameters) if self._signature else []
        return params[i] if i < len(params) else f"args[{i}]"

    def _arg_names(self, args_len: int) -> list[str]:
        params = list(self._signature.parameters) if self._signature else []
        nums = {i if i >= 0 else i + args_len for i in self.static_argnums}
        return [params[i] if i < len(params) else f"args[{i}]"
                for i in range(args_len) if i not in nums]

    def _leaf_paths(self, dyn_args: tuple, dyn_kwargs: dict) -> list[str]:
        names = self._arg_names(len(dyn_args) + len(self.static_argnums))
        paths, _, _ = optree.tree_flatten_with_path((dyn_args, dyn_kwargs), namespace=_NS)
        out = []
        for path in paths:
            head = names[path[1]] if path[0] == 0 and path[1] < len(names) else str(path[1])
            out.append(head + tree_util.keystr(path[2:]))
        return out

    def _bad_argument(self, dyn_args: tuple, dyn_kwargs: dict) -> TypeError:
        paths = self._leaf_paths(dyn_args, dyn_kwargs)
        leaves = optree.tree_leaves((dyn_args, dyn_kwargs), namespace=_NS)
        for path, leaf in zip(paths, leaves, strict=True):
            try:
                _leaf_aval(leaf)
            except OverflowError as e:
                return OverflowError(
                    f"An overflow was encountered while parsing an argument to "
                    f"{_fun_name(self.fun)}, at path {path}: {e}")
            except TypeError as e:
                return TypeError(
                    f"Error interpreting argument to {self.fun!r} as an abstract array. The "
                    f"problematic value is of type {type(leaf)} and was passed to the function "
                    f"at path {path}: {e}.\nThis typically means that a jit-wrapped function "
                    f"was called with a non-array argument, and this argument was not marked "
                    f"as static using the static_argnums or static_argnames parameters of "
                    f"ember.jit.")
        return TypeError(f"{self.fun!r} was called with arguments ember cannot interpret")

    def _unhashable(self, static: tuple) -> TypeError:
        for name, value in static:
            try:
                hash(value)
            except TypeError as e:
                return TypeError(
                    f"Non-hashable static arguments are not supported. {_fun_name(self.fun)} "
                    f"got static argument {name} of type {type(value).__name__}: {value!r} "
                    f"({e}). Pass a hashable value (e.g. a tuple instead of a list), or make "
                    f"the argument non-static.")
        return TypeError(f"{_fun_name(self.fun)} got an unhashable argument")

    def _fix_for(self, name: str) -> str:
        params = list(self._signature.parameters) if self._signature else []
        fun = _fun_name(self.fun)
        by_num = (f"ember.jit({fun}, static_argnums={params.index(name)}) or "
                  if name in params else "")
        return (f"To branch on `{name}`, mark it static: {by_num}ember.jit({fun}, "
                f"static_argnames=['{name}']) (it then recompiles for each value), or express "
                f"the branch with ember.numpy.where / ember.lax.cond / ember.lax.while_loop.")

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
        return self._lower(key, args, kwargs)

    def _lower(self, key: CacheKey, args: tuple, kwargs: dict) -> Lowered:
        return self._trace(key, args, kwargs).lower()

    def _trace(self, key: CacheKey, args: tuple, kwargs: dict, hoist: bool = False) -> Traced:
        """With `hoist` (calls, not the staged API: a saved module must hold its data),
        large constants are passed as arguments."""
        events.emit(self._events[0])
        dyn_args, dyn_kwargs, _ = self._split(args, kwargs)
        names = self._leaf_paths(dyn_args, dyn_kwargs)
        trace = Trace(_fun_name(self.fun), defined_at(self.fun), key.in_avals, names,
                      self._fix_for, hoist=hoist)
        trace.lapack = key.lapack and key.device.partition(":")[0] == "cpu"
        with trace:
            leaves = [TracedRef(t, name) if isinstance(t.aval, RefAval) else t
                      for t, name in zip(trace.args, names, strict=True)]
            tracers = optree.tree_unflatten(key.in_tree, leaves)
            full_args, full_kwargs = self._merge(*tracers, args, kwargs)
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = optree.tree_flatten(out, namespace=_NS)
            if any(isinstance(x, (TracedRef, Ref)) for x in out_leaves):
                raise TypeError(f"{_fun_name(self.fun)} returned a Ref: refs are updated in "
                                f"place and cannot be returned from jit; return its value "
                                f"(r[...]) instead.")
            out_avals = trace.finish(out_leaves)
        del tracers, full_args, full_kwargs, out, out_leaves, leaves  # only leaks hold them
        trace.check_leaks()
        return Traced(key, trace, out_tree, out_avals, self._donated_leaves(args, kwargs),
                      names, event=self._events[1], key_of=self._key)

    def _donated_leaves(self, args: tuple, kwargs: dict) -> tuple[bool, ...]:
        if not (self.donate_argnums or self.donate_argnames):
            return ()
        statics = {i if i >= 0 else i + len(args) for i in self.static_argnums}
        kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return donation.leaf_mask(args, kwargs, statics, self.donate_argnums,
                                  self.donate_argnames)


def _signature(fun: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


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


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def _static_args(fun: Callable, sig: inspect.Signature | None, nums: Any, names: Any):
    """JAX's mapping: given only numbers, infer names from the signature, and vice versa."""
    nums, names = _as_tuple(nums), _as_tuple(names)
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"jit requires static_argnums to be ints, got {n!r}")
    if sig is None:
        return nums, names
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    has_var_args = any(p.kind == p.VAR_POSITIONAL for p in params)
    has_var_kwargs = any(p.kind == p.VAR_KEYWORD for p in params)
    if not has_var_args:
        for n in nums:
            if not -len(positional) <= n < len(positional):
                raise ValueError(f"jit of {_fun_name(fun)} requires static_argnums within its "
                                 f"{len(positional)} positional parameters, got {n}")
        nums = tuple(n % len(positional) for n in nums)
    for name in names:
        if name not in sig.parameters and not has_var_kwargs:
            raise ValueError(f"jit of {_fun_name(fun)} requires static_argnames to name its "
                             f"parameters {list(sig.parameters)}, got {name!r}")
    if not names:
        names = tuple(positional[n].name for n in nums
                      if n < len(positional) and positional[n].kind == positional[n]
                      .POSITIONAL_OR_KEYWORD)
    elif not nums:
        nums = tuple(i for i, p in enumerate(positional) if p.name in names)
    return nums, names


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
_in_key = config.in_key  # read on every cached call: one global lookup, not two
_NO_CALL = (object(), object(), None)  # matches no call
_JITTED: weakref.WeakSet[JitFunction] = weakref.WeakSet()

# Compiled code is cached per function object (JAX's rule: a fresh lambda or partial misses).
_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STRONG_CACHES: dict[int, tuple[Any, dict]] = {}


def _cache_for(fun: Callable, options: tuple) -> dict:
    try:
        per_fun = _CACHES.setdefault(fun, {})
    except TypeError:  # not weak-referenceable: keep it alive with its cache
        per_fun = _STRONG_CACHES.setdefault(id(fun), (fun, {}))[1]
    return per_fun.setdefault(options, {})


def clear_caches() -> None:
    """Drop every traced and compiled function (jitted functions keep their cache dicts, so
    these are emptied in place)."""
    per_fun = [*_CACHES.values(), *(c for _, c in _STRONG_CACHES.values())]
    for options in per_fun:
        for cache in options.values():
            cache.clear()
    for jitted in list(_JITTED):
        jitted._latest = _NO_CALL
    dispatch.clear_cache()


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
