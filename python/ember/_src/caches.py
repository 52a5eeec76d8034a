"""The caches of compiled code, one per function and options: jit's (a function object's,
JAX's rule: a fresh lambda or partial misses) and eager's (an op's, per parameters).
`clear` empties them all in place (their owners keep the dicts)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STRONG_CACHES: dict[int, tuple[Any, dict]] = {}


def cache_for(fun: Callable, options: tuple) -> dict:
    """The cache of `fun`'s compiled code under `options`."""
    try:
        per_fun = _CACHES.setdefault(fun, {})
    except TypeError:  # not weak-referenceable: keep it alive with its cache
        per_fun = _STRONG_CACHES.setdefault(id(fun), (fun, {}))[1]
    return per_fun.setdefault(options, {})


def clear() -> None:
    per_fun = [*_CACHES.values(), *(c for _, c in _STRONG_CACHES.values())]
    for options in per_fun:
        for cache in options.values():
            cache.clear()
