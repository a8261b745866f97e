"""A spec's per-target `config` block: a framework's own knob, checked against that
framework's config snapshot, refused where the target derives it from the training block."""

from __future__ import annotations

import copy

import yaml

from conftest import REPO, spec_errors
from vlagen.load import load_spec_text
from vlagen.plan import make_plan

PORTABLE = yaml.safe_load((REPO / "specs" / "highway_qwen_portable.yaml").read_text("utf-8"))


def _with(configs: dict[int, dict]) -> dict:
    data = copy.deepcopy(PORTABLE)
    for index, config in configs.items():
        data["targets"][index]["config"] = config
    return data


def _plan(data: dict):
    return make_plan(load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec)


def test_each_frameworks_own_knob_reaches_its_config_with_a_comment() -> None:
    plan = _plan(
        _with(
            {
                0: {"actor.eps_clip": 0.3},
                1: {"algorithm.clip_ratio_high": 0.3},
                2: {"actor_rollout_ref.actor.clip_ratio_high": 0.31},
                3: {"actor_rollout_ref.actor.clip_ratio_high": 0.25},
            }
        )
    )
    areal, rlinf = plan.target("areal").plan, plan.target("rlinf").plan
    siirl, verl = plan.target("siirl").plan, plan.target("verl").plan
    assert areal.config["actor"]["eps_clip"] == 0.3
    assert rlinf.config["algorithm"]["clip_ratio_high"] == 0.3
    assert verl.config["actor_rollout_ref"]["actor"]["clip_ratio_high"] == 0.25
    overrides = [(k, v) for k, v in siirl.overrides if k.endswith("actor.clip_ratio_high")]
    assert overrides == [("actor_rollout_ref.actor.clip_ratio_high", 0.31)]  # replaced, once
    assert verl.comments["actor_rollout_ref.actor.clip_ratio_high"].startswith("set by the spec")


def test_unknown_mistyped_and_derived_keys_are_located_errors() -> None:
    errors = spec_errors(
        _with(
            {
                0: {"rollout.consumer_batch_size": 4},
                1: {"actor.optim.lr2": 1},
                2: {"actor_rollout_ref.actor.clip_ratio_high": "x"},
                3: {"data.train_batch_size": 16},
            }
        )
    )
    assert [e.split(": ", 2)[1] for e in errors] == [
        "targets[0].config.rollout.consumer_batch_size",
        "targets[1].config.actor.optim.lr2",
        "targets[2].config.actor_rollout_ref.actor.clip_ratio_high",
        "targets[3].config.data.train_batch_size",
    ]
    assert "derives rollout.consumer_batch_size (8) from the spec: training.groups" in errors[0]
    assert "not a key of RLinf 0.3's config" in errors[1]
    assert "did you mean 'actor.optim.lr'?" in errors[1]
    assert "takes a float, got 'x'" in errors[2]
    assert "derives data.train_batch_size (8)" in errors[3] and "change that instead" in errors[3]
    assert all(e.startswith("spec.yaml:") and e.split(":")[1].isdigit() for e in errors)
