"""plan: everything derived from a spec, computed once, in Python, before any template runs.

Templates receive a :class:`Plan` and only lay out text. The plan resolves defaults (package
name, backend), fixes the spec hash, picks each target's declaration and lists every file to
generate with its mode.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from ._version import __version__
from .distributions import distribution_name
from .envplan import REMOTE_REQUIREMENTS, EnvPlan, make_env_plan, resolve_env
from .families import FAMILIES
from .literals import ConstClass, py_literal, spec_classes
from .memory import MemoryPlan, memory_plan
from .modelplan import ModelPlan, make_model_plan, resolve_model
from .paths import templates_root
from .provenance import SPEC_COPY, without_header
from .schema import schema_text
from .spec import SCHEMA_FILE, Spec
from .targets import FrameworkSource, TargetDecl, WarningFilter, find_target
from .targets.common.reference import Comparison
from .tree import Mode
from .updates import UpdateNote, update_note

__all__ = [
    "GENERATED_MODULES",
    "Mode",
    "Plan",
    "PlannedFile",
    "PlannedTarget",
    "RunTarget",
    "make_plan",
]


@dataclass(frozen=True)
class PlannedFile:
    path: str
    template: str
    mode: Mode = Mode.GENERATED
    executable: bool = False
    target: str | None = None  #: the framework whose plan the template reads as ``target``


@dataclass(frozen=True)
class PlannedTarget:
    decl: TargetDecl
    algorithm: str
    plan: Any = None  #: what the target's planner derived, for its templates
    #: its config beside the framework's own nearest example, for the README's table
    reference: Comparison | None = None

    @property
    def algorithm_config(self) -> str:
        return self.decl.algorithms[self.algorithm]


@dataclass(frozen=True)
class RunTarget:
    """A target as a package-wide run (``parity``, ``learn``) lists it."""

    framework: str
    title: str  #: ``RLinf 0.3``
    algorithm: str
    has_module: bool  #: its template folder has the run's module (``src/parity.py``, ...)


@dataclass(frozen=True)
class Plan:
    spec: Spec  #: the resolved spec: derivable defaults filled in
    spec_hash: str  #: sha256 of the resolved spec's canonical JSON
    spec_json: str  #: that canonical JSON, pretty-printed, as ``spec.json`` carries it
    spec_text: str  #: the spec as the user wrote it, for the package's ``vlagen.yaml``
    schema_text: str  #: the spec's JSON Schema, for the package's ``vlagen.schema.json``
    vlagen_version: str
    package: str
    targets: tuple[PlannedTarget, ...]
    env: EnvPlan
    model: ModelPlan
    classes: tuple[ConstClass, ...]  #: dataclasses mirroring the spec models, for spec.py
    spec_literal: str  #: a Python expression building the resolved spec from those classes
    files: tuple[PlannedFile, ...]

    @property
    def generated_paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files if f.mode is Mode.GENERATED)

    @property
    def package_data(self) -> list[str]:
        """Non-Python files inside the package that its code reads (configs, scripts)."""
        package = PurePosixPath("src", self.package)
        paths = [PurePosixPath(f.path) for f in self.files]
        extra = sorted(
            {
                str(path.parent.relative_to(package) / f"*{path.suffix}")
                for path in paths
                if path.is_relative_to(package / "targets") and path.suffix in (".yaml", ".sh")
            }
        )
        return ["spec.json", *extra]

    @property
    def dependencies(self) -> list[str]:
        """The package's own requirements."""
        return ["numpy>=1.24", *self.model.requirements]

    @property
    def extras(self) -> dict[str, list[str]]:
        """Extra name → its requirements: one per framework, ``sim`` where the simulator is
        on the package index, ``video``, ``test``."""
        out = {
            t.decl.framework: [t.decl.requirement, *t.decl.runtime_requirements]
            for t in self.targets
        }
        if self.env.sim_requirements:
            out["sim"] = self.env.sim_requirements
        out["remote"] = list(REMOTE_REQUIREMENTS)
        if self.env.video:
            out["video"] = self.env.video_requirements
        out["test"] = self.test_requirements
        return out

    @property
    def test_requirements(self) -> list[str]:
        """The package's ``test`` extra: the env's, then each target's, without repeats (a
        target's bare ``name`` adds nothing where that distribution is already listed)."""
        out = list(self.env.test_requirements)
        for requirement in (r for t in self.targets for r in t.decl.test_requirements):
            bare = re.fullmatch(_BARE, requirement)
            named = map(distribution_name, out)
            if requirement not in out and not (bare and distribution_name(requirement) in named):
                out.append(requirement)
        return out

    @property
    def test_warnings(self) -> list[WarningFilter]:
        """The ``filterwarnings`` of the package's pytest config: each target's, each entry
        once (with the first one's reason)."""
        unique: dict[str, WarningFilter] = {}
        for warning in (w for t in self.targets for w in t.decl.test_warnings):
            unique.setdefault(warning.entry, warning)
        return list(unique.values())

    @property
    def framework_test_installs(self) -> list[str]:
        """The frameworks the package's tests import, installed ``--no-deps`` beside the
        ``test`` extra (their full dependencies are for training, on a GPU machine); those
        installed from a source checkout are :attr:`framework_sources` instead."""
        preset = self.env.preset.name
        found = [
            install
            for t in self.targets
            if t.decl.templates
            for install in (
                *((t.decl.test_install,) if t.decl.source is None else ()),
                *t.decl.preset_test_installs.get(preset, ()),
            )
        ]
        return list(dict.fromkeys([*found, *self.model.test_installs]))

    @property
    def framework_sources(self) -> list[FrameworkSource]:
        """The frameworks installed from a checkout (``pip install -e``, ``--no-deps`` for the
        tests) because their wheel lacks the code the adapter runs."""
        found = (t.decl.source for t in self.targets if t.decl.templates and t.decl.source)
        return list(dict.fromkeys(found))

    @property
    def parity(self) -> tuple[RunTarget, ...]:
        """The targets ``python -m <pkg>.parity`` compares; empty under two targets, where
        the package has no parity module."""
        return _parity_targets(self.targets)

    @property
    def update_notes(self) -> dict[str, UpdateNote]:
        """Per framework, how much of each optimizer step its bfloat16 weights keep (only
        the targets that hold them in ``model.dtype``)."""
        notes = (
            (t.decl.framework, update_note(self.spec, i, t.decl))
            for i, t in enumerate(self.targets)
        )
        return {framework: note for framework, note in notes if note is not None}

    @property
    def memory_plans(self) -> dict[str, MemoryPlan]:
        """Per framework, what each GPU holds under its generated settings (the targets
        that declare a placement)."""
        return {
            t.decl.framework: memory_plan(
                self.spec, f"{t.decl.title} {t.decl.version}", t.decl.placement(self.spec, t.plan)
            )
            for t in self.targets
            if t.decl.placement is not None and t.plan is not None
        }

    @property
    def learning(self) -> tuple[RunTarget, ...]:
        """The targets ``python -m <pkg>.learn`` knows; empty where none has a learning run,
        where the package has no learn module."""
        return _learning_targets(self.targets)

    @property
    def learning_rate(self) -> float:
        """The learning run's Adam step for the tiny policy (``--lr``'s default): the spec's
        rate is sized for the full model, and a tiny one barely moves at it within a few dozen
        updates. LoRA adapters (r32 at the tiny width 64) train both factors of a nearly
        full-rank update, and oscillate at full fine-tuning's rate: they take a third of it.
        A flow family's is its own (:attr:`~vlagen.families.FlowDefaults.learning_rate`)."""
        flow = FAMILIES[self.spec.model.family].flow
        if flow is not None:
            return flow.learning_rate
        return LEARNING_RATE_LORA if self.spec.model.lora is not None else LEARNING_RATE_FULL

    @property
    def cluster(self) -> str:
        """The GPUs the spec's ``resources`` name, as the READMEs and launch refusals say it."""
        resources = self.spec.resources
        return f"{resources.nodes} node(s) x {resources.gpus_per_node} GPUs"

    @property
    def resources_change_md(self) -> str:
        """How to train on another GPU or node count, for the README: every target's GPU split
        and batch are derived from the spec's ``resources`` when the package is generated."""
        return (
            f"change `resources` (`nodes`, `gpus_per_node`) in `{SPEC_COPY}` and run "
            f"`vlagen regen {SPEC_COPY}`, which derives the GPU split and the batch again"
        )

    @property
    def resources_change(self) -> str:
        """:attr:`resources_change_md` in plain text, for scripts' and programs' messages."""
        return self.resources_change_md.replace("`", "")

    def target(self, framework: str) -> PlannedTarget:
        return next(t for t in self.targets if t.decl.framework == framework)


def canonical_json(data: Any) -> str:
    """The one serialization the spec hash is taken over (the generated tests redo it)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def make_plan(spec: Spec, text: str | None = None) -> Plan:
    """Derive the plan of a spec that :func:`vlagen.load.load_spec` accepted; ``text`` is the
    spec as written (see :func:`vlagen.api.generate`)."""
    resolved = _resolve(spec)
    data = resolved.model_dump(mode="json")
    spec_hash = hashlib.sha256(canonical_json(data).encode()).hexdigest()
    package = resolved.project.import_name
    env = make_env_plan(resolved.env, resolved.model.action.chunk, package)
    model = make_model_plan(resolved, package)
    targets = tuple(_planned_target(resolved, i) for i in range(len(resolved.targets)))
    spec_json = json.dumps(
        {"generated_by": f"vlagen {__version__}", "spec": data, "spec_hash": spec_hash},
        sort_keys=True,
        indent=2,
        ensure_ascii=False,
    )
    return Plan(
        spec=resolved,
        spec_hash=spec_hash,
        spec_json=spec_json + "\n",
        spec_text=_spec_text(spec, text),
        schema_text=schema_text(),
        vlagen_version=__version__,
        package=package,
        targets=targets,
        env=env,
        model=model,
        classes=spec_classes(Spec),
        spec_literal=py_literal(resolved),
        files=_core_files(package)
        + _env_files(package, env)
        + _model_files(package, model)
        + _target_files(package, targets)
        + _run_files(package, targets),
    )


def _spec_text(spec: Spec, text: str | None) -> str:
    """The spec as written (without the header of a copy it was read from), or, for a spec
    built in Python, the fields it sets as YAML."""
    if text is None:
        data = spec.model_dump(mode="json", exclude_unset=True)
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return without_header(text)


def _resolve(spec: Spec) -> Spec:
    project = spec.project.model_copy(update={"package": spec.project.import_name})
    env = resolve_env(spec.env, spec.training.group_size)
    update = {"project": project, "env": env, "model": resolve_model(spec)}
    return spec.model_copy(update=update)


def _planned_target(spec: Spec, index: int) -> PlannedTarget:
    target = spec.targets[index]
    decl = _decl(target.framework, target.version)
    plan = decl.planner(spec, index) if decl.planner is not None else None
    reference = decl.reference(spec, index, plan) if decl.reference is not None else None
    return PlannedTarget(decl, target.algorithm, plan, reference)


def _decl(framework: str, version: str) -> TargetDecl:
    decl = find_target(framework, version)
    if decl is None:  # load_spec rejects these; reaching here is a bug
        raise LookupError(f"no target {framework}@{version}")
    return decl


GENERATED_MODULES = frozenset(
    {
        "__init__",
        "spec",
        "smoke",
        "progress",
        "held",
        "constraints",
        "env",
        "model",
        "targets",
        "parity",
        "learn",
    }
)
"""The modules and subpackages vlagen writes directly under ``src/<package>/``: a class path
(``model.class_path``, ``env.backend_class``) may not point into them."""


def _core_files(package: str) -> tuple[PlannedFile, ...]:
    """The files every generated package has. Env, model and target files join as folders."""
    src = f"src/{package}"
    return (
        PlannedFile(".gitattributes", "package/gitattributes.jinja"),
        PlannedFile(".gitignore", "package/gitignore.jinja"),
        PlannedFile(SPEC_COPY, "package/vlagen.yaml.jinja"),
        PlannedFile(SCHEMA_FILE, "package/vlagen.schema.json.jinja"),
        PlannedFile("README.md", "package/README.md.jinja"),
        PlannedFile("pyproject.toml", "package/pyproject.toml.jinja"),
        PlannedFile(f"{src}/__init__.py", "package/src/__init__.py.jinja"),
        PlannedFile(f"{src}/constraints.py", "package/src/constraints.py.jinja"),
        PlannedFile(f"{src}/held.py", "package/src/held.py.jinja"),
        PlannedFile(f"{src}/progress.py", "package/src/progress.py.jinja"),
        PlannedFile(f"{src}/spec.json", "package/src/spec.json.jinja"),
        PlannedFile(f"{src}/spec.py", "package/src/spec.py.jinja"),
        PlannedFile("tests/test_constraints.py", "package/tests/test_constraints.py.jinja"),
        PlannedFile("tests/test_held.py", "package/tests/test_held.py.jinja"),
        PlannedFile("tests/test_spec.py", "package/tests/test_spec.py.jinja"),
    )


_CHECK_MODULES = (
    "__init__",
    "__main__",
    "calls",
    "checks",
    "controls",
    "recording",
    "report",
    "runner",
    "subject",
)
"""The modules of ``env/check/``, the backend conformance check (``python -m <pkg>.env.check``)."""


def _env_files(package: str, env: EnvPlan) -> tuple[PlannedFile, ...]:
    """The env core, its backends and its tests; modules only where the spec uses them."""
    src, tpl = f"src/{package}/env", "package/src/env"
    modules = [
        "__init__",
        "actions",
        "core",
        "envs",
        "observations",
        "pool",
        "processes",
        "remote",
        "rewards",
        "serve",
        "server",
        "session",
        "tokens",
        "transport",
        "vector",
        "wire",
        "worker",
    ]
    if env.mapping == "controller":
        modules.append("control")
    if env.video:
        modules.append("video")
    modules += [f"check/{name}" for name in _CHECK_MODULES]
    files = [PlannedFile(f"{src}/{name}.py", f"{tpl}/{name}.py.jinja") for name in modules]
    backends = {"__init__": "__init__", "base": "base", **env.backend_templates}
    for module, template in backends.items():
        path, source = f"{src}/backends/{module}.py", f"{tpl}/backends/{template}.py.jinja"
        files.append(PlannedFile(path, source))
    tests = ["conftest", "starts", "test_env", "test_env_check", "test_env_pool", "test_env_remote"]
    if env.preset.backend != "synthetic":
        tests.append("test_env_backend")
    if env.setup_module is not None:
        tests.append(f"test_{env.setup_module}")
    if env.probe is not None:
        tests += ["simulator", f"test_{env.preset.backend}_real"]
    files += [PlannedFile(f"tests/{name}.py", f"package/tests/{name}.py.jinja") for name in tests]
    if env.scaffold is not None:
        files.append(
            PlannedFile(f"src/{env.scaffold}", f"{tpl}/backend_scaffold.py.jinja", Mode.SCAFFOLD)
        )
    return tuple(sorted(files, key=lambda f: f.path))


def _model_files(package: str, model: ModelPlan) -> tuple[PlannedFile, ...]:
    """The policy core, the smoke run, their tests, and your custom module's first draft."""
    src, tpl = f"src/{package}", "package/src"
    files = [
        PlannedFile(f"{src}/model/{name}.py", f"{tpl}/model/{template}.py.jinja")
        for name, template in model.templates.items()
    ]
    files.append(PlannedFile(f"{src}/smoke.py", f"{tpl}/smoke.py.jinja"))
    if model.scaffold is not None:
        files.append(
            PlannedFile(f"src/{model.scaffold}", f"{tpl}/custom_module.py.jinja", Mode.SCAFFOLD)
        )
    tests = ["test_model", "test_model_gpu", "test_closed_loop"]
    if model.flow is not None:  # its own model tests, and the frameworks' code beside it
        tests = ["test_flow", "flow_references", "test_flow_reference", "test_model_gpu"]
        tests.append("test_closed_loop")
    if model.reference:  # the checkpoints' own modeling code, and the test against it
        tests += ["prismatic", "test_model_reference"]
    if model.qwen_reference:
        tests.append("test_model_reference_qwen")
    for name in tests:
        files.append(PlannedFile(f"tests/{name}.py", f"package/tests/{name}.py.jinja"))
    return tuple(sorted(files, key=lambda f: f.path))


def _target_files(package: str, targets: tuple[PlannedTarget, ...]) -> tuple[PlannedFile, ...]:
    """Each target's template folder, laid out under ``src/<pkg>/targets/<framework>/`` (its
    ``src/``) and ``tests/`` (its ``tests/``); shell scripts are executable."""
    with_files = [t for t in targets if t.decl.templates is not None]
    if not with_files:
        return ()
    files = [
        PlannedFile(f"src/{package}/targets/__init__.py", "targets/__init__.py.jinja"),
        PlannedFile(f"src/{package}/targets/preflight.py", "targets/preflight.py.jinja"),
    ]
    root = templates_root() / "targets"
    for t in with_files:
        folder = root / str(t.decl.templates)
        framework = t.decl.framework
        places = {"src": f"src/{package}/targets/{framework}", "tests": "tests"}
        omitted = getattr(t.plan, "omitted_templates", ())  # what this version does not use
        if not _parity_targets(targets):
            omitted = (*omitted, PARITY_MODULE)
        for part, dest in places.items():
            for source in sorted((folder / part).glob("*.jinja")):
                name = source.name.removesuffix(".jinja")
                if f"{part}/{name}" in omitted:
                    continue
                files.append(
                    PlannedFile(
                        f"{dest}/{name}",
                        f"targets/{t.decl.templates}/{part}/{source.name}",
                        executable=name.endswith(".sh"),
                        target=framework,
                    )
                )
    return tuple(sorted(files, key=lambda f: f.path))


_BARE = r"[A-Za-z0-9._-]+"

#: A target's parity module, in its template folder: ``first_decisions`` and ``require``
#: (see the package's ``parity.py``); the package's parity run takes each target that has one.
PARITY_MODULE = "src/parity.py"


def _parity_targets(targets: tuple[PlannedTarget, ...]) -> tuple[RunTarget, ...]:
    """The spec's targets with generated adapters, where there are two or more."""
    found = _run_targets(targets, PARITY_MODULE)
    return found if len(found) >= 2 else ()


LEARNING_RATE_FULL = 3e-3  #: :attr:`Plan.learning_rate` without LoRA
LEARNING_RATE_LORA = 1e-3  #: with LoRA

#: A target's learning run, in its template folder: ``learn`` and ``require`` (see the
#: package's ``learn.py``).
LEARN_MODULE = "src/learn.py"


def _learning_targets(targets: tuple[PlannedTarget, ...]) -> tuple[RunTarget, ...]:
    """The spec's targets with generated adapters, where one of them has a learning run."""
    found = _run_targets(targets, LEARN_MODULE)
    return found if any(t.has_module for t in found) else ()


def _run_targets(targets: tuple[PlannedTarget, ...], module: str) -> tuple[RunTarget, ...]:
    root = templates_root() / "targets"
    return tuple(
        RunTarget(
            t.decl.framework,
            f"{t.decl.title} {t.decl.version}",
            t.algorithm,
            (root / str(t.decl.templates) / f"{module}.jinja").is_file()
            and module not in getattr(t.plan, "omitted_templates", ()),
        )
        for t in targets
        if t.decl.templates is not None
    )


#: The package-wide runs: module, its test, and the targets that make the spec have it.
RUNS = (("parity", "test_parity", _parity_targets), ("learn", "test_learning", _learning_targets))


def _run_files(package: str, targets: tuple[PlannedTarget, ...]) -> tuple[PlannedFile, ...]:
    """``python -m <pkg>.parity`` (two or more targets) and ``python -m <pkg>.learn`` (a
    target with a learning run), each with its test, where the spec has them."""
    return tuple(
        file
        for module, test, selected in RUNS
        if selected(targets)
        for file in (
            PlannedFile(f"src/{package}/{module}.py", f"package/src/{module}.py.jinja"),
            PlannedFile(f"tests/{test}.py", f"package/tests/{test}.py.jinja"),
        )
    )
