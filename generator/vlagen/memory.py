"""The memory plan: what each GPU holds under a target's generated settings, and whether
that fits the spec's ``resources.gpu_memory_gb``.

A target says how its framework places the actor, the rollout's copy of the weights and the
env workers on GPUs (:class:`Placement`, read from its generated config by the target's
``placement``); this module sizes each figure from the checkpoint users start from on the
spec's backbone (:class:`~vlagen.backbones.ModelShape`) with standard formulas, in GB
(10^9 bytes):

- weights, gradients and optimizer state: parameters x bytes of the dtype the framework
  holds them in, divided over the GPUs FSDP shards them over; AdamW keeps two states per
  trainable parameter, in the trainable weights' dtype (``torch.optim.AdamW``). Gradients
  accumulated under FSDP's ``no_sync()`` are whole, in the compute dtype: torch's FSDP
  reduce-scatters a flat parameter's gradient only outside it (``_post_backward_hook``).
- activations: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  Transformer Models", eq. 1: a layer stores ``s * b * h * (34 + 5 * a * s / h)`` bytes in
  16 bits (``s`` tokens, ``b`` rows, ``h`` hidden size, ``a`` heads); flash-attention and
  SDPA kernels keep no ``s x s`` scores, which drops the ``5 * a * s / h`` term; with full
  gradient checkpointing a layer keeps its input, ``2 * s * b * h``, and one layer's full set
  is rebuilt at a time. The vision tower counts where it trains (full fine-tuning, or LoRA on
  every linear layer). Logits: what the target's loss reads, per row.
- the rollout's weights: a copy of its own, the actor's gathered for generation, or an
  inference server's share of its GPU, as the framework does; a KV cache where the family
  decodes one token at a time.
- envs: the preset's GPU memory per env (:attr:`~vlagen.presets.PresetDecl.env_gpu_gb`)
  times the envs on the GPU.
- what else a framework puts on the GPU (:attr:`Gpu.extra`: siiRL's video model and its
  trajectory buffer), sized by the target from that framework's code.
- CUDA contexts: :data:`CUDA_CONTEXT_GB` per process that runs PyTorch on the GPU.

The peak is the larger of two phases: while the actor trains and while the rollout
generates. Not counted: the allocator's fragmentation and caches, communication buffers,
the framework's own bookkeeping; so the plan warns, and does not refuse, when a spec does not
fit (see :attr:`MemoryPlan.warns`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .backbones import BACKBONES, ModelShape
from .families import FAMILIES

if TYPE_CHECKING:
    from .spec import Spec

__all__ = [
    "COPY",
    "CUDA_CONTEXT_GB",
    "GATHERED",
    "ROOT",
    "SERVER",
    "Figure",
    "Gpu",
    "GpuPlan",
    "Logits",
    "MemoryPlan",
    "Placement",
    "Rollout",
    "Tokens",
    "Training",
    "activation_bytes",
    "image_tokens",
    "memory_plan",
]

GB = 1e9
#: A process's CUDA context (the runtime, cuBLAS and NCCL handles) before any tensor: about
#: 0.5 GB on current GPUs with CUDA's lazy module loading; vlagen's allowance.
CUDA_CONTEXT_GB = 0.5
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
_DTYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "half": "float16"}
#: The value head's layers (``ValueHead`` in the package's policy): hidden -> 512 -> 128 -> 1.
VALUE_HEAD = (512, 128)

#: How the rollout holds its weights (:attr:`Rollout.kind`).
COPY = "copy"  #: a model of its own, loaded beside the actor's
GATHERED = "gathered"  #: the actor's FSDP weights, all gathered while it generates
ROOT = "root"  #: the actor's FSDP weights, the root unit gathered, the layers in turn
SERVER = "server"  #: an inference server taking a fixed share of its GPU


def dtype_name(value: object) -> str:
    """``bfloat16`` / ``float16`` / ``float32`` for a config's spelling of a dtype."""
    text = str(value).lower().removeprefix("torch.")
    return _DTYPE_NAMES.get(text, text)


def dtype_bytes(value: object) -> int:
    return DTYPE_BYTES.get(dtype_name(value), 4)


@dataclass(frozen=True)
class Tokens:
    """One decision row's language-model sequence, as the target pads it."""

    images: int  #: image tokens (or placeholders) of the cameras the model sees
    text: int  #: prompt text, as the target pads it
    actions: int  #: action tokens

    @property
    def total(self) -> int:
        return self.images + self.text + self.actions

    @property
    def text_md(self) -> str:
        return (
            f"{self.total} tokens ({self.images} image, {self.text} prompt, {self.actions} action)"
        )


@dataclass(frozen=True)
class Logits:
    """What the target's loss computes over one row: ``positions`` x ``width`` values of
    ``size`` bytes (counted twice: the values and their log-softmax)."""

    positions: int
    width: int
    size: int
    why: str


@dataclass(frozen=True)
class Training:
    """The actor on one GPU, as the generated config sets it."""

    shards: int  #: GPUs FSDP shards weights, gradients and optimizer state over
    shard_how: str  #: what shards them (``FSDP full_shard, actor.fsdp_config...``)
    weights: str  #: dtype of the parameters as held, the ones AdamW steps
    weights_key: str  #: the config key (or framework default) that sets it
    compute: str  #: dtype the forward and backward compute in
    all_grads: bool  #: gradients for every parameter, frozen ones too
    grads_why: str
    rows: int  #: decision rows per forward/backward pass
    rows_key: str
    tokens: Tokens
    checkpointing: bool
    checkpointing_key: str
    attention: str  #: the attention kernel (``eager``: scores materialized)
    logits: Logits
    #: weights and optimizer state leave the GPU while the rollout generates
    offload: bool = False
    #: how to turn gradient checkpointing on in the target's config block; None: no way
    checkpointing_lever: str | None = None
    #: why the gradients stay unsharded between micro-batches (accumulated under FSDP's
    #: ``no_sync()``); None: each micro-batch's are reduce-scattered to the shards
    unsharded_grads: str | None = None
    unsharded_lever: str = ""  #: how to keep them sharded, in the target's config block


@dataclass(frozen=True)
class Rollout:
    """The rollout on one GPU: how it holds weights and how many sequences it runs."""

    kind: str  #: :data:`COPY`, :data:`GATHERED`, :data:`ROOT` or :data:`SERVER`
    dtype: str  #: dtype of the weights it holds
    rows: int  #: sequences it decodes at once on this GPU
    tokens: Tokens | None  #: one sequence's prompt and actions, as it runs them
    why: str  #: the framework's code that holds them so
    offloaded: bool = False  #: its copy leaves the GPU while the actor trains
    fraction: float = 0.0  #: :data:`SERVER`: the share of the GPU it takes
    offload_lever: str | None = None  #: how to offload its copy in the config block


@dataclass(frozen=True)
class Gpu:
    """One kind of GPU in a target's placement, and what runs on each."""

    role: str  #: what runs there (``the actor, rollout and env workers``)
    count: int  #: GPUs of this kind in the cluster
    training: Training | None = None
    rollout: Rollout | None = None
    envs: float = 0.0  #: envs stepping on each (the most any holds)
    processes: int = 1  #: processes with a CUDA context on each
    #: What else the framework puts on each, sized by the target from its own code (siiRL's
    #: video model and trajectory buffer): no formula here fits every framework's extras.
    extra: tuple[Figure, ...] = ()


@dataclass(frozen=True)
class Placement:
    """How a target's framework places its workers, read from its generated config."""

    gpus: tuple[Gpu, ...]
    how: str  #: one sentence: the placement and the framework code behind it


@dataclass(frozen=True)
class Figure:
    name: str
    gb: float
    why: str
    training: bool = True  #: held while the actor trains
    rollout: bool = True  #: held while the rollout generates
    lever: str = ""  #: what in the spec lowers it

    @property
    def held(self) -> str:
        """When it is held: ``throughout``, ``training`` or ``generating``."""
        if self.training and self.rollout:
            return "throughout"
        return "training" if self.training else "generating"


@dataclass(frozen=True)
class GpuPlan:
    """The figures of one kind of GPU, and the peak over the two phases."""

    gpu: Gpu
    figures: tuple[Figure, ...]
    capacity: float  #: GB of each GPU (``resources.gpu_memory_gb``)
    #: GB the weights need inside a server's fixed share, and that share (SERVER only)
    pool: tuple[float, float] | None = None

    @property
    def training_gb(self) -> float:
        return sum(f.gb for f in self.figures if f.training)

    @property
    def rollout_gb(self) -> float:
        return sum(f.gb for f in self.figures if f.rollout)

    @property
    def peak_gb(self) -> float:
        return max(self.training_gb, self.rollout_gb)

    @property
    def phase(self) -> str:
        """When the peak is reached."""
        if all(f.held == "throughout" for f in self.figures):
            return "throughout"
        return "while training" if self.training_gb >= self.rollout_gb else "while generating"

    @property
    def fits(self) -> bool:
        pool_fits = self.pool is None or self.pool[0] <= self.pool[1]
        return self.peak_gb <= self.capacity and pool_fits

    @property
    def label(self) -> str:
        each = "the GPU" if self.gpu.count == 1 else f"each of the {self.gpu.count} GPUs"
        return f"{each} holding {self.gpu.role}"

    @property
    def title(self) -> str:
        """:attr:`label` starting a sentence."""
        return self.label[0].upper() + self.label[1:]


@dataclass(frozen=True)
class MemoryPlan:
    """What each GPU holds under one target's generated settings."""

    title: str  #: the target (``RLinf 0.3``)
    model: str  #: the checkpoint sized, and its parameters
    how: str  #: the placement, as :attr:`Placement.how`
    gpus: tuple[GpuPlan, ...]
    capacity: float
    unknown: str | None = None  #: why the model could not be sized (the figures omit it)

    @property
    def fits(self) -> bool:
        return all(g.fits for g in self.gpus)

    @property
    def warns(self) -> bool:
        """Whether a GPU's figures exceed it. A warning, not a refusal: the figures are
        estimates (not counted: fragmentation, communication buffers, the framework's
        bookkeeping), and a spec that does not fit still generates a package to read."""
        return not self.fits

    @property
    def text(self) -> str:
        """The warning: the GPU over its memory, its largest figures and what lowers them."""
        gpu = next(g for g in self.gpus if not g.fits)
        if gpu.pool is not None and gpu.pool[0] > gpu.pool[1]:
            return (
                f"{self.title}'s inference server cannot hold the weights: {gpu.pool[0]:.1f} GB "
                f"of weights in its share of the GPU, {gpu.pool[1]:.1f} GB of "
                f"resources.gpu_memory_gb {self.capacity:g}; a larger GPU, or a smaller model"
            )
        generating = gpu.phase == "while generating"
        held = [f for f in gpu.figures if (f.rollout if generating else f.training)]
        top = sorted(held, key=lambda f: -f.gb)[:3]
        levers = list(dict.fromkeys(f.lever for f in top if f.lever))
        return (
            f"{self.title} needs about {gpu.peak_gb:.1f} GB on {gpu.label} ({gpu.phase}), "
            f"more than resources.gpu_memory_gb {self.capacity:g}: the largest figures are "
            + ", ".join(f"{f.name} {f.gb:.1f} GB" for f in top)
            + ". An estimate (`vlagen targets fit` lists every figure with its assumption)"
            + ("; to lower it: " + "; ".join(levers) if levers else "")
            + "."
        )

    def lines(self) -> list[str]:
        """The plan as `vlagen targets fit` prints it, one figure a line."""
        out = [f"memory per GPU (an estimate; GB = 10^9 bytes) for {self.model}", self.how]
        if self.unknown:
            out.append(f"not counted: {self.unknown}")
        for gpu in self.gpus:
            verdict = "fits" if gpu.fits else "DOES NOT FIT"
            out.append(
                f"{gpu.label}: {gpu.peak_gb:.1f} GB at peak ({gpu.phase}) of "
                f"{self.capacity:g} GB (resources.gpu_memory_gb): {verdict}"
            )
            width = max((len(f.name) for f in gpu.figures), default=0)
            for f in gpu.figures:
                out.append(f"  {f.name:<{width}} {f.gb:6.2f} GB  {_when(f)}{f.why}")
        return out


def _when(figure: Figure) -> str:
    return "" if figure.held == "throughout" else f"({figure.held} only) "


def image_tokens(spec: Spec) -> int:
    """Language-model tokens of one decision's images: per camera the model sees, one per
    merged patch (Qwen-VL) or one per patch of the vision tower (Prismatic, 14 pixels)."""
    backbone = BACKBONES[spec.model.backbone]
    side = backbone.image_multiple if backbone.processor else backbone.shape.vision_patch
    height, width = spec.model.image_size
    return _cameras(spec) * (height // side) * (width // side)


def _cameras(spec: Spec) -> int:
    return len(spec.model.cameras or ()) or 1


def activation_bytes(
    tokens: int, rows: int, hidden: int, heads: int, *, eager: bool, size: int = 2
) -> float:
    """One transformer layer's stored activations without recomputation (Korthikanti et
    al. 2022, eq. 1: ``s b h (34 + 5 a s / h)`` in 16 bits), ``size`` bytes per value; a fused
    attention kernel (flash-attention, SDPA) keeps no ``s x s`` scores."""
    per_value = 34 + (5 * heads * tokens / hidden if eager else 0)
    return tokens * rows * hidden * per_value * size / 2


def stack_bytes(
    layers: int,
    tokens: int,
    rows: int,
    hidden: int,
    heads: int,
    *,
    eager: bool,
    size: int,
    checkpointed: bool,
) -> float:
    """``layers`` layers' activations: all stored, or with full checkpointing each layer's
    input (``2 s b h`` in 16 bits) and one layer's full set while it is recomputed."""
    layer = activation_bytes(tokens, rows, hidden, heads, eager=eager, size=size)
    if not checkpointed:
        return layers * layer
    return layers * tokens * rows * hidden * size + layer


def trainable_params(spec: Spec, shape: ModelShape) -> tuple[int, str]:
    """(parameters AdamW steps, what they are): every parameter, or LoRA's adapters, plus
    the value head."""
    model = spec.model
    head = 0
    if model.value_head:
        first, second = VALUE_HEAD
        head = shape.hidden * first + first + first * second + second + second + 1
    if model.lora is None:
        return shape.params + head, "every parameter (full fine-tuning)"
    lora = shape.lora_params(model.lora.rank, model.lora.target_modules)
    modules = model.lora.target_modules
    what = (
        "every linear layer"
        if modules == "all-linear"
        else "the language model's " + (", ".join(modules))
    )
    return lora + head, f"LoRA r{model.lora.rank} on {what}"


def _vision_trains(spec: Spec) -> bool:
    lora = spec.model.lora
    return lora is None or lora.target_modules == "all-linear"


def _params(n: float) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"


def memory_plan(spec: Spec, title: str, placement: Placement) -> MemoryPlan:
    """The memory plan of ``placement`` (a target's, ``title``) for ``spec``, resolved."""
    capacity = spec.resources.gpu_memory_gb
    family = FAMILIES[spec.model.family]
    env_gb, env_source = _env_gpu(spec)
    if not family.token_based:
        if family.flow is not None:
            what = f"a {family.name} model"
            unknown = (
                f"the model: vlagen does not size the {family.name} network yet (its weights, "
                "the expert's gradients and optimizer state, the prefix's cache); it counts "
                "the envs and CUDA contexts only"
            )
        else:
            what = "a custom model"
            unknown = (
                f"the model: your module ({spec.model.class_path}) is yours to size; vlagen "
                "counts the envs and CUDA contexts only"
            )
        gpus = tuple(
            GpuPlan(g, (*g.extra, *_common(g, env_gb, env_source)), capacity)
            for g in placement.gpus
        )
        return MemoryPlan(title, what, placement.how, gpus, capacity, unknown)
    shape = BACKBONES[spec.model.backbone].shape
    trainable, what = trainable_params(spec, shape)
    # the checkpoint's parameters and what the package adds to them: adapters, a value head
    total = shape.params + trainable - (shape.params if spec.model.lora is None else 0)
    model = (
        f"{shape.name}'s shape: {_params(shape.params)} parameters, the checkpoint users start "
        f"from on model.backbone {spec.model.backbone} (a smaller one needs less); it trains "
        f"{_params(trainable)}, {what}"
    )
    gpus = []
    for gpu in placement.gpus:
        figures = [
            *_training(spec, shape, gpu, total, trainable),
            *_rollout(spec, shape, gpu, total),
            *gpu.extra,
            *_common(gpu, env_gb, env_source),
        ]
        pool = None
        if gpu.rollout is not None and gpu.rollout.kind == SERVER:
            pool = (total * dtype_bytes(gpu.rollout.dtype) / GB, gpu.rollout.fraction * capacity)
        gpus.append(GpuPlan(gpu, tuple(figures), capacity, pool))
    return MemoryPlan(title, model, placement.how, tuple(gpus), capacity)


def _env_gpu(spec: Spec) -> tuple[float | None, str]:
    from .presets import PRESETS  # the presets import the spec models, which this needs not

    return PRESETS[spec.env.preset].env_gpu_gb


def _common(gpu: Gpu, env_gb: float | None, env_source: str) -> Iterable[Figure]:
    """The envs and CUDA contexts of ``gpu``."""
    if gpu.envs:
        envs = f"{gpu.envs:g} envs x "
        if env_gb is None:
            yield Figure("envs", 0.0, f"{envs}unknown, not counted: {env_source}")
        else:
            yield Figure(
                "envs",
                gpu.envs * env_gb,
                f"{envs}{env_gb:g} GB ({env_source})",
                lever="fewer envs at once (training.envs)",
            )
    if not gpu.processes:
        return
    yield Figure(
        "CUDA contexts",
        gpu.processes * CUDA_CONTEXT_GB,
        f"{gpu.processes} process(es) x {CUDA_CONTEXT_GB} GB (vlagen's allowance)",
    )


def _training(
    spec: Spec, shape: ModelShape, gpu: Gpu, total: int, trainable: int
) -> Iterable[Figure]:
    t = gpu.training
    if t is None:
        return
    size, held = dtype_bytes(t.weights), dtype_name(t.weights)
    over = f"sharded over {t.shards} GPUs ({t.shard_how})" if t.shards > 1 else "on one GPU"
    more = "more GPUs (resources.nodes, gpus_per_node)"
    if spec.model.lora is None:
        more += ", or LoRA (model.lora)"
    yield Figure(
        "weights",
        total * size / t.shards / GB,
        f"{_params(total)} parameters in {held} ({t.weights_key}), {over}",
        rollout=not t.offload,
        lever=more,
    )
    grads = total if t.all_grads else trainable
    sharded = grads * size / t.shards / GB
    if t.unsharded_grads:
        yield Figure(
            "gradients",
            grads * dtype_bytes(t.compute) / GB,
            f"{_params(grads)} in {dtype_name(t.compute)}, unsharded while accumulating: "
            f"{t.unsharded_grads}; {t.grads_why}",
            rollout=False,
            lever=f"{t.unsharded_lever} (then {sharded:.2f} GB, {over})",
        )
    else:
        yield Figure(
            "gradients",
            sharded,
            f"{_params(grads)} in {held}, {over}: {t.grads_why}",
            rollout=False,
            lever=more,
        )
    yield Figure(
        "optimizer",
        2 * trainable * size / t.shards / GB,
        f"AdamW's 2 states for {_params(trainable)} trainable parameters in {held}, {over}",
        rollout=not t.offload,
        lever=more,
    )
    compute = dtype_bytes(t.compute)
    if t.shards > 1:
        gathered = (shape.outside_layers + 2 * shape.layer_params) * compute
        gradient = ", and one layer's gradient before its reduce-scatter"
        if t.unsharded_grads:
            gradient = " (the gradients are already whole, above)"
        else:
            gathered += shape.layer_params * size  # a layer's unsharded gradient
        yield Figure(
            "FSDP gathered",
            gathered / GB,
            f"the unit outside the decoder layers ({_params(shape.outside_layers)}: "
            f"embeddings, output layer, vision tower) and two decoder layers "
            f"({_params(shape.layer_params)} each) unsharded in {dtype_name(t.compute)}"
            f"{gradient}",
            rollout=False,
        )
    yield from _activations(spec, shape, t)


def _activations(spec: Spec, shape: ModelShape, t: Training) -> Iterable[Figure]:
    eager = t.attention == "eager"
    size = dtype_bytes(t.compute)
    s, b = t.tokens.total, t.rows
    kernel = (
        "eager attention keeps the s x s scores" if eager else (f"{t.attention}: no s x s scores")
    )
    recompute = (
        f"gradient checkpointing on ({t.checkpointing_key}): each layer's input, 2sbh, and "
        "one layer rebuilt at a time"
        if t.checkpointing
        else f"no gradient checkpointing ({t.checkpointing_key}): every layer's sbh(34"
        + (" + 5as/h)" if eager else ")")
    )
    lever = f"fewer rows per micro-batch ({t.rows_key})"
    if not t.checkpointing and t.checkpointing_lever:
        lever += f", or gradient checkpointing ({t.checkpointing_lever})"
    yield Figure(
        "activations",
        stack_bytes(
            shape.layers,
            s,
            b,
            shape.hidden,
            shape.heads,
            eager=eager,
            size=size,
            checkpointed=t.checkpointing,
        )
        / GB,
        f"Korthikanti et al. 2022 over {shape.layers} layers: {b} rows ({t.rows_key}) x "
        f"{t.tokens.text_md} x hidden {shape.hidden}, in {dtype_name(t.compute)}; {kernel}; "
        f"{recompute}",
        rollout=False,
        lever=lever,
    )
    if _vision_trains(spec):
        height, width = spec.model.image_size
        patches = (height // shape.vision_patch) * (width // shape.vision_patch)
        images = _cameras(spec) * b
        vision = sum(
            stack_bytes(
                layers,
                patches,
                images,
                hidden,
                1,  # fused attention: no s x s scores, so heads do not count
                eager=False,
                size=size,
                checkpointed=t.checkpointing and shape.vision_checkpointed,
            )
            for layers, hidden in shape.vision_towers
        )
        towers = " + ".join(f"{n} layers x {w}" for n, w in shape.vision_towers)
        if t.checkpointing and shape.vision_checkpointed:
            kept = "checkpointed with the language model"
        elif t.checkpointing:
            kept = "all stored (gradient checkpointing does not reach it)"
        else:
            kept = "all stored"
        yield Figure(
            "vision activations",
            vision / GB,
            f"the same formula over the vision tower ({towers}), {images} images of "
            f"{patches} patches, fused attention, {kept}: it trains "
            + ("(full fine-tuning)" if spec.model.lora is None else "(LoRA on every linear layer)"),
            rollout=False,
            lever=f"fewer rows per micro-batch ({t.rows_key})",
        )
    lg = t.logits
    yield Figure(
        "logits",
        2 * b * lg.positions * lg.width * lg.size / GB,
        f"{b} rows x {lg.positions} positions x {lg.width} in {lg.size}-byte values, with "
        f"their log-softmax: {lg.why}",
        rollout=False,
    )


def _rollout(spec: Spec, shape: ModelShape, gpu: Gpu, total: int) -> Iterable[Figure]:
    r = gpu.rollout
    if r is None:
        return
    size, held = dtype_bytes(r.dtype), dtype_name(r.dtype)
    if r.kind == SERVER:
        yield Figure(
            "inference server",
            r.fraction * spec.resources.gpu_memory_gb,
            f"its static pool, {r.fraction:g} of the GPU, for {total * size / GB:.1f} GB of "
            f"weights in {held} and the KV cache: {r.why}",
        )
        return
    if r.kind == COPY:
        yield Figure(
            "rollout weights",
            total * size / GB,
            f"a full copy, {_params(total)} parameters in {held}: {r.why}",
            training=not r.offloaded,
            lever=r.offload_lever or "",
        )
    elif r.kind == GATHERED:
        yield Figure(
            "rollout weights",
            total * size / GB,
            f"the actor's {_params(total)} parameters, all gathered in {held}: {r.why}",
            training=False,
        )
    else:
        yield Figure(
            "rollout weights",
            (shape.outside_layers * size + shape.layer_params * 2) / GB,
            f"the actor's root unit ({_params(shape.outside_layers)}) gathered in {held} and "
            f"one decoder layer at a time in bfloat16: {r.why}",
            training=False,
        )
    if FAMILIES[spec.model.family].decoding == "autoregressive" and r.rows and r.tokens:
        tokens = r.tokens.total
        yield Figure(
            "KV cache",
            r.rows * tokens * shape.kv_bytes_per_token / GB,
            f"{r.rows} sequences decoded at once x {tokens} tokens x "
            f"{shape.kv_bytes_per_token / 1e6:.2f} MB per token (keys and values of "
            f"{shape.layers} layers, {shape.kv_heads} heads of {shape.head_dim}, 16 bits): "
            "the family decodes one action token at a time",
            training=False,
            lever="fewer envs at once (training.envs)",
        )
