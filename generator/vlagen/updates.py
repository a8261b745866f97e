"""Whether a target's optimizer steps survive the dtype it holds the trainable weights in.

A target whose config holds them in bfloat16 (``TargetDecl.weights_dtype``: RLinf's
``actor.model.precision`` follows ``model.dtype``; verl's ``model_dtype`` is float32 unless a
spec's config block sets it) gets an
:class:`UpdateNote`: the share of Adam's steps at ``training.learning_rate`` that bfloat16
keeps on the weights the spec trains (:mod:`vlagen.rounding`), and, where it keeps fewer
than half, what to do. AReaL and siiRL keep float32 weights for their optimizers.
"""

from __future__ import annotations

from dataclasses import dataclass

from .backbones import BACKBONES
from .rounding import full_weights, kept, lora_a, smallest_rate
from .spec import Spec
from .targets import TargetDecl

__all__ = ["UpdateNote", "update_note"]

SHARE = 0.5  #: below this share of steps kept, a note is a warning


@dataclass(frozen=True)
class UpdateNote:
    """How much of each step a target's bfloat16 weights keep, for one spec."""

    target: TargetDecl
    lr: float
    weights: str  #: what the weights are, as :class:`~vlagen.rounding.WeightModel` names them
    share: float  #: the share of the weights a step changes
    enough: float  #: the smallest learning rate that changes half of them

    @property
    def warns(self) -> bool:
        return self.share < SHARE

    @property
    def text(self) -> str:
        held = self.target.weights_dtype
        assert held is not None
        line = (
            f"{self.target.title} {self.target.version} holds the trainable weights in "
            f"bfloat16 ({held.key}, read by {held.source}), and AdamW steps them there: at "
            f"training.learning_rate {self.lr:g}, a step (about the rate, per weight) changes "
            f"{self.share:.0%} of the {self.weights}"
        )
        if not self.warns:
            return line + "."
        return line + (
            "; the rest are below half a bfloat16 unit and are rounded away, so the policy may "
            f"not move. Fix: training.learning_rate {self.enough:g} or more (half of them "
            f"move), or float32 weights for the optimizer: {held.key}: {held.float32} in the "
            "target's config block, targets[i].config (the compute stays bfloat16 through "
            "its mixed precision; the weights and their gradients take twice the memory)."
        )


def update_note(spec: Spec, index: int, target: TargetDecl) -> UpdateNote | None:
    """The note for ``target``, ``spec.targets[index]``; ``None`` where its optimizer's
    weights are not bfloat16 (the spec's ``model.dtype``, or the target's ``config`` block
    sets the key otherwise)."""
    held = target.weights_dtype
    if held is None:
        return None
    planned = spec.model.dtype if held.follows_model else held.float32
    value = (spec.targets[index].config or {}).get(held.key, planned)
    if str(value).lower() not in ("bf16", "bfloat16"):
        return None
    backbone = BACKBONES[spec.model.backbone]
    weights = lora_a(backbone.width) if spec.model.lora else full_weights()
    lr = spec.training.learning_rate
    return UpdateNote(target, lr, weights.name, kept(lr, weights), smallest_rate(weights))
