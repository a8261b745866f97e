"""The pre-commit hook (``.pre-commit-hooks.yaml``) runs a real ``vlagen check``."""

from __future__ import annotations

import shlex
from importlib.metadata import entry_points

import yaml

from conftest import REPO
from vlagen.cli import main

HOOKS = REPO / ".pre-commit-hooks.yaml"


def hook() -> dict:
    (only,) = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    return only


def test_the_hook_file_declares_vlagen_check() -> None:
    found = hook()
    assert found["id"] == "vlagen-check"
    assert found["language"] == "python"  # pre-commit pip-installs this repository
    assert found["pass_filenames"] is False  # the spec and -o come from the user's args
    assert "args" not in found  # the user's: their spec and output directory
    program, command = shlex.split(found["entry"])
    (script,) = entry_points(group="console_scripts", name=program)
    assert script.value == "vlagen.cli:main"
    assert command in main.commands


def test_the_hook_passes_kept_edits_and_fails_a_stale_package(runner, spec_file, tmp_path) -> None:
    """What pre-commit runs: the entry's arguments, then the user's ``args``."""
    spec, out = spec_file(), tmp_path / "pkg"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    argv = [*shlex.split(hook()["entry"])[1:], str(spec), "-o", str(out)]
    assert runner.invoke(main, argv).exit_code == 0
    readme = out / "README.md"
    readme.write_text(readme.read_text() + "an edit\n")
    kept = runner.invoke(main, argv)
    assert (kept.exit_code, kept.stdout) == (0, f"edited    {readme}  (your edit, kept)\n")
    spec.write_text(spec.read_text().replace("task: drive", "task: drive safely"))
    stale = runner.invoke(main, argv)
    assert stale.exit_code == 1
    assert f"run `vlagen regen {spec} -o {out}`" in stale.stderr
