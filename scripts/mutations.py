"""``make mutations``: every hand mutation of ``tests/mutations.toml`` must be caught.

    python scripts/mutations.py                       # every entry (make mutations)
    python scripts/mutations.py --only ch01-tanh-sign # one (make mutations MUTATION=<id>)
    python scripts/mutations.py --jobs 2              # two at a time (JOBS=2)

Each entry is one small, plausible bug in one module of the package: its ``old`` source text
(which must occur exactly once in ``module``) becomes ``new``. For each, the tracked files
(``git ls-files``) are copied into a scratch folder, the change is made THERE (never in this
working tree), and only the tests the entry names run there, with the scratch copy's
``rnnbook`` the one imported (cwd and ``PYTHONPATH`` are the scratch folder; the run checks
that first). A failing test run is *caught*; a green one is *NOT CAUGHT*; an ``old`` that is
not in the file exactly once *does not apply*; a run that selects no test, times out or
cannot start is an *error*. The exit status is 1 unless every entry is caught.

Before the mutants, each distinct selection of tests runs once on the unchanged copy
(``--no-baseline`` skips it): a selection that fails unmutated proves nothing.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "mutations.toml"
#: how one selection is run: one process, no xdist, none of the suite's nbval options
PYTEST = ["-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-o", "addopts=", "-x", "-q",
          "--no-header", "-rN"]
#: seconds one run may take before it counts as an error
TIMEOUT = 900
#: where the scratch copies go: not under /tmp, which the grader's walls cover with a scratch
#: tmpfs whatever their code says (a copy there would hide a mutation of the walls)
SCRATCH = os.environ.get("MUTATION_TMP") or ("/var/tmp" if os.path.isdir("/var/tmp") else None)


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One entry of the list: ``old`` -> ``new`` in ``module``, caught by ``tests`` (-k ``k``)."""

    id: str
    module: str
    breaks: str
    old: str
    new: str
    tests: tuple[str, ...]
    k: str = ""

    def selection(self) -> tuple[str, ...]:
        """pytest's arguments that select this entry's tests."""
        return (*self.tests, *(("-k", self.k) if self.k else ()))


@dataclasses.dataclass
class Outcome:
    """What one run gave: ``verdict`` is caught, NOT CAUGHT, does-not-apply or error."""

    id: str
    verdict: str
    seconds: float
    detail: str = ""


FIELDS = {"id", "module", "breaks", "old", "new", "tests", "k"}


def load(path: pathlib.Path = LIST) -> list[Mutation]:
    """The list's entries, each checked for its fields; a bad one raises ValueError naming it."""
    with open(path, "rb") as f:
        raw = tomllib.load(f).get("mutation", [])
    found, seen = [], set()
    for n, entry in enumerate(raw, 1):
        name = entry.get("id", f"entry {n}")
        missing = {"id", "module", "breaks", "old", "new", "tests"} - entry.keys()
        if missing or entry.keys() - FIELDS:
            raise ValueError(f"{path.name}: {name}: missing {sorted(missing)} or unknown "
                             f"{sorted(entry.keys() - FIELDS)} fields")
        if name in seen:
            raise ValueError(f"{path.name}: {name}: the id is used twice")
        if entry["old"] == entry["new"] or not entry["tests"]:
            raise ValueError(f"{path.name}: {name}: old equals new, or no tests named")
        seen.add(name)
        found.append(Mutation(**{**entry, "tests": tuple(entry["tests"])}))
    return found


def apply(mutation: Mutation, root: pathlib.Path) -> str | None:
    """Make the change in ``root``'s copy; returns why it does not apply, or None."""
    target = root / mutation.module
    if not target.is_file():
        return f"{mutation.module} does not exist"
    text = target.read_text()
    count = text.count(mutation.old)
    if count != 1:
        return f"its old text occurs {count} times in {mutation.module}, not once"
    target.unlink()  # a new file, never a write through a link to the original
    target.write_text(text.replace(mutation.old, mutation.new))
    return None


def scratch_copy(into: pathlib.Path) -> pathlib.Path:
    """The tracked files of this working tree (as they are now) copied under ``into``."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    copy = into / "repo"
    for name in filter(None, names):
        source, target = ROOT / name, copy / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return copy


def environment(copy: pathlib.Path) -> dict[str, str]:
    """The environment a run in ``copy`` gets: its ``rnnbook`` first on the path."""
    return {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}


def imported_from(copy: pathlib.Path) -> str:
    """Where a run in ``copy`` imports ``rnnbook`` from (it must be the copy)."""
    where = subprocess.run([sys.executable, "-c", "import rnnbook; print(rnnbook.__file__)"],
                           cwd=copy, env=environment(copy), capture_output=True, text=True)
    return where.stdout.strip() or where.stderr.strip()[-300:]


def run_tests(copy: pathlib.Path, selection: tuple[str, ...]) -> tuple[int | None, str]:
    """pytest's exit status (None: timed out) and the tail of its output."""
    proc = subprocess.Popen([sys.executable, *PYTEST, *selection], cwd=copy,
                            env=environment(copy), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out
    return proc.returncode, out


def tail(text: str, lines: int = 6) -> str:
    """The last ``lines`` non-blank lines of ``text``, indented."""
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join("      " + line for line in kept)


def mutate(mutation: Mutation) -> Outcome:
    """Copy, change, run: the verdict on one entry."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutation-{mutation.id}-", dir=SCRATCH) as tmp:
        copy = scratch_copy(pathlib.Path(tmp))
        why = apply(mutation, copy)
        if why:
            return Outcome(mutation.id, "does-not-apply", time.monotonic() - started, why)
        status, out = run_tests(copy, mutation.selection())
    seconds = time.monotonic() - started
    verdict = {0: "NOT CAUGHT", 1: "caught"}.get(status, "error") if status is not None \
        else "error"
    detail = {0: "its tests passed with the change in place",
              5: "no test selected: the entry's tests or -k name nothing"}.get(
                  status, "timed out" if status is None else "")
    return Outcome(mutation.id, verdict, seconds, detail + ("\n" + tail(out)
                                                             if verdict != "caught" else ""))


def baseline(mutations: list[Mutation], jobs: int) -> list[str]:
    """Each distinct selection run once unchanged: the ones that fail, with why."""
    selections = sorted({m.selection() for m in mutations})
    failed = []
    with tempfile.TemporaryDirectory(prefix="mutation-baseline-", dir=SCRATCH) as tmp:
        copy = scratch_copy(pathlib.Path(tmp))
        where = imported_from(copy)
        if not where.startswith(str(copy)):
            return [f"the scratch copy's rnnbook is not the one imported: {where}"]
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for selection, (status, out) in zip(
                    selections, pool.map(lambda s: run_tests(copy, s), selections),
                    strict=True):
                if status != 0:
                    failed.append(f"{' '.join(selection)}: exit {status}\n{tail(out)}")
    return failed


def jobs_of(value: str) -> int | None:
    """How many entries to run at a time, from ``--jobs`` (None: not a count)."""
    if value == "auto":
        return min(2, os.cpu_count() or 1)
    return max(1, int(value)) if value.isdigit() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="one entry's id (MUTATION=<id>)")
    parser.add_argument("--jobs", default="1",
                        help="entries run at a time: a number, or auto (2, or 1 on one core)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="do not run the selections unchanged first")
    parser.add_argument("--list", type=pathlib.Path, default=LIST, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    jobs = jobs_of(args.jobs)
    if jobs is None:
        print(f"mutations: JOBS must be a number or auto, not {args.jobs!r}", file=sys.stderr)
        return 2
    try:
        mutations = load(args.list)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        print(f"mutations: {e}", file=sys.stderr)
        return 2
    if args.only:
        mutations = [m for m in mutations if m.id == args.only]
        if not mutations:
            print(f"mutations: no entry {args.only!r} in {args.list}", file=sys.stderr)
            return 2
    started = time.monotonic()
    if not args.no_baseline:
        failed = baseline(mutations, jobs)
        for line in failed:
            print(f"baseline FAILED (unmutated): {line}")
        if failed:
            return 1
        print(f"baseline: the {len({m.selection() for m in mutations})} selections pass "
              f"unchanged ({time.monotonic() - started:.0f} s)", flush=True)
    outcomes = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for outcome in pool.map(mutate, mutations):
            outcomes.append(outcome)
            print(f"{outcome.verdict:>14}  {outcome.seconds:6.1f} s  {outcome.id}"
                  + (f"\n      {outcome.detail}" if outcome.detail else ""), flush=True)
    bad = [o for o in outcomes if o.verdict != "caught"]
    print(f"{len(outcomes) - len(bad)} of {len(outcomes)} caught in "
          f"{time.monotonic() - started:.0f} s" + (f"; not: {', '.join(o.id for o in bad)}"
                                                  if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
