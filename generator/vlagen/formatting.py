"""format: run ruff's formatter over the Python files of a :class:`FileTree`.

One ruff process formats the whole tree (a process per file would cost more than rendering).
The tree's own ``pyproject.toml`` travels with it, so ruff reads the same settings the user's
checkout will. What ruff made of a file is kept in the user's cache (:mod:`vlagen.usercache`),
keyed by ruff's version, the tree's ruff settings, the file's path and its text: a file
rendered as before is not formatted again, and a run where every file was seen before starts
no ruff at all.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

from . import usercache
from .errors import VlagenError
from .tree import File, FileTree

__all__ = ["format_tree", "ruff_version"]

_CONFIG_FILES = ("pyproject.toml", "ruff.toml", ".ruff.toml")


def format_tree(tree: FileTree) -> FileTree:
    """The tree with every ``.py`` file formatted by ruff."""
    python = [p for p in tree if p.endswith(".py")]
    if not python:
        return tree
    configs = [c for c in _CONFIG_FILES if c in tree]
    settings = hashlib.sha256()
    for name in configs:
        settings.update(b"%s %d\n%s" % (name.encode(), len(tree[name].content), tree[name].content))
    cache = usercache.folder(f"ruff-{ruff_version()}")
    keys = {p: _key(settings.hexdigest(), p, tree[p].content) for p in python}
    formatted = {p: usercache.read(cache, keys[p]) for p in python}
    missing = [p for p, content in formatted.items() if content is None]
    if missing:
        fresh = _ruff_format(tree, missing, configs)
        for path in missing:
            usercache.write(cache, keys[path], fresh[path])
        formatted.update(fresh)
    return tree.replace({p: File(formatted[p], tree[p].mode, tree[p].executable) for p in python})


def _key(settings: str, path: str, content: bytes) -> str:
    """The cache key of ``content`` at ``path`` under the ruff settings hashing to ``settings``."""
    head = f"{settings}\n{path} {len(content)}\n".encode()
    return hashlib.sha256(head + content).hexdigest()


def _ruff_format(tree: FileTree, python: list[str], configs: list[str]) -> dict[str, bytes]:
    """``python``'s files of ``tree`` formatted by one ruff process, beside ``configs``."""
    import subprocess  # here, not at the top: a run whose every file was seen before
    import tempfile  # starts no process and makes no folder

    from ruff.__main__ import find_ruff_bin

    with tempfile.TemporaryDirectory(prefix="vlagen-format-") as tmp:
        root = Path(tmp)
        for path in [*python, *configs]:
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
        return {p: (root / p).read_bytes() for p in python}


def ruff_version() -> str:
    """The formatter's version; recorded in the manifest because it shapes the output."""
    return metadata.version("ruff")
