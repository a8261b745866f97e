"""vlagen's errors: one root, a branch for errors the user caused, and an exit code per class.

The CLI prints any :class:`UserError` without a traceback and exits with its ``exit_code``;
anything else is a bug in vlagen, reported in one line with exit code 1 (its traceback shows
with ``VLAGEN_DEBUG=1``).
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConflictError",
    "Issue",
    "OutputError",
    "SpecError",
    "UsageError",
    "UserError",
    "VlagenError",
    "short_repr",
]

KeyPath = tuple[str | int, ...]


class VlagenError(Exception):
    """Root of every error vlagen raises on purpose."""


class UserError(VlagenError):
    """Raised for a mistake in the user's input or files; printed without a traceback."""

    exit_code = 2


class UsageError(UserError):
    """Raised when a command is called on something it cannot work on (exit code 2)."""


class ConflictError(UserError):
    """Raised when writing would overwrite a user's edit or a directory vlagen did not make.

    Exit code 1, like differences and stale output: the input is valid, the disk disagrees.
    """

    exit_code = 1

    def __init__(self, message: str, *, paths: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.paths = tuple(paths)

    def __str__(self) -> str:
        lines = [self.args[0], *(f"  {p}" for p in self.paths)]
        return "\n".join(lines)


class OutputError(UserError):
    """Raised when a path would land outside the output directory: a rendered or recorded
    path that escapes it, or a symlink (or non-file) below it where vlagen reads or writes."""


@dataclass(frozen=True)
class Issue:
    """One problem in a spec: where it is (key path, and line/column once located) and what."""

    loc: KeyPath
    message: str
    line: int | None = None
    column: int | None = None

    @property
    def dotted(self) -> str:
        """The key path as users write it: ``targets[0].framework``."""
        out = ""
        for part in self.loc:
            if isinstance(part, str) and len(part) > 40:  # a key that long is the problem
                part = part[:37] + "..."
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out or "<root>"


class SpecError(UserError):
    """Raised when a spec is invalid; carries every issue found, each located in the file."""

    def __init__(self, path: str, issues: Sequence[Issue]) -> None:
        self.path = path
        self.issues = tuple(sorted(issues, key=lambda i: (i.line or 0, i.column or 0, i.dotted)))
        super().__init__(self.format())

    def format(self) -> str:
        """``PATH:LINE:COL: key.path: message``, one line per issue, sorted by position."""
        return "\n".join(
            f"{self.path}:{i.line or 1}:{i.column or 1}: {i.dotted}: {i.message}"
            for i in self.issues
        )


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (and safe for any value)."""
    try:
        text = repr(value)
    except Exception:  # a repr that fails is still shown as its type
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def closest(value: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The choice closest to ``value`` (for "did you mean"), or ``None`` if none is close."""
    found = difflib.get_close_matches(value, list(choices), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` when a choice is close to ``value``, else ``""``."""
    close = closest(value, choices)
    return f"; did you mean {close!r}?{_look_alikes(value, close)}" if close else ""


def _look_alikes(value: str, close: str) -> str:
    """Where ``value`` differs from ``close`` only in characters beyond ASCII (Cyrillic
    U+0435 for 'e'), which print alike: those characters, by name."""
    odd = [(c, d) for c, d in zip(value, close, strict=False) if c != d]
    if len(value) != len(close) or not odd or any(c.isascii() for c, _ in odd):
        return ""
    named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')} for {d!r}" for c, d in odd)
    return f" ({value!r} holds {named})"
