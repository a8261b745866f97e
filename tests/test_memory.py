"""The memory plan: per GPU, what a target's generated settings hold, each figure with its
assumption, and a spec that does not fit the declared GPU flagged where a user meets it
(`vlagen new`, `targets fit`, the README). The arithmetic against numbers worked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import REPO
from vlagen.backbones import BACKBONES
from vlagen.cli import main
from vlagen.errors import SpecError
from vlagen.fit import fits
from vlagen.load import load_spec_text
from vlagen.memory import (
    Figure,
    Gpu,
    GpuPlan,
    MemoryPlan,
    activation_bytes,
    stack_bytes,
)
from vlagen.plan import make_plan

SPECS = REPO / "specs"
LIBERO = (SPECS / "libero_openvla_oft.yaml").read_text()
OPENVLA = 7_541_237_184  # openvla/openvla-7b's safetensors total
OFT_LORA = 110_828_288  # OpenVLA-OFT's LoRA r32 all-linear: its finetune log's trainable count


def _plans(text: str) -> dict[str, MemoryPlan]:
    return make_plan(load_spec_text(text, "s.yaml", probe=False).spec).memory_plans


def _figures(plan: MemoryPlan, gpu: int = 0) -> dict[str, Figure]:
    return {f.name: f for f in plan.gpus[gpu].figures}


def _full_fine_tuning(text: str) -> str:
    return text.replace("  lora:\n    rank: 32\n    alpha: 32\n", "")


def test_a_layers_activations_follow_korthikanti() -> None:
    # s b h (34 + 5 a s / h) bytes in 16 bits: s=1000, b=2, h=4096, a=32
    assert activation_bytes(1000, 2, 4096, 32, eager=False) == 1000 * 2 * 4096 * 34
    eager = 1000 * 2 * 4096 * (34 + 5 * 32 * 1000 / 4096)
    assert activation_bytes(1000, 2, 4096, 32, eager=True) == pytest.approx(eager)
    assert activation_bytes(1000, 2, 4096, 32, eager=False, size=4) == 2 * 278_528_000


def test_checkpointing_keeps_each_layers_input_and_rebuilds_one_layer() -> None:
    full = stack_bytes(32, 1000, 2, 4096, 32, eager=False, size=2, checkpointed=False)
    kept = stack_bytes(32, 1000, 2, 4096, 32, eager=False, size=2, checkpointed=True)
    assert full == 32 * 278_528_000
    assert kept == 32 * (2 * 1000 * 2 * 4096) + 278_528_000


def test_the_shapes_add_up_and_lora_counts_match_the_frameworks_logs() -> None:
    for backbone in BACKBONES.values():
        shape = backbone.shape
        assert shape.layers * shape.layer_params + shape.outside_layers == shape.params
    openvla = BACKBONES["llava"].shape
    assert openvla.params == OPENVLA
    assert openvla.lora_params(32, "all-linear") == OFT_LORA
    assert openvla.lora_params(8, ("q_proj", "v_proj")) == 8 * 32 * (8192 + 8192)
    # peft's LoraConfig(r=1, target_modules="all-linear") on the models built on meta
    assert BACKBONES["qwen2_5_vl"].shape.lora_params(1, "all-linear") == 3_239_040
    assert BACKBONES["qwen3_vl"].shape.lora_params(1, "all-linear") == 3_280_864
    assert openvla.kv_bytes_per_token == 2 * 32 * 32 * 128 * 2  # 0.52 MB a token


def test_a_7b_model_in_bf16_sharded_over_8_gpus() -> None:
    rlinf = _plans(_full_fine_tuning(LIBERO))["rlinf"]
    figures = _figures(rlinf)
    # 7,541,237,184 parameters x 2 bytes / 8 GPUs = 1.885 GB each: weights
    assert figures["weights"].gb == pytest.approx(OPENVLA * 2 / 8 / 1e9)
    # gradients whole, 15.08 GB, while RLinf accumulates them under no_sync()
    assert figures["gradients"].gb == pytest.approx(OPENVLA * 2 / 1e9)
    # AdamW's two states in the weights' bfloat16
    assert figures["optimizer"].gb == pytest.approx(2 * OPENVLA * 2 / 8 / 1e9)
    # the rollout worker's own full copy, in rollout.model.precision
    assert figures["rollout weights"].gb == pytest.approx(OPENVLA * 2 / 1e9)
    assert figures["rollout weights"].training and figures["rollout weights"].rollout
    assert "gradients" in figures and not figures["gradients"].rollout


def test_lora_on_rlinf_keeps_gradients_for_the_whole_flat_parameter() -> None:
    figures = _figures(_plans(LIBERO)["rlinf"])
    total = OPENVLA + OFT_LORA
    assert figures["gradients"].gb == pytest.approx(total * 2 / 1e9)  # whole: see below
    assert "use_orig_params" in figures["gradients"].why
    assert figures["optimizer"].gb == pytest.approx(2 * OFT_LORA * 2 / 8 / 1e9)
    # 568 tokens: 256 patches of one camera, max_prompt_length 256, 8 x 7 action tokens;
    # gradient checkpointing on, as RLinf's example
    layers = stack_bytes(32, 568, 4, 4096, 32, eager=False, size=2, checkpointed=True)
    assert figures["activations"].gb == pytest.approx(layers / 1e9)
    assert "568 tokens (256 image, 256 prompt, 56 action)" in figures["activations"].why
    # LIBERO renders on the GPU: 128 envs over 8 GPUs at the preset's 0.5 GB
    assert figures["envs"].gb == pytest.approx(16 * 0.5)


def test_rlinf_keeps_whole_gradients_while_it_accumulates_micro_batches() -> None:
    """RLinf runs all but the last micro-batch of a mini-batch under FSDP's no_sync()
    (enable_gradient_accumulation), where torch keeps each flat parameter's whole gradient:
    LIBERO's 64 micro-batches (2048 rows / 4 / 8 GPUs) hold 15.3 GB on each GPU, not the
    1.91 GB of a gradient sharded over 8; the lever turns accumulation off."""
    total = OPENVLA + OFT_LORA
    accumulating = _figures(_plans(LIBERO)["rlinf"])
    grads = accumulating["gradients"]
    assert grads.gb == pytest.approx(total * 2 / 1e9)
    assert "unsharded while accumulating" in grads.why and "64 micro-batches" in grads.why
    assert "no_sync()" in grads.why
    assert "enable_gradient_accumulation: false" in grads.lever and "1.91 GB" in grads.lever
    assert "is_lora" in grads.lever  # what RLinf's own LoRA configs do instead
    off = LIBERO.replace(
        "algorithm: grpo}",
        "algorithm: grpo, config: {actor.fsdp_config.enable_gradient_accumulation: false}}",
    )
    assert off != LIBERO
    sharded = _figures(_plans(off)["rlinf"])
    assert sharded["gradients"].gb == pytest.approx(total * 2 / 8 / 1e9)
    assert "unsharded" not in sharded["gradients"].why
    # and each decoder layer's gradient is whole only until its reduce-scatter
    layer = BACKBONES["llava"].shape.layer_params * 2 / 1e9
    gathered = sharded["FSDP gathered"].gb - accumulating["FSDP gathered"].gb
    assert gathered == pytest.approx(layer)


def test_siirl_keeps_float32_weights_and_lora_gradients_only() -> None:
    figures = _figures(_plans(LIBERO)["siirl"])
    assert figures["weights"].gb == pytest.approx((OPENVLA + OFT_LORA) * 4 / 8 / 1e9)
    assert figures["gradients"].gb == pytest.approx(OFT_LORA * 4 / 8 / 1e9)
    assert "gradient checkpointing on" in figures["activations"].why
    assert not figures["rollout weights"].training  # the actor's own, gathered to generate


def test_siirls_rollout_holds_its_trajectory_and_srpos_video_model() -> None:
    """siiRL's rollout keeps every step's float32 pixel values on the GPU and stacks them
    (vla_history), and for srpo holds V-JEPA 2's ViT-g in float32 and runs it over a chunk
    of 64-frame videos: worked by hand from siiRL's and V-JEPA 2's code."""
    from vlagen.targets.siirl.memory import vjepa_params

    assert vjepa_params() == 1_012_173_952  # the model built on PyTorch's meta device
    plan = _plans(LIBERO)["siirl"]
    figures = _figures(plan)
    # 16 rows a rank (16 groups x 8 over 8 GPUs) x 64 forwards x 6 x 224 x 224, twice
    buffer = figures["trajectory buffer"]
    assert buffer.gb == pytest.approx(2 * 16 * 64 * 6 * 224 * 224 * 4 / 1e9)  # 2.47 GB
    assert buffer.held == "generating"
    weights = figures["V-JEPA weights"]
    assert weights.gb == pytest.approx(1_012_173_952 * 4 / 1e9) and weights.held == "throughout"
    # a chunk of 128 // 8 = 16 videos; 32 x 24 x 24 tokens, each: the float16 residual,
    # LayerNorm's float32 output, the MLP's two 6144-wide float16 layers; and the frames
    per_video = 18432 * (1408 * (2 + 4) + 2 * 6144 * 2) + 2 * 3 * 64 * 384 * 384 * 4
    forward = figures["V-JEPA forward"]
    assert forward.gb == pytest.approx(16 * per_video / 1e9) and forward.held == "generating"
    assert plan.gpus[0].phase == "while generating"

    offload = LIBERO.replace(
        "  - {framework: siirl,",
        "  - {config: {actor_rollout_ref.embodied.embedding_model_offload: true}, "
        "framework: siirl,",
    )
    assert offload != LIBERO
    assert _figures(_plans(offload)["siirl"])["V-JEPA weights"].held == "generating"
    grpo = _figures(_plans((SPECS / "highway_openvla.yaml").read_text())["siirl"])
    assert "trajectory buffer" in grpo and not any(name.startswith("V-JEPA") for name in grpo)


def test_verl_gathers_the_actors_root_unit_in_float32_to_generate() -> None:
    """verl's rollout_mode unshards the root FSDP unit only (FSDP1, the generated
    strategy): its 1.06B parameters in float32, the decoder layers in turn in bfloat16;
    under FSDP2 it unshards every unit, at the mixed-precision dtype."""
    text = (SPECS / "pusht_openvla_oft.yaml").read_text()
    plan = _plans(text)["verl"]
    policy, env = plan.gpus
    shape = BACKBONES["llava"].shape
    root = (shape.outside_layers * 4 + shape.layer_params * 2) / 1e9  # 4.66 GB
    assert _figures(plan)["rollout weights"].gb == pytest.approx(root)
    assert policy.phase == "while training"
    assert [f.name for f in env.figures] == ["envs"] and env.peak_gb == 0  # pusht: CPU
    fsdp2 = text.replace(
        "  - {framework: verl,",
        "  - {config: {actor_rollout_ref.actor.strategy: fsdp2}, framework: verl,",
    )
    assert fsdp2 != text
    gathered = _figures(_plans(fsdp2)["verl"])["rollout weights"]
    assert gathered.gb == pytest.approx(OPENVLA * 2 / 1e9)  # every unit, in bfloat16


def test_the_peak_is_the_larger_phase() -> None:
    figures = (
        Figure("weights", 10.0, "w"),
        Figure("activations", 30.0, "a", rollout=False),
        Figure("rollout weights", 40.0, "r", training=False),
    )
    gpu = GpuPlan(Gpu("the actor", 8), figures, capacity=45.0)
    assert (gpu.training_gb, gpu.rollout_gb, gpu.peak_gb) == (40.0, 50.0, 50.0)
    assert gpu.phase == "while generating" and not gpu.fits


def test_areals_server_takes_its_share_and_must_hold_the_weights() -> None:
    plan = _plans((SPECS / "highway_qwen_portable.yaml").read_text())["areal"]
    trainer, server = plan.gpus
    assert _figures(plan, 1)["inference server"].gb == pytest.approx(0.8 * 80)
    assert server.pool == pytest.approx((8_292_166_656 * 2 / 1e9, 64.0))
    assert "logits" in _figures(plan, 0) and trainer.gpu.training is not None


def test_a_custom_model_is_not_sized_and_says_so() -> None:
    plan = _plans((SPECS / "cartpole_custom.yaml").read_text())["rlinf"]
    assert plan.unknown and "cartpole_pixels.policy_net:PixelPolicy" in plan.unknown
    assert {f.name for f in plan.gpus[0].figures} == {"envs", "CUDA contexts"}


def test_gpu_memory_is_a_validated_resources_field() -> None:
    assert (
        make_plan(load_spec_text(LIBERO, "s.yaml", probe=False).spec).spec.resources.gpu_memory_gb
        == 80
    )
    for bad in ("0", "true", "5000"):
        text = LIBERO.replace("  gpus_per_node: 8", f"  gpus_per_node: 8\n  gpu_memory_gb: {bad}")
        with pytest.raises(SpecError, match="gpu_memory_gb"):
            load_spec_text(text, "s.yaml", probe=False)


def _small_gpu(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(LIBERO.replace("  gpus_per_node: 8", "  gpus_per_node: 8\n  gpu_memory_gb: 24"))
    return spec


def test_a_spec_over_its_gpu_is_flagged_by_new_fit_and_the_readme(tmp_path: Path) -> None:
    spec = _small_gpu(tmp_path)
    plans = _plans(spec.read_text())
    assert plans["rlinf"].warns and plans["siirl"].warns
    text = plans["rlinf"].text
    assert "RLinf 0.3 needs about 47.4 GB on each of the 8 GPUs" in text
    assert "more than resources.gpu_memory_gb 24" in text
    assert "rollout weights 15.3 GB" in text and "rollout.enable_offload: true" in text
    done = CliRunner().invoke(main, ["new", str(spec), "-o", str(tmp_path / "pkg")])
    assert done.exit_code == 0, done.output  # a warning, not a refusal
    assert "vlagen: warning: RLinf 0.3 needs about 47.4 GB" in done.stderr
    readme = (tmp_path / "pkg" / "README.md").read_text()
    assert "**Memory per GPU: does not fit.**" in readme
    fit = CliRunner().invoke(main, ["targets", "fit", str(spec)])
    assert fit.exit_code == 0
    assert "DOES NOT FIT" in fit.stdout and "  warning: RLinf 0.3 needs about" in fit.stdout


def test_the_examples_fit_80_gb() -> None:
    for path in sorted(SPECS.glob("*.yaml")):
        for framework, plan in _plans(path.read_text()).items():
            assert plan.fits, (path.name, framework, plan.text)


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.yaml")), ids=lambda p: p.stem)
def test_targets_fit_prints_the_plan_for_every_target_that_fits(path: Path) -> None:
    for fit in fits(path.read_text(), str(path)):
        assert (fit.memory is not None) == (not fit.problems), fit.label
    out = CliRunner().invoke(main, ["targets", "fit", str(path)]).stdout
    accepted = sum(not f.problems for f in fits(path.read_text(), str(path)))
    assert out.count("  memory per GPU (an estimate; GB = 10^9 bytes) for ") == accepted


def test_targets_fit_prints_each_figure_with_its_assumption() -> None:
    path = SPECS / "highway_qwen_portable.yaml"
    out = CliRunner().invoke(main, ["targets", "fit", str(path)]).stdout
    areal = out.split("areal 1.0 (grpo): fits\n", 1)[1].split("\nrlinf 0.2", 1)[0]
    assert "AReaL trains on 4 GPU(s) (actor.backend fsdp:d4p1t1)" in areal
    assert "each of the 4 GPUs holding a trainer: 40.0 GB at peak (while training)" in areal
    assert "    inference server  64.00 GB  its static pool, 0.8 of the GPU" in areal
    assert "Korthikanti et al. 2022 over 28 layers: 4 rows" in areal
