"""The AReaL 1.0 target: its config against AReaL 1.0.4's config dataclasses (rebuilt from the
installed AReaL), AReaL's rules and the model it can train as located plan-time errors, and
``resources.rollout_gpus`` honoured by AReaL alone."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from conftest import REPO, spec_errors
from vlagen.load import load_spec_text
from vlagen.plan import make_plan
from vlagen.targets.areal.layout import OWN_KEYS, SCHEMA, config_problems
from vlagen.targets.common.config_schema import dataclass_keys, flat_keys, load_schema

HIGHWAY = REPO / "specs" / "highway_qwen_waypoint.yaml"


def _data() -> dict:
    return yaml.safe_load(HIGHWAY.read_text("utf-8"))


def _plan(data: dict):
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    return make_plan(spec)


def _errors(data: dict) -> dict[str, str]:
    """``{"a.b": message}`` of the spec's errors, each located in the file (``spec.yaml:L:C``)."""
    out = {}
    for line in spec_errors(data):
        found = re.fullmatch(r"spec\.yaml:\d+:\d+: ([\w.\[\]]+): (.*)", line)
        assert found, line
        out[found[1]] = found[2]
    return out


def test_the_snapshot_is_arealss_grpo_config() -> None:
    cli_args = pytest.importorskip("areal.api.cli_args")
    assert dataclass_keys(cli_args.GRPOConfig, optional_sections=True) == load_schema(SCHEMA)


def test_the_server_install_is_what_areals_metadata_declares() -> None:
    """The README's install facts, read from the installed wheel's METADATA: areal's own
    requirements name no inference server, its ``sglang`` extra (the target's extra's) pins
    SGLang on x86-64 Linux, and its torch and transformers ranges are the plan's."""
    from importlib.metadata import PackageNotFoundError, requires

    from vlagen.targets import find_target
    from vlagen.targets.areal.plan import AREAL_VERSION, SERVER

    try:
        declared = requires("areal") or []
    except PackageNotFoundError:
        pytest.skip("areal is not installed")
    plain = [r for r in declared if "extra ==" not in r]
    assert not [r for r in plain if r.lower().startswith(("sglang", "vllm"))]
    server = [r for r in declared if f"extra == '{SERVER.extra}'" in r and r.startswith("sglang")]
    assert [r.split(";")[0].strip() for r in server] == [f"sglang[tracing]=={SERVER.version}"]
    assert "platform_machine == 'x86_64' and sys_platform == 'linux'" in server[0]
    linux_torch = [r for r in plain if r.startswith("torch>") and "!= 'x86_64'" in r]
    assert [r.split(";")[0].strip() for r in linux_torch] == [SERVER.areal_torch]
    assert SERVER.areal_transformers in plain
    decl = find_target("areal", "1.0")
    assert decl.requirement == f"areal[{SERVER.extra}]=={AREAL_VERSION}"


def test_the_config_fits_areals_dataclasses() -> None:
    config = _plan(_data()).target("areal").plan.config
    assert config_problems(config) == []
    assert {k for k in flat_keys(config) if k.startswith("vla.")} == OWN_KEYS
    broken = copy.deepcopy(config)
    broken["actor"]["ppo_n_minibatches"] = "2"
    broken["actor"]["optimizer"]["learning_rate"] = 1e-5
    broken["rollout"]["fileroot"] = None  # optional there: fine
    assert config_problems(broken) == [
        "actor.optimizer.learning_rate: not a key of AReaL's GRPOConfig (nothing would read it)",
        "actor.ppo_n_minibatches: '2' is not a int",
    ]


def test_the_config_lays_out_the_spec() -> None:
    plan = _plan(_data()).target("areal").plan
    config = plan.config
    assert (plan.rollout_gpus, plan.train_gpus) == (4, 4)
    assert config["rollout"]["backend"] == "sglang:d4p1t1"
    assert config["actor"]["backend"] == "fsdp:d4p1t1"
    assert plan.tokens == 8 and config["gconfig"]["max_new_tokens"] == 8
    assert config["gconfig"]["n_samples"] == 1 and config["vla"]["group_size"] == 4
    assert config["actor"]["ppo_n_minibatches"] == 2  # training.mini_batches
    # 16 image tokens (112 x 112 in 28-pixel merged patches) + 128 prompt text + 8 actions
    assert plan.row_tokens == 152 and config["actor"]["mb_spec"]["max_tokens_per_mb"] == 4 * 152
    # every episode of an update at once: 8 groups of 4 envs, each workflow episode a group
    assert config["rollout"]["max_concurrent_rollouts"] == 8
    assert config["rollout"]["consumer_batch_size"] == config["train_dataset"]["batch_size"] == 8
    assert plan.decisions == 6  # 24 steps, 4 waypoints each


def test_the_gpu_split_must_leave_each_side_a_gpu() -> None:
    data = _data()
    data["resources"]["rollout_gpus"] = 8
    assert "resources.rollout_gpus" in _errors(data)
    data["resources"].update(gpus_per_node=1, rollout_gpus=None)
    assert "must leave both at least one" in _errors(data)["resources.rollout_gpus"]


def test_grpo_needs_a_group_and_whole_minibatches() -> None:
    data = _data()
    data["training"].update(group_size=1, mini_batches=3)
    errors = _errors(data)
    assert "group_size must be at least 2" in errors["training.group_size"]
    message = errors["training.mini_batches"]
    assert "the 8 groups of an update split into mini_batches (3)" in message
    assert "set mini_batches to 2 or groups to 9" in message


def test_fewer_envs_than_episodes_run_fewer_groups_at_once() -> None:
    data = _data()
    data["training"]["envs"] = 16
    config = _plan(data).target("areal").plan.config
    assert config["rollout"]["max_concurrent_rollouts"] == 4  # 16 envs / group_size 4


def test_an_openvla_checkpoint_names_what_areal_can_train() -> None:
    data = _data()
    data["model"].update(backbone="llava", vocab_size=32000)
    data["model"]["image_size"] = [224, 224]
    message = _errors(data)["model.backbone"]
    assert "'qwen2_5_vl', 'qwen3_vl', not 'llava'" in message
    assert "VALID_VISION_MODELS" in message


def test_parallel_decoding_and_float16_are_refused() -> None:
    data = _data()
    data["model"].update(family="openvla_oft", dtype="float16")
    data["env"]["action"] = {"kind": "continuous", "dim": 2}
    errors = _errors(data)
    assert "cannot train family 'openvla_oft'" in errors["model.family"]
    assert "use bfloat16" in errors["model.dtype"]


@pytest.mark.parametrize(
    "target",
    [
        {"framework": "rlinf", "version": "0.3", "algorithm": "grpo"},
        {"framework": "verl", "version": "0.7", "algorithm": "grpo"},
    ],
)
def test_other_targets_refuse_rollout_gpus(target: dict) -> None:
    data = yaml.safe_load((REPO / "specs" / "pusht_openvla_oft.yaml").read_text("utf-8"))
    data["targets"] = [target]
    data["resources"]["rollout_gpus"] = 2
    message = _errors(data)["resources.rollout_gpus"]
    assert "does not honour resources.rollout_gpus (2)" in message
    assert "AReaL's inference/training split" in message


def test_the_groups_split_over_the_training_gpus() -> None:
    # 6 groups over fsdp:d4: AReaL's dispatch (balanced_greedy_partition) raises ValueError
    data = _data()
    data["training"].update(groups=6, mini_batches=1)
    message = _errors(data)["training.groups"]
    assert "balanced_greedy_partition" in message and "the 4 training GPUs" in message
    assert message.endswith("set training.groups to 8")
    data["training"].update(groups=8)
    assert _plan(data).target("areal").plan.config["train_dataset"]["batch_size"] == 8
    # the number suggested keeps the mini-batches and the envs whole
    data["training"].update(groups=6, mini_batches=3, envs=20)
    assert _errors(data)["training.groups"].endswith("set training.groups to 60")
    data["training"].update(groups=60)
    assert _plan(data).target("areal").plan.config["rollout"]["max_concurrent_rollouts"] == 5


def test_the_groups_split_follows_rollout_gpus() -> None:
    data = _data()
    data["resources"]["rollout_gpus"] = 5  # 3 training GPUs: 8 groups do not split
    assert "the 3 training GPUs" in _errors(data)["training.groups"]
    data["training"]["groups"] = 6  # 6 % mini_batches 2 == 0 too
    assert _plan(data).target("areal").plan.train_gpus == 3


def test_the_reward_clip_is_above_any_credit_the_workflow_gives() -> None:
    """AReaL clips ``rewards`` (the workflow's per-decision credit) at ``actor.reward_clip``,
    20 by default. One decision rewarded in a group of 8 episodes of 60 decisions gets a
    credit of ``sqrt(7 * 60)``, about 20.5: the config's clip is the plan's bound instead,
    ``max_decisions x sqrt(group_size)``, and follows the keys a spec's config block changes."""
    data = _data()
    data["env"]["max_episode_steps"] = 240  # 60 decisions of 4 waypoints
    data["training"]["group_size"] = 8
    data["training"]["groups"] = 4
    plan = _plan(data).target("areal").plan
    assert plan.decisions == 60 and plan.group == 8
    worst = (7 * 60) ** 0.5  # the one-rewarded-decision group's credit
    clip = plan.config["actor"]["reward_clip"]
    assert clip == 170.0 and clip >= worst > 20  # ceil(60 sqrt(8))
    assert plan.comments["actor.reward_clip"].startswith("= (vla.max_decisions")
    data["targets"][0]["config"] = {"actor.reward_scaling": 2.0, "actor.reward_bias": -1.0}
    assert _plan(data).target("areal").plan.config["actor"]["reward_clip"] == 342.0
    data["targets"][0]["config"] = {"actor.reward_clip": 5.0}
    assert _plan(data).target("areal").plan.config["actor"]["reward_clip"] == 5.0
