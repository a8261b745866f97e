"""Parse YAML into plain data while remembering where every key and value sits in the file.

PyYAML's ``safe_load`` throws positions away; we compose the node tree ourselves so each error
about a spec can name ``file:line:col``. Duplicate keys, which PyYAML silently keeps the last of,
are errors here.

The parser is bounded, because a spec may come from anyone (a pull request, a download). Before
any node is composed, one pass over the event stream (libyaml's parser keeps its own stack, so
this pass cannot overflow ours) counts and refuses:

- more than :data:`MAX_BYTES` (1 MiB) of text. The example specs are 1-2 KB; a spec a
  thousand times larger is a mistake or an attack (a 5 MB spec took 12 s to validate);
- nesting deeper than :data:`MAX_DEPTH` (64) mappings and lists. Specs nest 4 deep (6 with
  gymnasium kwargs); the composer and our builder recurse once per level, so ~500 levels used
  to raise RecursionError and 50,000 overflowed the C stack;
- more than :data:`MAX_NODES` (20,000) nodes, counting each alias as the whole subtree it
  stands for, so an alias bomb (a few hundred bytes expanding to billions of nodes) is refused
  after counting, never expanded. The examples have 90-170 nodes; 20,000 still validates in
  well under a second. Aliases and merge keys (``<<: *defaults``) stay usable within it;
  an alias inside the node it names (a cycle) is refused.

Scalars that cannot be built (a date like 2020-13-45) are located errors too, as are integers
beyond 64 bits, which no spec field takes, and numbers written in more than
:data:`MAX_NUMBER_CHARS` (100) characters, which are refused before they are built. Only
scalars are built: a mapping or list used as a key is refused as such, not built.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import Issue, KeyPath, SpecError, short_repr

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_BYTES = 1 << 20
"""Largest spec accepted, in bytes of UTF-8."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and lists accepted."""
MAX_NODES = 20_000
"""Most nodes (keys, values, list items) accepted, each alias counted as what it expands to."""
MAX_INT = 2**63 - 1
"""Largest integer magnitude a spec may hold."""
MAX_NUMBER_CHARS = 100
"""Longest scalar read as an int or a float, in characters. PyYAML builds a YAML 1.1
sexagesimal int (``1:59:59...``) in time quadratic in its length (a 1 MiB one took ~47 s), so
longer ones are refused before they are built. 100 is generous: the longest integer in range,
``-0b`` and 63 binary digits, is 66 characters, and any double round-trips in 24."""
_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})


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
    _check_size(text, path)
    _scan(text, path)
    loader = _Loader(text)
    try:
        with _yaml_errors(text, path):
            node = loader.get_single_node()
            if node is None:
                raise SpecError(path, [Issue((), "the spec is empty", 1, 1)])
            issues: list[Issue] = []
            source = SourceMap()
            data = _build(loader, node, (), source, issues)
    finally:
        loader.dispose()
    if issues:
        raise SpecError(path, issues)
    return data, source


@contextmanager
def _yaml_errors(text: str, path: str) -> Iterator[None]:
    """PyYAML's errors as located :class:`SpecError`s."""
    try:
        yield
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Mark.of(mark) if mark else Mark(1, 1)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        if mark is not None and text[mark.index : mark.index + 1] == "\t":
            problem = "a tab, which YAML does not allow in indentation: indent with spaces"
        issue = Issue((), f"YAML syntax: {problem}", where.line, where.column)
        raise SpecError(path, [issue]) from None
    except yaml.reader.ReaderError as exc:  # a character YAML forbids; it carries no mark
        line, column = _position(text, exc.position)
        what = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        message = f"the character {what} is not allowed in YAML text; remove it or escape it"
        raise SpecError(path, [Issue((), message, line, column)]) from None
    except yaml.YAMLError as exc:  # any other: unlocated, but still the user's input
        raise SpecError(path, [Issue((), f"YAML: {exc}", 1, 1)]) from None


def _check_size(text: str, path: str) -> None:
    data = text.encode("utf-8")
    size = len(data)
    if size > MAX_BYTES:
        line, column = _position(text, len(data[:MAX_BYTES].decode("utf-8", errors="ignore")))
        message = (
            f"the spec is {size:,} bytes; vlagen reads specs of at most {MAX_BYTES:,} bytes (1 MiB)"
        )
        raise SpecError(path, [Issue((), message, line, column)])


@dataclass
class _Open:
    """A mapping or list the event scan is inside."""

    loc: KeyPath  #: its key path
    anchor: str | None
    nodes_before: int  #: the node count when it opened
    deepest: int  #: the deepest nesting reached inside it so far
    mapping: bool
    key: str | int | None = None  #: the key (mapping) or index (list) of the child being read
    at_key: bool = True  #: in a mapping, whether the next node is a key
    index: int = 0


def _scan(text: str, path: str) -> None:
    """Refuse a document deeper than :data:`MAX_DEPTH` or, aliases expanded, larger than
    :data:`MAX_NODES`, reading events only (nothing composed, nothing expanded).

    libyaml 0.2.5 as bundled with PyYAML 6.0.4 stops at 1,000 nested flow collections with its
    own error, raised while its scanner looks ahead for a possible key, before this pass sees
    the 65th level. The pure-Python parser has no such limit and looks ahead at most 1,024
    characters, so on that error the pass runs again with it, and the limit a user meets is
    vlagen's, named at the level that crosses it, whichever PyYAML is installed.
    """
    try:
        _scan_events(_Loader(text), text, path)
    except SpecError as exc:
        if _Loader is yaml.SafeLoader or not _libyaml_depth_limit(exc):
            raise
        _scan_events(yaml.SafeLoader(text), text, path)


def _libyaml_depth_limit(exc: SpecError) -> bool:
    return any("maximum nesting depth" in issue.message for issue in exc.issues)


def _scan_events(loader: yaml.SafeLoader, text: str, path: str) -> None:
    stack: list[_Open] = []
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, height) of what it names
    nodes = 0

    def fail(event: yaml.Event, message: str) -> SpecError:
        mark = Mark.of(event.start_mark)
        loc = _child_loc(stack[-1]) if stack else ()
        return SpecError(path, [Issue(loc, message, mark.line, mark.column)])

    def done(node_loc: str | int | None = None) -> None:
        """A child node of the innermost open collection is complete."""
        if not stack:
            return
        top = stack[-1]
        if top.mapping:
            if top.at_key:
                top.key = node_loc if isinstance(node_loc, str) else "?"
            top.at_key = not top.at_key
        else:
            top.index += 1

    try:
        with _yaml_errors(text, path):
            while True:
                event = loader.get_event()
                if event is None or isinstance(event, yaml.StreamEndEvent):
                    return
                if isinstance(event, yaml.AliasEvent):
                    size = anchors.get(event.anchor)
                    if size is None:
                        if any(o.anchor == event.anchor for o in stack):
                            raise fail(
                                event,
                                f"the alias *{event.anchor} is inside the node it names, "
                                "which would make it infinite",
                            )
                        raise fail(event, f"the alias *{event.anchor} names no anchor before it")
                    count, height = size
                    nodes += count
                    depth = len(stack) + height
                    if nodes > MAX_NODES:
                        raise fail(event, _too_many(nodes, aliased=True))
                    if depth > MAX_DEPTH:
                        raise fail(event, _too_deep(aliased=True))
                    if stack:
                        stack[-1].deepest = max(stack[-1].deepest, depth)
                    done()
                elif isinstance(event, yaml.ScalarEvent):
                    nodes += 1
                    if nodes > MAX_NODES:
                        raise fail(event, _too_many(nodes, aliased=False))
                    if event.anchor is not None:
                        anchors[event.anchor] = (1, 0)
                    done(event.value)
                elif isinstance(event, yaml.CollectionStartEvent):
                    nodes += 1
                    if nodes > MAX_NODES:
                        raise fail(event, _too_many(nodes, aliased=False))
                    if len(stack) + 1 > MAX_DEPTH:
                        raise fail(event, _too_deep(aliased=False))
                    loc = _child_loc(stack[-1]) if stack else ()
                    mapping = isinstance(event, yaml.MappingStartEvent)
                    stack.append(_Open(loc, event.anchor, nodes - 1, len(stack) + 1, mapping))
                elif isinstance(event, yaml.CollectionEndEvent):
                    closed = stack.pop()
                    if closed.anchor is not None:
                        height = closed.deepest - len(stack)
                        anchors[closed.anchor] = (nodes - closed.nodes_before, height)
                    if stack:
                        stack[-1].deepest = max(stack[-1].deepest, closed.deepest)
                    done()
    finally:
        loader.dispose()


def _child_loc(top: _Open) -> KeyPath:
    if top.mapping:
        return top.loc if top.at_key or top.key is None else (*top.loc, top.key)
    return (*top.loc, top.index)


def _too_deep(*, aliased: bool) -> str:
    what = "this alias nests" if aliased else "mappings and lists nest"
    return (
        f"{what} more than {MAX_DEPTH} levels deep; vlagen reads specs nested at most "
        f"{MAX_DEPTH} levels (the examples nest 4)"
    )


def _too_many(nodes: int, *, aliased: bool) -> str:
    how = " (with aliases expanded)" if aliased else ""
    return (
        f"the spec has more than {MAX_NODES:,} keys, values and list items{how}; "
        f"vlagen reads specs of at most {MAX_NODES:,} (a spec needs a few hundred)"
    )


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
        explicit = getattr(node, "vlagen_explicit", None)  # an alias builds a node again
        if explicit is None:
            explicit = node.vlagen_explicit = {id(k) for k, _ in node.value}
        loader.flatten_mapping(node)  # resolves YAML merge keys (<<) like safe_load does
        out: dict[str, Any] = {}
        key_nodes: dict[str, int] = {}
        for key_node, value_node in node.value:
            mark = Mark.of(key_node.start_mark)
            if not isinstance(key_node, yaml.ScalarNode):  # not built: it could be anything
                what = "a mapping" if isinstance(key_node, yaml.MappingNode) else "a list"
                issues.append(
                    Issue(loc, f"keys must be strings, got {what}", mark.line, mark.column)
                )
                continue
            unbuilt = len(issues)
            key = _scalar(loader, key_node, loc, issues)
            if len(issues) > unbuilt:  # the key could not be built; that issue says why
                continue
            if not isinstance(key, str):
                message = f"keys must be strings, got {short_repr(key)}"
                issues.append(Issue(loc, message, mark.line, mark.column))
                continue
            merged = key in out and not {key_nodes[key], id(key_node)} <= explicit
            if key in out and not merged:  # a merged key is overridden, as safe_load does
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
            key_nodes[key] = id(key_node)
            out[key] = _build(loader, value_node, (*loc, key), source, issues)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(loader, item, (*loc, i), source, issues) for i, item in enumerate(node.value)
        ]
    return _scalar(loader, node, loc, issues)


def _scalar(loader: Any, node: yaml.Node, loc: KeyPath, issues: list) -> Any:
    """A scalar (or a key) built like ``safe_load`` builds it; one it cannot is an issue."""
    mark = Mark.of(node.start_mark)
    if node.tag in _NUMBER_TAGS and len(node.value) > MAX_NUMBER_CHARS:
        tag = node.tag.rsplit(":", 1)[-1]
        message = (
            f"this {tag} is {len(node.value):,} characters long; vlagen reads numbers of at "
            f"most {MAX_NUMBER_CHARS} characters (quote it if it is meant as a string)"
        )
        issues.append(Issue(loc, message, mark.line, mark.column))
        return None
    try:
        value = loader.construct_object(node, deep=True)
    except (ValueError, OverflowError) as exc:  # a huge int, an impossible date
        tag = node.tag.rsplit(":", 1)[-1]
        issues.append(Issue(loc, f"cannot read this {tag}: {exc}", mark.line, mark.column))
        return None
    if type(value) is int and abs(value) > MAX_INT:
        issues.append(
            Issue(loc, "integer out of range (at most 2^63 - 1 in size)", mark.line, mark.column)
        )
        return None
    return value
