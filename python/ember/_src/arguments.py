"""How a jitted function reads its arguments, decided once when it is made: which are static
(JAX's mapping of numbers and names, normalized here and nowhere else), which are donated, and
what each is called in errors."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from ember import tree_util
from ember.dialect.types import ShapedArray
from ember.runtime import Array

from . import donation, dtypes
from .core import Tracer, check_alive
from .ref import Ref
from .stages import ShapeDtypeStruct

_NS = tree_util.NAMESPACE


def fun_name(fun: Callable) -> str:
    return getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or repr(fun)


def leaf_aval(x: Any) -> ShapedArray:
    if isinstance(x, (Array, ShapeDtypeStruct, Ref)):
        return x.aval
    if isinstance(x, Tracer):  # outside its trace: an escaped tracer
        check_alive(x)
    dtype, weak = dtypes.dtype_and_weak(x)  # raises TypeError for non-arrays
    dtypes.check_python_int(x, dtype)  # raises OverflowError
    return ShapedArray(np.shape(x), dtype, weak)


class Arguments:
    """A jitted function's arguments: its statics and donations, normalized once; splits a
    call's arguments into dynamic and static ones, puts the statics back, names the leaves,
    and words the errors about them."""

    def __init__(self, fun: Callable, static_argnums=None, static_argnames=None,
                 donate_argnums=None, donate_argnames=None):
        self.fun = fun
        self.signature = _signature(fun)
        self.params = list(self.signature.parameters) if self.signature else []
        self.static_argnums, self.static_argnames = _static_args(
            fun, self.signature, static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = donation.normalize(
            fun_name(fun), self.signature, _as_tuple(donate_argnums),
            _as_tuple(donate_argnames))
        # Calls with only positional arrays can skip pytree flattening (no statics to split,
        # no donations to honor).
        self.plain = not (self.static_argnums or self.static_argnames or
                          self.donate_argnums or self.donate_argnames)

    def key(self) -> tuple:
        """What of these settings a compiled entry depends on."""
        return (self.static_argnums, self.static_argnames, self.donate_argnums,
                self.donate_argnames)

    def _statics_among(self, count: int) -> set[int]:
        """The static positions of a call with `count` positional arguments."""
        return {i if i >= 0 else i + count for i in self.static_argnums}

    def split(self, args: tuple, kwargs: dict) -> tuple[tuple, dict, tuple]:
        """(dynamic positional arguments, dynamic keyword arguments, ((name, static), ...))."""
        if not self.static_argnums and not self.static_argnames:
            return args, kwargs, ()
        nums = self._statics_among(len(args))
        static = [(self.param_name(i), a) for i, a in enumerate(args) if i in nums]
        static += [(k, v) for k, v in sorted(kwargs.items()) if k in self.static_argnames]
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, tuple(static)

    def merge(self, dyn_args: Sequence[Any], dyn_kwargs: dict, args: tuple,
              kwargs: dict) -> tuple[tuple, dict]:
        """Put static values back where the caller passed them."""
        nums = self._statics_among(len(args))
        it = iter(dyn_args)
        full_args = tuple(a if i in nums else next(it) for i, a in enumerate(args))
        full_kwargs = {k: (v if k in self.static_argnames else dyn_kwargs[k])
                       for k, v in kwargs.items()}
        return full_args, full_kwargs

    def donated_leaves(self, args: tuple, kwargs: dict) -> tuple[bool, ...]:
        if not (self.donate_argnums or self.donate_argnames):
            return ()
        kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return donation.leaf_mask(args, kwargs, self._statics_among(len(args)),
                                  self.donate_argnums, self.donate_argnames)

    # -- names, for errors
    def param_name(self, i: int) -> str:
        return self.params[i] if i < len(self.params) else f"args[{i}]"

    def leaf_paths(self, dyn_args: tuple, dyn_kwargs: dict) -> list[str]:
        count = len(dyn_args) + len(self.static_argnums)
        nums = self._statics_among(count)
        names = [self.param_name(i) for i in range(count) if i not in nums]
        paths, _, _ = optree.tree_flatten_with_path((dyn_args, dyn_kwargs), namespace=_NS)
        out = []
        for path in paths:
            head = names[path[1]] if path[0] == 0 and path[1] < len(names) else str(path[1])
            out.append(head + tree_util.keystr(path[2:]))
        return out

    def bad_argument(self, dyn_args: tuple, dyn_kwargs: dict) -> TypeError:
        paths = self.leaf_paths(dyn_args, dyn_kwargs)
        leaves = optree.tree_leaves((dyn_args, dyn_kwargs), namespace=_NS)
        for path, leaf in zip(paths, leaves, strict=True):
            try:
                leaf_aval(leaf)
            except OverflowError as e:
                return OverflowError(
                    f"An overflow was encountered while parsing an argument to "
                    f"{fun_name(self.fun)}, at path {path}: {e}")
            except TypeError as e:
                return TypeError(
                    f"Error interpreting argument to {self.fun!r} as an abstract array. The "
                    f"problematic value is of type {type(leaf)} and was passed to the function "
                    f"at path {path}: {e}.\nThis typically means that a jit-wrapped function "
                    f"was called with a non-array argument, and this argument was not marked "
                    f"as static using the static_argnums or static_argnames parameters of "
                    f"ember.jit.")
        return TypeError(f"{self.fun!r} was called with arguments ember cannot interpret")

    def unhashable(self, static: tuple) -> TypeError:
        for name, value in static:
            try:
                hash(value)
            except TypeError as e:
                return TypeError(
                    f"Non-hashable static arguments are not supported. {fun_name(self.fun)} "
                    f"got static argument {name} of type {type(value).__name__}: {value!r} "
                    f"({e}). Pass a hashable value (e.g. a tuple instead of a list), or make "
                    f"the argument non-static.")
        return TypeError(f"{fun_name(self.fun)} got an unhashable argument")

    def fix_for(self, name: str) -> str:
        fun = fun_name(self.fun)
        by_num = (f"ember.jit({fun}, static_argnums={self.params.index(name)}) or "
                  if name in self.params else "")
        return (f"To branch on `{name}`, mark it static: {by_num}ember.jit({fun}, "
                f"static_argnames=['{name}']) (it then recompiles for each value), or express "
                f"the branch with ember.numpy.where / ember.lax.cond / ember.lax.while_loop.")


def _signature(fun: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


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
                raise ValueError(f"jit of {fun_name(fun)} requires static_argnums within its "
                                 f"{len(positional)} positional parameters, got {n}")
        nums = tuple(n % len(positional) for n in nums)
    for name in names:
        if name not in sig.parameters and not has_var_kwargs:
            raise ValueError(f"jit of {fun_name(fun)} requires static_argnames to name its "
                             f"parameters {list(sig.parameters)}, got {name!r}")
    if not names:
        names = tuple(positional[n].name for n in nums
                      if n < len(positional) and positional[n].kind == positional[n]
                      .POSITIONAL_OR_KEYWORD)
    elif not nums:
        nums = tuple(i for i, p in enumerate(positional) if p.name in names)
    return nums, names
