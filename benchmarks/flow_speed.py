"""What a flow policy's acting costs beyond its network's forwards, in one run.

Run it from the repository root in the dev venv (``pip install -e '.[test]'``)::

    python benchmarks/flow_speed.py [--family pi05] [--rounds 7] [--batches 1 64] [--json out.json]

A flow family's policy core (π0 or π0.5 on LIBERO's shapes, rendered as ``vlagen`` generates
it) on its tiny random checkpoint, at each batch size, interleaved round by round:

- **raw**: the network work acting cannot avoid, on inputs already prepared: one prefix
  forward into the key/value cache, then ``STEPS`` action-expert forwards over it;
- **sample**: ``Policy.act_on`` on the same inputs: the same forwards plus the sampler (noise,
  each step's mean and std, the stochastic step's draw and log-density, the chain kept),
  decoding and un-normalization;
- **act**: ``Policy.act`` from canonical observations (uint8 frames, task strings), images
  and prompts prepared too.

It prints median milliseconds and ``sample / raw`` (goal: at most 1.1, i.e. acting is one
prefix forward plus N expert forwards, never N prefix forwards) and ``act / raw``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def _timed(call) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _measure(policy, core, batch: int, rounds: int) -> dict[str, float]:
    """Median milliseconds of raw, sample and act at ``batch``, and their ratios."""
    rng = np.random.default_rng(0)
    obs = {
        "agentview": rng.integers(0, 255, (batch, 256, 256, 3), dtype=np.uint8),
        "wrist": rng.integers(0, 255, (batch, 256, 256, 3), dtype=np.uint8),
        "state": rng.standard_normal((batch, 8)).astype(np.float32),
        "task": ["pick up the black bowl and place it on the plate"] * batch,
    }
    inputs = policy.prepare(obs)
    noise = torch.randn(batch, core.HORIZON, core.ACTION_DIM)

    @torch.no_grad()
    def raw() -> None:
        _, cache = policy._prefix(inputs)
        x = noise
        for step in range(core.STEPS):
            t = torch.full((batch,), 1 - step / core.STEPS)
            v, _ = policy.network.velocity(cache, inputs.state, x, t)
            x = x - v / core.STEPS

    runs = {"raw": raw, "sample": lambda: policy.act_on(inputs), "act": lambda: policy.act(obs)}
    times: dict[str, list[float]] = {key: [] for key in runs}
    for run in runs.values():  # warm-up, not counted
        run()
    for _ in range(rounds):
        for key, run in runs.items():
            times[key].append(_timed(run))
    row = {key: statistics.median(values) for key, values in times.items()}
    row["sample/raw"] = row["sample"] / row["raw"]
    row["act/raw"] = row["act"] / row["raw"]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", choices=("pi0", "pi05"), default="pi05")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from test_flow_core import flow_spec, render_core

    torch.set_num_threads(1)
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = render_core(flow_spec(args.family), Path(scratch) / "pkg")
        sys.path.insert(0, str(root / "src"))
        name = f"libero_{args.family}"
        model = importlib.import_module(f"{name}.model")
        core = importlib.import_module(f"{name}.model.policy")
        policy = model.Policy.load(model.build_tiny(Path(scratch) / "tiny"), device="cpu").eval()
        for batch in args.batches:
            row = _measure(policy, core, batch, args.rounds)
            results[batch] = row
            print(
                f"{args.family} batch {batch:3d}: raw {row['raw']:8.2f} ms  "
                f"sample {row['sample']:8.2f} ms  act {row['act']:8.2f} ms  "
                f"sample/raw {row['sample/raw']:.3f}  act/raw {row['act/raw']:.3f}"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
