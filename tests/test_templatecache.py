"""Compiled templates are kept between runs and never served stale or fail a run."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from vlagen.templatecache import bytecode_cache
from vlagen.usercache import CACHE_ENV

SETTINGS = (("trim_blocks", True),)


def _env(templates: Path) -> jinja2.Environment:
    cache = bytecode_cache(SETTINGS)
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates), bytecode_cache=cache, trim_blocks=True
    )


def test_a_second_run_reads_the_compiled_template_and_an_edit_recompiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "t.jinja").write_text("{{ x }} one")
    assert _env(templates).get_template("t.jinja").render(x=1) == "1 one"
    (entry,) = (tmp_path / "cache").glob("*/*")
    compiled = []
    monkeypatch.setattr(
        jinja2.Environment, "_compile", lambda self, *a: compiled.append(a) or _COMPILE(self, *a)
    )
    assert _env(templates).get_template("t.jinja").render(x=2) == "2 one"
    assert compiled == []  # read from the cache
    (templates / "t.jinja").write_text("{{ x }} two")
    assert _env(templates).get_template("t.jinja").render(x=3) == "3 two"
    assert len(compiled) == 1 and entry.exists()


def test_settings_that_change_compiled_code_get_their_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert bytecode_cache(SETTINGS).directory != bytecode_cache((("trim_blocks", False),)).directory


def test_an_unwritable_or_disabled_cache_only_costs_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocked))
    assert bytecode_cache(SETTINGS) is None
    monkeypatch.setenv(CACHE_ENV, "")
    assert bytecode_cache(SETTINGS) is None
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "t.jinja").write_text("{{ x }}")
    assert _env(templates).get_template("t.jinja").render(x=4) == "4"


_COMPILE = jinja2.Environment._compile
