"""Camera sizes are a contract every backend keeps (issue 30, item 4): a gymnasium env
rendering at a size of its own is resized to the spec's and passes the package's
``env.check``; the simulators that take a size are given each camera's own; the generated
docs say which, and how a frame is resized."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MINIMAL_SPEC
from vlagen.api import generate, write
from vlagen.load import load_spec_text
from vlagen.plan import make_plan


def _spec(**env: Any) -> dict:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["env"].update(env)
    return data


def _package(data: dict, out: Path) -> Path:
    write(generate(load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec), out, fresh=True)
    return out


def _run(package: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(package / "src"), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=package, env=env, capture_output=True, text=True, timeout=300
    )


def _gym_spec(env_id: str, choices: int, height: int, width: int) -> dict:
    data = _spec(
        preset="gymnasium",
        gymnasium={"id": env_id},
        cameras=[{"name": "view", "height": height, "width": width}],
        action={"kind": "discrete", "choices": choices},
        max_episode_steps=40,
        workers=0,
    )
    data["model"]["action"]["dim"] = 1
    return data


@pytest.mark.parametrize(
    ("env_id", "needs", "choices", "size"),
    [
        ("LunarLander-v3", "Box2D", 4, (200, 300)),  # the case
        ("CartPole-v1", "pygame", 2, (200, 300)),
        ("CartPole-v1", "pygame", 2, (480, 640)),
    ],
    ids=["lunarlander-smaller", "cartpole-smaller", "cartpole-larger"],
)
def test_a_gymnasium_env_at_another_size_passes_env_check(
    env_id: str, needs: str, choices: int, size: tuple[int, int], tmp_path: Path
) -> None:
    """Both render 400x600; the spec asks for less (area) or more (bilinear)."""
    pytest.importorskip(needs)
    package = _package(_gym_spec(env_id, choices, *size), tmp_path / "pkg")
    done = _run(package, "-m", "tiny_vla.env.check", "--steps", "20")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 11 checks passed" in done.stdout
    assert f"cameras view {size[0]}x{size[1]}" in done.stdout


RESIZE_CHECK = """
import numpy as np
from tiny_vla.env.backends.gymnasium_env import resize

rng = np.random.default_rng(0)
image = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
# an integer factor: the mean of each 2x2 block
half = resize(image, 20, 30)
blocks = image.reshape(20, 2, 30, 2, 3).astype(float).mean(axis=(1, 3))
assert half.dtype == np.uint8 and half.shape == (20, 30, 3)
assert np.abs(half - blocks).max() <= 0.5 + 1e-6, np.abs(half - blocks).max()
# a fractional factor keeps a flat image flat and the mean of the whole
flat = np.full((7, 5, 3), 77, np.uint8)
assert (resize(flat, 3, 4) == 77).all()
mean = resize(image, 17, 23).astype(float).mean()
assert abs(mean - image.astype(float).mean()) < 1.0, mean
# growing: bilinear between pixel centres, the ends held
row = np.array([[[0, 0, 0], [100, 100, 100]]], np.uint8)
assert resize(row, 1, 4)[0, :, 0].tolist() == [0, 25, 75, 100]
# the spec's size already: the same array, not a copy
assert resize(image, 40, 60) is image
print("ok")
"""


def test_the_resize_averages_areas_and_interpolates_growth(tmp_path: Path) -> None:
    package = _package(_gym_spec("CartPole-v1", 2, 64, 96), tmp_path / "pkg")
    done = _run(package, "-c", RESIZE_CHECK)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok"


def _camera_doc(data: dict) -> str:
    return make_plan(load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec).env.camera_doc


def test_every_preset_says_how_it_keeps_the_size(tmp_path: Path) -> None:
    """The backend's docstring and the package README say it, interpolation included."""
    docs = {
        "gymnasium": _camera_doc(_gym_spec("CartPole-v1", 2, 64, 96)),
        "highway": _camera_doc(_spec()),
    }
    assert docs["gymnasium"].startswith("the simulator renders at a size of its own; a frame")
    assert "area averaging" in docs["gymnasium"] and "bilinear" in docs["gymnasium"]
    assert docs["highway"].startswith(
        "the simulator renders at the spec's size (highway-env's screen_width and screen_height"
    )
    package = _package(_gym_spec("CartPole-v1", 2, 64, 96), tmp_path / "pkg")
    readme = " ".join((package / "README.md").read_text().split())
    backend = (package / "src/tiny_vla/env/backends/gymnasium_env.py").read_text()
    assert f"Camera images are uint8 at the sizes above: {docs['gymnasium']}." in readme
    assert "Camera sizes: the simulator renders at a size of its own" in backend


FAKE_LIBERO = """
import json, sys, types
import numpy as np
from tiny_vla.env.backends import libero

made = {}
class OffScreenRenderEnv:
    def __init__(self, **kwargs):
        made.update(kwargs)
    def close(self):
        pass
fake = types.SimpleNamespace(
    OffScreenRenderEnv=OffScreenRenderEnv, get_libero_path=lambda name: "/nowhere"
)
libero.require = lambda module, install: fake
task = types.SimpleNamespace(problem_folder="p", bddl_file="t.bddl")
suite = types.SimpleNamespace(get_task=lambda i: task)
libero.LiberoBackend(0)._build(suite, 0)
made.pop("bddl_file_name")
print(json.dumps(made))
"""

FAKE_MANISKILL = """
import json, sys, types
import numpy as np
from tiny_vla.env.backends import maniskill

made = {}
def make(task, **kwargs):
    made.update(kwargs)
fake = types.SimpleNamespace(make=make)
maniskill.require = lambda module, install: fake
maniskill.ManiSkillVector(2)
print(json.dumps(made["sensor_configs"]))
"""


def test_simulators_that_take_a_size_get_each_cameras_own(tmp_path: Path) -> None:
    """LIBERO and ManiSkill render each camera at its own size, not all at the first's."""
    cameras = [
        {"name": "agentview", "height": 128, "width": 160, "role": "main"},
        {"name": "wrist", "height": 64, "width": 96, "role": "wrist"},
    ]
    libero = _spec(
        preset="libero", cameras=cameras, action={"kind": "delta_ee"}, task_suite="libero_10"
    )
    libero["model"]["action"]["dim"] = 7
    package = _package(libero, tmp_path / "libero")
    done = _run(package, "-c", FAKE_LIBERO)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "camera_names": ["agentview", "robot0_eye_in_hand"],
        "camera_heights": [128, 64],
        "camera_widths": [160, 96],
    }
    maniskill = _spec(preset="maniskill", cameras=cameras, action={"kind": "delta_ee"}, workers=0)
    maniskill["model"]["action"]["dim"] = 7
    package = _package(maniskill, tmp_path / "maniskill")
    done = _run(package, "-c", FAKE_MANISKILL)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "base_camera": {"width": 160, "height": 128},
        "hand_camera": {"width": 96, "height": 64},
    }
