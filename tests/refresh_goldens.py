"""Regenerate ``generated_examples/<name>/`` from every ``specs/<name>.yaml``.

Run after an intended change to templates or the generator, then review the diff like code:

    python tests/refresh_goldens.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from vlagen.api import generate, write
from vlagen.load import load_spec

REPO = Path(__file__).resolve().parent.parent


def example_specs() -> list[Path]:
    return sorted((REPO / "specs").glob("*.yaml"))


def render_example(spec: Path, out_dir: Path) -> None:
    """Generate the example ``spec`` into ``out_dir`` (which must not exist)."""
    loaded = load_spec(spec)
    write(generate(loaded.spec, loaded.text), out_dir, fresh=True)


def main() -> int:
    goldens = REPO / "generated_examples"
    goldens.mkdir(exist_ok=True)
    names = {spec.stem for spec in example_specs()}
    for stale in sorted(p for p in goldens.iterdir() if p.is_dir() and p.name not in names):
        shutil.rmtree(stale)
        print(f"removed  {stale.relative_to(REPO)} (its spec is gone)")
    for spec in example_specs():
        out = goldens / spec.stem
        shutil.rmtree(out, ignore_errors=True)
        render_example(spec, out)
        print(f"wrote    {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
