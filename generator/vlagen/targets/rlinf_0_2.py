"""RLinf 0.2: models are a closed Enum (``SupportedModel``) with an if/elif ``get_model``;
sampling and rollout-epoch keys still live under ``algorithm`` (its entry in
:data:`vlagen.targets.rlinf.declaration.LINES`)."""

from .rlinf.declaration import rlinf_target

TARGET = rlinf_target("0.2")
