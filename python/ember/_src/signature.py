"""The jit cache key, and how two keys differ (for `ember_explain_cache_misses`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NamedTuple

import optree

import ember.compiler
import ember.dialect
from ember.dialect.types import ShapedArray


class CacheKey(NamedTuple):
    """Everything about a call that decides the compiled code (a tuple: cheap to hash)."""

    in_tree: optree.PyTreeSpec
    in_avals: tuple[ShapedArray, ...]
    static: tuple[tuple[str, Any], ...]
    device: str  # the function's own, else ember_default_device at the call
    x64: bool  # ember_enable_x64 at the call
    lapack: bool = True  # ember_cpu_lapack at the call


def _aval_text(a: ShapedArray) -> str:
    return a.str_short() + (" (weak)" if a.weak_type else "")


def differences(new: CacheKey, new_paths: list[str], old: CacheKey) -> list[str]:
    """What changed between two keys, one line per difference, naming argument paths."""
    lines = []
    if new.in_tree != old.in_tree:
        lines += ["  different input pytree structure:",
                  f"  * now {new.in_tree} and before {old.in_tree}"]
    else:
        types = [f"  * at {path}, now {_aval_text(a)} and before {_aval_text(b)}"
                 for path, a, b in zip(new_paths, new.in_avals, old.in_avals, strict=False)
                 if a != b]
        if types:
            lines += ["  different input types:", *types]
    old_static, new_static = dict(old.static), dict(new.static)
    statics = [f"  * {name}, now {new_static.get(name)!r} and before {old_static.get(name)!r}"
               for name in sorted(set(old_static) | set(new_static))
               if _differs(new_static.get(name), old_static.get(name))]
    if statics:
        lines += ["  different static arguments:", *statics]
    if new.device != old.device:
        lines += [f"  different device: now {new.device!r} and before {old.device!r}"]
    if new.x64 != old.x64:
        lines += [f"  different ember_enable_x64: now {new.x64} and before {old.x64}"]
    if new.lapack != old.lapack:
        lines += [f"  different ember_cpu_lapack: now {new.lapack} and before {old.lapack}"]
    return lines


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:  # an odd __eq__: treat as different
        return True


def explain(name: str, defined_at: str, fun_id: int, new: CacheKey, new_paths: list[str],
            previous: list[CacheKey]) -> str:
    lines = [f"TRACING CACHE MISS at {call_site()}:"]
    if not previous:
        return "\n".join(lines + ["  never seen function:",
                                  f"    {name} id={fun_id} defined at {defined_at}"])
    closest = min((differences(new, new_paths, old) for old in previous), key=len)
    return "\n".join(lines + [f"  for {name} defined at {defined_at}",
                              "  all previously seen cache keys differ. For the closest "
                              "previous key:", *closest])


# Ember's own source folders (the package and the layers mapped into it).
_ROOTS = tuple(str(Path(p).resolve().parent) + "/" for p in (
    Path(__file__).parent.parent / "__init__.py", ember.compiler.__file__,
    ember.dialect.__file__))


def call_site() -> str:
    """file:line (function) of the first frame outside Ember."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_ROOTS):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"
