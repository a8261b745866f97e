"""Time the generated policy core spends on top of the raw model forward, in one run.

Run it from the repository root in the dev venv (``pip install -e '.[test]'``)::

    python benchmarks/policy_speed.py [--rounds 7] [--batches 1 8 64] [--json out.json]

For each committed example with a token-based family — ``highway_openvla`` (openvla,
autoregressive, 2 tokens) and ``pusht_openvla_oft`` (openvla_oft, parallel, 16 tokens) — on
its tiny random checkpoint, at each batch size, interleaved round by round:

- **raw**: the model work the core cannot avoid, on inputs already prepared on the device:
  the base model's forward over prompt + image tokens (+ placeholders for parallel
  decoding), then for autoregressive decoding one cached single-token forward per further
  token — what ``Policy.act`` runs inside;
- **hf**: the model's own HF forward (full-vocabulary logits) on the same inputs, for scale;
- **act**: ``Policy.act`` from canonical observations (uint8 frames, task strings): image
  resize and normalization, prompt lookup and padding, the forward, the action-token head,
  sampling, log-probs, decoding, un-normalization;
- **inputs**: ``Policy.prepare`` alone (images and prompts), the part of the overhead that
  grows with pixels.

It prints the median milliseconds of each and ``overhead = act / raw - 1``: the share of
preprocessing plus decoding. Goal: at most 10 %. The tiny model's forward is a few
milliseconds, so on a CPU the fixed cost of resizing and normalizing 224x224 frames weighs
far more against it than against a real checkpoint's forward.
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

import torch

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = ("highway_openvla", "pusht_openvla_oft")


def _package(name: str):
    sys.path.insert(0, str(REPO / "generated_examples" / name / "src"))
    return (
        importlib.import_module(f"{name}.model"),
        importlib.import_module(f"{name}.model.policy"),
        importlib.import_module(f"{name}.env"),
    )


def _raw(policy, policy_module, inputs) -> None:
    """The backbone forward(s) ``act`` runs, on prepared inputs."""
    tokens = policy_module.TOKENS
    feed = {
        "input_ids": inputs.input_ids,
        "attention_mask": inputs.attention_mask,
        "pixel_values": inputs.pixel_values,
    }
    if policy_module.DECODING == "autoregressive":
        _, past = policy.backbone.hidden(feed, cache=True)
        mask = inputs.attention_mask
        step = inputs.input_ids[:, -1:]
        for _ in range(tokens - 1):
            mask = torch.cat([mask, torch.ones_like(step)], dim=1)
            _, past = policy.backbone.hidden(
                {"input_ids": step, "attention_mask": mask}, past=past, cache=True
            )
        return
    tail = inputs.input_ids.new_full((inputs.input_ids.shape[0], tokens), policy.placeholder)
    feed["input_ids"] = torch.cat([inputs.input_ids, tail], dim=1)
    feed["attention_mask"] = torch.cat([inputs.attention_mask, torch.ones_like(tail)], dim=1)
    policy.backbone.hidden(feed)


def _hf(policy, inputs) -> None:
    policy.backbone.network(
        input_ids=inputs.input_ids,
        attention_mask=inputs.attention_mask,
        pixel_values=inputs.pixel_values,
    )


def _time(out: list[float], fn, *args) -> None:
    start = time.perf_counter()
    fn(*args)
    out.append(1000 * (time.perf_counter() - start))


def bench(name: str, batches: list[int], rounds: int) -> list[dict]:
    model, policy_module, env_module = _package(name)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        policy = model.Policy.load(model.build_tiny(scratch, seed=0), device="cpu").eval()
        for batch in batches:
            with env_module.make_env(backend="synthetic", num_envs=batch, video=False) as env:
                obs, _ = env.reset()
            with torch.no_grad():
                inputs = policy.prepare(obs)
                times: dict[str, list[float]] = {"raw": [], "hf": [], "prep": [], "act": []}
                policy.act(obs)  # warm-up
                _raw(policy, policy_module, inputs)
                for _ in range(rounds):
                    _time(times["raw"], _raw, policy, policy_module, inputs)
                    _time(times["hf"], _hf, policy, inputs)
                    _time(times["prep"], policy.prepare, obs)
                    _time(times["act"], policy.act, obs)
            median = {k: statistics.median(v) for k, v in times.items()}
            rows.append(
                {
                    "example": name,
                    "family": policy_module.FAMILY,
                    "batch": batch,
                    **{f"{k}_ms": round(v, 2) for k, v in median.items()},
                    "overhead": round(median["act"] / median["raw"] - 1, 4),
                    "inputs_share": round(median["prep"] / median["raw"], 4),
                }
            )
            print(
                f"{name:20s} batch {batch:3d}: raw {median['raw']:8.2f} ms  "
                f"hf {median['hf']:8.2f} ms  act {median['act']:8.2f} ms  "
                f"overhead {100 * rows[-1]['overhead']:+.1f} % "
                f"(inputs {median['prep']:.2f} ms = {100 * rows[-1]['inputs_share']:.0f} %)",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    rows = [row for name in EXAMPLES for row in bench(name, args.batches, args.rounds)]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
