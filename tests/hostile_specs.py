"""Hostile specs: the example specs mutated the way an attacker or a careless user would.

:func:`mutate` turns a seeded :class:`random.Random` into the bytes of one spec file: values
replaced by hostile ones (huge numbers, odd Unicode, bad format strings and class paths, deep
or long lists), keys deleted or duplicated, alias bombs, deep bracket runs, random bytes.
:func:`run_validate` runs ``vlagen validate`` on it in-process and says how it ended. Both the
suite's property test (``test_hostile_specs.py``) and the long command-line fuzzer
(``fuzz_specs.py``) use them.
"""

from __future__ import annotations

import copy
import random
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
BASES: list[Any] = [
    yaml.safe_load(path.read_text(encoding="utf-8"))
    for path in sorted((REPO / "specs").glob("*.yaml"))
]


def _nest(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def hostile_values(rng: random.Random, package: str, *, big: bool) -> Any:
    """One value an attacker might put anywhere."""
    choices: list[Any] = [
        0, -1, 1, 2**31, 2**63 - 1, 2**63, 2**64, 10**12, -(10**12), 10**400, 1e308, -1e308,
        1e-320, float("nan"), float("inf"), True, None, "", " ", "x" * 300, "x" * 20_000,
        "{task:d}", "{}", "{task::}", "{task!r}", "{0}", "{task}{", "{task.upper}", "{{task}}",
        "{task[0]}", "{task:{task}}", f"{package}.spec:Y", f"{package}..x:Y", f"{package}:Y",
        f"{package}.env.core:Y", f"{package}.model:Y", "a.b:C", "a:b:c", ".a:B", "a.:B",
        "class.x:Y", "\u202eevil", "\U0001f600" * 50, "\u0085", "\ufeff", "é" * 200,
        "../../etc/passwd", "/abs/path", "C:\\x", "a\tb", "2020-13-45", "0b" + "1" * 70,
        [], {}, [1] * 50, {"a": {"b": {"c": 1}}}, _nest(rng.choice([10, 63, 66])),
        "-" * 256, "a" * 256, "a" * 100, "a" * 101,
    ]  # fmt: skip
    if big:
        choices += [[0] * rng.choice([300, 5000, 25_000])]
    return copy.deepcopy(rng.choice(choices))  # deeper nesting is a text edit (brackets)


def _paths(data: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out += _paths(value, (*path, index))
    return out


def _get(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


ALIAS_BOMB = "".join(
    f"{k}: &{k} [{','.join([f'*{p}'] * 9) if p else ','.join(['x'] * 9)}]\n"
    for p, k in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


def _text_edit(rng: random.Random, text: str, *, big: bool) -> str:
    lines = text.splitlines(keepends=True) or [""]
    at = rng.randrange(len(lines))
    op = rng.choice(
        ["dup_line", "bomb", "brackets", "bytes", "truncate", "alias", "merge", "tab", "anchor"]
    )
    if op == "dup_line":  # a duplicate key, usually
        lines.insert(at, lines[at])
    elif op == "bomb":
        nested = "bomb:\n" + "".join(f"  {line}\n" for line in ALIAS_BOMB.splitlines())
        lines.insert(at, ALIAS_BOMB if rng.random() < 0.5 else nested)
    elif op == "brackets":
        depth = rng.choice([65, 500, 50_000] if big else [65, 500, 2000])
        lines.insert(at, "a: " + "[" * depth + "]" * depth + "\n")
    elif op == "bytes":
        junk = "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(1, 8)))
        pos = rng.randrange(len(text) + 1)
        return text[:pos] + junk + text[pos:]
    elif op == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    elif op == "alias":
        lines[at] = lines[at].rstrip("\n") + " *nope\n"
    elif op == "merge":
        lines.insert(at, "d: &d {x: 1}\ne: {<<: *d, <<: *d}\n")
    elif op == "tab":
        lines[at] = "\t" + lines[at]
    else:
        lines.insert(at, "self: &s [1, *s]\n")
    return "".join(lines)


def mutate(rng: random.Random, *, big: bool = True) -> bytes:
    """One hostile spec file, from an example spec and ``rng``'s choices.

    ``big`` allows the expensive cases (lists of 25,000 items, 50,000 brackets, files over the
    size limit); the suite's quick property test leaves them to the dedicated tests.
    """
    data: Any = copy.deepcopy(rng.choice(BASES))
    package = str(data.get("project", {}).get("package") or "")
    package = package or str(data["project"]["name"]).replace("-", "_").lower()
    for _ in range(rng.randrange(1, 4)):
        paths = _paths(data)
        path = rng.choice(paths)
        op = rng.choice(["replace", "replace", "replace", "delete", "add"])
        if op == "replace" and path:
            _get(data, path[:-1])[path[-1]] = hostile_values(rng, package, big=big)
        elif op == "delete" and path:
            del _get(data, path[:-1])[path[-1]]
        elif op == "add":
            mappings = [p for p in paths if isinstance(_get(data, p), dict)]
            key = rng.choice(["name", "zzz", "<<", "\u00e9", "x" * 300, "class_path"])
            _get(data, rng.choice(mappings))[key] = hostile_values(rng, package, big=big)
    text = yaml.safe_dump(data, allow_unicode=rng.random() < 0.5, sort_keys=False, width=10**6)
    if rng.random() < 0.4:
        text = _text_edit(rng, text, big=big)
    if big and rng.random() < 0.01:
        text += "# " + "x" * (1 << 20) + "\n"  # over the size limit
    raw = text.encode("utf-8", errors="surrogatepass")
    if rng.random() < 0.03:  # random bytes, not necessarily UTF-8
        pos = rng.randrange(len(raw) + 1)
        raw = raw[:pos] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))) + raw[pos:]
    return raw


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    traceback: str | None  #: set when anything but a clean exit happened
    output: str


def run_validate(raw: bytes, directory: Path | None = None) -> Outcome:
    """``vlagen validate`` on a file holding ``raw``, in-process."""
    from vlagen.cli import main

    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = Path(tmp) / "spec.yaml"
        path.write_bytes(raw)
        result = CliRunner().invoke(main, ["validate", str(path)])
    problem = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        problem = "".join(traceback.format_exception(result.exception))
    elif "Traceback" in result.output or "internal error" in result.output:
        problem = result.output
    return Outcome(result.exit_code, problem, result.output)
