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

import logging
from collections.abc import Callable, Sequence

from ember.dialect.types import Dim, RefAval, ShapedArray
from ember.runtime.executable import runs_in_parallel

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


def concrete(aval: ShapedArray, sizes: dict[Dim, int]) -> ShapedArray:
    return ShapedArray(tuple(sizes[d] if isinstance(d, Dim) else d for d in aval.shape),
                       aval.dtype, aval.weak_type)


def compile_for(key: CacheKey, trace: Callable[[CacheKey], Traced], cache: dict,
                tag: tuple = ()) -> Compiled:
    """The compiled function for `key`'s concrete shapes, made from the kernel of their
    pattern when there is one. `trace(key)` traces at a key's avals; `cache` holds the
    traces and kernels of patterns, under `tag` (what else identifies the function)."""
    pattern = generalize(key.in_avals)
    if pattern is None:
        return trace(key).lower().compile()
    general = key._replace(in_avals=pattern)
    traced = cache.get((tag, general))
    if traced is None:
        try:
            traced = trace(general)
        except Exception as e:  # the static trace raises it again if it is the user's
            logger.debug("no shape-polymorphic trace for %s: %s", general, e)
            traced = False
        cache[(tag, general)] = traced
    if traced is False:
        return trace(key).lower().compile()
    sizes = sizes_of(pattern, key.in_avals)
    out_avals = [concrete(a, sizes) for a in traced.out_avals]
    parallel = runs_in_parallel(key.in_avals, out_avals)
    kernel = cache.get((tag, general, parallel))
    if kernel is None:
        try:
            kernel = traced.lower(parallel).compile()
        except Exception as e:
            logger.debug("no shape-polymorphic kernel for %s: %s", general, e)
            cache[(tag, general)] = False
            return trace(key).lower().compile()
        cache[(tag, general, parallel)] = kernel
    return kernel.specialized(key, out_avals)
