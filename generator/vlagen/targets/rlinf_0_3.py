"""RLinf 0.3: models register through ``register_model``; envs are duck-typed gym envs."""

from . import TargetDecl
from ._rlinf import RLINF_ALGORITHMS, RLINF_CONTRACT, rlinf_checks

TARGET = TargetDecl(
    framework="rlinf",
    version="0.3",
    title="RLinf",
    requirement="rlinf==0.3.0",
    algorithms=RLINF_ALGORITHMS,
    # 0.3 resolves models through a registry, so any policy the package builds can register.
    model_families=("openvla", "openvla_oft", "waypoint", "custom"),
    contract=RLINF_CONTRACT,
    checks=rlinf_checks,
)
