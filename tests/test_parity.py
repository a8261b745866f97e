"""``python -m <pkg>.parity``: generated for a spec of two or more targets, with one parity
module per target that has one (``templates/targets/<fw>/src/parity.py.jinja``); the
generated package's own ``tests/test_parity.py`` runs it over the frameworks installed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import MINIMAL_SPEC, REPO, run_package_tests
from vlagen.api import generate
from vlagen.load import load_spec_text
from vlagen.plan import PlannedTarget, RunTarget, _parity_targets, make_plan
from vlagen.targets import find_target

HIGHWAY = (REPO / "specs" / "highway_openvla.yaml").read_text()
PACKAGE = "src/highway_openvla"


def _targets_literal(source: str) -> list[tuple]:
    """The ``TARGETS`` tuple of a generated ``parity.py``, as (framework, title, algorithm,
    has_module) tuples."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "TARGETS":
            return [tuple(ast.literal_eval(a) for a in call.args) for call in node.value.elts]
    raise AssertionError("parity.py has no TARGETS")


def test_a_spec_of_two_targets_gets_the_parity_run_each_targets_module_and_the_test() -> None:
    tree = generate(load_spec_text(HIGHWAY, "s.yaml").spec).tree
    for path in (
        f"{PACKAGE}/parity.py",
        f"{PACKAGE}/targets/rlinf/parity.py",
        f"{PACKAGE}/targets/siirl/parity.py",
        "tests/test_parity.py",
    ):
        assert path in tree, path
    assert _targets_literal(tree[f"{PACKAGE}/parity.py"].content) == [
        ("rlinf", "RLinf 0.3", "gae", True),
        ("siirl", "siiRL 0.2", "grpo", True),
    ]
    # each target module has the one signature the package's run calls
    for framework in ("rlinf", "siirl"):
        module = ast.parse(tree[f"{PACKAGE}/targets/{framework}/parity.py"].content)
        functions = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef)}
        args = [a.arg for a in functions["first_decisions"].args.args]
        assert args == ["checkpoint", "seeds", "steps", "backend"], framework
        assigned = [t for a in module.body if isinstance(a, ast.Assign) for t in a.targets]
        names = {t.id for t in assigned if isinstance(t, ast.Name)}
        assert "require" in functions or "require" in names, framework


def test_a_spec_of_one_target_gets_no_parity_run() -> None:
    tree = generate(load_spec_text(MINIMAL_SPEC, "s.yaml").spec).tree
    assert not [p for p in tree if p.endswith("parity.py")]
    assert "src/tiny_vla/targets/rlinf/cpu.py" in tree  # the fidelity tests' stand-ins stay


def test_verl_is_a_parity_target_with_its_module() -> None:
    spec = load_spec_text(HIGHWAY, "s.yaml").spec
    planned = make_plan(spec).targets
    verl = PlannedTarget(find_target("verl", "0.7"), "grpo")
    assert _parity_targets((*planned, verl))[-1] == RunTarget("verl", "verl 0.7", "grpo", True)
    assert _parity_targets(planned[:1]) == ()  # one target: nothing to compare


def test_rlinf_0_2_has_no_parity_module_but_siirl_runs() -> None:
    text = HIGHWAY.replace('version: "0.3", algorithm: gae', 'version: "0.2", algorithm: gae')
    tree = generate(load_spec_text(text, "s.yaml").spec).tree
    assert f"{PACKAGE}/targets/rlinf/parity.py" not in tree
    assert f"{PACKAGE}/targets/rlinf/cpu.py" not in tree  # 0.2 has no CPU harness
    assert [t[3] for t in _targets_literal(tree[f"{PACKAGE}/parity.py"].content)] == [False, True]


@pytest.mark.slow
def test_the_generated_parity_runs_and_its_tests_pass(tmp_path: Path, verl_src: Path) -> None:
    """highway_openvla (RLinf gae, siiRL grpo) with verl grpo as a third target: the
    package's parity test passes, and the command prints the table with verl's row and exits
    0 (the README-commands test runs it on the golden). RLinf's grpo is in the parity runs of
    the goldens that train with it (LIBERO, NAVSIM, the portable highway example)."""
    data = yaml.safe_load(HIGHWAY)
    data["targets"].append({"framework": "verl", "version": "0.7", "algorithm": "grpo"})
    out, spec = tmp_path / "package", tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    subprocess.run(
        [sys.executable, "-m", "vlagen", "new", str(spec), "-o", str(out)],
        check=True,
        capture_output=True,
    )
    run_package_tests(out, real_simulator=False, only=["tests/test_parity.py"])
    done = subprocess.run(
        [sys.executable, "-m", "highway_openvla.parity", "--seeds", "5", "9", "--steps", "1"],
        cwd=out,
        capture_output=True,
        text=True,
        env={
            "PYTHONPATH": str(out / "src"),
            "HOME": str(tmp_path / "home"),
            "TMPDIR": str(tmp_path),
            "SIIRL_LOG_DIRECTORY": str(tmp_path / "siirl_logs"),
            "HF_HUB_OFFLINE": "1",
            "VERL_SRC": str(verl_src),
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    print(done.stdout)
    assert "FAIL" not in done.stdout and "PASS  log-probs" in done.stdout
    assert "RLinf 0.3 gae:" in done.stdout and "siiRL 0.2 grpo:" in done.stdout
    assert "PASS  log-probs          siirl vs verl" in done.stdout
    assert "verl 0.7 grpo:" in done.stdout
    assert "verl/trainer/ppo/core_algos.py" in done.stdout


QWEN = (REPO / "specs" / "highway_qwen_waypoint.yaml").read_text()
QWEN_TARGETS = """targets:
  - {framework: areal, version: "1.0", algorithm: grpo}
  - {framework: rlinf, version: "0.3", algorithm: grpo}
  - {framework: siirl, version: "0.2", algorithm: grpo}
"""


def _qwen_text() -> str:
    head, rest = QWEN.split("targets:\n", 1)
    return head + QWEN_TARGETS + rest.split("\n\n", 1)[1]


def _relative_imports(source: str) -> list[tuple[str, str]]:
    """``(module, name)`` of every ``from .module import name`` in ``source``, at any depth."""
    return [
        (node.module or "", alias.name)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names
    ]


def test_each_parity_module_imports_only_what_its_targets_modules_define() -> None:
    """On a Qwen-VL spec siiRL's harness has no TinyOpenVLA (the package's SiirlVLA is the
    model): every name a target's parity module imports from its own folder is defined there,
    and each (AReaL's too) has the signature the package's run calls."""
    tree = generate(load_spec_text(_qwen_text(), "q.yaml").spec).tree
    package = "src/highway_qwen"
    for framework in ("areal", "rlinf", "siirl"):
        folder = f"{package}/targets/{framework}"
        module = ast.parse(tree[f"{folder}/parity.py"].content)
        functions = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef)}
        args = [a.arg for a in functions["first_decisions"].args.args]
        assert args == ["checkpoint", "seeds", "steps", "backend"], framework
        for module, name in _relative_imports(tree[f"{folder}/parity.py"].content):
            if not module and f"{folder}/{name}.py" in tree:
                continue  # a module of the folder
            path = f"{folder}/{module}.py" if module else f"{folder}/__init__.py"
            defined = {
                getattr(n, "name", None)
                or getattr(getattr(n, "targets", [None])[0], "id", None)
                or getattr(getattr(n, "target", None), "id", None)  # annotated
                for n in ast.parse(tree[path].content).body
            }
            assert name in defined, f"{framework}/parity.py imports {name} from .{module}"
