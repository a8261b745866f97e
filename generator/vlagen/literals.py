"""Spec values as source-code literals: the only way a string from a spec reaches generated code.

A value is never pasted between quotes; it goes through ``repr`` (Python), a JSON-compatible
escaper (TOML), or an escaper for the target syntax, so quotes, backslashes, newlines, braces
and non-ASCII text all survive intact.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel

__all__ = [
    "ConstClass",
    "docstring",
    "md_text",
    "py_literal",
    "spec_classes",
    "toml_literal",
    "yaml_document",
]


def py_literal(value: Any) -> str:
    """A Python expression that evaluates to ``value`` (models become constructor calls)."""
    if isinstance(value, BaseModel):
        args = ", ".join(
            f"{name}={py_literal(getattr(value, name))}" for name in type(value).model_fields
        )
        return f"{type(value).__name__}({args})"
    if value is None or isinstance(value, bool | int | str):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite float {value!r} has no literal")
        return repr(value)
    if isinstance(value, list | tuple):
        items = [py_literal(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no literal for {type(value).__name__}")


_TOML_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_literal(value: Any) -> str:
    """A TOML value: basic strings escaped per the TOML spec, arrays of values, numbers."""
    if isinstance(value, str):
        out = []
        for ch in value:
            if ch in _TOML_ESCAPES:
                out.append(_TOML_ESCAPES[ch])
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04X}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    raise TypeError(f"no TOML literal for {type(value).__name__}")


def yaml_document(value: Any, comments: Mapping[str, str] | None = None) -> str:
    """A YAML block document of nested dicts/lists/scalars, keys in the given order; strings
    are quoted by the YAML emitter wherever they would read as anything but themselves.
    ``comments`` maps dotted keys of scalar values to an end-of-line comment."""
    import yaml

    text = yaml.safe_dump(
        value, sort_keys=False, default_flow_style=False, allow_unicode=True, width=88
    )
    if not comments:
        return text
    out, path, left = [], [], dict(comments)
    for line in text.splitlines(keepends=True):
        match = _YAML_KEY.match(line)
        if match:
            depth = len(match["indent"]) // 2
            path[depth:] = [match["key"]]
            key = ".".join(path)
            if key in left and match["value"] not in ("", "|", ">", "|-", ">-"):
                line = f"{line.rstrip()}  # {' '.join(left.pop(key).split())}\n"
        out.append(line)
    if left:
        raise ValueError(f"no scalar key {sorted(left)[0]!r} in the YAML to comment")
    return "".join(out)


#: A block mapping line the emitter writes: two spaces per level, a plain key.
_YAML_KEY = re.compile(r"^(?P<indent>(?:  )*)(?P<key>[A-Za-z_][\w.,-]*): ?(?P<value>.*)$")


# Characters that start Markdown/HTML markup; '_' only where it is not inside a word (GFM).
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_text(value: str) -> str:
    """Plain text for Markdown (a table cell or a line): markup characters escaped, one line."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), " ".join(value.splitlines()))


def quoted(value: str) -> str:
    """``value`` double-quoted with JSON's escapes, which Python reads the same: text that
    is safe inside a docstring or a comment, where ``repr`` could close a triple quote."""
    return json.dumps(value)


def docstring(text: str, indent: int = 4) -> str:
    """A triple-quoted docstring of ``text``, wrapped to 88 columns at ``indent``."""
    if '"""' in text or "\\" in text or text.endswith('"'):
        return py_literal(text)
    lines = textwrap.wrap(text, width=88 - indent - 3) or [""]
    if len(lines) == 1:
        return f'"""{lines[0]}"""'
    pad = " " * indent
    return '"""' + f"\n{pad}".join(lines) + f'\n{pad}"""'


@dataclass(frozen=True)
class ConstClass:
    """A frozen dataclass to emit in ``spec.py``, mirroring one spec model."""

    name: str
    doc: str
    fields: tuple[tuple[str, str], ...]  # (name, annotation)


def spec_classes(root: type[BaseModel]) -> tuple[ConstClass, ...]:
    """Dataclass declarations for ``root`` and every model it contains, dependencies first."""
    ordered: dict[str, ConstClass] = {}

    def visit(model: type[BaseModel]) -> None:
        if model.__name__ in ordered:
            return
        fields = []
        for name, info in model.model_fields.items():
            for dep in _models_in(info.annotation):
                visit(dep)
            fields.append((name, _annotation(info.annotation)))
        doc = " ".join((model.__doc__ or model.__name__).split())
        ordered[model.__name__] = ConstClass(model.__name__, doc, tuple(fields))

    visit(root)
    return tuple(ordered.values())


def _models_in(tp: Any) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in typing.get_args(tp) for m in _models_in(arg)]


def _annotation(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        return _annotation(args[0])
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.__name__
    if origin is Literal:
        return " | ".join(dict.fromkeys(type(a).__name__ for a in args))
    if origin in (Union, types.UnionType):
        return " | ".join(dict.fromkeys(_annotation(a) for a in args))
    if origin is list:
        return f"tuple[{_annotation(args[0])}, ...]"
    if origin is dict:
        return f"dict[{_annotation(args[0])}, object]"
    if origin is tuple:
        return f"tuple[{', '.join(_annotation(a) for a in args)}]"
    if tp is type(None):
        return "None"
    if isinstance(tp, type):
        return tp.__name__
    raise TypeError(f"no annotation for {tp!r}")
