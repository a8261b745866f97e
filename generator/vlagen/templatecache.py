"""Compiled templates kept between runs: Jinja's bytecode cache in the user's cache folder
(:mod:`vlagen.usercache`).

Compiling the templates is about half of a cold ``vlagen new``; with the cache it is a read of
their bytecode. Jinja checks each entry against its template's source (a checksum in the
entry), so an edited template is compiled again; the folder is per vlagen and Jinja version
and per setting of the environment that changes what a template compiles to. Where the folder
cannot be written or read, templates are compiled as before: the cache only saves time.
"""

from __future__ import annotations

import hashlib
from contextlib import suppress

import jinja2
from jinja2.bccache import Bucket

from . import usercache
from ._version import __version__

__all__ = ["bytecode_cache"]


class _Quiet(jinja2.FileSystemBytecodeCache):
    """A bytecode cache that never fails a run: an entry it cannot read or write is skipped."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, ValueError, EOFError):  # unreadable or truncated: compile instead
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):
            super().dump_bytecode(bucket)


def bytecode_cache(settings: tuple) -> jinja2.BytecodeCache | None:
    """The cache for an environment with ``settings`` (whatever changes compiled code), or
    ``None`` where the cache is off or its folder cannot be made."""
    key = repr((__version__, jinja2.__version__, settings)).encode()
    found = usercache.folder(f"templates-{hashlib.sha256(key).hexdigest()[:16]}")
    return None if found is None else _Quiet(str(found))
