"""FileTree: the generated package in memory, path → bytes. Nothing here touches the disk."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath

from .errors import OutputError

__all__ = ["File", "FileTree", "Mode", "safe_relpath"]


class Mode(str, Enum):
    """Who owns a generated file after it is written."""

    GENERATED = "generated"  #: vlagen's: rewritten on regen; a hand edit is detected
    SCAFFOLD = "scaffold"  #: written once if absent; the user's from then on


@dataclass(frozen=True)
class File:
    content: bytes
    mode: Mode = Mode.GENERATED
    executable: bool = False

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


def safe_relpath(path: str) -> str:
    """``path`` as a normalized relative POSIX path, or :class:`OutputError` if it could
    land outside the output directory."""
    if not path or "\\" in path or "\0" in path:
        raise OutputError(f"refusing to write {path!r}: not a plain relative path")
    pure = PurePosixPath(path)
    if pure.is_absolute() or any(part in ("..", ".", "") for part in path.split("/")):
        raise OutputError(f"refusing to write {path!r}: it would escape the output directory")
    return str(pure)


class FileTree(Mapping[str, File]):
    """An immutable mapping of safe relative paths to files, iterated in sorted order."""

    def __init__(self, files: Mapping[str, File] | None = None) -> None:
        self._files = {safe_relpath(p): f for p, f in sorted((files or {}).items())}

    def __getitem__(self, path: str) -> File:
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def replace(self, updates: Mapping[str, File]) -> FileTree:
        """A new tree with ``updates`` applied (added or overwritten)."""
        return FileTree({**self._files, **updates})
