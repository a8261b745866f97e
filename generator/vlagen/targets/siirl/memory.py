"""Where siiRL puts the actor, the rollout's weights and the envs under the generated
overrides, for the memory plan (:mod:`vlagen.memory`), and what else its embodied rollout
holds on each GPU: the trajectory buffer of every algorithm, and for ``srpo`` the V-JEPA 2
video model its reward embeds trajectories with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...backbones import BACKBONES
from ...memory import (
    GB,
    ROOT,
    Figure,
    Gpu,
    Logits,
    Placement,
    Rollout,
    Tokens,
    Training,
    image_tokens,
)
from ..common.placement import gpu_count
from ..rlinf.memory import POLICY_LOGITS

if TYPE_CHECKING:
    from ...spec import Spec
    from .plan import SiirlPlan

ACTOR = "actor_rollout_ref.actor."
EMBODIED = "actor_rollout_ref.embodied."

#: V-JEPA 2's ViT-g as siiRL builds it (``vit_giant_xformers_rope(img_size, num_frames=64)``
#: in ``utils/embodied/video_emb.py``; the sizes from V-JEPA 2's
#: ``src/models/vision_transformer.py``): width, blocks, MLP width (``1408 * 48 / 11``), patch
#: pixels, frames per tubelet, and the frames siiRL samples from each episode.
VJEPA_WIDTH, VJEPA_DEPTH, VJEPA_MLP = 1408, 40, 6144
VJEPA_PATCH, VJEPA_TUBELET, VJEPA_FRAMES = 16, 2, 64
#: Values per pixel of one camera image in ``pixel_values`` where the checkpoint's processor
#: patches frames (Qwen-VL): 3 channels x ``temporal_patch_size`` 2 (``Qwen2VLImageProcessor``
#: repeats a still image to fill it).
PROCESSOR_VALUES_PER_PIXEL = 3 * 2


def placement(spec: Spec, plan: SiirlPlan) -> Placement:
    """The actor, its rollout and the envs colocated on every GPU."""
    keys = dict(plan.overrides)
    gpus = gpu_count(spec)
    lora = spec.model.lora is not None
    row = Tokens(image_tokens(spec), int(keys["data.max_prompt_length"]), plan.tokens_per_forward)
    if plan.own_model:
        attention = spec.model.attn_implementation or "sdpa"
        logits = Logits(row.actions, spec.model.action.bins, 4, POLICY_LOGITS)
    else:
        # siiRL's loader: flash-attention for OpenVLA, the checkpoint's default for OFT
        attention = "flash_attention_2" if plan.flash_attention_kernels else "sdpa"
        logits = Logits(
            row.total,
            BACKBONES[spec.model.backbone].shape.vocab,
            2,
            "siiRL's embodied actor takes its model's logits over the whole vocabulary at "
            "every position, in bfloat16 under autocast, then slices the action bins "
            "(engine/actor/embodied_actor.py)",
        )
    weights = str(keys.get(ACTOR + "fsdp_config.model_dtype", "float32"))
    rows = int(keys[ACTOR + "traj_mini_batch_size"])  # forward passes per backward pass
    rows *= int(keys[ACTOR + "ppo_micro_batch_size_per_gpu"])
    training = Training(
        shards=gpus,
        shard_how="FSDP full_shard over every GPU",
        weights=weights,
        weights_key="siiRL builds its actor in float32 where fsdp_config.model_dtype is unset "
        "(engine/fsdp_workers.py)",
        compute="bfloat16",  # siiRL's MixedPrecision param_dtype default
        all_grads=not lora,
        grads_why=(
            "the LoRA adapters only: siiRL's wrap policy gives them FSDP units of their own "
            "(get_fsdp_wrap_policy, is_lora)"
            if lora
            else "every parameter trains"
        ),
        rows=rows,
        rows_key=ACTOR + "traj_mini_batch_size (forward passes per backward pass)",
        tokens=row,
        checkpointing=bool(keys["actor_rollout_ref.model.enable_gradient_checkpointing"]),
        checkpointing_key="actor_rollout_ref.model.enable_gradient_checkpointing",
        attention=attention,
        logits=logits,
    )
    in_flight = spec.training.in_flight
    rollout = Rollout(
        kind=ROOT,
        dtype=weights,
        rows=in_flight // gpus,
        tokens=row,
        why="siiRL's EmbodiedHFRollout generates with the actor's FSDP module (dag_utils: "
        "rollout.model = actor_module_fsdp) under FSDP.summon_full_params(recurse=False), "
        "which gathers the root unit in full precision",
    )
    gpu = Gpu(
        "the actor, its rollout and the envs",
        gpus,
        training=training,
        rollout=rollout,
        envs=in_flight / gpus,
        extra=(
            trajectory_buffer(spec, plan),
            *(video_model(plan) if plan.uses_video_model else ()),
        ),
    )
    how = (
        f"siiRL colocates the actor, its rollout and the envs on each of the {gpus} GPUs "
        f"(one worker per GPU, the envs on its render GPU), {in_flight / gpus:g} envs each"
    )
    return Placement((gpu,), how)


def pixel_values(spec: Spec) -> tuple[int, str]:
    """(values in one decision row's ``pixel_values``, what they are): per camera image, the
    Prismatic processor's 3 channels for each vision tower (SigLIP and DINOv2, stacked), or a
    Qwen-VL processor's patches (:data:`PROCESSOR_VALUES_PER_PIXEL` per pixel)."""
    backbone = BACKBONES[spec.model.backbone]
    height, width = spec.model.image_size
    cameras = len(spec.model.cameras or ()) or 1
    if backbone.processor:
        per_pixel = PROCESSOR_VALUES_PER_PIXEL
        what = "the processor's patches, 3 channels x 2 frames"
    else:
        per_pixel = 3 * len(backbone.shape.vision_towers)
        what = f"3 channels for each of {len(backbone.shape.vision_towers)} vision towers"
    return cameras * per_pixel * height * width, f"{cameras} camera(s) at {height}x{width}, {what}"


def trajectory_buffer(spec: Spec, plan: SiirlPlan) -> Figure:
    """The rollout's inputs of every step, kept on the GPU until the batch is built: siiRL's
    ``_generate_chunk_rollout`` appends each step's ``pixel_values`` (float32, as the
    processor makes them) to ``vla_history`` and stacks them after the last step, both alive
    until the chunk returns; ``generate_sequences`` concatenates the chunks; the FSDP worker
    moves the batch to the CPU afterwards. The token ids beside them are a few KB a row."""
    keys = dict(plan.overrides)
    gpus = gpu_count(spec)
    rows = int(keys["data.train_batch_size"]) // gpus * int(keys["actor_rollout_ref.rollout.n"])
    values, what = pixel_values(spec)
    steps = plan.trajectory_length
    return Figure(
        "trajectory buffer",
        2 * rows * steps * values * 4 / GB,
        f"{rows} rows (data.train_batch_size over {gpus} ranks, x rollout.n) x {steps} "
        f"forward passes x {values / 1e6:.2f}M pixel values in float32 ({what}), twice: "
        "siiRL's rollout keeps every step's inputs on the GPU (vla_history) and stacks them "
        "(engine/rollout/embodied_rollout.py _generate_chunk_rollout), then concatenates its "
        "chunks; the batch leaves the GPU after generation (fsdp_workers generate_sequences)",
        training=False,
        lever="fewer groups or shorter episodes (training.groups, env.max_episode_steps)",
    )


def vjepa_params() -> int:
    """Parameters of V-JEPA 2's ViT-g: per block the attention's qkv and output projections
    and the MLP's two layers with their biases, and two LayerNorms; the 3-D patch embedding
    (a tubelet of 2 frames x 16 x 16 pixels x 3 channels per token) and the last LayerNorm."""
    width, mlp = VJEPA_WIDTH, VJEPA_MLP
    block = 4 * width * width + 4 * width + 2 * width * mlp + mlp + width + 4 * width
    patch_embed = 3 * VJEPA_TUBELET * VJEPA_PATCH**2 * width + width
    return VJEPA_DEPTH * block + patch_embed + 2 * width


#: siiRL's ``EmbodiedArguments`` defaults (``params/embodied_args.py``) for the video model's
#: keys, which the plan leaves to siiRL.
VJEPA_DEFAULTS = {
    "embedding_img_size": 384,
    "embedding_enable_fp16": True,
    "embedding_model_offload": False,
}


def video_model(plan: SiirlPlan) -> tuple[Figure, Figure]:
    """srpo's V-JEPA 2 on each rank's GPU (``utils/embodied/video_emb.py``): its weights,
    built in float32 (autocast casts only its compute), and its forward over a whole chunk
    of episodes at once (``extract_video_embedding_batch``), under ``inference_mode``.

    The forward's figure is rough, worked from V-JEPA 2's code and not measured: per video,
    its 64 sampled frames after the transform in float32, twice (the list and its stack);
    per token, one block's live tensors, the largest being the MLP's (the residual in the
    autocast dtype, LayerNorm's float32 output, the MLP's hidden layer and its GELU; the
    attention's RoPE copies come to about as much); SDPA keeps no scores. It runs after the
    episode's last step, once the rollout's gathered weights are released, so the phase's
    sum counts both."""
    keys = dict(plan.overrides)
    setting = {k: keys.get(EMBODIED + k, v) for k, v in VJEPA_DEFAULTS.items()}
    side = int(setting["embedding_img_size"])
    size = 2 if setting["embedding_enable_fp16"] else 4
    dtype = "float16" if size == 2 else "float32"
    offload = bool(setting["embedding_model_offload"])
    params = vjepa_params()
    weights = Figure(
        "V-JEPA weights",
        params * 4 / GB,
        f"V-JEPA 2 ViT-g, {params / 1e9:.2f}B parameters in float32, loaded by siiRL's rollout "
        "on every rank's GPU for srpo's reward (VideoEmbeddingModel), "
        + (
            "moved to the CPU while the actor trains (embodied.embedding_model_offload)"
            if offload
            else "and kept there (embodied.embedding_model_offload false, siiRL's default)"
        ),
        training=not offload,
        lever="actor_rollout_ref.embodied.embedding_model_offload: true (targets[].config), "
        "off the GPU while the actor trains",
    )
    rows = int(keys[EMBODIED + "env.num_envs"]) // int(keys["actor_rollout_ref.rollout.n"])
    tokens = VJEPA_FRAMES // VJEPA_TUBELET * (side // VJEPA_PATCH) ** 2
    block = tokens * (VJEPA_WIDTH * (size + 4) + 2 * VJEPA_MLP * size)
    frames = 2 * 3 * VJEPA_FRAMES * side * side * 4
    forward = Figure(
        "V-JEPA forward",
        rows * (block + frames) / GB,
        f"{rows} videos at once (a chunk: embodied.env.num_envs // rollout.n), each "
        f"{frames / GB:.2f} GB of frames ({VJEPA_FRAMES} at {side}x{side} in float32, the "
        f"list and its stack) and {block / GB:.2f} GB of one block's live tensors over "
        f"{tokens} tokens (the residual in {dtype}, LayerNorm's float32 output, the MLP's "
        f"two {VJEPA_MLP}-wide layers in {dtype}): rough, from V-JEPA 2's code, not measured; "
        "it runs after the last step, once the rollout weights are released, so counting "
        "both overstates the phase",
        training=False,
        lever="fewer envs at once (training.envs)",
    )
    return weights, forward
