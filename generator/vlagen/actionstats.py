"""Real checkpoints' action statistics, for the tiny checkpoints of the presets that have them.

A tiny random checkpoint carries these under the spec's ``unnorm_key``, so that the package's
tests decode its tokens exactly as a real checkpoint's are decoded: the same un-normalization,
the same un-normalized gripper channel. Symmetric made-up statistics hid a gripper that could
never open.
"""

from __future__ import annotations

__all__ = ["LIBERO_OPENVLA_OFT", "ActionStats", "symmetric"]

ActionStats = tuple[tuple[float, ...], tuple[float, ...], tuple[bool, ...]]
"""(q01, q99, mask), one value per action dimension."""

_MASK = (True,) * 6 + (False,)  # 6 end-effector deltas normalized, the gripper left as is

_LIBERO_10: ActionStats = (
    (
        -0.6348214149475098,
        -0.7741071581840515,
        -0.7633928656578064,
        -0.09749999642372131,
        -0.14819999992847435,
        -0.2742857038974762,
        0.0,
    ),
    (
        0.7714285850524902,
        0.8464285731315613,
        0.9375,
        0.13928571343421936,
        0.15964286029338837,
        0.3246428668498993,
        1.0,
    ),
    _MASK,
)

#: LIBERO task suite → OpenVLA-OFT's statistics for it, from the checkpoints'
#: ``dataset_statistics.json`` (moojink/openvla-7b-oft-finetuned-libero-{spatial,object,goal,10},
#: key ``<suite>_no_noops``). LIBERO-90 has no OpenVLA-OFT checkpoint to take them from.
LIBERO_OPENVLA_OFT: dict[str, ActionStats] = {
    "libero_spatial": (
        (
            -0.7454732114076613,
            -0.6616071462631226,
            -0.9375,
            -0.1071428582072258,
            -0.20678570866584778,
            -0.1842857152223587,
            0.0,
        ),
        (
            0.9375,
            0.8758928775787354,
            0.9321428537368774,
            0.1039285734295845,
            0.17678570747375488,
            0.14571428298950195,
            1.0,
        ),
        _MASK,
    ),
    "libero_object": (
        (
            -0.5383928418159485,
            -0.8758928775787354,
            -0.9375,
            -0.06964285671710968,
            -0.11678571254014969,
            -0.15964286029338837,
            0.0,
        ),
        (
            0.8464285731315613,
            0.84375,
            0.9375,
            0.08142857253551483,
            0.14892856776714325,
            0.0867857113480568,
            1.0,
        ),
        _MASK,
    ),
    "libero_goal": (
        (
            -0.8785714507102966,
            -0.7553571462631226,
            -0.9375,
            -0.1510714292526245,
            -0.1639285683631897,
            -0.13777500048279764,
            0.0,
        ),
        (
            0.9375,
            0.9107142686843872,
            0.9375,
            0.20357142388820648,
            0.26357144117355347,
            0.375,
            1.0,
        ),
        _MASK,
    ),
    "libero_10": _LIBERO_10,
}


def symmetric(dim: int) -> ActionStats:
    """Made-up statistics for a preset without real ones: ±0.75 on every channel but the
    last, which is left un-normalized."""
    return (-0.75,) * dim, (0.75,) * dim, (True,) * (dim - 1) + (False,)
