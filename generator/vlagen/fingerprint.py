"""fingerprint: one digest of everything a package's output is a function of, so that
``check`` and ``diff`` can tell an up-to-date output without regenerating it.

The output is a function of the spec's text, vlagen's code and templates, and the libraries
that parse, validate, render and format it: :func:`inputs_digest` hashes all of them. When
``check`` or ``diff`` has regenerated an output to compare it, it remembers in the user's
cache (:mod:`vlagen.usercache`) which manifest its inputs made (:func:`remember`; ``new``
and ``regen`` do not: they compare nothing, and the digest would cost them). ``check`` and
``diff`` first ask :func:`is_up_to_date`: if
these inputs are remembered to make the manifest on disk, byte for byte, and every file that
manifest records is on disk as recorded, then regenerating would give back exactly those
files, and there is nothing to report. That skips loading the spec models, Jinja and ruff,
nearly all of their time. Any other answer (nothing remembered, a different manifest, an
edited or missing file, a symlink) falls through to regenerating and comparing, which reports
precisely what differs: the shortcut only ever answers "nothing".

The digest is kept out of the package itself: it changes with every change to vlagen's code
and with the libraries' versions on a machine, and the package's files must not.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from importlib import metadata
from pathlib import Path

from . import usercache
from .errors import VlagenError
from .manifest import Manifest
from .outdir import OutDir
from .paths import (
    MANIFEST_PATH,
    STREAM,
    STREAM_DIRS,
    base_path,
    builtin_targets,
    templates_root,
)
from .provenance import without_header
from .tree import Mode

__all__ = ["LIBRARIES", "inputs_digest", "is_up_to_date", "remember"]

#: The distributions whose version can change the output: the YAML parser and the validator
#: shape the resolved spec, Jinja the rendered text, ruff the formatting.
LIBRARIES = ("jinja2", "pydantic", "pydantic-core", "pyyaml", "ruff")

#: The cache folder of what each digest of inputs generated (the manifest's sha256).
_MEMO = "outputs"

#: The most spec text :func:`is_up_to_date` reads; a larger spec takes the slow path, whose
#: loader refuses it with a located error.
_SPEC_LIMIT = 1 << 20


def inputs_digest(spec_text: str) -> str:
    """sha256 over ``spec_text`` (the spec as the package keeps it, without a copy's
    header), every file of vlagen's code and templates, and the :data:`LIBRARIES`'
    versions, as they are now (nothing is cached: a long-running process sees edits)."""
    digest = hashlib.sha256()
    for name in LIBRARIES:
        digest.update(f"{name}=={_version(name)}\n".encode())
    for label, root in _code_roots():
        for path in _files(root):
            data = path.read_bytes()
            digest.update(f"{label}/{path.relative_to(root).as_posix()} {len(data)}\n".encode())
            digest.update(data)
    data = spec_text.encode("utf-8")
    digest.update(f"spec {len(data)}\n".encode())
    digest.update(data)
    return digest.hexdigest()


def remember(inputs: str, manifest: bytes) -> None:
    """Note in the user's cache that the inputs whose digest is ``inputs`` generate the
    manifest ``manifest``. The caller takes the digest before generating and again after,
    and calls this only if both agree and the spec it generated is the one that text
    loads to (see :func:`vlagen.cli`'s ``_load``)."""
    usercache.write(usercache.folder(_MEMO), inputs, hashlib.sha256(manifest).hexdigest().encode())


def is_up_to_date(spec_path: Path, out_dir: Path) -> bool:
    """True only if ``out_dir`` is known to be exactly what the spec at ``spec_path``
    generates, and the comparison would read nothing it refuses (a symlink, a folder where a
    file was written); False where that cannot be told this way (the caller then
    regenerates and compares, which says what differs)."""
    text = _spec_text(spec_path)
    if text is None:
        return False
    made = usercache.read(usercache.folder(_MEMO), inputs_digest(without_header(text)))
    if made is None:
        return False
    try:
        with OutDir(out_dir, writing=False) as out:
            raw = out.read(MANIFEST_PATH)
            if raw is None or hashlib.sha256(raw).hexdigest().encode() != made:
                return False
            last = Manifest.from_bytes(raw, out_dir / MANIFEST_PATH)
            builtin = {f"{f}@{v}" for f, v in builtin_targets()}
            if not set(last.targets) <= builtin:  # a plugin's code is not in the digest
                return False
            for path, record in last.files.items():
                data = out.read(path)  # read as the comparison reads it, scaffolds too
                if record.mode is Mode.SCAFFOLD:  # the user's once written: never stale
                    continue
                if data is None or _lf_sha(data) != record.sha256:
                    return False
                out.read(base_path(record.sha256))  # read (and refused) as the comparison does
    except (OSError, VlagenError):  # a symlink, an unreadable file: the slow path says which
        return False
    return True


def _spec_text(path: Path) -> str | None:
    """The spec at ``path`` if it is a regular UTF-8 file of at most 1 MiB, else ``None``
    (a stream is read once, by the slow path)."""
    if str(path) == STREAM or str(path).startswith(STREAM_DIRS):
        return None
    try:
        if not path.is_file() or path.stat().st_size > _SPEC_LIMIT:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _lf_sha(data: bytes) -> str:
    """The hash a generated file is recorded under; CRLF line ends read as LF, as regen
    compares them (the manifest itself is compared byte for byte)."""
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def _version(name: str) -> str:
    """``name``'s installed version, read off its metadata folder's name where it has one
    (``{name}-{version}.dist-info``, as installers must name it): first on ``sys.path``, as
    imports find it. Parsing each ``METADATA`` file instead would cost half the digest."""
    pattern = re.compile(rf"{re.sub(r'[-_.]+', '_', name)}-([^-]+)\.dist-info", re.IGNORECASE)
    for entry in sys.path:
        try:
            listing = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for found in listing:
            named = pattern.fullmatch(found)
            if named:
                return named[1]
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def _code_roots() -> list[tuple[str, Path]]:
    """vlagen's package folder, and its templates where they are not inside it (an
    editable install)."""
    package = Path(__file__).resolve().parent
    templates = templates_root().resolve()
    roots = [("vlagen", package)]
    if not templates.is_relative_to(package):
        roots.append(("templates", templates))
    return roots


def _files(root: Path) -> list[Path]:
    """Every file below ``root`` but compiled bytecode, in a fixed order."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [Path(folder, n) for n in sorted(names) if not n.endswith((".pyc", ".pyo"))]
    return found
