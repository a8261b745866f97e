"""Regeneration keeps the user's edits and touches only what a spec change reaches.

The long run of the edit/regen cycles is ``python tests/regen_cycles.py --cycles 5000``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import regen_cycles
from vlagen.api import generate
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
    changed = _changed("libero_openvla_oft.yaml", "learning_rate: 5.0e-6", "learning_rate: 1e-5")
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
