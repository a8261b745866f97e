"""String safety and name/path validation.

Hostile text in every free-text field of a spec must reach the generated package intact (as
Python, TOML, JSON and Markdown) and leave it valid, formatted and lint-clean; names that would
make a bad import package or distribution are spec errors; no path, manifest entry or symlink
can make vlagen write outside its output directory; control characters are spec errors.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from pydantic import ValidationError

from conftest import VARIANT_MARKERS, run_package_tests
from vlagen.api import Output, generate
from vlagen.cli import main
from vlagen.errors import Issue, OutputError, SpecError, UsageError
from vlagen.literals import md_text
from vlagen.load import LoadedSpec, load_spec_text
from vlagen.manifest import Manifest
from vlagen.paths import MANIFEST_PATH
from vlagen.spec import Spec
from vlagen.tree import File, FileTree, safe_relpath

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "specs" / "libero_openvla_oft.yaml"
SPEC_NAME = "spec.yaml"


# --- helpers -----------------------------------------------------------------------------


def example() -> dict[str, Any]:
    """A fresh copy of the example spec as plain data."""
    return yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))


def dump(data: dict[str, Any]) -> str:
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    # Guard the premise: PyYAML itself must carry every value through unchanged.
    assert yaml.safe_load(text) == data
    return text


def load(data: dict[str, Any]) -> LoadedSpec:
    return load_spec_text(dump(data), SPEC_NAME)


def spec_error(data: dict[str, Any]) -> tuple[SpecError, str]:
    """The SpecError that loading ``data`` raises, and the YAML text it was loaded from."""
    text = dump(data)
    with pytest.raises(SpecError) as info:
        load_spec_text(text, SPEC_NAME)
    return info.value, text


def issue_at(error: SpecError, loc: tuple) -> Issue:
    found = [i for i in error.issues if i.loc == loc]
    assert found, f"no issue at {loc}; got:\n{error.format()}"
    return found[0]


def line_of(text: str, *keys: str) -> int:
    """The 1-based line of block-style YAML ``text`` where the key path ``keys`` is set."""
    lines = text.splitlines()
    index = 0
    for depth, key in enumerate(keys):
        prefix = "  " * depth + f"{key}:"
        index = next(i for i in range(index, len(lines)) if lines[i].startswith(prefix))
    return index + 1


def write_tree(tree: FileTree, root: Path) -> None:
    for path, file in tree.items():
        dest = root / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(file.content)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8"
    )


def files_under(root: Path) -> list[Path]:
    return sorted(root.rglob("*"))


# --- hostile text reaches the generated package intact ------------------------------------

FIELDS = {
    "description": ("project", "description"),
    "model_name": ("model", "name"),
    "checkpoint": ("model", "checkpoint"),
    "prompt_template": ("model", "prompt_template"),
    "task": ("env", "task"),
    "task_suite": ("env", "task_suite"),
    "unnorm_key": ("model", "unnorm_key"),
}
ONE_LINE = ("description", "model_name", "task")
FREE_TEXT = [f for f in FIELDS if f != "task_suite"]  # the suite is one file-name-safe word

VARIANTS: dict[str, dict[str, str]] = {
    "kitchen_sink": {
        "description": (
            'He said "hi" & it\'s \\ \\n """ \'\'\' {{ }} {% %} ${x} <b>*md*</b> | `code` '
            "[link](x) # naïve 日本語 🚀\tend"
        ),
        "model_name": "Model \"X\" 'Y' \\ {{ }} {% raw %} ${HOME} naïve 日本語 🚀",
        "checkpoint": 'C:\\weights\\"q"\\\'\'\'\\"""\n{{ x }}/日本語/🚀',
        # str.format syntax: literal braces are doubled, so "{{% %}}" reads "{% %}".
        "prompt_template": (
            'He said "hi" \\ {{ }} {{% %}} """ \'\'\' ${{x}} naïve 日本語 🚀 {task}\n\tOut:'
        ),
        "task": "pick \"the\" 'bowl' \\ {task} {{ }} {% %} \"\"\" ''' ${x} café 日本語 🚀\tnow",
        "task_suite": "libero_10_v2",
        "unnorm_key": 'key\'s "stats" \\ {{ }} ${x} 🚀\nline2',
    },
    "edge_endings": {
        "description": '\\"quoted\\" ends with a backslash \\',
        "model_name": 'ends with a double quote "',
        "checkpoint": "'ends with a single quote'",
        "prompt_template": '"""{task}"""\\',
        "task": "\\",
        "task_suite": "Suite_9_",
        "unnorm_key": "'''",
    },
    "yaml_lookalikes": {
        "description": " yes ",
        "model_name": "null",
        "checkpoint": "~",
        "prompt_template": "{task}: # not a comment",
        "task": "- [a, b]: {c: d}",
        "task_suite": "0x10",
        "unnorm_key": "true",
    },
}


@dataclasses.dataclass(frozen=True)
class Generated:
    values: dict[str, str]
    output: Output
    root: Path

    @property
    def package(self) -> str:
        return self.output.plan.package


def _set(data: dict[str, Any], loc: tuple[str, str], value: Any) -> None:
    section, key = loc
    data[section][key] = value


def _generate_variant(name: str, root: Path) -> Generated:
    values = VARIANTS[name]
    data = example()
    for field, value in values.items():
        _set(data, FIELDS[field], value)
    output = generate(load(data).spec)
    write_tree(output.tree, root)
    return Generated(values, output, root)


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Generated]:
    cache: dict[str, Generated] = {}

    def _build(name: str) -> Generated:
        if name not in cache:
            cache[name] = _generate_variant(name, tmp_path_factory.mktemp(name))
        return cache[name]

    return _build


variants = pytest.mark.parametrize("variant", list(VARIANTS))


NEEDLES = ('"', "'", "\\", '"""', "'''", "{{", "}}", "{%", "%}", "${x}", "日本語", "🚀")


def test_variants_cover_every_free_text_field() -> None:
    for values in VARIANTS.values():
        assert set(values) == set(FIELDS)
    sink = VARIANTS["kitchen_sink"]
    for field in ("description", "prompt_template", "task"):
        shown = sink[field].format(task="T") if field == "prompt_template" else sink[field]
        for needle in NEEDLES:
            assert needle in sink[field] or needle in shown, (field, needle)
        assert any(0x80 <= ord(ch) < 0x800 for ch in sink[field])  # accented Latin
    assert "\n" in sink["prompt_template"] and "\t" in sink["prompt_template"]
    assert "\t" in sink["task"]


@variants
def test_every_python_file_parses(build: Callable[[str], Generated], variant: str) -> None:
    out = build(variant)
    python = [p for p in out.output.tree if p.endswith(".py")]
    assert python
    for path in python:
        ast.parse(out.output.tree[path].content.decode("utf-8"), filename=path)


@variants
def test_ruff_check_and_format_pass(build: Callable[[str], Generated], variant: str) -> None:
    out = build(variant)
    lint = run("-m", "ruff", "check", "--no-cache", ".", cwd=out.root)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = run("-m", "ruff", "format", "--check", "--no-cache", ".", cwd=out.root)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


@variants
def test_pyproject_keeps_the_description(build: Callable[[str], Generated], variant: str) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    out = build(variant)
    pyproject = tomllib.loads((out.root / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["description"] == out.values["description"]
    assert pyproject["project"]["name"] == "libero-openvla-oft"


def _field(data: dict[str, Any], field: str) -> Any:
    section, key = FIELDS[field]
    return data[section][key]


@variants
def test_spec_py_constants_equal_the_inputs(
    build: Callable[[str], Generated], variant: str
) -> None:
    out = build(variant)
    code = (
        "import dataclasses, json, sys\n"
        f"sys.path.insert(0, {str(out.root / 'src')!r})\n"
        f"from {out.package}.spec import SPEC\n"
        "print(json.dumps(dataclasses.asdict(SPEC), ensure_ascii=True))\n"
    )
    result = run("-I", "-c", code, cwd=out.root)
    assert result.returncode == 0, result.stderr
    constants = json.loads(result.stdout)
    for field, value in out.values.items():
        assert _field(constants, field) == value, field
    assert constants == out.output.plan.spec.model_dump(mode="json")


@variants
def test_spec_json_equals_the_inputs(build: Callable[[str], Generated], variant: str) -> None:
    out = build(variant)
    path = out.root / "src" / out.package / "spec.json"
    data = json.loads(path.read_text(encoding="utf-8"))["spec"]
    for field, value in out.values.items():
        assert _field(data, field) == value, field


@variants
def test_readme_carries_escaped_text(build: Callable[[str], Generated], variant: str) -> None:
    out = build(variant)
    readme = (out.root / "README.md").read_text(encoding="utf-8")
    for field in ("description", "model_name", "checkpoint", "task"):
        value = out.values[field]
        assert md_text(value) in readme, field
    for row, field in (("| Model |", "checkpoint"), ("| Task |", "task")):
        (line,) = [line for line in readme.splitlines() if line.startswith(row)]
        assert md_text(out.values[field]) in line, "a value must stay on its table row"


@pytest.mark.slow(minutes=2)
def test_generated_package_tests_pass(build: Callable[[str], Generated]) -> None:
    """The hostile strings' package passes its tests, but for the env pool's and server's
    process control, the framework's fresh import and the fidelity tests (each framework's
    own rollout and update beside the package's), whose code takes no spec string but as
    the prompt the package's own tests carry: the goldens run them."""
    markers = f"{VARIANT_MARKERS} and not fidelity"
    run_package_tests(build("kitchen_sink").root, real_simulator=False, markers=markers)


@pytest.mark.parametrize("field", ONE_LINE)
@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
def test_single_line_fields_reject_newlines(field: str, newline: str) -> None:
    data = example()
    _set(data, FIELDS[field], f"first line{newline}second line")
    error, text = spec_error(data)
    issue = issue_at(error, FIELDS[field])
    assert "single line" in issue.message
    assert issue.line == line_of(text, *FIELDS[field])
    assert issue.column is not None and issue.column >= 1


def test_multi_line_fields_accept_newlines_and_tabs() -> None:
    data = example()
    for field in ("checkpoint", "prompt_template", "unnorm_key"):
        _set(data, FIELDS[field], "a\n\tb {task}\n" if field == "prompt_template" else "a\n\tb")
    spec = load(data).spec
    assert spec.model.prompt_template == "a\n\tb {task}\n"
    assert spec.model.unnorm_key == "a\n\tb"


@pytest.mark.parametrize(
    "suite", ["a\nb", "x/../y", "_x", "libero 10", 'q"', "x\x1by", "x\x00", "x-1", "x.y", "日本"]
)
def test_a_suite_name_is_file_name_safe(suite: str) -> None:
    """Frameworks put the suite in file names, env ids and command lines (siiRL's task file
    names, its reward's regex): one file-name-safe word, located when it is not."""
    data = example()
    _set(data, FIELDS["task_suite"], suite)
    error, text = spec_error(data)
    issue = issue_at(error, FIELDS["task_suite"])
    assert "not a suite name" in issue.message
    assert issue.line == line_of(text, *FIELDS["task_suite"])


def test_prompt_template_with_a_single_brace_is_an_error() -> None:
    data = example()
    data["model"]["prompt_template"] = "literal { brace {task}"
    error, _ = spec_error(data)
    issue = issue_at(error, ("model", "prompt_template"))
    assert "{{" in issue.message


# --- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("package", "hint"),
    [
        ("my-pkg", "not a valid Python identifier"),
        ("1abc", "not a valid Python identifier"),
        ("class", "is a Python keyword"),
        ("import", "is a Python keyword"),
        ("pkg.sub", "not a valid Python identifier"),
        ("", "not a valid Python identifier"),
        ("naïve", "not a valid Python identifier"),
        ("Pkg", "lowercase"),
    ],
)
def test_invalid_package_is_a_spec_error(package: str, hint: str) -> None:
    data = example()
    data["project"]["package"] = package
    error, text = spec_error(data)
    issue = issue_at(error, ("project", "package"))
    assert hint in issue.message
    assert repr(package) in issue.message
    assert issue.line == line_of(text, "project", "package")
    assert f"{SPEC_NAME}:{issue.line}:{issue.column}: project.package: " in str(error)


@pytest.mark.parametrize(
    ("name", "hint"), [("import", "is a Python keyword"), ("9lives", "is not a valid")]
)
def test_a_name_whose_import_package_cannot_be_imported_says_why(name: str, hint: str) -> None:
    """`name: import` was "not a valid Python identifier"; it is one, but a keyword."""
    data = example()
    data["project"]["name"] = name
    data["project"].pop("package", None)
    error, _ = spec_error(data)
    issue = issue_at(error, ("project", "name"))
    assert f"the import package derived from the name, {name!r}, {hint}" in issue.message
    assert issue.message.endswith("; set project.package")
    assert ("keyword" in issue.message) == (name == "import")


@pytest.mark.parametrize(
    ("key", "name", "what"),
    [
        ("name", "numpy", "a module the generated package imports"),
        ("name", "typing-extensions", "a module the generated package imports"),
        ("name", "json", "a standard-library module"),
        ("package", "torch", "a module the generated package imports"),
        ("package", "os", "a standard-library module"),
    ],
)
def test_an_import_package_that_would_shadow_a_module_is_refused(
    key: str, name: str, what: str
) -> None:
    """`name: numpy` generated `numpy/` under `src/`, which the package's tests (and any
    script run from its folder) import in place of numpy."""
    data = example()
    data["project"].pop("package", None)
    data["project"][key] = name
    error, text = spec_error(data)
    issue = issue_at(error, ("project", key))
    assert what in issue.message and "set project.package" in issue.message
    assert issue.line == line_of(text, "project", key)


def test_every_module_a_golden_imports_is_one_a_package_name_may_not_shadow() -> None:
    """:data:`vlagen.checks.IMPORTED` holds every top-level module the goldens import
    (beyond the standard library, the package itself and its tests' own helpers)."""
    from conftest import GOLDENS
    from vlagen.checks import IMPORTED

    imported: dict[str, str] = {}
    for golden in sorted(p for p in GOLDENS.iterdir() if p.is_dir()):
        own = {p.stem for p in (golden / "tests").glob("*.py")}
        own |= {p.name for p in (golden / "src").iterdir() if p.is_dir()}
        for path in sorted(golden.rglob("*.py")):
            if ".vlagen" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for top in (n.partition(".")[0] for n in names):
                    if top not in own and top not in sys.stdlib_module_names:
                        imported.setdefault(top, str(path.relative_to(GOLDENS)))
    missing = {m: where for m, where in imported.items() if m not in IMPORTED}
    assert not missing, f"add to vlagen.checks.IMPORTED: {missing}"


@pytest.mark.parametrize(
    "name",
    ["my pkg", "a/b", "../evil", "..", ".", "a\\b", "/abs", "-a", "a-", "_x", "", "naïve", "a b"],
)
def test_invalid_distribution_name_is_a_spec_error(name: str) -> None:
    data = example()
    data["project"]["name"] = name
    error, text = spec_error(data)
    issue = issue_at(error, ("project", "name"))
    assert "not a valid distribution name" in issue.message
    assert repr(name) in issue.message
    assert issue.line == line_of(text, "project", "name")


@pytest.mark.parametrize("name", ["class", "Class", "import", "def", "1abc", "2fast-4u"])
def test_name_whose_derived_package_is_invalid_is_a_spec_error(name: str) -> None:
    """Without project.package, the import package is derived from the name; a keyword or a
    leading digit there must be caught by validation, not by ruff at generation time."""
    data = example()
    data["project"]["name"] = name
    derived = name.lower().replace("-", "_")
    error, text = spec_error(data)
    issue = issue_at(error, ("project", "name"))
    assert repr(derived) in issue.message
    assert "project.package" in issue.message  # says how to fix it
    assert issue.line == line_of(text, "project", "name")


def test_bad_derived_package_can_be_fixed_with_project_package() -> None:
    data = example()
    data["project"]["name"] = "class"
    data["project"]["package"] = "klass"
    output = generate(load(data).spec)
    assert "src/klass/spec.py" in output.tree


@pytest.mark.parametrize("name", ["None", "None-x", "True", "match", "a..b", "a_b-c.d"])
def test_odd_but_valid_names_generate_importable_packages(name: str) -> None:
    data = example()
    data["project"]["name"] = name
    output = generate(load(data).spec)
    package = output.plan.package
    assert package.isidentifier() and package == package.lower()
    assert f"src/{package}/__init__.py" in output.tree


# --- paths ---------------------------------------------------------------------------------

ESCAPING = ["../x", "/abs", "a/../../b", "a\\b", "", "a//b"]
ESCAPING += ["..", ".", "./a", "a/./b", "a/", "a\0b"]


@pytest.mark.parametrize("path", ESCAPING)
def test_safe_relpath_rejects(path: str) -> None:
    with pytest.raises(OutputError):
        safe_relpath(path)


@pytest.mark.parametrize("path", ["a", "a/b.py", ".vlagen/manifest.json", "src/pkg/spec.json"])
def test_safe_relpath_accepts_plain_relative_paths(path: str) -> None:
    assert safe_relpath(path) == path


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "a/../../b"])
def test_file_tree_refuses_escaping_paths(path: str) -> None:
    with pytest.raises(OutputError):
        FileTree({path: File(b"x")})
    with pytest.raises(OutputError):
        FileTree({"ok.txt": File(b"")}).replace({path: File(b"x")})


@pytest.fixture
def generated_dir(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["new", str(EXAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / MANIFEST_PATH).is_file()
    return out


def _add_to_manifest(out: Path, path: str, sha256: str) -> None:
    manifest = out / MANIFEST_PATH
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["files"][path] = {"mode": "generated", "sha256": sha256}
    manifest.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.mark.parametrize("bad", ["../outside.txt", "/tmp/outside.txt", "a/../../outside.txt"])
def test_manifest_with_escaping_path_is_rejected(generated_dir: Path, bad: str) -> None:
    assert Manifest.read(generated_dir) is not None
    _add_to_manifest(generated_dir, bad, "0" * 64)
    with pytest.raises(UsageError, match="manifest"):
        Manifest.read(generated_dir)


def test_regen_does_not_delete_outside_via_manifest(generated_dir: Path) -> None:
    outside = generated_dir.parent / "outside.txt"
    outside.write_bytes(b"precious")
    # Recorded as an unedited generated file that is no longer generated: a naive regen
    # would delete it.
    _add_to_manifest(generated_dir, "../outside.txt", hashlib.sha256(b"precious").hexdigest())
    result = CliRunner().invoke(main, ["regen", str(EXAMPLE), "-o", str(generated_dir), "--force"])
    assert result.exit_code == 2, result.output
    assert "manifest" in result.output
    assert outside.read_bytes() == b"precious"


def test_regen_refuses_to_write_through_a_symlinked_directory(
    generated_dir: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "sentinel.txt").write_bytes(b"mine")
    before = files_under(elsewhere)
    src = generated_dir / "src"
    for path in sorted(src.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    src.rmdir()
    src.symlink_to(elsewhere, target_is_directory=True)

    result = CliRunner().invoke(main, ["regen", str(EXAMPLE), "-o", str(generated_dir), "--force"])
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "symlink" in result.output
    assert files_under(elsewhere) == before
    assert (elsewhere / "sentinel.txt").read_bytes() == b"mine"


def test_regen_refuses_to_replace_a_symlinked_file(generated_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_bytes(b"# mine\n")
    pyproject = generated_dir / "pyproject.toml"
    pyproject.unlink()
    pyproject.symlink_to(outside)

    result = CliRunner().invoke(main, ["regen", str(EXAMPLE), "-o", str(generated_dir), "--force"])
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert outside.read_bytes() == b"# mine\n"


# --- control characters --------------------------------------------------------------------

CONTROL = ["\x00", "\x1b[31m", "\x07", "\x0b", "\x7f", "\x9b"]


@pytest.mark.parametrize("char", CONTROL, ids=ascii)
@pytest.mark.parametrize("field", FREE_TEXT)
def test_control_characters_are_spec_errors(field: str, char: str) -> None:
    data = example()
    value = f"x{char}y" + (" {task}" if field == "prompt_template" else "")
    _set(data, FIELDS[field], value)
    error, text = spec_error(data)
    issue = issue_at(error, FIELDS[field])
    assert f"U+{ord(char[0]):04X}" in issue.message
    assert "control character" in issue.message
    assert issue.line == line_of(text, *FIELDS[field])


@pytest.mark.parametrize(
    ("mutate", "loc"),
    [
        (lambda d: d["targets"][0].update(algorithm="s\x1brpo"), ("targets", 0, "algorithm")),
        (
            lambda d: d["model"]["lora"].update(target_modules=["q_proj", "v\x00proj"]),
            ("model", "lora", "target_modules"),
        ),
        (
            lambda d: d["env"]["rewards"].append({"name": "r", "source": "info", "key": "k\x1b"}),
            ("env", "rewards", 1, "key"),
        ),
    ],
    ids=["algorithm", "list_item", "reward_key"],
)
def test_control_characters_anywhere_are_spec_errors(mutate: Callable, loc: tuple) -> None:
    data = example()
    mutate(data)
    error, _ = spec_error(data)
    assert "control character" in issue_at(error, loc).message


@pytest.mark.parametrize("field", FREE_TEXT)
def test_lone_surrogate_is_rejected_by_the_model(field: str) -> None:
    data = example()
    _set(data, FIELDS[field], "x\ud800y")
    with pytest.raises(ValidationError, match=r"surrogate|unicode"):
        Spec.model_validate(data)


def test_escaped_lone_surrogate_in_yaml_is_a_spec_error() -> None:
    original = EXAMPLE.read_text(encoding="utf-8")
    text = original.replace("  task: pick up the", '  task: "x\\ud800y"  # the', 1)
    assert text != original
    with pytest.raises(SpecError) as info:
        load_spec_text(text, SPEC_NAME)
    (issue,) = info.value.issues
    assert issue.line == line_of(original, "env", "task")
    assert issue.column is not None and issue.column >= 1
    assert issue.message


def _with_raw(char: str) -> tuple[str, int]:
    text = EXAMPLE.read_text(encoding="utf-8")
    old = "  task: pick up"
    assert old in text
    return text.replace(old, f"  task: pick{char} up", 1), line_of(text, "env", "task")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x07", "\x7f", "\x9b", "\ud800"], ids=ascii)
def test_raw_control_characters_in_the_file_are_spec_errors(char: str) -> None:
    text, line = _with_raw(char)
    with pytest.raises(SpecError) as info:
        load_spec_text(text, SPEC_NAME)
    (issue,) = info.value.issues
    assert issue.line == line
    assert issue.column is not None and issue.column >= 1
    assert issue.message


def test_cli_reports_a_raw_control_character_without_a_traceback(tmp_path: Path) -> None:
    text, line = _with_raw("\x1b")
    spec = tmp_path / SPEC_NAME
    spec.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert f"{spec}:{line}:" in result.output
