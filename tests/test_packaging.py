"""`pip install .` in a fresh venv gives a working `vlagen` whose templates come from the wheel."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import GOLDENS, REPO, SPECS
from test_goldens import _tree


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("vlagen-*.whl")
    return built


def test_wheel_ships_the_templates(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(
        p.relative_to(REPO).as_posix()
        for p in (REPO / "templates").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    missing = [t for t in templates if f"vlagen/{t}" not in names]
    assert not missing, f"templates missing from the wheel: {missing}"
    assert "vlagen/cli.py" in names and "vlagen/targets/siirl_0_2.py" in names
    assert not any(n.startswith(("tests/", "specs/", "generated_examples/")) for n in names)


@pytest.mark.slow
def test_fresh_venv_install_reproduces_the_goldens(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    subprocess.run(
        [bin_dir / "python", "-m", "pip", "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    for spec in SPECS:
        out = tmp_path / spec.stem
        # Run outside the repo so nothing can be imported from the checkout.
        subprocess.run(
            [bin_dir / "vlagen", "new", str(spec), "-o", str(out)],
            check=True,
            capture_output=True,
            cwd=tmp_path,
        )
        assert _tree(out) == _tree(GOLDENS / spec.stem), spec.name
