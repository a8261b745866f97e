"""The preloaded Python (``preloaded.py``) runs a command as ``python`` would: its argument
vector, folder, environment, streams and ``sys.path``, its exit code, an uncaught exception,
a signal sent to the client."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from preloaded import Preloaded


@pytest.fixture
def python(tmp_path: Path) -> Iterator[Path]:
    server = Preloaded(tmp_path, dict(os.environ), modules=("json",))
    try:
        yield server.shim() / "python"
    finally:
        assert "Traceback" not in server.close()


def run(python: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, **env}
    return subprocess.run(
        [str(python), *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=60
    )


def test_a_module_runs_as_main_with_its_arguments_folder_and_environment(
    python: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "lib").mkdir(parents=True)
    (work / "lib" / "tool.py").write_text(
        "import os, sys\n"
        "if __name__ == '__main__':\n"
        "    print(sys.argv[1:], os.getcwd(), os.environ['GREETING'], sys.path[0])\n"
        "    print('to stderr', file=sys.stderr)\n"
        "    sys.exit(3)\n"
    )
    done = run(
        python, "-m", "tool", "a b", "c", cwd=work, PYTHONPATH=str(work / "lib"), GREETING="hi"
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == f"['a b', 'c'] {work} hi {work}\n"
    assert done.stderr == "to stderr\n"


def test_code_runs_in_a_fresh_main_and_an_exception_prints_and_exits_1(
    python: Path, tmp_path: Path
) -> None:
    done = run(
        python, "-c", "print(sorted(k for k in globals() if not k.startswith('__')))", cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (0, "[]\n")
    done = run(python, "-c", "raise ValueError('boom')", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.rstrip().endswith("ValueError: boom") and "Traceback" in done.stderr
    done = run(python, "-c", "import sys; sys.exit('why')", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "why\n")


def test_a_signal_to_the_client_reaches_the_command(python: Path, tmp_path: Path) -> None:
    # The commands wait in short sleeps: a Python handler runs between bytecodes, and a
    # signal landing just before one long sleep would wait for its end, in any interpreter.
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))\n"
        "print('waiting', flush=True)\n"
        "while True:\n"
        "    time.sleep(0.05)\n"
    )
    with subprocess.Popen(
        [str(python), "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout.readline() == "waiting\n"
        proc.terminate()
        assert proc.wait(timeout=30) == 7
    code = "import time\nprint('waiting', flush=True)\nwhile True:\n    time.sleep(0.05)\n"
    with subprocess.Popen(
        [str(python), "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout.readline() == "waiting\n"
        proc.send_signal(signal.SIGINT)  # Python's KeyboardInterrupt: it ends by SIGINT
        try:
            assert proc.wait(timeout=30) == -signal.SIGINT
        finally:
            proc.kill()


def test_a_killed_client_takes_its_command_with_it(python: Path, tmp_path: Path) -> None:
    code = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n"
    with subprocess.Popen(
        [str(python), "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    ) as proc:
        pid = int(proc.stdout.readline())
        proc.kill()
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"the command {pid} outlived its client")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][:1]
    except OSError:
        return "Z"


def test_a_start_up_variable_the_fork_cannot_honour_runs_the_real_interpreter(
    python: Path, tmp_path: Path
) -> None:
    code = "import os, warnings\nprint(os.getppid())\nwarnings.warn('x')\n"
    done = run(python, "-c", code, cwd=tmp_path, PYTHONWARNINGS="error")
    assert done.returncode == 1 and "UserWarning: x" in done.stderr
    done = run(python, "-c", "import sys; print(sys.flags.optimize)", "-O", cwd=tmp_path)
    assert done.stdout == "0\n"  # -c's arguments are the code's, not the interpreter's
