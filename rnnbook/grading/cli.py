"""The grader's command line: ``python -m rnnbook.grading``.

    python -m rnnbook.grading SUBMISSION.ipynb|FOLDER [...] --out DIR [options]

The options are :mod:`.config`'s declarations (``--help`` lists them, with defaults).
Writes ``DIR/<name>/results.json`` and ``feedback.md`` as each submission is graded, and
``DIR/gradebook.csv``, ``DIR/class-report.html`` and ``DIR/class-report.csv`` at the
end; one line per event on stderr. Exit status: 0 every file was graded, 1 some could
not be (their reports say why) or a roster id is on two submissions, 2 nothing was
graded.
"""
import argparse
import pathlib
import sys
import time

from rnnbook.grading import config, procs, profile, run


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rnnbook.grading",
                                description="Grade exercise notebooks into "
                                            "Gradescope-format reports.")
    p.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    p.add_argument("--out", required=True, type=pathlib.Path,
                   help="folder for the reports")
    config.add_options(p)
    # the bundle's exercise table, in place of solutions/
    p.add_argument("--exercises", type=pathlib.Path, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    profile.ENTERED[:] = [time.monotonic()]
    args = parser().parse_args(argv)
    try:
        settings = config.from_args(args).check()
    except ValueError as error:
        parser().error(str(error))
    return grade_with(settings, args.submissions, args.out, args.exercises)


def grade_with(settings: config.Config, submissions: list[str], out: pathlib.Path,
               exercises: pathlib.Path | None = None, early: procs.Early | None = None) -> int:
    """Grade with checked ``settings``; the exit status (Gradescope's side calls it, with
    its ``early`` zygotes)."""
    run._stderr(fresh=True)  # before anything can move fd 2
    try:
        return run.grade(settings, submissions, out, exercises, early)
    except run.GradeError as error:
        run.log(f"error: {error}")
        return 2


def entry() -> None:
    # This process never draws. Keras 3, imported here for some oracles, imports
    # matplotlib.pyplot whenever it can (for its plotting utilities): most of its import
    # time. (None in sys.modules blocks the import.)
    sys.modules.setdefault("matplotlib", None)  # type: ignore[arg-type]
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    import os

    # Every report is written and closed by now: skip TensorFlow's teardown at exit.
    os._exit(status)


if __name__ == "__main__":
    entry()
