"""The spec's rollout and update, in framework-neutral terms, and what every target derives.

A spec says how an update is gathered once (``training``: initial conditions per update,
episodes per condition, envs in flight, mini-batches per update, micro-batch per GPU); each
target computes its own knobs from these (its batch sizes, env counts per worker, rounds) and
records where each came from as :class:`Derived` rows, which its generated config carries as
comments and its README as a table. The rules every framework shares are checked here once;
a target's own rules (how it splits envs over its workers) are checked by the target, each
saying which number would satisfy it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import Issue

if TYPE_CHECKING:
    from .spec import Spec, Training

__all__ = [
    "Derived",
    "comments",
    "largest_divisor",
    "neutral_issues",
    "next_multiple",
    "smallest_multiple_over",
    "split_fix",
]


@dataclass(frozen=True)
class Derived:
    """One framework config key a target computed from the spec, and from what."""

    key: str  #: the framework's dotted config key
    value: object
    source: str  #: how it follows from the spec, e.g. ``training.groups / 4 env workers``


def comments(rows: Sequence[Derived], own: Sequence[str] = ()) -> Mapping[str, str]:
    """The end-of-line comments of a generated config: ``= source`` of each derived row, and
    for the keys of ``own`` (the spec's per-target ``config`` block) that the spec sets it."""
    return {row.key: f"= {row.source}" for row in rows} | {
        key: "set by the spec's config block for this target" for key in own
    }


def next_multiple(value: int, step: int) -> int:
    """The smallest multiple of ``step`` at or above ``value``."""
    return -(-value // step) * step


def largest_divisor(number: int, at_most: int) -> int:
    """The largest divisor of ``number`` no greater than ``at_most`` (1 at least)."""
    return next(d for d in range(min(number, at_most), 0, -1) if number % d == 0)


def smallest_multiple_over(value: int, step: int, divides: int) -> int:
    """The smallest multiple of ``step`` at or above ``value`` that divides ``divides`` (a
    multiple of ``step``, so ``divides`` itself at most, and for a ``value`` above it)."""
    first = next_multiple(min(value, divides), step)
    return next(m for m in range(first, divides + 1, step) if divides % m == 0)


def split_fix(training: Training, split: int) -> str:
    """What makes the envs in flight a multiple of ``split`` (a framework's env workers
    times the envs each keeps together), dividing an update's episodes: other envs where
    some would do, else more groups (and envs to match, where the spec sets them)."""
    envs, episodes = training.envs, training.episodes
    if envs is not None and episodes % split == 0:
        return f"set training.envs to {smallest_multiple_over(envs, split, episodes)}"
    groups = next_multiple(training.groups, split // math.gcd(split, training.group_size))
    if envs is None:
        return f"set training.groups to {groups}"
    fit = smallest_multiple_over(envs, split, groups * training.group_size)
    return f"set training.groups to {groups} and training.envs to {fit}"


def neutral_issues(spec: Spec) -> Iterator[Issue]:
    """The rules every framework shares: a group's episodes run side by side (every
    framework keeps a group in one env worker), the envs run whole rounds of an update's
    episodes, and the mini-batches split the groups evenly."""
    t = spec.training
    if t.groups % t.mini_batches:
        yield Issue(
            ("training", "mini_batches"),
            f"the {t.groups} groups of an update split into mini_batches ({t.mini_batches}) "
            "equal mini-batches on every framework: set mini_batches to "
            f"{largest_divisor(t.groups, t.mini_batches)} or groups to "
            f"{next_multiple(t.groups, t.mini_batches)}",
        )
    if t.envs is None:
        return
    if t.envs % t.group_size:
        yield Issue(
            ("training", "envs"),
            f"the {t.group_size} episodes of a group run side by side on every framework "
            f"(in one env worker): envs ({t.envs}) must be a multiple of group_size; set "
            f"envs to {smallest_multiple_over(t.envs, t.group_size, t.episodes)}",
        )
    elif t.episodes % t.envs:
        fit = smallest_multiple_over(t.envs, t.group_size, t.episodes)
        yield Issue(
            ("training", "envs"),
            f"the envs run whole rounds of an update's {t.episodes} episodes (groups "
            f"{t.groups} x group_size {t.group_size}): envs ({t.envs}) must divide it; set "
            f"envs to {fit}, or leave it out to run them all at once",
        )
