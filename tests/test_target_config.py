"""A spec's per-target `config` block: a framework's own knob, checked against that
framework's config snapshot, refused where the target derives it from the training block."""

from __future__ import annotations

import copy

import yaml

from conftest import REPO, spec_errors
from vlagen.errors import SpecError
from vlagen.load import load_spec_text
from vlagen.plan import make_plan
from vlagen.spec import Training
from vlagen.targets.common.config_schema import flat_keys

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
    assert "the closest key, actor.optim.lr, is derived from the spec: training.learni" in errors[1]
    assert "takes a float, got 'x'" in errors[2]
    assert "derives data.train_batch_size (8)" in errors[3] and "change that instead" in errors[3]
    assert all(e.startswith("spec.yaml:") and e.split(":")[1].isdigit() for e in errors)


def _one_target(index: int, version: str | None = None) -> dict:
    """PORTABLE with its ``index``-th target alone (at ``version``), whose envs may then
    differ from the episodes of an update where that target allows it."""
    data = copy.deepcopy(PORTABLE)
    data["targets"] = [data["targets"][index]]
    if version is not None:
        data["targets"][0]["version"] = version
    return data


def _flat_config(data: dict) -> dict[str, object]:
    """The target's generated config (its Hydra YAML, or siiRL's CLI overrides), flat."""
    plan = _plan(data).targets[0].plan
    config = getattr(plan, "config", None)
    return flat_keys(config) if isinstance(config, dict) else dict(plan.overrides)


#: Another value of each training field, tried in turn until the spec stays valid.
_OTHER = {
    "seed": lambda t: [t["seed"] + 1],
    "learning_rate": lambda t: [t["learning_rate"] / 2],
    "groups": lambda t: [t["groups"] * 2],
    "group_size": lambda t: [t["group_size"] * 2],
    "mini_batches": lambda t: [t["mini_batches"] * 2, t["mini_batches"] // 2],
    "micro_batch_size_per_gpu": lambda t: [t["micro_batch_size_per_gpu"] * 2],
    "envs": lambda t: [t["groups"] * t["group_size"] // 2, t["groups"] * t["group_size"] * 2],
    "temperature": lambda t: [0.7],
    "gradient_checkpointing": lambda t: [True, False],
}

_TARGETS = [(0, None), (1, None), (1, "0.2"), (2, None), (3, None)]


def test_every_key_a_target_derives_from_training_is_refused_naming_the_field() -> None:
    """The keys a target derives from the training block, found by planning: each training
    field changed in turn, the config keys whose values follow it. Each must be one the
    target declares as derived, and a config block setting it is refused naming where it
    comes from (actor.optim.lr was set by the block over training.learning_rate)."""
    from vlagen.targets import find_target

    assert set(_OTHER) == set(Training.model_fields)  # a new training field is tried too
    moved: set[str] = set()
    for index, version in _TARGETS:
        data = _one_target(index, version)
        target = data["targets"][0]
        decl = find_target(target["framework"], target["version"])
        spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
        base = _flat_config(data)
        follows: dict[str, str] = {}
        for field, others in _OTHER.items():
            training = spec.training.model_dump()
            training["envs"] = spec.training.in_flight
            for value in others(training):
                changed = copy.deepcopy(data)
                changed.setdefault("training", {})[field] = value
                try:
                    config = _flat_config(changed)
                except SpecError:
                    continue  # the target's own rules refuse this value; try the next
                moved.add(field)
                for key in base:
                    if config.get(key) != base[key]:
                        follows.setdefault(key, field)
                break
        derived = {d.key: d for d in decl.derived(spec, 0)}
        # Defaults computed from other config keys (AReaL's reward_clip, from the episode
        # length and the group): a block may set them, as it may set the keys they follow.
        defaults = {
            d.key
            for d in _plan(data).targets[0].plan.derived
            if not d.source.startswith(("training.", "env.", "resources."))
        }
        follows = {k: f for k, f in follows.items() if k not in defaults}
        assert set(follows) <= set(derived), (decl.key, set(follows) - set(derived))
        assert {"training.learning_rate", "training.seed"} & {d.source for d in derived.values()}
        for key, row in derived.items():
            block = copy.deepcopy(data)
            block["targets"][0]["config"] = {key: base[key]}
            (error,) = spec_errors(block)
            assert error.split(": ", 2)[1].startswith("targets[0].config."), error
            assert f"derives {key} (" in error and f"from the spec: {row.source}" in error
    assert moved == set(_OTHER)  # every field was changed somewhere: no check passes empty


def test_the_learning_rate_and_seed_are_refused_on_every_framework() -> None:
    """The keys the review found set over the training block, by name."""
    errors = spec_errors(
        _with(
            {
                0: {"actor.optimizer.lr": 1.0e-4},
                1: {"actor.optim.lr": 1.0e-4, "actor.seed": 3},
                2: {"actor_rollout_ref.actor.optim.lr": 1.0e-4, "trainer.seed": 3},
                3: {"actor_rollout_ref.actor.optim.lr": 1.0e-4},
            }
        )
    )
    assert len(errors) == 6
    assert (
        sum("from the spec: training.learning_rate; change that instead" in e for e in errors) == 4
    )
    assert sum("derives actor.seed (" in e and "training.seed;" in e for e in errors) == 1
    assert sum("derives trainer.seed (" in e and "training.seed;" in e for e in errors) == 1


def test_a_float_yaml_reads_as_text_says_so_and_how_to_write_it() -> None:
    """YAML 1.1 reads `1e-2` (no dot) and `5.0e3` (no sign) as strings; the refusal said
    only "a float, got '1e-2'"."""
    text = yaml.safe_dump(_with({1: {"actor.optim.weight_decay": 0.5}}), sort_keys=False)
    assert text.count("weight_decay: 0.5") == 1
    for written, instead in [("1e-2", "1.0e-2"), ("5.0e3", "5.0e+3"), ("-2E-3", "-2.0e-3")]:
        (error,) = spec_errors(text.replace("weight_decay: 0.5", f"weight_decay: {written}"))
        assert error.endswith(
            f"takes a float, got '{written}': YAML reads {written} as text, not a number (a "
            f"float with an exponent needs a dot and a signed exponent); write {instead}"
        ), error
        fixed = text.replace("weight_decay: 0.5", f"weight_decay: {instead}")
        assert load_spec_text(fixed).spec.targets[1].config == {  # what it says to write loads
            "actor.optim.weight_decay": float(instead)
        }


def test_a_yaml_boolean_for_a_number_says_yaml_read_it_so() -> None:
    """`clip_grad: on` read "takes a float, got True", without the explanation the spec's
    own numbers give (unquoted on/off, yes/no, true/false are YAML booleans)."""
    text = yaml.safe_dump(_with({1: {"actor.optim.clip_grad": 1.0}}), sort_keys=False)
    assert text.count("clip_grad: 1.0") == 1
    (error,) = spec_errors(text.replace("clip_grad: 1.0", "clip_grad: on"))
    assert error.endswith(
        "takes a float, got true, which YAML reads as a boolean (unquoted true/false, yes/no "
        "and on/off are booleans)"
    ), error


def test_a_nested_config_block_is_told_its_keys_are_dotted_paths() -> None:
    """`actor: {optim: {lr: ...}}` read "actor is not a key ... did you mean 'actor.seed'?":
    no word of dotted paths, and a suggestion (derived from training.seed) refused in turn."""
    errors = spec_errors(
        _with(
            {0: {"actor": {"optimizer": {"weight_decay": 0.1}}}, 1: {"actor": {"optim": {"lr": 1}}}}
        )
    )
    assert [e.split(": ", 2)[1] for e in errors] == [
        "targets[0].config.actor",
        "targets[1].config.actor",
    ]
    assert errors[0].endswith(
        "the config block's keys are dotted paths, each to one value: write "
        "actor.optimizer.weight_decay: ..., not actor: {optimizer: {weight_decay: ...}}"
    ), errors[0]
    assert (
        "write actor.optim.lr: ..., not actor: {optim: {lr: ...}} (actor.optim.lr is " in errors[1]
    )
    assert "derived from the spec: training.learning_rate" in errors[1]
    assert "did you mean" not in errors[1]


def test_a_misspelt_key_is_offered_only_keys_the_target_takes() -> None:
    (derived,) = spec_errors(_with({1: {"actor.sed": 3}}))
    assert derived.endswith(
        "the closest key, actor.seed, is derived from the spec: training.seed; change that instead"
    ), derived
    (taken,) = spec_errors(_with({1: {"actor.optim.weight_decey": 0.1}}))
    assert taken.endswith("did you mean 'actor.optim.weight_decay'?"), taken
