"""Rewrite ``tests/env_digests.json``: the digests of what each golden's ``VecEnv`` returns,
in-process and on a worker pool (``tests/vecenv_digest.py`` says what is hashed).

Run after an intended change to what the env core or its backends return, and say why in
the commit; a refactoring leaves the file as it is:

    python tests/refresh_env_digests.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from vlagen.load import load_spec
from vlagen.plan import make_plan

REPO = Path(__file__).resolve().parent.parent
GOLDENS = REPO / "generated_examples"
DATA = Path(__file__).with_name("env_digests.json")
PROGRAM = Path(__file__).with_name("vecenv_digest.py")


def golden_names() -> list[str]:
    return sorted(spec.stem for spec in (REPO / "specs").glob("*.yaml"))


def golden_backend(name: str) -> tuple[str, str]:
    """The golden's import name, and the backend its digests come from: the spec's where its
    simulator is installed in the suite's venv (the gymnasium ones), else the stand-in."""
    plan = make_plan(load_spec(REPO / "specs" / f"{name}.yaml").spec)
    real = plan.env.preset.backend == "gymnasium"
    return plan.package, plan.spec.env.backend if real else "synthetic"


def golden_digests(name: str, home: Path) -> dict:
    """The digests of golden ``name``'s env outputs, computed in a Python of its own (its
    ``src`` on the path, one thread, ``home`` as its home and working folder)."""
    package, backend = golden_backend(name)
    env = {
        **os.environ,
        "PYTHONPATH": str(GOLDENS / name / "src"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "HOME": str(home),
    }
    done = subprocess.run(
        [sys.executable, str(PROGRAM), package, backend],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        raise RuntimeError(f"{name}: {PROGRAM.name} failed:\n{done.stderr}")
    return {"backend": backend, **json.loads(done.stdout)}


def stored() -> dict[str, dict]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def main() -> int:
    digests = {}
    with tempfile.TemporaryDirectory(prefix="env-digests-") as home:
        for name in golden_names():
            digests[name] = golden_digests(name, Path(home))
            print(f"digested {name} ({digests[name]['backend']} backend)")
    DATA.write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote    {DATA.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
