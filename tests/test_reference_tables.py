"""Every target's README sets its config beside the framework's own reference config, key by
key, and says why each value that differs does; the sampling temperature is the spec's, else
that reference's (issue 44's review of the generated configs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import GOLDENS, REPO, SPECS
from vlagen.errors import SpecError
from vlagen.load import load_spec, load_spec_text
from vlagen.plan import make_plan
from vlagen.targets.common.reference import flat

#: Each framework's sampling temperature key in its generated config.
TEMPERATURE_KEYS = {
    "rlinf": "rollout.sampling_params.temperature_train",
    "siirl": "actor_rollout_ref.rollout.temperature",
    "verl": "actor_rollout_ref.rollout.temperature",
    "areal": "gconfig.temperature",
}


def _rows(spec: Path, framework: str) -> dict:
    comparison = make_plan(load_spec(spec).spec).target(framework).reference
    return {row.key: row for row in comparison.rows}


def _values(target) -> dict:
    plan = target.plan
    if target.decl.framework == "siirl":
        return dict(plan.overrides)
    return flat(plan.config)


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_every_target_names_its_reference_and_why_each_value_differs(spec: Path) -> None:
    plan = make_plan(load_spec(spec).spec)
    readme = (GOLDENS / spec.stem / "README.md").read_text(encoding="utf-8")
    for target in plan.targets:
        comparison = target.reference
        assert comparison is not None, target.decl.key
        reference = comparison.reference
        assert reference.url.startswith(f"{reference.repository}/blob/{reference.tag}/")
        assert f"Beside {target.decl.title}'s own reference config" in readme
        assert f"]({reference.url})" in readme
        assert comparison.differing, target.decl.key  # no spec is the reference itself
        for row in comparison.rows:
            assert row.status in ("same", "differs", "at launch"), row
            assert row.source, row
            assert bool(row.why) is (row.status == "differs"), (target.decl.key, row)


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_the_temperature_is_the_references_unless_the_spec_sets_it(spec: Path) -> None:
    data = yaml.safe_load(spec.read_text())
    if data["model"]["family"] in ("pi0", "pi05"):  # it samples by its noisy step
        data["training"]["temperature"] = 0.7
        with pytest.raises(SpecError, match=r"training\.temperature"):
            load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml")
        return
    for target in make_plan(load_spec(spec).spec).targets:
        key = TEMPERATURE_KEYS[target.decl.framework]
        rows = {row.key: row for row in target.reference.rows}
        assert _values(target)[key] == target.reference.reference.value(key)
        assert rows[key].status == "same"
    data["training"]["temperature"] = 0.7
    changed = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    for target in make_plan(changed).targets:
        key = TEMPERATURE_KEYS[target.decl.framework]
        assert _values(target)[key] == 0.7
        row = {row.key: row for row in target.reference.rows}[key]
        assert row.status == "differs" and "training.temperature" in row.why


#: Each framework's gradient checkpointing key in its generated config.
CHECKPOINTING_KEYS = {
    "rlinf": "actor.fsdp_config.gradient_checkpointing",
    "siirl": "actor_rollout_ref.model.enable_gradient_checkpointing",
    "verl": "actor_rollout_ref.model.enable_gradient_checkpointing",
    "areal": "actor.gradient_checkpointing",
}


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_gradient_checkpointing_is_the_references_unless_the_spec_sets_it(spec: Path) -> None:
    """On where the reference has it (RLinf's, siiRL's, AReaL's examples; verl's script has
    it off), but for a custom module, which checkpoints only where it says how; the spec's
    ``training.gradient_checkpointing`` where it sets it."""
    data = yaml.safe_load(spec.read_text())
    custom = data["model"]["family"] == "custom"
    for target in make_plan(load_spec(spec).spec).targets:
        key = CHECKPOINTING_KEYS[target.decl.framework]
        row = {row.key: row for row in target.reference.rows}[key]
        assert _values(target)[key] is (target.reference.reference.value(key) and not custom)
        assert row.status == ("differs" if custom else "same"), row
    data["training"]["gradient_checkpointing"] = not custom
    changed = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    for target in make_plan(changed).targets:
        key = CHECKPOINTING_KEYS[target.decl.framework]
        assert _values(target)[key] is (not custom)


def test_the_libero_example_answers_the_review_on_rlinf() -> None:
    """Each difference the review found between the LIBERO example's RLinf config and
    RLinf's ``libero_spatial_grpo_openvlaoft.yaml`` is a row, with why."""
    rows = _rows(REPO / "specs" / "libero_openvla_oft.yaml", "rlinf")
    assert rows["rollout.sampling_params.temperature_train"].here == "1.6"
    lr = rows["actor.optim.lr"]
    assert (lr.reference, lr.here, lr.status) == ("2e-05", "0.0001", "differs")
    assert "LoRA here, full fine-tuning in the reference" in lr.why
    assert rows["fine-tuning"].here == "LoRA rank 32"
    for key in (
        "fine-tuning",
        "actor.optim.weight_decay",
        "actor.micro_batch_size",
        "algorithm.filter_rewards",
        "algorithm.rewards_lower_bound",
        "algorithm.rewards_upper_bound",
        "algorithm.reward_coef",
        "actor.enable_offload",
        "rollout.enable_offload",
        "simulator processes",
        "cluster.component_placement",
    ):
        assert rows[key].status == "differs" and rows[key].why, key
    assert rows["algorithm.clip_ratio_high"].status == "same"
    assert rows["actor.fsdp_config.gradient_checkpointing"].status == "same"  # on, as RLinf's
    assert "prev_logprobs" in rows["log-prob micro-batch"].source
    assert "env.workers: 16" in rows["simulator processes"].why


def test_verl_says_why_its_log_prob_pass_stages_and_env_gpus_differ() -> None:
    rows = _rows(REPO / "specs" / "pusht_openvla_oft.yaml", "verl")
    log_prob = rows["actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu"]
    assert log_prob.status == "differs" and "log_prob_micro_batch_size=16" in log_prob.reference
    assert rows["env.rollout.pipeline_stage_num"].status == "differs"
    # pusht simulates on the CPU: the env workers' GPUs idle, which the row says
    assert "runs on the CPU" in rows["trainer.n_env_gpus_per_node"].source
    assert "refuses `true`" in rows["actor_rollout_ref.actor.fsdp_config.param_offload"].source
    checkpointing = rows["actor_rollout_ref.model.enable_gradient_checkpointing"]
    assert checkpointing.status == "same" and checkpointing.here == "False"  # off, as verl's


def test_a_spec_nearer_another_rlinf_example_is_compared_with_that_one() -> None:
    path = REPO / "specs" / "libero_openvla_oft.yaml"
    data = yaml.safe_load(path.read_text())
    data["model"]["family"] = "openvla"
    data["model"]["action"]["chunk"] = 1
    del data["model"]["lora"]
    data["targets"] = [{"framework": "rlinf", "version": "0.3", "algorithm": "grpo"}]
    spec = load_spec_text(yaml.safe_dump(data, sort_keys=False), "spec.yaml").spec
    comparison = make_plan(spec).target("rlinf").reference
    assert comparison.reference.path.endswith("maniskill_grpo_openvla.yaml")
    rows = {row.key: row for row in comparison.rows}
    # RLinf's OpenVLA examples sample at 1.0, and so does the package by default
    assert rows["rollout.sampling_params.temperature_train"].here == "1"
    assert "simulator processes" not in rows  # ManiSkill's envs step in one batched process
