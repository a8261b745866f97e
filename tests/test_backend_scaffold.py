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


#: A simulator in physical units: acceleration in m/s^2 and steering in rad, its own bounds
#: written in the class as a user would, not read from the spec.
PHYSICAL = '''\
"""A car on a line: acceleration (m/s^2) and steering (rad), in the simulator's units."""

from __future__ import annotations

import numpy as np

from tiny_vla.env.backends.base import Obs, Task
from tiny_vla.spec import SPEC

CAMERA = SPEC.env.cameras[0]


class PointMass:
    control_low = np.array([-3.0, -0.6], dtype=np.float32)
    control_high = np.array([2.0, 0.6], dtype=np.float32)

    def __init__(self, index: int) -> None:
        self.index = index
        self.speed = self.heading = 0.0

    @classmethod
    def tasks(cls) -> tuple[Task, ...]:
        return (Task(0, SPEC.env.task),)

    def reset(self, *, seed: int, task_id: int, state_id: int) -> tuple[Obs, dict]:
        self.speed = float(np.random.default_rng(seed).uniform(0, 5))
        self.heading = 0.0
        return self._observe(), {"success": False, "progress": 0.0}

    def step(self, control: np.ndarray) -> tuple[Obs, float, bool, bool, dict]:
        control = np.asarray(control, np.float32)
        if not np.all((control >= self.control_low) & (control <= self.control_high)):
            raise ValueError(f"control {control} outside the simulator's bounds")
        accel, steer = (float(v) for v in control)
        self.speed = max(self.speed + 0.1 * accel, 0.0)
        self.heading += 0.1 * steer
        done = self.speed > 8.0
        return self._observe(), self.speed, done, False, {"success": done, "progress": self.speed}

    def close(self) -> None:
        self.speed = 0.0

    def _observe(self) -> Obs:
        image = np.zeros((CAMERA.height, CAMERA.width, 3), np.uint8)
        image[..., 0] = min(int(self.speed * 30), 255)
        image[..., 1] = int((np.sin(self.heading) + 1) * 127)
        return {CAMERA.name: image}
'''

PHYSICAL_BOUNDS = {"low": [-3, -0.6], "high": [2, 0.6]}


def _physical(tmp_path: Path) -> Path:
    spec = tmp_path / "vlagen.yaml"
    spec.write_text(_spec_text(action={"kind": "continuous", "dim": 2, **PHYSICAL_BOUNDS}))
    out = tmp_path / "pkg"
    done = CliRunner().invoke(main, ["new", str(spec), "-o", str(out)])
    assert done.exit_code == 0, done.output
    return out


MAPPING_CHECK = """
import numpy as np
from tiny_vla.env import actions

canonical = np.array([[[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0], [5.0, -5.0]]], np.float32)
controls = actions.to_control(canonical)
np.testing.assert_allclose(controls[0], [[-3, -0.6], [2, 0.6], [-0.5, 0], [2, -0.6]], atol=1e-6)
np.testing.assert_allclose(actions.to_canonical(controls)[0, :3], canonical[0, :3], atol=1e-6)
print("ok")
"""


def test_a_simulator_in_physical_units_passes_the_check(tmp_path: Path) -> None:
    """Issue 30, item 5: env.action.low/high declare the simulator's bounds; the scaffold
    writes them into the class, the core maps [-1, 1] onto them, and env.check passes."""
    package = _physical(tmp_path)
    scaffold = (package / SCAFFOLD).read_text()
    assert "control_low = np.array((-3.0, -0.6), dtype=np.float32)" in scaffold
    assert "control_high = np.array((2.0, 0.6), dtype=np.float32)" in scaffold
    assert "float32 [2], within [-3.0, -0.6]..[2.0, 0.6] per channel." in scaffold
    env = {**os.environ, "PYTHONPATH": str(package / "src")}
    mapped = subprocess.run(
        [sys.executable, "-c", MAPPING_CHECK], env=env, capture_output=True, text=True
    )
    assert mapped.stdout.strip() == "ok", mapped.stderr
    (package / SCAFFOLD).write_text(PHYSICAL)
    done = _check(package)
    assert done.returncode == 0, done.stdout + done.stderr
    bounds = "PASS  bounds       control bounds [-3.0, -0.6]..[2.0, 0.6], as the spec's"
    assert bounds in done.stdout
    assert done.stdout.rstrip().endswith("all 11 checks passed"), done.stdout


def test_bounds_the_spec_does_not_declare_fail_the_check_saying_where(tmp_path: Path) -> None:
    """The issue's user: the simulator's bounds, the spec's default [-1, 1]."""
    package = _new(tmp_path)
    (package / SCAFFOLD).write_text(PHYSICAL)
    done = _check(package)
    assert done.returncode == 1
    assert (
        "FAIL  bounds       control_low[0] is -3, the spec's is -1: the core maps actions to "
        "[-1.0, -1.0]..[1.0, 1.0]; where the backend's are the simulator's, declare them in "
        "the spec (env.action.low and high) and regenerate"
    ) in done.stdout


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (
            {"low": [-3, -0.6, 0]},
            "env.action.low: has 3 values; env.action.dim is 2 (give one per channel, or one "
            "number for all)",
        ),
        (
            {"low": [-3, 1], "high": [2, 0.6]},
            "env.action.high[1]: high (0.6) must be greater than low (1) in channel 1",
        ),
        ({"low": 2, "high": 2}, "env.action.high: high (2) must be greater than low (2)"),
        ({"high": float("inf")}, "env.action.high: Input should be a finite number, got inf"),
        (
            {"low": 100000000, "high": 100000001},
            "env.action.high: high (1e+08) and low (1e+08) are one number in float32",
        ),
        ({"low": -1e-300, "high": 1e-300}, "are one number in float32, in which the env core"),
    ],
)
def test_control_bounds_are_validated_where_they_are_written(action: dict, error: str) -> None:
    data = yaml.safe_load(_spec_text(action={"kind": "continuous", "dim": 2, **action}))
    assert any(error in line for line in spec_errors(data)), spec_errors(data)


def test_one_number_is_every_channels_bound_and_presets_keep_their_own() -> None:
    from vlagen.load import load_spec_text
    from vlagen.plan import make_plan

    data = yaml.safe_load(_spec_text(action={"kind": "continuous", "dim": 2, "low": -2}))
    plan = make_plan(load_spec_text(yaml.safe_dump(data)).spec)
    assert plan.env.control_low == (-2.0, -2.0) and plan.env.control_high == (1.0, 1.0)
    assert plan.spec.env.action.low == [-2.0, -2.0]  # the resolved spec records them
    data["env"].update(preset="highway", action={"kind": "continuous", "dim": 2, "high": 3})
    data["env"].pop("backend_class")
    data["env"]["rewards"] = [{"name": "closer", "source": "progress"}]
    (line,) = spec_errors(data)
    assert line.endswith(
        "env.action.high: preset 'highway' takes controls in [-1, -1]..[1, 1], which vlagen "
        "maps to; remove env.action.low/high (the spec declares bounds only on presets "
        "gymnasium, custom and synthetic)"
    )
    data["env"]["action"]["high"] = [1, 1]  # the preset's own: harmless
    make_plan(load_spec_text(yaml.safe_dump(data)).spec)
