"""verl 0.7: VLA training lives in ``verl/experimental/vla`` of the v0.7.1 source tree only,
so the target is a source checkout of tag v0.7.1 (see :mod:`vlagen.targets.verl`, which also
holds the plan, checks and contract)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import FrameworkSource, TargetDecl, WeightsDtype
from .common.config_schema import load_schema
from .common.flow import flow_notes
from .verl.checks import verl_checks
from .verl.contract import CONTRACT
from .verl.layout import SCHEMA, VLA
from .verl.memory import placement
from .verl.plan import (
    VERL_COMMIT,
    VERL_TAG,
    VerlPlan,
    derived_batch,
    derived_settings,
    make_verl_plan,
)
from .verl.reference import REPOSITORY, comparison

if TYPE_CHECKING:
    from ..spec import Spec
    from .common.reference import Comparison

ALGORITHMS = {
    "grpo": "algorithm.adv_estimator=grpo (group-relative, rollout.n = group_size)",
    "reinforce_plus_plus": "algorithm.adv_estimator=reinforce_plus_plus (the upstream "
    "LIBERO example; rollout.n = 1)",
    "rloo": "algorithm.adv_estimator=rloo (leave-one-out baseline, rollout.n = group_size)",
}


#: What the VLA training path imports (verl's modules, the package's env and workers): verl
#: 0.7.1's own install_requires that path needs, plus gymnasium (the package's env). The
#: ``verl`` extra lists them beside the pin, which an editable v0.7.1 checkout installed
#: first satisfies (the wheel of that pin lacks the VLA code).
VLA_REQUIREMENTS = (
    "omegaconf",
    "hydra-core",
    "ray>=2.41.0",
    "tensordict>=0.8,<=0.10.0,!=0.9.0",
    "transformers",
    "peft",
    "accelerate",
    "codetiming",
    "datasets",
    "torchdata",
    "pandas",
    "pyarrow>=19",
    "gymnasium",
    "aiohttp",
    "pillow",  # verl/utils/dataset/rl_dataset.py (the trainer's collate_fn) imports PIL
)


def _reference(spec: Spec, index: int, plan: VerlPlan) -> Comparison:
    """The package's config beside verl's VLA GRPO script."""
    return comparison(spec, index, VERL_TAG, plan.config, plan.own)


TARGET = TargetDecl(
    framework="verl",
    version="0.7",
    title="verl",
    # The wheel lacks verl/experimental/vla: the extra keeps the pin, which the editable
    # v0.7.1 checkout (``source``), installed first, satisfies.
    requirement="verl==0.7.1",
    source=FrameworkSource(
        repository=REPOSITORY,
        tag=VERL_TAG,
        commit=VERL_COMMIT,
        why="the verl 0.7.1 wheel lacks verl/experimental/vla (no __init__.py, so packaging "
        "skips it)",
    ),
    runtime_requirements=VLA_REQUIREMENTS,
    algorithms=ALGORITHMS,
    # The PPO-style VLA path of 0.7.1 trains token-action models (Pi0 is SAC-only there);
    # the package's own rollout and actor bring the spec's family.
    model_families=("openvla", "openvla_oft", "waypoint"),
    backbones=("llava", "qwen2_5_vl", "qwen3_vl"),
    family_notes=flow_notes(
        f"verl 0.7.1 trains its own π0/π0.5 ({VLA}/models/pi0_torch) with SAC only:"
        " its worker builds PI0RolloutRob and RobDataParallelSACActor only when algorithm "
        f"is sac ({VLA}/fsdp_workers.py:96-101, 281-289), and the Gaussian step log-prob "
        f"({VLA}/models/pi0_torch/modeling_pi0_torch.py:261-339) is reached only through "
        f"sac_forward_actor on a freshly sampled chain ({VLA}/sac/sac_actor.py:245, 277). Its "
        "PPO and GRPO actor scores action tokens: it asserts a 32000-token vocabulary and takes "
        f"logprobs_from_logits over logits[..., -320:-64] ({VLA}/dp_rob.py:119-127, 154-161), "
        "and it keeps only responses, input_ids, attention_mask, pixel_values, response_mask, "
        f"old_log_probs and advantages ({VLA}/dp_rob.py:202, 238-247), so a flow policy's "
        "stored denoising chain, its noisy step and its state never reach the re-scoring"
    )
    | {
        "custom": "verl 0.7.1's launch reads a Hugging Face tokenizer and transformers "
        "config at actor_rollout_ref.model.path: main_ppo.main_task loads the tokenizer "
        f"({VLA}/main_ppo.py:101, hf_tokenizer), the trainer sends its pad and eos ids "
        f"({VLA}/rob_ray_trainer.py:298-300) and the rollout worker's HFModelConfig "
        f"({VLA}/fsdp_workers.py:107) loads both, asserting one architecture "
        "(verl/workers/config/model.py:158, 174, 200); and its actor hands the model "
        "input_ids, attention_mask and pixel_values only (RobDataParallelPPOActor."
        f"update_policy, {VLA}/dp_rob.py:238-247). A custom module's checkpoint is its own "
        "save_pretrained folder, with no tokenizer or transformers config, and it reads the "
        "prompt text and the state: use family openvla, openvla_oft or waypoint, or "
        "another target",
    },
    contract=CONTRACT,
    checks=(verl_checks,),
    templates="verl",
    # the actor is built at model_dtype and AdamW steps its parameters; the package's
    # config keeps verl's float32, mixed precision computing in the spec's dtype
    weights_dtype=WeightsDtype(
        "actor_rollout_ref.actor.fsdp_config.model_dtype",
        "verl/workers/fsdp_workers.py: _build_model_optimizer",
        "float32",
        follows_model=False,
    ),
    planner=make_verl_plan,
    placement=placement,
    config_keys=lambda: load_schema(SCHEMA)["keys"],
    derived=lambda spec, index: derived_batch(spec, index) + derived_settings(spec),
    reference=_reference,
    test_requirements=(
        "omegaconf",
        "hydra-core",
        "ray",
        "tensordict>=0.8,<=0.10.0,!=0.9.0",
        "transformers",
        "peft",
        "codetiming",
        "datasets",
        "torchdata",
        "pandas",
        "pyarrow>=19",
        "accelerate",
        "gymnasium",
        # verl/trainer/main_ppo.py imports aiohttp at module level, and RayPPOTrainer's
        # _create_dataloader imports that module; verl gets it only through ray[default]
        "aiohttp",
        # verl/utils/dataset/rl_dataset.py (the trainer's collate_fn) imports PIL
        "pillow",
    ),
)
