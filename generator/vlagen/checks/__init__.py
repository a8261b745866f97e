"""Checks across fields of a spec, and each target's own rules.

Each check yields :class:`Issue`s naming the key they are about; the loader places them in the
file. They run on a spec that already passed field validation, and all of them run, so the user
sees every problem at once.

One module a part of the spec: :mod:`.model` (the model against the env), :mod:`.env`,
:mod:`.targets` (each target's fit and config keys; a target's own rules are its
declaration's ``checks``); this one runs them all in order.
"""

from __future__ import annotations

import keyword
import sys
from collections.abc import Callable, Iterable, Iterator

from ..batch import neutral_issues
from ..errors import Issue
from ..gymids import gymnasium_id_issues
from ..spec import Spec
from ..targets import find_target
from . import env, model
from .targets import CHECKS as TARGET_CHECKS
from .targets import target_config, target_fits, unknown_version


def check_spec(spec: Spec, *, probe: bool = True) -> list[Issue]:
    """Every cross-field and target issue in ``spec``; with ``probe``, also what the
    installed simulators say of it (a gymnasium id they do not register)."""
    issues: list[Issue] = []
    for check in CHECKS:
        issues.extend(check(spec))
    if probe:
        issues.extend(gymnasium_id_issues(spec.env))
    for index, target in enumerate(spec.targets):
        decl = find_target(target.framework, target.version)
        if decl is None:
            issues.extend(unknown_version(target.framework, target.version, index))
            continue
        found = list(target_fits(spec, decl, index))
        if spec.targets[index].algorithm in decl.algorithms:
            # the target's checks compute from the algorithm: none from a wrong one
            for check in decl.checks:
                found.extend(check(spec, index))
        issues += found + list(target_config(spec, decl, index, planned=not found))
    return issues


#: The top-level modules a generated package imports, or the frameworks and simulators it
#: runs import, beyond the standard library: a package of one of these names would be
#: imported in their place (its ``src`` comes first on the path). ``tests/test_safety.py``
#: holds it to every import in the goldens.
IMPORTED = frozenset(
    {
        "PIL",
        "accelerate",
        "areal",
        "datasets",
        "flash_attn",
        "gym",
        "gym_pusht",
        "gymnasium",
        "highway_env",
        "huggingface_hub",
        "hydra",
        "imageio",
        "libero",
        "metadrive",
        "mujoco",
        "navsim",
        "numpy",
        "omegaconf",
        "pandas",
        "peft",
        "pyarrow",
        "pygame",
        "pytest",
        "ray",
        "rlinf",
        "robosuite",
        "safetensors",
        "sglang",
        "siirl",
        "tensordict",
        "tokenizers",
        "torch",
        "torchdata",
        "transformers",
        "typing_extensions",
        "verl",
        "vllm",
        "yaml",
        "zmq",
    }
)


def _check_project(spec: Spec) -> Iterator[Issue]:
    name = spec.project.import_name
    given = spec.project.package is not None
    key = ("project", "package" if given else "name")
    if name in IMPORTED or name in sys.stdlib_module_names:
        stdlib = name in sys.stdlib_module_names
        what = "a standard-library module" if stdlib else "a module the generated package imports"
        source = "" if given else "derived from the name, "
        yield Issue(
            key,
            f"the import package {source}{name!r}, is {what}: the package would be imported "
            f"in its place; set project.package to another name (e.g. '{name}_vla')",
        )
    if given:
        return  # otherwise validated as a field
    if keyword.iskeyword(name):
        yield Issue(
            ("project", "name"),
            f"the import package derived from the name, {name!r}, is a Python keyword, which "
            "no import statement can name; set project.package",
        )
    elif not name.isidentifier():
        yield Issue(
            ("project", "name"),
            f"the import package derived from the name, {name!r}, is not a valid Python "
            "identifier; set project.package",
        )


CHECKS: tuple[Callable[[Spec], Iterable[Issue]], ...] = (
    _check_project,
    *model.CHECKS,
    *env.CHECKS,
    neutral_issues,
    *TARGET_CHECKS,
)
