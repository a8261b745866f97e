"""Checks of the model against the env: action dims, chunks and tokens, statistics, the
family, the backbone and the prompt template.
"""

from __future__ import annotations

import string
from collections.abc import Iterator

from ..backbones import BACKBONES
from ..errors import Issue, did_you_mean
from ..families import FAMILIES, SPECIAL_TOKENS
from ..gripper import has_gripper
from ..spec import (
    Flow,
    Normalization,
    Spec,
    WaypointAction,
)

PROMPT_FIELDS = {"task"}


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


#: This module's checks, in the order they report.
def _check_flow(spec: Spec) -> Iterator[Issue]:
    """A flow family's chunk and width within what its expert denoises, its square images
    (SigLIP's), and what its statistics and state need."""
    model, env = spec.model, spec.env
    defaults = FAMILIES[model.family].flow
    if defaults is None:
        return
    flow = model.flow or Flow()
    horizon, width = flow.horizon or defaults.horizon, flow.action_dim
    if model.action.chunk > horizon:
        yield Issue(
            ("model", "action", "chunk"),
            f"the env runs {model.action.chunk} actions a decision but the expert denoises "
            f"{horizon} (model.flow.horizon)",
        )
    if model.action.dim > width:
        yield Issue(
            ("model", "action", "dim"),
            f"{model.action.dim} action dimensions do not fit the model's {width} "
            "(model.flow.action_dim)",
        )
    if defaults.state_token and (env.state_dim or 0) > width:
        yield Issue(
            ("env", "state_dim"),
            f"a state of {env.state_dim} does not fit the model's {width} (model.flow.action_dim)",
        )
    height, side = model.image_size
    if height != side:
        yield Issue(
            ("model", "image_size"),
            f"{height}x{side} is not square; SigLIP, the π0 family's vision tower, takes squares",
        )
    if defaults.state_token and not env.state_dim:
        yield Issue(
            ("env", "state_dim"),
            f"family {model.family!r} feeds the robot state to its action expert: set "
            "env.state_dim (the env's proprio state)",
        )
    if not defaults.quantile_stats and model.action.normalization is not None:
        yield Issue(
            ("model", "action", "normalization"),
            f"family {model.family!r} normalizes by mean and standard deviation, which the "
            "checkpoint's norm_stats.json holds; q01/q99 statistics are π0.5's: leave it out",
        )
    delta = defaults.delta(flow.delta_actions, env.preset)
    if delta > min(env.state_dim or 0, model.action.dim):
        yield Issue(
            ("model", "flow", "delta_actions")
            if flow.delta_actions is not None
            else ("env", "state_dim"),
            f"{delta} action dimensions relative to the state need a state and actions of "
            f"{delta} dimensions at least (env.state_dim {env.state_dim or 0}, "
            f"model.action.dim {model.action.dim})",
        )
    if spec.training.temperature is not None:
        yield Issue(
            ("training", "temperature"),
            f"family {model.family!r} samples by its noisy denoising step, not a temperature: "
            "leave training.temperature out and set model.flow.noise_level (its default, "
            f"{flow.noise_level:g}, is RLinf's)",
        )


CHECKS = (_check_action, _check_model, _check_backbone, _check_prompt, _check_flow)
