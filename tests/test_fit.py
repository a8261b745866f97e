"""`vlagen targets fit`: which targets a spec can take, each alone, and why not the others."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from click.testing import CliRunner

from vlagen.cli import main
from vlagen.fit import fits, with_targets
from vlagen.load import load_spec_text
from vlagen.targets import require_target

SPECS = Path(__file__).resolve().parents[1] / "specs"

#: What each example spec fits, each target alone: the matrix issue 33 measured on its own
#: procedure (9 of the 24 framework cells; rlinf 0.2 beside 0.3). Change it as targets learn.
FITS = {
    "cartpole_custom": {"rlinf 0.2", "rlinf 0.3"},
    "highway_openvla": {"rlinf 0.2", "rlinf 0.3", "siirl 0.2"},
    "highway_qwen_waypoint": {"areal 1.0"},
    "libero_openvla_oft": {"rlinf 0.2", "rlinf 0.3", "siirl 0.2"},
    "navsim_waypoint": {"rlinf 0.2", "rlinf 0.3", "siirl 0.2"},
    "pusht_openvla_oft": {"verl 0.7"},
}


def _fits(name: str):
    path = SPECS / f"{name}.yaml"
    return fits(path.read_text(encoding="utf-8"), str(path))


def test_each_example_spec_fits_the_targets_it_fits() -> None:
    for name, expected in FITS.items():
        found = _fits(name)
        assert {f"{f.target.framework} {f.target.version}" for f in found if not f.problems} == (
            expected
        ), name
        assert all(
            f.problems for f in found if f"{f.target.framework} {f.target.version}" not in expected
        )


def test_a_refusal_is_located_on_the_users_line_and_says_why() -> None:
    text = (SPECS / "highway_openvla.yaml").read_text(encoding="utf-8")
    verl = next(f for f in _fits("highway_openvla") if f.target.framework == "verl")
    issue = next(i for i in verl.problems if i.dotted == "training.train_batch_size")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "train_batch_size:" in row)
    assert issue.line == line
    assert "must equal" in issue.message and "rob_ray_trainer.py" in issue.message


def test_the_framework_keeps_its_own_algorithm() -> None:
    tried = {f.target.framework: f.algorithm for f in _fits("highway_openvla")}
    assert tried["rlinf"] == "gae" and tried["siirl"] == "grpo"  # as the spec gives each
    assert tried["verl"] == "grpo"  # gae is not verl's: the fallback
    assert {f.algorithm for f in _fits("libero_openvla_oft") if f.target.framework == "siirl"} == {
        "srpo"
    }


def test_only_the_targets_block_is_replaced() -> None:
    target = require_target("rlinf", "0.3")
    text = "a: 1\ntargets:\n- {framework: verl}\n  # note\n\nb:\n  c: 2\n"
    assert with_targets(text, 2, target, "grpo") == (
        'a: 1\ntargets: [{"framework": "rlinf", "version": "0.3", "algorithm": "grpo"}]\n'
        "\n\n\nb:\n  c: 2\n"
    )
    assert with_targets("a: 1", None, target, "gae").endswith('"algorithm": "gae"}]\n')
    assert with_targets("a: 1", None, target, "gae").startswith("a: 1\ntargets:")


def test_each_trial_is_a_valid_spec_where_it_fits() -> None:
    path = SPECS / "pusht_openvla_oft.yaml"
    text = path.read_text(encoding="utf-8")
    verl = require_target("verl", "0.7")
    start = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("targets:"))
    spec = load_spec_text(with_targets(text, start, verl, "grpo"), str(path), probe=False).spec
    assert [(t.framework, t.version) for t in spec.targets] == [("verl", "0.7")]


def test_the_command_reports_and_exits_0(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["targets", "fit", str(SPECS / "highway_openvla.yaml")])
    assert result.exit_code == 0, result.output
    assert "verl 0.7 (grpo): refused" in result.output
    assert "rlinf 0.3 (gae): fits" in result.output
    assert result.output.rstrip().endswith("3 of 5 targets fit")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["targets", "fit", str(bad)])
    assert result.exit_code == 2 and "mapping of sections" in result.output
    missing = CliRunner().invoke(main, ["targets", "fit", str(tmp_path / "none.yaml")])
    assert missing.exit_code == 2 and "cannot read the spec" in missing.output


SUGGESTION = re.compile(r"set ([\w.]+) to (\d+)")


def _suggestions() -> list[tuple[str, str, str, int]]:
    """(spec, target, dotted key, value) of every refusal that suggests a number."""
    out = []
    for name in FITS:
        for fit in _fits(name):
            for issue in fit.problems:
                for key, value in SUGGESTION.findall(issue.message):
                    dotted = issue.dotted if issue.dotted.endswith(key) else key
                    out.append(
                        (name, f"{fit.target.framework} {fit.target.version}", dotted, int(value))
                    )
    return out


def test_a_suggested_number_satisfies_the_rule_it_comes_with() -> None:
    suggestions = _suggestions()
    assert {(s, t) for s, t, _, _ in suggestions} >= {
        ("highway_openvla", "verl 0.7"),
        ("pusht_openvla_oft", "rlinf 0.3"),
    }
    for name, label, dotted, value in suggestions:
        data = yaml.safe_load((SPECS / f"{name}.yaml").read_text(encoding="utf-8"))
        section, key = dotted.split(".")
        data[section][key] = value
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        after = next(
            f for f in fits(text, name) if f"{f.target.framework} {f.target.version}" == label
        )
        still = [i.message for i in after.problems if i.dotted == dotted]
        assert not any(
            SUGGESTION.search(m) and dotted.endswith(SUGGESTION.search(m)[1]) for m in still
        ), (
            name,
            label,
            dotted,
            value,
            still,
        )
