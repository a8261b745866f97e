# Scaffolded by vlagen 0.1.0.
# This file is yours: vlagen never overwrites it.
"""Your policy module (family ``custom``), started by vlagen: yours to edit; regeneration
leaves this file alone.

A small convolutional policy implementing :class:`cartpole_pixels.model.custom.PolicyModule`:
each camera frame through a strided conv encoder, the state (when the env has one)
through a linear layer, then one linear head of ``TOKENS x BINS`` logits and, when the spec
has a value head, a value. ``save_pretrained`` writes ``config.json`` and the weights
(``weights.pt``); ``from_pretrained`` reads them back.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

from cartpole_pixels.model.action_tokens import BINS
from cartpole_pixels.model.custom import TOKENS, VALUE_HEAD
from cartpole_pixels.model.inputs import CAMERAS, ModelInputs
from cartpole_pixels.spec import SPEC


class PixelPolicy(nn.Module):
    def __init__(self, width: int = 32, hidden: int = 256) -> None:
        super().__init__()
        self.config = {"width": width, "hidden": hidden}
        self.encoder = nn.Sequential(
            nn.Conv2d(3, width, 5, stride=2, padding=2),
            nn.GELU(),
            nn.Conv2d(width, width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(width, width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.AdaptiveAvgPool2d(4),
            nn.Flatten(),
        )
        features = len(CAMERAS) * width * 16
        state_dim = SPEC.env.state_dim or 0
        self.state = nn.Linear(state_dim, hidden) if state_dim else None
        self.trunk = nn.Sequential(nn.Linear(features, hidden), nn.GELU())
        self.logits = nn.Linear(hidden, TOKENS * BINS)
        self.value = nn.Linear(hidden, 1) if VALUE_HEAD else None

    def forward(self, inputs: ModelInputs) -> tuple[torch.Tensor, torch.Tensor | None]:
        n = inputs.batch_size
        images = inputs.pixel_values.to(self.logits.weight.dtype)
        features = self.encoder(images).reshape(n, -1)  # cameras concatenated per env
        hidden = self.trunk(features)
        if self.state is not None and inputs.state is not None:
            hidden = hidden + self.state(inputs.state.to(hidden.dtype))
        logits = self.logits(hidden).view(n, TOKENS, BINS)
        values = self.value(hidden).squeeze(-1) if self.value is not None else None
        return logits, values

    @classmethod
    def from_pretrained(
        cls, checkpoint: str, *, dtype: torch.dtype = torch.float32
    ) -> PixelPolicy:
        path = Path(checkpoint)
        module = cls(**json.loads((path / "config.json").read_text()))
        state = torch.load(path / "weights.pt", map_location="cpu", weights_only=True)
        module.load_state_dict(state)
        return module.to(dtype)

    def save_pretrained(self, directory: str) -> None:
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        (path / "config.json").write_text(json.dumps(self.config))
        torch.save(self.state_dict(), path / "weights.pt")

    @classmethod
    def tiny(cls, seed: int) -> PixelPolicy:
        torch.manual_seed(seed)
        return cls(width=8, hidden=32)
