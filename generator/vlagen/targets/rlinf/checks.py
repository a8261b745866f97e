"""RLinf's own config validation (``validate_cfg``, ``validate_embodied_cfg`` and the actor's
batch split), as plan-time errors, so that a spec fails before a cluster starts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...batch import largest_divisor, next_multiple, split_fix
from ...errors import Issue
from ..common.placement import decision_steps, gpu_count, group_size, unhonoured_resources
from .config import GROUPED
from .plan import camera_keys

if TYPE_CHECKING:
    from ...spec import Spec

#: Families whose Hub checkpoints are Prismatic models loaded through their ``auto_map``.
REMOTE_CODE_FAMILIES = ("openvla", "openvla_oft")


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
    group = group_size(spec, index, GROUPED)
    workers, envs = gpu_count(spec), training.in_flight  # an env worker per GPU
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
