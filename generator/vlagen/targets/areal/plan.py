"""The AReaL plan: the YAML config a spec gives (checked against ``GRPOConfig``), the batch
keys it derives and where each came from, and what the templates lay out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...batch import Derived, comments
from ..common.config_schema import require_fits, set_keys
from ..common.placement import decision_steps, gpu_count
from .layout import config_problems
from .reference import gradient_checkpointing, sampling_temperature

if TYPE_CHECKING:
    from ...spec import Spec

AREAL_VERSION = "1.0.4"
#: Prompt text tokens a micro-batch budgets per row beside the images and action tokens.
PROMPT_TEXT_BUDGET = 128


@dataclass(frozen=True)
class ServerInstall:
    """How the inference server ``rollout.backend`` names gets installed, and what it pins.

    ``areal`` 1.0.4's own requirements name no server: SGLang is behind its ``sglang`` extra
    (and ``cuda``, which adds the training kernels), as ``sglang[tracing]==0.5.10.post1``,
    marked for x86-64 Linux only (the wheel's METADATA). areal asks ``torch>=2.9.1,<2.11`` and
    ``transformers>=5.0.0,<=5.3.0``; that SGLang pins both exactly, within those ranges.
    """

    extra: str = "sglang"  #: areal's extra that installs the server
    name: str = "SGLang"
    version: str = "0.5.10.post1"
    platform: str = "x86-64 Linux"  #: where the extra's marker installs the server
    torch: str = "2.9.1"  #: what the server pins
    transformers: str = "5.3.0"
    areal_torch: str = "torch>=2.9.1,<2.11"  #: areal's own ranges
    areal_transformers: str = "transformers>=5.0.0,<=5.3.0"


SERVER = ServerInstall()


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
    server: ServerInstall = SERVER

    @property
    def comments(self) -> Mapping[str, str]:
        """End-of-line comments of the config: where each batch key came from."""
        return comments(self.derived, self.own)


def gpu_split(spec: Spec) -> tuple[int, int]:
    """(inference GPUs, training GPUs) of the whole cluster; default half each."""
    total = gpu_count(spec)
    rollout = spec.resources.rollout_gpus
    if rollout is None:
        rollout = max(total // 2, 1)
    return rollout, total - rollout


def image_tokens(spec: Spec) -> int:
    """Language tokens of one decision's images: one per merged patch of each camera."""
    from ...backbones import BACKBONES

    backbone = BACKBONES[spec.model.backbone]
    height, width = spec.model.image_size
    side = backbone.image_multiple
    cameras = len(spec.model.cameras or [c for c in spec.env.cameras if c.role == "main"][:1])
    return cameras * (height // side) * (width // side)


def decisions(spec: Spec) -> int:
    return -(-spec.env.max_episode_steps // decision_steps(spec))


def make_areal_plan(spec: Spec, index: int) -> ArealPlan:
    """The AReaL plan of a resolved spec that passed :func:`~.checks.areal_checks`."""
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
            # each inference server's worker as the training workers (AReaL's examples);
            # RolloutController widens its GPUs to the server's tensor x pipeline size
            "scheduling_spec": "${actor.scheduling_spec}",
        },
        "gconfig": {
            "n_samples": 1,  # the workflow runs the group (see vlagen.targets.areal)
            "max_new_tokens": tokens,
            "min_new_tokens": tokens,
            "ignore_eos": True,  # exactly `tokens` tokens: an EOS would cut the chunk
            "greedy": False,
            "temperature": sampling_temperature(spec),  # training.temperature or the example's
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
            "gradient_checkpointing": gradient_checkpointing(spec),
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
            # AReaL's default asks no GPU: its local and Ray schedulers would start each
            # worker with CUDA_VISIBLE_DEVICES empty. One GPU per worker, as AReaL's examples
            "scheduling_spec": [
                {
                    "task_type": "worker",
                    "port_count": 2,
                    "gpu": 1,
                    "mem": 32,
                    "cmd": "python3 -m areal.infra.rpc.rpc_server",
                    "env_vars": {},
                }
            ],
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
    clip = ()
    bound = credit_bound(config)  # from the keys the spec's config block may change
    if "actor.reward_clip" not in own and bound is not None:
        config["actor"]["reward_clip"] = bound
        clip = (Derived("actor.reward_clip", config["actor"]["reward_clip"], CLIP_SOURCE),)
    require_fits(config_problems(config), "AReaL config does not match GRPOConfig")
    return ArealPlan(
        tokens=tokens,
        decisions=decisions(spec),
        group=training.group_size,
        rollout_gpus=rollout,
        train_gpus=train,
        image_tokens=images,
        row_tokens=row,
        config=config,
        derived=(*derived_batch(spec, index), *clip),
        own=own,
    )


def derived_settings(spec: Spec) -> tuple[Derived, ...]:
    """AReaL's keys beyond the batch that follow from the training block (with
    :func:`derived_batch`, what a spec's ``targets[i].config`` may not set)."""
    t = spec.training
    return (
        Derived("actor.optimizer.lr", t.learning_rate, "training.learning_rate"),
        Derived(
            "gconfig.temperature",
            sampling_temperature(spec),
            "training.temperature"
            if t.temperature is not None
            else "training.temperature, default AReaL's clevr_count_70k_grpo.yaml's",
        ),
        Derived(
            "actor.gradient_checkpointing",
            gradient_checkpointing(spec),
            "training.gradient_checkpointing"
            if t.gradient_checkpointing is not None
            else "training.gradient_checkpointing, default AReaL's clevr_count_70k_grpo.yaml's",
        ),
        Derived("seed", t.seed, "training.seed"),
    )


#: Where ``actor.reward_clip`` comes from, the config's comment (:func:`credit_bound`).
CLIP_SOURCE = (
    "(vla.max_decisions x sqrt(vla.group_size) + |reward_bias|) x |reward_scaling|, "
    "above any credit"
)


def credit_bound(config: Mapping[str, Any]) -> float | None:
    """A bound on what AReaL's actor clips: ``(credit + reward_bias) * reward_scaling``,
    rounded up, for the workflow's per-decision credit (``group_credit``).

    The credit of a group of ``N`` episodes, ``M <= N * D`` decisions in all, is ``x / (s +
    eps)``: ``x`` each decision's return-to-go less the group's mean at its index, ``s``
    their (biased) standard deviation over the ``M``. Every episode makes a first decision,
    so the ``N`` values at index 0 sum to 0, and the mean ``m`` of all ``M`` is the sum of
    the other ``M - N`` over ``M``: by Cauchy-Schwarz ``m^2 <= (M - N) / M^2 * sum x^2``, so
    ``s^2 = sum x^2 / M - m^2 >= N / M^2 * sum x^2`` and ``|x| / s <= M / sqrt(N) <= D *
    sqrt(N)``. AReaL's default (20) is below it on long episodes (one decision rewarded in a
    group of 8 over 60 decisions already gives ``sqrt(7 * 60) > 20``), and a clipped credit
    is no longer the group's comparison. None where a spec's config block set one of those
    keys to a non-number (:func:`config_problems` says so).
    """
    vla, actor = config["vla"], config["actor"]
    keys = (vla["max_decisions"], vla["group_size"], actor["reward_bias"], actor["reward_scaling"])
    if not all(isinstance(k, int | float) and not isinstance(k, bool) for k in keys):
        return None
    credit = int(vla["max_decisions"]) * math.sqrt(int(vla["group_size"]))
    bound = (credit + abs(float(actor["reward_bias"]))) * abs(float(actor["reward_scaling"]))
    return float(math.ceil(bound))


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
