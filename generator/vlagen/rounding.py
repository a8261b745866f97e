"""How much of an optimizer step survives the dtype its weights are held in.

Adam's update is normalized element by element, whatever its gradient's scale: its first
steps move every weight by about the learning rate; once its moments settle, where the
gradient is mostly noise (as a policy gradient from a few dozen episodes is), each step is
about normal with standard deviation :data:`ADAM_SETTLED` of the rate (``m / sqrt(v)`` for
gradients of pure noise: ``m`` an average of them, ``sqrt((1 - b1) / (1 + b1))`` wide at ``b1``
0.9, ``v`` near their mean square). torch's AdamW stepping 100,000 bfloat16 weights of std
0.02 with such gradients changed, at 3.1e-5, 56% of them at its first step and 8.2% at its
100th (this model: 56% and 8.3%); at 1.4e-4, 99.8% and 33% (99.8% and 34%). A weight held
in bfloat16 has 8 significant bits (float16: 11): the representable values around ``|w|``
are ``2 ** (floor(log2 |w|) - 7)`` apart (``- 10``), and a step below half that spacing
leaves the weight where it was. Whether most steps survive depends on the weights'
magnitudes, which at full size are, for what a spec trains:

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

__all__ = [
    "ADAM_SETTLED",
    "WeightModel",
    "bfloat16",
    "float16",
    "full_weights",
    "kept",
    "lora_a",
    "smallest_rate",
]

POINTS = 2000  #: quantiles each weight model is evaluated at
INIT_STD = 0.02  #: Llama's and Qwen's initializer range
#: Adam's settled steps' standard deviation, as a share of the learning rate, where the
#: gradient is mostly noise
ADAM_SETTLED = math.sqrt((1 - 0.9) / (1 + 0.9))
_NORMAL = NormalDist()


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


def float16(value: float) -> float:
    """``value`` rounded to the nearest float16 (ties to even), as torch rounds it."""
    return struct.unpack("<e", struct.pack("<e", value))[0]


#: dtype name → its rounding
ROUNDING = {"bfloat16": bfloat16, "float16": float16}
#: dtype name → the struct formats its values are held in and their bits read as, and the
#: step of those bits between neighbouring values (bfloat16: float32's top 16 bits)
LAYOUT = {"bfloat16": ("f", "I", 0x10000), "float16": ("e", "H", 1)}


def _gaps(held: float, dtype: str) -> tuple[float, float]:
    """Half the distance from ``held`` (a positive value of ``dtype``) to the next value of
    ``dtype`` above it and below it: a step past either is not rounded away."""
    value, raw, unit = LAYOUT[dtype]
    bits = struct.unpack(raw, struct.pack(value, held))[0]

    def at(b: int) -> float:
        return struct.unpack(value, struct.pack(raw, b))[0]

    up = at(bits + unit)
    down = at(bits - unit) if bits else -up
    return (up - held) / 2, (held - down) / 2


def kept(lr: float, weights: WeightModel, dtype: str = "bfloat16", settled: bool = False) -> float:
    """The share of ``weights`` held in ``dtype`` that a step changes: a first step (``lr``
    per weight), or the expected share for a settled one (about normal, standard deviation
    :data:`ADAM_SETTLED` x ``lr``)."""
    rounded, spread = ROUNDING[dtype], ADAM_SETTLED * lr
    moved = 0.0
    for w in weights.magnitudes:
        held = rounded(w)
        if not settled:
            moved += rounded(held + lr) != held
            continue
        above, below = _gaps(held, dtype)
        moved += (1 - _NORMAL.cdf(above / spread)) + _NORMAL.cdf(-below / spread)
    return moved / len(weights.magnitudes)


@cache  # a pure function of a few weight models, asked again for every target of every spec
def smallest_rate(
    weights: WeightModel, share: float = 0.5, dtype: str = "bfloat16", settled: bool = False
) -> float:
    """The smallest learning rate, to two significant digits, whose steps (first or settled,
    as :func:`kept` says) change at least ``share`` of ``weights`` held in ``dtype``."""

    def enough(rate: float) -> bool:
        return kept(rate, weights, dtype, settled) >= share

    low, high = 1e-9, 1.0
    while high / low > 1.01:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if enough(middle) else (middle, high)
    rate = float(f"{high:.2g}")
    while not enough(rate):  # two digits may round below the bisection's rate
        rate = float(f"{rate + 10 ** (math.floor(math.log10(rate)) - 1):.2g}")
    return rate
