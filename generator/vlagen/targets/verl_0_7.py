"""verl 0.7: VLA training lives in ``verl/experimental/vla`` of the v0.7.1 source tree only.

The verl 0.7.1 wheel ships that folder's two YAML files, not its code (it has no
``__init__.py``), verl 0.8+ has no VLA code at all, and verl's VLA successor, verl-vla, dropped
the PPO command and replaced the env contract (see ``UNSUPPORTED`` in :mod:`.`). So the target
is a source checkout of tag v0.7.1, and the generated README installs exactly that.

What verl 0.7.1 fixes in code, and so what the plan works around or checks (file references are
to ``verl/experimental/vla/`` at v0.7.1):

- ``workers/env/env_worker.py``: env selection is an ``if/elif`` on
  ``env.train.simulator_type`` (libero, isaac); the package's ``EnvWorker`` subclass adds its
  own type, installed in every Ray worker by a ``worker_process_setup_hook``.
- ``create_env_batch_dataproto`` keeps ``full_image``, ``wrist_image``, ``state`` and
  ``task_descriptions`` only: at most two cameras reach the policy.
- ``naive_rollout_rob.py`` / ``dp_rob.py`` hard-code OpenVLA-OFT's LIBERO prompt, a 224x224
  resize, ``unnorm_key="libero_10_no_noops"`` and a 32000-token vocabulary: the package's own
  rollout and actor (on the policy core) replace them, so the spec's values flow through.
- ``main_ppo.calculate_reward`` rewards success only (any termination); ``env_loop.py`` drops
  the env's rewards and ``rob_ray_trainer.flatten_trajectories`` drops every non-tensor (GRPO's
  ``uid``): the package's env loop keeps rewards and ``uid``, its reward function reads the
  spec's reward terms, and a wrapper of ``flatten_trajectories`` repeats the non-tensors.
- One training step resets every env once (``reset_envs_to_state_ids`` asserts
  ``num_envs * pipeline_stage_num`` ids per env worker): data rows x ``rollout.n`` must equal
  the envs of all env workers, checked here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import Issue
from . import TargetDecl

if TYPE_CHECKING:
    from ..spec import Spec

#: The tag and commit the adapter is written against.
VERL_TAG, VERL_COMMIT = "v0.7.1", "bec9ef74768dd201881cd4e54cd0385e87caae27"

ALGORITHMS = {
    "grpo": "algorithm.adv_estimator=grpo (group-relative, rollout.n = group_size)",
    "reinforce_plus_plus": "algorithm.adv_estimator=reinforce_plus_plus (the upstream "
    "LIBERO example; rollout.n = 1)",
    "rloo": "algorithm.adv_estimator=rloo (leave-one-out baseline, rollout.n = group_size)",
}
GROUPED = ("grpo", "rloo")  #: advantages over a group of rollouts of one task


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
    prompt_length: int  #: ``actor_rollout_ref.rollout.prompt_length``
    config: dict[str, Any]  #: the Hydra YAML, as data
    tag: str = VERL_TAG  #: the verl source tag the package runs on
    commit: str = VERL_COMMIT


def decision_steps(spec: Spec) -> int:
    """Backend steps per decision (1 where the backend takes a whole chunk per step)."""
    from ..envplan import make_env_plan, resolve_env

    return make_env_plan(resolve_env(spec.env), spec.model.action.chunk).steps_per_decision


def group_size(spec: Spec, index: int) -> int:
    return spec.training.group_size if spec.targets[index].algorithm in GROUPED else 1


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


def verl_checks(spec: Spec, index: int) -> Iterator[Issue]:
    """verl 0.7.1's shape and batch rules, at plan time (see the module docstring)."""
    name = "verl 0.7"
    if len(spec.env.cameras) > 2:
        yield Issue(
            ("env", "cameras"),
            f"{name} carries two images per step (full_image and wrist_image: "
            "create_env_batch_dataproto in workers/env/env_worker.py); the spec has "
            f"{len(spec.env.cameras)} cameras",
        )
    chunk = decision_steps(spec)
    steps = spec.env.max_episode_steps
    if steps % chunk:
        yield Issue(
            ("env", "max_episode_steps"),
            f"{name} runs max_episode_steps // num_action_chunks decisions per episode "
            f"(EnvLoop.max_interactions); max_episode_steps ({steps}) must be a multiple of "
            f"the env steps of one action chunk ({chunk})",
        )
    stages = spec.resources.pipeline_stages
    if spec.env.num_envs % stages:
        yield Issue(
            ("env", "num_envs"),
            f"{name} splits each env worker's envs over its {stages} pipeline stages "
            f"(resources.pipeline_stages); num_envs ({spec.env.num_envs}) is not a multiple",
        )
    env_world, actor_world = worlds(spec)
    env_gpus, actor_gpus = gpu_split(spec)
    if env_gpus < 1 or actor_gpus < 1:
        yield Issue(
            ("resources", "env_gpus_per_node"),
            f"{name} needs at least one GPU per node for the env workers and one for the "
            f"actor/rollout workers; the split is {env_gpus} + {actor_gpus} of "
            f"{spec.resources.gpus_per_node}",
        )
        return
    group = group_size(spec, index)
    training = spec.training
    if spec.targets[index].algorithm in GROUPED and group < 2:
        yield Issue(
            ("training", "group_size"),
            f"{name}'s {spec.targets[index].algorithm} compares rollouts of one task: "
            f"group_size must be at least 2, got {group}",
        )
    total = env_world * spec.env.num_envs
    episodes = training.train_batch_size * group
    if episodes != total:
        yield Issue(
            ("training", "train_batch_size"),
            f"{name} resets every env once per step (reset_envs_to_state_ids asserts "
            f"num_envs x pipeline_stage_num state ids per env worker): train_batch_size "
            f"({training.train_batch_size}) x rollout.n ({group}) = {episodes} must equal the "
            f"{total} envs ({spec.env.num_envs} per env worker x {env_world} env workers)",
        )
        return
    per_stage = total // stages
    if per_stage % actor_world:
        yield Issue(
            ("env", "num_envs"),
            f"{name} sends each pipeline stage's {per_stage} observations to the "
            f"{actor_world} rollout workers in equal parts (the rollout mesh's dispatch)",
        )
    decisions = steps // chunk if steps % chunk == 0 else 0
    if not decisions:
        return
    rows = training.mini_batch_size * decisions * group
    if training.mini_batch_size > training.train_batch_size:
        yield Issue(
            ("training", "mini_batch_size"),
            f"{name}: mini_batch_size ({training.mini_batch_size}) exceeds train_batch_size "
            f"({training.train_batch_size})",
        )
    elif rows % actor_world or (rows // actor_world) % training.micro_batch_size_per_gpu:
        yield Issue(
            ("training", "micro_batch_size_per_gpu"),
            f"{name} splits a mini-batch of {rows} decision rows (mini_batch_size "
            f"{training.mini_batch_size} x {decisions} decisions x rollout.n {group}) over "
            f"{actor_world} actor workers, then into micro-batches of "
            f"micro_batch_size_per_gpu ({training.micro_batch_size_per_gpu}): both must divide "
            "evenly (ActorRolloutRefWorker's batch normalization)",
        )


def make_verl_plan(spec: Spec, index: int) -> VerlPlan:
    """The verl plan of a resolved spec that passed :func:`verl_checks`."""
    algorithm = spec.targets[index].algorithm
    model, env, training, resources = spec.model, spec.env, spec.training, spec.resources
    package = spec.project.import_name
    group = group_size(spec, index)
    stages = resources.pipeline_stages
    decisions = env.max_episode_steps // decision_steps(spec)
    env_world, actor_world = worlds(spec)
    env_gpus, actor_gpus = gpu_split(spec)
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
            "train_batch_size": training.train_batch_size,
            "val_batch_size": training.train_batch_size,
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
                "num_envs": env.num_envs // stages,
                "seed": training.seed,
                "only_eval": False,
                "video_cfg": {"save_video": False, "video_base_dir": "verl_logs/video"},
                "backend": None,  # ours: null is the spec's simulator, "synthetic" the stand-in
            },
            "disagg_sim": {"enable": bool(resources.env_nodes), "nnodes": resources.env_nodes or 1},
        },
        "actor_rollout_ref": {
            "model": {
                "path": checkpoint,
                "trust_remote_code": model.trust_remote_code,
                "enable_gradient_checkpointing": False,
                "use_remove_padding": False,
            },
            "actor": {
                "strategy": "fsdp",
                "ppo_mini_batch_size": training.mini_batch_size * decisions,
                "ppo_micro_batch_size_per_gpu": training.micro_batch_size_per_gpu,
                "use_dynamic_bsz": False,
                "grad_clip": 1.0,
                "clip_ratio_high": 0.28 if algorithm in GROUPED else 0.2,
                "clip_ratio_low": 0.2,
                "entropy_coeff": 0.0,
                "use_kl_loss": False,
                "optim": {"lr": training.learning_rate},
                "fsdp_config": {
                    "model_dtype": model.dtype,
                    "param_offload": False,
                    "optimizer_offload": False,
                },
            },
            "rollout": {
                "mode": "async_envloop",
                "name": "hf",
                "n": group,
                "prompt_length": prompt_length,
                "temperature": 1.0,
                "log_prob_micro_batch_size_per_gpu": training.micro_batch_size_per_gpu,
            },
        },
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
            "save_freq": 25,
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
    return VerlPlan(
        simulator_type=package,
        full_image=full_image,
        wrist_image=wrist_image,
        chunk=model.action.chunk,
        action_dim=model.action.dim,
        decisions=decisions,
        group=group,
        stages=stages,
        num_envs=env.num_envs // stages,
        env_world=env_world,
        actor_world=actor_world,
        disaggregated=bool(resources.env_nodes),
        prompt_length=prompt_length,
        config=config,
    )


TARGET = TargetDecl(
    framework="verl",
    version="0.7",
    title="verl",
    # The wheel lacks verl/experimental/vla; the README installs a v0.7.1 checkout instead.
    requirement="verl==0.7.1",
    algorithms=ALGORITHMS,
    # The PPO-style VLA path of 0.7.1 trains token-action models (Pi0 is SAC-only there);
    # the package's own rollout and actor bring the spec's family.
    model_families=("openvla", "openvla_oft"),
    contract="gym-style vector env (reset_envs_to_state_ids / chunk_step) behind EnvManager, "
    "selected by env.train.simulator_type",
    checks=(verl_checks,),
    templates="verl",
    planner=make_verl_plan,
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
        "dill",
        "accelerate",
        "gymnasium",
    ),
)
