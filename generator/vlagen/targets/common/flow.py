"""The notes of a target whose framework's own code cannot train a flow family (π0, π0.5):
the target's located reason, and where the families train instead."""

from __future__ import annotations


def flow_notes(reason: str) -> dict[str, str]:
    """``family_notes`` for the flow families, ``reason`` citing the framework's code."""
    return dict.fromkeys(
        ("pi0", "pi05"), f"{reason}: use target rlinf 0.3, whose actor re-scores the chain"
    )
