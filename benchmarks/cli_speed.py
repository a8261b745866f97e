"""Cold-start speed of the ``vlagen`` CLI, side by side with a cookiecutter baseline.

Run it from the repository root, in the dev venv with the ``bench`` extra installed
(``pip install -e '.[bench]'``, i.e. cookiecutter 2.7.1)::

    python benchmarks/cli_speed.py [--runs 5] [--json results.json]

Every timed command is a fresh subprocess (``python -m <tool> ...``), so each number is the wall
time a user sees from a cold CLI start. The commands run interleaved, one of each per round, so
machine load falls on all of them alike:

* ``python -c pass``: the interpreter floor, for context;
* ``vlagen --help``;
* ``vlagen new SPEC -o FRESH_DIR``, SPEC being the example spec (``specs/*.yaml``) whose output
  has the most files, ties broken by total bytes;
* ``vlagen check SPEC -o DIR`` and ``vlagen diff SPEC -o DIR``, DIR generated once up front (so
  it is up to date);
* ``vlagen new`` and ``vlagen check`` again with vlagen's user cache off
  (``VLAGEN_CACHE_DIR=""``): no compiled templates, no formatted files, no memo of what the spec
  generates (see ``vlagen.usercache``), i.e. what the first run on a machine costs;
* ``cookiecutter --no-input -o FRESH_DIR TEMPLATE``: the baseline, rendering a template built
  here from vlagen's own output: the same files, the package directory templated, and the
  project and package names substituted back in as ``{{ cookiecutter.* }}`` variables. Its
  output is checked once to be byte-identical to vlagen's.

The timed commands run as on a user's machine: Python writes its bytecode (the variable
``PYTHONDONTWRITEBYTECODE`` is removed for them; an editable install's modules would otherwise
be compiled on every run, while cookiecutter's were compiled when pip installed it), and
vlagen's user cache is a folder of the run's own, filled by round 0, which is not counted.

Each line reports median, min and max in ms and the median's ratio to cookiecutter's. Last,
``vlagen --help``, ``validate``, ``check`` and ``diff`` run under ``python -X importtime`` and
the import log is searched for a ``torch`` module. An empty stub ``torch`` package goes first
on PYTHONPATH for these runs, so any attempt to import torch shows in the log, installed or not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from vlagen.api import load_spec

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "specs"
BASELINE = "cookiecutter"


@dataclass
class Timing:
    name: str
    argv: list[str]
    times_ms: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)


def vlagen(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "vlagen", *map(str, args)]


def cookiecutter(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "cookiecutter", *map(str, args)]


def run(argv: Sequence[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=env)


def tree_files(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (hidden ones too), by POSIX relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def pick_spec(work: Path) -> tuple[Path, Path]:
    """The example spec with the largest output, and a directory holding that output."""
    best: tuple[int, int, Path, Path] | None = None
    for spec in sorted(SPECS.glob("*.yaml")):
        out = work / f"gen-{spec.stem}"
        run(vlagen("new", spec, "-o", out))
        files = tree_files(out)
        key = (len(files), sum(map(len, files.values())), spec, out)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None:
        sys.exit(f"no specs in {SPECS}")
    return best[2], best[3]


def to_template(text: str, names: dict[str, str]) -> str:
    """``text`` as Jinja source rendering back to ``text``, with each value in ``names``
    replaced by its ``{{ cookiecutter.<key> }}`` variable; literal text that Jinja could read
    as markup goes inside ``{% raw %}``."""
    by_value = {value: key for key, value in names.items()}
    alternatives = "|".join(re.escape(v) for v in sorted(by_value, key=len, reverse=True))
    wrap = "{" in text
    out: list[str] = []
    # With a group in the pattern, re.split keeps the matches: at the odd indices.
    for i, chunk in enumerate(re.split(f"({alternatives})", text)):
        if i % 2:
            out.append("{{ cookiecutter." + by_value[chunk] + " }}")
        elif chunk and wrap:
            if "{% endraw %}" in chunk:
                raise ValueError("text contains '{% endraw %}'")
            out.append("{% raw %}" + chunk + "{% endraw %}")
        else:
            out.append(chunk)
    return "".join(out)


def build_template(source: Path, root: Path, names: dict[str, str]) -> dict[str, bytes]:
    """A cookiecutter template at ``root`` that renders ``source``'s files; returns them."""
    files = tree_files(source)
    root.mkdir(parents=True)
    (root / "cookiecutter.json").write_text(json.dumps(names, indent=2) + "\n")
    project = root / "{{cookiecutter.project_name}}"
    for rel, content in files.items():
        parts = ["{{cookiecutter.package}}" if p == names["package"] else p for p in rel.split("/")]
        path = project.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(to_template(content.decode("utf-8"), names), encoding="utf-8", newline="")
    return files


def imports_torch(argv: Sequence[str], stub: Path) -> bool:
    """Whether ``argv`` (a ``python -m ...`` command) imports a ``torch`` module.

    ``stub`` is a directory holding an empty ``torch`` package; it goes first on PYTHONPATH,
    so any attempt to import torch succeeds and shows in the import log, installed or not.
    """
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(stub), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True, env=env
    )
    modules = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    found = any(m == "torch" or m.startswith("torch.") for m in modules)
    if not found and (done.returncode or not any(m.startswith("vlagen") for m in modules)):
        raise RuntimeError(f"{argv} failed or left no import log:\n{done.stderr[-2000:]}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command [5]")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    opts = parser.parse_args()
    if opts.runs < 1:
        parser.error("--runs must be at least 1")

    with tempfile.TemporaryDirectory(prefix="vlagen-bench-") as tmp:
        work = Path(tmp)
        spec, generated = pick_spec(work)
        project = load_spec(spec).spec.project
        names = {"project_name": project.name, "package": project.import_name}

        template = work / "template"
        expected = build_template(generated, template, names)
        # A config of our own, so cookiecutter neither reads ~/.cookiecutterrc nor writes replays
        # into the home directory.
        config = work / "cookiecutter.yaml"
        config.write_text(
            f"cookiecutters_dir: {json.dumps(str(work / 'cc-cache'))}\n"
            f"replay_dir: {json.dumps(str(work / 'cc-replay'))}\n"
        )
        check = work / "cc-check"
        run(cookiecutter("--no-input", "--config-file", config, "-o", check, template))
        rendered = tree_files(check / project.name)
        if len(rendered) != len(expected):
            sys.exit(f"cookiecutter wrote {len(rendered)} files, expected {len(expected)}")
        if rendered != expected:
            bad = sorted(
                k for k in expected.keys() | rendered.keys() if rendered.get(k) != expected.get(k)
            )
            sys.exit(f"cookiecutter output differs from vlagen's: {bad}")

        def fresh(kind: str, n: int) -> Path:
            path = work / f"{kind}-{n}"
            path.mkdir()
            return path

        user = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached = {**user, "VLAGEN_CACHE_DIR": str(work / "vlagen-cache")}
        uncached = {**user, "VLAGEN_CACHE_DIR": ""}
        commands = {
            "python -c pass": (lambda n: [sys.executable, "-c", "pass"], cached),
            "vlagen --help": (lambda n: vlagen("--help"), cached),
            "vlagen new": (lambda n: vlagen("new", spec, "-o", fresh("new", n)), cached),
            "vlagen check": (lambda n: vlagen("check", spec, "-o", generated), cached),
            "vlagen diff": (lambda n: vlagen("diff", spec, "-o", generated), cached),
            "new, no cache": (lambda n: vlagen("new", spec, "-o", fresh("new0", n)), uncached),
            "check, no cache": (lambda n: vlagen("check", spec, "-o", generated), uncached),
            BASELINE: (
                lambda n: cookiecutter(
                    "--no-input", "--config-file", config, "-o", fresh("cc", n), template
                ),
                cached,
            ),
        }
        timings = {name: Timing(name, [], []) for name in commands}
        load_before = os.getloadavg()
        for n in range(opts.runs + 1):  # round 0 warms the disk, bytecode and user caches
            for name, (make, env) in commands.items():
                argv = make(n)
                start = time.perf_counter()
                run(argv, env)
                elapsed = (time.perf_counter() - start) * 1000
                if n:
                    timings[name].times_ms.append(elapsed)
                    timings[name].argv = [str(a) for a in argv]
        load_after = os.getloadavg()

        stub = work / "stub"
        (stub / "torch").mkdir(parents=True)
        (stub / "torch" / "__init__.py").write_text("")
        torch = {
            "vlagen --help": imports_torch(vlagen("--help"), stub),
            "vlagen validate": imports_torch(vlagen("validate", spec), stub),
            "vlagen check": imports_torch(vlagen("check", spec, "-o", generated), stub),
            "vlagen diff": imports_torch(vlagen("diff", spec, "-o", generated), stub),
        }

    base = timings[BASELINE].median
    rel_spec = spec.relative_to(REPO) if spec.is_relative_to(REPO) else spec
    print(
        f"spec {rel_spec}: {len(expected)} files, {sum(map(len, expected.values()))} bytes; "
        f"{opts.runs} runs each, interleaved; python {sys.version.split()[0]}"
    )
    print(f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print()
    print(f"{'command':<16} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'x ' + BASELINE:>14}")
    for t in timings.values():
        print(
            f"{t.name:<16} {t.median:>10.1f} {min(t.times_ms):>8.1f} {max(t.times_ms):>8.1f} "
            f"{t.median / base:>14.2f}"
        )
    print()
    for name, found in torch.items():
        print(f"{name:<16} imports torch: {'yes' if found else 'no'}")

    if opts.json:
        result = {
            "spec": str(rel_spec),
            "files": len(expected),
            "bytes": sum(map(len, expected.values())),
            "runs": opts.runs,
            "python": sys.version.split()[0],
            "loadavg": {"before": load_before, "after": load_after},
            "timings": {
                name: {
                    **asdict(t),
                    "median_ms": t.median,
                    "min_ms": min(t.times_ms),
                    "max_ms": max(t.times_ms),
                    "ratio_to_baseline": t.median / base,
                }
                for name, t in timings.items()
            },
            "baseline": BASELINE,
            "imports_torch": torch,
        }
        opts.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
