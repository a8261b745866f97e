"""The work ``check``, ``diff`` and ``new`` skip (issue 21) is only ever work whose answer is
already known: the shortcuts give the same answers as the long way, and fall back to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MINIMAL_SPEC
from vlagen import fingerprint, formatting, usercache
from vlagen.api import generate
from vlagen.cli import main
from vlagen.load import load_spec
from vlagen.tree import File, FileTree, Mode

LR_CHANGED = MINIMAL_SPEC.replace("group_size: 2", "group_size: 2\n  learning_rate: 3.0e-5")


@pytest.fixture
def made(runner, spec_file, tmp_path) -> tuple[Path, Path]:
    """A spec and the package ``new`` made from it."""
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    return spec, out


def _modules_after(args: list[str]) -> set[str]:
    code = (
        "import sys\nfrom vlagen.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit as exc:\n    print(exc.code)\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    code, modules = done.stdout.splitlines()[-2:]
    assert code == "0", done.stdout + done.stderr
    return set(modules.split())


def test_an_up_to_date_output_is_checked_without_regenerating(made) -> None:
    spec, out = made
    for command in ("check", "diff"):
        loaded = _modules_after([command, str(spec), "-o", str(out)])
        assert not {"pydantic", "jinja2", "vlagen.spec", "vlagen.render"} & loaded, command
    assert fingerprint.is_up_to_date(spec, out)


def test_the_shortcut_answers_only_nothing_to_report(runner, made, spec_file) -> None:
    spec, out = made
    assert fingerprint.is_up_to_date(spec, out)
    # an edited file: the long way names it
    edited = out / "src/tiny_vla/spec.py"
    edited.write_text(edited.read_text() + "# mine\n")
    assert not fingerprint.is_up_to_date(spec, out)
    check = runner.invoke(main, ["check", str(spec), "-o", str(out)])
    assert (check.exit_code, check.output) == (1, f"edited    {edited}  (edited by you)\n")
    # a deleted file, and the same again for diff
    edited.unlink()
    assert not fingerprint.is_up_to_date(spec, out)
    assert runner.invoke(main, ["diff", str(spec), "-o", str(out)]).exit_code == 1
    # a changed spec: stale, though every file is as vlagen wrote it
    assert runner.invoke(main, ["regen", str(spec), "-o", str(out), "--force"]).exit_code == 0
    changed = spec_file(LR_CHANGED, "changed.yaml")
    assert not fingerprint.is_up_to_date(changed, out)
    check = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert check.exit_code == 1 and "stale" in check.output
    # a hand-edited manifest is not the manifest the inputs made
    manifest = out / ".vlagen/manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b"\n", b"\n ", 1))
    assert not fingerprint.is_up_to_date(spec, out)


def test_what_regen_leaves_alone_keeps_the_shortcut(made) -> None:
    """A CRLF checkout is not an edit (as the long way says)."""
    spec, out = made
    readme = out / "README.md"
    readme.write_bytes(readme.read_bytes().replace(b"\n", b"\r\n"))
    assert fingerprint.is_up_to_date(spec, out)


def test_nothing_remembered_means_the_long_way(runner, made, monkeypatch) -> None:
    spec, out = made
    monkeypatch.setenv(usercache.CACHE_ENV, "")
    assert not fingerprint.is_up_to_date(spec, out)
    assert runner.invoke(main, ["check", str(spec), "-o", str(out)]).exit_code == 0


def test_the_digest_covers_the_spec_vlagens_files_and_the_libraries(tmp_path, monkeypatch) -> None:
    code = tmp_path / "vlagen"
    (code / "templates").mkdir(parents=True)
    (code / "plan.py").write_text("x = 1\n")
    (code / "templates" / "a.jinja").write_text("{{ a }}\n")
    monkeypatch.setattr(fingerprint, "_code_roots", lambda: [("vlagen", code)])
    digests = []

    def digest(spec: str = "vlagen: 1\n") -> str:
        fingerprint._code_digest.cache_clear()
        digests.append(fingerprint.inputs_digest(spec))
        return digests[-1]

    first = digest()
    assert digest() == first
    digest("vlagen: 1\n# a comment\n")
    (code / "templates" / "a.jinja").write_text("{{ a }}!\n")
    digest()
    (code / "plan.py").write_text("x = 2\n")
    digest()
    monkeypatch.setattr(fingerprint, "_version", lambda name: "9" if name == "ruff" else "1")
    digest()
    fingerprint._code_digest.cache_clear()
    assert len(set(digests)) == len(digests) - 1, "each change gives a new digest"


def test_a_copys_header_is_not_part_of_the_spec(runner, made) -> None:
    """The package's own vlagen.yaml (its header added) is the spec the package came from."""
    _, out = made
    assert fingerprint.is_up_to_date(out / "vlagen.yaml", out)
    assert runner.invoke(main, ["check", str(out / "vlagen.yaml")]).exit_code == 0


def test_formatting_a_file_seen_before_starts_no_ruff(spec_file, monkeypatch) -> None:
    loaded = load_spec(spec_file())
    first = generate(loaded.spec, loaded.text).tree

    def no_ruff(*args, **kwargs):
        raise AssertionError("ruff ran for files it formatted before")

    monkeypatch.setattr(formatting.subprocess, "run", no_ruff)
    assert generate(loaded.spec, loaded.text).tree == first


def test_other_ruff_settings_or_another_path_format_again(monkeypatch) -> None:
    source = b"x = [1,\n  2]\n"
    tree = FileTree(
        {
            "pyproject.toml": File(b"[tool.ruff]\nline-length = 100\n", Mode.GENERATED),
            "a.py": File(source, Mode.GENERATED),
        }
    )
    assert formatting.format_tree(tree)["a.py"].content == b"x = [1, 2]\n"
    runs = []
    real = subprocess.run
    monkeypatch.setattr(
        formatting.subprocess, "run", lambda *a, **k: runs.append(a) or real(*a, **k)
    )
    formatting.format_tree(tree)
    assert runs == []
    magic = b"[tool.ruff.format]\nskip-magic-trailing-comma = true\n"
    other = tree.replace({"pyproject.toml": File(magic, Mode.GENERATED)})
    assert formatting.format_tree(other)["a.py"].content == b"x = [1, 2]\n"
    moved = tree.replace({"b.py": File(source, Mode.GENERATED)})
    formatting.format_tree(moved)
    assert len(runs) == 2


def test_a_spec_loads_only_its_own_targets() -> None:
    code = (
        "import sys\nfrom vlagen.load import load_spec_text\n"
        f"load_spec_text({MINIMAL_SPEC!r})\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    targets = {m.rpartition(".")[2] for m in done.stdout.split() if m.startswith("vlagen.targets.")}
    assert "rlinf_0_3" in targets, "the spec's target"
    assert not {"rlinf_0_2", "siirl_0_2", "verl_0_7", "areal_1_0"} & targets


def test_each_target_module_is_named_after_its_declaration() -> None:
    """What lets a spec's target be found without importing the others."""
    from vlagen.targets import _builtin_modules, all_targets

    declared = {t.key for t in all_targets()}
    assert {f"{f}@{v}" for f, v in _builtin_modules()} == declared


def test_versions_read_off_folder_names_are_the_installed_ones() -> None:
    from importlib import metadata

    for name in fingerprint.LIBRARIES:
        assert fingerprint._version(name) == metadata.version(name), name
