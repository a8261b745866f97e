"""AReaL 1.0.4's allocation and batch rules, as plan-time errors."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...batch import next_multiple
from ...errors import Issue
from ..common.placement import gpu_count, unhonoured_resources
from .plan import gpu_split

if TYPE_CHECKING:
    from ...spec import Spec, Training


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
    total = gpu_count(spec)
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
