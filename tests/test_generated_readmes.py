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


def _plan(package: Path):
    """The plan of the golden's own spec (``vlagen.yaml``)."""
    from vlagen.load import load_spec
    from vlagen.plan import make_plan

    return make_plan(load_spec(package / "vlagen.yaml").spec)


def _section(text: str, heading: str) -> str:
    """The README's ``### heading`` section, up to the next heading of that level or above."""
    found = re.search(rf"^### {re.escape(heading)}\n(.*?)(?=^##? |^### |\Z)", text, re.M | re.S)
    assert found, heading
    return found.group(1)


def _target_sections(package: Path) -> list[tuple[object, str]]:
    text = _readme(package)
    plan = _plan(package)
    return [(t, _section(text, f"{t.decl.title} {t.decl.version}")) for t in plan.targets]


@pytest.mark.parametrize("package", PACKAGES, ids=ids)
def test_the_cpu_torch_build_comes_before_the_first_install(package: Path) -> None:
    """``pip install -e '.[test]'`` pulls ``torch``: on a machine without a GPU the CPU build
    must be installed before it, so the README says so before the first install command."""
    text = _readme(package)
    cpu = text.index("pip install torch --index-url https://download.pytorch.org/whl/cpu")
    assert cpu < text.index("pip install -e '.[test]'")
    assert cpu < text.index("pip install -e")


@pytest.mark.parametrize("package", PACKAGES, ids=ids)
def test_each_target_says_how_to_train_on_another_gpu_count(package: Path) -> None:
    """A target's config and batch are derived from the spec's ``resources``: each target's
    section says to change them there and regenerate, not to pass another count at launch."""
    for target, section in _target_sections(package):
        flat = " ".join(section.split())
        assert "change `resources` (`nodes`, `gpus_per_node`) in `vlagen.yaml`" in flat, target
        assert "run `vlagen regen vlagen.yaml`" in flat, target


AREAL = [p for p in PACKAGES if "areal" in _readme(p)]


@pytest.mark.parametrize("package", AREAL, ids=[p.name for p in AREAL])
def test_the_areal_install_brings_its_inference_server(package: Path) -> None:
    """``config.yaml`` starts SGLang, which areal 1.0.4 puts behind its ``sglang`` extra: the
    package's ``areal`` extra asks for it, and the README says what it brings."""
    from vlagen.targets.areal.plan import AREAL_VERSION, SERVER

    section = " ".join(_section(_readme(package), "AReaL 1.0").split())
    assert "rollout.backend: sglang:" in section
    requirement = f"areal[{SERVER.extra}]=={AREAL_VERSION}"
    pyproject = (package / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(rf'^areal = \["{re.escape(requirement)}"', pyproject, re.M)
    assert f"`{requirement}`" in section
    for fact in (f"torch {SERVER.torch}", f"transformers {SERVER.transformers}", SERVER.platform):
        assert fact in section
    assert f"{SERVER.name} {SERVER.version}" in section


SIIRL = [p for p in PACKAGES if "### siiRL" in _readme(p)]


@pytest.mark.parametrize("package", SIIRL, ids=[p.name for p in SIIRL])
def test_the_siirl_section_follows_the_backbone(package: Path) -> None:
    """siiRL trains its bundled OpenVLA (Prismatic) code only on a Prismatic checkpoint; on a
    processor backbone (Qwen-VL) the glue loads the package's own model, and the README says
    so, as the launch's flash-attn check says why it is needed."""
    (target,) = [t for t, _ in _target_sections(package) if t.decl.framework == "siirl"]
    section = " ".join(_section(_readme(package), "siiRL 0.2").split())
    prismatic = ["trains its own bundled OpenVLA code", "must be an OpenVLA (Prismatic)"]
    glue = (_import_package(package) / "targets" / "siirl" / "glue.py").read_text()
    if target.plan.own_model:
        assert not [claim for claim in prismatic if claim in section]
        assert "`targets/siirl/model.py`" in section
        assert _plan(package).model.backbone.title in section
        assert "flash_attention_2" not in glue.split("def require_flash_attention")[1]
    else:
        assert all(claim in section for claim in prismatic)
    assert "siirl/engine/actor/embodied_actor.py" in section  # why flash-attn, either way
    assert target.plan.flash_attention_reason.split(" (")[0] in glue


VERL = [p for p in PACKAGES if "### verl" in _readme(p)]


@pytest.mark.parametrize("package", VERL, ids=[p.name for p in VERL])
def test_the_verl_section_says_how_the_gpus_split_and_where_verls_vla_code_is(
    package: Path,
) -> None:
    (target,) = [t for t, _ in _target_sections(package) if t.decl.framework == "verl"]
    p = target.plan
    section = " ".join(_section(_readme(package), "verl 0.7").split())
    assert f"{p.env_gpus} hold env workers (`trainer.n_env_gpus_per_node`)" in section
    assert f"{p.rollout_gpus} the actor and rollout (`trainer.n_rollout_gpus_per_node`)" in section
    assert "`resources.env_gpus_per_node`" in section
    if p.simulator_gpu is False:
        assert "hold a CPU simulator" in section
    assert "exists only in the v0.7.1 source tree" in section
    assert "verl removed it in 0.8" in section and "verl-vla 0.1, pins verl 0.7.1" in section


def test_the_pusht_example_says_half_its_gpus_hold_a_cpu_simulator() -> None:
    """The reviewer's case: 4 of pusht's 8 GPUs hold env workers that step a CPU simulator."""
    section = " ".join(_section(_readme(GOLDENS / "pusht_openvla_oft"), "verl 0.7").split())
    assert "of the 8 GPUs of each node (`trainer.n_gpus_per_node`), 4 hold env workers" in section
    assert "The pusht simulator runs on the CPU, so those 4 GPUs of each node hold a CPU" in section
