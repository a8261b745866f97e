"""verl 0.7.1's shape and batch rules, as plan-time errors naming the code that enforces
each and the number that would satisfy it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...batch import largest_divisor, next_multiple
from ...errors import Issue
from ..common.placement import decision_steps, group_size, unhonoured_resources
from .plan import GROUPED, gpu_split, worlds

if TYPE_CHECKING:
    from ...spec import Spec


def verl_checks(spec: Spec, index: int) -> Iterator[Issue]:
    """verl 0.7.1's shape and batch rules, at plan time, each naming the code that enforces
    it (see :mod:`vlagen.targets.verl`); paths are under ``verl/experimental/vla/`` unless they
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
    group = group_size(spec, index, GROUPED)
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
