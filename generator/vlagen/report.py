"""What the commands print about a comparison (:mod:`vlagen.sync`): one line per file that
``new``/``regen`` touch, and ``check``'s verdict.

``check`` answers the question CI asks: is the package what vlagen makes from this spec, with
the owner's kept edits? A file regen would still change (missing, stale, obsolete), one it
stops at (a conflict) and one it refuses fail the check; an edit regen keeps as it is is
listed and passes, unless ``--strict``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from .sync import Action, Change, line_counts
from .tree import Mode

__all__ = ["CheckResult", "judge", "needs_you", "print_changes"]

COLOURS = {
    "create": "green",
    "update": "yellow",
    "merge": "yellow",
    "delete": "red",
    "conflict": "red",
    "refuse": "red",
    "overwrite": "red",
    "edited": "cyan",
    "keep": "cyan",
}

SCAFFOLD_NOTE = "scaffold: yours from now on"

#: ``check``'s word for each action it reports, and the note it adds where the action's own
#: reason is regen's wording (``None``: the change's reason).
_CHECK = {
    Action.CREATE: ("missing", None),
    Action.UPDATE: ("stale", ""),
    Action.MERGE: ("stale", "regen merges your edits in"),
    Action.DELETE: ("obsolete", None),
    Action.CONFLICT: ("conflict", None),
    Action.REFUSE: ("refused", None),
    Action.EDITED: ("edited", "your edit, kept"),
}
#: What regen would still write: the package is stale.
_STALE = (Action.CREATE, Action.UPDATE, Action.MERGE, Action.DELETE)


def print_changes(changes: Sequence[Change], out_dir: Path, *, dry_run: bool) -> None:
    """One line per file regen touches or leaves edited (with the lines it adds and
    removes, and which new files are scaffolds, the user's from then on), then a count per
    action."""
    counts: dict[str, int] = {}
    for change in changes:
        action = change.action.value
        if not change.shown or action not in COLOURS:
            continue
        counts[action] = counts.get(action, 0) + 1
        added, removed = line_counts(change)
        lines = f"  +{added} -{removed}" if added or removed else ""
        reason = change.reason
        if change.action is Action.CREATE and change.new and change.new.mode is Mode.SCAFFOLD:
            reason = SCAFFOLD_NOTE
        note = f"  ({reason})" if reason else ""
        click.echo(f"{click.style(f'{action:<9}', fg=COLOURS[action])} {change.path}{lines}{note}")
    counts["unchanged"] = sum(c.shown and c.action is Action.UNCHANGED for c in changes)
    order = [*COLOURS, "unchanged"]
    summary = ", ".join(f"{counts[a]} {a}" for a in order if counts.get(a))
    verb = "would change" if dry_run else "wrote"
    click.echo(f"{verb} {out_dir}: {summary}" + (" (dry run: nothing written)" if dry_run else ""))


@dataclass(frozen=True)
class CheckResult:
    """``check``'s verdict: a line per file it reports (stdout), and why it fails (stderr)."""

    lines: tuple[str, ...]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


def judge(changes: Sequence[Change], spec: Path, out_dir: Path, *, strict: bool) -> CheckResult:
    """``check``'s verdict on ``changes``, the comparison of ``out_dir`` with what ``spec``
    generates."""
    reported = [c for c in changes if c.shown and c.action in _CHECK]
    lines = []
    for change in reported:
        label, note = _CHECK[change.action]
        note = change.reason if note is None else note
        lines.append(f"{label:<9} {out_dir / change.path}" + (f"  ({note})" if note else ""))
    regen = shlex.join(["vlagen", "regen", str(spec), "-o", str(out_dir)])
    failures = []
    stale = sum(c.action in _STALE for c in reported)
    if stale:
        failures.append(
            f"{out_dir} is stale ({_files(stale)} {_verb(stale, 'differs', 'differ')} from "
            f"what the spec generates): run `{regen}`"
        )
    pending = sum(c.action is Action.CONFLICT and c.write is not None for c in reported)
    if pending:  # regen has not written these markers yet: check writes nothing
        failures.append(
            f"{_files(pending)} {_verb(pending, 'holds', 'hold')} an edit that conflicts with "
            f"the new output: `{regen}` marks the regions in the file; resolve them, then run "
            "it again"
        )
    left = [c for c in reported if c.action is Action.CONFLICT and c.write is None]
    failures += needs_you(left, then=f"run `{regen}`")
    refused = sum(c.action is Action.REFUSE for c in reported)
    if refused:
        failures.append(f"regen refuses {_files(refused)} (as each line says): `{regen}` stops")
    edited = sum(c.action is Action.EDITED for c in reported)
    if strict and edited:
        failures.append(
            f"--strict: your edits in {_files(edited)} fail the check; revert them (`{regen} "
            "--force` discards them, keeping copies), or check without --strict"
        )
    return CheckResult(tuple(lines), tuple(failures))


def needs_you(changes: Sequence[Change], *, then: str, would: bool = False) -> list[str]:
    """What regen's conflicts ask of the user, a sentence per kind, each then ``then``:
    regions to resolve between markers (a merge's, or ones still in the file), or an edited
    file vlagen no longer generates, to carry over or move as its line says."""
    conflicts = [c for c in changes if c.shown and c.action is Action.CONFLICT]
    marked = sum(c.new is not None for c in conflicts)
    orphans = len(conflicts) - marked
    need = ("would need", "would need") if would else ("needs", "need")
    out = []
    if marked:
        out.append(
            f"{_files(marked)} {_verb(marked, *need)} you: resolve the regions between "
            f"`<<<<<<< yours` and `>>>>>>> generated now`, then {then}"
        )
    if orphans:
        out.append(
            f"{_files(orphans)} vlagen no longer generates "
            f"{_verb(orphans, 'holds', 'hold')} your edits: carry them over or move them as "
            f"each line says, and delete {_verb(orphans, 'it', 'them')}; then {then}"
        )
    return out


def _verb(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def _files(count: int) -> str:
    return f"{count} file{'s' * (count != 1)}"
