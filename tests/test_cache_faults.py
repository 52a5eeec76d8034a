"""Fault injection on the persistent cache: entries swapped, linked, forged with a valid
checksum, FIFOs, read-only caches, foreign and leftover files. Each costs a recompile and a
warning at most; never a wrong answer, a hang, a crash or a deleted file that is not the
cache's."""

import errno
import hashlib
import os
import threading
import time

import numpy as np
import pytest

import ember
from ember.compiler import disk_cache
from ember.compiler.disk_cache import MAGIC, CacheWarning, DiskCache, DiskKey
from helpers import assert_close

X = np.arange(3, dtype=np.float32)


def _run(fun, *args):
    """(compiles, result) of a fresh jit of `fun` (the in-memory caches cleared)."""
    ember.clear_caches()
    with ember.count_events("compile") as n:
        out = ember.jit(fun)(*args)
    return n(), out


def _entries(root, before=()):
    return sorted(set(root.glob("*.vmfb")) - set(before))


def double(x):
    return x * 2


def plus_100(x):
    return x + 100


def long_result(x):
    return x.sum() + np.zeros(10_000, np.float32)  # f32[10000] from the same argument


def _two_entries(root, second=plus_100):
    _run(double, X)
    (a,) = _entries(root)
    _run(second, X)
    (b,) = _entries(root, [a])
    return a, b


@pytest.mark.parametrize("second", [plus_100, long_result])
def test_swapped_entries_are_refused(disk, second):
    a, b = _two_entries(disk, second)
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    with pytest.warns(CacheWarning, match="written for another key"):
        compiles, out = _run(double, X)
    assert compiles == 1
    assert_close(out, X * 2)
    assert a.read_bytes() == da  # replaced by its own entry


def test_an_entry_linked_to_another_is_refused(disk):
    a, b = _two_entries(disk)
    a.unlink()
    a.symlink_to(b)
    with pytest.warns(CacheWarning, match="symbolic link"):
        compiles, out = _run(double, X)
    assert compiles == 1
    assert_close(out, X * 2)
    assert not a.is_symlink() and b.exists()


def test_an_entry_with_a_valid_checksum_and_no_module_inside_is_recompiled(disk):
    _run(double, X)
    (path,) = _entries(disk)
    owner = path.read_bytes()[len(MAGIC):len(MAGIC) + 32]
    garbage = b"\x00" * 64
    path.write_bytes(MAGIC + owner + hashlib.sha256(owner + garbage).digest() + garbage)
    with pytest.warns(CacheWarning, match="IREE cannot load it"):
        compiles, out = _run(double, X)
    assert compiles == 1
    assert_close(out, X * 2)
    assert _run(double, X)[0] == 0  # the rewritten entry is good


def test_a_fifo_in_place_of_an_entry_or_sidecar_does_not_hang(tmp_path):
    cache = DiskCache(tmp_path / "c")
    key = DiskKey((("ir", "p"),))
    os.mkfifo(cache._entry(key))
    other = DiskKey((("ir", "q"),))
    os.mkfifo(cache._sidecar(other))
    results = []
    reader = threading.Thread(target=lambda: results.extend([cache.get(key), cache.get(other)]),
                              daemon=True)
    with pytest.warns(CacheWarning, match="not a regular file"):
        reader.start()
        reader.join(timeout=20)
    assert not reader.is_alive(), "reading a FIFO blocked"
    (payload, why), (payload2, why2) = results
    assert payload is None and "not a regular file" in why
    assert payload2 is None and "never compiled" in why2


def test_a_read_only_cache_is_used_as_it_is(disk, monkeypatch):
    _run(double, X)

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(disk_cache.os, "utime", read_only)
    monkeypatch.setattr(disk_cache.tempfile, "mkstemp", read_only)
    compiles, out = _run(double, X)  # a hit: no touching the file
    assert compiles == 0
    assert_close(out, X * 2)
    with pytest.warns(CacheWarning, match="said once") as caught:
        assert _run(plus_100, X)[0] == 1
        assert _run(lambda x: x - 3, X)[0] == 1
    assert len(caught) == 1


def test_eviction_and_clear_touch_only_the_caches_files(tmp_path):
    root = tmp_path / "c"
    cache = DiskCache(root, max_bytes=3000)
    mine = root / "model.vmfb"
    mine.write_bytes(bytes(5000))
    notes = root / "notes.txt"
    notes.write_text("keep me")
    fresh_tmp = root / ".tmp-writing"  # another process is writing it
    fresh_tmp.write_bytes(bytes(100))
    stale_tmp = root / ".tmp-killed"  # left by a killed writer
    stale_tmp.write_bytes(bytes(1000))
    old = time.time() - 2 * disk_cache.STALE_TMP_SECONDS
    os.utime(stale_tmp, (old, old))
    keys = [DiskKey((("ir", f"program {i}"),)) for i in range(4)]
    for key in keys:
        cache.put(key, bytes(1000))
    assert mine.exists() and notes.exists() and fresh_tmp.exists()
    assert not stale_tmp.exists()  # counted and evicted first
    ours = [p for p in root.iterdir() if disk_cache._OURS.fullmatch(p.name)]
    assert sum(p.stat().st_size for p in ours) <= 3000
    sidecars = [p for p in ours if p.name.endswith(".key.json")]
    assert len(sidecars) < len(keys)  # sidecars are evicted too
    cache.clear()
    assert sorted(p.name for p in root.iterdir()) == [".tmp-writing", "model.vmfb",
                                                       "notes.txt"]


def test_a_size_with_a_unit_configures_the_cap(tmp_path, monkeypatch):
    from ember import config

    for text, size in [("1GB", 10**9), ("512MiB", 512 << 20), ("2e9", 2 * 10**9)]:
        monkeypatch.setenv("EMBER_COMPILATION_CACHE_MAX_SIZE", text)
        assert config._from_env("ember_compilation_cache_max_size", 1) == size
    monkeypatch.setenv("EMBER_COMPILATION_CACHE_MAX_SIZE", "lots")
    with pytest.warns(UserWarning, match="EMBER_COMPILATION_CACHE_MAX_SIZE requires a size"):
        assert config._from_env("ember_compilation_cache_max_size", 7) == 7
    with pytest.raises(ValueError, match="ember_compilation_cache_max_size requires a size"):
        config.update("ember_compilation_cache_max_size", "lots")
