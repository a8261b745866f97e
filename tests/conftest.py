"""Shared fixtures: the repo's example specs, a minimal valid spec, and a CLI runner."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
SPECS = sorted((REPO / "specs").glob("*.yaml"))
GOLDENS = REPO / "generated_examples"

MINIMAL_SPEC = textwrap.dedent(
    """\
    vlagen: 1
    project:
      name: tiny-vla
    model:
      name: tiny
      family: openvla
      checkpoint: ./tiny
      action:
        dim: 2
        chunk: 1
    env:
      preset: highway
      num_envs: 2
      max_episode_steps: 10
      cameras:
        - {name: front, height: 64, width: 64}
      task: drive
      action:
        kind: continuous
        dim: 2
    targets:
      - {framework: rlinf, version: "0.3", algorithm: grpo}
    """
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def spec_file(tmp_path: Path):
    """Write spec text to ``tmp_path/spec.yaml`` and return its path."""

    def write(text: str = MINIMAL_SPEC, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
