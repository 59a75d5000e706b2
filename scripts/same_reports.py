"""Grade every chapter's notebooks at one seed, or compare two such runs file by file.

    python scripts/same_reports.py grade DIR     # DIR/subs, DIR/roster.csv -> DIR/out
    python scripts/same_reports.py compare A B   # A/out against B/out; exit 1 on a difference

A refactoring of the grader must not change a report: grade before the change, grade after
it, compare. ``grade`` makes, from solutions/ and notebooks/, every chapter's solution
(``solved-``) and unsolved learner copy (``unsolved-``), a copy of the solution with each
exercise's first wrong answer from tests/learners that is a plain function (``wrong-``:
named mistakes), a twin of Chapter 1's solution (a similar pair) and a file that is not a
notebook; a roster names some of them (with a formula-like name and a comma) and one student
who handed nothing in. The grader is the one of the script's own clone: to grade the code of
an older commit, copy the script into a worktree of it (``git worktree add``) and run it there. It
grades them at ``--seed 7`` into DIR/out, then rebuilds the class report from the reports
alone (``python -m rnnbook.grading.classreport``) into DIR/out/rebuilt. ``compare`` diffs
every file; the columns and keys that hold seconds or memory (:data:`VOLATILE`) are left out.
"""
import csv
import difflib
import importlib
import inspect
import io
import json
import pathlib
import re
import shutil
import subprocess
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from rnnbook import checks, source  # noqa: E402

SEED = "7"
#: CSV columns and JSON keys that hold a measurement, not a result
VOLATILE = {"seconds", "peak_mb", "execution_time", "wall", "cpu", "peak", "peak_memory_mb"}
ROSTER = """file,id,name,email
solved-01-basic-rnn-cell.ipynb,s1,"=HYPERLINK(""x"")",a@x.org
unsolved-01-basic-rnn-cell.ipynb,s2,"Bob, Jr.",b@x.org
solved-02-lstm-gate-tensors.ipynb,s3,+Carol,c@x.org
wrong-03-c-state-m-state.ipynb,s4,-Dan,d@x.org
nobody.ipynb,s9,Missing Person,m@x.org
"""


def wrong_copy(stem: str) -> nbformat.NotebookNode:
    """The solution of ``stem`` with, after it, each exercise's first wrong answer."""
    nb = source.read(ROOT / "solutions" / f"{stem}.ipynb")
    learners = importlib.import_module(f"learners.ch{stem[:2]}")
    for cell in source.exercises(nb):
        # a plain function of the module (a closure's source is not a cell of its own)
        plain = [fn for fn, _ in learners.WRONG.get(cell.name, [])
                 if not fn.__closure__ and fn.__qualname__ == fn.__name__]
        if plain:
            code = f"{inspect.getsource(plain[0])}\n{cell.name} = {plain[0].__name__}\n"
            nb.cells.append(nbformat.v4.new_code_cell(code))
    return nb


def grade(folder: pathlib.Path) -> None:
    subs, out = folder / "subs", folder / "out"
    subs.mkdir(parents=True, exist_ok=True)
    for stem in checks.CHAPTERS:
        shutil.copy(ROOT / "solutions" / f"{stem}.ipynb", subs / f"solved-{stem}.ipynb")
        shutil.copy(ROOT / "notebooks" / f"{stem}.ipynb", subs / f"unsolved-{stem}.ipynb")
        nbformat.write(wrong_copy(stem), subs / f"wrong-{stem}.ipynb")
    first = next(iter(checks.CHAPTERS))
    shutil.copy(ROOT / "solutions" / f"{first}.ipynb", subs / f"twin-{first}.ipynb")
    (subs / "broken.ipynb").write_text("not a notebook\n")
    (folder / "roster.csv").write_text(ROSTER)
    ran = subprocess.run([sys.executable, "-m", "rnnbook.grading", subs, "--out", out,
                          "--seed", SEED, "--roster", folder / "roster.csv", "--overwrite"],
                         cwd=ROOT, capture_output=True, text=True)
    (folder / "grade.log").write_text(ran.stdout + ran.stderr)
    rebuilt = subprocess.run([sys.executable, "-m", "rnnbook.grading.classreport", out,
                              "--out", out / "rebuilt"], cwd=ROOT, capture_output=True,
                             text=True)
    (folder / "classreport.log").write_text(rebuilt.stdout + rebuilt.stderr)
    print(f"graded into {out} (exit {ran.returncode}; class report exit "
          f"{rebuilt.returncode})")


#: the submissions table's seconds and peak MB after the score, in class-report.html
HTML_MEASURED = re.compile(r"( / \d+</td>)<td class=n>[\d.]*</td><td class=n>\d*</td>")


def steady(path: pathlib.Path, folder: pathlib.Path) -> list[str]:
    """The file's lines without its measurements, ``folder`` (the run's) named ``DIR``."""
    text = path.read_text(errors="replace").replace(str(folder), "DIR")
    if path.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        keep = [i for i, name in enumerate(rows[0] if rows else []) if name not in VOLATILE]
        return [",".join(row[i] for i in keep if i < len(row)) for row in rows]
    if path.suffix == ".json":
        def drop(value):
            if isinstance(value, dict):
                return {k: drop(v) for k, v in value.items() if k not in VOLATILE}
            if isinstance(value, list):
                return [drop(v) for v in value]
            return value
        return json.dumps(drop(json.loads(text)), indent=1, sort_keys=True).splitlines()
    text = HTML_MEASURED.sub("\\1<td>#</td><td>#</td>", text)
    # feedback and HTML: a number of seconds or MB is a measurement
    return [re.sub(r"\d+(\.\d+)? (s|MB)\b", "# \\2", line) for line in text.splitlines()]


def compare(a: pathlib.Path, b: pathlib.Path) -> int:
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    differ = 0
    for name in names:
        one, two = a / name, b / name
        if not (one.exists() and two.exists()):
            print(f"only in {a if one.exists() else b}: {name}")
            differ += 1
            continue
        if one.read_bytes() == two.read_bytes():
            continue
        diff = list(difflib.unified_diff(steady(one, a.parent), steady(two, b.parent),
                                         str(one), str(two),
                                         lineterm="", n=0))
        if diff:
            differ += 1
            print("\n".join(diff[:40]))
        else:
            print(f"same but for measurements: {name}")
    print(f"{len(names)} files compared, {differ} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "grade":
        grade(pathlib.Path(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(pathlib.Path(argv[1]) / "out", pathlib.Path(argv[2]) / "out")
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
