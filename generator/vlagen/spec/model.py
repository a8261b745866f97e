"""The spec's `model` section: the VLA policy, its action head, statistics and LoRA."""

from __future__ import annotations

import string
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    model_validator,
)

from ..backbones import BACKBONES
from .fields import (
    MAX_BINS,
    ClassPath,
    Count,
    Float,
    Identifier,
    NotBool,
    OneLine,
    Pixels,
    StrictModel,
)


class Normalization(StrictModel):
    """Per-dimension statistics, OpenVLA style: values in [q01, q99] map to [-1, 1] on the
    dimensions where `mask` is true (the gripper usually is not). For actions they are in the
    env's canonical units ([-1, 1]; the env core scales those to the simulator), except the
    gripper, which is in the checkpoint's own convention (`model.action.gripper`)."""

    q01: Annotated[list[Float], Field(max_length=4096)] = Field(
        description="1st percentile of each dimension."
    )
    q99: Annotated[list[Float], Field(max_length=4096)] = Field(
        description="99th percentile of each dimension."
    )
    mask: Annotated[list[bool], Field(max_length=4096)] | None = Field(
        default=None, description="Which dimensions to normalize; default: all."
    )


class ModelAction(StrictModel):
    """What the policy outputs per decision."""

    dim: Count(1024) = Field(
        description="Action dimensions per step (7 for LIBERO's delta EE); 1 to 1024."
    )
    chunk: Count(1024) = Field(
        default=1,
        description="Steps predicted per decision (RLinf `num_action_chunks`); 1 to 1024.",
    )
    bins: Annotated[int, Field(ge=2, le=MAX_BINS), NotBool] = Field(
        default=256,
        description="Action tokens per dimension; 2 to 4096. Continuous actions: OpenVLA's "
        "bins, `bins` edges over [-1, 1] giving `bins - 1` values (default 256). A discrete "
        "env action (`env.action.kind: discrete`): one token per choice, so `bins` must equal "
        "`env.action.choices`; unset, it is `env.action.choices`.",
    )
    normalization: Normalization | None = Field(
        default=None, description="Statistics to un-normalize actions; none means identity."
    )
    gripper: Literal["rlds", "close_positive", "open_positive"] | None = Field(
        default=None,
        description="How the checkpoint writes the gripper (the last channel of a delta_ee "
        "action, after un-normalizing): 'rlds' [0, 1], 0 = close and 1 = open (OpenVLA's and "
        "Open X-Embodiment's training convention, left un-normalized under the statistics' "
        "mask); 'close_positive' [-1, 1], +1 closes (robosuite and LIBERO controls, the env "
        "core's canonical gripper); 'open_positive' [-1, 1], +1 opens (ManiSkill). The policy "
        "core maps it to the canonical -1 = open, +1 = close. Default: 'rlds' for families "
        "openvla and openvla_oft, 'close_positive' otherwise; only for a delta_ee env action.",
    )


class Lora(StrictModel):
    """Low-rank adapters trained instead of the full weights."""

    rank: Count(4096) = Field(default=32, description="LoRA rank r; 1 to 4096.")
    alpha: Count(65536) = Field(default=32, description="LoRA scaling alpha; 1 to 65536.")
    dropout: Annotated[float, Field(ge=0.0, lt=1.0), NotBool] = Field(
        default=0.0, description="Dropout on the LoRA path."
    )
    target_modules: Annotated[list[str], Field(max_length=256)] | Literal["all-linear"] = Field(
        default="all-linear", description="Module names to adapt (at most 256), or 'all-linear'."
    )


class Flow(StrictModel):
    """A flow-matching policy's sampler (families 'pi0' and 'pi05'): the action chunk is
    denoised from Gaussian noise in `steps` steps, and the step(s) that add noise give the
    log-prob the RL loss needs (πRL, arXiv 2510.25889, as RLinf trains π0 and π0.5). Unset
    fields take the family's values from RLinf 0.3's example configs."""

    steps: Count(64) | None = Field(
        default=None,
        description="Denoising steps per decision; 1 to 64. Default: 4 for 'pi0', 5 for "
        "'pi05' (RLinf's `num_steps` in `model/pi0.yaml`, `model/pi0_5.yaml`).",
    )
    noise_method: Literal["flow_sde", "flow_cps", "flow_noise"] = Field(
        default="flow_sde",
        description="How a training step adds noise: 'flow_sde' the reverse SDE with the "
        "flow's marginals, 'flow_cps' a rotation of the noise estimate by pi * level / 2, "
        "'flow_noise' a learned std per element (a small network on the expert's output, in "
        "[0.08, 0.16]). Evaluation runs the plain ODE.",
    )
    noise_level: Annotated[float, Field(gt=0.0, le=4.0), NotBool] = Field(
        default=0.5,
        description="The SDE's and CPS's noise scale a (RLinf `noise_level`); above 0, at "
        "most 4. Ignored by 'flow_noise'.",
    )
    joint_logprob: bool = Field(
        default=False,
        description="Every step adds noise and the log-prob averages all of them with the "
        "initial noise's (RLinf `joint_logprob`); default one step per sample, drawn "
        "uniformly, adds noise and is scored (the others are ODE steps).",
    )
    ignore_last: bool = Field(
        default=False,
        description="Never draw the last step as the noisy one (RLinf `ignore_last`; CPS's "
        "last step has no noise, so its log-prob would be 0).",
    )
    horizon: Count(1024) | None = Field(
        default=None,
        description="Actions the expert denoises per decision (the checkpoint's "
        "`action_horizon`); `model.action.chunk` of them run in the env. Default: 50 for "
        "'pi0', 10 for 'pi05' (openpi's pi0_libero and pi05_libero).",
    )
    action_dim: Count(1024) = Field(
        default=32,
        description="The model's padded action and state width (openpi `action_dim`); the "
        "env's `model.action.dim` are its first dimensions.",
    )
    max_tokens: Count(4096) | None = Field(
        default=None,
        description="Prompt tokens, right-padded or cut (openpi `max_token_len`). Default: 48 "
        "for 'pi0', 200 for 'pi05'.",
    )
    delta_actions: Annotated[int, Field(ge=0, le=1024), NotBool] | None = Field(
        default=None,
        description="Leading action dimensions the model predicts relative to the state "
        "(openpi's `extra_delta_transform`: the un-normalized state's first dimensions are "
        "added back). Default: 6 for 'pi0' on preset libero (openpi's and RLinf's pi0_libero), "
        "0 otherwise (pi05_libero predicts actions as they are).",
    )
    train_expert_only: bool = Field(
        default=True,
        description="Train the action expert and the heads only, the vision-language prefix "
        "frozen (RLinf's `train_expert_only`, true in its π0 and π0.5 configs): the prefix "
        "then runs without gradients when the trainer re-scores.",
    )
    tokenizer: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        default="google/paligemma-3b-pt-224",
        description="Where the Gemma tokenizer comes from when the checkpoint folder holds "
        "none (openpi's checkpoints do not): a Hub id or a local folder.",
    )


class Model(StrictModel):
    """The vision-language-action policy."""

    name: OneLine = Field(description="Human-readable model name, used in logs and READMEs.")
    family: Literal["openvla", "openvla_oft", "waypoint", "custom", "pi0", "pi05"] = Field(
        description="How actions are decoded: OpenVLA autoregressive tokens, OpenVLA-OFT "
        "parallel chunks, driving waypoints, your own module, or flow matching (π0: the "
        "state as an expert token; π0.5: the time conditions the expert's norms)."
    )
    checkpoint: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="Hub id ('openvla/openvla-7b') or local path of the weights (at most 4096 "
        "characters, PATH_MAX)."
    )
    dtype: Literal["bfloat16", "float16", "float32"] = Field(
        default="bfloat16", description="Weights and compute dtype on GPU."
    )
    image_size: tuple[Pixels, Pixels] = Field(
        default=(224, 224), description="Model input image size [height, width]; 1 to 8192 each."
    )
    prompt_template: str = Field(
        default="In: What action should the robot take to {task}?\nOut:",
        description="Prompt with a `{task}` placeholder for each env's task text; `{task}` is "
        "the only placeholder (no positional `{}`, no `!conversion` or `:format`), and a literal "
        "brace is written `{{` or `}}`.",
    )
    backbone: Literal["llava", "qwen2_5_vl", "qwen3_vl"] = Field(
        default="llava",
        description="The vision-language model inside a token family's checkpoint, which "
        "decides how images and prompts become model inputs. 'llava': frames resized to "
        "`image_size` and normalized with `image_mean`/`image_std` into a fixed [cameras, 3, "
        "H, W] tensor, the image placeholder block after BOS (OpenVLA/Prismatic, LLaVA, "
        "PaliGemma). 'qwen2_5_vl' / 'qwen3_vl': Qwen2.5-VL / Qwen3-VL checkpoints (the ones "
        "AReaL trains): frames resized to `image_size` (each side a multiple of 28 / 32, one "
        "merged vision patch) go through the checkpoint's own image processor, each camera "
        "is `<|vision_start|><|image_pad|>…<|vision_end|>` in a Qwen chat turn, positions are "
        "3-D (mrope), and the action tokens are the embedding rows past the tokenizer's text "
        "ids (151665 / 151669), so at most 271 / 267 bins fit the default 151936 rows. "
        "Independent of `family`; family 'custom' loads its own model, so leave it unset.",
    )
    vocab_size: Annotated[int, Field(ge=2, le=2**24), NotBool] = Field(
        default=32000,
        description="One past the last action token id; action tokens are the `action.bins` "
        "ids below it. 'llava' backbones: the checkpoint tokenizer's vocabulary without "
        "padding (default 32000, OpenVLA's Llama 2). Qwen backbones: the embedding rows "
        "(the checkpoint's text_config.vocab_size; default 151936 as in Qwen2.5-VL-3B and "
        "every Qwen3-VL; Qwen2.5-VL-7B/72B have 152064). 2 to 2^24.",
    )
    cameras: Annotated[list[Identifier], Field(max_length=32)] | None = Field(
        default=None,
        description="Env cameras the model sees, in order (at most 32); default: the main camera.",
    )
    image_mean: Annotated[list[Float], Field(max_length=96)] | None = Field(
        default=None,
        description="Per-channel pixel mean after scaling to [0, 1]; default: the "
        "checkpoint's preprocessor_config.json. Several triples stack fused backbones.",
    )
    image_std: Annotated[list[Float], Field(max_length=96)] | None = Field(
        default=None,
        description="Per-channel pixel std, paired with `image_mean` (3 per image, "
        "at most 32 images).",
    )
    center_crop: Annotated[float, Field(gt=0, le=1), NotBool] | None = Field(
        default=None,
        description="Area fraction of the centre crop taken from each frame after it is "
        "resized to `image_size`, and resized back to it, as the checkpoint was evaluated "
        "(OpenVLA-OFT's LIBERO checkpoints, trained with random-crop augmentation, are "
        "evaluated on a 0.9 crop); 1: no crop. Default: the family's (0.9 for "
        "'openvla_oft', none otherwise).",
    )
    use_state: bool = Field(
        default=False,
        description="Append the env's proprio state to the prompt as action tokens, each "
        "value binned as an action value is (a discrete env action's tokens are its choices, "
        "so there each value rounds to one of `env.action.choices` levels).",
    )
    state_normalization: Normalization | None = Field(
        default=None, description="Statistics mapping the state to [-1, 1] before binning."
    )
    attn_implementation: Literal["eager", "sdpa", "flash_attention_2"] | None = Field(
        default=None, description="transformers attention kernel; default: its own choice."
    )
    trust_remote_code: bool = Field(
        default=False,
        description="Run the checkpoint's own modeling code (OpenVLA checkpoints need it).",
    )
    action: ModelAction = Field(description="The action head's output.")
    unnorm_key: Annotated[str, Field(max_length=200)] | None = Field(
        default=None,
        description="Key into the checkpoint's own action statistics (OpenVLA `norm_stats`), "
        "used when `action.normalization` is not given. Default on preset libero for the "
        "openvla families: the suite's RLDS dataset, `<env.task_suite>_no_noops`, the key "
        "OpenVLA's LIBERO checkpoints name their statistics by.",
    )
    lora: Lora | None = Field(default=None, description="LoRA settings; none trains all weights.")
    flow: Flow | None = Field(
        default=None,
        description="The flow-matching sampler of families 'pi0' and 'pi05' (only theirs); "
        "unset: the family's defaults.",
    )
    value_head: bool = Field(
        default=False,
        description="Add a value head, the critic of an algorithm that trains one (RLinf's "
        "gae); refused where no target's algorithm does.",
    )
    class_path: ClassPath | None = Field(
        default=None,
        description="`module:Class` of your torch module; required when family is 'custom'. "
        "A module inside the generated package is scaffolded once; it may not be one vlagen "
        "generates (`<package>.spec`, `<package>.env...`).",
    )

    @model_validator(mode="before")
    @classmethod
    def _backbone_vocabulary(cls, data: Any) -> Any:
        """An unset `vocab_size` is the backbone's default (its embedding rows for Qwen)."""
        if isinstance(data, dict) and "vocab_size" not in data:
            name = data.get("backbone", "llava")
            decl = BACKBONES.get(name) if isinstance(name, str) else None
            if decl is not None:
                return {**data, "vocab_size": decl.default_vocab_size}
        return data

    @model_validator(mode="after")
    def _custom_needs_class(self) -> Model:
        if (self.family == "custom") != (self.class_path is not None):
            raise ValueError("`class_path` is required for family 'custom' and only for it")
        return self

    @model_validator(mode="after")
    def _flow_only_for_flow_families(self) -> Model:
        if self.flow is not None and self.family not in ("pi0", "pi05"):
            raise ValueError("`flow` is for families 'pi0' and 'pi05' only")
        return self

    @property
    def prompt_fields(self) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(self.prompt_template) if f is not None}
