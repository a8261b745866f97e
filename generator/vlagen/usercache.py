"""The user's cache folder: what vlagen keeps between runs only to save time.

``$VLAGEN_CACHE_DIR`` if set (an empty value turns caching off), else ``vlagen`` in
``$XDG_CACHE_HOME`` (``~/.cache``). Each user of it keys its entries by everything that
shapes them, so an entry is never stale, only missing; any entry may be lost at any time, and
a folder or entry that cannot be made, read or written, or an entry that is not whole,
costs time, never a run.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import suppress
from pathlib import Path

__all__ = ["CACHE_ENV", "folder", "read", "write"]

CACHE_ENV = "VLAGEN_CACHE_DIR"


def folder(name: str) -> Path | None:
    """The cache's folder ``name``, made if needed; ``None`` where caching is off or the
    folder cannot be made."""
    root = os.environ.get(CACHE_ENV)
    if root == "":
        return None
    if root is None:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = os.path.join(base, "vlagen")
    path = Path(root) / name
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path


def read(where: Path | None, key: str) -> bytes | None:
    """The entry ``key`` of the folder ``where``; ``None`` if there is none, or none whole
    (each entry carries the sha256 of its data, checked here)."""
    if where is None:
        return None
    try:
        raw = (where / key).read_bytes()
    except OSError:
        return None
    check, _, data = raw.partition(b"\n")
    return data if check == hashlib.sha256(data).hexdigest().encode() else None


def write(where: Path | None, key: str, data: bytes) -> None:
    """Keep ``data`` as the entry ``key`` of ``where``, with its checksum: written to a
    temporary file of its own, then renamed, so that a run reading it meanwhile sees the
    old entry or the new, and a torn write is never read as an entry."""
    if where is None:
        return
    tmp = where / f".{key}.{os.urandom(8).hex()}"
    with suppress(OSError):
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(hashlib.sha256(data).hexdigest().encode() + b"\n" + data)
            os.replace(tmp, where / key)
        finally:
            with suppress(OSError):
                tmp.unlink(missing_ok=True)
