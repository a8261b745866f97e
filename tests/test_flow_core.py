"""The flow families (π0, π0.5) beyond their example's golden. The π0.5 LIBERO golden
(``generated_examples/libero_pi05``) runs its flow core's tests (against verl 0.7.1's network
and log-prob, RLinf's sampler and re-scoring, transformers' π0) and RLinf's own loop and
update over it in a fresh venv (tests/test_goldens.py), and its learning run from its README
(tests/test_readme_commands.py). Here: π0's core passes its own tests (generated without the
checks, which refuse π0 on RLinf: its learning run does not learn yet), and the core's
reference tests fail under a one-off mutation of the sampler: a timestep shifted, the SDE's
sigma taken at the wrong step, the log-prob of the wrong step.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from conftest import GOLDENS, SPECS, run_package_tests
from vlagen.api import generate, write
from vlagen.spec import Spec

LIBERO = next(s for s in SPECS if s.stem == "libero_openvla_oft")
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


def generated(family: str, out: Path) -> Path:
    """The package ``vlagen new`` writes for :func:`flow_spec` of ``family`` into ``out``."""
    write(generate(flow_spec(family)), out, fresh=True)
    return out


@pytest.mark.slow
def test_pi05_with_ppo_trains_its_value_head_through_rlinfs_loop_and_learns(
    tmp_path: Path,
) -> None:
    """The golden is GRPO; RLinf's other π0.5 LIBERO example is PPO with a value head on the
    VLM prefix (``libero_spatial_ppo_openpi_pi05.yaml``): RLinf's env worker, rollout, GAE
    and actor over the package, and its learning run through RLinf's loop."""
    data = yaml.safe_load(PI05.read_text())
    data["model"]["value_head"] = True
    data["targets"] = [{"framework": "rlinf", "version": "0.3", "algorithm": "gae"}]
    data["training"].update(groups=512, group_size=1)
    package = tmp_path / "pi05_gae"
    write(generate(Spec.model_validate(data)), package, fresh=True)
    readme = (package / "README.md").read_text()
    assert "libero_spatial_ppo_openpi_pi05.yaml" in readme
    output = run_package_tests(
        package,
        real_simulator=False,
        only=["tests/test_rlinf.py", "tests/test_rlinf_fidelity.py", "tests/test_learning.py"],
        markers="not process_control and not fresh_interpreter",
    )
    assert "skipped" not in output, output


@pytest.mark.slow
def test_the_pi0_core_passes_its_tests_against_the_frameworks_code(
    tmp_path: Path, verl_src: Path
) -> None:
    package = generated("pi0", tmp_path / "pi0")
    output = run_package_tests(package, real_simulator=False, only=TESTS)
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
