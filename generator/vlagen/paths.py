"""Where things are: vlagen's own templates and built-in targets, the ``.vlagen/`` folder of an
output, and the paths that name a stream rather than a file.

A leaf module (nothing of vlagen's, nothing heavy), so that the commands that only read an
output can find their way without loading the spec models or Jinja.
"""

from __future__ import annotations

import pkgutil
import re
from functools import cache
from importlib.resources import files
from pathlib import Path

__all__ = [
    "BASE_DIR",
    "KEPT_DIR",
    "MANIFEST_PATH",
    "STREAM",
    "STREAM_DIRS",
    "base_path",
    "builtin_targets",
    "templates_root",
]

MANIFEST_PATH = ".vlagen/manifest.json"
BASE_DIR = ".vlagen/base"  #: what vlagen last wrote, per content hash: the merge bases
KEPT_DIR = ".vlagen/kept"  #: copies of the edits ``--force`` overwrote or deleted

#: Paths that name a descriptor the shell handed vlagen (``< spec.yaml``, ``<(cmd)``, a pipe):
#: read even if they are a pipe or a terminal, since naming one is asking for it to be read.
STREAM = "/dev/stdin"
STREAM_DIRS = ("/dev/fd/", "/proc/self/fd/")

_TARGET_MODULE = re.compile(r"(?P<framework>[a-z][a-z0-9]*)_(?P<version>\d+(?:_\d+)*)")


def base_path(sha256: str) -> str:
    """Where the merge base of a generated file whose content hashes to ``sha256`` is kept."""
    return f"{BASE_DIR}/{sha256}"


def templates_root() -> Path:
    """The installed ``templates/`` folder (shipped in the wheel as ``vlagen.templates``)."""
    return Path(str(files("vlagen.templates")))


@cache
def builtin_targets() -> dict[tuple[str, str], str]:
    """(framework, version) → module of each built-in target (``vlagen.targets.<module>``),
    read off the top-level module names, ``<framework>_<major>_<minor>``, without importing
    them. Packages (a framework's plan and checks, what targets share) are not targets."""
    found = {}
    folder = Path(__file__).resolve().parent / "targets"
    for info in pkgutil.iter_modules([str(folder)]):
        if info.ispkg or info.name.startswith("_"):
            continue
        named = _TARGET_MODULE.fullmatch(info.name)
        if named is None:
            raise RuntimeError(
                f"vlagen.targets.{info.name}: a target module is named <framework>_<major>_"
                "<minor> after its declaration (a helper module starts with '_')"
            )
        found[named["framework"], named["version"].replace("_", ".")] = info.name
    return found
