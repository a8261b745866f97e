"""The flow families' policy core (π0, π0.5) as vlagen generates it, before any target
takes them: each family's core passes its own tests, which compare it with the frameworks'
code (verl 0.7.1's network and log-prob, RLinf's sampler and re-scoring, transformers'
π0), and those tests fail under a one-off mutation of the sampler: a timestep shifted, the
SDE's sigma taken at the wrong step, the log-prob of the wrong step.

No target trains a flow family yet (``vlagen targets fit`` says so), and ``vlagen new``
refuses a spec whose targets all refuse: the core is rendered here from the plan, without
the targets' files.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from conftest import SPECS, run_package_tests
from vlagen.formatting import format_tree
from vlagen.plan import make_plan
from vlagen.render import render_plan
from vlagen.spec import Spec

LIBERO = next(s for s in SPECS if s.stem == "libero_openvla_oft")
TESTS = ["tests/test_flow.py", "tests/test_flow_reference.py"]

#: A sampler mutation → what it breaks.
MUTATIONS = {
    "timestep_shifted": (
        "t, delta = grid[:-1], grid[:-1] - grid[1:]",
        "t, delta = grid[:-1] - 0.5 / steps, grid[:-1] - grid[1:]",
    ),
    "sigma_at_the_wrong_step": (
        "sigma = sigmas(level, steps, device)",
        "sigma = sigmas(level, steps, device).roll(1)",
    ),
    "log_prob_of_the_wrong_step": (
        "before, after = points[rows, k], points[rows, k + 1]",
        "before, after = points[rows, k], points[rows, (k + 2).clamp(max=steps)]",
    ),
}


def flow_spec(family: str) -> Spec:
    """The LIBERO example as a flow family on RLinf: its chunk of 5 (RLinf's π0.5 LIBERO
    configs' ``num_action_chunks``)."""
    data = yaml.safe_load(LIBERO.read_text())
    data["project"]["name"] = f"libero-{family}"
    model = data["model"]
    for key in ("prompt_template", "unnorm_key", "trust_remote_code", "lora"):
        model.pop(key, None)
    model.update(family=family, checkpoint="RLinf/RLinf-Pi05-LIBERO-SFT")
    model["action"] = {"dim": 7, "chunk": 5}
    data["env"]["max_episode_steps"] = 515
    data["targets"] = [{"framework": "rlinf", "version": "0.3", "algorithm": "grpo"}]
    return Spec.model_validate(data)


def render_core(spec: Spec, out: Path) -> Path:
    """The package's policy core, env core and the core's tests, as ``vlagen new`` writes
    them, into ``out``."""
    plan = make_plan(spec)
    src = f"src/{plan.package}/"
    cores = (src + "model/", src + "env/", "tests/")
    single = {f"{src}{name}" for name in ("__init__.py", "spec.py", "spec.json", "progress.py")}
    single |= {src + "smoke.py", "pyproject.toml"}
    kept = tuple(f for f in plan.files if f.path.startswith(cores) or f.path in single)
    tree = format_tree(render_plan(dataclasses.replace(plan, files=kept)))
    for path, file in tree.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(file.content)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("family", ["pi0", "pi05"])
def test_the_flow_core_passes_its_tests_against_the_frameworks_code(
    family: str, tmp_path: Path, verl_src: Path
) -> None:
    package = render_core(flow_spec(family), tmp_path / family)
    output = run_package_tests(package, real_simulator=False, only=TESTS)
    assert "skipped" not in output, output


@pytest.mark.slow
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_reference_tests_fail_under_each_sampler_mutation(
    mutation: str, tmp_path: Path, verl_src: Path
) -> None:
    package = render_core(flow_spec("pi05"), tmp_path / "pi05")
    steps = next(package.glob("src/*/model/flow_steps.py"))
    old, new = MUTATIONS[mutation]
    text = steps.read_text()
    assert text.count(old) == 1, f"the mutation's line is gone from {steps.name}"
    steps.write_text(text.replace(old, new))
    with pytest.raises(AssertionError, match="failed"):
        run_package_tests(package, real_simulator=False, only=["tests/test_flow_reference.py"])
