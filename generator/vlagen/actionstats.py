"""Real checkpoints' action statistics, for the tiny checkpoints of the presets that have them.

A tiny random checkpoint carries these under the spec's ``unnorm_key``, so that the package's
tests decode its tokens exactly as a real checkpoint's are decoded: the same un-normalization,
the same un-normalized gripper channel. Symmetric made-up statistics hid a gripper that could
never open.
"""

from __future__ import annotations

__all__ = ["LIBERO_OPENVLA_OFT", "OPENPI_LIBERO", "ActionStats", "OpenpiStats", "symmetric"]

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


OpenpiStats = dict[str, dict[str, tuple[float, ...]]]
"""openpi's ``norm_stats``: ``state`` and ``actions``, each ``mean``, ``std``, ``q01``,
``q99`` per dimension."""

#: openpi's π0.5 LIBERO statistics (``pi05_libero``'s
#: ``assets/physical-intelligence/libero/norm_stats.json``: LIBERO's 8-wide state, eef
#: position, axis-angle and gripper joints, and its 7-wide actions, the gripper -1 open,
#: +1 close), as a copy in the GitHub repository Yaneosian/pi05-lora-finetune-libero holds
#: them (commit 59b8d322); no second copy was found to check them against.
OPENPI_LIBERO: OpenpiStats = {
    "state": {
        "mean": (
            -0.04651534929871559,
            0.03437923640012741,
            0.7644979357719421,
            2.9721810817718506,
            -0.22033722698688507,
            -0.1256478726863861,
            0.026918232440948486,
            -0.027194775640964508,
        ),
        "std": (
            0.10494301468133926,
            0.15176798403263092,
            0.37853482365608215,
            0.3442850410938263,
            0.9069937467575073,
            0.3253868520259857,
            0.014174100942909718,
            0.014057003892958164,
        ),
        "q01": (
            -0.3992278680294752,
            -0.2688781352341175,
            0.0380015922319144,
            1.5083277968406676,
            -2.721004430627823,
            -1.0813218128442763,
            0.00173520012809895,
            -0.04004424215038307,
        ),
        "q99": (
            0.13545873028039934,
            0.33566314613819126,
            1.2698724751349537,
            3.2765059180259706,
            2.405436800289154,
            0.5971528978824616,
            0.04030334069116507,
            -0.0017878379381960213,
        ),
    },
    "actions": {
        "mean": (
            0.0550873838365078,
            0.0877121314406395,
            -0.08736424893140793,
            0.0007126464624889195,
            0.005475443787872791,
            -0.005534088239073753,
            -0.04571560397744179,
        ),
        "std": (
            0.33181580901145935,
            0.3758377134799957,
            0.44807109236717224,
            0.03933161124587059,
            0.06357795000076294,
            0.07857703417539597,
            0.9989544749259949,
        ),
        "q01": (
            -0.7072499999999999,
            -0.7983750000000001,
            -0.9375,
            -0.11467779144644738,
            -0.16425,
            -0.2240490057706833,
            -1.0,
        ),
        "q99": (
            0.937125,
            0.86775,
            0.937125,
            0.13163035735487938,
            0.19169999999999998,
            0.33742949963808055,
            0.9996,
        ),
    },
}
