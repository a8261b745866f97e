"""Checks of the targets against the spec: one per framework, a known version line and
algorithm, a family and backbone it trains, a value head some target trains, and the
spec's own config keys against the framework's snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ..errors import Issue, closest, did_you_mean
from ..families import FAMILIES
from ..spec import Spec
from ..spec.fields import read_as_bool
from ..targets import TargetDecl, all_targets, find_target, unsupported
from ..targets.common.config_schema import lookup, value_fits


def _check_targets(spec: Spec) -> Iterator[Issue]:
    seen: dict[str, int] = {}
    for index, target in enumerate(spec.targets):
        if target.framework in seen:
            yield Issue(
                ("targets", index, "framework"),
                f"{target.framework!r} is already targeted at targets[{seen[target.framework]}]; "
                "one package serves one version line of each framework",
            )
        seen.setdefault(target.framework, index)


def _check_value_head(spec: Spec) -> Iterator[Issue]:
    """A value head some target trains: none would leave it untrained, and RLinf's env
    worker adds its value to each truncated episode's last reward wherever there is one."""
    if not spec.model.value_head:
        return
    known = []
    for target in spec.targets:
        decl = find_target(target.framework, target.version)
        if decl is None or target.algorithm not in decl.algorithms:
            return  # an unknown target or algorithm: its own error says what to write
        known.append((target, decl))
    if not known or any(t.algorithm in d.critics for t, d in known):
        return
    trains = ", ".join(f"{d.title} {d.version}: {a}" for d in all_targets() for a in d.critics)
    yield Issue(
        ("model", "value_head"),
        "no target trains a value head ("
        + ", ".join(f"{t.algorithm} on {d.title} {d.version}" for t, d in known)
        + " has no critic): remove value_head: true, or train with an algorithm that has "
        f"one ({trains}); an untrained head's values would reach RLinf's rewards "
        "(rlinf/workers/env/env_worker.py: compute_bootstrap_rewards)",
    )


def unknown_version(framework: str, version: str, index: int) -> Iterator[Issue]:
    versions = [t.version for t in all_targets() if t.framework == framework]
    known = unsupported(framework, version)
    if known is not None:
        yield Issue(
            ("targets", index, "version"),
            f"{framework} {version} is not supported: {known.reason}. {known.instead} "
            f"(supported: {', '.join(versions)})",
        )
        return
    yield Issue(
        ("targets", index, "version"),
        f"{framework} {version!r} is not supported{did_you_mean(version, versions)} "
        f"(supported: {', '.join(versions)})",
    )


def target_fits(spec: Spec, decl: TargetDecl, index: int) -> Iterator[Issue]:
    algorithm = spec.targets[index].algorithm
    if algorithm not in decl.algorithms:
        yield Issue(("targets", index, "algorithm"), _no_algorithm(decl, algorithm))
    # a flow family's network is its own (PaliGemma and an expert): model.backbone lays out
    # the token families' inputs only
    flow = FAMILIES[spec.model.family].flow is not None
    if not flow and spec.model.backbone not in decl.backbones:
        yield Issue(
            ("model", "backbone"),
            f"{decl.title} {decl.version} (targets[{index}]) lays out inputs for backbone "
            f"{', '.join(map(repr, decl.backbones))}, not {spec.model.backbone!r}; targets "
            f"for {spec.model.backbone!r}: "
            + ", ".join(
                f"{t.framework} {t.version}"
                for t in all_targets()
                if spec.model.backbone in t.backbones
            )
            + (f". {decl.backbone_note}" if decl.backbone_note else ""),
        )
    if spec.model.family not in decl.model_families:
        yield Issue(
            ("model", "family"),
            f"{decl.title} {decl.version} (targets[{index}]) cannot train family "
            f"{spec.model.family!r}; it supports {', '.join(decl.model_families)}"
            + (f". {note}" if (note := decl.family_notes.get(spec.model.family)) else ""),
        )


def target_config(spec: Spec, decl: TargetDecl, index: int, *, planned: bool) -> Iterator[Issue]:
    """The spec's own keys for this target: the framework's (its snapshot), of the right
    type, and (where the target's own checks passed, so it can be ``planned``) none that it
    derives from the training block."""
    config = spec.targets[index].config or {}
    if config and decl.config_keys is None:
        yield Issue(
            ("targets", index, "config"),
            f"{decl.title} {decl.version} takes no config block (vlagen has no snapshot of "
            "its config to check keys against)",
        )
        return
    keys = decl.config_keys() if config and decl.config_keys else {}
    derive = planned and config and decl.derived
    derived = {d.key: d for d in decl.derived(spec, index)} if derive else {}
    for key, value in config.items():
        kind = lookup(dict(keys), key)
        if key in derived:
            yield Issue(
                ("targets", index, "config", key),
                f"{decl.title} {decl.version} derives {key} ({derived[key].value}) from the "
                f"spec: {derived[key].source}; change that instead",
            )
        elif kind is None:
            yield Issue(
                ("targets", index, "config", key),
                f"{key} is not a key of {decl.title} {decl.version}'s config (its snapshot, "
                f"{decl.framework}_{decl.version.replace('.', '_')}.config.json)"
                + _instead(key, value, keys, derived),
            )
        elif not value_fits(kind, value):
            yield Issue(
                ("targets", index, "config", key),
                f"{decl.title} {decl.version}'s {key} takes a {kind}, got "
                + (read_as_bool(value) if isinstance(value, bool) else repr(value))
                + _number_as_text(kind, value),
            )


def _instead(key: str, value: object, keys: dict[str, str], derived: dict) -> str:
    """What to write for ``key``, which is not one of ``keys``: a nested mapping's dotted
    path (the block's keys are paths to one value each), else the closest key, unless the
    target ``derived`` it from the spec (then the spec's field that sets it)."""
    if isinstance(value, dict) and value:
        path, nested, leaf = key, key, value
        while isinstance(leaf, dict) and leaf:
            name, leaf = next(iter(leaf.items()))
            path, nested = f"{path}.{name}", f"{nested}: {{{name}"
        nested += ": ..." + "}" * nested.count("{")
        said = (
            "; the config block's keys are dotted paths, each to one value: write "
            f"{path}: ..., not {nested}"
        )
        return said + (f" ({path} {_derived_note(path, derived)})" if path in derived else "")
    close = closest(key, keys)
    if close in derived:
        return f"; the closest key, {close}, {_derived_note(close, derived)}"
    return did_you_mean(key, [k for k in keys if k not in derived])


def _derived_note(key: str, derived: dict) -> str:
    return f"is derived from the spec: {derived[key].source}; change that instead"


def _number_as_text(kind: str, value: object) -> str:
    """Why a number came as text, and what to write: YAML 1.1 reads a number with an
    exponent as a float only with a dot and a signed exponent (``1.0e-2``, ``5.0e+3``), so
    ``1e-2`` and ``5.0e3`` are strings. Said where the number would fit ``kind``."""
    if not isinstance(value, str):
        return ""
    mantissa, e, exponent = value.lower().partition("e")
    try:
        number = float(value)
    except ValueError:
        return ""
    if not e or not math.isfinite(number) or not value_fits(kind, number):
        return ""
    mantissa += "" if "." in mantissa else ".0"
    exponent = exponent if exponent[:1] in ("+", "-") else f"+{exponent}"
    return (
        f": YAML reads {value} as text, not a number (a float with an exponent needs a dot "
        f"and a signed exponent); write {mantissa}e{exponent}"
    )


def _no_algorithm(decl: TargetDecl, algorithm: str) -> str:
    supported = f"(supported: {', '.join(decl.algorithms)})"
    name = decl.algorithm_aliases.get(algorithm.lower())
    if name is None:
        hint = did_you_mean(algorithm, decl.algorithms)
        return f"{decl.title} {decl.version} has no algorithm {algorithm!r}{hint} {supported}"
    return (
        f"{decl.title} {decl.version} has no algorithm {algorithm!r}: {decl.title} calls it "
        f"{name!r} ({decl.algorithms[name]}); write algorithm: {name} {supported}"
    )


#: This module's checks that take the spec alone, in the order they report.
CHECKS = (_check_targets, _check_value_head)
