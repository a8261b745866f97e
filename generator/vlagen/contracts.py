"""A target's contract as data, and what changed between two of them.

A :class:`Contract` says what a framework, at one version line, calls on the adapter (the env
side and the policy side, with signatures), which observation keys its rollout reads, how the
adapter gets in (registration) and which config snapshot lists its keys. Each target declares
one, checked against the framework's source; :func:`contract_diff` compares two, so that a
framework upgrade is a report (``vlagen targets diff``) rather than an archaeology session.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .targets import TargetDecl

__all__ = [
    "Change",
    "ConfigDiff",
    "Contract",
    "ContractDiff",
    "Method",
    "Registration",
    "Side",
    "config_diff",
    "contract_diff",
]


@dataclass(frozen=True)
class Method:
    """One method the framework calls on the adapter, as the framework calls it."""

    name: str
    params: str = "()"  #: the arguments as passed: ``(chunk_actions[N, C, A])``
    returns: str = "None"  #: what the framework reads back; empty: unspecified
    is_async: bool = False
    #: False: the framework calls it only with some setting, or its base class has a default.
    required: bool = True

    @property
    def signature(self) -> str:
        prefix = "async " if self.is_async else ""
        returns = f" -> {self.returns}" if self.returns else ""
        optional = "" if self.required else "  [optional]"
        return f"{prefix}{self.name}{self.params}{returns}{optional}"


@dataclass(frozen=True)
class Side:
    """The env or the policy side: what the adapter derives from, and what is called on it."""

    base: str  #: the class the adapter subclasses, or ``duck-typed``
    methods: tuple[Method, ...] = ()


@dataclass(frozen=True)
class Registration:
    """How the adapter's env and model become ones the framework builds."""

    env: str
    model: str
    hook: str  #: what runs the registration in every process that needs it


@dataclass(frozen=True)
class Contract:
    """The env/model contract of one framework version line (see the module docstring)."""

    summary: str  #: one line, for ``vlagen targets`` and the generated README
    env: Side
    policy: Side
    observation: tuple[str, ...]  #: keys the framework's rollout reads from the env
    registration: Registration
    config_snapshot: str  #: ``targets/<config_snapshot>.config.json``

    @property
    def config_file(self) -> str:
        return f"{self.config_snapshot}.config.json"


@dataclass(frozen=True)
class Change:
    """One difference: ``+`` added, ``-`` removed, ``~`` changed (``old`` to ``new``)."""

    kind: str
    name: str
    old: str = ""
    new: str = ""


@dataclass(frozen=True)
class ConfigDiff:
    """How two config snapshots' keys (key to type name) differ.

    ``moved``: a removed key and an added key that are the same path under another top-level
    section, of the same type, each the only candidate for the other (RLinf 0.3's
    ``algorithm.sampling_params.top_k`` to ``rollout.sampling_params.top_k``); they are in
    neither ``added`` nor ``removed``.
    """

    old: str  #: snapshot names
    new: str
    old_count: int
    new_count: int
    added: Mapping[str, str] = field(default_factory=dict)
    removed: Mapping[str, str] = field(default_factory=dict)
    retyped: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    moved: Mapping[str, tuple[str, str]] = field(default_factory=dict)  #: old: (new, type)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.retyped or self.moved)


@dataclass(frozen=True)
class ContractDiff:
    """What changed from target ``old`` to target ``new`` (keys like ``rlinf@0.2``)."""

    old: str
    new: str
    env: tuple[Change, ...]
    policy: tuple[Change, ...]
    observation: tuple[Change, ...]
    registration: tuple[Change, ...]
    config: ConfigDiff
    algorithms: tuple[Change, ...]
    model_families: tuple[Change, ...]

    @property
    def empty(self) -> bool:
        changes = (self.env, self.policy, self.observation, self.registration, self.algorithms)
        return not any(changes) and not self.model_families and self.config.empty


def contract_diff(old: TargetDecl, new: TargetDecl) -> ContractDiff:
    """What changed from ``old`` to ``new``: usually two version lines of one framework."""
    a, b = old.contract, new.contract
    return ContractDiff(
        old=old.key,
        new=new.key,
        env=_side_changes(a.env, b.env),
        policy=_side_changes(a.policy, b.policy),
        observation=_set_changes(a.observation, b.observation),
        registration=tuple(
            Change("~", f.name, getattr(a.registration, f.name), getattr(b.registration, f.name))
            for f in fields(Registration)
            if getattr(a.registration, f.name) != getattr(b.registration, f.name)
        ),
        config=config_diff(a.config_snapshot, _keys(old), b.config_snapshot, _keys(new)),
        algorithms=_mapping_changes(old.algorithms, new.algorithms),
        model_families=_set_changes(old.model_families, new.model_families),
    )


def _keys(target: TargetDecl) -> Mapping[str, str]:
    """Key to type name of ``target``'s committed config snapshot."""
    return target.config_keys() if target.config_keys is not None else {}


def config_diff(
    old_name: str, old: Mapping[str, str], new_name: str, new: Mapping[str, str]
) -> ConfigDiff:
    """How snapshot ``new`` (key to type) differs from ``old``."""
    added = {k: new[k] for k in sorted(new.keys() - old.keys())}
    removed = {k: old[k] for k in sorted(old.keys() - new.keys())}
    moved = _moves(removed, added)
    for source, (target, _) in moved.items():
        del removed[source], added[target]
    retyped = {k: (old[k], new[k]) for k in sorted(old.keys() & new.keys()) if old[k] != new[k]}
    return ConfigDiff(old_name, new_name, len(old), len(new), added, removed, retyped, moved)


def _moves(removed: Mapping[str, str], added: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    def by_rest(keys: Iterable[str]) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = defaultdict(list)
        for key in keys:
            rest = key.partition(".")[2]
            if "." in rest:  # a leaf alone (``seed``) is too common to pair on
                groups[rest].append(key)
        return groups

    sources, targets = by_rest(removed), by_rest(added)
    moves = {}
    for rest, olds in sources.items():
        news = targets.get(rest, [])
        if len(olds) == 1 and len(news) == 1 and removed[olds[0]] == added[news[0]]:
            moves[olds[0]] = (news[0], added[news[0]])
    return dict(sorted(moves.items()))


def _side_changes(old: Side, new: Side) -> tuple[Change, ...]:
    changes = [Change("~", "base", old.base, new.base)] if old.base != new.base else []
    before = {m.name: m for m in old.methods}
    after = {m.name: m for m in new.methods}
    for name, method in before.items():
        if name not in after:
            changes.append(Change("-", name, old=method.signature))
        elif after[name] != method:
            changes.append(Change("~", name, method.signature, after[name].signature))
    changes += [Change("+", n, new=m.signature) for n, m in after.items() if n not in before]
    return tuple(changes)


def _set_changes(old: Iterable[str], new: Iterable[str]) -> tuple[Change, ...]:
    before, after = list(old), list(new)
    removed = [Change("-", k) for k in before if k not in after]
    return tuple(removed + [Change("+", k) for k in after if k not in before])


def _mapping_changes(old: Mapping[str, str], new: Mapping[str, str]) -> tuple[Change, ...]:
    changes = []
    for name, text in old.items():
        if name not in new:
            changes.append(Change("-", name, old=text))
        elif new[name] != text:
            changes.append(Change("~", name, text, new[name]))
    changes += [Change("+", n, new=t) for n, t in new.items() if n not in old]
    return tuple(changes)
