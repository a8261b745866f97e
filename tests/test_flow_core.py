"""The flow families (π0, π0.5) beyond their example's golden. The π0.5 LIBERO golden
(``generated_examples/libero_pi05``) runs its flow core's tests (against verl 0.7.1's network
and log-prob, RLinf's sampler and re-scoring, transformers' π0) and RLinf's own loop and
update over it in a fresh venv (tests/test_goldens.py), and its learning run from its README
(tests/test_readme_commands.py). Here: the example as π0 passes the same and learns through
RLinf's loop; π0.5 with PPO trains its value head through RLinf's GAE and learns; and the
core's reference tests fail under a one-off mutation of the sampler: a timestep shifted, the
SDE's sigma taken at the wrong step, the log-prob of the wrong step.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import GOLDENS, SPECS, run_package_tests
from vlagen.api import generate, write
from vlagen.load import load_spec_text

PI05 = next(s for s in SPECS if s.stem == "libero_pi05")
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


def pi05_example(**changes: object) -> dict:
    """The π0.5 LIBERO example's spec as data, ``changes`` made to its ``model``."""
    data = yaml.safe_load(PI05.read_text())
    data["model"].update(changes)
    return data


RLINF_TESTS = ["tests/test_rlinf.py", "tests/test_rlinf_fidelity.py", "tests/test_learning.py"]


@pytest.mark.slow
def test_pi05_with_ppo_trains_its_value_head_through_rlinfs_loop_and_learns(
    tmp_path: Path,
) -> None:
    """The golden is GRPO; RLinf's other π0.5 LIBERO example is PPO with a value head on the
    VLM prefix (``libero_spatial_ppo_openpi_pi05.yaml``): RLinf's env worker, rollout, GAE
    and actor over the package, and its learning run through RLinf's loop."""
    data = pi05_example(value_head=True)
    data["targets"] = [{"framework": "rlinf", "version": "0.3", "algorithm": "gae"}]
    data["training"].update(groups=512, group_size=1)
    package = tmp_path / "pi05_gae"
    write(generate(load_spec_text(yaml.safe_dump(data), "gae.yaml").spec), package, fresh=True)
    readme = (package / "README.md").read_text()
    assert "libero_spatial_ppo_openpi_pi05.yaml" in readme
    output = run_package_tests(
        package,
        real_simulator=False,
        only=RLINF_TESTS,
        markers="not process_control and not fresh_interpreter",
    )
    assert "skipped" not in output, output


@pytest.mark.slow
def test_the_example_as_pi0_passes_its_tests_through_rlinf_and_learns(
    tmp_path: Path, verl_src: Path
) -> None:
    """π0 (its state token, the time MLP, a 50-step horizon, 4 steps, delta actions on
    LIBERO): its core against verl's, RLinf's and transformers' code, RLinf's own loop and
    update over it, and its learning run through RLinf's loop."""
    data = pi05_example(family="pi0", flow={"noise_method": "flow_sde", "noise_level": 0.5})
    data["project"]["name"] = "libero-pi0"
    package = tmp_path / "pi0"
    write(generate(load_spec_text(yaml.safe_dump(data), "pi0.yaml").spec), package, fresh=True)
    for args in (["check"], ["format", "--check"]):  # its π0-only code, which no golden has
        ruff = [sys.executable, "-m", "ruff", *args, "--no-cache", "."]
        done = subprocess.run(ruff, cwd=package, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout
    output = run_package_tests(
        package,
        real_simulator=False,
        only=[*TESTS, *RLINF_TESTS],
        markers="not process_control and not fresh_interpreter",
    )
    assert "skipped" not in output, output


@pytest.mark.slow
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_reference_tests_fail_under_each_sampler_mutation(
    mutation: str, tmp_path: Path, verl_src: Path
) -> None:
    package = shutil.copytree(GOLDENS / "libero_pi05", tmp_path / "libero_pi05")
    steps = next(package.glob("src/*/model/flow_steps.py"))
    old, new = MUTATIONS[mutation]
    text = steps.read_text()
    assert text.count(old) == 1, f"the mutation's line is gone from {steps.name}"
    steps.write_text(text.replace(old, new))
    with pytest.raises(AssertionError, match="failed"):
        run_package_tests(package, real_simulator=False, only=["tests/test_flow_reference.py"])
