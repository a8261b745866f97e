"""Refresh ``constraints.txt``, the lock the test set-up installs from.

    python tests/refresh_constraints.py

The README's test command (and so CI) installs ``.[test]`` with ``-c constraints.txt``: every
package pinned to what this script resolved, so a release made upstream on the morning of a
submission cannot change what the suite runs on. Moving to newer releases is a change of its
own: run this, run the suite, commit the new file with what changed.

It installs ``.[test]`` into a fresh venv with pip, resolving the newest releases
``pyproject.toml`` admits (the newest end of the ranges; ``test_dependency_bounds.py`` tests
the oldest), together with the real simulators the goldens' fresh venvs install (the ``sim``
extra of each golden with real-simulator tests, and what the frameworks' own envs for it
import: LIBERO, and gym for RLinf's LIBERO env), and writes ``pip freeze`` of it, less vlagen
itself. A local version label
(``torch==2.13.0+cpu``, the CPU build on this machine's disk) is dropped, so the pin means
the same release wherever pip finds it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "constraints.txt"
HEADER = """\
# The test set-up's lock: `pip install -e '.[test]' -c constraints.txt` (the README's test
# command). Written by `python tests/refresh_constraints.py`; refresh it on purpose, in a
# commit of its own, never by hand.
"""


def pins(python: str) -> list[str]:
    """``name==version`` for every distribution in ``python``'s venv but vlagen, sorted."""
    done = subprocess.run(
        [python, "-m", "pip", "freeze", "--exclude-editable", "--all"],
        check=True,
        capture_output=True,
        text=True,
    )
    lines = []
    for line in done.stdout.splitlines():
        name, sep, version = line.partition("==")
        if not sep or name.lower() in ("vlagen", "pip"):  # setuptools is a dependency here
            continue
        lines.append(f"{name}=={re.sub(r'[+].*$', '', version)}")
    return sorted(lines, key=str.lower)


def simulators() -> list[str]:
    """What the goldens' fresh venvs install beyond their ``test`` extra and the frameworks
    (``test_goldens.py``): each real-simulator golden's ``sim`` extra, and the packages the
    frameworks' own envs for that simulator import."""
    from vlagen.load import load_spec
    from vlagen.plan import make_plan

    found: list[str] = []
    for path in sorted((REPO / "specs").glob("*.yaml")):
        plan = make_plan(load_spec(path).spec)
        if plan.env.probe is not None:
            preset = plan.env.preset.name
            found += plan.env.sim_requirements
            found += [r for t in plan.targets for r in t.decl.preset_test_installs.get(preset, ())]
    return list(dict.fromkeys(found))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="vlagen-lock-") as tmp:
        venv.create(tmp, with_pip=True)
        python = str(Path(tmp) / "bin" / "python")
        subprocess.run(
            [python, "-m", "pip", "install", "-q", "-e", f"{REPO}[test]", *simulators()],
            check=True,
            cwd=tmp,
        )
        lines = pins(python)
    LOCK.write_text(HEADER + "\n".join(lines) + "\n")
    print(f"wrote {LOCK.relative_to(REPO)}: {len(lines)} pins")
    return 0


if __name__ == "__main__":
    sys.exit(main())
