"""Checks across fields of a spec, and each target's own rules.

Each check yields :class:`Issue`s naming the key they are about; the loader places them in the
file. They run on a spec that already passed field validation, and all of them run, so the user
sees every problem at once.
"""

from __future__ import annotations

import keyword
import string
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from .backbones import BACKBONES
from .batch import neutral_issues
from .envplan import control_bounds
from .errors import Issue, closest
from .families import FAMILIES, SPECIAL_TOKENS
from .gripper import has_gripper
from .gymids import gymnasium_id_issues
from .plan import GENERATED_MODULES
from .presets import PRESETS, PresetDecl
from .spec import (
    ContinuousAction,
    DeltaEEAction,
    EnvAction,
    Normalization,
    Spec,
    WaypointAction,
)
from .targets import TargetDecl, all_targets, find_target, unsupported

PROMPT_FIELDS = {"task"}
RESERVED_OBS = {"state", "task"}
BUILTIN_SOURCES = ("success", "collision", "progress")


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` when a choice is close to ``value``, else ``""``."""
    close = closest(value, choices)
    return f"; did you mean {close!r}?" if close else ""


def check_spec(spec: Spec, *, probe: bool = True) -> list[Issue]:
    """Every cross-field and target issue in ``spec``; with ``probe``, also what the
    installed simulators say of it (a gymnasium id they do not register)."""
    issues: list[Issue] = []
    for check in CHECKS:
        issues.extend(check(spec))
    if probe:
        issues.extend(gymnasium_id_issues(spec.env))
    for index, target in enumerate(spec.targets):
        decl = find_target(target.framework, target.version)
        if decl is None:
            issues.extend(_unknown_version(target.framework, target.version, index))
            continue
        found = list(_target_fits(spec, decl, index))
        if spec.targets[index].algorithm in decl.algorithms:
            # the target's checks compute from the algorithm: none from a wrong one
            for check in decl.checks:
                found.extend(check(spec, index))
        issues += found + list(_target_config(spec, decl, index, planned=not found))
    return issues


def _check_project(spec: Spec) -> Iterator[Issue]:
    if spec.project.package is not None:
        return  # validated as a field
    name = spec.project.import_name
    if not name.isidentifier() or keyword.iskeyword(name):
        yield Issue(
            ("project", "name"),
            f"the import package derived from the name, {name!r}, is not a valid Python "
            "identifier; set project.package",
        )


def _check_action(spec: Spec) -> Iterator[Issue]:
    model, env = spec.model.action, spec.env.action
    if model.dim != env.dim:
        yield Issue(
            ("model", "action", "dim"),
            f"the model outputs {model.dim} action dimensions but env.action ({env.kind}) "
            f"takes {env.dim}",
        )
    if model.chunk > spec.env.max_episode_steps:
        yield Issue(
            ("model", "action", "chunk"),
            f"an action chunk of {model.chunk} steps is longer than an episode "
            f"(env.max_episode_steps = {spec.env.max_episode_steps})",
        )
    if isinstance(env, WaypointAction) and model.chunk != env.num_waypoints:
        yield Issue(
            ("model", "action", "chunk"),
            f"a waypoint policy predicts env.action.num_waypoints ({env.num_waypoints}) "
            f"points per decision; set model.action.chunk to it (got {model.chunk})",
        )
    if env.kind == "discrete":
        yield from _discrete_tokens(spec)
    if model.gripper is not None and not has_gripper(env):
        yield Issue(
            ("model", "action", "gripper"),
            f"env.action.kind {env.kind!r} has no gripper channel (only delta_ee's last "
            "channel is one); drop model.action.gripper",
        )
    family = FAMILIES[spec.model.family]
    if env.kind not in family.action_kinds:
        yield Issue(
            ("model", "family"),
            f"family {family.name!r} cannot drive env.action.kind {env.kind!r}; it drives "
            f"{', '.join(family.action_kinds)} (families for {env.kind!r}: "
            f"{', '.join(f.name for f in FAMILIES.values() if env.kind in f.action_kinds)})",
        )
    stats = model.normalization
    if stats is not None:
        loc = ("model", "action", "normalization")
        yield from _statistics(stats, loc, model.dim, "model.action.dim")
        if not family.normalization:
            yield Issue(
                ("model", "action", "normalization"),
                f"family {family.name!r} bins over env.action.low/high; drop the normalization",
            )
        for i, value in enumerate([*stats.q01, *stats.q99]):
            if not -1.0 <= value <= 1.0:
                key, dim = ("q01", i) if i < len(stats.q01) else ("q99", i - len(stats.q01))
                yield Issue(
                    ("model", "action", "normalization", key, dim),
                    f"{value} is outside [-1, 1]: action statistics are in the env's canonical "
                    "units, which the env core scales to the simulator's bounds",
                )


def _discrete_tokens(spec: Spec) -> Iterator[Issue]:
    """A discrete env action takes one action token per choice, each decoding to exactly its
    choice: as many tokens as choices, and no statistics moving a choice's value."""
    model, env = spec.model, spec.env.action
    if model.action.bins != env.choices:
        yield Issue(
            ("model", "action", "bins"),
            f"a discrete env action has one action token per choice, so bins must equal "
            f"env.action.choices ({env.choices}); got {model.action.bins}. Set it to "
            f"{env.choices} or leave it out",
        )
    if model.action.normalization is not None:
        yield Issue(
            ("model", "action", "normalization"),
            "a discrete env action's tokens decode to its choices exactly; statistics would "
            "move them between choices. Drop the normalization",
        )
    if model.unnorm_key is not None:
        yield Issue(
            ("model", "unnorm_key"),
            "a discrete env action's tokens decode to its choices exactly; a checkpoint's "
            "statistics would move them between choices. Drop unnorm_key",
        )


def _statistics(stats: Normalization, loc: tuple, dims: int, source: str) -> Iterator[Issue]:
    """q01/q99/mask of ``dims`` values each, with q01 < q99."""
    for key in ("q01", "q99", "mask"):
        values = getattr(stats, key)
        if values is not None and len(values) != dims:
            yield Issue((*loc, key), f"has {len(values)} values; {source} is {dims}")
    for i, (lo, hi) in enumerate(zip(stats.q01, stats.q99, strict=False)):
        if lo >= hi:
            yield Issue(
                (*loc, "q99", i), f"q99 ({hi}) must be greater than q01 ({lo}) in dimension {i}"
            )


def _check_model(spec: Spec) -> Iterator[Issue]:
    model, env = spec.model, spec.env
    family = FAMILIES[model.family]
    backbone = BACKBONES[model.backbone]
    fixed = backbone.text_vocab is None
    if family.token_based and fixed and model.vocab_size < model.action.bins + SPECIAL_TOKENS:
        yield Issue(
            ("model", "vocab_size"),
            f"a vocabulary of {model.vocab_size} cannot hold {model.action.bins} action tokens "
            f"(model.action.bins) plus {SPECIAL_TOKENS} special tokens",
        )
    height, width = model.image_size
    if family.token_based and not backbone.processor and height != width:
        yield Issue(
            ("model", "image_size"),
            f"{height}x{width} is not square; the vision backbones of family "
            f"{family.name!r} take square crops",
        )
    names = [c.name for c in env.cameras]
    for i, name in enumerate(model.cameras or []):
        if name not in names:
            yield Issue(
                ("model", "cameras", i),
                f"no env camera {name!r}{did_you_mean(name, names)} (cameras: {', '.join(names)})",
            )
    if model.cameras is not None and not model.cameras:
        yield Issue(("model", "cameras"), "the model needs at least one camera")
    if (model.image_mean is None) != (model.image_std is None):
        key = "image_mean" if model.image_std is None else "image_std"
        yield Issue(("model", key), "set image_mean and image_std together")
    for key in ("image_mean", "image_std"):
        values = getattr(model, key)
        if values is not None and (not values or len(values) % 3):
            yield Issue(("model", key), f"has {len(values)} values; give 3 per RGB image")
    for i, value in enumerate(model.image_std or []):
        if value <= 0:
            yield Issue(("model", "image_std", i), f"must be positive, got {value}")
    if model.use_state and not family.token_based:
        yield Issue(
            ("model", "use_state"),
            "a custom module gets the state as a tensor (inputs.state); use_state puts it "
            "in the prompt of token families",
        )
    if model.use_state and not env.state_dim:
        yield Issue(("model", "use_state"), "the env has no state; set env.state_dim")
    stats = model.state_normalization
    if stats is not None:
        if not model.use_state:
            yield Issue(("model", "state_normalization"), "is only used with use_state: true")
        if env.state_dim:
            loc = ("model", "state_normalization")
            yield from _statistics(stats, loc, env.state_dim, "env.state_dim")


def _check_backbone(spec: Spec) -> Iterator[Issue]:
    """The action tokens fit the backbone's unused embedding rows, its vision tower can
    patch the image size, and its processor owns the normalization."""
    model = spec.model
    decl = BACKBONES[model.backbone]
    if not FAMILIES[model.family].token_based:
        if decl.name != "llava":
            yield Issue(
                ("model", "backbone"),
                f"family {model.family!r} runs your own module (model.class_path), which "
                "loads its own backbone; remove model.backbone",
            )
        return
    if decl.text_vocab is not None:
        rows, text, bins = model.vocab_size, decl.text_vocab, model.action.bins
        if rows <= text:
            yield Issue(
                ("model", "vocab_size"),
                f"{rows} rows leave no room for action tokens above {decl.title}'s "
                f"{text} text ids; set it to the checkpoint's embedding rows (its config's "
                f"text_config.vocab_size; unset, it is {decl.default_vocab_size})",
            )
        elif rows - text < bins:
            yield Issue(
                ("model", "action", "bins"),
                f"{bins} action tokens do not fit the {rows - text} unused ids at the end of "
                f"{decl.title}'s vocabulary ({text} text ids, {rows} rows); use at most "
                f"{rows - text} bins",
            )
    step = decl.image_multiple
    for side, (name, size) in enumerate(zip(("height", "width"), model.image_size, strict=True)):
        if size % step:
            low, high = max(step, size // step * step), (size // step + 1) * step
            nearest = f"{low} or {high}" if low < size else str(high)
            yield Issue(
                ("model", "image_size", side),
                f"{name} {size} is not a multiple of {step}: {decl.title}'s vision tower "
                f"merges {decl.merge}x{decl.merge} patches of {decl.patch} pixels (nearest: "
                f"{nearest})",
            )
    if decl.processor:
        for key in ("image_mean", "image_std"):
            if getattr(model, key) is not None:
                yield Issue(
                    ("model", key),
                    f"{decl.title}'s image processor (the checkpoint's "
                    "preprocessor_config.json) normalizes the frames; remove "
                    "model.image_mean and model.image_std",
                )


def _check_prompt(spec: Spec) -> Iterator[Issue]:
    """The template is filled with ``str.format(task=...)``: only ``{task}`` itself may appear,
    so no task text and no template can make that call fail (``{}`` wants a positional
    argument, ``{task:d}`` a number, ``{task!x}`` an unknown conversion)."""
    loc = ("model", "prompt_template")
    try:
        parsed = list(string.Formatter().parse(spec.model.prompt_template))
    except ValueError as exc:
        yield Issue(loc, f"is not a valid format string ({exc}); write a literal brace as {{{{")
        return
    messages: dict[str, None] = {}
    for _, field, format_spec, conversion in parsed:
        if field is None:
            continue
        known = ", ".join("{" + f + "}" for f in sorted(PROMPT_FIELDS))
        whole = "{" + field + (f"!{conversion}" if conversion else "")
        whole += (f":{format_spec}" if format_spec else "") + "}"
        if not field:
            message = f"{whole} is a positional placeholder; name it (known: {known})"
        elif field not in PROMPT_FIELDS:
            hint = did_you_mean(field, PROMPT_FIELDS)
            message = f"unknown placeholder {{{field}}}{hint} (known: {known})"
        elif conversion or format_spec:
            message = (
                f"{whole}: conversions (!r) and format specs (:d) are not allowed; the task "
                f"text goes in as it is, so write {{{field}}}"
            )
        else:
            continue
        messages.setdefault(message)
    for message in messages:
        yield Issue(loc, message)


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


def _check_targets(spec: Spec) -> Iterator[Issue]:
    seen: dict[str, int] = {}
    for index, target in enumerate(spec.targets):
        if target.framework in seen:
            yield Issue(
                ("targets", index, "framework"),
                f"{target.framework!r} is already targeted at targets[{seen[target.framework]}]; "
                "one package serves one version line of each framework",
            )
        seen.setdefault(target.framework, index)


def _check_value_head(spec: Spec) -> Iterator[Issue]:
    """A value head some target trains: none would leave it untrained, and RLinf's env
    worker adds its value to each truncated episode's last reward wherever there is one."""
    if not spec.model.value_head:
        return
    known = []
    for target in spec.targets:
        decl = find_target(target.framework, target.version)
        if decl is None or target.algorithm not in decl.algorithms:
            return  # an unknown target or algorithm: its own error says what to write
        known.append((target, decl))
    if not known or any(t.algorithm in d.critics for t, d in known):
        return
    trains = ", ".join(f"{d.title} {d.version}: {a}" for d in all_targets() for a in d.critics)
    yield Issue(
        ("model", "value_head"),
        "no target trains a value head ("
        + ", ".join(f"{t.algorithm} on {d.title} {d.version}" for t, d in known)
        + " has no critic): remove value_head: true, or train with an algorithm that has "
        f"one ({trains}); an untrained head's values would reach RLinf's rewards "
        "(rlinf/workers/env/env_worker.py: compute_bootstrap_rewards)",
    )


def _unique(items: list, attr: str, loc: tuple) -> Iterator[Issue]:
    counts = Counter(getattr(item, attr) for item in items)
    for index, item in enumerate(items):
        value = getattr(item, attr)
        if counts[value] > 1:
            yield Issue((*loc, index, attr), f"duplicate {attr} {value!r}")
            counts[value] = 0  # report each duplicate once, at its second occurrence


def _unknown_version(framework: str, version: str, index: int) -> Iterator[Issue]:
    versions = [t.version for t in all_targets() if t.framework == framework]
    known = unsupported(framework, version)
    if known is not None:
        yield Issue(
            ("targets", index, "version"),
            f"{framework} {version} is not supported: {known.reason}. {known.instead} "
            f"(supported: {', '.join(versions)})",
        )
        return
    yield Issue(
        ("targets", index, "version"),
        f"{framework} {version!r} is not supported{did_you_mean(version, versions)} "
        f"(supported: {', '.join(versions)})",
    )


def _target_fits(spec: Spec, decl: TargetDecl, index: int) -> Iterator[Issue]:
    algorithm = spec.targets[index].algorithm
    if algorithm not in decl.algorithms:
        yield Issue(("targets", index, "algorithm"), _no_algorithm(decl, algorithm))
    if spec.model.backbone not in decl.backbones:
        yield Issue(
            ("model", "backbone"),
            f"{decl.title} {decl.version} (targets[{index}]) lays out inputs for backbone "
            f"{', '.join(map(repr, decl.backbones))}, not {spec.model.backbone!r}; targets "
            f"for {spec.model.backbone!r}: "
            + ", ".join(
                f"{t.framework} {t.version}"
                for t in all_targets()
                if spec.model.backbone in t.backbones
            )
            + (f". {decl.backbone_note}" if decl.backbone_note else ""),
        )
    if spec.model.family not in decl.model_families:
        yield Issue(
            ("model", "family"),
            f"{decl.title} {decl.version} (targets[{index}]) cannot train family "
            f"{spec.model.family!r}; it supports {', '.join(decl.model_families)}"
            + (f". {note}" if (note := decl.family_notes.get(spec.model.family)) else ""),
        )


def _target_config(spec: Spec, decl: TargetDecl, index: int, *, planned: bool) -> Iterator[Issue]:
    """The spec's own keys for this target: the framework's (its snapshot), of the right
    type, and (where the target's own checks passed, so it can be ``planned``) none that it
    derives from the training block."""
    from .targets.common.config_schema import lookup, value_fits

    config = spec.targets[index].config or {}
    if config and decl.config_keys is None:
        yield Issue(
            ("targets", index, "config"),
            f"{decl.title} {decl.version} takes no config block (vlagen has no snapshot of "
            "its config to check keys against)",
        )
        return
    keys = decl.config_keys() if config and decl.config_keys else {}
    derive = planned and config and decl.derived
    derived = {d.key: d for d in decl.derived(spec, index)} if derive else {}
    for key, value in config.items():
        kind = lookup(dict(keys), key)
        if key in derived:
            yield Issue(
                ("targets", index, "config", key),
                f"{decl.title} {decl.version} derives {key} ({derived[key].value}) from the "
                f"spec: {derived[key].source}; change that instead",
            )
        elif kind is None:
            yield Issue(
                ("targets", index, "config", key),
                f"{key} is not a key of {decl.title} {decl.version}'s config (its snapshot, "
                f"{decl.framework}_{decl.version.replace('.', '_')}.config.json)"
                + did_you_mean(key, keys),
            )
        elif not value_fits(kind, value):
            yield Issue(
                ("targets", index, "config", key),
                f"{decl.title} {decl.version}'s {key} takes a {kind}, got {value!r}",
            )


def _no_algorithm(decl: TargetDecl, algorithm: str) -> str:
    supported = f"(supported: {', '.join(decl.algorithms)})"
    name = decl.algorithm_aliases.get(algorithm.lower())
    if name is None:
        hint = did_you_mean(algorithm, decl.algorithms)
        return f"{decl.title} {decl.version} has no algorithm {algorithm!r}{hint} {supported}"
    return (
        f"{decl.title} {decl.version} has no algorithm {algorithm!r}: {decl.title} calls it "
        f"{name!r} ({decl.algorithms[name]}); write algorithm: {name} {supported}"
    )


CHECKS: tuple[Callable[[Spec], Iterable[Issue]], ...] = (
    _check_project,
    _check_action,
    _check_model,
    _check_backbone,
    _check_prompt,
    _check_class_paths,
    _check_env,
    _check_preset,
    neutral_issues,
    _check_targets,
    _check_value_head,
)
