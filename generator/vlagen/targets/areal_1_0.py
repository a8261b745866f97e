"""AReaL 1.0: no env or VLA classes; the adapter runs episodes inside a ``RolloutWorkflow``.

AReaL 1.0.4 (the only release on the index; its ``RolloutWorkflow`` is unchanged at the
unpublished tag v2.0.0, so a 2.0 line is one more declaration) deleted ``areal.api.env_api``:
env logic lives in a workflow whose ``async arun_episode(engine, data)`` returns a trajectory
tensor dict. Generation goes through AReaL's inference servers (SGLang, vLLM:
``engine.agenerate(ModelRequest)``), training through its FSDP engine on token log-probs over
the whole vocabulary. The FSDP engine loads causal LMs and the vision-language models of
``VALID_VISION_MODELS`` (``areal/engine/core/model.py``) only, so the VLA must sit on a Qwen-VL
backbone (``model.backbone``) whose unused vocabulary tail holds the action tokens, and its
decoding must be a sampler's (one token after another: the ``openvla`` and ``waypoint``
families). Its critic path builds ``AutoModelForTokenClassification`` (``fsdp_engine.py``
``_create_llm_actor_or_critic``), which no vision-language model has: no PPO with a critic.

What the plan decides (file references are to AReaL 1.0.4):

- One dataset row is one initial condition (task, state, seed). The package's workflow runs
  ``training.group_size`` episodes of it concurrently, one decision per generation request,
  and returns one trajectory row per decision. AReaL's own grouping
  (``GroupedRolloutWorkflow``, ``gconfig.n_samples``) and group normalization
  (``actor.reward_norm``) are left off: ``Normalization`` slices a batch into runs of
  ``group_size`` rows, and the episodes of a group give a variable number of rows. The
  workflow computes the group-relative credit itself (see the generated ``workflow.py``).
- GPUs: ``rollout.backend`` ``sglang:d{R}p1t1`` plus ``actor.backend`` ``fsdp:d{A}p1t1`` must
  use the cluster's GPUs exactly (AReaL's allocation rule); ``resources.rollout_gpus`` is R.
- Every key of the config is checked against a snapshot of AReaL 1.0.4's config dataclasses
  (``areal_1_0.config.json``, from ``GRPOConfig``; vlagen's tests rebuild it from the
  installed AReaL and compare), except :data:`OWN_KEYS`, the package's ``vla`` section.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..batch import Derived, comments, next_multiple
from ..contracts import Contract, Method, Registration, Side
from ..errors import Issue
from . import TargetDecl, WarningFilter, decision_steps, unhonoured_resources
from ._config_schema import load_schema, lookup, set_keys, value_fits

if TYPE_CHECKING:
    from ..spec import Spec, Training

__all__ = ["TARGET", "ArealPlan", "config_problems", "make_areal_plan"]

SCHEMA = "areal_1_0"
AREAL_VERSION = "1.0.4"
#: The package's own section (``VlaConfig`` in the generated ``train.py``, a field of its
#: ``GRPOConfig`` subclass, as AReaL's examples extend the config).
OWN_KEYS = frozenset({"vla.group_size", "vla.backend", "vla.max_decisions"})
#: Prompt text tokens a micro-batch budgets per row beside the images and action tokens.
PROMPT_TEXT_BUDGET = 128


@dataclass(frozen=True)
class ArealPlan:
    """What the AReaL templates lay out, computed once here."""

    tokens: int  #: action tokens per decision (``gconfig.max_new_tokens``)
    decisions: int  #: most decisions in an episode
    group: int  #: episodes per initial condition
    rollout_gpus: int
    train_gpus: int
    image_tokens: int  #: language tokens of the images of one decision
    row_tokens: int  #: a decision row's token budget (images, prompt text, actions)
    config: dict[str, Any]  #: the YAML, as data
    derived: tuple[Derived, ...]  #: the batch keys and where each came from
    own: tuple[str, ...]  #: the keys the spec's ``targets[i].config`` sets
    version: str = AREAL_VERSION

    @property
    def comments(self) -> Mapping[str, str]:
        """End-of-line comments of the config: where each batch key came from."""
        return comments(self.derived, self.own)


def gpu_split(spec: Spec) -> tuple[int, int]:
    """(inference GPUs, training GPUs) of the whole cluster; default half each."""
    total = spec.resources.nodes * spec.resources.gpus_per_node
    rollout = spec.resources.rollout_gpus
    if rollout is None:
        rollout = max(total // 2, 1)
    return rollout, total - rollout


def image_tokens(spec: Spec) -> int:
    """Language tokens of one decision's images: one per merged patch of each camera."""
    from ..backbones import BACKBONES

    backbone = BACKBONES[spec.model.backbone]
    height, width = spec.model.image_size
    side = backbone.image_multiple
    cameras = len(spec.model.cameras or [c for c in spec.env.cameras if c.role == "main"][:1])
    return cameras * (height // side) * (width // side)


def decisions(spec: Spec) -> int:
    return -(-spec.env.max_episode_steps // decision_steps(spec))


def areal_checks(spec: Spec, index: int) -> Iterator[Issue]:
    """AReaL 1.0.4's allocation and batch rules, at plan time."""
    name = f"AReaL 1.0 (targets[{index}])"
    yield from unhonoured_resources(
        spec,
        index,
        "AReaL 1.0",
        "AReaL places inference servers and trainers by GPU count",
        honours=("rollout_gpus",),
    )
    total = spec.resources.nodes * spec.resources.gpus_per_node
    rollout, train = gpu_split(spec)
    if total < 2 or rollout < 1 or train < 1:
        yield Issue(
            ("resources", "rollout_gpus"),
            f"{name} runs inference servers (rollout.backend) and the trainer (actor.backend) "
            f"on GPUs of their own, which together must be the cluster's {total} "
            f"(PPOTrainer's allocation rule): resources.rollout_gpus must leave both at least "
            f"one, got {rollout} for inference and {train} for training",
        )
    training = spec.training
    if train >= 1 and training.groups % train:
        yield Issue(
            ("training", "groups"),
            f"{name} deals an update's {training.groups} groups (one trajectory each, "
            "rollout.consumer_batch_size) to its actor.backend's data-parallel ranks in equal "
            "shares: TrainController._dispatch_tensors (areal/infra/controller/"
            "train_controller.py) calls balanced_greedy_partition (areal/utils/seqpack.py), "
            f"which raises unless the count is a multiple of the {train} training GPUs; set "
            f"training.groups to {_groups_for_ranks(training, train)}",
        )
    if training.group_size < 2:
        yield Issue(
            ("training", "group_size"),
            f"{name}'s grpo compares the episodes of one initial condition: group_size must be "
            f"at least 2, got {training.group_size}",
        )
    if spec.model.dtype == "float16":
        yield Issue(
            ("model", "dtype"),
            f"{name} refuses float16 for vision-language models (FSDPEngine."
            "_create_device_model, areal/engine/fsdp_engine.py): use bfloat16",
        )


def _groups_for_ranks(training: Training, ranks: int) -> int:
    """The fewest groups at or above the spec's that split over ``ranks`` training GPUs and
    into ``mini_batches``, with the spec's envs (where set) still whole rounds of them."""
    step = math.lcm(ranks, training.mini_batches)
    groups = next_multiple(training.groups, step)
    while training.envs is not None and groups * training.group_size % training.envs:
        groups += step
    return groups


def make_areal_plan(spec: Spec, index: int) -> ArealPlan:
    """The AReaL plan of a resolved spec that passed :func:`areal_checks`."""
    model, training, resources = spec.model, spec.training, spec.resources
    tokens = model.action.chunk * model.action.dim
    rollout, train = gpu_split(spec)
    images = image_tokens(spec)
    row = images + PROMPT_TEXT_BUDGET + tokens
    names = {
        "experiment_name": "${experiment_name}",
        "trial_name": "${trial_name}",
        "fileroot": "${cluster.fileroot}",
    }
    lora = model.lora
    config: dict[str, Any] = {
        "experiment_name": spec.project.name,
        "trial_name": "trial0",
        "seed": training.seed,
        "total_train_epochs": 1,
        "tokenizer_path": "${actor.path}",
        "cluster": {
            "n_nodes": resources.nodes,
            "n_gpus_per_node": resources.gpus_per_node,
            "fileroot": "areal_runs",
            # where AReaL's processes find each other: a shared filesystem across nodes
            "name_resolve": {"type": "nfs", "nfs_record_root": "areal_runs/name_resolve"},
        },
        "scheduler": {"type": "local"},
        "rollout": {
            **names,
            "backend": f"sglang:d{rollout}p1t1",
            "tokenizer_path": "${tokenizer_path}",
            "max_concurrent_rollouts": training.in_flight // training.group_size,
            "consumer_batch_size": training.groups,
            # asynchronous: a group may start up to 2 weight versions before it trains
            # (the decoupled loss below corrects for the staleness)
            "max_head_offpolicyness": 2,
            "check_trajectory_format": False,
        },
        "gconfig": {
            "n_samples": 1,  # the workflow runs the group (see the module docstring)
            "max_new_tokens": tokens,
            "min_new_tokens": tokens,
            "ignore_eos": True,  # exactly `tokens` tokens: an EOS would cut the chunk
            "greedy": False,
            "temperature": 1.0,
            "top_p": 1.0,
            "stop_token_ids": [],
            "skip_special_tokens": False,
        },
        "actor": {
            "experiment_name": "${experiment_name}",
            "trial_name": "${trial_name}",
            "backend": f"fsdp:d{train}p1t1",
            "path": model.checkpoint.replace("${", "\\${"),
            "init_from_scratch": False,
            "dtype": model.dtype,
            "disable_dropout": True,
            "gradient_checkpointing": False,
            "temperature": "${gconfig.temperature}",
            "mb_spec": {"max_tokens_per_mb": training.micro_batch_size_per_gpu * row},
            "optimizer": {
                "type": "adam",
                "lr": training.learning_rate,
                "weight_decay": 0.0,
                "lr_scheduler_type": "constant",
                "gradient_clipping": 1.0,
                "warmup_steps_proportion": 0.0,
            },
            "eps_clip": 0.2,
            "ppo_n_minibatches": training.mini_batches,
            "recompute_logprob": True,
            "use_decoupled_loss": True,
            "kl_ctl": 0.0,
            "reward_norm": None,  # the workflow's credit is already group-relative
            "adv_norm": None,
            "reward_scaling": 1.0,
            "reward_bias": 0.0,
            "discount": 1.0,
            "gae_lambda": 1.0,
            "max_new_tokens": tokens,
            "use_lora": lora is not None,
            **(
                {
                    "lora_rank": lora.rank,
                    "lora_alpha": lora.alpha,
                    # FSDPEngine maps ["all-linear"] to peft's "all-linear"
                    "target_modules": ["all-linear"]
                    if lora.target_modules == "all-linear"
                    else list(lora.target_modules),
                }
                if lora is not None
                else {}
            ),
            "weight_update_mode": "xccl",
        },
        "sglang": {
            "model_path": "${actor.path}",
            "random_seed": "${seed}",
            "skip_tokenizer_init": True,
            "dtype": "${actor.dtype}",
            "context_length": 2 * row,
            "mem_fraction_static": 0.8,
            "enable_multimodal": True,
        },
        "train_dataset": {
            "path": "data/episodes",
            "type": "rl",
            "batch_size": training.groups,
            "shuffle": True,
            "num_workers": 0,
            "drop_last": True,
        },
        "saver": {**names, "freq_epochs": 1, "freq_steps": None, "freq_secs": None},
        "recover": {**names, "mode": "disabled", "freq_epochs": None, "freq_steps": None},
        "evaluator": {**names, "freq_epochs": None, "freq_steps": None, "freq_secs": None},
        "stats_logger": {**names, "wandb": {"mode": "disabled"}},
        "vla": {
            "group_size": training.group_size,
            "backend": None,  # null: the spec's simulator; "synthetic": the stand-in
            "max_decisions": decisions(spec),
        },
    }
    own = set_keys(config, spec.targets[index].config)
    problems = config_problems(config)
    if problems:  # a vlagen bug, not a spec error: stop before writing anything
        raise AssertionError("AReaL config does not match GRPOConfig:\n" + "\n".join(problems))
    return ArealPlan(
        tokens=tokens,
        decisions=decisions(spec),
        group=training.group_size,
        rollout_gpus=rollout,
        train_gpus=train,
        image_tokens=images,
        row_tokens=row,
        config=config,
        derived=derived_batch(spec, index),
        own=own,
    )


def derived_batch(spec: Spec, index: int) -> tuple[Derived, ...]:
    """AReaL's batch keys, each with where it comes from in the spec's training block."""
    t = spec.training
    row = image_tokens(spec) + PROMPT_TEXT_BUDGET + spec.model.action.chunk * spec.model.action.dim
    envs = "training.envs" if t.envs is not None else "training.groups x group_size"
    return (
        Derived(
            "rollout.max_concurrent_rollouts",
            t.in_flight // t.group_size,
            f"groups in flight: {envs} ({t.in_flight}) / group_size, each workflow "
            "episode running its group's envs side by side",
        ),
        Derived("rollout.consumer_batch_size", t.groups, "training.groups"),
        Derived("train_dataset.batch_size", t.groups, "training.groups"),
        Derived("vla.group_size", t.group_size, "training.group_size"),
        Derived("actor.ppo_n_minibatches", t.mini_batches, "training.mini_batches"),
        Derived(
            "actor.mb_spec.max_tokens_per_mb",
            t.micro_batch_size_per_gpu * row,
            f"training.micro_batch_size_per_gpu x {row} tokens per decision row",
        ),
    )


def flat_keys(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted leaf keys of a nested mapping (a dict value is a section, not a leaf)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(flat_keys(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def config_problems(config: dict[str, Any]) -> list[str]:
    """Keys of ``config`` AReaL 1.0.4's ``GRPOConfig`` lacks, and values of another type.
    Interpolations (``${...}``) are OmegaConf's to resolve and check, at load time."""
    schema = load_schema(SCHEMA)
    problems = []
    for key, value in flat_keys(config).items():
        if key in OWN_KEYS:
            continue
        kind = lookup(schema, key)
        if kind is None:
            problems.append(f"{key}: not a key of AReaL's GRPOConfig (nothing would read it)")
        elif not (isinstance(value, str) and value.startswith("${")) and not value_fits(
            kind, value
        ):
            problems.append(f"{key}: {value!r} is not a {kind}")
    return problems


#: AReaL 1.0.4's contract: no env API (``areal.api.env_api`` was deleted before 1.0), so the
#: env runs inside the workflow; ``RolloutWorkflow`` (``areal/api/workflow_api.py``) returns
#: the trajectory tensor dict the PPO actor trains on; the model is whatever AReaL's engines
#: load (``areal/engine/core/model.py``).
CONTRACT = Contract(
    summary="RolloutWorkflow.arun_episode(engine, data) (async), one row per decision",
    env=Side(base="none: AReaL has no env API; the workflow drives the package's env"),
    policy=Side(
        base="areal.api.workflow_api.RolloutWorkflow",
        methods=(
            Method(
                "arun_episode",
                "(engine: InferenceEngine, data: dict)",
                "{input_ids, attention_mask, loss_mask, logprobs, versions, rewards, "
                "multi_modal_input} | None",
                is_async=True,
            ),
        ),
    ),
    observation=(),
    registration=Registration(
        env="none (the env runs inside the workflow)",
        model="none: a causal LM or a VALID_VISION_MODELS model (Qwen-VL) AReaL's FSDP engine "
        "and SGLang/vLLM load, served through engine.agenerate(ModelRequest)",
        hook="PPOTrainer.train(workflow=<dotted path of the workflow class>, workflow_kwargs)",
    ),
    config_snapshot=SCHEMA,
)


TARGET = TargetDecl(
    framework="areal",
    version="1.0",
    title="AReaL",
    requirement=f"areal=={AREAL_VERSION}",
    algorithms={
        "grpo": "GRPOConfig; the workflow's group of episodes per initial condition gives "
        "the group-relative credit (no critic: AReaL has none for vision-language models)",
    },
    model_families=("openvla", "waypoint"),
    backbones=("qwen2_5_vl", "qwen3_vl"),
    backbone_note="AReaL's FSDP engine loads causal LMs and the vision-language models of "
    "VALID_VISION_MODELS (areal/engine/core/model.py) only, which OpenVLA/Prismatic and LLaVA "
    "checkpoints are not: put the VLA on a Qwen-VL checkpoint (model.backbone: qwen2_5_vl or "
    "qwen3_vl), its action tokens in the unused tail of the vocabulary",
    contract=CONTRACT,
    checks=(areal_checks,),
    templates="areal",
    planner=make_areal_plan,
    config_keys=lambda: load_schema(SCHEMA),
    derived=derived_batch,
    # train.py loads the episode dataset with datasets; the workflow encodes frames with PIL
    runtime_requirements=("datasets", "pillow"),
    # What AReaL 1.0.4's modules the tests run import on CPU, AReaL being installed --no-deps
    # (its own requirements pin torch < 2.9.1 and pull SGLang-era packages): areal/__init__
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
