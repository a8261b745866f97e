"""Gripper conventions as data: how a checkpoint writes the gripper channel, and how the env
core's canonical gripper (-1 = open, +1 = close) relates to it.

A delta end-effector action's last channel is the gripper. Checkpoints disagree on what its
values mean: OpenVLA and OpenVLA-OFT were trained on Open X-Embodiment's RLDS data, where the
gripper is in [0, 1] with 0 = close and 1 = open, and they leave it un-normalized (the
statistics' mask is false there); robosuite and LIBERO command +1 to close; ManiSkill's Panda
commands +1 to open. Each convention is an affine map of the channel onto the canonical one,
applied once, by the policy core, after un-normalizing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import EnvAction

__all__ = ["CONVENTIONS", "GripperConvention", "has_gripper"]


def has_gripper(action: EnvAction) -> bool:
    """Whether an ``env.action`` ends in a gripper channel (only delta_ee's does)."""
    return action.kind == "delta_ee"


@dataclass(frozen=True)
class GripperConvention:
    """One convention: ``canonical = scale * value + offset`` on the gripper channel."""

    name: str
    scale: float
    offset: float
    doc: str  #: what the checkpoint's values mean, in words

    def to_canonical(self, value: float) -> float:
        return self.scale * value + self.offset

    def from_canonical(self, value: float) -> float:
        return (value - self.offset) / self.scale


CONVENTIONS: dict[str, GripperConvention] = {
    c.name: c
    for c in (
        GripperConvention(
            "rlds",
            -2.0,
            1.0,
            "[0, 1], 0 = close and 1 = open (OpenVLA's and Open X-Embodiment's training "
            "convention, left un-normalized under the statistics' mask)",
        ),
        GripperConvention(
            "close_positive", 1.0, 0.0, "[-1, 1], +1 closes (robosuite's and LIBERO's controls)"
        ),
        GripperConvention("open_positive", -1.0, 0.0, "[-1, 1], +1 opens (ManiSkill's Panda)"),
    )
}
