"""The share of an optimizer step that bfloat16 (or float16) keeps, against torch's own
rounding and torch's own AdamW."""

from __future__ import annotations

import pytest
import torch

from vlagen.rounding import bfloat16, float16, full_weights, kept, lora_a, smallest_rate


@pytest.mark.parametrize("value", [0.0123456, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 3.3e-5, -0.75, 0.0])
def test_bfloat16_and_float16_round_as_torch_does(value: float) -> None:
    assert bfloat16(value) == torch.tensor(value).bfloat16().float().item()
    assert float16(value) == torch.tensor(value).half().float().item()


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


@pytest.mark.parametrize("lr", [3.1e-5, 1.4e-4])
def test_the_settled_share_is_what_torchs_adamw_keeps_on_noisy_gradients(lr: float) -> None:
    """torch's AdamW on bfloat16 weights of std 0.02, gradients of pure noise: the share its
    first step changes, and its 100th (settled) one, as :func:`kept` predicts them. A model
    of a settled step as large as the rate (the first steps') says 56% at 3.1e-5, where
    AdamW keeps 8%."""
    torch.manual_seed(0)
    weights = torch.nn.Parameter((torch.randn(20_000) * 0.02).bfloat16())
    adam = torch.optim.AdamW([weights], lr=lr, weight_decay=0.0)
    changed = []
    for _ in range(100):
        before = weights.detach().clone()
        weights.grad = torch.randn(20_000).bfloat16()
        adam.step()
        changed.append((weights.detach() != before).float().mean().item())
    assert changed[0] == pytest.approx(kept(lr, full_weights()), abs=0.02)
    assert changed[-1] == pytest.approx(kept(lr, full_weights(), settled=True), abs=0.02)


def test_settled_steps_need_a_larger_rate_than_first_ones() -> None:
    weights = lora_a(4096)
    first, settled = smallest_rate(weights), smallest_rate(weights, settled=True)
    assert kept(settled, weights, settled=True) >= 0.5 > kept(settled * 0.9, weights, settled=True)
    assert settled > 3 * first  # RLinf's LoRA rate 1e-4 keeps 42% of settled steps
    assert smallest_rate(full_weights(), dtype="float16", settled=True) < settled / 4
