"""Is the spec's ``env.gymnasium.id`` one gymnasium can make? Asked of gymnasium's registry
where gymnasium is installed; where it is not, vlagen cannot know and says nothing.

An id of another package is registered when that package is imported: ``module:Env-v0``, or
``env.gymnasium.import_module``. Those modules are imported here as the generated backend
imports them; where one cannot be imported on this machine (the simulator is installed only
where the package runs), the id is not checked. ``vlagen check`` and ``diff`` never ask:
they compare a package with its spec, and importing gymnasium would slow every commit hook.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from collections.abc import Iterator
from typing import Any

from .errors import Issue, closest
from .presets import PRESETS, preset_gymnasium
from .spec import Env

LOC = ("env", "gymnasium", "id")


def gymnasium_id_issues(env: Env) -> Iterator[Issue]:
    """An issue at ``env.gymnasium.id`` when the id the spec writes is not registered."""
    given = env.gymnasium.id if env.gymnasium is not None else None
    if given is None or PRESETS[env.preset].gymnasium is None:
        return
    gym = _importable("gymnasium")
    settings = preset_gymnasium(env)
    module, _, name = given.rpartition(":")
    needed = [m for m in (settings.import_module if settings else None, module) if m]
    if gym is None or any(_importable(m) is None for m in needed):
        return
    try:
        gym.spec(name)
        return
    except gym.error.Error as exc:
        found = " ".join(str(exc).split())
    close = closest(name, sorted(gym.registry))
    if close:
        message = f"did you mean {(module + ':' if module else '') + close!r}?"
    else:
        message = (
            f"{found} An env of another package is registered when that package is "
            "imported: write the id as 'module:Env-v0', or name the module in "
            "env.gymnasium.import_module"
        )
    yield Issue(LOC, f"gymnasium has no env {given!r}; {message}")


def _importable(module: str) -> Any:
    """``module`` imported, or ``None`` where it is not installed or fails to import."""
    try:
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(module)
    except Exception:  # a module that cannot be imported here cannot be asked
        return None
