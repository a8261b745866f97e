"""A spec whose learning rate bfloat16 rounds away, on a target that steps bfloat16 weights,
is flagged with numbers and a fix, where a user meets it: `vlagen new`, `targets fit`, the
README."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from conftest import REPO
from vlagen.cli import main
from vlagen.load import load_spec_text
from vlagen.plan import Plan, make_plan

LIBERO = (REPO / "specs" / "libero_openvla_oft.yaml").read_text()
RLINF = '  - {framework: rlinf, version: "0.3", algorithm: grpo}'


def _plan(text: str) -> Plan:
    return make_plan(load_spec_text(text, "s.yaml", probe=False).spec)


def _libero(rate: str, rlinf: str = RLINF) -> str:
    text = LIBERO.replace("learning_rate: 1.0e-4", f"learning_rate: {rate}")
    return text.replace(RLINF, rlinf)


def test_the_reviews_case_is_flagged_with_numbers_and_a_fix() -> None:
    notes = _plan(_libero("5.0e-6")).update_notes
    assert set(notes) == {"rlinf"}  # siiRL keeps float32 weights for its optimizer
    note = notes["rlinf"]
    assert note.warns and round(note.share, 2) == 0.12
    assert "actor.model.precision" in note.text and "12% of the LoRA A weights" in note.text
    assert "its settled ones (about normal, 0.23 of the rate wide" in note.text
    assert "training.learning_rate 0.00013 or more" in note.text
    assert "actor.model.precision: fp32" in note.text


def test_the_examples_rate_and_float32_weights_are_not_flagged() -> None:
    note = _plan(LIBERO).update_notes["rlinf"]
    assert not note.warns  # 1e-4's first steps move every A weight, its settled ones 42%
    assert round(note.share, 2) == 1.0 and round(note.settled, 2) == 0.42
    fp32 = RLINF.replace("grpo}", "grpo, config: {actor.model.precision: fp32}}")
    assert _plan(_libero("5.0e-6", fp32)).update_notes == {}


def test_verl_keeps_float32_weights_unless_its_config_block_says_otherwise() -> None:
    verl = '  - {framework: verl, version: "0.7", algorithm: grpo}'
    text = _libero("5.0e-6", verl)
    assert _plan(text).update_notes == {}
    bf16 = verl.replace(
        "grpo}", "grpo, config: {actor_rollout_ref.actor.fsdp_config.model_dtype: bfloat16}}"
    )
    note = _plan(_libero("5.0e-6", bf16)).update_notes["verl"]
    assert note.warns and "model_dtype: float32" in note.text


def test_new_warns_and_fit_and_the_readme_say_it(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(_libero("5.0e-6"))
    done = CliRunner().invoke(main, ["new", str(spec), "-o", str(tmp_path / "pkg")])
    assert done.exit_code == 0, done.output
    assert "vlagen: warning: RLinf 0.3 holds the trainable weights in bfloat16" in done.stderr
    readme = (tmp_path / "pkg" / "README.md").read_text()
    assert "**Most updates rounded away.** RLinf 0.3 holds" in readme
    fit = CliRunner().invoke(main, ["targets", "fit", str(spec)])
    assert "  warning: RLinf 0.3 holds the trainable weights in bfloat16" in fit.stdout


def test_float16_weights_are_checked_too() -> None:
    """RLinf steps float16 weights where the spec's dtype is float16 (``precision: fp16``):
    float16's 11 bits keep more of each step than bfloat16's 8, and the note says which."""
    text = _libero("1.0e-6").replace("dtype: bfloat16", "dtype: float16")
    note = _plan(text).update_notes["rlinf"]
    assert note.dtype == "float16" and "weights in float16" in note.text
    assert note.share > _plan(_libero("1.0e-6")).update_notes["rlinf"].share


def test_a_flow_family_is_told_its_float32_parts_keep_their_steps() -> None:
    """π0.5's expert is bfloat16 but its norms and heads are float32 (openpi's layout), and
    RLinf's own π0.5 examples train it at 5e-6: the fix leads with float32 weights, not a
    rate 50 times theirs."""
    note = _plan((REPO / "specs" / "libero_pi05.yaml").read_text()).update_notes["rlinf"]
    assert note.warns and note.text.startswith("RLinf 0.3 holds the expert's trainable weights")
    fix = note.text.split("Fix: ", 1)[1]
    assert fix.startswith("float32 weights for the optimizer: actor.model.precision: fp32")
    assert "train this layout at 5e-6" in fix and "training.learning_rate" not in fix
