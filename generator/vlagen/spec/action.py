"""The spec's `env.action`: what the backend takes, by kind (continuous, delta EE,
waypoints, discrete), with bounds and the waypoint controllers.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    WithJsonSchema,
)

from .fields import (
    MAX_BINS,
    Count,
    Gain,
    Metres,
    NotBool,
    StrictModel,
    not_bool,
)


def _one_for_all(value: Any) -> Any:
    """A single number is a list of one, which every channel shares."""
    return [value] if isinstance(not_bool(value), int | float) else value


_BOUND_SCHEMA = {"type": "number", "minimum": -1e9, "maximum": 1e9}
ControlBound = Annotated[float, Field(ge=-1e9, le=1e9), NotBool]
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
    lookahead: Annotated[float, Field(gt=0, le=1000), NotBool] = Field(
        default=6.0, description="Look-ahead distance in metres; at most 1000."
    )
    wheelbase: Annotated[float, Field(gt=0, le=100), NotBool] = Field(
        default=2.5, description="Vehicle wheelbase in metres; at most 100."
    )
    speed_gain: Annotated[float, Field(gt=0, le=1000), NotBool] = Field(
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
    point_dim: Annotated[Literal[2, 3], NotBool] = Field(
        default=3, description="2 for (x, y), 3 for (x, y, heading)."
    )
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
    interval: Annotated[float, Field(gt=0, le=60), NotBool] = Field(
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
    choices: Annotated[int, Field(ge=2, le=MAX_BINS), NotBool] = Field(
        description="Choices per channel; 2 to 4096."
    )


EnvAction = Annotated[
    ContinuousAction | DeltaEEAction | WaypointAction | DiscreteAction,
    Field(discriminator="kind"),
]
