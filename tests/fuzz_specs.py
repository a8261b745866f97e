"""The long hostile-spec fuzzer: ``python tests/fuzz_specs.py --cases 10000``.

Not part of the suite (pytest collects ``test_*.py`` only; ``test_hostile_specs.py`` runs a
short version of it). Each case is one example spec mutated by :func:`hostile_specs.mutate`
from its own seed, validated in-process with ``vlagen validate`` in a worker process, which
measures the case's wall time and its peak memory and stops a case that runs past ``--timeout``
seconds. Memory is measured one of two ways (``--memory``): ``rss``, the worker's peak resident
size once the case is done (free; a case's own peak is at most that), or ``tracemalloc``, the
case's peak of Python allocations alone (reset per case; about five times slower). It prints
the number of cases, the exit-code counts, the tracebacks (there must be none), the slowest
case and the hungriest one, and exits 1 if any case raised, timed out or exited with a code
other than 0 or 2.

Rerun one case with ``--only N`` (add ``--dump FILE`` to write its spec).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import signal
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_specs import mutate, run_validate

_TMP: Path | None = None


class CaseTimeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise CaseTimeout


def _init(timeout: float, memory: str) -> None:
    global _TMP
    _TMP = Path(tempfile.mkdtemp(prefix="vlagen-fuzz-"))
    signal.signal(signal.SIGALRM, _alarm)
    if memory == "tracemalloc":
        tracemalloc.start()
    _TIMEOUT[0] = timeout
    run_validate(b"vlagen: 1\n", _TMP)  # import everything before the first measured case


_TIMEOUT = [20.0]


def case_seed(seed: int, index: int) -> int:
    return seed * 1_000_003 + index


def run_case(args: tuple[int, int]) -> tuple[int, int | None, str | None, float, int]:
    """(index, exit code or None, problem, seconds, peak bytes) of one case."""
    seed, index = args
    raw = mutate(random.Random(case_seed(seed, index)))
    if tracemalloc.is_tracing():
        tracemalloc.reset_peak()
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, _TIMEOUT[0])
    try:
        outcome = run_validate(raw, _TMP)
        code, problem = outcome.exit_code, outcome.traceback
    except CaseTimeout:
        code, problem = None, f"timed out after {_TIMEOUT[0]} s"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    seconds = time.perf_counter() - start
    if tracemalloc.is_tracing():
        peak = tracemalloc.get_traced_memory()[1]
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return index, code, problem, seconds, peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes [1]")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case [20]")
    parser.add_argument("--memory", choices=["rss", "tracemalloc"], default="rss")
    parser.add_argument("--only", type=int, help="run just this case index")
    parser.add_argument("--dump", type=Path, help="with --only: write the case's spec here")
    args = parser.parse_args(argv)
    if args.only is not None:
        raw = mutate(random.Random(case_seed(args.seed, args.only)))
        if args.dump:
            args.dump.write_bytes(raw)
        outcome = run_validate(raw)
        print(outcome.output, outcome.traceback or "", f"exit {outcome.exit_code}", sep="\n")
        return 0 if outcome.traceback is None else 1

    codes: Counter[str] = Counter()
    problems: list[tuple[int, str]] = []
    slowest = (0.0, -1)
    hungriest = (0, -1)
    started = time.perf_counter()
    work = ((args.seed, i) for i in range(args.cases))
    with multiprocessing.get_context("fork").Pool(
        args.jobs, initializer=_init, initargs=(args.timeout, args.memory)
    ) as pool:
        for done, (index, code, problem, seconds, peak) in enumerate(
            pool.imap_unordered(run_case, work, chunksize=16), 1
        ):
            codes[str(code)] += 1
            if problem is not None or code not in (0, 2):
                problems.append((index, problem or f"exit code {code}"))
            slowest = max(slowest, (seconds, index))
            hungriest = max(hungriest, (peak, index))
            if done % 1000 == 0:
                print(f"  {done} cases, {time.perf_counter() - started:.0f} s", flush=True)
    elapsed = time.perf_counter() - started
    children_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        f"cases: {args.cases} (seed {args.seed}, {args.jobs} worker(s), memory by "
        f"{args.memory}, {elapsed:.0f} s)"
    )
    print("exit codes: " + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items())))
    print(f"tracebacks / timeouts / other exit codes: {len(problems)}")
    for index, problem in problems[:5]:
        print(f"--- case {index} (rerun: --only {index})\n{problem[-2000:]}")
    print(f"max time per case: {slowest[0]:.3f} s (case {slowest[1]})")
    what = "traced Python memory" if args.memory == "tracemalloc" else "worker RSS after"
    print(f"max {what} per case: {hungriest[0] / 2**20:.1f} MiB (case {hungriest[1]})")
    print(f"max worker RSS: {children_rss / 1024:.0f} MiB")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
