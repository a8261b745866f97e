"""The verl plan: the Hydra config a spec gives (checked against verl's layout), the batch
keys it derives and where each came from, and what the templates lay out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...backbones import BACKBONES
from ...batch import Derived, comments
from ...presets import PRESETS
from ..common.config_schema import require_fits, set_keys
from ..common.placement import decision_steps, group_size
from .layout import config_problems
from .reference import gradient_checkpointing, sampling_temperature

if TYPE_CHECKING:
    from ...spec import Spec

#: The tag and commit the adapter is written against.
VERL_TAG, VERL_COMMIT = "v0.7.1", "bec9ef74768dd201881cd4e54cd0385e87caae27"

GROUPED = ("grpo", "rloo")  #: advantages over a group of rollouts of one task
#: Where verl's VLA code lives: the v0.7.1 source tree only (the 0.7.1 wheel skips the folder).
VLA_HISTORY = (
    "verl removed it in 0.8 (no release since has VLA code, and 0.8 removed the workers it "
    "imports), and its successor, verl-vla 0.1, pins verl 0.7.1 and drops this PPO path"
)


@dataclass(frozen=True)
class VerlPlan:
    """What the verl templates lay out, computed once here."""

    simulator_type: str  #: ``env.train.simulator_type``: the package's own type name
    full_image: str  #: the spec camera sent as ``full_image``
    wrist_image: str | None  #: the spec camera sent as ``wrist_image`` (None: an empty image)
    chunk: int  #: ``env.actor.model.num_action_chunks``
    action_dim: int  #: ``env.actor.model.action_dim``
    decisions: int  #: policy calls per episode (``EnvLoop.max_interactions``)
    group: int  #: ``actor_rollout_ref.rollout.n``
    stages: int  #: ``env.rollout.pipeline_stage_num``
    num_envs: int  #: ``env.train.num_envs``: envs of one env worker's one stage
    env_world: int  #: env workers
    actor_world: int  #: actor/rollout workers
    disaggregated: bool  #: env workers on their own nodes (``env.disagg_sim``)
    env_gpus: int  #: ``trainer.n_env_gpus_per_node``: GPUs of a node that hold env workers
    rollout_gpus: int  #: ``trainer.n_rollout_gpus_per_node``: the actor/rollout workers'
    #: the simulator computes or renders on its env worker's GPU (None: vlagen cannot tell)
    simulator_gpu: bool | None
    prompt_length: int  #: ``actor_rollout_ref.rollout.prompt_length``
    model_type: str  #: the tiny checkpoint's ``config.model_type`` (verl's HFModelConfig reads it)
    config: dict[str, Any]  #: the Hydra YAML, as data
    derived: tuple[Derived, ...]  #: the batch keys and where each came from
    own: tuple[str, ...]  #: the keys the spec's ``targets[i].config`` sets
    tag: str = VERL_TAG  #: the verl source tag the package runs on
    history: str = VLA_HISTORY
    commit: str = VERL_COMMIT
    grouped: tuple[str, ...] = GROUPED  #: estimators that compare a group of rollouts

    @property
    def comments(self) -> Mapping[str, str]:
        """End-of-line comments of the config: where each batch key came from."""
        return comments(self.derived, self.own)


def gpu_split(spec: Spec) -> tuple[int, int]:
    """(env GPUs, actor/rollout GPUs) per node: ``trainer.n_env_gpus_per_node`` and
    ``trainer.n_rollout_gpus_per_node``. Colocated, the env takes ``env_gpus_per_node`` (default
    half, as verl's examples); on env nodes of their own, env and actor each take every GPU."""
    resources = spec.resources
    gpus = resources.gpus_per_node
    if resources.env_nodes:
        return resources.env_gpus_per_node or gpus, gpus
    env = resources.env_gpus_per_node or max(gpus // 2, 1)
    return env, gpus - env


def worlds(spec: Spec) -> tuple[int, int]:
    """(env workers, actor/rollout workers): one per GPU of each pool."""
    env_gpus, actor_gpus = gpu_split(spec)
    resources = spec.resources
    return env_gpus * (resources.env_nodes or resources.nodes), actor_gpus * resources.nodes


def camera_roles(spec: Spec) -> tuple[str, str | None]:
    """The spec cameras sent as ``full_image`` (the first ``main``, else the first) and
    ``wrist_image`` (the first ``wrist``, else the second camera, else none)."""
    cameras = list(spec.env.cameras)
    main = next((c for c in cameras if c.role == "main"), cameras[0])
    rest = [c for c in cameras if c is not main]
    wrist = next((c for c in rest if c.role == "wrist"), rest[0] if rest else None)
    return main.name, None if wrist is None else wrist.name


def derived_batch(spec: Spec, index: int) -> tuple[Derived, ...]:
    """verl's batch keys, each with where it comes from in the spec's training block."""
    t, group = spec.training, group_size(spec, index, GROUPED)
    env_world = worlds(spec)[0]
    stages = spec.resources.pipeline_stages
    decisions = spec.env.max_episode_steps // decision_steps(spec)
    rows = t.episodes // group
    prompts = "training.groups" if group > 1 else "training.groups x group_size"
    return (
        Derived("data.train_batch_size", rows, prompts),
        Derived("data.val_batch_size", rows, "data.train_batch_size"),
        Derived(
            "actor_rollout_ref.rollout.n",
            group,
            "training.group_size"
            if group > 1
            else f"1: {spec.targets[index].algorithm} does not group episodes",
        ),
        Derived(
            "env.train.num_envs",
            t.episodes // (env_world * stages),
            f"every episode at once (groups x group_size = {t.episodes}) over {env_world} "
            f"env workers x {stages} pipeline stages",
        ),
        Derived(
            "actor_rollout_ref.actor.ppo_mini_batch_size",
            rows // t.mini_batches * decisions,
            f"{rows // t.mini_batches} prompts per optimizer step (data.train_batch_size / "
            f"mini_batches {t.mini_batches}) x {decisions} decisions",
        ),
        Derived(
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
            t.micro_batch_size_per_gpu,
            "training.micro_batch_size_per_gpu",
        ),
    )


def derived_settings(spec: Spec) -> tuple[Derived, ...]:
    """verl's keys beyond the batch that follow from the training block (with
    :func:`derived_batch`, what a spec's ``targets[i].config`` may not set)."""
    t = spec.training
    return (
        Derived("actor_rollout_ref.actor.optim.lr", t.learning_rate, "training.learning_rate"),
        Derived(
            "actor_rollout_ref.rollout.temperature",
            sampling_temperature(spec),
            "training.temperature"
            if t.temperature is not None
            else "training.temperature, default verl's run_simpleVLA_libero_grpo.sh's",
        ),
        Derived(
            "actor_rollout_ref.model.enable_gradient_checkpointing",
            gradient_checkpointing(spec),
            "training.gradient_checkpointing"
            if t.gradient_checkpointing is not None
            else "training.gradient_checkpointing, default verl's run_simpleVLA_libero_grpo.sh's",
        ),
        Derived("data.seed", t.seed, "training.seed"),
        Derived("env.train.seed", t.seed, "training.seed"),
        Derived(
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
            t.micro_batch_size_per_gpu,
            "training.micro_batch_size_per_gpu",
        ),
    )


def make_verl_plan(spec: Spec, index: int) -> VerlPlan:
    """The verl plan of a resolved spec that passed :func:`~.checks.verl_checks`."""
    algorithm = spec.targets[index].algorithm
    model, env, training, resources = spec.model, spec.env, spec.training, spec.resources
    package = spec.project.import_name
    group = group_size(spec, index, GROUPED)
    stages = resources.pipeline_stages
    decisions = env.max_episode_steps // decision_steps(spec)
    env_world, actor_world = worlds(spec)
    env_gpus, actor_gpus = gpu_split(spec)
    rows = training.episodes // group  # data rows: prompts, each repeated rollout.n times
    per_stage = training.episodes // (env_world * stages)
    full_image, wrist_image = camera_roles(spec)
    prompt_length = 512
    checkpoint = model.checkpoint.replace("${", "\\${")
    config: dict[str, Any] = {
        "hydra": {
            "searchpath": ["pkg://verl.trainer.config"],
            "run": {"dir": "."},
            "output_subdir": None,
        },
        "defaults": ["ppo_trainer", "_self_"],
        "data": {
            "train_files": "data/train.parquet",
            "val_files": "data/val.parquet",
            "train_batch_size": rows,
            "val_batch_size": rows,
            "dataloader_num_workers": 0,
            "seed": training.seed,
        },
        "env": {
            "rollout": {"pipeline_stage_num": stages},
            "actor": {
                "model": {"num_action_chunks": model.action.chunk, "action_dim": model.action.dim}
            },
            "train": {
                "simulator_type": package,
                # in action columns (decisions x chunk), as EnvLoop divides it by the chunk
                "max_episode_steps": decisions * model.action.chunk,
                "num_envs": per_stage,
                "seed": training.seed,
                "only_eval": False,
                "video_cfg": {"save_video": False, "video_base_dir": "verl_logs/video"},
                "backend": None,  # ours: null is the spec's simulator, "synthetic" the stand-in
                # ours: follows rollout.n (train.py refuses a config where it does not)
                "group_size": "${actor_rollout_ref.rollout.n}",
                "workers": None,
            },
            "disagg_sim": {"enable": bool(resources.env_nodes), "nnodes": resources.env_nodes or 1},
        },
        "actor_rollout_ref": {
            "model": {
                "path": checkpoint,
                "trust_remote_code": model.trust_remote_code,
                "enable_gradient_checkpointing": gradient_checkpointing(spec),
                "use_remove_padding": False,
            },
            "actor": {
                "strategy": "fsdp",
                "ppo_mini_batch_size": rows // training.mini_batches * decisions,
                "ppo_micro_batch_size_per_gpu": training.micro_batch_size_per_gpu,
                "use_dynamic_bsz": False,
                "grad_clip": 1.0,
                "clip_ratio_high": 0.28 if algorithm in GROUPED else 0.2,
                "clip_ratio_low": 0.2,
                # no KL term: RayPPOTrainer builds no reference policy (need_reference_policy)
                "use_kl_loss": False,
                "optim": {"lr": training.learning_rate, "weight_decay": 0.0},
                "fsdp_config": {
                    # float32 weights for AdamW, as verl builds its actor by default (a step
                    # of 1e-6 changes 2% of bfloat16 weights: vlagen.updates); the spec's
                    # dtype is the compute dtype of FSDP's mixed precision. verl's
                    # PrecisionType spells both as the spec does (bfloat16, ...)
                    "model_dtype": "float32",
                    "dtype": model.dtype,
                    "param_offload": False,
                    "optimizer_offload": False,
                    "forward_prefetch": True,
                    "fsdp_size": -1,
                },
            },
            "rollout": {
                "mode": "async_envloop",
                # ppo_trainer leaves it mandatory (???); verl's VLA script sets hf
                "name": "hf",
                # RobActorRolloutRefWorker._build_rollout meshes (dp, infer_tp) over the
                # actor world: 1, or the mesh does not fit (ppo_trainer's default is 2)
                "tensor_model_parallel_size": 1,
                "n": group,
                "prompt_length": prompt_length,
                "temperature": sampling_temperature(spec),  # training.temperature or the script's
                "log_prob_micro_batch_size_per_gpu": training.micro_batch_size_per_gpu,
            },
        },
        # No critic for these estimators; set, so need_critic does not warn that it guessed.
        # main_task asserts the critic's strategy is the actor's even without a critic.
        "critic": {"enable": False, "strategy": "${actor_rollout_ref.actor.strategy}"},
        "algorithm": {
            "adv_estimator": algorithm,
            "gamma": 1.0,
            "lam": 1.0,
            "norm_adv_by_std_in_grpo": True,
            "use_kl_in_reward": False,
        },
        "trainer": {
            "nnodes": resources.nodes,
            "n_gpus_per_node": resources.gpus_per_node,
            "n_env_gpus_per_node": env_gpus,
            "n_rollout_gpus_per_node": actor_gpus,
            "total_epochs": 1000,
            "project_name": "vlagen",
            "experiment_name": f"{package}_{algorithm}",
            "logger": ["console"],
            "save_freq": 30,
            # verl keeps every checkpoint where unset (null); each holds the actor's float32
            # shards and AdamW's states
            "max_actor_ckpt_to_keep": 5,
            "test_freq": -1,
            "val_before_train": False,
            "default_local_dir": "checkpoints/verl",
        },
        "ray_kwargs": {
            "ray_init": {
                "runtime_env": {
                    "worker_process_setup_hook": f"{package}.targets.verl.register.setup"
                }
            }
        },
    }
    own = set_keys(config, spec.targets[index].config)
    require_fits(config_problems(config), "verl config does not match verl's layout")
    return VerlPlan(
        simulator_type=package,
        full_image=full_image,
        wrist_image=wrist_image,
        chunk=model.action.chunk,
        action_dim=model.action.dim,
        decisions=decisions,
        group=group,
        stages=stages,
        num_envs=per_stage,
        env_world=env_world,
        actor_world=actor_world,
        disaggregated=bool(resources.env_nodes),
        env_gpus=env_gpus,
        rollout_gpus=actor_gpus,
        simulator_gpu=PRESETS[env.preset].gpu,
        prompt_length=prompt_length,
        model_type=(BACKBONES[model.backbone].model_types or ("llava",))[0],
        config=config,
        derived=derived_batch(spec, index),
        own=own,
    )
