"""The env pool's signal table on the real highway simulator: ``python tests/pool_signals.py``.

Runs the highway golden's pool (2 workers, 4 envs, 2 s step deadline, 5 s grace), signals a
worker (or the process group, as a terminal's Ctrl-C does, or kills a parent process running
a pool), and prints one Markdown row per case: time to the error, workers left alive, and
/dev/shm entries left. Needs Linux and highway-env (the suite's test extra installs it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "generated_examples" / "highway_openvla" / "src"
sys.path.insert(0, str(SRC))

import numpy as np  # noqa: E402
from highway_openvla.env import load_backend  # noqa: E402
from highway_openvla.env.vector import BackendError, SubprocessVector  # noqa: E402

PARENT = """\
import numpy as np
from highway_openvla.env import load_backend
from highway_openvla.env.vector import SubprocessVector

if __name__ == "__main__":
    vector = SubprocessVector(load_backend("gymnasium").make, 4, 2)
    print(*vector.pids, flush=True)
    vector.reset(np.arange(4), [(i, 0, 0) for i in range(4)])
    controls = np.zeros((4, *np.shape(vector.control_low)), np.float32)
    while True:
        vector.step(controls, np.ones(4, bool))
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _row(what: str, took: str, orphans: int, shm: str, result: str) -> None:
    print(f"| {what} | {took} | {orphans} | {shm} | {result} |", flush=True)


def signal_a_worker(sig: signal.Signals) -> None:
    before = set(os.listdir("/dev/shm"))
    vector = SubprocessVector(load_backend("gymnasium").make, 4, 2, step_timeout=2.0, grace=5.0)
    vector.reset(np.arange(4), [(i, 0, 0) for i in range(4)])
    controls = np.zeros((4, *np.shape(vector.control_low)), np.float32), np.ones(4, bool)
    for _ in range(3):
        vector.step(*controls)
    pids, start, steps = vector.pids, time.monotonic(), 0
    try:
        if sig is signal.SIGINT:
            os.killpg(os.getpgrp(), sig)
        else:
            os.kill(pids[1], sig)
        while time.monotonic() - start < 20:
            vector.step(*controls)
            steps += 1
        result = f"no error in 20 s ({steps} steps)"
    except BackendError as exc:
        result = f"BackendError: {exc}"
    except KeyboardInterrupt:
        result = "KeyboardInterrupt"
    took = time.monotonic() - start
    vector.close()
    time.sleep(0.5)
    left = len(set(os.listdir("/dev/shm")) - before)
    target = "the process group" if sig is signal.SIGINT else "worker 1"
    orphans = sum(_alive(pid) for pid in pids)
    _row(f"{sig.name} to {target}", f"{took:.2f} s", orphans, str(left), result)


def kill_the_parent() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env
    )
    pids = [int(pid) for pid in parent.stdout.readline().split()]
    time.sleep(2)
    start = time.monotonic()
    parent.kill()
    parent.wait()
    while any(_alive(pid) for pid in pids) and time.monotonic() - start < 20:
        time.sleep(0.02)
    took = f"workers gone after {time.monotonic() - start:.2f} s"
    _row("SIGKILL of the parent, mid-step", took, sum(_alive(p) for p in pids), "-", "-")


if __name__ == "__main__":
    with contextlib.suppress(PermissionError):  # already leads its session
        os.setpgrp()  # the SIGINT case signals this process group only
    print("| signal | time to error | orphans | /dev/shm left | result |")
    print("|---|---|---|---|---|")
    for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM, signal.SIGINT):
        signal_a_worker(sig)
    kill_the_parent()
