"""Hostile specs: whatever the file holds, vlagen answers in bounded time and memory with a
spec or located errors (exit 0 or 2), never a traceback.

The long fuzzer is ``python tests/fuzz_specs.py --cases 10000``; the property here is its
quick sample.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import MINIMAL_SPEC, spec_errors
from hostile_specs import ALIAS_BOMB, mutate, run_validate
from vlagen.cli import main
from vlagen.yamlsource import MAX_BYTES, MAX_DEPTH, MAX_NODES, MAX_NUMBER_CHARS


def _validate(runner, spec_file, text: str):
    path = spec_file(text)
    start = time.perf_counter()
    result = runner.invoke(main, ["validate", str(path)])
    assert time.perf_counter() - start < 5
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    assert "Traceback" not in result.output
    return result


# --- the loader's limits -------------------------------------------------------------------


@pytest.mark.parametrize("depth", [500, 50_000])
def test_deep_nesting_is_a_located_error(runner, spec_file, depth: int) -> None:
    text = MINIMAL_SPEC + "a: " + "[" * depth + "]" * depth + "\n"
    result = _validate(runner, spec_file, text)
    assert result.exit_code == 2
    line = result.output.splitlines()[0]
    where = f"spec.yaml:27:{3 + MAX_DEPTH}: a" + "[0]" * (MAX_DEPTH - 1) + ": "  # root: 1 level
    assert where in line, line
    assert f"mappings and lists nest more than {MAX_DEPTH} levels deep" in line


def test_deep_block_mappings_are_refused() -> None:
    text = "vlagen: 1\n" + "".join("  " * i + f"k{i}:\n" for i in range(100))
    (line,) = spec_errors(text)
    assert f"nest more than {MAX_DEPTH} levels deep" in line


def test_nesting_within_the_limit_is_read() -> None:
    depth = MAX_DEPTH - 1
    text = MINIMAL_SPEC + "a: " + "[" * depth + "]" * depth + "\n"
    (line,) = spec_errors(text)
    assert "unknown key 'a'" in line


def test_alias_bomb_is_refused_before_expanding(runner, spec_file) -> None:
    assert len(ALIAS_BOMB.encode()) < 310  # 9^9 = 387,420,489 strings once expanded
    result = _validate(runner, spec_file, ALIAS_BOMB)
    assert result.exit_code == 2
    assert (
        f"spec.yaml:5:11: e[1]: the spec has more than {MAX_NODES:,} keys, values and list "
        "items (with aliases expanded)"
    ) in result.output


def test_alias_cycle_and_undefined_alias() -> None:
    (line,) = spec_errors("a: &a [1, *a]\n")
    assert line == (
        "spec.yaml:1:11: a[1]: the alias *a is inside the node it names, which would make it "
        "infinite"
    )
    (line,) = spec_errors("vlagen: 1\na: *nope\n")
    assert line == "spec.yaml:2:4: a: the alias *nope names no anchor before it"


def test_aliases_and_merge_keys_within_the_limits_work() -> None:
    text = MINIMAL_SPEC.replace(
        "  cameras:\n    - {name: front, height: 64, width: 64}\n",
        "  cameras:\n    - &cam {name: front, height: 64, width: 64}\n",
    ).replace("  task: drive\n", "  task: drive\n  rewards: [{<<: *cam, name: r}]\n")
    lines = spec_errors(text)  # merged keys arrive: height is not a reward term's key
    assert any("env.rewards[0].height: unknown key 'height'" in line for line in lines)


def test_too_many_nodes_is_a_located_error() -> None:
    text = MINIMAL_SPEC + "x: [" + "0, " * (MAX_NODES + 10) + "]\n"
    (line,) = spec_errors(text)
    assert line.startswith("spec.yaml:27:")
    assert f"more than {MAX_NODES:,} keys, values and list items" in line


def test_huge_file_is_refused_without_reading_it_all(runner, spec_file, tmp_path: Path) -> None:
    terms = "".join(f"    - {{name: term{i}, weight: 1.0, source: env}}\n" for i in range(110_000))
    text = MINIMAL_SPEC.replace("  task: drive\n", "  task: drive\n  rewards:\n" + terms)
    assert len(text) > 5 * MAX_BYTES
    result = _validate(runner, spec_file, text)
    assert result.exit_code == 2
    assert "is larger than 1,048,576 bytes (1 MiB), the most vlagen reads" in result.output
    (line,) = spec_errors(text)  # load_spec_text: the same limit, located
    assert "the spec is 5," in line and "at most 1,048,576 bytes" in line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 2020-13-45\n", "a: cannot read this timestamp: month must be in 1..12"),
        ("a: " + "1" * 100 + "\n", "a: integer out of range (at most 2^63 - 1 in size)"),
        ("a: 0b" + "1" * 98 + "\n", "a: integer out of range (at most 2^63 - 1 in size)"),
        ("a: " + "1" * 5000 + "\n", "a: this int is 5,000 characters long; vlagen reads numbers"),
        ("a: 1." + "5" * 100 + "\n", "a: this float is 102 characters long; vlagen reads"),
        ("a: 9223372036854775808\n", "a: integer out of range"),
    ],
)
def test_unbuildable_scalars_are_located(text: str, expected: str) -> None:
    (line,) = spec_errors("vlagen: 1\n" + text)
    assert line.startswith("spec.yaml:2:4: " + expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("project: 1" + ":59" * 349_000, "spec.yaml:2:10: project: this int is 1,047,001 char"),
        ("project: 1" + ":59" * 1000 + ".5", "spec.yaml:2:10: project: this float is 3,003 char"),
        ("? 1" + ":59" * 1000 + "\n: x", "spec.yaml:2:3: <root>: this int is 3,001 characters"),
        (
            "? [1" + ":59" * 1000 + "]\n: x",
            "spec.yaml:2:3: <root>: keys must be strings, got a list",
        ),
    ],
)
def test_long_numbers_are_refused_before_they_are_built(monkeypatch, text, expected) -> None:
    """PyYAML builds a sexagesimal int (1:59:59...) in quadratic time: a 1 MiB one took ~47 s.
    Nothing longer than MAX_NUMBER_CHARS may reach a constructor (a key in a complex key
    neither: complex keys are not built at all)."""
    from yaml.constructor import SafeConstructor

    built: list[int] = []
    for tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        real = SafeConstructor.yaml_constructors[tag]

        def guarded(loader, node, real=real):
            assert len(node.value) <= MAX_NUMBER_CHARS, "a long number reached the constructor"
            built.append(len(node.value))
            return real(loader, node)

        monkeypatch.setitem(SafeConstructor.yaml_constructors, tag, guarded)
    (line,) = spec_errors("vlagen: 1\n" + text + "\n")
    assert line.startswith(expected), line
    assert built == [1], "only `vlagen: 1` was built"


# --- numbers, names, format strings, class paths -------------------------------------------


LE = "Input should be less than or equal to"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("height: 64", "height: 1000000000000", f"env.cameras[0].height: {LE} 8192"),
        (
            "  checkpoint: ./tiny\n",
            "  checkpoint: ./tiny\n  image_size: [9223372036854775807, 224]\n",
            f"model.image_size[0]: {LE} 8192",
        ),
        (
            "  group_size: 2\n",
            "  group_size: 2\n  learning_rate: 1.0e+308\n",
            f"training.learning_rate: {LE} 1",
        ),
        ("groups: 8", "groups: 2000000", f"training.groups: {LE} 1048576"),
        (
            "  mini_batches: 1\n",
            "  mini_batches: 1\n  seed: 4294967296\n",
            f"training.seed: {LE} 4294967295",
        ),
        ("chunk: 1", "chunk: 100000", f"model.action.chunk: {LE} 1024"),
    ],
)
def test_numbers_have_physical_bounds(old: str, new: str, expected: str) -> None:
    assert old in MINIMAL_SPEC
    lines = spec_errors(MINIMAL_SPEC.replace(old, new))
    assert any(expected in line for line in lines), lines


def test_reward_terms_are_bounded() -> None:
    terms = "".join(f"    - {{name: t{i}}}\n" for i in range(257))
    lines = spec_errors(
        MINIMAL_SPEC.replace("  task: drive\n", "  task: drive\n  rewards:\n" + terms)
    )
    assert any("env.rewards: List should have at most 256 items" in line for line in lines)


def test_long_names_are_refused(runner, spec_file, tmp_path: Path) -> None:
    spec = spec_file(MINIMAL_SPEC.replace("name: tiny-vla", "name: " + "a" * 256))
    result = runner.invoke(main, ["new", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "project.name: Value error, " not in result.output
    assert "project.name: is 256 characters long; at most 100 are allowed" in result.output
    assert not (tmp_path / "out").exists()
    lines = spec_errors(MINIMAL_SPEC.replace("name: tiny-vla", "name: x\n  package: " + "p" * 101))
    assert any("project.package: is 101 characters long; at most 100" in line for line in lines)


def test_name_at_the_limit_generates_paths_that_fit(tmp_path: Path) -> None:
    from vlagen.api import generate
    from vlagen.load import load_spec_text

    loaded = load_spec_text(MINIMAL_SPEC.replace("name: tiny-vla", "name: " + "a" * 100))
    output = generate(loaded.spec)
    for path in output.tree:
        assert all(len(part.encode()) <= 255 for part in path.split("/")), path


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{task} {}", "{} is a positional placeholder; name it (known: {task})"),
        ("{task:d}", "{task:d}: conversions (!r) and format specs (:d) are not allowed"),
        ("{task::}", "{task::}: conversions (!r) and format specs (:d) are not allowed"),
        ("{task!r}", "{task!r}: conversions"),
        ("{task:{task}}", "{task:{task}}: conversions"),
        ("{0}", "unknown placeholder {0}"),
        ("{task[0]}", "unknown placeholder {task[0]}"),
        ("{task", "is not a valid format string"),
    ],
)
def test_prompt_template_takes_only_task(template: str, expected: str) -> None:
    text = MINIMAL_SPEC.replace(
        "  checkpoint: ./tiny\n", f"  checkpoint: ./tiny\n  prompt_template: '{template}'\n"
    )
    (line,) = spec_errors(text)
    assert line.startswith("spec.yaml:8:20: model.prompt_template: ")
    assert expected in line


@pytest.mark.parametrize("template", ["Do {task}.", "{{literal}} {task}", "{task:}", "no task"])
def test_harmless_prompt_templates_are_accepted(template: str) -> None:
    from vlagen.load import load_spec_text

    text = MINIMAL_SPEC.replace(
        "  checkpoint: ./tiny\n", f"  checkpoint: ./tiny\n  prompt_template: '{template}'\n"
    )
    spec = load_spec_text(text).spec
    assert isinstance(spec.model.prompt_template.format(task="x"), str)


def _custom(class_path: str) -> str:
    return MINIMAL_SPEC.replace("family: openvla", f"family: custom\n  class_path: '{class_path}'")


@pytest.mark.parametrize(
    ("class_path", "where"),
    [
        ("tiny_vla.spec:Y", "src/tiny_vla/spec.py"),
        ("tiny_vla:Y", "src/tiny_vla/__init__.py"),
        ("tiny_vla.env.core:Y", "src/tiny_vla/env/"),
        ("tiny_vla.model:Y", "src/tiny_vla/model/"),
        ("tiny_vla.targets.rlinf.x:Y", "src/tiny_vla/targets/"),
        ("tiny_vla.smoke:Y", "src/tiny_vla/smoke.py"),
    ],
)
def test_class_path_into_generated_files_is_refused(
    runner, spec_file, tmp_path, class_path, where
) -> None:
    spec = spec_file(_custom(class_path))
    result = runner.invoke(main, ["new", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert (
        f"model.class_path: {class_path!r} points into {where}, which vlagen generates and "
        "rewrites; put the class in a module of your own, e.g. 'tiny_vla.custom:Y'"
    ) in result.output
    assert not (tmp_path / "out").exists()


def test_backend_class_into_generated_files_is_refused() -> None:
    text = MINIMAL_SPEC.replace(
        "preset: highway", "preset: custom\n  backend_class: tiny_vla.env.backends.x:B"
    )
    lines = spec_errors(text)
    assert any(
        "env.backend_class: 'tiny_vla.env.backends.x:B' points into src/tiny_vla/env/" in line
        for line in lines
    ), lines


@pytest.mark.parametrize(
    ("class_path", "expected"),
    [
        ("tiny_vla..x:Y", "'tiny_vla..x' is not a valid dotted module path: it has an empty part"),
        (".x:Y", "'.x' is not a valid dotted module path: it has an empty part"),
        (
            "a.class.b:Y",
            "'a.class.b' is not a valid dotted module path: it has 'class', which is not",
        ),
        ("a.b", "'a.b' is not a class path; expected `module.path:Class`"),
        ("a:b:c", "'a:b:c' is not a class path"),
        ("a.b:1x", "'1x' is not a valid class name"),
        ("a." + "m" * 101 + ":Y", "'mmmmmmmmmmmmmmmmmmmm'... is longer than 100 bytes"),
    ],
)
def test_malformed_class_paths_get_the_right_reason(class_path: str, expected: str) -> None:
    lines = spec_errors(_custom(class_path))
    assert any("model.class_path: " + expected in line for line in lines), lines
    assert not any("escape the output directory" in line for line in lines)


def test_a_class_path_in_a_module_of_its_own_is_scaffolded() -> None:
    from vlagen.api import generate
    from vlagen.load import load_spec_text
    from vlagen.plan import GENERATED_MODULES

    text = _custom("tiny_vla.policy:Net").replace('rlinf, version: "0.3"', 'rlinf, version: "0.3"')
    output = generate(load_spec_text(text).spec)
    assert "src/tiny_vla/policy.py" in output.tree
    top = {
        p.split("/")[2].removesuffix(".py") for p in output.tree if p.startswith("src/tiny_vla/")
    }
    assert top - {"policy", "spec.json"} <= GENERATED_MODULES  # the check knows every one


# --- no traceback, whatever the input ------------------------------------------------------


def test_internal_errors_are_one_line(runner, spec_file, monkeypatch) -> None:
    import vlagen.load

    def boom(path):
        raise KeyError("bug")

    monkeypatch.setattr(vlagen.load, "load_spec", boom)
    result = runner.invoke(main, ["validate", str(spec_file())])
    assert result.exit_code == 1
    assert result.output.startswith("vlagen: internal error: KeyError: 'bug'\n")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["new", "regen", "diff", "check"])
def test_every_spec_command_refuses_hostile_specs_cleanly(
    runner, spec_file, tmp_path, command
) -> None:
    spec = spec_file(ALIAS_BOMB)
    out = tmp_path / "out"
    result = runner.invoke(main, [command, str(spec), "-o", str(out)])
    assert result.exit_code == 2
    assert "more than 20,000 keys" in result.output
    assert not out.exists()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(min_value=0, max_value=2**32))
def test_mutated_specs_validate_or_fail_cleanly(seed: int) -> None:
    raw = mutate(random.Random(seed), big=False)
    start = time.perf_counter()
    outcome = run_validate(raw)
    assert outcome.traceback is None, outcome.traceback
    assert outcome.exit_code in (0, 2), outcome.output
    assert time.perf_counter() - start < 5
