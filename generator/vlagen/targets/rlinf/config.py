"""RLinf's Hydra config for a spec, as data, in the layout of RLinf's own example configs
(:mod:`.layout` checks it), and what differs in it between the version lines
(:class:`RlinfVersion`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...backbones import BACKBONES
from ...families import FAMILIES
from ..common.placement import decision_steps, gpu_count, group_size
from .reference import gradient_checkpointing, sampling_temperature

if TYPE_CHECKING:
    from ...spec import Spec

#: algorithm.adv_type → algorithm.loss_type, as RLinf's examples pair them.
LOSS_TYPES = {"gae": "actor_critic", "grpo": "actor", "grpo_dynamic": "actor", "reinpp": "actor"}
GROUPED = ("grpo", "grpo_dynamic")  #: advantages over a group of rollouts of one task
#: Prompt tokens besides a Qwen-VL prompt's image placeholders: the chat turn, the filled
#: template and any state tokens (see :func:`prompt_length`).
PROMPT_TEXT = 256


@dataclass(frozen=True)
class RlinfVersion:
    """Where an RLinf version line puts what the adapter touches."""

    tag: str  #: the release's tag in RLinf's repository (its example configs are read there)
    schema: str  #: the config layout snapshot
    model_registry: str  #: ``register_model`` (0.3) or ``enum`` (0.2's closed SupportedModel)
    io_struct: str  #: the module of ``EnvOutput``
    sampling_params_under: str  #: ``rollout`` (0.3) or ``algorithm`` (0.2)
    rollout_epoch_under_env: bool  #: ``env.*.rollout_epoch`` (0.3) or ``algorithm.*`` (0.2)
    weight_syncer: bool  #: 0.3's ``weight_syncer`` group
    prepare_actions_passes_unknown: bool  #: 0.2's ``prepare_actions`` raises for other types
    fidelity_harness: bool  #: the generated tests drive this version's workers on CPU
    ext_loader_in_worker: bool  #: 0.2 loads RLINF_EXT_MODULE in a Worker method, 0.3 in a function


def _omegaconf_literal(text: str) -> str:
    """A spec string as an OmegaConf value that does not interpolate."""
    return text.replace("${", "\\${")


def placement(spec: Spec) -> str:
    """``cluster.component_placement`` of the env, rollout and actor workers: accelerator
    ranks 0 to the GPU count - 1 in RLinf's range syntax (``parse_rank_config``), one process
    each. Not ``all``: that is every GPU Ray sees, and the env split :mod:`.checks` checks
    (total_num_envs over an env worker per GPU) would not be the one RLinf makes."""
    return f"0-{gpu_count(spec) - 1}"


def _env_config(spec: Spec, index: int, plan_env_type: str, *, train: bool) -> dict:
    env = spec.env
    group = group_size(spec, index, GROUPED) if train else 1
    steps = env.max_episode_steps
    # RLinf counts an episode and a rollout epoch in action columns: decisions x
    # num_action_chunks. Its loss divides each trajectory's terms by loss_mask_sum /
    # max_episode_steps (compute_ppo_actor_loss), and loss_mask_sum counts action columns
    # (compute_loss_mask), so max_episode_steps must be in columns too, as in RLinf's own
    # examples (max_episode_steps == max_steps_per_rollout_epoch): in backend steps a
    # backend that takes a whole chunk per step (waypoints) would scale the loss by 1/chunk.
    # The env converts it back to backend steps.
    columns = steps // decision_steps(spec) * spec.model.action.chunk
    cfg: dict[str, Any] = {
        "env_type": plan_env_type,
        "total_num_envs": spec.training.in_flight,
        "group_size": group,
        "seed": spec.training.seed + (0 if train else 1000),
        # Grouped advantages compare whole episodes: envs run one episode per rollout epoch
        # and wait when done; PPO keeps them busy (auto-reset, bootstrapped at truncation).
        "auto_reset": not train or group == 1,
        "ignore_terminations": False,
        "use_fixed_reset_state_ids": group > 1,
        "max_episode_steps": columns,
        "max_steps_per_rollout_epoch": columns,
        "video_cfg": {
            "save_video": False,
            "info_on_video": False,
            "video_base_dir": "${runner.logger.log_path}/video/" + ("train" if train else "eval"),
        },
        "enable_offload": False,
        "backend": None,  # null: the spec's backend; "synthetic" for smoke runs
    }
    return cfg


def prompt_length(spec: Spec) -> int:
    """``actor.model.max_prompt_length``, the length every prompt is left-padded to so that
    RLinf can stack steps: :data:`PROMPT_TEXT` tokens, plus on a processor backbone
    (Qwen-VL) the image placeholders its prompt carries, one per merged patch of each camera
    the model sees (so a larger image never outgrows the padding at run time)."""
    backbone, model = BACKBONES[spec.model.backbone], spec.model
    if not (FAMILIES[model.family].token_based and backbone.processor):
        return PROMPT_TEXT
    height, width = model.image_size
    side = backbone.image_multiple
    cameras = len(model.cameras)  # resolved: the cameras the model sees
    return PROMPT_TEXT + cameras * (height // side) * (width // side)


def _reward_type(spec: Spec, algorithm: str) -> str:
    """``action_level`` (a reward, advantage and loss-mask entry per action column), as RLinf's
    OpenVLA and OpenVLA-OFT examples; ``chunk_level`` for gae with chunks, since the value
    head predicts one value per decision, not one per column, and for a flow family, as
    every RLinf OpenPI example."""
    flow = FAMILIES[spec.model.family].flow is not None
    if flow or (algorithm == "gae" and spec.model.action.chunk > 1):
        return "chunk_level"
    return "action_level"


def _logprob_type(spec: Spec) -> str:
    """``token_level`` (the loss's ratio per action token) for a token family; for a flow
    family ``chunk_level``, as every RLinf OpenPI example: the stochastic step's log-density
    summed over the chunk's env actions, one ratio per decision."""
    return "chunk_level" if FAMILIES[spec.model.family].flow is not None else "token_level"


def type_names(spec: Spec) -> tuple[str, str]:
    """(env type, model type): the names the package registers its env and policy under in
    RLinf, its import name and ``<name>_policy``."""
    package = spec.project.import_name
    return package, f"{package}_policy"


def rlinf_config(spec: Spec, index: int, version: RlinfVersion) -> dict[str, Any]:
    """The Hydra YAML of target ``index`` (RLinf at ``version``), as data, before the spec's
    own ``targets[i].config`` keys."""
    algorithm = spec.targets[index].algorithm
    model, env, training = spec.model, spec.env, spec.training
    package = spec.project.import_name
    env_type, model_type = type_names(spec)
    group = group_size(spec, index, GROUPED)
    decisions = env.max_episode_steps // decision_steps(spec)
    total = training.in_flight
    rollout_epoch = training.episodes // total
    precision = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}[model.dtype]
    # Where vlagen's own choice is free, a flow family takes what every RLinf OpenPI PPO
    # and GRPO example sets (examples/embodiment/config/*_openpi*.yaml at v0.3): a clip
    # of 0.2 either side, AdamW's beta2 0.95, and unsharded FSDP.
    flow = FAMILIES[model.family].flow is not None
    max_prompt_length = prompt_length(spec)
    sampling = {
        "do_sample": True,
        # training.temperature, else the nearest RLinf example's (see .reference)
        "temperature_train": sampling_temperature(spec, index),
        "temperature_eval": 0.0,  # greedy
        "top_k": 0,
        "top_p": 1.0,
    }
    train_env = _env_config(spec, index, env_type, train=True)
    eval_env = _env_config(spec, index, env_type, train=False)
    algorithm_cfg: dict[str, Any] = {
        "group_size": group,
        "reward_type": _reward_type(spec, algorithm),
        "logprob_type": _logprob_type(spec),
        "entropy_type": "token_level",
        "adv_type": algorithm,
        "loss_type": LOSS_TYPES[algorithm],
        "entropy_bonus": 0,
        "clip_ratio_high": 0.28 if algorithm in GROUPED and not flow else 0.2,
        "clip_ratio_low": 0.2,
        "gamma": 0.99 if algorithm == "gae" else 1.0,
        "gae_lambda": 0.95 if algorithm == "gae" else 1.0,
        "filter_rewards": False,
    }
    if version.rollout_epoch_under_env:
        train_env["rollout_epoch"] = rollout_epoch
        eval_env["rollout_epoch"] = 1
    else:
        algorithm_cfg["rollout_epoch"] = rollout_epoch
        algorithm_cfg["eval_rollout_epoch"] = 1
    if version.sampling_params_under == "algorithm":
        algorithm_cfg["sampling_params"] = sampling
        algorithm_cfg["length_params"] = {
            "max_new_token": None,
            "max_length": 1024,
            "min_length": 1,
        }
    # One sampling temperature: the rollout samples at rollout's (RLinf passes it to
    # predict_action_batch) and the policy re-scores at the same value, interpolated, so
    # the PPO ratio compares like with like (RLinf passes it to the actor's forward only
    # for its own OpenVLA models).
    temperature = "${" + version.sampling_params_under + ".sampling_params.temperature_train}"
    checkpoint = _omegaconf_literal(model.checkpoint)
    rollout: dict[str, Any] = {
        "group_name": "RolloutGroup",
        "enable_offload": False,
        "pipeline_stage_num": 1,
        "model": {"model_path": checkpoint, "precision": precision},
    }
    if version.sampling_params_under == "rollout":
        rollout["sampling_params"] = sampling
    attn = model.attn_implementation or "sdpa"
    actor_model: dict[str, Any] = {
        "model_type": model_type,
        "model_path": checkpoint,
        # The actor's weights (and so AdamW's) in the spec's dtype, as every RLinf
        # embodied example sets actor.model.precision (RLinf warns that fp32 would give
        # fp32 optimizer weights). fp32 here with mixed_precision.param_dtype bf16 is what
        # the warning suggests, but no RLinf embodied example runs it: the patch weight
        # syncer (snapshots, delta_encoding) would then carry fp32 actor weights into a
        # bf16 rollout, a path neither RLinf's examples nor this package's tests exercise,
        # and the 7B actor's resident weights would double.
        # So this follows the examples; a user can set fp32 here with enough memory.
        "precision": precision,
        "action_dim": model.action.dim,
        "num_action_chunks": model.action.chunk,
        "add_value_head": model.value_head,
        # RLinf's is_lora does two things: get_model wraps the built policy in a second
        # PEFT LoRA of its own (fixed targets including lm_head, alpha = rank), and the
        # FSDP wrap policy puts each trainable leaf in its own unit so that flat parameters
        # have one requires_grad. The package's backbone already applies the spec's LoRA
        # where the action logits flow (the language model's linear layers; the action
        # rows of lm_head are read directly), so is_lora stays false and FSDP's
        # use_orig_params (below) lets frozen and LoRA weights share a flat parameter.
        # Weight sync follows requires_grad either way (collect_param_names_need_sync).
        "is_lora": False,
        "max_prompt_length": max_prompt_length,
        "temperature_train": temperature,  # ours: read by build_policy
    }
    if FAMILIES[model.family].token_based:
        actor_model["attn_implementation"] = attn
        actor_model["trust_remote_code"] = model.trust_remote_code
    # No wrap_policy: RLinf's get_fsdp_wrap_policy then wraps each class the policy's
    # _no_split_modules names (RLinfPolicy's: what the loaded transformers models declare,
    # e.g. LlamaDecoderLayer) as a unit of its own, for whichever checkpoint is loaded;
    # and the value head, by the _no_split_names it declares, so that its flat parameter's
    # name holds "value_head" and RLinf's build_optimizer gives it optim.value_lr.
    fsdp: dict[str, Any] = {
        "strategy": "fsdp",
        "sharding_strategy": "no_shard" if flow else "full_shard",
        "gradient_checkpointing": gradient_checkpointing(spec, index),
        "cpu_offload": False,
        "enable_gradient_accumulation": True,
        "forward_prefetch": False,
        "limit_all_gathers": False,
        "backward_prefetch": None,
        "use_orig_params": model.lora is not None,  # see is_lora
        # A flow family's parameters are bfloat16 but the norms and SigLIP's embeddings,
        # which openpi keeps in float32: FSDP casts none of them (RLinf's OpenPI examples'
        # mixed precision is their precision, null), so the actor computes as the rollout.
        "mixed_precision": dict.fromkeys(
            ("param_dtype", "reduce_dtype", "buffer_dtype"),
            None if flow else precision,
        ),
        "amp_autocast": {"enabled": False, "precision": "bf16"},
        "grad_scaler": {"enabled": False},
    }
    if version.schema == "rlinf_0_2":
        fsdp["fsdp_size"] = -1
    if LOSS_TYPES[algorithm] == "actor_critic":
        algorithm_cfg["value_clip"], algorithm_cfg["huber_delta"] = 0.2, 10.0
    config: dict[str, Any] = {
        "defaults": [{"override hydra/job_logging": "stdout"}],
        "hydra": {"run": {"dir": "."}, "output_subdir": None},
        "cluster": {
            "num_nodes": spec.resources.nodes,
            "component_placement": {"actor,env,rollout": placement(spec)},
        },
        "runner": {
            "task_type": "embodied",
            "logger": {
                "log_path": "rlinf_logs",
                "project_name": "vlagen",
                "experiment_name": f"{package}_{algorithm}",
                "logger_backends": ["tensorboard"],
            },
            "max_epochs": 1000,
            "max_steps": -1,
            "only_eval": False,
            "val_check_interval": -1,
            "save_interval": 25,
            "resume_dir": None,
            "ckpt_path": None,
        },
        "algorithm": algorithm_cfg,
        "env": {"group_name": "EnvGroup", "train": train_env, "eval": eval_env},
        "rollout": rollout,
        "actor": {
            "group_name": "ActorGroup",
            "training_backend": "fsdp",
            "micro_batch_size": training.micro_batch_size_per_gpu,
            "global_batch_size": training.episodes * decisions // training.mini_batches,
            "seed": training.seed,
            "enable_offload": False,
            "model": actor_model,
            "optim": {
                "lr": training.learning_rate,
                "adam_beta1": 0.9,
                "adam_beta2": 0.95 if flow else 0.999,
                "adam_eps": 1.0e-8,
                "weight_decay": 0.0,
                "clip_grad": 1.0,
                "critic_warmup_steps": 0,
            },
            "fsdp_config": fsdp,
        },
        "reward": {"use_reward_model": False},
        "critic": {"use_critic_model": False},
    }
    if version.weight_syncer:
        config["weight_syncer"] = {
            "type": "patch",
            "patch": {
                "snapshot_device": "cpu",
                "delta_encoding": True,
                "compression": "none",
                "init_sync": {"enabled": True, "prefixes": None, "bucket_size": 134217728},
            },
        }
    if model.value_head:
        config["actor"]["optim"]["value_lr"] = 1.0e-4
        if train_env["auto_reset"]:
            algorithm_cfg["bootstrap_type"] = "standard"
    return config
