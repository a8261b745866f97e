"""RLinf 0.2: models are a closed Enum (``SupportedModel``), so only its built-in VLAs train."""

from . import TargetDecl
from ._rlinf import RLINF_ALGORITHMS, RLINF_CONTRACT, rlinf_checks

TARGET = TargetDecl(
    framework="rlinf",
    version="0.2",
    title="RLinf",
    requirement="rlinf==0.2",
    algorithms=RLINF_ALGORITHMS,
    model_families=("openvla", "openvla_oft"),
    contract=RLINF_CONTRACT,
    checks=rlinf_checks,
)
