"""Env presets: an action, state, camera or reward the preset's simulator cannot take or
produce is a located validation error, and every kind of env the presets allow generates a
package whose env tests pass (controllers, discrete actions, class-path and batched
backends, a generic gymnasium id stepped for real, video)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MINIMAL_SPEC, VARIANT_MARKERS, run_package_tests, spec_errors
from vlagen.api import generate, write
from vlagen.load import load_spec_text
from vlagen.plan import make_plan

SPECS = Path(__file__).resolve().parent.parent / "specs"


def _spec(**env: Any) -> dict:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["env"].update(env)
    return data


def _text(data: dict) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def _one_error(data: dict) -> str:
    (line,) = spec_errors(data)
    return line


def test_waypoints_on_a_backend_without_a_controller_mapping() -> None:
    data = _spec(preset="pusht", action={"kind": "waypoints", "num_waypoints": 1})
    data["model"]["family"] = "waypoint"
    data["model"]["action"]["dim"] = 3
    assert _one_error(data) == (
        "spec.yaml:21:11: env.action.kind: preset 'pusht' takes continuous (dim 2) and has "
        "no controller mapping for waypoints; not 'waypoints'"
    )


def test_action_dim_that_disagrees_with_the_backend() -> None:
    data = _spec(preset="libero", action={"kind": "delta_ee", "dim": 6}, task_suite="libero_10")
    data["model"]["action"]["dim"] = 6
    assert _one_error(data) == (
        "spec.yaml:22:10: env.action.dim: preset 'libero' takes 7 delta_ee action channels, not 6"
    )


def test_wrong_action_kind() -> None:
    data = _spec(preset="libero", task_suite="libero_10")
    assert _one_error(data) == (
        "spec.yaml:21:11: env.action.kind: preset 'libero' takes delta_ee (dim 7); not 'continuous'"
    )


def test_discrete_choices_must_match_the_simulator() -> None:
    data = _spec(action={"kind": "discrete", "choices": 3})
    data["model"]["action"]["dim"] = 1
    assert _one_error(data) == (
        "spec.yaml:22:14: env.action.choices: preset 'highway' has 5 discrete actions, not 3"
    )


def test_state_cameras_rewards_and_backend_class_are_checked() -> None:
    data = _spec(
        state_dim=4,
        cameras=[
            {"name": "front", "height": 64, "width": 64, "role": "main"},
            {"name": "hand", "height": 64, "width": 64, "role": "wrist"},
        ],
        rewards=[{"name": "win", "source": "success"}],
        backend_class="mine:Backend",
    )
    assert spec_errors(data) == [
        "spec.yaml:13:14: env.state_dim: preset 'highway' provides a state of size 0, not 4",
        "spec.yaml:23:11: env.cameras[1].role: preset 'highway' renders cameras with roles "
        "main, not 'wrist'",
        "spec.yaml:30:13: env.rewards[0].source: preset 'highway' does not report 'success' "
        "(its built-in signals: collision, progress); use source 'info' with a key",
        "spec.yaml:31:18: env.backend_class: preset 'highway' has its own loader; remove "
        "backend_class",
    ]


def test_presets_without_a_gym_env_need_a_backend_class() -> None:
    data = _spec(preset="bench2drive", action={"kind": "continuous", "dim": 3})
    data["model"]["action"]["dim"] = 3
    assert _one_error(data) == (
        "spec.yaml:12:3: env.backend_class: preset 'bench2drive' needs "
        "`backend_class: module:Class` (it ships no gym env)"
    )


def test_batched_simulators_take_no_workers() -> None:
    data = _spec(preset="maniskill", workers=2, action={"kind": "delta_ee"})
    data["model"]["action"]["dim"] = 7
    assert _one_error(data) == (
        "spec.yaml:22:12: env.workers: preset 'maniskill' steps all envs in one simulator; "
        "workers must be 0"
    )


def test_pool_timeouts_are_bounded_and_reach_the_package() -> None:
    errors = spec_errors(_spec(step_timeout_s=0, reset_timeout_s=7200))
    assert [e.split(": ", 2)[1] for e in errors] == ["env.step_timeout_s", "env.reset_timeout_s"]
    assert "greater than 0" in errors[0] and "less than or equal to 3600" in errors[1]
    output = generate(load_spec_text(_text(_spec(step_timeout_s=2.5))).spec)
    spec_py = next(f.content for path, f in output.tree.items() if path.endswith("/spec.py"))
    assert b"step_timeout_s=2.5," in spec_py and b"reset_timeout_s=300.0," in spec_py


def test_video_camera_must_exist() -> None:
    data = _spec(video={"camera": "rear"})
    assert _one_error(data) == (
        "spec.yaml:24:13: env.video.camera: no camera named 'rear' (cameras: front)"
    )


def test_preset_defaults_are_recorded_in_the_resolved_spec() -> None:
    output = generate(load_spec_text(MINIMAL_SPEC).spec)
    env = output.plan.spec.env
    assert env.backend == "gymnasium" and env.workers == 0
    assert env.gymnasium.id == "highway-fast-v0"
    assert env.gymnasium.kwargs["config"]["screen_width"] == 64
    assert env.gymnasium.cameras == {"front": "render"}


def test_libero_without_a_task_suite_is_refused_where_it_is_written() -> None:
    """It used to generate, then fail at the first reset: 'env.task_suite None is not a
    LIBERO suite'."""
    data = _spec(preset="libero", action={"kind": "delta_ee", "dim": 7})
    data["model"]["action"]["dim"] = 7
    error = _one_error(data)
    assert error.startswith("spec.yaml:12:3: env: preset 'libero' runs the tasks of a suite: ")
    assert "set env.task_suite (e.g. libero_spatial, " in error


def test_libero_settings_belong_to_preset_libero() -> None:
    data = _spec(libero={"fast_render": True})
    assert _one_error(data) == (
        "spec.yaml:24:5: env.libero: env.libero holds LIBERO's settings, for preset 'libero', "
        "not 'highway'; remove this section"
    )
    data = yaml.safe_load((SPECS / "libero_openvla_oft.yaml").read_text())
    data["env"]["libero"] = {"fast_rendering": True}
    (error,) = spec_errors(data)
    assert "env.libero.fast_rendering" in error and "fast_render" in error.split(": ", 2)[2]


def _libero_backend(**libero: Any) -> str:
    data = yaml.safe_load((SPECS / "libero_openvla_oft.yaml").read_text())
    if libero:
        data["env"]["libero"] = libero
    output = generate(load_spec_text(_text(data)).spec)
    assert output.plan.spec.env.libero.fast_render == bool(libero.get("fast_render"))
    path = "src/libero_openvla_oft/env/backends/libero.py"
    return output.tree[path].content.decode()


def test_fast_render_is_off_by_default_and_reaches_the_libero_backend() -> None:
    assert "FAST_RENDER = False" in _libero_backend()
    assert "FAST_RENDER = False" in _libero_backend(fast_render=False)
    backend = _libero_backend(fast_render=True)
    assert "FAST_RENDER = True" in backend
    # after every reset, which rebuilds the model, and before the first observation
    reset = backend.split("def reset(")[1].split("def step(")[0]
    assert reset.index("self.env.reset()") < reset.index("mat_reflectance[:] = 0.0")
    assert reset.index("mat_reflectance") < reset.index("set_init_state")


def _waypoint_spec(controller: Any) -> dict:
    data = _spec(
        action={"kind": "waypoints", "num_waypoints": 4, "controller": controller},
        max_episode_steps=12,
    )
    data["model"].update(family="waypoint")
    data["model"]["action"].update(dim=3, chunk=4)
    return data


def _variants() -> dict[str, dict]:
    discrete = _spec(action={"kind": "discrete", "choices": 5})
    discrete["model"]["action"]["dim"] = 1
    bench = _spec(
        preset="bench2drive",
        backend_class="tiny_vla.carla_routes:RouteBackend",  # scaffolded in the package
        action={"kind": "continuous", "dim": 3},
        workers=0,
        extra_obs=[{"name": "ego", "shape": [4]}, {"name": "command", "dtype": "text"}],
        rewards=[
            {"name": "route", "source": "progress"},
            {"name": "crash", "source": "collision", "weight": -1.0},
            {"name": "smooth", "source": "action_magnitude", "weight": -0.1},
        ],
    )
    bench["model"]["action"]["dim"] = 3
    maniskill = _spec(
        preset="maniskill",
        action={"kind": "delta_ee"},
        state_dim=9,
        rewards=[{"name": "success", "source": "success"}],
    )
    maniskill["model"]["action"].update(dim=7, chunk=2)
    cartpole = _spec(
        preset="gymnasium",
        gymnasium={"id": "CartPole-v1"},
        # CartPole renders 400x600: the backend resizes its frames to the spec's size
        cameras=[{"name": "view", "height": 200, "width": 300}],
        action={"kind": "discrete", "choices": 2},
        workers=0,
    )
    cartpole["model"]["action"]["dim"] = 1
    synthetic = _spec(
        preset="synthetic",
        workers=2,
        video={"camera": "front", "format": "gif"},
        rewards=[
            {"name": "shaped", "source": "info", "key": "distance"},
            {"name": "win", "source": "success", "weight": 2.0},
        ],
    )
    return {
        "waypoints_pure_pursuit": _waypoint_spec("pure_pursuit"),
        "waypoints_pid": _waypoint_spec({"type": "pid", "steer": [1.5, 0.0, 0.2]}),
        "discrete": discrete,
        "bench2drive": bench,
        "maniskill": maniskill,
        "gymnasium_cartpole": cartpole,
        "synthetic_video": synthetic,
    }


VARIANTS = _variants()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_package_is_clean_and_its_env_tests_pass(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    write(generate(load_spec_text(_text(VARIANTS[name])).spec), out, fresh=True)
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=out,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout
    # the env kinds reach the target's env adapter tests; its fidelity tests (the framework's
    # rollout and update, whatever the env kind) run in the goldens and the target tests
    markers = f"{VARIANT_MARKERS} and not fidelity"
    run_package_tests(out, real_simulator=name == "gymnasium_cartpole", markers=markers)


def test_gymnasium_extras_match_gymnasiums_registry() -> None:
    """Every env gymnasium registers from a module that needs an extra is in the table, under
    the extra gymnasium declares."""
    from importlib.metadata import requires

    from gymnasium.envs.registration import registry

    from vlagen.presets import GYMNASIUM_EXTRAS

    needs = {
        "classic_control": "classic-control",
        "toy_text": "toy-text",
        "box2d": "box2d",
        "mujoco": "mujoco",
    }
    expected = {
        env_id.split("-v")[0]: needs[spec.entry_point.split(".")[2].split(":")[0]]
        for env_id, spec in registry.items()
        if isinstance(spec.entry_point, str)
        and spec.entry_point.startswith(tuple(f"gymnasium.envs.{m}" for m in needs))
        and "/" not in env_id
    }
    assert expected == GYMNASIUM_EXTRAS
    declared = " ".join(requires("gymnasium") or [])
    assert all(f'extra == "{extra}"' in declared for extra in set(needs.values()))


def test_a_gymnasium_env_that_renders_with_pygame_asks_for_its_extra() -> None:
    cartpole = make_plan(load_spec_text(_text(VARIANTS["gymnasium_cartpole"])).spec).env
    assert cartpole.sim_requirements == ["gymnasium[classic-control]>=1.0"]
    assert cartpole.install == "pip install 'gymnasium[classic-control]>=1.0'"
    highway = make_plan(load_spec_text(MINIMAL_SPEC).spec).env
    assert highway.sim_requirements == ["highway-env>=1.10"]
