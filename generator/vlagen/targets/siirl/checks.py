"""What siiRL 0.2.0's embodied code cannot run, as plan-time errors naming the restriction
(its file and line) and what would lift it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...backbones import BACKBONES
from ...batch import next_multiple, split_fix
from ...errors import Issue
from ..common.placement import decision_steps, gpu_count, unhonoured_resources
from .plan import task_suite
from .trajectory import TRAJ_MINI_BATCH, nearest_divisible, traj_mini_batch, trajectory_length

if TYPE_CHECKING:
    from ...spec import Spec, Training

TASK_FILE_NAME_BYTES = 50


#: Where siiRL 0.2.0's embodied actor (``engine/actor/embodied_actor.py``) fixes each number
#: of its OpenVLA-OFT path, with the numbers' lines: the log-probs and entropies reshaped to
#: ``(batch, traj_len*8, 7)`` and masked over ``traj_len*8`` steps, the 256 bins before the
#: last 64 logits, the asserted vocabulary. The rollout's OFT decoding is siiRL's vendored
#: model's own ``generate_action_verl``, which the package does not replace.
OFT_ACTOR = "engine/actor/embodied_actor.py"
OFT_FIXED = {
    "dim": (7, (155, 156, 290)),
    "chunk": (8, (155, 156, 158, 290, 291)),
    "bins": (256, (144, 145, 210, 211, 282, 283)),
    "vocab_size": (32000, (143, 209, 281)),
}

#: Where siiRL 0.2.0 needs a Hugging Face checkpoint before any model is built: its workers'
#: ``load_tokenizer`` (``AutoConfig`` and ``AutoTokenizer`` of ``model.path``), called from the
#: FSDP worker's ``init_model`` and the DAG worker, and the embodied rollout's processor.
CHECKPOINT_LOADS = (
    ("engine/fsdp_workers.py", 1163),
    ("models/loader.py", 70),
    ("models/loader.py", 89),
    ("dag_worker/dagworker.py", 784),
    ("engine/rollout/embodied_rollout.py", 189),
)
CUSTOM_NOTE = (
    "siiRL 0.2.0's workers load the checkpoint's Hugging Face config, tokenizer and processor "
    "before any model is built (load_tokenizer's AutoConfig and AutoTokenizer of model.path, "
    "and AutoProcessor in the embodied rollout: "
    + "; ".join(f"{file}:{line}" for file, line in CHECKPOINT_LOADS)
    + "), and its openvla rollout masks responses at the tokenizer's EOS "
    "(engine/rollout/embodied_rollout.py:611): a custom module's checkpoint has no tokenizer. "
    "Use a token family (openvla, waypoint) on siiRL, or another target (rlinf)"
)
#: peft's ``get_peft_model(model, LoraConfig(task_type=CAUSAL_LM, ...))`` on the loaded model.
PEFT_WRAP = ("engine/fsdp_workers.py", 893)


def _mini_batch_fix(t: Training, workers: int) -> str:
    """Mini-batches whose trajectories split evenly over ``workers`` ranks: fewer, else more
    groups."""
    n = t.group_size
    fit = [m for m in range(t.mini_batches, 0, -1) if t.groups % m == 0]
    fit = [m for m in fit if (t.groups // m * n) % workers == 0]
    if fit:
        return f"set mini_batches to {fit[0]}"
    return (
        f"set groups to {next_multiple(t.groups, t.mini_batches * workers // math.gcd(workers, n))}"
    )


def _lines(numbers: tuple[int, ...]) -> str:
    return ", ".join(map(str, numbers))


def siirl_checks(spec: Spec, index: int) -> Iterator[Issue]:
    """What siiRL 0.2.0's embodied code cannot run, as plan-time errors naming the restriction
    and what would lift it."""
    model, env = spec.model, spec.env
    where = f"siiRL 0.2 (targets[{index}])"
    family = model.family
    if family == "openvla_oft":
        got = {
            "dim": model.action.dim,
            "chunk": model.action.chunk,
            "bins": model.action.bins,
            "vocab_size": model.vocab_size,
        }
        wrong = [
            f"{name} {got[name]} (siiRL fixes {fixed} at {OFT_ACTOR}:{_lines(lines)})"
            for name, (fixed, lines) in OFT_FIXED.items()
            if got[name] != fixed
        ]
        if wrong:
            yield Issue(
                ("model", "action"),
                f"{where} trains openvla_oft only as 7-D actions in chunks of 8 over 256 bins "
                f"of a 32000-token vocabulary, fixed in siiRL 0.2.0's actor, not in this "
                f"package: it reshapes log-probs to (batch, traj_len*8, 7), masks traj_len*8 "
                f"steps, slices logits[..., -256-64:-64] and asserts vocab_size == 32000; got "
                f"{'; '.join(wrong)}. Use family openvla (one decision per forward, any dim) "
                "for other shapes",
            )
    elif family == "openvla" and model.action.chunk != 1:
        yield Issue(
            ("model", "action", "chunk"),
            f"{where} decodes one openvla action per forward pass (embodied_rollout.py expands "
            f"it to a 1-step chunk); set chunk: 1 or use openvla_oft (7 x 8), got chunk "
            f"{model.action.chunk}",
        )
    if model.lora is not None and BACKBONES[model.backbone].processor:
        file, line = PEFT_WRAP
        yield Issue(
            ("model", "lora"),
            f"{where} applies LoRA itself, get_peft_model(model, TaskType.CAUSAL_LM) on the "
            f"loaded model ({file}:{line}): peft's causal-LM wrapper needs a transformers "
            f"model's generation hooks, and on {model.backbone} that model is this package's "
            "siiRL adapter (targets/siirl/model.py); remove model.lora for this target",
        )
    if env.action.kind == "discrete":
        yield Issue(
            ("env", "action", "kind"),
            f"{where} decodes the action tokens itself to OpenVLA's bin centres "
            "(embodied_rollout.py: bins - 1 values for the bins ids), which cannot give a "
            "discrete action one token per choice; use a continuous action kind, or another "
            "target",
        )
    prismatic = not BACKBONES[model.backbone].processor  # siiRL's own model, not the package's
    if prismatic and family in ("openvla", "waypoint") and len(model.cameras or ()) > 1:
        yield Issue(
            ("model", "cameras"),
            f"{where} feeds one image to {family} models on its Prismatic code (only "
            "OpenVLA-OFT's backbone takes num_images_in_input > 1); list one camera in "
            "model.cameras, or use a Qwen-VL backbone (model.backbone), whose images the "
            "package lays out",
        )
    if model.use_state:
        yield Issue(
            ("model", "use_state"),
            f"{where}'s embodied rollout passes images and the prompt only, never the state; "
            "set use_state: false for this target",
        )
    algorithm = spec.targets[index].algorithm
    if algorithm == "gae":
        yield Issue(
            ("targets", index, "algorithm"),
            f"{where}: gae (PPO) needs siiRL's critic, whose CriticWorker has no embodied path "
            "in 0.2.0; use grpo, dapo or srpo",
        )
    if algorithm == "srpo" and not any(t.source == "success" for t in env.rewards):
        yield Issue(
            ("env", "rewards"),
            f"{where}: srpo rewards success (siiRL's embodied reward manager, scaled by the "
            "success term's weight); add a term with source: success",
        )
    t = spec.training
    n, workers = t.group_size, gpu_count(spec)  # a rollout worker per GPU
    if t.in_flight % (workers * n):
        fix = split_fix(t, workers * n)
        yield Issue(
            ("training", "envs" if t.envs is not None else "groups"),
            f"{where} steps the envs in its {workers} rollout workers (one per GPU), each "
            "running num_envs // rollout.n of its rows at once and asserting num_envs >= "
            "rollout.n (generate_sequences, engine/rollout/embodied_rollout.py): its "
            f"{t.in_flight} envs must split into whole groups of {n} per worker: {fix}",
        )
    if t.groups % t.mini_batches == 0 and (t.groups // t.mini_batches * n) % workers:
        yield Issue(
            ("training", "mini_batches"),
            f"{where} normalizes actor.ppo_mini_batch_size (groups / mini_batches = "
            f"{t.groups // t.mini_batches} prompts) to trajectories per rank: x rollout.n "
            f"({n}), then // its {workers} actor ranks (ActorRolloutRefWorker.__init__, "
            "engine/fsdp_workers.py), and each rank's actor splits its trajectories into "
            "mini-batches of that size (embodied_actor.update_policy): unless it divides "
            f"evenly an update takes another number of optimizer steps than {t.mini_batches}, "
            f"or none at all (siiRL asserts it positive): {_mini_batch_fix(t, workers)}",
        )
    if model.lora is not None and model.lora.dropout:
        yield Issue(
            ("model", "lora", "dropout"),
            f"{where} builds its LoraConfig from rank, alpha and target modules only "
            f"(engine/fsdp_workers.py), so LoRA dropout {model.lora.dropout} would be ignored; "
            "set dropout: 0",
        )
    if model.lora is not None and model.lora.target_modules != "all-linear":
        yield Issue(
            ("model", "lora", "target_modules"),
            f"{where} types model.target_modules as a string (params/model_args.py); use "
            "target_modules: all-linear",
        )
    length = trajectory_length(spec)
    if traj_mini_batch(length) is None:
        yield Issue(
            ("env", "max_episode_steps"),
            f"{where}'s actor backpropagates each trajectory in pieces of traj_mini_batch_size "
            f"steps, which must divide its length (embodied_actor.update_policy asserts it); "
            f"{length} forward passes per episode have no divisor from 2 to {TRAJ_MINI_BATCH}. "
            f"pick max_episode_steps so that it has one, e.g. "
            f"{nearest_divisible(length) * decision_steps(spec)}",
        )
    suite = task_suite(spec)
    per_worker = max(t.in_flight // workers, 1)
    longest = len(f"{suite}_task_999_trial_9999_s{per_worker - 1}".encode())
    if longest > TASK_FILE_NAME_BYTES:
        yield Issue(
            ("env", "task_suite") if env.task_suite else ("project", "name"),
            f"{where} packs '<suite>_task_<id>_trial_<id>_s<env>' into "
            f"{TASK_FILE_NAME_BYTES} bytes; "
            f"the suite name {suite!r} is {len(suite.encode())} bytes, at most "
            f"{TASK_FILE_NAME_BYTES - longest + len(suite.encode())} fit",
        )


def siirl_resources(spec: Spec, index: int) -> Iterator[Issue]:
    yield from unhonoured_resources(
        spec,
        index,
        "siiRL 0.2",
        "its embodied rollout steps the envs inside each rollout worker, on the GPUs of "
        "resources.nodes x gpus_per_node (engine/rollout/embodied_rollout.py), with no env "
        "nodes or pipeline stages of their own",
    )
