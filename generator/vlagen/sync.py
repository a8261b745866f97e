"""sync: compare a rendered tree with the output directory, and apply the difference.

One comparison serves every command: ``new``/``regen`` apply it, ``--dry-run`` lists it,
``diff`` prints it, ``check`` judges it. Each :class:`Change` is one of a closed set of actions
with a stated precondition, so no command has to re-derive what is on disk.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from .errors import ConflictError
from .manifest import FileRecord, Manifest
from .outdir import OutDir
from .plan import MANIFEST_PATH
from .tree import File, FileTree, Mode

__all__ = ["Action", "Change", "apply_changes", "compare", "unified_diff"]


class Action(str, Enum):
    CREATE = "create"  #: not on disk; will be written
    UPDATE = "update"  #: on disk as vlagen last wrote it, now generated differently
    DELETE = "delete"  #: vlagen wrote it before, no longer generates it, and it is unedited
    UNCHANGED = "unchanged"  #: on disk exactly as generated
    KEEP = "keep"  #: the user's (a scaffold on disk, or one they deleted); left alone
    CONFLICT = "conflict"  #: writing would destroy a user's edit or a file vlagen did not write


@dataclass(frozen=True)
class Change:
    action: Action
    path: str
    old: bytes | None  #: what is on disk
    new: File | None  #: what vlagen generates now
    reason: str = ""


def compare(
    tree: FileTree,
    manifest_bytes: bytes,
    root: Path,
    last: Manifest | None,
    *,
    writing: bool = False,
) -> list[Change]:
    """What it takes to bring ``root`` to ``tree``, given the manifest vlagen wrote ``last``.

    Reads every path it compares without following a symlink; ``writing`` picks the wording
    when one is found ("refusing to write through" for regen and new, "cannot compare
    through" for the commands that only read).

    Raises:
        OutputError: a symlink, or something other than a regular file, at a path compared.
    """
    with OutDir(root, writing=writing) as out:
        return _compare(tree, manifest_bytes, out, last)


def _compare(
    tree: FileTree, manifest_bytes: bytes, out: OutDir, last: Manifest | None
) -> list[Change]:
    recorded = last.files if last else {}
    changes = []
    for path, file in tree.items():
        old = out.read(path)
        changes.append(_compare_file(path, file, old, recorded.get(path)))
    for path in sorted(set(recorded) - set(tree)):
        old = out.read(path)
        if old is None:
            continue
        record = recorded[path]
        if record.mode is Mode.SCAFFOLD:
            changes.append(Change(Action.KEEP, path, old, None, "no longer generated; yours"))
        elif _sha(old) == record.sha256:
            changes.append(Change(Action.DELETE, path, old, None, "no longer generated"))
        else:
            changes.append(
                Change(Action.CONFLICT, path, old, None, "no longer generated, but edited by hand")
            )
    manifest = File(manifest_bytes)
    old_manifest = out.read(MANIFEST_PATH)
    action = (
        Action.CREATE
        if old_manifest is None
        else Action.UNCHANGED
        if old_manifest == manifest_bytes
        else Action.UPDATE
    )
    changes.append(Change(action, MANIFEST_PATH, old_manifest, manifest))
    return changes


def _compare_file(path: str, file: File, old: bytes | None, record: FileRecord | None) -> Change:
    if old is None:
        if file.mode is Mode.SCAFFOLD and record is not None:
            return Change(Action.KEEP, path, None, file, "deleted by you; not recreated")
        return Change(Action.CREATE, path, None, file)
    if file.mode is Mode.SCAFFOLD:
        return Change(Action.KEEP if old != file.content else Action.UNCHANGED, path, old, file)
    if old == file.content:
        return Change(Action.UNCHANGED, path, old, file)
    if record is None:
        return Change(Action.CONFLICT, path, old, file, "exists, and vlagen did not write it")
    if _sha(old) == record.sha256:
        return Change(Action.UPDATE, path, old, file)
    return Change(Action.CONFLICT, path, old, file, "edited by hand")


def apply_changes(changes: Sequence[Change], root: Path, *, force: bool = False) -> None:
    """Write, overwrite and delete files under ``root`` as ``changes`` say.

    All new contents are staged next to their destinations first; only when every one is
    staged are they renamed into place, the manifest last. A failure while staging leaves the
    old output as it was. No symlink below ``root`` is followed (see :mod:`vlagen.outdir`).

    Raises:
        ConflictError: if a change is a conflict and ``force`` is false; nothing is written.
        OutputError: a symlink (or a non-file) at a path to write, delete or stage under, or
            a symlinked directory on the way; checked before anything is written.
    """
    clashes = [c for c in changes if c.action is Action.CONFLICT]
    if clashes and not force:
        raise ConflictError(
            "refusing to overwrite files you changed (re-run with --force to discard the edits):",
            paths=[f"{c.path}: {c.reason}" for c in clashes],
        )
    # A conflict reaching here is forced: it is written, or deleted if no longer generated.
    acting = [
        c
        for c in changes
        if c.action in (Action.CREATE, Action.UPDATE, Action.DELETE, Action.CONFLICT)
    ]
    writes = sorted((c for c in acting if c.new), key=lambda c: c.path == MANIFEST_PATH)
    deletes = [c for c in acting if not c.new]
    with OutDir(root, writing=True) as out:
        # Everything that would be refused is refused before anything is written.
        for change in acting:
            out.check_writable(change.path)
        made_dirs = _makedirs(root)
        try:
            for change in writes:
                out.stage(
                    change.path,
                    change.new.content,
                    executable=change.new.executable,
                    made=made_dirs,
                )
        except BaseException:
            out.discard()
            for made in reversed(made_dirs):
                _rmdir_quiet(made)
            raise
        out.commit()
        for change in deletes:
            out.delete(change.path)


def unified_diff(changes: Iterable[Change]) -> list[list[str]]:
    """One unified diff (list of lines) per file whose generated content differs from disk."""
    out = []
    for change in changes:
        if change.action in (Action.UNCHANGED, Action.KEEP):
            continue
        old = _lines(change.old)
        new = _lines(change.new.content if change.new else None)
        out.append(
            list(
                difflib.unified_diff(
                    old,
                    new,
                    f"a/{change.path}" if change.old is not None else "/dev/null",
                    f"b/{change.path}" if change.new is not None else "/dev/null",
                )
            )
        )
    return out


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _makedirs(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing ancestors; return those created, outermost first."""
    made = []
    for parent in reversed([directory, *directory.parents]):
        if not parent.exists():
            parent.mkdir()
            made.append(parent)
    return made


def _rmdir_quiet(directory: Path) -> None:
    with contextlib.suppress(OSError):
        directory.rmdir()
