"""How a spec's run is placed for a target: on how many GPUs, in groups of how many episodes,
in decisions of how many backend steps; and the ``resources`` fields that place workers one
framework's way, which every other target refuses rather than ignores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import Issue

if TYPE_CHECKING:
    from ...spec import Spec

__all__ = [
    "PLACEMENT_FIELDS",
    "decision_steps",
    "gpu_count",
    "group_size",
    "unhonoured_resources",
]

#: ``resources`` fields that place workers one framework's way, with that way and default.
PLACEMENT_FIELDS = {
    "env_gpus_per_node": ("verl's env/rollout split", None),
    "env_nodes": ("verl's env/rollout split", 0),
    "pipeline_stages": ("verl's env/rollout split", 1),
    "rollout_gpus": ("AReaL's inference/training split", None),
}


def gpu_count(spec: Spec) -> int:
    """The GPUs of the spec's cluster: ``resources.nodes x gpus_per_node``."""
    return spec.resources.nodes * spec.resources.gpus_per_node


def group_size(spec: Spec, index: int, grouped: tuple[str, ...]) -> int:
    """Episodes per group for target ``index``: ``training.group_size`` where its algorithm
    is one of ``grouped`` (advantages over a group of rollouts of one task), else 1."""
    return spec.training.group_size if spec.targets[index].algorithm in grouped else 1


def decision_steps(spec: Spec) -> int:
    """Backend steps per decision (1 where the backend takes a whole chunk per step)."""
    # Imported here: envplan imports the spec models (pydantic), which declaring a target
    # must not load (`vlagen targets diff` reads declarations without them).
    from ...envplan import steps_per_decision

    return steps_per_decision(spec.env, spec.model.action.chunk)


def unhonoured_resources(
    spec: Spec, index: int, title: str, why: str, honours: tuple[str, ...] = ()
) -> Iterator[Issue]:
    """Located errors for the :data:`PLACEMENT_FIELDS` of ``resources`` other than
    ``honours`` set to other than their defaults in a spec whose target ``index``
    (``title``) places its workers another way (``why``): a value the generated package
    would silently ignore."""
    where = f"{title} (targets[{index}])"
    for key, (owner, default) in PLACEMENT_FIELDS.items():
        value = getattr(spec.resources, key)
        if key not in honours and value != default:
            yield Issue(
                ("resources", key),
                f"{where} does not honour resources.{key} ({value}): {why}; leave it unset "
                f"(it is {owner})",
            )
