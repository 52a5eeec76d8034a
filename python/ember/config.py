"""Options, settable with `ember.config.update(name, value)` or `EMBER_<NAME>` variables."""

from __future__ import annotations

import os
from typing import Any

_DEFAULTS: dict[str, Any] = {
    "ember_enable_x64": False,
    "ember_explain_cache_misses": False,
    "ember_log_compiles": False,
    "ember_check_tracer_leaks": False,
    "ember_strict_donation": False,
    "ember_default_device": "cpu",
    # None: the user's cache dir ($XDG_CACHE_HOME/ember or ~/.cache/ember); "off" disables.
    "ember_compilation_cache_dir": None,
    "ember_compilation_cache_max_size": 1 << 30,
}
_values: dict[str, Any] = {}

# Settings that change what a trace or its lowering produces: each is part of the jit cache
# key (as JAX keys on its trace-affecting config). The others, and why they may stay out.
IN_KEY = ("ember_enable_x64", "ember_default_device")
NOT_IN_KEY = {
    "ember_explain_cache_misses": "only logs",
    "ember_log_compiles": "only logs",
    "ember_check_tracer_leaks": "only raises on a leak; the traced code is the same",
    "ember_strict_donation": "only turns the unusable-donation warning into an error",
    "ember_compilation_cache_dir": "where compiled code is kept, not what it is",
    "ember_compilation_cache_max_size": "how much compiled code is kept",
}


def _from_env(name: str, default: Any) -> Any:
    raw = os.environ.get(name.upper())
    if raw is None:
        return default
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(raw)
    return raw


def _canonical(name: str) -> str:
    key = name.replace("jax_", "ember_", 1) if name.startswith("jax_") else name
    if key not in _DEFAULTS:
        raise AttributeError(f"ember.config.update requires a known option "
                             f"({', '.join(sorted(_DEFAULTS))}), got {name!r}")
    return key


def update(name: str, value: Any) -> None:
    _values[_canonical(name)] = value


def read(name: str) -> Any:
    key = _canonical(name)
    if key not in _values:
        _values[key] = _from_env(key, _DEFAULTS[key])
    return _values[key]


def in_key() -> tuple[Any, ...]:
    """The values of IN_KEY, read on every jitted call (the fast path: plain lookups)."""
    try:
        return _values["ember_enable_x64"], _values["ember_default_device"]
    except KeyError:
        return tuple(read(name) for name in IN_KEY)


def __getattr__(name: str) -> Any:
    if name.startswith(("ember_", "jax_")):
        return read(name)
    raise AttributeError(name)
