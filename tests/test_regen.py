"""Regeneration keeps the user's edits and touches only what a spec change reaches.

The long run of the edit/regen cycles is ``python tests/regen_cycles.py --cycles 5000``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import regen_cycles
from conftest import MINIMAL_SPEC
from vlagen.api import generate
from vlagen.cli import main
from vlagen.load import load_spec_text

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("seed", [0, 1])
def test_random_edits_survive_random_spec_changes(seed: int, tmp_path: Path) -> None:
    tally = regen_cycles.run(150, seed, tmp_path / "out")
    assert tally.violations == []
    assert tally.lost == 0
    # The cycles exercise every path: clean merges, conflicts, files no longer generated.
    assert tally.cycles == 150 and tally.edits > 300
    assert tally.merged > 50 and tally.conflicts > 50 and tally.regions >= tally.conflicts


def _changed(spec: str, old: str, new: str) -> list[str]:
    """The files a one-field change of example ``spec`` rewrites (added, removed or changed)."""
    text = (REPO / "specs" / spec).read_text()
    assert old in text
    a = generate(load_spec_text(text, spec).spec).tree
    b = generate(load_spec_text(text.replace(old, new), spec).spec).tree
    return sorted(p for p in a.keys() | b.keys() if a.get(p) != b.get(p))


PACKAGE = "src/libero_openvla_oft"


def test_a_learning_rate_reaches_the_spec_and_each_framework_config() -> None:
    changed = _changed("libero_openvla_oft.yaml", "learning_rate: 1.0e-4", "learning_rate: 2e-4")
    assert changed == [
        "README.md",  # the siiRL section's map onto siiRL's SRPO example lists the rate
        f"{PACKAGE}/spec.json",
        f"{PACKAGE}/spec.py",
        f"{PACKAGE}/targets/rlinf/config.yaml",
        f"{PACKAGE}/targets/siirl/train.py",  # siiRL's config is built in Python
        "vlagen.yaml",  # the package's copy of its spec
    ]


def test_a_camera_size_reaches_only_the_spec_and_the_readme() -> None:
    # The env and the model read image shapes from spec.py, so no code file changes.
    changed = _changed(
        "libero_openvla_oft.yaml",
        "{name: wrist, height: 256, width: 256, role: wrist}",
        "{name: wrist, height: 224, width: 224, role: wrist}",
    )
    assert changed == ["README.md", f"{PACKAGE}/spec.json", f"{PACKAGE}/spec.py", "vlagen.yaml"]


def test_an_edited_file_of_a_renamed_package_is_told_where_it_went(
    runner, spec_file, tmp_path
) -> None:
    """Regen after renaming the package said to resolve conflict markers the edited file,
    left at its old path, does not have."""
    out = tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec_file()), "-o", str(out)]).exit_code == 0
    edited = out / "src/tiny_vla/env/rewards.py"
    mine = edited.read_text() + "# mine\n"
    edited.write_text(mine)
    renamed = spec_file(
        MINIMAL_SPEC.replace("name: tiny-vla", "name: tiny-vla\n  package: renamed")
    )
    regen = runner.invoke(main, ["regen", str(renamed), "-o", str(out)])
    assert regen.exit_code == 1
    assert (
        "conflict  src/tiny_vla/env/rewards.py  (generated at src/renamed/env/rewards.py now, "
        "without your edit, which stays here: carry it over, then delete this file"
    ) in regen.stdout
    assert regen.stderr == (
        "vlagen: 1 file vlagen no longer generates holds your edits: carry them over or move "
        "them as each line says, and delete it; then run `vlagen regen` again\n"
    )
    assert edited.read_text() == mine and "<<<<<<<" not in mine
    check = runner.invoke(main, ["check", str(renamed), "-o", str(out)])
    assert check.exit_code == 1 and "<<<<<<<" not in check.output
    assert "1 file vlagen no longer generates holds your edits" in check.stderr


@pytest.mark.parametrize("command", ["regen", "check", "diff"])
def test_a_package_without_its_manifest_is_named_with_what_to_do(
    runner, spec_file, tmp_path, monkeypatch, command
) -> None:
    """`regen pkg/vlagen.yaml` without -o fell back to ./<project name> and said that did not
    exist."""
    out = tmp_path / "pkg"
    assert runner.invoke(main, ["new", str(spec_file()), "-o", str(out)]).exit_code == 0
    (out / ".vlagen/manifest.json").unlink()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, [command, "pkg/vlagen.yaml"])
    assert result.exit_code == 2
    assert result.output.startswith(
        "vlagen: pkg has no .vlagen/manifest.json, so it is no longer a vlagen output"
    )
    assert "git checkout -- pkg/.vlagen/manifest.json" in result.output
    assert "`vlagen new pkg/vlagen.yaml -o pkg --force`" in result.output
    assert "tiny-vla" not in result.output and not (tmp_path / "tiny-vla").exists()
    again = runner.invoke(main, ["new", "pkg/vlagen.yaml", "-o", "pkg", "--force"])
    assert again.exit_code == 0, again.output
    assert runner.invoke(main, ["check", "pkg/vlagen.yaml"]).exit_code == 0
