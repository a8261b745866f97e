"""Vision-language backbones as data: what a token family's checkpoint looks like inside.

``model.backbone`` picks one; it is orthogonal to ``model.family`` (how actions decode). The
generated policy core (``src/<pkg>/model/``) is laid out from these declarations, and the
checks read them to reject a spec its backbone cannot serve (action tokens that do not fit the
vocabulary, image sizes the vision tower cannot patch).

Vocabulary facts (transformers 5.x, the checkpoints' ``config.json`` / ``tokenizer.json``):
Qwen2.5-VL's tokenizer has 151665 ids (151643 byte-level BPE tokens + 22 special tokens,
``<|endoftext|>`` … ``<|file_sep|>``; a token added to it gets id 151665) and its embedding
has 151936 rows in the 3B checkpoint, 152064 in 7B and 72B (the language models' own sizes);
Qwen3-VL's tokenizer adds ``<tool_response>``, ``</tool_response>``, ``<think>``, ``</think>``
(151669 ids) and every size has 151936 rows. The rows past the tokenizer are never produced
by text: that tail holds the action tokens. The default is 151936: on a 152064-row checkpoint
the action tokens then sit below its last 128 rows, still above every text id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BACKBONES", "BackboneDecl", "ModelShape"]

#: The language model's linear layers LoRA adapts in one decoder layer, as transformers
#: names them in Llama, Qwen2.5-VL and Qwen3-VL.
LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class ModelShape:
    """The size of the checkpoint users start from on a backbone, for the memory plan
    (:mod:`vlagen.memory`): its parameters, its language model's layers, and its vision
    tower's, as the checkpoint's ``config.json`` gives them.

    Counts were taken by building the model from those values on PyTorch's meta device
    (transformers 5) and, for LoRA, by wrapping it in peft's ``LoraConfig(target_modules=
    "all-linear", r=1)``: ``lora_widths`` are in + out features of each adapted linear layer
    (LoRA of rank r adds ``r * (in + out)`` parameters to it).
    """

    name: str  #: the checkpoint, as a message names it
    params: int  #: every parameter of the checkpoint
    layers: int  #: decoder layers of the language model
    layer_params: int  #: parameters of one decoder layer
    hidden: int  #: the language model's hidden size
    heads: int  #: attention heads
    kv_heads: int  #: key/value heads (grouped-query attention)
    head_dim: int
    vocab: int  #: rows of the output layer
    lora_widths: Mapping[str, int]  #: in + out features per adapted linear of one layer
    vision_lora: int  #: in + out features summed over the vision tower's and projector's linears
    #: (layers, width) of each vision tower; a camera image runs through every tower
    vision_towers: tuple[tuple[int, int], ...]
    vision_patch: int  #: pixels per side of one vision token, before any merge
    #: transformers' gradient checkpointing reaches the vision blocks (its own vision
    #: models), not only the language model's (False: timm towers, as Prismatic's)
    vision_checkpointed: bool
    source: str  #: where the numbers come from

    @property
    def outside_layers(self) -> int:
        """Parameters outside the decoder layers: embeddings, output layer, vision tower,
        projector (one FSDP unit where the wrap policy wraps the decoder layers)."""
        return self.params - self.layers * self.layer_params

    @property
    def kv_bytes_per_token(self) -> int:
        """Key and value cache of one token over every layer, in 16 bits."""
        return 2 * self.layers * self.kv_heads * self.head_dim * 2

    def lora_params(self, rank: int, modules: str | tuple[str, ...]) -> int:
        """Parameters LoRA of ``rank`` adds on ``modules`` (``all-linear``: every linear
        layer but the output layer, the vision tower's too; a list: those language-model
        layers by name)."""
        if modules == "all-linear":
            return rank * (self.layers * sum(self.lora_widths.values()) + self.vision_lora)
        named = sum(self.lora_widths.get(name, 0) for name in modules)
        return rank * self.layers * named


def _widths(hidden: int, q: int, kv: int, intermediate: int) -> dict[str, int]:
    """in + out of each of :data:`LINEARS` for a layer of ``hidden`` size, ``q`` query and
    ``kv`` key/value features and an ``intermediate``-wide gated MLP."""
    mlp = hidden + intermediate
    sizes = (hidden + q, hidden + kv, hidden + kv, q + hidden, mlp, mlp, mlp)
    return dict(zip(LINEARS, sizes, strict=True))


#: OpenVLA 7B (``openvla/openvla-7b``), which OpenVLA-OFT fine-tunes: Llama-2-7B (32 layers,
#: 4096 hidden, 11008 intermediate, 32 heads, the vocabulary padded to 32064) with a fused
#: DINOv2 ViT-L/14 (24 layers, 1024 wide) + SigLIP ViT-SO400M/14 (27 layers, 1152 wide)
#: tower at 224 px (256 patches each) and a 3-layer MLP projector.
OPENVLA_7B = ModelShape(
    name="OpenVLA 7B",
    params=7_541_237_184,
    layers=32,
    layer_params=202_383_360,
    hidden=4096,
    heads=32,
    kv_heads=32,
    head_dim=128,
    vocab=32064,
    lora_widths=_widths(4096, 4096, 4096, 11008),
    vision_lora=964_824,
    vision_towers=((24, 1024), (27, 1152)),
    vision_patch=14,
    vision_checkpointed=False,
    source="openvla/openvla-7b's safetensors total (7,541,237,184); OpenVLA-OFT's LoRA "
    "r32 all-linear log (110,828,288 trainable) less the Llama layers' 32 x 32 x 78,080 "
    "gives the vision tower's and projector's 964,824 per rank",
)
#: Qwen2.5-VL-7B (``Qwen/Qwen2.5-VL-7B-Instruct`` config.json): 28 layers, 3584 hidden,
#: 18944 intermediate, 28 heads, 4 key/value heads, 152064 rows, untied; vision depth 32,
#: 1280 wide, patch 14, 2 x 2 merge.
QWEN2_5_VL_7B = ModelShape(
    name="Qwen2.5-VL-7B",
    params=8_292_166_656,
    layers=28,
    layer_params=233_057_792,
    hidden=3584,
    heads=28,
    kv_heads=4,
    head_dim=128,
    vocab=152064,
    lora_widths=_widths(3584, 3584, 512, 18944),
    vision_lora=715_904,
    vision_towers=((32, 1280),),
    vision_patch=14,
    vision_checkpointed=True,
    source="Qwen/Qwen2.5-VL-7B-Instruct's config.json, built on the meta device",
)
#: Qwen3-VL-8B (``Qwen/Qwen3-VL-8B-Instruct`` config.json): 36 layers, 4096 hidden, 12288
#: intermediate, 32 heads, 8 key/value heads of 128, 151936 rows, untied; vision depth 27,
#: 1152 wide, patch 16, 2 x 2 merge, deepstack mergers at layers 8, 16, 24.
QWEN3_VL_8B = ModelShape(
    name="Qwen3-VL-8B",
    params=8_767_123_696,
    layers=36,
    layer_params=192_946_432,
    hidden=4096,
    heads=32,
    kv_heads=8,
    head_dim=128,
    vocab=151936,
    lora_widths=_widths(4096, 4096, 1024, 12288),
    vision_lora=552_928,
    vision_towers=((27, 1152),),
    vision_patch=16,
    vision_checkpointed=True,
    source="Qwen/Qwen3-VL-8B-Instruct's config.json, built on the meta device",
)


@dataclass(frozen=True)
class BackboneDecl:
    name: str
    title: str  #: how the model family spells itself, for messages
    default_vocab_size: int  #: `model.vocab_size` when the spec leaves it unset
    text_vocab: int | None
    """Ids the checkpoint's tokenizer produces; the action tokens must lie above them. None:
    `model.vocab_size` is the tokenizer's own vocabulary and the action tokens are its last
    ids (OpenVLA's scheme)."""
    image_processor: str | None
    """The transformers image processor the checkpoint's ``preprocessor_config.json`` names,
    which the package runs on every frame; None: the package normalizes frames itself with
    (mean, std) and the model takes a fixed ``[cameras, 3, H, W]`` tensor."""
    patch: int = 0  #: vision patch size in pixels (processor backbones)
    merge: int = 1  #: patches merged per side into one language token
    model_types: tuple[str, ...] = ()  #: ``config.model_type`` values that fit; () any
    image_block: tuple[str, str, str] | None = None
    """(start, placeholder, end) tokens around each image; the placeholder repeats once per
    merged patch. None: the placeholders go after the first token (LLaVA's layout)."""
    chat: tuple[str, str] = ("", "")  #: text before the images, and after the prompt
    action_prefix: tuple[int, ...] = ()
    """Token ids a token family's checkpoint saw between the prompt and its first action
    token, appended to every prompt that does not already end with them. OpenVLA and
    OpenVLA-OFT (Llama 2) were trained on ``... Out:`` + ``▁`` (id 29871) + action tokens:
    their own ``predict_action``, RLinf and verl append 29871, and OFT's parallel decoding
    reads the first action token's logits at that position."""
    tiny_model: str = "LlavaForConditionalGeneration"  #: transformers class of ``tiny.py``
    processor_class: str | None = None
    """transformers' processor of the checkpoints (``AutoProcessor``'s for their model_type):
    the package's reference test tokenizes with it. None: no processor backbone."""
    tiny_config: str = "LlavaConfig"
    tiny_text: dict[str, Any] = field(default_factory=dict)  #: tiny text-config extras
    tiny_vision: dict[str, Any] = field(default_factory=dict)  #: tiny vision config
    summary: str = ""
    width: int = 4096
    """The language model's hidden size in the checkpoints users start from (7-8B), the
    in-features of the layers LoRA adapts: :mod:`vlagen.updates` sizes their weights by it."""
    shape: ModelShape = OPENVLA_7B
    """The checkpoint users start from on this backbone, which the memory plan sizes."""

    @property
    def processor(self) -> bool:
        """Whether frames go through the checkpoint's own image processor."""
        return self.image_processor is not None

    @property
    def image_multiple(self) -> int:
        """What each image side must be a multiple of (one merged patch); 1: anything."""
        return self.patch * self.merge if self.processor else 1

    @property
    def unused_tail(self) -> int | None:
        """Embedding rows past the text ids at the default vocabulary size."""
        return None if self.text_vocab is None else self.default_vocab_size - self.text_vocab


_QWEN_CHAT = ("<|im_start|>user\n", "<|im_end|>\n<|im_start|>assistant\n")
_QWEN_BLOCK = ("<|vision_start|>", "<|image_pad|>", "<|vision_end|>")

BACKBONES: dict[str, BackboneDecl] = {
    decl.name: decl
    for decl in (
        BackboneDecl(
            "llava",
            "LLaVA-style",
            default_vocab_size=32000,
            text_vocab=None,
            image_processor=None,
            action_prefix=(29871,),
            shape=OPENVLA_7B,
            summary="a fixed-size pixel tensor and an image placeholder block after BOS "
            "(OpenVLA/Prismatic, LLaVA, PaliGemma)",
        ),
        BackboneDecl(
            "qwen2_5_vl",
            "Qwen2.5-VL",
            default_vocab_size=151936,
            text_vocab=151665,
            image_processor="Qwen2VLImageProcessor",
            patch=14,
            merge=2,
            width=3584,  # Qwen2.5-VL-7B
            shape=QWEN2_5_VL_7B,
            model_types=("qwen2_5_vl",),
            image_block=_QWEN_BLOCK,
            chat=_QWEN_CHAT,
            tiny_model="Qwen2_5_VLForConditionalGeneration",
            processor_class="Qwen2_5_VLProcessor",
            tiny_config="Qwen2_5_VLConfig",
            tiny_text={"rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3]}},
            tiny_vision={
                "depth": 1,
                "hidden_size": 32,
                "intermediate_size": 64,
                "num_heads": 2,
                "window_size": 56,
                "fullatt_block_indexes": [0],
            },
            summary="Qwen2.5-VL: the checkpoint's image processor, 3-D (mrope) positions",
        ),
        BackboneDecl(
            "qwen3_vl",
            "Qwen3-VL",
            default_vocab_size=151936,
            text_vocab=151669,
            image_processor="Qwen2VLImageProcessor",
            patch=16,
            merge=2,
            shape=QWEN3_VL_8B,
            model_types=("qwen3_vl",),
            image_block=_QWEN_BLOCK,
            chat=_QWEN_CHAT,
            tiny_model="Qwen3VLForConditionalGeneration",
            processor_class="Qwen3VLProcessor",
            tiny_config="Qwen3VLConfig",
            tiny_text={
                "head_dim": 16,
                "rope_parameters": {
                    "rope_type": "default",
                    "mrope_section": [2, 3, 3],
                    "mrope_interleaved": True,
                },
            },
            tiny_vision={
                "depth": 2,
                "hidden_size": 32,
                "intermediate_size": 64,
                "num_heads": 2,
                "num_position_embeddings": 16,
                "deepstack_visual_indexes": [0],
            },
            summary="Qwen3-VL: the checkpoint's image processor, interleaved 3-D positions, "
            "deepstack visual features",
        ),
    )
}
