"""siiRL's own SRPO example, as data: how a package's siiRL configuration maps onto it.

siiRL 0.2's seed example trains OpenVLA-OFT on LIBERO-Goal with embodied SRPO
(``examples/embodied_srpo_trainer/run_openvla_oft_libero_goal.sh`` in its repository). A user
who knows that script asks which of its settings a spec reproduces and how to get the others:
:func:`example_rows` answers key by key, from the plan's own overrides, for the README.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXAMPLE", "ExampleRow", "example_rows"]

EXAMPLE = "examples/embodied_srpo_trainer/run_openvla_oft_libero_goal.sh"

#: The script's value of each key a spec decides, and what decides it here.
_SCRIPT: tuple[tuple[str, object, str], ...] = (
    ("actor_rollout_ref.model.path", "Sylvest/OpenVLA-AC-PD-1traj-libero-goal", "model.checkpoint"),
    ("actor_rollout_ref.embodied.embodied_type", "openvla-oft", "model.family"),
    ("actor_rollout_ref.embodied.unnorm_key", "libero_goal", "model.unnorm_key"),
    ("actor_rollout_ref.embodied.action_token_len", 7, "model.action.dim"),
    ("actor_rollout_ref.embodied.action_chunks_len", 8, "model.action.chunk"),
    ("actor_rollout_ref.embodied.num_images_in_input", 1, "model.cameras"),
    ("actor_rollout_ref.model.lora_rank", None, "model.lora (absent: full fine-tuning)"),
    ("actor_rollout_ref.embodied.env.env_name", "libero_goal", "env.task_suite"),
    ("actor_rollout_ref.embodied.env.num_envs", 16, "training.envs / GPUs"),
    ("actor_rollout_ref.embodied.env.max_steps", 512, "env.max_episode_steps"),
    (
        "actor_rollout_ref.embodied.env.num_steps_wait",
        10,
        "fixed: 0, as the LIBERO backend settles 10 no-op steps after every reset itself",
    ),
    ("reward_model.reward_kwargs.reward_coef", 5.0, "the weight of the `success` reward term"),
    ("data.train_batch_size", 64, "training.groups"),
    ("data.val_batch_size", 496, "training.groups"),
    ("actor_rollout_ref.rollout.n", 8, "training.group_size"),
    ("actor_rollout_ref.actor.ppo_mini_batch_size", 4, "training.groups / mini_batches"),
    ("actor_rollout_ref.actor.optim.lr", 5e-6, "training.learning_rate"),
    ("actor_rollout_ref.rollout.temperature", 1.6, "fixed (siiRL's SRPO value)"),
    ("trainer.val_before_train", True, "fixed: append `trainer.val_before_train=True`"),
    ("trainer.total_epochs", 1000, "`train.py --epochs` (default 100)"),
)


@dataclass(frozen=True)
class ExampleRow:
    key: str
    script: str  #: the script's value, as siiRL's CLI reads it ("absent": not set)
    here: str  #: this package's value ("at launch": filled in by launch.sh / train.py)
    status: str  #: same | differs | - (set at launch)
    source: str  #: what sets the key here


def _text(value: object) -> str:
    if value is None:
        return "absent"
    if isinstance(value, str):
        return value
    return f"{value:g}" if isinstance(value, float) else str(value)


def example_rows(
    overrides: tuple[tuple[str, object], ...], runtime: tuple[str, ...]
) -> tuple[ExampleRow, ...]:
    """Each key the example sets, its value there and here, and what sets it here."""
    ours = dict(overrides)
    rows = []
    for key, script, source in _SCRIPT:
        if key in runtime:
            here, status = "at launch", "-"
        else:
            value = ours.get(key)
            here, status = _text(value), "same" if value == script else "differs"
        rows.append(ExampleRow(key, _text(script), here, status, source))
    return tuple(rows)
