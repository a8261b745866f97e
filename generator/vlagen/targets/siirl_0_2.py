"""siiRL 0.2: the first siiRL release with embodied (VLA) training in its wheel.

What siiRL 0.2.0 fixes in code, and so what vlagen plans around and checks, is in
:mod:`vlagen.targets.siirl`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import TargetDecl, WarningFilter
from .common.config_schema import load_schema
from .common.flow import flow_notes
from .siirl.checks import CUSTOM_NOTE, siirl_checks, siirl_resources
from .siirl.contract import CONTRACT
from .siirl.layout import SCHEMA
from .siirl.memory import placement
from .siirl.plan import SiirlPlan, derived_batch, derived_settings, make_siirl_plan
from .siirl.reference import comparison

if TYPE_CHECKING:
    from ..spec import Spec
    from .common.reference import Comparison

ALGORITHMS = {
    "grpo": "algorithm.adv_estimator=grpo; the GRPO chain with the spec's reward terms",
    "dapo": "algorithm.workflow_type=dapo; GRPO plus DAPO's dynamic sampling of groups",
    "srpo": "algorithm.workflow_type=embodied, adv_estimator=grpo; siiRL's embodied SRPO "
    "chain (success and V-JEPA progress reward) plus the spec's other terms",
    "gae": "algorithm.adv_estimator=gae (PPO); rejected for VLAs: siiRL 0.2's critic has no "
    "embodied path",
}


def reference(spec: Spec, index: int, plan: SiirlPlan) -> Comparison:
    """The plan's overrides beside siiRL's SRPO script."""
    own = tuple(spec.targets[index].config or {})
    return comparison(spec, index, plan.overrides, plan.runtime_keys, own)


TARGET = TargetDecl(
    framework="siirl",
    version="0.2",
    title="siiRL",
    requirement="siirl==0.2.0",
    algorithms=ALGORITHMS,
    model_families=("openvla", "openvla_oft", "waypoint"),
    family_notes=flow_notes(
        "siiRL 0.2.0's embodied actor scores categorical action tokens only: "
        "RobDataParallelPPOActor log-softmaxes the module's logits at the integer responses "
        "(logprobs_from_logits, entropy_from_logits: engine/actor/embodied_actor.py:149-152, "
        "171-175, 214-217, 235-239), an embodied_type other than openvla or openvla-oft is "
        "refused (engine/fsdp_workers.py:392, 765-766), and the rollout keeps only each step's "
        "responses, input_ids, attention_mask and pixel_values "
        "(engine/rollout/embodied_rollout.py:421-426), which with finish_step and the "
        "computed old_log_probs and advantages are all the actor reads "
        "(engine/actor/embodied_actor.py:355, 387): a flow policy's denoising chain, whose "
        "noisy step its log-prob scores, never reaches the actor"
    )
    | {"custom": CUSTOM_NOTE},
    backbones=("llava", "qwen2_5_vl", "qwen3_vl"),
    contract=CONTRACT,
    checks=(siirl_checks, siirl_resources),
    templates="siirl_0_2",
    planner=make_siirl_plan,
    placement=placement,
    config_keys=lambda: load_schema(SCHEMA),
    derived=lambda spec, index: derived_batch(spec) + derived_settings(spec),
    reference=reference,
    # Imported by siiRL's embodied rollout, env package and embodied reward (DBSCAN over V-JEPA
    # embeddings; without it the reward manager's compute_score is None), and by its DAG
    # worker (its agent loop: cachetools), but not declared.
    runtime_requirements=("tensorflow", "gymnasium", "cloudpickle", "scikit-learn", "cachetools"),
    # What siiRL's params, DAG and base env modules import (siiRL itself: --no-deps).
    test_requirements=(
        "loguru",
        "dacite",
        "omegaconf",
        "hydra-core",
        "tensordict>=0.8,<=0.9.1,!=0.9.0",
        "pyarrow>=19",
        "gymnasium",
        "cloudpickle",
        "transformers",
        "peft",
        # what the fidelity tests' siiRL modules import: its embodied actor, and its dataloader
        # batch preparation (data_coordinator/sample.py), its DataProto (protocol.py: pandas)
        "codetiming",
        "ray",
        "pydantic",
        "pandas",
    ),
    test_warnings=(
        WarningFilter(
            "ignore::DeprecationWarning:siirl.data_coordinator.sample",
            "siiRL 0.2's data_coordinator/sample.py declares pydantic 1-style models",
        ),
        WarningFilter(
            "ignore:CUDA is not available or torch_xla is imported:UserWarning:siirl.engine",
            "siiRL's rollout and actor autocast to CUDA; the fidelity tests run them on a CPU",
        ),
    ),
)
