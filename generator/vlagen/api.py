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
from .plan import MANIFEST_PATH, Plan, make_plan
from .render import render_plan
from .spec import Spec
from .sync import Action, Change, apply_changes, compare, unified_diff
from .tree import FileTree

__all__ = ["Output", "check", "diff", "generate", "load_spec", "write"]


@dataclass(frozen=True)
class Output:
    """Everything a spec generates: the plan, the formatted tree and its manifest."""

    plan: Plan
    tree: FileTree
    manifest: Manifest

    @property
    def manifest_bytes(self) -> bytes:
        return self.manifest.to_bytes()


def generate(spec: Spec) -> Output:
    """Plan, render and format ``spec``'s package, in memory."""
    plan = make_plan(spec)
    tree = format_tree(render_plan(plan))
    return Output(plan, tree, Manifest.for_tree(tree, plan, ruff_version()))


def changes_for(output: Output, out_dir: Path, *, writing: bool = False) -> list[Change]:
    """What it takes to bring ``out_dir`` to ``output``; ``writing`` words symlink refusals
    for a command that is about to write ("refusing to write through the symlink ...")."""
    last = Manifest.read(out_dir, writing=writing)
    return compare(output.tree, output.manifest_bytes, out_dir, last, writing=writing)


def write(
    output: Output, out_dir: Path, *, force: bool = False, dry_run: bool = False, fresh: bool
) -> list[Change]:
    """Bring ``out_dir`` to ``output``; return what changed (or would, with ``dry_run``).

    ``fresh`` is ``new``'s contract: ``out_dir`` may be empty, absent, or a vlagen output;
    anything else needs ``force``. Without ``fresh`` (``regen``), ``out_dir`` must be a vlagen
    output.

    Raises:
        ConflictError: a foreign directory or hand-edited files, without ``force``.
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
        raise UsageError(
            f"{out_dir} has no {MANIFEST_PATH}, so it is not a vlagen output; "
            "use `vlagen new` to create one"
        )
    changes = changes_for(output, out_dir, writing=not dry_run)
    if not dry_run:
        apply_changes(changes, out_dir, force=force)
    return changes


def diff(output: Output, out_dir: Path) -> list[list[str]]:
    """Unified diffs from what is in ``out_dir`` to what the spec generates now."""
    return unified_diff(changes_for(output, out_dir))


def check(output: Output, out_dir: Path) -> list[Change]:
    """The changes that make ``out_dir`` stale or show a hand edit; empty when up to date."""
    return [
        c for c in changes_for(output, out_dir) if c.action not in (Action.UNCHANGED, Action.KEEP)
    ]


def _non_empty(directory: Path) -> bool:
    return directory.is_dir() and any(directory.iterdir())
