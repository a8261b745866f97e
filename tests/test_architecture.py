"""The generator's floor plan, read from its source: imports go one way (no circle), so the
spec, the lowest layer, depends on nothing that plans or targets."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import vlagen
from conftest import REPO

ROOT = Path(vlagen.__file__).parent
README = Path(__file__).resolve().parent.parent / "README.md"


def _modules() -> dict[str, Path]:
    """Dotted name to file of every module of the package."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ["vlagen", *path.relative_to(ROOT).with_suffix("").parts]
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``, which never run."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }


def _imported(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules ``name`` imports when it runs, at its top or in a function, with
    the packages above each (importing ``a.b.c`` runs ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            targets = [f"{source}.{a.name}" for a in node.names]
            found = [t for t in targets if t in modules] or [source]
        elif isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        else:
            continue
        for target in found:
            parts = target.split(".")
            for k in range(2, len(parts) + 1):
                above = ".".join(parts[:k])
                if above in modules and above != name and not name.startswith(above + "."):
                    yield above


@cache
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: set(_imported(name, path, modules)) for name, path in modules.items()}


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph``, as the modules along it, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph[node]):
            found = visit(nxt, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found:
            return found
    return None


def test_the_generator_has_no_import_circle() -> None:
    circle = _circle(_graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_reader_sees_a_circle_where_there_is_one() -> None:
    """The check itself, on a made-up graph, and the reader on a real import."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _circle(graph) == ["a", "b", "c", "a"]
    # imports are read at all, in functions too, with the package above a submodule
    graph = _graph()
    assert "vlagen.starter" in graph["vlagen.cli"]  # imported in a function
    above = {"vlagen.targets", "vlagen.targets.common", "vlagen.targets.common.config_schema"}
    assert above <= graph["vlagen.checks.targets"]


def test_the_spec_imports_nothing_that_plans_or_targets() -> None:
    above = ("vlagen.targets", "vlagen.plan", "vlagen.checks", "vlagen.envplan", "vlagen.presets")
    graph = _graph()
    sections = [name for name in graph if name == "vlagen.spec" or name.startswith("vlagen.spec.")]
    assert len(sections) > 1  # the package and its section modules
    assert not {m for name in sections for m in graph[name] if m.startswith(above)}


def _floor_plan() -> list[set[str]]:
    """The README's floor plan: per row, top to bottom, the modules and packages its left
    column names (a line indented by two spaces goes on naming the row above's)."""
    text = README.read_text(encoding="utf-8")
    lines = text[text.index("The generator's floor plan") :].split("```")[1].strip("\n")
    lines = lines.splitlines()
    column = re.search(r"\S\s{2,}\S", lines[0]).end() - 1  # where the descriptions start
    rows: list[set[str]] = []
    for line in lines:
        names = set(re.findall(r"(\w+)(?:\.py|/)(?=\s|$)", line[:column]))
        if line.startswith("  ") and rows:
            rows[-1] |= names
        elif names:
            rows.append(names)
    return rows


def _unit(module: str) -> str:
    """The floor plan's name for ``module``: its package below vlagen, or its own name."""
    return module.split(".")[1] if "." in module else module


def test_the_readmes_floor_plan_is_the_import_graph() -> None:
    """Every module is on the plan once, and each imports only its own row and those below."""
    rows = _floor_plan()
    row_of = {name: i for i, names in enumerate(rows) for name in names}
    assert sum(map(len, rows)) == len(row_of), "a name stands on two rows of the floor plan"
    graph = {m: deps for m, deps in _graph().items() if m != "vlagen"}
    units = {_unit(m) for m in graph}
    assert units == set(row_of), (
        f"not on the floor plan: {sorted(units - set(row_of))}; "
        f"on it but not modules: {sorted(set(row_of) - units)}"
    )
    upward = sorted(
        f"{m} imports {d}"
        for m, deps in graph.items()
        for d in deps
        if d != "vlagen" and row_of[_unit(d)] < row_of[_unit(m)]
    )
    assert not upward, "imports up the floor plan: " + "; ".join(upward)


def test_vlagens_own_code_is_ruff_clean() -> None:
    """The generator, its tests and benchmarks pass the repo's ruff settings, as the
    generated code passes its own (tests/test_goldens.py)."""
    for args in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--no-cache", "generator", "tests", "benchmarks"],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"ruff {' '.join(args)}:\n{done.stdout}{done.stderr}"
