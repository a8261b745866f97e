"""A framework's config schema as data: every dotted key its dataclasses accept, with a type.

siiRL 0.2 parses CLI overrides over dataclass defaults and silently drops unknown keys, so vlagen
checks each override key against a snapshot of those dataclasses (``<target>.config.json`` next to
the target's module). :func:`dataclass_keys` builds the snapshot from the real classes; vlagen's
tests rebuild it from the installed framework and compare, so the snapshot cannot drift.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["dataclass_keys", "load_schema", "lookup", "set_keys", "value_fits"]

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
            keys[f"{prefix}{f.name}"] = _type_name(hint)


def _optional_dataclass(hint: Any) -> type | None:
    """``X`` of ``X | None`` where ``X`` is a dataclass, else None."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return None
    rest = [a for a in typing.get_args(hint) if a is not type(None)]
    return rest[0] if len(rest) == 1 and dataclasses.is_dataclass(rest[0]) else None


def _type_name(hint: Any) -> str:
    """A small, stable spelling of a field type: ``int``, ``str?``, ``list``, ``a|b`` ..."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return "|".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        inner = _type_name(rest[0]) if len(rest) == 1 else "any"
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
    return json.loads(files(__package__).joinpath(f"{name}.config.json").read_text("utf-8"))


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


def value_fits(kind: str, value: object) -> bool:
    """Whether a YAML scalar or list ``value`` suits a field of type ``kind`` (``null`` or
    ``missing``: a key a framework's examples leave unset, any value)."""
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


def render(keys: dict[str, str]) -> str:
    """A snapshot as committed: one key per line, sorted."""
    return json.dumps(keys, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> None:
    """``python -m vlagen.targets._config_schema module:Class [--sections]``: print the
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
