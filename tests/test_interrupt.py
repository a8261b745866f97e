"""Ctrl-C: vlagen exits 130 (not 1, which `check` means as "stale"), and a `vlagen new` stopped
midway leaves nothing a retry refuses as a directory vlagen did not make."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import MINIMAL_SPEC
from vlagen import api, outdir
from vlagen.cli import SIGINT_STATUS, main


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _interrupt_at(monkeypatch, owner: object, name: str, call: int) -> None:
    """Raise KeyboardInterrupt in place of the ``call``-th call of ``owner.name``."""
    real = getattr(owner, name)
    calls = [0]

    def interrupted(*args, **kwargs):
        calls[0] += 1
        if calls[0] == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, interrupted)


#: Points of `new` a Ctrl-C may land on: generating, staging the first and a later file,
#: renaming the files into place (the first, a later one), and writing the manifest last.
POINTS = [
    (api, "generate", 1),
    (outdir.OutDir, "stage", 1),
    (outdir.OutDir, "stage", 40),
    (os, "replace", 1),
    (os, "replace", 30),
    (outdir.OutDir, "commit", 2),
]


@pytest.mark.parametrize(("owner", "name", "call"), POINTS, ids=[f"{n}-{c}" for _, n, c in POINTS])
def test_new_interrupted_anywhere_exits_130_and_a_retry_finishes_it(
    runner, spec_file, tmp_path, monkeypatch, owner, name, call
) -> None:
    spec = spec_file()
    clean = tmp_path / "clean"
    assert runner.invoke(main, ["new", str(spec), "-o", str(clean)]).exit_code == 0
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        _interrupt_at(patch, owner, name, call)
        stopped = runner.invoke(main, ["new", str(spec), "-o", str(out)])
    assert stopped.exit_code == SIGINT_STATUS == 130, stopped.output
    assert stopped.output.endswith("vlagen: interrupted\n") and "Aborted" not in stopped.output
    retry = runner.invoke(main, ["new", str(spec), "-o", str(out)])
    assert retry.exit_code == 0, retry.output
    assert _files(out) == _files(clean)
    assert runner.invoke(main, ["check", str(spec), "-o", str(out)]).exit_code == 0


def test_only_what_this_output_would_write_counts_as_left_by_new(runner, spec_file, tmp_path):
    """Empty folders, staged files and files with this output's bytes are a stopped `new`'s;
    a file of other content, or one at a path it does not write, is still refused."""
    spec = spec_file()
    out = tmp_path / "out"
    (out / "src" / "tiny_vla").mkdir(parents=True)
    (out / "src" / ".vlagen-tmp").mkdir()
    (out / ".README.md.vlagen-tmp").write_bytes(b"half a READ")
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    assert not (out / ".README.md.vlagen-tmp").exists()
    for path, content in [("README.md", b"mine\n"), ("notes.txt", b"mine\n")]:
        other = tmp_path / path
        other.mkdir()
        (other / path).write_bytes(content)
        refused = runner.invoke(main, ["new", str(spec), "-o", str(other)])
        assert refused.exit_code == 1 and "vlagen did not make it" in refused.output
        assert _files(other) == {path: content}


def test_a_real_sigint_during_new_exits_130_quietly(spec_file, tmp_path) -> None:
    """A real SIGINT, through Python's handler, delivered as `new` renames its files."""
    spec = spec_file(MINIMAL_SPEC)
    script = textwrap.dedent(
        """
        import os, signal, sys
        from vlagen import outdir
        from vlagen.cli import main

        real = outdir.OutDir.commit

        def commit(self):
            os.kill(os.getpid(), signal.SIGINT)
            real(self)

        outdir.OutDir.commit = commit
        sys.argv = ["vlagen", "new", sys.argv[1], "-o", sys.argv[2]]
        main()
        """
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", script, str(spec), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (130, "\nvlagen: interrupted\n")
    retry = subprocess.run(
        [sys.executable, "-m", "vlagen", "new", str(spec), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert retry.returncode == 0, retry.stderr
