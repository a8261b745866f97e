"""What RLinf 0.2 and 0.3 share: the plan, the config layout and ``validate_embodied_cfg``'s rules.

RLinf has no env base class and no env registry: ``SupportedEnvType`` (an Enum) is checked in
``validate_embodied_cfg``, ``get_env_cls`` and ``prepare_actions``, and ``get_env_cls`` is an
if/elif chain. Models register through ``register_model`` since 0.3.0 and are an Enum
(``SupportedModel``) with an if/elif ``get_model`` in 0.2. The generated ``register.py`` adds
the package's env and model under their own type names in every process (``RLINF_EXT_MODULE``)
without editing RLinf; this module computes the names, the config and the checks.

The config is built here as data, in the layout of RLinf's own example configs
(``rlinf_<version>.config.json``, see :mod:`._rlinf_snapshot`), and checked against it before
anything is written: every example key is present with a value of the same type, except the
simulator- and model-specific ones in :data:`NOT_MIRRORED`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..backbones import BACKBONES
from ..batch import Derived, comments, largest_divisor, next_multiple, split_fix
from ..contracts import Contract, Method, Registration, Side
from ..errors import Issue
from ..families import FAMILIES
from . import TargetDecl, WarningFilter, decision_steps, unhonoured_resources
from ._config_schema import load_schema, set_keys

if TYPE_CHECKING:
    from ..spec import Spec

#: RLinf 0.3.0's contract (files under ``rlinf/``): the env side as ``EnvWorker`` builds and
#: drives it (``workers/env/env_worker.py``), the policy side as the HuggingFace rollout
#: (``workers/rollout/hf/huggingface_worker.py``, ``predict``) and the actor
#: (``workers/actor/fsdp_actor_worker.py``) call a model type they do not list, the
#: observation keys ``EnvOutput.prepare_observations`` keeps (``data/embodied_io_struct.py``).
RLINF_0_3_CONTRACT = Contract(
    summary="env class with reset() and chunk_step(actions[N, C, A]); BasePolicy with "
    "predict_action_batch/default_forward",
    env=Side(
        base="duck-typed (no env base class; a gymnasium.Env by convention)",
        methods=(
            Method("__init__", "(*, cfg, num_envs, seed_offset, total_num_processes, worker_info)"),
            Method("reset", "()", "(obs, infos)"),
            Method(
                "chunk_step",
                "(chunk_actions[N, C, A])",
                "(obs_list, rewards[N, C], terminations[N, C], truncations[N, C], infos_list)",
            ),
            Method("update_reset_state_ids", "()"),
            Method("offload", "()", required=False),  # with env.*.enable_offload only
        ),
    ),
    policy=Side(
        base="rlinf.models.embodiment.base_policy.BasePolicy",
        methods=(
            Method(
                "predict_action_batch",
                "(*, env_obs, do_sample, temperature, top_k, top_p, max_new_tokens)",
                "(actions[B, C, A], {prev_logprobs, prev_values, forward_inputs})",
            ),
            Method(
                "default_forward",
                "(*, forward_inputs, compute_logprobs, compute_entropy, compute_values, use_cache)",
                "{logprobs, values, entropy}",
            ),
            # BasePolicy's optional overrides (each raises NotImplementedError by default)
            *(
                Method(name, "(**kwargs)", "", required=False)
                for name in ("sac_forward", "sac_q_forward", "crossq_forward", "crossq_q_forward")
            ),
            Method("iql_forward", "(**kwargs)", "", required=False),
            Method("prepare_dagger_sft_batch", "(batch)", "", required=False),
        ),
    ),
    observation=("main_images", "wrist_images", "extra_view_images", "states", "task_descriptions"),
    registration=Registration(
        env="SupportedEnvType Enum + if/elif get_env_cls, patched at run time (a value added to "
        "the Enum, get_env_cls wrapped); prepare_actions passes unlisted env types through",
        model="rlinf.models.register_model(model_type, builder, category='embodied')",
        hook="RLINF_EXT_MODULE, whose register() load_user_extension_module "
        "(scheduler/cluster/utils.py) calls in every Ray worker, not in the driver",
    ),
    config_snapshot="rlinf_0_3",
)
#: RLinf 0.2: the same env, observation and policy calls; ``BasePolicy`` without 0.3's
#: ``iql_forward`` and ``prepare_dagger_sft_batch``; models a closed Enum
#: (``config.py``) with an if/elif ``get_model`` (``models/__init__.py``); ``prepare_actions``
#: raises ``NotImplementedError`` for env types it does not list (``envs/action_utils.py``).
RLINF_0_2_CONTRACT = replace(
    RLINF_0_3_CONTRACT,
    policy=replace(
        RLINF_0_3_CONTRACT.policy,
        methods=tuple(
            m
            for m in RLINF_0_3_CONTRACT.policy.methods
            if m.name not in ("iql_forward", "prepare_dagger_sft_batch")
        ),
    ),
    registration=Registration(
        env="SupportedEnvType Enum + if/elif get_env_cls and prepare_actions (which raises for "
        "unlisted env types), patched at run time (a value added to the Enum, get_env_cls and "
        "prepare_actions wrapped)",
        model="SupportedModel Enum + if/elif get_model, patched at run time (a value added to "
        "the Enum, get_model wrapped in rlinf.models and the rollout and actor workers)",
        hook="RLINF_EXT_MODULE, whose register() Worker._load_user_extensions "
        "(scheduler/worker/worker.py) calls in every Ray worker, not in the driver",
    ),
    config_snapshot="rlinf_0_2",
)

#: algorithm.adv_type → algorithm.loss_type, as RLinf's examples pair them.
LOSS_TYPES = {"gae": "actor_critic", "grpo": "actor", "grpo_dynamic": "actor", "reinpp": "actor"}
RLINF_ALGORITHMS = {
    "gae": "algorithm.adv_type=gae, loss_type=actor_critic (PPO; needs a value head)",
    "grpo": "algorithm.adv_type=grpo, loss_type=actor",
    "grpo_dynamic": "algorithm.adv_type=grpo_dynamic, loss_type=actor",
    "reinpp": "algorithm.adv_type=reinpp, loss_type=actor (REINFORCE++)",
}
#: What RLinf calls by other names: PPO is its ``gae`` advantage with the actor-critic loss
#: (rlinf/algorithms/advantages.py registers gae, grpo, grpo_dynamic, reinpp and raw).
RLINF_ALIASES = {"ppo": "gae", "reinforce++": "reinpp", "reinforce_plus_plus": "reinpp"}
GROUPED = ("grpo", "grpo_dynamic")  #: advantages over a group of rollouts of one task
#: Families whose Hub checkpoints are Prismatic models loaded through their ``auto_map``.
REMOTE_CODE_FAMILIES = ("openvla", "openvla_oft")

#: Example keys the generated config leaves out, by prefix, and why.
NOT_MIRRORED = {
    "cluster.component_placement.": "free-form: one placement per run, not a fixed layout",
    "env.train.init_params.": "LIBERO/ManiSkill constructor kwargs; our env reads the spec",
    "env.eval.init_params.": "LIBERO/ManiSkill constructor kwargs; our env reads the spec",
    "env.train.task_suite_name": "LIBERO",
    "env.eval.task_suite_name": "LIBERO",
    "env.train.reset_gripper_open": "LIBERO",
    "env.eval.reset_gripper_open": "LIBERO",
    "env.train.is_eval": "LIBERO",
    "env.eval.is_eval": "LIBERO",
    "env.train.specific_reset_id": "LIBERO",
    "env.eval.specific_reset_id": "LIBERO",
    "env.train.use_ordered_reset_state_ids": "LIBERO",
    "env.eval.use_ordered_reset_state_ids": "LIBERO",
    "env.train.use_step_penalty": "LIBERO",
    "env.eval.use_step_penalty": "LIBERO",
    "env.train.reward_coef": "LIBERO (our env weights the spec's reward terms)",
    "env.eval.reward_coef": "LIBERO (our env weights the spec's reward terms)",
    "env.train.use_rel_reward": "LIBERO/ManiSkill reward shaping",
    "env.eval.use_rel_reward": "LIBERO/ManiSkill reward shaping",
    "env.eval.policy_setup": "ManiSkill",
    "actor.model.policy_setup": "ManiSkill (prepare_actions' robot layout)",
    "actor.model.implement_version": "OpenVLA-OFT's own loader",
    "actor.model.center_crop": "OpenVLA-OFT's own loader",
    "actor.model.hidden_size": "OpenVLA-OFT's own loader",
    "actor.model.image_size": "OpenVLA-OFT's own loader",
    "actor.model.num_images_in_input": "OpenVLA-OFT's own loader",
    "actor.model.use_film": "OpenVLA-OFT's own loader",
    "actor.model.use_proprio": "OpenVLA-OFT's own loader",
    "actor.model.value_type": "OpenVLA-OFT's own loader",
    "actor.model.vocab_size": "OpenVLA-OFT's own loader",
    "algorithm.reward_coef": "LIBERO (interpolated into env.*.reward_coef)",
    # The package applies the spec's LoRA itself (see make_rlinf_plan), so is_lora is false
    # and RLinf's get_model, the only reader of these two, never reads them.
    "actor.model.lora_rank": "read by RLinf's get_model only when is_lora",
    "actor.model.lora_path": "read by RLinf's get_model only when is_lora",
    "actor.model.unnorm_key": "read by RLinf's own OpenVLA builders; our policy core has "
    "the spec's unnorm_key",
    "actor.model.low_cpu_mem_usage": "read by RLinf's own OpenVLA builders only",
    # Read by nothing on the embodied launch path (the generated fidelity test records the
    # reads of RLinf's env, rollout and actor workers): left out, so no key only looks set.
    "algorithm.normalize_advantages": "read only by the env worker's training pipeline "
    "(runner.use_training_pipeline), which this package does not use",
    "algorithm.kl_penalty": "read by RLinf's reasoning actor only",
    "algorithm.kl_beta": "read by RLinf's reasoning actor only",
    "algorithm.loss_agg_func": "read by RLinf's reasoning actor only",
    "algorithm.clip_ratio_c": "passed to the loss for GR00T N1.6/N1.7 only",
    "algorithm.rewards_lower_bound": "read only with algorithm.filter_rewards: true",
    "algorithm.rewards_upper_bound": "read only with algorithm.filter_rewards: true",
    "rollout.backend": "read by RLinf's reasoning launchers; the embodied entry builds the "
    "HuggingFace rollout worker directly",
    "rollout.generation_backend": "read by RLinf's reasoning launchers only",
    # Only defaulted by validate_fsdp_cfg; read by strategy/fsdp2.py, not under strategy: fsdp.
    "actor.fsdp_config.reshard_after_forward": "read only by RLinf's fsdp2 strategy",
    "actor.fsdp_config.offload_pin_memory": "read only by RLinf's fsdp2 strategy",
    "actor.fsdp_config.use_liger_kernel": "read only when RLinf builds one of its own "
    "HuggingFace models (FSDPModelManager.model_provider_func); get_model builds ours",
    # Only defaulted by validate_rollout_cfg; the embodied HuggingFace rollout never passes it.
    "rollout.sampling_params.repetition_penalty": "passed by RLinf's sglang/vllm rollouts only",
    "algorithm.sampling_params.repetition_penalty": "passed by RLinf's sglang/vllm rollouts only",
}
#: Config keys (or ``prefix.`` subtrees) that only code the generated fidelity test cannot
#: run reads: key → (the RLinf 0.3 file that reads it, why the test does not run it).
READ_ELSEWHERE: dict[str, tuple[str, str]] = {
    "cluster.num_nodes": ("scheduler/cluster/cluster.py", "starts Ray's cluster"),
    "cluster.component_placement.": ("utils/placement.py", "places Ray worker groups"),
    "runner.logger.": ("utils/metric_logger.py", "EmbodiedRunner's logger (Ray groups)"),
    "runner.max_epochs": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "runner.max_steps": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "runner.save_interval": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "runner.resume_dir": ("runners/embodied_runner.py", "the loop over Ray worker groups"),
    "algorithm.entropy_type": (
        "workers/actor/fsdp_actor_worker.py",
        "read by train_micro_batch only with algorithm.entropy_bonus > 0",
    ),
    "env.train.video_cfg.": ("envs/wrappers/record_video.py", "video is off (save_video)"),
    "env.eval.video_cfg.": ("envs/wrappers/record_video.py", "video is off (save_video)"),
}
#: Prompt tokens besides a Qwen-VL prompt's image placeholders: the chat turn, the filled
#: template and any state tokens (see :func:`prompt_length`).
PROMPT_TEXT = 256
#: Loader options only a token family's backbone reads (a custom module takes none).
TOKEN_FAMILY_KEYS = ("actor.model.trust_remote_code", "actor.model.attn_implementation")
#: Value-loss settings: read by every actor step but used only by the actor_critic loss.
VALUE_LOSS = ("algorithm.value_clip", "algorithm.huber_delta")
#: Read only with a value head: its learning rate (build_optimizer); and, where envs also
#: auto-reset, how a truncated episode is bootstrapped from its value
#: (compute_bootstrap_rewards).
VALUE_LR, BOOTSTRAP = "actor.optim.value_lr", "algorithm.bootstrap_type"


@dataclass(frozen=True)
class RlinfVersion:
    """Where an RLinf version line puts what the adapter touches."""

    schema: str  #: the config layout snapshot
    model_registry: str  #: ``register_model`` (0.3) or ``enum`` (0.2's closed SupportedModel)
    io_struct: str  #: the module of ``EnvOutput``
    sampling_params_under: str  #: ``rollout`` (0.3) or ``algorithm`` (0.2)
    rollout_epoch_under_env: bool  #: ``env.*.rollout_epoch`` (0.3) or ``algorithm.*`` (0.2)
    weight_syncer: bool  #: 0.3's ``weight_syncer`` group
    prepare_actions_passes_unknown: bool  #: 0.2's ``prepare_actions`` raises for other types
    fidelity_harness: bool  #: the generated tests drive this version's workers on CPU
    ext_loader_in_worker: bool  #: 0.2 loads RLINF_EXT_MODULE in a Worker method, 0.3 in a function


@dataclass(frozen=True)
class CameraKey:
    name: str  #: the spec's camera
    key: str  #: main_images | wrist_images | extra_view_images
    index: int | None  #: position in extra_view_images


@dataclass(frozen=True)
class RlinfPlan:
    version: RlinfVersion
    env_type: str
    model_type: str
    loss_type: str
    cameras: tuple[CameraKey, ...]
    num_action_chunks: int
    action_dim: int
    total_num_envs: int
    env_group_size: int
    rollout_epoch: int
    decisions_per_episode: int
    max_prompt_length: int
    config: dict[str, Any]  #: the Hydra YAML, as data
    derived: tuple[Derived, ...]  #: the batch keys and where each came from
    own: tuple[str, ...]  #: the keys the spec's ``targets[i].config`` sets
    world_size: int  #: GPUs training needs (:func:`world_size`)
    #: Hydra overrides that run it on one GPU (see :func:`one_gpu_overrides`).
    one_gpu_overrides: tuple[str, ...]
    #: ``<part>/<name>`` of the template folder this version does not use
    omitted_templates: tuple[str, ...] = ()
    #: Config keys only code that cannot run on CPU reads: key → (RLinf file, why).
    read_elsewhere: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def comments(self) -> Mapping[str, str]:
        """End-of-line comments of the config: where each batch key came from."""
        return comments(self.derived, self.own)

    @property
    def camera_tuples(self) -> tuple[tuple[str, str, int | None], ...]:
        return tuple((c.name, c.key, c.index) for c in self.cameras)

    @property
    def one_gpu_args(self) -> str:
        """:attr:`one_gpu_overrides` as shell words (the braces and ``~`` quoted)."""
        return " ".join(shlex.quote(o) for o in self.one_gpu_overrides)


def _omegaconf_literal(text: str) -> str:
    """A spec string as an OmegaConf value that does not interpolate."""
    return text.replace("${", "\\${")


def camera_keys(spec: Spec) -> tuple[CameraKey, ...]:
    """RLinf's three image keys for the spec's cameras: the first ``main`` camera (else the
    first camera) is ``main_images``, the first ``wrist`` camera ``wrist_images``, the rest
    ``extra_view_images`` in order."""
    cameras = list(spec.env.cameras)
    main = next((c for c in cameras if c.role == "main"), cameras[0])
    wrist = next((c for c in cameras if c.role == "wrist" and c is not main), None)
    keys = [CameraKey(main.name, "main_images", None)]
    if wrist is not None:
        keys.append(CameraKey(wrist.name, "wrist_images", None))
    rest = [c for c in cameras if c is not main and c is not wrist]
    keys += [CameraKey(c.name, "extra_view_images", i) for i, c in enumerate(rest)]
    return tuple(keys)


def world_size(spec: Spec) -> int:
    """Env, rollout and actor workers: one per GPU of the spec's resources."""
    return spec.resources.nodes * spec.resources.gpus_per_node


def placement(spec: Spec) -> str:
    """``cluster.component_placement`` of the env, rollout and actor workers: accelerator
    ranks 0 to world_size - 1 in RLinf's range syntax (``parse_rank_config``), one process
    each. Not ``all``: that is every GPU Ray sees, and the env split checked here
    (total_num_envs over world_size env workers) would not be the one RLinf makes."""
    return f"0-{world_size(spec) - 1}"


def one_gpu_overrides(spec: Spec) -> tuple[str, ...]:
    """Hydra overrides that place one actor, one rollout and one env worker, all on GPU 0 of
    one node, for a run on one GPU; none where the spec's resources are one GPU.

    RLinf's ``ComponentPlacement`` (scheduler/placement/placement.py) reads each key of
    ``cluster.component_placement`` as comma-separated component names and parses its
    ranks against the accelerators Ray sees, so ``0-7`` on one GPU fails (``End rank 7 ...
    must be within the available ... ranks [0]``). Hydra's override grammar cannot name the
    ``actor,env,rollout`` key, so the placement is deleted and added again, one key per
    component. The envs stay ``total_num_envs``, in one env worker."""
    if world_size(spec) == 1:
        return ()
    overrides = (
        "~cluster.component_placement",
        "+cluster.component_placement={actor:0,env:0,rollout:0}",
    )
    return overrides + (("cluster.num_nodes=1",) if spec.resources.nodes > 1 else ())


def env_group_size(spec: Spec, index: int) -> int:
    return spec.training.group_size if spec.targets[index].algorithm in GROUPED else 1


def rounds_key(version: RlinfVersion) -> str:
    """Where the version reads ``rollout_epoch``."""
    return ("env.train" if version.rollout_epoch_under_env else "algorithm") + ".rollout_epoch"


def derived_batch(spec: Spec, index: int, rounds_key: str) -> tuple[Derived, ...]:
    """RLinf's batch keys, each with where it comes from in the spec's training block."""
    t, workers = spec.training, world_size(spec)
    group = env_group_size(spec, index)
    decisions = spec.env.max_episode_steps // decision_steps(spec)
    envs = "training.envs" if t.envs is not None else "training.groups x group_size"
    rounds = t.episodes // t.in_flight
    return (
        Derived(
            "env.train.total_num_envs",
            t.in_flight,
            f"{envs}, {t.in_flight // workers} on each of {workers} env workers (one per GPU)",
        ),
        Derived(
            "env.train.group_size",
            group,
            "training.group_size"
            if group > 1
            else f"1: {spec.targets[index].algorithm} does not group episodes",
        ),
        Derived(
            rounds_key,
            rounds,
            f"rounds of the envs per update: groups {t.groups} x "
            f"group_size {t.group_size} / {t.in_flight} envs",
        ),
        Derived(
            "actor.global_batch_size",
            t.episodes * decisions // t.mini_batches,
            f"decision rows per optimizer step: {t.episodes} episodes x {decisions} "
            f"decisions / mini_batches {t.mini_batches}",
        ),
        Derived(
            "actor.micro_batch_size",
            t.micro_batch_size_per_gpu,
            "training.micro_batch_size_per_gpu",
        ),
    )


def rlinf_checks_fn(spec: Spec, index: int) -> Iterator[Issue]:
    """RLinf's own config validation (``validate_cfg``, ``validate_embodied_cfg`` and the
    actor's batch split), at plan time, so it fails before a cluster starts."""
    target = spec.targets[index]
    name = f"{target.framework} {target.version}"
    chunk = decision_steps(spec)
    steps = spec.env.max_episode_steps
    if steps % chunk:
        yield Issue(
            ("env", "max_episode_steps"),
            f"RLinf needs max_episode_steps ({steps}) divisible by the env steps of one "
            f"action chunk ({chunk}) for target {name} (RLinf checks "
            "env.train.max_steps_per_rollout_epoch % actor.model.num_action_chunks == 0): "
            f"set it to {next_multiple(steps, chunk)}",
        )
    training = spec.training
    if target.algorithm in GROUPED and training.group_size < 2:
        yield Issue(
            ("training", "group_size"),
            f"RLinf's {target.algorithm} needs group_size > 1, got {training.group_size}",
        )
    if target.algorithm == "gae" and not spec.model.value_head:
        yield Issue(
            ("model", "value_head"),
            "RLinf's gae (actor_critic loss) needs a value head: set model.value_head: true",
        )
    group = env_group_size(spec, index)
    workers, envs = world_size(spec), training.in_flight
    split = workers * group
    if envs % split:
        fix = split_fix(training, split)
        yield Issue(
            ("training", "envs" if training.envs is not None else "groups"),
            f"RLinf splits env.train.total_num_envs ({envs}) evenly over its {workers} env "
            f"workers (one per GPU), each holding whole groups of {group}: it must be a "
            f"multiple of {split} for target {name}: {fix}",
        )
    decisions = steps // chunk if steps % chunk == 0 else 0
    global_batch = training.episodes * decisions // training.mini_batches
    per_pass = training.micro_batch_size_per_gpu * workers
    if decisions and global_batch % per_pass:
        yield Issue(
            ("training", "micro_batch_size_per_gpu"),
            f"RLinf needs actor.global_batch_size ({global_batch} = {training.episodes} "
            f"episodes x {decisions} decisions / mini_batches {training.mini_batches}) "
            f"divisible by micro_batch_size ({training.micro_batch_size_per_gpu}) x actor "
            f"workers ({workers}) for target {name}: "
            + (
                "set micro_batch_size_per_gpu to "
                f"{largest_divisor(global_batch // workers, training.micro_batch_size_per_gpu)}"
                if global_batch % workers == 0
                else _fix_for_rows(training, decisions, workers)
            ),
        )
    model = spec.model
    hub = model.family in REMOTE_CODE_FAMILIES and _is_hub_id(model.checkpoint)
    if hub and not model.trust_remote_code:
        yield Issue(
            ("model", "checkpoint"),
            f"{model.family} checkpoints on the Hub ({model.checkpoint!r}) ship their own "
            "modeling code (transformers has no class for them), so every RLinf actor and "
            f"rollout worker would fail to load it for target {name}: set "
            "model.trust_remote_code: true",
        )
    for a, b in _mismatched_extra_views(spec):
        yield Issue(
            ("env", "cameras"),
            f"RLinf stacks extra views into one array: cameras {a.name!r} "
            f"({a.height}x{a.width}) and {b.name!r} ({b.height}x{b.width}) need one size "
            f"for target {name}",
        )


def _fix_for_rows(training: Any, decisions: int, workers: int) -> str:
    """What makes each mini-batch's decision rows split into micro-batches on every actor
    worker: fewer mini-batches, else more groups (the micro-batch kept)."""
    per_pass = training.micro_batch_size_per_gpu * workers
    rows = training.episodes * decisions
    for m in range(training.mini_batches, 0, -1):
        if training.groups % m == 0 and (rows // m) % per_pass == 0:
            return f"set mini_batches to {m}"
    groups = next(
        g
        for g in range(training.groups, training.groups + per_pass * training.mini_batches + 1)
        if g % training.mini_batches == 0
        and (g * training.group_size * decisions // training.mini_batches) % per_pass == 0
    )
    return f"set groups to {groups}"


def _is_hub_id(checkpoint: str) -> bool:
    """``owner/name`` on the Hugging Face Hub, not a local path."""
    parts = checkpoint.split("/")
    return len(parts) == 2 and all(parts) and not checkpoint.startswith((".", "~"))


def _mismatched_extra_views(spec: Spec) -> Iterator[tuple[Any, Any]]:
    by_name = {c.name: c for c in spec.env.cameras}
    extras = [by_name[k.name] for k in camera_keys(spec) if k.key == "extra_view_images"]
    for other in extras[1:]:
        if (other.height, other.width) != (extras[0].height, extras[0].width):
            yield extras[0], other


def rlinf_resources(spec: Spec, index: int) -> Iterator[Issue]:
    target = spec.targets[index]
    yield from unhonoured_resources(
        spec,
        index,
        f"RLinf {target.version}",
        "it places one env, one rollout and one actor worker on every GPU of "
        "resources.nodes x gpus_per_node (cluster.component_placement), with one pipeline "
        "stage (rollout.pipeline_stage_num: 1)",
    )


rlinf_checks = (rlinf_checks_fn, rlinf_resources)


def _env_config(spec: Spec, index: int, plan_env_type: str, *, train: bool) -> dict:
    env = spec.env
    group = env_group_size(spec, index) if train else 1
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
    head predicts one value per decision, not one per column."""
    if algorithm == "gae" and spec.model.action.chunk > 1:
        return "chunk_level"
    return "action_level"


def make_rlinf_plan(spec: Spec, index: int, version: RlinfVersion) -> RlinfPlan:
    """The RLinf plan of a resolved spec that passed :func:`rlinf_checks_fn`."""
    algorithm = spec.targets[index].algorithm
    model, env, training = spec.model, spec.env, spec.training
    package = spec.project.import_name
    env_type, model_type = package, f"{package}_policy"
    group = env_group_size(spec, index)
    decisions = env.max_episode_steps // decision_steps(spec)
    total = training.in_flight
    rollout_epoch = training.episodes // total
    precision = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}[model.dtype]
    max_prompt_length = prompt_length(spec)
    sampling = {
        "do_sample": True,
        "temperature_train": 1.0,
        "temperature_eval": 0.0,  # greedy
        "top_k": 0,
        "top_p": 1.0,
    }
    train_env = _env_config(spec, index, env_type, train=True)
    eval_env = _env_config(spec, index, env_type, train=False)
    algorithm_cfg: dict[str, Any] = {
        "group_size": group,
        "reward_type": _reward_type(spec, algorithm),
        "logprob_type": "token_level",
        "entropy_type": "token_level",
        "adv_type": algorithm,
        "loss_type": LOSS_TYPES[algorithm],
        "entropy_bonus": 0,
        "clip_ratio_high": 0.28 if algorithm in GROUPED else 0.2,
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
    if model.family != "custom":
        actor_model["attn_implementation"] = attn
        actor_model["trust_remote_code"] = model.trust_remote_code
    # No wrap_policy: RLinf's get_fsdp_wrap_policy then wraps each class the policy's
    # _no_split_modules names (RLinfPolicy's: what the loaded transformers models declare,
    # e.g. LlamaDecoderLayer) as a unit of its own, for whichever checkpoint is loaded.
    fsdp: dict[str, Any] = {
        "strategy": "fsdp",
        "sharding_strategy": "full_shard",
        "gradient_checkpointing": False,
        "cpu_offload": False,
        "enable_gradient_accumulation": True,
        "forward_prefetch": False,
        "limit_all_gathers": False,
        "backward_prefetch": None,
        "use_orig_params": model.lora is not None,  # see is_lora
        "mixed_precision": {
            "param_dtype": precision,
            "reduce_dtype": precision,
            "buffer_dtype": precision,
        },
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
                "adam_beta2": 0.999,
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
    own = set_keys(config, spec.targets[index].config)
    plan = RlinfPlan(
        version=version,
        env_type=env_type,
        model_type=model_type,
        loss_type=LOSS_TYPES[algorithm],
        cameras=camera_keys(spec),
        num_action_chunks=model.action.chunk,
        action_dim=model.action.dim,
        total_num_envs=total,
        env_group_size=group,
        rollout_epoch=rollout_epoch,
        decisions_per_episode=decisions,
        max_prompt_length=max_prompt_length,
        config=config,
        derived=derived_batch(spec, index, rounds_key(version)),
        own=own,
        world_size=world_size(spec),
        one_gpu_overrides=one_gpu_overrides(spec),
        omitted_templates=()
        if version.fidelity_harness
        else ("tests/test_rlinf_fidelity.py", "src/cpu.py", "src/parity.py"),
        read_elsewhere=read_elsewhere(config) if version.fidelity_harness else {},
    )
    problems = layout_problems(config, version.schema, exempt_keys(config, model.family))
    if problems:  # a vlagen bug, not a spec error: stop before writing anything
        raise AssertionError("RLinf config does not match RLinf's layout:\n" + "\n".join(problems))
    return plan


def exempt_keys(config: dict, family: str) -> tuple[str, ...]:
    """Example keys ``config`` (of a ``family`` policy) leaves out: nothing would read them."""
    exempt = TOKEN_FAMILY_KEYS if family == "custom" else ()
    value_head = config["actor"]["model"]["add_value_head"]
    if not value_head:
        exempt += (VALUE_LR,)
    if config["algorithm"]["loss_type"] != "actor_critic":
        exempt += VALUE_LOSS
    if not (value_head and config["env"]["train"]["auto_reset"]):
        exempt += (BOOTSTRAP,)
    return exempt


def read_elsewhere(config: dict) -> dict[str, tuple[str, str]]:
    """The entries of :data:`READ_ELSEWHERE` that name keys ``config`` sets."""
    keys = flat_keys({k: v for k, v in config.items() if k not in ("defaults", "hydra")})
    return {
        name: where
        for name, where in READ_ELSEWHERE.items()
        if any(k == name or (name.endswith(".") and k.startswith(name)) for k in keys)
    }


def flat_keys(tree: dict, prefix: str = "") -> dict[str, Any]:
    """``{"a.b": value}`` of every leaf of a nested config (empty dicts and lists are leaves)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(flat_keys(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _fits(kind: str, value: object) -> bool:
    if kind == "null" or value is None:
        return True  # the example leaves it unset / we leave an optional key unset
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    names = {"bool": bool, "int": int, "str": str, "list": list, "dict": dict}
    ok = isinstance(value, names[kind])
    return ok and not (kind == "int" and isinstance(value, bool))


def layout_problems(config: dict, schema: str, exempt: tuple[str, ...] = ()) -> list[str]:
    """How ``config`` differs from RLinf's example layout: missing keys and wrong types
    (``exempt``: example keys this config leaves out on purpose)."""
    layout = load_schema(schema)["keys"]
    ours = flat_keys({k: v for k, v in config.items() if k not in ("defaults", "hydra")})
    problems = []
    for key, kind in layout.items():
        if any(key.startswith(prefix) for prefix in NOT_MIRRORED) or key in exempt:
            continue
        if key not in ours:
            problems.append(f"{key}: missing (RLinf's examples set a {kind})")
        elif not _fits(kind, ours[key]):
            problems.append(f"{key}: {ours[key]!r} is not a {kind}")
    return problems


RLINF_TEST_WARNINGS = (
    WarningFilter(
        "ignore:`torch.jit.script` is deprecated:DeprecationWarning:torch.jit._script",
        "RLinf's rlinf/config.py applies torch.jit.script when imported",
    ),
    WarningFilter(
        "ignore:`torch.jit.script_method` is deprecated:DeprecationWarning:torch.jit._script",
        "RLinf's rlinf/config.py calls torch.compile, whose inductor imports torch.utils.mkldnn",
    ),
    WarningFilter(
        'ignore:\\s*version_base="1\\.1" selects Hydra 1\\.1 compatibility:UserWarning',
        'the config composes as train.py runs it, with RLinf\'s own version_base="1.1"',
    ),
    WarningFilter(
        "ignore:FSDP is switching to use `NO_SHARD`:UserWarning:torch.distributed.fsdp",
        "the fidelity tests run RLinf's FSDP actor in one CPU process: nothing to shard",
    ),
)


def rlinf_target(
    version_line: str,
    requirement: str,
    families: tuple[str, ...],
    version: RlinfVersion,
    contract: Contract,
) -> TargetDecl:
    """The declaration of one RLinf version line (they share templates and checks)."""
    if contract.config_snapshot != version.schema:
        raise ValueError(
            f"RLinf {version_line}: the contract names {contract.config_snapshot}, the plan "
            f"{version.schema}"
        )

    def planner(spec: Spec, index: int) -> RlinfPlan:
        return make_rlinf_plan(spec, index, version)

    def derived(spec: Spec, index: int) -> tuple[Derived, ...]:
        return derived_batch(spec, index, rounds_key(version))

    return TargetDecl(
        framework="rlinf",
        version=version_line,
        title="RLinf",
        requirement=requirement,
        algorithms=RLINF_ALGORITHMS,
        algorithm_aliases=RLINF_ALIASES,
        critics=("gae",),
        model_families=families,
        # The package's policy core lays its inputs out per backbone; RLinf only stacks
        # and splits the batch-first tensors predict_action_batch returns (policy.py).
        backbones=("llava", "qwen2_5_vl", "qwen3_vl"),
        contract=contract,
        checks=rlinf_checks,
        templates="rlinf",
        planner=planner,
        config_keys=lambda: load_schema(version.schema)["keys"],
        derived=derived,
        # What the modules the verification tests import from RLinf (installed --no-deps)
        # import in turn; regex comes with transformers, which a custom family lacks.
        test_requirements=(
            "omegaconf",
            "hydra-core",
            "ray",
            "gymnasium",
            "imageio",
            "regex",
            # the actor worker imports transformers and accelerate at module level, whatever
            # the model family (found by a fresh venv of the custom-family golden)
            "transformers",
            "accelerate",
        ),
        test_warnings=RLINF_TEST_WARNINGS,
        # rlinf/envs/libero/libero_env.py imports gym (its embodied extra asks for it
        # unpinned; 0.26.2 is gym's last release); the LIBERO tests compare our observations
        # with that env's
        preset_test_installs={"libero": ("gym==0.26.2",)},
    )
