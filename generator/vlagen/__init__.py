"""vlagen: one YAML spec in, a VLA-model + simulator adapter package for RL frameworks out.

The public API is small; names load on first use so that ``vlagen --help`` stays fast.
The floor plan (README, "How it works"): the commands (:mod:`.cli`, :mod:`.api`) over
:mod:`.load`, :mod:`.checks`, render and sync, :mod:`.plan`, :mod:`.targets` (a framework
version line each), the conventions of simulators and checkpoints as data, and :mod:`.spec`
(what the user wrote); each layer imports only those below it.

>>> import vlagen
>>> vlagen.__version__
'0.1.0'
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .api import Output, check, diff, generate, write
    from .errors import ConflictError, SpecError, UsageError, UserError, VlagenError
    from .load import load_spec
    from .spec import Spec

__all__ = [
    "ConflictError",
    "Output",
    "Spec",
    "SpecError",
    "UsageError",
    "UserError",
    "VlagenError",
    "__version__",
    "check",
    "diff",
    "generate",
    "load_spec",
    "write",
]

_LAZY = {
    "Output": "api",
    "check": "api",
    "diff": "api",
    "generate": "api",
    "write": "api",
    "load_spec": "load",
    "Spec": "spec",
    "ConflictError": "errors",
    "SpecError": "errors",
    "UsageError": "errors",
    "UserError": "errors",
    "VlagenError": "errors",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'vlagen' has no attribute {name!r}")
