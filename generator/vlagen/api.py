"""The pipeline, end to end: load → plan → render → format → sync.

Each function here is a short script over the pure stages; the CLI is a thin layer on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import ConflictError, UsageError
from .formatting import format_tree, ruff_version
from .load import load_spec
from .manifest import Manifest
from .paths import MANIFEST_PATH
from .plan import Plan, make_plan
from .render import render_plan
from .spec import Spec
from .sync import Action, Change, apply_changes, compare, refuse
from .tree import FileTree

__all__ = ["Output", "changes_for", "check", "generate", "load_spec", "require_output", "write"]


@dataclass(frozen=True)
class Output:
    """Everything a spec generates: the plan, the formatted tree and its manifest."""

    plan: Plan
    tree: FileTree
    manifest: Manifest


def generate(spec: Spec, text: str | None = None) -> Output:
    """Plan, render and format ``spec``'s package, in memory. ``text`` is the spec as the
    user wrote it, which the package keeps as ``vlagen.yaml``; without it, the fields the spec
    sets are written there as plain YAML."""
    plan = make_plan(spec, text)
    tree = format_tree(render_plan(plan))
    return Output(plan, tree, Manifest.for_tree(tree, plan, ruff_version()))


def changes_for(
    output: Output, out_dir: Path, *, writing: bool = False, force: bool = False
) -> list[Change]:
    """What it takes to bring ``out_dir`` to ``output``, edits merged (or, with ``force``,
    overwritten); ``writing`` words symlink refusals for a command that is about to write
    ("refusing to write through the symlink ...")."""
    last = Manifest.read(out_dir, writing=writing)
    return compare(output.tree, output.manifest, out_dir, last, writing=writing, force=force)


def write(
    output: Output, out_dir: Path, *, force: bool = False, dry_run: bool = False, fresh: bool
) -> list[Change]:
    """Bring ``out_dir`` to ``output``; return what changed (or would, with ``dry_run``).

    ``fresh`` is ``new``'s contract: ``out_dir`` may be empty, absent, or a vlagen output;
    anything else needs ``force``. Without ``fresh`` (``regen``), ``out_dir`` must be a vlagen
    output.

    Raises:
        ConflictError: a foreign directory, or files vlagen cannot merge, without ``force``.
        UsageError: ``regen`` of a directory vlagen did not make.
        OutputError: a symlink below ``out_dir`` where vlagen reads or writes; nothing is
            written.
    """
    made_by_vlagen = Manifest.read(out_dir, writing=not dry_run) is not None
    if fresh and not made_by_vlagen and not force and _non_empty(out_dir):
        raise ConflictError(
            f"{out_dir} is not empty and vlagen did not make it; "
            "pick another -o DIR, or use --force to write into it"
        )
    if not fresh and not made_by_vlagen:
        raise _not_an_output(out_dir)
    changes = changes_for(output, out_dir, writing=not dry_run, force=force)
    refuse(changes)
    if not dry_run:
        apply_changes(changes, out_dir)
    return changes


def require_output(out_dir: Path) -> None:
    """Raise :class:`UsageError` unless ``out_dir`` is a vlagen output (has a manifest)."""
    if Manifest.read(out_dir) is None:
        raise _not_an_output(out_dir)


def _not_an_output(out_dir: Path) -> UsageError:
    return UsageError(
        f"{out_dir} has no {MANIFEST_PATH}, so it is not a vlagen output; "
        "use `vlagen new` to create one"
    )


def check(output: Output, out_dir: Path) -> list[Change]:
    """Every file ``check`` judges: what regen would write, stop at or refuse, and the
    user's edits it keeps; empty when ``out_dir`` is exactly what the spec generates."""
    require_output(out_dir)
    return [
        c
        for c in changes_for(output, out_dir)
        if c.shown and c.action not in (Action.UNCHANGED, Action.KEEP)
    ]


def _non_empty(directory: Path) -> bool:
    return directory.is_dir() and any(directory.iterdir())
