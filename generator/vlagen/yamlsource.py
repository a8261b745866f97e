"""Parse YAML into plain data while remembering where every key and value sits in the file.

PyYAML's ``safe_load`` throws positions away; we compose the node tree ourselves so each error
about a spec can name ``file:line:col``. Duplicate keys, which PyYAML silently keeps the last of,
are errors here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import Issue, KeyPath, SpecError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Mark:
    """A 1-based line and column."""

    line: int
    column: int

    @classmethod
    def of(cls, mark: yaml.Mark) -> Mark:
        return cls(mark.line + 1, mark.column + 1)


@dataclass
class SourceMap:
    """Where each value (by key path) and each mapping key starts in the file."""

    values: dict[KeyPath, Mark] = field(default_factory=dict)
    keys: dict[KeyPath, Mark] = field(default_factory=dict)

    def locate(self, loc: KeyPath, *, at_key: bool = False) -> Mark:
        """The position of ``loc``; for a path the file lacks, that of its nearest ancestor."""
        if at_key and loc in self.keys:
            return self.keys[loc]
        for end in range(len(loc), -1, -1):
            prefix = loc[:end]
            if prefix in self.values:
                return self.values[prefix]
        return Mark(1, 1)


def parse_yaml(text: str, path: str) -> tuple[Any, SourceMap]:
    """Parse one YAML document into dicts, lists and scalars, plus its :class:`SourceMap`.

    Raises:
        SpecError: on a syntax error, a duplicate key or a non-string key.
    """
    _check_encodable(text, path)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise SpecError(path, [Issue((), "the spec is empty", 1, 1)])
        issues: list[Issue] = []
        source = SourceMap()
        data = _build(loader, node, (), source, issues)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Mark.of(mark) if mark else Mark(1, 1)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        issue = Issue((), f"YAML syntax: {problem}", where.line, where.column)
        raise SpecError(path, [issue]) from None
    except yaml.reader.ReaderError as exc:  # a character YAML forbids; it carries no mark
        line, column = _position(text, exc.position)
        what = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        message = f"the character {what} is not allowed in YAML text; remove it or escape it"
        raise SpecError(path, [Issue((), message, line, column)]) from None
    finally:
        loader.dispose()
    if issues:
        raise SpecError(path, issues)
    return data, source


def _check_encodable(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line, column = _position(text, exc.start)
        issue = Issue((), f"U+{ord(text[exc.start]):04X} is not valid Unicode text", line, column)
        raise SpecError(path, [issue]) from None


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _build(loader: Any, node: yaml.Node, loc: KeyPath, source: SourceMap, issues: list) -> Any:
    source.values[loc] = Mark.of(node.start_mark)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves YAML merge keys (<<) like safe_load does
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            mark = Mark.of(key_node.start_mark)
            if not isinstance(key, str):
                issues.append(
                    Issue(loc, f"keys must be strings, got {key!r}", mark.line, mark.column)
                )
                continue
            if key in out:
                first = source.keys[(*loc, key)]
                issues.append(
                    Issue(
                        (*loc, key),
                        f"duplicate key (first set at line {first.line})",
                        mark.line,
                        mark.column,
                    )
                )
                continue
            source.keys[(*loc, key)] = mark
            out[key] = _build(loader, value_node, (*loc, key), source, issues)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(loader, item, (*loc, i), source, issues) for i, item in enumerate(node.value)
        ]
    return loader.construct_object(node, deep=True)
