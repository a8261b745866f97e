"""Property-based tests: whatever the input, vlagen answers with a spec or a located SpecError.

1. Example specs mutated at random (leaves replaced by any YAML value, keys deleted, unknown
   keys added) load into a spec that generates valid Python, or fail with a SpecError whose
   every issue has a line, a column and a message. Nothing else may escape.
2. Arbitrary text as a whole spec file: a spec or a SpecError, never anything else.
3. The literal escapers round-trip every string through the target language's own parser.
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vlagen.api import generate
from vlagen.errors import SpecError
from vlagen.literals import md_text, py_literal, toml_literal
from vlagen.load import load_spec_text

REPO = Path(__file__).resolve().parents[1]
BASES = [
    yaml.safe_load(path.read_text(encoding="utf-8"))
    for path in sorted((REPO / "specs").glob("*.yaml"))
]

SLOW = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FAST = settings(max_examples=200, deadline=None, derandomize=True, database=None)


# --- strategies ----------------------------------------------------------------------------

# Values a spec field could plausibly hold, so that mutants often stay valid and reach generate.
PLAUSIBLE = st.sampled_from(
    [
        0, 1, 2, 7, 8, -1, 0.5, 1e-5, "0.3", "0.2", "1.0", "custom", "synthetic", "info",
        "openvla", "openvla_oft", "waypoint", "waypoints", "discrete", "continuous", "delta_ee",
        "main", "wrist", "grpo", "ppo", "{task}", "{tasks}", "all-linear", "a.b:C", "x", "",
        "class", "import", "None", "my-pkg", "1abc", "a..b", "{{", "}", "\\",
    ]
)  # fmt: skip
SCALARS = st.one_of(
    st.text(max_size=24),
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(),  # nan and infinities included
    st.none(),
    st.booleans(),
    PLAUSIBLE,
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=8), children, max_size=3),
    ),
    max_leaves=6,
)
# Any Unicode text that can be encoded: everything but lone surrogates (category Cs).
TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)))
KEYS = st.one_of(st.text(max_size=12), st.sampled_from(["name", "kind", "dim", "package", "key"]))


def _nodes(data: Any, path: tuple = ()) -> Iterator[tuple]:
    """Every path into ``data``, the root first."""
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _nodes(value, (*path, index))


def _get(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


# Every string in the examples: swapping one for another often keeps a spec valid.
BASE_STRINGS = sorted(
    {s for base in BASES for p in _nodes(base) if isinstance(s := _get(base, p), str)}
)


# Keys whose values are free text; any other string is a name, a choice or a version.
FREE_TEXT = {"description", "checkpoint", "prompt_template", "task", "task_suite", "unnorm_key"}


def _like(path: tuple, value: Any) -> st.SearchStrategy[Any]:
    """Values of the same type as ``value``: mutants that often stay valid and reach generate."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(min_value=1, max_value=16)
    if isinstance(value, float):
        return st.floats(min_value=1e-6, max_value=1.0)
    if isinstance(value, str):
        text = st.text(max_size=40)
        if path and path[-1] in FREE_TEXT:
            return st.one_of(text, st.sampled_from(BASE_STRINGS))
        return st.one_of(st.sampled_from(BASE_STRINGS), PLAUSIBLE, text)
    return VALUES


@st.composite
def mutated_specs(draw: st.DrawFn, *, gentle: bool) -> Any:
    """A random example spec with up to three mutations.

    ``gentle`` mutants only get leaves replaced by values of the same type, so many stay valid
    and exercise generate; the others also get any value anywhere, deleted and unknown keys.
    """
    data: Any = copy.deepcopy(draw(st.sampled_from(BASES)))
    ops = ["alike"] if gentle else ["alike", "alike", "replace", "delete", "add"]
    count = st.integers(min_value=1, max_value=2) if gentle else st.integers(0, 3)
    for _ in range(draw(count)):
        nodes = list(_nodes(data))
        op = draw(st.sampled_from(ops))
        if op in ("alike", "replace"):
            leaves = [p for p in nodes if not isinstance(_get(data, p), dict | list)]
            path = draw(st.sampled_from(leaves if op == "alike" and leaves else nodes))
            old = _get(data, path)
            value = draw(_like(path, old) if op == "alike" else VALUES)
            if path:
                _get(data, path[:-1])[path[-1]] = value
            else:
                data = value
        elif op == "delete":
            inner = [p for p in nodes if p]
            if inner:
                path = draw(st.sampled_from(inner))
                del _get(data, path[:-1])[path[-1]]
        else:
            mappings = [p for p in nodes if isinstance(_get(data, p), dict)]
            if mappings:
                _get(data, draw(st.sampled_from(mappings)))[draw(KEYS)] = draw(VALUES)
    return data


SPEC_DOCUMENTS = st.one_of(mutated_specs(gentle=True), mutated_specs(gentle=False))
YAMLISH = st.text(
    alphabet=st.sampled_from(list(":-[]{}#&*!|>'\"%@`,? \n\t\\abcxyz019._~<=")), max_size=80
)


# --- helpers -------------------------------------------------------------------------------


def _assert_located(error: SpecError) -> None:
    assert error.issues, "a SpecError must name at least one issue"
    for issue in error.issues:
        assert issue.line is not None and issue.line >= 1, issue
        assert issue.column is not None and issue.column >= 1, issue
        assert issue.message.strip(), issue


def _load_or_located_error(text: str):
    try:
        return load_spec_text(text, "spec.yaml")
    except SpecError as error:
        _assert_located(error)
        return None


# --- properties ----------------------------------------------------------------------------


def test_the_bases_are_valid() -> None:
    assert len(BASES) >= 2
    for data in BASES:
        load_spec_text(yaml.safe_dump(data, allow_unicode=True), "spec.yaml")


@SLOW
@given(SPEC_DOCUMENTS)
def test_mutated_specs_load_and_generate_or_fail_located(data: Any) -> None:
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    loaded = _load_or_located_error(text)
    if loaded is None:
        return
    output = generate(loaded.spec)
    python = [path for path in output.tree if path.endswith(".py")]
    assert python
    for path in python:
        ast.parse(output.tree[path].content.decode("utf-8"), filename=path)
    spec_json = json.loads(output.tree[f"src/{output.plan.package}/spec.json"].content)
    assert spec_json["spec"] == output.plan.spec.model_dump(mode="json")
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads(output.tree["pyproject.toml"].content.decode("utf-8"))
    assert pyproject["project"]["description"] == loaded.spec.project.description


@FAST
@given(st.one_of(TEXT, YAMLISH))
def test_any_text_is_a_spec_or_a_located_error(text: str) -> None:
    _load_or_located_error(text)


@FAST
@given(TEXT)
def test_py_literal_round_trips(text: str) -> None:
    assert ast.literal_eval(py_literal(text)) == text


@FAST
@given(TEXT)
def test_toml_literal_round_trips(text: str) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    assert tomllib.loads("k = " + toml_literal(text))["k"] == text


@FAST
@given(st.lists(st.text(max_size=10), max_size=4))
def test_toml_literal_round_trips_arrays(items: list[str]) -> None:
    tomllib = pytest.importorskip("tomllib")
    assert tomllib.loads("k = " + toml_literal(items))["k"] == items


@FAST
@given(TEXT)
def test_md_text_is_one_line(text: str) -> None:
    assert len(md_text(text).splitlines()) <= 1
