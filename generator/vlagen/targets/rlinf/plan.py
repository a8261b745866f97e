"""The RLinf plan: the config (:mod:`.config`) with the spec's own keys, checked against
RLinf's layout, the batch keys it derives and where each came from, and the names, cameras
and one-GPU overrides the templates lay out."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...batch import Derived, comments
from ..common.config_schema import require_fits, set_keys
from ..common.placement import decision_steps, gpu_count, group_size
from .config import GROUPED, LOSS_TYPES, RlinfVersion, prompt_length, rlinf_config, type_names
from .layout import exempt_keys, layout_problems, read_elsewhere
from .reference import gradient_checkpointing, nearest, sampling_temperature

if TYPE_CHECKING:
    from ...spec import Spec


@dataclass(frozen=True)
class CameraKey:
    name: str  #: the spec's camera
    key: str  #: main_images | wrist_images | extra_view_images
    index: int | None  #: position in extra_view_images


@dataclass(frozen=True)
class RlinfPlan:
    version: RlinfVersion
    env_type: str
    model_type: str
    loss_type: str
    cameras: tuple[CameraKey, ...]
    num_action_chunks: int
    action_dim: int
    total_num_envs: int
    env_group_size: int
    rollout_epoch: int
    decisions_per_episode: int
    max_prompt_length: int
    config: dict[str, Any]  #: the Hydra YAML, as data
    derived: tuple[Derived, ...]  #: the batch keys and where each came from
    own: tuple[str, ...]  #: the keys the spec's ``targets[i].config`` sets
    world_size: int  #: GPUs training needs: env, rollout and actor workers, one per GPU
    #: Hydra overrides that run it on one GPU (see :func:`one_gpu_overrides`).
    one_gpu_overrides: tuple[str, ...]
    #: ``<part>/<name>`` of the template folder this version does not use
    omitted_templates: tuple[str, ...] = ()
    #: Config keys only code that cannot run on CPU reads: key → (RLinf file, why).
    read_elsewhere: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def comments(self) -> Mapping[str, str]:
        """End-of-line comments of the config: where each batch key came from."""
        return comments(self.derived, self.own)

    @property
    def camera_tuples(self) -> tuple[tuple[str, str, int | None], ...]:
        return tuple((c.name, c.key, c.index) for c in self.cameras)

    @property
    def one_gpu_args(self) -> str:
        """:attr:`one_gpu_overrides` as shell words (the braces and ``~`` quoted)."""
        return " ".join(shlex.quote(o) for o in self.one_gpu_overrides)


def camera_keys(spec: Spec) -> tuple[CameraKey, ...]:
    """RLinf's three image keys for the spec's cameras: the first ``main`` camera (else the
    first camera) is ``main_images``, the first ``wrist`` camera ``wrist_images``, the rest
    ``extra_view_images`` in order."""
    cameras = list(spec.env.cameras)
    main = next((c for c in cameras if c.role == "main"), cameras[0])
    wrist = next((c for c in cameras if c.role == "wrist" and c is not main), None)
    keys = [CameraKey(main.name, "main_images", None)]
    if wrist is not None:
        keys.append(CameraKey(wrist.name, "wrist_images", None))
    rest = [c for c in cameras if c is not main and c is not wrist]
    keys += [CameraKey(c.name, "extra_view_images", i) for i, c in enumerate(rest)]
    return tuple(keys)


def one_gpu_overrides(spec: Spec) -> tuple[str, ...]:
    """Hydra overrides that place one actor, one rollout and one env worker, all on GPU 0 of
    one node, for a run on one GPU; none where the spec's resources are one GPU.

    RLinf's ``ComponentPlacement`` (scheduler/placement/placement.py) reads each key of
    ``cluster.component_placement`` as comma-separated component names and parses its
    ranks against the accelerators Ray sees, so ``0-7`` on one GPU fails (``End rank 7 ...
    must be within the available ... ranks [0]``). Hydra's override grammar cannot name the
    ``actor,env,rollout`` key, so the placement is deleted and added again, one key per
    component. The envs stay ``total_num_envs``, in one env worker."""
    if gpu_count(spec) == 1:
        return ()
    overrides = (
        "~cluster.component_placement",
        "+cluster.component_placement={actor:0,env:0,rollout:0}",
    )
    return overrides + (("cluster.num_nodes=1",) if spec.resources.nodes > 1 else ())


def rounds_key(version: RlinfVersion) -> str:
    """Where the version reads ``rollout_epoch``."""
    return ("env.train" if version.rollout_epoch_under_env else "algorithm") + ".rollout_epoch"


def derived_batch(spec: Spec, index: int, rounds_key: str) -> tuple[Derived, ...]:
    """RLinf's batch keys, each with where it comes from in the spec's training block."""
    t, workers = spec.training, gpu_count(spec)  # an env worker per GPU
    group = group_size(spec, index, GROUPED)
    decisions = spec.env.max_episode_steps // decision_steps(spec)
    envs = "training.envs" if t.envs is not None else "training.groups x group_size"
    rounds = t.episodes // t.in_flight
    return (
        Derived(
            "env.train.total_num_envs",
            t.in_flight,
            f"{envs}, {t.in_flight // workers} on each of {workers} env workers (one per GPU)",
        ),
        Derived(
            "env.train.group_size",
            group,
            "training.group_size"
            if group > 1
            else f"1: {spec.targets[index].algorithm} does not group episodes",
        ),
        Derived(
            rounds_key,
            rounds,
            f"rounds of the envs per update: groups {t.groups} x "
            f"group_size {t.group_size} / {t.in_flight} envs",
        ),
        Derived(
            "actor.global_batch_size",
            t.episodes * decisions // t.mini_batches,
            f"decision rows per optimizer step: {t.episodes} episodes x {decisions} "
            f"decisions / mini_batches {t.mini_batches}",
        ),
        Derived(
            "actor.micro_batch_size",
            t.micro_batch_size_per_gpu,
            "training.micro_batch_size_per_gpu",
        ),
    )


def derived_settings(spec: Spec, index: int, version: RlinfVersion) -> tuple[Derived, ...]:
    """RLinf's keys beyond the batch that follow from the training block (with
    :func:`derived_batch`, what a spec's ``targets[i].config`` may not set)."""
    t, group = spec.training, group_size(spec, index, GROUPED)
    envs = "training.envs" if t.envs is not None else "training.groups x group_size"
    example = nearest(spec, index)[0].name
    return (
        Derived("actor.optim.lr", t.learning_rate, "training.learning_rate"),
        Derived(
            f"{version.sampling_params_under}.sampling_params.temperature_train",
            sampling_temperature(spec, index),
            "training.temperature"
            if t.temperature is not None
            else f"training.temperature, default RLinf's {example}.yaml's",
        ),
        Derived(
            "actor.fsdp_config.gradient_checkpointing",
            gradient_checkpointing(spec, index),
            "training.gradient_checkpointing"
            if t.gradient_checkpointing is not None
            else f"training.gradient_checkpointing, default RLinf's {example}.yaml's",
        ),
        Derived("actor.seed", t.seed, "training.seed"),
        Derived("env.train.seed", t.seed, "training.seed"),
        Derived("env.eval.seed", t.seed + 1000, "training.seed + 1000"),
        Derived("env.eval.total_num_envs", t.in_flight, f"{envs}, as env.train.total_num_envs"),
        Derived(
            "algorithm.group_size",
            group,
            "training.group_size"
            if group > 1
            else f"1: {spec.targets[index].algorithm} does not group episodes",
        ),
    )


def make_rlinf_plan(spec: Spec, index: int, version: RlinfVersion) -> RlinfPlan:
    """The RLinf plan of a resolved spec that passed :func:`~.checks.rlinf_checks_fn`."""
    algorithm = spec.targets[index].algorithm
    model, training = spec.model, spec.training
    env_type, model_type = type_names(spec)
    config = rlinf_config(spec, index, version)
    own = set_keys(config, spec.targets[index].config)
    plan = RlinfPlan(
        version=version,
        env_type=env_type,
        model_type=model_type,
        loss_type=LOSS_TYPES[algorithm],
        cameras=camera_keys(spec),
        num_action_chunks=model.action.chunk,
        action_dim=model.action.dim,
        total_num_envs=training.in_flight,
        env_group_size=group_size(spec, index, GROUPED),
        rollout_epoch=training.episodes // training.in_flight,
        decisions_per_episode=spec.env.max_episode_steps // decision_steps(spec),
        max_prompt_length=prompt_length(spec),
        config=config,
        derived=derived_batch(spec, index, rounds_key(version)),
        own=own,
        world_size=gpu_count(spec),
        one_gpu_overrides=one_gpu_overrides(spec),
        omitted_templates=()
        if version.fidelity_harness
        else ("tests/test_rlinf_fidelity.py", "src/cpu.py", "src/parity.py", "src/learn.py"),
        read_elsewhere=read_elsewhere(config) if version.fidelity_harness else {},
    )
    problems = layout_problems(config, version.schema, exempt_keys(config, model.family))
    require_fits(problems, "RLinf config does not match RLinf's layout")
    return plan
