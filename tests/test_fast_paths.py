"""The work ``check``, ``diff`` and ``new`` skip (issue 21) is only ever work whose answer is
already known: the shortcuts give the same answers as the long way, and fall back to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MINIMAL_SPEC, SPECS
from vlagen import fingerprint, formatting, usercache
from vlagen.api import generate
from vlagen.cli import main
from vlagen.load import load_spec
from vlagen.tree import File, FileTree, Mode

LR_CHANGED = MINIMAL_SPEC.replace("group_size: 2", "group_size: 2\n  learning_rate: 3.0e-5")


@pytest.fixture
def made(runner, spec_file, tmp_path) -> tuple[Path, Path]:
    """A spec and the package ``new`` made from it, checked once (the long way, which
    remembers what it compared against)."""
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    assert runner.invoke(main, ["check", str(spec), "-o", str(out)]).exit_code == 0
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
    for command in (["check"], ["check", "--strict"], ["diff"]):
        loaded = _modules_after([*command, str(spec), "-o", str(out)])
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
    assert (check.exit_code, check.output) == (0, f"edited    {edited}  (your edit, kept)\n")
    strict = runner.invoke(main, ["check", str(spec), "-o", str(out), "--strict"])
    assert (strict.exit_code, strict.stdout) == (1, f"edited    {edited}  (your edit, kept)\n")
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


def test_a_crlf_manifest_is_not_the_manifest_vlagen_wrote(made) -> None:
    """Generated files are compared with CRLF read as LF; the manifest byte for byte."""
    spec, out = made
    manifest = out / ".vlagen/manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b"\n", b"\r\n"))
    assert not fingerprint.is_up_to_date(spec, out)


def test_what_the_comparison_refuses_is_not_taken_for_up_to_date(runner, tmp_path) -> None:
    """A symlink or a folder where the comparison reads (a scaffold, the merge bases) is the
    comparison's error (exit 2), not a silent 0."""
    spec = next(s for s in SPECS if s.stem == "cartpole_custom")
    for case in ("scaffold-link", "scaffold-dir", "bases-link"):
        out = tmp_path / case
        assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
        assert runner.invoke(main, ["check", str(spec), "-o", str(out)]).exit_code == 0
        assert fingerprint.is_up_to_date(spec, out)
        scaffold = out / "src/cartpole_pixels/policy_net.py"
        bases = out / ".vlagen/base"
        if case == "scaffold-link":
            scaffold.rename(tmp_path / f"{case}.py")
            scaffold.symlink_to(tmp_path / f"{case}.py")
        elif case == "scaffold-dir":
            scaffold.unlink()
            scaffold.mkdir()
        else:
            bases.rename(tmp_path / f"{case}-bases")
            bases.symlink_to(tmp_path / f"{case}-bases")
        assert not fingerprint.is_up_to_date(spec, out), case
        assert runner.invoke(main, ["check", str(spec), "-o", str(out)]).exit_code == 2, case


def test_a_plugins_target_is_never_taken_for_up_to_date(made, monkeypatch) -> None:
    """A third-party target's code is not in the digest."""
    spec, out = made
    monkeypatch.setattr(fingerprint, "builtin_targets", lambda: {})
    assert not fingerprint.is_up_to_date(spec, out)


def test_only_the_cli_remembers_and_only_what_its_text_loads_to(spec_file, monkeypatch) -> None:
    """A spec object passed to the API with some text need not be what that text loads to."""
    written = []
    monkeypatch.setattr(usercache, "write", lambda *args: written.append(args))
    loaded = load_spec(spec_file())
    generate(loaded.spec, loaded.text)
    assert [w for w in written if w[0] is not None and w[0].name == "outputs"] == []


def test_a_stream_is_left_to_the_slow_path() -> None:
    assert fingerprint._spec_text(Path("/dev/stdin")) is None
    assert fingerprint._spec_text(Path("/dev/fd/0")) is None


def test_a_cache_entry_that_is_not_whole_is_not_read(tmp_path) -> None:
    usercache.write(tmp_path, "k", b"formatted text\n")
    assert usercache.read(tmp_path, "k") == b"formatted text\n"
    entry = tmp_path / "k"
    entry.write_bytes(entry.read_bytes()[:-3])
    assert usercache.read(tmp_path, "k") is None
    entry.write_bytes(b"")
    assert usercache.read(tmp_path, "k") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"], "no temporary files left"


def test_what_regen_leaves_alone_keeps_the_shortcut(made) -> None:
    """A CRLF checkout is not an edit (as the long way says)."""
    spec, out = made
    readme = out / "README.md"
    readme.write_bytes(readme.read_bytes().replace(b"\n", b"\r\n"))
    assert fingerprint.is_up_to_date(spec, out)


def test_the_commands_that_compare_remember_and_new_does_not(
    runner, spec_file, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv(usercache.CACHE_ENV, str(tmp_path / "cache"))
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    assert not fingerprint.is_up_to_date(spec, out)
    assert runner.invoke(main, ["diff", str(spec), "-o", str(out)]).exit_code == 0
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

    monkeypatch.setattr(formatting, "_ruff_format", no_ruff)
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
    real = formatting._ruff_format
    monkeypatch.setattr(formatting, "_ruff_format", lambda *a, **k: runs.append(a) or real(*a, **k))
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
    from vlagen.paths import builtin_targets
    from vlagen.targets import all_targets

    declared = {t.key for t in all_targets()}
    assert {f"{f}@{v}" for f, v in builtin_targets()} == declared


def test_versions_read_off_folder_names_are_the_installed_ones() -> None:
    from importlib import metadata

    for name in fingerprint.LIBRARIES:
        assert fingerprint._version(name) == metadata.version(name), name


@pytest.mark.parametrize("text", [b"", b"one\n", b"one\ntwo", b"a\r\nb\n\n"])
def test_a_new_or_deleted_file_counts_its_lines_as_a_diff_would(text) -> None:
    import difflib

    from vlagen.sync import Action, Change, _lines, line_counts

    lines = _lines(text)
    diffed = sum(
        line.startswith("+") and not line.startswith("+++")
        for line in difflib.unified_diff([], lines, n=0)
    )
    file = File(text, Mode.GENERATED)
    assert line_counts(Change(Action.CREATE, "f", None, file, write=text)) == (diffed, 0)
    assert line_counts(Change(Action.DELETE, "f", text, None)) == (0, diffed)
