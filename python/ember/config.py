"""Options, settable with `ember.config.update(name, value)` or `EMBER_<NAME>` variables."""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

_DEFAULTS: dict[str, Any] = {
    "ember_enable_x64": False,
    "ember_explain_cache_misses": False,
    "ember_log_compiles": False,
    "ember_check_tracer_leaks": False,
    "ember_strict_donation": False,
    "ember_default_device": "cpu",
    # The CPU that "cpu" compiles for, by LLVM's name (EMBER_CPU=haswell); None: this
    # machine's. Code for an older CPU runs here: CI runs the suite once for AVX2 that way.
    "ember_cpu": None,
    # Linear algebra on the CPU by LAPACK, called from compiled code (as jaxlib calls it);
    # off, it is loops of ember ops, which any IREE runtime runs (ember-compile turns it off).
    "ember_cpu_lapack": True,
    # None: the user's cache dir ($XDG_CACHE_HOME/ember or ~/.cache/ember); "off" disables.
    "ember_compilation_cache_dir": None,
    "ember_compilation_cache_max_size": 1 << 30,
}
_values: dict[str, Any] = {}

# Settings that change what a trace or its lowering produces: each is part of the jit cache
# key (as JAX keys on its trace-affecting config). The others, and why they may stay out.
IN_KEY = ("ember_enable_x64", "ember_default_device", "ember_cpu", "ember_cpu_lapack")
NOT_IN_KEY = {
    "ember_explain_cache_misses": "only logs",
    "ember_log_compiles": "only logs",
    "ember_check_tracer_leaks": "only raises on a leak; the traced code is the same",
    "ember_strict_donation": "only turns the unusable-donation warning into an error",
    "ember_compilation_cache_dir": "where compiled code is kept, not what it is",
    "ember_compilation_cache_max_size": "how much compiled code is kept",
}


_UNITS = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
          "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40}


def _size(name: str, value: Any) -> int:
    """Bytes, from an int or a size like "1GB", "512 MiB", "2e9"."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = str(value).strip().lower()
    found = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmgt]i?)?b?", text)
    if found is None or isinstance(value, bool):
        raise ValueError(f"{name} requires a size in bytes, as a number or with a unit "
                         f"(\"1GB\", \"512MiB\"), got {value!r}")
    return int(float(found.group(1)) * _UNITS[found.group(2) or ""])


_PARSE = {"ember_compilation_cache_max_size": _size}  # values that need more than a str


def _from_env(name: str, default: Any) -> Any:
    raw = os.environ.get(name.upper())
    if raw is None:
        return default
    if name in _PARSE:  # an unusable variable costs a warning, not every call
        try:
            return _PARSE[name](name.upper(), raw)
        except ValueError as e:
            warnings.warn(f"{e}; using the default, {default!r}", UserWarning, stacklevel=4)
            return default
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    return raw


def _canonical(name: str) -> str:
    key = name.replace("jax_", "ember_", 1) if name.startswith("jax_") else name
    if key not in _DEFAULTS:
        raise AttributeError(f"ember.config.update requires a known option "
                             f"({', '.join(sorted(_DEFAULTS))}), got {name!r}")
    return key


def update(name: str, value: Any) -> None:
    global _in_key
    key = _canonical(name)
    _values[key] = _PARSE[key](f"ember.config.update of {key}", value) if key in _PARSE else value
    _in_key = None


def read(name: str) -> Any:
    key = _canonical(name)
    if key not in _values:
        _values[key] = _from_env(key, _DEFAULTS[key])
    return _values[key]


_in_key: tuple[Any, ...] | None = None  # the values of IN_KEY; None after an update


def in_key() -> tuple[Any, ...]:
    """The values of IN_KEY, read on every jitted call (one tuple, made again after an
    update)."""
    global _in_key
    if _in_key is None:
        _in_key = tuple(read(name) for name in IN_KEY)
    return _in_key


def __getattr__(name: str) -> Any:
    if name.startswith(("ember_", "jax_")):
        return read(name)
    raise AttributeError(name)
