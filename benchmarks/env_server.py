"""Speed of the env server against the local env core, side by side, in one run.

Run it from the repository root in the dev venv (``pip install -e '.[test]'`` brings
highway-env and pyzmq)::

    python benchmarks/env_server.py [--rounds 8] [--steps 200] [--num-envs 4] [--workers 2]
        [--backend gymnasium|synthetic] [--json results.json]

It steps the committed highway example's env core (``generated_examples/highway_openvla``)
four ways, the same ``--num-envs`` envs, seeds and actions each way, so every side simulates
the same traffic:

1. **in-process**: ``make_env(workers=0)``;
2. **local pool**: ``make_env(workers=W)``, the baseline (images in shared memory);
3. **server, Unix socket**: ``python -m highway_openvla.env.serve`` in a process of its own,
   the client asking it for the same envs in ``W`` workers;
4. **server, loopback TCP**: the same over ``tcp://127.0.0.1`` (with the token the server
   makes, which the client finds).

Runs are interleaved (one of each per round, ``--rounds`` rounds, the order rotated every
round) so that machine load falls on all sides alike. Each line reports the median env steps
per second (one env step = one simulator step of one env), its ratio to the local pool
(goal: the servers at least 0.9x), and the time a batch step takes more than the pool's, in
microseconds (a GPU training loop leaves an adapter well under 1 ms per step). It runs in a
temporary folder and writes nothing but ``--json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
HIGHWAY = REPO / "generated_examples" / "highway_openvla"


def _serve(address: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(HIGHWAY / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "highway_openvla.env.serve", "--bind", address],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    if not line.startswith("serving "):
        raise SystemExit(f"the server did not start: {line}")
    return proc, line.split()[1]


def _run(make: Callable[[], object], steps: int, num_envs: int, seed: int) -> tuple[float, int]:
    """Seconds for ``steps`` batch steps of a fresh env (built and reset outside the timing),
    and the simulator steps they took."""
    env = make()
    try:
        spec = importlib.import_module("highway_openvla.spec").SPEC
        shape = (num_envs, spec.model.action.chunk, spec.model.action.dim)
        rng = np.random.default_rng(seed)
        actions = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(steps)]
        env.reset(seed=seed)
        start = time.perf_counter()
        for action in actions:
            env.step(action)
        return time.perf_counter() - start, steps * num_envs * spec.model.action.chunk
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200, help="batch steps per run")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--backend", default="gymnasium", help="gymnasium (highway-env) or synthetic"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(HIGHWAY / "src"))
    make_env = importlib.import_module("highway_openvla.env").make_env
    with tempfile.TemporaryDirectory(prefix="env-server-bench-") as scratch:
        os.chdir(scratch)
        # The loopback TCP server makes a token and writes it where this process's client
        # finds it: the scratch folder, not the user's runtime folder.
        os.environ["XDG_RUNTIME_DIR"] = scratch
        unix, unix_address = _serve(f"unix://{scratch}/env.sock")
        tcp, tcp_address = _serve("tcp://127.0.0.1:0")
        try:
            common = {"backend": args.backend, "num_envs": args.num_envs, "video": False}
            sides = {
                "in-process": lambda: make_env(**common, workers=0),
                "local pool": lambda: make_env(**common, workers=args.workers),
                "server, Unix socket": lambda: make_env(
                    **common, workers=args.workers, remote=unix_address
                ),
                "server, loopback TCP": lambda: make_env(
                    **common, workers=args.workers, remote=tcp_address
                ),
            }
            names = list(sides)
            seconds: dict[str, list[float]] = {name: [] for name in names}
            sim_steps = 0
            for k in range(args.rounds):
                order = names[k % len(names) :] + names[: k % len(names)]
                for name in order:
                    took, sim_steps = _run(sides[name], args.steps, args.num_envs, seed=k)
                    seconds[name].append(took)
        finally:
            for proc in (unix, tcp):
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
    median = {name: statistics.median(t) for name, t in seconds.items()}
    base = median["local pool"]
    print(
        f"env server vs local pool: highway_openvla, backend {args.backend}, {args.num_envs} envs, "
        f"{args.workers} workers, {args.steps} batch steps x {args.rounds} rounds (medians)"
    )
    results = {}
    for name in names:
        rate = sim_steps / median[name]
        extra_us = (median[name] - base) / args.steps * 1e6
        results[name] = {
            "steps_per_s": rate,
            "ratio": base / median[name],
            "extra_us_per_step": extra_us,
        }
        print(
            f"  {name:<22} {rate:>9.0f} env steps/s  {base / median[name]:>5.2f}x the pool  "
            f"{extra_us:>+8.0f} us per batch step"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
