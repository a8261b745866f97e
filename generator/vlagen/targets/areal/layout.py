"""AReaL 1.0's config layout: the snapshot of its ``GRPOConfig`` dataclasses every key of a
generated config is checked against, beside the package's own section."""

from __future__ import annotations

from typing import Any

from ..common.config_schema import flat_keys, load_schema, lookup, value_fits

SCHEMA = "areal_1_0"
#: The package's own section (``VlaConfig`` in the generated ``train.py``, a field of its
#: ``GRPOConfig`` subclass, as AReaL's examples extend the config).
OWN_KEYS = frozenset({"vla.group_size", "vla.backend", "vla.max_decisions"})


def config_problems(config: dict[str, Any]) -> list[str]:
    """Keys of ``config`` AReaL 1.0.4's ``GRPOConfig`` lacks, and values of another type.
    Interpolations (``${...}``) are OmegaConf's to resolve and check, at load time."""
    schema = load_schema(SCHEMA)
    problems = []
    for key, value in flat_keys(config).items():
        if key in OWN_KEYS:
            continue
        kind = lookup(schema, key)
        if kind is None:
            problems.append(f"{key}: not a key of AReaL's GRPOConfig (nothing would read it)")
        elif not (isinstance(value, str) and value.startswith("${")) and not value_fits(
            kind, value
        ):
            problems.append(f"{key}: {value!r} is not a {kind}")
    return problems
