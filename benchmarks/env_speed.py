"""Speed of the generated env core, side by side with its baselines, in one run.

Run it from the repository root in the dev venv (``pip install -e '.[test]'`` brings
highway-env)::

    python benchmarks/env_speed.py [--rounds 20] [--steps 150] [--json results.json]
        [--baseline OTHER/generated_examples/highway_openvla/src]

It runs in a temporary working directory and writes nothing but ``--json``. With
``--baseline``, the env core of the highway example as another vlagen generated it (an older
commit's checkout, say) is timed in the same rounds, as a third side of comparisons 1 and 2.

Three comparisons, each run interleaved (one of each per round, ``--rounds`` rounds, the
order rotated every round) so that machine load falls on all sides alike; each line
reports the median env steps per second (one env step = one simulator step of one env) and
the ratio to its baseline. All sides of a comparison follow the same trajectories, so
round ``k`` of each covers the same simulator steps:

1. **Core overhead.** Raw highway-env (``gymnasium.make`` with the highway example's exact
   config, ``step`` then ``render()`` per env, a Python loop over envs) against the same envs
   through the env core of the committed highway example, in-process, same ``num_envs``. Both
   sides use the same episode seeds and actions, so they simulate identical traffic.
   Goal: the core costs at most 5 %.
2. **Process pool.** The core's pool (images in shared memory) against gymnasium's
   ``AsyncVectorEnv(shared_memory=True)`` over the same env with the rendered frame as its
   observation (``AddRenderObservation``), one env per worker, at 1 and 2 workers, both with
   the ``spawn`` start method, each run on fresh worker processes (see :func:`_fresh`).
   Both sides use the same episode seeds and actions, so they simulate identical traffic
   (what a highway-env step costs depends on it), and both reset an env whose episode ended
   after that step (``AsyncVectorEnv`` with ``autoreset_mode=DISABLED`` and a masked, seeded
   reset). Goal: at least as fast.
3. **Synthetic backend.** Steps per second of the synthetic stand-in at ``num_envs`` 64 with
   two 224x224 cameras, generated here from the LIBERO example with its cameras resized; it
   must not be what limits a test run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
HIGHWAY = REPO / "generated_examples" / "highway_openvla"


def _import_highway():
    sys.path.insert(0, str(HIGHWAY / "src"))
    env = importlib.import_module("highway_openvla.env")
    gym_backend = importlib.import_module("highway_openvla.env.backends.gymnasium_env")
    return env, gym_backend


def _import_baseline(src: Path, scratch: Path):
    """The env core of the highway example in ``src``, imported under another name."""
    shutil.copytree(src / "highway_openvla", scratch / "baseline" / "baseline_highway_openvla")
    sys.path.insert(0, str(scratch / "baseline"))
    return importlib.import_module("baseline_highway_openvla.env")


def _episode_seed(seed: int, env: int, episode: int) -> int:
    """The seed the core gives episode ``episode`` of env ``env`` (``VecEnv._episode_seed``)."""
    return int(np.random.SeedSequence(seed, spawn_key=(env, episode)).generate_state(1)[0])


def _raw_highway(gym_backend, num_envs: int, seed: int) -> Callable[[int], float]:
    """Plain highway-env envs driven exactly as the core drives them: the same episode
    seeds, the same actions, so both sides simulate the same traffic."""
    import gymnasium
    import highway_env  # noqa: F401  (registers the ids)

    envs = [gymnasium.make(gym_backend.ID, **gym_backend.KWARGS) for _ in range(num_envs)]
    episodes = [0] * num_envs
    for i, env in enumerate(envs):
        env.reset(seed=_episode_seed(seed, i, 0))
        env.render()
        episodes[i] = 1
    rng = np.random.default_rng(0)

    def run(steps: int) -> float:
        start = time.perf_counter()
        for _ in range(steps):
            actions = rng.uniform(-1, 1, (num_envs, 1, 2)).astype(np.float32)
            for i, env in enumerate(envs):
                _, _, terminated, truncated, _ = env.step(actions[i, 0])
                env.render()
                if terminated or truncated:
                    env.reset(seed=_episode_seed(seed, i, episodes[i]))
                    env.render()
                    episodes[i] += 1
        return steps * num_envs / (time.perf_counter() - start)

    return run


def _core(env_module, num_envs: int, workers: int, backend: str = "gymnasium", seed: int = 0):
    venv = env_module.make_env(
        backend=backend, num_envs=num_envs, workers=workers, seed=seed, video=False
    )
    venv.reset()
    rng = np.random.default_rng(0)
    package = env_module.__name__.rsplit(".", 1)[0]
    spec = importlib.import_module(f"{package}.spec").SPEC
    shape = (num_envs, spec.model.action.chunk, spec.model.action.dim)
    steps_per_call = importlib.import_module(f"{package}.env.actions").STEPS_PER_DECISION

    def run(steps: int) -> float:
        calls = max(1, steps // steps_per_call)
        start = time.perf_counter()
        for _ in range(calls):
            venv.step(rng.uniform(-1, 1, shape).astype(np.float32))
        return calls * steps_per_call * num_envs / (time.perf_counter() - start)

    return run, venv.close


WARM_UP_STEPS = 10


def _fresh(make: Callable[[], tuple[Callable[[int], float], Callable[[], None]]]):
    """A side whose every run has worker processes of its own: ``make`` starts them, a few
    steps warm them up, the run is timed and they are closed. One set of worker processes
    steps a few percent faster or slower than the next (where their memory happens to lie,
    which core they start on), and a pool kept for all rounds would carry that luck into
    every round of its side. Every run starts from the same reset, so all runs of all sides
    time the same simulator steps."""

    def run(steps: int) -> float:
        timed, close = make()
        try:
            timed(WARM_UP_STEPS)
            return timed(steps)
        finally:
            close()

    return run


def _async_vector(gym_backend, workers: int, seed: int = 0):
    """AsyncVectorEnv driven as the core drives its envs: the same episode seeds and the
    same actions, so both sides simulate the same traffic (what a step costs depends on
    it). Finished envs are reset with a masked reset, seeded like the core's, after the
    step that ended them, as the core resets them."""
    import gymnasium
    from gymnasium.vector import AsyncVectorEnv, AutoresetMode

    vector = AsyncVectorEnv(
        [_AsyncFactory(gym_backend.ID, gym_backend.KWARGS)] * workers,
        shared_memory=True,
        context="spawn",
        autoreset_mode=AutoresetMode.DISABLED,
    )
    vector.reset(seed=[_episode_seed(seed, i, 0) for i in range(workers)])
    episodes = np.ones(workers, np.int64)
    rng = np.random.default_rng(0)
    assert isinstance(vector.single_observation_space, gymnasium.spaces.Box)

    def run(steps: int) -> float:
        start = time.perf_counter()
        for _ in range(steps):
            actions = rng.uniform(-1, 1, (workers, 1, 2)).astype(np.float32)[:, 0]
            _, _, terminated, truncated, _ = vector.step(actions)
            done = terminated | truncated
            if done.any():
                seeds = [_episode_seed(seed, i, int(n)) for i, n in enumerate(episodes)]
                vector.reset(seed=seeds, options={"reset_mask": done})
                episodes[done] += 1
        return steps * workers / (time.perf_counter() - start)

    return run, vector.close


class _AsyncFactory:
    """A picklable env factory for AsyncVectorEnv: the env with its frame as observation."""

    def __init__(self, env_id: str, kwargs: dict) -> None:
        self.env_id, self.kwargs = env_id, kwargs

    def __call__(self):
        import gymnasium
        import highway_env  # noqa: F401

        env = gymnasium.make(self.env_id, **self.kwargs)
        return gymnasium.wrappers.AddRenderObservation(env, render_only=True)


def _synthetic_package(tmp: Path):
    """Generate the LIBERO example with two 224x224 cameras and import its env core."""
    import yaml

    from vlagen.api import generate, write
    from vlagen.load import load_spec_text

    data = yaml.safe_load((REPO / "specs" / "libero_openvla_oft.yaml").read_text())
    data["project"].update(name="bench-synthetic", package="bench_synthetic")
    data["env"]["num_envs"] = 64
    for camera in data["env"]["cameras"]:
        camera.update(height=224, width=224)
    out = tmp / "bench_synthetic"
    write(generate(load_spec_text(yaml.safe_dump(data)).spec), out, fresh=True)
    sys.path.insert(0, str(out / "src"))
    return importlib.import_module("bench_synthetic.env")


def _compare(name: str, sides: dict[str, Callable[[int], float]], rounds: int, steps: int):
    """Run each side once per round, the order rotated by one every round, so that no side
    always runs first (right after another's last run)."""
    rates: dict[str, list[float]] = {side: [] for side in sides}
    order = list(sides.items())
    for round_ in range(rounds):
        shift = round_ % len(order)
        for side, run in order[shift:] + order[:shift]:
            rates[side].append(run(steps))
    medians = {side: statistics.median(values) for side, values in rates.items()}
    baseline = next(iter(medians.values()))
    print(f"\n{name}")
    for side, median in medians.items():
        values = rates[side]
        print(
            f"  {side:<44} {median:9.1f} steps/s  (min {min(values):.1f}, max {max(values):.1f})"
            f"  {median / baseline:5.3f}x"
        )
    return {side: {"median": medians[side], "runs": rates[side]} for side in sides}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=150, help="vector steps per timed run")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument(
        "--baseline", type=Path, help="another vlagen's highway example src folder to time too"
    )
    args = parser.parse_args(argv)
    out = args.json.resolve() if args.json else None
    if args.baseline:
        args.baseline = args.baseline.resolve()
    home = Path.cwd()
    # The run's working directory is a scratch one, so that nothing it does writes into the
    # caller's (an env's default video directory or log files are relative to it).
    with tempfile.TemporaryDirectory(prefix="vlagen-env-speed-") as scratch:
        os.chdir(scratch)
        try:
            results = _run(args, Path(scratch))
        finally:
            os.chdir(home)
    if out:
        out.write_text(json.dumps(results, indent=2))


def _run(args: argparse.Namespace, scratch: Path) -> dict[str, dict]:
    env_module, gym_backend = _import_highway()
    baseline = _import_baseline(args.baseline, scratch) if args.baseline else None
    results: dict[str, dict] = {}

    def cores(num_envs: int, workers: int, label: str) -> tuple[dict, list]:
        """This vlagen's env core, and the baseline's if given: runs and closers."""
        run, close = _core(env_module, num_envs, workers=workers)
        runs, closers = {f"env core, {label}": run}, [close]
        if baseline is not None:
            run, close = _core(baseline, num_envs, workers=workers)
            runs[f"env core of --baseline, {label}"] = run
            closers.append(close)
        return runs, closers

    runs, closers = cores(args.num_envs, 0, "in-process")
    results["overhead"] = _compare(
        f"1. highway-env, {args.num_envs} envs in-process, {args.steps} steps per run",
        {"raw highway-env (step + render)": _raw_highway(gym_backend, args.num_envs, 0), **runs},
        args.rounds,
        args.steps,
    )
    for close in closers:
        close()

    for workers in (1, 2):
        pools = {
            "gymnasium AsyncVectorEnv(shared_memory=True)": _fresh(
                lambda workers=workers: _async_vector(gym_backend, workers)
            ),
            "env core, process pool": _fresh(
                lambda workers=workers: _core(env_module, workers, workers=workers)
            ),
        }
        if baseline is not None:
            pools["env core of --baseline, process pool"] = _fresh(
                lambda workers=workers: _core(baseline, workers, workers=workers)
            )
        results[f"pool_{workers}"] = _compare(
            f"2. highway-env, {workers} worker(s), one env each, {args.steps} steps per run "
            "(fresh workers each run)",
            pools,
            args.rounds,
            args.steps,
        )

    synthetic = _synthetic_package(scratch)
    run, close = _core(synthetic, 64, workers=0, backend="synthetic")
    results["synthetic"] = _compare(
        "3. synthetic backend, 64 envs, two 224x224 cameras, chunk 8",
        {"synthetic backend through the env core": run},
        args.rounds,
        args.steps,
    )
    close()
    return results


if __name__ == "__main__":
    main()
