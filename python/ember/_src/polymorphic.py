"""Shape-polymorphic eager kernels: an eager op compiles once per pattern of shapes, not
once per shape.

The pattern keeps every dimension of size 0 or 1 (broadcasting and emptiness depend on
them) and makes every other one a symbolic `Dim`, equal sizes sharing one: `exp` of an
f32[16,8] and of an f32[24,9] run the same `tensor<?x?xf32>` kernel, `a + b` of f32[16,8]
and f32[8] one kernel for every such pair. The function is traced at the pattern; a trace
that needs a size (a reshape to a computed shape, a mean's count: `SymbolicDimError`) or
a lowering IREE cannot compile at symbolic sizes falls back to the concrete shape, and the
pattern is remembered as concrete-only.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

from ember.dialect.types import Dim, RefAval, ShapedArray, SymbolicDimError, at_sizes
from ember.runtime.executable import runs_in_parallel

from ..errors import DynamicDimError
from . import events
from .signature import CacheKey
from .stages import Compiled, Traced

logger = logging.getLogger("ember")


def generalize(avals: Sequence[ShapedArray]) -> tuple[ShapedArray, ...] | None:
    """The pattern of `avals`; None when it has no symbolic dim (or holds a ref)."""
    symbols: dict[int, Dim] = {}
    out = []
    for a in avals:
        if isinstance(a, RefAval):
            return None
        shape = tuple(d if d < 2 else symbols.setdefault(d, Dim(f"s{len(symbols)}"))
                      for d in a.shape)
        out.append(ShapedArray(shape, a.dtype, a.weak_type))
    return tuple(out) if symbols else None


def sizes_of(pattern: Sequence[ShapedArray], avals: Sequence[ShapedArray]) -> dict[Dim, int]:
    return {p: d for pa, a in zip(pattern, avals, strict=True)
            for p, d in zip(pa.shape, a.shape, strict=True) if isinstance(p, Dim)}


def named(fun: str, avals: Sequence[ShapedArray], paths: Sequence[str],
          dims: dict[str, dict[int, str]]) -> tuple[ShapedArray, ...] | None:
    """The pattern `ember.jit(..., dynamic_dims=dims)` asks for: the named dims of the named
    leaves symbolic, where their size is 2 or more (sizes 0 and 1 get kernels of their
    own: squeezing and broadcasting differ there). Checks that the leaves exist, the axes are
    in range, and that dims of one name have one size."""
    unknown = sorted(set(dims) - set(paths))
    if unknown:
        raise DynamicDimError(f"jit of {fun}: dynamic_dims names {unknown}, which are not "
                              f"array arguments of this call; its arguments are {list(paths)}")
    sizes: dict[str, tuple[int, str]] = {}
    out, symbolic = [], False
    for aval, path in zip(avals, paths, strict=True):
        shape = list(aval.shape)
        if isinstance(aval, RefAval) and path in dims:
            raise DynamicDimError(f"jit of {fun}: dynamic_dims names {path}, a Ref; refs "
                                  f"keep static shapes")
        for axis, name in dims.get(path, {}).items():
            if not -aval.ndim <= axis < aval.ndim:
                raise DynamicDimError(f"jit of {fun}: dynamic_dims gives axis {axis} of {path}, "
                                      f"which has rank {aval.ndim} ({aval.str_short()})")
            size = aval.shape[axis]
            seen = sizes.setdefault(name, (size, path))
            if seen[0] != size:
                raise DynamicDimError(f"jit of {fun}: dynamic dim {name!r} is {seen[0]} at "
                                      f"{seen[1]} but {size} at {path}; arguments that share a "
                                      f"dim name must agree in its size")
            if size >= 2:
                shape[axis], symbolic = Dim(name), True
        out.append(dataclasses.replace(aval, shape=tuple(shape)))
    return tuple(out) if symbolic else None


def compile_for(key: CacheKey, trace: Callable[[CacheKey], Traced], cache: dict,
                tag: tuple = (), pattern: tuple[ShapedArray, ...] | None = None,
                fun: str = "", strict: bool = True) -> Compiled:
    """The compiled function for `key`'s concrete shapes, made from the kernel of their
    pattern when there is one. `trace(key)` traces at a key's avals; `cache` holds the
    traces and kernels of patterns, under `tag` (what else identifies the function).
    Without `pattern`, eager calls' (`generalize`), falling back to the concrete shapes
    where it does not serve; with one (`fun`'s dynamic_dims), its failures raise, unless
    not `strict` (an eager op's own pattern)."""
    strict = strict and pattern is not None
    pattern = pattern or generalize(key.in_avals)
    if pattern is None:
        return trace(key).lower().compile()
    general = key._replace(in_avals=pattern)

    def attempt(step: Callable[[], object], what: str) -> object:
        """`step()`, or None where the pattern does not serve (raising for dynamic_dims)."""
        try:
            return step()
        except SymbolicDimError as e:
            if strict:
                raise DynamicDimError(_needs_size(fun, pattern, e)) from e
            failure = e
        except Exception as e:  # the concrete attempt raises it again if it is the user's
            if strict:
                raise
            failure = e
        logger.debug("no shape-polymorphic %s for %s: %s", what, general, failure)
        return None

    traced = cache.get((tag, general))
    if traced is None:
        traced = cache[(tag, general)] = attempt(lambda: trace(general), "trace") or False
    if traced is False:
        return trace(key).lower().compile()
    sizes = sizes_of(pattern, key.in_avals)
    out_avals = [at_sizes(a, sizes) for a in traced.out_avals]
    parallel = runs_in_parallel(key.in_avals, out_avals)
    kernel = cache.get((tag, general, parallel))
    if kernel is None:
        kernel = attempt(lambda: traced.lower(parallel).compile(), "kernel")
        if kernel is None:
            events.emit("polymorphic_fallback")
            cache[(tag, general)] = False
            return trace(key).lower().compile()
        cache[(tag, general, parallel)] = kernel
    return kernel.specialized(key, out_avals)


def _needs_size(fun: str, pattern: Sequence[ShapedArray], e: Exception) -> str:
    return (f"jit of {fun} with dynamic_dims: the function needs {e}, which one compile for "
            f"every size cannot know (arguments {[a.str_short() for a in pattern]}). Compute "
            f"shapes from the arguments' own dims, or leave that dim out of dynamic_dims.")
