"""Policy cores the examples do not cover, generated and run: each is ruff-clean and its own
model and closed-loop tests pass on the tiny checkpoint."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MINIMAL_SPEC, VARIANT_MARKERS, run_package_tests
from vlagen.api import generate, write
from vlagen.load import load_spec_text


def _spec(model: dict[str, Any], env: dict[str, Any]) -> dict:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["model"].update(model)
    data["env"].update(env)
    return data


#: The value head's variants train it: RLinf's gae is the critic a spec's value head needs.
GAE = {"framework": "rlinf", "version": "0.3", "algorithm": "gae"}

VARIANTS = {
    # Parallel decoding with two cameras through a fused (6-channel) backbone, state tokens
    # with statistics, LoRA and a value head (trained by RLinf's gae).
    "oft_fused_state_lora": _spec(
        {
            "family": "openvla_oft",
            "vocab_size": 600,
            "action": {"dim": 7, "chunk": 2, "bins": 64},
            "cameras": ["agentview", "wrist"],
            "image_mean": [0.48, 0.46, 0.41, 0.5, 0.5, 0.5],
            "image_std": [0.23, 0.22, 0.23, 0.5, 0.5, 0.5],
            "use_state": True,
            "state_normalization": {"q01": [-1.0] * 8, "q99": [1.0] * 8},
            "lora": {"rank": 4, "alpha": 8},
            "value_head": True,
        },
        {
            "preset": "libero",
            "task_suite": "libero_spatial",
            "cameras": [
                {"name": "agentview", "height": 64, "width": 64, "role": "main"},
                {"name": "wrist", "height": 48, "width": 48, "role": "wrist"},
            ],
            "state_dim": 8,
            "action": {"kind": "delta_ee", "dim": 7},
            "rewards": [{"name": "success", "source": "success"}],
        },
    )
    | {"targets": [GAE]},
    # Autoregressive decoding with LoRA on highway's discrete meta-actions: one action token
    # per choice (bins unset: the 5 choices).
    "openvla_discrete_lora": _spec(
        {
            "vocab_size": 400,
            "action": {"dim": 1, "chunk": 1},
            "lora": {"rank": 4, "target_modules": ["q_proj", "v_proj"]},
        },
        {"action": {"kind": "discrete", "choices": 5}},
    ),
}


def _qwen(backbone: str, model: dict[str, Any], env: dict[str, Any], *also: dict) -> dict:
    """A variant on a Qwen backbone for AReaL and the targets ``also``."""
    data = _spec({"backbone": backbone, **model}, env)
    data["targets"] = [{"framework": "areal", "version": "1.0", "algorithm": "grpo"}, *also]
    return data


VARIANTS.update(
    {
        # Qwen2.5-VL, autoregressive: two cameras of different sizes into a non-square
        # image grid, state tokens with statistics, LoRA and a value head (RLinf's gae).
        "qwen2_5_openvla_state_lora": _qwen(
            "qwen2_5_vl",
            {
                "image_size": [56, 84],
                "action": {"dim": 7, "chunk": 1, "bins": 64},
                "cameras": ["agentview", "wrist"],
                "use_state": True,
                "state_normalization": {"q01": [-1.0] * 8, "q99": [1.0] * 8},
                "lora": {"rank": 4, "alpha": 8},
                "value_head": True,
            },
            copy.deepcopy(VARIANTS["oft_fused_state_lora"]["env"]),
            GAE,
        ),
        # Qwen3-VL (32-pixel merged patches, deepstack), autoregressive: KV-cached steps over
        # interleaved 3-D positions, LoRA and a value head; through RLinf 0.3's own launch
        # path too, on gae: its actor-critic loss trains the head. (Qwen2.5-VL driving
        # waypoints is the highway_qwen_waypoint example.)
        "qwen3_openvla": _qwen(
            "qwen3_vl",
            {
                "image_size": [64, 96],
                "action": {"dim": 2, "chunk": 2, "bins": 48},
                "lora": {"rank": 4, "alpha": 8},
                "value_head": True,
            },
            {},
            GAE,
        ),
        # Qwen3-VL on siiRL: siiRL's embodied rollout loop, GRPO advantage and actor update
        # over the package's SiirlVLA (targets/siirl/model.py), one decision per forward.
        "qwen3_siirl": {
            **_spec(
                {"backbone": "qwen3_vl", "image_size": [64, 64], "action": {"dim": 2, "bins": 48}},
                {},
            ),
            "targets": [{"framework": "siirl", "version": "0.2", "algorithm": "grpo"}],
        },
    }
)
ONLY = {
    "qwen2_5_openvla_state_lora": (
        "tests/test_model.py",
        "tests/test_model_reference_qwen.py",
        "tests/test_closed_loop.py",
    ),
    "qwen3_openvla": (
        "tests/test_model.py",
        "tests/test_model_reference_qwen.py",
        "tests/test_rlinf_fidelity.py",
    ),
    "qwen3_siirl": ("tests/test_siirl_fidelity.py",),
}
"""Variants whose env is one of the others': only their policy-core tests run."""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_policy_core_is_clean_and_its_tests_pass(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    text = yaml.safe_dump(VARIANTS[name], sort_keys=False)
    write(generate(load_spec_text(text).spec), out, fresh=True)
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=out,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout
    run_package_tests(out, real_simulator=False, only=ONLY.get(name, ()), markers=VARIANT_MARKERS)
