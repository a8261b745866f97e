"""The user's cache folder: what vlagen keeps between runs only to save time.

``$VLAGEN_CACHE_DIR`` if set (an empty value turns caching off), else ``vlagen`` in
``$XDG_CACHE_HOME`` (``~/.cache``). Each user of it keys its entries by everything that
shapes them, so an entry is never stale, only missing; any entry may be lost at any time, and
a folder or entry that cannot be made, read or written costs time, never a run.
"""

from __future__ import annotations

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
    """The entry ``key`` of the folder ``where``, ``None`` if there is none to read."""
    if where is None:
        return None
    try:
        return (where / key).read_bytes()
    except OSError:
        return None


def write(where: Path | None, key: str, data: bytes) -> None:
    """Keep ``data`` as the entry ``key`` of ``where``: whole or not at all (written beside it,
    then renamed), so that a run reading it at the same time sees the old entry or the new."""
    if where is None:
        return
    tmp = where / f".{key}.{os.getpid()}.tmp"
    with suppress(OSError):
        tmp.write_bytes(data)
        os.replace(tmp, where / key)
    with suppress(OSError):
        tmp.unlink(missing_ok=True)
