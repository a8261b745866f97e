"""The text ``vlagen targets diff`` prints: a contract diff in sections, in the manner of
``buf breaking`` (ENV, POLICY, OBSERVATION, REGISTRATION, CONFIG, ALGORITHMS, MODEL FAMILIES),
each line ``+`` added, ``-`` removed, ``~`` changed or ``>`` moved.

Config keys can run to dozens: their counts come first, then every key (or, with
``keys=False``, the counts per top-level section).
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .contracts import Change, ConfigDiff, contract_diff

if TYPE_CHECKING:
    from .targets import TargetDecl

__all__ = ["diff_report"]

WIDTH = 100  #: where long descriptions of a change wrap


def diff_report(old: TargetDecl, new: TargetDecl, *, keys: bool = True) -> str:
    """The report of what changed from ``old`` to ``new``, ending in what to do about it."""
    diff = contract_diff(old, new)
    same = old.framework == new.framework
    labels = (old.version, new.version) if same else (_name(old), _name(new))
    a, b = old.contract, new.contract
    title = f"{_name(old)} -> {new.version if same else _name(new)}"
    lines = [f"{title}  ({old.requirement} -> {new.requirement})", ""]
    sections = (
        ("ENV", _base(a.env.base, b.env.base), diff.env),
        ("POLICY", _base(a.policy.base, b.policy.base), diff.policy),
        ("OBSERVATION", "", diff.observation),
        ("REGISTRATION", "", diff.registration),
    )
    for heading, base, changes in sections:
        lines += [f"{heading}{base}", *_changes(changes, labels), ""]
    lines += [*_config(diff.config, keys), ""]
    lines += ["ALGORITHMS", *_changes(diff.algorithms, labels), ""]
    lines += ["MODEL FAMILIES", *_changes(diff.model_families, labels), ""]
    lines.append(_next_step(old, new) if not diff.empty else "no differences")
    return "\n".join(lines) + "\n"


def _name(target: TargetDecl) -> str:
    return f"{target.framework} {target.version}"


def _base(old: str, new: str) -> str:
    """The base class beside the heading, where both sides share it (else it is a change)."""
    return f"  {old}" if old == new else ""


def _changes(changes: tuple[Change, ...], labels: tuple[str, str]) -> Iterator[str]:
    if not changes:
        yield "  unchanged"
    for change in changes:
        if change.kind == "~":
            yield f"  ~ {change.name}"
            for label, text in zip(labels, (change.old, change.new), strict=True):
                lead = f"      {label}: "
                yield from textwrap.wrap(
                    text, WIDTH, initial_indent=lead, subsequent_indent=" " * len(lead)
                )
        else:
            detail = change.new if change.kind == "+" else change.old
            yield f"  {change.kind} {detail or change.name}"


def _config(config: ConfigDiff, keys: bool) -> Iterator[str]:
    yield (
        f"CONFIG  {config.old}.config.json ({config.old_count} keys) -> "
        f"{config.new}.config.json ({config.new_count} keys)"
    )
    if config.empty:
        yield "  unchanged"
        return
    yield (
        f"  {len(config.moved)} moved, {len(config.added)} added, {len(config.removed)} removed, "
        f"{len(config.retyped)} retyped"
    )
    if not keys:
        yield from _by_section(config)
        return
    for source, (target, kind) in config.moved.items():
        yield f"  > {source} -> {target} ({kind})"
    yield from (f"  + {key} ({kind})" for key, kind in config.added.items())
    yield from (f"  - {key} ({kind})" for key, kind in config.removed.items())
    yield from (f"  ~ {key}: {was} -> {now}" for key, (was, now) in config.retyped.items())


def _by_section(config: ConfigDiff) -> Iterator[str]:
    """Counts per top-level section (a move counts under the section it leaves)."""
    groups = {
        "moved": config.moved,
        "added": config.added,
        "removed": config.removed,
        "retyped": config.retyped,
    }
    counts = {name: Counter(k.partition(".")[0] for k in keys) for name, keys in groups.items()}
    for section in sorted(set().union(*counts.values())):
        parts = [f"{c[section]} {name}" for name, c in counts.items() if c[section]]
        yield f"  {section}: {', '.join(parts)}"


def _next_step(old: TargetDecl, new: TargetDecl) -> str:
    if old.framework == new.framework:
        change = f'set version: "{new.version}" on the {new.framework} target (now "{old.version}")'
    else:
        change = (
            f'replace the target {{framework: {old.framework}, version: "{old.version}"}} by '
            f'{{framework: {new.framework}, version: "{new.version}"}}'
        )
    return (
        f"next: in your spec, {change}, then run `vlagen regen --dry-run` to see the files the "
        "change touches"
    )
