"""Targets' contracts as data, and ``vlagen targets diff``: what changes between version lines."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from importlib.resources import files

import pytest

from vlagen.cli import main
from vlagen.contracts import Change, ContractDiff, config_diff, contract_diff
from vlagen.targets import all_targets, find_target

RLINF_0_2, RLINF_0_3 = find_target("rlinf", "0.2"), find_target("rlinf", "0.3")
SAMPLING = ("do_sample", "temperature_train", "temperature_eval", "top_k", "top_p")


def test_rlinf_snapshots_move_the_sampling_params_from_algorithm_to_rollout() -> None:
    """What the committed snapshots say, which the diff below must report."""
    old, new = RLINF_0_2.config_keys(), RLINF_0_3.config_keys()
    for name in SAMPLING:
        assert f"algorithm.sampling_params.{name}" in old
        assert f"rollout.sampling_params.{name}" not in old
        assert f"rollout.sampling_params.{name}" in new
        assert f"algorithm.sampling_params.{name}" not in new


def test_rlinf_0_2_to_0_3_names_the_real_differences() -> None:
    diff = contract_diff(RLINF_0_2, RLINF_0_3)
    assert {c.name for c in diff.registration} == {"env", "model", "hook"}
    model = next(c for c in diff.registration if c.name == "model")
    assert model.old.startswith("SupportedModel Enum + if/elif get_model, patched at run time")
    assert model.new.startswith("rlinf.models.register_model(")
    env = next(c for c in diff.registration if c.name == "env")
    assert "prepare_actions" in env.old and "raises" in env.old
    assert "passes unlisted env types through" in env.new

    config = diff.config
    for name in SAMPLING:
        source = f"algorithm.sampling_params.{name}"
        assert config.moved[source][0] == f"rollout.sampling_params.{name}"
    assert not any(k.startswith("algorithm.sampling_params.") for k in config.removed)
    assert not any(k.startswith("rollout.") for k in config.added)
    assert config.removed["algorithm.rollout_epoch"] == "int"
    assert config.added["env.train.rollout_epoch"] == "int"
    assert config.added["weight_syncer.type"] == "str"
    assert config.removed["actor.fsdp_config.fsdp_size"] == "int"
    assert not config.retyped

    assert [(c.kind, c.name) for c in diff.policy] == [
        ("+", "iql_forward"),
        ("+", "prepare_dagger_sft_batch"),
    ]
    assert diff.env == () and diff.observation == ()  # RLinf kept the env contract
    assert diff.algorithms == ()
    # vlagen trains π0.5 on 0.3 only (its adapter is tested there)
    assert [(c.kind, c.name) for c in diff.model_families] == [("+", "pi0"), ("+", "pi05")]


def _mirror(change: Change) -> Change:
    kind = {"+": "-", "-": "+", "~": "~"}[change.kind]
    return Change(kind, change.name, old=change.new, new=change.old)


def _mirrored(diff: ContractDiff) -> dict[str, object]:
    """``diff`` as its reverse would be, for comparison."""
    config = diff.config
    return {
        "lists": {
            name: sorted(map(_mirror, getattr(diff, name)), key=repr)
            for name in ("env", "policy", "observation", "registration", "algorithms")
        }
        | {"model_families": sorted(map(_mirror, diff.model_families), key=repr)},
        "added": dict(config.removed),
        "removed": dict(config.added),
        "retyped": {k: (new, old) for k, (old, new) in config.retyped.items()},
        "moved": {new: (old, kind) for old, (new, kind) in config.moved.items()},
    }


def _as_compared(diff: ContractDiff) -> dict[str, object]:
    config = diff.config
    names = ("env", "policy", "observation", "registration", "algorithms", "model_families")
    return {
        "lists": {name: sorted(getattr(diff, name), key=repr) for name in names},
        "added": dict(config.added),
        "removed": dict(config.removed),
        "retyped": dict(config.retyped),
        "moved": dict(config.moved),
    }


@pytest.mark.parametrize(
    ("old", "new"),
    [(("rlinf", "0.2"), ("rlinf", "0.3")), (("siirl", "0.2"), ("verl", "0.7"))],
    ids=["rlinf", "siirl-verl"],
)
def test_the_reverse_diff_is_the_mirror_image(old, new) -> None:
    a, b = find_target(*old), find_target(*new)
    forward, backward = contract_diff(a, b), contract_diff(b, a)
    assert not forward.empty
    assert _as_compared(backward) == _mirrored(forward)


@pytest.mark.parametrize("target", all_targets(), ids=lambda t: t.key)
def test_a_target_diffed_with_itself_is_empty(runner, target) -> None:
    assert contract_diff(target, target).empty
    result = runner.invoke(
        main, ["targets", "diff", target.framework, target.version, target.version]
    )
    assert result.exit_code == 0, result.output
    assert result.output.endswith("\nno differences\n")
    assert "  unchanged\n\nCONFIG" in result.output


def test_diff_prints_a_sectioned_report_and_what_to_do(runner) -> None:
    result = runner.invoke(main, ["targets", "diff", "rlinf", "0.2", "0.3"])
    assert result.exit_code == 0, result.output  # a report: differences are not a failure
    out = result.output
    assert out.startswith("rlinf 0.2 -> 0.3  (rlinf[embodied]==0.2 -> rlinf[embodied]==0.3.0)\n")
    headings = [line.split("  ")[0] for line in out.splitlines() if line[:1].isupper()]
    assert headings == [
        "ENV",
        "POLICY",
        "OBSERVATION",
        "REGISTRATION",
        "CONFIG",
        "ALGORITHMS",
        "MODEL FAMILIES",
    ]
    assert "  + iql_forward(**kwargs)  [optional]\n" in out
    assert "  ~ model\n      0.2: SupportedModel Enum" in out
    assert (
        "      0.3: rlinf.models.register_model(model_type, builder, category='embodied')\n" in out
    )
    assert "CONFIG  rlinf_0_2.config.json (188 keys) -> rlinf_0_3.config.json (191 keys)\n" in out
    assert "  6 moved, 9 added, 6 removed, 0 retyped\n" in out
    assert "  > algorithm.sampling_params.top_k -> rollout.sampling_params.top_k (int)\n" in out
    assert "  + env.train.rollout_epoch (int)\n" in out
    assert "  - algorithm.rollout_epoch (int)\n" in out
    assert out.endswith(
        'next: in your spec, set version: "0.3" on the rlinf target (now "0.2"), then run '
        "`vlagen regen --dry-run` to see the files the change touches\n"
    )

    summary = runner.invoke(main, ["targets", "diff", "rlinf", "0.2", "0.3", "--no-keys"])
    assert summary.exit_code == 0, summary.output
    assert "  algorithm: 6 moved, 5 removed\n  env: 2 added\n" in summary.output
    assert "sampling_params" not in summary.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["nope", "0.2", "0.3"],
            "vlagen: unknown framework 'nope'; known: areal, rlinf, siirl, verl\n",
        ),
        (["rlinf", "0.2", "0.9"], "vlagen: rlinf has no version line '0.9'; known: 0.2, 0.3\n"),
        (["rlinf", "0.1", "0.3"], "vlagen: rlinf has no version line '0.1'; known: 0.2, 0.3\n"),
        (  # issue 30: a misspelt framework, a version written as a release or a tag
            ["rlnf", "0.2", "0.3"],
            "vlagen: unknown framework 'rlnf' (did you mean 'rlinf'?); "
            "known: areal, rlinf, siirl, verl\n",
        ),
        (
            ["RLinf", "0.2", "0.3"],
            "vlagen: unknown framework 'RLinf' (did you mean 'rlinf'?); "
            "known: areal, rlinf, siirl, verl\n",
        ),
        (
            ["rlinf", "0.2", "0.3.0"],
            "vlagen: rlinf has no version line '0.3.0' (did you mean '0.3'?); known: 0.2, 0.3\n",
        ),
        (
            ["rlinf", "v0.2", "0.3"],
            "vlagen: rlinf has no version line 'v0.2' (did you mean '0.2'?); known: 0.2, 0.3\n",
        ),
        (
            ["verl", "0.7", "0.8"],
            "vlagen: verl has no version line '0.8' (not supported: see `vlagen targets`); "
            "known: 0.7\n",
        ),
    ],
)
def test_an_unknown_framework_or_version_exits_2_naming_the_known_ones(
    runner, args, message
) -> None:
    result = runner.invoke(main, ["targets", "diff", *args])
    assert result.exit_code == 2
    assert result.output == message


@pytest.mark.parametrize("target", all_targets(), ids=lambda t: t.key)
def test_every_contract_names_its_own_config_snapshot_and_it_exists(target) -> None:
    contract = target.contract
    assert contract.config_snapshot == f"{target.framework}_{target.version.replace('.', '_')}"
    assert files("vlagen.targets").joinpath(contract.config_file).is_file()
    assert target.config_keys is not None and target.config_keys()


def test_targets_still_lists_each_contract_summary(runner) -> None:
    result = runner.invoke(main, ["targets"])
    assert result.exit_code == 0, result.output
    for target in all_targets():
        assert f"  contract: {target.contract.summary}\n" in result.output


def test_config_moves_pair_one_candidate_of_the_same_type_only() -> None:
    diff = config_diff(
        "old",
        {"a.s.x": "int", "a.s.y": "int", "a.t.z": "int", "a.u.w": "int", "a.v": "int", "k": "int"},
        "new",
        {
            "b.s.x": "int",
            "b.s.y": "str",
            "b.t.z": "int",
            "c.t.z": "int",
            "b.v": "int",
            "k": "float",
        },
    )
    assert diff.moved == {"a.s.x": ("b.s.x", "int")}
    # a.v -> b.v: a leaf alone is not paired; a.t.z has two candidates; a.s.y another type
    assert diff.removed == {"a.s.y": "int", "a.t.z": "int", "a.u.w": "int", "a.v": "int"}
    assert diff.added == {"b.s.y": "str", "b.t.z": "int", "b.v": "int", "c.t.z": "int"}
    assert diff.retyped == {"k": ("int", "float")}


def test_config_keys_or_model_families_alone_make_a_diff() -> None:
    same = contract_diff(RLINF_0_3, RLINF_0_3)
    assert same.empty
    assert not replace(same, config=config_diff("a", {"k": "int"}, "b", {})).empty
    assert not replace(same, model_families=(Change("+", "custom"),)).empty


def test_targets_diff_imports_neither_jinja2_nor_pydantic_nor_torch() -> None:
    code = (
        "import sys\nfrom vlagen.cli import main\n"
        "try:\n    main(['targets', 'diff', 'rlinf', '0.2', '0.3'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(done.stdout.splitlines()[-1].split())
    assert "vlagen.contractreport" in modules
    assert not {"torch", "pydantic", "jinja2"} & modules
