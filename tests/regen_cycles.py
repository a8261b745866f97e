"""Random hand edits + random spec changes + regen, checked for lost edits:
``python tests/regen_cycles.py --cycles 5000``.

Not part of the suite by itself (``test_regen.py`` runs a few hundred cycles of it). One run
keeps one output directory alive through every cycle, as a user's checkout would be:

1. a spec variant is picked (three fields toggled: the learning rate, the RLinf version line,
   the camera's size), and the user edits a few generated Python, YAML, TOML and Markdown
   files: new lines, changed lines, deleted lines, half of them next to lines the spec change
   will touch (so that some conflict);
2. regen runs; every edit the user has made so far must still be in its file (an edit is
   lost only if its file was regenerated without it), every file without a conflict must hold
   the spec change, every conflict must be reported and marked in its file, and every
   unedited file must be exactly what vlagen generates;
3. the user resolves most conflicts (keeping their side, vlagen's, or both, region by region)
   and leaves some with their markers for a later cycle, deletes or keeps files vlagen no
   longer generates, sometimes reverts a file, and regen runs again: it must report no new
   conflict, keep each resolution exactly and leave each marked file as it is;
4. ``check`` must name exactly the files that differ from what vlagen generates.

Prints the counts and exits 1 on any violation (each printed with its cycle and seed).
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import MINIMAL_SPEC
from vlagen.api import Output, check, generate, write
from vlagen.load import load_spec_text
from vlagen.merge import MARKERS, has_conflict_markers
from vlagen.sync import Action, Change
from vlagen.tree import Mode

#: Spec fields the cycles toggle: (text in MINIMAL_SPEC, its replacement).
TOGGLES = (
    (
        "group_size: 2\n  groups",
        "group_size: 2\n  learning_rate: 3.0e-5\n  groups",
    ),
    ('version: "0.3"', 'version: "0.2"'),
    ("{name: front, height: 64, width: 64}", "{name: front, height: 96, width: 128}"),
)
#: Comment syntax per edited file kind: (prefix, suffix).
COMMENTS = {".py": ("# ", ""), ".yaml": ("# ", ""), ".toml": ("# ", ""), ".md": ("<!-- ", " -->")}


@dataclass
class Tally:
    cycles: int = 0
    edits: int = 0  #: lines inserted, changed or deleted by the simulated user
    edited_files: int = 0  #: (file, cycle) pairs regen had to carry edits through
    merged: int = 0  #: of those, merged cleanly into a changed output
    conflicts: int = 0  #: files regen marked with conflicts
    regions: int = 0  #: conflict regions in them
    orphans: int = 0  #: edited files vlagen stopped generating (left in place, reported)
    unresolved: int = 0  #: regens over a file the user left with its conflict markers
    lost: int = 0  #: edits missing after a regen: must stay 0
    violations: list[str] = field(default_factory=list)

    def fail(self, cycle: int, message: str) -> None:
        self.violations.append(f"cycle {cycle}: {message}")


@cache
def variants() -> tuple[Output, ...]:
    """What every combination of :data:`TOGGLES` generates, in memory (about 0.2 s each)."""
    outputs = []
    for chosen in itertools.product((False, True), repeat=len(TOGGLES)):
        text = MINIMAL_SPEC
        for on, (old, new) in zip(chosen, TOGGLES, strict=True):
            assert old in text
            text = text.replace(old, new) if on else text
        outputs.append(generate(load_spec_text(text, "spec.yaml").spec))
    return tuple(outputs)


def run(cycles: int, seed: int, root: Path) -> Tally:
    rng = random.Random(seed)
    outputs = variants()
    tally = Tally()
    current = outputs[0]
    write(current, root, fresh=True)
    tokens: dict[str, set[str]] = {}  #: per file, the user's edit tokens it must still hold
    orphans: dict[str, bytes] = {}  #: edited files kept after vlagen stopped generating them
    pending: dict[str, bytes] = {}  #: files left with conflict markers, and their bases
    counter = itertools.count()
    for cycle in range(cycles):
        new = outputs[rng.choice([i for i in range(len(outputs)) if outputs[i] is not current])]
        deleted = _edit(rng, root, current, new, set(pending), tokens, counter, tally)
        before = _disk(root, current, orphans)
        bases = {**orphans, **{p: f.content for p, f in current.tree.items()}, **pending}
        changes = write(new, root, fresh=False)
        _verify_regen(cycle, root, bases, current, new, before, tokens, deleted, changes, tally)
        resolved, left = _resolve(rng, root, new, changes, tokens)
        # A conflict written now is based on the new output; one left as it was keeps its base.
        pending = {
            c.path: new.tree[c.path].content if c.write is not None else bases[c.path]
            for c in changes
            if c.path in left
        }
        orphans = {
            c.path: bases[c.path]
            for c in changes
            if c.action is Action.CONFLICT and c.new is None and (root / c.path).exists()
        }
        # A conflict resolved against an older output (left marked for a cycle or more) is
        # merged again, and may conflict again: the new output changed the same lines again.
        stale = {c.path for c in changes if c.action is Action.CONFLICT and c.write is None}
        again = write(new, root, fresh=False)
        for change in again:
            if change.path in stale - left:
                if change.action is Action.CONFLICT and change.write is not None:
                    pending[change.path] = new.tree[change.path].content
                continue
            if change.path in resolved and (_read(root, change.path) != resolved[change.path]):
                tally.fail(cycle, f"{change.path}: regen changed a resolved file")
            if change.action is Action.CONFLICT and change.new and change.path not in left:
                tally.fail(cycle, f"{change.path}: conflict after resolving ({change.reason})")
        _verify_check(cycle, root, new, tally)
        current = new
        tally.cycles += 1
    return tally


def _edit(
    rng: random.Random,
    root: Path,
    current: Output,
    new: Output,
    marked: set[str],
    tokens: dict[str, set[str]],
    counter: itertools.count,
    tally: Tally,
) -> dict[str, list[str]]:
    """Edit 1-4 generated text files (not those still ``marked`` with conflicts), half near
    what the spec change touches; return the lines deleted, per file."""
    editable = [
        p
        for p, f in current.tree.items()
        if f.mode is Mode.GENERATED
        and Path(p).suffix in COMMENTS
        and (root / p).is_file()
        and p not in marked
    ]
    touched = [p for p in editable if p in new.tree and new.tree[p] != current.tree[p]]
    deleted: dict[str, list[str]] = {}
    for _ in range(rng.randint(1, 4)):
        near = touched and rng.random() < 0.5
        path = rng.choice(touched if near else editable)
        lines = (root / path).read_text().splitlines(keepends=True)
        hot = _changed_lines(current.tree[path].content, new.tree[path].content) if near else []
        prefix, suffix = COMMENTS[Path(path).suffix]
        for _ in range(rng.randint(1, 3)):
            at = min(rng.choice(hot) + rng.randint(-2, 2), len(lines)) if hot else None
            at = max(at, 0) if at is not None else rng.randrange(len(lines) + 1)
            kind = rng.choice(("insert", "change", "delete"))
            token = f"edit-{next(counter)}"
            if kind == "insert" or at == len(lines):
                lines.insert(at, f"{prefix}{token}{suffix}\n")
            elif kind == "change" and lines[at].strip():
                lines[at] = f"{lines[at].rstrip(chr(10))}  {prefix}{token}{suffix}\n"
            elif kind == "delete" and _deletable(lines, at):
                deleted.setdefault(path, []).append(lines.pop(at))
                token = None
            else:
                continue
            tally.edits += 1
            if token:
                tokens.setdefault(path, set()).add(token)
        (root / path).write_text("".join(lines))
    return deleted


def _changed_lines(old: bytes, new: bytes) -> list[int]:
    """Indexes of the lines of ``old`` a change to ``new`` replaces or inserts before."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return [i for tag, i1, i2, _, _ in matcher.get_opcodes() if tag != "equal" for i in (i1, i2)]


def _deletable(lines: list[str], at: int) -> bool:
    """A line whose deletion can be checked: not blank, not an edit, once in the file."""
    line = lines[at]
    return bool(line.strip()) and "edit-" not in line and lines.count(line) == 1


def _verify_regen(
    cycle: int,
    root: Path,
    bases: dict[str, bytes],
    current: Output,
    new: Output,
    before: dict[str, bytes],
    tokens: dict[str, set[str]],
    deleted: dict[str, list[str]],
    changes: list[Change],
    tally: Tally,
) -> None:
    actions = {c.path: c for c in changes}
    for path, file in new.tree.items():
        on_disk = _read(root, path)
        base = bases.get(path)  #: what vlagen last wrote there
        edited = base is not None and before.get(path) not in (None, base)
        change = actions[path]
        if file.mode is Mode.SCAFFOLD:
            continue
        if not edited:
            if on_disk != file.content:
                tally.fail(cycle, f"{path}: unedited but not what vlagen generates")
            continue
        tally.edited_files += 1
        for token in tokens.get(path, ()):
            if token.encode() not in on_disk:
                tally.lost += 1
                tally.fail(cycle, f"{path}: lost {token} ({change.action.value})")
        if change.action is Action.CONFLICT and change.write is None:
            tally.unresolved += 1
            if on_disk != before[path]:
                tally.fail(cycle, f"{path}: a file left with its markers was rewritten")
            continue
        if change.action is Action.CONFLICT:
            tally.conflicts += 1
            tally.regions += on_disk.count(MARKERS[0])
            if not has_conflict_markers(on_disk):
                tally.fail(cycle, f"{path}: reported as a conflict, but no markers")
            continue
        if change.action not in (Action.MERGE, Action.EDITED, Action.UPDATE):
            tally.fail(cycle, f"{path}: edited file got {change.action.value}")
        tally.merged += change.action is Action.MERGE
        _verify_merge(
            cycle, path, base, file.content, before[path], on_disk, deleted.get(path, []), tally
        )
    for path in set(current.tree) - set(new.tree):
        if current.tree[path].mode is Mode.SCAFFOLD:
            continue
        if before.get(path) not in (None, current.tree[path].content):
            tally.orphans += 1
            if actions[path].action is not Action.CONFLICT or _read(root, path) != before[path]:
                tally.fail(cycle, f"{path}: an edited file vlagen no longer generates was touched")
        elif (root / path).exists():
            tally.fail(cycle, f"{path}: no longer generated, unedited, but not deleted")


def _verify_merge(
    cycle: int,
    path: str,
    base: bytes,
    new: bytes,
    before: bytes,
    merged: bytes,
    deleted: list[str],
    tally: Tally,
) -> None:
    """A clean merge holds the generator's change (every line it added, none it removed)
    except where the user removed or added the same line, and the user's deletions."""
    was, now = Counter(base.splitlines()), Counter(new.splitlines())
    mine, out = Counter(before.splitlines()), Counter(merged.splitlines())
    gone, added = was - mine, mine - was  # the user's edits so far, as lines
    for line in now - was:
        if out[line] < now[line] - gone[line]:
            tally.fail(cycle, f"{path}: the spec change's line {line!r} is missing")
    for line in was - now:
        if out[line] > now[line] + added[line]:
            tally.fail(cycle, f"{path}: the spec change removed {line!r}, the merge kept it")
    for text in deleted:
        line = text.rstrip("\n").encode()
        if was[line] == now[line] == 1 and out[line] > added[line]:
            tally.lost += 1
            tally.fail(cycle, f"{path}: the user's deletion of {line!r} was undone")


def _resolve(
    rng: random.Random,
    root: Path,
    new: Output,
    changes: list[Change],
    tokens: dict[str, set[str]],
) -> tuple[dict[str, bytes], set[str]]:
    """Resolve conflicts as a user might, leaving some for later; return the files resolved,
    as written, and those left with their markers."""
    resolved: dict[str, bytes] = {}
    left: set[str] = set()
    for change in changes:
        path = root / change.path
        if change.action is not Action.CONFLICT:
            continue
        if change.new is not None and rng.random() < 0.2:
            left.add(change.path)
            continue
        if change.new is None:  # no longer generated: deleted, or kept for a later regen
            if rng.random() < 0.5:
                path.unlink()
                tokens.pop(change.path, None)
            continue
        resolved[change.path] = _pick_sides(rng, path.read_bytes())
        path.write_bytes(resolved[change.path])
    for name in list(tokens):  # a user sometimes reverts a file to what vlagen generates
        if name in new.tree and name not in {*resolved, *left} and rng.random() < 0.05:
            (root / name).write_bytes(new.tree[name].content)
            resolved[name] = new.tree[name].content
    for name, content in resolved.items():
        tokens[name] = {t for t in tokens.get(name, ()) if t.encode() in content}
    return resolved, left


def _pick_sides(rng: random.Random, content: bytes) -> bytes:
    start, middle, separator, end = MARKERS
    out: list[bytes] = []
    side = None
    yours: list[bytes] = []
    theirs: list[bytes] = []
    for line in content.splitlines(keepends=True):
        if line == start:
            side, yours, theirs = "yours", [], []
        elif line == middle and side == "yours":
            side = "base"
        elif line == separator and side == "base":
            side = "theirs"
        elif line == end and side == "theirs":
            out += rng.choice((yours, theirs, yours + theirs))
            side = None
        elif side == "yours":
            yours.append(line)
        elif side == "theirs":
            theirs.append(line)
        elif side is None:
            out.append(line)
    return b"".join(out)


def _verify_check(cycle: int, root: Path, new: Output, tally: Tally) -> None:
    """``check`` names exactly the generated files that differ from what vlagen generates,
    and the edited files it no longer generates."""
    named = {c.path for c in check(new, root)}
    differ = {
        p for p, f in new.tree.items() if f.mode is Mode.GENERATED and _read(root, p) != f.content
    }
    orphans = {c for c in named if c not in new.tree}
    if named - orphans != differ:
        tally.fail(cycle, f"check named {sorted(named)}, files that differ: {sorted(differ)}")


def _disk(root: Path, output: Output, orphans: dict[str, bytes]) -> dict[str, bytes]:
    paths = [*output.tree, *orphans]
    return {p: data for p in paths if (data := _read(root, p)) is not None}


def _read(root: Path, path: str) -> bytes | None:
    try:
        return (root / path).read_bytes()
    except FileNotFoundError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    variants()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vlagen-regen-") as tmp:
        tally = run(args.cycles, args.seed, Path(tmp) / "out")
    took = time.perf_counter() - began
    print(
        f"{tally.cycles} cycles (seed {args.seed}) in {took:.1f} s: {tally.edits} edits, "
        f"{tally.edited_files} edited files carried through a regen ({tally.merged} merged into "
        f"a changed output), {tally.conflicts} conflicted files ({tally.regions} regions), "
        f"{tally.unresolved} regens over unresolved conflicts, {tally.orphans} edited files no "
        f"longer generated, {tally.lost} edits lost"
    )
    for violation in tally.violations[:50]:
        print(violation)
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
