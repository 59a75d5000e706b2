"""The grader's command line: ``python -m rnnbook.grading``.

    python -m rnnbook.grading SUBMISSION.ipynb|FOLDER [...] --out DIR [--seed N] [--workers K]
        [--timeout S] [--cell-timeout S] [--budget S] [--memory MB] [--processes N]
        [--chapter STEM]
        [--overwrite] [--no-walls] [--visibility V] [--roster roster.csv]

Writes ``DIR/<name>/results.json`` and ``feedback.md`` as each submission is graded, and
``DIR/gradebook.csv``, ``DIR/class-report.html`` and ``DIR/class-report.csv`` at the end; one
line per event on stderr. Exit status: 0 every file was
graded, 1 some could not be (their reports say why) or a roster id is on two submissions,
2 nothing was graded.
"""
import argparse
import pathlib
import sys

from rnnbook import checks
from rnnbook.grading import run
from rnnbook.grading.config import VISIBILITY, Config


def parser():
    defaults = Config()
    p = argparse.ArgumentParser(prog="python -m rnnbook.grading",
                                description="Grade exercise notebooks into Gradescope-format "
                                            "reports.")
    p.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    p.add_argument("--out", required=True, type=pathlib.Path, help="folder for the reports")
    p.add_argument("--seed", type=int, help="reproduce a grading run (default: random)")
    p.add_argument("--workers", type=int, default=defaults.workers,
                   help="submissions graded at once (default: the number of cores)")
    for flag, kind, what in (("timeout", float, "seconds per exercise"),
                             ("cell-timeout", float, "seconds per notebook cell"),
                             ("budget", float, "seconds of wall time per submission"),
                             ("memory", int, "MB of memory per submission's process"),
                             ("processes", int, "processes and threads per submission's "
                                                "process")):
        default = getattr(defaults, flag.replace("-", "_"))
        p.add_argument(f"--{flag}", type=kind, default=default,
                       help=f"{what} (default {default:g})")
    p.add_argument("--chapter", choices=sorted(checks.CHAPTERS),
                   help="grade every submission as this chapter")
    p.add_argument("--overwrite", action="store_true", help="replace reports already in --out")
    p.add_argument("--visibility", choices=VISIBILITY, default=defaults.visibility,
                   help="Gradescope's visibility of each exercise's output (its trials)")
    p.add_argument("--roster", type=pathlib.Path,
                   help="CSV with columns file, id, name, email: who wrote which submission "
                        "(file: a notebook's name, or its path for two files of one name)")
    p.add_argument("--no-class-report", action="store_true",
                   help="skip class-report.html and .csv (Gradescope grades one at a time)")
    p.add_argument("--no-walls", action="store_true",
                   help="grade without the walls around submissions (only where each submission "
                        "has a container of its own)")
    p.add_argument("--walls-if-possible", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--exercises", type=pathlib.Path, help=argparse.SUPPRESS)  # the bundle's table
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    walls = "off" if args.no_walls else "auto" if args.walls_if_possible else "required"
    config = Config(seed=args.seed, chapter=args.chapter, timeout=args.timeout,
                    cell_timeout=args.cell_timeout, budget=args.budget, memory=args.memory,
                    processes=args.processes,
                    workers=args.workers, walls=walls, overwrite=args.overwrite,
                    visibility=args.visibility, roster=args.roster and str(args.roster),
                    class_report=not args.no_class_report)
    try:
        config.check()
    except ValueError as error:
        parser().error(str(error))
    run._stderr()  # before anything can move fd 2
    try:
        return run.grade(config, args.submissions, args.out, args.exercises)
    except run.GradeError as error:
        run.log(f"error: {error}")
        return 2


def entry():
    # This process never draws. Keras 3, imported here for some oracles, imports
    # matplotlib.pyplot whenever it can (for its plotting utilities): most of its import time.
    sys.modules.setdefault("matplotlib", None)
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    import os

    # Every report is written and closed by now: skip TensorFlow's teardown at exit.
    os._exit(status)


if __name__ == "__main__":
    entry()
