"""The RLinf 0.2 and 0.3 targets: the config layout against RLinf's own examples, RLinf's
divisibility rules as plan-time errors, regenerating from 0.2 to 0.3, and the generated
package's tests against RLinf 0.2 itself."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import GOLDENS, MINIMAL_SPEC, REPO, run_package_tests, spec_errors
from vlagen.api import generate, write
from vlagen.load import load_spec, load_spec_text
from vlagen.plan import make_plan
from vlagen.targets.common.config_schema import load_schema
from vlagen.targets.rlinf.layout import NOT_MIRRORED, exempt_keys, layout_problems

#: RLinf 0.2 installed apart (it is the same distribution as 0.3): the README's test command.
RLINF_0_2 = REPO / ".rlinf-0.2"


def _rlinf(version: str = "0.3", algorithm: str = "grpo") -> dict:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["targets"] = [{"framework": "rlinf", "version": version, "algorithm": algorithm}]
    return data


@pytest.mark.parametrize("version", ["0.2", "0.3"])
def test_the_config_has_every_key_of_rlinfs_examples(version: str) -> None:
    spec = load_spec_text(yaml.safe_dump(_rlinf(version), sort_keys=False), "spec.yaml").spec
    config = make_plan(spec).target("rlinf").plan.config
    schema, exempt = f"rlinf_{version.replace('.', '_')}", exempt_keys(config, "openvla")
    assert layout_problems(config, schema, exempt) == []
    assert layout_problems(config, schema) == [  # what a grpo config leaves out
        "actor.optim.value_lr: missing (RLinf's examples set a float)",
        "algorithm.bootstrap_type: missing (RLinf's examples set a str)",
        "algorithm.huber_delta: missing (RLinf's examples set a float)",
        "algorithm.value_clip: missing (RLinf's examples set a float)",
    ]
    layout = load_schema(f"rlinf_{version.replace('.', '_')}")["keys"]
    mirrored = [k for k in layout if not any(k.startswith(p) for p in NOT_MIRRORED)]
    assert len(mirrored) > 100  # the check compares a real layout, not an empty one
    del config["actor"]["micro_batch_size"]
    config["env"]["train"]["auto_reset"] = "yes"
    assert layout_problems(config, schema, exempt) == [
        "actor.micro_batch_size: missing (RLinf's examples set a int)",
        "env.train.auto_reset: 'yes' is not a bool",
    ]


@pytest.mark.parametrize(("nodes", "gpus"), [(1, 1), (1, 8), (2, 4)])
def test_the_placement_gives_rlinf_the_env_workers_the_plan_checked(nodes: int, gpus: int) -> None:
    """RLinf's own rank parser, on a node with more GPUs than the spec's resources, places
    exactly nodes x gpus_per_node processes: the env workers total_num_envs is split over
    (``all`` would take every GPU Ray sees, and RLinf's divisibility asserts would fail)."""
    pytest.importorskip("rlinf")
    from rlinf.scheduler.cluster.utils import parse_rank_config

    data = _rlinf()
    data["resources"] = {"nodes": nodes, "gpus_per_node": gpus}
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    config = make_plan(spec).target("rlinf").plan.config
    (ranks,) = config["cluster"]["component_placement"].values()
    placed = parse_rank_config(ranks, list(range(nodes * gpus + 8)))
    assert placed == list(range(nodes * gpus))
    assert config["env"]["train"]["total_num_envs"] == spec.training.episodes  # all at once


@pytest.mark.parametrize("algorithm", ["grpo", "gae"])
def test_keys_that_change_nothing_are_left_out(algorithm: str) -> None:
    data = _rlinf(algorithm=algorithm)
    data["model"]["value_head"] = algorithm == "gae"
    data["resources"] = {"nodes": 1, "gpus_per_node": 1}  # whole rounds of envs either way
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    config = make_plan(spec).target("rlinf").plan.config
    fsdp = config["actor"]["fsdp_config"]
    assert not {"reshard_after_forward", "offload_pin_memory", "use_liger_kernel"} & set(fsdp)
    assert "repetition_penalty" not in config["rollout"]["sampling_params"]
    value_loss = {"value_clip", "huber_delta"} & set(config["algorithm"])
    assert bool(value_loss) is (algorithm == "gae")


@pytest.mark.parametrize("version", ["0.2", "0.3"])
@pytest.mark.parametrize(("backbone", "side"), [("qwen2_5_vl", 28), ("qwen3_vl", 32)])
def test_qwen_vl_prompts_are_padded_past_their_image_placeholders(
    version: str, backbone: str, side: int
) -> None:
    """RLinf takes a Qwen-VL backbone. Its prompt carries one placeholder per merged patch of
    each camera image the model sees, so the padded length (max_prompt_length) is the text's
    256 plus those (2 x 3 per camera here); a LLaVA-style prompt keeps 256."""
    data = _rlinf(version)
    data["model"].update(backbone=backbone, image_size=[2 * side, 3 * side])
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    config = make_plan(spec).target("rlinf").plan.config
    assert config["actor"]["model"]["max_prompt_length"] == 256 + 2 * 3
    # Each camera the model sees carries its own placeholders.
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
    data["model"].update(cameras=["agentview", "wrist"], action={"dim": 7, "chunk": 1})
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    config = make_plan(spec).target("rlinf").plan.config
    assert config["actor"]["model"]["max_prompt_length"] == 256 + 2 * 2 * 3
    llava = load_spec_text(yaml.safe_dump(_rlinf(version), sort_keys=False), "s.yaml").spec
    llava_model = make_plan(llava).target("rlinf").plan.config["actor"]["model"]
    assert llava_model["max_prompt_length"] == 256


def test_the_versions_put_moved_keys_where_each_reads_them() -> None:
    plans = {}
    for version in ("0.2", "0.3"):
        spec = load_spec_text(yaml.safe_dump(_rlinf(version), sort_keys=False), "s.yaml").spec
        plans[version] = make_plan(spec).target("rlinf").plan.config
    assert "sampling_params" in plans["0.2"]["algorithm"]
    assert "rollout_epoch" in plans["0.2"]["algorithm"]
    assert "sampling_params" in plans["0.3"]["rollout"]
    assert "rollout_epoch" in plans["0.3"]["env"]["train"]
    assert "weight_syncer" in plans["0.3"] and "weight_syncer" not in plans["0.2"]


def test_a_hub_openvla_checkpoint_needs_trust_remote_code() -> None:
    data = _rlinf()
    data["model"]["checkpoint"] = "openvla/openvla-7b"
    assert spec_errors(data) == [
        "spec.yaml:7:15: model.checkpoint: openvla checkpoints on the Hub "
        "('openvla/openvla-7b') ship their own modeling code (transformers has no class for "
        "them), so every RLinf actor and rollout worker would fail to load it for target "
        "rlinf 0.3: set model.trust_remote_code: true",
    ]
    data["model"]["trust_remote_code"] = True
    assert _plans(data)
    data["model"]["trust_remote_code"] = False
    data["model"]["checkpoint"] = "./openvla-7b"  # local: its config decides, at load time
    assert _plans(data)


def _plans(data: dict) -> bool:
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    return make_plan(spec).target("rlinf").plan is not None


def test_envs_not_divisible_by_the_group() -> None:
    data = _rlinf()
    data["training"] = {"group_size": 4, "groups": 12, "envs": 24}
    assert spec_errors(data) == [
        "spec.yaml:30:9: training.envs: RLinf splits env.train.total_num_envs (24) evenly over "
        "its 8 env workers (one per GPU), each holding whole groups of 4: it must be a "
        "multiple of 32 for target rlinf 0.3: set training.groups to 16 and training.envs to 32",
    ]
    data["training"] = {"group_size": 4, "groups": 6}  # every episode at once: 24 envs
    assert spec_errors(data) == [
        "spec.yaml:29:11: training.groups: RLinf splits env.train.total_num_envs (24) evenly "
        "over its 8 env workers (one per GPU), each holding whole groups of 4: it must be a "
        "multiple of 32 for target rlinf 0.3: set training.groups to 8",
    ]


def test_fewer_envs_than_episodes_run_rounds() -> None:
    data = _rlinf()
    data["training"] = {"group_size": 4, "groups": 16, "envs": 32, "mini_batches": 2}
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    plan = make_plan(spec).target("rlinf").plan
    assert plan.config["env"]["train"]["total_num_envs"] == 32
    assert plan.config["env"]["train"]["rollout_epoch"] == 2  # 64 episodes over 32 envs
    assert plan.config["actor"]["global_batch_size"] == 64 * 10 // 2
    sources = {d.key: d.source for d in plan.derived}
    assert sources["env.train.rollout_epoch"].startswith("rounds of the envs per update")


def test_steps_not_divisible_by_the_chunk_and_uneven_batches() -> None:
    data = _rlinf("0.2", "gae")
    data["model"]["value_head"] = True
    data["model"]["action"]["chunk"] = 4
    data["training"] = {"groups": 12, "mini_batches": 8}
    assert sorted(spec_errors(data)) == [
        "spec.yaml:15:22: env.max_episode_steps: RLinf needs max_episode_steps (10) divisible "
        "by the env steps of one action chunk (4) for target rlinf 0.2 (RLinf checks "
        "env.train.max_steps_per_rollout_epoch % actor.model.num_action_chunks == 0): "
        "set it to 12",
        "spec.yaml:30:17: training.mini_batches: the 12 groups of an update split into "
        "mini_batches (8) equal mini-batches on every framework: set mini_batches to 6 or "
        "groups to 16",
    ]


def test_micro_batches_that_do_not_split_the_global_batch() -> None:
    data = _rlinf()
    data["training"]["micro_batch_size_per_gpu"] = 3
    (line,) = spec_errors(data)
    assert line.startswith("spec.yaml:")
    assert (
        ": training.micro_batch_size_per_gpu: RLinf needs actor.global_batch_size (160 = " in line
    )
    assert "divisible by micro_batch_size (3) x actor workers (8)" in line
    assert line.endswith("set micro_batch_size_per_gpu to 2")  # 160 / 8 workers = 20 = 2 x 10


def test_vlagen_targets_lists_both_rlinf_versions(runner) -> None:
    from vlagen.cli import main

    result = runner.invoke(main, ["targets"])
    assert result.exit_code == 0
    assert "rlinf 0.2  (RLinf; installs rlinf[embodied]==0.2)" in result.output
    assert "rlinf 0.3  (RLinf; installs rlinf[embodied]==0.3.0)" in result.output


def test_regenerating_from_0_2_to_0_3_touches_only_the_interface() -> None:
    text = (REPO / "specs" / "highway_openvla.yaml").read_text()
    old = load_spec_text(
        text.replace('version: "0.3", algorithm: gae', 'version: "0.2", algorithm: gae'), "s.yaml"
    )
    new = load_spec_text(text, "s.yaml")
    a, b = generate(old.spec).tree, generate(new.spec).tree
    package = "src/highway_openvla"
    # 0.3 adds the fidelity harness, which drives 0.3's workers, and the parity and
    # learning runs over it (the package's learning run is there already, for siiRL)
    assert set(b.keys()) - set(a.keys()) == {
        "tests/test_rlinf_fidelity.py",
        f"{package}/targets/rlinf/cpu.py",
        f"{package}/targets/rlinf/learn.py",
        f"{package}/targets/rlinf/parity.py",
    }
    assert set(a.keys()) <= set(b.keys())
    changed = sorted(p for p in a if a[p].content != b[p].content)
    assert changed == [
        ".gitattributes",  # lists the fidelity harness
        "README.md",
        "pyproject.toml",
        f"{package}/learn.py",  # and a learning run
        f"{package}/parity.py",  # RLinf 0.3 has a parity module
        f"{package}/spec.json",
        f"{package}/spec.py",
        f"{package}/targets/rlinf/__init__.py",
        f"{package}/targets/rlinf/config.yaml",
        f"{package}/targets/rlinf/register.py",
        "tests/test_learning.py",  # names the targets with a learning run
        "tests/test_parity.py",  # names the RLinf version
        "tests/test_rlinf.py",  # the registration tests follow the registry
        "vlagen.yaml",  # the package's copy of its spec
    ]


@pytest.mark.slow
@pytest.mark.skipif(not RLINF_0_2.is_dir(), reason=f"needs RLinf 0.2 in {RLINF_0_2} (README)")
def test_the_0_2_package_passes_its_tests_against_rlinf_0_2(tmp_path: Path, monkeypatch) -> None:
    text = (REPO / "specs" / "highway_openvla.yaml").read_text()
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        text.replace('version: "0.3", algorithm: gae', 'version: "0.2", algorithm: gae')
    )
    out = tmp_path / "pkg"
    subprocess.run(
        [sys.executable, "-m", "vlagen", "new", str(spec), "-o", str(out)],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(RLINF_0_2), os.environ.get("PYTHONPATH", "")])
    )
    # The package's RLinf tests; the rest do not touch RLinf (the harness is 0.3's only).
    assert not (out / "tests" / "test_rlinf_fidelity.py").exists()
    run_package_tests(out, real_simulator=True, only=["tests/test_rlinf.py"])


@pytest.mark.slow
def test_a_qwen_vl_package_passes_its_rlinf_0_2_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Qwen2.5-VL waypoint example retargeted to RLinf 0.2 (on 4 GPUs): its adapter tests
    against RLinf 0.2 (its get_model, and prediction and scoring across stacked steps). 0.3's
    fidelity round on Qwen-VL (RLinf's env worker, rollout, advantages, actor update and FSDP
    wrap) is the highway_qwen_portable golden's (Qwen2.5-VL) and the qwen3_openvla variant's
    (Qwen3-VL, test_model_variants.py)."""
    if not RLINF_0_2.is_dir():
        pytest.skip(f"needs RLinf 0.2 in {RLINF_0_2} (README)")
    data = yaml.safe_load((REPO / "specs" / "highway_qwen_waypoint.yaml").read_text("utf-8"))
    data["targets"] = [{"framework": "rlinf", "version": "0.2", "algorithm": "grpo"}]
    data["resources"] = {"nodes": 1, "gpus_per_node": 4}
    out = tmp_path / "pkg"
    write(generate(load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec), out, fresh=True)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(RLINF_0_2), os.environ.get("PYTHONPATH", "")])
    )
    run_package_tests(out, real_simulator=True, only=["tests/test_rlinf.py"])


RLINF_GOLDENS = sorted(p.parents[2] for p in GOLDENS.glob("*/src/*/targets/rlinf/config.yaml"))


def _one_gpu_cluster() -> SimpleNamespace:
    """Ray's cluster as RLinf's placement reads it: one node group with one accelerator."""
    group = SimpleNamespace(label="cluster", hardware_type="Accelerator", hardware_resource_count=1)
    return SimpleNamespace(get_node_group=lambda label=None: group)


@pytest.mark.parametrize("src", RLINF_GOLDENS, ids=lambda p: p.parents[1].name)
# composed as train.py composes it, with RLinf's own version_base="1.1"
@pytest.mark.filterwarnings(r"ignore:\s*version_base=\"1\.1\" selects Hydra 1\.1:UserWarning")
def test_the_readme_gives_the_gpus_training_needs_and_a_command_for_one(src: Path) -> None:
    """The README's RLinf section says how many GPUs ``launch.sh train`` needs, and its one-GPU
    command, split as bash splits it, makes RLinf's own placement fit a one-GPU node (the
    spec's placement does not: RLinf's error is the one a user on one GPU got)."""
    pytest.importorskip("rlinf")
    from hydra import compose, initialize_config_dir
    from rlinf.utils.placement import HybridComponentPlacement

    package = src.parents[1]
    resources = load_spec(package / "vlagen.yaml").spec.resources
    gpus = resources.nodes * resources.gpus_per_node
    readme = (package / "README.md").read_text(encoding="utf-8")
    config_dir = str(src / "targets" / "rlinf")

    def world_sizes(overrides: list[str]) -> dict[str, int]:
        with initialize_config_dir(config_dir, version_base="1.1"):
            cfg = compose("config", overrides=overrides)
        placed = HybridComponentPlacement(cfg, _one_gpu_cluster())
        return {c: placed.get_world_size(c) for c in ("actor", "env", "rollout")}

    if gpus == 1:
        assert "Training needs the spec's resources: one GPU." in readme
        assert world_sizes([]) == {"actor": 1, "env": 1, "rollout": 1}
        return
    times = "\N{MULTIPLICATION SIGN}"
    wanted = f"{resources.nodes} node(s) {times} {resources.gpus_per_node} GPUs, {gpus} GPUs in all"
    assert wanted in " ".join(readme.split())
    launch = f"{src.relative_to(package)}/targets/rlinf/launch.sh train "
    (line,) = [ln for ln in readme.splitlines() if ln.startswith(launch) and "cluster." in ln]
    words = shlex.split(line)[2:]
    assert words[0] == "env.train.backend=synthetic"
    assert world_sizes(words) == {"actor": 1, "env": 1, "rollout": 1}
    with pytest.raises(AssertionError, match=f"End rank {gpus - 1} .* must be within"):
        world_sizes(words[:1])


def test_rlinfs_libero_env_comes_with_the_gym_it_imports_on_libero_only() -> None:
    """The LIBERO tests compare our env with RLinf's own LiberoEnv, which imports gym: the
    README's and the fresh venv's --no-deps install adds it there and nowhere else."""
    libero = make_plan(load_spec(REPO / "specs" / "libero_openvla_oft.yaml").spec)
    assert libero.framework_test_installs == ["siirl==0.2.0", "rlinf==0.3.0", "gym==0.26.2"]
    cartpole = make_plan(load_spec(REPO / "specs" / "cartpole_custom.yaml").spec)
    assert "gym==0.26.2" not in cartpole.framework_test_installs
    assert any(i.startswith("rlinf==") for i in cartpole.framework_test_installs)
