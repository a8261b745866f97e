"""Latency of the generated policy core on a GPU with a realistically sized random checkpoint.

Run it from the repository root on a machine with a CUDA device (torch, transformers and
tokenizers installed; nothing is downloaded)::

    python benchmarks/policy_gpu.py [--size 7b] [--batches 1 8 64] [--rounds 7] [--json out.json]

For each committed example with a token-based family — ``pusht_openvla_oft`` (openvla_oft,
parallel decoding of the whole chunk) and ``highway_openvla`` (openvla, autoregressive) — it
writes the example's tiny checkpoint (``build_tiny``: its tokenizer and processor config) and
replaces the model with a random one of OpenVLA-7B's shape: a Llama-2-7B language model
(hidden 4096, 32 layers, 32 heads of 128, MLP 11008) and a SigLIP-so400m-shaped vision tower
(hidden 1152, 27 layers, patch 14: 256 image tokens at 224x224), saved with
``save_pretrained``, so that ``Policy.load`` runs the real loading code in the spec's dtype
(bf16). ``--size tiny`` keeps the tiny model (a smoke run of this script on any device).

Per batch size, on the example's synthetic observations (uint8 frames, task strings), medians
over ``--rounds`` rounds after one warm-up, each timed between CUDA synchronizations:

- **act**: ``Policy.act`` from observations (input preparation, forward, sampling, decoding);
- **evaluate**: ``Policy.evaluate`` on the prepared inputs and chosen tokens under
  ``torch.no_grad`` (what a trainer's log-prob recompute runs; the update's backward pass is
  not timed: a 7B update needs the framework's sharding);
- **prepare**: ``Policy.prepare`` alone, and its share of ``act``;
- the peak GPU memory of the batch (``torch.cuda.max_memory_allocated``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = ("pusht_openvla_oft", "highway_openvla")

#: OpenVLA-7B's shape: Llama-2-7B, and a SigLIP-so400m-sized tower at patch 14.
SHAPES = {
    "7b": {
        "text": {
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 32,
            "head_dim": 128,
        },
        "vision": {
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "num_hidden_layers": 27,
            "num_attention_heads": 16,
            "patch_size": 14,
        },
    },
    "tiny": None,
}


def _package(name: str):
    sys.path.insert(0, str(REPO / "generated_examples" / name / "src"))
    return importlib.import_module(f"{name}.model"), importlib.import_module(f"{name}.env")


def checkpoint(model, folder: str, size: str, dtype: torch.dtype) -> str:
    """The example's tiny checkpoint in ``folder``, its weights replaced by a random model of
    ``size``'s shape, built on the GPU in ``dtype``."""
    from transformers import AutoConfig, LlavaForConditionalGeneration

    path = model.build_tiny(folder, seed=0)
    shape = SHAPES[size]
    if shape is None:
        return path
    config = AutoConfig.from_pretrained(path)
    for key, value in shape["text"].items():
        setattr(config.text_config, key, value)
    for key, value in shape["vision"].items():
        setattr(config.vision_config, key, value)
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda"):
            network = LlavaForConditionalGeneration(config)
    finally:
        torch.set_default_dtype(default)
    network.save_pretrained(path)
    del network
    torch.cuda.empty_cache()
    return path


def _timed(fn: Callable[..., object], *args: object) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn(*args)
    torch.cuda.synchronize()
    return 1000 * (time.perf_counter() - start)


def bench(name: str, size: str, batches: list[int], rounds: int) -> list[dict]:
    model, env_module = _package(name)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        dtype = getattr(torch, importlib.import_module(f"{name}.model.policy").DTYPE)
        path = checkpoint(model, scratch, size, dtype)
        built = time.perf_counter() - start
        start = time.perf_counter()
        policy = model.Policy.load(path, device="cuda").eval()
        loaded = time.perf_counter() - start
        params = sum(p.numel() for p in policy.parameters())
        print(
            f"{name}: {params / 1e9:.2f} B parameters in {policy.dtype}; built and saved in "
            f"{built:.0f} s, Policy.load in {loaded:.0f} s",
            flush=True,
        )
        for batch in batches:
            with env_module.make_env(backend="synthetic", num_envs=batch, video=False) as env:
                obs, _ = env.reset()
            torch.cuda.reset_peak_memory_stats()
            times: dict[str, list[float]] = {"act": [], "evaluate": [], "prepare": []}
            with torch.no_grad():
                out = policy.act(obs)  # warm-up
                policy.evaluate(out.inputs, out.action_tokens)
                for _ in range(rounds):
                    times["act"].append(_timed(policy.act, obs))
                    times["evaluate"].append(_timed(policy.evaluate, out.inputs, out.action_tokens))
                    times["prepare"].append(_timed(policy.prepare, obs))
            median = {k: statistics.median(v) for k, v in times.items()}
            peak = torch.cuda.max_memory_allocated() / 2**30
            rows.append(
                {
                    "example": name,
                    "size": size,
                    "parameters": params,
                    "dtype": str(policy.dtype),
                    "batch": batch,
                    **{f"{k}_ms": round(v, 2) for k, v in median.items()},
                    "prepare_share": round(median["prepare"] / median["act"], 4),
                    "peak_gib": round(peak, 2),
                    "device": torch.cuda.get_device_name(),
                }
            )
            print(
                f"  batch {batch:3d}: act {median['act']:8.2f} ms  evaluate "
                f"{median['evaluate']:8.2f} ms  prepare {median['prepare']:6.2f} ms "
                f"({100 * rows[-1]['prepare_share']:.1f} % of act)  peak {peak:.1f} GiB",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=sorted(SHAPES), default="7b")
    parser.add_argument("--examples", nargs="+", default=list(EXAMPLES), choices=EXAMPLES)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("policy_gpu: no CUDA device")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    rows = [row for n in args.examples for row in bench(n, args.size, args.batches, args.rounds)]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
