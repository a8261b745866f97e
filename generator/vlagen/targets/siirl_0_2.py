"""siiRL 0.2: the first siiRL release with embodied (VLA) training in its wheel.

siiRL trains with its own bundled OpenVLA / OpenVLA-OFT code; the generated package brings the
env (an adapter on ``BaseVLAEnvironment`` plus the ``_blocking_reset`` / ``_blocking_step`` calls
its rollout really makes), a rollout subclass installed in every Ray worker, the task manifest,
the pipeline and the CLI overrides. What siiRL 0.2.0 fixes in code, and so what this module
checks at plan time (file references are to the siiRL 0.2.0 wheel):

- ``embodied_type`` is ``openvla`` or ``openvla-oft`` (``engine/fsdp_workers.py``); no registry.
- OFT log-probs are reshaped to ``(traj * 8, 7)``, ``vocab_size == 32000`` is asserted and the
  bins are the 256 ids before the last 64 (``engine/actor/embodied_actor.py``).
- The openvla rollout decodes one action per forward (``np.expand_dims(actions, 1)`` in
  ``engine/rollout/embodied_rollout.py``); its tokens are the checkpoint's ``get_action_dim``.
- A Qwen-VL backbone runs siiRL's generic ``openvla`` branches (the rollout's ``generate`` and
  bin-centre decoding, the actor's ``logits[:, -response_length - 1:-1]``): the package's
  ``targets/siirl/model.py`` puts its policy behind that calling convention, and the glue
  loads it in place of siiRL's Prismatic loader, which would rewrite the checkpoint's
  ``config.json`` to OpenVLA's classes (``engine/fsdp_workers.py:759-800``).
- Only images and the prompt reach the model: the rollout never feeds the state.
- The critic (``CriticWorker``) has no embodied path, so PPO/GAE cannot train a VLA.
- The rollout splits a batch into ``num_envs // n`` prompts per chunk and asserts
  ``num_envs >= n``; ``task_file_name`` is packed into 50 bytes.
- The actor (``embodied_actor.update_policy``) asserts that ``traj_mini_batch_size`` divides
  the trajectory length and, for a micro-batch of more than one trajectory, forwards only the
  first one's steps and broadcasts its log-probs over the others' advantages: the plan emits
  a divisor and micro-batches of one trajectory, as siiRL's own scripts do.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..backbones import BACKBONES
from ..batch import Derived, next_multiple, split_fix
from ..contracts import Contract, Method, Registration, Side
from ..errors import Issue
from ..modelplan import center_crop
from . import TargetDecl, WarningFilter, decision_steps, unhonoured_resources
from ._config_schema import load_schema, lookup, value_fits
from ._siirl_example import EXAMPLE, ExampleRow, example_rows

if TYPE_CHECKING:
    from ..spec import Spec, Training

SCHEMA = "siirl_0_2"
TASK_FILE_NAME_BYTES = 50
#: siiRL's default ``actor.traj_mini_batch_size``: trajectory steps forwarded per backward.
TRAJ_MINI_BATCH = 16
#: ``embodied_actor.update_policy`` forwards only the first trajectory of a micro-batch.
MICRO_BATCH = 1
#: Sampling temperature: siiRL's ``EmbodiedArguments.temperature`` default and its SRPO
#: scripts' ``rollout.temperature`` (the rollout and the actor read the latter).
TEMPERATURE = 1.6
#: Dual-clip PPO's lower bound on negative-advantage ratios: siiRL's default is 3.0
#: (``params/model_args.py``, applied in ``core_algos.compute_policy_loss_vanilla``); its SRPO
#: scripts (``examples/embodied_srpo_trainer/run_openvla_oft_libero_*.sh``) set 10000, i.e.
#: no dual clip, and so does this plan.
CLIP_RATIO_C = 10000.0
#: Checkpoint every this many steps (siiRL's SRPO scripts); its default -1 never saves.
SAVE_FREQ = 5

ALGORITHMS = {
    "grpo": "algorithm.adv_estimator=grpo; the GRPO chain with the spec's reward terms",
    "dapo": "algorithm.workflow_type=dapo; GRPO plus DAPO's dynamic sampling of groups",
    "srpo": "algorithm.workflow_type=embodied, adv_estimator=grpo; siiRL's embodied SRPO "
    "chain (success and V-JEPA progress reward) plus the spec's other terms",
    "gae": "algorithm.adv_estimator=gae (PPO); rejected for VLAs: siiRL 0.2's critic has no "
    "embodied path",
}

#: (workflow_type, adv_estimator) per algorithm.
WORKFLOWS = {
    "grpo": ("default", "grpo"),
    "dapo": ("dapo", "grpo"),
    "srpo": ("embodied", "grpo"),
    "gae": ("default", "gae"),
}

DAG_WORKER = "siirl.dag_worker.dagworker:DAGWorker"

#: Override keys read only by siiRL code that cannot run on a CPU (its Ray driver, DAG and
#: FSDP workers, data loader, trainer), each with the file (under ``siirl/``) that reads it.
#: The generated fidelity test checks that every other key is read while siiRL's rollout,
#: advantage and actor run, and that each file here names the key's field.
_LOADER = "data_coordinator/dataloader/data_loader_node.py"
_DATASET = "data_coordinator/dataloader/partitioned_dataset.py"
_DAG, _FSDP = "dag_worker/dagworker.py", "engine/fsdp_workers.py"
_CKPT = "dag_worker/checkpoint_manager.py"
_SAMPLING = "user_interface/filter_interface/embodied.py"
READ_ELSEWHERE = {
    "data.dataset_type": _DATASET,
    "data.train_files": _DATASET,
    "data.val_files": _DATASET,
    "data.max_prompt_length": _DATASET,
    "data.train_batch_size": _LOADER,
    "data.val_batch_size": _LOADER,
    "data.max_response_length": _DAG,
    "algorithm.workflow_type": "main_dag.py",
    "algorithm.use_kl_in_reward": _DAG,
    "algorithm.filter_groups.enable": _DAG,
    "algorithm.filter_groups.metric": "user_interface/filter_interface/dapo.py",
    "algorithm.embodied_sampling.filter_accuracy": _SAMPLING,
    "algorithm.embodied_sampling.accuracy_lower_bound": _SAMPLING,
    "algorithm.embodied_sampling.accuracy_upper_bound": _SAMPLING,
    "algorithm.embodied_sampling.filter_truncated": _SAMPLING,
    "dag.custom_pipeline_fn": "main_dag.py",
    "reward_model.reward_manager": "execution/scheduler/reward.py",
    "reward_model.reward_kwargs.action_token_len": "engine/reward_manager/embodied.py",
    "reward_model.reward_kwargs.reward_coef": "engine/reward_manager/embodied.py",
    "actor_rollout_ref.model.path": _FSDP,
    "actor_rollout_ref.model.model_type": _FSDP,
    "actor_rollout_ref.model.trust_remote_code": _FSDP,
    "actor_rollout_ref.model.enable_gradient_checkpointing": _FSDP,
    "actor_rollout_ref.model.lora_rank": _FSDP,
    "actor_rollout_ref.model.lora_alpha": _FSDP,
    "actor_rollout_ref.model.target_modules": _FSDP,
    "actor_rollout_ref.rollout.name": _FSDP,
    "actor_rollout_ref.embodied.num_images_in_input": _FSDP,  # OFT's vision backbone
    "trainer.project_name": _DAG,
    "trainer.experiment_name": _DAG,
    "trainer.logger": _DAG,
    "trainer.val_before_train": _DAG,
    "trainer.save_freq": _DAG,
    "trainer.total_epochs": _DAG,
    "trainer.nnodes": _DAG,
    "trainer.n_gpus_per_node": _DAG,
    "trainer.resume_mode": _CKPT,
    "trainer.default_local_dir": _CKPT,
}


@dataclass(frozen=True)
class PipelineNode:
    node_id: str
    func: str  #: ``module:Class.method`` or ``module.function``; ``@shape`` = our node
    node_type: str  #: a ``NodeType`` member name
    node_role: str  #: a ``NodeRole`` member name
    only_forward_compute: bool = False


@dataclass(frozen=True)
class SiirlPlan:
    embodied_type: str  #: openvla | openvla-oft
    workflow_type: str
    adv_estimator: str
    action_token_len: int  #: tokens per env step, as siiRL's reward and mask count them
    action_chunks_len: int  #: env steps per forward pass
    trajectory_length: int  #: forward passes per episode (``ceil(max_steps / chunks)``)
    max_steps: int  #: ``embodied.env.max_steps``, in siiRL's steps (:func:`max_steps`)
    backend_steps_per_step: int  #: backend steps per step of siiRL's counter
    tokens_per_forward: int
    task_suite: str  #: the manifest's task_suite_name and embodied.env.env_name
    unnorm_key: str
    camera_keys: tuple[tuple[str, str], ...]  #: (model camera, key in the adapter's obs)
    shaped_terms: tuple[str, ...]  #: the spec's terms our reward node sums
    nodes: tuple[PipelineNode, ...]
    overrides: tuple[tuple[str, object], ...]  #: fixed CLI overrides, checked against siiRL
    derived: tuple[Derived, ...]  #: the batch keys among them and where each came from
    runtime_keys: tuple[str, ...]  #: overrides the launch fills in (paths, cluster size)
    read_elsewhere: dict[str, str]  #: keys read only by siiRL code that needs a GPU cluster
    #: Overrides the CPU fidelity harness appends: a short episode and the smallest group and
    #: env count siiRL's rollout accepts, so its real loop runs in seconds (see harness_overrides).
    harness: dict[str, object] | None = None
    #: siiRL's seed example (SRPO, OpenVLA-OFT on libero_goal), key by key against this plan
    example: tuple[ExampleRow, ...] = ()
    example_script: str = EXAMPLE
    #: A processor backbone's ``image_grid_thw`` row per camera image, ``(1, H / patch, W /
    #: patch)``; None: siiRL loads its own Prismatic model (llava backbone)
    image_grid: tuple[int, int, int] | None = None

    @property
    def omitted_templates(self) -> tuple[str, ...]:
        """The package's model adapter serves processor backbones only."""
        return () if self.image_grid else ("src/model.py",)

    @property
    def harness_length(self) -> int:
        """Forward passes per episode under :attr:`harness`."""
        steps = (self.harness or {})["actor_rollout_ref.embodied.env.max_steps"]
        return steps // self.action_chunks_len

    @property
    def graph_id(self) -> str:
        return f"vlagen_{self.workflow_type}_{self.adv_estimator}"


def trajectory_length(spec: Spec) -> int:
    """Forward passes per episode: one per decision, a decision being
    :func:`~vlagen.targets.decision_steps` backend steps (siiRL's rollout steps
    ``action_chunks_len`` at a time until ``max_steps``, ``while step < max_steps``)."""
    return -(-spec.env.max_episode_steps // decision_steps(spec))


def max_steps(spec: Spec) -> int:
    """``embodied.env.max_steps``, in the steps siiRL's rollout counts (``action_chunks_len``
    per forward pass), which the package's env turns back into backend steps."""
    return trajectory_length(spec) * steps_per_forward(spec)


def backend_steps_per_step(spec: Spec) -> int:
    """Backend steps per step of siiRL's counter (1, but a waypoint decision's steps on a
    stepping simulator, which siiRL counts as one)."""
    return decision_steps(spec) // steps_per_forward(spec)


def steps_per_forward(spec: Spec) -> int:
    """Env steps per forward pass (``embodied.action_chunks_len``): OFT's whole chunk, else one
    decision (the openvla path decodes one action per forward)."""
    return spec.model.action.chunk if spec.model.family == "openvla_oft" else 1


def traj_mini_batch(length: int) -> int | None:
    """The largest divisor of ``length`` up to siiRL's default 16 (its actor asserts that
    ``traj_mini_batch_size`` divides the trajectory); None if only 1 does, for a trajectory
    longer than one step (one forward per step: correct, but the update would crawl)."""
    best = max(d for d in range(1, min(length, TRAJ_MINI_BATCH) + 1) if length % d == 0)
    return None if best == 1 and length > 1 else best


def _chain(algorithm: str) -> tuple[PipelineNode, ...]:
    """The node chain per algorithm: siiRL's built-in chains with the reward node ours, and
    without their ``reference_log_prob`` node: KL is off (``use_kl_in_reward`` False, no
    ``use_kl_loss``), the embodied actor selects no ``ref_log_prob``
    (``engine/actor/embodied_actor.py``), and with LoRA the reference worker's
    ``compute_ref_log_prob`` calls ``compute_log_prob``, which asserts ``_is_actor``
    (``engine/fsdp_workers.py``), while ``DAGWorker.compute_ref_log_prob`` reads a
    ``metrics`` key that path never returns (``dag_worker/dagworker.py``)."""
    rollout = PipelineNode("rollout_actor", f"{DAG_WORKER}.generate", "MODEL_INFERENCE", "ROLLOUT")
    shape = PipelineNode("shape_reward", "@shape", "COMPUTE", "REWARD")
    tail = (
        PipelineNode(
            "calculate_advantages", f"{DAG_WORKER}.compute_advantage", "COMPUTE", "ADVANTAGE"
        ),
        PipelineNode(
            "actor_old_log_prob",
            f"{DAG_WORKER}.compute_old_log_prob",
            "MODEL_TRAIN",
            "ACTOR",
            only_forward_compute=True,
        ),
        PipelineNode("actor_train", f"{DAG_WORKER}.train_actor", "MODEL_TRAIN", "ACTOR"),
    )
    if algorithm == "srpo":
        sampling = PipelineNode(
            "embodied_sampling",
            "siirl.user_interface.filter_interface.embodied.embodied_local_rank_sampling",
            "COMPUTE",
            "DYNAMIC_SAMPLING",
        )
        reward = PipelineNode("compute_reward", f"{DAG_WORKER}.compute_reward", "COMPUTE", "REWARD")
        shape = PipelineNode("shape_reward", "@shape", "COMPUTE", "DEFAULT")
        return (rollout, sampling, reward, shape, *tail)
    if algorithm == "dapo":
        sampling = PipelineNode(
            "dynamic_sampling",
            "siirl.user_interface.filter_interface.dapo.dynamic_sampling",
            "COMPUTE",
            "DYNAMIC_SAMPLING",
        )
        return (rollout, shape, sampling, *tail)
    if algorithm == "gae":
        value = PipelineNode(
            "compute_value",
            f"{DAG_WORKER}.compute_value",
            "MODEL_TRAIN",
            "CRITIC",
            only_forward_compute=True,
        )
        critic = PipelineNode("critic_train", f"{DAG_WORKER}.train_critic", "MODEL_TRAIN", "CRITIC")
        return (rollout, shape, value, *tail, critic)
    return (rollout, shape, *tail)


def task_suite(spec: Spec) -> str:
    """The name siiRL's manifest and ``embodied.env.env_name`` carry for the spec's tasks."""
    return spec.env.task_suite or spec.project.import_name


def _camera_keys(spec: Spec) -> tuple[tuple[str, str], ...]:
    """Where each model camera sits in the adapter's observation: LIBERO's raw keys for the
    main and wrist cameras (so siiRL's own ``_obs_to_input`` reads them), ``<name>_image``
    for the others."""
    roles = {c.name: c.role for c in spec.env.cameras}
    keys = {"main": "agentview_image", "wrist": "robot0_eye_in_hand_image"}
    cameras = spec.model.cameras or ()
    return tuple((name, keys.get(roles[name], f"{name}_image")) for name in cameras)


def _nearest_divisible(length: int) -> int:
    """The nearest trajectory length above ``length`` with a divisor from 2 to 16."""
    return next(n for n in range(length + 1, 2 * length + 2) if traj_mini_batch(n) is not None)


#: Forward passes per episode in the fidelity harness: enough for two trajectory pieces of
#: two steps (siiRL's ``traj_len % traj_mini_batch_size`` assert still runs).
HARNESS_FORWARDS = 4
#: Trajectories per group in the harness: two, so GRPO centres a real group and a micro-batch
#: of two can show what it drops; envs: two per trajectory of the group, so one chunk
#: (``num_envs // n`` rows) holds both samples of the prompt.
HARNESS_GROUP, HARNESS_ENVS = 2, 4


def harness_overrides(spec: Spec) -> dict[str, object]:
    """What the CPU fidelity harness appends to the launch's overrides: the spec's episode
    (up to 64 forwards over a 32k-wide head, per trajectory) cut to :data:`HARNESS_FORWARDS`
    forwards in pieces of 2, and the group to :data:`HARNESS_GROUP` over
    :data:`HARNESS_ENVS` envs. Everything else (siiRL's loop, advantage, actor) is unchanged."""
    forwards = min(HARNESS_FORWARDS, trajectory_length(spec))
    return {
        "actor_rollout_ref.embodied.env.max_steps": forwards * steps_per_forward(spec),
        "actor_rollout_ref.actor.traj_mini_batch_size": 2 if forwards % 2 == 0 else forwards,
        "actor_rollout_ref.rollout.n": HARNESS_GROUP,
        "actor_rollout_ref.embodied.env.num_envs": HARNESS_ENVS,
    }


def world_size(spec: Spec) -> int:
    """Rollout workers, each stepping its own envs: one per GPU of the spec's resources."""
    return spec.resources.nodes * spec.resources.gpus_per_node


def envs_key(spec: Spec) -> int:
    """``embodied.env.num_envs``: siiRL's rollout runs ``num_envs // rollout.n`` of a worker's
    rows (each prompt already repeated ``rollout.n`` times) at once, so the worker's share of
    ``training.envs`` times ``rollout.n``; the package's rollout builds that share's envs."""
    t = spec.training
    return t.in_flight // world_size(spec) * t.group_size


def derived_batch(spec: Spec) -> tuple[Derived, ...]:
    """siiRL's batch keys, each with where it comes from in the spec's training block."""
    t, workers = spec.training, world_size(spec)
    envs = "training.envs" if t.envs is not None else "training.groups x group_size"
    return (
        Derived("data.train_batch_size", t.groups, "training.groups"),
        Derived("data.val_batch_size", t.groups, "training.groups"),
        Derived("actor_rollout_ref.rollout.n", t.group_size, "training.group_size"),
        Derived(
            "actor_rollout_ref.embodied.env.num_envs",
            envs_key(spec),
            f"{envs} ({t.in_flight}) over {workers} rollout workers (one per GPU), x rollout.n: "
            "siiRL's rollout steps num_envs // rollout.n of a worker's rows at once "
            "(generate_sequences, engine/rollout/embodied_rollout.py)",
        ),
        Derived(
            "actor_rollout_ref.actor.ppo_mini_batch_size",
            t.groups // t.mini_batches,
            f"training.groups / mini_batches {t.mini_batches}",
        ),
        Derived(
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
            MICRO_BATCH,
            "one trajectory: embodied_actor.update_policy forwards only the first "
            "trajectory of a larger micro-batch",
        ),
        Derived(
            "actor_rollout_ref.actor.traj_mini_batch_size",
            traj_mini_batch(trajectory_length(spec)),
            f"forward passes per backward pass: the largest divisor of a trajectory's "
            f"{trajectory_length(spec)} up to siiRL's default {TRAJ_MINI_BATCH} (its actor "
            "asserts it divides them); siiRL's memory knob, in place of "
            "training.micro_batch_size_per_gpu, which it has no use for",
        ),
    )


def make_siirl_plan(spec: Spec, index: int) -> SiirlPlan:
    """The siiRL plan of a resolved spec that passed :func:`siirl_checks`."""
    algorithm = spec.targets[index].algorithm
    model, env = spec.model, spec.env
    oft = model.family == "openvla_oft"
    workflow, estimator = WORKFLOWS[algorithm]
    chunks = steps_per_forward(spec)
    tokens = model.action.chunk * model.action.dim
    token_len = model.action.dim if oft else tokens
    success = [t for t in env.rewards if t.source == "success"]
    srpo = algorithm == "srpo"
    shaped = tuple(t.name for t in env.rewards if not (srpo and t.source == "success"))
    suite = task_suite(spec)
    unnorm_key = model.unnorm_key or f"{suite}_vlagen"
    embodied_type = "openvla-oft" if oft else "openvla"
    training = spec.training
    # the package's process_input crops as its policy does (model.center_crop); the key says so
    crop = center_crop(model) is not None
    overrides: list[tuple[str, object]] = [
        ("data.dataset_type", "embodied"),
        ("data.train_batch_size", training.groups),
        ("data.val_batch_size", training.groups),
        ("data.max_prompt_length", 256),
        ("data.max_response_length", 128),
        ("algorithm.workflow_type", workflow),
        ("algorithm.adv_estimator", estimator),
        ("algorithm.gamma", 1.0),
        ("algorithm.lam", 1.0),
        ("algorithm.norm_adv_by_std_in_grpo", True),
        ("algorithm.use_kl_in_reward", False),
        ("algorithm.filter_groups.enable", algorithm in ("srpo", "dapo")),
    ]
    if algorithm == "dapo":
        overrides.append(("algorithm.filter_groups.metric", "seq_final_reward"))
    if srpo:
        overrides += [
            ("algorithm.embodied_sampling.filter_accuracy", True),
            ("algorithm.embodied_sampling.accuracy_lower_bound", 0.1),
            ("algorithm.embodied_sampling.accuracy_upper_bound", 0.9),
            ("algorithm.embodied_sampling.filter_truncated", False),
        ]
    package = spec.project.import_name
    overrides += [
        ("dag.custom_pipeline_fn", f"{package}.targets.siirl.pipeline:pipeline"),
        ("reward_model.reward_manager", "embodied"),
        ("reward_model.reward_kwargs.action_token_len", token_len),
        ("reward_model.reward_kwargs.reward_coef", success[0].weight if success else 1.0),
        ("actor_rollout_ref.model.model_type", "embodied"),
        ("actor_rollout_ref.model.trust_remote_code", True),
        ("actor_rollout_ref.model.enable_gradient_checkpointing", True),
        ("actor_rollout_ref.actor.optim.lr", training.learning_rate),
        ("actor_rollout_ref.actor.optim.weight_decay", 0.0),
        ("actor_rollout_ref.actor.ppo_mini_batch_size", training.groups // training.mini_batches),
        ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", MICRO_BATCH),
        ("actor_rollout_ref.actor.traj_mini_batch_size", traj_mini_batch(trajectory_length(spec))),
        ("actor_rollout_ref.actor.grad_clip", 1.0),
        ("actor_rollout_ref.actor.clip_ratio_low", 0.2),
        ("actor_rollout_ref.actor.clip_ratio_high", 0.28),
        ("actor_rollout_ref.actor.clip_ratio_c", CLIP_RATIO_C),
        ("actor_rollout_ref.actor.entropy_coeff", 0.0),
        ("actor_rollout_ref.rollout.name", "hf"),
        ("actor_rollout_ref.rollout.n", training.group_size),
        ("actor_rollout_ref.rollout.do_sample", True),
        ("actor_rollout_ref.rollout.temperature", TEMPERATURE),
        ("actor_rollout_ref.rollout.prompt_length", 256),
        ("actor_rollout_ref.embodied.embodied_type", embodied_type),
        ("actor_rollout_ref.embodied.action_token_len", token_len),
        ("actor_rollout_ref.embodied.action_chunks_len", chunks),
        ("actor_rollout_ref.embodied.center_crop", crop),
        ("actor_rollout_ref.embodied.unnorm_key", unnorm_key),
        ("actor_rollout_ref.embodied.env.env_name", suite),
        ("actor_rollout_ref.embodied.env.num_envs", envs_key(spec)),
        ("actor_rollout_ref.embodied.env.max_steps", max_steps(spec)),
        ("actor_rollout_ref.embodied.env.num_steps_wait", 0),
        ("actor_rollout_ref.embodied.env.model_family", "openvla"),
        ("trainer.project_name", spec.project.name),
        ("trainer.experiment_name", f"{spec.project.name}-{algorithm}"),
        ("trainer.logger", ["console", "tensorboard"]),
        ("trainer.val_before_train", False),
        ("trainer.resume_mode", "auto"),
        ("trainer.save_freq", SAVE_FREQ),
    ]
    if oft:  # only OFT's vision backbone reads it (openvla: one camera, the default)
        cameras = len(model.cameras or ())
        overrides.append(("actor_rollout_ref.embodied.num_images_in_input", cameras))
    if model.lora is not None:  # siiRL's LoraConfig: rank, alpha, target modules, no dropout
        overrides += [
            ("actor_rollout_ref.model.lora_rank", model.lora.rank),
            ("actor_rollout_ref.model.lora_alpha", float(model.lora.alpha)),
            ("actor_rollout_ref.model.target_modules", model.lora.target_modules),
        ]
    runtime = (
        "data.train_files",
        "data.val_files",
        "actor_rollout_ref.model.path",
        *(("actor_rollout_ref.embodied.video_embedding_model_path",) if srpo else ()),
        "trainer.default_local_dir",
        "trainer.nnodes",
        "trainer.n_gpus_per_node",
        "actor_rollout_ref.embodied.n_gpus_per_node",  # the same value: the env's GPU ids
        "trainer.total_epochs",
    )
    own = spec.targets[index].config or {}
    overrides = [(k, v) for k, v in overrides if k not in own] + list(own.items())
    keys = {k for k, _ in overrides} | set(runtime)
    problems = override_problems(overrides, list(runtime))
    if problems:  # a bug in this module, caught before any file is written
        raise RuntimeError(f"siiRL 0.2's dataclasses reject {'; '.join(problems)}")
    return SiirlPlan(
        embodied_type=embodied_type,
        workflow_type=workflow,
        adv_estimator=estimator,
        action_token_len=token_len,
        action_chunks_len=chunks,
        trajectory_length=trajectory_length(spec),
        max_steps=max_steps(spec),
        backend_steps_per_step=backend_steps_per_step(spec),
        tokens_per_forward=tokens,
        task_suite=suite,
        unnorm_key=unnorm_key,
        camera_keys=_camera_keys(spec),
        shaped_terms=shaped,
        nodes=_chain(algorithm),
        overrides=tuple(overrides),
        derived=derived_batch(spec),
        runtime_keys=runtime,
        read_elsewhere={k: v for k, v in sorted(READ_ELSEWHERE.items()) if k in keys},
        harness=harness_overrides(spec),
        # the example trains on LIBERO: a map onto it helps LIBERO specs only
        example=example_rows(tuple(overrides), runtime) if env.preset == "libero" else (),
        image_grid=image_grid(spec),
    )


def image_grid(spec: Spec) -> tuple[int, int, int] | None:
    """The ``image_grid_thw`` row of each camera image on a processor backbone (every image
    is resized to ``model.image_size``), else None."""
    backbone = BACKBONES[spec.model.backbone]
    if not backbone.processor:
        return None
    height, width = spec.model.image_size
    return (1, height // backbone.patch, width // backbone.patch)


def override_problems(overrides: list[tuple[str, object]], runtime: list[str]) -> list[str]:
    """Keys siiRL 0.2's dataclasses would silently drop, and values of the wrong type."""
    schema = load_schema(SCHEMA)
    problems = [f"{k} (no such key)" for k in runtime if lookup(schema, k) is None]
    for key, value in overrides:
        kind = lookup(schema, key)
        if kind is None:
            problems.append(f"{key} (no such key)")
        elif not value_fits(kind, value):
            problems.append(f"{key}={value!r} (siiRL expects {kind})")
    return problems


#: Where siiRL 0.2.0's embodied actor (``engine/actor/embodied_actor.py``) fixes each number
#: of its OpenVLA-OFT path, with the numbers' lines: the log-probs and entropies reshaped to
#: ``(batch, traj_len*8, 7)`` and masked over ``traj_len*8`` steps, the 256 bins before the
#: last 64 logits, the asserted vocabulary. The rollout's OFT decoding is siiRL's vendored
#: model's own ``generate_action_verl``, which the package does not replace.
OFT_ACTOR = "engine/actor/embodied_actor.py"
OFT_FIXED = {
    "dim": (7, (155, 156, 290)),
    "chunk": (8, (155, 156, 158, 290, 291)),
    "bins": (256, (144, 145, 210, 211, 282, 283)),
    "vocab_size": (32000, (143, 209, 281)),
}

#: Where siiRL 0.2.0 needs a Hugging Face checkpoint before any model is built: its workers'
#: ``load_tokenizer`` (``AutoConfig`` and ``AutoTokenizer`` of ``model.path``), called from the
#: FSDP worker's ``init_model`` and the DAG worker, and the embodied rollout's processor.
CHECKPOINT_LOADS = (
    ("engine/fsdp_workers.py", 1163),
    ("models/loader.py", 70),
    ("models/loader.py", 89),
    ("dag_worker/dagworker.py", 784),
    ("engine/rollout/embodied_rollout.py", 189),
)
CUSTOM_NOTE = (
    "siiRL 0.2.0's workers load the checkpoint's Hugging Face config, tokenizer and processor "
    "before any model is built (load_tokenizer's AutoConfig and AutoTokenizer of model.path, "
    "and AutoProcessor in the embodied rollout: "
    + "; ".join(f"{file}:{line}" for file, line in CHECKPOINT_LOADS)
    + "), and its openvla rollout masks responses at the tokenizer's EOS "
    "(engine/rollout/embodied_rollout.py:611): a custom module's checkpoint has no tokenizer. "
    "Use a token family (openvla, waypoint) on siiRL, or another target (rlinf)"
)
#: peft's ``get_peft_model(model, LoraConfig(task_type=CAUSAL_LM, ...))`` on the loaded model.
PEFT_WRAP = ("engine/fsdp_workers.py", 893)


def _mini_batch_fix(t: Training, workers: int) -> str:
    """Mini-batches whose trajectories split evenly over ``workers`` ranks: fewer, else more
    groups."""
    n = t.group_size
    fit = [m for m in range(t.mini_batches, 0, -1) if t.groups % m == 0]
    fit = [m for m in fit if (t.groups // m * n) % workers == 0]
    if fit:
        return f"set mini_batches to {fit[0]}"
    return (
        f"set groups to {next_multiple(t.groups, t.mini_batches * workers // math.gcd(workers, n))}"
    )


def _lines(numbers: tuple[int, ...]) -> str:
    return ", ".join(map(str, numbers))


def siirl_checks(spec: Spec, index: int) -> Iterator[Issue]:
    """What siiRL 0.2.0's embodied code cannot run, as plan-time errors naming the restriction
    and what would lift it."""
    model, env = spec.model, spec.env
    where = f"siiRL 0.2 (targets[{index}])"
    family = model.family
    if family == "openvla_oft":
        got = {
            "dim": model.action.dim,
            "chunk": model.action.chunk,
            "bins": model.action.bins,
            "vocab_size": model.vocab_size,
        }
        wrong = [
            f"{name} {got[name]} (siiRL fixes {fixed} at {OFT_ACTOR}:{_lines(lines)})"
            for name, (fixed, lines) in OFT_FIXED.items()
            if got[name] != fixed
        ]
        if wrong:
            yield Issue(
                ("model", "action"),
                f"{where} trains openvla_oft only as 7-D actions in chunks of 8 over 256 bins "
                f"of a 32000-token vocabulary, fixed in siiRL 0.2.0's actor, not in this "
                f"package: it reshapes log-probs to (batch, traj_len*8, 7), masks traj_len*8 "
                f"steps, slices logits[..., -256-64:-64] and asserts vocab_size == 32000; got "
                f"{'; '.join(wrong)}. Use family openvla (one decision per forward, any dim) "
                "for other shapes",
            )
    elif family == "openvla" and model.action.chunk != 1:
        yield Issue(
            ("model", "action", "chunk"),
            f"{where} decodes one openvla action per forward pass (embodied_rollout.py expands "
            f"it to a 1-step chunk); set chunk: 1 or use openvla_oft (7 x 8), got chunk "
            f"{model.action.chunk}",
        )
    if model.lora is not None and BACKBONES[model.backbone].processor:
        file, line = PEFT_WRAP
        yield Issue(
            ("model", "lora"),
            f"{where} applies LoRA itself, get_peft_model(model, TaskType.CAUSAL_LM) on the "
            f"loaded model ({file}:{line}): peft's causal-LM wrapper needs a transformers "
            f"model's generation hooks, and on {model.backbone} that model is this package's "
            "siiRL adapter (targets/siirl/model.py); remove model.lora for this target",
        )
    if env.action.kind == "discrete":
        yield Issue(
            ("env", "action", "kind"),
            f"{where} decodes the action tokens itself to OpenVLA's bin centres "
            "(embodied_rollout.py: bins - 1 values for the bins ids), which cannot give a "
            "discrete action one token per choice; use a continuous action kind, or another "
            "target",
        )
    prismatic = not BACKBONES[model.backbone].processor  # siiRL's own model, not the package's
    if prismatic and family in ("openvla", "waypoint") and len(model.cameras or ()) > 1:
        yield Issue(
            ("model", "cameras"),
            f"{where} feeds one image to {family} models on its Prismatic code (only "
            "OpenVLA-OFT's backbone takes num_images_in_input > 1); list one camera in "
            "model.cameras, or use a Qwen-VL backbone (model.backbone), whose images the "
            "package lays out",
        )
    if model.use_state:
        yield Issue(
            ("model", "use_state"),
            f"{where}'s embodied rollout passes images and the prompt only, never the state; "
            "set use_state: false for this target",
        )
    algorithm = spec.targets[index].algorithm
    if algorithm == "gae":
        yield Issue(
            ("targets", index, "algorithm"),
            f"{where}: gae (PPO) needs siiRL's critic, whose CriticWorker has no embodied path "
            "in 0.2.0; use grpo, dapo or srpo",
        )
    if algorithm == "srpo" and not any(t.source == "success" for t in env.rewards):
        yield Issue(
            ("env", "rewards"),
            f"{where}: srpo rewards success (siiRL's embodied reward manager, scaled by the "
            "success term's weight); add a term with source: success",
        )
    t = spec.training
    n, workers = t.group_size, world_size(spec)
    if t.in_flight % (workers * n):
        fix = split_fix(t, workers * n)
        yield Issue(
            ("training", "envs" if t.envs is not None else "groups"),
            f"{where} steps the envs in its {workers} rollout workers (one per GPU), each "
            "running num_envs // rollout.n of its rows at once and asserting num_envs >= "
            "rollout.n (generate_sequences, engine/rollout/embodied_rollout.py): its "
            f"{t.in_flight} envs must split into whole groups of {n} per worker: {fix}",
        )
    if t.groups % t.mini_batches == 0 and (t.groups // t.mini_batches * n) % workers:
        yield Issue(
            ("training", "mini_batches"),
            f"{where} normalizes actor.ppo_mini_batch_size (groups / mini_batches = "
            f"{t.groups // t.mini_batches} prompts) to trajectories per rank: x rollout.n "
            f"({n}), then // its {workers} actor ranks (ActorRolloutRefWorker.__init__, "
            "engine/fsdp_workers.py), and each rank's actor splits its trajectories into "
            "mini-batches of that size (embodied_actor.update_policy): unless it divides "
            f"evenly an update takes another number of optimizer steps than {t.mini_batches}, "
            f"or none at all (siiRL asserts it positive): {_mini_batch_fix(t, workers)}",
        )
    if model.lora is not None and model.lora.dropout:
        yield Issue(
            ("model", "lora", "dropout"),
            f"{where} builds its LoraConfig from rank, alpha and target modules only "
            f"(engine/fsdp_workers.py), so LoRA dropout {model.lora.dropout} would be ignored; "
            "set dropout: 0",
        )
    if model.lora is not None and model.lora.target_modules != "all-linear":
        yield Issue(
            ("model", "lora", "target_modules"),
            f"{where} types model.target_modules as a string (params/model_args.py); use "
            "target_modules: all-linear",
        )
    length = trajectory_length(spec)
    if traj_mini_batch(length) is None:
        yield Issue(
            ("env", "max_episode_steps"),
            f"{where}'s actor backpropagates each trajectory in pieces of traj_mini_batch_size "
            f"steps, which must divide its length (embodied_actor.update_policy asserts it); "
            f"{length} forward passes per episode have no divisor from 2 to {TRAJ_MINI_BATCH}. "
            f"pick max_episode_steps so that it has one, e.g. "
            f"{_nearest_divisible(length) * decision_steps(spec)}",
        )
    suite = task_suite(spec)
    per_worker = max(t.in_flight // workers, 1)
    longest = len(f"{suite}_task_999_trial_9999_s{per_worker - 1}".encode())
    if longest > TASK_FILE_NAME_BYTES:
        yield Issue(
            ("env", "task_suite") if env.task_suite else ("project", "name"),
            f"{where} packs '<suite>_task_<id>_trial_<id>_s<env>' into "
            f"{TASK_FILE_NAME_BYTES} bytes; "
            f"the suite name {suite!r} is {len(suite.encode())} bytes, at most "
            f"{TASK_FILE_NAME_BYTES - longest + len(suite.encode())} fit",
        )


def siirl_resources(spec: Spec, index: int) -> Iterator[Issue]:
    yield from unhonoured_resources(
        spec,
        index,
        "siiRL 0.2",
        "its embodied rollout steps the envs inside each rollout worker, on the GPUs of "
        "resources.nodes x gpus_per_node (engine/rollout/embodied_rollout.py), with no env "
        "nodes or pipeline stages of their own",
    )


#: siiRL 0.2.0's contract (files under ``siirl/``): the env as ``EmbodiedHFRollout`` builds and
#: drives its ``LIBEROAdapter`` (``engine/rollout/embodied_rollout.py``; the async methods are
#: ``BaseVLAEnvironment``'s abstract ones, ``environment/embodied/base.py``, which nothing
#: calls), the rollout methods the package overrides, and the keys the rollout reads from each
#: env's result dict and, in ``_obs_to_input``, from its ``obs`` (LIBERO's raw layout).
CONTRACT = Contract(
    summary="BaseVLAEnvironment (async reset/step); the rollout calls "
    "_blocking_reset/_blocking_step",
    env=Side(
        base="siirl.environment.embodied.base.BaseVLAEnvironment",
        methods=(
            Method(
                "__init__",
                "(*, env_name, num_envs, max_steps, num_steps_wait, model_family, gpu_ids)",
            ),
            Method("_blocking_reset", "(*, task_ids, trial_ids)", "list[dict] (one per env)"),
            Method(
                "_blocking_step",
                "({actions[B, C, A], indices})",
                "list[dict | None] (one per env; None where not active)",
            ),
            Method("close", "()"),
            Method("reset", "()", "dict", is_async=True),
            Method(
                "step",
                "(action: dict)",
                "(obs, reward, terminated, truncated, info)",
                is_async=True,
            ),
        ),
    ),
    policy=Side(
        base="siirl.engine.rollout.embodied_rollout.EmbodiedHFRollout (the model is siiRL's "
        "own OpenVLA / OpenVLA-OFT)",
        methods=(
            Method("__init__", "(module, config)"),
            Method("_obs_to_input", "(obs)", "dict"),
            Method(
                "process_input",
                "(inputs, task_descriptions)",
                "{input_ids, attention_mask, pixel_values}",
            ),
            Method(
                "_generate_chunk_rollout",
                "(prompts)",
                "TensorDict {responses, input_ids, attention_mask, pixel_values, complete, "
                "finish_step, task_file_name, vjepa_embedding}",
            ),
        ),
    ),
    observation=(
        "obs",
        "task_description",
        "task_file_name",
        "active",
        "complete",
        "finish_step",
        "valid_images",
        "obs.agentview_image",
        "obs.robot0_eye_in_hand_image",
        "obs.robot0_eef_pos",
        "obs.robot0_eef_quat",
        "obs.robot0_gripper_qpos",
    ),
    registration=Registration(
        env="none: EmbodiedHFRollout builds a hard-coded LIBEROAdapter; the module's "
        "LIBEROAdapter and EmbodiedHFRollout are replaced at run time",
        model="none: embodied_type openvla or openvla-oft, hard-coded branches (fsdp_workers, "
        "embodied_rollout, embodied_actor)",
        hook="Ray worker_process_setup_hook, patching siirl.engine.rollout.embodied_rollout when "
        "it is imported",
    ),
    config_snapshot=SCHEMA,
)


TARGET = TargetDecl(
    framework="siirl",
    version="0.2",
    title="siiRL",
    requirement="siirl==0.2.0",
    algorithms=ALGORITHMS,
    model_families=("openvla", "openvla_oft", "waypoint"),
    family_notes={"custom": CUSTOM_NOTE},
    backbones=("llava", "qwen2_5_vl", "qwen3_vl"),
    contract=CONTRACT,
    checks=(siirl_checks, siirl_resources),
    templates="siirl_0_2",
    planner=make_siirl_plan,
    config_keys=lambda: load_schema(SCHEMA),
    derived=lambda spec, index: derived_batch(spec),
    # Imported by siiRL's embodied rollout, env package and embodied reward (DBSCAN over V-JEPA
    # embeddings; without it the reward manager's compute_score is None) but not declared.
    runtime_requirements=("tensorflow", "gymnasium", "cloudpickle", "scikit-learn"),
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
