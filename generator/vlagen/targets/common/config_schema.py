"""A framework's config schema as data: every dotted key its config accepts, with a type.

Each target's snapshot is ``<target>.config.json`` next to its declaration module, in the
``vlagen.targets`` folder. Two kinds are built here:

- a framework's config dataclasses (siiRL 0.2, AReaL 1.0): siiRL parses CLI overrides over
  dataclass defaults and silently drops unknown keys, so vlagen checks each override key
  against a snapshot of those dataclasses. :func:`dataclass_keys` builds the snapshot from
  the real classes; vlagen's tests rebuild it from the installed framework and compare, so
  the snapshot cannot drift;
- the config a framework composes from its YAML (RLinf's examples, verl's VLA trainer), each
  leaf with the type of its value (:func:`flatten`), written by the target's ``snapshot`` tool.

Configs are checked against them with :func:`lookup`, :func:`flat_keys` and :func:`value_fits`.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

__all__ = [
    "SNAPSHOT_DIR",
    "dataclass_keys",
    "flat_keys",
    "flatten",
    "load_schema",
    "lookup",
    "require_fits",
    "set_keys",
    "type_name",
    "value_fits",
]

#: The package whose folder holds the snapshots, beside the declaration modules.
SNAPSHOT_PACKAGE = "vlagen.targets"
#: That folder, where the snapshot tools write.
SNAPSHOT_DIR = Path(__file__).resolve().parent.parent

#: Types whose values are free-form mappings: any sub-key is accepted.
MAPPING = "dict"


#: An optional section (``X | None`` of a dataclass ``X``): null, or its own keys.
SECTION = "section?"


def dataclass_keys(cls: type, optional_sections: bool = False) -> dict[str, str]:
    """``{"a.b.c": type}`` for every leaf field of the dataclass tree rooted at ``cls``.
    With ``optional_sections``, a field ``X | None`` of a dataclass ``X`` is :data:`SECTION`
    and its fields are listed too (AReaL's ``actor.optimizer``, ``actor.reward_norm``)."""
    keys: dict[str, str] = {}
    _walk(cls, "", keys, optional_sections)
    return dict(sorted(keys.items()))


def _walk(cls: type, prefix: str, keys: dict[str, str], sections: bool) -> None:
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        inner = _optional_dataclass(hint) if sections else None
        if dataclasses.is_dataclass(hint):
            _walk(hint, f"{prefix}{f.name}.", keys, sections)
        elif inner is not None:
            keys[f"{prefix}{f.name}"] = SECTION
            _walk(inner, f"{prefix}{f.name}.", keys, sections)
        else:
            keys[f"{prefix}{f.name}"] = _hint_name(hint)


def _optional_dataclass(hint: Any) -> type | None:
    """``X`` of ``X | None`` where ``X`` is a dataclass, else None."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return None
    rest = [a for a in typing.get_args(hint) if a is not type(None)]
    return rest[0] if len(rest) == 1 and dataclasses.is_dataclass(rest[0]) else None


def _hint_name(hint: Any) -> str:
    """A small, stable spelling of a field type: ``int``, ``str?``, ``list``, ``a|b`` ..."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return "|".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        inner = _hint_name(rest[0]) if len(rest) == 1 else "any"
        return inner if inner.endswith("?") else f"{inner}?"
    if hint is typing.Any or hint is type(None):
        return "any"
    base = origin or hint
    if base in (dict, typing.Dict):  # noqa: UP006 - siiRL spells it both ways
        return MAPPING
    if base in (list, tuple, set):
        return "list"
    if base in (bool, int, float, str):
        return base.__name__
    return "any"


@cache
def load_schema(name: str) -> dict[str, str]:
    """The committed snapshot ``targets/<name>.config.json``."""
    return json.loads(files(SNAPSHOT_PACKAGE).joinpath(f"{name}.config.json").read_text("utf-8"))


def lookup(schema: dict[str, str], key: str) -> str | None:
    """The type of ``key``, or of the free-form mapping it is under; ``None`` if unknown."""
    if key in schema:
        return schema[key]
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if schema.get(".".join(parts[:cut])) in (MAPPING, f"{MAPPING}?"):
            return "any"
    return None


def set_key(tree: dict, key: str, value: object) -> None:
    """Set dotted ``key`` of a nested config to ``value``, making the sections it needs."""
    *sections, leaf = key.split(".")
    for name in sections:
        tree = tree.setdefault(name, {})
    tree[leaf] = value


def set_keys(tree: dict, keys: dict[str, object] | None) -> tuple[str, ...]:
    """Set each dotted key of ``keys`` (a spec's per-target ``config`` block) in a nested
    config; the keys set, in order."""
    for key, value in (keys or {}).items():
        set_key(tree, key, value)
    return tuple(keys or ())


def flat_keys(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a.b": value}`` of every leaf of a nested config (empty dicts and lists are leaves)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(flat_keys(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def value_fits(kind: str, value: object) -> bool:
    """Whether a YAML scalar or list ``value`` suits a field of type ``kind`` (``null`` or
    ``missing``: a key a framework's examples leave unset, any value; ``float`` takes an int).
    ``kind`` is a dataclass snapshot's (:func:`dataclass_keys`) or a layout's
    (:func:`type_name`)."""
    if kind in ("null", "missing"):
        return True
    optional = kind.endswith("?")
    kind = kind.rstrip("?")
    if value is None:
        return optional or kind == "any"
    if kind == "any":
        return True
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "list":
        return isinstance(value, list)
    if kind == MAPPING:
        return isinstance(value, dict)
    return str(value) in kind.split("|")  # a Literal


def require_fits(problems: list[str], mismatch: str) -> None:
    """Stop before anything is written where a plan's config does not fit its framework's
    (``problems``, each on a line under ``mismatch``): a vlagen bug, not a spec error."""
    if problems:
        raise AssertionError(f"{mismatch}:\n" + "\n".join(problems))


def type_name(value: object) -> str:
    """A layout's name for a config value's type (``null``: the config leaves it unset; an
    ``int`` also fits ``float`` keys, see :func:`value_fits`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    return MAPPING


def flatten(
    tree: dict, prefix: str = "", kind: Callable[[object], str] = type_name
) -> dict[str, str]:
    """``{"a.b": type}`` of every leaf (an empty dict or a list is a leaf), each leaf's type
    named by ``kind``."""
    out: dict[str, str] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{path}.", kind))
        else:
            out[path] = kind(value)
    return out


def render(keys: dict[str, str]) -> str:
    """A dataclass snapshot as committed: one key per line, sorted."""
    return json.dumps(keys, indent=1, sort_keys=True) + "\n"


def render_layout(document: dict) -> str:
    """A layout snapshot as committed: its document (keys, and where they came from) as
    built."""
    return json.dumps(document, indent=1) + "\n"


def main(argv: list[str] | None = None) -> None:
    """``python -m vlagen.targets.common.config_schema module:Class [--sections]``: print the
    snapshot of a framework's config dataclass (where the framework is installed)."""
    import argparse
    import importlib

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("cls", help="module:Class of the root config dataclass")
    parser.add_argument("--sections", action="store_true", help="descend into X | None")
    args = parser.parse_args(argv)
    module, _, name = args.cls.partition(":")
    root = getattr(importlib.import_module(module), name)
    print(render(dataclass_keys(root, args.sections)), end="")


if __name__ == "__main__":
    main()
