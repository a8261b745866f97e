"""`vlagen init --from-gymnasium ENV_ID`: a starter spec read from a real Gymnasium env.

Each spec is checked against the env's own spaces and rendered frame, read here from
gymnasium itself, and must load and generate as written. The error paths use tiny envs
registered by this module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import gym_pusht  # noqa: F401  (registers gym_pusht/PushT-v0)
import gymnasium as gym
import highway_env  # noqa: F401  (registers highway-v0)
import numpy as np
import pytest
import yaml

from vlagen.api import generate
from vlagen.cli import main
from vlagen.load import load_spec
from vlagen.presets import HIGHWAY_HZ, PRESETS

WEIRD_KEY = 'pos: x # "y"\nz'


class TinyEnv(gym.Env):
    """A configurable env: its spaces, its frame, and a failure to raise, from kwargs."""

    metadata: ClassVar[dict] = {"render_modes": ["rgb_array"]}
    closed: ClassVar[list[str]] = []

    def __init__(
        self,
        render_mode: str | None = None,
        action: str = "box",
        observation: str = "box",
        frame: Any = (8, 12),
        fail: str | None = None,
        name: str = "tiny",
    ) -> None:
        if fail == "dependency":
            raise gym.error.DependencyNotInstalled("pygame is not installed")
        self.name, self.frame = name, frame
        box = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
        self.action_space = {
            "box": box,
            "dict": gym.spaces.Dict({"move": box, "grip": gym.spaces.Discrete(2)}),
        }[action]
        self.observation_space = {
            "box": box,
            "dict": gym.spaces.Dict(
                {WEIRD_KEY: box, "image": gym.spaces.Box(0, 255, (8, 12, 3), np.uint8)}
            ),
        }[observation]

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple:
        return self.observation_space.sample(), 0.0, False, False, {}

    def render(self) -> Any:
        return None if self.frame is None else np.zeros((*self.frame, 3), np.uint8)

    def close(self) -> None:
        TinyEnv.closed.append(self.name)


TINY = {
    "VlagenTiny-v0": {},
    "VlagenDictAction-v0": {"action": "dict", "name": "dict-action"},
    "VlagenNoFrame-v0": {"frame": None, "name": "no-frame"},
    "VlagenDictObs-v0": {"observation": "dict"},
    "MountainCar-v90": {"fail": "dependency"},  # gymnasium's name: its extra is known
}


@pytest.fixture(scope="module", autouse=True)
def tiny_envs():
    for env_id, kwargs in TINY.items():
        gym.register(env_id, entry_point=TinyEnv, kwargs=kwargs)
    yield
    for env_id in TINY:
        gym.envs.registry.pop(env_id, None)


def _init(runner, path: Path, env_id: str, *args: str):
    return runner.invoke(main, ["init", "--from-gymnasium", env_id, *args, str(path)])


def _written(runner, tmp_path: Path, env_id: str, *args: str) -> tuple[dict, str, Any]:
    """Run init; the spec as data and as text, and its loaded, generated form."""
    path = tmp_path / "spec.yaml"
    result = _init(runner, path, env_id, *args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "vlagen.schema.json").is_file()
    text = path.read_text()
    loaded = load_spec(path)
    assert generate(loaded.spec, loaded.text).tree  # `vlagen new` would write this
    return yaml.safe_load(text), text, loaded.spec


def _real(env_id: str, **kwargs: Any) -> tuple[Any, Any, tuple[int, ...]]:
    """The env's action space, observation space and rendered frame shape."""
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    try:
        env.reset(seed=0)
        return env.action_space, env.observation_space, env.render().shape
    finally:
        env.close()


def _prose(text: str) -> str:
    """The spec's text with its comments' line breaks undone, to search their sentences."""
    return re.sub(r"\n\s*#\s*", " ", text)


def _camera(data: dict) -> dict:
    (camera,) = data["env"]["cameras"]
    return camera


def test_cartpole_discrete_actions_and_the_rendered_frame(runner, tmp_path) -> None:
    data, text, spec = _written(runner, tmp_path, "CartPole-v1")
    action, observation, frame = _real("CartPole-v1")
    env = data["env"]
    assert data["project"]["name"] == "cartpole-v1-vla"
    assert env["preset"] == "gymnasium"
    assert env["gymnasium"] == {"id": "CartPole-v1", "kwargs": {"render_mode": "rgb_array"}}
    assert '    id: "CartPole-v1"\n' in text  # text from the env is a quoted scalar
    assert env["action"] == {"kind": "discrete", "choices": int(action.n)}
    assert data["model"]["action"] == {"dim": 1, "chunk": 1, "bins": int(action.n)}
    assert "one token per choice" in _prose(text)
    assert _camera(data) == {"name": "view", "height": frame[0], "width": frame[1], "role": "main"}
    assert env["max_episode_steps"] == gym.spec("CartPole-v1").max_episode_steps
    # A flat vector observation: the gymnasium backend reads a state only from a Dict key.
    assert observation.shape == (4,) and "state_dim" not in env and spec.env.state_dim == 0
    assert "the gymnasium backend reads a state only from a key of a Dict" in _prose(text)
    assert env["rewards"] == [{"name": "reward", "source": "env", "weight": 1.0}]
    assert data["targets"] == [{"framework": "rlinf", "version": "0.3", "algorithm": "grpo"}]


def test_mountain_car_continuous_box_action(runner, tmp_path) -> None:
    data, text, _ = _written(runner, tmp_path, "MountainCarContinuous-v0")
    action, _, frame = _real("MountainCarContinuous-v0")
    assert data["env"]["action"] == {"kind": "continuous", "dim": int(action.shape[0])}
    assert data["model"]["action"]["dim"] == int(action.shape[0])
    low, high = float(action.low[0]), float(action.high[0])
    assert f"low [{low:g}], high [{high:g}]" in _prose(text)
    assert (_camera(data)["height"], _camera(data)["width"]) == frame[:2]


def test_the_envs_own_bounds_are_declared_and_pass_the_check(runner, tmp_path) -> None:
    """Pendulum takes torque in [-2, 2]: the spec declares it (env.action.low/high), so the
    package's env.check passes on the real env."""
    data, text, spec = _written(runner, tmp_path, "Pendulum-v1")
    action, _, _ = _real("Pendulum-v1")
    low, high = float(action.low[0]), float(action.high[0])
    assert (low, high) != (-1.0, 1.0)
    assert data["env"]["action"] == {"kind": "continuous", "dim": 1, "low": low, "high": high}
    assert f"bounds low [{low:g}], high [{high:g}], declared as env.action.low/high" in _prose(text)
    package = tmp_path / "pkg"
    assert (
        runner.invoke(main, ["new", str(tmp_path / "spec.yaml"), "-o", str(package)]).exit_code == 0
    )
    done = subprocess.run(
        [sys.executable, "-m", f"{spec.project.import_name}.env.check", "--steps", "20"],
        cwd=package,
        env={**os.environ, "PYTHONPATH": str(package / "src"), "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  bounds       control bounds [-2.0]..[2.0], as the spec's" in done.stdout


def test_highway_gets_its_preset(runner, tmp_path) -> None:
    data, text, _ = _written(runner, tmp_path, "highway-v0")
    action, observation, frame = _real("highway-v0")
    env, preset = data["env"], PRESETS["highway"]
    assert env["preset"] == "highway" and env["gymnasium"] == {"id": "highway-v0"}
    assert isinstance(action, gym.spaces.Discrete) and action.n == preset.choices
    assert env["action"] == {"kind": "discrete", "choices": int(action.n)}
    assert "preset 'highway' also takes continuous (dim 2)" in _prose(text)
    assert (_camera(data)["height"], _camera(data)["width"]) == frame[:2]
    assert "state_dim" not in env and str(observation.shape) in _prose(text)  # none in preset
    made = gym.make("highway-v0")
    duration = made.unwrapped.config["duration"]
    made.close()
    assert env["max_episode_steps"] == duration * HIGHWAY_HZ
    assert "# - {name: crash, source: collision, weight: -1.0}" in text


def test_pusht_gets_its_preset_camera_and_state(runner, tmp_path) -> None:
    data, text, _ = _written(runner, tmp_path, "gym_pusht/PushT-v0")
    # The preset's camera and state are its observation's `pixels` and `agent_pos`.
    action, observation, _ = _real("gym_pusht/PushT-v0", obs_type="pixels_agent_pos")
    env = data["env"]
    assert env["preset"] == "pusht" and env["gymnasium"] == {"id": "gym_pusht/PushT-v0"}
    assert env["action"] == {"kind": "continuous", "dim": int(action.shape[0])}
    height, width = observation["pixels"].shape[:2]
    assert _camera(data) == {"name": "top", "height": height, "width": width, "role": "main"}
    assert env["state_dim"] == observation["agent_pos"].shape[0]
    assert env["max_episode_steps"] == gym.spec("gym_pusht/PushT-v0").max_episode_steps
    assert data["project"]["name"] == "gym-pusht-pusht-v0-vla"
    assert "# - {name: success, source: success, weight: 10.0}" in text


def test_a_dict_observation_gives_the_state_key_quoted(runner, tmp_path) -> None:
    data, text, spec = _written(runner, tmp_path, "VlagenDictObs-v0")
    assert spec.env.gymnasium.state_key == WEIRD_KEY and spec.env.state_dim == 3
    assert data["env"]["gymnasium"]["state_key"] == WEIRD_KEY
    assert "\nz" not in text  # the key's newline is escaped, in the value and the comment
    assert (_camera(data)["height"], _camera(data)["width"]) == (8, 12)


def test_gym_kwargs_reach_make_and_the_spec(runner, tmp_path) -> None:
    kwargs = {"frame": [5, 7], "name": "sized"}
    data, _, _ = _written(runner, tmp_path, "VlagenTiny-v0", "--gym-kwargs", json.dumps(kwargs))
    assert data["env"]["gymnasium"]["kwargs"] == {"render_mode": "rgb_array", **kwargs}
    assert (_camera(data)["height"], _camera(data)["width"]) == (5, 7)


@pytest.mark.parametrize(
    ("env_id", "args", "message"),
    [
        ("NoSuchEnv-v0", [], "gymnasium has no env 'NoSuchEnv-v0': Environment `NoSuchEnv`"),
        ("no_such_module:Env-v0", [], "cannot import 'no_such_module' to register 'Env-v0'"),
        (
            "VlagenDictAction-v0",
            [],
            "'VlagenDictAction-v0' has the action space Dict('grip': Discrete(2), 'move': "
            "Box(-1.0, 1.0, (3,), float32)), which the gymnasium backend cannot step; "
            "--from-gymnasium supports Discrete(n) (starting at 0) and a 1-D Box(d,)",
        ),
        ("VlagenNoFrame-v0", [], "'VlagenNoFrame-v0' cannot render an RGB frame"),
        (
            "MountainCar-v90",
            [],
            "'MountainCar-v90' needs a package that is not installed: pygame is not installed; "
            'install it: pip install "gymnasium[classic-control]"',
        ),
        ("VlagenTiny-v0", ["--gym-kwargs", "[1]"], "--gym-kwargs must be a JSON object"),
        ("highway-v0", ["--gym-kwargs", '{"a": 1}'], "sets the env's keyword arguments"),
    ],
)
def test_failures_are_one_line_exit_2_and_write_nothing(
    runner, tmp_path, env_id: str, args: list[str], message: str
) -> None:
    TinyEnv.closed.clear()
    result = _init(runner, tmp_path / "spec.yaml", env_id, *args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("vlagen: ") and message in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []
    if env_id in ("VlagenDictAction-v0", "VlagenNoFrame-v0"):
        assert TinyEnv.closed == [TINY[env_id]["name"]]  # made, then closed


def test_an_existing_spec_is_refused_before_the_env_is_made(runner, tmp_path) -> None:
    (tmp_path / "spec.yaml").write_text("mine\n")
    TinyEnv.closed.clear()
    result = _init(runner, tmp_path / "spec.yaml", "VlagenTiny-v0")
    assert result.exit_code == 1 and "exists; use --force" in result.output
    assert TinyEnv.closed == [] and (tmp_path / "spec.yaml").read_text() == "mine\n"
    assert _init(runner, tmp_path / "spec.yaml", "VlagenTiny-v0", "--force").exit_code == 0
    assert load_spec(tmp_path / "spec.yaml").spec.env.gymnasium.id == "VlagenTiny-v0"


def test_gymnasium_loads_only_on_this_path(tmp_path) -> None:
    """And where validate asks gymnasium of an id the spec writes (tests/test_gymnasium_ids.py):
    a spec naming none, here highway's, validates without it."""
    code = (
        "import sys\nfrom vlagen.cli import main\n"
        "for args in (['--help'], ['validate', sys.argv[1]]):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "print('gymnasium' in sys.modules)"
    )
    spec = Path(__file__).resolve().parent.parent / "specs" / "highway_openvla.yaml"
    done = subprocess.run(
        [sys.executable, "-c", code, str(spec)], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "False"
