"""Time the generated input preparation against siiRL's and RLinf's OpenVLA-OFT input paths.

Run it from the repository root in the dev venv, with the frameworks' wheels ``--no-deps``,
and what their Prismatic processor imports (timm as OpenVLA pins it, torchvision) in a folder
of its own: PyPI's torchvision beside the CPU torch breaks transformers' imports in the venv
(this script stands in for the part that fails, see ``_stub_torchvision``)::

    pip install --no-deps siirl==0.2.0 rlinf==0.3.0
    pip install --no-deps --target .venv/prismatic-deps timm==0.9.10 torchvision==0.28.0
    PYTHONPATH=.venv/prismatic-deps python benchmarks/inputs_speed.py \
        [--rounds 7] [--batches 1 8 64] [--fused] [--json out.json]

All three sides turn the same observation batch into model inputs (resize, normalize, prompt
tokens, padding): the ``agentview`` frames (uint8 ``[N, 256, 256, 3]``) and task strings of
the ``libero_openvla_oft`` example's synthetic backend, with its tiny checkpoint's tokenizer.
That example is the one the frameworks' OFT paths are built for: an OpenVLA-OFT LIBERO
checkpoint, LIBERO's 256x256 renders, siiRL and RLinf as targets (``pusht_openvla_oft``
targets verl and upsamples 96x96 frames).

- **ours**: ``Policy.prepare`` of the generated package (``model/inputs.py``).
- **siirl**: ``EmbodiedHFRollout.process_input`` of siiRL 0.2.0, its own source, over siiRL's
  ``PrismaticImageProcessor`` / ``PrismaticProcessor`` (one PIL image and one tokenizer call
  per env, then ``pad_sequence`` and a sort into left padding). siiRL's ``_obs_to_input``
  resizes 256 -> 224 with TensorFlow (a JPEG round trip, then lanczos3) before that; it is
  left out (TensorFlow is not installed, and a lossy JPEG cannot agree), so here the
  processor's own resize does the 256 -> 224 work that ours does.
- **rlinf**: the ``env_obs`` branch of RLinf 0.3.0's
  ``OpenVLAOFTForRLActionPrediction.predict_action_batch``, its own source, over RLinf's
  batched-tensor ``MultiInputPrismaticProcessor`` (torchvision's tensor resize, prompts padded
  to ``max_prompt_length``, 256 as in the example's RLinf config). A different code path from
  siiRL's, so reported on its own. RLinf's other OFT implementation (``implement_version:
  official``) runs siiRL's per-env PIL loop (the same processor file, the same appended
  ``29871`` and padding), so the siirl column stands for it.

Their processors are configured as the tiny checkpoint is (224x224, one mean/std triple of
0.5), with ``resize-naive`` and bilinear interpolation, the filter ours uses (real OFT
checkpoints say bicubic); ``--fused`` uses two triples (ImageNet and 0.5, the layout of
OpenVLA's fused DINOv2 + SigLIP backbone) on all sides. siiRL's ``center_crop`` is off (ours
does not crop). Timing is interleaved round by round (the order rotates), medians over
``--rounds`` (at least 5) after a warm-up call, on the CPU with float32 outputs.

Agreement is asserted on every batch size:

- pixels: at most one uint8 level apart after normalization, ``1 / (255 * std)`` (+1e-5),
  against both. All three resize with antialiased bilinear weights and round to uint8
  before normalizing, with different arithmetic: ours with torch's uint8 kernel and siiRL
  with PIL, both fixed point (torch's is ported from Pillow-SIMD), RLinf with torchvision's
  tensor path (float32 interpolation, then rounding). Ours and PIL agree on all but ~0.3 %
  of values; the float path rounds the exact value, from which both fixed-point kernels are
  one level off on ~21 % of values (of these frames), so RLinf differs from ours (and from
  PIL) there. The table gives the largest difference and the share of values off;
- ``input_ids``: the attended ids of each row equal, once ours drops its image placeholder
  tokens (siiRL and RLinf let the model insert the patches) and siiRL's row drops the
  ``29871`` it appends (Llama's prompt-final space).

Memory: the peak RSS of this process, and, per side in a subprocess of its own that imports
and builds only that side, the peak RSS while it prepares each batch size (``VmHWM``, reset
through ``/proc/self/clear_refs`` before each batch) and its growth over the RSS before.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import types
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = "libero_openvla_oft"
CAMERA = "agentview"
SIDES = ("ours", "siirl", "rlinf")
MAX_PROMPT_LENGTH = 256  # actor.model.max_prompt_length of the example's RLinf config
SPACE_ID = 29871  # siiRL appends it to every prompt (Llama's "▁", the "Out: " space)
FUSED = ([(0.485, 0.456, 0.406), (0.5, 0.5, 0.5)], [(0.229, 0.224, 0.225), (0.5, 0.5, 0.5)])


# -- their code, importable on a CPU without their full dependencies --------------------


def _stub_torchvision() -> None:
    """torchvision 0.28 from PyPI is built against the CUDA torch: its C ops (nms, roi_align)
    do not load beside the CPU torch, and ``import torchvision`` then fails registering fake
    kernels for them in this module, which transformers' imports hit too. The processors use
    only torchvision.transforms, which never calls those ops: the module is left empty. Must
    run before anything imports transformers."""
    sys.modules.setdefault(
        "torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations")
    )


def _stub_imports() -> None:
    """Stand-ins for what the Prismatic processors import but do not use here; each says why."""
    # transformers 5 no longer exports these from tokenization_utils; the Prismatic files
    # import them for type hints only.
    import transformers
    import transformers.tokenization_utils_base as base

    hints = types.ModuleType("transformers.tokenization_utils")
    for name in ("PaddingStrategy", "PreTokenizedInput", "TextInput", "TruncationStrategy"):
        setattr(hints, name, getattr(base, name))
    sys.modules["transformers.tokenization_utils"] = hints
    transformers.tokenization_utils = hints
    # RLinf subclasses prismatic.extern.hf.processing_prismatic from the openvla-oft repo,
    # which is not on PyPI; siiRL ships a copy of that file (RLinf uses its __init__s).
    prismatic = importlib.import_module("siirl.models.embodied.openvla_oft.processing_prismatic")
    for name in ("prismatic", "prismatic.extern", "prismatic.extern.hf"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["prismatic.extern.hf.processing_prismatic"] = prismatic


def _function(path: Path, cls: str, name: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    raise LookupError(f"{cls}.{name} not in {path}")


class _CpuTorch(types.ModuleType):
    """``torch`` for siiRL's ``process_input``, whose ``torch.device('cuda')`` is the only
    GPU-only thing on its path: the device is the CPU here, all else is torch."""

    def __getattr__(self, name: str):
        return getattr(torch, name)

    @staticmethod
    def device(_type: str) -> torch.device:
        return torch.device("cpu")


def _siirl_process_input():
    """``EmbodiedHFRollout.process_input`` compiled from siiRL's source: its module imports
    TensorFlow and LIBERO (and exits without LIBERO), none of which the method uses."""
    from PIL import Image
    from siirl.engine.rollout import __file__ as rollout_init
    from torch.nn.utils.rnn import pad_sequence

    path = Path(rollout_init).parent / "embodied_rollout.py"
    node = _function(path, "EmbodiedHFRollout", "process_input")

    def center_crop_image(image):  # TensorFlow's; center_crop is off here
        raise NotImplementedError

    scope = {
        "Image": Image,
        "torch": _CpuTorch("torch"),
        "pad_sequence": pad_sequence,
        "center_crop_image": center_crop_image,
    }
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), scope)
    return scope["process_input"]


def _rlinf_prepare():
    """The ``if env_obs is not None:`` branch of RLinf's ``predict_action_batch``, compiled
    from its source as a function of ``(self, env_obs)`` returning the three tensors."""
    from rlinf.models.embodiment.openvla_oft.rlinf import __file__ as init

    path = Path(init).parent / "openvla_oft_action_model.py"
    method = _function(path, "OpenVLAOFTForRLActionPrediction", "predict_action_batch")
    branch = next(
        node
        for node in method.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "env_obs is not None"
    )
    body = "\n".join(ast.unparse(statement) for statement in branch.body)
    source = (
        "def rlinf_prepare(self, env_obs):\n"
        + textwrap.indent(body, "    ")
        + "\n    return input_ids, attention_mask, pixel_values\n"
    )
    scope = {"torch": torch}
    exec(compile(source, f"{path} (predict_action_batch, env_obs branch)", "exec"), scope)
    return scope["rlinf_prepare"]


# -- the three sides --------------------------------------------------------------------


def _package():
    sys.path.insert(0, str(REPO / "generated_examples" / EXAMPLE / "src"))
    return (
        importlib.import_module(f"{EXAMPLE}.model"),
        importlib.import_module(f"{EXAMPLE}.model.inputs"),
        importlib.import_module(f"{EXAMPLE}.env"),
    )


def _statistics(fused: bool) -> tuple[list, list]:
    if fused:
        return FUSED
    return [(0.5, 0.5, 0.5)], [(0.5, 0.5, 0.5)]


def _image_processor(module, fused: bool, size: tuple[int, int]):
    means, stds = _statistics(fused)
    return module.PrismaticImageProcessor(
        use_fused_vision_backbone=fused,
        image_resize_strategy="resize-naive",
        input_sizes=[(3, *size)] * len(means),
        interpolations=["bilinear"] * len(means),
        means=means,
        stds=stds,
    )


def _sides(checkpoint: str, fused: bool, which=SIDES) -> dict:
    """``{side: prepare(obs) -> (input_ids, attention_mask, pixel_values)}`` for the sides
    asked for, each built as its framework builds it, plus the ids agreement needs."""
    from transformers import AutoTokenizer

    model, inputs, _ = _package()
    sides: dict = {}
    if "ours" in which:
        policy = model.Policy.load(checkpoint, device="cpu").eval()
        sides["image_id"] = policy.prompts.image_block[0] if policy.prompts.image_block else None
        if fused:
            means, stds = _statistics(fused)
            flat = [x for t in means for x in t], [x for t in stds for x in t]
            policy.images = inputs.ImagePreprocessor(*flat, policy.device, policy.dtype)

        def ours(obs):
            prepared = policy.prepare(obs)
            return prepared.input_ids, prepared.attention_mask, prepared.pixel_values

        sides["ours"] = ours
    if "siirl" in which or "rlinf" in which:
        _stub_imports()
        tokenizer = AutoTokenizer.from_pretrained(checkpoint, padding_side="left")
    if "siirl" in which:
        siirl = importlib.import_module("siirl.models.embodied.openvla_oft.processing_prismatic")
        rollout = types.SimpleNamespace(
            config=types.SimpleNamespace(
                embodied=types.SimpleNamespace(center_crop=False, embodied_type="openvla-oft")
            ),
            processor=siirl.PrismaticProcessor(
                _image_processor(siirl, fused, inputs.IMAGE_SIZE), tokenizer
            ),
        )
        process_input = _siirl_process_input()

        def siirl_side(obs):
            envs = [{"full_image": frame} for frame in obs[CAMERA]]  # _obs_to_input's dicts
            batch = process_input(rollout, envs, list(obs["task"]))
            return batch["input_ids"], batch["attention_mask"], batch["pixel_values"]

        sides["siirl"] = siirl_side
    if "rlinf" in which:
        rlinf = importlib.import_module("rlinf.models.embodiment.prismatic.processing_prismatic")
        weight = torch.empty(0)  # next(self.parameters()): the device and dtype, float32
        vla = types.SimpleNamespace(
            max_prompt_length=MAX_PROMPT_LENGTH,
            vision_backbone=types.SimpleNamespace(get_num_images_in_input=lambda: 1),
            parameters=lambda: iter([weight]),
            input_processor=rlinf.MultiInputPrismaticProcessor(
                _image_processor(rlinf, fused, inputs.IMAGE_SIZE), tokenizer
            ),
        )
        prepare = _rlinf_prepare()

        def rlinf_side(obs):
            env_obs = {  # what RLinf's LIBERO env hands the model (its _wrap_obs)
                "main_images": torch.from_numpy(obs[CAMERA]),
                "states": torch.from_numpy(obs["state"]),
                "task_descriptions": list(obs["task"]),
            }
            return prepare(vla, env_obs)

        sides["rlinf"] = rlinf_side
    return sides


def _observations(batch: int) -> dict:
    _, _, env = _package()
    with env.make_env(backend="synthetic", num_envs=batch, workers=0, video=False) as envs:
        obs, _ = envs.reset()
    return obs


# -- agreement ---------------------------------------------------------------------------


def _rows(ids: torch.Tensor, mask: torch.Tensor, drop: set[int], tail: int | None) -> list:
    rows = []
    for row, keep in zip(ids.tolist(), mask.bool().tolist(), strict=True):
        kept = [i for i, k in zip(row, keep, strict=True) if k and i not in drop]
        if tail is not None and kept and kept[-1] == tail:
            kept.pop()
        rows.append(kept)
    return rows


def _agreement(sides: dict, outputs: dict, fused: bool) -> dict:
    """Max abs pixel difference and id equality of each side against ours; raises past the
    tolerances the module docstring states."""
    ids, mask, pixels = outputs["ours"]
    ours_rows = _rows(ids, mask, {sides["image_id"]}, None)
    _, stds = _statistics(fused)
    step = 1 / (255 * min(min(triple) for triple in stds))
    tolerance = step + 1e-5
    result = {}
    for side in ("siirl", "rlinf"):
        if side not in outputs:
            continue
        their_ids, their_mask, their_pixels = outputs[side]
        their_pixels = their_pixels.reshape(pixels.shape).float()
        diff = (their_pixels - pixels.float()).abs()
        rows = _rows(their_ids, their_mask, set(), SPACE_ID if side == "siirl" else None)
        result[side] = {
            "pixels_max_abs": float(diff.max()),
            "pixels_tolerance": tolerance,
            "pixels_off_share": float((diff > 1e-5).float().mean()),
            "ids_equal": rows == ours_rows,
        }
        if diff.max() > tolerance or rows != ours_rows:
            raise AssertionError(f"{side} disagrees with ours: {result[side]}")
    return result


# -- timing and memory -------------------------------------------------------------------


def _vm(field: str) -> int:
    """A ``/proc/self/status`` figure in MiB."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+)", status).group(1)) // 1024


def _memory(side: str, checkpoint: str, batches: list[int], fused: bool) -> dict:
    """In a process of its own: the peak RSS while ``side`` prepares each batch size."""
    prepare = _sides(checkpoint, fused, which=(side,))[side]
    figures = {}
    for batch in batches:
        obs = _observations(batch)
        with torch.no_grad():
            prepare(obs)  # warm-up: caches and lazily built kernels are not per-call cost
            Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to VmRSS
            before = _vm("VmRSS")
            for _ in range(3):
                prepare(obs)
        peak = _vm("VmHWM")
        figures[batch] = {"peak_mib": peak, "growth_mib": peak - before}
    return figures


def _memory_in_subprocess(side: str, checkpoint: str, batches: list[int], fused: bool) -> dict:
    script = str(Path(__file__).resolve())
    command = [sys.executable, script, "--memory-side", side, "--checkpoint", checkpoint]
    command += ["--batches", *map(str, batches), *(["--fused"] if fused else [])]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"the {side} memory run failed:\n{done.stderr[-3000:]}")
    return {int(k): v for k, v in json.loads(done.stdout.splitlines()[-1]).items()}


def bench(checkpoint: str, batches: list[int], rounds: int, fused: bool) -> list[dict]:
    sides = _sides(checkpoint, fused)
    rows = []
    for batch in batches:
        obs = _observations(batch)
        times: dict[str, list[float]] = {side: [] for side in SIDES}
        with torch.no_grad():
            outputs = {side: sides[side](obs) for side in SIDES}  # and warm-up
            agreement = _agreement(sides, outputs, fused)
            for r in range(rounds):
                for side in SIDES[r % 3 :] + SIDES[: r % 3]:
                    start = time.perf_counter()
                    sides[side](obs)
                    times[side].append(1000 * (time.perf_counter() - start))
        median = {side: statistics.median(v) for side, v in times.items()}
        rows.append(
            {
                "batch": batch,
                **{f"{side}_ms": round(median[side], 3) for side in SIDES},
                "siirl_over_ours": round(median["siirl"] / median["ours"], 2),
                "rlinf_over_ours": round(median["rlinf"] / median["ours"], 2),
                "agreement": agreement,
            }
        )
        print(
            f"batch {batch:3d}: ours {median['ours']:8.2f} ms  siirl {median['siirl']:8.2f} ms"
            f"  rlinf {median['rlinf']:8.2f} ms",
            flush=True,
        )
    return rows


def _table(rows: list[dict], memory: dict, peak: int) -> str:
    lines = [
        "batch  ours ms  siirl ms  rlinf ms  siirl/ours  rlinf/ours  "
        "max|dpx| (off) siirl   rlinf           ids  RSS MiB peak (growth) ours / siirl / rlinf"
    ]
    for row in rows:
        agree = row["agreement"]
        pixels = "  ".join(
            f"{agree[s]['pixels_max_abs']:.4f} ({100 * agree[s]['pixels_off_share']:4.1f} %)"
            for s in ("siirl", "rlinf")
        )
        ids = "=" if all(a["ids_equal"] for a in agree.values()) else "DIFF"
        rss = " / ".join(
            f"{memory[s][row['batch']]['peak_mib']} (+{memory[s][row['batch']]['growth_mib']})"
            for s in SIDES
        )
        lines.append(
            f"{row['batch']:5d} {row['ours_ms']:8.2f} {row['siirl_ms']:9.2f} "
            f"{row['rlinf_ms']:9.2f} {row['siirl_over_ours']:10.2f}x "
            f"{row['rlinf_over_ours']:10.2f}x  {pixels}  {ids:>3}  {rss}"
        )
    tolerance = rows[0]["agreement"]["siirl"]["pixels_tolerance"]
    lines.append(f"pixel tolerance (one uint8 level): {tolerance:.5f}; ids: = is equal")
    lines.append(f"peak RSS of this (timing) process: {peak} MiB")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--fused", action="store_true", help="two mean/std triples, as OFT")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--memory-side", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--checkpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    _stub_torchvision()
    json_path = args.json.resolve() if args.json else None
    with tempfile.TemporaryDirectory(prefix="inputs_speed-") as scratch:
        os.chdir(scratch)  # importing siiRL writes ./siirl_logs
        if args.memory_side:
            figures = _memory(args.memory_side, args.checkpoint, args.batches, args.fused)
            print(json.dumps(figures))
            return
        if args.rounds < 5:
            parser.error("--rounds: at least 5")
        print(
            f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
            f"{os.cpu_count()} cores; {EXAMPLE} tiny checkpoint, "
            f"{'two triples (fused)' if args.fused else 'one triple'}"
        )
        checkpoint = _package()[0].build_tiny(Path(scratch) / "tiny", seed=0)
        rows = bench(checkpoint, args.batches, args.rounds, args.fused)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        memory = {
            side: _memory_in_subprocess(side, checkpoint, args.batches, args.fused)
            for side in SIDES
        }
        os.chdir(REPO)
    for row in rows:
        row["rss_mib"] = {side: memory[side][row["batch"]] for side in SIDES}
    print(_table(rows, memory, peak))
    if json_path:
        report = {"rows": rows, "timing_process_peak_rss_mib": peak}
        json_path.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
