"""Where siiRL puts the actor, the rollout's weights and the envs under the generated
overrides, for the memory plan (:mod:`vlagen.memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...backbones import BACKBONES
from ...memory import ROOT, Gpu, Logits, Placement, Rollout, Tokens, Training, image_tokens
from ..common.placement import gpu_count
from ..rlinf.memory import POLICY_LOGITS

if TYPE_CHECKING:
    from ...spec import Spec
    from .plan import SiirlPlan

ACTOR = "actor_rollout_ref.actor."


def placement(spec: Spec, plan: SiirlPlan) -> Placement:
    """The actor, its rollout and the envs colocated on every GPU."""
    keys = dict(plan.overrides)
    gpus = gpu_count(spec)
    lora = spec.model.lora is not None
    row = Tokens(image_tokens(spec), int(keys["data.max_prompt_length"]), plan.tokens_per_forward)
    if plan.own_model:
        attention = spec.model.attn_implementation or "sdpa"
        logits = Logits(row.actions, spec.model.action.bins, 4, POLICY_LOGITS)
    else:
        # siiRL's loader: flash-attention for OpenVLA, the checkpoint's default for OFT
        attention = "flash_attention_2" if plan.flash_attention_kernels else "sdpa"
        logits = Logits(
            row.total,
            BACKBONES[spec.model.backbone].shape.vocab,
            2,
            "siiRL's embodied actor takes its model's logits over the whole vocabulary at "
            "every position, in bfloat16 under autocast, then slices the action bins "
            "(engine/actor/embodied_actor.py)",
        )
    weights = str(keys.get(ACTOR + "fsdp_config.model_dtype", "float32"))
    rows = int(keys[ACTOR + "traj_mini_batch_size"])  # forward passes per backward pass
    rows *= int(keys[ACTOR + "ppo_micro_batch_size_per_gpu"])
    training = Training(
        shards=gpus,
        shard_how="FSDP full_shard over every GPU",
        weights=weights,
        weights_key="siiRL builds its actor in float32 where fsdp_config.model_dtype is unset "
        "(engine/fsdp_workers.py)",
        compute="bfloat16",  # siiRL's MixedPrecision param_dtype default
        all_grads=not lora,
        grads_why=(
            "the LoRA adapters only: siiRL's wrap policy gives them FSDP units of their own "
            "(get_fsdp_wrap_policy, is_lora)"
            if lora
            else "every parameter trains"
        ),
        rows=rows,
        rows_key=ACTOR + "traj_mini_batch_size (forward passes per backward pass)",
        tokens=row,
        checkpointing=bool(keys["actor_rollout_ref.model.enable_gradient_checkpointing"]),
        checkpointing_key="actor_rollout_ref.model.enable_gradient_checkpointing",
        attention=attention,
        logits=logits,
    )
    in_flight = spec.training.in_flight
    rollout = Rollout(
        kind=ROOT,
        dtype=weights,
        rows=in_flight // gpus,
        tokens=row,
        why="siiRL's EmbodiedHFRollout generates with the actor's FSDP module (dag_utils: "
        "rollout.model = actor_module_fsdp) under FSDP.summon_full_params(recurse=False), "
        "which gathers the root unit in full precision",
    )
    gpu = Gpu(
        "the actor, its rollout and the envs",
        gpus,
        training=training,
        rollout=rollout,
        envs=in_flight / gpus,
    )
    how = (
        f"siiRL colocates the actor, its rollout and the envs on each of the {gpus} GPUs "
        f"(one worker per GPU, the envs on its render GPU), {in_flight / gpus:g} envs each"
    )
    return Placement((gpu,), how)
