"""The persistent compilation cache: compiled modules on disk, keyed by everything that
decides their bytes.

A cached module is native code, so the cache trusts only a private directory (0700, owned by
this user) and entries nobody else can write. An entry holds the digest of its full key and
a checksum of key and payload together: an entry renamed, swapped or linked to another key's
name is refused on load, as are corrupt and truncated ones (all dropped with a warning and
recompiled). Entries are read only from regular files (not symlinks, FIFOs or devices).
Writes go to a temporary file and are renamed into place, so concurrent writers never
expose half a file. Eviction and `clear` touch only the files this cache names: entries
(`<digest>.vmfb`), key sidecars (`<digest>.key.json`) and temporary files left by a killed
writer; a read-only cache is used as it is.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import re
import stat
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"EMBER-VMFB-2\n"
_DIGEST = hashlib.sha256().digest_size
_HEADER = len(MAGIC) + 2 * _DIGEST
_OURS = re.compile(r"[0-9a-f]{64}\.(vmfb|key\.json)")
_TMP = ".tmp-"
STALE_TMP_SECONDS = 3600  # a writer renames its file within seconds; older ones were killed


@dataclass(frozen=True)
class DiskKey:
    """Named parts, each hashed; a miss can say which part changed since the last entry."""

    parts: tuple[tuple[str, str], ...]  # (name, value); "ir" names the program

    @functools.cached_property  # hashing a program with a large constant takes a while
    def digest(self) -> str:
        h = hashlib.sha256()
        for name, value in self.parts:
            h.update(f"{name}={hashlib.sha256(value.encode()).hexdigest()}\n".encode())
        return h.hexdigest()

    @functools.cached_property
    def program(self) -> str:
        """Which program this is, whatever the compiler and flags (names the sidecar)."""
        return hashlib.sha256(dict(self.parts)["ir"].encode()).hexdigest()

    def summary(self) -> dict[str, str]:
        return {n: (v if len(v) < 200 else hashlib.sha256(v.encode()).hexdigest()[:16])
                for n, v in self.parts}


class CacheWarning(UserWarning):
    pass


class DiskCache:
    def __init__(self, root: str | os.PathLike, max_bytes: int = 1 << 30):
        self.root = Path(root).expanduser()
        self.max_bytes = max_bytes
        self.usable = self._prepare()
        self._write_warned = False
        # The directory's size at the last scan and what this cache wrote since: a put scans
        # (and evicts) only when their sum passes the cap, or when a sixteenth of the cap
        # was written since (other processes write here too). Scanning on every put made a
        # run's compiles quadratic in the number of entries (13,000 files: a stat each).
        self._scanned: int | None = None
        self._unscanned = 0

    # -- safety
    def _prepare(self) -> bool:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = self.root.stat()
        except OSError as e:
            warnings.warn(f"ember compilation cache disabled: cannot use {self.root} ({e})",
                          CacheWarning, stacklevel=3)
            return False
        if st.st_uid != os.getuid() or st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            warnings.warn(f"ember compilation cache disabled: {self.root} must be owned by you "
                          f"and private (mode 0700), got owner {st.st_uid} and mode "
                          f"{oct(st.st_mode & 0o777)}. A cached module is native code.",
                          CacheWarning, stacklevel=3)
            return False
        return True

    def _read(self, path: Path) -> bytes | str:
        """The bytes of an entry this cache can trust, or why not (FileNotFoundError if
        there is none). Opened without following links and without blocking (a FIFO)."""
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return "not a regular file"
            if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return "owned by another user or writable by others"
            return f.read()

    # -- entries
    def _entry(self, key: DiskKey) -> Path:
        return self.root / f"{key.digest}.vmfb"

    def _sidecar(self, key: DiskKey) -> Path:
        return self.root / f"{key.program}.key.json"

    def get(self, key: DiskKey) -> tuple[bytes | None, str]:
        """(payload, why it missed); payload is None on a miss."""
        if not self.usable:
            return None, "the cache directory is unusable"
        path = self._entry(key)
        try:
            data = self._read(path)
        except FileNotFoundError:
            return None, self._why_missing(key)
        except OSError as e:
            data = "a symbolic link" if e.errno == errno.ELOOP else f"unreadable ({e})"
        payload = data if isinstance(data, str) else _unpack(data, key)
        if isinstance(payload, str):
            self.discard(key, payload)
            return None, f"{path.name} was refused ({payload})"
        try:
            os.utime(path)  # recently used: last to be evicted
        except OSError:  # a read-only cache (a container image) is used as it is
            pass
        return payload, ""

    def discard(self, key: DiskKey, why: str) -> None:
        """Drop an entry that cannot be used (refused, or IREE cannot load it): it is
        recompiled and written again."""
        path = self._entry(key)
        warnings.warn(f"ember compilation cache: ignoring and replacing {path} ({why})",
                      CacheWarning, stacklevel=3)
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass

    def _why_missing(self, key: DiskKey) -> str:
        try:
            before = json.loads(self._read(self._sidecar(key)))
            assert isinstance(before, dict)
        except (OSError, ValueError, TypeError, AssertionError):
            return "this program was never compiled with this cache"
        now = key.summary()
        changed = [f"{n} now {now.get(n)!r} and before {before.get(n)!r}"
                   for n in sorted(set(now) | set(before)) if now.get(n) != before.get(n)]
        return "the program was compiled before, but " + "; ".join(changed)

    def put(self, key: DiskKey, payload: bytes) -> None:
        if not self.usable:
            return
        owner = bytes.fromhex(key.digest)
        data = MAGIC + owner + hashlib.sha256(owner + payload).digest() + payload
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)  # it may have been removed
            sidecar = json.dumps(key.summary()).encode()
            _atomic_write(self.root, self._entry(key), data)
            _atomic_write(self.root, self._sidecar(key), sidecar)
            self._unscanned += len(data) + len(sidecar)
            if (self._scanned is None or self._scanned + self._unscanned > self.max_bytes
                    or self._unscanned > self.max_bytes // 16):
                self._evict()
        except OSError as e:  # a full disk, a read-only or vanished directory: a compile
            if not self._write_warned:
                self._write_warned = True
                warnings.warn(f"ember compilation cache could not write to {self.root} ({e})"
                              f"; compiled code is not kept (said once)", CacheWarning,
                              stacklevel=3)

    def _files(self) -> list[tuple[float, int, Path]]:
        """(last use, size, path) of every file this cache wrote: entries, key sidecars and
        temporary files a killed writer left (those only once stale)."""
        files, now = [], time.time()
        for p in self.root.iterdir():
            ours = _OURS.fullmatch(p.name)
            if not ours and not p.name.startswith(_TMP):
                continue
            try:
                st = p.lstat()
            except FileNotFoundError:  # another process evicted it
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if ours is None and now - st.st_mtime < STALE_TMP_SECONDS:
                continue  # another process is writing it
            files.append((st.st_mtime if ours else 0.0, st.st_size, p))
        return files

    def _evict(self) -> None:
        """Least recently used files go first (stale temporary files before all) until the
        cache fits its size cap."""
        files = self._files()
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files, key=lambda e: e[0]):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
        self._scanned, self._unscanned = total, 0

    def clear(self) -> None:
        """Remove what this cache wrote; other files in the directory stay."""
        for _, _, path in self._files():
            path.unlink(missing_ok=True)
        self._scanned, self._unscanned = None, 0


def _unpack(data: bytes, key: DiskKey) -> bytes | str:
    """The payload of an entry written for `key`, or why the bytes are not one."""
    if not data.startswith(MAGIC) or len(data) < _HEADER:
        return "not an Ember cache entry, or truncated"
    owner = data[len(MAGIC):len(MAGIC) + _DIGEST]
    digest, payload = data[len(MAGIC) + _DIGEST:_HEADER], data[_HEADER:]
    if hashlib.sha256(owner + payload).digest() != digest:
        return "corrupt: its checksum does not match"
    if owner != bytes.fromhex(key.digest):
        return "written for another key (swapped or linked)"
    return payload


def _atomic_write(root: Path, path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=root, prefix=_TMP)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        raise
