"""format: run ruff's formatter over the Python files of a :class:`FileTree`.

One ruff process formats the whole tree (a process per file would cost more than rendering).
The tree's own ``pyproject.toml`` travels with it, so ruff reads the same settings the user's
checkout will.
"""

from __future__ import annotations

import subprocess
import tempfile
from importlib import metadata
from pathlib import Path

from ruff.__main__ import find_ruff_bin

from .errors import VlagenError
from .tree import File, FileTree

__all__ = ["format_tree", "ruff_version"]

_CONFIG_FILES = ("pyproject.toml", "ruff.toml", ".ruff.toml")


def format_tree(tree: FileTree) -> FileTree:
    """The tree with every ``.py`` file formatted by ruff."""
    python = [p for p in tree if p.endswith(".py")]
    if not python:
        return tree
    with tempfile.TemporaryDirectory(prefix="vlagen-format-") as tmp:
        root = Path(tmp)
        for path in [*python, *(c for c in _CONFIG_FILES if c in tree)]:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(tree[path].content)
        result = subprocess.run(
            [find_ruff_bin(), "format", "--no-cache", "--quiet", *python],
            cwd=root,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise VlagenError(
                "ruff could not format the generated code (a template bug):\n" + result.stderr
            )
        formatted = {p: (root / p).read_bytes() for p in python}
    return tree.replace({p: File(formatted[p], tree[p].mode, tree[p].executable) for p in python})


def ruff_version() -> str:
    """The formatter's version; recorded in the manifest because it shapes the output."""
    return metadata.version("ruff")
