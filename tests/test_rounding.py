"""The share of an optimizer step that bfloat16 keeps, against torch's own rounding."""

from __future__ import annotations

import pytest
import torch

from vlagen.rounding import bfloat16, full_weights, kept, lora_a, smallest_rate


@pytest.mark.parametrize("value", [0.0123456, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 3.3e-5, -0.75, 0.0])
def test_bfloat16_rounds_as_torch_does(value: float) -> None:
    assert bfloat16(value) == torch.tensor(value).bfloat16().float().item()


def test_the_share_kept_is_what_torch_keeps_on_the_same_weights() -> None:
    weights = lora_a(4096)
    held = torch.tensor(weights.magnitudes).bfloat16()
    for lr in (5e-6, 3e-5, 1e-4):
        stepped = (held.float() + lr).bfloat16()
        assert kept(lr, weights) == pytest.approx((stepped != held).float().mean().item())


def test_the_reviews_case_loses_most_of_its_steps_and_the_reference_rate_keeps_them() -> None:
    # OpenVLA-OFT 7B (width 4096), LoRA in bfloat16: 5e-6 moves one A weight in eight;
    # RLinf's LoRA configs' 1e-4 moves them all
    assert kept(5e-6, lora_a(4096)) < 0.2
    assert kept(1e-4, lora_a(4096)) == 1.0
    assert kept(1e-5, full_weights()) < kept(1e-4, full_weights())


def test_the_smallest_rate_keeps_half_and_a_smaller_one_does_not() -> None:
    weights = lora_a(4096)
    rate = smallest_rate(weights)
    assert kept(rate, weights) >= 0.5 > kept(rate * 0.9, weights)
