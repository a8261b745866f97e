"""A Python that has imported torch and transformers once, and runs each command given to it
in a fork of itself: the README-commands test runs some sixty ``python -m ...`` commands, and
a fresh interpreter spends most of each one's time importing those two (5-8 s of CPU).

``python preloaded.py SOCKET MODULE...`` imports the modules (:data:`PRELOAD`), prints
``ready`` and serves on the Unix socket ``SOCKET``. The client (:func:`shim` writes it as an
executable named ``python``, to put first on ``PATH``) sends its argument vector, working
folder, environment and standard streams (their file descriptors); the server forks, and the
child becomes that command as ``python`` would start it: the environment and folder,
``sys.path`` from the folder and ``PYTHONPATH``, ``-m`` run by ``runpy`` as ``python -m``
does, ``-c`` compiled from ``<string>``, and a normal interpreter exit (threads joined,
``atexit``, exit code, an uncaught exception printed). The client forwards SIGINT and
SIGTERM to the child and exits with its code, or by its signal.

Where the client's start-up variables (:func:`startup`: ``PYTHON*`` but the path,
thread counts, ``TMPDIR``, Hugging Face's) differ from the server's, or the form is not ``-m``
or ``-c``, the client runs the real interpreter instead. A client killed takes its command
with it. What a fork cannot show: an import the command forgot that a preloaded module made
(``torch.nn`` used after ``import torch`` alone is there either way), paths the preloaded
modules derived from ``HOME`` on import (the README's commands keep nothing there), and the
preloaded modules' own import warnings, which go to the server's stderr, which the caller
checks (:meth:`Preloaded.close` returns it)."""

from __future__ import annotations

import builtins
import contextlib
import gc
import inspect
import json
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import types
from pathlib import Path

#: Imported once by the server, before any command: what every package command imports and
#: most of its start-up time (torch, and transformers' model code that imports torch's), and
#: RLinf's config (Hydra, Ray), which most examples' parity runs import.
PRELOAD = ("numpy", "torch", "transformers", "transformers.modeling_utils", "rlinf.config")


def startup(env: dict[str, str]) -> dict[str, str]:
    """The variables a command's interpreter reads at start-up or the preloaded modules read
    on import (a fork would keep the server's): where the client's differ from the server's,
    it runs the real interpreter instead (as for any form but ``-m`` and ``-c``). Its source
    is the client's too."""
    return {
        k: v
        for k, v in env.items()
        if (
            k.startswith(("PYTHON", "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "TORCH"))
            and k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
        )
        or k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TMPDIR")
    }


CLIENT = """\
import json, os, signal, socket, sys
{startup}
FORWARD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
if sys.argv[1:2] not in (["-m"], ["-c"]) or startup(os.environ) != {server_startup!r}:
    os.execv({python!r}, [{python!r}, *sys.argv[1:]])
signal.pthread_sigmask(signal.SIG_BLOCK, FORWARD)  # until they can be passed on
conn = socket.socket(socket.AF_UNIX)
conn.connect({socket!r})
request = {{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}
socket.send_fds(conn, [json.dumps(request).encode() + b"\\n"], [0, 1, 2])
# Reads time out every 50 ms: a Python signal handler runs between bytecodes, and one whose
# signal lands just before a blocking read would wait for that read to end.
conn.settimeout(0.05)
received = b""


def message():
    global received
    while b"\\n" not in received:
        try:
            more = conn.recv(1 << 16)
        except TimeoutError:
            continue
        if not more:
            return None
        received += more
    line, received = received.split(b"\\n", 1)
    return json.loads(line)


pid = message()["pid"]
for number in FORWARD:
    signal.signal(number, lambda n, _frame: os.kill(pid, n))
signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARD)
answer = message()
code = answer["exit"] if answer else 1
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


class Preloaded:
    """The server, started by the constructor; :meth:`close` stops it."""

    def __init__(
        self, folder: Path, env: dict[str, str], modules: tuple[str, ...] = PRELOAD
    ) -> None:
        self.folder = folder
        self.env = env
        self.socket = folder / "preloaded.sock"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(self.socket), *modules],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if line != "ready\n":
            raise RuntimeError(f"the preloaded Python did not start: {self.close()}")

    def shim(self) -> Path:
        """A folder holding ``python``, the client: first on ``PATH``, it runs each
        ``python`` command in a fork of the server."""
        bin_ = self.folder / "bin"
        bin_.mkdir(exist_ok=True)
        client = bin_ / "python"
        # -E -S: the client imports nothing of site-packages and reads no PYTHON* variable
        code = CLIENT.format(
            startup=inspect.getsource(startup),
            server_startup=startup(self.env),
            python=sys.executable,
            socket=str(self.socket),
        )
        client.write_text(f"#!{sys.executable} -ES\n{code}")
        client.chmod(0o755)
        return bin_

    def close(self) -> str:
        """Stop the server; its stderr."""
        if self.proc.poll() is None:
            self.proc.terminate()
        _, err = self.proc.communicate(timeout=60)
        return err


def serve(path: str, modules: list[str]) -> dict:
    """Import ``modules``, then serve on ``path`` until SIGTERM (then exit); return, in a
    forked child only, the request it is to run, its streams already in place."""
    for name in modules:
        __import__(name)
    # Frozen: no child's garbage collection walks what every child shares (some 1 s a
    # collection over torch and transformers), nor writes to its pages.
    gc.freeze()
    server = os.getpid()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)
    waiting: dict[int, socket.socket] = {}  # child pid -> its client's connection
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    try:
        while True:
            for key, _ in selector.select(timeout=0.05):
                if key.fileobj is not listener:  # a client sends nothing more: it is gone
                    os.kill(key.data, signal.SIGKILL)  # so its command goes too
                    selector.unregister(key.fileobj)
                    continue
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError):  # a client gone before its request
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    listener.close()
                    conn.close()
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    for target, fd in enumerate(fds):
                        os.dup2(fd, target)
                        os.close(fd)
                    return request
                for fd in fds:
                    os.close(fd)
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                waiting[pid] = conn
                selector.register(conn, selectors.EVENT_READ, pid)
            _reap(waiting, selector)
    finally:
        if os.getpid() == server:
            for pid in waiting:
                os.kill(pid, signal.SIGKILL)
            os.unlink(path)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            break
        data += more
    return json.loads(data), fds


def _reap(waiting: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(KeyError):  # unless its client went first
                selector.unregister(conn)
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):  # the client is gone
                conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
            conn.close()


def become(request: dict) -> None:
    """Turn this child into ``python ARGV`` in the request's folder and environment."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    argv = request["argv"]
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if len(argv) < 2 or argv[0] not in ("-m", "-c"):
        sys.exit(f"preloaded python: only -m MODULE and -c CODE run here, not {argv}")
    first = os.getcwd() if argv[0] == "-m" else ""
    sys.path[:] = [first, *extra, *sys.path[1:]]
    main = sys.modules["__main__"] = types.ModuleType("__main__")  # a fresh one, not ours
    main.__builtins__ = builtins
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy._run_module_as_main(argv[1])  # what ``python -m`` runs, in the new __main__
    else:
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), main.__dict__)


if __name__ == "__main__":
    become(serve(sys.argv[1], sys.argv[2:]))
