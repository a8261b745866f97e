"""RLinf 0.3: models register through ``register_model``; envs are duck-typed gym envs (its
entry in :data:`vlagen.targets.rlinf.declaration.LINES`)."""

from .rlinf.declaration import rlinf_target

TARGET = rlinf_target("0.3")
