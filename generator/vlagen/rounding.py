"""How much of an optimizer step survives the dtype its weights are held in.

Adam moves every weight by about the learning rate per step, whatever its gradient's scale
(its update is normalized element by element). A weight held in bfloat16 has 8 significant
bits: the representable values around ``|w|`` are ``2 ** (floor(log2 |w|) - 7)`` apart, and a
step below half that spacing leaves the weight where it was. Whether most steps survive
depends on the weights' magnitudes, which at full size are, for what a spec trains:

- LoRA's A matrices: uniform in ``±1/sqrt(d)`` (peft's Kaiming initialization), ``d`` the
  backbone's width. B starts at zero, so its first steps survive; they are lost once
  ``|B|`` grows past about 256 learning rates.
- every weight (no LoRA): about normal with standard deviation 0.02, the initializer range
  of Llama and Qwen checkpoints, which fine-tuning keeps near.

float32 weights (or float32 master weights) keep 24 bits: no learning rate above 1e-9 is
rounded away on them.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from functools import cache
from statistics import NormalDist

__all__ = ["WeightModel", "bfloat16", "full_weights", "kept", "lora_a", "smallest_rate"]

POINTS = 2000  #: quantiles each weight model is evaluated at
INIT_STD = 0.02  #: Llama's and Qwen's initializer range


@dataclass(frozen=True)
class WeightModel:
    """The magnitudes of the weights a run trains, as quantiles of their distribution."""

    name: str  #: what they are, for messages: ``LoRA A (width 4096)``
    magnitudes: tuple[float, ...]


def lora_a(width: int) -> WeightModel:
    """LoRA A of a layer ``width`` wide: uniform magnitudes up to ``1/sqrt(width)``."""
    bound = 1.0 / math.sqrt(width)
    values = tuple(bound * (i + 0.5) / POINTS for i in range(POINTS))
    return WeightModel(f"LoRA A weights (width {width}, uniform in ±{bound:.3g})", values)


def full_weights(std: float = INIT_STD) -> WeightModel:
    """Every weight of a checkpoint: magnitudes of a normal with ``std``."""
    half = NormalDist(0.0, std)
    values = tuple(half.inv_cdf(0.5 + 0.5 * (i + 0.5) / POINTS) for i in range(POINTS))
    return WeightModel(f"weights (about normal, std {std:g})", values)


def bfloat16(value: float) -> float:
    """``value`` rounded to the nearest bfloat16 (ties to even), as torch rounds it."""
    bits = struct.unpack(">I", struct.pack(">f", value))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack(">f", struct.pack(">I", bits))[0]


def kept(lr: float, weights: WeightModel) -> float:
    """The share of ``weights`` held in bfloat16 that a step of ``lr`` changes."""
    moved = 0
    for w in weights.magnitudes:
        held = bfloat16(w)
        moved += bfloat16(held + lr) != held
    return moved / len(weights.magnitudes)


@cache  # a pure function of a few weight models, asked again for every target of every spec
def smallest_rate(weights: WeightModel, share: float = 0.5) -> float:
    """The smallest learning rate, to two significant digits, whose step changes at least
    ``share`` of ``weights`` held in bfloat16."""
    low, high = 1e-9, 1.0
    while high / low > 1.01:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if kept(middle, weights) >= share else (middle, high)
    rate = float(f"{high:.2g}")
    while kept(rate, weights) < share:  # two digits may round below the bisection's rate
        rate = float(f"{rate + 10 ** (math.floor(math.log10(rate)) - 1):.2g}")
    return rate
