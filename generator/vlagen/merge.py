"""merge: carry a user's edits to a generated file into its new output (a 3-way merge).

The base is what vlagen wrote last, "yours" is the file on disk, "generated now" is the new
output. Lines changed on one side only are taken from that side; lines both sides changed
differently are a conflict, written into the file between diff3-style markers (git's, with
the base section) so that editors and ``git diff`` show them. The line alignment is
``merge3``'s (the algorithm of bzr and breezy); only the marker layout is ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MARKERS", "Merged", "has_conflict_markers", "merge"]

#: The marker lines, in order: start, base, separator, end.
MARKERS = (
    b"<<<<<<< yours\n",
    b"||||||| generated before\n",
    b"=======\n",
    b">>>>>>> generated now\n",
)
#: Any one of the labelled marker lines left in a file means a conflict is not resolved yet
#: (``=======`` alone is ordinary text, a Markdown heading underline for one).
_LEFT = re.compile(
    rb"^(?:"
    + b"|".join(re.escape(m.rstrip(b"\n")) for m in MARKERS if m != b"=======\n")
    + rb")\r?$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Merged:
    content: bytes
    conflicts: int  #: regions both sides changed differently, each between markers


def merge(base: bytes, yours: bytes, new: bytes) -> Merged:
    """``new`` with the changes from ``base`` to ``yours`` applied, as far as they do not
    overlap the changes from ``base`` to ``new``."""
    start, middle, separator, end = MARKERS
    out: list[bytes] = []
    conflicts = 0
    from merge3 import Merge3  # only a user's edit needs it

    regions = Merge3(_lines(base), _lines(yours), _lines(new)).merge_groups()
    for region in regions:
        if region[0] != "conflict":
            out.extend(region[1])
            continue
        _, base_part, your_part, new_part = region
        conflicts += 1
        out.append(start)
        out.extend(_terminated(your_part))
        out.append(middle)
        out.extend(_terminated(base_part))
        out.append(separator)
        out.extend(_terminated(new_part))
        out.append(end)
    return Merged(b"".join(out), conflicts)


def has_conflict_markers(content: bytes) -> bool:
    """Whether ``content`` still holds a marker line of a conflict :func:`merge` wrote."""
    return _LEFT.search(content) is not None


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _terminated(lines: list[bytes]) -> list[bytes]:
    """``lines`` with a newline after the last one, so a marker always starts a line."""
    if lines and not lines[-1].endswith(b"\n"):
        return [*lines[:-1], lines[-1] + b"\n"]
    return list(lines)
