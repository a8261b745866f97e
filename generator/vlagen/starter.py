"""The starter spec of ``vlagen init --from-gymnasium``, as commented YAML text: what
:func:`vlagen.fromgym.infer` found, each value with the comment that says where it came from.
Text from the env reaches the spec only as an escaped YAML scalar (:func:`_q`)."""

from __future__ import annotations

import math
import textwrap
from typing import Any

import yaml

from .fromgym import SIGNAL_TERMS, GymStarter, Inferred, one_line


def _q(value: str) -> str:
    """A string as a double-quoted, escaped YAML scalar: how text from the env (ids, keys)
    and text made from it reach the spec, never raw."""
    return yaml.safe_dump(value, default_style='"', allow_unicode=False, width=math.inf).strip()


def _flow(value: Any) -> str:
    """A value of vlagen's own (a number, a keyword, a mapping) as one line of YAML flow
    style; safe_dump quotes any string that needs it."""
    text = yaml.safe_dump(
        value, default_flow_style=True, allow_unicode=False, width=math.inf, sort_keys=False
    )
    return text.removesuffix("\n...\n").strip()


def _comment(text: str, indent: int, width: int = 96) -> list[str]:
    """``text`` as ``# `` lines at ``indent``, wrapped to ``width`` columns."""
    prefix = " " * indent + "# "
    return textwrap.wrap(
        one_line(text, 2000),
        width,
        initial_indent=prefix,
        subsequent_indent=prefix,
        break_on_hyphens=False,
    )


def starter_text(s: GymStarter) -> str:
    """The commented spec for ``s``."""
    env_id = s.env_id
    lines = [
        "# yaml-language-server: $schema=vlagen.schema.json",
        *_comment(
            f"A vlagen spec for the gymnasium env {env_id}, from its spaces and one rendered "
            "frame (vlagen init --from-gymnasium). `vlagen validate THIS_FILE` checks it; "
            "`vlagen new THIS_FILE` generates the package. `vlagen schema` documents every "
            "field; `vlagen targets` lists the frameworks.",
            0,
        ),
        "vlagen: 1",
        "",
        "project:",
        *_comment(s.project.note, 2),
        f"  name: {_q(s.project.value)}",
        f"  description: {_q(f'An OpenVLA policy on {env_id[:200]}, trained with RLinf.')}",
        "",
        "model:",
        "  name: OpenVLA",
        "  family: openvla                # openvla | openvla_oft | waypoint | custom",
        "  checkpoint: openvla/openvla-7b # a placeholder: your checkpoint's hub id or local path",
        "  trust_remote_code: true        # OpenVLA checkpoints ship their modeling code",
        "  dtype: bfloat16",
        "  image_size: [224, 224]         # [height, width] the model takes",
        '  prompt_template: "In: What action should the robot take to {task}?\\nOut:"',
        "  action:",
        *_comment(s.model_action.note, 4),
        *(f"    {key}: {_flow(value)}" for key, value in s.model_action.value.items()),
        "  # lora: {rank: 32, alpha: 32}  # train adapters instead of all weights",
        "  # value_head: true             # a critic, for RLinf's gae",
        "",
        "env:",
        *_comment(s.preset.note, 2),
        f"  preset: {_flow(s.preset.value)}",
        *_comment(s.gymnasium.note, 2),
        "  gymnasium:",
        *(
            f"    {key}: {_q(v) if isinstance(v, str) else _flow(v)}"
            for key, v in s.gymnasium.value.items()
        ),
        "  # backend: synthetic           # random observations of the same shapes (tests)",
        *_comment(s.max_episode_steps.note, 2),
        f"  max_episode_steps: {_flow(s.max_episode_steps.value)}",
        "  cameras:",
        *_comment(s.camera.note, 4),
        f"    - {_flow(s.camera.value)}",
        *_state_lines(s.state_dim),
        *_comment(s.task.note, 2),
        f"  task: {_q(s.task.value)}",
        "  action:",
        *_comment(s.action.note, 4),
        *(f"    {key}: {_flow(value)}" for key, value in s.action.value.items()),
        "  rewards:",
        "    - {name: reward, source: env, weight: 1.0}   # the env's own reward",
        *_signal_lines(s.preset.value, s.signals),
        "",
        "targets:",
        '  - {framework: rlinf, version: "0.3", algorithm: grpo}   # quote versions',
        "",
        "training:",
        "  seed: 42",
        "  learning_rate: 1.0e-5",
        "  groups: 16                     # initial conditions per update",
        "  group_size: 8                  # episodes from each",
        "  # envs: 64                     # envs at once over the cluster; default all 128",
        "  mini_batches: 4                # optimizer steps per update",
        "  micro_batch_size_per_gpu: 2",
        "",
        "resources:",
        "  nodes: 1",
        "  gpus_per_node: 8",
    ]
    return "\n".join(lines) + "\n"


def _state_lines(state: Inferred) -> list[str]:
    if state.value is None:
        return _comment(f"no state_dim (0): {state.note}", 2)
    return [*_comment(state.note, 2), f"  state_dim: {_flow(state.value)}"]


def _signal_lines(preset: str, signals: tuple[str, ...]) -> list[str]:
    if not signals:
        return _comment(
            f"preset {preset!r} reports no built-in signals (success, collision, progress); "
            "a term can read a key of the env's info dict: "
            "- {name: NAME, source: info, key: KEY, weight: 1.0}",
            4,
        )
    lines = _comment(f"built-in signals preset {preset!r} reports:", 4)
    return lines + [f"    # - {SIGNAL_TERMS[signal]}" for signal in signals]
