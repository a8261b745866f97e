"""Whether a target's optimizer steps survive the dtype it holds the trainable weights in.

A target whose config holds them in bfloat16 or float16 (``TargetDecl.weights_dtype``:
RLinf's ``actor.model.precision`` follows ``model.dtype``; verl's ``model_dtype`` is float32
unless a spec's config block sets it) gets an :class:`UpdateNote`: the share of the weights
the spec trains that Adam's steps at ``training.learning_rate`` change, its first ones and
its settled ones (:mod:`vlagen.rounding`), and, where even its first, largest steps change
fewer than half, what to do: a rate whose settled steps change half, or float32 weights.
AReaL and siiRL keep float32 weights for their optimizers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .backbones import BACKBONES
from .families import FAMILIES
from .rounding import ADAM_SETTLED, full_weights, kept, lora_a, smallest_rate
from .spec import Spec
from .targets import TargetDecl

__all__ = ["UpdateNote", "update_note"]

SHARE = 0.5  #: below this share of steps kept, a note is a warning
#: the config values of the 16-bit dtypes → their names
HALF_DTYPES = {
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp16": "float16",
    "float16": "float16",
    "half": "float16",
}


@dataclass(frozen=True)
class UpdateNote:
    """How much of each step a target's bfloat16 or float16 weights keep, for one spec."""

    target: TargetDecl
    lr: float
    weights: str  #: what the weights are, as :class:`~vlagen.rounding.WeightModel` names them
    share: float  #: the share of the weights a first step (about the rate) changes
    settled: float  #: the share a settled step changes (:func:`~vlagen.rounding.kept`)
    enough: float  #: the smallest learning rate whose settled steps change half of them
    dtype: str = "bfloat16"  #: the weights' dtype
    own_dtypes: bool = False
    """The config computes in each weight's own dtype (a flow family's: FSDP casts none, as
    RLinf's OpenPI examples), so float32 weights compute in float32 too."""

    @property
    def warns(self) -> bool:
        return self.share < SHARE

    @property
    def text(self) -> str:
        held = self.target.weights_dtype
        assert held is not None
        trained = "the expert's trainable weights" if self.own_dtypes else "the trainable weights"
        line = (
            f"{self.target.title} {self.target.version} holds {trained} in "
            f"{self.dtype} ({held.key}, read by {held.source}), and AdamW steps them there: at "
            f"training.learning_rate {self.lr:g}, its first steps (about the rate, per weight) "
            f"change {self.share:.0%} of the {self.weights}, its settled ones (about normal, "
            f"{ADAM_SETTLED:.2f} of the rate wide, where the gradient is mostly noise) "
            f"{self.settled:.0%}"
        )
        if not self.warns:
            return line + "."
        rounded = (
            f"; the rest are below half a {self.dtype} unit and are rounded away, so the policy "
            "may not move. Fix: "
        )
        float32 = (
            f"float32 weights for the optimizer: {held.key}: {held.float32} in the target's "
            "config block, targets[i].config ("
        )
        if self.own_dtypes:  # a flow family: its float32 norms and heads keep every step
            return line + (
                f"{rounded}{float32}the actor then computes in float32 too: this config's "
                "FSDP casts no weight; the weights and their gradients take twice the "
                "memory). The norms and heads, float32 as openpi keeps them, keep every step; "
                "and RLinf's own π0.5 examples train this layout at 5e-6. A learning rate "
                f"that keeps half the expert's steps ({self.enough:g}) is far above theirs."
            )
        return line + (
            f"{rounded}training.learning_rate {self.enough:g} or more (its settled steps "
            f"change half of them), or {float32}the compute stays {self.dtype} through its "
            "mixed precision; the weights and their gradients take twice the memory)."
        )


def update_note(spec: Spec, index: int, target: TargetDecl) -> UpdateNote | None:
    """The note for ``target``, ``spec.targets[index]``; ``None`` where its optimizer's
    weights are neither bfloat16 nor float16 (the spec's ``model.dtype``, or the target's
    ``config`` block sets the key otherwise)."""
    held = target.weights_dtype
    if held is None:
        return None
    planned = spec.model.dtype if held.follows_model else held.float32
    value = (spec.targets[index].config or {}).get(held.key, planned)
    dtype = HALF_DTYPES.get(str(value).lower())
    if dtype is None:
        return None
    backbone = BACKBONES[spec.model.backbone]
    weights = lora_a(backbone.width) if spec.model.lora else full_weights()
    flow = FAMILIES[spec.model.family].flow is not None
    if flow:  # openpi keeps the expert's norms and the action and time heads in float32
        weights = replace(weights, name="expert's bfloat16 " + weights.name)
    lr = spec.training.learning_rate
    return UpdateNote(
        target,
        lr,
        weights.name,
        kept(lr, weights, dtype),
        kept(lr, weights, dtype, settled=True),
        smallest_rate(weights, dtype=dtype, settled=True),
        dtype,
        own_dtypes=flow,
    )
