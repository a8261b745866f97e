"""A package whose simulator its test extra does not install (LIBERO) runs its tests on the
real simulator where it is installed, else on the synthetic stand-in: ``tests/simulator.py``
picks the backend, ``tests/conftest.py`` shares one instance and a scratch HOME, and
``tests/test_<backend>_real.py`` compares observations with the frameworks' own, shows what
the targets' group tests assume of the simulator, and checks the gripper on every path. The
golden's fresh-venv test installs the simulator and runs them (``test_goldens``)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vlagen.api import generate
from vlagen.envplan import BACKEND_PROBE
from vlagen.load import load_spec

SPECS = Path(__file__).resolve().parent.parent / "specs"
REAL_FILES = {"tests/simulator.py", "tests/test_libero_real.py"}


@pytest.fixture(scope="module")
def libero() -> dict[str, str]:
    tree = generate(load_spec(SPECS / "libero_openvla_oft.yaml").spec).tree
    return {path: file.content.decode() for path, file in tree.items()}


def _tests(text: str) -> list[str]:
    return [
        node.name
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    ]


def test_only_a_probed_simulator_gets_the_real_simulator_files(libero) -> None:
    assert BACKEND_PROBE == {"libero": "libero.libero"}
    assert libero.keys() >= REAL_FILES
    assert 'PROBE = "libero.libero"' in libero["tests/simulator.py"]
    assert 'BACKEND = "libero" if REAL else "synthetic"' in libero["tests/simulator.py"]
    assert "SCRATCH_HOME" in libero["tests/conftest.py"]
    for spec in SPECS.glob("*.yaml"):
        if (loaded := load_spec(spec).spec).env.preset != "libero":
            tree = generate(loaded).tree
            assert not REAL_FILES & tree.keys(), spec.stem
            assert "SCRATCH_HOME" not in tree["tests/conftest.py"].content.decode(), spec.stem


def test_the_gripper_is_checked_on_every_path_and_observations_against_both_frameworks(
    libero,
) -> None:
    tests = _tests(libero["tests/test_libero_real.py"])
    assert tests == [
        "test_observations_are_rlinfs_liberoenvs",
        "test_observations_are_siirls",
        "test_a_resets_arguments_give_one_start_on_any_instance",
        "test_open_opens_the_gripper_through_the_policy_core",
        "test_open_opens_the_gripper_through_smoke",
        "test_open_opens_the_gripper_through_rlinfs_chunk_step",
        "test_open_opens_the_gripper_through_siirls_decode_and_our_adapter",
    ]


def test_the_real_simulator_runs_the_check_the_loop_and_each_targets_path(libero) -> None:
    for path in (
        "tests/test_closed_loop.py",
        "tests/test_rlinf_fidelity.py",
        "tests/test_siirl_fidelity.py",
    ):
        assert "from simulator import BACKEND" in libero[path], path
    assert 'BACKEND = "synthetic"' not in libero["tests/test_rlinf_fidelity.py"]
    assert "test_the_libero_backend_passes_the_checks_one_instance_can_show" in _tests(
        libero["tests/test_env_check.py"]
    )
    assert "test_siirls_rollout_loop_runs_a_decision_on_the_real_simulator" in _tests(
        libero["tests/test_siirl_fidelity.py"]
    )
    backend = libero["tests/test_env_backend.py"]
    assert 'reason="the simulator is installed"' not in backend  # they hide it instead


def test_the_siirl_comparisons_skip_with_the_install_line_where_siirl_is_missing(
    tmp_path: Path,
) -> None:
    """As their RLinf twins do: not a SiirlVersionError (or an ImportError) from the
    harness, which imports siiRL. Run on the golden, siiRL hidden, the simulator stood in by
    an object the test never reaches."""
    golden = Path(__file__).resolve().parent.parent / "generated_examples" / "libero_openvla_oft"
    script = textwrap.dedent(
        """
        import sys, pytest
        sys.modules["siirl"] = None  # not importable, whether installed or not
        import test_libero_real as t
        for test in (
            t.test_observations_are_siirls,
            t.test_open_opens_the_gripper_through_siirls_decode_and_our_adapter,
        ):
            try:
                test(object(), *[None] * (test.__code__.co_argcount - 1))
            except pytest.skip.Exception as exc:
                print("skipped:", exc.msg)
        """
    )
    paths = os.pathsep.join([str(golden / "src"), str(golden / "tests")])
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": paths, "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    skipped = [line for line in done.stdout.splitlines() if line.startswith("skipped:")]
    assert skipped == ["skipped: needs siiRL: pip install --no-deps siirl==0.2.0"] * 2, done.stdout


def _function(text: str, name: str) -> ast.FunctionDef:
    return next(
        node
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and node.name == name
    )


def test_the_real_simulator_tests_that_can_share_its_scene_share_it(libero) -> None:
    """A LIBERO scene build costs about two resets, and each reset rebuilds the model and
    renders every camera through the settle steps: a test whose claim holds on the session's
    shared instance takes it rather than building its own, and env.check's run on a borrowed
    instance leaves out the checks whose only call there is one more reset."""
    backend = _function(
        libero["tests/test_env_backend.py"],
        "test_fast_render_turns_reflections_off_after_every_reset",
    )
    assert "real_backend" in [arg.arg for arg in backend.args.args]
    assert ".make(" not in ast.unparse(backend)
    loop = ast.unparse(
        _function(
            libero["tests/test_closed_loop.py"], "test_policy_drives_the_env_for_a_few_dozen_steps"
        )
    )
    assert "request.getfixturevalue('real_backend')" in loop
    smoke = ast.unparse(ast.parse(libero["tests/test_closed_loop.py"]))
    assert "SMOKE = ['--episodes', '1', '--num-envs', '1'" in smoke
    check = ast.unparse(
        _function(
            libero["tests/test_env_check.py"],
            "test_the_libero_backend_passes_the_checks_one_instance_can_show",
        )
    )
    assert "others = ('implemented', 'isolation', 'close', 'workers')" in check
    siirl = ast.unparse(
        _function(
            libero["tests/test_siirl.py"], "test_rows_of_one_task_and_trial_start_identically"
        )
    )
    assert "SiirlEnv(num_envs=3" in siirl  # two rows of one trial, one of another
    rlinf = ast.unparse(
        _function(
            libero["tests/test_rlinf.py"], "test_a_group_starts_identically_and_groups_differ"
        )
    )
    assert "START_BACKEND" in rlinf and "START_BACKEND" in siirl
    # each of their resets would rebuild a scene: the group tests run on the stand-in, and
    # the real simulator shows what they assume of it
    assert 'BACKEND: str | None = "synthetic"' in libero["tests/starts.py"]
    assert "Recorded(libero.make(1))" in libero["tests/test_libero_real.py"]
    gripper = libero["tests/test_libero_real.py"]
    for path in ("smoke", "rlinfs_chunk_step", "siirls_decode_and_our_adapter"):
        test = ast.unparse(_function(gripper, f"test_open_opens_the_gripper_through_{path}"))
        assert "Replay(opening)" in test and "real_backend" not in test, path
        assert "assert_opens_as_the_policy_core(replay, opening, fingers_from)" in test, path
