"""Targets: one RL framework at one version line, declared as data.

Each top-level module of this package defines ``TARGET = TargetDecl(...)`` and is named after
it, ``<framework>_<major>_<minor>``; they are discovered, not listed by hand, so adding a
framework version is adding a module (and, once it has adapter templates, a folder under
``templates/targets/``). A declaration imports its plan, checks and contract from its
framework's folder (``siirl/``, ``verl/``, ``rlinf/``, ``areal/``: packages, which discovery
skips); what several frameworks share is in ``common/``. A spec's targets import only their
own modules. Third-party targets register under the ``vlagen.targets`` entry-point group the
same way; the entry points are read when a spec names a target no built-in module declares,
or when every target is listed.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from ..contracts import Contract
from ..errors import Issue, UsageError, closest
from ..paths import builtin_targets

if TYPE_CHECKING:
    from ..batch import Derived
    from ..memory import Placement
    from ..spec import Spec
    from .common.reference import Comparison

__all__ = [
    "UNSUPPORTED",
    "FrameworkSource",
    "TargetDecl",
    "Unsupported",
    "WarningFilter",
    "all_targets",
    "find_target",
    "framework_names",
    "is_framework",
    "require_target",
    "unsupported",
]

#: A plan check: given the spec and the index of this target in ``spec.targets``, yield issues.
Check = Callable[["Spec", int], Iterable[Issue]]
#: The target's own plan: given the resolved spec and this target's index, the data its
#: templates lay out (config keys, pipeline nodes, shapes), computed once in Python.
TargetPlanner = Callable[["Spec", int], Any]
#: How the framework places its workers on GPUs under the generated config: given the
#: resolved spec and the target's plan (see :mod:`vlagen.memory`).
PlacementFn = Callable[["Spec", Any], "Placement"]


@dataclass(frozen=True)
class WarningFilter:
    """A warning the generated tests trigger in code the package cannot change (a framework,
    or a library it drives), silenced by one pytest ``filterwarnings`` entry."""

    entry: str  #: ``action:message:category:module``, message and module being regexes
    why: str  #: the comment above the entry: who warns, and why the tests cannot avoid it


@dataclass(frozen=True)
class FrameworkSource:
    """A framework whose code the target needs is not in its wheel: it is installed from a
    checkout of ``repository`` at ``tag`` (``pip install -e``), which also satisfies the
    extra's ``requirement`` pin, so the extra's other requirements install beside it."""

    repository: str  #: https URL of the git repository, without ``.git``
    tag: str
    commit: str  #: the commit ``tag`` names, for a reader to check the checkout
    why: str  #: what the wheel lacks

    @property
    def folder(self) -> str:
        return self.repository.rstrip("/").rsplit("/", 1)[1]

    @property
    def clone(self) -> str:
        return f"git clone --branch {self.tag} --depth 1 {self.repository}.git"

    @property
    def commands(self) -> tuple[str, ...]:
        """What a user runs to train: the checkout, installed with its dependencies."""
        return (self.clone, f"pip install -e ./{self.folder}")

    @property
    def test_commands(self) -> tuple[str, ...]:
        """What the package's tests need: the checkout alone (``--no-deps``, like a wheel)."""
        return (self.clone, f"pip install --no-deps -e ./{self.folder}")


@dataclass(frozen=True)
class WeightsDtype:
    """The config key by which a target holds its trainable weights in ``model.dtype``."""

    key: str  #: ``actor.model.precision``
    source: str  #: the framework file and function that reads it
    float32: str  #: the key's value for float32 weights (``fp32``)
    #: The package's config sets the key to ``model.dtype``; else to :attr:`float32`.
    follows_model: bool = True


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
        algorithm_aliases: Names a user may write for an algorithm the framework calls
            otherwise (RLinf's PPO is ``gae``), each with the framework's name: a spec
            naming one is told what to write.
        critics: Its algorithms that train ``model.value_head`` (a critic); a spec with a
            value head and no target training one is refused.
        model_families: Spec model families this target can train.
        family_notes: Why the framework's own code rules out a family it cannot train
            (its file and line), added to the error for that family.
        backbones: `model.backbone` values its adapter lays out inputs for.
        contract: The env/model contract the adapter implements, as data (see
            :mod:`vlagen.contracts`); ``contract.summary`` is its one line.
        checks: Plan checks specific to this target.
        templates: Folder under ``templates/targets/`` with the adapter's templates:
            ``src/*.jinja`` become ``src/<pkg>/targets/<framework>/*``, ``tests/*.jinja`` the
            package's tests. ``None``: the target generates no files yet.
        planner: Builds the target's plan (see :data:`TargetPlanner`).
        runtime_requirements: What training with it needs beyond ``requirement`` that the
            framework does not declare (the generated package's extra lists both).
        test_requirements: What the generated verification tests need to import the
            framework's classes when it is installed ``--no-deps``.
        source: Where the framework is installed from when its wheel lacks the code the
            adapter runs (``None``: the wheel ``requirement`` names is enough). The extra
            keeps ``requirement``, which the checkout satisfies.
        test_warnings: Warnings the framework's own code raises in the generated tests,
            filtered in the package's pytest config (each with why).
        preset_test_installs: Per preset, what the framework's own env for that simulator
            imports beyond the framework, installed ``--no-deps`` beside it, where the tests
            compare our env with the framework's on the real simulator.
    """

    framework: str
    version: str
    title: str
    requirement: str
    algorithms: Mapping[str, str]
    model_families: tuple[str, ...]
    contract: Contract
    backbones: tuple[str, ...] = ("llava",)
    backbone_note: str = ""  #: why only ``backbones``, added to the error for another one
    #: why a family outside ``model_families`` cannot train, added to the error for it
    family_notes: Mapping[str, str] = field(default_factory=dict)
    algorithm_aliases: Mapping[str, str] = field(default_factory=dict)
    critics: tuple[str, ...] = ()
    checks: tuple[Check, ...] = field(default=())
    templates: str | None = None
    planner: TargetPlanner | None = None
    runtime_requirements: tuple[str, ...] = ()
    test_requirements: tuple[str, ...] = ()
    source: FrameworkSource | None = None
    test_warnings: tuple[WarningFilter, ...] = ()
    preset_test_installs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The framework's config keys with their types (its committed snapshot), which a spec's
    #: ``targets[i].config`` may set; ``None``: the target takes no such block.
    config_keys: Callable[[], Mapping[str, str]] | None = None
    #: The keys the target derives from the spec's ``training`` block (its batch keys, the
    #: learning rate, seeds), and from what: a spec's ``targets[i].config`` may not set them.
    derived: Callable[[Spec, int], tuple[Derived, ...]] | None = None
    #: The config key that decides the dtype of the trainable weights (what the optimizer
    #: steps); ``None`` where the framework keeps float32 weights for its optimizer whatever
    #: the model's dtype (see :mod:`vlagen.updates`).
    weights_dtype: WeightsDtype | None = None
    #: Where its framework puts the actor, the rollout's weights and the env workers under
    #: the generated config, for the memory plan; ``None``: no plan for this target.
    placement: PlacementFn | None = None
    #: The package's config beside the framework's own example nearest the spec (see
    #: :mod:`.common.reference`), from the spec, the target's index and its plan; the README
    #: shows it as a table.
    reference: Callable[[Spec, int, Any], Comparison] | None = None

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


@dataclass(frozen=True)
class Unsupported:
    """A framework (or some version lines of one) vlagen knowingly does not target."""

    framework: str
    versions: tuple[str, ...] | None  #: the version lines meant; ``None``: every one
    reason: str  #: why no adapter can be generated for it
    instead: str  #: what a spec can name instead

    def matches(self, framework: str, version: str) -> bool:
        return framework == self.framework and (self.versions is None or version in self.versions)

    @property
    def label(self) -> str:
        lines = "any version" if self.versions is None else ", ".join(self.versions)
        return f"{self.framework} ({lines})"


_VERL_VLA = (
    "verl-vla (the VLA successor of verl's experimental VLA code) removed the PPO command at "
    "v0.1.0, training SAC and RECAP only, and replaced the env contract "
    "(reset_envs_to_state_ids / chunk_step behind EnvManager) with BaseEnv's "
    "env_init / env_reset / env_step / env_close; its main has since changed BaseEnv.step "
    "again (an action_executor configured by a cfg.action_execution block)"
)

#: What ``vlagen targets`` lists as not supported, and what a spec naming it is told: data,
#: matched in order, so adding an entry is the whole change.
UNSUPPORTED: tuple[Unsupported, ...] = (
    Unsupported("verl-vla", None, _VERL_VLA, "GRPO/PPO on verl means verl 0.7 (the v0.7.1 line)"),
    Unsupported(
        "verl",
        ("0.8", "0.9", "vla"),
        "verl 0.8 and later have no VLA code (verl/experimental/vla is gone; verl's VLA "
        "work goes on in verl-vla, and " + _VERL_VLA + ")",
        "GRPO/PPO on verl means verl 0.7 (the v0.7.1 line)",
    ),
)


def unsupported(framework: str, version: str | None = None) -> Unsupported | None:
    """The :data:`UNSUPPORTED` entry for ``framework`` at ``version`` (any version where
    ``version`` is None), or None."""
    for entry in UNSUPPORTED:
        if entry.framework == framework and (version is None or entry.matches(framework, version)):
            return entry
    return None


@cache
def _builtin(module: str) -> TargetDecl:
    decl = importlib.import_module(f"{__name__}.{module}").TARGET
    if f"{decl.framework}_{decl.version.replace('.', '_')}" != module:
        raise RuntimeError(f"{__name__}.{module} declares {decl.key}; name it after that")
    return decl


@cache
def all_targets() -> tuple[TargetDecl, ...]:
    """Every declared target, built-in and from entry points, sorted by framework and version."""
    found = [_builtin(module) for module in builtin_targets().values()]
    found += [ep.load() for ep in entry_points(group="vlagen.targets")]
    keys = [t.key for t in found]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise RuntimeError(f"targets declared twice: {', '.join(duplicates)}")
    return tuple(sorted(found, key=lambda t: (t.framework, _version_key(t.version))))


def framework_names() -> tuple[str, ...]:
    return tuple(sorted({t.framework for t in all_targets()}))


def is_framework(name: str) -> bool:
    """Whether any target declares ``name``; entry points are read only for a name no
    built-in target has."""
    return any(f == name for f, _ in builtin_targets()) or name in framework_names()


def find_target(framework: str, version: str) -> TargetDecl | None:
    module = builtin_targets().get((framework, version))
    if module is not None:
        return _builtin(module)
    for target in all_targets():
        if (target.framework, target.version) == (framework, version):
            return target
    return None


def require_target(framework: str, version: str) -> TargetDecl:
    """The target ``framework`` at ``version``; a :class:`UsageError` naming the known
    frameworks, or the framework's known version lines, where there is none."""
    target = find_target(framework, version)
    if target is not None:
        return target
    names = framework_names()
    if framework not in names:
        close = closest(framework.lower(), names)
        hint = f" (did you mean {close!r}?)" if close else ""
        raise UsageError(f"unknown framework {framework!r}{hint}; known: {', '.join(names)}")
    versions = [t.version for t in all_targets() if t.framework == framework]
    line = ".".join(version.lstrip("vV").split(".")[:2])  # v0.3.0 names the line 0.3
    if unsupported(framework, version):
        why = " (not supported: see `vlagen targets`)"
    else:
        why = f" (did you mean {line!r}?)" if line in versions else ""
    known = ", ".join(versions)
    raise UsageError(f"{framework} has no version line {version!r}{why}; known: {known}")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())
