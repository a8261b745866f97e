"""``docs/integrate-a-simulator.md`` as a user follows it: its spec generates a package with
the backend scaffold, the check names what is left, the page's class passes every check on
the real MetaDrive, the smoke run drives the tiny policy in it, and a regeneration keeps the
class. The outputs the page shows are what the commands print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import REPO
from vlagen.cli import main

DOC = REPO / "docs" / "integrate-a-simulator.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
PACKAGE = "metadrive_vla"
SCAFFOLD = Path("src") / PACKAGE / "sim.py"
#: Appended to the page's smoke run, as the README commands test does: a few decisions.
QUICK = ["--max-episode-steps", "12"]


def _blocks(kind: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(DOC.read_text()) if lang == kind]


def _shown(block: str) -> list[str]:
    """The lines of a shown output that every run prints: not ``...``, not the timings."""
    return [line for line in block.splitlines() if line != "..." and not line.startswith("timing:")]


def _module(package: Path, module: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(package / "src"), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=package,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _commands() -> list[list[str]]:
    return [line.split() for block in _blocks("bash") for line in block.splitlines()]


def test_the_page_shows_the_commands_this_test_runs() -> None:
    assert _commands() == [
        ["vlagen", "new", "metadrive.yaml", "-o", "metadrive-vla"],
        ["cd", "metadrive-vla"],
        ["pip", "install", "-e", "'.[test]'", "'metadrive-simulator>=0.4.3'"],
        ["python", "-m", f"{PACKAGE}.env.check"],
        ["python", "-m", f"{PACKAGE}.env.check"],
        ["python", "-m", f"{PACKAGE}.smoke", "--episodes", "2"],
    ]


@pytest.mark.slow
def test_the_page_runs_as_written(tmp_path: Path) -> None:
    (spec_text,) = _blocks("yaml")
    (class_text,) = _blocks("python")
    bare_shown, done_shown = _blocks("text")
    spec = tmp_path / "metadrive.yaml"
    spec.write_text(spec_text)
    package = tmp_path / "metadrive-vla"
    made = CliRunner().invoke(main, ["new", str(spec), "-o", str(package)])
    assert made.exit_code == 0, made.output
    assert (package / SCAFFOLD).read_text().startswith("# Scaffolded by vlagen")

    bare = _module(package, f"{PACKAGE}.env.check")
    assert bare.returncode == 1, bare.stdout + bare.stderr
    for line in _shown(bare_shown):
        assert line in bare.stdout.splitlines(), f"the page shows {line!r}:\n{bare.stdout}"

    (package / SCAFFOLD).write_text(class_text)
    done = _module(package, f"{PACKAGE}.env.check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("all 11 checks passed"), done.stdout
    for line in _shown(done_shown):
        assert line in done.stdout.splitlines(), f"the page shows {line!r}:\n{done.stdout}"

    smoke = _module(package, f"{PACKAGE}.smoke", "--episodes", "2", *QUICK)
    assert smoke.returncode == 0, smoke.stderr
    assert "2 episodes" in smoke.stdout and "steps/s" in smoke.stdout, smoke.stdout

    changed = (
        (package / "vlagen.yaml")
        .read_text()
        .replace("max_episode_steps: 200", "max_episode_steps: 160")
    )
    (package / "vlagen.yaml").write_text(changed)
    regen = CliRunner().invoke(main, ["regen", str(package / "vlagen.yaml")])
    assert regen.exit_code == 0, regen.output
    assert (package / SCAFFOLD).read_text() == class_text
    assert "160" in (package / "src" / PACKAGE / "spec.json").read_text()
