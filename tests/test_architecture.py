"""The generator's floor plan, read from its source: imports go one way (no circle), so the
spec, the lowest layer, depends on nothing that plans or targets."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import vlagen

ROOT = Path(vlagen.__file__).parent


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
