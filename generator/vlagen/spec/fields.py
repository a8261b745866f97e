"""The spec's building blocks: the strict base model every section derives from, and the
field types (names, versions, class paths, counts) with their validators and limits.
"""

from __future__ import annotations

import keyword
import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import PydanticCustomError

SCHEMA_VERSION = 1

_DIST_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VERSION = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")
_SPDX = re.compile(r"^[A-Za-z0-9.+-]+( (AND|OR|WITH) [A-Za-z0-9.+-]+)*$")


SCHEMA_FILE = "vlagen.schema.json"


MAX_TEXT = 10_000
"""Longest text any spec field takes (a prompt template is a few hundred characters)."""
MAX_NAME = 100
"""Longest name: identifiers, and the distribution and package names, whose files
(``<name>-<version>.dist-info``, ``src/<package>/``) must fit a file system's 255 bytes."""
MAX_VERSION = 64
"""Longest version text (``<name>-<version>-py3-none-any.whl`` fits 255 bytes)."""
MAX_BINS = 4096
"""Most action tokens per dimension, and so most choices of a discrete action channel."""


class StrictModel(BaseModel):
    """Base of every spec section: unknown keys are errors, NaN and infinity are refused,
    and text is printable UTF-8 (it will land in source files)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    @field_validator("*", mode="after")
    @classmethod
    def _printable_text(cls, value: Any) -> Any:
        for text in value if isinstance(value, list | tuple) else (value,):
            if isinstance(text, str):
                _check_text(text)
        return value


def _check_text(text: str) -> None:
    if len(text) > MAX_TEXT:
        raise ValueError(f"is {len(text):,} characters long; at most {MAX_TEXT:,} are allowed")
    for ch in text:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            raise ValueError("contains a lone surrogate, which is not valid Unicode text")
        if (code < 0x20 and ch not in "\t\n") or 0x7F <= code < 0xA0:
            raise ValueError(f"contains the control character U+{code:04X}")


def _identifier(value: str) -> str:
    _short_name(value)
    if keyword.iskeyword(value):
        raise ValueError(
            f"{value!r} is a Python keyword, which generated code cannot use as a name"
        )
    if not _IDENT.match(value):
        raise ValueError(
            f"{value!r} is not a valid Python identifier "
            "(letters, digits and underscores, not starting with a digit)"
        )
    return value


def _package_name(value: str) -> str:
    _identifier(value)
    if value != value.lower():
        raise ValueError(f"{value!r}: an import package name is lowercase (PEP 8)")
    return value


def _short_name(value: str, limit: int = MAX_NAME) -> str:
    if len(value) > limit:
        raise ValueError(f"is {len(value)} characters long; at most {limit} are allowed")
    return value


def _dist_name(value: str) -> str:
    _short_name(value)
    if not _DIST_NAME.match(value):
        raise ValueError(
            f"{value!r} is not a valid distribution name (letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit)"
        )
    return value


def _suite_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9]\w*", value, flags=re.ASCII):
        raise ValueError(
            f"{value!r} is not a suite name (ASCII letters, digits and '_', starting with a "
            "letter or digit): frameworks put it in file names, env ids and the regexes "
            "that read them back"
        )
    return value


def _single_line(value: str) -> str:
    if any(sep in value for sep in ("\n", "\r", "\u2028", "\u2029")):
        raise ValueError("must be a single line")
    return value


def _version_text(value: Any) -> Any:
    """YAML reads ``0.2`` as a float; a version written that way is ambiguous (0.10 == 0.1)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f"write the version as a quoted string, e.g. '{value}' "
            "(YAML reads an unquoted version as a number: 0.10 would become 0.1)"
        )
    return value


def _pep440(value: str) -> str:
    _short_name(value, MAX_VERSION)
    if not _VERSION.match(value):
        raise ValueError(f"{value!r} is not a PEP 440 version such as '0.1.0'")
    return value


def _class_path(value: str) -> str:
    """``module.path:Class``: dotted identifiers, each short enough to be a file name."""
    module, colon, name = value.partition(":")
    parts = module.split(".")
    expected = "expected `module.path:Class`, e.g. 'my_pkg.policy:MyPolicy'"
    if not colon or ":" in name:
        raise ValueError(f"{value!r} is not a class path; {expected}")
    bad = next((p for p in parts if not p.isidentifier() or keyword.iskeyword(p)), None)
    if bad is not None:
        what = "an empty part" if not bad else f"{bad!r}, which is not a Python identifier"
        raise ValueError(f"{module!r} is not a valid dotted module path: it has {what}; {expected}")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid class name (a Python identifier); {expected}")
    long = next((p for p in [*parts, name] if len(p.encode()) > MAX_NAME), None)
    if long is not None:
        raise ValueError(f"{long[:20]!r}... is longer than {MAX_NAME} bytes; {expected}")
    return value


Identifier = Annotated[str, AfterValidator(_identifier)]
PackageName = Annotated[str, AfterValidator(_package_name)]
DistName = Annotated[str, AfterValidator(_dist_name)]
OneLine = Annotated[str, AfterValidator(_single_line)]
VersionText = Annotated[str, BeforeValidator(_version_text)]

BOOL_FOR_NUMBER = "bool_for_number"
"""The pydantic error type of a YAML boolean where a number belongs."""


def read_as_bool(value: bool) -> str:
    """A YAML boolean where something else belongs, and why YAML read it so."""
    return (
        f"{str(value).lower()}, which YAML reads as a boolean (unquoted true/false, yes/no "
        "and on/off are booleans)"
    )


def not_bool(value: Any) -> Any:
    """Refuse a bool where a number belongs. YAML 1.1 reads an unquoted ``on``/``off``,
    ``yes``/``no`` and ``true``/``false`` as booleans, and pydantic takes a bool for an int or
    a float (``True == 1``), so ``gpus_per_node: on`` would be one GPU and a reward's
    ``weight: no`` zero."""
    if isinstance(value, bool):
        raise PydanticCustomError(
            BOOL_FOR_NUMBER,
            "expected a number, got {value}",
            {"value": read_as_bool(value)},
        )
    return value


#: Every int and float of the spec refuses a bool: ``Int``, ``Float``, or with bounds
#: ``Annotated[int, Field(ge=...), NotBool]``, the bounds first (so that they stay JSON
#: Schema's ``minimum`` and ``maximum``). ``tests/test_load.py`` puts a bool in every numeric
#: field of the schema.
NotBool = BeforeValidator(not_bool)
Int = Annotated[int, NotBool]
Float = Annotated[float, NotBool]
PositiveInt = Annotated[int, Field(ge=1), NotBool]


def Count(most: int) -> Any:
    """An int from 1 to ``most``."""
    return Annotated[int, Field(ge=1, le=most), NotBool]


Pixels = Annotated[int, Field(ge=1, le=8192), NotBool]  # 8K; cameras are 64-1080, VLAs take 224-448
Gain = Annotated[float, Field(ge=-1000.0, le=1000.0), NotBool]
Metres = Annotated[float, Field(ge=-10_000.0, le=10_000.0), NotBool]
ClassPath = Annotated[str, AfterValidator(_class_path)]


def scaffold_path(class_path: str | None, package: str) -> str | None:
    """The package-relative file vlagen starts for a ``module:Class`` inside ``package``
    (``pkg/sim.py``), or ``None`` for a class outside it (or none)."""
    module = (class_path or "").partition(":")[0]
    return module.replace(".", "/") + ".py" if module.startswith(f"{package}.") else None


#: A declared target's framework. Which names exist is the target registry's to say, which
#: sits above the spec: :mod:`vlagen.load` checks them (and :mod:`vlagen.schema` lists them).
Framework = Annotated[str, WithJsonSchema({"title": "Framework", "type": "string"})]
