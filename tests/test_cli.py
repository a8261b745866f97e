"""The CLI's contract: exit codes, what each command writes, and what it refuses to do."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import MINIMAL_SPEC, SPECS
from vlagen.cli import main

RENAMED = MINIMAL_SPEC.replace("name: tiny-vla", "name: tiny-vla\n  package: renamed")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


LR_CHANGED = MINIMAL_SPEC.replace("group_size: 2", "group_size: 2\n  learning_rate: 3.0e-5")


def test_new_check_edit_diff_regen_cycle(runner, spec_file, tmp_path) -> None:
    spec, out = spec_file(), tmp_path / "out"
    result = runner.invoke(main, ["new", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "create    src/tiny_vla/spec.py" in result.output
    assert runner.invoke(main, ["check", str(spec), "-o", str(out)]).exit_code == 0

    edited = out / "src/tiny_vla/spec.py"
    edited.write_text(edited.read_text() + "# my tweak\n")
    check = runner.invoke(main, ["check", str(spec), "-o", str(out)])
    assert (check.exit_code, check.output) == (0, f"edited    {edited}  (your edit, kept)\n")
    # An edit is not a difference regen would make: diff is empty, regen keeps it.
    diff = runner.invoke(main, ["diff", str(spec), "-o", str(out)])
    assert (diff.exit_code, diff.output) == (0, "")
    kept = runner.invoke(main, ["regen", str(spec), "-o", str(out)])
    assert kept.exit_code == 0, kept.output
    assert "edited    src/tiny_vla/spec.py  (edited by you)" in kept.output
    assert edited.read_text().endswith("# my tweak\n")

    # A spec change that reaches the edited file is merged into it.
    changed = spec_file(LR_CHANGED, "changed.yaml")
    stat = runner.invoke(main, ["diff", str(changed), "-o", str(out), "--stat"])
    assert stat.exit_code == 1
    assert "src/tiny_vla/spec.py | +2 -2" in stat.output
    merged = runner.invoke(main, ["regen", str(changed), "-o", str(out)])
    assert merged.exit_code == 0, merged.output
    assert "merge     src/tiny_vla/spec.py  +2 -2  (your edits merged into the new output)" in (
        merged.output
    )
    text = edited.read_text()
    assert "learning_rate=3e-05," in text and text.endswith("# my tweak\n")
    check = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert (check.exit_code, check.output) == (0, f"edited    {edited}  (your edit, kept)\n")

    forced = runner.invoke(main, ["regen", str(changed), "-o", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    copy = ".vlagen/kept/src/tiny_vla/spec.py"
    assert f"overwrite src/tiny_vla/spec.py  +0 -1  (your version saved as {copy})" in (
        forced.output
    )
    assert (out / copy).read_text() == text, "--force keeps a copy of what it discards"
    assert runner.invoke(main, ["check", str(changed), "-o", str(out)]).exit_code == 0
    assert runner.invoke(main, ["diff", str(changed), "-o", str(out)]).output == ""


def test_a_conflict_is_marked_reported_and_resolved(runner, spec_file, tmp_path) -> None:
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    edited = out / "src/tiny_vla/spec.py"
    mine = edited.read_text().replace("learning_rate=1e-05,", "learning_rate=5e-05,  # mine")
    edited.write_text(mine)
    changed = spec_file(LR_CHANGED, "changed.yaml")

    dry = runner.invoke(main, ["regen", str(changed), "-o", str(out), "--dry-run"])
    assert dry.exit_code == 1, "a dry run exits as the regen would"
    assert "conflict  src/tiny_vla/spec.py" in dry.output
    assert edited.read_text() == mine
    before = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert before.exit_code == 1, "regen would stop there"
    assert "both changed, marked in the file" in before.stdout
    assert (
        f"vlagen: 1 file holds an edit that conflicts with the new output: `vlagen regen "
        f"{changed} -o {out}` marks the regions in the file; resolve them, then run it again"
    ) in before.stderr, "no markers are on disk yet, so check does not ask to resolve them"
    assert edited.read_text() == mine

    regen = runner.invoke(main, ["regen", str(changed), "-o", str(out)])
    assert regen.exit_code == 1
    assert "1 region you and vlagen both changed, marked in the file" in regen.output
    assert "1 file needs you: resolve the regions between `<<<<<<< yours`" in regen.output
    text = edited.read_text()
    assert (
        "<<<<<<< yours\n        learning_rate=5e-05,  # mine\n"
        "||||||| generated before\n        learning_rate=1e-05,\n"
        "=======\n        learning_rate=3e-05,\n>>>>>>> generated now\n"
    ) in text
    assert (out / "src/tiny_vla/spec.json").read_text().count("3e-05") == 1, "the rest written"

    again = runner.invoke(main, ["regen", str(changed), "-o", str(out)])
    assert again.exit_code == 1
    assert "it holds conflict markers (<<<<<<< yours ...); resolve them" in again.output
    check = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert check.exit_code == 1 and f"conflict  {edited}" in check.stdout
    assert "vlagen: 1 file needs you: resolve the regions between `<<<<<<< yours`" in check.stderr
    assert runner.invoke(main, ["check", str(changed), "-o", str(out)]).exit_code == 1

    start, end = text.index("<<<<<<< yours\n"), text.index(">>>>>>> generated now\n")
    resolved = text[:start] + "        learning_rate=5e-05,  # mine\n" + text[end + 22 :]
    edited.write_text(resolved)
    done = runner.invoke(main, ["regen", str(changed), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert edited.read_text() == resolved


def test_check_passes_a_kept_edit_lists_it_and_strict_fails_it(runner, spec_file, tmp_path) -> None:
    """Issue 30: a kept (merged) edit is what the owner wants; CI must not fail forever."""
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    edited = out / "src/tiny_vla/spec.py"
    edited.write_text(edited.read_text() + "# my tweak\n")
    changed = spec_file(LR_CHANGED, "changed.yaml")
    assert runner.invoke(main, ["regen", str(changed), "-o", str(out)]).exit_code == 0
    listed = f"edited    {edited}  (your edit, kept)\n"
    check = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert (check.exit_code, check.stdout, check.stderr) == (0, listed, "")
    strict = runner.invoke(main, ["check", str(changed), "-o", str(out), "--strict"])
    assert (strict.exit_code, strict.stdout) == (1, listed)
    assert strict.stderr.startswith("vlagen: --strict: your edits in 1 file fail the check")
    edited.write_text(edited.read_text().removesuffix("# my tweak\n"))
    reverted = runner.invoke(main, ["check", str(changed), "-o", str(out), "--strict"])
    assert (reverted.exit_code, reverted.output) == (0, "")


def test_check_fails_a_stale_package_and_says_to_regen(runner, spec_file, tmp_path) -> None:
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    edited = out / "src/tiny_vla/spec.py"
    edited.write_text(edited.read_text() + "# my tweak\n")
    changed = spec_file(LR_CHANGED, "changed.yaml")
    check = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert check.exit_code == 1
    assert check.stdout == (
        f"stale     {out / 'README.md'}\n"  # its note on the rate's steps in bfloat16
        f"stale     {out / 'src/tiny_vla/spec.json'}\n"
        f"stale     {edited}  (regen merges your edits in)\n"
        f"stale     {out / 'src/tiny_vla/targets/rlinf/config.yaml'}\n"
        f"stale     {out / 'vlagen.yaml'}\n"
        f"stale     {out / '.vlagen/manifest.json'}\n"
    )
    assert check.stderr == (
        f"vlagen: {out} is stale (6 files differ from what the spec generates): "
        f"run `vlagen regen {changed} -o {out}`\n"
    )
    assert runner.invoke(main, ["regen", str(changed), "-o", str(out)]).exit_code == 0
    assert runner.invoke(main, ["check", str(changed), "-o", str(out)]).exit_code == 0


def test_a_dry_run_refuses_exactly_as_the_run_does(runner, spec_file, tmp_path) -> None:
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    edited = out / "src/tiny_vla/spec.py"
    edited.write_text(edited.read_text() + "# mine\n")
    shutil.rmtree(out / ".vlagen/base")
    changed = spec_file(LR_CHANGED, "changed.yaml")
    before = _files(out)
    dry = runner.invoke(main, ["regen", str(changed), "-o", str(out), "--dry-run"])
    real = runner.invoke(main, ["regen", str(changed), "-o", str(out)])
    assert dry.exit_code == real.exit_code == 1
    assert dry.output == real.output
    assert "src/tiny_vla/spec.py: edited by you, and its merge base" in real.output
    assert _files(out) == before, "nothing written"
    diff = runner.invoke(main, ["diff", str(changed), "-o", str(out), "--stat"])
    assert diff.exit_code == 1 and "refuse    src/tiny_vla/spec.py" in diff.output
    check = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert check.exit_code == 1
    assert f"refused   {edited}  (edited by you, and its merge base" in check.stdout
    assert "vlagen: regen refuses 1 file (as each line says)" in check.stderr


def test_a_crlf_checkout_is_not_an_edit(runner, spec_file, tmp_path) -> None:
    """git's core.autocrlf turns every LF into CRLF on checkout (Windows)."""
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    for path in out.rglob("*"):
        if path.is_file() and path.name != "manifest.json":
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    check = runner.invoke(main, ["check", str(spec), "-o", str(out)])
    assert (check.exit_code, check.output) == (0, "")
    edited = out / "src/tiny_vla/spec.py"
    edited.write_bytes(edited.read_bytes() + b"# mine\r\n")
    regen = runner.invoke(main, ["regen", str(spec_file(LR_CHANGED, "c.yaml")), "-o", str(out)])
    assert regen.exit_code == 0, regen.output
    assert "merge     src/tiny_vla/spec.py" in regen.output
    assert "update    src/tiny_vla/spec.json" in regen.output
    assert edited.read_bytes().endswith(b"# mine\n")


def test_default_output_dir_is_the_project_name(runner, spec_file, tmp_path, monkeypatch) -> None:
    spec = spec_file()
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(main, ["new", str(spec)]).exit_code == 0
    assert (tmp_path / "tiny-vla" / ".vlagen" / "manifest.json").is_file()


def test_two_runs_are_byte_identical(runner, tmp_path) -> None:
    for spec in SPECS:
        a, b = tmp_path / spec.stem / "a", tmp_path / spec.stem / "b"
        assert runner.invoke(main, ["new", str(spec), "-o", str(a)]).exit_code == 0
        assert runner.invoke(main, ["new", str(spec), "-o", str(b)]).exit_code == 0
        assert _files(a) == _files(b)


def test_dry_run_writes_nothing(runner, spec_file, tmp_path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(main, ["new", str(spec_file()), "-o", str(out), "--dry-run"])
    assert result.exit_code == 0
    assert "create    pyproject.toml" in result.output
    assert "dry run: nothing written" in result.output
    assert not out.exists()


def test_new_marks_the_scaffold_files_as_the_users(runner, tmp_path) -> None:
    """Issue 30: a scaffold is written once and is the user's from then on; say so."""
    spec = next(s for s in SPECS if s.stem == "cartpole_custom")
    out = tmp_path / "out"
    for args in (["--dry-run"], []):
        result = runner.invoke(main, ["new", str(spec), "-o", str(out), *args])
        assert result.exit_code == 0, result.output
        marked = [line for line in result.output.splitlines() if "(scaffold: " in line]
        assert len(marked) == 1, result.output
        assert marked[0].startswith("create    src/cartpole_pixels/policy_net.py  +")
        assert marked[0].endswith("  (scaffold: yours from now on)")
        generated = re.compile(r"create    src/cartpole_pixels/spec\.py  \+\d+ -0")
        assert any(generated.fullmatch(line) for line in result.output.splitlines()), "unmarked"
    assert (
        (out / "src/cartpole_pixels/policy_net.py").read_text().startswith("# Scaffolded by vlagen")
    )


def test_new_refuses_a_foreign_non_empty_dir(runner, spec_file, tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refused = runner.invoke(main, ["new", str(spec_file()), "-o", str(out)])
    assert refused.exit_code == 1
    assert "vlagen did not make it" in refused.output
    assert _files(out) == {"notes.txt": b"mine"}
    forced = runner.invoke(main, ["new", str(spec_file()), "-o", str(out), "--force"])
    assert forced.exit_code == 0
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("args", [[], ["--dry-run"], ["--force"]], ids=["run", "dry", "force"])
def test_new_refuses_a_vlagen_output_and_points_at_regen(
    runner, spec_file, tmp_path, args: list[str]
) -> None:
    """Issue 30: `new` over an existing package silently regenerated it from another spec."""
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    before = _files(out)
    again = runner.invoke(main, ["new", str(spec), "-o", str(out), *args])
    assert again.exit_code == 2
    assert again.output.startswith(
        f"vlagen: {out} is already a vlagen output, generated from this spec. `vlagen new` "
        "only makes new packages"
    )
    assert (
        "nothing was written. To regenerate this one, keeping your edits: "
        f"`vlagen regen {spec} -o {out}`" in again.output
    )
    other = spec_file(LR_CHANGED, "other.yaml")
    refused = runner.invoke(main, ["new", str(other), "-o", str(out), *args])
    assert refused.exit_code == 2
    assert refused.output.startswith(
        f"vlagen: {out} holds a package generated from a different spec (its vlagen.yaml); "
        f"`vlagen regen` would regenerate it from {other}. "
    )
    assert f"`vlagen regen {other} -o {out}`" in refused.output
    assert "Traceback" not in refused.output
    assert _files(out) == before, "nothing written"
    (out / "vlagen.yaml").unlink()
    copyless = runner.invoke(main, ["new", str(spec), "-o", str(out), *args])
    assert copyless.exit_code == 2
    assert "whose spec copy vlagen.yaml is missing; `vlagen regen` would" in copyless.output
    (out / ".vlagen" / "manifest.json").write_text("garbage")
    unreadable = runner.invoke(main, ["new", str(spec), "-o", str(out), *args])
    assert unreadable.exit_code == 2
    assert "unreadable vlagen manifest" in unreadable.output
    assert "delete it and run `vlagen new --force`" in unreadable.output


def test_regen_check_and_diff_need_a_vlagen_output(runner, spec_file, tmp_path) -> None:
    spec, typo, other = spec_file(), tmp_path / "mistyped", tmp_path / "other"
    other.mkdir()
    missing = (
        f"vlagen: {typo} does not exist (a mistyped -o DIR? `vlagen new` makes a new package)\n"
    )
    foreign = (
        f"vlagen: {other} has no .vlagen/manifest.json, so it is not a vlagen output; "
        "use `vlagen new` to create one\n"
    )
    for command in (["regen"], ["check"], ["diff"], ["diff", "--stat"], ["regen", "--dry-run"]):
        result = runner.invoke(main, [*command, str(spec), "-o", str(typo)])
        assert (result.exit_code, result.output) == (2, missing), command
        result = runner.invoke(main, [*command, str(spec), "-o", str(other)])
        assert (result.exit_code, result.output) == (2, foreign), command
    assert not typo.exists() and list(other.iterdir()) == []


def test_the_package_carries_its_spec_and_regenerates_from_it(
    runner, spec_file, tmp_path, monkeypatch
) -> None:
    spec, out = spec_file("# my notes\n" + MINIMAL_SPEC), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    copy = out / "vlagen.yaml"
    text = copy.read_text()
    assert text.startswith("# Generated by vlagen ") and text.endswith(
        "# my notes\n" + MINIMAL_SPEC
    )
    monkeypatch.chdir(out)  # the package alone: its spec, no -o
    assert runner.invoke(main, ["check", "vlagen.yaml"]).exit_code == 0
    copy.write_text(text.replace("group_size: 2", "group_size: 2\n  learning_rate: 3.0e-5"))
    regen = runner.invoke(main, ["regen", "vlagen.yaml"])
    assert regen.exit_code == 0, regen.output
    assert "update    src/tiny_vla/spec.py" in regen.output
    assert "vlagen.yaml" not in regen.output.split("wrote")[0], "the edited spec is the copy"
    assert "learning_rate=3e-05," in (out / "src/tiny_vla/spec.py").read_text()
    assert runner.invoke(main, ["check", "vlagen.yaml"]).exit_code == 0


def test_regen_removes_files_no_longer_generated(runner, spec_file, tmp_path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec_file()), "-o", str(out)]).exit_code == 0
    renamed = spec_file(RENAMED)
    stale = runner.invoke(main, ["check", str(renamed), "-o", str(out)])
    assert stale.exit_code == 1
    assert "obsolete" in stale.output and "missing" in stale.output
    result = runner.invoke(main, ["regen", str(renamed), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "delete    src/tiny_vla/spec.py" in result.output
    assert not (out / "src" / "tiny_vla").exists(), "emptied package directory is pruned"
    assert (out / "src" / "renamed" / "spec.py").is_file()


def test_regen_keeps_an_edited_obsolete_file(runner, spec_file, tmp_path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec_file()), "-o", str(out)]).exit_code == 0
    (out / "src/tiny_vla/spec.py").write_text("# mine now\n")
    renamed = spec_file(RENAMED)
    # reported until the user deals with it: where it went on the regen that moved it
    for said in ("generated at src/renamed/spec.py now, without your edit", "no longer generated"):
        result = runner.invoke(main, ["regen", str(renamed), "-o", str(out)])
        assert result.exit_code == 1
        assert f"conflict  src/tiny_vla/spec.py  ({said}" in result.output
        assert (out / "src/tiny_vla/spec.py").read_text() == "# mine now\n"
        assert (out / "src" / "renamed" / "spec.py").is_file(), "the rest is written"
    forced = runner.invoke(main, ["regen", str(renamed), "-o", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert not (out / "src/tiny_vla/spec.py").exists()
    assert (out / ".vlagen/kept/src/tiny_vla/spec.py").read_text() == "# mine now\n"
    assert runner.invoke(main, ["check", str(renamed), "-o", str(out)]).exit_code == 0


def test_invalid_spec_exits_2_and_writes_nothing(runner, spec_file, tmp_path) -> None:
    out = tmp_path / "out"
    spec = spec_file(MINIMAL_SPEC.replace("state_dim: 0", "state_dim: -1"))
    for command in (["new", str(spec), "-o", str(out)], ["validate", str(spec)]):
        result = runner.invoke(main, command)
        assert result.exit_code == 2
        assert f"{spec}:13:14: env.state_dim: Input should be greater than or equal to 0" in (
            result.output
        )
        assert "Traceback" not in result.output
    assert not out.exists()


def test_validate_ok(runner) -> None:
    for spec in SPECS:
        result = runner.invoke(main, ["validate", str(spec)])
        assert result.exit_code == 0
        assert "valid" in result.output


def test_usage_errors_exit_2(runner) -> None:
    assert runner.invoke(main, ["new"]).exit_code == 2
    assert runner.invoke(main, ["frobnicate"]).exit_code == 2


def test_schema_is_draft_2020_12_and_accepts_the_examples(runner) -> None:
    result = runner.invoke(main, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for spec in SPECS:
        validator.validate(yaml.safe_load(spec.read_text()))
    assert not validator.is_valid({"vlagen": 1, "project": {"name": "x", "nope": 1}})


def test_every_schema_property_is_documented(runner) -> None:
    schema = json.loads(runner.invoke(main, ["schema"]).output)
    undocumented = [
        f"{model}.{name}"
        for model, definition in [("Spec", schema), *schema["$defs"].items()]
        for name, prop in definition.get("properties", {}).items()
        if not (prop.get("description") or _referenced(schema, prop).get("description"))
    ]
    assert undocumented == []


def _referenced(schema: dict, prop: dict) -> dict:
    ref = prop.get("$ref", "")
    return schema["$defs"][ref.rsplit("/", 1)[-1]] if ref else {}


def test_committed_schema_is_current(runner) -> None:
    committed = (SPECS[0].parent / "vlagen.schema.json").read_text()
    assert committed == runner.invoke(main, ["schema"]).output


def test_init_writes_a_valid_starter(runner, tmp_path) -> None:
    path = tmp_path / "new" / "spec.yaml"
    assert runner.invoke(main, ["init", str(path)]).exit_code == 0
    assert path.read_text().startswith("# yaml-language-server: $schema=vlagen.schema.json\n")
    assert json.loads((path.parent / "vlagen.schema.json").read_text())["title"] == "vlagen spec"
    assert runner.invoke(main, ["validate", str(path)]).exit_code == 0
    refused = runner.invoke(main, ["init", str(path)])
    assert refused.exit_code == 1 and f"{path} exists; use --force" in refused.output


def test_a_second_spec_shares_the_schema_beside_the_first(runner, tmp_path) -> None:
    """The schema is vlagen's, not the spec's: a second spec in the folder (a starter, an
    example) is written beside the same schema, which is left as it is."""
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    assert runner.invoke(main, ["init", str(first)]).exit_code == 0
    schema = tmp_path / "vlagen.schema.json"
    before = schema.stat().st_mtime_ns
    result = runner.invoke(main, ["init", "--example", "highway_openvla", str(second)])
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote {second}; next: vlagen new {second}\n"
    assert second.is_file() and schema.stat().st_mtime_ns == before
    listed = runner.invoke(main, ["init", "--example", "list", str(tmp_path / "c.yaml")])
    assert listed.exit_code == 2 and "writes no PATH" in listed.output


@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_init_writes_each_shipped_example(runner, tmp_path, monkeypatch, spec: Path) -> None:
    """Issue 30: a user who installed the wheel has the examples too, not only the starter."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["init", "--example", spec.stem])
    assert result.exit_code == 0, result.output
    written = tmp_path / spec.name
    assert written.read_bytes() == spec.read_bytes()
    assert written.read_text().startswith("# yaml-language-server: $schema=vlagen.schema.json\n")
    assert json.loads((tmp_path / "vlagen.schema.json").read_text())["title"] == "vlagen spec"
    assert runner.invoke(main, ["validate", spec.name]).exit_code == 0
    assert (
        result.output == f"wrote {spec.name} and vlagen.schema.json; next: vlagen new {spec.name}\n"
    )


def test_init_example_generates_lists_and_suggests(runner, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    listed = runner.invoke(main, ["init", "--example", "list"])
    assert listed.exit_code == 0
    assert [line.split()[0] for line in listed.output.splitlines()] == [s.stem for s in SPECS]
    assert "highway_openvla        An OpenVLA-style policy driving highway-env" in listed.output
    assert list(tmp_path.iterdir()) == []
    wrong = runner.invoke(main, ["init", "--example", "higway_openvla"])
    assert wrong.exit_code == 2
    assert wrong.output.startswith(
        "vlagen: no example spec 'higway_openvla' (did you mean 'highway_openvla'?); "
        "examples: cartpole_custom, highway_openvla,"
    )
    both = runner.invoke(main, ["init", "--example", "highway_openvla", "--from-gymnasium", "x"])
    assert both.exit_code == 2 and "give one" in both.output
    assert list(tmp_path.iterdir()) == [], "nothing written"
    made = runner.invoke(main, ["init", "--example", "cartpole_custom", "specs/mine.yaml"])
    assert made.exit_code == 0, made.output
    new = runner.invoke(main, ["new", "specs/mine.yaml", "-o", "pkg"])
    assert new.exit_code == 0, new.output
    assert runner.invoke(main, ["check", "specs/mine.yaml", "-o", "pkg"]).exit_code == 0


@pytest.mark.parametrize("at", ["vlagen.yaml", "vlagen.schema.json"])
@pytest.mark.parametrize("dangling", [False, True], ids=["to_a_file", "dangling"])
def test_init_never_writes_through_a_symlink(
    runner, tmp_path, monkeypatch, at: str, dangling: bool
) -> None:
    work, victim = tmp_path / "work", tmp_path / "victim.txt"
    work.mkdir()
    if not dangling:
        victim.write_text("precious\n")
    (work / at).symlink_to(victim)
    monkeypatch.chdir(work)
    for args in (["init"], ["init", "--force"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, result.output
        assert result.output == f"vlagen: refusing to write through the symlink {at}\n"
        assert sorted(p.name for p in work.iterdir()) == [at], "nothing else written"
        assert victim.read_text() == "precious\n" if not dangling else not victim.exists()


def test_init_keeps_an_existing_schema_unless_forced(runner, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vlagen.schema.json").write_text("mine\n")
    refused = runner.invoke(main, ["init"])
    assert refused.exit_code == 1
    assert refused.output == "vlagen: vlagen.schema.json exists; use --force to overwrite it\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vlagen.schema.json"]
    assert (tmp_path / "vlagen.schema.json").read_text() == "mine\n"
    forced = runner.invoke(main, ["init", "--force"])
    assert forced.exit_code == 0, forced.output
    assert json.loads((tmp_path / "vlagen.schema.json").read_text())["title"] == "vlagen spec"
    assert (tmp_path / "vlagen.yaml").is_file()


def test_init_writes_both_files_or_neither(runner, tmp_path, monkeypatch) -> None:
    """A schema that appears after the checks (a race) fails the exclusive create: the starter
    spec already created is removed again, and the schema is left alone."""
    from vlagen.outdir import OutDir

    monkeypatch.chdir(tmp_path)
    real = OutDir.create

    def plant_then_create(self, files, *, replace):
        (tmp_path / "vlagen.schema.json").write_text("theirs\n")
        real(self, files, replace=replace)

    monkeypatch.setattr(OutDir, "create", plant_then_create)
    refused = runner.invoke(main, ["init"])
    assert refused.exit_code == 1, refused.output
    assert "vlagen.schema.json exists" in refused.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vlagen.schema.json"]
    assert (tmp_path / "vlagen.schema.json").read_text() == "theirs\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('"files": []', "files must be an object, got a list"),
        ('"files": {"a.py": "x"}', "files['a.py'] must be an object, got a string"),
        ('"targets": "rlinf"', "targets must be a list, got a string"),
        ('"ruff": 1', "ruff must be a string, got 1"),
        ('"format": "1"', "format '1', this vlagen reads 1"),
    ],
)
def test_a_malformed_manifest_is_a_clean_error(
    runner, spec_file, tmp_path, content: str, expected: str
) -> None:
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    manifest = out / ".vlagen" / "manifest.json"
    data = json.loads(manifest.read_text())
    key = content.split(":")[0].strip('"')
    data[key] = json.loads(content.split(":", 1)[1])
    manifest.write_text(json.dumps(data))
    for command in ("check", "regen", "diff"):
        result = runner.invoke(main, [command, str(spec), "-o", str(out)])
        assert result.exit_code == 2, result.output
        assert f"{manifest}: unreadable vlagen manifest ({expected})" in result.output
        assert "internal error" not in result.output


def test_targets_lists_every_declared_target(runner) -> None:
    result = runner.invoke(main, ["targets"])
    assert result.exit_code == 0
    for line in ("siirl 0.2", "rlinf 0.2", "rlinf 0.3", "verl 0.7", "areal 1.0"):
        assert line in result.output


def test_targets_says_which_backbones_each_takes(runner) -> None:
    """Issue 30: AReaL takes only Qwen-VL backbones, which a user learnt from an error."""
    from vlagen.backbones import BACKBONES
    from vlagen.targets import all_targets

    output = runner.invoke(main, ["targets"]).output
    blocks: dict[str, list[str]] = {}  # each target's lines, under its "framework version"
    for line in output.splitlines():
        if not line.startswith(" "):
            current = line.split("  ", 1)[0]
        blocks.setdefault(current, []).append(line)
    for target in all_targets():
        named = ", ".join(f"{b} ({BACKBONES[b].title})" for b in target.backbones)
        block = blocks[f"{target.framework} {target.version}"]
        assert f"  model backbones (model.backbone): {named}" in block, block
    assert (
        "  model backbones (model.backbone): qwen2_5_vl (Qwen2.5-VL), qwen3_vl (Qwen3-VL)"
        in (blocks["areal 1.0"])
    )
    assert any(
        line.startswith("    only these: AReaL's FSDP engine") for line in blocks["areal 1.0"]
    )
    assert (
        "  model backbones (model.backbone): llava (LLaVA-style), qwen2_5_vl (Qwen2.5-VL), "
        "qwen3_vl (Qwen3-VL)" in blocks["rlinf 0.3"]
    )


def _modules_after(args: list[str]) -> set[str]:
    code = (
        "import sys\nfrom vlagen.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.splitlines()[-1].split())


def test_help_is_light_and_nothing_imports_torch(tmp_path) -> None:
    help_modules = _modules_after(["--help"])
    assert not {"torch", "pydantic", "jinja2"} & help_modules
    spec, out = str(SPECS[0]), str(tmp_path / "out")
    subprocess.run(
        [sys.executable, "-m", "vlagen", "new", spec, "-o", out], check=True, capture_output=True
    )
    for args in (["validate", spec], ["check", spec, "-o", out], ["diff", spec, "-o", out]):
        assert "torch" not in _modules_after(args), args


def _entries(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``; a symlink as its target, not followed."""
    return {
        str(p.relative_to(root)): str(p.readlink()) if p.is_symlink() else p.read_bytes()
        for p in root.rglob("*")
        if p.is_symlink() or p.is_file()
    }


def test_regen_refuses_a_symlink_at_its_temp_name(runner, spec_file, tmp_path) -> None:
    """Issue 15: a committed link at regen's temporary name must not redirect the write."""
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    link = out / ".README.md.vlagen-tmp"
    link.symlink_to(outside)
    before = _entries(out)
    changed = spec_file(MINIMAL_SPEC.replace("task: drive", "task: drive safely"))
    for args in ([], ["--force"]):
        result = runner.invoke(main, ["regen", str(changed), "-o", str(out), *args])
        assert result.exit_code == 2, result.output
        assert f"vlagen: refusing to write through the symlink {link}\n" in result.output
        assert "Traceback" not in result.output
    assert outside.read_text() == "precious\n"
    readme = out / "README.md"
    assert readme.is_file() and not readme.is_symlink()
    assert _entries(out) == before, "nothing written"


def test_a_file_that_cannot_be_written_is_named_and_a_rerun_finishes(
    runner, spec_file, tmp_path, monkeypatch
) -> None:
    """An unwritable file (a read-only or immutable one, a full disk) is named as the
    output's own path, not the temporary name it is staged under; a regen stopped by one
    after renaming others says the output is partly updated, and a rerun completes it."""
    import vlagen.outdir as outdir

    spec, out = spec_file(), tmp_path / "out"
    real_open, real_replace = os.open, os.replace
    denied = PermissionError(1, "Operation not permitted")

    def open_denied(name, flags, *args, **kwargs):
        if name == ".README.md.vlagen-tmp":
            raise denied
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(outdir.os, "open", open_denied)
    result = runner.invoke(main, ["new", str(spec), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"vlagen: cannot write {out / 'README.md'}: Operation not permitted; once it can be, "
        "run the same command again\n"
    )
    monkeypatch.undo()
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    changed = spec_file(MINIMAL_SPEC.replace("task: drive", "task: drive safely"))
    renamed: list[str] = []

    def replace_denied(src, dst, **kwargs):
        if "dst_dir_fd" in kwargs:  # the output's renames; os is the one module
            if dst == "spec.json":
                raise denied
            renamed.append(dst)
        return real_replace(src, dst, **kwargs)

    monkeypatch.setattr(outdir.os, "replace", replace_denied)
    result = runner.invoke(main, ["regen", str(changed), "-o", str(out)])
    assert result.exit_code == 2, result.output
    spec_json = next(out.glob("src/*/spec.json"))
    assert result.output.startswith(f"vlagen: cannot write {spec_json}: ")
    assert f"; {len(renamed)} file" in result.output and "partly updated" in result.output
    assert renamed and not list(out.rglob("*.vlagen-tmp"))
    monkeypatch.undo()
    assert runner.invoke(main, ["regen", str(changed), "-o", str(out)]).exit_code == 0
    assert runner.invoke(main, ["check", str(changed), "-o", str(out)]).exit_code == 0
    assert "drive safely" in (out / "README.md").read_text()


def test_a_spec_error_says_nothing_was_written_only_where_the_command_writes(
    runner, spec_file, tmp_path
) -> None:
    """validate and targets fit never write: their summary of a spec's problems says only
    how many there are."""
    bad = spec_file(MINIMAL_SPEC.replace("vlagen: 1", "vlagen: 1\nbogus: 1"))
    for args, writes in (
        (["validate", str(bad)], False),
        (["targets", "fit", str(bad)], False),
        (["new", str(bad), "-o", str(tmp_path / "out")], True),
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        last = result.output.splitlines()[-1]
        assert last == f"vlagen: 1 problem in {bad}" + (
            "; nothing was written." if writes else "."
        ), args
    assert not (tmp_path / "out").exists()


def test_read_only_commands_cannot_compare_through_a_symlink(runner, spec_file, tmp_path) -> None:
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    outside = tmp_path / "outside.toml"
    outside.write_text("# mine\n")
    link = out / "pyproject.toml"
    link.unlink()
    link.symlink_to(outside)
    for command in (["diff"], ["check"], ["regen", "--dry-run"]):
        result = runner.invoke(main, [*command, str(spec), "-o", str(out)])
        assert result.exit_code == 2, (command, result.output)
        assert result.output == f"vlagen: cannot compare through the symlink {link}\n", command
    for command in (["regen"], ["regen", "--force"]):
        result = runner.invoke(main, [*command, str(spec), "-o", str(out)])
        assert result.exit_code == 2, (command, result.output)
        assert result.output == f"vlagen: refusing to write through the symlink {link}\n"
    assert outside.read_text() == "# mine\n"
    assert link.is_symlink()


def test_a_symlinked_manifest_is_refused(runner, spec_file, tmp_path) -> None:
    spec, out = spec_file(), tmp_path / "out"
    assert runner.invoke(main, ["new", str(spec), "-o", str(out)]).exit_code == 0
    manifest = out / ".vlagen" / "manifest.json"
    elsewhere = tmp_path / "manifest.json"
    manifest.rename(elsewhere)
    manifest.symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    changed = spec_file(MINIMAL_SPEC.replace("task: drive", "task: drive safely"))
    check = runner.invoke(main, ["check", str(changed), "-o", str(out)])
    assert check.exit_code == 2
    assert check.output == f"vlagen: cannot compare through the symlink {manifest}\n"
    regen = runner.invoke(main, ["regen", str(changed), "-o", str(out), "--force"])
    assert regen.exit_code == 2
    assert regen.output == f"vlagen: refusing to write through the symlink {manifest}\n"
    assert elsewhere.read_bytes() == before
    assert "drive safely" not in (out / "README.md").read_text()


def test_a_reader_that_goes_away_stops_it_quietly_as_git_log_does(tmp_path) -> None:
    """``vlagen new SPEC --dry-run | head -1``: the pipe's reader is gone before vlagen has
    written, so every write breaks the pipe. No message, and SIGPIPE's status, as a shell
    reports ``git log | head`` killed by it."""
    read, write = os.pipe()
    os.close(read)  # no reader at all: vlagen's first write to stdout breaks the pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vlagen", "new", str(SPECS[0]), "--dry-run"],
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            timeout=120,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")
    assert list(tmp_path.iterdir()) == [], "a dry run writes nothing"


@pytest.mark.parametrize(
    ("args", "closed"),
    [
        (["--help"], "stdout"),  # printed while click parses, before any command runs
        (["--version"], "stdout"),
        (["validate", "bad.yaml"], "stderr"),  # `vlagen validate bad.yaml 2>&1 | head -1`
    ],
    ids=["help", "version", "errors-on-stderr"],
)
def test_every_broken_pipe_ends_quietly_with_sigpipes_status(tmp_path, args, closed) -> None:
    (tmp_path / "bad.yaml").write_text("vlagen: 1\nfoo: [\n")
    read, write = os.pipe()
    os.close(read)
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, closed: write}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vlagen", *args], cwd=tmp_path, timeout=120, **streams
        )
    finally:
        os.close(write)
    assert done.returncode == 141
    assert not done.stderr


README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_the_readme_names_exactly_the_shipped_examples() -> None:
    """Issue 30: the README said specs/ held "four more" when it held six."""
    start = README.index("`vlagen init --example list` describes:")
    sentence = README[start : README.index(".", start)]
    named = re.findall(r"`(\w+)`", sentence)
    assert named == [spec.stem for spec in SPECS]
    assert not re.search(r"`specs/` holds \w+ more", README)


def _completion_block() -> list[str]:
    start = README.index("### Shell completion")
    block = README[start:].split("```bash\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def test_the_documented_shell_completion_works(tmp_path) -> None:
    """The README's lines, run as a shell runs them, against a `vlagen` on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "vlagen"  # what pip writes: a script named vlagen calling main()
    script.write_text(f"#!{sys.executable}\nfrom vlagen.cli import main\nmain()\n")
    script.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
    }
    bash, zsh, fish = _completion_block()
    assert bash.startswith('eval "$(_VLAGEN_COMPLETE=bash_source vlagen)"')
    # bash: the documented line registers a completion, and it completes a command's name
    registered = subprocess.run(
        ["bash", "-c", f"{bash}\ncomplete -p vlagen"], env=env, capture_output=True, text=True
    )
    assert registered.returncode == 0, registered.stderr
    assert registered.stdout.strip().endswith("-F _vlagen_completion vlagen")
    completes = subprocess.run(
        ["vlagen"],
        env={
            **env,
            "_VLAGEN_COMPLETE": "bash_complete",
            "COMP_WORDS": "vlagen re",
            "COMP_CWORD": "1",
        },
        capture_output=True,
        text=True,
    )
    assert completes.stdout.splitlines() == ["plain,regen"], completes.stdout
    # zsh and fish (not installed here): the documented commands print their scripts
    for line, marker in ((zsh, "#compdef vlagen"), (fish, "complete --no-files --command vlagen")):
        command = re.search(r"_VLAGEN_COMPLETE=\w+ vlagen", line)[0]
        variable, program = command.split(" ")
        name, value = variable.split("=")
        done = subprocess.run([program], env={**env, name: value}, capture_output=True, text=True)
        assert done.returncode == 0 and marker in done.stdout, (line, done.stdout[:200])
