"""IR texts to a compiled module, through the persistent cache: the one place that decides
whether IREE runs, and says so (events, compile log, disk-miss explanations)."""

from __future__ import annotations

import functools
import logging
import os
import time
from pathlib import Path

from ember import config
from ember.compiler import pipeline
from ember.compiler.disk_cache import DiskCache

from . import events

logger = logging.getLogger("ember")
_OFF = {"", "off", "none", "false", "0"}


def cache_dir() -> Path | None:
    value = config.read("ember_compilation_cache_dir")
    if value is False or (isinstance(value, str) and value.strip().lower() in _OFF):
        return None
    if value is None:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "ember"
    return Path(value)


@functools.lru_cache(maxsize=8)
def _disk_cache(root: Path, max_bytes: int) -> DiskCache:
    return DiskCache(root, max_bytes)


def disk_cache() -> DiskCache | None:
    root = cache_dir()
    if root is None:
        return None
    cache = _disk_cache(root, int(config.read("ember_compilation_cache_max_size")))
    return cache if cache.usable else None


def to_vmfb(texts: dict[str, str], name: str, signature: str, event: str = "compile",
            target: str = "cpu") -> bytes:
    """The vmfb for lowered `texts`, from disk when an identical program was compiled."""
    cache = disk_cache()
    key = pipeline.cache_key(texts["ember"], target) if cache else None
    if cache is not None:
        vmfb, why = cache.get(key)
        if vmfb is not None:
            events.emit("disk_hit")
            return vmfb
        events.emit("disk_miss")
        if config.read("ember_explain_cache_misses"):
            logger.warning("PERSISTENT CACHE MISS for %s: %s", name, why)
    start = time.perf_counter()
    vmfb = pipeline.to_vmfb(texts["linalg"], target, name=name)
    events.emit(event)
    if config.read("ember_log_compiles"):
        logger.warning("Finished compiling %s for %s in %.1f ms", name, signature,
                       (time.perf_counter() - start) * 1e3)
    if cache is not None:
        cache.put(key, vmfb)
    return vmfb
