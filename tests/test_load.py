"""Invalid specs: every kind of mistake is reported as PATH:LINE:COL: key.path: message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import MINIMAL_SPEC, REPO, spec_errors
from vlagen.errors import SpecError
from vlagen.load import load_spec, load_spec_text


def test_minimal_spec_loads() -> None:
    loaded = load_spec_text(MINIMAL_SPEC)
    assert loaded.spec.project.import_name == "tiny_vla"
    assert loaded.spec.resources.gpus_per_node == 8  # defaults fill the optional sections


def test_yaml_syntax_error_names_line_and_column() -> None:
    text = MINIMAL_SPEC.replace("  name: tiny-vla\n", "  name: [tiny-vla\n")
    (line,) = spec_errors(text)
    assert line.startswith("spec.yaml:4:")
    assert "YAML syntax" in line


def test_a_tab_in_the_indentation_is_called_a_tab() -> None:
    text = MINIMAL_SPEC.replace("  name: tiny-vla\n", "\tname: tiny-vla\n")
    (line,) = spec_errors(text)
    assert line == (
        "spec.yaml:3:1: <root>: YAML syntax: a tab, which YAML does not allow in indentation: "
        "indent with spaces"
    )


@pytest.mark.parametrize(("value", "kind"), [("[2]", "a list"), ("{a: 1}", "a mapping")])
def test_a_list_or_mapping_where_a_number_belongs_is_named_by_its_kind(
    value: str, kind: str
) -> None:
    (line,) = spec_errors(MINIMAL_SPEC.replace("state_dim: 0", f"state_dim: {value}"))
    assert line == f"spec.yaml:13:14: env.state_dim: Input should be a valid integer, got {kind}"


def test_type_error() -> None:
    (line,) = spec_errors(MINIMAL_SPEC.replace("state_dim: 0", "state_dim: many"))
    assert line == (
        "spec.yaml:13:14: env.state_dim: Input should be a valid integer, "
        "unable to parse string as an integer, got 'many'"
    )


def test_missing_field_points_at_its_parent() -> None:
    (line,) = spec_errors(MINIMAL_SPEC.replace("  checkpoint: ./tiny\n", ""))
    assert line == "spec.yaml:5:3: model.checkpoint: missing required key 'checkpoint'"


def test_misspelt_key_is_unknown_and_the_real_one_missing() -> None:
    lines = spec_errors(MINIMAL_SPEC.replace("max_episode_steps: 10", "max_episode_step: 10"))
    assert lines == [
        "spec.yaml:12:3: env.max_episode_steps: missing required key 'max_episode_steps'",
        "spec.yaml:14:3: env.max_episode_step: unknown key 'max_episode_step'; "
        "did you mean 'max_episode_steps'?",
    ]


def test_a_key_with_a_look_alike_letter_names_the_letter() -> None:
    """Cyrillic U+0435 prints as 'e': "unknown key 'seed'; did you mean 'seed'?" alone
    reads as nonsense."""
    lines = spec_errors(MINIMAL_SPEC.replace("state_dim: 0", "stat\u0435_dim: 0"))
    assert lines[-1] == (
        "spec.yaml:13:3: env.stat\u0435_dim: unknown key 'stat\u0435_dim'; did you mean "
        "'state_dim'? ('stat\u0435_dim' holds U+0435 CYRILLIC SMALL LETTER IE for 'e')"
    )


def test_a_retired_key_says_how_to_write_it_now() -> None:
    text = MINIMAL_SPEC.replace("state_dim: 0", "num_envs: 2").replace(
        "groups: 8\n  mini_batches: 1", "train_batch_size: 8\n  mini_batch_size: 4"
    )
    lines = spec_errors(text)
    assert lines == [
        "spec.yaml:13:3: env.num_envs: env.num_envs counted the envs of one framework's env "
        "worker, so it meant a different number on each framework; write training.envs, the "
        "envs stepping at once over the whole cluster, or leave it out to run every episode of "
        "an update at once (training.groups x group_size)",
        "spec.yaml:25:3: training.train_batch_size: training.train_batch_size is now "
        "training.groups (the initial conditions per update, the same number): write "
        "`groups: 8`",
        "spec.yaml:26:3: training.mini_batch_size: training.mini_batch_size is now "
        "training.mini_batches, the optimizer steps per update (groups / mini_batch_size): "
        "write `mini_batches: 2`",
    ]


def test_unknown_key_without_close_match_lists_the_keys() -> None:
    text = MINIMAL_SPEC.replace("  name: tiny-vla\n", "  name: tiny-vla\n  zzz: 1\n")
    (line,) = spec_errors(text)
    assert "project.zzz: unknown key 'zzz' (expected one of: name, package," in line


def test_unknown_tag_and_literal_suggest() -> None:
    text = MINIMAL_SPEC.replace("kind: continuous", "kind: continous").replace(
        "family: openvla", "family: openvl"
    )
    lines = spec_errors(text)
    assert any("model.family:" in ln and "did you mean 'openvla'" in ln for ln in lines)
    assert (
        "spec.yaml:19:11: env.action.kind: unknown kind 'continous'; did you mean 'continuous'? "
        "(expected: continuous, delta_ee, waypoints, discrete)"
    ) in lines


def test_cross_field_errors_are_all_reported_at_their_keys() -> None:
    text = MINIMAL_SPEC.replace("chunk: 1", "chunk: 20").replace(
        "kind: continuous\n    dim: 2", "kind: continuous\n    dim: 3"
    )
    lines = spec_errors(text)
    assert lines == [
        "spec.yaml:9:10: model.action.dim: the model outputs 2 action dimensions but "
        "env.action (continuous) takes 3",
        "spec.yaml:10:12: model.action.chunk: an action chunk of 20 steps is longer than an "
        "episode (env.max_episode_steps = 10)",
        "spec.yaml:14:22: env.max_episode_steps: RLinf needs max_episode_steps (10) divisible "
        "by the env steps of one action chunk (20) for target rlinf 0.3 (RLinf checks "
        "env.train.max_steps_per_rollout_epoch % actor.model.num_action_chunks == 0): "
        "set it to 20",
        "spec.yaml:20:10: env.action.dim: preset 'highway' takes 2 continuous action "
        "channels, not 3",
    ]


def test_target_rules_are_checked() -> None:
    text = MINIMAL_SPEC.replace(
        '{framework: rlinf, version: "0.3", algorithm: grpo}',
        '{framework: siirl, version: "0.2", algorithm: grpoo}',
    ).replace("family: openvla", "family: custom\n  class_path: my.mod:Policy")
    lines = spec_errors(text)
    assert any(
        "targets[0].algorithm: siiRL 0.2 has no algorithm 'grpoo'; did you mean 'grpo'?" in ln
        for ln in lines
    )
    assert any(
        "model.family: siiRL 0.2 (targets[0]) cannot train family 'custom'" in ln for ln in lines
    )


def test_rlinf_divisibility_rule() -> None:
    text = MINIMAL_SPEC.replace("chunk: 1", "chunk: 3")
    (line,) = spec_errors(text)
    assert (
        "env.max_episode_steps: RLinf needs max_episode_steps (10) divisible by the env "
        "steps of one action chunk (3)" in line
    )


def test_unknown_target_version_lists_supported() -> None:
    (line,) = spec_errors(MINIMAL_SPEC.replace('version: "0.3"', 'version: "0.4"'))
    assert "targets[0].version: rlinf '0.4' is not supported" in line
    assert "(supported: 0.2, 0.3)" in line


def test_unquoted_version_gets_a_hint() -> None:
    (line,) = spec_errors(MINIMAL_SPEC.replace('version: "0.3"', "version: 0.3"))
    assert "write the version as a quoted string" in line


def test_duplicate_key() -> None:
    (line,) = spec_errors(
        MINIMAL_SPEC.replace("  state_dim: 0\n", "  state_dim: 0\n  state_dim: 3\n")
    )
    assert line == "spec.yaml:14:3: env.state_dim: duplicate key (first set at line 13)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "<root>: the spec is empty"),
        ("- a\n- b\n", "<root>: the spec must be a mapping of sections"),
        ("vlagen: 2\n", "vlagen: spec schema version is 2; this vlagen reads `vlagen: 1`"),
        ("project: {}\n", "vlagen: spec schema version is missing"),
    ],
)
def test_document_level_errors(text: str, expected: str) -> None:
    (line,) = spec_errors(text)
    assert expected in line


def test_unreadable_and_non_utf8_files(tmp_path) -> None:
    with pytest.raises(SpecError, match="cannot read the spec"):
        load_spec(tmp_path / "absent.yaml")
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"vlagen: 1\nproject: {name: caf\xe9}\n")
    with pytest.raises(SpecError, match=r"latin1.yaml:2:1: <root>: the spec is not UTF-8 text"):
        load_spec(bad)


def test_a_fifo_is_refused_without_hanging(tmp_path) -> None:
    """Run in a subprocess: opened without O_NONBLOCK, the open would wait for a writer."""
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "vlagen", "validate", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        f"{fifo}:1:1: <root>: the spec is not a regular file (it is a FIFO)"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name", ["/dev/stdin", "-"])
def test_a_spec_piped_to_dev_stdin_is_read(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vlagen", "validate", name],
        input=MINIMAL_SPEC,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("/dev/stdin: valid (tiny-vla;")


def test_a_piped_spec_for_an_existing_package_is_told_to_pipe_it_to_regen(tmp_path: Path) -> None:
    """`vlagen new -` into a package: the regen it suggests reads the pipe again (`-`), not
    /dev/stdin, which would wait on the terminal."""
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "vlagen", "new", "-", "-o", str(tmp_path / "pkg")],
            input=MINIMAL_SPEC,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    assert f"`vlagen regen - -o {tmp_path / 'pkg'}`" in done.stderr, done.stderr
    assert "from the spec piped in" in done.stderr or "generated from this spec" in done.stderr


@pytest.mark.parametrize(
    ("spec", "framework", "wrong"),
    [
        ("libero_openvla_oft", "rlinf", "ppo"),
        ("navsim_waypoint", "rlinf", "reinforce++"),
        ("pusht_openvla_oft", "verl", "ppo"),
    ],
)
def test_a_wrong_algorithm_is_one_error_without_follow_on_errors(
    spec: str, framework: str, wrong: str
) -> None:
    """The target's own checks (group sizes, batch divisibility) compute from the algorithm,
    so a spec naming one the target lacks gets that error alone, not errors computed as if
    there were one rollout per task."""
    data = yaml.safe_load((REPO / "specs" / f"{spec}.yaml").read_text())
    (target,) = (t for t in data["targets"] if t["framework"] == framework)
    target["algorithm"] = wrong
    (line,) = spec_errors(data)
    assert ".algorithm: " in line and f"has no algorithm {wrong!r}" in line


@pytest.mark.parametrize(
    ("wrong", "name"), [("ppo", "gae"), ("PPO", "gae"), ("reinforce++", "reinpp")]
)
def test_rlinfs_name_for_an_algorithm_is_given(wrong: str, name: str) -> None:
    """RLinf calls PPO ``gae`` (its GAE advantage with the actor-critic loss)."""
    text = MINIMAL_SPEC.replace("algorithm: grpo", f"algorithm: {wrong!r}")
    (line,) = spec_errors(text)
    assert f"RLinf 0.3 has no algorithm {wrong!r}: RLinf calls it {name!r} (" in line
    assert f"write algorithm: {name} (supported: gae, grpo, grpo_dynamic, reinpp)" in line


def test_a_fractional_number_for_an_integer_is_named_once() -> None:
    """`gpus_per_node: 4.5` read "...got a number with a fractional part, got 4.5"."""
    (line,) = spec_errors(MINIMAL_SPEC + "resources:\n  gpus_per_node: 4.5\n")
    assert line.endswith(
        "resources.gpus_per_node: Input should be a valid integer, got 4.5, which has a fraction"
    ), line


def test_a_yaml_boolean_is_not_a_number() -> None:
    """YAML 1.1 reads `on`, `no`, `yes`, `true` as booleans, and pydantic took a bool for a
    number: `gpus_per_node: on` was one GPU and a reward's `weight: no` silently zero."""
    text = (
        MINIMAL_SPEC.replace("state_dim: 0", "state_dim: 0\n  rewards: [{name: r, weight: no}]")
        .replace("groups: 8", "groups: true")
        .replace("training:\n", "training:\n  seed: yes\n")
        + "resources:\n  gpus_per_node: on\n"
    )
    lines = spec_errors(text)
    assert [line.split(": ", 2)[1] for line in lines] == [
        "env.rewards[0].weight",
        "training.seed",
        "training.groups",
        "resources.gpus_per_node",
    ]
    assert lines[0].endswith(
        ": expected a number, got false, which YAML reads as a boolean (unquoted true/false, "
        "yes/no and on/off are booleans)"
    )
    assert all("expected a number, got true, which YAML reads" in line for line in lines[1:])
    (line,) = spec_errors(MINIMAL_SPEC.replace("vlagen: 1", "vlagen: yes"))
    assert "spec schema version is True; this vlagen reads `vlagen: 1`" in line


def _spec_models() -> list[type]:
    """Every model class the spec is built of, found by walking the field annotations."""
    import typing

    from pydantic import BaseModel

    from vlagen.spec import Spec

    found: list[type] = []
    todo: list[object] = [Spec]
    while todo:
        tp = todo.pop()
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp not in found:
                found.append(tp)
                todo.extend(field.annotation for field in tp.model_fields.values())
        else:
            todo.extend(typing.get_args(tp))
    return found


def _bools_for(schema: dict, defs: dict) -> list:
    """The values that put a bool where a field of this JSON schema takes a number."""
    if "$ref" in schema:
        return []  # a model: walked as a class of its own
    out: list = []
    for option in schema.get("anyOf", []):
        out += _bools_for(option, defs)
    kind = schema.get("type")
    if kind in ("integer", "number") or isinstance(schema.get("const"), int):
        out.append(True)
    if kind == "array":
        if "prefixItems" in schema:
            if any(_bools_for(item, defs) for item in schema["prefixItems"]):
                out.append([True] * len(schema["prefixItems"]))
        elif _bools_for(schema.get("items", {}), defs):
            out.append([True])
    return out


def test_every_numeric_field_of_the_schema_refuses_a_bool() -> None:
    """Each int and float field (a scalar, in a list or a tuple, in a union) of every section
    of the spec, walked from the models' JSON schema so that a field added later is in it."""
    from pydantic import ValidationError

    from vlagen.spec import BOOL_FOR_NUMBER

    checked = []
    for model in _spec_models():
        schema = model.model_json_schema()
        for name, prop in schema.get("properties", {}).items():
            for bad in _bools_for(prop, schema.get("$defs", {})):
                with pytest.raises(ValidationError) as info:
                    model.model_validate({name: bad})
                at_field = [e for e in info.value.errors() if e["loc"][:1] == (name,)]
                assert [e["type"] for e in at_field] == [BOOL_FOR_NUMBER] * len(at_field), (
                    model.__name__,
                    name,
                    bad,
                    at_field,
                )
                assert at_field, (model.__name__, name, bad)
                checked.append(f"{model.__name__}.{name}")
    assert len(set(checked)) > 40  # the walk found the spec's numbers: it cannot pass empty
    assert {"Resources.gpus_per_node", "RewardTerm.weight", "Spec.vlagen"} <= set(checked)


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("name: tiny-vla", "name: 'tiny vla'", "'tiny vla'"),
        ("state_dim: 0", "state_dim: 0\n  remote: 127.0.0.1:5555", "'127.0.0.1:5555'"),
        ("name: tiny\n", "name: tiny\n  class_path: 'a.b:1x'\n", "'1x'"),
    ],
)
def test_a_validators_message_names_the_value_once(old: str, new: str, value: str) -> None:
    """The spec's own validators name the value where it helps; load added `, got VALUE`
    after them too (`got '127.0.0.1:5555', got '127.0.0.1:5555'`)."""
    lines = [line for line in spec_errors(MINIMAL_SPEC.replace(old, new)) if value in line]
    assert lines and all(line.count(value) == 1 for line in lines), lines
