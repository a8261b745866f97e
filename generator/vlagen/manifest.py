"""The manifest, ``.vlagen/manifest.json``: what vlagen last wrote, so that regen can tell a
stale file from a hand-edited one and remove files it no longer generates."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import OutputError, UsageError, short_repr
from .outdir import OutDir
from .paths import MANIFEST_PATH
from .tree import FileTree, Mode, safe_relpath

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["FileRecord", "Manifest"]

FORMAT = 1


@dataclass(frozen=True)
class FileRecord:
    mode: Mode
    sha256: str


@dataclass(frozen=True)
class Manifest:
    vlagen: str
    ruff: str
    spec_hash: str
    targets: tuple[str, ...]
    files: dict[str, FileRecord]

    @classmethod
    def for_tree(cls, tree: FileTree, plan: Plan, ruff: str) -> Manifest:
        return cls(
            vlagen=plan.vlagen_version,
            ruff=ruff,
            spec_hash=plan.spec_hash,
            targets=tuple(t.decl.key for t in plan.targets),
            files={p: FileRecord(f.mode, f.sha256) for p, f in tree.items()},
        )

    def to_bytes(self) -> bytes:
        data = {
            "format": FORMAT,
            "vlagen": self.vlagen,
            "ruff": self.ruff,
            "spec_hash": self.spec_hash,
            "targets": list(self.targets),
            "files": {
                p: {"mode": r.mode.value, "sha256": r.sha256} for p, r in sorted(self.files.items())
            },
        }
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()

    @classmethod
    def read(cls, root: Path, *, writing: bool = False) -> Manifest | None:
        """The manifest under ``root``, ``None`` if there is none.

        Raises:
            UsageError: if it exists but cannot be understood.
            OutputError: if it, or ``.vlagen``, is a symlink (``writing`` picks the wording).
        """
        with OutDir(root, writing=writing) as out:
            raw = out.read(MANIFEST_PATH)
        return None if raw is None else cls.from_bytes(raw, root / MANIFEST_PATH)

    @classmethod
    def from_bytes(cls, raw: bytes, path: Path) -> Manifest:
        """The manifest in ``raw``, read from ``path`` (named in the error).

        Raises:
            UsageError: if it cannot be understood.
        """
        try:
            return cls._parse(json.loads(raw.decode("utf-8")))
        except (ValueError, OutputError, RecursionError) as exc:
            raise UsageError(
                f"{path}: unreadable vlagen manifest ({str(exc)[:200]}); restore it from version "
                "control, or delete it and run `vlagen new --force`"
            ) from None

    @classmethod
    def _parse(cls, data: Any) -> Manifest:
        """A manifest from decoded JSON, every field's type checked; ``ValueError`` if not."""
        top = _object(data, "the manifest", _KEYS)
        if type(top["format"]) is not int or top["format"] != FORMAT:
            raise ValueError(f"format {short_repr(top['format'])}, this vlagen reads {FORMAT}")
        for key in ("vlagen", "ruff", "spec_hash"):
            _string(top[key], key)
        targets = top["targets"]
        if not isinstance(targets, list):
            raise ValueError(f"targets must be a list, got {_kind(targets)}")
        for i, target in enumerate(targets):
            _string(target, f"targets[{i}]")
        files = top["files"]
        if not isinstance(files, dict):
            raise ValueError(f"files must be an object, got {_kind(files)}")
        records: dict[str, FileRecord] = {}
        for name, record in files.items():
            where = f"files[{short_repr(name)}]"
            entry = _object(record, where, ("mode", "sha256"))
            mode = entry["mode"]
            if not isinstance(mode, str) or mode not in _MODES:
                raise ValueError(f"{where}.mode must be one of {', '.join(_MODES)}")
            if not isinstance(entry["sha256"], str) or not _SHA256.fullmatch(entry["sha256"]):
                raise ValueError(f"{where}.sha256 must be 64 lowercase hex digits")
            records[safe_relpath(name)] = FileRecord(Mode(mode), entry["sha256"])
        return cls(
            vlagen=top["vlagen"],
            ruff=top["ruff"],
            spec_hash=top["spec_hash"],
            targets=tuple(targets),
            files=records,
        )


_KEYS = ("format", "vlagen", "ruff", "spec_hash", "targets", "files")
_MODES = tuple(m.value for m in Mode)
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), short_repr(value))


def _object(value: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """``value`` if it is a JSON object with exactly ``keys``; else ``ValueError``."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be an object, got {_kind(value)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(missing)}")
    extra = [k for k in value if k not in keys]
    if extra:
        raise ValueError(f"{where} has unknown keys: {short_repr(extra)}")
    return value


def _string(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, got {_kind(value)}")
