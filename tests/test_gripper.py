"""Gripper conventions as data: the checkpoint's (``model.action.gripper``, by default the
family's) and the simulator's (the preset's closing bound), each mapped to the env core's
canonical gripper (-1 = open, +1 = close) in one place; and the real statistics that tiny
LIBERO checkpoints carry."""

from __future__ import annotations

import sys
import types
from typing import Any, get_args

import numpy as np
import pytest
import yaml

from conftest import MINIMAL_SPEC, SPECS, spec_errors
from vlagen.api import generate
from vlagen.gripper import CONVENTIONS
from vlagen.load import load_spec, load_spec_text
from vlagen.plan import make_plan
from vlagen.presets import PRESETS
from vlagen.spec import ModelAction

LIBERO = next(path for path in SPECS if path.name == "libero_openvla_oft.yaml")


def _delta_ee(preset: str = "synthetic", **model: Any) -> dict:
    """The minimal spec on ``preset`` with a 7-D delta_ee action."""
    data = yaml.safe_load(MINIMAL_SPEC)
    data["env"].update(preset=preset, action={"kind": "delta_ee", "dim": 7})
    data["model"]["action"].update(dim=7, **model)
    if preset == "maniskill":
        data["env"].update(rewards=[{"name": "success", "source": "success"}])
    if preset == "libero":
        data["env"].update(task_suite="libero_spatial")
    return data


def _plan(data: dict):
    return make_plan(load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec)


def _generated(data: dict, suffix: str) -> str:
    """The text of the file of ``data``'s package whose path ends with ``suffix``."""
    output = generate(load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec)
    (text,) = [f.content.decode() for p, f in output.tree.items() if p.endswith(suffix)]
    return text


def _actions_module(data: dict, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The generated ``env/actions.py`` of ``data``, imported from the rendered text."""
    module = types.ModuleType("generated_actions")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # its dataclass looks it up
    exec(compile(_generated(data, "/env/actions.py"), "actions.py", "exec"), module.__dict__)
    return module


def test_the_spec_offers_exactly_the_declared_conventions() -> None:
    annotation = ModelAction.model_fields["gripper"].annotation
    offered = {arg for union in get_args(annotation) for arg in get_args(union)}
    assert offered == set(CONVENTIONS)


@pytest.mark.parametrize(
    ("name", "opened", "closed"),
    [("rlds", 1.0, 0.0), ("close_positive", -1.0, 1.0), ("open_positive", 1.0, -1.0)],
)
def test_each_convention_maps_its_open_and_close_to_the_canonical_ones(
    name: str, opened: float, closed: float
) -> None:
    convention = CONVENTIONS[name]
    assert convention.to_canonical(opened) == -1.0
    assert convention.to_canonical(closed) == 1.0
    for value in (opened, closed, 0.25):
        assert convention.from_canonical(convention.to_canonical(value)) == pytest.approx(value)


def test_openvla_families_default_to_rlds_and_the_plan_records_it() -> None:
    plan = make_plan(load_spec(LIBERO).spec)
    assert plan.spec.model.action.gripper == "rlds"
    assert '"gripper": "rlds"' in plan.spec_json
    assert (plan.model.gripper.scale, plan.model.gripper.offset) == (-2.0, 1.0)


def test_other_families_default_to_close_positive() -> None:
    data = _delta_ee()
    data["model"].update(family="custom", class_path="tiny_vla.policy:Policy")
    plan = _plan(data)
    assert plan.spec.model.action.gripper == "close_positive"
    assert (plan.model.gripper.scale, plan.model.gripper.offset) == (1.0, 0.0)


def test_a_given_convention_is_kept() -> None:
    plan = _plan(_delta_ee(gripper="open_positive"))
    assert plan.spec.model.action.gripper == "open_positive"
    assert (plan.model.gripper.scale, plan.model.gripper.offset) == (-1.0, 0.0)


def test_an_action_without_a_gripper_has_no_convention() -> None:
    plan = make_plan(load_spec_text(MINIMAL_SPEC).spec)
    assert plan.spec.model.action.gripper is None
    assert plan.model.gripper is None
    assert plan.env.gripper_controls is None


def test_a_convention_for_an_action_without_a_gripper_is_a_located_error() -> None:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["model"]["action"]["gripper"] = "rlds"
    assert spec_errors(data) == [
        "spec.yaml:11:14: model.action.gripper: env.action.kind 'continuous' has no gripper "
        "channel (only delta_ee's last channel is one); drop model.action.gripper"
    ]


def test_an_unknown_convention_is_a_located_error() -> None:
    (line,) = spec_errors(_delta_ee(gripper="rlsd"))
    assert line.startswith("spec.yaml:11:14: model.action.gripper: ")
    assert "'rlds'" in line


def test_presets_declare_which_bound_closes_the_gripper() -> None:
    closes = {name: preset.gripper_closes for name, preset in PRESETS.items()}
    assert closes.pop("maniskill") == "low"  # pd_ee_delta_pose: +1 opens the Panda's gripper
    assert set(closes.values()) == {"high"}  # robosuite/LIBERO: +1 closes; others as documented


@pytest.mark.parametrize("binarize", [True, False])
@pytest.mark.parametrize(
    ("preset", "opening", "closing"), [("libero", -1.0, 1.0), ("maniskill", 1.0, -1.0)]
)
def test_the_canonical_close_reaches_the_simulators_closing_control(
    preset: str, opening: float, closing: float, binarize: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _delta_ee(preset)
    data["env"]["action"]["binarize_gripper"] = binarize
    data["env"]["state_dim"] = 0
    actions = _actions_module(data, monkeypatch)
    canonical = np.zeros((2, 1, 7), np.float32)
    canonical[0, 0, -1], canonical[1, 0, -1] = -1.0, 1.0  # open, close
    control = actions.to_control(canonical)
    np.testing.assert_array_equal(control[:, 0, -1], [opening, closing])
    np.testing.assert_array_equal(control[:, 0, :-1], 0.0)  # the pose deltas are not inverted
    np.testing.assert_allclose(actions.to_canonical(control), canonical, atol=1e-6)
    nearly_open = canonical.copy()
    nearly_open[:, 0, -1] = [-0.9, 0.9]
    expected = [opening, closing] if binarize else [0.9 * opening, 0.9 * closing]
    np.testing.assert_allclose(actions.to_control(nearly_open)[:, 0, -1], expected, atol=1e-6)


def test_the_env_plan_orders_the_gripper_ends_by_the_closing_bound() -> None:
    maniskill = _plan(_delta_ee("maniskill")).env
    assert maniskill.control_low == (-1.0,) * 7 and maniskill.control_high == (1.0,) * 7
    assert maniskill.action_low == (-1.0,) * 6 + (1.0,)
    assert maniskill.action_high == (1.0,) * 6 + (-1.0,)
    assert maniskill.gripper_controls == (1.0, -1.0)
    assert "this simulator's +1 opens" in maniskill.mapping_doc
    libero = make_plan(load_spec(LIBERO).spec).env
    assert libero.gripper_controls == (-1.0, 1.0)


#: OpenVLA-OFT's LIBERO checkpoints' dataset_statistics.json (moojink/openvla-7b-oft-finetuned-
#: libero-spatial and -10), key <suite>_no_noops, the first and the gripper dimensions.
REAL = {
    "libero_spatial": ((-0.7454732114076613, 0.0), (0.9375, 1.0)),
    "libero_10": ((-0.6348214149475098, 0.0), (0.7714285850524902, 1.0)),
}


@pytest.mark.parametrize("suite", sorted(REAL))
def test_tiny_libero_checkpoints_carry_the_real_statistics(suite: str) -> None:
    data = yaml.safe_load(LIBERO.read_text())
    data["env"]["task_suite"] = suite
    del data["model"]["unnorm_key"]  # its default names the suite's statistics
    plan = _plan(data)
    assert plan.spec.model.unnorm_key == f"{suite}_no_noops"
    q01, q99, mask = plan.model.tiny_stats
    assert (q01[0], q01[-1]) == REAL[suite][0]
    assert (q99[0], q99[-1]) == REAL[suite][1]
    assert mask == (True,) * 6 + (False,)  # the gripper stays in the checkpoint's [0, 1]


def test_the_tiny_checkpoint_writes_the_planned_statistics() -> None:
    text = _generated(yaml.safe_load(LIBERO.read_text()), "/model/tiny.py")
    namespace: dict = {}
    start = text.index("ACTION_STATS = ")
    exec(text[start : text.index('"""', start)], namespace)
    q01, q99, mask = make_plan(load_spec(LIBERO).spec).model.tiny_stats
    assert namespace["ACTION_STATS"] == {"q01": q01, "q99": q99, "mask": mask}
    assert 'config.norm_stats = {UNNORM_KEY: {"action": ACTION_STATS}}' in text


MADE_UP = ((-0.75,) * 7, (0.75,) * 7, (True,) * 6 + (False,))


def test_presets_without_real_statistics_keep_made_up_ones() -> None:
    data = yaml.safe_load(LIBERO.read_text())
    del data["model"]["unnorm_key"]
    for suite in ("libero_spatial_swap", "libero_90"):  # no OpenVLA-OFT checkpoint's
        data["env"]["task_suite"] = suite
        assert _plan(data).model.tiny_stats == MADE_UP


def test_the_statistics_key_names_the_suite_the_checkpoint_was_trained_on() -> None:
    """A spatial checkpoint evaluated on a variant of the suite decodes with the spatial
    statistics: the tiny checkpoint carries those its key names."""
    data = yaml.safe_load(LIBERO.read_text())
    data["env"]["task_suite"] = "libero_spatial_swap"
    data["model"]["unnorm_key"] = "libero_spatial_no_noops"
    q01, q99, _ = _plan(data).model.tiny_stats
    assert (q01[0], q99[0]) == (REAL["libero_spatial"][0][0], REAL["libero_spatial"][1][0])


def test_a_token_family_on_libero_gets_the_suites_statistics_key_by_default() -> None:
    """Without it, Policy.load decoded with no statistics (about ten times the rotation on
    libero_object) and siiRL looked for a key no checkpoint has."""
    data = yaml.safe_load(LIBERO.read_text())
    data["env"]["task_suite"] = "libero_object"
    del data["model"]["unnorm_key"]
    plan = _plan(data)
    assert plan.spec.model.unnorm_key == "libero_object_no_noops"
    assert plan.model.unnorm_key == "libero_object_no_noops"
    assert plan.target("siirl").plan.unnorm_key == "libero_object_no_noops"
    data["model"]["action"]["normalization"] = {"q01": [-1.0] * 7, "q99": [1.0] * 7}
    assert _plan(data).spec.model.unnorm_key is None  # given statistics need no key
