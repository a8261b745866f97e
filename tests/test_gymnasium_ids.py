"""A gymnasium id gymnasium does not register is a located error at ``vlagen validate`` time
where gymnasium is installed, and silence where it is not; a generated package whose env
cannot be made (an unknown id, a missing extra) says so in one line, naming the id and the
fix, from its smoke run and its env check (issue 30, item 7)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import MINIMAL_SPEC, spec_errors
from vlagen.api import generate, write
from vlagen.load import load_spec_text

pytest.importorskip("gymnasium")

BACKEND = "src/tiny_vla/env/backends/gymnasium_env.py"


def _spec(env_id: str, **gymnasium: object) -> dict:
    data = yaml.safe_load(MINIMAL_SPEC)
    data["env"].update(
        preset="gymnasium",
        gymnasium={"id": env_id, **gymnasium},
        cameras=[{"name": "view", "height": 40, "width": 60}],
        action={"kind": "discrete", "choices": 2},
        workers=0,
    )
    data["model"]["action"]["dim"] = 1
    return data


@pytest.mark.parametrize(
    ("env_id", "message"),
    [
        ("CartPol-v1", "gymnasium has no env 'CartPol-v1'; did you mean 'CartPole-v1'?"),
        ("CartPole-v9", "gymnasium has no env 'CartPole-v9'; did you mean 'CartPole-v1'?"),
        (
            "gymnasium.envs.classic_control:CartPol-v1",
            "did you mean 'gymnasium.envs.classic_control:CartPole-v1'?",
        ),
        (
            "Nowhere/Thing-v0",
            "gymnasium has no env 'Nowhere/Thing-v0'; Namespace Nowhere not found. Have you "
            "installed the proper package for Nowhere? An env of another package is registered "
            "when that package is imported: write the id as 'module:Env-v0', or name the "
            "module in env.gymnasium.import_module",
        ),
    ],
)
def test_an_unknown_id_is_a_located_error(env_id: str, message: str) -> None:
    (line,) = spec_errors(_spec(env_id))
    assert line.startswith("spec.yaml:24:9: env.gymnasium.id: "), line
    assert line.endswith(message), line


def test_an_id_whose_module_does_not_import_here_is_not_checked() -> None:
    """The simulator may be installed only where the package runs."""
    load_spec_text(yaml.safe_dump(_spec("no_such_simulator:Thing-v0")))
    load_spec_text(yaml.safe_dump(_spec("Thing-v0", import_module="no_such_simulator")))


def _python(*args: str, path: list[Path], cwd: Path | None = None) -> subprocess.CompletedProcess:
    pythonpath = os.pathsep.join([*map(str, path), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": pythonpath, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _blocking(tmp_path: Path, module: str) -> Path:
    """A folder that, first on the path, makes ``module`` fail to import."""
    folder = tmp_path / f"no-{module}"
    folder.mkdir()
    (folder / f"{module}.py").write_text(f"raise ImportError('{module} is blocked here')\n")
    return folder


def test_without_gymnasium_vlagen_says_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(_spec("CartPol-v1"), sort_keys=False))
    done = _python("-m", "vlagen", "validate", str(spec), path=[_blocking(tmp_path, "gymnasium")])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{spec}: valid")


MODULES_AFTER = """
import sys
from vlagen.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("gymnasium" in sys.modules)
"""


def test_validate_asks_gymnasium_and_check_and_diff_do_not(tmp_path: Path) -> None:
    spec, out = tmp_path / "spec.yaml", tmp_path / "pkg"
    spec.write_text(yaml.safe_dump(_spec("CartPole-v1"), sort_keys=False))
    write(generate(load_spec_text(spec.read_text()).spec), out, fresh=True)
    spec.write_text(spec.read_text().replace("task: drive", "task: balance"))  # stale
    imported = {
        command: _python("-c", MODULES_AFTER, *args, path=[]).stdout.split()[-1]
        for command, args in {
            "validate": ["validate", str(spec)],
            "check": ["check", str(spec), "-o", str(out)],
            "diff": ["diff", str(spec), "-o", str(out)],
        }.items()
    }
    assert imported == {"validate": "True", "check": "False", "diff": "False"}


def _package(tmp_path: Path, env_id: str, real_id: str | None = None) -> Path:
    """A package for ``env_id``; ``real_id``, written into its backend, stands for an id
    that a machine without gymnasium let through."""
    out = tmp_path / "pkg"
    write(generate(load_spec_text(yaml.safe_dump(_spec(env_id))).spec), out, fresh=True)
    if real_id is not None:
        backend = out / BACKEND
        text = backend.read_text()
        assert f"ID = {env_id!r}" in text.replace('"', "'")
        backend.write_text(text.replace(f'ID = "{env_id}"', f'ID = "{real_id}"'))
    return out


def _one_line(done: subprocess.CompletedProcess, prog: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith(prog)]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_an_unknown_id_stops_smoke_and_check_in_one_line(tmp_path: Path) -> None:
    package = _package(tmp_path, "CartPole-v1", real_id="CartPol-v1")
    src = package / "src"
    for module in ("tiny_vla.smoke", "tiny_vla.env.check"):
        done = _python("-m", module, path=[src], cwd=package)
        line = _one_line(done, f"python -m {module}: error: ")
        assert "the gymnasium backend cannot make 'CartPol-v1': " in line
        assert "Did you mean: `CartPole`?" in line
        assert "fix env.gymnasium.id in the spec and run vlagen regen" in line


@pytest.mark.parametrize(
    ("env_id", "blocked", "extra"),
    [("CartPole-v1", "pygame", "classic-control"), ("LunarLander-v3", "Box2D", "box2d")],
)
def test_a_missing_extra_stops_the_check_in_one_line(
    tmp_path: Path, env_id: str, blocked: str, extra: str
) -> None:
    """Box2D is imported with LunarLander's module, pygame on CartPole's first render."""
    package = _package(tmp_path, env_id)
    done = _python("-m", "tiny_vla.env.check", path=[_blocking(tmp_path, blocked), package / "src"])
    line = _one_line(done, "python -m tiny_vla.env.check: error: ")
    assert f"the gymnasium backend cannot make {env_id!r}: " in line
    assert line.endswith(f"install it with: pip install 'gymnasium[{extra}]>=1.0'"), line
