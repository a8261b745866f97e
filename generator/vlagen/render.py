"""render: a :class:`Plan` becomes a :class:`FileTree` of text, in memory.

Jinja is configured once: ``StrictUndefined`` (a typo in a template is an error, not an empty
string), autoescape off (we emit code, not HTML), trailing newlines kept, and the literal filters
registered in one place. Each file gets a provenance header in its own comment syntax.
"""

from __future__ import annotations

import shlex
from functools import cache
from pathlib import PurePosixPath

import jinja2

from .literals import docstring, md_text, py_literal, quoted, toml_literal, yaml_document
from .paths import templates_root
from .plan import Plan
from .provenance import header_lines
from .templatecache import bytecode_cache
from .tree import File, FileTree, Mode

__all__ = ["provenance_header", "render_plan"]

FILTERS = {
    "py": py_literal,
    "toml": toml_literal,
    "md": md_text,
    "docstring": docstring,
    "quoted": quoted,
    "sh": shlex.quote,
    "yaml": yaml_document,
}

_HASH_COMMENT = {".py", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".txt", ""}


#: The environment's settings that change what a template compiles to.
SETTINGS = {
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_root()),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=bytecode_cache(tuple(sorted(SETTINGS.items()))),
        **SETTINGS,
    )
    env.filters.update(FILTERS)
    return env


def render_plan(plan: Plan) -> FileTree:
    """Render every planned file. Python files are not yet formatted (see ``format``)."""
    env = environment()
    out: dict[str, File] = {}
    for planned in plan.files:
        target = plan.target(planned.target) if planned.target else None
        text = env.get_template(planned.template).render(plan=plan, spec=plan.spec, target=target)
        text = _with_header(text, provenance_header(planned.path, planned.mode, plan))
        out[planned.path] = File(text.encode("utf-8"), planned.mode, planned.executable)
    return FileTree(out)


def _with_header(text: str, header: str) -> str:
    if text.startswith("#!"):  # the shebang stays the first line
        first, _, rest = text.partition("\n")
        return f"{first}\n{header}{rest}"
    return header + text


def provenance_header(path: str, mode: Mode, plan: Plan) -> str:
    """What made this file, in the file's comment syntax ("" where it has none, e.g. JSON)."""
    lines = header_lines(mode, plan.vlagen_version)
    suffix = PurePosixPath(path).suffix
    name = PurePosixPath(path).name
    if suffix == ".md":
        return "<!-- " + " ".join(lines) + " -->\n\n"
    if suffix in _HASH_COMMENT or name.startswith("."):
        return "".join(f"# {line}\n" for line in lines)
    return ""
