"""Rebuild verl 0.7's config layout (``verl_0_7.config.json``) from a verl v0.7.1 source tree.

The layout is the config verl composes for VLA training: Hydra composes ``ppo_trainer`` from
``verl/trainer/config`` and ``verl/experimental/vla/config/rob_ppo_trainer.yaml`` is merged on
top, as ``verl.experimental.vla.main_ppo`` does. (``rob_ppo_trainer.yaml`` cannot be a Hydra
default of the generated config: it sets ``hydra.searchpath``, which Hydra allows in a primary
config only, so the generated ``config.yaml`` restates its delta.) Each resolved leaf is
written with the type of its value (``null``: verl leaves it unset; ``missing``: ``???``)::

    python -m vlagen.targets.verl.snapshot /path/to/verl-0.7.1[-src.tar.gz]

The VLA source is not in the 0.7.1 wheel, hence a source tree or its ``git archive`` tarball.
vlagen's tests rebuild the layout from the real source and compare (``tests/test_verl_target.py``).
"""

from __future__ import annotations

import sys
import tarfile
import tempfile
from pathlib import Path

from ..common.config_schema import SNAPSHOT_DIR, flatten, render_layout, type_name

SNAPSHOT = SNAPSHOT_DIR / "verl_0_7.config.json"
#: What is composed, relative to the source root.
TRAINER_CONFIG, VLA_CONFIG = (
    "verl/trainer/config",
    "verl/experimental/vla/config/rob_ppo_trainer.yaml",
)


def source_root(path: Path, scratch: Path) -> Path:
    """The verl source tree of a directory or a ``git archive`` tarball (extracted under
    ``scratch``): the directory holding ``verl/trainer/config``."""
    if path.is_file():
        with tarfile.open(path) as tar:
            tar.extractall(scratch, filter="data")
        path = scratch
    candidates = [path, *sorted(p for p in path.iterdir() if p.is_dir())]
    for root in candidates:
        if (root / TRAINER_CONFIG).is_dir():
            return root
    raise FileNotFoundError(f"no {TRAINER_CONFIG} under {path}")


def compose(root: Path) -> dict:
    """``ppo_trainer`` with ``rob_ppo_trainer.yaml``'s delta merged on top, resolved."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    GlobalHydra.instance().clear()
    with initialize_config_dir(str(root / TRAINER_CONFIG), version_base=None):
        cfg = hydra_compose("ppo_trainer")
    vla = OmegaConf.load(root / VLA_CONFIG)
    for key in ("hydra", "defaults"):
        vla.pop(key, None)
    OmegaConf.set_struct(cfg, False)
    merged = OmegaConf.merge(cfg, vla)
    tree = OmegaConf.to_container(merged, resolve=True, throw_on_missing=False)
    tree.pop("hydra", None)
    return tree


def verl_type(value: object) -> str:
    """The layout's type of a value of verl's config: ``missing`` for ``???`` (mandatory,
    unset), else its :func:`~vlagen.targets.common.config_schema.type_name`."""
    return "missing" if value == "???" else type_name(value)


def vla_keys(root: Path) -> list[str]:
    """Every leaf ``rob_ppo_trainer.yaml`` itself sets (its delta over ``ppo_trainer``)."""
    import yaml

    data = yaml.safe_load((root / VLA_CONFIG).read_text("utf-8"))
    data.pop("hydra", None)
    data.pop("defaults", None)
    return sorted(flatten(data, kind=verl_type))


def snapshot(source: Path) -> dict:
    """The layout document for the verl source at ``source`` (a tree or a tarball)."""
    with tempfile.TemporaryDirectory() as scratch:
        root = source_root(source, Path(scratch))
        version = (root / "verl/version/version").read_text("utf-8").strip()
        keys = dict(sorted(flatten(compose(root), kind=verl_type).items()))
        vla = vla_keys(root)
    return {
        "verl": version,
        "composed": ["ppo_trainer", VLA_CONFIG],
        "vla_keys": vla,
        "keys": keys,
    }


def main(argv: list[str]) -> None:
    (source,) = argv
    document = snapshot(Path(source))
    SNAPSHOT.write_text(render_layout(document), encoding="utf-8")
    print(f"{SNAPSHOT.name}: {len(document['keys'])} keys of verl {document['verl']}")


if __name__ == "__main__":
    main(sys.argv[1:])
