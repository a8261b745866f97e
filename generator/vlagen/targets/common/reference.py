"""A framework's own reference config, declared as data, and a package's config beside it.

Each target names, for a spec, the example its framework ships that is nearest the spec's
model and simulator (:class:`Reference`: the file in the framework's repository at the
released tag, what it trains, why it is the nearest one), with the keys a spec decides
(:class:`Key`: the reference's value as read there, what sets the key here and, for a value
that differs, why). :func:`compare` lays the package's config beside it key by key
(:class:`Row`: ``same``, ``differs`` or ``at launch``); the package README shows every
target's table (``templates/package/readme/reference.md.jinja``).

A default that follows the reference (the sampling temperature) is read from the same
declaration (:meth:`Reference.value`), so the table and the config cannot disagree on it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "AT_LAUNCH",
    "DERIVED",
    "Comparison",
    "Key",
    "Reference",
    "Row",
    "compare",
    "decided",
    "flat",
    "text",
]

AT_LAUNCH = "at launch"
#: What sets a batch key here, for the rows of keys the spec's ``training`` block derives.
DERIVED = "derived from the spec's `training` block (the batch table below says from what)"


T = TypeVar("T")


def decided(chosen: T | None, reference: T) -> T:
    """A setting the spec may decide and a target sets (``training.temperature``,
    ``training.gradient_checkpointing``): the spec's value (``chosen``), else the target's
    reference example's."""
    return reference if chosen is None else chosen


class _Lookup:
    """:attr:`Key.here` of a key whose value here is read from the package's config."""

    def __repr__(self) -> str:
        return "LOOKUP"


LOOKUP: Any = _Lookup()


@dataclass(frozen=True)
class Key:
    """One setting of the reference a spec decides, and how this package sets it."""

    key: str  #: the framework's dotted config key (or, with :attr:`words`, the setting named)
    reference: object  #: its value in the reference, as the framework reads it; None: not set
    source: str  #: what sets it here: a spec field, ``fixed``, or what it follows from
    #: Why this package's value differs, shown where it does (Markdown, one line).
    why: str = ""
    #: This package's value where no key of its config holds it (a setting in code).
    here: object = LOOKUP
    #: The key this package sets in its place, where the framework reads another one.
    here_key: str | None = None
    #: The reference's value in words, where the bare value would mislead.
    shown: str | None = None
    #: :attr:`key` names a setting in words, not a config key.
    words: bool = False


@dataclass(frozen=True)
class Reference:
    """A framework's example config, at the released tag, and the keys compared with it."""

    repository: str  #: https URL of the framework's repository
    tag: str  #: the release's tag
    path: str  #: the example's file in the repository
    trains: str  #: what the example trains: model, simulator, algorithm
    nearest: str  #: why it is the nearest example for this spec (Markdown)
    keys: tuple[Key, ...]
    #: Files the example composes (Hydra defaults, a base config), repository paths.
    composes: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        return f"{self.repository.rstrip('/')}/blob/{self.tag}/{self.path}"

    def value(self, key: str) -> object:
        """The reference's value of ``key`` (a :class:`KeyError` where it declares none)."""
        for entry in self.keys:
            if entry.key == key:
                return entry.reference
        raise KeyError(f"{self.path} declares no {key}")


@dataclass(frozen=True)
class Row:
    """One line of the README's table."""

    key: str
    words: bool  #: :attr:`key` is a setting in words
    reference: str  #: the reference's value, as text
    here: str  #: this package's value, as text (``at launch``: the launch fills it in)
    status: str  #: same | differs | at launch
    source: str  #: what sets it here (Markdown)
    why: str  #: why it differs (Markdown; empty where it does not)
    here_key: str | None = None  #: the key this package sets in the reference's key's place


@dataclass(frozen=True)
class Comparison:
    """A package's config beside its framework's reference, for its README."""

    reference: Reference
    rows: tuple[Row, ...]

    @property
    def differing(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.status == "differs")


#: What sets a key the spec's ``targets[i].config`` sets.
OWN = "the spec's `targets[].config`"


def compare(
    reference: Reference,
    values: Mapping[str, object],
    *,
    runtime: Collection[str] = (),
    own: Collection[str] = (),
) -> Comparison:
    """``reference``'s keys beside ``values`` (this package's config, dotted keys): each
    ``same`` or ``differs``, or ``at launch`` for a key of ``runtime`` (filled in when the
    package launches); a key of ``own`` (set by the spec's ``targets[i].config``) says so."""
    rows = []
    for entry in reference.keys:
        ours = entry.here_key or entry.key
        shown = entry.shown if entry.shown is not None else text(entry.reference)
        if ours in runtime:
            row = Row(entry.key, entry.words, shown, AT_LAUNCH, AT_LAUNCH, entry.source, "")
            rows.append(row)
            continue
        value = values.get(ours) if entry.here is LOOKUP else entry.here
        same = _same(value, entry.reference)
        source, why = (OWN, "") if ours in own else (entry.source, entry.why)
        status = "same" if same else "differs"
        why = "" if same else why
        row = Row(entry.key, entry.words, shown, text(value), status, source, why, entry.here_key)
        rows.append(row)
    return Comparison(reference, tuple(rows))


def _same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return a == b


def text(value: object) -> str:
    """A config value as the table shows it: ``not set`` for None, floats in ``%g``."""
    if value is None:
        return "not set"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(text(v) for v in value) + "]"
    return str(value)


def flat(config: Mapping[str, Any]) -> dict[str, object]:
    """A nested config's leaves by dotted key (a list is a leaf)."""
    return dict(_leaves(config, ""))


def _leaves(node: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, object]]:
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, dotted + ".")
        else:
            yield dotted, value
