"""AReaL 1.0: no env or VLA classes; the adapter runs episodes inside a ``RolloutWorkflow``
(see :mod:`vlagen.targets.areal`, which also holds the plan, checks and contract)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import TargetDecl, WarningFilter
from .areal.checks import areal_checks
from .areal.contract import CONTRACT
from .areal.layout import SCHEMA
from .areal.memory import placement
from .areal.plan import (
    AREAL_VERSION,
    SERVER,
    ArealPlan,
    derived_batch,
    derived_settings,
    make_areal_plan,
)
from .areal.reference import comparison
from .common.config_schema import load_schema
from .common.flow import flow_notes

if TYPE_CHECKING:
    from ..spec import Spec
    from .common.reference import Comparison


def reference(spec: Spec, index: int, plan: ArealPlan) -> Comparison:
    """The package's config beside AReaL's nearest example."""
    return comparison(spec, index, plan.config, plan.own)


TARGET = TargetDecl(
    framework="areal",
    version="1.0",
    title="AReaL",
    # the extra brings the inference server config.yaml's rollout.backend starts (SGLang)
    requirement=f"areal[{SERVER.extra}]=={AREAL_VERSION}",
    algorithms={
        "grpo": "GRPOConfig; the workflow's group of episodes per initial condition gives "
        "the group-relative credit (no critic: AReaL has none for vision-language models)",
    },
    model_families=("openvla", "waypoint"),
    family_notes=flow_notes(
        "AReaL 1.0.4's FSDP engine takes the model's outputs.logits "
        "(areal/engine/fsdp_engine.py:747) and turns them into log-probs of the next "
        "input_ids by a softmax over the vocabulary (gather_logprobs_entropy, "
        "fsdp_engine.py:1989-1998), the only log-probs its PPO loss receives "
        "(fsdp_engine.py:2107; areal/trainer/ppo/actor.py:346-361, 408-429), as do the "
        "Megatron and Archon actors, PPOTrainer's only others (areal/trainer/rl_trainer.py:"
        "955-970; areal/engine/megatron_engine.py:122, 900); its rollouts are "
        "tokens with token log-probs from SGLang or vLLM servers "
        "(rl_trainer.py:1031-1064; areal/engine/sglang_remote.py:120-121). A flow policy's "
        "log-prob is the Gaussian density of a noisy denoising step: neither AReaL's servers "
        "nor its loss path has one"
    ),
    backbones=("qwen2_5_vl", "qwen3_vl"),
    backbone_note="AReaL's FSDP engine loads causal LMs and the vision-language models of "
    "VALID_VISION_MODELS (areal/engine/core/model.py) only, which OpenVLA/Prismatic and LLaVA "
    "checkpoints are not: put the VLA on a Qwen-VL checkpoint (model.backbone: qwen2_5_vl or "
    "qwen3_vl), its action tokens in the unused tail of the vocabulary",
    contract=CONTRACT,
    checks=(areal_checks,),
    templates="areal",
    planner=make_areal_plan,
    placement=placement,
    config_keys=lambda: load_schema(SCHEMA),
    derived=lambda spec, index: derived_batch(spec, index) + derived_settings(spec),
    reference=reference,
    # train.py loads the episode dataset with datasets; the workflow encodes frames with PIL
    runtime_requirements=("datasets", "pillow"),
    # What AReaL 1.0.4's modules the tests run import on CPU, AReaL being installed --no-deps
    # (its own requirements pin torch>=2.9.1,<2.11 and transformers 5.0 to 5.3, with agent
    # SDKs and CUDA-only packages a CPU test needs none of): areal/__init__
    # pulls the infra (RPC, schedulers, name resolve), and areal.trainer (the PPO actor's
    # package) its stats loggers.
    test_requirements=(
        "datasets",
        "pillow",
        "omegaconf",
        "hydra-core",
        "ray",
        "transformers",
        "torchdata",
        "aiohttp",
        "aiofiles",
        "httpx",
        "orjson",
        "pyyaml",
        "colorlog",
        "tenacity",
        "flask",
        "uvicorn",
        "lark",
        "uvloop",
        "numba",
        "einops",
        "openai",
        "tabulate",
        "pybase64",
        "wandb",
        "swanlab",
        "trackio",
        "tensorboardX",
        "peft",  # areal/engine/fsdp_engine.py imports it at module level
    ),
    test_warnings=(
        WarningFilter(
            "ignore:Transformer Engine and Apex are not installed:UserWarning:areal",
            "AReaL's FSDP grad utils fall back from Transformer Engine/Apex (CUDA-only) on a CPU",
        ),
        WarningFilter(
            "ignore:`torch.jit.script_method` is deprecated:DeprecationWarning:torch.jit._script",
            "AReaL's FSDP engine imports torch's inductor, which imports torch.utils.mkldnn",
        ),
        WarningFilter(
            "ignore:Slicing a flattened dim from root mesh:UserWarning:torch.distributed",
            "AReaL's FSDP engine slices the flattened dp_sp dim of its device mesh",
        ),
    ),
)
