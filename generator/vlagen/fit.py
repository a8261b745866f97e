"""Which targets a spec can take, each on its own, and why not the others.

``vlagen targets fit SPEC`` validates SPEC once per declared target (framework and version
line) with its ``targets`` section replaced by that one target, running the algorithm the
spec gives that framework, else one it gives another that this target runs, else GRPO, and
the ``config`` block the spec gives that framework. The spec's other sections stay where
they are in the file, and a problem in a config block is placed at that block's own key, so
each refusal is located on the user's own lines. A report: refusals are findings, not
errors, but for the spec's own (:func:`whatever_the_target`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from .errors import Issue, SpecError
from .load import load_spec_data
from .memory import MemoryPlan
from .plan import make_plan
from .targets import TargetDecl, all_targets
from .updates import UpdateNote, update_note
from .yamlsource import SourceMap, parse_yaml


@dataclass(frozen=True)
class Fit:
    """One target tried alone on a spec."""

    target: TargetDecl
    algorithm: str
    problems: tuple[Issue, ...]  #: empty where the spec, so targeted, is valid
    without_value_head: bool = False  #: the spec's value head was tried as false
    declared: bool = False  #: the spec targets this framework at this version
    update: UpdateNote | None = None  #: how much of each step its weights keep, if it fits
    memory: MemoryPlan | None = None  #: what each GPU holds, if it fits

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
    listed = listed if isinstance(listed, list) else []
    entries = [(i, t) for i, t in enumerate(listed) if isinstance(t, dict)]
    wanted = [
        (str(t.get("framework")), t["algorithm"])
        for _, t in entries
        if isinstance(t.get("algorithm"), str)
    ]
    configs: dict[str, int] = {}  # framework: the index of the first entry with a config
    for index, entry in entries:
        if "config" in entry:
            configs.setdefault(str(entry.get("framework")), index)
    declared = {(str(t.get("framework")), str(t.get("version"))) for _, t in entries}
    start = source.locate(("targets",), at_key=True).line if "targets" in data else None
    found = []
    for target in all_targets():
        algorithm = algorithm_for(target, wanted)
        trial = with_targets(text, start, target, algorithm)
        trial_data, trial_source = parse_yaml(trial, path)
        drop = has_value_head(trial_data) and algorithm not in target.critics
        if drop:
            trial_data["model"]["value_head"] = False
        index = configs.get(target.framework)
        if index is not None:  # the framework's own keys, tried on each of its versions
            trial_data["targets"][0]["config"] = listed[index]["config"]
        update = memory = None
        try:
            loaded = load_spec_data(trial_data, trial_source, path, trial, probe=False)
        except SpecError as exc:
            problems = tuple(_in_config(issue, index, source) for issue in exc.issues)
        else:
            problems = ()
            update = update_note(loaded.spec, 0, target)
            memory = make_plan(loaded.spec).memory_plans.get(target.framework)
        mine = (target.framework, target.version) in declared
        found.append(Fit(target, algorithm, problems, drop, mine, update, memory))
    return tuple(found)


def _in_config(issue: Issue, index: int | None, source: SourceMap) -> Issue:
    """``issue``, where it is in the config block a trial took from ``targets[index]``, placed
    there in the spec (``source``); else as it is."""
    if index is None or issue.loc[:3] != ("targets", 0, "config"):
        return issue
    loc = ("targets", index, *issue.loc[2:])
    mark = source.locate(loc)
    return Issue(loc, issue.message, mark.line, mark.column)


def whatever_the_target(found: Sequence[Fit]) -> list[Issue]:
    """The spec's own problems, which no choice of target mends: those every target is
    refused with outside ``targets`` (which keep the target checks from running at all,
    where the spec's schema refuses it), and those in the config block of a target the spec
    declares, tried as declared (``vlagen validate`` refuses them too)."""
    common = set(found[0].problems) if found else set()
    for fit in found[1:]:
        common &= set(fit.problems)
    own = [
        issue for issue in found[0].problems if issue in common and issue.loc[:1] != ("targets",)
    ]
    for fit in found:
        if fit.declared:
            own += [
                i for i in fit.problems if i.loc[:1] == ("targets",) and i.loc[2:3] == ("config",)
            ]
    return list(dict.fromkeys(own))


def has_value_head(data: dict) -> bool:
    """Whether the spec's ``model.value_head`` is true, as the spec's model reads it (``yes``,
    ``"true"`` and ``1`` too); False for a value it would refuse."""
    model = data.get("model")
    if not isinstance(model, dict) or "value_head" not in model:
        return False
    try:
        return TypeAdapter(bool).validate_python(model["value_head"])
    except ValidationError:
        return False


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
