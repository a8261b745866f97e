"""Every example's learning run, for every target it has: the whole table, where the suite
runs a share of it within its budget (``tests/test_readme_commands.py``'s ``LEARNING`` and
the controls of ``tests/test_learning.py``).

Each golden's ``python -m <pkg>.learn --target T`` runs as its README shows it (both
quarters, the package's own updates), ``jobs`` at a time, and a table says what each
printed: its verdict, each quarter's first and last windows and p-value, and its seconds.

    python tests/learning_matrix.py [--jobs 2] [--only GOLDEN[:TARGET] ...]

Exits 1 when a run did not learn or failed, 3 when one could not run here.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import GOLDENS, SPECS, find_verl_source
from vlagen.load import load_spec
from vlagen.plan import make_plan

#: a quarter's summary line of the learning run's report
QUARTER = re.compile(r"^  (top|bottom): first .*?; Fisher p = (\S+);", re.MULTILINE)


def pairs() -> list[tuple[str, str, str]]:
    """(golden, package, framework) for every target of every example spec that has a
    learning run, as the plan lists them."""
    found = []
    for spec in SPECS:
        plan = make_plan(load_spec(spec).spec)
        found += [(spec.stem, plan.package, t.framework) for t in plan.learning if t.has_module]
    return found


def run(golden: str, package: str, framework: str, verl: str | None) -> tuple[str, str, str]:
    """One learning run in a folder of its own: (its verdict, a table row, its output)."""
    with tempfile.TemporaryDirectory(prefix="learning-matrix-") as folder:
        env = {**os.environ, "HOME": folder, "OMP_NUM_THREADS": "1"}
        env["PYTHONPATH"] = str(GOLDENS / golden / "src")
        if verl:
            env["VERL_SRC"] = verl
        start = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", f"{package}.learn", "--target", framework, "--out", folder],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - start
    out = done.stdout + done.stderr
    verdict = {0: "learned", 1: "DID NOT LEARN", 3: "not run"}.get(done.returncode, "failed")
    quarters = ", ".join(f"{q} p={p}" for q, p in QUARTER.findall(done.stdout))
    row = f"| {golden} | {framework} | {verdict} | {quarters} | {seconds:.0f} |"
    return verdict, row, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument(
        "--only", action="append", help="GOLDEN or GOLDEN:TARGET to run (default: all)"
    )
    args = parser.parse_args(argv)
    chosen = [
        p for p in pairs() if not args.only or p[0] in args.only or f"{p[0]}:{p[2]}" in args.only
    ]
    with tempfile.TemporaryDirectory(prefix="learning-matrix-verl-") as scratch:
        verl = None
        found = find_verl_source()
        if found is not None:
            from vlagen.targets.verl.snapshot import source_root

            verl = str(source_root(found, Path(scratch)))
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda p: run(*p, verl), chosen))
    print("| golden | target | verdict | quarters | s |\n|---|---|---|---|---|")
    for _, row, _ in results:
        print(row)
    for (verdict, _, out), (golden, _, framework) in zip(results, chosen, strict=True):
        if verdict != "learned":
            print(f"\n{golden} {framework}:\n{out[-4000:]}")
    verdicts = [verdict for verdict, _, _ in results]
    if any(v in ("DID NOT LEARN", "failed") for v in verdicts):
        return 1
    return 3 if "not run" in verdicts else 0


if __name__ == "__main__":
    sys.exit(main())
