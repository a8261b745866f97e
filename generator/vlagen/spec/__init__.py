"""The spec: one YAML file describing a VLA model, an environment and the target frameworks.

Every model forbids unknown keys and documents every field, so ``vlagen schema`` is the full
reference. Checks that involve one field live here as types; checks across fields (an action
chunk the env cannot take, a model family a framework cannot train) live in :mod:`vlagen.checks`
so that all of them are reported together with their positions in the file.

A module a section: :mod:`.fields` (the base model and field types), :mod:`.model`,
:mod:`.action` (``env.action``), :mod:`.env`, :mod:`.training` (``targets``, ``training``,
``resources``); this one holds ``project`` and the whole :class:`Spec`, and names the
public types so that callers import them from ``vlagen.spec``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from .action import (
    PID,
    WAYPOINT_HIGH,
    WAYPOINT_LOW,
    ContinuousAction,
    DeltaEEAction,
    DiscreteAction,
    EnvAction,
    PurePursuit,
    WaypointAction,
)
from .env import Backend, Camera, Env, ExtraObs, Gymnasium, Libero, Preset, RewardTerm, Video
from .fields import (
    _SPDX,
    BOOL_FOR_NUMBER,
    MAX_BINS,
    SCHEMA_FILE,
    SCHEMA_VERSION,
    DistName,
    NotBool,
    OneLine,
    PackageName,
    StrictModel,
    VersionText,
    _pep440,
    scaffold_path,
)
from .model import Flow, Lora, Model, ModelAction, Normalization
from .training import RETIRED_KEYS, Resources, Target, Training, retired_key

__all__ = [
    "BOOL_FOR_NUMBER",
    "MAX_BINS",
    "PID",
    "RETIRED_KEYS",
    "SCHEMA_FILE",
    "SCHEMA_VERSION",
    "WAYPOINT_HIGH",
    "WAYPOINT_LOW",
    "Backend",
    "Camera",
    "ContinuousAction",
    "DeltaEEAction",
    "DiscreteAction",
    "Env",
    "EnvAction",
    "ExtraObs",
    "Flow",
    "Gymnasium",
    "Libero",
    "Lora",
    "Model",
    "ModelAction",
    "Normalization",
    "Preset",
    "Project",
    "PurePursuit",
    "Resources",
    "RewardTerm",
    "Spec",
    "Target",
    "Training",
    "Video",
    "WaypointAction",
    "retired_key",
    "scaffold_path",
]


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


class Spec(StrictModel):
    """A vlagen spec: everything needed to generate an adapter package."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
        title="vlagen spec",
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    vlagen: Annotated[Literal[1], NotBool] = Field(
        description="Spec schema version; this vlagen reads 1."
    )
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
