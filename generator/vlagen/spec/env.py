"""The spec's `env` section: the simulator as the policy sees it (cameras, state, task,
rewards, extra observations, workers, the env server, video).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    JsonValue,
    model_validator,
)

from .action import EnvAction
from .fields import (
    ClassPath,
    Count,
    Identifier,
    NotBool,
    OneLine,
    Pixels,
    StrictModel,
    _suite_name,
)


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


class RewardTerm(StrictModel):
    """One term of the shaped reward; the reward is the weighted sum of all terms."""

    name: Identifier = Field(description="Term name, reported per episode.")
    weight: Annotated[float, Field(ge=-1e6, le=1e6), NotBool] = Field(
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


_Extent = Annotated[int, Field(ge=1, le=65536), NotBool]


class ExtraObs(StrictModel):
    """An extra observation key beyond cameras and state, e.g. ego state or route command."""

    name: Identifier = Field(description="Observation key.")
    shape: Annotated[list[_Extent], Field(max_length=8)] = Field(
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
    """``unix:///PATH`` (an absolute path), ``unix://@NAME`` (a Linux abstract socket, which
    the package's server binds and its client reaches) or ``tcp://HOST:PORT``."""
    if value.startswith(("unix:///", "unix://@")) and len(value) > len("unix:///"):
        return value
    host, sep, port = value.removeprefix("tcp://").rpartition(":")
    if value.startswith("tcp://") and sep and host and port.isdigit():
        if 0 < int(port) < 65536:
            return value
        raise ValueError(f"the port of {value!r} is 1 to 65535 (a client's), got {port}")
    raise ValueError(
        f"an env server address is unix:///PATH, unix://@NAME or tcp://HOST:PORT, got {value!r}"
    )


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
    state_dim: Annotated[int, Field(ge=0, le=4096), NotBool] = Field(
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
    workers: Annotated[int, Field(ge=0, le=1024), NotBool] | None = Field(
        default=None,
        description="Subprocess workers stepping the envs, images in shared memory; 0 steps "
        "them in-process, at most 1024. Default: the preset's (0 for cheap simulators).",
    )
    step_timeout_s: Annotated[float, Field(gt=0, le=3600), NotBool] = Field(
        default=60.0,
        description="Seconds a worker may take to step its envs (when workers > 0); past it "
        "the worker is terminated, the pool closed and the step raises BackendError naming "
        "the worker. At most 3600: a longer wait is no guard against a hung simulator.",
    )
    reset_timeout_s: Annotated[float, Field(gt=0, le=3600), NotBool] = Field(
        default=300.0,
        description="The same for reset and a worker's start-up (imports, building its envs), "
        "which take far longer than a step on some simulators (LIBERO builds a scene per "
        "task). At most 3600.",
    )
    remote: RemoteAddress | None = Field(
        default=None,
        description="The env server (`python -m <package>.env.serve`) every env of the "
        "package runs on: unix:///PATH, unix://@NAME (a Linux abstract socket) or "
        "tcp://HOST:PORT. Default: envs run here. An "
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
