"""What every golden's README (and its ``vlagen.yaml``) tells a user to run, install or open
exists: vlagen is installed from its source (it is on no package index, and has no release
tag), the files they name are in the package, and the pre-commit hook they show is one
pre-commit accepts and that passes on the package as generated."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import GOLDENS
from vlagen.cli import main
from vlagen.schema import schema_text
from vlagen.spec import SCHEMA_FILE

PACKAGES = sorted(p for p in GOLDENS.iterdir() if (p / "vlagen.yaml").is_file())
ids = [p.name for p in PACKAGES]

#: Package paths a README names: from the package root, or (``targets/...``) from its
#: import package. Other bare file names (``config.yaml``, ``actor.py``) name a target's
#: files or the framework's, by the section they are in.
ROOTED = re.compile(r"`((?:src|tests|\.vlagen)/[\w./-]+|vlagen\.[\w.]+|pyproject\.toml)`")
IN_PACKAGE = re.compile(r"`(targets/[\w./-]+\.\w+)`")
#: What a command the README describes writes later: ``regen --force`` keeps edits there.
WRITTEN_LATER = {".vlagen/kept"}
LINK = re.compile(r"\]\(([^)\s]+)\)")
URL = re.compile(r"https?://[^\s)>`'\"]+")
#: What pre-commit requires of a hook defined in the config (``repo: local``).
LOCAL_HOOK_KEYS = {"id", "name", "entry", "language"}
#: pre-commit's languages that install nothing: the hook runs what is on PATH.
SYSTEM_LANGUAGES = {"system", "unsupported"}


def _readme(package: Path) -> str:
    return (package / "README.md").read_text(encoding="utf-8")


def _import_package(package: Path) -> Path:
    (src,) = (package / "src").iterdir()
    return src


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


@pytest.mark.parametrize("package", PACKAGES, ids=ids)
def test_vlagen_is_installed_from_its_source(package: Path) -> None:
    text = _readme(package)
    assert not re.search(r"pip install\s+['\"]?vlagen\b(?![\w/.-])", text)
    assert "vlagen==" not in text
    assert not [url for url in URL.findall(text) if "vlagen" in url]  # none is published
    version = json.loads((package / ".vlagen" / "manifest.json").read_text())["vlagen"]
    commands = "\n".join(_blocks(text, "bash"))
    assert re.search(r"^pip install \S+ +# your checkout of vlagen's repository$", commands, re.M)
    assert re.search(rf"^vlagen --version +# vlagen, version {re.escape(version)}$", commands, re.M)
    assert f'__version__ = "{version}"' in text  # how to tell the checkout's version


@pytest.mark.parametrize("package", PACKAGES, ids=ids)
def test_every_file_the_readme_names_is_in_the_package(package: Path) -> None:
    text = _readme(package)
    named = [package / path for path in ROOTED.findall(text)]
    named += [_import_package(package) / path for path in IN_PACKAGE.findall(text)]
    named += [package / link.split("#")[0] for link in LINK.findall(text) if "://" not in link]
    named = [path for path in named if path != package]  # an in-page link (#regenerating)
    assert len(named) > 5
    missing = {str(p.relative_to(package)) for p in named if not p.exists()}
    assert missing - WRITTEN_LATER == set()


@pytest.mark.parametrize("package", PACKAGES, ids=ids)
def test_the_schema_the_spec_names_is_beside_it(package: Path) -> None:
    spec = (package / "vlagen.yaml").read_text(encoding="utf-8")
    schemas = re.findall(r"^# yaml-language-server: \$schema=(\S+)$", spec, re.MULTILINE)
    assert schemas == [SCHEMA_FILE]
    assert (package / SCHEMA_FILE).read_text(encoding="utf-8") == schema_text()
    assert SCHEMA_FILE in _readme(package)


@pytest.mark.parametrize("package", PACKAGES, ids=ids)
def test_the_pre_commit_hook_is_valid_and_passes_on_the_package(
    package: Path, runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pre-commit runs a local hook's ``entry`` plus its ``args`` from the repository root:
    here the package is the repository."""
    (block,) = [b for b in _blocks(_readme(package), "yaml") if b.startswith("repos:")]
    config = yaml.safe_load(block)
    (repo,) = config["repos"]
    assert repo == {"repo": "local", "hooks": repo["hooks"]}  # no rev: vlagen has no tags
    (hook,) = repo["hooks"]
    assert set(hook) >= LOCAL_HOOK_KEYS
    assert hook["language"] in SYSTEM_LANGUAGES
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    program, *entry = hook["entry"].split()
    assert program == "vlagen"
    copy = tmp_path / "repo"
    shutil.copytree(package, copy)
    monkeypatch.chdir(copy)
    result = runner.invoke(main, [*entry, *hook["args"]])
    assert result.exit_code == 0, result.output
    (_import_package(copy) / "spec.json").unlink()  # a generated file gone: check fails
    assert runner.invoke(main, [*entry, *hook["args"]]).exit_code == 1
