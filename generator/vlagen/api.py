"""The pipeline, end to end: load → plan → render → format → sync.

Each function here is a short script over the pure stages; the CLI is a thin layer on top.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import ConflictError, UsageError
from .formatting import format_tree, ruff_version
from .load import load_spec
from .manifest import Manifest
from .outdir import OutDir, temp_name
from .paths import MANIFEST_PATH, STREAM, base_path
from .plan import Plan, make_plan
from .provenance import SPEC_COPY, without_header
from .render import render_plan
from .spec import Spec
from .sync import Action, Change, apply_changes, compare, refuse
from .tree import FileTree, Mode

__all__ = [
    "Output",
    "changes_for",
    "check",
    "generate",
    "load_spec",
    "refuse_an_output",
    "require_output",
    "write",
]


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

    ``fresh`` is ``new``'s contract: ``out_dir`` may be empty or absent; a directory vlagen
    did not make needs ``force`` (the CLI's ``new`` also refuses a vlagen output first, with
    :func:`refuse_an_output`). Without ``fresh`` (``regen``), ``out_dir`` must be a vlagen
    output.

    Raises:
        ConflictError: a foreign directory, or files vlagen cannot merge, without ``force``.
        UsageError: ``regen`` of a directory vlagen did not make.
        OutputError: a symlink below ``out_dir`` where vlagen reads or writes; nothing is
            written.
    """
    made_by_vlagen = Manifest.read(out_dir, writing=not dry_run) is not None
    if fresh and not made_by_vlagen and not force and _foreign(out_dir, output):
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


def refuse_an_output(output: Output, out_dir: Path, spec: Path, *, writing: bool) -> None:
    """``new``'s refusal of a directory vlagen already made (it has a manifest): regenerating
    it is ``regen``'s job, which merges the owner's edits, and the spec given may not be the
    one the package came from (its ``vlagen.yaml``), which the message then says.

    Raises:
        UsageError: ``out_dir`` is a vlagen output.
        OutputError: a symlink at its manifest or spec copy.
    """
    with OutDir(out_dir, writing=writing) as out:
        manifest = out.read(MANIFEST_PATH)
        if manifest is None:
            return
        copy = out.read(SPEC_COPY)
    Manifest.from_bytes(manifest, out_dir / MANIFEST_PATH)  # unreadable: its own error
    piped = str(spec) == STREAM  # `vlagen new -`: the regen reads the spec piped again
    regen = shlex.join(["vlagen", "regen", "-" if piped else str(spec), "-o", str(out_dir)])
    source = "the spec piped in" if piped else str(spec)
    if copy is None:
        said = (
            f"{out_dir} is a vlagen output (it has {MANIFEST_PATH}) whose spec copy "
            f"{SPEC_COPY} is missing; `vlagen regen` would regenerate it from {source}"
        )
    elif _spec_text(copy) == _spec_text(output.tree[SPEC_COPY].content):
        said = f"{out_dir} is already a vlagen output, generated from this spec"
    else:
        said = (
            f"{out_dir} holds a package generated from a different spec (its {SPEC_COPY}); "
            f"`vlagen regen` would regenerate it from {source}"
        )
    raise UsageError(
        f"{said}. `vlagen new` only makes new packages (--force too: it is for a directory "
        f"vlagen did not make); nothing was written. To regenerate this one, keeping your "
        f"edits: `{regen}`; or pick another -o DIR"
    )


def _spec_text(data: bytes) -> str | None:
    """A spec copy as the user wrote it: without its header and with LF line ends."""
    try:
        return without_header(data.decode("utf-8").replace("\r\n", "\n"))
    except UnicodeDecodeError:
        return None


def require_output(out_dir: Path) -> None:
    """Raise :class:`UsageError` unless ``out_dir`` is a vlagen output (has a manifest)."""
    if Manifest.read(out_dir) is None:
        raise _not_an_output(out_dir)


def _not_an_output(out_dir: Path) -> UsageError:
    if not out_dir.exists():
        return UsageError(
            f"{out_dir} does not exist (a mistyped -o DIR? `vlagen new` makes a new package)"
        )
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


def _foreign(directory: Path, output: Output) -> bool:
    """Whether ``directory`` holds something ``new`` may not write over without ``--force``."""
    return _non_empty(directory) and not _left_by_new(directory, output)


def _left_by_new(directory: Path, output: Output) -> bool:
    """Whether ``directory`` holds only what a ``vlagen new`` of ``output`` stopped midway
    (Ctrl-C, a killed process) leaves: directories, files with the very bytes ``output``
    writes at their paths (its files and merge bases), and files staged under vlagen's
    temporary names. ``new`` then writes into it as into an empty one: nothing there is lost,
    and a retry is not refused as a directory vlagen did not make."""
    expected = {path: file.content for path, file in output.tree.items()}
    expected |= {
        base_path(file.sha256): file.content
        for file in output.tree.values()
        if file.mode is Mode.GENERATED
    }
    staged = {
        "/".join([*dirs, temp_name(name)])
        for *dirs, name in (path.split("/") for path in [*expected, MANIFEST_PATH])
    }
    for top, dirs, files in os.walk(directory):
        for name in [*dirs, *files]:
            path = Path(top, name)
            info = path.lstat()
            if stat.S_ISDIR(info.st_mode):
                continue
            relative = path.relative_to(directory).as_posix()
            if not stat.S_ISREG(info.st_mode):
                return False  # a link or a device: not vlagen's
            if relative in staged:
                continue
            content = expected.get(relative)
            if content is None or info.st_size != len(content) or path.read_bytes() != content:
                return False
    return True
