"""AReaL's nearest example as data, and the package's ``config.yaml`` beside it (see
:mod:`..common.reference`).

AReaL 1.0.4 ships no VLA, robot or simulator example (no ``vla``, ``embodied``, ``libero`` or
``openvla`` anywhere in its repository at tag ``v1.0.4``). The nearest is GRPO on a
vision-language model: ``examples/vlm/clevr_count_70k_grpo.yaml`` trains Qwen2.5-VL-3B with
SGLang serving generation, as this package's config does (``geometry3k_grpo.yaml`` is the
same but for vLLM and the dataset). A key the example leaves out is at ``GRPOConfig``'s
default (``areal/api/cli_args.py`` at the same tag), which the table says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..common.reference import DERIVED, Comparison, Key, Reference, compare, decided, flat

if TYPE_CHECKING:
    from ...spec import Spec

REPOSITORY, TAG = "https://github.com/areal-project/AReaL", "v1.0.4"
EXAMPLE = "examples/vlm/clevr_count_70k_grpo.yaml"
#: The example's ``gconfig.temperature`` (``GenerationHyperparameters``' default too).
TEMPERATURE = 1.0
#: The example's ``actor.gradient_checkpointing``.
CHECKPOINTING = True
_CREDIT = (
    "the workflow's credit is already group-relative (each decision's return-to-go against "
    "the group's at the same index, over the group's spread), where the example scores one "
    "answer 0 or 1"
)


def sampling_temperature(spec: Spec) -> float:
    """``gconfig.temperature``: ``training.temperature``, else the example's."""
    return decided(spec.training.temperature, TEMPERATURE)


def gradient_checkpointing(spec: Spec) -> bool:
    """``actor.gradient_checkpointing``: ``training.gradient_checkpointing``, else the
    example's."""
    return decided(spec.training.gradient_checkpointing, CHECKPOINTING)


def reference(spec: Spec, index: int) -> Reference:
    """The example's keys a spec decides, with why the package's value differs where it
    does."""
    lora = spec.model.lora is not None
    keys = (
        Key(
            "actor.path",
            "Qwen/Qwen2.5-VL-3B-Instruct",
            "`model.checkpoint`",
            "the example's base model; this spec's checkpoint, fine-tuned to emit its action "
            "tokens, here",
        ),
        Key("actor.dtype", "bfloat16", "`model.dtype`", "the spec's dtype"),
        Key(
            "actor.use_lora",
            False,
            "`model.lora`",
            "`model.lora`: a LoRA adapter here; the example fine-tunes every weight",
            shown="False (not set: GRPOConfig's default)",
        ),
        Key(
            "actor.optimizer.lr",
            2e-6,
            "`training.learning_rate`",
            "LoRA here, full fine-tuning in the example: an adapter trains at a higher rate "
            "than a full fine-tune (RLinf's LoRA examples: 1e-4)"
            if lora
            else "the spec's `training.learning_rate`",
        ),
        Key(
            "actor.optimizer.weight_decay",
            0.01,
            "fixed",
            "vlagen decays no weights on any target (as siiRL's SRPO scripts, 0.0); set "
            "`actor.optimizer.weight_decay` in the spec's `targets[].config` for the example's",
        ),
        Key(
            "actor.optimizer.warmup_steps_proportion",
            0.001,
            "fixed",
            "a constant rate from the first step here, as on the other targets",
        ),
        Key("actor.optimizer.gradient_clipping", 1.0, "fixed"),
        Key(
            "actor.gradient_checkpointing",
            CHECKPOINTING,
            "`training.gradient_checkpointing` (default: the example's)",
            "the spec's `training.gradient_checkpointing`",
        ),
        Key(
            "actor.eps_clip",
            0.4,
            "fixed",
            "vlagen clips the ratio at 0.2, the lower clip of its other targets",
        ),
        Key("actor.reward_scaling", 10.0, "fixed", _CREDIT),
        Key("actor.reward_bias", -0.5, "fixed", _CREDIT),
        Key(
            "actor.reward_norm",
            "group mean and std",
            "fixed: none",
            _CREDIT,
        ),
        Key(
            "actor.adv_norm",
            "batch mean and std",
            "fixed: none",
            "the credit reaches the loss as the workflow computed it (group-normalized already)",
        ),
        Key(
            "actor.rejection_sampling",
            "ratio above 5 masked",
            "fixed: none (GRPOConfig's default)",
            "no stale tokens are masked here; the decoupled loss still corrects for "
            "staleness (`use_decoupled_loss: true`, as the example)",
        ),
        Key("actor.use_decoupled_loss", True, "fixed"),
        Key("actor.recompute_logprob", True, "fixed"),
        Key("actor.kl_ctl", 0.0, "fixed"),
        Key(
            "gconfig.n_samples",
            4,
            "fixed: 1",
            "the workflow runs a group itself: `vla.group_size` episodes per dataset row",
        ),
        Key(
            "gconfig.temperature",
            TEMPERATURE,
            "`training.temperature` (default: the example's)",
            "the spec's `training.temperature`",
        ),
        Key(
            "gconfig.max_new_tokens",
            512,
            "`model.action` (chunk x dim)",
            "exactly one decision's action tokens",
        ),
        Key(
            "rollout.max_head_offpolicyness",
            4,
            "fixed",
            "a group may start at most 2 weight versions before it trains here (the "
            "decoupled loss corrects the staleness)",
        ),
        Key(
            "rollout.backend",
            "sglang:d1p1t1",
            "`resources.rollout_gpus` (default half)",
            "the spec's split of its GPUs",
        ),
        Key(
            "actor.backend",
            "fsdp:d7p1t1",
            "`resources`: the GPUs generation leaves",
            "the spec's split of its GPUs",
        ),
        Key(
            "actor.scheduling_spec[0].gpu",
            1,
            "fixed",
            shown="1 (GRPOConfig's default: 0, no GPU)",
        ),
        Key("rollout.scheduling_spec", "${actor.scheduling_spec}", "fixed"),
        Key(
            "rollout.max_concurrent_rollouts",
            256,
            "`training.groups`",
            "one dataset row is a whole group here (`vla.group_size` episodes, their envs side "
            "by side): the groups of one step are in flight, where the example's rows are "
            "single answers",
        ),
        Key(
            "sglang.context_length",
            32768,
            "`model` (prompt, images and action tokens)",
            "twice one decision's row (image, prompt and action tokens): every request is one "
            "decision",
        ),
        Key("train_dataset.batch_size", 28, "`training.groups`", DERIVED),
        Key("actor.ppo_n_minibatches", 1, "`training.mini_batches`", DERIVED),
        Key("actor.mb_spec.max_tokens_per_mb", 4096, "`training`", DERIVED),
    )
    return Reference(
        repository=REPOSITORY,
        tag=TAG,
        path=EXAMPLE,
        trains="Qwen2.5-VL-3B-Instruct counting objects in CLEVR images, GRPO, full fine-tuning",
        nearest=(
            "AReaL 1.0.4 ships no VLA or simulator example; its nearest is GRPO on a "
            f"vision-language model served by SGLang, as this spec's `{spec.model.backbone}` "
            "is here (`geometry3k_grpo.yaml` is the same but for vLLM and the data); a key "
            "the example leaves out is at `GRPOConfig`'s default (`areal/api/cli_args.py`)"
        ),
        keys=keys,
    )


def comparison(spec: Spec, index: int, config: dict[str, Any], own: tuple[str, ...]) -> Comparison:
    """The package's ``config.yaml`` beside the example (``own``: the keys the spec's
    ``targets[i].config`` set)."""
    values = flat(config)
    values["actor.reward_norm"] = config["actor"].get("reward_norm")
    values["actor.adv_norm"] = config["actor"].get("adv_norm")
    values["actor.rejection_sampling"] = config["actor"].get("rejection_sampling")
    values["actor.scheduling_spec[0].gpu"] = config["actor"]["scheduling_spec"][0]["gpu"]
    return compare(reference(spec, index), values, own=own)
