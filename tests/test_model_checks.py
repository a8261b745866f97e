"""Model sections that cannot work with their env or checkpoint are located errors."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from conftest import MINIMAL_SPEC, REPO, spec_errors
from vlagen.api import generate
from vlagen.load import load_spec_text


def _spec(**model: Any) -> dict:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["model"].update(model)
    return data


def test_a_vocabulary_too_small_for_the_bins() -> None:
    data = _spec(vocab_size=200)
    assert spec_errors(data) == [
        "spec.yaml:11:15: model.vocab_size: a vocabulary of 200 cannot hold 256 action tokens "
        "(model.action.bins) plus 4 special tokens"
    ]


def test_an_action_dim_that_disagrees_with_the_env() -> None:
    data = _spec()
    data["model"]["action"]["dim"] = 3
    assert spec_errors(data) == [
        "spec.yaml:9:10: model.action.dim: the model outputs 3 action dimensions but "
        "env.action (continuous) takes 2"
    ]


def test_statistics_of_the_wrong_length_and_outside_the_canonical_range() -> None:
    data = _spec()
    data["model"]["action"]["normalization"] = {"q01": [-0.5, -0.5, -0.5], "q99": [0.5, 2.0]}
    assert spec_errors(data) == [
        "spec.yaml:13:7: model.action.normalization.q01: has 3 values; model.action.dim is 2",
        "spec.yaml:18:9: model.action.normalization.q99[1]: 2.0 is outside [-1, 1]: action "
        "statistics are in the env's canonical units, which the env core scales to the "
        "simulator's bounds",
    ]


def test_a_family_the_env_action_kind_cannot_use() -> None:
    data = _spec(family="waypoint")
    (line,) = spec_errors(data)
    assert line == (
        "spec.yaml:6:11: model.family: family 'waypoint' cannot drive env.action.kind "
        "'continuous'; it drives waypoints (families for 'continuous': openvla, "
        "openvla_oft, pi0, pi05, custom)"
    )


def _discrete(**action: Any) -> dict:
    data = _spec()
    data["model"]["action"].update(dim=1, **action)
    data["env"]["action"] = {"kind": "discrete", "choices": 5}
    return data


@pytest.mark.parametrize("bins", [3, 6, 256])
def test_discrete_bins_other_than_the_choices_exit_2_and_write_nothing(
    bins: int, runner, spec_file, tmp_path
) -> None:
    """One action token per choice: bins that differ from env.action.choices (too few, one
    more as OpenVLA's edges would need, the default written out) are a located error."""
    from vlagen.cli import main

    data = _discrete(bins=bins)
    message = (
        "spec.yaml:11:11: model.action.bins: a discrete env action has one action token per "
        f"choice, so bins must equal env.action.choices (5); got {bins}. Set it to 5 or leave "
        "it out"
    )
    assert spec_errors(data) == [message]
    out = tmp_path / "out"
    path = spec_file(yaml.safe_dump(data, sort_keys=False))
    result = runner.invoke(main, ["new", str(path), "-o", str(out)])
    assert result.exit_code == 2
    assert message.replace("spec.yaml", str(path)) in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_discrete_bins_unset_are_the_choices_and_reach_the_policy_core() -> None:
    spec = load_spec_text(yaml.safe_dump(_discrete(), sort_keys=False), "spec.yaml").spec
    assert spec.model.action.bins == 5
    tree = generate(spec).tree
    tokens = tree["src/tiny_vla/model/action_tokens.py"].content.decode()
    assert "\nBINS = 5\n" in tokens and "self.levels = torch.linspace(-1.0, 1.0, BINS" in tokens
    assert "\nCHOICES = 5  " in tree["tests/test_model.py"].content.decode()
    assert load_spec_text(yaml.safe_dump(_discrete(bins=5)), "spec.yaml").spec == spec


def test_discrete_choices_take_no_statistics() -> None:
    data = _discrete(normalization={"q01": [-0.5], "q99": [0.5]})
    data["model"]["unnorm_key"] = "bridge_orig"
    assert spec_errors(data) == [
        "spec.yaml:12:7: model.action.normalization: a discrete env action's tokens decode to "
        "its choices exactly; statistics would move them between choices. Drop the "
        "normalization",
        "spec.yaml:16:15: model.unnorm_key: a discrete env action's tokens decode to its "
        "choices exactly; a checkpoint's statistics would move them between choices. Drop "
        "unnorm_key",
    ]


def test_cameras_images_and_state_are_checked() -> None:
    data = _spec(
        cameras=["front", "rear"],
        image_size=[224, 320],
        image_mean=[0.5, 0.5],
        use_state=True,
        state_normalization={"q01": [0.0], "q99": [1.0]},
    )
    assert spec_errors(data) == [
        "spec.yaml:13:5: model.cameras[1]: no env camera 'rear' (cameras: front)",
        "spec.yaml:15:3: model.image_size: 224x320 is not square; the vision backbones of "
        "family 'openvla' take square crops",
        "spec.yaml:18:3: model.image_mean: set image_mean and image_std together",
        "spec.yaml:18:3: model.image_mean: has 2 values; give 3 per RGB image",
        "spec.yaml:20:14: model.use_state: the env has no state; set env.state_dim",
    ]


def test_the_waypoint_family_bins_over_the_env_ranges_only() -> None:
    data = _spec(family="waypoint")
    data["model"]["action"].update(dim=3, chunk=2)
    data["model"]["action"]["normalization"] = {"q01": [-0.5] * 3, "q99": [0.5] * 3}
    data["env"].update(
        preset="navsim",
        backend_class="scenes:Replay",
        action={"kind": "waypoints", "num_waypoints": 2},
    )
    assert spec_errors(data) == [
        "spec.yaml:12:7: model.action.normalization: family 'waypoint' bins over "
        "env.action.low/high; drop the normalization"
    ]


def test_a_custom_module_in_the_package_is_scaffolded_once(tmp_path) -> None:
    from vlagen.api import generate, write
    from vlagen.load import load_spec

    spec = load_spec(REPO / "specs" / "cartpole_custom.yaml").spec
    write(generate(spec), tmp_path, fresh=True)
    module = tmp_path / "src" / "cartpole_pixels" / "policy_net.py"
    assert "class PixelPolicy(nn.Module)" in module.read_text()
    module.write_text(module.read_text() + "\nMY_EDIT = 1\n")
    write(generate(spec), tmp_path, fresh=False)
    assert module.read_text().endswith("\nMY_EDIT = 1\n")  # yours after the first write


def _qwen(**model: Any) -> dict:
    data = _spec(**{"backbone": "qwen2_5_vl", **model})
    data["targets"] = [{"framework": "areal", "version": "1.0", "algorithm": "grpo"}]
    return data


def test_a_qwen_backbone_defaults_to_its_embedding_rows() -> None:
    from vlagen.load import load_spec_text
    from vlagen.plan import make_plan

    for backbone in ("qwen2_5_vl", "qwen3_vl"):
        data = _qwen(backbone=backbone)
        data["model"]["action"]["bins"] = 256
        spec = load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec
        assert spec.model.vocab_size == 151936
        assert make_plan(spec).model.vocab_end == 151936
    assert load_spec_text(MINIMAL_SPEC).spec.model.vocab_size == 32000  # llava keeps 32000


def test_qwen_action_tokens_must_fit_the_unused_tail() -> None:
    data = _qwen()
    data["model"]["action"]["bins"] = 512
    assert spec_errors(data) == [
        "spec.yaml:11:11: model.action.bins: 512 action tokens do not fit the 271 unused ids "
        "at the end of Qwen2.5-VL's vocabulary (151665 text ids, 151936 rows); use at most "
        "271 bins"
    ]
    data["model"]["backbone"] = "qwen3_vl"
    data["model"]["vocab_size"] = 152064  # rows as Qwen2.5-VL-7B has: 395 unused
    data["model"]["action"]["bins"] = 400
    assert spec_errors(data) == [
        "spec.yaml:11:11: model.action.bins: 400 action tokens do not fit the 395 unused ids "
        "at the end of Qwen3-VL's vocabulary (151669 text ids, 152064 rows); use at most "
        "395 bins"
    ]
    data["model"]["vocab_size"] = 32000
    (line,) = spec_errors(data)
    assert line.startswith(
        "spec.yaml:13:15: model.vocab_size: 32000 rows leave no room for action tokens above "
        "Qwen3-VL's 151669 text ids"
    )


def test_qwen_images_are_whole_merged_patches_and_the_processor_normalizes() -> None:
    data = _qwen(image_size=[224, 200], image_mean=[0.5] * 3, image_std=[0.5] * 3)
    data["model"]["action"]["bins"] = 256
    assert spec_errors(data) == [
        "spec.yaml:15:5: model.image_size[1]: width 200 is not a multiple of 28: Qwen2.5-VL's "
        "vision tower merges 2x2 patches of 14 pixels (nearest: 196 or 224)",
        "spec.yaml:17:3: model.image_mean: Qwen2.5-VL's image processor (the checkpoint's "
        "preprocessor_config.json) normalizes the frames; remove model.image_mean and "
        "model.image_std",
        "spec.yaml:21:3: model.image_std: Qwen2.5-VL's image processor (the checkpoint's "
        "preprocessor_config.json) normalizes the frames; remove model.image_mean and "
        "model.image_std",
    ]
    data = _qwen(backbone="qwen3_vl", image_size=[20, 224])  # 32-pixel squares, not square
    data["model"]["action"]["bins"] = 256
    assert spec_errors(data) == [
        "spec.yaml:14:5: model.image_size[0]: height 20 is not a multiple of 32: Qwen3-VL's "
        "vision tower merges 2x2 patches of 16 pixels (nearest: 32)",
    ]


def test_a_qwen_backbone_needs_a_target_that_lays_out_its_inputs(monkeypatch) -> None:
    """Every built-in target takes Qwen-VL backbones; one that lays out LLaVA only (a
    third-party target, or verl before issue 33) is refused, naming those that take it."""
    import dataclasses

    from vlagen import checks
    from vlagen.targets import all_targets, find_target

    assert all("qwen2_5_vl" in t.backbones for t in all_targets())
    llava_only = dataclasses.replace(find_target("verl", "0.7"), backbones=("llava",))
    monkeypatch.setattr(checks, "find_target", lambda f, v: llava_only)
    data = _spec(backbone="qwen2_5_vl")
    data["model"]["action"]["bins"] = 256
    data["model"]["image_size"] = [224, 224]
    data["targets"] = [{"framework": "verl", "version": "0.7", "algorithm": "grpo"}]
    assert spec_errors(data) == [
        "spec.yaml:12:13: model.backbone: verl 0.7 (targets[0]) lays out inputs for backbone "
        "'llava', not 'qwen2_5_vl'; targets for 'qwen2_5_vl': areal 1.0, rlinf 0.2, rlinf 0.3, "
        "siirl 0.2, verl 0.7"
    ]


def test_the_custom_family_takes_no_backbone() -> None:
    data = _spec(family="custom", class_path="tiny_vla.custom:Net", backbone="qwen3_vl")
    data["targets"] = [{"framework": "areal", "version": "1.0", "algorithm": "grpo"}]
    errors = spec_errors(data)  # AReaL also refuses the custom family
    (line,) = [e for e in errors if "model.backbone:" in e]
    assert line.startswith("spec.yaml:") and "model.backbone: family 'custom' runs your own" in line


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (_qwen(), "tests/test_model_reference_qwen.py"),  # openvla family, autoregressive
        (
            yaml.safe_load((REPO / "specs/highway_qwen_waypoint.yaml").read_text()),
            "tests/test_model_reference_qwen.py",  # waypoints decode token by token too
        ),
        (yaml.safe_load(MINIMAL_SPEC), "tests/test_model_reference.py"),  # Prismatic's own code
    ],
    ids=["qwen_openvla", "qwen_waypoint", "llava_openvla"],
)
def test_the_policy_core_is_tested_against_the_checkpoints_own_code(
    data: dict, expected: str
) -> None:
    """A Qwen policy core against transformers' ``generate``, needing no extra install; a
    Prismatic one against siiRL's copy of OpenVLA's code."""
    from vlagen.plan import make_plan

    plan = make_plan(load_spec_text(yaml.safe_dump(data, sort_keys=False)).spec)
    found = [f.path for f in plan.files if f.path.startswith("tests/test_model_reference")]
    assert found == [expected]
    assert bool(plan.model.test_installs) == expected.endswith("reference.py")


def test_the_qwen_reference_classes_are_transformers_own_for_the_model_type() -> None:
    """What the Qwen reference test imports is what transformers' auto classes pick for a
    checkpoint of the backbone's ``model_type``."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    from vlagen.backbones import BACKBONES

    processors = [decl for decl in BACKBONES.values() if decl.processor]
    assert processors
    for decl in processors:
        (model_type,) = decl.model_types
        assert PROCESSOR_MAPPING_NAMES[model_type] == decl.processor_class
        assert MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES[model_type] == decl.tiny_model


def test_delta_actions_need_a_state_and_actions_as_wide() -> None:
    """Action dims predicted relative to the state (openpi's delta actions) add the state's
    leading dims back: there must be as many in both."""
    data = yaml.safe_load((REPO / "specs" / "libero_pi05.yaml").read_text())
    data["model"]["flow"]["delta_actions"] = 9
    (line,) = spec_errors(data)
    assert line.endswith(
        "model.flow.delta_actions: 9 action dimensions relative to the state need a state "
        "and actions of 9 dimensions at least (env.state_dim 8, model.action.dim 7)"
    ), line
