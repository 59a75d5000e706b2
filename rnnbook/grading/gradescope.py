"""Gradescope's side: ``run_autograder`` calls ``python -m rnnbook.grading.gradescope``.

Gradescope unpacks the bundle that ``make autograder`` builds (:mod:`.release`) into
``$AUTOGRADER_ROOT/source``, runs its ``setup.sh`` once when it builds the image, and then, for
each submission, copies the student's files into ``$AUTOGRADER_ROOT/submission`` and runs
``run_autograder``. This module picks the notebook to grade, grades it (:mod:`.run`; settings
from ``source/autograder.json``, the exercise table from ``source/exercises.json``) and writes
``$AUTOGRADER_ROOT/results/results.json``. The chapter is the bundle's; a bundle without one
decides from the notebook's exercise functions, never from the file's name alone.

Walls: tried; where the container does not allow them, the submission is graded without (each
submission has a container of its own) and its process runs as ``nobody``, which cannot read the
instructor's side: :func:`lock` makes it root-only (``setup.sh`` runs it, and so does every
grading as root, for bytecode written since).

A results.json is always written, even when nothing could be graded (score 0 and the reason),
because Gradescope shows the student nothing without one.

A cold start pays for what one submission needs (issue 39): the zygotes of the bundle's
chapter start first (:class:`.procs.Early`), and the grader's own imports (the checks, the
notebook reader, the reports) come after, while the zygotes import TensorFlow; with a bundle
built with a fixed seed the expected answers are the bundle's (:func:`.run.read_expected`),
so this process imports no TensorFlow; and there is no class report for a class of one.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
from typing import TYPE_CHECKING

from rnnbook.grading import procs, profile
from rnnbook.grading.config import EXERCISES, EXPECTED, PREBUILT, ROOT, Config, from_settings
from rnnbook.grading.walls import STUBBED

if TYPE_CHECKING:  # (imported when needed: after the zygotes started)
    from rnnbook.grading.results import Report

SETTINGS = "autograder.json"
#: set to 1 in the environment: the grader's --profile, on stderr (make bench's cold rows)
PROFILE_ENV = "RNNBOOK_PROFILE"
#: what Gradescope fixes whatever the bundle says: one submission per container, walls
#: where the container allows them, no class report
ON_GRADESCOPE = {"workers": 1, "walls": "auto", "class_report": False}


def settings(source: str | pathlib.Path) -> Config:
    """The grading :class:`Config` of the bundle's settings (``autograder.json``;
    defaults for what it leaves out) and of Gradescope's: one submission in a container
    of its own. A ValueError says in one line what is wrong in the settings."""
    path = pathlib.Path(source) / SETTINGS
    found = json.loads(path.read_text()) if path.exists() else {}
    if not isinstance(found, dict):
        raise ValueError(f"{SETTINGS} must hold a JSON object")
    return from_settings(found, **ON_GRADESCOPE)


def _chapter_of(path: pathlib.Path) -> str | None:
    try:
        meta = json.loads(path.read_text()).get("metadata", {}).get("rnnbook", {})
        return meta.get("chapter") if isinstance(meta, dict) else None
    except (OSError, ValueError, AttributeError):
        return None


def pick(folder: str | pathlib.Path, chapter: str | None = None
         ) -> tuple[pathlib.Path | None, str]:
    """``(notebook, note)``: the notebook to grade among those submitted, and a sentence saying
    which one was chosen when there was a choice (``(None, reason)`` when there is none).

    Preference: the file named after the chapter, then a notebook whose metadata names the
    chapter (or, with no chapter set, any chapter of the book), then any notebook; ties go to
    the first in alphabetical order. Jupyter's checkpoint copies and hidden files are ignored.
    """
    folder = pathlib.Path(folder)
    found = sorted(p for p in folder.rglob("*.ipynb") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if not found:
        others = sorted(p.name for p in folder.rglob("*") if p.is_file())[:5]
        listed = f" (it holds: {', '.join(others)})" if others else " (it is empty)"
        return None, f"No notebook (.ipynb file) was found in the submission{listed}."
    if len(found) == 1:
        return found[0], ""

    from rnnbook import checks

    def rank(path: pathlib.Path) -> tuple[bool, bool, bool]:
        named = _chapter_of(path)
        if chapter:
            return (path.name != f"{chapter}.ipynb", named != chapter, chapter not in path.name)
        return (False, named not in checks.CHAPTERS, not any(s in path.name for s in checks.CHAPTERS))

    best = min(found, key=lambda p: (rank(p), str(p)))
    rest = ", ".join(str(p.relative_to(folder)) for p in found if p != best)
    return best, f"Graded {best.relative_to(folder)}; also submitted, not graded: {rest}."


def failed(reason: str, seed: int | None = None, chapter: str | None = None) -> Report:
    """The report of a submission that could not be graded: 0 points and why."""
    from rnnbook.grading.results import Report

    return Report(0, f"Not graded: {reason}", seed, chapter or "", None, error=reason)


def lock(source: str | pathlib.Path) -> list[pathlib.Path]:
    """Make the instructor's side of the bundle in ``source`` readable by its owner only: the
    grader, the checks (their oracles; the zygote imports them before a child exists), the
    reference and the backward pass, the settings, the expected answers of a bundle with a
    fixed seed, the prebuilt graphs and every ``__pycache__`` of the package (a
    compiled reference is the reference). Returns the paths it changed."""
    source = pathlib.Path(source)
    package = source / "rnnbook"
    tops = [package / "grading", package / "checks", source / EXERCISES, source / SETTINGS,
            source / EXPECTED, source / PREBUILT]
    tops += [package / name for name in STUBBED] + sorted(package.rglob("__pycache__"))
    changed = []
    for top in tops:
        if not top.exists():
            continue
        for path in [top, *(top.rglob("*") if top.is_dir() else [])]:
            mode = path.lstat().st_mode
            if mode & 0o077 and not path.is_symlink():
                path.chmod(mode & ~0o077)
                changed.append(path)
    return changed


def run(root: str | pathlib.Path, profiled: bool = False) -> Report:
    """Grade ``root/submission`` into ``root/results/results.json``; returns its report
    (``profiled``: the grader's ``--profile``, on stderr)."""
    root = pathlib.Path(root)
    if os.geteuid() == 0:
        lock(root / "source")
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    early = _early(_bundle_chapter(root / "source"))  # first: their imports overlap the rest
    try:
        try:
            config = settings(root / "source")
        except ValueError as error:
            report = failed(f"the bundle's settings are wrong ({error}); tell your "
                            "instructor")
        else:
            report = _graded(root, dataclasses.replace(config, profile=profiled), early)
    finally:
        if early:  # (the run took and closed those it needed)
            early.close()
            shutil.rmtree(early.work, ignore_errors=True)
    from rnnbook.grading.results import write_atomic  # (imported by now: the report's)

    write_atomic(results_dir / "results.json", report.json_text())
    return report


def _graded(root: pathlib.Path, config: Config, early: procs.Early | None) -> Report:
    notebook, note = pick(root / "submission", config.chapter)
    if notebook is None:
        return failed(note, config.seed, config.chapter)
    report = _grade(notebook, config, root / "source" / EXERCISES, early)
    if note:
        report = dataclasses.replace(report, output=f"{note}\n{report.output}")
    return report


def _bundle_chapter(source: pathlib.Path) -> str | None:
    """The chapter the bundle's settings name, read as plain JSON before they are checked
    (checking them imports the chapters' list, and so NumPy: the zygotes start first)."""
    try:
        chapter = json.loads((source / SETTINGS).read_text()).get("chapter")
    except (OSError, ValueError, AttributeError):
        return None
    return chapter if isinstance(chapter, str) else None


def _early(chapter: str | None) -> procs.Early | None:
    """The chapter's zygotes, started now (None: no chapter set, or they cannot start here:
    the run starts its own and says why)."""
    if not chapter:
        return None
    try:
        return procs.Early(ROOT, chapter)
    except Exception:  # noqa: BLE001 - the run tries again, and reports
        return None


def _grade(notebook: pathlib.Path, config: Config, table: pathlib.Path,
           early: procs.Early | None) -> Report:
    work = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-gradescope-"))
    try:
        from rnnbook.grading import cli
        from rnnbook.grading.results import Report

        try:
            cli.grade_with(config, [str(notebook)], work / "out",
                           table if table.exists() else None, early)
        except Exception as error:  # noqa: BLE001 - the student must still get a results.json
            return failed(f"the autograder failed ({type(error).__name__}: {error}); "
                          "tell your instructor", config.seed, config.chapter)
        found = sorted((work / "out").glob("*/results.json"))
        path = found[0] if len(found) == 1 else work / "missing"
        if not path.exists():
            return failed("the autograder wrote no report; tell your instructor",
                          config.seed, config.chapter)
        return Report.from_json(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnbook.grading.gradescope",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")),
                        help="Gradescope's folder (default: $AUTOGRADER_ROOT or /autograder)")
    parser.add_argument("--lock", action="store_true",
                        help="only make the instructor's side of source/ root-only (setup.sh)")
    profile.ENTERED[:] = [time.monotonic()]
    args = parser.parse_args(argv)
    if args.lock:
        lock(args.root / "source")
        print("instructor's side: root only", file=sys.stderr)
        return 0
    report = run(args.root, os.environ.get(PROFILE_ENV) == "1")
    print(f"rnnbook.grading.gradescope: {report.score:g} points; wrote "
          f"{args.root / 'results' / 'results.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
