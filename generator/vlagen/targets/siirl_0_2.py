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
- Only images and the prompt reach the model: the rollout never feeds the state.
- The critic (``CriticWorker``) has no embodied path, so PPO/GAE cannot train a VLA.
- The rollout splits a batch into ``num_envs // n`` prompts per chunk and asserts
  ``num_envs >= n``; ``task_file_name`` is packed into 50 bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import Issue
from ..families import FAMILIES
from . import TargetDecl
from ._config_schema import load_schema, lookup, value_fits

if TYPE_CHECKING:
    from ..spec import Spec

SCHEMA = "siirl_0_2"
TASK_FILE_NAME_BYTES = 50

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
    tokens_per_forward: int
    task_suite: str  #: the manifest's task_suite_name and embodied.env.env_name
    unnorm_key: str
    camera_keys: tuple[tuple[str, str], ...]  #: (model camera, key in the adapter's obs)
    shaped_terms: tuple[str, ...]  #: the spec's terms our reward node sums
    nodes: tuple[PipelineNode, ...]
    overrides: tuple[tuple[str, object], ...]  #: fixed CLI overrides, checked against siiRL
    runtime_keys: tuple[str, ...]  #: overrides the launch fills in (paths, cluster size)

    @property
    def graph_id(self) -> str:
        return f"vlagen_{self.workflow_type}_{self.adv_estimator}"


def _chain(algorithm: str) -> tuple[PipelineNode, ...]:
    """The node chain per algorithm: siiRL's built-in chains with the reward node ours."""
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
        PipelineNode(
            "reference_log_prob", f"{DAG_WORKER}.compute_ref_log_prob", "MODEL_TRAIN", "REFERENCE"
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


def make_siirl_plan(spec: Spec, index: int) -> SiirlPlan:
    """The siiRL plan of a resolved spec that passed :func:`siirl_checks`."""
    algorithm = spec.targets[index].algorithm
    model, env = spec.model, spec.env
    oft = model.family == "openvla_oft"
    workflow, estimator = WORKFLOWS[algorithm]
    steps_per_forward = model.action.chunk if oft else 1
    tokens = model.action.chunk * model.action.dim
    token_len = model.action.dim if oft else tokens
    success = [t for t in env.rewards if t.source == "success"]
    srpo = algorithm == "srpo"
    shaped = tuple(t.name for t in env.rewards if not (srpo and t.source == "success"))
    suite = task_suite(spec)
    unnorm_key = model.unnorm_key or f"{suite}_vlagen"
    embodied_type = "openvla-oft" if oft else "openvla"
    training, resources = spec.training, spec.resources
    overrides: list[tuple[str, object]] = [
        ("data.dataset_type", "embodied"),
        ("data.train_batch_size", training.train_batch_size),
        ("data.val_batch_size", training.train_batch_size),
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
            ("algorithm.embodied_sampling.oversample_factor", 1),
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
        ("actor_rollout_ref.actor.ppo_mini_batch_size", training.mini_batch_size),
        ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", training.micro_batch_size_per_gpu),
        ("actor_rollout_ref.actor.ppo_epochs", 1),
        ("actor_rollout_ref.actor.grad_clip", 1.0),
        ("actor_rollout_ref.actor.clip_ratio_low", 0.2),
        ("actor_rollout_ref.actor.clip_ratio_high", 0.28),
        ("actor_rollout_ref.actor.entropy_coeff", 0.0),
        ("actor_rollout_ref.rollout.name", "hf"),
        ("actor_rollout_ref.rollout.n", training.group_size),
        ("actor_rollout_ref.rollout.do_sample", True),
        ("actor_rollout_ref.rollout.prompt_length", 256),
        ("actor_rollout_ref.embodied.embodied_type", embodied_type),
        ("actor_rollout_ref.embodied.action_token_len", token_len),
        ("actor_rollout_ref.embodied.action_chunks_len", steps_per_forward),
        ("actor_rollout_ref.embodied.num_images_in_input", len(model.cameras or ())),
        ("actor_rollout_ref.embodied.center_crop", False),
        ("actor_rollout_ref.embodied.unnorm_key", unnorm_key),
        ("actor_rollout_ref.embodied.n_gpus_per_node", resources.gpus_per_node),
        ("actor_rollout_ref.embodied.env.env_type", env.preset),
        ("actor_rollout_ref.embodied.env.env_name", suite),
        ("actor_rollout_ref.embodied.env.num_envs", env.num_envs),
        ("actor_rollout_ref.embodied.env.max_steps", env.max_episode_steps),
        ("actor_rollout_ref.embodied.env.num_steps_wait", 0),
        ("actor_rollout_ref.embodied.env.model_family", "openvla"),
        ("trainer.project_name", spec.project.name),
        ("trainer.experiment_name", f"{spec.project.name}-{algorithm}"),
        ("trainer.logger", ["console", "tensorboard"]),
        ("trainer.val_before_train", False),
        ("trainer.resume_mode", "auto"),
    ]
    runtime = (
        "data.train_files",
        "data.val_files",
        "actor_rollout_ref.model.path",
        "actor_rollout_ref.embodied.video_embedding_model_path",
        "trainer.default_local_dir",
        "trainer.nnodes",
        "trainer.n_gpus_per_node",
        "trainer.total_epochs",
    )
    problems = override_problems(overrides, list(runtime))
    if problems:  # a bug in this module, caught before any file is written
        raise RuntimeError(f"siiRL 0.2's dataclasses reject {'; '.join(problems)}")
    return SiirlPlan(
        embodied_type=embodied_type,
        workflow_type=workflow,
        adv_estimator=estimator,
        action_token_len=token_len,
        action_chunks_len=steps_per_forward,
        tokens_per_forward=tokens,
        task_suite=suite,
        unnorm_key=unnorm_key,
        camera_keys=_camera_keys(spec),
        shaped_terms=shaped,
        nodes=_chain(algorithm),
        overrides=tuple(overrides),
        runtime_keys=runtime,
    )


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


def siirl_checks(spec: Spec, index: int) -> Iterator[Issue]:
    """What siiRL 0.2.0's embodied code cannot run, as plan-time errors naming the restriction
    and what would lift it."""
    model, env = spec.model, spec.env
    where = f"siiRL 0.2 (targets[{index}])"
    family = model.family
    if family == "openvla_oft":
        shape = (model.action.dim, model.action.chunk, model.action.bins, model.vocab_size)
        if shape != (7, 8, 256, 32000):
            yield Issue(
                ("model", "action"),
                f"{where} trains openvla_oft only as 7-D actions in chunks of 8 over 256 bins "
                f"of a 32000-token vocabulary: its actor reshapes log-probs to (traj*8, 7) and "
                f"slices logits[..., -320:-64] (engine/actor/embodied_actor.py); got dim "
                f"{shape[0]}, chunk {shape[1]}, bins {shape[2]}, vocab_size {shape[3]}. Use "
                "family openvla (one decision per forward, any dim) for other shapes",
            )
    elif family == "openvla" and model.action.chunk != 1:
        yield Issue(
            ("model", "action", "chunk"),
            f"{where} decodes one openvla action per forward pass (embodied_rollout.py expands "
            f"it to a 1-step chunk); set chunk: 1 or use openvla_oft (7 x 8), got chunk "
            f"{model.action.chunk}",
        )
    if FAMILIES[family].token_based and family != "openvla_oft" and len(model.cameras or ()) > 1:
        yield Issue(
            ("model", "cameras"),
            f"{where} feeds one image to {family} models (only OpenVLA-OFT's backbone takes "
            "num_images_in_input > 1); list one camera in model.cameras",
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
    n = spec.training.group_size
    if env.num_envs < n:
        yield Issue(
            ("env", "num_envs"),
            f"{where}'s rollout runs num_envs // group_size prompts at a time and asserts "
            f"num_envs >= group_size; got num_envs {env.num_envs} < group_size {n}",
        )
    suite = task_suite(spec)
    longest = len(f"{suite}_task_999_trial_9999".encode())
    if longest > TASK_FILE_NAME_BYTES:
        yield Issue(
            ("env", "task_suite") if env.task_suite else ("project", "name"),
            f"{where} packs '<suite>_task_<id>_trial_<id>' into {TASK_FILE_NAME_BYTES} bytes; "
            f"the suite name {suite!r} is {len(suite.encode())} bytes, at most "
            f"{TASK_FILE_NAME_BYTES - longest + len(suite.encode())} fit",
        )


TARGET = TargetDecl(
    framework="siirl",
    version="0.2",
    title="siiRL",
    requirement="siirl==0.2.0",
    algorithms=ALGORITHMS,
    model_families=("openvla", "openvla_oft", "waypoint"),
    contract="BaseVLAEnvironment (async reset/step); the rollout calls "
    "_blocking_reset/_blocking_step",
    checks=(siirl_checks,),
    templates="siirl_0_2",
    planner=make_siirl_plan,
    # Imported by siiRL's embodied rollout and env package but not declared by its wheel.
    runtime_requirements=("tensorflow", "gymnasium", "cloudpickle"),
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
    ),
)
