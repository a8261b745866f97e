"""sync: compare a rendered tree with the output directory, and apply the difference.

One comparison serves every command: ``new``/``regen`` apply it, ``--dry-run`` lists it,
``diff`` prints it, ``check`` judges it. Each :class:`Change` is one of a closed set of actions
with a stated precondition, so no command has to re-derive what is on disk.

A generated file the user edited is merged, not overwritten: vlagen keeps what it last wrote
for each generated file under ``.vlagen/base/<sha256>`` (content-addressed, so an unchanged
file costs nothing on regen and git stores each version once), and on regen merges the edits
into the new output (:mod:`vlagen.merge`). ``--force`` discards edits instead, and keeps a
copy of each under ``.vlagen/kept/``. Nothing the user wrote is ever removed without a copy.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from .errors import ConflictError
from .manifest import FileRecord, Manifest
from .merge import MARKERS, has_conflict_markers, merge
from .outdir import OutDir
from .paths import BASE_DIR, KEPT_DIR, MANIFEST_PATH, base_path
from .tree import File, FileTree, Mode

__all__ = [
    "Action",
    "Change",
    "apply_changes",
    "base_path",
    "compare",
    "line_counts",
    "refuse",
    "unified_diff",
]


class Action(str, Enum):
    CREATE = "create"  #: not on disk; will be written
    UPDATE = "update"  #: on disk as vlagen last wrote it, now generated differently
    MERGE = "merge"  #: edited by the user and generated differently: the edits are merged in
    DELETE = "delete"  #: vlagen wrote it before, no longer generates it (a copy kept if edited)
    UNCHANGED = "unchanged"  #: on disk exactly as generated
    EDITED = "edited"  #: edited by the user, generated as before: left as the user made it
    KEEP = "keep"  #: the user's (a scaffold on disk, or one they deleted); left alone
    CONFLICT = "conflict"  #: the user's edit and the new output overlap: marked in the file
    OVERWRITE = "overwrite"  #: ``--force``: the user's edit replaced, a copy kept
    REFUSE = "refuse"  #: cannot be merged, so nothing at all is written without ``--force``


#: Actions whose file holds a user's edit after the run: ``check`` reports them, regen exits 1
#: on the ones that need the user (conflicts), and so does ``--dry-run``.
NEEDS_USER = (Action.CONFLICT, Action.REFUSE)


@dataclass(frozen=True)
class Change:
    action: Action
    path: str
    old: bytes | None  #: what is on disk
    new: File | None  #: what vlagen generates now
    reason: str = ""
    write: bytes | None = None  #: what will be written at ``path`` (``None``: nothing)
    kept: str | None = None  #: where the user's copy is kept before it is overwritten

    @property
    def shown(self) -> bool:
        """Whether a user sees this change (the merge bases are vlagen's bookkeeping)."""
        return not self.path.startswith(f"{BASE_DIR}/")


def compare(
    tree: FileTree,
    manifest: Manifest,
    root: Path,
    last: Manifest | None,
    *,
    writing: bool = False,
    force: bool = False,
) -> list[Change]:
    """What it takes to bring ``root`` to ``tree``, given the manifest vlagen wrote ``last``.

    Edited files are merged here, in memory, so that ``--dry-run``, ``diff`` and ``check``
    report exactly what regen would write. ``force`` replaces edits instead (keeping copies).
    Reads every path it compares without following a symlink; ``writing`` picks the wording
    when one is found ("refusing to write through" for regen and new, "cannot compare
    through" for the commands that only read).

    Raises:
        OutputError: a symlink, or something other than a regular file, at a path compared.
    """
    with OutDir(root, writing=writing) as out:
        return _Comparison(out, last, force).run(tree, manifest)


class _Comparison:
    def __init__(self, out: OutDir, last: Manifest | None, force: bool) -> None:
        self.out = out
        self.recorded = last.files if last else {}
        self.force = force
        self.kept_names: set[str] = set()

    def run(self, tree: FileTree, manifest: Manifest) -> list[Change]:
        changes = [self._file(path, file, self.out.read(path)) for path, file in tree.items()]
        carried: dict[str, FileRecord] = {}
        added = [path for path in tree if path not in self.recorded]
        for path in sorted(set(self.recorded) - set(tree)):
            old = self.out.read(path)
            if old is None:
                continue
            changes.append(self._obsolete(path, old, self.recorded[path], _moved_to(path, added)))
        for change in changes:
            # A conflict left as it is on disk keeps the record (and base) it was made from,
            # so its merge, once resolved, is against what the user's file is based on.
            if change.action is Action.CONFLICT and change.write is None:
                carried[change.path] = self.recorded[change.path]
        manifest = replace(manifest, files={**manifest.files, **carried})
        changes += self._bases(tree, manifest)
        changes.append(self._plain(MANIFEST_PATH, File(manifest.to_bytes())))
        return changes

    def _plain(self, path: str, file: File) -> Change:
        """A file only vlagen writes (the manifest, a merge base): written when it differs."""
        old = self.out.read(path)
        if old is None:
            return Change(Action.CREATE, path, None, file, write=file.content)
        if old == file.content:
            return Change(Action.UNCHANGED, path, old, file)
        return Change(Action.UPDATE, path, old, file, write=file.content)

    def _file(self, path: str, file: File, raw: bytes | None) -> Change:
        record = self.recorded.get(path)
        old = _lf(raw)
        if old is None:
            if file.mode is Mode.SCAFFOLD and record is not None:
                return Change(Action.KEEP, path, None, file, "deleted by you; not recreated")
            return Change(Action.CREATE, path, None, file, write=file.content)
        if file.mode is Mode.SCAFFOLD:
            action = Action.KEEP if old != file.content else Action.UNCHANGED
            return Change(action, path, raw, file)
        if old == file.content:
            return Change(Action.UNCHANGED, path, raw, file)
        if record is None:
            return self._unmergeable(path, raw, file, "exists, and vlagen did not write it")
        if _sha(old) == record.sha256:
            return Change(Action.UPDATE, path, raw, file, write=file.content)
        return self._edited(path, raw, old, file, record)

    def _edited(self, path: str, raw: bytes, old: bytes, file: File, record: FileRecord) -> Change:
        """A generated file the user changed since vlagen wrote the one ``record`` describes
        (``old`` is ``raw``, the file on disk, with CRLF line ends read as LF)."""
        if self.force:
            return self._overwrite(path, raw, file)
        if has_conflict_markers(old):
            return Change(
                Action.CONFLICT,
                path,
                raw,
                file,
                f"it holds conflict markers ({MARKERS[0].decode().strip()} ...); resolve them, "
                "then run regen again",
            )
        if record.sha256 == file.sha256:
            return Change(Action.EDITED, path, raw, file, "edited by you")
        base = _lf(self.out.read(base_path(record.sha256)))
        if base is None or _sha(base) != record.sha256:
            return self._unmergeable(
                path,
                raw,
                file,
                f"edited by you, and its merge base {base_path(record.sha256)} is missing or "
                "damaged; restore .vlagen/ from version control",
            )
        merged = merge(base, old, file.content)
        if merged.conflicts:
            regions = f"{merged.conflicts} region{'s' * (merged.conflicts != 1)}"
            return Change(
                Action.CONFLICT,
                path,
                raw,
                file,
                f"{regions} you and vlagen both changed, marked in the file",
                write=merged.content,
            )
        if merged.content == file.content:
            return Change(
                Action.UPDATE, path, raw, file, "your edit is now generated", file.content
            )
        if merged.content == old:
            return Change(Action.EDITED, path, raw, file, "edited by you; already up to date")
        return Change(
            Action.MERGE, path, raw, file, "your edits merged into the new output", merged.content
        )

    def _unmergeable(self, path: str, old: bytes, file: File, why: str) -> Change:
        if self.force:
            return self._overwrite(path, old, file)
        return Change(Action.REFUSE, path, old, file, why)

    def _overwrite(self, path: str, old: bytes, file: File) -> Change:
        kept = self._kept_path(path, old)
        return Change(
            Action.OVERWRITE,
            path,
            old,
            file,
            f"your version saved as {kept}",
            write=file.content,
            kept=kept,
        )

    def _obsolete(self, path: str, old: bytes, record: FileRecord, moved: str | None) -> Change:
        """A file vlagen wrote before and no longer generates (at this path: ``moved``, where
        it now generates it, if it looks moved)."""
        if record.mode is Mode.SCAFFOLD:
            return Change(Action.KEEP, path, old, None, "no longer generated; yours")
        if _sha(_lf(old)) == record.sha256:
            return Change(Action.DELETE, path, old, None, "no longer generated")
        if self.force:
            kept = self._kept_path(path, old)
            return Change(
                Action.DELETE, path, old, None, f"your version saved as {kept}", kept=kept
            )
        if moved is not None:
            why = (
                f"generated at {moved} now, without your edit, which stays here: carry it "
                "over, then delete this file (or use --force, which keeps a copy)"
            )
        else:
            why = (
                "no longer generated, but edited by you: delete it, or move your code to a "
                "file of your own (or use --force, which keeps a copy)"
            )
        return Change(Action.CONFLICT, path, old, None, why)

    def _kept_path(self, path: str, content: bytes) -> str:
        """The first of ``.vlagen/kept/PATH``, ``PATH.1``, ``PATH.2``... that is free or
        already holds ``content``: a copy kept earlier is never overwritten."""
        stem = f"{KEPT_DIR}/{path}"
        for n in range(1_000):
            candidate = stem if n == 0 else f"{stem}.{n}"
            if candidate in self.kept_names:
                continue
            there = self.out.read(candidate)
            if there is None or there == content:
                self.kept_names.add(candidate)
                return candidate
        raise ConflictError(f"{self.out.root / KEPT_DIR} holds 1000 copies of {path}; clear it")

    def _bases(self, tree: FileTree, manifest: Manifest) -> list[Change]:
        """Bring the merge bases to one per generated file the new manifest records."""
        needed = {base_path(r.sha256) for r in manifest.files.values() if r.mode is Mode.GENERATED}
        contents = {base_path(f.sha256): f for f in tree.values() if f.mode is Mode.GENERATED}
        changes = [self._plain(path, contents[path]) for path in sorted(contents)]
        stale = {base_path(r.sha256) for r in self.recorded.values() if r.mode is Mode.GENERATED}
        for path in sorted(stale - needed):
            old = self.out.read(path)
            if old is not None:
                changes.append(Change(Action.DELETE, path, old, None))
        return changes


def _moved_to(path: str, added: Sequence[str]) -> str | None:
    """The one newly generated path that differs from ``path`` in a single folder's name
    (``src/old_name/env/rewards.py`` → ``src/new_name/env/rewards.py`` after a renamed
    package), or ``None``."""
    parts = path.split("/")
    found = [
        other
        for other in added
        if len(names := other.split("/")) == len(parts)
        and names[-1] == parts[-1]
        and sum(a != b for a, b in zip(names, parts, strict=True)) == 1
    ]
    return found[0] if len(found) == 1 else None


def refuse(changes: Sequence[Change]) -> None:
    """Raise :class:`ConflictError` naming each file vlagen cannot merge, if there is one:
    then nothing may be written (and a dry run says so just as the run would)."""
    refused = [c for c in changes if c.action is Action.REFUSE]
    if refused:
        raise ConflictError(
            "refusing to overwrite files vlagen cannot merge; nothing was written (--force "
            "overwrites them and keeps a copy of each under .vlagen/kept/):",
            paths=[f"{c.path}: {c.reason}" for c in refused],
        )


def apply_changes(changes: Sequence[Change], root: Path) -> None:
    """Write, overwrite and delete files under ``root`` as ``changes`` say.

    All new contents (and the copies of overwritten edits) are staged next to their
    destinations first; only when every one is staged are they renamed into place, the
    manifest last. A failure while staging leaves the old output as it was. No symlink below
    ``root`` is followed (see :mod:`vlagen.outdir`).

    Raises:
        ConflictError: if a change cannot be merged (:attr:`Action.REFUSE`); nothing is
            written.
        OutputError: a symlink (or a non-file) at a path to write, delete or stage under, or
            a symlinked directory on the way; checked before anything is written.
    """
    refuse(changes)
    copies = [(c.kept, c.old) for c in changes if c.kept is not None and c.old is not None]
    writes = [
        (c.path, c.write, bool(c.new and c.new.executable))
        for c in changes
        if c.write is not None and c.path != MANIFEST_PATH
    ]
    writes = [(p, data, False) for p, data in copies] + writes
    manifest = [c.write for c in changes if c.path == MANIFEST_PATH and c.write is not None]
    deletes = [c.path for c in changes if c.action is Action.DELETE]
    with OutDir(root, writing=True) as out:
        # Everything that would be refused is refused before anything is written.
        for path in [*(w[0] for w in writes), *deletes, MANIFEST_PATH]:
            out.check_writable(path)
        made_dirs = _makedirs(root)
        _stage_and_commit(out, writes, made_dirs)
        # The manifest goes last: until it is replaced, the old one describes every file
        # still on disk, so a run that stops here is repaired by the next one.
        for path in deletes:
            out.delete(path)
        _stage_and_commit(out, [(MANIFEST_PATH, data, False) for data in manifest], made_dirs)


def _stage_and_commit(
    out: OutDir, writes: list[tuple[str, bytes, bool]], made_dirs: list[Path]
) -> None:
    """Stage every write, then rename them all into place; on a failure, remove what was
    staged and the directories made for it."""
    try:
        for path, content, executable in writes:
            out.stage(path, content, executable=executable, made=made_dirs)
        out.commit()
    except BaseException:
        out.discard()
        for made in reversed(made_dirs):
            _rmdir_quiet(made)
        raise


def unified_diff(changes: Iterable[Change]) -> list[list[str]]:
    """One unified diff (list of lines) per file regen would change, from disk to what regen
    writes there (or would, for a file it refuses to touch)."""
    out = []
    for change in changes:
        after = _after(change)
        if after is _SAME:
            continue
        out.append(
            list(
                difflib.unified_diff(
                    _lines(change.old),
                    _lines(after),
                    f"a/{change.path}" if change.old is not None else "/dev/null",
                    f"b/{change.path}" if after is not None else "/dev/null",
                )
            )
        )
    return out


def line_counts(change: Change) -> tuple[int, int]:
    """Lines added and removed on disk by ``change`` (as ``git diff --stat`` counts them)."""
    after = _after(change)
    if after is _SAME:
        return 0, 0
    if change.old is None or after is None:  # a new or a deleted file: no diff to take
        return len(_lines(after)), len(_lines(change.old))
    added = removed = 0
    for line in difflib.unified_diff(_lines(change.old), _lines(after), n=0):
        if line.startswith(("+++", "---")):
            continue
        added += line.startswith("+")
        removed += line.startswith("-")
    return added, removed


_SAME = object()


def _after(change: Change) -> bytes | object | None:
    """What ``path`` holds after ``change`` (``None``: deleted; ``_SAME``: untouched)."""
    if not change.shown:
        return _SAME
    if change.action is Action.DELETE:
        return None
    if change.action is Action.REFUSE and change.new is not None:
        return change.new.content
    return change.write if change.write is not None else _SAME


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def _lf(data: bytes | None) -> bytes | None:
    """``data`` with CRLF line ends read as LF: vlagen writes LF, and a checkout that turns
    them into CRLF (git's ``core.autocrlf`` on Windows) has not edited anything."""
    return data.replace(b"\r\n", b"\n") if data is not None else None


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
