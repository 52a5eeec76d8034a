"""The persistent compilation cache: compiled modules on disk, keyed by everything that
decides their bytes.

A cached module is native code, so the cache trusts only a private directory (0700, owned by
this user) and entries nobody else can write. Each entry carries a checksum of its payload;
a corrupt, truncated or foreign entry is dropped with a warning and recompiled. Writes go to
a temporary file and are renamed into place, so concurrent writers never expose half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"EMBER-VMFB-1\n"
_DIGEST = hashlib.sha256().digest_size


@dataclass(frozen=True)
class CacheKey:
    """Named parts, each hashed; a miss can say which part changed since the last entry."""

    parts: tuple[tuple[str, str], ...]  # (name, value); "ir" names the program

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for name, value in self.parts:
            h.update(f"{name}={hashlib.sha256(value.encode()).hexdigest()}\n".encode())
        return h.hexdigest()

    @property
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

    def _trusted(self, path: Path) -> bool:
        st = path.stat()
        if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            warnings.warn(f"ember compilation cache refused {path}: owned by another user or "
                          f"writable by others", CacheWarning, stacklevel=4)
            return False
        return True

    # -- entries
    def _entry(self, key: CacheKey) -> Path:
        return self.root / f"{key.digest}.vmfb"

    def _sidecar(self, key: CacheKey) -> Path:
        return self.root / f"{key.program}.key.json"

    def get(self, key: CacheKey) -> tuple[bytes | None, str]:
        """(payload, why it missed); payload is None on a miss."""
        if not self.usable:
            return None, "the cache directory is unusable"
        path = self._entry(key)
        try:
            if not self._trusted(path):
                return None, f"{path.name} is not trusted"
            data = path.read_bytes()
        except FileNotFoundError:
            return None, self._why_missing(key)
        except OSError as e:
            return None, f"{path.name} could not be read ({e})"
        payload = _unpack(data)
        if payload is None:
            warnings.warn(f"ember compilation cache: {path} is corrupt or not Ember's; "
                          f"ignoring and replacing it", CacheWarning, stacklevel=3)
            path.unlink(missing_ok=True)
            return None, f"{path.name} was corrupt"
        os.utime(path)  # recently used: last to be evicted
        return payload, ""

    def _why_missing(self, key: CacheKey) -> str:
        try:
            before = json.loads(self._sidecar(key).read_text())
        except (OSError, ValueError):
            return "this program was never compiled with this cache"
        now = key.summary()
        changed = [f"{n} now {now.get(n)!r} and before {before.get(n)!r}"
                   for n in sorted(set(now) | set(before)) if now.get(n) != before.get(n)]
        return "the program was compiled before, but " + "; ".join(changed)

    def put(self, key: CacheKey, payload: bytes) -> None:
        if not self.usable:
            return
        data = MAGIC + hashlib.sha256(payload).digest() + payload
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)  # it may have been removed
            _atomic_write(self.root, self._entry(key), data)
            _atomic_write(self.root, self._sidecar(key), json.dumps(key.summary()).encode())
            self._evict()
        except OSError as e:  # a full disk or a vanished directory costs a compile, no more
            warnings.warn(f"ember compilation cache could not write to {self.root} ({e})",
                          CacheWarning, stacklevel=3)

    def _evict(self) -> None:
        """Least recently used entries go first until the cache fits its size cap."""
        entries = []
        for p in self.root.glob("*.vmfb"):
            try:
                st = p.stat()
            except FileNotFoundError:  # another process evicted it
                continue
            entries.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries, key=lambda e: e[0]):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size

    def clear(self) -> None:
        for p in self.root.glob("*"):
            p.unlink(missing_ok=True)


def _unpack(data: bytes) -> bytes | None:
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _DIGEST:
        return None
    digest = data[len(MAGIC):len(MAGIC) + _DIGEST]
    payload = data[len(MAGIC) + _DIGEST:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def _atomic_write(root: Path, path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        raise
