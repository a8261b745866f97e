"""The siiRL 0.2 target against siiRL 0.2.0 itself (installed ``--no-deps``): its config
schema, the plan-time rejections of what its embodied code cannot run."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MINIMAL_SPEC, REPO, spec_errors
from vlagen.errors import SpecError
from vlagen.load import load_spec, load_spec_text
from vlagen.plan import make_plan
from vlagen.targets.common.config_schema import dataclass_keys, load_schema
from vlagen.targets.siirl.layout import SCHEMA, override_problems

SIIRL_SPECS = sorted(
    path
    for path in (REPO / "specs").glob("*.yaml")
    if any(t["framework"] == "siirl" for t in yaml.safe_load(path.read_text())["targets"])
)


def test_the_config_snapshot_is_siirls_own_dataclasses() -> None:
    """Regenerate the snapshot from the installed siiRL: any drift fails here."""
    params = importlib.import_module("siirl.params")
    assert dataclass_keys(params.SiiRLArguments) == load_schema(SCHEMA)


def test_the_examples_cover_siirl() -> None:
    names = {p.stem for p in SIIRL_SPECS}
    assert {"libero_openvla_oft", "navsim_waypoint"} <= names


@pytest.mark.parametrize("path", SIIRL_SPECS, ids=lambda p: p.stem)
def test_every_override_is_a_siirl_key_of_the_right_type(path: Path) -> None:
    plan = make_plan(load_spec(path).spec).target("siirl").plan
    assert len(plan.overrides) > 40
    assert override_problems(list(plan.overrides), list(plan.runtime_keys)) == []


def test_override_problems_names_dropped_keys_and_wrong_types() -> None:
    assert override_problems(
        [("algorithm.gamma", "high"), ("critic.use_critic_model", False)], ["trainer.nnodes"]
    ) == [
        "algorithm.gamma='high' (siiRL expects float)",
        "critic.use_critic_model (no such key)",
    ]


def _siirl(algorithm: str = "grpo", **model: Any) -> dict:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["model"].update(model)
    data["targets"] = [{"framework": "siirl", "version": "0.2", "algorithm": algorithm}]
    data["training"] = {"group_size": 2}
    return data


def test_a_valid_siirl_spec_plans() -> None:
    spec = load_spec_text(yaml.safe_dump(_siirl(), sort_keys=False), "spec.yaml").spec
    plan = make_plan(spec).target("siirl").plan
    assert plan.embodied_type == "openvla" and plan.action_chunks_len == 1
    assert [n.node_id for n in plan.nodes][:2] == ["rollout_actor", "shape_reward"]


SIIRL_ROOT = Path(importlib.util.find_spec("siirl").origin).parent


def _siirl_line(file: str, line: int) -> str:
    return SIIRL_ROOT.joinpath(file).read_text().splitlines()[line - 1]


def test_openvla_oft_outside_siirls_hard_coded_shape() -> None:
    data = _siirl(family="openvla_oft")
    data["model"]["action"]["bins"] = 128
    (line,) = spec_errors(data)
    assert line.startswith("spec.yaml:9:5: model.action: siiRL 0.2 (targets[0]) trains ")
    actor = "engine/actor/embodied_actor.py"
    assert f"got dim 2 (siiRL fixes 7 at {actor}:155, 156, 290); chunk 1 (siiRL fixes 8 at " in line
    assert f"bins 128 (siiRL fixes 256 at {actor}:144, 145, 210, 211, 282, 283). Use" in line
    assert "vocab_size" not in line.partition("got ")[2]  # 32000: as siiRL fixes it
    assert "Use family openvla" in line


def test_the_oft_lines_named_fix_those_numbers_in_siirl() -> None:
    """Each line the OFT refusal names, in the installed siiRL 0.2.0, holds its number."""
    from vlagen.targets.siirl.checks import OFT_ACTOR, OFT_FIXED

    for name, (number, lines) in OFT_FIXED.items():
        for line in lines:
            text = _siirl_line(OFT_ACTOR, line)
            assert str(number) in text, f"{name}: {OFT_ACTOR}:{line} is {text.strip()!r}"


def test_the_checkpoint_loads_named_for_custom_are_siirls() -> None:
    from vlagen.targets.siirl.checks import CHECKPOINT_LOADS, PEFT_WRAP

    calls = ["load_tokenizer", "AutoConfig.from_pretrained", "AutoTokenizer.from_pretrained"]
    calls += ["load_tokenizer", "AutoProcessor.from_pretrained"]
    for (file, line), call in zip(CHECKPOINT_LOADS, calls, strict=True):
        assert call in _siirl_line(file, line), f"{file}:{line}"
    assert "get_eos_mask" in _siirl_line("engine/rollout/embodied_rollout.py", 611)
    assert "get_peft_model(" in _siirl_line(*PEFT_WRAP)


#: Per Qwen-VL backbone: its patch size, and an image side of whole merged patches
QWEN = {"qwen2_5_vl": (14, 56), "qwen3_vl": (16, 64)}


def _qwen(backbone: str = "qwen2_5_vl", **model: Any) -> dict:
    side = QWEN[backbone][1]
    return _siirl(backbone=backbone, image_size=[side, side], **model)


def _two_cameras(data: dict) -> dict:
    """``data`` on LIBERO with a main and a wrist camera, both fed to the model."""
    data["model"].update(cameras=["agentview", "wrist"], action={"dim": 7, "chunk": 1})
    data["env"].update(
        preset="libero",
        task_suite="libero_spatial",
        cameras=[
            {"name": "agentview", "height": 64, "width": 64, "role": "main"},
            {"name": "wrist", "height": 48, "width": 48, "role": "wrist"},
        ],
        action={"kind": "delta_ee", "dim": 7},
        rewards=[{"name": "success", "source": "success"}],
    )
    return data


@pytest.mark.parametrize("backbone", sorted(QWEN))
def test_a_qwen_vl_spec_with_two_cameras_plans_the_package_model(backbone: str) -> None:
    data = _two_cameras(_qwen(backbone))
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    plan = make_plan(spec)
    siirl = plan.target("siirl").plan
    patch, side = QWEN[backbone]
    assert siirl.embodied_type == "openvla"
    assert siirl.image_grid == (1, side // patch, side // patch)
    paths = {f.path for f in plan.files}
    assert "src/tiny_vla/targets/siirl/model.py" in paths


def test_only_processor_backbones_get_the_package_model() -> None:
    spec = load_spec_text(yaml.safe_dump(_siirl(), sort_keys=False), "spec.yaml").spec
    plan = make_plan(spec)
    assert plan.target("siirl").plan.image_grid is None
    assert not any(f.path.endswith("targets/siirl/model.py") for f in plan.files)


def test_lora_on_a_qwen_backbone_names_siirls_peft_wrap() -> None:
    (line,) = spec_errors(_qwen(lora={"rank": 4, "alpha": 8}))
    assert line.startswith("spec.yaml:")
    assert "model.lora: siiRL 0.2 (targets[0]) applies LoRA itself" in line
    assert "(engine/fsdp_workers.py:893)" in line


def test_two_cameras_on_llava_stay_refused() -> None:
    (line,) = spec_errors(_two_cameras(_siirl()))
    assert "model.cameras: siiRL 0.2 (targets[0]) feeds one image to openvla models" in line


def test_openvla_chunks_longer_than_one() -> None:
    data = _siirl()
    data["model"]["action"]["chunk"] = 4
    (line,) = spec_errors(data)
    assert line.startswith("spec.yaml:10:12: model.action.chunk: siiRL 0.2 (targets[0]) ")
    assert "set chunk: 1 or use openvla_oft (7 x 8), got chunk 4" in line


def test_a_discrete_action_siirl_would_decode_to_bin_centres() -> None:
    data = _siirl()
    data["model"]["action"]["dim"] = 1
    data["env"]["action"] = {"kind": "discrete", "choices": 5}
    (line,) = spec_errors(data)
    assert line.startswith("spec.yaml:21:11: env.action.kind: siiRL 0.2 (targets[0]) decodes ")
    assert "to OpenVLA's bin centres (embodied_rollout.py" in line
    assert "cannot give a discrete action one token per choice" in line


def test_ppo_srpo_without_success_and_too_few_envs() -> None:
    data = _siirl("gae")
    data["training"].update(group_size=3, envs=12)
    assert sorted(spec_errors(data)) == [
        "spec.yaml:26:14: targets[0].algorithm: siiRL 0.2 (targets[0]): gae (PPO) needs "
        "siiRL's critic, whose CriticWorker has no embodied path in 0.2.0; use grpo, dapo or srpo",
        "spec.yaml:29:9: training.envs: siiRL 0.2 (targets[0]) steps the envs in its 8 rollout "
        "workers (one per GPU), each running num_envs // rollout.n of its rows at once and "
        "asserting num_envs >= rollout.n (generate_sequences, engine/rollout/embodied_rollout.py)"
        ": its 12 envs must split into whole groups of 3 per worker: set training.envs to 24",
    ]
    assert spec_errors(_siirl("srpo")) == [
        "spec.yaml:12:3: env.rewards: siiRL 0.2 (targets[0]): srpo rewards success (siiRL's "
        "embodied reward manager, scaled by the success term's weight); add a term with "
        "source: success"
    ]


def test_a_family_siirl_cannot_load(spec_file, runner) -> None:
    from vlagen.cli import main

    data = _siirl(family="custom", class_path="pkg.mod:Net")
    path = spec_file(yaml.safe_dump(data, sort_keys=False))
    result = runner.invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert "cannot train family 'custom'; it supports openvla, openvla_oft, waypoint" in (
        result.output
    )
    assert "engine/fsdp_workers.py:1163; models/loader.py:70" in result.output
    assert "Traceback" not in result.output


def test_vlagen_targets_lists_siirl_0_2(runner) -> None:
    from vlagen.cli import main

    result = runner.invoke(main, ["targets"])
    assert result.exit_code == 0
    assert "siirl 0.2  (siiRL; installs siirl==0.2.0)" in result.output


def test_trajectories_without_a_piece_size_fail_where_the_length_is_set() -> None:
    data = _siirl()
    data["env"]["max_episode_steps"] = 41  # 41 forwards: no divisor from 2 to 16
    (line,) = spec_errors(data)
    assert line.startswith("spec.yaml:14:22: env.max_episode_steps: siiRL 0.2 (targets[0])'s ")
    assert "embodied_actor.update_policy asserts it); 41 forward passes per episode have no " in (
        line
    )
    assert line.endswith("pick max_episode_steps so that it has one, e.g. 42")


def test_lora_settings_siirl_would_drop() -> None:
    data = _siirl(lora={"rank": 8, "alpha": 16, "dropout": 0.1, "target_modules": ["q_proj"]})
    errors = spec_errors(data)
    assert len(errors) == 2
    assert errors[0].endswith("so LoRA dropout 0.1 would be ignored; set dropout: 0")
    assert "model.lora.dropout: siiRL 0.2 (targets[0]) builds its LoraConfig" in errors[0]
    assert "model.lora.target_modules: siiRL 0.2 (targets[0]) types" in errors[1]


@pytest.mark.parametrize(
    ("steps", "chunk", "family", "expected"),
    [
        (40, 1, "openvla", 10),
        (64, 1, "openvla", 16),
        (512, 8, "openvla_oft", 16),
        (7, 1, "openvla", 7),
    ],
)
def test_traj_mini_batch_size_divides_the_trajectory(
    steps: int, chunk: int, family: str, expected: int
) -> None:
    from vlagen.targets.siirl.trajectory import traj_mini_batch

    length = -(-steps // chunk)
    assert traj_mini_batch(length) == expected
    assert length % expected == 0


@pytest.mark.parametrize("path", SIIRL_SPECS, ids=lambda p: p.stem)
def test_overrides_fix_what_siirls_launch_would_get_wrong(path: Path) -> None:
    spec = load_spec(path).spec
    plan = make_plan(spec).target("siirl").plan
    overrides = dict(plan.overrides)
    actor = "actor_rollout_ref.actor."
    assert overrides[actor + "ppo_micro_batch_size_per_gpu"] == 1  # update_policy's broadcast
    assert plan.trajectory_length % overrides[actor + "traj_mini_batch_size"] == 0
    assert overrides["trainer.save_freq"] > 0
    # validation (no n_samples) resets a rank's data.val_batch_size rows in the env pool
    pool = (
        overrides["actor_rollout_ref.embodied.env.num_envs"]
        // overrides["actor_rollout_ref.rollout.n"]
    )
    assert overrides["data.val_batch_size"] == pool
    assert overrides["actor_rollout_ref.rollout.temperature"] == 1.6
    assert "actor_rollout_ref.embodied.n_gpus_per_node" not in overrides  # set with the trainer's
    assert "actor_rollout_ref.embodied.n_gpus_per_node" in plan.runtime_keys
    # the package's process_input crops as its policy does: the key mirrors model.center_crop
    assert overrides["actor_rollout_ref.embodied.center_crop"] is (
        make_plan(spec).model.center_crop is not None
    )
    if spec.model.lora is not None:
        assert overrides["actor_rollout_ref.model.lora_rank"] == spec.model.lora.rank
        assert overrides["actor_rollout_ref.model.lora_alpha"] == spec.model.lora.alpha
    else:
        assert "actor_rollout_ref.model.lora_rank" not in overrides


@pytest.mark.parametrize("path", SIIRL_SPECS, ids=lambda p: p.stem)
def test_read_elsewhere_names_fields_in_siirls_files(path: Path) -> None:
    """Each key the fidelity harness cannot see read is named in the siiRL file given."""
    root = Path(importlib.util.find_spec("siirl").origin).parent
    plan = make_plan(load_spec(path).spec).target("siirl").plan
    assert plan.read_elsewhere
    for key, where in plan.read_elsewhere.items():
        source, _, spelled = where.partition(" as ")
        field = spelled or key.rsplit(".", 1)[-1]
        assert field in root.joinpath(source).read_text(), (key, where)


@pytest.mark.parametrize("algorithm", ["grpo", "dapo", "srpo"])
def test_no_reference_node_while_kl_is_off(algorithm: str) -> None:
    """siiRL's reference worker crashes with LoRA (``compute_log_prob`` asserts ``_is_actor``)
    and nothing reads ``ref_log_prob`` with KL off: the chains must not carry one."""
    from vlagen.targets.siirl.pipeline import chain

    spec = load_spec_text(yaml.safe_dump(_siirl(), sort_keys=False), "spec.yaml").spec
    overrides = dict(make_plan(spec).target("siirl").plan.overrides)
    assert overrides["algorithm.use_kl_in_reward"] is False
    assert "actor_rollout_ref.actor.use_kl_loss" not in overrides  # siiRL's default: False
    nodes = chain(algorithm)
    assert all(n.node_role != "REFERENCE" for n in nodes)
    assert "compute_ref_log_prob" not in " ".join(n.func for n in nodes)


def test_the_harness_runs_a_short_episode_siirls_actor_accepts() -> None:
    spec = load_spec_text(yaml.safe_dump(_siirl(), sort_keys=False), "spec.yaml").spec
    plan = make_plan(spec).target("siirl").plan
    harness = plan.harness
    assert plan.harness_length <= plan.trajectory_length
    assert plan.harness_length % harness["actor_rollout_ref.actor.traj_mini_batch_size"] == 0
    envs, n = (harness[f"actor_rollout_ref.{k}"] for k in ("embodied.env.num_envs", "rollout.n"))
    assert envs >= n


def test_dual_clip_is_off_as_in_siirls_srpo_scripts() -> None:
    spec = load_spec_text(yaml.safe_dump(_siirl(), sort_keys=False), "spec.yaml").spec
    overrides = dict(make_plan(spec).target("siirl").plan.overrides)
    assert overrides["actor_rollout_ref.actor.clip_ratio_c"] == 10000.0  # siiRL's default: 3.0


def test_the_readme_maps_the_spec_onto_siirls_own_srpo_example() -> None:
    """The golden spec trains LIBERO-Spatial with LoRA: the rows say so, and why the rate
    differs; a spec changed to the script's statistics, reward weight and full fine-tuning
    matches it on those rows."""
    path = REPO / "specs" / "libero_openvla_oft.yaml"
    comparison = make_plan(load_spec(path).spec).target("siirl").reference
    assert comparison.reference.path.endswith("run_openvla_oft_libero_spatial.sh")
    rows = {r.key: r for r in comparison.rows}
    unnorm = rows["actor_rollout_ref.embodied.unnorm_key"]
    assert (unnorm.reference, unnorm.here, unnorm.status) == (
        "libero_spatial",
        "libero_spatial_no_noops",
        "differs",
    )
    assert rows["actor_rollout_ref.embodied.env.env_name"].status == "same"
    assert rows["actor_rollout_ref.rollout.temperature"].status == "same"
    assert rows["actor_rollout_ref.model.path"].status == "at launch"
    assert rows["actor_rollout_ref.model.lora_rank"].here == "32"
    lr = rows["actor_rollout_ref.actor.optim.lr"]
    assert lr.status == "differs" and "LoRA here, full fine-tuning in the script" in lr.why
    assert all(r.why for r in comparison.differing)

    data = yaml.safe_load(path.read_text())
    data["env"]["task_suite"] = "libero_goal"
    data["model"]["unnorm_key"] = "libero_spatial"
    data["env"]["rewards"][0]["weight"] = 5.0
    data["training"]["mini_batches"] = data["training"]["groups"] // 4
    data["training"]["learning_rate"] = 5e-6
    del data["model"]["lora"]
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    rows = {r.key: r for r in make_plan(spec).target("siirl").reference.rows}
    for key in (
        "actor_rollout_ref.embodied.unnorm_key",
        "reward_model.reward_kwargs.reward_coef",
        "actor_rollout_ref.actor.ppo_mini_batch_size",
        "actor_rollout_ref.model.lora_rank",
        "actor_rollout_ref.actor.optim.lr",
    ):
        assert rows[key].status == "same", rows[key]
    suite = rows["actor_rollout_ref.embodied.env.env_name"]
    assert suite.status == "differs" and "run_openvla_oft_libero_goal.sh" in suite.why
    readme = (REPO / "generated_examples" / "libero_openvla_oft" / "README.md").read_text()
    assert "| `actor_rollout_ref.embodied.unnorm_key` | libero_spatial |" in readme


def test_the_readme_says_why_libero_srpo_rows_differ_for_another_env_and_algorithm() -> None:
    """num_steps_wait settles LIBERO's scene, and reward_coef is read by srpo's reward
    manager only: highway with grpo (no LIBERO backend, no success term, no compute_reward
    node) says so, while the LIBERO spec keeps the LIBERO and srpo reasons."""
    steps, coef = (
        "actor_rollout_ref.embodied.env.num_steps_wait",
        "reward_model.reward_kwargs.reward_coef",
    )

    def rows(name: str) -> dict:
        spec = load_spec(REPO / "specs" / f"{name}.yaml").spec
        return {r.key: r for r in make_plan(spec).target("siirl").reference.rows}

    libero, highway = rows("libero_openvla_oft"), rows("highway_openvla")
    assert libero[steps].why == "the LIBERO backend settles 10 no-op steps after every reset itself"
    assert (libero[coef].source, libero[coef].why) == (
        "the weight of the `success` reward term",
        "the spec's `success` weight",
    )
    assert "LIBERO backend" not in highway[steps].why
    assert "the highway env (gymnasium backend) has no settling steps" in highway[steps].why
    assert highway[coef].source == "fixed: 1 (no `success` term)"
    assert highway[coef].why.startswith("no effect here: only srpo's pipeline runs")
    assert "grpo's shape_reward node" in highway[coef].why


def test_ray_workers_render_with_egl_where_the_simulator_is_mujoco() -> None:
    """train.py hands Ray's workers MUJOCO_GL and PYOPENGL_PLATFORM (EnvPlan.render_env)
    for LIBERO and gymnasium's MuJoCo envs, nothing for highway's pygame frames."""
    import dataclasses

    egl = {"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl"}
    libero = make_plan(load_spec(REPO / "specs" / "libero_openvla_oft.yaml").spec).env
    highway = make_plan(load_spec(REPO / "specs" / "highway_openvla.yaml").spec).env
    assert libero.render_env == egl and highway.render_env == {}
    assert highway.gymnasium is not None
    hopper = dataclasses.replace(
        highway, gymnasium=highway.gymnasium.model_copy(update={"id": "Hopper-v5"})
    )
    assert hopper.gymnasium_extra == "mujoco" and hopper.render_env == egl


def test_the_sampling_temperature_is_the_specs_else_the_scripts() -> None:
    """``training.temperature`` sets siiRL's rollout temperature, which a spec's own config
    block may not set (it is derived); without it, the SRPO scripts' 1.6."""
    data = _siirl()
    data["training"]["temperature"] = 1.0
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    overrides = dict(make_plan(spec).target("siirl").plan.overrides)
    assert overrides["actor_rollout_ref.rollout.temperature"] == 1.0
    data["targets"][0]["config"] = {"actor_rollout_ref.rollout.temperature": 1.2}
    with pytest.raises(SpecError, match=r"training\.temperature"):
        load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml")


def _mini_batch_errors(**training: int) -> list[str]:
    data = _siirl()
    data["training"].update(training)
    data["resources"] = {"nodes": 1, "gpus_per_node": 8}
    try:
        load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml")
    except SpecError as exc:
        return [i.message for i in exc.issues if i.dotted == "training.mini_batches"]
    return []


def test_mini_batches_that_siiRL_normalizes_unevenly_over_its_ranks() -> None:
    # 8 groups / 8 mini-batches = 1 prompt x rollout.n 2 // 8 ranks = 0: siiRL's actor asserts
    (message,) = _mini_batch_errors(groups=8, group_size=2, mini_batches=8)
    assert "engine/fsdp_workers.py" in message and message.endswith("set mini_batches to 2")
    assert not _mini_batch_errors(groups=8, group_size=2, mini_batches=2)
    # 16 groups / 4 = 4 prompts x 3 // 8 = 1 trajectory, on 6 a rank: 6 steps, not 4
    (message,) = _mini_batch_errors(groups=16, group_size=3, mini_batches=4)
    assert message.endswith("set mini_batches to 2")
    assert not _mini_batch_errors(groups=16, group_size=3, mini_batches=2)


def test_a_waypoint_decision_on_a_stepping_simulator_is_one_siirl_step() -> None:
    """highway steps the simulator once per waypoint (4 per decision): siiRL's rollout
    counts action_chunks_len (1) per forward pass, so its max_steps is the 6 decisions of
    the 24-step episode and the package's env runs 4 backend steps for each."""
    data = yaml.safe_load((REPO / "specs" / "highway_qwen_waypoint.yaml").read_text("utf-8"))
    data["targets"] = [{"framework": "siirl", "version": "0.2", "algorithm": "grpo"}]
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    plan = make_plan(spec).target("siirl").plan
    overrides = dict(plan.overrides)
    assert overrides["actor_rollout_ref.embodied.action_chunks_len"] == 1
    assert overrides["actor_rollout_ref.embodied.env.max_steps"] == 6 == plan.trajectory_length
    assert plan.backend_steps_per_step == 4  # 6 x 4 = the spec's 24 backend steps
