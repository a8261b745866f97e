"""Targets: one RL framework at one version line, declared as data.

Each module in this package defines ``TARGET = TargetDecl(...)``; they are discovered, not
listed by hand, so adding a framework version is adding a module (and, once it has adapter
templates, a folder under ``templates/targets/``). Third-party targets register under the
``vlagen.targets`` entry-point group the same way.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from ..errors import Issue

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["TargetDecl", "all_targets", "find_target", "framework_names"]

#: A plan check: given the spec and the index of this target in ``spec.targets``, yield issues.
Check = Callable[["Spec", int], Iterable[Issue]]
#: The target's own plan: given the resolved spec and this target's index, the data its
#: templates lay out (config keys, pipeline nodes, shapes), computed once in Python.
TargetPlanner = Callable[["Spec", int], Any]


@dataclass(frozen=True)
class TargetDecl:
    """What vlagen knows about one framework version line.

    Attributes:
        framework: Name used in specs (``siirl``).
        version: Version line (``0.2``).
        title: How the project spells itself (``siiRL``).
        requirement: What the generated package's extra installs (``siirl==0.2.0``).
        algorithms: Accepted ``algorithm`` values, in the framework's own names, each with
            what it selects in the framework's config.
        model_families: Spec model families this target can train.
        contract: One line on the env/model contract the adapter implements.
        checks: Plan checks specific to this target.
        templates: Folder under ``templates/targets/`` with the adapter's templates:
            ``src/*.jinja`` become ``src/<pkg>/targets/<framework>/*``, ``tests/*.jinja`` the
            package's tests. ``None``: the target generates no files yet.
        planner: Builds the target's plan (see :data:`TargetPlanner`).
        runtime_requirements: What training with it needs beyond ``requirement`` that the
            framework does not declare (the generated package's extra lists both).
        test_requirements: What the generated verification tests need to import the
            framework's classes when it is installed ``--no-deps``.
    """

    framework: str
    version: str
    title: str
    requirement: str
    algorithms: Mapping[str, str]
    model_families: tuple[str, ...]
    contract: str
    checks: tuple[Check, ...] = field(default=())
    templates: str | None = None
    planner: TargetPlanner | None = None
    runtime_requirements: tuple[str, ...] = ()
    test_requirements: tuple[str, ...] = ()

    @property
    def pinned_version(self) -> str:
        """The exact framework version ``requirement`` pins (``0.2.0`` of ``siirl==0.2.0``)."""
        return self.requirement.partition("==")[2]

    @property
    def test_install(self) -> str:
        """The framework alone, without extras, as its verification tests install it
        (``--no-deps``): ``rlinf==0.3.0`` of ``rlinf[embodied]==0.3.0``."""
        return re.sub(r"\[[^\]]*\]", "", self.requirement)

    @property
    def key(self) -> str:
        return f"{self.framework}@{self.version}"


@cache
def all_targets() -> tuple[TargetDecl, ...]:
    """Every declared target, built-in and from entry points, sorted by framework and version."""
    found: list[TargetDecl] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        found.append(importlib.import_module(f"{__name__}.{info.name}").TARGET)
    for ep in entry_points(group="vlagen.targets"):
        found.append(ep.load())
    keys = [t.key for t in found]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise RuntimeError(f"targets declared twice: {', '.join(duplicates)}")
    return tuple(sorted(found, key=lambda t: (t.framework, _version_key(t.version))))


def framework_names() -> tuple[str, ...]:
    return tuple(sorted({t.framework for t in all_targets()}))


def find_target(framework: str, version: str) -> TargetDecl | None:
    for target in all_targets():
        if (target.framework, target.version) == (framework, version):
            return target
    return None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())
