"""verl's own VLA example as data, and the package's ``config.yaml`` beside it (see
:mod:`..common.reference`).

verl 0.7.1 trains VLAs with PPO-style advantages in one example for the MuJoCo simulator,
``verl/experimental/vla/run_simpleVLA_libero_grpo.sh`` (OpenVLA-OFT on LIBERO, at tag
``v0.7.1``); its other VLA scripts train SAC (``run_pi05_libero_sac*.sh``) or run Isaac's
simulator on nodes of its own (``run_simpleVLA_isaac_disagg.sh``). The values below are the
script's overrides over the config it composes, ``verl/experimental/vla/config/
rob_ppo_trainer.yaml``, itself over verl's ``ppo_trainer`` (``verl/trainer/config``), where
the script sets nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...presets import PRESETS
from ..common.reference import DERIVED, Comparison, Key, Reference, compare, decided, flat

if TYPE_CHECKING:
    from ...spec import Spec

REPOSITORY = "https://github.com/verl-project/verl"
VLA = "verl/experimental/vla"
#: The script's sampling temperature (``actor_rollout_ref.rollout.temperature=1.6``).
TEMPERATURE = 1.6
#: The script's ``actor_rollout_ref.model.enable_gradient_checkpointing=False``.
CHECKPOINTING = False
#: The script's GPUs: ``NUM_GPUS=8`` of which ``NUM_ENV_GPUS=4`` hold env workers.
ENV_GPUS, ROLLOUT_GPUS = 4, 4
#: Why this package's verl worker refuses a key set (``workers.py``'s ``UNREAD``).
_REFUSED = "fixed: this package's verl worker refuses `true` ({why})"


def gradient_checkpointing(spec: Spec) -> bool:
    """``actor_rollout_ref.model.enable_gradient_checkpointing``:
    ``training.gradient_checkpointing``, else the script's."""
    return decided(spec.training.gradient_checkpointing, CHECKPOINTING)


def sampling_temperature(spec: Spec) -> float:
    """``actor_rollout_ref.rollout.temperature``: ``training.temperature``, else the
    script's."""
    return decided(spec.training.temperature, TEMPERATURE)


def reference(spec: Spec, index: int, tag: str) -> Reference:
    """The script's keys a spec decides, with why the package's value differs where it
    does."""
    preset = PRESETS[spec.env.preset]
    cpu = preset.gpu is False
    env_source = "`resources.env_gpus_per_node` (default half, as the script)"
    if cpu:
        env_source += (
            f"; the {preset.name} simulator runs on the CPU, so these GPUs idle: lower it to "
            "give the actor and rollout more (vlagen checks the envs and the batch still "
            "divide over both)"
        )
    keys = (
        Key(
            "actor_rollout_ref.model.path",
            "$HOME/data/Openvla-oft-SFT-libero10-trajall",
            "`model.checkpoint`",
            "the script's `SFT_MODEL_PATH` default, a local path; this spec's checkpoint here",
        ),
        Key(
            "algorithm.adv_estimator",
            "reinforce_plus_plus",
            "`targets[].algorithm`",
            "the spec's algorithm (the script, named for GRPO, sets REINFORCE++; its "
            "`+actor_rollout_ref.algorithm=grpo` picks the VLA worker's PPO path over SAC's, "
            "`verl/experimental/vla/fsdp_workers.py`, not the advantage)",
        ),
        Key(
            "actor_rollout_ref.actor.fsdp_config.model_dtype",
            "bfloat16",
            "fixed: float32, verl's own default",
            "float32 weights for AdamW, as verl builds its actor unless told otherwise: on "
            "bfloat16 weights most of a small step rounds away (the update note below); the "
            "spec's `model.dtype` is the compute dtype (`fsdp_config.dtype`)",
        ),
        Key(
            "actor_rollout_ref.actor.fsdp_config.dtype",
            "bfloat16",
            "`model.dtype`",
            "the spec's dtype",
            shown="bfloat16 (verl's default)",
        ),
        Key(
            "actor_rollout_ref.actor.optim.lr",
            5e-6,
            "`training.learning_rate`",
            "LoRA here, full fine-tuning in the script: an adapter trains at a higher rate "
            "than a full fine-tune (RLinf's LoRA examples: 1e-4)"
            if spec.model.lora is not None
            else "the spec's `training.learning_rate`",
        ),
        Key(
            "actor_rollout_ref.actor.optim.weight_decay",
            0.01,
            "fixed",
            "vlagen decays no weights on any target (as siiRL's SRPO scripts, 0.0); set "
            "`actor_rollout_ref.actor.optim.weight_decay` in the spec's `targets[].config` "
            "for verl's",
            shown="0.01 (verl's default: the script sets none)",
        ),
        Key("actor_rollout_ref.actor.grad_clip", 1.0, "fixed"),
        Key("actor_rollout_ref.actor.clip_ratio_high", 0.28, "fixed, per algorithm"),
        Key("actor_rollout_ref.actor.clip_ratio_low", 0.2, "fixed"),
        Key("actor_rollout_ref.actor.ppo_mini_batch_size", 128, "`training`", DERIVED),
        Key(
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
            2,
            "`training.micro_batch_size_per_gpu`",
            "the spec's micro-batch",
        ),
        Key(
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
            16 // ROLLOUT_GPUS,
            "`training.micro_batch_size_per_gpu`",
            "the spec's one micro-batch serves both passes here; the script's log-prob pass "
            "takes twice its training micro-batch, as it keeps no activations for a "
            "backward pass",
            shown=f"{16 // ROLLOUT_GPUS} (the script's log_prob_micro_batch_size=16 over its "
            f"{ROLLOUT_GPUS} actor GPUs: verl divides it by them)",
        ),
        Key(
            "actor_rollout_ref.model.enable_gradient_checkpointing",
            CHECKPOINTING,
            "`training.gradient_checkpointing` (default: the script's)",
            "the spec's `training.gradient_checkpointing`",
        ),
        Key(
            "actor_rollout_ref.actor.fsdp_config.param_offload",
            False,
            _REFUSED.format(
                why="verl offloads after `update_actor`, but its VLA `rollout_mode` never "
                "loads the parameters back"
            ),
        ),
        Key(
            "actor_rollout_ref.actor.fsdp_config.optimizer_offload",
            False,
            _REFUSED.format(why="likewise never loaded back"),
        ),
        Key(
            "actor_rollout_ref.ref.fsdp_config.param_offload",
            True,
            "fixed: no reference policy",
            "no KL term here (`use_kl_loss: false`, `use_kl_in_reward: false`), so verl "
            "builds no reference policy to offload (`need_reference_policy`)",
        ),
        Key(
            "actor_rollout_ref.rollout.temperature",
            TEMPERATURE,
            "`training.temperature` (default: the script's)",
            "the spec's `training.temperature`",
        ),
        Key("actor_rollout_ref.rollout.prompt_length", 512, "fixed"),
        Key("actor_rollout_ref.rollout.n", 8, "`training.group_size`", DERIVED),
        Key("data.train_batch_size", 8, "`training.groups`", DERIVED),
        Key("env.train.num_envs", 8, "`training`", DERIVED),
        Key(
            "env.train.max_episode_steps",
            512,
            "`env.max_episode_steps`, in action columns",
            "the spec's episode length",
        ),
        Key(
            "env.rollout.pipeline_stage_num",
            2,
            "`resources.pipeline_stages`",
            "one stage here (the default of `resources.pipeline_stages`): with 2, each env "
            "worker steps half its envs while the rollout acts for the other half; the envs "
            "and the batch must then divide over the stages (vlagen checks)",
        ),
        Key(
            "trainer.n_env_gpus_per_node",
            ENV_GPUS,
            env_source,
            "the spec's split of each node's GPUs",
        ),
        Key(
            "trainer.n_rollout_gpus_per_node",
            ROLLOUT_GPUS,
            "`resources`: the GPUs the env workers leave",
            "the spec's split of each node's GPUs",
        ),
        Key("trainer.save_freq", 30, "fixed, as the script"),
        Key(
            "trainer.max_actor_ckpt_to_keep",
            None,
            "fixed",
            "the last 5 checkpoints kept here; the script keeps every one (`ppo_trainer`'s "
            "null), each the actor's float32 shards and AdamW's states",
            shown="not set: every checkpoint kept",
        ),
        Key(
            "trainer.test_freq",
            30,
            "fixed",
            "no validation pass here: the steps' `critic/score` is the mean return over the "
            "decision rows still running (an episode counted once per decision); verl's "
            "`_validate` over this package's env does not run in its tests, so it is not "
            "turned on for you (set `trainer.test_freq` to run it)",
        ),
    )
    return Reference(
        repository=REPOSITORY,
        tag=tag,
        path=f"{VLA}/run_simpleVLA_libero_grpo.sh",
        trains="OpenVLA-OFT on LIBERO, REINFORCE++ advantages, full fine-tuning",
        nearest=(
            "verl 0.7.1's only VLA example with PPO-style advantages on a simulator its "
            "env workers run (its others train SAC, or run Isaac's simulator on nodes of "
            "its own)"
        ),
        keys=keys,
        composes=(f"{VLA}/config/rob_ppo_trainer.yaml", "verl/trainer/config/ppo_trainer.yaml"),
    )


def comparison(
    spec: Spec, index: int, tag: str, config: dict[str, Any], own: tuple[str, ...]
) -> Comparison:
    """The package's ``config.yaml`` beside the script (``own``: the keys the spec's
    ``targets[i].config`` set)."""
    return compare(reference(spec, index, tag), flat(config), own=own)
