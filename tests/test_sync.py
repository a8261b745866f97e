"""The sync engine on in-memory trees: modes, deletions, writes that fail half-way, and
symlinks it must never follow (planted before a run, or appearing during one)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from vlagen import outdir, sync
from vlagen.errors import ConflictError, OutputError
from vlagen.manifest import FileRecord, Manifest
from vlagen.paths import BASE_DIR, MANIFEST_PATH
from vlagen.sync import Action, apply_changes, compare
from vlagen.tree import File, FileTree, Mode


def _sync(tree: FileTree, root: Path, *, force: bool = False) -> dict[str, Action]:
    """Compare and apply like regen does, with a manifest recording ``tree``; the actions on
    the files a user sees."""
    last = Manifest.read(root, writing=True)
    changes = compare(tree, _manifest(tree), root, last, writing=True, force=force)
    apply_changes(changes, root)
    return {c.path: c.action for c in changes if c.shown}


def _manifest(tree: FileTree) -> Manifest:
    records = {p: FileRecord(f.mode, f.sha256) for p, f in tree.items()}
    return Manifest("0", "0", "h", (), records)


def _manifest_bytes(tree: FileTree) -> bytes:
    return _manifest(tree).to_bytes()


def test_scaffold_is_written_once_and_then_left_alone(tmp_path) -> None:
    tree = FileTree({"hooks.py": File(b"v1\n", Mode.SCAFFOLD), "gen.py": File(b"g1\n")})
    assert _sync(tree, tmp_path)["hooks.py"] is Action.CREATE
    (tmp_path / "hooks.py").write_text("user code\n")
    changed = FileTree({"hooks.py": File(b"v2\n", Mode.SCAFFOLD), "gen.py": File(b"g2\n")})
    actions = _sync(changed, tmp_path)
    assert actions == {
        "hooks.py": Action.KEEP,
        "gen.py": Action.UPDATE,
        ".vlagen/manifest.json": Action.UPDATE,
    }
    assert (tmp_path / "hooks.py").read_text() == "user code\n"
    assert (tmp_path / "gen.py").read_text() == "g2\n"


def test_a_deleted_scaffold_is_not_recreated(tmp_path) -> None:
    tree = FileTree({"hooks.py": File(b"v1\n", Mode.SCAFFOLD)})
    _sync(tree, tmp_path)
    (tmp_path / "hooks.py").unlink()
    assert _sync(tree, tmp_path)["hooks.py"] is Action.KEEP
    assert not (tmp_path / "hooks.py").exists()


def test_obsolete_scaffold_is_kept_and_obsolete_generated_file_deleted(tmp_path) -> None:
    _sync(FileTree({"a/hooks.py": File(b"h\n", Mode.SCAFFOLD), "b/gen.py": File(b"g\n")}), tmp_path)
    actions = _sync(FileTree({"c.py": File(b"c\n")}), tmp_path)
    assert actions["a/hooks.py"] is Action.KEEP
    assert actions["b/gen.py"] is Action.DELETE
    assert (tmp_path / "a/hooks.py").exists()
    assert not (tmp_path / "b").exists()


def test_executable_bit(tmp_path) -> None:
    _sync(FileTree({"run.sh": File(b"#!/bin/sh\n", executable=True)}), tmp_path)
    assert (tmp_path / "run.sh").stat().st_mode & 0o111


def test_a_file_vlagen_did_not_write_refuses_everything(tmp_path) -> None:
    _sync(FileTree({"b.py": File(b"1\n")}), tmp_path)
    (tmp_path / "a.py").write_text("mine\n")
    with pytest.raises(ConflictError) as info:
        _sync(FileTree({"a.py": File(b"2\n"), "b.py": File(b"2\n")}), tmp_path)
    assert info.value.paths == ("a.py: exists, and vlagen did not write it",)
    assert (tmp_path / "b.py").read_text() == "1\n", "nothing is written when one is refused"
    actions = _sync(FileTree({"a.py": File(b"2\n"), "b.py": File(b"2\n")}), tmp_path, force=True)
    assert actions["a.py"] is Action.OVERWRITE
    assert (tmp_path / ".vlagen/kept/a.py").read_text() == "mine\n"


def test_edits_merge_and_the_bases_follow_the_manifest(tmp_path) -> None:
    v1 = FileTree({"a.py": File(b"one\ntwo\nthree\nfour\n"), "s.py": File(b"s\n", Mode.SCAFFOLD)})
    _sync(v1, tmp_path)
    bases = tmp_path / BASE_DIR
    assert sorted(p.name for p in bases.iterdir()) == [v1["a.py"].sha256], "no base for a scaffold"
    (tmp_path / "a.py").write_text("one\ntwo\nthree\nfour\nmine\n")
    v2 = FileTree({"a.py": File(b"ONE\ntwo\nthree\nfour\n"), "s.py": File(b"s\n", Mode.SCAFFOLD)})
    assert _sync(v2, tmp_path)["a.py"] is Action.MERGE
    assert (tmp_path / "a.py").read_text() == "ONE\ntwo\nthree\nfour\nmine\n"
    assert sorted(p.name for p in bases.iterdir()) == [v2["a.py"].sha256], "old base removed"
    assert _sync(v2, tmp_path)["a.py"] is Action.EDITED


def test_an_edit_without_its_base_is_refused_not_guessed(tmp_path) -> None:
    _sync(FileTree({"a.py": File(b"1\n")}), tmp_path)
    (tmp_path / "a.py").write_text("1\nmine\n")
    shutil.rmtree(tmp_path / BASE_DIR)
    with pytest.raises(ConflictError, match="merge base"):
        _sync(FileTree({"a.py": File(b"2\n")}), tmp_path)
    assert (tmp_path / "a.py").read_text() == "1\nmine\n"
    # Generated as before, the output is its own base again, so the next change merges.
    assert _sync(FileTree({"a.py": File(b"1\n")}), tmp_path)["a.py"] is Action.EDITED
    assert _sync(FileTree({"a.py": File(b"2\n")}), tmp_path)["a.py"] is Action.CONFLICT


def test_an_unresolved_conflict_keeps_its_base_through_later_regens(tmp_path) -> None:
    lines = [f"line {i}\n" for i in range(12)]

    def gen(**changed: str) -> FileTree:
        text = [changed.get(f"l{i}", line) for i, line in enumerate(lines)]
        return FileTree({"a.py": File("".join(text).encode())})

    _sync(gen(), tmp_path)
    (tmp_path / "a.py").write_text("".join(lines).replace("line 2\n", "mine 2\n"))
    assert _sync(gen(l2="gen 2\n"), tmp_path)["a.py"] is Action.CONFLICT
    marked = (tmp_path / "a.py").read_text()
    # A second spec change while the markers are in: nothing written, the record kept.
    assert _sync(gen(l2="gen 2\n", l9="gen 9\n"), tmp_path)["a.py"] is Action.CONFLICT
    assert (tmp_path / "a.py").read_text() == marked
    resolved = "".join(lines).replace("line 2\n", "mine 2\n")  # the user keeps theirs
    (tmp_path / "a.py").write_text(resolved)
    assert _sync(gen(l2="gen 2\n", l9="gen 9\n"), tmp_path)["a.py"] is Action.MERGE
    assert (tmp_path / "a.py").read_text() == resolved.replace("line 9\n", "gen 9\n")


@pytest.mark.parametrize("left", [0, 1, 3], ids=["start", "base", "end"])
def test_any_marker_left_in_means_unresolved(tmp_path, left: int) -> None:
    from vlagen.merge import MARKERS

    _sync(FileTree({"a.py": File(b"a\n")}), tmp_path)
    (tmp_path / "a.py").write_bytes(b"x\n" + MARKERS[left] + b"y\n")
    assert _sync(FileTree({"a.py": File(b"a\n")}), tmp_path)["a.py"] is Action.CONFLICT
    (tmp_path / "a.py").write_bytes(b"x\n=======\ny\n")  # a heading underline is text
    assert _sync(FileTree({"a.py": File(b"a\n")}), tmp_path)["a.py"] is Action.EDITED


def test_an_empty_generated_file_is_written(tmp_path) -> None:
    assert _sync(FileTree({"__init__.py": File(b"")}), tmp_path)["__init__.py"] is Action.CREATE
    assert (tmp_path / "__init__.py").read_bytes() == b""


def test_force_never_overwrites_a_kept_copy(tmp_path) -> None:
    _sync(FileTree({"a.py": File(b"1\n")}), tmp_path)
    for n, edit in enumerate(["first\n", "second\n", "first\n"]):
        (tmp_path / "a.py").write_text(edit)
        assert _sync(FileTree({"a.py": File(b"1\n")}), tmp_path, force=True)["a.py"] is (
            Action.OVERWRITE
        ), n
    kept = tmp_path / ".vlagen/kept"
    assert {p.name: p.read_text() for p in kept.iterdir()} == {
        "a.py": "first\n",
        "a.py.1": "second\n",
    }


def test_failed_write_leaves_old_output_untouched(tmp_path, monkeypatch) -> None:
    _sync(FileTree({"a.py": File(b"old a\n"), "b.py": File(b"old b\n")}), tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    calls = {"n": 0}
    real = outdir.write_all

    def flaky(fd: int, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(outdir, "write_all", flaky)
    new = FileTree({"a.py": File(b"new a\n"), "b.py": File(b"new b\n"), "c/d.py": File(b"d\n")})
    with pytest.raises(OutputError, match=r"^cannot write .*: No space left on device; "):
        _sync(new, tmp_path)
    after = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before, "no file replaced, no temp file left behind"
    assert not (tmp_path / "c").exists(), "directories made for the failed write are removed"


# --- symlinks: never followed, refused before anything is written --------------------------

V1 = FileTree({"a.py": File(b"a1\n"), "b.py": File(b"b1\n"), "sub/c.py": File(b"c1\n")})
V2 = FileTree({"a.py": File(b"a2\n"), "b.py": File(b"b2\n"), "sub/c.py": File(b"c2\n")})


def _link(path: Path, *, writing: bool = True) -> str:
    """The exact refusal of a symlink at ``path``, as a ``match=`` pattern."""
    words = "refusing to write through" if writing else "cannot compare through"
    return f"^{re.escape(f'{words} the symlink {path}')}$"


def _snapshot(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under ``root``, links as links (not followed)."""
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = ("link", str(path.readlink()).encode())
        elif path.is_file():
            out[key] = ("file", path.read_bytes())
        else:
            out[key] = ("dir", b"")
    return out


@pytest.fixture
def synced(tmp_path: Path) -> tuple[Path, Path]:
    """An output written from V1, and a precious file outside it."""
    root, outside = tmp_path / "out", tmp_path / "precious.txt"
    _sync(V1, root)
    outside.write_bytes(b"precious\n")
    return root, outside


@pytest.mark.parametrize("dangling", [False, True], ids=["to_a_file", "dangling"])
def test_a_symlink_at_the_temp_name_is_refused(synced, dangling: bool) -> None:
    root, outside = synced
    if dangling:
        outside.unlink()
    link = root / ".a.py.vlagen-tmp"
    link.symlink_to(outside)
    before = _snapshot(root)
    with pytest.raises(OutputError, match=_link(link)):
        _sync(V2, root)
    assert _snapshot(root) == before, "nothing written, the link left for the user to inspect"
    if dangling:
        assert not outside.exists()
    else:
        assert outside.read_bytes() == b"precious\n"


def test_a_leftover_temp_file_from_a_crashed_run_is_replaced(synced) -> None:
    root, _ = synced
    (root / ".a.py.vlagen-tmp").write_bytes(b"half-written\n")
    (root / "sub" / ".c.py.vlagen-tmp").write_bytes(b"half-written\n")
    _sync(V2, root)
    assert (root / "a.py").read_bytes() == b"a2\n"
    assert not list(root.rglob("*.vlagen-tmp"))


def test_a_directory_at_the_temp_name_is_refused(synced) -> None:
    root, _ = synced
    (root / ".a.py.vlagen-tmp").mkdir()
    with pytest.raises(OutputError, match="is in the way"):
        _sync(V2, root)
    assert (root / "a.py").read_bytes() == b"a1\n"


@pytest.mark.parametrize("writing", [True, False])
def test_a_symlinked_parent_directory_is_refused(synced, tmp_path: Path, writing: bool) -> None:
    root, _ = synced
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c.py").write_bytes(b"theirs\n")
    (root / "sub" / "c.py").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutputError, match=_link(root / "sub", writing=writing)):
        compare(V2, _manifest(V2), root, Manifest.read(root), writing=writing)
    with pytest.raises(OutputError, match="refusing to write through the symlink"):
        _sync(V2, root)
    assert (elsewhere / "c.py").read_bytes() == b"theirs\n"
    assert (root / "a.py").read_bytes() == b"a1\n"


@pytest.mark.parametrize("writing", [True, False])
@pytest.mark.parametrize("at", [MANIFEST_PATH, ".vlagen"])
def test_a_symlinked_manifest_is_refused(synced, tmp_path: Path, at: str, writing: bool) -> None:
    root, _ = synced
    copy = tmp_path / "copy"
    (copy / ".vlagen").mkdir(parents=True)
    (copy / MANIFEST_PATH).write_bytes((root / MANIFEST_PATH).read_bytes())
    shutil.rmtree(root / ".vlagen")
    if at == MANIFEST_PATH:
        (root / ".vlagen").mkdir()
    (root / at).symlink_to(copy / at)
    with pytest.raises(OutputError, match=_link(root / at, writing=writing)):
        Manifest.read(root, writing=writing)
    # Even handed a manifest, compare and apply refuse to read or replace it through the link.
    with pytest.raises(OutputError, match=_link(root / at, writing=writing)):
        compare(V2, _manifest(V2), root, None, writing=writing)
    assert (copy / MANIFEST_PATH).read_bytes() == _manifest_bytes(V1)
    assert (root / "a.py").read_bytes() == b"a1\n"


def test_a_symlink_at_a_generated_file_is_not_read(synced) -> None:
    root, outside = synced
    (root / "b.py").unlink()
    (root / "b.py").symlink_to(outside)
    with pytest.raises(OutputError, match=_link(root / "b.py", writing=False)):
        compare(V2, _manifest(V2), root, Manifest.read(root))


def test_a_fifo_at_a_generated_file_is_refused_without_hanging(synced) -> None:
    root, _ = synced
    (root / "b.py").unlink()
    os.mkfifo(root / "b.py")
    with pytest.raises(OutputError, match=r"cannot compare .*b\.py: it is not a regular file"):
        compare(V2, _manifest(V2), root, Manifest.read(root))


# A link that appears after the checks and before the writes (a race): patch the step that
# runs between them, ``_makedirs`` of the root, to plant it.


def _plant_after_checks(monkeypatch, plant) -> None:
    real = sync._makedirs

    def makedirs_then_plant(directory: Path) -> list[Path]:
        made = real(directory)
        plant()
        return made

    monkeypatch.setattr(sync, "_makedirs", makedirs_then_plant)


def test_race_a_symlink_at_the_temp_name(synced, monkeypatch) -> None:
    root, outside = synced
    link = root / "sub" / ".c.py.vlagen-tmp"  # staged after a.py and b.py
    _plant_after_checks(monkeypatch, lambda: link.symlink_to(outside))
    with pytest.raises(OutputError, match=_link(link)):
        _sync(V2, root)
    assert outside.read_bytes() == b"precious\n"
    assert link.is_symlink(), "not ours: left alone"
    assert (root / "a.py").read_bytes() == b"a1\n", "nothing renamed into place"
    assert [p.name for p in root.rglob("*.vlagen-tmp")] == [link.name], "staged temps removed"


def test_race_a_symlink_at_the_destination(synced, monkeypatch) -> None:
    root, outside = synced

    def swap() -> None:
        (root / "a.py").unlink()
        (root / "a.py").symlink_to(outside)

    _plant_after_checks(monkeypatch, swap)
    _sync(V2, root)
    assert outside.read_bytes() == b"precious\n", "the rename replaced the link, not its target"
    assert not (root / "a.py").is_symlink()
    assert (root / "a.py").read_bytes() == b"a2\n"


def test_race_a_symlink_as_a_new_directory(synced, tmp_path: Path, monkeypatch) -> None:
    root, _ = synced
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    new = V2.replace({"fresh/d.py": File(b"d\n")})
    _plant_after_checks(
        monkeypatch, lambda: (root / "fresh").symlink_to(elsewhere, target_is_directory=True)
    )
    with pytest.raises(OutputError, match=_link(root / "fresh")):
        _sync(new, root)
    assert list(elsewhere.iterdir()) == []
    assert (root / "a.py").read_bytes() == b"a1\n"
    assert not list(root.rglob("*.vlagen-tmp"))


def test_race_a_symlink_between_mkdir_and_open(synced, tmp_path: Path, monkeypatch) -> None:
    root, _ = synced
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real_mkdir = os.mkdir

    def mkdir_then_swap(name, mode=0o777, *, dir_fd=None):
        real_mkdir(name, mode, dir_fd=dir_fd)
        if name == "fresh":
            os.rmdir(root / "fresh")
            (root / "fresh").symlink_to(elsewhere, target_is_directory=True)

    monkeypatch.setattr(outdir.os, "mkdir", mkdir_then_swap)
    with pytest.raises(OutputError, match=_link(root / "fresh")):
        _sync(V2.replace({"fresh/d.py": File(b"d\n")}), root)
    assert list(elsewhere.iterdir()) == []
    assert (root / "a.py").read_bytes() == b"a1\n"


# --- bounded reads: a huge file at a generated path or as the manifest is refused ----------


@pytest.mark.parametrize("writing", [True, False])
def test_a_huge_generated_file_is_refused_not_read(synced, monkeypatch, writing: bool) -> None:
    root, _ = synced
    monkeypatch.setattr(outdir, "MAX_READ_BYTES", 16)
    (root / "b.py").write_bytes(b"x" * 17)
    big = re.escape(f"{root / 'b.py'} is larger than 16 bytes (64 MiB)")
    with pytest.raises(OutputError, match=big):
        compare(V2, _manifest(V2), root, None, writing=writing)
    with outdir.OutDir(root, writing=writing) as out:
        (root / "b.py").write_bytes(b"x" * 16)
        assert out.read("b.py") == b"x" * 16, "at the limit is still read"


def test_a_file_growing_past_the_limit_after_fstat_is_refused(synced, monkeypatch) -> None:
    root, _ = synced
    monkeypatch.setattr(outdir, "MAX_READ_BYTES", 16)
    (root / "b.py").write_bytes(b"x" * 17)
    real_fstat = os.fstat
    monkeypatch.setattr(
        outdir.os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 0, *real_fstat(fd)[7:]))
    )
    out = outdir.OutDir(root, writing=False)
    with out, pytest.raises(OutputError, match="is larger than 16 bytes"):
        out.read("b.py")


def test_a_huge_manifest_is_refused_not_read(synced, monkeypatch) -> None:
    root, _ = synced
    monkeypatch.setattr(outdir, "MAX_READ_BYTES", 16)
    with pytest.raises(OutputError, match=re.escape(f"{root / MANIFEST_PATH} is larger than")):
        Manifest.read(root)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"[]", "the manifest must be an object, got a list"),
        (b"[" * 100_000 + b"]" * 100_000, "maximum recursion depth"),
        (b'{"format": 1}', "the manifest lacks vlagen, ruff, spec_hash, targets, files"),
        (b"\xff", "can't decode byte 0xff"),
    ],
)
def test_a_malformed_manifest_is_unreadable(synced, content: bytes, expected: str) -> None:
    from vlagen.errors import UsageError

    root, _ = synced
    (root / MANIFEST_PATH).write_bytes(content)
    with pytest.raises(UsageError, match="unreadable vlagen manifest") as info:
        Manifest.read(root)
    assert expected in str(info.value)


def test_every_manifest_field_is_type_checked(synced) -> None:
    import json

    from vlagen.errors import UsageError

    root, _ = synced
    good = json.loads((root / MANIFEST_PATH).read_text())
    record = good["files"]["a.py"]
    bad_values = {
        "format": [True, 2, "1", None],
        "vlagen": [1, None, []],
        "ruff": [1, {}],
        "spec_hash": [0],
        "targets": ["x", [1], {}],
        "files": [
            [],
            "x",
            {"a.py": []},
            {"a.py": {**record, "mode": "mine"}},
            {"a.py": {**record, "sha256": 5}},
            {"a.py": {"mode": "generated"}},
            {"a.py": {**record, "extra": 1}},
            {"../x": record},
        ],
        "extra": [1],
    }
    for key, values in bad_values.items():
        for value in values:
            (root / MANIFEST_PATH).write_text(json.dumps({**good, key: value}))
            with pytest.raises(UsageError, match="unreadable vlagen manifest"):
                Manifest.read(root)
