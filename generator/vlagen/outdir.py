"""The output directory, touched only through directory descriptors that never follow a symlink.

Everything vlagen reads or writes below the output root goes through :class:`OutDir`: each
directory on the way is opened relative to its parent with ``O_NOFOLLOW``, files are read with
``O_NOFOLLOW`` and temporary files are created with ``O_CREAT | O_EXCL``, so a symlink that
vlagen did not create is never followed, even one that appears between a check and a write.
The root itself is the user's choice (``-o DIR`` or the project name) and may be a symlink.

A symlink where vlagen reads is an error, not content: commands that write refuse with
"refusing to write through the symlink PATH", commands that only read with "cannot compare
through the symlink PATH". Both are :class:`OutputError` (exit code 2).

POSIX only: it needs ``dir_fd`` support and ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from .errors import ConflictError, OutputError

__all__ = ["MAX_READ_BYTES", "OutDir", "temp_name"]

MAX_READ_BYTES = 64 << 20
"""Largest file vlagen reads back at a generated path or as its manifest (64 MiB). vlagen's
own files are kilobytes; anything this large was put there by someone else, and reading it
whole into memory to compare it would be the only effect."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted at a generated path must not hang; fstat then refuses it.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# O_EXCL makes the open fail on anything already there, a symlink (even dangling) included;
# O_NOFOLLOW says the same again for systems that would otherwise follow a final link.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def temp_name(name: str) -> str:
    """The name a file is staged under before it is renamed to ``name``, in the same directory.

    Fixed rather than random, so that a temporary file left by a crashed run is recognised and
    replaced by the next one instead of piling up.
    """
    return f".{name}.vlagen-tmp"


class OutDir:
    """Reads and writes under ``root`` without following a symlink below it.

    ``writing`` only picks the wording of refusals. Holds directory descriptors until
    :meth:`close` (or the end of a ``with`` block).
    """

    def __init__(self, root: Path, *, writing: bool) -> None:
        self.root = root
        self.writing = writing
        self._fds: dict[tuple[str, ...], int] = {}
        self._staged: list[tuple[int, str, str]] = []  # (directory, name, path)

    def __enter__(self) -> OutDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    # --- reading ---------------------------------------------------------------------------

    def read(self, path: str) -> bytes | None:
        """The content of the regular file at ``path``; ``None`` if nothing is there.

        Raises:
            OutputError: a symlink at ``path`` or on the way to it, something other than a
                regular file (a directory, a FIFO) at ``path``, or a file larger than
                :data:`MAX_READ_BYTES`.
        """
        *dirs, name = path.split("/")
        parent = self.dir(tuple(dirs))
        if parent is None:
            return None
        try:
            fd = os.open(name, _READ, dir_fd=parent)
        except FileNotFoundError:
            return None
        except OSError:
            self._explain_file(parent, path)
            raise
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise self._not_a_file(path)
            if info.st_size > MAX_READ_BYTES:
                raise self._too_large(path)
            data = file.read(MAX_READ_BYTES + 1)  # the file may have grown since the fstat
            if len(data) > MAX_READ_BYTES:
                raise self._too_large(path)
            return data

    def exists(self, path: str) -> bool:
        """Whether anything, a dangling symlink included, is at ``path``."""
        *dirs, name = path.split("/")
        parent = self.dir(tuple(dirs))
        return parent is not None and _lstat(parent, name) is not None

    def check_writable(self, path: str) -> None:
        """Refuse now, before anything is written, what :meth:`stage` and :meth:`commit` of
        ``path`` would refuse: a symlink on the way, at ``path`` or at its temporary name.

        A regular file at the temporary name is a leftover of a crashed run; it is fine.
        """
        *dirs, name = path.split("/")
        parent = self.dir(tuple(dirs))
        if parent is None:
            return
        for entry, kind in ((name, "file"), (temp_name(name), "temp")):
            mode = _lstat(parent, entry)
            if mode is None or stat.S_ISREG(mode):
                continue
            shown = self._show("/".join([*dirs, entry]))
            if stat.S_ISLNK(mode):
                raise _symlink(shown, writing=True)
            if kind == "file":
                raise OutputError(f"refusing to replace {shown}: it is not a regular file")
            raise OutputError(f"{shown} is in the way: vlagen stages files under that name")

    # --- writing ---------------------------------------------------------------------------

    def stage(self, path: str, content: bytes, *, executable: bool, made: list[Path]) -> None:
        """Write ``content`` to ``path``'s temporary name, creating missing directories (each
        appended to ``made``). A leftover regular file there is replaced; anything else there,
        even if it appeared after :meth:`check_writable`, is refused and nothing is followed.

        If this or a later stage fails, :meth:`discard` removes what was staged.
        """
        *dirs, name = path.split("/")
        parent = self.dir(tuple(dirs), made=made)
        assert parent is not None
        tmp = temp_name(name)
        mode = _lstat(parent, tmp)
        if mode is not None and stat.S_ISREG(mode):
            os.unlink(tmp, dir_fd=parent)  # a crashed run's leftover; unlink follows nothing
        try:
            fd = os.open(tmp, _CREATE, 0o600, dir_fd=parent)
        except FileExistsError:
            self.check_writable(path)  # names the symlink, or what else is in the way
            raise
        except OSError as exc:
            raise self._cannot_write(path, exc) from None
        self._staged.append((parent, name, path))
        try:
            os.fchmod(fd, 0o755 if executable else 0o644)
            write_all(fd, content)
        except OSError as exc:
            raise self._cannot_write(path, exc) from None
        finally:
            os.close(fd)

    def create(self, files: dict[str, bytes], *, replace: bool) -> None:
        """Write ``files`` (a name directly in the root, which must exist, -> content): all of
        them or, if any fails, none.

        Without ``replace`` each is created exclusively (``O_EXCL``): anything at a name, a
        symlink (even dangling) included, fails the whole write with :class:`ConflictError`
        (:class:`OutputError` for a symlink) and the files created so far are removed. With
        ``replace`` each is staged under its temporary name and renamed into place, which
        replaces what is there without following it.
        """
        parent = self.dir(())
        if parent is None:
            raise FileNotFoundError(2, "No such directory", str(self.root))
        if replace:
            try:
                for name, content in files.items():
                    self.stage(name, content, executable=False, made=[])
                self.commit()
            finally:
                self.discard()
            return
        created: list[str] = []
        try:
            for name, content in files.items():
                try:
                    fd = os.open(name, _CREATE, 0o600, dir_fd=parent)
                except FileExistsError:
                    self.check_writable(name)  # a symlink or a non-file: named as such
                    raise ConflictError(
                        f"{self._show(name)} exists; use --force to overwrite it"
                    ) from None
                created.append(name)
                try:
                    os.fchmod(fd, 0o644)
                    write_all(fd, content)
                finally:
                    os.close(fd)
        except BaseException:
            for name in created:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=parent)
            raise

    def discard(self) -> None:
        """Remove every temporary file :meth:`stage` made and :meth:`commit` did not rename."""
        while self._staged:
            parent, name, _ = self._staged.pop()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name(name), dir_fd=parent)

    def commit(self) -> None:
        """Rename every staged file into place, in the order staged. ``rename`` replaces a link
        that appeared at a destination since the check; it never writes through one."""
        for done, (parent, name, path) in enumerate(self._staged):
            try:
                os.replace(temp_name(name), name, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError as exc:
                del self._staged[:done]  # in place: not discarded
                raise self._cannot_write(path, exc, written=done) from None
        self._staged.clear()

    def delete(self, path: str) -> None:
        """Remove ``path`` and then each directory on the way that it leaves empty."""
        parts = path.split("/")
        parent = self.dir(tuple(parts[:-1]))
        if parent is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(parts[-1], dir_fd=parent)
        self.prune(tuple(parts[:-1]))

    def prune(self, dirs: tuple[str, ...]) -> None:
        """Remove ``dirs`` (a directory below the root) and its ancestors while empty."""
        while dirs:
            above = self.dir(dirs[:-1])
            if above is None:
                return
            try:
                os.rmdir(dirs[-1], dir_fd=above)
            except OSError:
                return
            fd = self._fds.pop(dirs, None)
            if fd is not None:
                os.close(fd)
            dirs = dirs[:-1]

    # --- directories -----------------------------------------------------------------------

    def dir(self, parts: tuple[str, ...], *, made: list[Path] | None = None) -> int | None:
        """A descriptor of the directory ``root/parts``, opened without following a symlink
        below the root; ``None`` if it (or a directory on the way) does not exist, unless
        ``made`` is given: then missing directories are created and appended to it."""
        if parts in self._fds:
            return self._fds[parts]
        if not parts:
            fd = self._open_root()
        else:
            parent = self.dir(parts[:-1], made=made)
            if parent is None:
                return None
            fd = self._open_dir(parent, parts, made)
        if fd is not None:
            self._fds[parts] = fd
        return fd

    def _open_root(self) -> int | None:
        try:
            return os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise OutputError(f"{self.root} is not a directory") from None

    def _open_dir(self, parent: int, parts: tuple[str, ...], made: list[Path] | None) -> int | None:
        name = parts[-1]
        try:
            return os.open(name, _DIR, dir_fd=parent)
        except FileNotFoundError:
            if made is None:
                return None
        except OSError:
            self._explain_dir(parent, parts)
            raise
        os.mkdir(name, 0o777, dir_fd=parent)
        made.append(self.root.joinpath(*parts))
        try:
            # A link swapped in since the mkdir fails here (O_NOFOLLOW): refused, not followed.
            return os.open(name, _DIR, dir_fd=parent)
        except OSError:
            self._explain_dir(parent, parts)
            raise

    # --- refusals --------------------------------------------------------------------------

    def _cannot_write(self, path: str, exc: OSError, *, written: int = 0) -> OutputError:
        """``path`` could not be written (``exc``), after ``written`` files of this batch
        were renamed into place: what happened, and what to do."""
        why = f"cannot write {self._show(path)}: {exc.strerror or exc}"
        if not written:
            return OutputError(f"{why}; once it can be, run the same command again")
        return OutputError(
            f"{why}; {written} file{'s' * (written != 1)} before it were written, so the "
            "output is partly updated: once the file can be written, run the same command "
            "again to finish it"
        )

    def _show(self, path: str) -> Path:
        return self.root / path

    def _explain_dir(self, parent: int, parts: tuple[str, ...]) -> None:
        mode = _lstat(parent, parts[-1])
        shown = self._show("/".join(parts))
        if mode is not None and stat.S_ISLNK(mode):
            raise _symlink(shown, writing=self.writing) from None
        if mode is not None and not stat.S_ISDIR(mode):
            raise OutputError(f"{shown} is in the way: vlagen needs a directory there") from None

    def _explain_file(self, parent: int, path: str) -> None:
        mode = _lstat(parent, path.rsplit("/", 1)[-1])
        if mode is not None and stat.S_ISLNK(mode):
            raise _symlink(self._show(path), writing=self.writing) from None
        if mode is not None and not stat.S_ISREG(mode):
            raise self._not_a_file(path) from None

    def _too_large(self, path: str) -> OutputError:
        return OutputError(
            f"{self._show(path)} is larger than {MAX_READ_BYTES:,} bytes (64 MiB), far more "
            "than any file vlagen writes; move it out of the output directory"
        )

    def _not_a_file(self, path: str) -> OutputError:
        shown = self._show(path)
        if self.writing:
            return OutputError(f"refusing to replace {shown}: it is not a regular file")
        return OutputError(f"cannot compare {shown}: it is not a regular file")


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _lstat(parent: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _symlink(path: Path, *, writing: bool) -> OutputError:
    if writing:
        return OutputError(f"refusing to write through the symlink {path}")
    return OutputError(f"cannot compare through the symlink {path}")
