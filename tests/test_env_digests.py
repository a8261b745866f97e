"""What every golden's ``VecEnv`` returns, in-process and on a worker pool, is what it
returned when ``tests/env_digests.json`` was written: each observation key, reward and flag,
and each info key (``final_obs``, ``final_info``, ``episode`` among them) has a digest there.
A change to the env core's code that is meant to keep its behaviour keeps them all; an
intended change refreshes them with ``python tests/refresh_env_digests.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import GOLDENS
from refresh_env_digests import golden_digests, golden_names, stored

STORED = stored()


def test_every_golden_has_digests() -> None:
    assert sorted(STORED) == golden_names() == sorted(p.name for p in GOLDENS.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("name", golden_names())
def test_vecenv_outputs_are_unchanged(name: str, tmp_path: Path) -> None:
    want, got = STORED[name], golden_digests(name, tmp_path)
    assert got["backend"] == want["backend"], name
    changed = [
        f"{mode}: {output}"
        for mode in ("in_process", "pool")
        for output in sorted(want[mode].keys() | got[mode].keys())
        if want[mode].get(output) != got[mode].get(output)
    ]
    assert not changed, (
        f"{name}: the VecEnv outputs changed ({want['backend']} backend): "
        + "; ".join(changed)
        + " (intended? run `python tests/refresh_env_digests.py`)"
    )
