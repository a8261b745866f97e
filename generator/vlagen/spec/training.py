"""The spec's `targets`, `training` and `resources`: what to train with, how an update is
gathered, and on which cluster; and the keys earlier specs used.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    Field,
    JsonValue,
)

from .fields import (
    Count,
    Framework,
    NotBool,
    StrictModel,
    VersionText,
)

#: A framework config key, dotted: ``section.sub.key``.
ConfigKey = Annotated[
    str, Field(pattern=r"^[A-Za-z_][\w-]*(\.[A-Za-z0-9_][\w-]*)*$", max_length=300)
]


class Target(StrictModel):
    """One RL framework to generate an adapter for."""

    framework: Framework = Field(description="The framework (`vlagen targets` lists them).")
    version: VersionText = Field(description="Its version line, e.g. '0.3'.")
    algorithm: Annotated[str, Field(max_length=100)] = Field(
        description="The RL algorithm, in the framework's own name."
    )
    config: Annotated[dict[ConfigKey, JsonValue], Field(max_length=256)] | None = Field(
        default=None,
        description="The framework's own config keys (dotted, e.g. "
        "`actor_rollout_ref.actor.clip_ratio_high`) this target sets beyond what vlagen "
        "derives from the spec, each checked against the framework's config snapshot; a key "
        "derived from `training` is refused, naming the field to change instead.",
    )


class Training(StrictModel):
    """How one update is gathered and taken, in the framework-neutral terms of RL for VLAs:
    every target derives its own knobs (its batch sizes, env counts, rounds) from these and
    says in its generated config where each came from."""

    seed: Annotated[int, Field(ge=0, le=2**32 - 1), NotBool] = Field(
        default=42, description="Global random seed; 0 to 2^32 - 1 (what numpy seeds take)."
    )
    learning_rate: Annotated[float, Field(gt=0, le=1.0), NotBool] = Field(
        default=1e-5, description="Actor learning rate; above 0, at most 1."
    )
    groups: Count(2**20) = Field(
        default=8,
        description="Initial conditions (a task and its start) per update; 1 to 2^20.",
    )
    group_size: Count(1024) = Field(
        default=8,
        description="Episodes run from each initial condition (a GRPO group); 1 to 1024.",
    )
    envs: Count(2**20) | None = Field(
        default=None,
        description="Envs stepping at once over the whole cluster; default groups x "
        "group_size, every episode of an update at once. 1 to 2^20.",
    )
    mini_batches: Count(4096) = Field(
        default=1,
        description="Optimizer steps per update: its groups split into this many mini-batches; "
        "1 to 4096.",
    )
    micro_batch_size_per_gpu: Count(65536) = Field(
        default=2,
        description="Decision rows per forward/backward pass on one GPU; 1 to 65536.",
    )
    temperature: Annotated[float, Field(gt=0, le=10), NotBool] | None = Field(
        default=None,
        description="Sampling temperature of the rollout, at which the update re-scores "
        "its actions; above 0, at most 10. Default: each target's reference, the "
        "framework's own example nearest the spec (e.g. 1.6 in RLinf's and siiRL's "
        "OpenVLA-OFT LIBERO examples, 1.0 in RLinf's OpenVLA ones): the README's "
        "reference table names it.",
    )
    gradient_checkpointing: bool | None = Field(
        default=None,
        description="Recompute each decoder layer's activations in the backward pass "
        "instead of keeping them: less activation memory per micro-batch for about a third "
        "more compute. Default: each target's reference (on in RLinf's, siiRL's and AReaL's "
        "examples, off in verl's): the README's reference table names it.",
    )

    @property
    def episodes(self) -> int:
        """Episodes per update."""
        return self.groups * self.group_size

    @property
    def in_flight(self) -> int:
        """Envs stepping at once: ``envs``, or every episode of an update."""
        return self.episodes if self.envs is None else self.envs


#: Keys of earlier specs, each with how to write it now (:func:`retired_key`).
RETIRED_KEYS: dict[tuple[str, str], str] = {
    ("env", "num_envs"): "env.num_envs counted the envs of one framework's env worker, so it "
    "meant a different number on each framework; write training.envs, the envs stepping at "
    "once over the whole cluster, or leave it out to run every episode of an update at once "
    "(training.groups x group_size)",
    ("training", "train_batch_size"): "training.train_batch_size is now training.groups (the "
    "initial conditions per update, the same number)",
    ("training", "mini_batch_size"): "training.mini_batch_size is now training.mini_batches, "
    "the optimizer steps per update (groups / mini_batch_size)",
}


def retired_key(section: str, key: str, data: Any) -> str | None:
    """What an earlier spec's ``section.key`` is written as now, with the numbers of
    ``data`` (the spec as parsed) where they can be computed; None for any other key."""
    message = RETIRED_KEYS.get((section, key))
    if message is None:
        return None
    training = data.get("training") if isinstance(data, dict) else None
    training = training if isinstance(training, dict) else {}
    value = training.get(key)
    if key == "train_batch_size" and isinstance(value, int):
        return f"{message}: write `groups: {value}`"
    size, groups = value, training.get("train_batch_size", training.get("groups"))
    whole = isinstance(size, int) and isinstance(groups, int) and size > 0 and groups % size == 0
    if key == "mini_batch_size" and whole:
        return f"{message}: write `mini_batches: {groups // size}`"
    return message


class Resources(StrictModel):
    """The cluster a training run uses."""

    nodes: Count(16384) = Field(default=1, description="Number of machines; 1 to 16384.")
    gpus_per_node: Count(64) = Field(default=8, description="GPUs on each machine; 1 to 64.")
    env_gpus_per_node: Count(64) | None = Field(
        default=None,
        description="GPUs of each machine that run simulators, where the framework places "
        "env workers apart from the policy (verl); default half of gpus_per_node, or all of "
        "them on env_nodes.",
    )
    env_nodes: Annotated[int, Field(ge=0, le=16384), NotBool] = Field(
        default=0,
        description="Machines of their own for the simulators (verl's disaggregated mode); "
        "0 runs them on the training machines. 0 to 16384.",
    )
    rollout_gpus: Count(2**20) | None = Field(
        default=None,
        description="GPUs of the whole cluster that serve generation apart from training "
        "(AReaL's inference servers; the rest train); default half of nodes x gpus_per_node.",
    )
    pipeline_stages: Count(8) = Field(
        default=1,
        description="Env/rollout pipeline stages: each env worker's envs are split into this "
        "many groups that step while the policy acts for the others (verl); 1 to 8.",
    )
    gpu_memory_gb: Annotated[float, Field(ge=1, le=4096), NotBool] = Field(
        default=80.0,
        description="Memory of each GPU, in GB (10^9 bytes), that the memory plan (`vlagen "
        "targets fit`, each target's README) checks the generated settings against; default "
        "80, the 80 GB H100/A100 the frameworks' reference configs assume. 1 to 4096.",
    )
