"""The grader's settings, each declared once: a :class:`Config` field (:func:`option`).

A declaration holds the default, the help text, the unit, whether the Gradescope bundle
carries it, the bounds it must keep and, for a limit, what it limits and what a
student's report says when it is hit. Everything else is derived from the fields:

- the command line: :func:`add_options`, :func:`from_args` (``cli.py``; ``release.py``
  for the bundle's options);
- the bundle's settings: :func:`bundle_settings` (``autograder.json``) and
  :func:`from_settings` (``gradescope.py`` builds its :class:`Config` with it);
- the limits in force, in the progress line: :meth:`Config.limits_text`;
- the child's limits, in each job it is sent (``child=True``): :func:`child_limits`
  (:class:`rnnbook.grading.job.Job`'s ``limits``; the zygote or the child reads them);
- the instructors' *Limits* tables: :func:`limits_table` (the options that are limits, then
  :data:`FIXED`, the limits that are not options), between :data:`MARKERS` in
  ``book/instructors.md`` (``tests/test_config.py`` holds the two equal;
  ``python -m rnnbook.grading.config`` rewrites the page's copy).

A new option is its declaration here and the code that reads it, in the grader or (with
``child=True``) in the child; ``tests/test_config.py`` fails for an option no code reads
(CONTRIBUTING.md, *Adding a grader option*).
"""
import argparse
import functools
import os
import pathlib
import re
import sys
import textwrap
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any

from rnnbook.environment import PREBUILT_GRAPHS

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
INSTRUCTORS = ROOT / "book" / "instructors.md"
#: the table of exercises (number, name, points, kind per chapter) the Gradescope bundle
#: carries in place of solutions/
EXERCISES = "exercises.json"
#: a bundle built with a fixed seed: TensorFlow's expected answers on that seed's trials,
#: computed by the oracles when the bundle is built (next to EXERCISES; root-only on Gradescope)
EXPECTED = "expected.pickle"
#: a bundle for a chapter whose checks module has a ``prebuild()``: its graphs, built when the
#: bundle is (:func:`rnnbook.oracles.graphs_record`), which the zygote takes instead of
#: building them at every cold start (next to EXERCISES; root-only on Gradescope)
PREBUILT = PREBUILT_GRAPHS
WALLS = ("required", "auto", "off")
#: Gradescope's visibility of each test's output (its trials): shown at once, never,
#: after the due date, or once the grades are published
VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")
#: the lines around the generated limits' tables in book/instructors.md
MARKERS = ("% BEGIN the limits' tables: python -m rnnbook.grading.config writes them",
           "% END the limits' tables")


def _chapters() -> tuple[str, ...]:
    from rnnbook import checks  # lazily: the chapters' names, not the checks themselves

    return tuple(sorted(checks.CHAPTERS))


@dataclass(frozen=True)
class Option:
    """One setting's declaration: the metadata of its :class:`Config` field."""

    help: str  # what it sets, for --help (the default is added)
    unit: str = ""  # argparse's metavar, and the table's: S (seconds), MB, N
    bundle: bool = False  # the Gradescope bundle's autograder.json carries it
    child: bool = False  # the child enforces it: the job's ``limits`` carry it (job.py)
    limits: str = ""  # a limit: what it limits (its row of the Limits table)
    hit: str = ""  # a limit: what the student's report says when it is hit
    above: float | None = None  # the value must be greater than this ...
    least: float | None = None  # ... or at least this
    why: str = ""  # the reason for the bound, in its error
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] = ()
    shown: str = ""  # the default as --help says it, where it is not the value itself
    parse: Callable[[str], Any] | None = None  # command-line text -> value (else: type)
    #: a setting chosen by flags of its own: (flag, value, help); the first given wins
    switches: tuple[tuple[str, str, str], ...] = ()


def option(default: Any, help: str, **declared: Any) -> Any:
    """A :class:`Config` field: its default, and the rest of its :class:`Option`."""
    return field(default=default, metadata={"option": Option(help, **declared)})


@dataclass
class Config:
    """Every setting of a grading run; each field's :class:`Option` says the rest."""

    seed: int | None = option(
        None, "the trials' seed: the same seed, the same trials", unit="N", bundle=True,
        shown="a fresh random seed, recorded in every report")
    chapter: str | None = option(
        None, "the assignment's chapter: every submission is graded as this one",
        bundle=True, choices=_chapters)
    timeout: float = option(
        10.0, "seconds per exercise (all its trials), by the grader's clock", unit="S",
        bundle=True, above=0, limits="seconds for one exercise (all its trials)",
        hit='the exercise "went over the time limit of S s"; 0')
    cell_timeout: float = option(
        120.0, "seconds per notebook cell", unit="S", bundle=True, above=0,
        limits="seconds for one notebook cell, IPython's transformation of its magics "
               "included",
        hit='"Note: cell N went over the time limit of S s; it was skipped"')
    budget: float = option(
        300.0, "seconds of wall time per submission, all its children together",
        unit="S", bundle=True, above=0,
        limits="seconds of wall time for a whole submission, every restart included",
        hit="the exercises not yet graded: \"the submission's time budget of S s ran "
            'out"; 0')
    memory: int = option(
        2048, "MB of memory per submission's process and what it starts", unit="MB",
        bundle=True, above=0,
        limits="the notebook's process and everything it starts: resident memory, "
               "memfd files, its scratch files",
        hit='"went over the memory limit of MB MB" (and how much of it was scratch '
            "files); 0 for that exercise, or the cell skipped")
    processes: int = option(
        256, "processes and threads per submission's process, together", unit="N",
        bundle=True, least=16, why="a TensorFlow child has a few threads of its own",
        limits="processes and threads of the notebook's process and everything it "
               "starts, together",
        hit="what the submission's code raises: `BlockingIOError: [Errno 11] "
            "Resource temporarily unavailable` from a fork, `RuntimeError: can't start "
            "new thread`")
    max_notebook: int = option(
        32, "MB of a submission's file", unit="MB", bundle=True, above=0,
        limits="the notebook file, read before any of it runs",
        hit='"Not graded: ... larger than MB MB"; 0')
    max_cells: int = option(
        5000, "cells of a submission's notebook", unit="N", bundle=True, above=0,
        limits="the notebook's cells, counted before any of it runs (reading a notebook "
               "costs the grader's own time in its number of cells)",
        hit='"Not graded: ... more than N cells (N)"; 0')
    max_output: int = option(
        32, "MB a submission may print, or write into one file", unit="MB", bundle=True,
        above=0, child=True, limits="what a notebook prints, or writes into one file",
        hit="the write fails: `OSError: [Errno 27] File too large`")
    workers: int = option(
        os.cpu_count() or 1, "submissions graded at once", unit="K", above=0,
        shown="the number of cores")
    walls: str = option(
        "required", "the walls around submissions", choices=WALLS, switches=(
            ("--no-walls", "off", "grade without the walls around submissions (only "
                                  "where each submission has a container of its own)"),
            ("--walls-if-possible", "auto", argparse.SUPPRESS)))
    overwrite: bool = option(False, "replace reports already in --out")
    visibility: str = option(
        "visible", "Gradescope's visibility of each exercise's output, its trials; "
                   "after_due_date hides them until the deadline",
        bundle=True, choices=VISIBILITY)
    roster: str | None = option(
        None, "CSV with columns file, id, name, email: who wrote which submission "
              "(file: a notebook's name, or its path for two files of one name)",
        unit="ROSTER", parse=lambda text: str(pathlib.Path(text)))
    class_report: bool = option(
        True, "skip class-report.html and .csv (Gradescope grades one at a time)")
    profile: bool = option(
        False, "say where the run's wall time went, from the grader's start: on stderr, "
               "and in --out's profile.csv")

    def check(self) -> "Config":
        """This config, or a ValueError saying in one line what is wrong and why."""
        for f in fields(self):
            _check(f, getattr(self, f.name))
        return self

    def limits_text(self) -> str:
        """The limits in force, as flags: ``--timeout 10 --cell-timeout 120 ...``."""
        return " ".join(f"{flag(f)} {_shown(getattr(self, f.name))}"
                        for f in fields(self) if declared(f).limits)


def declared(f: Field[Any]) -> Option:
    """The :class:`Option` of a :class:`Config` field."""
    return f.metadata["option"]


def flag(f: Field[Any]) -> str:
    """``--cell-timeout`` for ``cell_timeout``; ``--no-x`` for a bool ``x`` on by
    default; a setting chosen by switches is named by its field."""
    name = f.name.replace("_", "-")
    if declared(f).switches:
        return f.name
    return f"--no-{name}" if f.default is True else f"--{name}"


def _kind(f: Field[Any]) -> type:
    """The field's type; ``int`` for ``int | None``."""
    if isinstance(f.type, types.UnionType):
        return next(k for k in f.type.__args__ if k is not type(None))
    return f.type  # type: ignore[return-value]  # a type, not a string: no __future__


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _choices(f: Field[Any]) -> tuple[str, ...]:
    choices = declared(f).choices
    return choices() if callable(choices) else choices


def _check(f: Field[Any], value: Any) -> None:
    o, label = declared(f), flag(f)
    if value is None and f.default is None:
        return
    if o.above is not None and not value > o.above:  # NaN is refused too
        over = "positive" if o.above == 0 else f"over {o.above:g}"
        raise ValueError(f"{label} must be {over}, not {_shown(value)}")
    if o.least is not None and not value >= o.least:
        because = f" ({o.why})" if o.why else ""
        raise ValueError(f"{label} must be at least {o.least:g}{because}, "
                         f"not {_shown(value)}")
    if o.choices and value not in _choices(f):
        raise ValueError(f"{label} must be one of {', '.join(_choices(f))}, "
                         f"not {value!r}")


# --- derived: the command line -----------------------------------------------------


def add_options(parser: argparse.ArgumentParser, *, bundle: bool = False,
                required: Iterable[str] = ()) -> None:
    """Add every option to ``parser``; those in ``required`` must be given.
    ``bundle``: the bundle's options only, ``None`` unless given (its default then)."""
    for f in fields(Config):
        o = declared(f)
        if bundle and not o.bundle:
            continue
        if o.switches:
            for switch, value, text in o.switches:
                parser.add_argument(switch, dest=f.name, action="append_const",
                                    const=value, help=text)
        elif isinstance(f.default, bool):
            parser.add_argument(flag(f), dest=f.name, help=o.help,
                                action="store_false" if f.default else "store_true")
        else:
            shown = o.shown or ("" if f.default is None else _shown(f.default))
            parser.add_argument(flag(f), dest=f.name, type=o.parse or _kind(f),
                                choices=_choices(f) or None, metavar=o.unit or None,
                                default=None if bundle else f.default,
                                required=f.name in required,
                                help=o.help + (f" (default: {shown})" if shown else ""))


def from_args(args: argparse.Namespace) -> Config:
    """The :class:`Config` of parsed arguments: each option's value, or its default."""
    values = {}
    for f in fields(Config):
        if not hasattr(args, f.name):
            continue
        value = getattr(args, f.name)
        if declared(f).switches:
            given = value or ()
            chosen = [v for _, v, _ in declared(f).switches if v in given]
            value = chosen[0] if chosen else f.default
        values[f.name] = value
    return Config(**values)


def given(args: argparse.Namespace) -> dict[str, Any]:
    """The options parsed with ``add_options(bundle=True)`` that were given."""
    return {name: getattr(args, name) for name in bundle_names()
            if getattr(args, name, None) is not None}


# --- derived: the Gradescope bundle's settings -------------------------------------


def bundle_names() -> tuple[str, ...]:
    """The settings the bundle's ``autograder.json`` may hold."""
    return tuple(f.name for f in fields(Config) if declared(f).bundle)


def bundle_settings(config: Config) -> dict[str, Any]:
    """``config``'s settings as the bundle's ``autograder.json`` holds them."""
    return {name: getattr(config, name) for name in bundle_names()}


def bundle_defaults() -> dict[str, Any]:
    """What ``autograder.json`` holds when nothing is chosen."""
    return bundle_settings(Config())


def _coerced(f: Field[Any], value: Any) -> Any:
    """A value read from JSON, as the field's type (a string read as the command line
    reads it); a ValueError when it is not one."""
    kind = _kind(f)
    if isinstance(value, str) and kind is not str:
        try:
            return (declared(f).parse or kind)(value)
        except ValueError:
            pass
    elif kind is float and isinstance(value, int | float) and type(value) is not bool:
        return float(value)
    elif isinstance(value, kind) and not isinstance(value, bool):
        return value
    what = {int: "a whole number", float: "a number"}.get(kind, f"a {kind.__name__}")
    raise ValueError(f"{flag(f)} must be {what}, not {value!r}")


def from_settings(settings: Mapping[str, Any], **fixed: Any) -> Config:
    """The checked :class:`Config` of a bundle's settings (other keys, and nulls, are
    left out: defaults), ``fixed`` values on top; a ValueError says what is wrong."""
    bundled = {f.name: f for f in fields(Config) if declared(f).bundle}
    values = {name: _coerced(bundled[name], value) for name, value in settings.items()
              if name in bundled and value is not None}
    return Config(**{**values, **fixed}).check()


# --- derived: the instructors' Limits table ----------------------------------------


@dataclass(frozen=True)
class Fixed:
    """A limit that is not an option: a row of the instructors' table of fixed limits."""

    limit: str
    default: str
    limits: str  # what it limits
    hit: str  # what the student's report says
    where: str  # "rnnbook/...py NAME": the constant that holds it (tests/test_config.py)


#: the limits that are fixed, in the instructors' table
FIXED = (
    Fixed("scratch files", "a quarter of `--memory`, at most 256 MB",
          "`/tmp`, `/dev/shm` and the working folder together",
          'the write fails: "it wrote more than N MB of scratch files"',
          "rnnbook/grading/walls.py SCRATCH_MAX"),
    Fixed("SysV shared memory", "16 segments, 32 MB together", "`shmget` (behind the walls)",
          "what the code raises (`shmget` fails)", "rnnbook/grading/walls.py SHM_SEGMENTS"),
    Fixed("open files", "1,024", "descriptors of one process",
          "what the code raises (`OSError: [Errno 24] Too many open files`)",
          "rnnbook/grading/zygote.py MAX_FILES"),
    Fixed("an answer", "16 times its trials' inputs, at least 1 MB",
          "what an exercise sends back, checked before it is decoded",
          '"sent back more data than its trials allow"; 0',
          "rnnbook/grading/wire.py answer_bound"),
    Fixed("notes", "20 notes of 500 characters",
          "what the report says about cells that raised or were skipped (each test's "
          "feedback: 4,000 characters)", '"... and N more characters"; "And N more notes."',
          "rnnbook/grading/results.py MAX_NOTES"),
)


def limits_table() -> str:
    """The *Limits* tables: the options that are limits (those the bundle carries said
    after it), then :data:`FIXED`."""
    rows = ["| Option | Default | What it limits | The student's report says |",
            "|---|---|---|---|"]
    bundled = []
    for f in fields(Config):
        o = declared(f)
        if o.limits:
            rows.append(f"| `{flag(f)} {o.unit}` | {_shown(f.default)} | {o.limits} "
                        f"| {o.hit} |")
            bundled += [f"`{flag(f)}`"] if o.bundle else []
    said = textwrap.fill(f"The Gradescope bundle carries {', '.join(bundled)} too: "
                         "`python -m rnnbook.grading.release autograder` takes the "
                         "same flags.", 88)
    fixed = ["The limits that are fixed:", "",
             "| Limit | Default | What it limits | The student's report says |",
             "|---|---|---|---|"]
    fixed += [f"| {x.limit} | {x.default} | {x.limits} | {x.hit} |" for x in FIXED]
    return "\n".join(rows) + f"\n\n{said}\n\n" + "\n".join(fixed)


#: the modules the child runs, where it reads its limits as ``job.limits["<field>"]``
CHILD_SIDE = ("zygote.py", "child.py")


@functools.cache
def read_by_the_child() -> dict[str, str]:
    """``{field: module}`` of every ``job.limits["<field>"]`` in :data:`CHILD_SIDE`."""
    here = pathlib.Path(__file__).parent
    return {name: module for module in CHILD_SIDE
            for name in re.findall(r"""limits\[["'](\w+)["']\]""",
                                   (here / module).read_text())}


def not_passed(limits: Mapping[str, object], reads: Mapping[str, str]) -> str | None:
    """The error when the child reads a limit the job does not carry (``reads``: field ->
    module), naming the option and the declaration to fix; None when all are passed."""
    missing = sorted(set(reads) - set(limits))
    if not missing:
        return None
    return "; ".join(
        f"the child reads job.limits[{name!r}] (rnnbook/grading/{reads[name]}) but the job "
        f"does not carry it: declare --{name.replace('_', '-')} in rnnbook/grading/config.py "
        "with child=True and bundle=True" for name in missing)


def child_limits(config: Config) -> dict[str, int | float]:
    """The options the child enforces (``child=True``), for the job: ``{name: value}``.
    A limit the child reads that no declaration passes on stops the run here, named
    (in the child it would only end the process)."""
    limits = {f.name: getattr(config, f.name) for f in fields(config) if declared(f).child}
    error = not_passed(limits, read_by_the_child())
    if error:
        raise RuntimeError(error)
    return limits


def with_limits_table(page: str) -> str:
    """``page`` (book/instructors.md) with :func:`limits_table` between the markers."""
    start, end = MARKERS
    if page.count(start) != 1 or page.count(end) != 1:
        raise ValueError(f"{INSTRUCTORS.name} must hold each line of MARKERS once")
    before, rest = page.split(start, 1)
    return f"{before}{start}\n{limits_table()}\n{end}{rest.split(end, 1)[1]}"


def main(argv: list[str] | None = None) -> int:
    """Write the limits' tables into book/instructors.md (``--check``: only compare)."""
    parser = argparse.ArgumentParser(prog="python -m rnnbook.grading.config",
                                     description=main.__doc__)
    parser.add_argument("--check", action="store_true", help="write nothing")
    args = parser.parse_args(argv)
    page = INSTRUCTORS.read_text()
    try:
        wanted = with_limits_table(page)
    except ValueError as error:
        print(f"config: error: {error}", file=sys.stderr)
        return 2
    if wanted != page and args.check:
        print(f"config: {INSTRUCTORS}'s limits' tables differ from config.py's",
              file=sys.stderr)
        return 1
    if wanted != page:
        INSTRUCTORS.write_text(wanted)
        print(f"wrote {INSTRUCTORS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
