"""The user-facing text: self-contained, with one page per framework linked from the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO
from vlagen.targets import all_targets, framework_names

#: What a user sees: the README, the docs, the templates the packages are made from, and
#: vlagen's own source (its messages and docstrings).
USER_FACING = ("README.md", "docs", "templates", "generator/vlagen")
#: Paths that exist only where vlagen is developed.
INTERNAL = ("../shared", "shared/reference", "shared/frameworks", "/work/")


def user_facing_files() -> list[Path]:
    found = []
    for name in USER_FACING:
        root = REPO / name
        found += [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    return [p for p in found if "__pycache__" not in p.parts]


def test_user_facing_text_points_nowhere_outside_the_repository() -> None:
    hits = [
        f"{path.relative_to(REPO)}: {needle}"
        for path in user_facing_files()
        for needle in INTERNAL
        if needle in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert not hits


@pytest.mark.parametrize("framework", framework_names())
def test_every_framework_has_a_page_the_readme_links(framework: str) -> None:
    page = f"docs/frameworks/{framework}.md"
    assert (REPO / page).is_file()
    assert f"]({page})" in (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("decl", all_targets(), ids=lambda d: f"{d.framework}-{d.version}")
def test_each_framework_page_names_the_requirement_its_target_installs(decl) -> None:
    page = (REPO / "docs" / "frameworks" / f"{decl.framework}.md").read_text(encoding="utf-8")
    assert f"`{decl.requirement}`" in page
    assert "## Sources" in page


def _readme_commands() -> list[str]:
    """The README's set-up commands: the one-line ```bash blocks under "## Set up"."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.split("\n", 1)[1].strip() for block in section.split("```bash")[1:]]


def test_ci_runs_the_readmes_test_command_and_it_installs_from_the_lock() -> None:
    """CI runs what a newcomer pastes, nothing else, and both install from the committed
    lock, so a release made upstream cannot change what the suite runs on."""
    install, test = (block.split("\n```")[0] for block in _readme_commands())
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == test
    assert "-c constraints.txt" in test.split("pip install -e '.[test]'")[1].split("&&")[0]
    assert "pytest" in test.split("&&")[-1] and "vlagen new" in install
    pins = [
        line
        for line in (REPO / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert all(line.count("==") == 1 and "+" not in line for line in pins), pins
    names = {line.split("==")[0].lower() for line in pins}
    assert {"pyyaml", "pydantic", "jinja2", "click", "torch", "transformers"} <= names


def test_user_facing_text_links_no_package_index_page() -> None:
    """vlagen is installed from its source, not a package index: no text sends a user to an
    index's page for it (or for anything else; a package is named, not linked). An index's
    project pages sit under ``/project/NAME/``."""
    page = re.compile(r"https?://[^\s)>\]]*/project/[\w.-]+")
    hits = [
        f"{path.relative_to(REPO)}: {found}"
        for path in user_facing_files()
        for found in page.findall(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not hits


def test_the_changelog_has_an_entry_for_this_version() -> None:
    from vlagen import __version__

    headings = [
        line for line in (REPO / "CHANGELOG.md").read_text().splitlines() if line.startswith("## ")
    ]
    assert headings and headings[0].split()[1] == __version__, headings[:1]
