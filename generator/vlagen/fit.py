"""Which targets a spec can take, each on its own, and why not the others.

``vlagen targets fit SPEC`` validates SPEC once per declared target (framework and version
line) with its ``targets`` section replaced by that one target, running the algorithm the
spec gives that framework, else one it gives another that this target runs, else GRPO. The
spec's other sections stay where they are in the file, so each refusal is located on the
user's own lines. A report: refusals are findings, not errors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import Issue, SpecError
from .load import load_spec_text
from .targets import TargetDecl, all_targets
from .yamlsource import parse_yaml


@dataclass(frozen=True)
class Fit:
    """One target tried alone on a spec."""

    target: TargetDecl
    algorithm: str
    problems: tuple[Issue, ...]  #: empty where the spec, so targeted, is valid
    without_value_head: bool = False  #: the spec's value head was tried as false

    @property
    def label(self) -> str:
        also = ", without model.value_head: no critic" if self.without_value_head else ""
        return f"{self.target.framework} {self.target.version} ({self.algorithm}{also})"


def algorithm_for(target: TargetDecl, wanted: Sequence[tuple[str, str]]) -> str:
    """The algorithm to try ``target`` with: the one the spec gives its framework, else the
    first of the spec's (``wanted``: framework, algorithm) that it runs, else GRPO, else its
    first."""
    own = [a for framework, a in wanted if framework == target.framework]
    for name in (*own, *(a for _, a in wanted), "grpo"):
        if name in target.algorithms:
            return name
    return target.algorithms[0]


def fits(text: str, path: str) -> tuple[Fit, ...]:
    """Every declared target tried alone on the spec ``text`` (read from ``path``).

    Raises:
        SpecError: the text is not a YAML mapping, so no target can be tried.
    """
    data, source = parse_yaml(text, path)
    if not isinstance(data, dict):
        raise SpecError(path, [Issue((), "the spec must be a mapping of sections", 1, 1)])
    listed = data.get("targets")
    wanted = [
        (str(t.get("framework")), t["algorithm"])
        for t in (listed if isinstance(listed, list) else [])
        if isinstance(t, dict) and isinstance(t.get("algorithm"), str)
    ]
    start = source.locate(("targets",), at_key=True).line if "targets" in data else None
    model = data.get("model")
    head = isinstance(model, dict) and model.get("value_head") is True
    found = []
    for target in all_targets():
        algorithm = algorithm_for(target, wanted)
        trial = with_targets(text, start, target, algorithm)
        drop = head and algorithm not in target.critics
        if drop:
            mark = source.locate(("model", "value_head"))
            trial = with_value(trial, mark.line, mark.column, "false")
        try:
            load_spec_text(trial, path, probe=False)
        except SpecError as exc:
            found.append(Fit(target, algorithm, exc.issues, drop))
        else:
            found.append(Fit(target, algorithm, (), drop))
    return tuple(found)


def with_value(text: str, line: int, column: int, value: str) -> str:
    """``text`` with the plain scalar at ``line``:``column`` (1-based) replaced by ``value``."""
    lines = text.splitlines(keepends=True)
    row, at = lines[line - 1], column - 1
    end = at
    while end < len(row) and row[end] not in " \t#,}\r\n":
        end += 1
    lines[line - 1] = row[:at] + value + row[end:]
    return "".join(lines)


def with_targets(text: str, start: int | None, target: TargetDecl, algorithm: str) -> str:
    """``text`` with its top-level ``targets`` block (its key on line ``start``; None: there
    is none) replaced by one line naming ``target`` and blank lines: every other line keeps
    its number."""
    entry = {"framework": target.framework, "version": target.version, "algorithm": algorithm}
    block = f"targets: [{json.dumps(entry)}]\n"
    lines = text.splitlines(keepends=True)
    if start is None:
        tail = "" if not lines or lines[-1].endswith("\n") else "\n"
        return text + tail + block
    end = start  # the block runs to the next line that starts a top-level key
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#-"):
        end += 1
    padding = "\n" * (end - start)  # the block's other lines, blank: later keys keep theirs
    return "".join([*lines[: start - 1], block, padding, *lines[end:]])
