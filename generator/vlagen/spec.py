"""The spec: one YAML file describing a VLA model, an environment and the target frameworks.

Every model forbids unknown keys and documents every field, so ``vlagen schema`` is the full
reference. Checks that involve one field live here as types; checks across fields (an action
chunk the env cannot take, a model family a framework cannot train) live in :mod:`vlagen.checks`
so that all of them are reported together with their positions in the file.
"""

from __future__ import annotations

import keyword
import math
import re
import string
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from .backbones import BACKBONES

SCHEMA_VERSION = 1

_DIST_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VERSION = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")
_SPDX = re.compile(r"^[A-Za-z0-9.+-]+( (AND|OR|WITH) [A-Za-z0-9.+-]+)*$")


SCHEMA_FILE = "vlagen.schema.json"


MAX_TEXT = 10_000
"""Longest text any spec field takes (a prompt template is a few hundred characters)."""
MAX_NAME = 100
"""Longest name: identifiers, and the distribution and package names, whose files
(``<name>-<version>.dist-info``, ``src/<package>/``) must fit a file system's 255 bytes."""
MAX_VERSION = 64
"""Longest version text (``<name>-<version>-py3-none-any.whl`` fits 255 bytes)."""
MAX_BINS = 4096
"""Most action tokens per dimension, and so most choices of a discrete action channel."""


class StrictModel(BaseModel):
    """Base of every spec section: unknown keys are errors, NaN and infinity are refused,
    and text is printable UTF-8 (it will land in source files)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    @field_validator("*", mode="after")
    @classmethod
    def _printable_text(cls, value: Any) -> Any:
        for text in value if isinstance(value, list | tuple) else (value,):
            if isinstance(text, str):
                _check_text(text)
        return value


def _check_text(text: str) -> None:
    if len(text) > MAX_TEXT:
        raise ValueError(f"is {len(text):,} characters long; at most {MAX_TEXT:,} are allowed")
    for ch in text:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            raise ValueError("contains a lone surrogate, which is not valid Unicode text")
        if (code < 0x20 and ch not in "\t\n") or 0x7F <= code < 0xA0:
            raise ValueError(f"contains the control character U+{code:04X}")


def _identifier(value: str) -> str:
    _short_name(value)
    if not _IDENT.match(value) or keyword.iskeyword(value):
        raise ValueError(
            f"{value!r} is not a valid Python identifier "
            "(letters, digits and underscores, not starting with a digit, not a keyword)"
        )
    return value


def _package_name(value: str) -> str:
    _identifier(value)
    if value != value.lower():
        raise ValueError(f"{value!r}: an import package name is lowercase (PEP 8)")
    return value


def _short_name(value: str, limit: int = MAX_NAME) -> str:
    if len(value) > limit:
        raise ValueError(f"is {len(value)} characters long; at most {limit} are allowed")
    return value


def _dist_name(value: str) -> str:
    _short_name(value)
    if not _DIST_NAME.match(value):
        raise ValueError(
            f"{value!r} is not a valid distribution name (letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit)"
        )
    return value


def _suite_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9]\w*", value, flags=re.ASCII):
        raise ValueError(
            f"{value!r} is not a suite name (ASCII letters, digits and '_', starting with a "
            "letter or digit): frameworks put it in file names, env ids and the regexes "
            "that read them back"
        )
    return value


def _single_line(value: str) -> str:
    if any(sep in value for sep in ("\n", "\r", "\u2028", "\u2029")):
        raise ValueError("must be a single line")
    return value


def _version_text(value: Any) -> Any:
    """YAML reads ``0.2`` as a float; a version written that way is ambiguous (0.10 == 0.1)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f"write the version as a quoted string, e.g. '{value}' "
            "(YAML reads an unquoted version as a number: 0.10 would become 0.1)"
        )
    return value


def _pep440(value: str) -> str:
    _short_name(value, MAX_VERSION)
    if not _VERSION.match(value):
        raise ValueError(f"{value!r} is not a PEP 440 version such as '0.1.0'")
    return value


def _class_path(value: str) -> str:
    """``module.path:Class``: dotted identifiers, each short enough to be a file name."""
    module, colon, name = value.partition(":")
    parts = module.split(".")
    expected = "expected `module.path:Class`, e.g. 'my_pkg.policy:MyPolicy'"
    if not colon or ":" in name:
        raise ValueError(f"{value!r} is not a class path; {expected}")
    bad = next((p for p in parts if not p.isidentifier() or keyword.iskeyword(p)), None)
    if bad is not None:
        what = "an empty part" if not bad else f"{bad!r}, which is not a Python identifier"
        raise ValueError(f"{module!r} is not a valid dotted module path: it has {what}; {expected}")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid class name (a Python identifier); {expected}")
    long = next((p for p in [*parts, name] if len(p.encode()) > MAX_NAME), None)
    if long is not None:
        raise ValueError(f"{long[:20]!r}... is longer than {MAX_NAME} bytes; {expected}")
    return value


Identifier = Annotated[str, AfterValidator(_identifier)]
PackageName = Annotated[str, AfterValidator(_package_name)]
DistName = Annotated[str, AfterValidator(_dist_name)]
OneLine = Annotated[str, AfterValidator(_single_line)]
VersionText = Annotated[str, BeforeValidator(_version_text)]
PositiveInt = Annotated[int, Field(ge=1)]


def Count(most: int) -> Any:
    """An int from 1 to ``most``."""
    return Annotated[int, Field(ge=1, le=most)]


Pixels = Annotated[int, Field(ge=1, le=8192)]  # 8K; cameras are 64-1080, VLAs take 224-448
Gain = Annotated[float, Field(ge=-1000.0, le=1000.0)]
Metres = Annotated[float, Field(ge=-10_000.0, le=10_000.0)]
ClassPath = Annotated[str, AfterValidator(_class_path)]


def scaffold_path(class_path: str | None, package: str) -> str | None:
    """The package-relative file vlagen starts for a ``module:Class`` inside ``package``
    (``pkg/sim.py``), or ``None`` for a class outside it (or none)."""
    module = (class_path or "").partition(":")[0]
    return module.replace(".", "/") + ".py" if module.startswith(f"{package}.") else None


#: A declared target's framework. Which names exist is the target registry's to say, which
#: sits above the spec: :mod:`vlagen.load` checks them (and :mod:`vlagen.schema` lists them).
Framework = Annotated[str, WithJsonSchema({"title": "Framework", "type": "string"})]


class Project(StrictModel):
    """The generated Python distribution."""

    name: DistName = Field(
        description="Distribution name (pip install NAME), also the default output directory; "
        "at most 100 characters."
    )
    package: PackageName | None = Field(
        default=None,
        description="Import package name; defaults to `name` lowercased with '-' and '.' as '_'; "
        "at most 100 characters.",
    )
    version: Annotated[VersionText, AfterValidator(_pep440)] = Field(
        default="0.1.0", description="Version of the generated distribution (PEP 440)."
    )
    description: Annotated[OneLine, Field(max_length=512)] = Field(
        default="",
        description="One-line summary for the package (at most 512 characters, PyPI's limit).",
    )
    license: Annotated[str, Field(pattern=_SPDX.pattern, max_length=200)] = Field(
        default="Apache-2.0", description="SPDX license expression of the generated package."
    )

    @property
    def import_name(self) -> str:
        """The import package name, given or derived from the distribution name."""
        return self.package or re.sub(r"[-.]+", "_", self.name).lower()


class Normalization(StrictModel):
    """Per-dimension statistics, OpenVLA style: values in [q01, q99] map to [-1, 1] on the
    dimensions where `mask` is true (the gripper usually is not). For actions they are in the
    env's canonical units ([-1, 1]; the env core scales those to the simulator), except the
    gripper, which is in the checkpoint's own convention (`model.action.gripper`)."""

    q01: Annotated[list[float], Field(max_length=4096)] = Field(
        description="1st percentile of each dimension."
    )
    q99: Annotated[list[float], Field(max_length=4096)] = Field(
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
    bins: Annotated[int, Field(ge=2, le=MAX_BINS)] = Field(
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
    dropout: Annotated[float, Field(ge=0.0, lt=1.0)] = Field(
        default=0.0, description="Dropout on the LoRA path."
    )
    target_modules: Annotated[list[str], Field(max_length=256)] | Literal["all-linear"] = Field(
        default="all-linear", description="Module names to adapt (at most 256), or 'all-linear'."
    )


class Model(StrictModel):
    """The vision-language-action policy."""

    name: OneLine = Field(description="Human-readable model name, used in logs and READMEs.")
    family: Literal["openvla", "openvla_oft", "waypoint", "custom"] = Field(
        description="How actions are decoded: OpenVLA autoregressive tokens, OpenVLA-OFT "
        "parallel chunks, driving waypoints, or your own module."
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
    vocab_size: Annotated[int, Field(ge=2, le=2**24)] = Field(
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
    image_mean: Annotated[list[float], Field(max_length=96)] | None = Field(
        default=None,
        description="Per-channel pixel mean after scaling to [0, 1]; default: the "
        "checkpoint's preprocessor_config.json. Several triples stack fused backbones.",
    )
    image_std: Annotated[list[float], Field(max_length=96)] | None = Field(
        default=None,
        description="Per-channel pixel std, paired with `image_mean` (3 per image, "
        "at most 32 images).",
    )
    center_crop: Annotated[float, Field(gt=0, le=1)] | None = Field(
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

    @property
    def prompt_fields(self) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(self.prompt_template) if f is not None}


class Camera(StrictModel):
    """One camera; observations carry it as uint8 [num_envs, height, width, 3]."""

    name: Identifier = Field(description="Camera name, e.g. 'agentview' or 'front'.")
    height: Pixels = Field(description="Image height in pixels; 1 to 8192.")
    width: Pixels = Field(description="Image width in pixels; 1 to 8192.")
    role: Literal["main", "wrist", "extra"] = Field(
        default="main",
        description="How frameworks see it: RLinf's main_images / wrist_images / "
        "extra_view_images.",
    )


def _one_for_all(value: Any) -> Any:
    """A single number is a list of one, which every channel shares."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return [value] if number else value


_BOUND_SCHEMA = {"type": "number", "minimum": -1e9, "maximum": 1e9}
ControlBound = Annotated[float, Field(ge=-1e9, le=1e9)]
ControlBounds = Annotated[
    list[ControlBound],
    Field(min_length=1, max_length=1024),
    BeforeValidator(_one_for_all),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "array", "items": _BOUND_SCHEMA, "minItems": 1, "maxItems": 1024},
                _BOUND_SCHEMA,
            ]
        }
    ),
]

_BOUNDS_DOC = (
    "the simulator's control bounds in its own units, per channel: a list of `dim` numbers, "
    "or one number (or a list of one) for every channel. The env core maps the policy's "
    "canonical [-1, 1] linearly onto [low, high], and `env.check` compares them with the "
    "backend's control_low/control_high. Default: the preset's ([-1, 1] on most; [0, 512] "
    "pixels on pusht). Yours to declare on presets gymnasium, custom and synthetic; on the "
    "others the simulator's bounds are known, and other values are an error. Each within "
    "±10^9."
)


def _low_field() -> Any:
    return Field(default=None, description=f"What -1 maps to: {_BOUNDS_DOC}")


def _high_field() -> Any:
    return Field(default=None, description=f"What +1 maps to: {_BOUNDS_DOC}")


class ContinuousAction(StrictModel):
    """Continuous controls, scaled from [-1, 1] to the backend's bounds (`low`, `high`)."""

    kind: Literal["continuous"] = Field(description="Selects this action kind.")
    dim: Count(1024) = Field(description="Number of control channels; 1 to 1024.")
    low: ControlBounds | None = _low_field()
    high: ControlBounds | None = _high_field()


class DeltaEEAction(StrictModel):
    """Delta end-effector pose plus a gripper channel (LIBERO, ManiSkill pd_ee_delta_pose),
    scaled from [-1, 1] to the backend's bounds (`low`, `high`)."""

    kind: Literal["delta_ee"] = Field(description="Selects this action kind.")
    dim: Count(1024) = Field(default=7, description="6 pose deltas + 1 gripper by default.")
    binarize_gripper: bool = Field(
        default=True,
        description="Map the last channel, the canonical gripper (-1 = open, +1 = close, "
        "whatever the checkpoint's `model.action.gripper`), to the simulator's opening or "
        "closing command by its sign (0 and above closes). Without it the channel is scaled "
        "linearly, -1 to the opening command and +1 to the closing one. Which bound closes is "
        "the preset's: `high` for LIBERO (robosuite), gymnasium, synthetic and your own "
        "class, `low` for ManiSkill (its Panda's +1 opens); a class of yours whose gripper "
        "command is an opening width inverts it in its backend.",
    )
    low: ControlBounds | None = _low_field()
    high: ControlBounds | None = _high_field()


class PurePursuit(StrictModel):
    """Pure pursuit: steer toward the point `lookahead` metres along the waypoints; a
    proportional speed loop tracks the speed the waypoint spacing implies."""

    type: Literal["pure_pursuit"] = Field(description="Selects this controller.")
    lookahead: Annotated[float, Field(gt=0, le=1000)] = Field(
        default=6.0, description="Look-ahead distance in metres; at most 1000."
    )
    wheelbase: Annotated[float, Field(gt=0, le=100)] = Field(
        default=2.5, description="Vehicle wheelbase in metres; at most 100."
    )
    speed_gain: Annotated[float, Field(gt=0, le=1000)] = Field(
        default=1.0, description="Acceleration (m/s^2) per m/s of speed error; at most 1000."
    )


class PID(StrictModel):
    """Two PID loops: steering on the heading error to the next waypoint, acceleration on
    the speed error."""

    type: Literal["pid"] = Field(description="Selects this controller.")
    steer: tuple[Gain, Gain, Gain] = Field(
        default=(1.0, 0.0, 0.1),
        description="Steering gains [kp, ki, kd] (rad per rad); each within ±1000.",
    )
    speed: tuple[Gain, Gain, Gain] = Field(
        default=(1.0, 0.05, 0.0),
        description="Speed gains [kp, ki, kd] (m/s^2 per m/s); each within ±1000.",
    )


def _controller_by_name(value: Any) -> Any:
    """``controller: pid`` is short for ``controller: {type: pid}``."""
    return {"type": value} if isinstance(value, str) else value


Controller = Annotated[
    PurePursuit | PID, Field(discriminator="type"), BeforeValidator(_controller_by_name)
]


class WaypointAction(StrictModel):
    """Future waypoints in the ego frame (x forward, y left, metres; heading in radians).

    Backends that take trajectories (navsim) get them as they are; backends that take
    controls (highway, bench2drive) get them through the tracking `controller`."""

    kind: Literal["waypoints"] = Field(description="Selects this action kind.")
    num_waypoints: Count(1024) = Field(description="K waypoints per decision; 1 to 1024.")
    point_dim: Literal[2, 3] = Field(default=3, description="2 for (x, y), 3 for (x, y, heading).")
    low: Annotated[list[Metres], Field(max_length=3)] | None = Field(
        default=None,
        description="Lower end of each point dimension, what -1 maps to; "
        "default [-5, -20, -pi] (x, y, heading). Each within ±10000.",
    )
    high: Annotated[list[Metres], Field(max_length=3)] | None = Field(
        default=None,
        description="Upper end of each point dimension, what +1 maps to; default [60, 20, pi]. "
        "Each within ±10000.",
    )
    interval: Annotated[float, Field(gt=0, le=60)] = Field(
        default=0.5, description="Seconds between consecutive waypoints; at most 60."
    )
    controller: Controller = Field(
        default_factory=lambda: PurePursuit(type="pure_pursuit"),
        description="Tracking controller for backends that take controls: 'pure_pursuit' "
        "or 'pid', optionally with its parameters.",
    )

    @property
    def dim(self) -> int:
        return self.point_dim

    @property
    def bounds(self) -> tuple[list[float], list[float]]:
        """(low, high) per point dimension, defaults filled."""
        low = self.low if self.low is not None else WAYPOINT_LOW[: self.point_dim]
        high = self.high if self.high is not None else WAYPOINT_HIGH[: self.point_dim]
        return list(low), list(high)


WAYPOINT_LOW = [-5.0, -20.0, -math.pi]
WAYPOINT_HIGH = [60.0, 20.0, math.pi]


class DiscreteAction(StrictModel):
    """Discrete choices per channel, e.g. highway-env meta-actions."""

    kind: Literal["discrete"] = Field(description="Selects this action kind.")
    dim: Count(1024) = Field(default=1, description="Number of discrete channels; 1 to 1024.")
    choices: Annotated[int, Field(ge=2, le=MAX_BINS)] = Field(
        description="Choices per channel; 2 to 4096."
    )


EnvAction = Annotated[
    ContinuousAction | DeltaEEAction | WaypointAction | DiscreteAction,
    Field(discriminator="kind"),
]


class RewardTerm(StrictModel):
    """One term of the shaped reward; the reward is the weighted sum of all terms."""

    name: Identifier = Field(description="Term name, reported per episode.")
    weight: Annotated[float, Field(ge=-1e6, le=1e6)] = Field(
        default=1.0, description="Weight in the sum; within ±10^6."
    )
    source: Literal["env", "info", "success", "collision", "progress", "action_magnitude"] = Field(
        default="env",
        description="Where the value comes from: the backend's reward, an `info` key, or a "
        "built-in term.",
    )
    key: Annotated[str, Field(max_length=200)] | None = Field(
        default=None, description="The `info` key, for source 'info'."
    )

    @model_validator(mode="after")
    def _info_needs_key(self) -> RewardTerm:
        if (self.source == "info") != (self.key is not None):
            raise ValueError("`key` is required for source 'info' and only for it")
        return self


Preset = Literal[
    "synthetic",
    "gymnasium",
    "highway",
    "pusht",
    "libero",
    "maniskill",
    "navsim",
    "bench2drive",
    "custom",
]
Backend = Literal[
    "synthetic", "gymnasium", "libero", "maniskill", "navsim", "bench2drive", "custom"
]


class Gymnasium(StrictModel):
    """A gymnasium environment: what the `gymnasium` backend makes and where it finds the
    cameras and state. Presets on this backend (highway, pusht) fill it; fields given here
    replace the preset's."""

    id: str | None = Field(default=None, description="The id for `gymnasium.make`.")
    kwargs: dict[str, JsonValue] | None = Field(
        default=None, description="Keyword arguments for `gymnasium.make`."
    )
    cameras: Annotated[dict[str, str], Field(max_length=32)] | None = Field(
        default=None,
        description="Where each camera's image comes from: an observation key, or 'render' "
        "for `env.render()`.",
    )
    state_key: str | None = Field(
        default=None, description="Observation key holding the proprioceptive state."
    )
    import_module: str | None = Field(
        default=None,
        description="Module to import before `gymnasium.make` so the id is registered.",
    )


class Libero(StrictModel):
    """Settings of the LIBERO backend, for preset libero."""

    fast_render: bool = Field(
        default=False,
        description="Render without reflections (every material's reflectance set to 0 after "
        "the scene is built and after every reset, which reloads it; LIBERO's scenes already "
        "cast no shadows). Measured on a CPU (EGL on llvmpipe, two loaded cores) with two "
        "256x256 cameras: a step takes 0.52 to 0.64 of the time (639 ms to 333 ms), and the "
        "images differ by 0.59 of 255 on average (at most 134, in 1% of the pixel values: "
        "the table's and floor's reflections). Off by default: the images a "
        "pretrained checkpoint saw.",
    )


class ExtraObs(StrictModel):
    """An extra observation key beyond cameras and state, e.g. ego state or route command."""

    name: Identifier = Field(description="Observation key.")
    shape: Annotated[list[Annotated[int, Field(ge=1, le=65536)]], Field(max_length=8)] = Field(
        default_factory=list,
        description="Per-env shape; [] for a scalar. At most 8 dimensions of 1 to 65536.",
    )
    dtype: Literal["float32", "int64", "bool", "text"] = Field(
        default="float32", description="Element type; 'text' is one string per env."
    )


class Video(StrictModel):
    """Per-episode videos of one camera, written with imageio."""

    camera: Identifier = Field(description="The camera to record.")
    dir: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        default="videos",
        description="Output directory; a relative one is relative to the working directory "
        "of the process that steps the envs.",
    )
    fps: Count(1000) = Field(default=10, description="Frames per second; 1 to 1000.")
    format: Literal["mp4", "gif"] = Field(
        default="mp4", description="Container: mp4 needs imageio-ffmpeg, gif needs pillow."
    )
    max_envs: Count(65536) = Field(
        default=1, description="Record the first this many envs; 1 to 65536."
    )


def _remote_address(value: str) -> str:
    """``unix:///PATH`` (an absolute path) or ``tcp://HOST:PORT``."""
    if value.startswith("unix:///") and len(value) > len("unix:///"):
        return value
    host, sep, port = value.removeprefix("tcp://").rpartition(":")
    if value.startswith("tcp://") and sep and host and port.isdigit() and 0 < int(port) < 65536:
        return value
    raise ValueError(f"an env server address is unix:///PATH or tcp://HOST:PORT, got {value!r}")


RemoteAddress = Annotated[OneLine, AfterValidator(_remote_address)]


class Env(StrictModel):
    """The simulation environment, as the policy sees it."""

    preset: Preset = Field(description="Conventions and loader of a known simulator.")
    backend: Backend | None = Field(
        default=None,
        description="What actually runs: the preset's simulator (default) or 'synthetic' "
        "(random observations of the same shapes, for tests).",
    )
    max_episode_steps: Count(1_000_000) = Field(
        description="Steps before an episode is truncated; 1 to 1,000,000."
    )
    cameras: list[Camera] = Field(
        min_length=1, max_length=32, description="Cameras in the observation; 1 to 32."
    )
    state_dim: Annotated[int, Field(ge=0, le=4096)] = Field(
        default=0, description="Proprioceptive state size; 0 for none, at most 4096."
    )
    task: OneLine = Field(
        description="Default task text, fed to the prompt's `{task}` placeholder."
    )
    task_suite: Annotated[str, AfterValidator(_suite_name)] | None = Field(
        default=None,
        description="Task suite of the preset, e.g. 'libero_spatial' (ASCII letters, digits and "
        "'_'): frameworks put it in file names and env ids. Required by preset libero.",
    )
    action: EnvAction = Field(description="What the backend takes, by `kind`.")
    rewards: list[RewardTerm] = Field(
        default_factory=lambda: [RewardTerm(name="env_reward")],
        max_length=256,
        description="Reward terms (at most 256); default: the backend's own reward.",
    )
    extra_obs: list[ExtraObs] = Field(
        default_factory=list,
        max_length=256,
        description="Observation keys beyond cameras and state (at most 256).",
    )
    workers: Annotated[int, Field(ge=0, le=1024)] | None = Field(
        default=None,
        description="Subprocess workers stepping the envs, images in shared memory; 0 steps "
        "them in-process, at most 1024. Default: the preset's (0 for cheap simulators).",
    )
    step_timeout_s: Annotated[float, Field(gt=0, le=3600)] = Field(
        default=60.0,
        description="Seconds a worker may take to step its envs (when workers > 0); past it "
        "the worker is terminated, the pool closed and the step raises BackendError naming "
        "the worker. At most 3600: a longer wait is no guard against a hung simulator.",
    )
    reset_timeout_s: Annotated[float, Field(gt=0, le=3600)] = Field(
        default=300.0,
        description="The same for reset and a worker's start-up (imports, building its envs), "
        "which take far longer than a step on some simulators (LIBERO builds a scene per "
        "task). At most 3600.",
    )
    remote: RemoteAddress | None = Field(
        default=None,
        description="The env server (`python -m <package>.env.serve`) every env of the "
        "package runs on: unix:///PATH or tcp://HOST:PORT. Default: envs run here. An "
        "environment variable named in the package's README overrides it at run time.",
    )
    gymnasium: Gymnasium | None = Field(
        default=None, description="The gymnasium env, for presets on the gymnasium backend."
    )
    libero: Libero | None = Field(default=None, description="LIBERO's settings, for preset libero.")
    backend_class: ClassPath | None = Field(
        default=None,
        description="`module:Class` of your backend (see the generated env/backends/base.py "
        "protocol); required by presets custom, navsim and bench2drive. A module inside the "
        "generated package is scaffolded once, every method laid out for the spec.",
    )
    video: Video | None = Field(default=None, description="Record episodes; none: off.")


#: A framework config key, dotted: ``section.sub.key``.
ConfigKey = Annotated[
    str, Field(pattern=r"^[A-Za-z_][\w-]*(\.[A-Za-z0-9_][\w-]*)*$", max_length=300)
]


class Target(StrictModel):
    """One RL framework to generate an adapter for."""

    framework: Framework = Field(description="The framework (`vlagen targets` lists them).")
    version: VersionText = Field(description="Its version line, e.g. '0.3'.")
    algorithm: Annotated[str, Field(max_length=100)] = Field(
        description="The RL algorithm, in the framework's own name."
    )
    config: Annotated[dict[ConfigKey, JsonValue], Field(max_length=256)] | None = Field(
        default=None,
        description="The framework's own config keys (dotted, e.g. "
        "`actor_rollout_ref.actor.clip_ratio_high`) this target sets beyond what vlagen "
        "derives from the spec, each checked against the framework's config snapshot; a key "
        "derived from `training` is refused, naming the field to change instead.",
    )


class Training(StrictModel):
    """How one update is gathered and taken, in the framework-neutral terms of RL for VLAs:
    every target derives its own knobs (its batch sizes, env counts, rounds) from these and
    says in its generated config where each came from."""

    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = Field(
        default=42, description="Global random seed; 0 to 2^32 - 1 (what numpy seeds take)."
    )
    learning_rate: Annotated[float, Field(gt=0, le=1.0)] = Field(
        default=1e-5, description="Actor learning rate; above 0, at most 1."
    )
    groups: Count(2**20) = Field(
        default=8,
        description="Initial conditions (a task and its start) per update; 1 to 2^20.",
    )
    group_size: Count(1024) = Field(
        default=8,
        description="Episodes run from each initial condition (a GRPO group); 1 to 1024.",
    )
    envs: Count(2**20) | None = Field(
        default=None,
        description="Envs stepping at once over the whole cluster; default groups x "
        "group_size, every episode of an update at once. 1 to 2^20.",
    )
    mini_batches: Count(4096) = Field(
        default=1,
        description="Optimizer steps per update: its groups split into this many mini-batches; "
        "1 to 4096.",
    )
    micro_batch_size_per_gpu: Count(65536) = Field(
        default=2,
        description="Decision rows per forward/backward pass on one GPU; 1 to 65536.",
    )

    @property
    def episodes(self) -> int:
        """Episodes per update."""
        return self.groups * self.group_size

    @property
    def in_flight(self) -> int:
        """Envs stepping at once: ``envs``, or every episode of an update."""
        return self.episodes if self.envs is None else self.envs


#: Keys of earlier specs, each with how to write it now (:func:`retired_key`).
RETIRED_KEYS: dict[tuple[str, str], str] = {
    ("env", "num_envs"): "env.num_envs counted the envs of one framework's env worker, so it "
    "meant a different number on each framework; write training.envs, the envs stepping at "
    "once over the whole cluster, or leave it out to run every episode of an update at once "
    "(training.groups x group_size)",
    ("training", "train_batch_size"): "training.train_batch_size is now training.groups (the "
    "initial conditions per update, the same number)",
    ("training", "mini_batch_size"): "training.mini_batch_size is now training.mini_batches, "
    "the optimizer steps per update (groups / mini_batch_size)",
}


def retired_key(section: str, key: str, data: Any) -> str | None:
    """What an earlier spec's ``section.key`` is written as now, with the numbers of
    ``data`` (the spec as parsed) where they can be computed; None for any other key."""
    message = RETIRED_KEYS.get((section, key))
    if message is None:
        return None
    training = data.get("training") if isinstance(data, dict) else None
    training = training if isinstance(training, dict) else {}
    value = training.get(key)
    if key == "train_batch_size" and isinstance(value, int):
        return f"{message}: write `groups: {value}`"
    size, groups = value, training.get("train_batch_size", training.get("groups"))
    whole = isinstance(size, int) and isinstance(groups, int) and size > 0 and groups % size == 0
    if key == "mini_batch_size" and whole:
        return f"{message}: write `mini_batches: {groups // size}`"
    return message


class Resources(StrictModel):
    """The cluster a training run uses."""

    nodes: Count(16384) = Field(default=1, description="Number of machines; 1 to 16384.")
    gpus_per_node: Count(64) = Field(default=8, description="GPUs on each machine; 1 to 64.")
    env_gpus_per_node: Count(64) | None = Field(
        default=None,
        description="GPUs of each machine that run simulators, where the framework places "
        "env workers apart from the policy (verl); default half of gpus_per_node, or all of "
        "them on env_nodes.",
    )
    env_nodes: Annotated[int, Field(ge=0, le=16384)] = Field(
        default=0,
        description="Machines of their own for the simulators (verl's disaggregated mode); "
        "0 runs them on the training machines. 0 to 16384.",
    )
    rollout_gpus: Count(2**20) | None = Field(
        default=None,
        description="GPUs of the whole cluster that serve generation apart from training "
        "(AReaL's inference servers; the rest train); default half of nodes x gpus_per_node.",
    )
    pipeline_stages: Count(8) = Field(
        default=1,
        description="Env/rollout pipeline stages: each env worker's envs are split into this "
        "many groups that step while the policy acts for the others (verl); 1 to 8.",
    )


class Spec(StrictModel):
    """A vlagen spec: everything needed to generate an adapter package."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
        title="vlagen spec",
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    vlagen: Literal[1] = Field(description="Spec schema version; this vlagen reads 1.")
    project: Project = Field(description="The generated Python distribution.")
    model: Model = Field(description="The VLA policy.")
    env: Env = Field(description="The simulation environment.")
    targets: list[Target] = Field(
        min_length=1, max_length=16, description="Frameworks to generate for (1 to 16)."
    )
    training: Training = Field(default_factory=Training, description="RL hyper-parameters.")
    resources: Resources = Field(default_factory=Resources, description="Cluster resources.")

    @model_validator(mode="before")
    @classmethod
    def _one_token_per_choice(cls, data: Any) -> Any:
        """An unset `model.action.bins` of a discrete env action is `env.action.choices`:
        one action token per choice. A `bins` the spec sets is kept, and one that differs from
        the choices is a located error of :mod:`vlagen.checks`."""
        model = data.get("model") if isinstance(data, dict) else None
        env = data.get("env") if isinstance(data, dict) else None
        action = model.get("action") if isinstance(model, dict) else None
        env_action = env.get("action") if isinstance(env, dict) else None
        if not isinstance(action, dict) or "bins" in action or not isinstance(env_action, dict):
            return data
        choices = env_action.get("choices")
        valid = isinstance(choices, int) and not isinstance(choices, bool) and choices >= 2
        if env_action.get("kind") != "discrete" or not valid or choices > MAX_BINS:
            return data  # an invalid `choices` is its own field error
        return {**data, "model": {**model, "action": {**action, "bins": choices}}}
