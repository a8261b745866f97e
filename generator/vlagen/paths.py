"""Where things are: vlagen's own templates, and the ``.vlagen/`` folder of an output.

A leaf module (nothing of vlagen's, nothing heavy), so that the commands that only read an
output can find their way without loading the spec models or Jinja.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["BASE_DIR", "KEPT_DIR", "MANIFEST_PATH", "templates_root"]

MANIFEST_PATH = ".vlagen/manifest.json"
BASE_DIR = ".vlagen/base"  #: what vlagen last wrote, per content hash: the merge bases
KEPT_DIR = ".vlagen/kept"  #: copies of the edits ``--force`` overwrote or deleted


def templates_root() -> Path:
    """The installed ``templates/`` folder (shipped in the wheel as ``vlagen.templates``)."""
    return Path(str(files("vlagen.templates")))
