"""A backend class named inside the package (``env.backend_class: <package>.<module>:Class``)
is scaffolded once, for the spec's shapes; the package's conformance check fails on the bare
scaffold naming each method left to write, and passes once they are written, as a user
would write them; regeneration keeps the user's file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import MINIMAL_SPEC, spec_errors
from vlagen.cli import main

CLASS_PATH = "tiny_vla.sim:PointMass"
SCAFFOLD = Path("src/tiny_vla/sim.py")

#: What a user writes into the scaffold: a point mass pushed towards a seeded goal, drawn
#: as a dot on the camera image; success when it is close, progress as distance closed.
IMPLEMENTATION = '''\
"""A point mass on a plane, pushed by the control towards a seeded goal."""

from __future__ import annotations

import numpy as np

from tiny_vla.env.actions import CONTROL_HIGH, CONTROL_LOW
from tiny_vla.env.backends.base import Obs, Task
from tiny_vla.spec import SPEC

CAMERA = SPEC.env.cameras[0]


class PointMass:
    control_low = np.asarray(CONTROL_LOW, dtype=np.float32)
    control_high = np.asarray(CONTROL_HIGH, dtype=np.float32)

    def __init__(self, index: int) -> None:
        self.index = index
        self.position = np.zeros(2)
        self.goal = np.zeros(2)

    @classmethod
    def tasks(cls) -> tuple[Task, ...]:
        return (Task(0, SPEC.env.task, num_states=3),)

    def reset(self, *, seed: int, task_id: int, state_id: int) -> tuple[Obs, dict]:
        rng = np.random.default_rng([seed, task_id, state_id])
        self.position = rng.uniform(-1, 1, 2)
        self.goal = rng.uniform(-1, 1, 2)
        return self._observe(), {}

    def step(self, control: np.ndarray) -> tuple[Obs, float, bool, bool, dict]:
        before = float(np.linalg.norm(self.goal - self.position))
        self.position = np.clip(self.position + 0.1 * np.asarray(control, float), -1, 1)
        after = float(np.linalg.norm(self.goal - self.position))
        success = after < 0.05
        info = {"success": success, "progress": before - after}
        return self._observe(), -after, success, False, info

    def close(self) -> None:
        self.position = self.goal = np.zeros(2)

    def _observe(self) -> Obs:
        image = np.full((CAMERA.height, CAMERA.width, 3), 255, np.uint8)
        scale = np.array([CAMERA.width - 1, CAMERA.height - 1]) / 2
        for point, colour in ((self.goal, (0, 160, 0)), (self.position, (200, 0, 0))):
            x, y = ((point + 1) * scale).astype(int)
            image[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2] = colour
        return {CAMERA.name: image}
'''


def _spec_text(**env: object) -> str:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["env"].update(
        preset="custom",
        backend_class=CLASS_PATH,
        workers=0,
        rewards=[
            {"name": "closer", "source": "progress", "weight": 1.0},
            {"name": "reached", "source": "success", "weight": 1.0},
        ],
        **env,
    )
    return yaml.safe_dump(data, sort_keys=False)


def _new(tmp_path: Path) -> Path:
    spec = tmp_path / "vlagen.yaml"
    spec.write_text(_spec_text())
    out = tmp_path / "pkg"
    done = CliRunner().invoke(main, ["new", str(spec), "-o", str(out)])
    assert done.exit_code == 0, done.output
    return out


def _check(package: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(package / "src"), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "tiny_vla.env.check", "--steps", "30"],
        cwd=package,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _smoke(package: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tiny_vla.smoke", "--episodes", "2", "--max-episode-steps", "5"],
        cwd=package,
        env={**os.environ, "PYTHONPATH": str(package / "src"), "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_info_key_of_any_text_stays_inside_the_docstrings(tmp_path: Path) -> None:
    key = 'a"""b\\c\'d'
    data = yaml.safe_load(_spec_text())
    data["env"]["rewards"].append({"name": "odd", "source": "info", "key": key})
    spec = tmp_path / "vlagen.yaml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "pkg"
    done = CliRunner().invoke(main, ["new", str(spec), "-o", str(out)])
    assert done.exit_code == 0, done.output
    for path in (SCAFFOLD, Path("tests/test_env_check.py")):
        compile((out / path).read_text(), str(path), "exec")  # a SyntaxError fails here
    assert json.dumps(key) in (out / SCAFFOLD).read_text()


def test_the_scaffold_lays_out_the_spec_and_is_written_once(tmp_path: Path) -> None:
    package = _new(tmp_path)
    text = (package / SCAFFOLD).read_text()
    assert text.startswith("# Scaffolded by vlagen")
    assert "class PointMass:" in text
    assert '"front": uint8 [64, 64, 3], RGB (main camera)' in text
    assert "float32 [2], within [-1.0, -1.0]..[1.0, 1.0] per channel." in text
    assert '"progress": float' in text and '"success": bool' in text
    for method in ("reset", "step", "close"):
        assert f'"PointMass.{method}: ' in text  # each raises NotImplementedError naming itself
    # the user's implementation survives a regeneration after a spec change
    (package / SCAFFOLD).write_text(IMPLEMENTATION)
    spec = tmp_path / "vlagen.yaml"
    spec.write_text(_spec_text(max_episode_steps=12))
    done = CliRunner().invoke(main, ["regen", str(spec), "-o", str(package)])
    assert done.exit_code == 0, done.output
    assert (package / SCAFFOLD).read_text() == IMPLEMENTATION
    assert "max_episode_steps: 12" in (package / "vlagen.yaml").read_text()


@pytest.mark.slow
def test_the_check_names_what_is_left_then_passes_on_the_users_class(tmp_path: Path) -> None:
    package = _new(tmp_path)
    bare = _check(package)
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert "Traceback" not in bare.stdout + bare.stderr
    assert (
        "FAIL  implemented  not implemented yet (they raise NotImplementedError): "
        "PointMass.reset, PointMass.step, PointMass.close;"
    ) in bare.stdout
    assert "PASS  bounds" in bare.stdout and "PASS  tasks" in bare.stdout
    stopped = _smoke(package)  # in-process envs (workers: 0): the scaffold's close raises too
    assert stopped.returncode == 2, stopped.stderr
    assert "Traceback" not in stopped.stderr, stopped.stderr
    message = stopped.stderr.strip().splitlines()[-1]
    assert message.startswith("python -m tiny_vla.smoke: error: env 0: reset failed")
    assert "python -m tiny_vla.env.check says what is left" in message
    (package / SCAFFOLD).write_text(IMPLEMENTATION)
    done = _check(package)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("all 11 checks passed"), done.stdout
    smoke = _smoke(package)
    assert smoke.returncode == 0, smoke.stderr
    assert "steps/s" in smoke.stdout


def test_one_module_cannot_hold_both_scaffolds() -> None:
    data = yaml.safe_load(_spec_text())
    data["model"].update(family="custom", class_path="tiny_vla.sim:Net")
    assert any(
        "'tiny_vla.sim' is model.class_path's module too" in line for line in spec_errors(data)
    )
