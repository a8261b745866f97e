"""`pip install .` in a fresh venv gives a working `vlagen` whose templates come from the wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import GOLDENS, REPO, SPECS, compiled_once, fresh_venv, install
from test_goldens import _tree


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of a copy of the sources: setuptools builds in the source tree, and a
    ``build/`` left there by an earlier build would ship modules deleted since."""
    out, source = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for name in ("generator", "templates", "specs"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
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
    modules = {
        f"vlagen/{p.relative_to(REPO / 'generator' / 'vlagen').as_posix()}"
        for p in (REPO / "generator" / "vlagen").rglob("*.py")
    }
    data = ("vlagen/templates/", "vlagen/examples/")  # packages of data, not code
    shipped = {n for n in names if n.endswith(".py") and not n.startswith(data)}
    assert shipped == modules, f"missing: {modules - shipped}; not ours: {shipped - modules}"
    assert not any(n.startswith(("tests/", "specs/", "generated_examples/")) for n in names)


def test_wheel_ships_the_example_specs(wheel: Path) -> None:
    """`vlagen init --example NAME` reads them from the installed package."""
    archive = zipfile.ZipFile(wheel)
    shipped = {n for n in archive.namelist() if n.startswith("vlagen/examples/")}
    assert {f"vlagen/examples/{s.name}" for s in SPECS} <= shipped
    for spec in SPECS:
        assert archive.read(f"vlagen/examples/{spec.name}") == spec.read_bytes()


@pytest.mark.slow
def test_fresh_venv_install_reproduces_the_goldens(wheel: Path, tmp_path: Path) -> None:
    python = fresh_venv("wheel")
    install(python, [str(wheel)])
    bin_dir = Path(python).parent
    for spec in SPECS:
        out = tmp_path / spec.stem
        # Run outside the repo so nothing can be imported from the checkout.
        subprocess.run(
            [bin_dir / "vlagen", "new", str(spec), "-o", str(out)],
            check=True,
            capture_output=True,
            cwd=tmp_path,
            env=compiled_once(dict(os.environ)),
        )
        assert _tree(out) == _tree(GOLDENS / spec.stem), spec.name


def test_a_generated_packages_wheel_ships_the_files_its_code_reads(tmp_path: Path) -> None:
    """Configs and launch scripts live inside the package (``targets/<name>/``): a wheel of
    the generated package must carry them, or an installed package cannot train."""
    golden = shutil.copytree(GOLDENS / "highway_openvla", tmp_path / "golden")  # builds write
    data = sorted(
        p.relative_to(golden / "src").as_posix()
        for p in (golden / "src").rglob("*")
        if p.suffix in (".json", ".yaml", ".sh")
    )
    assert {"highway_openvla/targets/rlinf/config.yaml", "highway_openvla/spec.json"} <= set(data)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), golden],
        check=True,
        capture_output=True,
    )
    (built,) = tmp_path.glob("highway_openvla-*.whl")
    names = set(zipfile.ZipFile(built).namelist())
    missing = [name for name in data if name not in names]
    assert not missing, f"package data missing from the wheel: {missing}"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_generated_package_keeps_what_installing_and_testing_write_out_of_git(
    tmp_path: Path,
) -> None:
    """``git add -A`` after ``pip install -e .`` and a test run adds the package's source
    only: its ``.gitignore`` names what they write."""
    golden = shutil.copytree(GOLDENS / "highway_openvla", tmp_path / "pkg")
    written = [
        "src/highway_openvla.egg-info/PKG-INFO",
        "src/highway_openvla/__pycache__/smoke.cpython-311.pyc",
        "build/lib/highway_openvla/smoke.py",
        "dist/highway_openvla-0.1.0.tar.gz",
        ".pytest_cache/README.md",
        ".ruff_cache/CACHEDIR.TAG",
        ".venv/pyvenv.cfg",
        "checkpoints/tiny/config.json",  # the README's commands: model tiny, the data commands
        "data/train.parquet",
    ]
    for name in written:
        (golden / name).parent.mkdir(parents=True, exist_ok=True)
        (golden / name).write_text("")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    git = ["git", "-C", str(golden)]
    subprocess.run([*git, "init", "-q"], check=True, env=env)
    added = subprocess.run(
        [*git, "add", "-A", "--dry-run"], check=True, capture_output=True, text=True, env=env
    ).stdout
    assert "src/highway_openvla/smoke.py" in added and ".gitignore" in added
    assert not [name for name in written if name in added], added
