"""Where AReaL puts the trainers, the inference servers and the envs under the generated
config, for the memory plan (:mod:`vlagen.memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...backbones import BACKBONES
from ...memory import SERVER, Gpu, Logits, Placement, Rollout, Tokens, Training
from .plan import PROMPT_TEXT_BUDGET

if TYPE_CHECKING:
    from ...spec import Spec
    from .plan import ArealPlan


def placement(spec: Spec, plan: ArealPlan) -> Placement:
    """Trainers on ``actor.backend``'s GPUs, inference servers on ``rollout.backend``'s; the
    workflow's envs run in the rollout workers beside the servers."""
    actor = plan.config["actor"]
    row = Tokens(plan.image_tokens, PROMPT_TEXT_BUDGET, plan.tokens)
    training = Training(
        shards=plan.train_gpus,
        shard_how=f"FSDP2 over the trainers, actor.backend {actor['backend']}",
        weights=str(actor.get("optimizer_dtype", "float32")),
        weights_key="actor.optimizer_dtype, AReaL's default float32 (master weights; "
        "FSDP2's MixedPrecisionPolicy computes in actor.dtype)",
        compute=actor["dtype"],
        all_grads=False,
        grads_why="FSDP2 shards each parameter on its own: frozen ones get no gradient",
        rows=max(actor["mb_spec"]["max_tokens_per_mb"] // plan.row_tokens, 1),
        rows_key=f"actor.mb_spec.max_tokens_per_mb / {plan.row_tokens} tokens a row",
        tokens=row,
        checkpointing=bool(actor["gradient_checkpointing"]),
        checkpointing_key="actor.gradient_checkpointing",
        attention=str(actor.get("attn_impl", "flash_attention_2")),
        logits=Logits(
            row.total,
            BACKBONES[spec.model.backbone].shape.vocab,
            4,
            "AReaL's FSDP engine computes the whole vocabulary's logits at every token, and "
            "log-probs from them in float32",
        ),
        checkpointing_lever="actor.gradient_checkpointing: true in the target's config block",
    )
    sglang = plan.config["sglang"]
    server = Rollout(
        kind=SERVER,
        dtype=actor["dtype"],
        rows=0,
        tokens=None,
        fraction=float(sglang["mem_fraction_static"]),
        why="SGLang reserves sglang.mem_fraction_static of its GPU for them",
    )
    envs = spec.training.in_flight / plan.rollout_gpus
    gpus = (
        Gpu("a trainer", plan.train_gpus, training=training),
        Gpu(
            "an inference server and the workflow's envs",
            plan.rollout_gpus,
            rollout=server,
            envs=envs,
        ),
    )
    how = (
        f"AReaL trains on {plan.train_gpus} GPU(s) (actor.backend {actor['backend']}) and serves "
        f"generation on {plan.rollout_gpus} (rollout.backend {plan.config['rollout']['backend']}), "
        "where its rollout workers run the workflow's envs"
    )
    return Placement(gpus, how)
