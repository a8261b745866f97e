"""The oldest releases ``pyproject.toml`` admits still work.

The suite itself runs on the lock (``constraints.txt``: the newest releases when it was last
refreshed). Here a fresh venv resolves vlagen's own requirements to the lowest each admits
(``uv --resolution lowest-direct``), and the generator's tests that need nothing else run in
it: the loader and its limits on the oldest PyYAML, validation on the oldest pydantic, the CLI
on the oldest click, and every example rendered byte for byte as the goldens on the oldest
Jinja2. A lower bound that no longer holds fails here, not on a user's machine.
"""

from __future__ import annotations

import subprocess
from importlib.metadata import requires

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from conftest import REPO, fresh_venv, install

#: The generator's tests that need only vlagen's requirements and the test tools below.
TESTS = [
    "tests/test_load.py",
    "tests/test_hostile_specs.py",
    "tests/test_sync.py",
    "tests/test_cli.py",
    "tests/test_goldens.py",
]
TOOLS = ["pytest", "hypothesis", "jsonschema", "packaging"]
#: Prints ``name==version`` for each distribution installed (lower-cased names).
INSTALLED = (
    "import importlib.metadata as m\n"
    "for d in m.distributions(): print(f\"{d.metadata['Name'].lower()}=={d.version}\")"
)


def _runtime_requirements() -> dict[str, Requirement]:
    reqs = [Requirement(r) for r in requires("vlagen") or []]
    return {r.name.lower(): r for r in reqs if r.marker is None}


@pytest.mark.slow
def test_the_oldest_releases_vlagen_admits(tmp_path) -> None:
    python = fresh_venv("oldest")
    install(python, ["--resolution", "lowest-direct", "-e", str(REPO)], locked=False)
    install(python, TOOLS)  # the test tools as locked; vlagen's requirements stay as resolved
    listed = subprocess.run(
        [python, "-c", INSTALLED], capture_output=True, text=True, check=True
    ).stdout.split()
    versions = dict(line.split("==") for line in listed)
    for name, req in _runtime_requirements().items():  # each at the bottom of its range
        lowest = min((s.version for s in req.specifier if s.operator in (">=", "==")), default=None)
        assert lowest is not None, f"{req} has no lower bound"
        assert Version(versions[name]) == Version(lowest), (
            f"{name}: {versions[name]}, the lowest {req} admits is {lowest}"
        )
    done = subprocess.run(
        [
            python,
            "-m",
            "pytest",
            "-q",
            "-o",
            "addopts=",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
            *TESTS,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
