"""Model families as data: how each decodes actions and which env actions it can drive.

The generated policy core (``src/<pkg>/model/``) is laid out from these declarations; the
checks read them to reject a spec whose family cannot drive its env.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAMILIES", "SPECIAL_TOKENS", "FamilyDecl"]

SPECIAL_TOKENS = 4
"""Ids a tokenizer reserves before any action token: unknown, begin, end and padding."""


@dataclass(frozen=True)
class FamilyDecl:
    name: str
    decoding: str  #: autoregressive | parallel | module (your torch module scores the tokens)
    action_kinds: tuple[str, ...]  #: env.action kinds it can drive
    normalization: bool  #: whether `model.action.normalization` applies
    summary: str
    gripper: str = "close_positive"  #: default `model.action.gripper` (vlagen.gripper)

    @property
    def token_based(self) -> bool:
        """Whether actions are ids in a checkpoint's vocabulary (vs. your module's bins)."""
        return self.decoding != "module"


FAMILIES: dict[str, FamilyDecl] = {
    decl.name: decl
    for decl in (
        FamilyDecl(
            "openvla",
            "autoregressive",
            ("continuous", "delta_ee", "discrete"),
            normalization=True,
            summary="one action token at a time, each conditioned on the ones before",
            gripper="rlds",  # trained on Open X-Embodiment's RLDS data
        ),
        FamilyDecl(
            "openvla_oft",
            "parallel",
            ("continuous", "delta_ee", "discrete"),
            normalization=True,
            summary="all chunk x dim action tokens in one forward pass over placeholders",
            gripper="rlds",  # fine-tuned on LIBERO's RLDS data, OpenVLA's convention
        ),
        FamilyDecl(
            "waypoint",
            "autoregressive",
            ("waypoints",),
            normalization=False,
            summary="K waypoints as tokens, one coordinate at a time, binned over "
            "env.action.low/high",
        ),
        FamilyDecl(
            "custom",
            "module",
            ("continuous", "delta_ee", "discrete", "waypoints"),
            normalization=True,
            summary="your torch module scores every action token's bins in one call",
        ),
    )
}
