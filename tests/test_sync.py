"""The sync engine on in-memory trees: modes, deletions, and writes that fail half-way."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlagen.errors import ConflictError
from vlagen.manifest import Manifest
from vlagen.sync import Action, apply_changes, compare
from vlagen.tree import File, FileTree, Mode


def _sync(tree: FileTree, root: Path, *, force: bool = False) -> dict[str, Action]:
    """Compare and apply like regen does, with a manifest recording ``tree``."""
    manifest = _manifest_bytes(tree)
    changes = compare(tree, manifest, root, Manifest.read(root))
    apply_changes(changes, root, force=force)
    return {c.path: c.action for c in changes}


def _manifest_bytes(tree: FileTree) -> bytes:
    from vlagen.manifest import FileRecord

    records = {p: FileRecord(f.mode, f.sha256) for p, f in tree.items()}
    return Manifest("0", "0", "h", (), records).to_bytes()


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


def test_conflict_refuses_everything(tmp_path) -> None:
    _sync(FileTree({"a.py": File(b"1\n"), "b.py": File(b"1\n")}), tmp_path)
    (tmp_path / "a.py").write_text("edited\n")
    with pytest.raises(ConflictError) as info:
        _sync(FileTree({"a.py": File(b"2\n"), "b.py": File(b"2\n")}), tmp_path)
    assert info.value.paths == ("a.py: edited by hand",)
    assert (tmp_path / "b.py").read_text() == "1\n", "nothing is written when one file conflicts"


def test_failed_write_leaves_old_output_untouched(tmp_path, monkeypatch) -> None:
    _sync(FileTree({"a.py": File(b"old a\n"), "b.py": File(b"old b\n")}), tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    calls = {"n": 0}
    real = Path.write_bytes

    def flaky(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", flaky)
    new = FileTree({"a.py": File(b"new a\n"), "b.py": File(b"new b\n"), "c/d.py": File(b"d\n")})
    with pytest.raises(OSError):
        _sync(new, tmp_path)
    after = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before, "no file replaced, no temp file left behind"
    assert not (tmp_path / "c").exists(), "directories made for the failed write are removed"
