"""Every distribution a generated package can ask pip for is the project vlagen means: it is
in the vetted table, the table agrees with the metadata of what is installed here, and a
simulator the index does not carry is installed from its repository, never by name."""

from __future__ import annotations

import dataclasses
import re
from importlib.metadata import PackageNotFoundError, distribution

import pytest
from packaging.requirements import Requirement

from conftest import GOLDENS, SPECS
from vlagen.distributions import NOT_ON_INDEX, VETTED, distribution_name, unvetted
from vlagen.load import load_spec
from vlagen.modelplan import PEFT_REQUIREMENT, TORCH_REQUIREMENT, TRANSFORMERS_REQUIREMENT
from vlagen.plan import make_plan
from vlagen.presets import GYMNASIUM, GYMNASIUM_EXTRAS, PRESETS
from vlagen.targets import all_targets

tomllib = pytest.importorskip("tomllib")


def _declared() -> dict[str, str]:
    """Requirement → where vlagen declares it: presets, gymnasium's extras, targets, the
    policy core, video recording."""
    found: dict[str, str] = {}
    for preset in PRESETS.values():
        found.update(dict.fromkeys(preset.requirements, f"preset {preset.name}"))
    for extra in set(GYMNASIUM_EXTRAS.values()):
        found[GYMNASIUM.replace("gymnasium", f"gymnasium[{extra}]", 1)] = "gymnasium extras"
    for target in all_targets():
        for requirement in (
            target.requirement,
            *target.runtime_requirements,
            *target.test_requirements,
        ):
            found[requirement] = f"target {target.key}"
    for requirement in (TORCH_REQUIREMENT, TRANSFORMERS_REQUIREMENT, PEFT_REQUIREMENT):
        found[requirement] = "model core"
    env = make_plan(load_spec(SPECS[0]).spec).env
    for video_format in ("mp4", "gif"):
        recording = dataclasses.replace(env, video_format=video_format)
        found.update(dict.fromkeys(recording.video_requirements, f"video {video_format}"))
    return found


def _golden_requirements() -> dict[str, str]:
    """Requirement → golden, from every committed example's pyproject.toml."""
    found: dict[str, str] = {}
    for golden in sorted(p for p in GOLDENS.iterdir() if p.is_dir()):
        pyproject = tomllib.loads((golden / "pyproject.toml").read_text())
        project = pyproject["project"]
        lists = [
            pyproject["build-system"]["requires"],
            project["dependencies"],
            *project.get("optional-dependencies", {}).values(),
        ]
        for requirements in lists:
            found.update(dict.fromkeys(requirements, golden.name))
    return found


@pytest.mark.parametrize("source", [_declared, _golden_requirements], ids=lambda f: f.__name__)
def test_every_requirement_vlagen_emits_is_vetted(source) -> None:
    emitted = source()
    assert len(emitted) >= 10
    bad = {r: emitted[r] for r in unvetted(emitted)}
    assert not bad, f"not in vlagen.distributions.VETTED (read its index page first): {bad}"
    impostors = {r: w for r, w in emitted.items() if distribution_name(r) in NOT_ON_INDEX}
    assert not impostors


def _urls(name: str) -> set[str]:
    metadata = distribution(name).metadata
    urls = [metadata.get("Home-page") or ""]
    urls += [entry.partition(",")[2] for entry in metadata.get_all("Project-URL") or []]
    return {re.sub(r"(\.git)?/*$", "", u.strip()).lower() for u in urls if u.strip()}


def test_the_vetted_table_agrees_with_installed_metadata() -> None:
    """For each vetted distribution installed here (the suite's own test extra installs
    many), the repository or summary the table records is what its metadata says."""
    checked = []
    for name, vetted in VETTED.items():
        try:
            metadata = distribution(name).metadata
        except PackageNotFoundError:
            continue
        urls = _urls(name)
        if urls:
            assert vetted.source.lower() in urls, f"{name}: table {vetted.source}, metadata {urls}"
        else:
            assert vetted.summary and metadata["Summary"] == vetted.summary, name
        checked.append(name)
    assert len(checked) >= 15, checked


def test_requirement_names_are_normalized() -> None:
    assert distribution_name("Highway_Env[extra] >=1.0") == "highway-env"
    assert distribution_name("rlinf[embodied]==0.3.0") == "rlinf"
    assert unvetted(["navsim", "gymnasium[box2d]>=1.0", "numpy"]) == ["navsim"]
    with pytest.raises(ValueError, match="not a requirement"):
        distribution_name("  >=1")


def test_a_simulator_off_the_index_is_installed_from_its_repository() -> None:
    """The navsim golden has no ``sim`` extra (the index's ``navsim`` is another project);
    its README clones NAVSIM at a tag and installs that checkout."""
    golden = GOLDENS / "navsim_waypoint"
    extras = tomllib.loads((golden / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert "sim" not in extras
    source = PRESETS["navsim"].source
    readme = (golden / "README.md").read_text()
    assert (
        f"git clone --branch {source.tag} --depth 1 https://github.com/autonomousvision/navsim.git"
        in readme
    )
    assert "pip install -e ./navsim\n" in readme
    assert "pip install -e '.[sim]'" in (GOLDENS / "highway_openvla" / "README.md").read_text()


def test_the_suite_installs_what_every_golden_tests_with() -> None:
    """The suite runs the goldens' own tests (fidelity harnesses included) in its venv, so
    vlagen with its ``test`` extra installs every distribution a golden's ``test`` extra names."""
    project = tomllib.loads((GOLDENS.parent / "pyproject.toml").read_text())["project"]
    ours = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    have = {(distribution_name(r), extra) for r in ours for extra in {"", *Requirement(r).extras}}
    missing: dict[str, str] = {}
    for golden in sorted(p for p in GOLDENS.iterdir() if p.is_dir()):
        pyproject = tomllib.loads((golden / "pyproject.toml").read_text())
        for requirement in pyproject["project"]["optional-dependencies"]["test"]:
            name = distribution_name(requirement)
            if not all((name, e) in have for e in {"", *Requirement(requirement).extras}):
                missing.setdefault(requirement, golden.name)
    assert not missing, f"add to vlagen's [test] extra in pyproject.toml: {missing}"
