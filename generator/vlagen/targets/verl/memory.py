"""Where verl puts the actor, the rollout's weights and the env workers under the generated
config, for the memory plan (:mod:`vlagen.memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...backbones import BACKBONES
from ...memory import (
    GATHERED,
    ROOT,
    Gpu,
    Logits,
    Placement,
    Rollout,
    Tokens,
    Training,
    image_tokens,
)
from ..rlinf.memory import POLICY_LOGITS

if TYPE_CHECKING:
    from ...spec import Spec
    from .plan import VerlPlan

VLA = "verl/experimental/vla/fsdp_workers.py"


def placement(spec: Spec, plan: VerlPlan) -> Placement:
    """The actor and its rollout as one hybrid-engine worker per policy GPU, FSDP over them;
    env workers on GPUs of their own."""
    config = plan.config["actor_rollout_ref"]
    fsdp = config["actor"]["fsdp_config"]
    images = image_tokens(spec)
    placeholders = images if BACKBONES[spec.model.backbone].processor else 0
    row = Tokens(images, plan.prompt_length - placeholders, plan.chunk * plan.action_dim)
    lora = spec.model.lora is not None
    training = Training(
        shards=plan.actor_world,
        shard_how="FSDP full_shard over the actor/rollout workers",
        weights=fsdp["model_dtype"],
        weights_key="actor_rollout_ref.actor.fsdp_config.model_dtype",
        compute=fsdp["dtype"],
        all_grads=not lora,
        grads_why=(
            "the LoRA adapters only: the package's wrap_fsdp gives them FSDP units of their "
            "own (verl's get_fsdp_wrap_policy with is_lora, as verl's worker wraps LoRA)"
            if lora
            else "every parameter trains"
        ),
        rows=config["actor"]["ppo_micro_batch_size_per_gpu"],
        rows_key="actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
        tokens=row,
        checkpointing=bool(config["model"]["enable_gradient_checkpointing"]),
        checkpointing_key="actor_rollout_ref.model.enable_gradient_checkpointing",
        attention=spec.model.attn_implementation or "sdpa",
        logits=Logits(row.actions, spec.model.action.bins, 4, POLICY_LOGITS),
    )
    in_flight = plan.num_envs * plan.env_world  # one stage's envs over the env workers
    fsdp1 = config["actor"]["strategy"] == "fsdp"
    rollout = Rollout(
        kind=ROOT if fsdp1 else GATHERED,
        dtype=fsdp["model_dtype"] if fsdp1 else fsdp["dtype"],
        rows=in_flight // plan.actor_world,
        tokens=row,
        why="verl's hybrid engine generates with the actor's own FSDP module, whose root "
        f"unit rollout_mode unshards (_unshard_params_for_summon on the root's state, {VLA}) "
        "in full precision, model_dtype; the wrapped layers gather in turn as they compute"
        if fsdp1
        else "verl's hybrid engine generates with the actor's own FSDP module, every unit "
        f"of which rollout_mode unshards under FSDP2 ({VLA}), at the mixed-precision dtype",
    )
    envs = plan.num_envs * plan.stages
    gpus = (
        Gpu("the actor and its rollout (hybrid engine)", plan.actor_world, training, rollout),
        Gpu("env workers", plan.env_world, envs=envs, processes=0),
    )
    where = "on env nodes of their own" if plan.disaggregated else "on the other GPUs"
    how = (
        f"verl runs the actor and its rollout as one worker on {plan.rollout_gpus} GPU(s) of "
        f"each node (trainer.n_rollout_gpus_per_node), and its env workers {where} "
        f"(trainer.n_env_gpus_per_node {plan.env_gpus}), {envs} envs each"
    )
    return Placement(gpus, how)
