"""The ``vlagen`` command line.

Exit codes: 0 ok; 1 differences, stale output or a conflict with files on disk (or a bug in
vlagen, reported in one line; ``VLAGEN_DEBUG=1`` shows its traceback); 2 invalid input or
usage; 130 (SIGINT's) on Ctrl-C; 141 (SIGPIPE's, as a shell reports ``git log | head``) when
stdout's reader goes away, quietly. ``targets diff`` is a report: 0 whatever it finds. No
input makes it print a traceback. Heavy modules load inside each command, so ``vlagen
--help`` imports neither pydantic nor jinja2 (and nothing here ever imports torch).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ._version import __version__
from .errors import SpecError, UserError
from .paths import STREAM

#: The commands that write files: a spec error says that nothing was.
WRITERS = frozenset({"new", "regen", "init"})


class _Group(click.Group):
    """Prints vlagen's user errors without a traceback and exits with their code; ends
    quietly, as ``git log | head`` does, when a reader of its output goes away."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _quiet_on_broken_pipe():  # --help and --version print while parsing
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _quiet_on_broken_pipe():  # stdout, or stderr in the reports below
            try:
                return self._invoke_reporting(ctx)
            finally:  # what is still buffered: a reader gone now is a broken pipe here too
                sys.stdout.flush()

    def _invoke_reporting(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SpecError as exc:
            click.echo(exc.format(), err=True)
            count = len(exc.issues)
            # said only by the commands that write
            written = "; nothing was written" if ctx.invoked_subcommand in WRITERS else ""
            click.echo(
                f"vlagen: {count} problem{'s' * (count != 1)} in {exc.path}{written}.", err=True
            )
            ctx.exit(exc.exit_code)
        except UserError as exc:
            click.echo(f"vlagen: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:  # click's own handler would exit 1, which check means "stale"
            click.echo("\nvlagen: interrupted", err=True)
            ctx.exit(SIGINT_STATUS)
        except BrokenPipeError:
            raise
        except OSError as exc:
            click.echo(
                f"vlagen: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), err=True
            )
            ctx.exit(2)
        except (RecursionError, MemoryError) as exc:  # the loader's limits should prevent these
            click.echo(
                f"vlagen: the input is too large or too deeply nested to process "
                f"({type(exc).__name__}); nothing was written.",
                err=True,
            )
            ctx.exit(2)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:  # a bug in vlagen: one line, not a traceback, unless asked
            if os.environ.get("VLAGEN_DEBUG"):
                raise
            click.echo(
                f"vlagen: internal error: {type(exc).__name__}: {str(exc)[:300]}\n"
                "This is a bug in vlagen; please report it with the spec "
                "(VLAGEN_DEBUG=1 shows the traceback).",
                err=True,
            )
            ctx.exit(1)


#: The exit status of a command killed by SIGPIPE, as a shell reports it (128 + 13).
SIGPIPE_STATUS = 141
#: The exit status of a command stopped by Ctrl-C (SIGINT), as a shell reports it (128 + 2).
SIGINT_STATUS = 130


@contextlib.contextmanager
def _quiet_on_broken_pipe() -> Iterator[None]:
    """The reader of stdout or stderr went away (``vlagen new --dry-run | head -1``): stop
    without a word and exit as ``git log | head`` does, killed by SIGPIPE (141), so a
    pipeline under ``set -o pipefail`` does not take the cut-off output for a whole one.
    (click's own handler would exit 1, vlagen's "differences".) What is still buffered goes
    to /dev/null, so Python's own flush at exit has no pipe to break."""
    try:
        yield
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            for stream in (sys.stdout, sys.stderr):
                os.dup2(devnull, stream.fileno())
        raise SystemExit(SIGPIPE_STATUS) from None


def _dash_is_stdin(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """``-`` names standard input, as it does for most tools: read as /dev/stdin."""
    return Path(STREAM) if str(value) == "-" else value


spec_argument = click.argument(
    "spec", type=click.Path(dir_okay=False, path_type=Path), callback=_dash_is_stdin
)
output_option = click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory [default: the package SPEC is in (its vlagen.yaml), else "
    "./<project name>].",
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vlagen")
def main() -> None:
    """Generate VLA-model + simulator adapter packages for RL post-training frameworks
    (AReaL, RLinf, verl, siiRL) from one YAML spec."""
    # Pydantic's plugins observe validation, which a run does once, of vlagen's own spec
    # models; finding them reads the entry points of every installed distribution (25 ms of
    # a 700 ms `vlagen new` in a venv of 200). Set the variable to load them anyway.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def _load(spec_path: Path, out_dir: Path | None, *, fresh: bool):
    from .api import generate
    from .load import load_spec

    loaded = load_spec(spec_path)
    output = generate(loaded.spec, loaded.text)
    name = loaded.spec.project.name
    return output, out_dir or _default_output(spec_path, name, existing=not fresh)


def _compared(spec_path: Path, out_dir: Path | None):
    """For the commands that compare (check, diff): ``None`` when the output is known to be
    exactly what the spec generates (see :mod:`vlagen.fingerprint`); else what the spec
    generates and where, remembering which manifest these inputs made when vlagen's files
    were the same before and after generating."""
    from .fingerprint import inputs_digest, is_up_to_date, remember
    from .provenance import without_header

    where = out_dir or _package_of(spec_path)
    if where is not None and is_up_to_date(spec_path, where):
        return None
    from .api import generate  # only now: the answer above needs neither pydantic nor Jinja
    from .load import load_spec

    loaded = load_spec(spec_path, probe=False)  # no simulator import: see vlagen.gymids
    before = inputs_digest(without_header(loaded.text))
    output = generate(loaded.spec, loaded.text)
    if inputs_digest(without_header(loaded.text)) == before:
        remember(before, output.manifest.to_bytes())
    return output, out_dir or _default_output(spec_path, loaded.spec.project.name, existing=True)


def _default_output(spec_path: Path, project: str, *, existing: bool) -> Path:
    """The package the spec sits in (its ``vlagen.yaml``), else ``./<project name>``.

    Raises:
        UsageError: for a command that needs an ``existing`` package, where the spec is the
            copy a package keeps but the package's manifest is gone: ``./<project name>``
            would be the wrong directory, and the error would name it.
    """
    package = _package_of(spec_path)
    if package is None and existing and _lost_its_manifest(spec_path):
        from .errors import UsageError
        from .paths import MANIFEST_PATH

        here = spec_path.parent
        new = shlex.join(["vlagen", "new", str(spec_path), "-o", str(here), "--force"])
        raise UsageError(
            f"{here} has no {MANIFEST_PATH}, so it is no longer a vlagen output: {spec_path} "
            "is a package's copy of its spec, and the manifest beside it records what vlagen "
            "wrote, which regen, check and diff compare your files with. Restore it (`git "
            f"checkout -- {here / MANIFEST_PATH}`), or make the package again with `{new}` "
            "(a file you edited is replaced, its copy kept under .vlagen/kept/)"
        )
    return package or Path(project)


def _lost_its_manifest(spec_path: Path) -> bool:
    """Whether ``spec_path`` is a package's spec copy (its name, and vlagen's header or a
    ``.vlagen`` folder beside it) whose package has no manifest."""
    from .provenance import SPEC_COPY, without_header

    if spec_path.name != SPEC_COPY:
        return False
    if (spec_path.parent / ".vlagen").is_dir():
        return True
    try:
        text = spec_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return without_header(text) != text


def _package_of(spec_path: Path) -> Path | None:
    """The vlagen output ``spec_path`` sits in, if it sits in one."""
    from .paths import MANIFEST_PATH

    here = spec_path.parent
    return here if (here / MANIFEST_PATH).is_file() else None


def _write(spec: Path, out_dir: Path | None, *, dry_run: bool, force: bool, fresh: bool) -> None:
    from .api import refuse_an_output, write
    from .report import needs_you, print_changes

    output, out_dir = _load(spec, out_dir, fresh=fresh)
    if fresh:
        refuse_an_output(output, out_dir, spec, writing=not dry_run)
    changes = write(output, out_dir, force=force, dry_run=dry_run, fresh=fresh)
    print_changes(changes, out_dir, dry_run=dry_run)
    asks = needs_you(changes, then="run `vlagen regen` again", would=dry_run)
    for ask in asks:
        click.echo(f"vlagen: {ask}", err=True)
    if asks:
        raise SystemExit(1)
    for note in output.plan.update_notes.values():
        if note.warns:
            click.echo(f"vlagen: warning: {note.text}", err=True)
    for memory in output.plan.memory_plans.values():
        if memory.warns:
            click.echo(f"vlagen: warning: {memory.text}", err=True)
    if fresh and not dry_run:
        click.echo(f"next: read {out_dir / 'README.md'}: how to install, test and launch it")


@main.command()
@spec_argument
@output_option
@click.option("--dry-run", is_flag=True, help="List what would be written; write nothing.")
@click.option(
    "--force",
    is_flag=True,
    help="Write into a non-empty directory vlagen did not make (copies of what is replaced "
    "are kept under .vlagen/kept/). A vlagen output is refused even so: `vlagen regen` "
    "regenerates it.",
)
def new(spec: Path, out_dir: Path | None, dry_run: bool, force: bool) -> None:
    """Generate a new adapter package from SPEC. Refuses a directory vlagen already made
    (exit 2, nothing written): `vlagen regen SPEC -o DIR` regenerates that one."""
    _write(spec, out_dir, dry_run=dry_run, force=force, fresh=True)


@main.command()
@spec_argument
@output_option
@click.option(
    "--dry-run", is_flag=True, help="List what would change; write nothing; exit as regen would."
)
@click.option(
    "--force",
    is_flag=True,
    help="Discard edits to generated files instead of merging them (a copy of each is kept "
    "under .vlagen/kept/).",
)
def regen(spec: Path, out_dir: Path | None, dry_run: bool, force: bool) -> None:
    """Rewrite a generated package from SPEC, merging your edits to generated files into the
    new output. Exit 1 if an edit conflicts with the new output (regen marks it in the file)."""
    _write(spec, out_dir, dry_run=dry_run, force=force, fresh=False)


@main.command()
@spec_argument
def validate(spec: Path) -> None:
    """Check SPEC and exit: 0 if valid, 2 with every problem listed if not."""
    from .load import load_spec

    loaded = load_spec(spec)
    targets = ", ".join(f"{t.framework} {t.version}" for t in loaded.spec.targets)
    click.echo(f"{spec}: valid ({loaded.spec.project.name}; targets: {targets})")


@main.command()
@spec_argument
@output_option
@click.option("--stat", is_flag=True, help="One line per file: lines added and removed.")
def diff(spec: Path, out_dir: Path | None, stat: bool) -> None:
    """Show what `vlagen regen` would change in the package; exit 1 if anything, or if regen
    would stop at a conflict (named on stderr). Your edits to generated files are not
    differences: regen keeps them (`vlagen check` lists them)."""
    compared = _compared(spec, out_dir)
    if compared is None:
        return
    from .api import changes_for, require_output
    from .sync import NEEDS_USER, line_counts, unified_diff

    output, out_dir = compared
    require_output(out_dir)
    changes = changes_for(output, out_dir)
    for change in changes:  # what regen would stop at: on stderr, and exit 1 as regen would
        if change.action in NEEDS_USER:
            click.echo(f"{change.action.value:<9} {change.path}  ({change.reason})", err=True)
    differs = any(c.action in NEEDS_USER for c in changes)
    if stat:
        total = [0, 0, 0]
        for change in changes:
            added, removed = line_counts(change)
            if added or removed:
                click.echo(f"{change.path} | +{added} -{removed}")
                total = [total[0] + 1, total[1] + added, total[2] + removed]
        if total[0]:
            click.echo(f"{total[0]} file{'s' * (total[0] != 1)}, +{total[1]} -{total[2]}")
        if total[0] or differs:
            raise SystemExit(1)
        return
    diffs = unified_diff(changes)
    colours = {"+": "green", "-": "red", "@": "cyan"}
    for lines in diffs:
        for line in lines:
            head = line[:3]
            colour = None if head in ("---", "+++") else colours.get(line[:1])
            click.echo(click.style(line, fg=colour, bold=head in ("---", "+++")), nl=False)
    if diffs or differs:
        raise SystemExit(1)


@main.command()
@spec_argument
@output_option
@click.option("--strict", is_flag=True, help="Fail on kept edits to generated files too.")
def check(spec: Path, out_dir: Path | None, strict: bool) -> None:
    """Is the package what vlagen makes from SPEC, with your kept edits? Exit 1, naming the
    files, if it is stale (regen not run), a file is missing or obsolete, or regen would stop
    at a conflict or refuse a file. Edits regen keeps are listed and pass, unless --strict."""
    compared = _compared(spec, out_dir)
    if compared is None:
        return
    from .api import check as check_output
    from .report import judge

    output, out_dir = compared
    verdict = judge(check_output(output, out_dir), spec, out_dir, strict=strict)
    for line in verdict.lines:
        click.echo(line)
    for failure in verdict.failures:
        click.echo(f"vlagen: {failure}", err=True)
    if not verdict.passed:
        raise SystemExit(1)


@main.command()
def schema() -> None:
    """Print the spec's JSON Schema (draft 2020-12)."""
    from .schema import schema_text

    click.echo(schema_text(), nl=False)


@main.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing spec and schema.")
@click.option(
    "--example",
    metavar="NAME",
    help="Write the example spec NAME (PATH defaults to NAME.yaml) instead of the starter; "
    "'--example list' lists the examples.",
)
@click.option(
    "--from-gymnasium",
    "env_id",
    metavar="ENV_ID",
    help="Fill the starter from this Gymnasium env (made with render_mode='rgb_array', reset, "
    "rendered once): preset, camera, state, action and episode length. Ids of other packages "
    "register when imported: 'module:Env-v0'.",
)
@click.option(
    "--gym-kwargs",
    metavar="JSON",
    help="With --from-gymnasium: a JSON object of keyword arguments for gymnasium.make, "
    "also written to env.gymnasium.kwargs, e.g. '{\"continuous\": true}'.",
)
def init(
    path: Path | None,
    force: bool,
    example: str | None,
    env_id: str | None,
    gym_kwargs: str | None,
) -> None:
    """Write a commented starter spec to PATH (default vlagen.yaml), and its JSON Schema
    beside it, for editors.

    Writes both files or neither; refuses a symlink at either path, and, without --force,
    either file existing. With --from-gymnasium the spec is checked as `vlagen validate`
    would before anything is written. With --example NAME, the example spec NAME (one of
    those `vlagen init --example list` lists).
    """
    from . import example_specs
    from .errors import ConflictError, UsageError
    from .outdir import OutDir
    from .paths import templates_root
    from .schema import schema_text
    from .spec import SCHEMA_FILE

    if example == "list":
        if path is not None:
            raise UsageError("--example list prints the examples' names; it writes no PATH")
        for name in example_specs.names():
            click.echo(f"{name:<22} {example_specs.describe(name)}")
        return
    if example is not None and env_id is not None:
        raise UsageError("--example and --from-gymnasium each write a spec; give one")
    chosen = None if example is None else example_specs.read(example)  # a wrong name: exit 2
    path = path or Path(f"{example}.yaml" if example else "vlagen.yaml")
    if path.name == SCHEMA_FILE:
        raise UsageError(f"{path}: that name is for the schema; name the spec differently")
    if gym_kwargs is not None and env_id is None:
        raise UsageError("--gym-kwargs goes with --from-gymnasium ENV_ID")
    schema_path = path.parent / SCHEMA_FILE
    schema = schema_text().encode()
    with OutDir(path.parent, writing=True) as out:
        for name in (path.name, SCHEMA_FILE):
            out.check_writable(name)  # a symlink (even dangling) or a non-file: exit 2
        spec_exists = out.exists(path.name)
        # The schema is this vlagen's, whichever spec it sits beside: one already there and
        # the same serves the new spec too (a second spec in the folder); another is kept
        # unless --force.
        old_schema = out.read(SCHEMA_FILE)
    existing = [str(path)] if spec_exists else []
    if old_schema is not None and old_schema != schema:
        existing.append(str(schema_path))
    if existing and not force:
        verb, them = ("exists", "it") if len(existing) == 1 else ("exist", "them")
        raise ConflictError(f"{' and '.join(existing)} {verb}; use --force to overwrite {them}")
    if chosen is not None:
        starter = chosen
    elif env_id is None:
        starter = (templates_root() / "starter.yaml").read_bytes()
    else:
        starter = _starter_from_gymnasium(env_id, gym_kwargs, path)
    files = {path.name: starter}
    if old_schema != schema:
        files[SCHEMA_FILE] = schema
    path.parent.mkdir(parents=True, exist_ok=True)
    with OutDir(path.parent, writing=True) as out:
        out.create(files, replace=force)
    beside = f"wrote {path} and {schema_path}" if SCHEMA_FILE in files else f"wrote {path}"
    click.echo(f"{beside}; next: vlagen new {path}")


def _starter_from_gymnasium(env_id: str, gym_kwargs: str | None, path: Path) -> bytes:
    """The starter spec for ``env_id``, checked as ``vlagen validate`` checks a file."""
    from .errors import UsageError
    from .fromgym import infer
    from .load import load_spec_text
    from .starter import starter_text

    kwargs = None
    if gym_kwargs is not None:
        try:
            kwargs = json.loads(gym_kwargs)
        except ValueError as exc:
            raise UsageError(f"--gym-kwargs is not JSON: {exc}") from None
        if not isinstance(kwargs, dict):
            raise UsageError("--gym-kwargs must be a JSON object, e.g. '{\"continuous\": true}'")
    text = starter_text(infer(env_id, kwargs))
    load_spec_text(text, str(path))  # a SpecError lists the problems; nothing is written
    return text.encode()


@main.group(invoke_without_command=True)
@click.pass_context
def targets(ctx: click.Context) -> None:
    """List the supported targets: framework, version line, what installs, algorithms, model
    families and backbones; then the frameworks vlagen knowingly does not target, with why."""
    if ctx.invoked_subcommand is not None:
        return
    from .backbones import BACKBONES
    from .targets import UNSUPPORTED, all_targets

    for t in all_targets():
        installs = t.requirement
        if t.source is not None:
            installs = f"{t.requirement} from a {t.source.tag} checkout of {t.source.repository}"
        click.echo(f"{t.framework} {t.version}  ({t.title}; installs {installs})")
        click.echo(f"  algorithms: {', '.join(t.algorithms)}")
        click.echo(f"  model families: {', '.join(t.model_families)}")
        backbones = [f"{b} ({BACKBONES[b].title})" if b in BACKBONES else b for b in t.backbones]
        click.echo(f"  model backbones (model.backbone): {', '.join(backbones)}")
        if t.backbone_note:
            click.echo(f"    only these: {t.backbone_note}")
        click.echo(f"  contract: {t.contract.summary}")
    for entry in UNSUPPORTED:
        click.echo(f"{entry.label}  NOT supported")
        click.echo(f"  why: {entry.reason}")
        click.echo(f"  instead: {entry.instead}")


@targets.command("fit")
@spec_argument
def targets_fit(spec: Path) -> None:
    """Which targets SPEC can take, each on its own (its targets replaced by that one, with
    the spec's algorithm where the target has it, else GRPO, and without the value head where
    that algorithm trains none), and why not the others.

    A report: it exits 0 whatever it finds of the targets; 2, as validate, for a spec it
    cannot read, one with problems whatever the target, or one whose config block for a
    target it declares is refused (each problem reported once)."""
    from .errors import Issue, SpecError
    from .fit import fits, whatever_the_target

    try:
        text = spec.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(str(spec), [Issue((), f"cannot read the spec: {exc}")]) from None
    found = fits(text, str(spec))
    common = whatever_the_target(found)
    if common:  # the spec's own problems, not the targets': once, as validate reports them
        raise SpecError(str(spec), common)
    for fit in found:
        click.echo(f"{fit.label}: {'fits' if not fit.problems else 'refused'}")
        if fit.update is not None:
            click.echo(f"  {'warning: ' if fit.update.warns else ''}{fit.update.text}")
        if fit.memory is not None:
            for line in fit.memory.lines():
                click.echo(f"  {line}")
            if fit.memory.warns:
                click.echo(f"  warning: {fit.memory.text}")
        for issue in fit.problems:
            where = f"line {issue.line}: " if issue.line else ""
            click.echo(f"  {where}{issue.dotted or '(spec)'}: {issue.message}")
    accepted = sum(not fit.problems for fit in found)
    click.echo(f"{spec}: {accepted} of {len(found)} targets fit")


@targets.command("diff")
@click.argument("framework")
@click.argument("old")
@click.argument("new")
@click.option(
    "--keys/--no-keys",
    default=True,
    show_default=True,
    help="List every changed config key, or only their counts per top-level section.",
)
def targets_diff(framework: str, old: str, new: str, keys: bool) -> None:
    """What changed in FRAMEWORK's contract from version line OLD to NEW: env and policy
    methods, observation keys, registration, config keys, algorithms, model families.

    A report: it exits 0 whatever it finds (2 for an unknown framework or version)."""
    from .contractreport import diff_report
    from .targets import require_target

    before, after = require_target(framework, old), require_target(framework, new)
    click.echo(diff_report(before, after, keys=keys), nl=False)
