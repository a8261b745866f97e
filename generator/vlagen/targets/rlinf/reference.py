"""RLinf's own example configs as data: the one nearest a spec, and its keys beside the
package's ``config.yaml`` (see :mod:`..common.reference`).

Every value below was read from the example in RLinf's repository at ``v0.3`` with the
defaults it composes (``examples/embodiment/config/{env,model,training_backend}/*.yaml``)
resolved; an interpolation (``${actor.model.precision}``) is written as what it resolves to.
At ``v0.2`` the same five examples set the same values, under 0.2's keys (sampling under
``algorithm``, ``algorithm.rollout_epoch``), but for the two ManiSkill OpenVLA-OFT examples'
placeholder checkpoint path (:attr:`Example.v0_2_path`).
RLinf ships no example for a waypoint or a custom policy: those specs are compared with the
LIBERO OpenVLA-OFT example, whose sampling and optimizer settings apply to any policy that
samples binned action tokens, as every family here does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...families import FAMILIES
from ..common.placement import gpu_count
from ..common.reference import Comparison, Key, Reference, compare, decided, flat

if TYPE_CHECKING:
    from ...modelplan import FlowPlan
    from ...spec import Spec
    from .config import RlinfVersion

REPOSITORY = "https://github.com/RLinf/RLinf"
CONFIGS = "examples/embodiment/config"
#: What LIBERO's env in RLinf runs each env in: a process of its own.
LIBERO_PROCESSES = "one per env (ReconfigureSubprocEnv, rlinf/envs/libero/libero_env.py)"
#: RLinf's examples that fine-tune a LoRA adapter, and their rate.
LORA_EXAMPLES = "`maniskill_ppo_openvla.yaml`, `maniskill_grpo_openvlaoft.yaml`: 1e-4"


@dataclass(frozen=True)
class Example:
    """One of RLinf's example configs: what it trains and its values of the compared keys
    (only those it sets, with its composed defaults)."""

    name: str  #: file stem under ``examples/embodiment/config``
    trains: str
    env: str  #: the env config it composes (``env/<name>.yaml``)
    model: str  #: the model config it composes (``model/<name>.yaml``)
    values: dict[str, Any]
    v0_2_path: str | None = None  #: ``actor.model.model_path`` at ``v0.2``, where it differs


_COMMON = {
    "actor.model.precision": "bf16",
    "actor.fsdp_config.gradient_checkpointing": True,
    "actor.fsdp_config.cpu_offload": False,
    "actor.enable_offload": True,
    "rollout.enable_offload": True,
    "actor.optim.weight_decay": 0.01,
    "algorithm.clip_ratio_low": 0.2,
}

EXAMPLES = {
    e.name: e
    for e in (
        Example(
            "libero_spatial_grpo_openvlaoft",
            "OpenVLA-OFT on LIBERO-Spatial, GRPO, full fine-tuning",
            "libero_spatial",
            "openvla_oft",
            _COMMON
            | {
                "actor.model.model_path": "/path/to/model/Openvla-oft-SFT-libero-spatial-traj1/",
                "lora": None,
                "actor.optim.lr": 2e-5,
                "actor.optim.clip_grad": 1.0,
                "actor.micro_batch_size": 32,
                "actor.global_batch_size": 16384,
                "rollout.sampling_params.temperature_train": 1.6,
                "rollout.sampling_params.temperature_eval": 1.6,
                "rollout.sampling_params.top_k": -1,
                "algorithm.adv_type": "grpo",
                "algorithm.clip_ratio_high": 0.28,
                "algorithm.filter_rewards": True,
                "algorithm.rewards_lower_bound": 0.5,
                "algorithm.rewards_upper_bound": 4.5,
                "algorithm.reward_coef": 5.0,
                "env.train.total_num_envs": 64,
                "env.train.rollout_epoch": 16,
                "env.train.group_size": 8,
                "env.train.max_episode_steps": 512,
                "processes": LIBERO_PROCESSES,
                "cluster.component_placement": {"actor,env,rollout": "all"},
                "rollout.pipeline_stage_num": 1,
            },
        ),
        Example(
            "maniskill_grpo_openvlaoft",
            "OpenVLA-OFT on ManiSkill (put on plate), GRPO, LoRA",
            "maniskill_put_on_plate_in_scene_25_main",
            "openvla_oft",
            _COMMON
            | {
                "actor.model.model_path": "/path/to/model/RLinf-OpenVLAOFT-ManiSkill-Base-Main/",
                "lora": 32,
                "actor.optim.lr": 1e-4,
                "actor.optim.clip_grad": 10.0,
                "actor.micro_batch_size": 40,
                "actor.global_batch_size": 640,
                "rollout.sampling_params.temperature_train": 1.0,
                "rollout.sampling_params.temperature_eval": 0.6,
                "rollout.sampling_params.top_k": 0,
                "algorithm.adv_type": "grpo",
                "algorithm.clip_ratio_high": 0.28,
                "env.train.total_num_envs": 256,
                "env.train.rollout_epoch": 1,
                "env.train.group_size": 8,
                "env.train.max_episode_steps": 80,
                "cluster.component_placement": {"actor": "0-7", "env": "0-7", "rollout": "0-7"},
                "rollout.pipeline_stage_num": 1,
            },
            "/path/to/model/Openvla-oft-SFT-libero10-trajall/",
        ),
        Example(
            "maniskill_ppo_openvlaoft",
            "OpenVLA-OFT on ManiSkill (put on plate), PPO with a value head, LoRA",
            "maniskill_put_on_plate_in_scene_25_main",
            "openvla_oft",
            _COMMON
            | {
                "actor.model.model_path": "/path/to/model/RLinf-OpenVLAOFT-ManiSkill-Base-Main/",
                "lora": 32,
                "actor.optim.lr": 1e-4,
                "actor.optim.value_lr": 3e-3,
                "actor.optim.clip_grad": 10.0,
                "actor.micro_batch_size": 40,
                "actor.global_batch_size": 640,
                "rollout.sampling_params.temperature_train": 1.0,
                "rollout.sampling_params.temperature_eval": 0.6,
                "rollout.sampling_params.top_k": 0,
                "algorithm.adv_type": "gae",
                "algorithm.gamma": 0.99,
                "algorithm.gae_lambda": 0.95,
                "algorithm.clip_ratio_high": 0.28,
                "env.train.total_num_envs": 128,
                "env.train.rollout_epoch": 1,
                "env.train.group_size": 1,
                "env.train.max_episode_steps": 80,
                "cluster.component_placement": {"actor": "0-7", "env": "0-3", "rollout": "4-7"},
                "rollout.pipeline_stage_num": 1,
            },
            "/path/to/model/Openvla-oft-SFT-libero10-trajall/",
        ),
        Example(
            "maniskill_grpo_openvla",
            "OpenVLA on ManiSkill (put on plate), GRPO, full fine-tuning",
            "maniskill_put_on_plate_in_scene_25_main",
            "openvla",
            _COMMON
            | {
                "actor.model.model_path": "/path/to/model/rl4vla/openvla-7b-rlvla-warmup/",
                "lora": None,
                "actor.optim.lr": 1e-5,
                "actor.optim.clip_grad": 1.0,
                "actor.micro_batch_size": 40,
                "actor.global_batch_size": 640,
                "rollout.sampling_params.temperature_train": 1.0,
                "rollout.sampling_params.temperature_eval": 0.6,
                "rollout.sampling_params.top_k": 50,
                "algorithm.adv_type": "grpo",
                "algorithm.clip_ratio_high": 0.28,
                "env.train.total_num_envs": 256,
                "env.train.rollout_epoch": 1,
                "env.train.group_size": 8,
                "env.train.max_episode_steps": 80,
                "cluster.component_placement": {"actor": "0-7", "env": "0-3", "rollout": "4-7"},
                "rollout.pipeline_stage_num": 2,
            },
        ),
        Example(
            "maniskill_ppo_openvla",
            "OpenVLA on ManiSkill (put on plate), PPO with a value head, LoRA",
            "maniskill_put_on_plate_in_scene_25_main",
            "openvla",
            _COMMON
            | {
                "actor.model.model_path": "/path/to/model/rl4vla/openvla-7b-rlvla-warmup/",
                "lora": 32,
                "actor.optim.lr": 1e-4,
                "actor.optim.value_lr": 3e-3,
                "actor.optim.clip_grad": 10.0,
                "actor.micro_batch_size": 80,
                "actor.global_batch_size": 640,
                "rollout.sampling_params.temperature_train": 1.0,
                "rollout.sampling_params.temperature_eval": 0.6,
                "rollout.sampling_params.top_k": 0,
                "algorithm.adv_type": "gae",
                "algorithm.gamma": 0.99,
                "algorithm.gae_lambda": 0.95,
                "algorithm.clip_ratio_high": 0.2,
                "env.train.total_num_envs": 128,
                "env.train.rollout_epoch": 1,
                "env.train.group_size": 1,
                "env.train.max_episode_steps": 80,
                "cluster.component_placement": {"actor": "0-7", "env": "0-3", "rollout": "4-7"},
                "rollout.pipeline_stage_num": 2,
            },
        ),
    )
}


#: RLinf's π0.5 LIBERO-Spatial examples (πRL): ``precision`` null leaves the dtypes to
#: openpi (``to_bfloat16_for_selected_params``: the PaliGemma and the expert in bfloat16).
_OPENPI_PI05 = {
    "actor.model.model_path": "/path/to/model/RLinf-Pi05-LIBERO-SFT",
    "actor.model.precision": None,
    "lora": None,
    "actor.model.num_steps": 3,
    "actor.model.num_action_chunks": 5,
    "actor.model.openpi.noise_method": "flow_sde",
    "actor.model.openpi.noise_level": 0.5,
    "actor.model.openpi.train_expert_only": True,
    "actor.fsdp_config.gradient_checkpointing": False,
    "actor.fsdp_config.cpu_offload": False,
    "actor.fsdp_config.sharding_strategy": "no_shard",
    "actor.fsdp_config.mixed_precision.param_dtype": None,
    "actor.enable_offload": False,
    "rollout.enable_offload": False,
    "actor.optim.lr": 5e-6,
    "actor.optim.adam_beta2": 0.95,
    "actor.optim.weight_decay": 0.01,
    "actor.optim.clip_grad": 1.0,
    "actor.micro_batch_size": 128,
    "actor.global_batch_size": 2048,
    "algorithm.reward_type": "chunk_level",
    "algorithm.logprob_type": "chunk_level",
    "algorithm.clip_ratio_high": 0.2,
    "algorithm.clip_ratio_low": 0.2,
    "env.train.total_num_envs": 64,
    "env.train.rollout_epoch": 8,
    "env.train.max_episode_steps": 240,
    "processes": LIBERO_PROCESSES,
    "cluster.component_placement": {"actor,env,rollout": "all"},
    "rollout.pipeline_stage_num": 1,
}

EXAMPLES |= {
    e.name: e
    for e in (
        Example(
            "libero_spatial_grpo_openpi_pi05",
            "π0.5 on LIBERO-Spatial, GRPO (πRL's Flow-SDE), the action expert fine-tuned",
            "libero_spatial",
            "pi0_5",
            _OPENPI_PI05
            | {
                "algorithm.adv_type": "grpo",
                "algorithm.filter_rewards": True,
                "algorithm.rewards_lower_bound": 0.1,
                "algorithm.rewards_upper_bound": 0.9,
                "algorithm.reward_coef": 1.0,
                "env.train.group_size": 8,
            },
        ),
        Example(
            "libero_spatial_ppo_openpi_pi05",
            "π0.5 on LIBERO-Spatial, PPO with a value head on the VLM prefix (πRL's Flow-SDE)",
            "libero_spatial",
            "pi0_5",
            _OPENPI_PI05
            | {
                "actor.optim.value_lr": 1e-4,
                "algorithm.adv_type": "gae",
                "algorithm.gamma": 0.99,
                "algorithm.gae_lambda": 0.95,
                "env.train.group_size": 1,
            },
        ),
    )
}


def nearest(spec: Spec, index: int) -> tuple[Example, str]:
    """RLinf's example nearest the spec's target ``index``, and why it is the nearest: the
    model family first (OpenVLA-OFT or OpenVLA), then the algorithm (PPO's ``gae`` or a
    grouped one), then the simulator (LIBERO or ManiSkill, for OpenVLA-OFT with GRPO)."""
    family, preset = spec.model.family, spec.env.preset
    ppo = spec.targets[index].algorithm == "gae"  # the actor-only ones are nearer GRPO's
    if FAMILIES[family].flow is not None:
        name = f"libero_spatial_{'ppo' if ppo else 'grpo'}_openpi_pi05"
        same = "simulator and algorithm" if preset == "libero" else "algorithm"
        return EXAMPLES[name], (
            f"RLinf's π0.5 example with {'PPO' if ppo else 'GRPO'} on LIBERO, a flow policy "
            f"as this spec's, and this spec's {same}"
        )
    if family == "openvla":
        name = "maniskill_ppo_openvla" if ppo else "maniskill_grpo_openvla"
        return EXAMPLES[name], (
            f"RLinf's OpenVLA example with {'PPO' if ppo else 'GRPO'}, as this spec's "
            "model family and algorithm (RLinf 0.3 trains OpenVLA on ManiSkill only)"
        )
    if ppo:
        what = "model family" if family == "openvla_oft" else "algorithm"
        why = f"RLinf's OpenVLA-OFT example with PPO, as this spec's {what}"
        return EXAMPLES["maniskill_ppo_openvlaoft"], why + _no_example(family)
    if family == "openvla_oft" and preset == "maniskill":
        why = "RLinf's OpenVLA-OFT example with GRPO on ManiSkill: this spec's model and simulator"
        return EXAMPLES["maniskill_grpo_openvlaoft"], why
    same = "model family, simulator and algorithm" if preset == "libero" else "model and algorithm"
    if family != "openvla_oft":
        same = "algorithm"
    why = f"RLinf's OpenVLA-OFT example with GRPO on LIBERO, as this spec's {same}"
    return EXAMPLES["libero_spatial_grpo_openvlaoft"], why + _no_example(family)


def _no_example(family: str) -> str:
    if family in ("openvla", "openvla_oft"):
        return ""
    return (
        f"; RLinf 0.3 ships no example for a {family} policy, and its OpenVLA-OFT examples' "
        "sampling and optimizer settings apply to any policy of binned action tokens"
    )


def sampling_temperature(spec: Spec, index: int) -> float:
    """The rollout's sampling temperature: ``training.temperature``, else the nearest
    example's ``temperature_train`` (1 for a flow policy, which samples by its noisy step:
    RLinf's OpenPI examples set none, and the package's flow policy reads only ``do_sample``)."""
    example = nearest(spec, index)[0].values.get("rollout.sampling_params.temperature_train")
    return decided(spec.training.temperature, 1.0 if example is None else float(example))


def gradient_checkpointing(spec: Spec, index: int) -> bool:
    """``actor.fsdp_config.gradient_checkpointing``: ``training.gradient_checkpointing``,
    else the nearest example's."""
    example = nearest(spec, index)[0].values["actor.fsdp_config.gradient_checkpointing"]
    # a custom module checkpoints only where it says how (gradient_checkpointing_enable)
    default = bool(example) and FAMILIES[spec.model.family].token_based
    return decided(spec.training.gradient_checkpointing, default)


def reference(spec: Spec, index: int, version: RlinfVersion) -> Reference:
    """The declaration of the example nearest the spec, at the tag of RLinf ``version``,
    with why each of this package's values differs where it does."""
    example, why_nearest = nearest(spec, index)
    v = dict(example.values)
    # imported here: modelplan loads the spec's pydantic models, which `vlagen targets diff`
    # (it imports every declaration) must not
    from ...modelplan import flow_plan

    flow = flow_plan(spec)
    if version.tag == "v0.2" and example.v0_2_path is not None:
        v["actor.model.model_path"] = example.v0_2_path
    lora = spec.model.lora
    ours_lora = lora.rank if lora is not None else None
    theirs = "full" if v["lora"] is None else f"LoRA rank {v['lora']}"
    workers = gpu_count(spec)
    per_worker = spec.training.in_flight // workers
    sampling = f"{version.sampling_params_under}.sampling_params"
    rounds = ("env.train" if version.rollout_epoch_under_env else "algorithm") + ".rollout_epoch"
    keys = [
        Key(
            "actor.model.model_path",
            v["actor.model.model_path"],
            "`model.checkpoint`",
            "a placeholder path in the reference; this spec's checkpoint here",
        ),
        Key(
            "actor.model.precision",
            v["actor.model.precision"],
            "`model.dtype`",
            "the spec's dtype"
            if flow is None
            else "RLinf leaves an OpenPI model's dtypes to openpi at null; the package's "
            "policy lays a flow checkpoint out as openpi does at bfloat16 (the PaliGemma and "
            "the expert in bfloat16, its norms, SigLIP's embeddings and the action and time "
            "heads in float32) when this key is bf16, and RLinf's null would build it in "
            "float32",
            shown="null (openpi's own dtypes)" if v["actor.model.precision"] is None else None,
        ),
        Key(
            "fine-tuning",
            theirs,
            "`model.lora` (this package's adapter, on the backbone's linear layers; "
            "`actor.model.is_lora` stays false)",
            _lora_why(v["lora"], ours_lora),
            here="full" if ours_lora is None else f"LoRA rank {ours_lora}",
            shown=f"{theirs} (is_lora {str(v['lora'] is not None).lower()})",
            words=True,
        ),
        Key(
            "actor.optim.lr",
            v["actor.optim.lr"],
            "`training.learning_rate`",
            _lr_why(v["lora"], ours_lora),
        ),
        *(
            [
                Key(
                    "actor.optim.value_lr",
                    v["actor.optim.value_lr"],
                    "fixed, with a value head",
                    "vlagen's value-head rate; set `actor.optim.value_lr` in the spec's "
                    "`targets[].config` for the reference's",
                )
            ]
            if "actor.optim.value_lr" in v
            else []
        ),
        Key(
            "actor.optim.weight_decay",
            v["actor.optim.weight_decay"],
            "fixed",
            "vlagen decays no weights on any target (as siiRL's SRPO scripts, 0.0); set "
            "`actor.optim.weight_decay` in the spec's `targets[].config` for the reference's",
        ),
        Key(
            "actor.optim.clip_grad",
            v["actor.optim.clip_grad"],
            "fixed",
            "vlagen clips the gradient norm at 1.0 on every target (RLinf's LIBERO GRPO "
            "examples' value)",
        ),
        Key(
            "actor.fsdp_config.gradient_checkpointing",
            v["actor.fsdp_config.gradient_checkpointing"],
            "`training.gradient_checkpointing` (default: the reference's)",
            "the spec's `training.gradient_checkpointing`"
            if spec.training.gradient_checkpointing is not None
            else "off by default for your module (`model.family: custom`): it checkpoints "
            "where it has `gradient_checkpointing_enable`; then set "
            "`training.gradient_checkpointing: true`",
        ),
        Key(
            "actor.micro_batch_size",
            v["actor.micro_batch_size"],
            "`training.micro_batch_size_per_gpu`",
            "the spec's micro-batch: FSDP gathers the full weights once per micro-batch, "
            "so a small one costs more gathers per update, and a large one more activation "
            "memory (`vlagen targets fit` sizes it; gradient checkpointing keeps it small)",
        ),
        Key(
            "actor.enable_offload",
            v["actor.enable_offload"],
            "fixed",
            _OFFLOAD_WHY.format(
                key="actor.enable_offload",
                what="the actor's weights, gradients and optimizer state",
            ),
        ),
        Key(
            "rollout.enable_offload",
            v["rollout.enable_offload"],
            "fixed",
            _OFFLOAD_WHY.format(key="rollout.enable_offload", what="the rollout's weights"),
        ),
        Key("actor.fsdp_config.cpu_offload", v["actor.fsdp_config.cpu_offload"], "fixed"),
        *(_sampling_keys(v, sampling) if flow is None else _flow_keys(v, flow)),
        Key(
            "algorithm.adv_type",
            v["algorithm.adv_type"],
            "`targets[].algorithm`",
            "the spec's algorithm",
        ),
        *(
            [
                Key("algorithm.gamma", v["algorithm.gamma"], "fixed, with gae"),
                Key("algorithm.gae_lambda", v["algorithm.gae_lambda"], "fixed, with gae"),
            ]
            if "algorithm.gamma" in v
            else []
        ),
        Key(
            "algorithm.clip_ratio_high",
            v["algorithm.clip_ratio_high"],
            "fixed, per algorithm and family",
        ),
        Key("algorithm.clip_ratio_low", v["algorithm.clip_ratio_low"], "fixed"),
        *(_filter_keys(v, spec) if "algorithm.filter_rewards" in v else []),
        *_batch_keys(v, rounds),
        *(
            [
                Key(
                    "simulator processes",
                    v["processes"],
                    "`env.workers` (the preset's default, at most a group)",
                    "each of this package's `env.workers` processes steps a slice of an env "
                    "worker's envs in turn; LIBERO simulates on the CPU, so with a core per "
                    f"env set `env.workers: {per_worker}` (one per env, as RLinf)",
                    here=LIBERO_PROCESSES
                    if spec.env.workers == per_worker
                    else f"{spec.env.workers} process{'es' if spec.env.workers > 1 else ''} "
                    f"for the {per_worker} envs of each "
                    "env worker",
                    words=True,
                )
            ]
            if "processes" in v and spec.env.preset == "libero"
            else []
        ),
        Key(
            "log-prob micro-batch",
            "none",
            "RLinf's embodied actor trains on the log-probs the rollout returned "
            "(`prev_logprobs`, `EmbodiedFSDPActor.run_training`): no recomputing pass",
            here="none",
            words=True,
        ),
        Key(
            "cluster.component_placement",
            _placement(v["cluster.component_placement"]),
            "`resources` (`nodes`, `gpus_per_node`)",
            _placement_why(v["cluster.component_placement"]),
        ),
        Key(
            "rollout.pipeline_stage_num",
            v["rollout.pipeline_stage_num"],
            "fixed",
            "one stage here; with 2, RLinf's env workers step half their envs while the "
            "rollout acts for the other half (`resources.pipeline_stages` places verl's "
            "stages only): set `rollout.pipeline_stage_num` in the spec's `targets[].config`",
        ),
    ]
    return Reference(
        repository=REPOSITORY,
        tag=version.tag,
        path=f"{CONFIGS}/{example.name}.yaml",
        trains=example.trains,
        nearest=why_nearest,
        keys=tuple(keys),
        composes=(
            f"{CONFIGS}/env/{example.env}.yaml",
            f"{CONFIGS}/model/{example.model}.yaml",
            f"{CONFIGS}/training_backend/fsdp.yaml",
        ),
    )


def _sampling_keys(v: dict[str, Any], sampling: str) -> list[Key]:
    """The token sampling keys of an OpenVLA(-OFT) example."""
    return [
        Key(
            f"{sampling}.temperature_train",
            v["rollout.sampling_params.temperature_train"],
            "`training.temperature` (default: this reference's)",
            "the spec's `training.temperature`",
        ),
        Key(
            f"{sampling}.temperature_eval",
            v["rollout.sampling_params.temperature_eval"],
            "fixed",
            "greedy evaluation here (0: the most likely action token)",
        ),
        Key(
            f"{sampling}.top_k",
            v["rollout.sampling_params.top_k"],
            "fixed",
            _top_k_why(v["rollout.sampling_params.top_k"]),
        ),
    ]


def _flow_keys(v: dict[str, Any], flow: FlowPlan) -> list[Key]:
    """An OpenPI example's flow keys beside the spec's ``model.flow`` (the package's policy
    reads its own, resolved; RLinf's ``actor.model.openpi`` is read by RLinf's model only)."""
    spec_flow = "(the package's policy reads it from its spec, not RLinf's key)"
    return [
        Key(
            "actor.model.num_steps",
            v["actor.model.num_steps"],
            f"`model.flow.steps` {spec_flow}",
            "the spec's `model.flow.steps`",
            here=flow.steps,
        ),
        Key(
            "actor.model.num_action_chunks",
            v["actor.model.num_action_chunks"],
            "`model.action.chunk`",
            "the spec's chunk: the actions of a decision the env runs",
        ),
        Key(
            "actor.model.openpi.noise_method",
            v["actor.model.openpi.noise_method"],
            f"`model.flow.noise_method` {spec_flow}",
            "the spec's `model.flow.noise_method`",
            here=flow.noise_method,
        ),
        Key(
            "actor.model.openpi.noise_level",
            v["actor.model.openpi.noise_level"],
            f"`model.flow.noise_level` {spec_flow}",
            "the spec's `model.flow.noise_level`",
            here=flow.noise_level,
        ),
        Key(
            "actor.model.openpi.train_expert_only",
            v["actor.model.openpi.train_expert_only"],
            f"`model.flow.train_expert_only` {spec_flow}",
            "the spec's `model.flow.train_expert_only`",
            here=flow.train_expert_only,
        ),
        Key("algorithm.reward_type", v["algorithm.reward_type"], "fixed, for a flow family"),
        Key("algorithm.logprob_type", v["algorithm.logprob_type"], "fixed, for a flow family"),
        Key(
            "actor.fsdp_config.sharding_strategy",
            v["actor.fsdp_config.sharding_strategy"],
            "fixed, for a flow family",
        ),
        Key(
            "actor.fsdp_config.mixed_precision.param_dtype",
            v["actor.fsdp_config.mixed_precision.param_dtype"],
            "fixed, for a flow family (null whatever `actor.model.precision`)",
            shown="null (follows `actor.model.precision`)",
        ),
        Key("actor.optim.adam_beta2", v["actor.optim.adam_beta2"], "fixed, for a flow family"),
    ]


_OFFLOAD_WHY = (
    "off here: with it RLinf moves {what} to the CPU between its rollout and training "
    "phases, so the workers that share a GPU have its memory in turn, at the cost of a copy "
    "each way per step; vlagen does not turn it on yet: set `{key}: true` in the spec's "
    "`targets[].config` where a GPU's workers do not fit together"
)


def _lora_why(reference_rank: int | None, ours: int | None) -> str:
    if ours is not None and reference_rank is None:
        return (
            "`model.lora`: a LoRA adapter here, trained at the spec's rate; the reference "
            "fine-tunes every weight"
        )
    if ours is None:
        return "`model.lora` is not set: every weight trains here"
    return f"`model.lora.rank` {ours} here"


def _lr_why(reference_rank: int | None, ours: int | None) -> str:
    if ours is not None and reference_rank is None:
        return (
            "LoRA here, full fine-tuning in the reference: RLinf's LoRA examples "
            f"({LORA_EXAMPLES}) train an adapter at a higher rate than a full fine-tune"
        )
    if ours is None and reference_rank is not None:
        return (
            "full fine-tuning here, LoRA in the reference: RLinf's full fine-tuning examples "
            "train at 1e-5 to 2e-5"
        )
    return "the spec's `training.learning_rate`"


def _top_k_why(reference: int) -> str:
    if reference > 0:
        return (
            f"this package's policy samples from every action token and refuses a top-k "
            f"filter (RLinf's would keep the {reference} likeliest)"
        )
    return "no top-k filter either way: RLinf's OpenVLA models filter only for top_k > 0"


def _filter_keys(v: dict[str, Any], spec: Spec) -> list[Key]:
    success = [t.weight for t in spec.env.rewards if t.source == "success"]
    weight = success[0] if success else None
    low, high = v["algorithm.rewards_lower_bound"], v["algorithm.rewards_upper_bound"]
    coef = v["algorithm.reward_coef"]
    rate = f"{low / coef:g} to {high / coef:g}"
    return [
        Key(
            "algorithm.filter_rewards",
            v["algorithm.filter_rewards"],
            "fixed",
            f"off here: the reference trains only on groups whose mean return lies in "
            f"[{low:g}, {high:g}], a success rate of {rate} at `reward_coef` {coef:g}; a group "
            "that all succeeds or all fails has no GRPO advantage either way, and dropping it "
            "makes the informative groups' share of the loss larger. The bounds are in the "
            "return's units, which here are the spec's reward terms: set "
            "`algorithm.filter_rewards: true` and `algorithm.rewards_lower_bound` / "
            "`rewards_upper_bound` for them in the spec's `targets[].config`",
        ),
        Key("algorithm.rewards_lower_bound", low, "fixed", _UNFILTERED),
        Key("algorithm.rewards_upper_bound", high, "fixed", _UNFILTERED),
        Key(
            "algorithm.reward_coef",
            coef,
            "the weight of the `success` reward term (`env.rewards`)",
            "RLinf's LIBERO env pays `reward_coef` for a success; this package's env pays "
            "the spec's reward terms",
            here=weight,
        ),
    ]


_UNFILTERED = "read only with `filter_rewards: true`, off here"


def _batch_keys(v: dict[str, Any], rounds: str) -> list[Key]:
    why = "derived from the spec's `training` block (the batch table below says from what)"
    source = "`training`"
    return [
        Key("env.train.total_num_envs", v["env.train.total_num_envs"], source, why),
        Key(rounds, v["env.train.rollout_epoch"], source, why),
        Key("env.train.group_size", v["env.train.group_size"], source, why),
        Key("actor.global_batch_size", v["actor.global_batch_size"], source, why),
        Key(
            "env.train.max_episode_steps",
            v["env.train.max_episode_steps"],
            "`env.max_episode_steps`, in action columns",
            "the spec's episode length",
        ),
    ]


def _placement(placement: dict[str, str]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in placement.items())


def _placement_why(placement: dict[str, str]) -> str:
    shared = "an actor, a rollout and an env worker on each of the spec's GPUs"
    if placement == {"actor,env,rollout": "all"}:
        return (
            f"{shared}, as the reference places them; `all` is every GPU Ray sees, while the "
            "env split vlagen checks is over the spec's: for other nodes or GPUs change "
            "`resources` and regenerate"
        )
    return (
        f"{shared}; the reference gives env and rollout workers GPUs of their own "
        "(`rollout.pipeline_stage_num` overlaps them): for other nodes or GPUs change "
        "`resources` and regenerate"
    )


def comparison(
    spec: Spec, index: int, version: RlinfVersion, config: dict[str, Any], own: tuple[str, ...]
) -> Comparison:
    """The package's ``config.yaml`` beside the nearest example (``own``: the keys the
    spec's ``targets[i].config`` set)."""
    placement = _placement(config["cluster"]["component_placement"])
    values = flat(config) | {"cluster.component_placement": placement}
    return compare(reference(spec, index, version), values, own=own)
