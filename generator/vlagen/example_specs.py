"""The example specs that ship with vlagen (the repository's ``specs/``, in the wheel as the
``vlagen.examples`` package), for ``vlagen init --example NAME``."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .errors import UsageError, closest

__all__ = ["describe", "names", "read"]


def _root() -> Path:
    return Path(str(files("vlagen.examples")))


def names() -> list[str]:
    """Every example's name (its file name without ``.yaml``), sorted."""
    return sorted(path.stem for path in _root().glob("*.yaml"))


def read(name: str) -> bytes:
    """The example spec ``name``, byte for byte.

    Raises:
        UsageError: no example is called ``name`` (with the closest name, and every name).
    """
    known = names()
    if name not in known:
        close = closest(name, known, cutoff=0.5)
        hint = f" (did you mean {close!r}?)" if close else ""
        raise UsageError(
            f"no example spec {name!r}{hint}; examples: {', '.join(known)} "
            "(`vlagen init --example list` describes them)"
        )
    return (_root() / f"{name}.yaml").read_bytes()


def describe(name: str) -> str:
    """The example's opening comment (what it pairs with what), in one line."""
    words = []
    for line in read(name).decode("utf-8").splitlines():
        if line.startswith("# yaml-language-server:"):
            continue
        if not line.startswith("#"):
            break
        words.append(line.lstrip("# ").strip())
    return " ".join(words)
