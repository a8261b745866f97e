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
  the envs of all env workers, checked here. ``RobRayPPOTrainer._validate`` pads a validation
  batch to a multiple of one env worker's envs only, so ``data.val_batch_size`` is
  ``train_batch_size`` (validation then fills every env exactly, as training does).
- The trainer repeats each row ``rollout.n`` times in a row and ``reset_envs_to_state_ids``
  deals the rows to env workers, then to their stages, in order: a stage's envs
  (``env.train.num_envs``) must be a multiple of ``rollout.n``, checked here, or a GRPO group
  would span two stages, whose envs the package's env starts differently.

The config is built here as data and checked against what verl composes for VLA training
(``verl_0_7.config.json``, rebuilt from the source by :mod:`._verl_snapshot`) before anything
is written: every key is verl's, with a value of its type, except the package's own
(:data:`OWN_KEYS`) and the ones verl's VLA entry point reads that ``ppo_trainer`` lacks
(:data:`ADDED_KEYS`); every key ``rob_ppo_trainer.yaml`` sets is restated, except
:data:`NOT_MIRRORED`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..backbones import BACKBONES
from ..batch import Derived, comments, largest_divisor, next_multiple
from ..contracts import Contract, Method, Registration, Side
from ..errors import Issue
from . import FrameworkSource, TargetDecl, decision_steps, unhonoured_resources
from ._config_schema import load_schema, set_keys

if TYPE_CHECKING:
    from ..spec import Spec

#: The tag and commit the adapter is written against.
VERL_TAG, VERL_COMMIT = "v0.7.1", "bec9ef74768dd201881cd4e54cd0385e87caae27"
#: The config layout snapshot (:mod:`._verl_snapshot`): ``ppo_trainer`` + ``rob_ppo_trainer``.
SCHEMA = "verl_0_7"
#: File references in messages are to this folder of the v0.7.1 source.
VLA = "verl/experimental/vla"

#: Keys of the generated config that are the package's own (verl passes ``env.train`` whole
#: to the env class, which reads them), each with its reader.
OWN_KEYS = {
    "env.train.backend": "the package's VerlEnv: null runs the spec's simulator, 'synthetic' "
    "the stand-in backend",
    "env.train.group_size": "the package's VerlEnv: envs given one state id start alike in "
    "runs of this many, so two groups of one task on one worker differ; interpolates "
    "actor_rollout_ref.rollout.n, which main_task resolves (OmegaConf.resolve, main_ppo.py)",
    "env.train.workers": "the package's VerlEnv: simulator processes per env stage (null: "
    "the spec's env.workers)",
}
#: Keys ``ppo_trainer`` lacks that verl's VLA entry point reads: upstream scripts pass them
#: as ``+key=...``; in a primary config they are merged in like any other key.
ADDED_KEYS = {
    "trainer.n_env_gpus_per_node": f"read by main_ppo.main_task ({VLA}/main_ppo.py): GPUs of "
    "the env_gpu_pool per node",
    "trainer.n_rollout_gpus_per_node": f"read by main_ppo.main_task ({VLA}/main_ppo.py): GPUs "
    "of the train_rollout_pool per node",
    "ray_kwargs.ray_init.runtime_env.worker_process_setup_hook": f"read by main_ppo.main "
    f"({VLA}/main_ppo.py), merged into ray.init's runtime_env: installs the package's "
    "registration in every Ray worker",
}
#: Keys ``rob_ppo_trainer.yaml`` sets that the generated config leaves out, by prefix, and why.
NOT_MIRRORED = {
    "env.train.task_suite_name": "LIBERO's suite (LiberoEnv)",
    "env.train.init_params.": "LIBERO's constructor kwargs (cameras); the package's env "
    "reads the spec",
    "env.train.reward_coef": "LIBERO's success reward scale; the package's reward weights "
    "the spec's reward terms",
    "env.train.profiler.": "EnvWorker reads it with cfg.train.get('profiler', {}) "
    "(workers/env/env_worker.py): left out, verl's ProfilerConfig defaults (profiling off)",
    "actor_rollout_ref.actor.fsdp_config.wrap_policy.": "names OpenVLA-OFT's Prismatic "
    "classes; without it verl's get_fsdp_wrap_policy wraps what the policy module's "
    "_no_split_modules names",
    "actor_rollout_ref.actor.num_images_in_input": "read by nothing at v0.7.1 "
    "(naive_rollout_rob.py hard-codes 1 image); the package's rollout feeds the spec's cameras",
    "actor_rollout_ref.actor.traj_mini_batch_size": "read by nothing on the PPO path at "
    "v0.7.1 (only the SAC scripts pass it)",
}

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
    model_type: str  #: the tiny checkpoint's ``config.model_type`` (verl's HFModelConfig reads it)
    config: dict[str, Any]  #: the Hydra YAML, as data
    derived: tuple[Derived, ...]  #: the batch keys and where each came from
    own: tuple[str, ...]  #: the keys the spec's ``targets[i].config`` sets
    tag: str = VERL_TAG  #: the verl source tag the package runs on
    commit: str = VERL_COMMIT

    @property
    def comments(self) -> Mapping[str, str]:
        """End-of-line comments of the config: where each batch key came from."""
        return comments(self.derived, self.own)


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
    """verl 0.7.1's shape and batch rules, at plan time, each naming the code that enforces
    it (see the module docstring); paths are under ``verl/experimental/vla/`` unless they
    start with ``verl/``."""
    name = f"verl 0.7 (targets[{index}])"
    yield from unhonoured_resources(
        spec,
        index,
        "verl 0.7",
        "verl generates on the actor's GPUs (its hybrid engine)",
        honours=("env_gpus_per_node", "env_nodes", "pipeline_stages"),
    )
    if len(spec.env.cameras) > 2:
        yield Issue(
            ("env", "cameras"),
            f"{name} carries two images per step: create_env_batch_dataproto "
            "(workers/env/env_worker.py) keeps full_image and wrist_image only; the spec has "
            f"{len(spec.env.cameras)} cameras",
        )
    chunk = decision_steps(spec)
    steps = spec.env.max_episode_steps
    if steps % chunk:
        yield Issue(
            ("env", "max_episode_steps"),
            f"{name} runs env.train.max_episode_steps // num_action_chunks decisions per "
            f"episode (EnvLoop.max_interactions, env_loop.py) and never ends one early: "
            f"max_episode_steps ({steps}) must be a multiple of the env steps of one action "
            f"chunk ({chunk})",
        )
    env_world, actor_world = worlds(spec)
    env_gpus, actor_gpus = gpu_split(spec)
    if env_gpus < 1 or actor_gpus < 1:
        yield Issue(
            ("resources", "env_gpus_per_node"),
            f"{name} places env workers and actor/rollout workers in resource pools of their "
            "own (env_gpu_pool, train_rollout_pool: main_ppo.main_task), each needing a GPU per "
            f"node; colocated, the split of {spec.resources.gpus_per_node} GPUs is {env_gpus} "
            f"env + {actor_gpus} actor/rollout",
        )
        return
    group = group_size(spec, index)
    training = spec.training
    if spec.targets[index].algorithm in GROUPED and group < 2:
        yield Issue(
            ("training", "group_size"),
            f"{name}'s {spec.targets[index].algorithm} compares the rollout.n rollouts of one "
            "task (compute_advantage in verl/trainer/ppo/ray_trainer.py groups by uid): "
            f"group_size must be at least 2, got {group}",
        )
        return
    episodes = training.episodes
    if training.envs is not None and training.envs != episodes:
        yield Issue(
            ("training", "envs"),
            f"{name} runs every episode of an update at once: RobRayPPOTrainer.fit repeats "
            "data.train_batch_size rows rollout.n times (rob_ray_trainer.py) and "
            "EnvWorker.reset_envs_to_state_ids asserts num_envs x pipeline_stage_num state ids "
            "per env worker (workers/env/env_worker.py), so its envs are groups x group_size "
            f"({episodes}), not training.envs ({training.envs}): leave envs out (or set "
            f"training.envs to {episodes}), or change training.groups to match them",
        )
        return
    stages = spec.resources.pipeline_stages
    per_stage = episodes // stages if episodes % stages == 0 else 0
    if not per_stage or per_stage % env_world or (per_stage // env_world) % group:
        yield Issue(
            ("training", "groups"),
            f"{name} deals an update's {episodes} episodes (groups x group_size) to "
            f"{env_world} env workers x {stages} pipeline stages in order, each stage's "
            "env.train.num_envs envs in runs of rollout.n (RobRayPPOTrainer.fit repeats each "
            "row rollout.n times in a row, rob_ray_trainer.py; reset_envs_to_state_ids gives "
            "each env worker num_envs x pipeline_stage_num rows, workers/env/env_worker.py; "
            "EnvWorker.init_worker builds one EnvManager per stage): each stage's envs must "
            f"hold whole groups of {group}, or a group would start in two places: set "
            f"training.groups to {_groups_for(spec, env_world * stages * group)}",
        )
        return
    if per_stage % stages:
        yield Issue(
            ("training", "groups"),
            f"{name}'s EnvLoop requires its total envs (env workers x env.train.num_envs = "
            f"{per_stage}) to be divisible by pipeline_stage_num ({stages}) (EnvLoop.__init__, "
            "env_loop.py raises ValueError): set training.groups to "
            f"{_groups_for(spec, math.lcm(env_world * stages * group, stages * stages))}",
        )
    if per_stage % actor_world:
        yield Issue(
            ("training", "groups"),
            f"{name} sends each pipeline stage's {per_stage} observations to its "
            f"{actor_world} rollout workers in equal parts: generate_sequences dispatches over "
            "the rollout mesh (make_nd_compute_dataproto_dispatch_fn, fsdp_workers.py) and "
            "DataProto.chunk asserts an equal split (verl/protocol.py): set training.groups "
            f"to {_groups_for(spec, stages * actor_world)}",
        )
    decisions = steps // chunk if steps % chunk == 0 else 0
    if not decisions:
        return
    rows = episodes * decisions // training.mini_batches
    if rows % actor_world or (rows // actor_world) % training.micro_batch_size_per_gpu:
        yield Issue(
            ("training", "micro_batch_size_per_gpu"),
            f"{name} normalizes actor.ppo_mini_batch_size x rollout.n = {rows} decision rows "
            f"({episodes} episodes x {decisions} decisions / mini_batches "
            f"{training.mini_batches}) by floor division over its {actor_world} actor workers, "
            f"then asserts it divisible by ppo_micro_batch_size_per_gpu "
            f"({training.micro_batch_size_per_gpu}) (ActorRolloutRefWorker.__init__, "
            "verl/workers/fsdp_workers.py): both must divide evenly"
            + (
                "; set micro_batch_size_per_gpu to "
                f"{largest_divisor(rows // actor_world, training.micro_batch_size_per_gpu)}"
                if rows % actor_world == 0
                else ""
            ),
        )


def _groups_for(spec: Spec, unit: int) -> int:
    """The fewest groups at or above the spec's whose episodes are a multiple of ``unit``."""
    n = spec.training.group_size
    return next_multiple(spec.training.groups, unit // math.gcd(unit, n))


def derived_batch(spec: Spec, index: int) -> tuple[Derived, ...]:
    """verl's batch keys, each with where it comes from in the spec's training block."""
    t, group = spec.training, group_size(spec, index)
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
                "enable_gradient_checkpointing": False,
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
                    # verl's PrecisionType spells these as the spec does (bfloat16, ...)
                    "model_dtype": model.dtype,
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
                "temperature": 1.0,
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
    own = set_keys(config, spec.targets[index].config)
    problems = config_problems(config)
    if problems:  # a vlagen bug, not a spec error: stop before writing anything
        raise AssertionError("verl config does not match verl's layout:\n" + "\n".join(problems))
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
        prompt_length=prompt_length,
        model_type=(BACKBONES[model.backbone].model_types or ("llava",))[0],
        config=config,
        derived=derived_batch(spec, index),
        own=own,
    )


def flat_keys(tree: dict, prefix: str = "") -> dict[str, Any]:
    """``{"a.b": value}`` of every leaf of a nested config (empty dicts and lists are leaves)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(flat_keys(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def fits(kind: str, value: object) -> bool:
    """Whether ``value`` suits a layout key of type ``kind`` (``null``/``missing``: verl leaves
    it unset, any value; ``float`` takes an int)."""
    if kind in ("null", "missing"):
        return True
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    names = {"bool": bool, "int": int, "str": str, "list": list, "dict": dict}
    return isinstance(value, names[kind]) and not (kind == "int" and isinstance(value, bool))


def config_problems(config: dict) -> list[str]:
    """How ``config`` differs from what verl composes for VLA training: keys verl has not
    (except :data:`OWN_KEYS` and :data:`ADDED_KEYS`), values of another type, and keys
    ``rob_ppo_trainer.yaml`` sets that ``config`` lacks (except :data:`NOT_MIRRORED`)."""
    layout = load_schema(SCHEMA)
    keys: dict[str, str] = layout["keys"]
    ours = flat_keys({k: v for k, v in config.items() if k not in ("defaults", "hydra")})
    problems = []
    for key, value in ours.items():
        if key in OWN_KEYS or key in ADDED_KEYS:
            continue
        kind = keys.get(key) or _under_mapping(keys, key)
        if kind is None:
            problems.append(f"{key}: not a key of verl's config (nothing would read it)")
        elif not fits(kind, value):
            problems.append(f"{key}: {value!r} is not a {kind}")
    for key in layout["vla_keys"]:
        if any(key == p or (p.endswith(".") and key.startswith(p)) for p in NOT_MIRRORED):
            continue
        if key not in ours:
            problems.append(f"{key}: missing (rob_ppo_trainer.yaml sets a {keys[key]})")
    return problems


def _under_mapping(keys: dict[str, str], key: str) -> str | None:
    """``any`` where ``key`` is under a free-form mapping leaf of the layout (``{}``)."""
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if keys.get(".".join(parts[:cut])) == "dict":
            return "null"
    return None


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


#: verl 0.7.1's contract (files under ``verl/experimental/vla/``): the env as ``EnvManager``
#: builds it in its subprocess and ``EnvWorker`` calls it (``workers/env/``; nothing in 0.7.1
#: calls ``get_all_state_ids`` or ``stop_simulator``, whose protocol holds ``get_state``,
#: ``load_state`` and ``close``), the rollout and actor methods the package overrides
#: (``naive_rollout_rob.py``, ``dp_rob.py``), and the observation keys
#: ``create_env_batch_dataproto`` reads (``workers/env/env_worker.py``).
CONTRACT = Contract(
    summary="gym-style vector env (reset_envs_to_state_ids / chunk_step) behind EnvManager, "
    "selected by env.train.simulator_type",
    env=Side(
        base="duck-typed (a gymnasium.Env by convention), run in a subprocess behind EnvManager",
        methods=(
            Method("__init__", "(cfg, rank, world_size)"),
            Method("reset_envs_to_state_ids", "(state_ids_list, task_ids_list)", "(obs, infos)"),
            Method(
                "chunk_step",
                "(chunk_actions[N, C, A])",
                "(obs, rewards[N, C], terminations[N, C], truncations[N, C], infos)",
            ),
            Method("flush_video", "(*, video_sub_dir)", required=False),  # with save_video
            Method("get_all_state_ids", "()", "state ids", required=False),
            Method("get_state", "()", "bytes", required=False),
            Method("load_state", "(state_buffer)", required=False),
            Method("close", "()", required=False),
        ),
    ),
    policy=Side(
        base="verl.workers.rollout.base.BaseRollout and "
        "verl.experimental.vla.dp_rob.RobDataParallelPPOActor, subclassed",
        methods=(
            Method(
                "generate_sequences",
                "(prompts: DataProto)",
                "DataProto {responses, input_ids, attention_mask, pixel_values, action}",
            ),
            Method("_forward_micro_batch", "(micro_batch, temperature)", "(entropy, log_probs)"),
            Method(
                "_forward_micro_batch_update",
                "(*, input_ids, attention_mask, pixel_values, responses, temperature)",
                "(entropy, log_probs)",
            ),
        ),
    ),
    observation=(
        "images_and_states.full_image",
        "images_and_states.wrist_image",
        "images_and_states.state",
        "task_descriptions",
    ),
    registration=Registration(
        env="if/elif on env.train.simulator_type in EnvWorker.init_worker (libero, isaac); "
        "EnvWorker replaced by a subclass at run time",
        model="HuggingFace Auto classes (register_vla_models: AutoConfig 'openvla', "
        "AutoModelForVision2Seq) in RobActorRolloutRefWorker, replaced by a subclass at run "
        "time that builds the package's policy",
        hook="Ray worker_process_setup_hook (ray_kwargs.ray_init.runtime_env), patching verl's "
        "modules when they are imported",
    ),
    config_snapshot=SCHEMA,
)


TARGET = TargetDecl(
    framework="verl",
    version="0.7",
    title="verl",
    # The wheel lacks verl/experimental/vla: the extra keeps the pin, which the editable
    # v0.7.1 checkout (``source``), installed first, satisfies.
    requirement="verl==0.7.1",
    source=FrameworkSource(
        repository="https://github.com/verl-project/verl",
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
    family_notes={
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
    planner=make_verl_plan,
    config_keys=lambda: load_schema(SCHEMA)["keys"],
    derived=derived_batch,
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
