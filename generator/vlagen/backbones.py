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

from dataclasses import dataclass, field
from typing import Any

__all__ = ["BACKBONES", "BackboneDecl"]


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
