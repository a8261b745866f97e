"""Shared fixtures: the repo's example specs, a minimal valid spec, and a CLI runner; and a
check that the suite leaves the working tree as it found it."""

from __future__ import annotations

import faulthandler
import gc
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import venv
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from preloaded import PRELOAD, Preloaded

REPO = Path(__file__).resolve().parent.parent
SPECS = sorted((REPO / "specs").glob("*.yaml"))
GOLDENS = REPO / "generated_examples"

#: The skips allowed where a package's simulator is installed: GPU tests without a GPU, and
#: the env server's other-user test where the suite does not run as root (it forks a client
#: that drops to uid 65534).
ALLOWED_SKIPS = ("needs a CUDA device", "a client as another user needs root (setuid) on Linux")

#: Seconds any one test may run before it is taken for hung (the longest, LIBERO's fresh
#: venv, takes about 12 minutes on 2 busy cores): every thread's stack is printed and the
#: test's process ends, so a hang fails naming the test instead of running CI into its limit.
TEST_LIMIT_S = 1500
#: Seconds a generated package's own test run may take, inside :data:`TEST_LIMIT_S`; its
#: pytest prints every thread's stack of a test still running after half of it.
PACKAGE_RUN_LIMIT_S = 1380


#: What the goldens run and variants of a spec need not: the generated env pool's and env
#: server's process-control tests (signals, deadlines, shutdown), whose code is the same in
#: every package, and the tests that start a Python importing the framework afresh, as its
#: launch does (its import of the package's family is the goldens' too; some 10 s each), and
#: the learning run (the goldens show each target learns; the oft_fused_state_lora variant,
#: LoRA rank 4 with GAE, rises too slowly to pass within 16 updates).
VARIANT_MARKERS = "not process_control and not fresh_interpreter and not learning"


def run_package_tests(
    package: Path,
    *,
    real_simulator: bool,
    python: str = sys.executable,
    only: Sequence[str] = (),
    markers: str = "",
) -> str:
    """Run a generated package's own tests (``only`` those files, if given, and those
    ``markers`` selects, a ``-m`` expression) with ``python``; with ``real_simulator`` nothing
    but its GPU tests may skip. Returns pytest's output."""
    # One thread per test process: the suite runs one such process per core (xdist), and
    # the tiny models gain nothing from intra-op threads competing with them.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
    options = ["-q", "-rs", "-p", "no:cacheprovider"]
    if python != sys.executable:  # a fresh venv, installed --no-compile
        env = compiled_once(env)
    elif not env.get("PYTHONPATH"):  # nothing in front of what the preloaded Python imported
        python = str(preloaded_python())
        # pytest cannot rewrite the asserts of plugins imported before it (hydra's)
        options += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    command = [python, "-m", "pytest", *options, *only]
    command += ["-o", f"faulthandler_timeout={PACKAGE_RUN_LIMIT_S // 2}"]
    try:
        done = subprocess.run(
            command + (["-m", markers] if markers else []),
            cwd=package,
            capture_output=True,
            text=True,
            env=env,
            timeout=PACKAGE_RUN_LIMIT_S,
        )
    except subprocess.TimeoutExpired as hung:  # its output comes back as bytes, if any
        output = b"".join(s or b"" for s in (hung.stdout, hung.stderr)).decode(errors="replace")
        message = f"{package.name}'s tests ran past {hung.timeout} s:\n{output}"
        raise AssertionError(message) from None
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout
    if real_simulator:
        skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
        assert all(line.endswith(ALLOWED_SKIPS) for line in skips), done.stdout
    return done.stdout


def compiled_once(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a command in a fresh venv (:func:`fresh_venv`, installed without
    bytecode): the bytecode of what it imports goes to this test process's cache
    (:func:`_scratch`), written by the first command and read by every later one in a venv
    at the same path, where each would otherwise compile torch and transformers again
    (some 10 s of CPU), or write into the venv."""
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(_scratch() / "pycache")
    return env


def preloaded_python() -> Path:
    """This test process's preloaded Python (:mod:`preloaded`) for the packages' test runs in
    this venv: each runs in a fork of one that has imported torch, transformers, pytest and
    RLinf, some 9 s of CPU a run. What a fork cannot show (an import a package forgot that a
    preloaded module made) the goldens' runs, each a fresh interpreter in a fresh venv,
    show."""
    if not _PRELOADED:
        folder = _scratch() / "preloaded"
        folder.mkdir()
        env = {**os.environ, "OMP_NUM_THREADS": "1", "HOME": str(folder)}
        env.pop("PYTHONPATH", None)
        server = Preloaded(folder, env, (*PRELOAD, "pytest"))
        _PRELOADED.append((server, server.shim() / "python"))
    return _PRELOADED[0][1]


_PRELOADED: list[tuple[Preloaded, Path]] = []


def fresh_venv(name: str) -> str:
    """An empty venv (no pip: :func:`install` fills it); returns its python.

    It lives at one path per test process and ``name``, emptied for each use. uv installs
    without bytecode, and links the same files from its cache each time: at the same path,
    the bytecode a test process compiled for the last venv (:func:`_scratch`'s ``pycache``)
    is valid for the next, so torch, transformers and the frameworks are compiled once per
    test process, not once per venv (some 10 s of CPU each)."""
    root = _scratch() / "venvs" / name
    venv.create(root, clear=True)  # the last one's packages gone, or an error
    return str(root / "bin" / "python")


#: The test set-up's lock (``tests/refresh_constraints.py`` writes it).
LOCK = REPO / "constraints.txt"


def install(
    python: str, args: Sequence[str], *, cwd: Path | None = None, locked: bool = True
) -> None:
    """``uv pip install ARGS`` into ``python``'s venv, failing with uv's message.

    uv, not pip: it resolves as pip does and links from its cache, so each of the suite's
    fresh venvs takes seconds where pip took a minute and a half (unpacking torch and
    transformers again each time). pip's ``find-links`` are passed on, so torch comes from
    the same wheel pip installs (the CPU build on this machine's disk), not a CUDA one.
    ``locked``: constrained by :data:`LOCK`, as the suite's own venv is, so a release made
    upstream today changes no fresh venv either."""
    from uv import find_uv_bin

    command = [find_uv_bin(), "pip", "install", "-q", "--python", python]
    if locked:
        command += ["--constraint", str(LOCK)]
    for links in _pip_find_links():
        command += ["--find-links", links]
    done = subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"uv pip install {' '.join(args)}:\n{done.stderr}"


def uninstall(python: str, requirements: Sequence[str]) -> None:
    """``uv pip uninstall`` the distributions ``requirements`` name from ``python``'s venv."""
    from uv import find_uv_bin

    names = [re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0] for r in requirements]
    command = [find_uv_bin(), "pip", "uninstall", "-q", "--python", python, *names]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, f"uv pip uninstall {' '.join(names)}:\n{done.stderr}"


def _pip_find_links() -> list[str]:
    """The ``find-links`` that pip is configured with (environment or config files)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    )
    links = os.environ.get("PIP_FIND_LINKS", "").split()
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith("find-links"):
            links += value.strip("'\"").split()
    return list(dict.fromkeys(links))


def _scratch() -> Path:
    """This test process's folder for :func:`fresh_venv`'s venvs (``venvs/``) and the
    bytecode their packages compile (``pycache/``, a ``PYTHONPYCACHEPREFIX``: each module is
    compiled once per test process, only if imported, and nothing lands in a package's
    tree); removed when the process ends."""
    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="vlagen-scratch-")))
    return _SCRATCH[0]


_SCRATCH: list[Path] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests first, longest (``slow(minutes=N)``) first, so that the workers of
    ``-n`` do not end on one of them alone. Under ``--dist worksteal`` each worker is first
    sent one contiguous slice of the items (then steals from the end of another's): the
    slow tests are dealt to the slices longest first, each to the slice with the fewest
    minutes so far, and lead their slice, so every worker starts on its share of them."""

    def minutes(item: pytest.Item) -> float:
        mark = item.get_closest_marker("slow")
        return 0 if mark is None else mark.kwargs.get("minutes", 1)

    items.sort(key=minutes, reverse=True)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers < 2 or getattr(config, "workerinput", {}).get("dist") != "worksteal":
        return
    slow = [item for item in items if minutes(item)]
    fast = [item for item in items if not minutes(item)]
    sizes, left = [], len(items)
    for i in range(workers):  # xdist's split: pending // idle nodes left, in turn
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    slices: list[list[pytest.Item]] = [[] for _ in sizes]
    load = [0.0] * workers
    for item in slow:
        open_ = [i for i in range(workers) if len(slices[i]) < sizes[i]]
        best = min(open_, key=lambda i: (load[i], i))
        slices[best].append(item)
        load[best] += minutes(item)
    for i, size in enumerate(sizes):
        take = size - len(slices[i])
        slices[i] += fast[:take]
        del fast[:take]
    items[:] = [item for part in slices for item in part]


def pytest_collection_finish(session: pytest.Session) -> None:
    """The test modules and what they imported (torch, transformers, vlagen) live as long as
    the session: frozen, no garbage collection walks them again (as the generated packages'
    own ``tests/conftest.py`` does)."""
    gc.freeze()


#: The process's own stderr, copied before a test's output capture replaces it.
_STDERR: list[int] = []


def pytest_configure(config: pytest.Config) -> None:
    _STDERR.append(os.dup(2))  # capture is suspended here: 2 is the terminal or CI log


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """A watchdog per test (:data:`TEST_LIMIT_S`). The standard library's, not a plugin:
    ``faulthandler`` prints every thread's stack from a C thread, so it fires whatever the
    test blocks in, and ends the process, which xdist reports as the test's failure ("worker
    crashed while running ...") before it starts a new worker for the rest."""
    faulthandler.dump_traceback_later(TEST_LIMIT_S, exit=True, file=_STDERR[0])
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """Tell xdist's workers the controller's ``--dist`` (a worker's own reads ``no``)."""
    node.workerinput["dist"] = node.config.getoption("dist")


#: ``git status`` of the checkout when the session started (the controller's, under xdist).
TREE_BEFORE = pytest.StashKey[dict]()


def working_tree() -> dict[str, tuple[str, str]] | None:
    """Each path ``git status`` lists (untracked files one by one, ignored ones left out) with
    its status and a digest of its content; ``None`` outside a git checkout of this repository
    or without git."""
    git = ["git", "-C", str(REPO)]
    try:
        top = subprocess.run(
            [*git, "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=60
        )
        if top.returncode or Path(top.stdout.strip()).resolve() != REPO:
            return None
        done = subprocess.run(
            [*git, "status", "--porcelain", "-z", "--untracked-files=all"],
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode:
        return None
    tree: dict[str, tuple[str, str]] = {}
    entries = iter(done.stdout.decode("utf-8", "surrogateescape").split("\0"))
    for entry in entries:
        if not entry:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            next(entries, None)  # -z puts a rename's source after its destination
        tree[path] = (code, _digest(REPO / path))
    return tree


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:  # deleted, a directory (a submodule), unreadable
        return ""


def _state(path: str, after: dict) -> str:
    """``git status``'s code for ``path`` now, or ``clean`` where the run undid a change."""
    return after[path][0].strip() if path in after else "clean"


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # xdist's workers leave it to the controller
        session.config.stash[TREE_BEFORE] = working_tree()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run if it added, changed or deleted a file that git sees (the ignored ones,
    ``.venv/`` and caches, are not seen): every test writes under its ``tmp_path`` or another
    temporary directory."""
    before = session.config.stash.get(TREE_BEFORE, None)
    after = None if before is None else working_tree()
    if after is None:
        return
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    if not changed:
        return
    report = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"  {_state(p, after):>6}  {p}" for p in changed]
    message = "\n".join(["the test run changed the working tree (write under tmp_path):", *lines])
    if report is None:
        print(message, file=sys.stderr)
    else:
        report.line("")
        report.write_sep("=", "working tree changed", red=True)
        report.write_line(message)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    for server, _ in _PRELOADED:
        server.close()
    for folder in _SCRATCH:
        shutil.rmtree(folder, ignore_errors=True)


#: The verl target's source (its VLA code is not in the wheel): a `git archive` of tag v0.7.1.
VERL_ARCHIVE = "verl-0.7.1-src.tar.gz"


def find_verl_source() -> Path | None:
    """The verl v0.7.1 source: ``$VLAGEN_VERL_SRC`` (an archive or a checkout), else the
    archive in ``<repo>/../shared/frameworks/``, else in ``/work/shared/frameworks/``."""
    named = os.environ.get("VLAGEN_VERL_SRC")
    if named:
        candidates = [Path(named)]
    else:
        candidates = [REPO.parent / "shared" / "frameworks" / VERL_ARCHIVE]
        candidates.append(Path("/work/shared/frameworks") / VERL_ARCHIVE)
    return next((c for c in candidates if c.exists()), None)


@pytest.fixture(scope="session")
def verl_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The verl v0.7.1 source tree (a tarball extracted once per test process), also exported
    as ``VERL_SRC`` for the generated packages' tests that ``run_package_tests`` runs. Absent:
    skips, or fails under CI (``CI=true``)."""
    from vlagen.targets.verl.snapshot import source_root

    found = find_verl_source()
    if found is None:
        message = (
            "verl v0.7.1 source not found: set VLAGEN_VERL_SRC to its git archive "
            f"({VERL_ARCHIVE}) or a checkout of tag v0.7.1"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    root = source_root(found, tmp_path_factory.mktemp("verl-src"))
    os.environ["VERL_SRC"] = str(root)
    return root


# A suite started in the background by a non-interactive shell inherits SIGINT ignored, as
# would every process it starts (an ignored signal stays ignored across exec), and the tests
# of Ctrl-C (vlagen new's, the env pool's) would see nothing: Python's own handler, as in a
# terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The compiled-template cache of every vlagen run the suite makes, in one folder of its own.
os.environ.setdefault("VLAGEN_CACHE_DIR", tempfile.mkdtemp(prefix="vlagen-cache-"))

# `import siirl` (the siiRL target's tests) adds a log file sink under ./siirl_logs otherwise.
os.environ.setdefault("SIIRL_LOG_DIRECTORY", os.path.join(tempfile.gettempdir(), "siirl_logs"))

MINIMAL_SPEC = textwrap.dedent(
    """\
    vlagen: 1
    project:
      name: tiny-vla
    model:
      name: tiny
      family: openvla
      checkpoint: ./tiny
      action:
        dim: 2
        chunk: 1
    env:
      preset: highway
      state_dim: 0
      max_episode_steps: 10
      cameras:
        - {name: front, height: 64, width: 64}
      task: drive
      action:
        kind: continuous
        dim: 2
    targets:
      - {framework: rlinf, version: "0.3", algorithm: grpo}
    training:
      group_size: 2
      groups: 8
      mini_batches: 1
    """
)


def spec_errors(spec: dict | str) -> list[str]:
    """The ``PATH:LINE:COL: ...`` lines a spec (YAML text, or data dumped in key order)
    fails with, as ``spec.yaml``."""
    from vlagen.errors import SpecError
    from vlagen.load import load_spec_text

    text = spec if isinstance(spec, str) else yaml.safe_dump(spec, sort_keys=False)
    with pytest.raises(SpecError) as info:
        load_spec_text(text, "spec.yaml")
    return info.value.format().splitlines()


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def spec_file(tmp_path: Path):
    """Write spec text to ``tmp_path/spec.yaml`` and return its path."""

    def write(text: str = MINIMAL_SPEC, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
