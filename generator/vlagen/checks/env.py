"""Checks of the env section: class paths, cameras, rewards and extra observations, the
preset's conventions and the control bounds.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator

from ..envplan import control_bounds
from ..errors import Issue, did_you_mean
from ..plan import GENERATED_MODULES
from ..presets import PRESETS, PresetDecl
from ..spec import (
    ContinuousAction,
    DeltaEEAction,
    EnvAction,
    Spec,
    WaypointAction,
)

RESERVED_OBS = {"state", "task"}
BUILTIN_SOURCES = ("success", "collision", "progress")


def _check_class_paths(spec: Spec) -> Iterator[Issue]:
    """A class path may name a module of the generated package (vlagen scaffolds it) but
    not one vlagen generates and rewrites, nor the other class path's module."""
    package = spec.project.import_name
    model_module = (spec.model.class_path or "").partition(":")[0]
    env_module = (spec.env.backend_class or "").partition(":")[0]
    if model_module and model_module == env_module and model_module.startswith(f"{package}."):
        yield Issue(
            ("env", "backend_class"),
            f"{env_module!r} is model.class_path's module too: vlagen starts one file for "
            "each; name different modules",
        )
    for loc, path in (
        (("model", "class_path"), spec.model.class_path),
        (("env", "backend_class"), spec.env.backend_class),
    ):
        if path is None:
            continue
        parts = path.partition(":")[0].split(".")
        if parts[0] != package or (len(parts) > 1 and parts[1] not in GENERATED_MODULES):
            continue
        module = parts[1] if len(parts) > 1 else "__init__"
        folder = module in ("env", "model", "targets")
        where = f"src/{package}/{module}" + ("/" if folder else ".py")
        yield Issue(
            loc,
            f"{path!r} points into {where}, which vlagen generates and rewrites; put the "
            f"class in a module of your own, e.g. '{package}.custom:{path.partition(':')[2]}'",
        )


def _check_env(spec: Spec) -> Iterator[Issue]:
    env = spec.env
    yield from _unique(env.cameras, "name", ("env", "cameras"))
    yield from _unique(env.rewards, "name", ("env", "rewards"))
    mains = [i for i, cam in enumerate(env.cameras) if cam.role == "main"]
    if len(mains) != 1:
        yield Issue(
            ("env", "cameras"),
            f"exactly one camera needs role 'main' (the policy's primary view); found {len(mains)}",
        )
    expected = PRESETS[env.preset].backend
    if env.backend not in (None, "synthetic", expected):
        yield Issue(
            ("env", "backend"),
            f"preset {env.preset!r} runs on backend {expected!r} (or 'synthetic' for tests), "
            f"not {env.backend!r}",
        )
    names = {cam.name for cam in env.cameras}
    for index, extra in enumerate(env.extra_obs):
        if extra.name in names | RESERVED_OBS:
            yield Issue(
                ("env", "extra_obs", index, "name"),
                f"{extra.name!r} is already an observation key (cameras, 'state', 'task')",
            )
    if env.video is not None and env.video.camera not in names:
        yield Issue(
            ("env", "video", "camera"),
            f"no camera named {env.video.camera!r}{did_you_mean(env.video.camera, names)} "
            f"(cameras: {', '.join(sorted(names))})",
        )


def _check_preset(spec: Spec) -> Iterator[Issue]:
    """The env fits what its preset's simulator takes and produces."""
    env, preset = spec.env, PRESETS[spec.env.preset]
    yield from _check_preset_action(env.action, preset)
    if preset.state_dims is not None and env.state_dim not in preset.state_dims:
        yield Issue(
            ("env", "state_dim"),
            f"preset {preset.name!r} provides a state of size "
            f"{' or '.join(map(str, preset.state_dims))}, not {env.state_dim}",
        )
    if preset.camera_roles is not None:
        for index, cam in enumerate(env.cameras):
            if cam.role not in preset.camera_roles:
                yield Issue(
                    ("env", "cameras", index, "role"),
                    f"preset {preset.name!r} renders cameras with roles "
                    f"{', '.join(preset.camera_roles)}, not {cam.role!r}",
                )
        yield from _unique(env.cameras, "role", ("env", "cameras"))
    for index, term in enumerate(env.rewards):
        if term.source in BUILTIN_SOURCES and term.source not in preset.signals:
            have = sorted(preset.signals) or ["none"]
            yield Issue(
                ("env", "rewards", index, "source"),
                f"preset {preset.name!r} does not report {term.source!r} "
                f"(its built-in signals: {', '.join(have)}); use source 'info' with a key",
            )
    if preset.batched and env.workers:
        yield Issue(
            ("env", "workers"),
            f"preset {preset.name!r} steps all envs in one simulator; workers must be 0",
        )
    if preset.needs_class != (env.backend_class is not None) and env.backend != "synthetic":
        yield Issue(
            ("env", "backend_class"),
            f"preset {preset.name!r} needs `backend_class: module:Class` (it ships no gym env)"
            if preset.needs_class
            else f"preset {preset.name!r} has its own loader; remove backend_class",
        )
    if env.gymnasium is not None and preset.gymnasium is None:
        yield Issue(
            ("env", "gymnasium"),
            f"preset {preset.name!r} does not run on the gymnasium backend; remove this section",
        )
    if env.libero is not None and preset.name != "libero":
        yield Issue(
            ("env", "libero"),
            f"env.libero holds LIBERO's settings, for preset 'libero', not {preset.name!r}; "
            "remove this section",
        )
    if preset.needs_suite and env.task_suite is None:
        suites = ", ".join(preset.checkpoint_stats) or "its suites"
        yield Issue(
            ("env",),
            f"preset {preset.name!r} runs the tasks of a suite: set env.task_suite (e.g. {suites})",
        )
    if preset.name == "gymnasium" and (env.gymnasium is None or env.gymnasium.id is None):
        yield Issue(("env",), "preset 'gymnasium' needs env.gymnasium.id, the id to make")


def _check_preset_action(action: EnvAction, preset: PresetDecl) -> Iterator[Issue]:
    kind, where = action.kind, f"preset {preset.name!r}"
    if not preset.accepts(kind):
        takes = ", ".join(k if w is None else f"{k} (dim {w})" for k, w in preset.actions.items())
        hint = " and has no controller mapping for waypoints" if kind == "waypoints" else ""
        yield Issue(("env", "action", "kind"), f"{where} takes {takes}{hint}; not {kind!r}")
        return
    width = preset.actions.get(kind)
    if width is not None and action.dim != width:
        yield Issue(
            ("env", "action", "dim"),
            f"{where} takes {width} {kind} action channel{'s' * (width != 1)}, not {action.dim}",
        )
    if kind == "discrete" and preset.choices is not None and action.choices != preset.choices:
        yield Issue(
            ("env", "action", "choices"),
            f"{where} has {preset.choices} discrete actions, not {action.choices}",
        )
    if isinstance(action, ContinuousAction | DeltaEEAction):
        yield from _check_control_bounds(action, preset)
    if isinstance(action, WaypointAction):
        low, high = action.bounds
        for key, values in (("low", action.low), ("high", action.high)):
            if values is not None and len(values) != action.point_dim:
                yield Issue(
                    ("env", "action", key),
                    f"has {len(values)} values; point_dim is {action.point_dim}",
                )
        for i, (lo, hi) in enumerate(zip(low, high, strict=False)):
            if lo >= hi:
                yield Issue(
                    ("env", "action", "high", i),
                    f"high ({hi}) must be greater than low ({lo}) in dimension {i}",
                )


def _check_control_bounds(
    action: ContinuousAction | DeltaEEAction, preset: PresetDecl
) -> Iterator[Issue]:
    """``low``/``high``: ``dim`` numbers each (or one), low below high in every channel,
    and only where the simulator's bounds are the spec's to declare."""
    wrong = False
    for key in ("low", "high"):
        values = getattr(action, key)
        if values is not None and len(values) not in (1, action.dim):
            wrong = True
            yield Issue(
                ("env", "action", key),
                f"has {len(values)} values; env.action.dim is {action.dim} (give one per "
                "channel, or one number for all)",
            )
    if wrong:
        return
    low, high = control_bounds(action, preset)
    for i, (lo, hi) in enumerate(zip(low, high, strict=True)):
        channel = (i,) if action.high is not None and len(action.high) > 1 else ()
        if lo >= hi:
            yield Issue(
                ("env", "action", "high", *channel),
                f"high ({hi:g}) must be greater than low ({lo:g}) in channel {i}",
            )
            return
        if _float32(lo) >= _float32(hi):
            yield Issue(
                ("env", "action", "high", *channel),
                f"high ({hi:g}) and low ({lo:g}) are one number in float32, in which the env "
                f"core maps actions: channel {i} would have no range; give bounds further apart",
            )
            return
    given = [k for k in ("low", "high") if getattr(action, k) is not None]
    if (
        given
        and not preset.declared_bounds
        and (low, high) != preset.bounds(action.kind, action.dim)
    ):
        want_low, want_high = preset.bounds(action.kind, action.dim)
        yield Issue(
            ("env", "action", given[0]),
            f"preset {preset.name!r} takes controls in {_numbers(want_low)}.."
            f"{_numbers(want_high)}, which vlagen maps to; remove env.action.low/high (the "
            "spec declares bounds only on presets gymnasium, custom and synthetic)",
        )


def _float32(value: float) -> float:
    """``value`` rounded to float32, the env core's precision."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _numbers(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def _unique(items: list, attr: str, loc: tuple) -> Iterator[Issue]:
    counts = Counter(getattr(item, attr) for item in items)
    for index, item in enumerate(items):
        value = getattr(item, attr)
        if counts[value] > 1:
            yield Issue((*loc, index, attr), f"duplicate {attr} {value!r}")
            counts[value] = 0  # report each duplicate once, at its second occurrence


#: This module's checks, in the order they report.
CHECKS = (_check_class_paths, _check_env, _check_preset)
