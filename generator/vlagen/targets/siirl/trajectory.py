"""An episode as siiRL counts it: forward passes, the steps of its counter, and the pieces
its actor backpropagates a trajectory in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.placement import decision_steps

if TYPE_CHECKING:
    from ...spec import Spec

#: siiRL's default ``actor.traj_mini_batch_size``: trajectory steps forwarded per backward.
TRAJ_MINI_BATCH = 16


def trajectory_length(spec: Spec) -> int:
    """Forward passes per episode: one per decision, a decision being
    :func:`~vlagen.targets.common.placement.decision_steps` backend steps (siiRL's rollout steps
    ``action_chunks_len`` at a time until ``max_steps``, ``while step < max_steps``)."""
    return -(-spec.env.max_episode_steps // decision_steps(spec))


def max_steps(spec: Spec) -> int:
    """``embodied.env.max_steps``, in the steps siiRL's rollout counts (``action_chunks_len``
    per forward pass), which the package's env turns back into backend steps."""
    return trajectory_length(spec) * steps_per_forward(spec)


def backend_steps_per_step(spec: Spec) -> int:
    """Backend steps per step of siiRL's counter (1, but a waypoint decision's steps on a
    stepping simulator, which siiRL counts as one)."""
    return decision_steps(spec) // steps_per_forward(spec)


def steps_per_forward(spec: Spec) -> int:
    """Env steps per forward pass (``embodied.action_chunks_len``): OFT's whole chunk, else one
    decision (the openvla path decodes one action per forward)."""
    return spec.model.action.chunk if spec.model.family == "openvla_oft" else 1


def traj_mini_batch(length: int) -> int | None:
    """The largest divisor of ``length`` up to siiRL's default 16 (its actor asserts that
    ``traj_mini_batch_size`` divides the trajectory); None if only 1 does, for a trajectory
    longer than one step (one forward per step: correct, but the update would crawl)."""
    best = max(d for d in range(1, min(length, TRAJ_MINI_BATCH) + 1) if length % d == 0)
    return None if best == 1 and length > 1 else best


def nearest_divisible(length: int) -> int:
    """The nearest trajectory length above ``length`` with a divisor from 2 to 16."""
    return next(n for n in range(length + 1, 2 * length + 2) if traj_mini_batch(n) is not None)
