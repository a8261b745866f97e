"""The verl 0.7 target: its config against the layout verl composes for VLA training (rebuilt
from the real v0.7.1 source), verl's rules as located plan-time errors, the frameworks vlagen
knowingly does not target, and verl installed from a source checkout."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from conftest import REPO, VARIANT_MARKERS, run_package_tests, spec_errors
from vlagen.api import generate, write
from vlagen.cli import main
from vlagen.load import load_spec_text
from vlagen.plan import make_plan
from vlagen.targets import UNSUPPORTED, find_target
from vlagen.targets.common.config_schema import flat_keys, load_schema, render_layout
from vlagen.targets.verl.layout import ADDED_KEYS, NOT_MIRRORED, OWN_KEYS, config_problems
from vlagen.targets.verl.snapshot import SNAPSHOT, snapshot

PUSHT = REPO / "specs" / "pusht_openvla_oft.yaml"


def _data() -> dict:
    return yaml.safe_load(PUSHT.read_text("utf-8"))


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


# --- the config layout ---------------------------------------------------------------------


def test_the_snapshot_is_what_verl_composes(verl_src: Path) -> None:
    """``ppo_trainer`` composed by Hydra from the v0.7.1 source with ``rob_ppo_trainer.yaml``
    merged on top: rebuilt here, it is the committed ``verl_0_7.config.json``."""
    rebuilt = snapshot(verl_src)
    assert rebuilt["verl"] == "0.7.1"
    assert render_layout(rebuilt) == SNAPSHOT.read_text("utf-8")
    assert len(rebuilt["keys"]) > 500 and len(rebuilt["vla_keys"]) > 20


def test_the_config_fits_verls_layout() -> None:
    config = _plan(_data()).target("verl").plan.config
    assert config_problems(config) == []
    broken = copy.deepcopy(config)
    broken["actor_rollout_ref"]["actor"]["ppo_mini_batch_size"] = "64"
    broken["actor_rollout_ref"]["actor"]["optim"]["learning_rate"] = 1e-5
    del broken["env"]["disagg_sim"]["nnodes"]
    broken["actor_rollout_ref"]["model"]["override_config"] = {"attn_implementation": "sdpa"}
    assert config_problems(broken) == [
        "actor_rollout_ref.actor.ppo_mini_batch_size: '64' is not a int",
        "actor_rollout_ref.actor.optim.learning_rate: not a key of verl's config (nothing "
        "would read it)",
        "env.disagg_sim.nnodes: missing (rob_ppo_trainer.yaml sets a int)",
    ]


def test_the_exceptions_are_what_they_claim() -> None:
    """Our own keys and the ``+`` keys are not verl's; every NOT_MIRRORED prefix names keys
    ``rob_ppo_trainer.yaml`` sets; the config sets every added key it documents."""
    layout = load_schema("verl_0_7")
    for key in (*OWN_KEYS, *ADDED_KEYS):
        assert key not in layout["keys"], key
    for prefix in NOT_MIRRORED:
        assert any(k == prefix or k.startswith(prefix) for k in layout["vla_keys"]), prefix
    ours = flat_keys(_plan(_data()).target("verl").plan.config)
    assert set(ADDED_KEYS) | set(OWN_KEYS) <= set(ours)


def test_every_key_the_config_sets_is_read_by_verl(verl_src: Path) -> None:
    """Each key's name occurs in verl's Python source (as an attribute, a string or a keyword),
    and the keys NOT_MIRRORED says nothing reads occur in none of it."""
    source = "\n".join(p.read_text("utf-8") for p in (verl_src / "verl").rglob("*.py"))
    config = _plan(_data()).target("verl").plan.config
    ours = flat_keys({k: v for k, v in config.items() if k not in ("hydra", "defaults")})
    # main_ppo.main passes ray_kwargs.ray_init.runtime_env whole to ray.init: Ray reads it
    runtime_env = "ray_kwargs.ray_init.runtime_env."
    main_ppo = (verl_src / "verl/experimental/vla/main_ppo.py").read_text("utf-8")
    assert 'ray_init_kwargs.get("runtime_env", {})' in main_ppo
    unread = [
        key
        for key in ours
        if key not in OWN_KEYS
        and not key.startswith(runtime_env)
        and not re.search(rf"""(\.|["']){re.escape(key.rsplit(".", 1)[-1])}\b""", source)
    ]
    assert unread == []
    for key, why in NOT_MIRRORED.items():
        if why.startswith("read by nothing"):  # not from a config (a model attribute may be)
            name = key.rsplit(".", 1)[-1]
            read = rf"""(config|cfg)[\w.]*\.{name}\b|get\(\s*["']{name}["']|\[["']{name}["']\]"""
            assert not re.search(read, source), key


def test_the_config_restates_what_rob_ppo_trainer_sets() -> None:
    config = _plan(_data()).target("verl").plan.config
    assert config["defaults"] == ["ppo_trainer", "_self_"]
    assert config["hydra"]["searchpath"] == ["pkg://verl.trainer.config"]
    rollout = config["actor_rollout_ref"]["rollout"]
    assert (rollout["mode"], rollout["name"], rollout["tensor_model_parallel_size"]) == (
        "async_envloop",
        "hf",
        1,
    )
    assert config["env"]["train"]["num_envs"] * config["env"]["rollout"]["pipeline_stage_num"] == 16


# --- plan-time rules ----------------------------------------------------------------------


def test_the_example_plans() -> None:
    plan = _plan(_data()).target("verl").plan
    assert (plan.env_world, plan.actor_world, plan.group, plan.decisions) == (4, 4, 8, 25)


def test_envs_other_than_the_updates_episodes_are_refused() -> None:
    data = _data()
    data["training"]["envs"] = 32
    errors = _errors(data)
    assert list(errors) == ["training.envs"]
    message = errors["training.envs"]
    assert message.startswith("verl 0.7 (targets[0]) runs every episode of an update at once")
    assert "reset_envs_to_state_ids asserts" in message and "env_worker.py" in message
    assert "groups x group_size (64), not training.envs (32)" in message
    assert "set training.envs to 64" in message


def test_the_driving_example_takes_verl_beside_rlinf_and_siirl() -> None:
    """highway_openvla's training block (16 groups of 2, envs unset) fits RLinf, siiRL and
    verl at once: each derives its own env split from the 32 episodes of an update."""
    data = yaml.safe_load((REPO / "specs" / "highway_openvla.yaml").read_text("utf-8"))
    data["targets"].append({"framework": "verl", "version": "0.7", "algorithm": "grpo"})
    plan = _plan(data)
    assert plan.target("verl").plan.config["env"]["train"]["num_envs"] == 16  # 2 env workers
    assert plan.target("rlinf").plan.config["env"]["train"]["total_num_envs"] == 32  # 8 / GPU
    overrides = dict(plan.target("siirl").plan.overrides)
    # 8 envs at once on each of 4 rollout workers: siiRL runs num_envs // rollout.n rows at once
    assert overrides["actor_rollout_ref.embodied.env.num_envs"] == 16
    assert plan.target("verl").plan.config["data"]["train_batch_size"] == 16


def test_stages_that_do_not_split_the_envs() -> None:
    data = _data()
    data["resources"]["pipeline_stages"] = 3
    errors = _errors(data)
    assert list(errors) == ["training.groups"]
    assert "EnvWorker.init_worker builds one EnvManager per stage" in errors["training.groups"]


def test_a_group_split_over_pipeline_stages_is_refused(runner, tmp_path: Path) -> None:
    """Four stages of 4 envs each per env worker would take one group of rollout.n = 8 rows:
    its halves would start from different seeds (the stage enters the package's group seed)."""
    data = _data()
    data["resources"]["pipeline_stages"] = 4
    spec, out = tmp_path / "spec.yaml", tmp_path / "out"
    spec.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    refused = runner.invoke(main, ["new", str(spec), "-o", str(out)])
    assert refused.exit_code == 2 and not out.exists()
    assert re.search(r"spec\.yaml:\d+:\d+: training\.groups: verl 0\.7", refused.output)
    assert "Traceback" not in refused.output
    errors = _errors(data)
    assert list(errors) == ["training.groups"]
    message = errors["training.groups"]
    assert message.startswith("verl 0.7 (targets[0]) deals an update's 64 episodes")
    assert "4 env workers x 4 pipeline stages" in message
    assert "set training.groups to 16" in message
    data["training"]["groups"] = 16
    assert _plan(data).target("verl").plan.num_envs == 8


def test_envloop_needs_total_envs_divisible_by_the_stages() -> None:
    """EnvLoop divides env workers x env.train.num_envs (per stage) by the stages."""
    data = _data()
    data["resources"] = {"gpus_per_node": 2, "env_gpus_per_node": 1, "pipeline_stages": 4}
    data["training"] = {"group_size": 2, "groups": 4, "mini_batches": 2}  # 2 envs per stage
    data["env"]["max_episode_steps"] = 16
    errors = _errors(data)
    assert "EnvLoop.__init__, env_loop.py raises ValueError" in errors["training.groups"]


def test_steps_that_are_not_whole_chunks() -> None:
    data = _data()
    data["env"]["max_episode_steps"] = 201
    errors = _errors(data)
    assert "EnvLoop.max_interactions, env_loop.py" in errors["env.max_episode_steps"]


def test_micro_batches_that_do_not_split_the_mini_batch() -> None:
    data = _data()
    data["training"]["micro_batch_size_per_gpu"] = 3
    errors = _errors(data)
    message = errors["training.micro_batch_size_per_gpu"]
    assert "ActorRolloutRefWorker.__init__, verl/workers/fsdp_workers.py" in message
    assert "= 800 decision rows" in message


def test_observations_that_do_not_split_over_the_rollout_workers() -> None:
    data = _data()
    data["resources"] = {"gpus_per_node": 8, "env_gpus_per_node": 1}  # 1 env, 7 rollout GPUs
    data["training"].update(groups=1, mini_batches=1)
    errors = _errors(data)
    assert "DataProto.chunk asserts an equal split" in errors["training.groups"]


def test_no_gpu_left_for_the_actor() -> None:
    data = _data()
    data["resources"] = {"gpus_per_node": 8, "env_gpus_per_node": 8}
    errors = _errors(data)
    assert "8 env + 0 actor/rollout" in errors["resources.env_gpus_per_node"]


def test_more_cameras_than_verl_carries() -> None:
    data = _data()
    data["env"]["cameras"] += [
        {"name": "wrist", "height": 96, "width": 96, "role": "wrist"},
        {"name": "side", "height": 96, "width": 96},
    ]
    errors = _errors(data)
    assert "create_env_batch_dataproto" in errors["env.cameras"]


def test_a_family_verl_cannot_train_names_verls_lines() -> None:
    decl = find_target("verl", "0.7")
    assert decl is not None and "custom" not in decl.model_families
    data = _data()
    data["model"]["family"] = "custom"
    data["model"]["class_path"] = "my_nets.policy:Net"
    message = _errors(data)["model.family"]
    assert message.startswith("verl 0.7 (targets[0]) cannot train family 'custom'")
    for where in (
        "verl/experimental/vla/main_ppo.py:101",
        "verl/workers/config/model.py:158, 174, 200",
        "verl/experimental/vla/dp_rob.py:238-247",
    ):
        assert where in message


def test_the_named_lines_of_verl_read_what_the_refusal_says(verl_src: Path) -> None:
    """The lines the custom family's refusal names hold the tokenizer, config and key
    selection it describes."""
    lines = {
        path: (verl_src / path).read_text("utf-8").splitlines()
        for path in (
            "verl/experimental/vla/main_ppo.py",
            "verl/workers/config/model.py",
            "verl/experimental/vla/dp_rob.py",
            "verl/experimental/vla/rob_ray_trainer.py",
            "verl/experimental/vla/fsdp_workers.py",
        )
    }
    assert "hf_tokenizer(local_path)" in lines["verl/experimental/vla/main_ppo.py"][100]
    model = lines["verl/workers/config/model.py"]
    assert "hf_tokenizer(" in model[157] and "AutoConfig.from_pretrained(" in model[173]
    assert "len(self.architectures) == 1" in model[199]
    assert "HFModelConfig" in lines["verl/experimental/vla/fsdp_workers.py"][106]
    trainer = lines["verl/experimental/vla/rob_ray_trainer.py"]
    assert "eos_token_id" in trainer[297] and "pad_token_id" in trainer[299]
    dp_rob = lines["verl/experimental/vla/dp_rob.py"]
    assert dp_rob[237].strip() == "select_keys = [" and "data.select" in dp_rob[246]
    assert {'"pixel_values",', '"input_ids",'} <= {line.strip() for line in dp_rob[237:246]}


#: The Qwen2.5-VL waypoint example retargeted to verl, its training block as written (4 of
#: the 8 GPUs run env workers of 8 envs: 32 episodes = 8 groups x 4 rollouts).
QWEN_WAYPOINT = yaml.safe_load((REPO / "specs" / "highway_qwen_waypoint.yaml").read_text("utf-8"))
QWEN_WAYPOINT["targets"] = [{"framework": "verl", "version": "0.7", "algorithm": "grpo"}]


#: Backbone → the image size that gives it 8 x 8 patches, merged 2 x 2 into 16 image tokens.
QWEN_IMAGE_SIZES = {"qwen2_5_vl": [112, 112], "qwen3_vl": [128, 128]}


def qwen_waypoint(backbone: str) -> dict:
    data = copy.deepcopy(QWEN_WAYPOINT)
    data["model"]["backbone"] = backbone
    data["model"]["image_size"] = QWEN_IMAGE_SIZES[backbone]
    return data


@pytest.mark.parametrize("backbone", sorted(QWEN_IMAGE_SIZES))
def test_qwen_backbones_and_waypoints_plan(backbone: str) -> None:
    plan = _plan(qwen_waypoint(backbone))  # no refusal
    assert plan.target("verl").plan.model_type == backbone
    assert plan.model.family.name == "waypoint"
    assert plan.model.image_grid == (1, 8, 8) and plan.model.image_tokens == 16


@pytest.mark.slow(minutes=2)
@pytest.mark.parametrize("backbone", ["qwen3_vl"])  # qwen2_5_vl: the highway_qwen_portable golden
def test_a_qwen_waypoint_package_trains_through_verls_own_step(
    backbone: str, verl_src: Path, tmp_path: Path
) -> None:
    """The generated verl fidelity tests (verl's own rollout loop, advantages and actor
    update, in FSDP and FSDP2) pass on a Qwen-VL waypoint policy with LoRA adapters, as on
    pusht's LLaVA one without; on Qwen2.5-VL the package's other verl tests too (they do not
    depend on the backbone). LoRA: FSDP1 flattens a unit's weights into one flat parameter,
    which must be all trainable or all frozen, so the adapters need units of their own (verl's
    wrap policy with ``is_lora``); without them the actor's wrap fails."""
    out = tmp_path / "pkg"
    data = qwen_waypoint(backbone)
    data["model"]["lora"] = {"rank": 8, "alpha": 16}
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec
    write(generate(spec), out, fresh=True)
    only = ["tests/test_verl_fidelity.py"]
    if backbone == "qwen2_5_vl":
        only.append("tests/test_verl.py")
    run_package_tests(out, real_simulator=False, only=only, markers=VARIANT_MARKERS)


def test_a_grouped_algorithm_needs_a_group() -> None:
    data = _data()
    data["training"] = {"group_size": 1, "groups": 32, "mini_batches": 2}
    errors = _errors(data)
    assert "compute_advantage" in errors["training.group_size"]


# --- what vlagen does not target ----------------------------------------------------------


def test_verl_vla_is_refused_with_its_reason() -> None:
    data = _data()
    data["targets"] = [{"framework": "verl-vla", "version": "0.1", "algorithm": "grpo"}]
    (line,) = spec_errors(data)
    assert re.match(
        r"spec\.yaml:\d+:\d+: targets\[0\]\.framework: verl-vla is not supported: ", line
    )
    assert "removed the PPO command" in line and "env_init / env_reset" in line
    assert "action_executor" in line and "verl 0.7 (the v0.7.1 line)" in line


@pytest.mark.parametrize("version", ["0.8", "0.9", "vla"])
def test_later_verl_lines_are_refused_with_the_reason(version: str) -> None:
    data = _data()
    data["targets"][0]["version"] = version
    errors = _errors(data)
    assert list(errors) == ["targets[0].version"]
    assert errors["targets[0].version"].startswith(f"verl {version} is not supported: verl 0.8")
    assert "(supported: 0.7)" in errors["targets[0].version"]


def test_vlagen_targets_lists_what_is_not_supported(runner) -> None:
    done = runner.invoke(main, ["targets"])
    assert done.exit_code == 0
    assert "verl-vla (any version)  NOT supported" in done.output
    assert "verl (0.8, 0.9, vla)  NOT supported" in done.output
    assert len(UNSUPPORTED) == 2
    assert "verl==0.7.1 from a v0.7.1 checkout of https://github.com/verl-project/verl" in (
        done.output
    )


@pytest.mark.parametrize(
    ("framework", "version", "algorithm"),
    [("rlinf", "0.3", "grpo"), ("rlinf", "0.2", "grpo"), ("siirl", "0.2", "grpo")],
)
@pytest.mark.parametrize(
    ("key", "value"), [("env_gpus_per_node", 2), ("env_nodes", 1), ("pipeline_stages", 2)]
)
def test_other_targets_refuse_verls_resources(
    framework: str, version: str, algorithm: str, key: str, value: int
) -> None:
    data = _data()
    data["targets"] = [{"framework": framework, "version": version, "algorithm": algorithm}]
    data["model"]["family"] = "openvla"
    data["model"]["action"]["chunk"] = 1
    data["resources"][key] = value
    errors = _errors(data)
    assert f"resources.{key}" in errors, errors
    assert f"does not honour resources.{key} ({value})" in errors[f"resources.{key}"]


# --- installing verl ----------------------------------------------------------------------


def test_verl_installs_from_a_checkout() -> None:
    plan = _plan(_data())
    decl = plan.target("verl").decl
    assert decl.source is not None and decl.source.tag == "v0.7.1"
    assert "verl==0.7.1" not in plan.framework_test_installs  # the checkout, not the wheel
    assert plan.framework_test_installs == list(plan.model.test_installs)  # OpenVLA's code
    assert plan.framework_sources == [decl.source]
    assert plan.extras["verl"][0] == "verl==0.7.1"
    assert {"datasets", "torchdata", "gymnasium"} <= set(plan.extras["verl"])
    assert decl.source.test_commands[-1] == "pip install --no-deps -e ./verl"
