"""The siiRL plan: the CLI overrides a spec gives (checked against siiRL's dataclasses), the
batch keys it derives and where each came from, and what the templates lay out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...backbones import BACKBONES
from ...batch import Derived
from ...modelplan import center_crop
from ..common.placement import gpu_count
from .layout import READ_ELSEWHERE, override_problems
from .pipeline import PipelineNode, chain
from .reference import gradient_checkpointing, sampling_temperature
from .trajectory import (
    TRAJ_MINI_BATCH,
    backend_steps_per_step,
    max_steps,
    steps_per_forward,
    traj_mini_batch,
    trajectory_length,
)

if TYPE_CHECKING:
    from ...spec import Spec

#: ``embodied_actor.update_policy`` forwards only the first trajectory of a micro-batch.
MICRO_BATCH = 1
#: Dual-clip PPO's lower bound on negative-advantage ratios: siiRL's default is 3.0
#: (``params/model_args.py``, applied in ``core_algos.compute_policy_loss_vanilla``); its SRPO
#: scripts (``examples/embodied_srpo_trainer/run_openvla_oft_libero_*.sh``) set 10000, i.e.
#: no dual clip, and so does this plan.
CLIP_RATIO_C = 10000.0
#: Checkpoint every this many steps (siiRL's SRPO scripts); its default -1 never saves.
SAVE_FREQ = 5
#: Checkpoints kept (the script's ``MAX_CKPT_KEEP``): siiRL's checkpoint manager deletes the
#: older ones (``getattr(config.trainer, f"max_{role}_ckpt_to_keep", ...)``, default 100).
CKPT_KEEP = 5

#: (workflow_type, adv_estimator) per algorithm.
WORKFLOWS = {
    "grpo": ("default", "grpo"),
    "dapo": ("dapo", "grpo"),
    "srpo": ("embodied", "grpo"),
    "gae": ("default", "gae"),
}


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
    #: A processor backbone's ``image_grid_thw`` row per camera image, ``(1, H / patch, W /
    #: patch)``; None: siiRL loads its own Prismatic model (llava backbone)
    image_grid: tuple[int, int, int] | None = None
    #: siiRL's rollout loads its V-JEPA 2 video model (``srpo`` only: its reward clusters the
    #: trajectories' embeddings; the package's rollout skips the model for the others)
    uses_video_model: bool = False

    @property
    def ckpt_keep(self) -> int:
        """Checkpoints siiRL keeps (``trainer.max_actor_ckpt_to_keep``)."""
        return int(dict(self.overrides)["trainer.max_actor_ckpt_to_keep"])

    @property
    def own_model(self) -> bool:
        """siiRL's FSDP worker loads this package's policy (``targets/siirl/model.py``, put in
        by ``glue.py``), not its bundled OpenVLA (Prismatic) classes: a processor backbone."""
        return self.image_grid is not None

    @property
    def flash_attention_kernels(self) -> bool:
        """siiRL runs flash-attention's kernels: its own loader opens ``embodied_type=openvla``
        checkpoints with ``attn_implementation="flash_attention_2"`` fixed in its code
        (``engine/fsdp_workers.py``); OpenVLA-OFT's and the package's (:attr:`own_model`) do
        not."""
        return self.embodied_type == "openvla" and not self.own_model

    @property
    def flash_attention_reason(self) -> str:
        """Why flash-attn must be installed for siiRL 0.2 whatever the model: its actor
        package imports flash-attn's padding helpers at import (``engine/actor/__init__.py``
        imports ``embodied_actor.py``, whose top imports ``flash_attn.bert_padding``), though
        the embodied path never calls them."""
        imports = (
            "siiRL's actor imports flash-attn's padding helpers when it loads "
            "(siirl/engine/actor/embodied_actor.py), whatever the model"
        )
        if self.flash_attention_kernels:
            return (
                "siiRL loads OpenVLA (Prismatic) checkpoints with "
                'attn_implementation="flash_attention_2" fixed in its code '
                f"(siirl/engine/fsdp_workers.py), and {imports}"
            )
        model = "this package's model" if self.own_model else "siiRL's OpenVLA-OFT loader"
        return f"{imports}, though {model} does not run its kernels"

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


def task_suite(spec: Spec) -> str:
    """The name siiRL's manifest and ``embodied.env.env_name`` carry for the spec's tasks."""
    return spec.env.task_suite or spec.project.import_name


def camera_keys(spec: Spec) -> tuple[tuple[str, str], ...]:
    """Where each model camera sits in the adapter's observation: LIBERO's raw keys for the
    main and wrist cameras (so siiRL's own ``_obs_to_input`` reads them), ``<name>_image``
    for the others."""
    roles = {c.name: c.role for c in spec.env.cameras}
    keys = {"main": "agentview_image", "wrist": "robot0_eye_in_hand_image"}
    cameras = spec.model.cameras or ()
    return tuple((name, keys.get(roles[name], f"{name}_image")) for name in cameras)


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


def env_pool(spec: Spec) -> int:
    """Envs of one rollout worker's pool: its share of ``training.envs`` (one worker per GPU),
    which the package's rollout builds (``num_envs // rollout.n``)."""
    return spec.training.in_flight // gpu_count(spec)


def envs_key(spec: Spec) -> int:
    """``embodied.env.num_envs``: siiRL's rollout runs ``num_envs // rollout.n`` of a worker's
    rows (each prompt already repeated ``rollout.n`` times) at once, so the worker's pool
    (:func:`env_pool`) times ``rollout.n``."""
    return env_pool(spec) * spec.training.group_size


def derived_batch(spec: Spec) -> tuple[Derived, ...]:
    """siiRL's batch keys, each with where it comes from in the spec's training block."""
    t, workers = spec.training, gpu_count(spec)  # a rollout worker per GPU
    envs = "training.envs" if t.envs is not None else "training.groups x group_size"
    return (
        Derived("data.train_batch_size", t.groups, "training.groups"),
        Derived(
            "data.val_batch_size",
            env_pool(spec),
            f"the env pool of a rollout worker ({envs} over {workers} workers): each rank's "
            "loader takes data.val_batch_size rows, not split over ranks "
            "(data_loader_node.py), and siiRL's validation sets no n_samples "
            "(dag_worker/validator.py), so its rollout steps them all at once",
        ),
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


def derived_settings(spec: Spec) -> tuple[Derived, ...]:
    """siiRL's keys beyond the batch that follow from the training block (with
    :func:`derived_batch`, what a spec's ``targets[i].config`` may not set)."""
    t = spec.training
    return (
        Derived("actor_rollout_ref.actor.optim.lr", t.learning_rate, "training.learning_rate"),
        Derived(
            "actor_rollout_ref.rollout.temperature",
            sampling_temperature(spec),
            "training.temperature"
            if t.temperature is not None
            else "training.temperature, default siiRL's SRPO scripts'",
        ),
        Derived(
            "actor_rollout_ref.model.enable_gradient_checkpointing",
            gradient_checkpointing(spec),
            "training.gradient_checkpointing"
            if t.gradient_checkpointing is not None
            else "training.gradient_checkpointing, default siiRL's SRPO scripts'",
        ),
        Derived("trainer.seed", t.seed, "training.seed"),
    )


def make_siirl_plan(spec: Spec, index: int) -> SiirlPlan:
    """The siiRL plan of a resolved spec that passed :func:`~.checks.siirl_checks`."""
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
        ("data.val_batch_size", env_pool(spec)),
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
        ("actor_rollout_ref.model.enable_gradient_checkpointing", gradient_checkpointing(spec)),
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
        ("actor_rollout_ref.rollout.temperature", sampling_temperature(spec)),
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
        ("trainer.max_actor_ckpt_to_keep", CKPT_KEEP),
        ("trainer.seed", training.seed),
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
    if problems:  # a bug in this plan, caught before any file is written
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
        camera_keys=camera_keys(spec),
        shaped_terms=shaped,
        nodes=chain(algorithm),
        overrides=tuple(overrides),
        derived=derived_batch(spec),
        runtime_keys=runtime,
        read_elsewhere={k: v for k, v in sorted(READ_ELSEWHERE.items()) if k in keys},
        harness=harness_overrides(spec),
        image_grid=image_grid(spec),
        uses_video_model=srpo,
    )


def image_grid(spec: Spec) -> tuple[int, int, int] | None:
    """The ``image_grid_thw`` row of each camera image on a processor backbone (every image
    is resized to ``model.image_size``), else None."""
    backbone = BACKBONES[spec.model.backbone]
    if not backbone.processor:
        return None
    height, width = spec.model.image_size
    return (1, height // backbone.patch, width // backbone.patch)
