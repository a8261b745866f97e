"""The model part of the plan: how the generated policy core decodes, what it feeds the
model, and the statistics it holds as literals."""

from __future__ import annotations

from dataclasses import dataclass

from .actionstats import ActionStats, symmetric
from .backbones import BACKBONES, BackboneDecl
from .families import FAMILIES, FamilyDecl
from .gripper import CONVENTIONS, GripperConvention, has_gripper
from .presets import PRESETS
from .spec import Flow, Lora, Model, Spec, scaffold_path

__all__ = ["ModelPlan", "make_model_plan", "resolve_model"]

TORCH_REQUIREMENT = "torch>=2.4,<3"
TRANSFORMERS_REQUIREMENT = "transformers>=4.56,<6"  # `dtype=` in from_pretrained
PEFT_REQUIREMENT = "peft>=0.13"
SAFETENSORS_REQUIREMENT = "safetensors>=0.4"  # openpi's PyTorch checkpoints
REFERENCE_INSTALL = "siirl==0.2.0"  # vendors OpenVLA's and OpenVLA-OFT's modeling code


@dataclass(frozen=True)
class FlowPlan:
    """A flow family's sampler and shapes, the spec's or the family's defaults."""

    steps: int
    noise_method: str
    noise_level: float
    joint_logprob: bool
    ignore_last: bool
    horizon: int
    action_dim: int
    max_tokens: int
    tokenizer: str
    train_expert_only: bool
    delta_actions: int  #: leading action dims predicted relative to the state
    state_token: bool
    quantile_stats: bool
    adaptive_norms: bool  #: π0.5's time-conditioned expert norms
    tiny_stats: dict  #: the ``norm_stats`` a tiny checkpoint holds (openpi's format)
    tiny_stats_doc: str  #: where they come from, in words
    asset: str  #: the folder under the checkpoint that holds ``norm_stats.json``
    tiny_patch: int  #: the tiny checkpoint's SigLIP patch: the largest that tiles the image


def openpi_tiny_stats(spec: Spec) -> tuple[dict, str]:
    """The ``norm_stats`` a flow family's tiny checkpoint of ``spec`` holds, and their
    source in words: a real checkpoint's where the preset has them at the spec's widths,
    else made-up ones (actions +-0.75, the gripper +-1; the state +-1)."""
    preset = PRESETS[spec.env.preset]
    dim, state_dim = spec.model.action.dim, spec.env.state_dim or 0
    real = preset.openpi_stats
    if real and len(real["actions"]["q01"]) == dim and len(real["state"]["q01"]) == state_dim:
        source = "openpi's π0.5 LIBERO statistics (see vlagen.actionstats.OPENPI_LIBERO)"
        return {k: {s: list(v) for s, v in part.items()} for k, part in real.items()}, source
    low, high, _ = symmetric(dim)

    def made_up(q01: list[float], q99: list[float]) -> dict[str, list[float]]:
        mean = [(a + b) / 2 for a, b in zip(q01, q99, strict=True)]
        std = [(b - a) / 4 for a, b in zip(q01, q99, strict=True)]
        return {"mean": mean, "std": std, "q01": q01, "q99": q99}

    stats = {"actions": made_up([*low[:-1], -1.0], [*high[:-1], 1.0])}
    if state_dim:
        stats["state"] = made_up([-1.0] * state_dim, [1.0] * state_dim)
    return stats, "made-up statistics: +-0.75 on every action channel, +-1 on the last"


def flow_plan(spec: Spec) -> FlowPlan | None:
    """The flow sampler of ``spec``'s model, its family's defaults filled in; None for a
    token family."""
    model = spec.model
    defaults = FAMILIES[model.family].flow
    if defaults is None:
        return None
    flow = model.flow or Flow()
    stats, doc = openpi_tiny_stats(spec)
    return FlowPlan(
        steps=flow.steps or defaults.steps,
        noise_method=flow.noise_method,
        noise_level=flow.noise_level,
        joint_logprob=flow.joint_logprob,
        ignore_last=flow.ignore_last,
        horizon=flow.horizon or defaults.horizon,
        action_dim=flow.action_dim,
        max_tokens=flow.max_tokens or defaults.max_tokens,
        tokenizer=flow.tokenizer,
        train_expert_only=flow.train_expert_only,
        delta_actions=defaults.delta(flow.delta_actions, spec.env.preset),
        state_token=defaults.state_token,
        adaptive_norms=defaults.adaptive_norms,
        quantile_stats=defaults.quantile_stats,
        tiny_stats=stats,
        tiny_stats_doc=doc,
        asset=PRESETS[spec.env.preset].openpi_asset or "vlagen",
        tiny_patch=next(p for p in (32, 28, 16, 14, 8, 4, 2, 1) if model.image_size[0] % p == 0),
    )


@dataclass(frozen=True)
class ModelPlan:
    family: FamilyDecl
    backbone: BackboneDecl
    chunk: int
    dim: int
    bins: int  #: action tokens per dimension: the choices of a discrete env action
    discrete: bool  #: the env action is discrete: token ``vocab_end - 1 - k`` is choice ``k``
    vocab_end: int  #: one past the last action token id (bins for a custom module)
    cameras: tuple[str, ...]  #: env cameras the model sees, in order
    image_size: tuple[int, int]
    image_mean: tuple[float, ...] | None  #: None: read the checkpoint's processor config
    image_std: tuple[float, ...] | None
    action_stats: tuple[tuple[float, ...], tuple[float, ...], tuple[bool, ...]] | None
    unnorm_key: str | None
    state_dim: int  #: 0 unless the prompt carries the state
    state_stats: tuple[tuple[float, ...], tuple[float, ...], tuple[bool, ...]] | None
    value_head: bool
    lora: Lora | None
    custom_module: str | None  #: ``module`` of `model.class_path`
    custom_class: str | None
    scaffold: str | None  #: package-relative path of the custom module vlagen starts for you
    gripper: GripperConvention | None  #: the checkpoint's, where the action has a gripper
    tiny_stats: ActionStats  #: what a tiny checkpoint holds under ``unnorm_key``
    tiny_stats_doc: str  #: where they come from, in words
    action_prefix: tuple[int, ...]  #: ids between the prompt and the action tokens
    lowercase_task: bool  #: the task text is lowercased into the prompt
    center_crop: float | None  #: area fraction of the centre crop; None: the whole frame
    flow: FlowPlan | None = None  #: a flow family's sampler

    @property
    def tokens(self) -> int:
        """Action tokens per decision."""
        return self.chunk * self.dim

    @property
    def processor(self) -> bool:
        """Token family on a backbone whose own image processor prepares the frames (Qwen)."""
        return self.family.token_based and self.backbone.processor

    @property
    def image_tokens(self) -> int:
        """Language tokens per camera image of a processor backbone (merged patches)."""
        height, width = self.image_size
        side = self.backbone.image_multiple
        return (height // side) * (width // side)

    @property
    def image_grid(self) -> tuple[int, int, int]:
        """``image_grid_thw`` row of every camera image of a processor backbone: one frame of
        ``image_size`` in unmerged patches, (1, height / patch, width / patch)."""
        height, width = self.image_size
        patch = self.backbone.patch
        return (1, height // patch, width // patch)

    @property
    def reference(self) -> bool:
        """Whether the package tests the policy core against the checkpoints' own code
        (:attr:`FamilyDecl.reference`): a Prismatic checkpoint takes no state tokens, and its
        vocabulary holds the token its code appends to every prompt (29871)."""
        return (
            self.family.reference is not None
            and not self.processor
            and not self.state_dim
            and self.action_prefix == self.backbone.action_prefix
        )

    @property
    def qwen_reference(self) -> bool:
        """Whether the package tests the policy core against transformers' own class of a
        processor backbone (Qwen-VL) and its ``generate``: autoregressive decoding only,
        transformers has no decoding over placeholders to compare a parallel one with."""
        return self.processor and self.decoding == "autoregressive"

    @property
    def test_installs(self) -> tuple[str, ...]:
        """What the model's tests import beside the ``test`` extra, installed ``--no-deps``."""
        return (REFERENCE_INSTALL,) if self.reference else ()

    @property
    def decoding(self) -> str:
        return self.family.decoding

    @property
    def modules(self) -> tuple[str, ...]:
        """The policy core's modules under ``model/``."""
        if self.flow is not None:
            return (
                "__init__",
                "__main__",
                "actions",
                "crop",
                "flow_steps",
                "inputs",
                "local",
                "network",
                "policy",
                "tiny",
            )
        loader = ("backbone", "tiny") if self.family.token_based else ("custom",)
        return (
            "__init__",
            "__main__",
            "action_tokens",
            "crop",
            "inputs",
            "local",
            "policy",
            *loader,
        )

    @property
    def templates(self) -> dict[str, str]:
        """Module → template stem under ``templates/package/src/model/``: a processor
        backbone (Qwen) has its own inputs and tiny checkpoint."""
        own = {"inputs": "inputs_qwen", "tiny": "tiny_qwen"} if self.processor else {}
        if self.flow is not None:
            own = {"policy": "policy_flow", "tiny": "tiny_flow"}
        return {name: own.get(name, name) for name in self.modules}

    @property
    def torch_requirement(self) -> str:
        return TORCH_REQUIREMENT

    @property
    def requirements(self) -> list[str]:
        reqs = [self.torch_requirement]
        if self.family.token_based or self.flow is not None:
            reqs.append(TRANSFORMERS_REQUIREMENT)
        if self.flow is not None:
            reqs.append(SAFETENSORS_REQUIREMENT)
        if self.lora is not None:
            reqs.append(PEFT_REQUIREMENT)
        return reqs


def resolve_model(spec: Spec) -> Model:
    """The model section with derivable defaults filled in: the cameras it sees, the
    checkpoint's gripper convention where the env's action has a gripper, and the key of its
    statistics where the preset says how real checkpoints key them (without one, a token
    family's policy would decode without statistics and siiRL look for a key no checkpoint
    has)."""
    model = spec.model
    update: dict = {}
    family, preset = FAMILIES[model.family], PRESETS[spec.env.preset]
    keyed = family.token_based and family.normalization and preset.stats_key
    unset = model.unnorm_key is None and model.action.normalization is None
    if keyed and spec.env.task_suite and unset:
        update["unnorm_key"] = preset.stats_key.format(suite=spec.env.task_suite)
    if FAMILIES[model.family].flow and "prompt_template" not in model.model_fields_set:
        update["prompt_template"] = "{task}"  # openpi prompts with the task text alone
    if model.cameras is None:
        cameras = spec.env.cameras
        main = next((c.name for c in cameras if c.role == "main"), cameras[0].name)
        update["cameras"] = [main]
        if FAMILIES[model.family].flow:  # openpi's base camera, then the others (the wrist)
            update["cameras"] += [c.name for c in cameras if c.name != main]
    if has_gripper(spec.env.action) and model.action.gripper is None:
        update["action"] = model.action.model_copy(update={"gripper": family.gripper})
    return model.model_copy(update=update) if update else model


def tiny_stats(spec: Spec) -> tuple[ActionStats, str]:
    """The action statistics a tiny checkpoint of ``spec`` carries, and their source in
    words: a real checkpoint's on the preset's task suite where vlagen has them, else
    made-up symmetric ones."""
    dim, preset = spec.model.action.dim, PRESETS[spec.env.preset]
    # the suite the statistics' key names (a checkpoint trained on one suite may be
    # evaluated on a variant of it), else the env's
    suites = [spec.env.task_suite or ""]
    if spec.model.unnorm_key and preset.stats_key:
        prefix, _, suffix = preset.stats_key.partition("{suite}")
        key = spec.model.unnorm_key
        if key.startswith(prefix) and key.endswith(suffix):
            suites.insert(0, key[len(prefix) : len(key) - len(suffix)])
    for suite in suites:
        real = preset.checkpoint_stats.get(suite)
        if real is not None and len(real[0]) == dim:
            return real, f"the real OpenVLA-OFT checkpoints' statistics on {suite}"
    return symmetric(dim), "made-up statistics, +-0.75 on every channel but the last"


def _stats(norm, dim: int):
    if norm is None:
        return None
    mask = norm.mask if norm.mask is not None else [True] * dim
    return tuple(norm.q01), tuple(norm.q99), tuple(mask)


def action_prefix(backbone: BackboneDecl, first_token: int) -> tuple[int, ...]:
    """The backbone's action prefix where its ids lie below the action tokens: a smaller
    vocabulary is not the one the prefix belongs to (a tiny test vocabulary)."""
    prefix = backbone.action_prefix
    return prefix if all(i < first_token for i in prefix) else ()


def center_crop(model: Model) -> float | None:
    """The area fraction of each frame's centre crop: the spec's, else its family's; None
    for the whole frame."""
    crop = model.center_crop
    if crop is None:
        crop = FAMILIES[model.family].center_crop
    return crop if crop is not None and crop < 1 else None


def make_model_plan(spec: Spec, package: str) -> ModelPlan:
    """The plan of a resolved spec's model (:func:`resolve_model` ran)."""
    model = spec.model
    family = FAMILIES[model.family]
    module, _, name = (model.class_path or "").partition(":")
    state_dim = (spec.env.state_dim or 0) if model.use_state else 0
    mean, std = model.image_mean, model.image_std
    stats, stats_doc = tiny_stats(spec)
    backbone = BACKBONES[model.backbone]
    tokenized = family.token_based
    return ModelPlan(
        family=family,
        backbone=backbone,
        chunk=model.action.chunk,
        dim=model.action.dim,
        bins=model.action.bins,
        discrete=spec.env.action.kind == "discrete",
        vocab_end=model.vocab_size if family.token_based else model.action.bins,
        cameras=tuple(model.cameras or ()),
        image_size=tuple(model.image_size),
        image_mean=tuple(mean) if mean is not None else None,
        image_std=tuple(std) if std is not None else None,
        action_stats=_stats(model.action.normalization, model.action.dim),
        unnorm_key=model.unnorm_key,
        state_dim=state_dim,
        state_stats=_stats(model.state_normalization, state_dim),
        value_head=model.value_head,
        lora=model.lora,
        custom_module=module or None,
        custom_class=name or None,
        scaffold=scaffold_path(model.class_path, package),
        gripper=CONVENTIONS[model.action.gripper] if model.action.gripper else None,
        tiny_stats=stats,
        tiny_stats_doc=stats_doc,
        action_prefix=action_prefix(backbone, model.vocab_size - model.action.bins)
        if tokenized
        else (),
        lowercase_task=family.lowercase_task,
        center_crop=center_crop(model),
        flow=flow_plan(spec),
    )
