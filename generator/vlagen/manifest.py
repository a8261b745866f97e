"""The manifest, ``.vlagen/manifest.json``: what vlagen last wrote, so that regen can tell a
stale file from a hand-edited one and remove files it no longer generates."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .errors import OutputError, UsageError
from .outdir import OutDir
from .plan import MANIFEST_PATH, Plan
from .tree import FileTree, Mode, safe_relpath

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
        path = root / MANIFEST_PATH
        with OutDir(root, writing=writing) as out:
            raw = out.read(MANIFEST_PATH)
        if raw is None:
            return None
        try:
            data = json.loads(raw.decode("utf-8"))
            if data["format"] != FORMAT:
                raise ValueError(f"format {data['format']!r}, this vlagen reads {FORMAT}")
            return cls(
                vlagen=data["vlagen"],
                ruff=data["ruff"],
                spec_hash=data["spec_hash"],
                targets=tuple(data["targets"]),
                files={
                    safe_relpath(p): FileRecord(Mode(r["mode"]), r["sha256"])
                    for p, r in data["files"].items()
                },
            )
        except (ValueError, KeyError, TypeError, OutputError) as exc:
            raise UsageError(
                f"{path}: unreadable vlagen manifest ({exc}); restore it from version control, "
                "or delete it and run `vlagen new --force`"
            ) from None
