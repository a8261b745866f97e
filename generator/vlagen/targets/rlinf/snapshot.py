"""Rebuild the RLinf config layouts (``rlinf_<version>.config.json``) from RLinf's own examples.

RLinf's wheels ship no example configs: they live in its git repository only. This tool
composes the examples the RLinf target mirrors with Hydra, exactly as RLinf's
``run_embodiment.sh`` does, and writes each resolved key with the type of its value::

    git clone https://github.com/RLinf/RLinf && cd RLinf
    python -m vlagen.targets.rlinf.snapshot . v0.3 0.3.0
    python -m vlagen.targets.rlinf.snapshot . v0.2 0.2

The generated YAML is then checked against these layouts at generation time and in the tests:
every key of the examples is present, with a value of the same type, except the
simulator- and model-specific keys :data:`vlagen.targets.rlinf.layout.NOT_MIRRORED` names.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from ..common.config_schema import SNAPSHOT_DIR, flatten, render_layout

#: The examples whose union is the layout: GRPO on LIBERO and PPO on ManiSkill, OpenVLA-OFT.
EXAMPLES = ("libero_spatial_grpo_openvlaoft", "maniskill_ppo_openvlaoft")


def compose(config_dir: Path, name: str) -> dict:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from omegaconf import OmegaConf

    os.environ["EMBODIED_PATH"] = str(config_dir.parent)
    with initialize_config_dir(str(config_dir), version_base="1.1"):
        cfg = hydra_compose(name)
    tree = OmegaConf.to_container(cfg, resolve=True)
    tree.pop("hydra", None)
    return tree


def snapshot(repo: Path, tag: str) -> dict[str, str]:
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", tag, "examples/embodiment/config"],
        check=True,
        capture_output=True,
    ).stdout
    layout: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        config_dir = Path(tmp) / "examples/embodiment/config"
        for example in EXAMPLES:
            for key, kind in flatten(compose(config_dir, example)).items():
                layout.setdefault(key, kind)
    return dict(sorted(layout.items()))


def main(argv: list[str]) -> None:
    repo, tag, version = argv
    layout = snapshot(Path(repo), tag)
    name = "rlinf_" + "_".join(version.split(".")[:2]) + ".config.json"
    document = {"rlinf": version, "tag": tag, "examples": list(EXAMPLES), "keys": layout}
    (SNAPSHOT_DIR / name).write_text(render_layout(document), encoding="utf-8")
    print(f"{name}: {len(layout)} keys from {', '.join(EXAMPLES)} at {tag}")


if __name__ == "__main__":
    main(sys.argv[1:])
