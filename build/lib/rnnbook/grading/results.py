"""Reports: one results object per submission, three views of it.

``results.json`` (Gradescope's format), ``feedback.md`` (what a student reads) and a row of
``gradebook.csv``. Report folders get safe names derived from the file names (:func:`names`);
every file is written atomically (a temporary file, then a rename).
"""
import csv
import io
import json
import os
import re
from dataclasses import dataclass, field

from rnnbook import __version__
from rnnbook.checking import Outcome, evaluate

GRADEBOOK = "gradebook.csv"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: a spreadsheet reads a cell that starts with one of these as a formula (OWASP, "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """``value`` as a CSV cell no spreadsheet runs: text that starts with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading ``'`` (OWASP's advice); numbers stay
    numbers. Every CSV the grader writes goes through this."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


@dataclass
class Submission:
    path: object  # pathlib.Path, as given
    name: str  # its report folder under --out (safe, unique)
    chapter: str = ""
    cells: list = field(default_factory=list)  # code cells, made plain Python
    notes: list = field(default_factory=list)  # what happened to the cells
    answers: dict = field(default_factory=dict)  # exercise -> answers | why none | None
    error: str = ""  # why it was not graded
    seconds: float = 0.0  # wall time of its grading, all its children together
    peak_mb: float = 0.0  # largest resident memory of its child and what that started


def names(paths):
    """A report folder name for each path: its stem made safe (letters, digits, ``._-``; no
    leading dot, so never ``.`` or ``..``; never ``gradebook.csv``), unique ignoring case
    (``-2``, ``-3``, ... on a clash)."""
    taken, found = set(), []
    for path in paths:
        stem = path.name[: -len(".ipynb")] if path.name.endswith(".ipynb") else path.name
        base = _UNSAFE.sub("_", stem).lstrip(".")[:100] or "submission"
        if base.lower() in (GRADEBOOK, GRADEBOOK + ".part") or base.endswith(".part"):
            base = "submission-" + base
        name, k = base, 1
        while name.lower() in taken:
            k += 1
            name = f"{base}-{k}"
        taken.add(name.lower())
        found.append(name)
    return found


def outcome_for(ex, cases, expected, got):
    if got is None:
        return Outcome(ex, False, f"✗ {ex.title}: no function called `{ex.name}` is defined in "
                                  "the notebook. Define it with exactly this name.")
    if isinstance(got, str):
        return Outcome(ex, False, f"✗ {ex.title} {got}; it gets no points.")
    return evaluate(ex, cases, expected, got)


def graded(sub, table, seed, oracle, isolation, visibility="visible"):
    """The results object of a graded submission (Gradescope's results.json). Each test's
    ``extra_data`` names the mistake its check recognised (for the class report)."""
    tests, score, maximum = [], 0.0, 0
    for cell, ex in table:
        cases, expected = oracle[ex.name]
        outcome = outcome_for(ex, cases, expected, sub.answers.get(ex.name))
        points = cell.points if outcome.passed else 0
        score += points
        maximum += cell.points
        tests.append({"name": f"Exercise {cell.number} {ex.name}", "score": points,
                      "max_score": cell.points, "output": outcome.message,
                      "visibility": visibility,
                      "extra_data": {"kind": cell.kind, "mistake": outcome.mistake}})
    notes = "".join(f"\nNote: {n}" for n in sub.notes)
    return {
        "score": score,
        "output": f"{sub.path.name}: chapter {sub.chapter}, graded with seed {seed} "
                  f"(rnnbook {__version__}).{notes}",
        "tests": tests,
        "extra_data": {"seed": seed, "chapter": sub.chapter, "max_score": maximum,
                       "isolation": isolation},
    }


def not_graded(sub, seed):
    return {"score": 0, "output": f"Not graded: {sub.error}", "tests": [],
            "extra_data": {"seed": seed, "chapter": sub.chapter, "error": sub.error}}


def feedback_markdown(report):
    extra = report.get("extra_data", {})
    lines = [f"# Feedback: {report['score']:g} / {extra.get('max_score', 0)} points", "",
             report["output"], ""]
    for test in report["tests"]:
        lines += [f"## {test['name']}: {test['score']:g} / {test['max_score']}", "", "```",
                  test["output"], "```", ""]
    return "\n".join(lines)


def write_atomic(path, text):
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write(out, sub, report):
    """``out/<name>/results.json`` and ``feedback.md``."""
    folder = out / sub.name
    folder.mkdir(exist_ok=True)
    write_atomic(folder / "results.json", json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    write_atomic(folder / "feedback.md", feedback_markdown(report))


ROSTER_COLUMNS = ("file", "id", "name", "email")


class RosterError(ValueError):
    """A roster that cannot be read (one line, names the file and the row)."""


def read_roster(path):
    """``{submission file name: {"id", "name", "email"}}`` from a CSV with the columns
    :data:`ROSTER_COLUMNS` (``file`` is the notebook's file name, with or without .ipynb)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise RosterError(f"{path}: cannot read the roster ({error})") from None
    if not rows or set(ROSTER_COLUMNS) - set(rows[0]):
        raise RosterError(f"{path}: a roster needs the columns {', '.join(ROSTER_COLUMNS)}")
    roster = {}
    for line, row in enumerate(rows, 2):
        file = (row["file"] or "").strip()
        if not file:
            raise RosterError(f"{path}, row {line}: no file name")
        key = file if file.endswith(".ipynb") else file + ".ipynb"
        if key in roster:
            raise RosterError(f"{path}, row {line}: {file} is listed twice")
        roster[key] = {k: (row[k] or "").strip() for k in ("id", "name", "email")}
    return roster


def gradebook(rows, tables, roster=None):
    """A row per submission (every one, graded or not), a column per exercise in book order;
    with a ``roster``, the student's id, name and email, a row for every student without a
    submission, and in ``roster`` why a row has no match."""
    columns = [f"{cell.number} {ex.name}" for stem in sorted(tables) for cell, ex in tables[stem]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    people = ["id", "name", "email", "roster"] if roster is not None else []
    writer.writerow(["submission", "report", "path", *people, "chapter", "seed", *columns,
                     "total", "max", "error"])
    seen = set()
    for sub, report in rows:
        scores = {t["name"].removeprefix("Exercise "): t["score"] for t in report["tests"]}
        extra = report["extra_data"]
        who = []
        if roster is not None:
            student = roster.get(sub.path.name)
            seen.add(sub.path.name)
            who = ([student["id"], student["name"], student["email"], ""] if student
                   else ["", "", "", "not on the roster"])
        writer.writerow([sub.path.name, sub.name, str(sub.path), *who, sub.chapter,
                         extra["seed"], *[scores.get(c, "") for c in columns], report["score"],
                         extra.get("max_score", ""),
                         f"not graded: {sub.error}" if sub.error else ""])
    for file, student in sorted((roster or {}).items()):
        if file not in seen:
            writer.writerow([file, "", "", student["id"], student["name"], student["email"],
                             "no submission", "", "", *["" for _ in columns], "", "", ""])
    return out.getvalue()
