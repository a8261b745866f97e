"""``vlagen init --from-gymnasium``: a starter spec from a real Gymnasium env.

:func:`infer` makes the env (``render_mode="rgb_array"``), resets it with a seed, renders one
frame and reads its spaces; it returns plain data: each spec field it fills, with the comment
that says where the value came from. :func:`vlagen.starter.starter_text` lays that out as a
commented spec.
gymnasium (and numpy) are imported only inside :func:`infer`, so nothing else in vlagen pays
for them.

The preset follows the package that registers the id: highway-env's ids get preset
``highway``, gym-pusht's ``pusht``, any other ``gymnasium``. Where the env's own spaces do not
fit what the preset takes, the preset's choice wins and the comment says so.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .presets import GYMNASIUM, GYMNASIUM_EXTRAS, HIGHWAY_HZ, PRESETS

__all__ = ["GymStarter", "Inferred", "infer", "one_line"]

#: Packages that register their ids with gymnasium when imported, and the preset each gets.
#: An id that is not registered yet is looked up again after importing the installed ones.
PLUGINS = {"highway_env": "highway", "gym_pusht": "pusht"}
#: Make-time keywords a preset's own settings use, so the spaces read are the ones it runs.
PRESET_MAKE_KWARGS: dict[str, dict[str, Any]] = {"pusht": {"obs_type": "pixels_agent_pos"}}
CAMERA_NAMES = {"gymnasium": "view", "highway": "front", "pusht": "top"}
TASKS = {
    "highway": "drive fast in the right lane without crashing",
    "pusht": "push the T-shaped block onto the target",
}
SIGNAL_TERMS = {
    "success": "{name: success, source: success, weight: 10.0}",
    "collision": "{name: crash, source: collision, weight: -1.0}",
    "progress": "{name: progress, source: progress, weight: 0.1}",
}
USE_STATE = "; model.use_state: true puts it in the prompt"
DEFAULT_EPISODE_STEPS = 1000
MAX_EPISODE_STEPS = 1_000_000
DEFAULT_BINS = 256
MAX_NAME = 100


@dataclass(frozen=True)
class Inferred:
    """One spec value and where it came from (the comment beside it in the YAML).

    ``value`` None means the field is left out; the note then says why."""

    value: Any
    note: str = ""


@dataclass(frozen=True)
class GymStarter:
    """What :func:`infer` read from the env, field by field, as plain data."""

    env_id: str  #: the id as given
    preset: Inferred  #: the preset name
    project: Inferred  #: the distribution name
    gymnasium: Inferred  #: the ``env.gymnasium`` block (a dict)
    max_episode_steps: Inferred
    camera: Inferred  #: {name, height, width, role}
    state_dim: Inferred  #: an int, or None to leave it out
    action: Inferred  #: ``env.action``: {kind, dim} or {kind, choices}
    model_action: Inferred  #: ``model.action``: {dim, chunk, bins}
    task: Inferred
    signals: tuple[str, ...]  #: the preset's built-in reward signals


def infer(env_id: str, kwargs: Mapping[str, Any] | None = None, *, seed: int = 0) -> GymStarter:
    """Make ``env_id`` with ``render_mode="rgb_array"`` (and ``kwargs``), reset it with
    ``seed``, render one frame, and read what a spec needs. The env is always closed.

    Raises:
        UsageError: an id gymnasium does not know, a simulator extra that is not installed,
            an env that fails to make, reset or render an RGB frame, or an action space the
            gymnasium backend cannot step (anything but ``Discrete(n)`` and a 1-D ``Box``).
    """
    gym = _import_gymnasium()
    module, _, name = env_id.rpartition(":")
    env_spec = _find_spec(gym, env_id, module, name)
    preset = _preset_for(env_spec)
    make_kwargs = _make_kwargs(preset, env_spec.id, kwargs)
    with _env_errors(gym, env_id, env_spec):
        env = gym.make(
            env_spec.id,
            render_mode="rgb_array",
            **PRESET_MAKE_KWARGS.get(preset, {}),
            **make_kwargs,
        )
    try:
        with _env_errors(gym, env_id, env_spec):
            env.reset(seed=seed)
            frame = env.render()
            return _read(gym, env, env_spec, preset, module, make_kwargs, frame)
    finally:
        with suppress(Exception), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.close()


def _import_gymnasium() -> Any:
    try:
        return importlib.import_module("gymnasium")
    except ImportError as exc:
        raise UsageError(
            f"--from-gymnasium needs gymnasium ({exc}); install it: pip install {GYMNASIUM!r}"
        ) from None


def _find_spec(gym: Any, env_id: str, module: str, name: str) -> Any:
    """The registered spec of ``[module:]name``, importing ``module`` first; an id not yet
    registered is looked up again after importing the installed plugins."""
    if module:
        try:
            importlib.import_module(module)
        except Exception as exc:  # any import failure is the user's to fix
            raise UsageError(
                f"cannot import {module!r} to register {name!r}: {type(exc).__name__}: "
                f"{one_line(exc)}"
            ) from None
    try:
        return gym.spec(name)
    except gym.error.Error as exc:
        first = exc
    if _import_plugins():
        with suppress(gym.error.Error):
            return gym.spec(name)
    raise UsageError(
        f"gymnasium has no env {env_id!r}: {one_line(first)} (an env of another package is "
        "registered when that package is imported: write the id as 'module:Env-v0')"
    )


def _import_plugins() -> bool:
    """Import the installed plugin packages not imported yet; whether any was."""
    imported = False
    for plugin in PLUGINS:
        if plugin in sys.modules or importlib.util.find_spec(plugin) is None:
            continue
        with suppress(Exception), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(plugin)
            imported = True
    return imported


def _preset_for(env_spec: Any) -> str:
    entry = env_spec.entry_point
    where = entry if isinstance(entry, str) else getattr(entry, "__module__", "") or ""
    package = where.split(":")[0].split(".")[0]
    return PLUGINS.get(package, "gymnasium")


def _make_kwargs(preset: str, env_id: str, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    given = dict(kwargs or {})
    if given and preset != "gymnasium":
        raise UsageError(
            f"{env_id!r} gets preset {preset!r}, which sets the env's keyword arguments "
            "itself; leave out the kwargs"
        )
    mode = given.pop("render_mode", "rgb_array")
    if mode != "rgb_array":
        raise UsageError(f"render_mode {mode!r}: the camera needs render_mode 'rgb_array'")
    return given


@contextmanager
def _env_errors(gym: Any, env_id: str, env_spec: Any) -> Iterator[None]:
    """The env's own exceptions as one-line usage errors (with the extra to install where
    gymnasium says a dependency is missing); its warnings are not the spec's business."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    except UsageError:
        raise
    except (gym.error.DependencyNotInstalled, ImportError) as exc:
        extra = GYMNASIUM_EXTRAS.get(env_spec.name)
        said = one_line(exc)
        hint = f'; install it: pip install "gymnasium[{extra}]"' if extra else ""
        hint = "" if extra and f"gymnasium[{extra}]" in said else hint
        raise UsageError(
            f"{env_id!r} needs a package that is not installed: {said}{hint}"
        ) from None
    except Exception as exc:
        raise UsageError(
            f"{env_id!r} failed to make, reset or render: {type(exc).__name__}: {one_line(exc)}"
        ) from None


def _read(
    gym: Any,
    env: Any,
    env_spec: Any,
    preset: str,
    module: str,
    make_kwargs: dict[str, Any],
    frame: Any,
) -> GymStarter:
    import numpy as np

    env_id = env_spec.id
    decl = PRESETS[preset]
    frame_shape = _frame_shape(np, env, env_id, frame)
    spaces = gym.spaces
    obs_space, act_space = env.observation_space, env.action_space
    camera = _camera(preset, obs_space, frame_shape, spaces)
    state_dim, state_key = _state(preset, obs_space, spaces, decl.state_dims)
    action = _action(preset, env_id, act_space, spaces, np)
    block: dict[str, Any] = {"id": env_id}
    block_note = f"what `gymnasium.make` gets; preset {preset!r} sets the rest (import, kwargs)"
    if preset == "gymnasium":
        block["kwargs"] = {"render_mode": "rgb_array", **make_kwargs}
        if module:
            block["import_module"] = module
        if state_key is not None:
            block["state_key"] = state_key
        block_note = "what the gymnasium backend makes: `gymnasium.make(id, **kwargs)`"
    dim = action.value.get("dim", 1)
    choices = action.value.get("choices")
    bins = choices or DEFAULT_BINS
    model_action = Inferred(
        {"dim": dim, "chunk": 1, "bins": bins},
        "dim must equal what env.action takes; one step per decision; "
        + (f"{bins} bins per dimension" if choices is None else "one token per choice"),
    )
    return GymStarter(
        env_id=env_id,
        preset=Inferred(preset, _preset_note(preset, env_spec)),
        project=Inferred(_project_name(env_id), "pip distribution name, from the env id"),
        gymnasium=Inferred(block, block_note),
        max_episode_steps=_episode_steps(env, env_spec, preset),
        camera=camera,
        state_dim=state_dim,
        action=action,
        model_action=model_action,
        task=Inferred(
            TASKS.get(preset, f"solve {env_id}"),
            "the prompt's {task}: say in words what the policy should do",
        ),
        signals=tuple(sorted(decl.signals)),
    )


def _frame_shape(np: Any, env: Any, env_id: str, frame: Any) -> tuple[int, int]:
    array = None if frame is None else np.asarray(frame)
    if array is None or array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
        got = "None" if array is None else f"{array.dtype} {list(array.shape)}"
        modes = list(env.metadata.get("render_modes") or [])
        raise UsageError(
            f"{env_id!r} cannot render an RGB frame for the camera: render() with "
            f"render_mode 'rgb_array' returned {got}, not uint8 [height, width, 3] "
            f"(its render modes: {', '.join(map(str, modes)) or 'none'})"
        )
    return int(array.shape[0]), int(array.shape[1])


def _camera(preset: str, obs_space: Any, frame: tuple[int, int], spaces: Any) -> Inferred:
    name = CAMERA_NAMES[preset]
    height, width = frame
    note = f"env.render() gives {height}x{width} RGB frames"
    if preset == "pusht":  # the preset's camera is the `pixels` observation, not render()
        height, width = (int(n) for n in obs_space["pixels"].shape[:2])
        note = (
            f"the `pixels` observation, {height}x{width} RGB (env.render() is "
            f"{frame[0]}x{frame[1]}); preset pusht passes this size as observation_height/width"
        )
    elif preset == "highway":
        note += "; preset highway passes this size as screen_height/width"
    camera = {"name": name, "height": height, "width": width, "role": "main"}
    return Inferred(camera, note + "; the model resizes them to model.image_size")


def _state(
    preset: str, space: Any, spaces: Any, allowed: tuple[int, ...] | None
) -> tuple[Inferred, str | None]:
    """``state_dim`` (None and why not, where there is none to give), and the observation
    key the gymnasium backend reads it from where it needs one."""
    shown = _space_text(space)
    if preset == "pusht":
        size = int(math.prod(space["agent_pos"].shape))
        if allowed is None or size in allowed:
            return Inferred(
                size, f"`agent_pos`, the agent's position, from {shown}{USE_STATE}"
            ), None
    if preset == "gymnasium" and isinstance(space, spaces.Dict):
        flat = [
            key
            for key, sub in space.spaces.items()
            if isinstance(sub, spaces.Box) and len(sub.shape) == 1 and isinstance(key, str)
        ]
        if len(flat) == 1:
            size = int(space[flat[0]].shape[0])
            return Inferred(size, f"the {flat[0]!r} vector of {shown}{USE_STATE}"), flat[0]
        why = (
            f"it observes {shown}, with {len(flat)} flat vectors; to give the policy one, set "
            "env.gymnasium.state_key to its key and state_dim to its size"
        )
        return Inferred(None, why), None
    if _is_image(space, spaces):
        return Inferred(None, f"it observes images ({shown}): the camera covers them"), None
    if preset == "gymnasium" and isinstance(space, spaces.Box) and len(space.shape) == 1:
        return Inferred(
            None,
            f"it observes a flat vector, {shown}, but the gymnasium backend reads a state "
            "only from a key of a Dict observation (env.gymnasium.state_key), so the "
            "policy sees the camera alone",
        ), None
    if allowed is not None and len(allowed) == 1:
        return Inferred(
            None, f"it observes {shown}; preset {preset!r} gives the policy the camera alone"
        ), None
    return Inferred(None, f"it observes {shown}, which is not a flat state vector"), None


def _is_image(space: Any, spaces: Any) -> bool:
    return isinstance(space, spaces.Box) and len(space.shape) == 3 and space.shape[-1] in (1, 3, 4)


def _action(preset: str, env_id: str, space: Any, spaces: Any, np: Any) -> Inferred:
    decl = PRESETS[preset]
    shown = _space_text(space)
    real: dict[str, Any] | None = None
    note = f"from {shown}"
    if isinstance(space, spaces.Discrete) and int(space.start) == 0:
        real = {"kind": "discrete", "choices": int(space.n)}
        note = f"{shown}: one channel of {int(space.n)} choices"
    elif isinstance(space, spaces.Box) and len(space.shape) == 1:
        dim = int(space.shape[0])
        real = {"kind": "continuous", "dim": dim, **_declared_bounds(preset, space, np)}
        note = f"{shown}; {_bounds_note(preset, space, dim, np)}"
    if real is not None and _fits(real, decl):
        others = [
            f"{k} (dim {w})" if w else k for k, w in decl.actions.items() if k != real["kind"]
        ]
        if preset != "gymnasium" and others:
            note += f"; preset {preset!r} also takes {', '.join(others)} and configures the env"
        return Inferred(real, note)
    if preset == "gymnasium":
        raise UsageError(
            f"{env_id!r} has the action space {shown}, which the gymnasium backend cannot "
            "step; --from-gymnasium supports Discrete(n) (starting at 0) and a 1-D Box(d,)"
        )
    kind = "continuous" if "continuous" in decl.actions else next(iter(decl.actions))
    width = decl.actions[kind] or 1
    chosen = {"kind": kind, "dim": width}
    if kind == "discrete":
        chosen = {"kind": kind, "choices": decl.choices or 2}
    takes = ", ".join(k if w is None else f"{k} (dim {w})" for k, w in decl.actions.items())
    why = (
        f"{env_id} acts by {shown}, which preset {preset!r} does not take (it takes "
        f"{takes}); the preset configures the env for {kind} {width}"
    )
    return Inferred(chosen, why)


def _fits(action: dict[str, Any], decl: Any) -> bool:
    kind = action["kind"]
    if not decl.accepts(kind):
        return False
    width = decl.actions.get(kind)
    if kind == "discrete":
        return width in (None, 1) and decl.choices in (None, action["choices"])
    return width is None or width == action["dim"]


def _declared_bounds(preset: str, space: Any, np: Any) -> dict[str, Any]:
    """``{low, high}`` for the spec where the preset takes bounds the spec declares and the
    env's are finite and not the default [-1, 1]: one number each where every channel
    shares it."""
    low, high = np.asarray(space.low, float), np.asarray(space.high, float)
    finite = np.isfinite(low).all() and np.isfinite(high).all()
    if not PRESETS[preset].declared_bounds or not finite:
        return {}
    if np.allclose(low, -1.0) and np.allclose(high, 1.0):
        return {}

    def values(bound: Any) -> float | list[float]:
        items = [float(v) for v in bound]
        return items[0] if len(set(items)) == 1 else items

    return {"low": values(low), "high": values(high)}


def _bounds_note(preset: str, space: Any, dim: int, np: Any) -> str:
    low, high = np.asarray(space.low, float), np.asarray(space.high, float)
    shown = f"low {_numbers(low)}, high {_numbers(high)}"
    if _declared_bounds(preset, space, np):
        return (
            f"bounds {shown}, declared as env.action.low/high: the env core maps the "
            "policy's [-1, 1] onto them"
        )
    want_low, want_high = PRESETS[preset].bounds("continuous", dim)
    reaches = f"low {_numbers(want_low)}, high {_numbers(want_high)}"
    if np.isfinite(low).all() and np.isfinite(high).all():
        if np.allclose(low, want_low) and np.allclose(high, want_high):
            scale = "as it is" if preset == "gymnasium" else f"scaled to {shown}"
            return f"bounds {shown}: the policy's [-1, 1] reaches the env {scale}"
        what = f"NOTE: its bounds are {shown}"
    else:
        what = f"NOTE: it is unbounded ({shown})"
    return (
        f"{what}, but kind continuous has no bounds in the spec: preset {preset!r} passes the "
        f"policy's [-1, 1] on as {reaches} (the package's test_control_bounds_come_from_the_"
        "simulator test flags the difference). To cover the env's range, register an id "
        "that wraps it in gymnasium.wrappers.RescaleAction(env, -1, 1) and use that"
    )


def _numbers(values: Any) -> str:
    items = [f"{float(v):g}" for v in list(values)[:8]]
    return "[" + ", ".join(items) + (", ...]" if len(values) > 8 else "]")


def _episode_steps(env: Any, env_spec: Any, preset: str) -> Inferred:
    if preset == "highway":
        duration = env.unwrapped.config.get("duration")
        if isinstance(duration, int | float) and duration > 0:
            steps = max(1, min(MAX_EPISODE_STEPS, round(duration * HIGHWAY_HZ)))
            return Inferred(
                steps,
                f"highway-env's default episode, {duration:g} s, at the preset's "
                f"{HIGHWAY_HZ} decisions per second",
            )
    limit = env_spec.max_episode_steps
    if isinstance(limit, int) and limit > 0:
        return Inferred(
            min(limit, MAX_EPISODE_STEPS), f"{env_spec.id}'s own limit (its registration)"
        )
    return Inferred(DEFAULT_EPISODE_STEPS, f"{env_spec.id} registers no limit; pick one")


def _preset_note(preset: str, env_spec: Any) -> str:
    if preset == "gymnasium":
        return "the generic gymnasium backend: gymnasium.make(env.gymnasium.id)"
    package = "highway-env" if preset == "highway" else "gym-pusht"
    return f"{env_spec.id} is registered by {package}; the preset knows its conventions"


def _project_name(env_id: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", env_id.lower()).strip("-") or "env"
    if not slug[0].isalpha():
        slug = f"env-{slug}"  # the import name derived from it must be an identifier
    return slug[: MAX_NAME - len("-vla")].rstrip("-") + "-vla"


def _space_text(space: Any) -> str:
    return one_line(space, 200)


def one_line(value: Any, most: int = 300) -> str:
    text = " ".join(str(value).split())
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return text if len(text) <= most else text[: most - 3] + "..."
