"""The committed outputs of the example specs are exactly what vlagen generates now, are
ruff-clean, and pass their own tests in a fresh venv. Refresh them with
``python tests/refresh_goldens.py``."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    GOLDENS,
    SPECS,
    compiled_once,
    fresh_venv,
    install,
    run_package_tests,
    uninstall,
)
from refresh_goldens import render_example
from vlagen.families import FAMILIES
from vlagen.load import load_spec
from vlagen.plan import make_plan

#: Frameworks installed from a checkout (``FrameworkSource``) → the fixture with their source.
SOURCE_FIXTURES = {"verl": "verl_src"}

IGNORED = {"__pycache__", ".pytest_cache", ".ruff_cache"}


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not IGNORED & set(p.relative_to(root).parts)
    }


def test_every_spec_has_a_golden_and_every_golden_a_spec() -> None:
    goldens = {p.name for p in GOLDENS.iterdir() if p.is_dir()}
    assert goldens == {s.stem for s in SPECS}
    assert PROCESS_CONTROL_GOLDEN in goldens
    assert len(SPECS) >= 3


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_golden_is_byte_identical(spec: Path, tmp_path: Path) -> None:
    fresh = tmp_path / spec.stem
    render_example(spec, fresh)
    expected, actual = _tree(GOLDENS / spec.stem), _tree(fresh)
    problems = []
    for path in sorted(expected.keys() | actual.keys()):
        if expected.get(path) == actual.get(path):
            continue
        old = expected.get(path, b"").decode(errors="replace").splitlines(keepends=True)
        new = actual.get(path, b"").decode(errors="replace").splitlines(keepends=True)
        problems.append("".join(difflib.unified_diff(old, new, f"golden/{path}", f"now/{path}")))
    assert not problems, (
        "generated_examples/ is stale; run `python tests/refresh_goldens.py` and review:\n"
        + "\n".join(problems)
    )


def test_goldens_are_ruff_clean() -> None:
    for args in (["check"], ["format", "--check"]):
        for golden in sorted(p for p in GOLDENS.iterdir() if p.is_dir()):
            # Run inside each example so its own pyproject.toml is the ruff config.
            done = subprocess.run(
                [sys.executable, "-m", "ruff", *args, "--no-cache", "."],
                cwd=golden,
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, f"ruff {args} in {golden.name}:\n{done.stdout}"


#: Backend → what a golden's fresh venv adds so that its tests run on the real simulator
#: (``EnvPlan.probe``): LIBERO's distribution that bundles its assets (no download at first
#: use), and gym, which RLinf's ``LiberoEnv`` imports (the observation comparison). torch is
#: named again so that the simulator's dependencies keep the installed build.
#: Minutes a golden's fresh-venv test takes where it is not 2 (the scheduling's weights; the
#: others, pusht's two training steps of verl and the AReaL example's rollout loop and FSDP
#: update among them, take 1.5-2 on 2 cores): cartpole's package has no fidelity harness to
#: install beyond RLinf's; LIBERO's installs the simulator and runs its tests on it.
MINUTES = {"cartpole_custom": 1, "libero_openvla_oft": 5, "libero_pi05": 4}
#: Simulator (env preset) → the one golden of it whose fresh-venv run includes the tests of
#: the real simulator alone (marker ``simulator``: its steps, resets and checks, no policy):
#: their code is the env's, the same in every golden of the simulator but for the spec's env
#: block, so the others leave them out (LIBERO's take a minute a golden; highway's goldens
#: each run theirs, in seconds).
SIMULATOR_GOLDENS = {"libero": "libero_openvla_oft"}
#: The one golden whose fresh-venv run includes the process-control tests of the env pool
#: and the env server (signals, deadlines, shutdown, hostile clients) and RLinf's launch
#: export in a fresh interpreter (its own Python importing the package's registration, as
#: each RLinf worker does; 7 to 18 s a golden): their code is the same in every package, so
#: the other goldens leave them out, as the spec variants do. What that fresh import loads
#: (the package's family and backends) each golden's own run imports too, in a fresh venv.
PROCESS_CONTROL_GOLDEN = "highway_openvla"


@pytest.mark.parametrize(
    "spec",
    [pytest.param(s, marks=pytest.mark.slow(minutes=MINUTES.get(s.stem, 2))) for s in SPECS],
    ids=lambda p: p.stem,
)
def test_golden_passes_its_own_tests_in_a_fresh_venv(
    spec: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """What the golden's README tells a user, on a clean venv: torch (the CPU build this
    suite runs on), the ``test`` extra, the frameworks ``--no-deps``, then ``pytest``. Catches
    an import the package's extras do not declare. Where the ``test`` extra installs the
    simulator (gymnasium backends), or the simulator has real-simulator tests and the venv gets
    the ``sim`` extra too (LIBERO), nothing but the GPU tests may skip."""
    plan = make_plan(load_spec(spec).spec)
    package = shutil.copytree(GOLDENS / spec.stem, tmp_path / spec.stem)
    python = fresh_venv("golden")
    install(python, [f"torch=={version('torch')}", "-e", ".[test]"], cwd=package)
    if plan.framework_test_installs:
        install(python, ["--no-deps", *plan.framework_test_installs])
    for source in plan.framework_sources:  # the README's checkout: here the archive, extracted
        checkout = request.getfixturevalue(SOURCE_FIXTURES[source.folder])
        install(python, ["--no-deps", "-e", str(checkout)])
    if FAMILIES[plan.spec.model.family].flow is not None:  # compared with verl's pi0_torch
        request.getfixturevalue("verl_src")  # which no wheel ships: VERL_SRC names it
    real = plan.env.probe is not None
    if real:  # the README's `sim` extra: the simulator, which the tests then run on
        install(python, [f"torch=={version('torch')}", "-e", ".[sim]"], cwd=package)
    before = _files(package)
    # the learning run (python -m <pkg>.learn) runs from the README, in this suite's
    # preloaded Python (tests/test_readme_commands.py): a fresh venv doubles its cost
    markers = ["not learning"]
    if spec.stem != PROCESS_CONTROL_GOLDEN:
        markers += ["not process_control", "not fresh_interpreter"]
    if SIMULATOR_GOLDENS.get(plan.spec.env.preset, spec.stem) != spec.stem:
        markers.append("not simulator")
    run_package_tests(
        package,
        real_simulator=plan.env.preset.backend == "gymnasium" or real,
        python=python,
        markers=" and ".join(markers),
    )
    assert _files(package) == before, "the package's tests wrote into its folder"
    if spec.stem == PROCESS_CONTROL_GOLDEN:
        _without_the_simulator_against_a_server(plan, package, python, tmp_path)


def _files(folder: Path) -> list[Path]:
    """The files under ``folder`` but bytecode caches: what a user's checkout holds."""
    return sorted(p for p in folder.rglob("*") if "__pycache__" not in p.parts)


#: RLinf's fidelity tests that share its launched round (env worker, rollout, actor): the
#: round steps the env through the server.
ROUND_TESTS = "env_worker_drives or rollout_worker_predicts or rlinfs_gae or ppo_ratio_one"


def _without_the_simulator_against_a_server(
    plan: Any, package: Path, python: str, tmp_path: Path
) -> None:
    """The env server's separation (issue 34): a venv with the package's env runtime and the
    simulator, no torch, serves; the golden's own venv, its simulator uninstalled, runs the
    README's smoke command and RLinf's launched round against it."""
    server = fresh_venv("server")
    install(server, ["--no-deps", "."], cwd=package)
    install(server, plan.env.serve_requirements)
    assert not _imports(server, "torch"), "the server's venv has torch"
    uninstall(python, [*plan.env.sim_requirements])
    assert not _imports(python, "highway_env"), "the trainer's venv still has the simulator"
    address = f"unix://{tmp_path / 'env.sock'}"
    proc = subprocess.Popen(
        [server, "-m", f"{plan.package}.env.serve", "--bind", address],
        cwd=tmp_path,
        env=compiled_once(dict(os.environ)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving "), line + proc.communicate(timeout=60)[1]
        env = compiled_once({**os.environ, plan.env.remote_var: address, "OMP_NUM_THREADS": "1"})
        smoke = [python, "-m", f"{plan.package}.smoke", "--episodes", "1", "--num-envs", "2"]
        done = subprocess.run(
            [*smoke, "--max-episode-steps", "2"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0 and "steps/s" in done.stdout, done.stdout + done.stderr
        done = subprocess.run(
            [
                python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "tests/test_rlinf_fidelity.py",
                "-k",
                ROUND_TESTS,
            ],
            cwd=package,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0 and "4 passed" in done.stdout, done.stdout + done.stderr
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err


def _imports(python: str, module: str) -> bool:
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0
