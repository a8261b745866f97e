"""siiRL's own SRPO example as data, and the package's siiRL overrides beside it (see
:mod:`..common.reference`).

siiRL 0.2's only VLA examples train OpenVLA-OFT on LIBERO with embodied SRPO, one script per
task suite (``examples/embodied_srpo_trainer/run_openvla_oft_libero_{spatial,goal,object,
long}.sh`` at ``v0.2.0``). The four differ only in the suite (``DATASET``, which is also the
``unnorm_key``) and the checkpoint, and the goal script has a stray ``q`` line where
``actor_rollout_ref.actor.clip_ratio_c=10000.0`` belongs; the values below are the spatial
script's. A user who knows that script asks which of its settings a spec reproduces and how to
get the others: :func:`comparison` answers key by key from the plan's own overrides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.reference import DERIVED, Comparison, Key, Reference, compare, decided
from .pipeline import chain

if TYPE_CHECKING:
    from ...spec import Spec

REPOSITORY, TAG = "https://github.com/sii-research/siiRL", "v0.2.0"
SCRIPTS = "examples/embodied_srpo_trainer"
SCRIPT = f"{SCRIPTS}/run_openvla_oft_libero_spatial.sh"
#: The script of each LIBERO suite (``DATASET`` in it).
SUITES = {
    "libero_spatial": "spatial",
    "libero_goal": "goal",
    "libero_object": "object",
    "libero_10": "long",
}
#: The script's sampling temperature (``TEMPERATURE=1.6``, siiRL's ``EmbodiedArguments``
#: default too); the rollout and the actor read ``actor_rollout_ref.rollout.temperature``.
TEMPERATURE = 1.6
#: The script's ``actor_rollout_ref.model.enable_gradient_checkpointing``.
CHECKPOINTING = True
_SRPO = "`targets[].algorithm`: srpo"
#: Why ``embodied.env.num_steps_wait`` is 0 here, by the env's backend: siiRL's LIBERO
#: adapter waits that many no-op steps after a reset, and the package's env, which replaces
#: it, leaves settling to the backend.
SETTLING = {"libero": "the LIBERO backend settles 10 no-op steps after every reset itself"}
#: The pipeline node that runs siiRL's reward manager, the one reader of ``reward_kwargs``.
REWARD_NODE = "compute_reward"


def sampling_temperature(spec: Spec) -> float:
    """``actor_rollout_ref.rollout.temperature``: ``training.temperature``, else the
    script's."""
    return decided(spec.training.temperature, TEMPERATURE)


def gradient_checkpointing(spec: Spec) -> bool:
    """``actor_rollout_ref.model.enable_gradient_checkpointing``:
    ``training.gradient_checkpointing``, else the script's."""
    return decided(spec.training.gradient_checkpointing, CHECKPOINTING)


def reference(spec: Spec, index: int) -> Reference:
    """The spatial script's keys a spec decides, with why the package's value differs where
    it does."""
    lora = spec.model.lora is not None
    suite = spec.env.task_suite
    other = SUITES.get(suite or "")
    suite_why = (
        f"the spec's task suite, which siiRL's `run_openvla_oft_libero_{other}.sh` trains"
        if other and other != "spatial"
        else "the spec's task suite"
    )
    not_srpo = (
        f"the spec's algorithm ({spec.targets[index].algorithm}): only siiRL's embodied "
        "SRPO workflow filters groups by their success rate"
    )
    keys = (
        Key(
            "actor_rollout_ref.model.path",
            "$HOME_PATH/models/Sylvest/OpenVLA-AC-PD-1traj-libero-spatial",
            "`model.checkpoint`, passed by `launch.sh`",
        ),
        Key(
            "algorithm.workflow_type",
            "embodied",
            "`targets[].algorithm`",
            f"the spec's algorithm ({spec.targets[index].algorithm}); srpo runs siiRL's "
            "embodied workflow",
        ),
        Key("algorithm.adv_estimator", "grpo", "`targets[].algorithm`", "the spec's algorithm"),
        Key("algorithm.filter_groups.enable", True, "`targets[].algorithm`", not_srpo),
        Key("algorithm.embodied_sampling.filter_accuracy", True, _SRPO, not_srpo),
        Key("algorithm.embodied_sampling.accuracy_lower_bound", 0.1, _SRPO, not_srpo),
        Key("algorithm.embodied_sampling.accuracy_upper_bound", 0.9, _SRPO, not_srpo),
        Key(
            "actor_rollout_ref.embodied.embodied_type",
            "openvla-oft",
            "`model.family`",
            "the spec's model family",
        ),
        Key(
            "actor_rollout_ref.embodied.unnorm_key",
            "libero_spatial",
            "`model.unnorm_key`",
            "the key of the action statistics the spec's checkpoint carries",
        ),
        Key(
            "actor_rollout_ref.embodied.action_token_len",
            7,
            "`model.action.dim`",
            "the spec's action",
        ),
        Key(
            "actor_rollout_ref.embodied.action_chunks_len",
            8,
            "`model.action.chunk`",
            "the spec's action chunk",
        ),
        Key(
            "actor_rollout_ref.embodied.num_images_in_input",
            1,
            "`model.cameras`",
            "the spec's cameras"
            if spec.model.family == "openvla_oft"
            else "read by OpenVLA-OFT's vision backbone only: not set for another family",
        ),
        Key(
            "actor_rollout_ref.model.lora_rank",
            None,
            "`model.lora` (not set: full fine-tuning)",
            "`model.lora`: a LoRA adapter here; the script fine-tunes every weight",
        ),
        Key(
            "actor_rollout_ref.model.enable_gradient_checkpointing",
            CHECKPOINTING,
            "`training.gradient_checkpointing` (default: the script's)",
            "the spec's `training.gradient_checkpointing`",
        ),
        Key(
            "actor_rollout_ref.embodied.env.env_name",
            "libero_spatial",
            "`env.task_suite`",
            suite_why,
        ),
        Key(
            "actor_rollout_ref.embodied.env.num_envs",
            16,
            "`training.envs` / GPUs x `rollout.n`",
            DERIVED,
        ),
        Key(
            "actor_rollout_ref.embodied.env.max_steps",
            512,
            "`env.max_episode_steps`",
            "the spec's episode length",
        ),
        Key(
            "actor_rollout_ref.embodied.env.num_steps_wait",
            10,
            "fixed: 0",
            SETTLING.get(
                spec.env.backend,
                f"read by siiRL's LIBERO adapter only, which the package's env replaces: the "
                f"{spec.env.preset} env ({spec.env.backend} backend) has no settling steps",
            ),
        ),
        _reward_coef(spec, index),
        Key("data.train_batch_size", 64, "`training.groups`", DERIVED),
        Key("data.val_batch_size", 496, "`training.envs` / GPUs (a rank's env pool)", DERIVED),
        Key("actor_rollout_ref.rollout.n", 8, "`training.group_size`", DERIVED),
        Key(
            "actor_rollout_ref.actor.ppo_mini_batch_size",
            4,
            "`training.groups` / `mini_batches`",
            DERIVED,
        ),
        Key(
            "actor_rollout_ref.actor.optim.lr",
            5e-6,
            "`training.learning_rate`",
            "LoRA here, full fine-tuning in the script: its 5e-6 moves every weight of the "
            "full model, and an adapter trains at a higher rate (RLinf's LoRA examples: 1e-4)"
            if lora
            else "the spec's `training.learning_rate`",
        ),
        Key("actor_rollout_ref.actor.optim.weight_decay", 0.0, "fixed, as the script"),
        Key("actor_rollout_ref.actor.grad_clip", 1.0, "fixed, as the script"),
        Key("actor_rollout_ref.actor.clip_ratio_high", 0.28, "fixed, as the script"),
        Key("actor_rollout_ref.actor.clip_ratio_c", 10000.0, "fixed, as the script"),
        Key(
            "actor_rollout_ref.rollout.temperature",
            TEMPERATURE,
            "`training.temperature` (default: the script's)",
            "the spec's `training.temperature`",
        ),
        Key(
            "trainer.val_before_train",
            True,
            "fixed",
            "training starts at once here; append `trainer.val_before_train=True` to `train` "
            "for a validation pass first",
        ),
        Key("trainer.total_epochs", 1000, "`train.py --epochs` (default 100)"),
        Key("trainer.save_freq", 5, "fixed, as the script"),
        Key("trainer.max_actor_ckpt_to_keep", 5, "fixed, as the script"),
    )
    return Reference(
        repository=REPOSITORY,
        tag=TAG,
        path=SCRIPT,
        trains="OpenVLA-OFT on LIBERO-Spatial, embodied SRPO, full fine-tuning",
        nearest=(
            "siiRL 0.2's only VLA examples are these SRPO scripts, one per LIBERO suite, "
            "alike but for the suite and the checkpoint"
        ),
        keys=keys,
    )


def _reward_coef(spec: Spec, index: int) -> Key:
    """The script's success reward weight: the spec's where it has a ``success`` term, and
    read only where the pipeline runs siiRL's reward manager (srpo's ``compute_reward``);
    elsewhere the ``shape_reward`` node sums the spec's terms and nothing reads the key."""
    algorithm = spec.targets[index].algorithm
    read = any(node.node_id == REWARD_NODE for node in chain(algorithm))
    success = any(term.source == "success" for term in spec.env.rewards)
    return Key(
        "reward_model.reward_kwargs.reward_coef",
        5.0,
        "the weight of the `success` reward term" if success else "fixed: 1 (no `success` term)",
        "the spec's `success` weight"
        if read
        else f"no effect here: only srpo's pipeline runs siiRL's reward manager "
        f"({REWARD_NODE}), which reads it; {algorithm}'s shape_reward node sums the spec's "
        "reward terms (`env.rewards`) with their weights",
    )


def comparison(
    spec: Spec,
    index: int,
    overrides: tuple[tuple[str, object], ...],
    runtime: tuple[str, ...],
    own: tuple[str, ...],
) -> Comparison:
    """The plan's overrides beside the script (``runtime``: filled in at launch; ``own``:
    set by the spec's ``targets[i].config``)."""
    return compare(reference(spec, index), dict(overrides), runtime=runtime, own=own)
