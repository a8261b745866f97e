"""Where RLinf puts the actor, the rollout's weights and the env workers under the generated
config, for the memory plan (:mod:`vlagen.memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...backbones import BACKBONES
from ...memory import COPY, Gpu, Logits, Placement, Rollout, Tokens, Training, image_tokens

if TYPE_CHECKING:
    from ...spec import Spec
    from .plan import RlinfPlan

#: RLinf builds the policy through the package (``get_model``), whose loss scores the action
#: tokens' rows of the output layer only.
POLICY_LOGITS = (
    "the package's policy scores only the action tokens' rows of the output layer, in float32"
)


def tokens(spec: Spec, plan: RlinfPlan) -> Tokens:
    """A decision row: ``actor.model.max_prompt_length`` (every prompt is left-padded to it;
    it holds a Qwen-VL prompt's image placeholders), a Prismatic model's image patches, the
    action tokens."""
    images = image_tokens(spec)
    placeholders = images if BACKBONES[spec.model.backbone].processor else 0
    text = plan.config["actor"]["model"]["max_prompt_length"] - placeholders
    return Tokens(images, text, spec.model.action.chunk * spec.model.action.dim)


def accumulation(spec: Spec, plan: RlinfPlan) -> tuple[str | None, str]:
    """Why the actor's gradients stay unsharded (None where they do not), and the lever.

    With ``enable_gradient_accumulation`` RLinf's FSDP strategy runs all but the last
    micro-batch of a mini-batch under ``model.no_sync()`` (``before_micro_batch``), and
    torch's FSDP then keeps each flat parameter's whole gradient until the last micro-batch
    reduce-scatters it. RLinf's own LoRA configs (``libero_spatial_grpo_openvlaoft.yaml``)
    keep accumulation on, but their ``is_lora`` wrap puts each trainable layer in a unit of
    its own, so only the adapters' gradients are whole; here the adapters share flat
    parameters with frozen weights (``use_orig_params``)."""
    actor = plan.config["actor"]
    fsdp = actor["fsdp_config"]
    micro = actor["global_batch_size"] // actor["micro_batch_size"] // plan.world_size
    if not fsdp["enable_gradient_accumulation"] or micro < 2:
        return None, ""
    why = (
        f"RLinf runs all but the last of the {micro} micro-batches of a mini-batch "
        "(actor.global_batch_size / actor.micro_batch_size / GPUs) under FSDP's no_sync() "
        "(actor.fsdp_config.enable_gradient_accumulation), and torch's FSDP keeps each flat "
        "parameter's whole gradient until the last one reduce-scatters it"
    )
    lever = (
        "actor.fsdp_config.enable_gradient_accumulation: false in the target's config block: "
        "a reduce-scatter after every micro-batch instead of one per mini-batch"
    )
    if spec.model.lora is not None and fsdp["use_orig_params"]:
        lever += (
            " (RLinf's LoRA examples keep accumulation on, but their is_lora gives each "
            "adapter a unit of its own, so only the adapters' gradients are whole)"
        )
    return why, lever


def placement(spec: Spec, plan: RlinfPlan) -> Placement:
    """Every GPU holds an actor, a rollout and an env worker (one ``component_placement``
    range for ``actor,env,rollout``); FSDP shards the actor over all of them."""
    config, gpus = plan.config, plan.world_size
    actor, rollout = config["actor"], config["rollout"]
    fsdp = actor["fsdp_config"]
    lora = spec.model.lora is not None
    mixed = lora and bool(fsdp["use_orig_params"])
    row = tokens(spec, plan)
    envs = config["env"]["train"]["total_num_envs"]
    unsharded, unsharded_lever = accumulation(spec, plan)
    training = Training(
        shards=gpus,
        shard_how=f"FSDP {fsdp['sharding_strategy']}, actor.fsdp_config.sharding_strategy",
        weights=actor["model"]["precision"],
        weights_key="actor.model.precision: get_model casts the model to it, and FSDP keeps it",
        compute=fsdp["mixed_precision"]["param_dtype"],
        all_grads=not lora or mixed,
        grads_why=(
            "a decoder layer's frozen weights and LoRA adapters share one FSDP flat parameter "
            "(use_orig_params), whose gradient covers all of it"
            if mixed
            else ("every parameter trains" if not lora else "the adapters' units only")
        ),
        rows=actor["micro_batch_size"],
        rows_key="actor.micro_batch_size",
        tokens=row,
        checkpointing=bool(fsdp["gradient_checkpointing"]),
        checkpointing_key="actor.fsdp_config.gradient_checkpointing",
        attention=actor["model"].get("attn_implementation") or "sdpa",
        logits=Logits(row.actions, spec.model.action.bins, 4, POLICY_LOGITS),
        offload=bool(actor["enable_offload"]),
        checkpointing_lever="actor.fsdp_config.gradient_checkpointing: true in the target's "
        "config block",
        unsharded_grads=unsharded,
        unsharded_lever=unsharded_lever,
    )
    roll = Rollout(
        kind=COPY,
        dtype=rollout["model"]["precision"],
        rows=envs // gpus,
        tokens=row,
        why="RLinf's rollout worker loads a model of its own (MultiStepRolloutWorker."
        "init_worker: get_model at rollout.model.precision), resident unless "
        "rollout.enable_offload",
        offloaded=bool(rollout["enable_offload"]),
        offload_lever="rollout.enable_offload: true in the target's config block (the "
        "copy leaves the GPU while the actor trains)",
    )
    gpu = Gpu(
        "the actor, rollout and env workers",
        gpus,
        training=training,
        rollout=roll,
        envs=envs / gpus,
        processes=2,
    )
    places = ", ".join(f"{k}: {v}" for k, v in config["cluster"]["component_placement"].items())
    how = (
        f"RLinf puts an actor, a rollout and an env worker on every GPU (cluster."
        f"component_placement {places}), {envs / gpus:g} of env.train.total_num_envs on each"
    )
    return Placement((gpu,), how)
