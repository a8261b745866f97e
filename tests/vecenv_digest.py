"""Digests of what a generated package's ``VecEnv`` returns: ``python tests/vecenv_digest.py
PACKAGE BACKEND`` with the package's ``src`` on ``PYTHONPATH`` prints them as JSON.

The env is built as its users build it (``make_env``), in this process and on a pool of two
worker processes, and driven through one fixed script: a seeded reset, seeded random action
chunks, a partial reset, steps with an env held out, and episodes short enough to end (so
``final_obs``, ``final_info`` and ``episode`` come back). Each output gets a digest of its
own, over every call of the script: each observation key, reward, terminated, truncated and
each info key. Values are hashed with their types, numpy arrays with dtype and shape; wider
floats as float32 (:func:`_rounded`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

NUM_ENVS = 3  #: the pool's two workers get uneven slices: envs 0-1 and env 2
POOL_WORKERS = 2
SEED = 7  #: make_env's base seed
RESET_SEED = 11  #: the first reset's
MAX_EPISODE_STEPS = 5  #: short, so that episodes end inside the script
DECISIONS = 8  #: action chunks stepped
PARTIAL_RESET_AT = 3  #: before this decision, env 1 is reset alone, with a group seed
HELD_OUT_AT = (5, 6)  #: at these decisions env 1 is not stepped


def _rounded(value: np.ndarray) -> np.ndarray:
    """A float array wider than float32 rounded to float32: gym-pusht's coverage (shapely's
    intersection area) differs in its last bit from one process to the next, and a float32
    rounds such noise away but for about one value in 2**29."""
    if value.dtype.kind == "f" and value.dtype.itemsize > 4:
        return value.astype(np.float32)
    return value


def _feed(update: Callable[[bytes], None], value: Any) -> None:
    """Hash ``value`` with its type: equal digests, equal values of equal types."""
    if value is None:
        update(b"N")
    elif isinstance(value, bool | np.bool_):
        update(b"b1" if value else b"b0")
    elif isinstance(value, np.ndarray):
        update(f"a{value.dtype.str}{list(value.shape)}".encode())
        if value.dtype.hasobject:
            for item in value.ravel().tolist():
                _feed(update, item)
        else:
            update(np.ascontiguousarray(_rounded(value)).tobytes())
    elif isinstance(value, np.generic):
        update(f"g{value.dtype.str}".encode() + _rounded(np.asarray(value)).tobytes())
    elif isinstance(value, int):
        update(f"i{value};".encode())
    elif isinstance(value, float):
        update(b"f" + _rounded(np.asarray(value)).tobytes())
    elif isinstance(value, str):
        data = value.encode()
        update(f"s{len(data)};".encode() + data)
    elif isinstance(value, list | tuple):
        update(f"{'l' if isinstance(value, list) else 't'}{len(value)};".encode())
        for item in value:
            _feed(update, item)
    elif isinstance(value, dict):
        update(f"d{len(value)};".encode())
        for key in sorted(value, key=repr):
            _feed(update, key)
            _feed(update, value[key])
    else:
        raise TypeError(f"no digest for a {type(value).__module__}.{type(value).__name__}")


class Digests:
    """One running digest per output name."""

    def __init__(self) -> None:
        self._hashes: dict[str, Any] = {}

    def add(self, name: str, value: Any) -> None:
        digest = self._hashes.setdefault(name, hashlib.sha256())
        _feed(digest.update, value)

    def add_call(self, call: str, obs: dict, info: dict) -> None:
        """A call's observation and info, key by key; ``call`` separates them in the stream."""
        for name in self._hashes:
            self._hashes[name].update(f"|{call}|".encode())
        for key, value in obs.items():
            self.add(f"obs[{key!r}]", value)
        for key, value in info.items():
            self.add(f"info[{key!r}]", value)

    def hexdigests(self) -> dict[str, str]:
        return {name: digest.hexdigest() for name, digest in sorted(self._hashes.items())}


def run_script(package: str, backend: str, workers: int) -> dict[str, str]:
    """Drive the package's env through the script; the digest of each output."""
    env_module = importlib.import_module(f"{package}.env")
    spec = importlib.import_module(f"{package}.spec").SPEC
    chunk, dim = spec.model.action.chunk, spec.model.action.dim
    rng = np.random.default_rng(SEED)
    digests = Digests()
    env = env_module.make_env(
        backend=backend,
        num_envs=NUM_ENVS,
        workers=workers,
        seed=SEED,
        video=False,
        max_episode_steps=MAX_EPISODE_STEPS,
    )
    with env:
        obs, info = env.reset(seed=RESET_SEED)
        digests.add_call("reset", obs, info)
        for decision in range(DECISIONS):
            if decision == PARTIAL_RESET_AT:
                obs, info = env.reset(env_ids=[1], group_seeds=[RESET_SEED + decision])
                digests.add_call(f"reset env 1 before decision {decision}", obs, info)
            actions = rng.uniform(-1.0, 1.0, (NUM_ENVS, chunk, dim)).astype(np.float32)
            active = np.ones(NUM_ENVS, bool)
            if decision in HELD_OUT_AT:
                active[1] = False
            obs, reward, terminated, truncated, info = env.step(actions, active)
            digests.add_call(f"decision {decision}", obs, info)
            digests.add("reward", reward)
            digests.add("terminated", terminated)
            digests.add("truncated", truncated)
    return digests.hexdigests()


def main(argv: list[str]) -> int:
    package, backend = argv
    modes = {"in_process": 0, "pool": POOL_WORKERS}
    result = {mode: run_script(package, backend, workers) for mode, workers in modes.items()}
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
