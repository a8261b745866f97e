"""The env part of the plan: what the generated env core does with the spec's action, which
backend modules it carries, and the settings they hold as literals."""

from __future__ import annotations

from dataclasses import dataclass

from .gripper import has_gripper
from .presets import (
    GYMNASIUM,
    GYMNASIUM_EXTRAS,
    PRESETS,
    SIGNAL_TYPES,
    PresetDecl,
    Vehicle,
    preset_gymnasium,
)
from .spec import (
    Camera,
    ContinuousAction,
    DeltaEEAction,
    DiscreteAction,
    Env,
    EnvAction,
    Gymnasium,
    Libero,
    WaypointAction,
    scaffold_path,
)

__all__ = ["EnvPlan", "control_bounds", "make_env_plan", "resolve_env"]


#: The env server's transport (ZeroMQ): a well-kept binding with zero-copy multipart
#: messages, size limits and reconnection, where a socket protocol of our own would need all
#: three written and hardened.
REMOTE_REQUIREMENTS = ("pyzmq>=26",)
#: What a headless process rendering with MuJoCo needs: MuJoCo's EGL backend, and PyOpenGL's
#: (robosuite imports it).
MUJOCO_EGL = {"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl"}


@dataclass(frozen=True)
class EnvPlan:
    package: str  #: the generated package's import name
    preset: PresetDecl
    mapping: str  #: scale | gripper | discrete | trajectory | controller
    control_shape: tuple[int, ...]  #: what the backend's step takes
    control_low: tuple[float, ...]  #: per channel (per point dimension for trajectories)
    control_high: tuple[float, ...]
    action_low: tuple[float, ...]  #: what -1 maps to, per canonical action dimension
    action_high: tuple[float, ...]  #: what +1 maps to
    steps_per_decision: int
    vehicle: Vehicle | None  #: set when a controller tracks waypoints
    wheelbase: float  #: metres, for the controller and the synthetic vehicle
    gymnasium: Gymnasium | None
    video_format: str | None  #: mp4 | gif when the spec records episodes, else None
    info_reads: tuple[tuple[str, str, str], ...]  #: (info key, bool | float, reward term)
    backend_class: str | None  #: the class name of ``env.backend_class``
    scaffold: str | None  #: package-relative path of the backend module vlagen starts for you
    cameras: tuple[Camera, ...]  #: the spec's, in order
    gripper_closes: str | None  #: high | low: the bound that closes the gripper, if any

    @property
    def remote_var(self) -> str:
        """The environment variable that points the package's envs at an env server."""
        return f"{self.package.upper()}_ENV_REMOTE"

    @property
    def token_var(self) -> str:
        """The environment variable holding the env server's token."""
        return f"{self.package.upper()}_ENV_TOKEN"

    @property
    def control_doc(self) -> str:
        """What one control ``step`` takes is, in words (the scaffold's docstring)."""
        shape = ", ".join(map(str, self.control_shape))
        bounds = f"{list(self.control_low)}..{list(self.control_high)}"
        if self.mapping == "discrete":
            return f"int64 [{shape}]: the choice per channel, 0 to {int(self.control_high[0])}"
        if self.mapping == "trajectory":
            return (
                f"float32 [{shape}]: {self.control_shape[0]} waypoints (metres and radians, "
                f"ego frame), each within {bounds}"
            )
        if self.mapping == "controller":
            assert self.vehicle is not None
            channels = self.vehicle.layout.replace("_", ", ")
            return f"float32 [{shape}]: the vehicle's {channels}, within {bounds}"
        return f"float32 [{shape}], within {bounds} per channel"

    @property
    def gripper_controls(self) -> tuple[float, float] | None:
        """The gripper channel's (opening, closing) control, where the action has one: what
        the canonical -1 and +1 map to."""
        if self.gripper_closes is None:
            return None
        return self.action_low[-1], self.action_high[-1]

    @property
    def camera_sizes(self) -> dict[str, tuple[int, int]]:
        """Each camera's (height, width), as the spec declares it."""
        return {cam.name: (cam.height, cam.width) for cam in self.cameras}

    @property
    def camera_doc(self) -> str:
        """How the backend keeps every camera at the spec's size, in words (the backend's
        docstring and the package README say it)."""
        preset = self.preset
        if preset.backend == "synthetic":
            return "the synthetic stand-in draws its frames at the spec's size"
        if preset.backend == "gymnasium":
            resized = f"a frame of another size is resized to the spec's by {RESIZE_DOC}"
            if preset.sized_by:
                return (
                    f"the simulator renders at the spec's size ({preset.sized_by}); {resized} "
                    "(where env.gymnasium.kwargs replace that setting)"
                )
            return f"the simulator renders at a size of its own; {resized}"
        if preset.needs_class:
            return (
                "your class returns each camera at the spec's size (env.check checks it, and "
                "the env core refuses another)"
            )
        return f"the simulator renders at the spec's size ({preset.sized_by})"

    @property
    def video(self) -> bool:
        return self.video_format is not None

    @property
    def gymnasium_extra(self) -> str | None:
        """gymnasium's extra that the env needs, where it is one of gymnasium's own."""
        env_id = self.gymnasium.id if self.gymnasium else None
        return GYMNASIUM_EXTRAS.get((env_id or "").split("-v")[0])

    @property
    def render_env(self) -> dict[str, str]:
        """The environment a process stepping these envs needs to render headless:
        :data:`MUJOCO_EGL` where the simulator renders with MuJoCo (the preset's, or one of
        gymnasium's MuJoCo envs), else none; the launch scripts export it too."""
        mujoco = self.preset.mujoco or self.gymnasium_extra == "mujoco"
        return dict(MUJOCO_EGL) if mujoco else {}

    @property
    def sim_requirements(self) -> list[str]:
        """The preset's, with gymnasium's extra where the env is one of gymnasium's own that
        needs it (CartPole renders with pygame)."""
        extra = self.gymnasium_extra
        if extra is None:
            return list(self.preset.requirements)
        full = GYMNASIUM.replace("gymnasium", f"gymnasium[{extra}]", 1)
        return [full if r == GYMNASIUM else r for r in self.preset.requirements]

    @property
    def constraints_command(self) -> str:
        """The command that writes the pip constraints pinning the installed PyTorch."""
        return f"python -m {self.package}.constraints > {CONSTRAINTS_FILE}"

    @property
    def install_commands(self) -> tuple[str, ...]:
        """The shell commands that install the simulator: from the index (keeping the
        installed PyTorch where its dependencies require torch), or its source."""
        commands: tuple[str, ...] = ()
        if self.sim_requirements:
            pinned = f"-c {CONSTRAINTS_FILE} " if self.preset.torch_via else ""
            names = " ".join(f"'{r}'" for r in self.sim_requirements)
            commands = (f"pip install {pinned}{names}",)
            if self.preset.torch_via:
                commands = (self.constraints_command, *commands)
        if self.preset.source is not None:
            commands += self.preset.source.commands
        return commands

    @property
    def install(self) -> str:
        """The command that installs the simulator, for error messages."""
        return " && ".join(self.install_commands)

    @property
    def video_requirements(self) -> list[str]:
        if self.video_format == "mp4":
            return ["imageio[ffmpeg]>=2.30"]
        return ["imageio>=2.30", "pillow"]

    @property
    def test_requirements(self) -> list[str]:
        """pytest, the env server's transport, plus the simulator where it is a light pip
        install that runs on a CPU."""
        cheap = self.preset.backend == "gymnasium"
        video = self.video_requirements if self.video else []
        sim = self.sim_requirements if cheap else []
        return ["pytest>=8", *REMOTE_REQUIREMENTS, *sim, *video]

    @property
    def serve_requirements(self) -> list[str]:
        """What an env server's own environment installs beside the package (``--no-deps``):
        the env runtime (numpy), the transport and the simulator; no torch, no framework."""
        return ["numpy>=1.24", *REMOTE_REQUIREMENTS, *self.sim_requirements]

    @property
    def mapping_doc(self) -> str:
        doc = MAPPING_DOCS[self.mapping]
        if self.mapping in ("scale", "gripper") and self.gripper_closes is not None:
            doc += "; " + GRIPPER_DOCS[self.mapping][self.gripper_closes]
        return doc

    @property
    def backend_modules(self) -> dict[str, str]:
        """Backend name → module in ``env/backends/``: the stand-in, the learning task
        (``python -m <pkg>.learn``) and the preset's."""
        names = dict.fromkeys(("synthetic", "learning", self.preset.backend))
        return {name: BACKEND_MODULES[name][0] for name in names}

    @property
    def backend_templates(self) -> dict[str, str]:
        """Module → template name, for the backend modules generated (with the set-up
        module of a simulator that needs one)."""
        templates = dict(BACKEND_MODULES[name] for name in self.backend_modules)
        if self.setup_module is not None:
            templates[self.setup_module] = self.setup_module
        return templates

    @property
    def setup_module(self) -> str | None:
        """The backend module that sets the simulator up before its first import, if any."""
        return BACKEND_SETUP.get(self.preset.backend)

    @property
    def scratch_home(self) -> bool:
        """The simulator reads and writes in the home (at import, or in its set-up): the
        generated tests run with a scratch one."""
        return self.setup_module is not None or self.probe is not None

    @property
    def probe(self) -> str | None:
        """The module whose presence means the preset's simulator is installed, for a
        simulator the generated tests run on where it is (else on the synthetic stand-in)."""
        return BACKEND_PROBE.get(self.preset.backend)


#: backend → (module generated for it, template it comes from); the simulators that ship no
#: gym env (navsim, bench2drive) and custom ones share one loader of a class by import path.
BACKEND_MODULES = {
    "synthetic": ("synthetic", "synthetic"),
    "learning": ("learning", "learning"),
    "gymnasium": ("gymnasium_env", "gymnasium_env"),
    "libero": ("libero", "libero"),
    "maniskill": ("maniskill", "maniskill"),
    "navsim": ("navsim", "external"),
    "bench2drive": ("bench2drive", "external"),
    "custom": ("custom", "external"),
}

#: backend → the module generated beside it that prepares what the simulator reads when it
#: is first imported (LIBERO asks on the terminal for a config file it lacks); it has a test
#: of its own, ``tests/test_<module>.py``.
BACKEND_SETUP = {"libero": "libero_setup"}

#: backend (not installed by the package's test extra) → the module that tells the generated
#: tests it is installed here: there they run on the real simulator (``tests/simulator.py``
#: picks the backend, ``tests/conftest.py`` shares one instance), elsewhere on the stand-in.
BACKEND_PROBE = {"libero": "libero.libero"}

#: The file the generated README writes the pip constraints to.
CONSTRAINTS_FILE = "constraints.txt"

#: How the gymnasium backend resizes a frame the simulator renders at another size.
RESIZE_DOC = (
    "area averaging along an axis that shrinks (each pixel the mean of those it covers, "
    "as OpenCV's INTER_AREA) and bilinear interpolation along one that grows"
)

MAPPING_DOCS = {
    "scale": "scaled linearly from [-1, 1] to the backend's control bounds",
    "gripper": "scaled linearly to the backend's bounds, the gripper channel (the last) "
    "set to one of its bounds by the action's sign: the canonical gripper is -1 = open, "
    "+1 = close, and 0 and above closes",
    "discrete": "rounded to one of the choices per channel, -1 being the first and +1 the last",
    "trajectory": "scaled to waypoints in metres and radians, the whole trajectory taken in "
    "one backend step",
    "controller": "scaled to waypoints in metres and radians, tracked by the controller over "
    "the chunk's steps",
}


#: mapping → which bound closes → how the gripper channel maps, in words.
GRIPPER_DOCS = {
    "scale": {
        "high": "the gripper channel (the last, -1 = open, +1 = close) likewise, +1 to its "
        "high bound, which closes",
        "low": "the gripper channel (the last, -1 = open, +1 = close) inverted, +1 to its low "
        "bound, which closes in this simulator",
    },
    "gripper": {
        "high": "close sends the high bound, open the low one",
        "low": "close sends the low bound, open the high one (this simulator's +1 opens)",
    },
}


def resolve_env(env: Env, batch: int) -> Env:
    """``env`` with the preset's defaults filled in, as the resolved spec records them;
    ``batch`` is the envs of one env process by default (one group)."""
    preset = PRESETS[env.preset]
    update: dict = {
        "backend": env.backend or preset.backend,
        "workers": min(preset.workers, batch) if env.workers is None else env.workers,
        "gymnasium": preset_gymnasium(env),
        "libero": env.libero or (Libero() if preset.name == "libero" else None),
    }
    if isinstance(env.action, WaypointAction):
        low, high = env.action.bounds
        update["action"] = env.action.model_copy(update={"low": low, "high": high})
    elif isinstance(env.action, ContinuousAction | DeltaEEAction):
        low, high = control_bounds(env.action, preset)
        update["action"] = env.action.model_copy(update={"low": low, "high": high})
    return env.model_copy(update=update)


def control_bounds(
    action: ContinuousAction | DeltaEEAction, preset: PresetDecl
) -> tuple[list[float], list[float]]:
    """(low, high) per channel of a continuous or delta_ee action: the spec's, one value
    shared by every channel, or the preset's where the spec gives none."""
    default_low, default_high = preset.bounds(action.kind, action.dim)

    def channels(given: list[float] | None, default: list[float]) -> list[float]:
        if given is None:
            return default
        return list(given) * action.dim if len(given) == 1 else list(given)

    return channels(action.low, default_low), channels(action.high, default_high)


def gripper_ends(
    action: EnvAction, preset: PresetDecl, low: list[float], high: list[float]
) -> tuple[list[float], list[float]]:
    """What the canonical -1 and +1 map to, per channel: the control bounds, with a delta_ee
    action's gripper channel (the last) ordered so that +1 (close) reaches the bound that
    closes the preset's gripper, -1 (open) the one that opens it."""
    if not has_gripper(action) or preset.gripper_closes == "high":
        return list(low), list(high)
    return [*low[:-1], high[-1]], [*high[:-1], low[-1]]


def steps_per_decision(env: Env, chunk: int) -> int:
    """Backend steps per decision: the chunk, or 1 where the backend takes a whole chunk
    (a trajectory of waypoints) in one step. Defined for any env the spec model accepts,
    also one the checks refuse (targets' checks run beside them)."""
    trajectory = isinstance(env.action, WaypointAction) and PRESETS[env.preset].trajectory
    return 1 if trajectory else chunk


def make_env_plan(env: Env, chunk: int, package: str) -> EnvPlan:
    """The plan of a resolved env; ``chunk`` is the model's steps per decision and
    ``package`` the generated package's import name."""
    preset, action = PRESETS[env.preset], env.action
    name = (env.backend_class or "").partition(":")[2]
    vehicle = None
    if isinstance(action, WaypointAction):
        low, high = action.bounds
        action_low, action_high = low, high
        if preset.trajectory:
            mapping, shape = "trajectory", (chunk, action.point_dim)
        else:
            vehicle = preset.vehicle
            assert vehicle is not None  # the checks refuse presets without one
            width = 3 if vehicle.layout == "throttle_steer_brake" else 2
            low, high = preset.bounds("continuous", width)
            mapping, shape = "controller", (width,)
    else:
        if isinstance(action, DiscreteAction):
            low, high = [0.0] * action.dim, [float(action.choices - 1)] * action.dim
        else:
            low, high = control_bounds(action, preset)
        action_low, action_high = gripper_ends(action, preset, low, high)
        gripper = has_gripper(action) and action.binarize_gripper
        mapping = "discrete" if action.kind == "discrete" else "gripper" if gripper else "scale"
        shape = (action.dim,)
    return EnvPlan(
        package=package,
        preset=preset,
        mapping=mapping,
        control_shape=shape,
        control_low=tuple(low),
        control_high=tuple(high),
        action_low=tuple(action_low),
        action_high=tuple(action_high),
        steps_per_decision=steps_per_decision(env, chunk),
        vehicle=vehicle,
        wheelbase=getattr(getattr(action, "controller", None), "wheelbase", 2.5),
        gymnasium=env.gymnasium,
        video_format=env.video.format if env.video else None,
        info_reads=_info_reads(env),
        backend_class=name or None,
        scaffold=scaffold_path(env.backend_class, package),
        cameras=tuple(env.cameras),
        gripper_closes=preset.gripper_closes if has_gripper(action) else None,
    )


def _info_reads(env: Env) -> tuple[tuple[str, str, str], ...]:
    """Each ``info`` key the reward terms read, with the type it takes and the first term
    reading it: a built-in signal by its own name and type, another key as a float."""
    reads: dict[str, tuple[str, str, str]] = {}
    for term in env.rewards:
        if term.source in SIGNAL_TYPES:
            key, kind = term.source, SIGNAL_TYPES[term.source]
        elif term.source == "info":
            key, kind = term.key, "float"
        else:
            continue
        reads.setdefault(key, (key, kind, term.name))
    return tuple(reads.values())
