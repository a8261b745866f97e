"""load: a spec file becomes a checked :class:`Spec`, or a :class:`SpecError` naming every
problem by ``file:line:col`` and key path."""

from __future__ import annotations

import os
import re
import stat
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ValidationError

from .checks import check_spec
from .errors import Issue, KeyPath, SpecError, did_you_mean, short_repr
from .paths import STREAM, STREAM_DIRS
from .spec import BOOL_FOR_NUMBER, SCHEMA_VERSION, Spec, retired_key
from .yamlsource import MAX_BYTES, SourceMap, parse_yaml

__all__ = ["LoadedSpec", "load_spec", "load_spec_text"]


@dataclass(frozen=True)
class LoadedSpec:
    """A valid spec and where it came from."""

    spec: Spec
    path: str
    text: str  #: the spec as written, comments and all (the package keeps a copy)


def load_spec(path: str | Path, *, probe: bool = True) -> LoadedSpec:
    """Read, validate and cross-check the spec at ``path``; with ``probe``, also ask the
    installed simulators (a gymnasium id; see :mod:`vlagen.gymids`).

    Raises:
        SpecError: listing every problem, each as ``path:line:col: key.path: message``.
    """
    shown = str(path)
    try:
        raw = _read_capped(str(path), MAX_BYTES + 1)  # enough to refuse a larger file
    except _NotAFile as exc:
        message = (
            f"the spec is not a regular file (it is {exc.args[0]}); vlagen reads a spec from a "
            "file, or from standard input named as /dev/stdin"
        )
        raise SpecError(shown, [Issue((), message)]) from None
    except OSError as exc:
        raise SpecError(shown, [Issue((), f"cannot read the spec: {exc.strerror}")]) from None
    if len(raw) > MAX_BYTES:
        message = f"the spec is larger than {MAX_BYTES:,} bytes (1 MiB), the most vlagen reads"
        line = raw[:MAX_BYTES].count(b"\n") + 1
        raise SpecError(shown, [Issue((), message, line, 1)])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(shown, [Issue((), "the spec is not UTF-8 text", line, 1)]) from None
    return load_spec_text(text, shown, probe=probe)


class _NotAFile(Exception):
    """The spec path names something other than a regular file; args[0] says what."""


def _read_capped(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file at ``path``, or of the stream it names if it
    is :data:`~vlagen.paths.STREAM` or in :data:`~vlagen.paths.STREAM_DIRS`.

    Opened with ``O_NONBLOCK``, so a FIFO (or a device) at an ordinary path is refused with
    :class:`_NotAFile` after ``fstat`` instead of hanging the open until a writer appears.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            stream = path == STREAM or path.startswith(STREAM_DIRS)
            if not stream or stat.S_ISDIR(mode):
                raise _NotAFile(_kind(mode))
            os.set_blocking(fd, True)  # a stream asked for by name: wait for its writer
        return file.read(limit)


def _kind(mode: int) -> str:
    kinds = [
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "neither a file nor a directory")


def load_spec_text(text: str, path: str = "<spec>", *, probe: bool = True) -> LoadedSpec:
    """Like :func:`load_spec`, from text already read; ``path`` is used in messages."""
    data, source = parse_yaml(text, path)
    return load_spec_data(data, source, path, text, probe=probe)


def load_spec_data(
    data: Any, source: SourceMap, path: str, text: str, *, probe: bool = True
) -> LoadedSpec:
    """Like :func:`load_spec_text`, from the text's parse (``parse_yaml``), which a caller may
    have changed in place: each issue is still located by ``source``."""
    if not isinstance(data, dict):
        raise SpecError(path, [Issue((), "the spec must be a mapping of sections", 1, 1)])
    version = data.get("vlagen")
    if version != SCHEMA_VERSION or isinstance(version, bool):  # `vlagen: yes` is not 1
        # Field errors of another schema version would only confuse; say this one thing.
        mark = source.locate(("vlagen",))
        found = "missing" if version is None else short_repr(version)
        raise SpecError(
            path,
            [
                Issue(
                    ("vlagen",),
                    f"spec schema version is {found}; this vlagen reads `vlagen: {SCHEMA_VERSION}`",
                    mark.line,
                    mark.column,
                )
            ],
        )
    unknown = _unknown_frameworks(data, source)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        issues = [_from_pydantic(err, data, source) for err in exc.errors()]
        raise SpecError(path, _dedupe(issues + unknown)) from None
    if unknown:
        raise SpecError(path, unknown)
    issues = [_place(issue, source) for issue in check_spec(spec, probe=probe)]
    if issues:
        raise SpecError(path, _dedupe(issues))
    return LoadedSpec(spec, path, text)


def _place(issue: Issue, source: SourceMap) -> Issue:
    mark = source.locate(issue.loc)
    return Issue(issue.loc, issue.message, mark.line, mark.column)


def _dedupe(issues: list[Issue]) -> list[Issue]:
    return list(dict.fromkeys(issues))


_OWN_MESSAGES = frozenset({"value_error", BOOL_FOR_NUMBER})
"""Error types raised by the spec's own validators, whose messages name the value where it
helps (``'x y' is not a valid distribution name``): a ``got ...`` after them would print it
twice."""


def _from_pydantic(err: Any, data: Any, source: SourceMap) -> Issue:
    raw_loc: tuple = tuple(err["loc"])
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    loc = _data_loc(raw_loc, data, keep_last=kind in ("missing", "extra_forbidden"))
    message = err["msg"].removeprefix("Value error, ")
    if kind == "extra_forbidden":
        fields = _model_fields_at(Spec, raw_loc[:-1])
        hint = did_you_mean(str(loc[-1])[:100], fields)
        message = f"unknown key {short_repr(loc[-1])}{hint}" + (
            f" (expected one of: {', '.join(fields)})" if fields and not hint else ""
        )
        if len(loc) == 2 and (retired := retired_key(str(loc[0]), str(loc[1]), data)):
            message = retired
        mark = source.locate(loc, at_key=True)
        return Issue(loc, message, mark.line, mark.column)
    if kind in ("missing", "union_tag_not_found"):
        missing = loc[-1] if kind == "missing" else ctx.get("discriminator", "").strip("'")
        if kind == "union_tag_not_found":
            loc = (*loc, missing)
        message = f"missing required key {missing!r}"
    elif kind == "union_tag_invalid":
        tags = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        key = ctx.get("discriminator", "").strip("'")
        loc = (*loc, key)
        tag = ctx.get("tag")
        hint = did_you_mean(str(tag)[:100], tags)
        message = f"unknown {key} {short_repr(tag)}{hint} (expected: {', '.join(tags)})"
    elif kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        message = f"{message}, got {short_repr(value)}{did_you_mean(str(value)[:100], choices)}"
    elif kind == "int_from_float":  # pydantic's message names no value: name it once
        message = f"Input should be a valid integer, got {short_repr(value)}, which has a fraction"
    elif kind not in _OWN_MESSAGES:
        if isinstance(value, dict | list):  # its text could run for pages: its kind
            message = f"{message}, got {'a list' if isinstance(value, list) else 'a mapping'}"
        else:
            message = f"{message}, got {short_repr(value)}"
    mark = source.locate(loc)
    return Issue(loc, message, mark.line, mark.column)


def _unknown_frameworks(data: dict[str, Any], source: SourceMap) -> list[Issue]:
    """An issue for each ``targets[i].framework`` no target declares. The spec model takes
    any name: which exist is the target registry's to say, which sits above the spec. A
    framework vlagen knowingly does not target (:data:`vlagen.targets.UNSUPPORTED`) is
    refused with its reason, not a bare list of choices."""
    from .targets import framework_names, is_framework, unsupported

    targets = data.get("targets")
    issues = []
    for i, target in enumerate(targets if isinstance(targets, list) else []):
        value = target.get("framework") if isinstance(target, dict) else None
        if not isinstance(value, str) or is_framework(value):
            continue  # not a name: the model says so
        names = framework_names()
        if (entry := unsupported(value)) is not None:
            message = (
                f"{value} is not supported: {entry.reason}. {entry.instead} "
                f"(supported frameworks: {', '.join(names)})"
            )
        else:
            quoted = [repr(n) for n in names]
            expected = f"{', '.join(quoted[:-1])} or {quoted[-1]}"  # four built in, at least
            message = f"Input should be {expected}, got {short_repr(value)}"
            message += did_you_mean(value[:100], names)
        loc = ("targets", i, "framework")
        mark = source.locate(loc)
        issues.append(Issue(loc, message, mark.line, mark.column))
    return issues


def _data_loc(raw: tuple, data: Any, *, keep_last: bool) -> KeyPath:
    """Drop the parts of a pydantic location that are not keys in the file (union tags,
    validator names), so the path reads like the YAML and can be located in it."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(raw):
        last = i == len(raw) - 1
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            node = node[part]
        elif not (last and keep_last):
            continue
        out.append(part)
    return tuple(out)


def _model_fields_at(model: type, loc: tuple) -> list[str]:
    """Field names of the spec model found at pydantic location ``loc``, for suggestions."""
    current: Any = model
    for part in loc:
        current = _step(current, part)
        if current is None:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _step(tp: Any, part: str | int) -> Any:
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        field = tp.model_fields.get(str(part))
        return field.annotation if field else None
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        for member in typing.get_args(tp):
            member = _unwrap(member)
            if isinstance(member, type) and issubclass(member, BaseModel):
                kind = member.model_fields.get("kind")
                tagged = kind and typing.get_origin(kind.annotation) is Literal
                if tagged and part in typing.get_args(kind.annotation):
                    return member
        return None
    if origin in (list, tuple) and isinstance(part, int):
        args = typing.get_args(tp)
        return args[0] if args else None
    return None


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _unwrap(rest[0])
    return tp
