"""One exercise or one chapter notebook at a time: ``make exercise-check`` and ``make execute``.

    python scripts/focus.py check --exercise 1.7      # make exercise-check EXERCISE=1.7
    python scripts/focus.py check --exercise rnn_step # make exercise-check EXERCISE=rnn_step
    python scripts/focus.py check --stem 01-basic-rnn-cell   # make exercise-check STEM=...
    python scripts/focus.py execute --stem 01-basic-rnn-cell # make execute STEM=...
    python scripts/focus.py execute                          # make execute (every notebook)

``check`` runs, in one pytest run, only what concerns that exercise (or that notebook's
exercises): its checks both ways and its 200-seed sweep (tests/test_checks.py,
tests/test_sweep.py), the NumPy reference and backward passes against TensorFlow
(tests/test_reference.py, tests/test_backward.py), the chapter's own tests that name it
(tests/test_chNN*.py), the learner copy and book/mistakes.md in sync with solutions/
(tests/test_generate.py), the learner notebook run in a kernel (tests/test_notebooks.py), the
counts its pages state (tests/test_counts.py), the 88-character lines (tests/test_book.py), every
"Exercise N.K name" reference against the headers (tests/test_exercise_names.py), every wrong
answer named (tests/test_feedback.py), its probes and pins (tests/test_diagnose.py), its
mistakes named by the learner release (tests/test_release_names.py), its learners' answers
read as text for "Similar submissions" (tests/test_similarity.py), and
nbval over ``solutions/<stem>.ipynb``: every test CONTRIBUTING.md's step 6 names
(tests/test_makefile.py holds the two to each other). The selection is ``--focus`` in
tests/conftest.py. ``execute``
re-runs ``book/<stem>.ipynb`` and ``solutions/<stem>.ipynb`` (without ``--stem``: every
chapter notebook of both) and stores their outputs, with nothing volatile (``NBCONVERT``) and
nothing of this machine: the run keeps its record of passed exercises in a throw-away file (as
conftest.py does for the tests), never in the maintainer's ``~/.rnnbook``, and the progress
table's output (``rnnbook.progress()``, a record's state and its path) is not stored.

An exercise (its number or its function's name) is found from its header in
``solutions/NN-*.ipynb`` (read by rnnbook.source, the authority on the header's format). A bad
value gets one line and exit status 2.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOLUTIONS, BOOK = ROOT / "solutions", ROOT / "book"
#: the test files ``check`` runs (the conftest's --focus keeps what concerns the exercise)
TESTS = ("tests/test_checks.py", "tests/test_sweep.py", "tests/test_reference.py",
         "tests/test_backward.py", "tests/test_mistake_models.py", "tests/test_generate.py",
         "tests/test_notebooks.py", "tests/test_counts.py", "tests/test_book.py",
         "tests/test_exercise_names.py", "tests/test_feedback.py", "tests/test_diagnose.py",
         "tests/test_release_names.py", "tests/test_similarity.py")
NBVAL = ("--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg")
#: nbconvert's run of ``execute``, the one place its options are written. A run stores only what
#: changed: no ``metadata.execution`` timestamps in each cell (``record_timing``), and printed
#: output that the kernel flushed in chunks as one stream output (CoalesceStreamsPreprocessor,
#: run after the execution; nbclient's own ``coalesce_streams`` cannot be configured).
NBCONVERT = ("nbconvert", "--to", "notebook", "--execute", "--inplace",
             "--ExecutePreprocessor.record_timing=False",
             "--Exporter.preprocessors=nbconvert.preprocessors.CoalesceStreamsPreprocessor")


#: the cell that prints the record's progress table: its output is never stored
PROGRESS_CALL = "rnnbook.progress()"


def without_progress_output(path):
    """Clear the output of ``path``'s progress-table cells (True when one had any)."""
    nb = nbformat.read(str(path), as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and PROGRESS_CALL in c.source
             and (c.outputs or c.execution_count is not None)]
    for cell in cells:
        cell.outputs, cell.execution_count = [], None
    if cells:
        nbformat.write(nb, str(path))
    return bool(cells)


def execute(command, pages):
    """Run nbconvert's ``command`` over ``pages`` with a throw-away record of progress; then
    store no progress table. Returns nbconvert's exit status."""
    with tempfile.TemporaryDirectory(prefix="rnnbook-progress-") as scratch:
        env = {**os.environ, "RNNBOOK_PROGRESS": os.path.join(scratch, "progress.json")}
        status = subprocess.run(command, cwd=ROOT, env=env).returncode
    for page in pages:
        without_progress_output(ROOT / page)
    return status


class Refused(Exception):
    """A bad EXERCISE or STEM: the message is the one line to print."""


def stems():
    return sorted(p.stem for p in SOLUTIONS.glob("[0-9]*.ipynb"))


def stem_of(stem):
    """``stem`` itself when it is a chapter notebook's stem, else Refused."""
    if stem not in stems():
        raise Refused(f"STEM={stem!r} is not a chapter notebook; STEM is one of: "
                      + ", ".join(stems()))
    return stem


def exercise_of(number):
    """``(stem, function name)`` of exercise ``number`` ("1.7") or of the exercise whose
    function is ``number`` ("rnn_step"), from the solutions' headers."""
    if re.fullmatch(r"[A-Za-z_]\w*", number):
        return exercise_named(number)
    if not re.fullmatch(r"\d+\.\d+", number):
        raise Refused(f"EXERCISE={number!r}: give an exercise number such as 1.7 "
                      "(chapter.number) or its function's name")
    chapter = int(number.split(".")[0])
    found = [s for s in stems() if int(s.split("-")[0]) == chapter]
    if not found:
        raise Refused(f"EXERCISE={number}: no chapter {chapter} in solutions/ (its notebooks: "
                      + ", ".join(stems()) + ")")
    stem = found[0]
    cells = exercise_cells(stem)
    for cell in cells:
        if cell.number == number:
            return stem, cell.name
    have = ", ".join(c.number for c in cells) or "none"
    raise Refused(f"EXERCISE={number}: solutions/{stem}.ipynb has no '# Exercise {number} (...)' "
                  f"header (it has {have}); see CONTRIBUTING.md")


def exercise_cells(stem):
    """The exercises of ``solutions/<stem>.ipynb``."""
    from rnnbook import source  # reads the headers; its HEADER is the format's one definition

    try:
        return source.exercises(source.read(SOLUTIONS / f"{stem}.ipynb"), f"solutions/{stem}")
    except source.SourceError as error:
        raise Refused(str(error)) from None


def exercise_named(name):
    """``(stem, name)`` of the exercise whose function is ``name``."""
    for stem in stems():
        if any(cell.name == name for cell in exercise_cells(stem)):
            return stem, name
    raise Refused(f"EXERCISE={name}: no exercise of solutions/ defines {name} (give its "
                  "function's name, or its number such as 1.7)")


def target(exercise, stem):
    """``(stem, function or "")`` asked for by exactly one of EXERCISE and STEM."""
    exercise, stem = (exercise or "").strip(), (stem or "").strip()
    if exercise and stem:
        raise Refused("give EXERCISE=N.K (or its function's name) or STEM=<notebook stem>, "
                      "not both")
    if exercise:
        return exercise_of(exercise)
    if stem:
        return stem_of(stem), ""
    raise Refused("give EXERCISE=N.K or a name (e.g. EXERCISE=1.7, EXERCISE=rnn_step) or "
                  "STEM=<notebook stem> (one of: "
                  + ", ".join(stems()) + ")")


def check_command(stem, function, jobs="0", python=sys.executable):
    """The one pytest run of ``check``."""
    chapter = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(f"tests/test_ch{stem[:2]}*.py"))
    workers = ["-n", jobs] + (["--dist", "loadscope"] if jobs != "0" else [])
    focus = f"{stem}:{function}" if function else stem
    return [python, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", *workers,
            *NBVAL, f"--focus={focus}", *TESTS, *chapter, f"solutions/{stem}.ipynb"]


def execute_command(stem, python=sys.executable):
    """nbconvert over the book's and the solutions' copies of ``stem`` (those that exist), or
    of every chapter notebook when ``stem`` is empty: book/ first, then solutions/."""
    pattern = f"{stem}.ipynb" if stem else "[0-9]*.ipynb"
    pages = [str(p.relative_to(ROOT)) for folder in (BOOK, SOLUTIONS)
             for p in sorted(folder.glob(pattern))]
    jupyter = pathlib.Path(python).with_name("jupyter")
    return [str(jupyter), *NBCONVERT, *pages]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="scripts/focus.py", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("check", "execute"))
    parser.add_argument("--exercise", default="",
                        help="an exercise's number or function name, e.g. 1.7 or rnn_step")
    parser.add_argument("--stem", default="", help="a chapter notebook's stem")
    parser.add_argument("--jobs", default="auto", help="pytest-xdist workers (0: one process)")
    parser.add_argument("--dry-run", action="store_true", help="print the command, run nothing")
    args = parser.parse_args(argv)
    try:
        if args.action == "execute":
            if args.exercise:
                raise Refused("make execute takes STEM=<notebook stem>, not EXERCISE")
            stem, function = args.stem.strip(), ""
            command = execute_command(stem_of(stem) if stem else "")
            stem = stem or "every chapter notebook"
        else:
            stem, function = target(args.exercise, args.stem)
            if not re.fullmatch(r"auto|\d+", args.jobs):
                raise Refused(f"JOBS={args.jobs!r}: give a number of workers, or auto")
            command = check_command(stem, function, args.jobs)
    except Refused as refused:
        print(f"make: {refused}", file=sys.stderr)
        return 2
    what = f"exercise `{function}` of {stem}" if function else stem
    print(f"{args.action}: {what}\n  {' '.join(command)}", file=sys.stderr)
    if args.dry_run:
        return 0
    if args.action == "execute":
        return execute(command, [c for c in command if c.endswith(".ipynb")])
    return subprocess.run(command, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
