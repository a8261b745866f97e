"""The commands each golden's README shows run as a new user runs them: from a shell in an
empty folder, the package's ``src`` on ``PYTHONPATH``, in this venv (each ``python`` a fork
of one that has imported torch and transformers, :mod:`preloaded`: a fresh interpreter
spends most of a command's time importing them). Each either works or
stops with one paragraph saying what to install, exit 2, never with a traceback; none prints
a Python warning.

Commands are read from the README's ```bash blocks (those that run this package's modules
or ``python -c``, after any ``NAME=value`` settings; ``pip install``, ``pytest`` and the
like are what the fresh-venv golden test runs). Smoke runs get ``--episodes 1 --num-envs 2
--max-episode-steps 2`` appended, so they finish in a few decisions, and the learning runs
that are the unmutated side of tests/test_learning.py's mutations get its ``--updates``;
argparse takes the last value, so the command as written still decides the rest. An env
server (``env.serve``) runs in the background until the README's commands are done, on the
test's own folder and a free port in place of the README's (``SIM_HOST`` is this host).
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import GOLDENS, SPECS
from preloaded import Preloaded
from test_learning import GOLDEN as MUTATED
from test_learning import UPDATES as MUTATION_UPDATES
from vlagen.load import load_spec
from vlagen.plan import make_plan

#: Appended to smoke commands: a decision or two per run, with a worker pool where the spec
#: has one (two envs on up to two workers).
QUICK = ["--episodes", "1", "--num-envs", "2", "--max-episode-steps", "2"]
#: A Python warning as ``warnings`` prints it (``path:line: SomeWarning: message``).
WARNING = re.compile(r"^\S+:\d+: \w*Warning: ", re.MULTILINE)
#: A line saying "error" (a library's own print, as SDL's) from a command that succeeded.
ERROR = re.compile(r"^\W*error\b", re.MULTILINE | re.IGNORECASE)
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
SETTING = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")  #: ``NAME=value`` before a command


#: The learning runs the README's ``python -m <pkg>.learn`` runs here, per golden, as
#: ``--target`` options (a golden not named: its learn command is not run here). Each
#: framework's learning run runs on one golden at least, RLinf's on one of each model family
#: (highway_openvla's OpenVLA, LIBERO's OpenVLA-OFT and π0.5, NAVSIM's waypoints, cartpole's
#: custom policy; the portable highway example's is OpenVLA's family on a Qwen backbone, whose
#: learning AReaL's control in tests/test_learning.py shows); the others stay within the
#: suite's budget by running once: siiRL's on highway_openvla (a third of LIBERO's cost),
#: verl's on PushT. AReaL's takes some 4 minutes of CPU per golden
#: (its actor projects every position onto the tiny Qwen checkpoint's 151,936-token
#: vocabulary), more than the suite can give it: ``tests/test_learning.py`` runs its control
#: and mutations on one quarter, and the generated package's own learning test (marker
#: ``learning``) runs it whole.
LEARNING = {
    "cartpole_custom": ("rlinf",),
    "highway_openvla": ("rlinf", "siirl"),
    "libero_openvla_oft": ("rlinf",),
    "libero_pi05": ("rlinf",),
    "navsim_waypoint": ("rlinf",),
    "pusht_openvla_oft": ("verl",),
}

#: The goldens whose learning runs here are the unmutated side of tests/test_learning.py's
#: mutation runs: they run at its updates (the others at the package's default, 24, at which
#: NAVSIM's waypoint policy passes where it does not at 12).
CONTROLS = {golden for golden, _ in MUTATED.values()}


@dataclass(frozen=True)
class Golden:
    name: str
    package: str
    real_simulator: bool  #: its simulator is installed in this venv (gymnasium backends)
    backend_class: str | None
    learns_with_verl: bool = False  #: its learning run here trains through verl (VERL_SRC)

    @property
    def src(self) -> Path:
        return GOLDENS / self.name / "src"

    def commands(self) -> list[list[str]]:
        """The README's commands that run this package's modules, in order, as shell words
        (a redirection such as ``> constraints.txt`` is kept as its two words)."""
        readme = (GOLDENS / self.name / "README.md").read_text()
        lines = [line for block in BASH_BLOCK.findall(readme) for line in block.splitlines()]
        words = [shlex.split(line, comments=True) for line in lines]
        return [w for w in words if _runs(w, self.package)]


def _command(words: list[str]) -> list[str]:
    """``words`` without the ``NAME=value`` settings before the command."""
    return list(itertools.dropwhile(SETTING.match, words))


def _runs(words: list[str], package: str) -> bool:
    command = _command(words)
    return command[:2] == ["python", "-c"] or (
        command[:2] == ["python", "-m"] and command[2].startswith(package)
    )


def _module(words: list[str]) -> str | None:
    command = _command(words)
    return command[2] if command[:2] == ["python", "-m"] else None


def _golden(spec: Path) -> Golden:
    plan = make_plan(load_spec(spec).spec)
    return Golden(
        spec.stem,
        plan.package,
        plan.env.preset.backend == "gymnasium",
        plan.spec.env.backend_class,
        "verl" in LEARNING.get(spec.stem, ()),
    )


GOLDEN_LIST = [_golden(spec) for spec in SPECS]


def _run(
    golden: Golden, words: list[str], cwd: Path, python: Path, pythonpath: Sequence[Path] = ()
) -> tuple[int, str, str]:
    path = os.pathsep.join(str(p) for p in [golden.src, *pythonpath])
    env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    env["OMP_NUM_THREADS"] = "1"  # tiny models; the suite runs a process per core
    env["HOME"] = str(cwd)  # what a command keeps in the user's home stays in the test's folder
    env.pop("XDG_RUNTIME_DIR", None)  # as on a GPU node without a login session
    env["PATH"] = _path(python)
    line = " ".join(w if w in (">", ">>") else shlex.quote(w) for w in words)
    done = subprocess.run(
        ["bash", "-c", line],  # as a user's shell runs it: redirections included
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="session")
def python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder whose ``python`` runs each command in a fork of one that has imported
    torch and transformers (:mod:`preloaded`); the import's own warnings fail the run."""
    folder = tmp_path_factory.mktemp("preloaded")
    env = {**os.environ, "HOME": str(folder), "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)
    server = Preloaded(folder, env)
    try:
        yield server.shim()
    finally:
        err = server.close()
    assert "Traceback" not in err and not WARNING.search(err), f"the preloaded python:\n{err}"


def _path(python: Path) -> str:
    """``PATH`` with ``python`` first, then this venv's scripts."""
    return os.pathsep.join([str(python), str(Path(sys.executable).parent), os.environ["PATH"]])


def _listing(root: Path) -> list[Path]:
    return sorted(root.rglob("*"))


def _is_smoke(golden: Golden, words: list[str]) -> bool:
    return _module(words) == f"{golden.package}.smoke"


def _here(words: list[str], folder: Path, port: int) -> list[str]:
    """The README's env-server addresses made the test's: its folder for ``/tmp/``, ``port``
    for the README's, this host for ``SIM_HOST``."""
    return [
        w.replace("unix:///tmp/", f"unix://{folder}/")
        .replace(":5555", f":{port}")
        .replace("SIM_HOST", "127.0.0.1")
        for w in words
    ]


def _serve(golden: Golden, words: list[str], cwd: Path, python: Path) -> subprocess.Popen:
    """The README's env server, started as its shell would, once it says what it serves."""
    env = {
        **os.environ,
        "PYTHONPATH": str(golden.src),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(cwd),
        "PATH": _path(python),
    }
    proc = subprocess.Popen(
        ["bash", "-c", "exec " + shlex.join(words)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    assert line.startswith("serving "), (
        f"{shlex.join(words)}: {line}{proc.communicate(timeout=60)[1]}"
    )
    return proc


def _stop_servers(servers: list[subprocess.Popen]) -> None:
    for proc in servers:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "Traceback" not in err, (
            f"the env server exited {proc.returncode}:\n{err}"
        )
        assert not WARNING.search(err), f"the env server printed a warning:\n{err}"


def _synthetic(words: list[str]) -> bool:
    return "--backend" in words and words[words.index("--backend") + 1] == "synthetic"


def _assert_stops_with_one_paragraph(
    golden: Golden, words: list[str], done: tuple[int, str, str]
) -> None:
    code, out, err = done
    shown = shlex.join(words)
    assert "Traceback" not in out + err, f"{shown} printed a traceback:\n{err}"
    assert code == 2, f"{shown} exited {code}, not 2:\n{out}{err}"
    message = err.strip()
    assert "\n" not in message, f"{shown}: not one paragraph:\n{err}"
    assert message.startswith(f"python -m {golden.package}.smoke: error: "), message
    fix = "PYTHONPATH" if golden.backend_class else "install it with: "
    assert fix in message, message
    assert message.endswith(f"{shlex.join(_command(words))} --backend synthetic"), message


@pytest.mark.slow
@pytest.mark.parametrize("golden", GOLDEN_LIST, ids=lambda g: g.name)
def test_readme_commands_run_or_say_what_to_install(
    golden: Golden, tmp_path: Path, python: Path, request: pytest.FixtureRequest
) -> None:
    if golden.learns_with_verl:  # its VLA code is in no wheel: VERL_SRC names verl's source
        request.getfixturevalue("verl_src")
    before = _listing(GOLDENS / golden.name)
    commands = golden.commands()
    smokes = [w for w in commands if _is_smoke(golden, w)]
    assert any(_synthetic(w) for w in smokes), "the README shows no synthetic smoke run"
    assert any(not _synthetic(w) for w in smokes), "the README shows no smoke run on the simulator"
    servers: list[subprocess.Popen] = []
    try:
        _run_all(golden, commands, tmp_path, python, servers)
    finally:
        _stop_servers(servers)
    assert _listing(GOLDENS / golden.name) == before, "a command wrote into the golden"


def _run_all(
    golden: Golden, commands: list[list[str]], tmp_path: Path, python: Path, servers: list
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for words in commands:
        words = _here(words, tmp_path, port)
        if _module(words) == f"{golden.package}.env.serve":
            servers.append(_serve(golden, words, tmp_path, python))
            continue
        if _is_smoke(golden, words):
            words = [*words, *QUICK]
        if _module(words) == f"{golden.package}.learn":
            if golden.name not in LEARNING:
                continue
            words = [*words, *(w for t in LEARNING[golden.name] for w in ("--target", t))]
            if golden.name in CONTROLS:  # the unmutated side of the mutation runs
                words += ["--updates", MUTATION_UPDATES]
        done = _run(golden, words, tmp_path, python)
        code, out, err = done
        shown = shlex.join(words)
        if _is_smoke(golden, words) and not _synthetic(words) and not golden.real_simulator:
            _assert_stops_with_one_paragraph(golden, words, done)
            continue
        if code == 2 and not golden.real_simulator:  # a set-up step or check of the simulator
            assert "Traceback" not in out + err and "\n" not in err.strip(), err
            assert ("PYTHONPATH" if golden.backend_class else "install it with: ") in err, err
            continue
        assert code == 0 and "Traceback" not in out + err, f"{shown} exited {code}:\n{out}{err}"
        assert not WARNING.search(err), f"{shown} printed a warning:\n{err}"
        assert not ERROR.search(out + err), f"{shown} succeeded, but printed an error:\n{err}"
        if _is_smoke(golden, words):
            assert "steps/s" in out and "mean return" in out, out
        if _module(words) == f"{golden.package}.parity":  # the frameworks' output held back
            assert out.startswith("parity: ") and not err, f"{shown}:\n{out}{err}"
            assert out.rstrip().endswith("--verbose prints them"), out
        if _module(words) == f"{golden.package}.learn":  # each --target's learning run
            learned = out.count("\n  learned\n")
            assert learned == len(LEARNING[golden.name]) and "DID NOT LEARN" not in out, (
                f"{shown}:\n{out}{err}"
            )
            assert not err, f"{shown}:\n{out}{err}"
        if _module(words) == f"{golden.package}.env.check":  # the real simulator: all pass
            assert out.rstrip().endswith("checks passed") and "FAIL" not in out, out


@pytest.mark.slow(minutes=1)
@pytest.mark.parametrize(
    "golden", [g for g in GOLDEN_LIST if g.backend_class], ids=lambda g: g.name
)
def test_your_simulator_class_on_pythonpath_runs_the_smoke_command(
    golden: Golden, tmp_path: Path, python: Path
) -> None:
    """The README's custom-simulator path: a class at ``env.backend_class`` (here the
    package's synthetic backend under that name), its folder on ``PYTHONPATH``, runs the
    README's smoke command on the real backend, env workers included."""
    module, _, name = golden.backend_class.partition(":")
    folder = tmp_path / "yours"
    source = folder.joinpath(*module.split(".")).with_suffix(".py")
    source.parent.mkdir(parents=True)
    for parent in source.relative_to(folder).parents[:-1]:
        (folder / parent / "__init__.py").touch()
    source.write_text(
        f"from {golden.package}.env.backends.synthetic import SyntheticBackend\n\n\n"
        f"class {name}(SyntheticBackend):\n    pass\n"
    )
    smoke = next(w for w in golden.commands() if _is_smoke(golden, w) and not _synthetic(w))
    code, out, err = _run(golden, [*smoke, *QUICK], tmp_path, python, pythonpath=[folder])
    assert code == 0 and "Traceback" not in out + err, f"exit {code}:\n{out}{err}"
    assert "steps/s" in out
