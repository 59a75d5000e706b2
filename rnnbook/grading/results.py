"""Reports: one results object per submission, three views of it.

``results.json`` (Gradescope's format), ``feedback.md`` (what a student reads) and a row of
``gradebook.csv``. Report folders get safe names derived from the file names (:func:`names`);
every file is written atomically (a temporary file, then a rename).
"""
from __future__ import annotations

import builtins
import contextlib
import csv
import json
import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rnnbook import __version__
from rnnbook.byhand import BY_HAND
from rnnbook.compare import CEILING_SAID, Outcome, evaluate
from rnnbook.grading.profile import PROFILE
from rnnbook.grading.roster import Student, csv_text, match_roster, read_back, visible
from rnnbook.grading.roster import safe_text as safe_text  # (the tests' and run's name)

if TYPE_CHECKING:
    from rnnbook.exercise import Exercise
    from rnnbook.source import ExerciseCell
from rnnbook.plaindata import Raised

GRADEBOOK = "gradebook.csv"
TIMINGS = "timings.csv"  # each submission's seconds and peak memory (not in the reports)
#: every name the grader writes in --out besides the report folders (the class report's and
#: the similarity table's too): no report folder may take one, in any case
OUTPUTS = (GRADEBOOK, TIMINGS, "class-report.html", "class-report.csv",
           "similar-submissions.csv")
#: how much of a submission's own text reaches a report: the notes (cells that raised, ...)
#: and the characters of each (the rest is said as "and N more")
MAX_NOTES, MAX_TEXT, MAX_OUTPUT = 20, 500, 4000


def cap(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ... and {len(text) - limit} more characters"


class Notes(list):
    """A submission's notes: at most :data:`MAX_NOTES`, each cut to :data:`MAX_TEXT` characters
    (:func:`cap`); ``more`` counts the notes left out (10,000 cells that each raise a long error
    cost a report one line, and the grader no memory)."""

    more = 0

    def add(self, text: object) -> None:
        if len(self) < MAX_NOTES:
            self.append(cap(visible(text, lines=True)))  # it may quote the submission
        else:
            self.more += 1

    def then(self, other: list[str]) -> Notes:
        """These notes, then ``other``'s, in one :class:`Notes`."""
        joined = Notes()
        for note in [*self, *other]:
            joined.add(note)
        joined.more += self.more + getattr(other, "more", 0)
        return joined

    def text(self) -> str:
        """The notes as the report's lines (each ``\nNote: ...``), the count left out last."""
        more = f"\nAnd {self.more} more note{'s' * (self.more != 1)}." if self.more else ""
        return "".join(f"\nNote: {n}" for n in self) + more


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class Submission:
    """A submission being graded: :mod:`.run` reads it (``chapter``, ``cells``, ``error``) and
    :mod:`.attempt` fills in what its children answered (``answers``, ``notes``, ``peak_mb``);
    :func:`graded` or :func:`not_graded` then makes its :class:`Report`."""

    path: pathlib.Path  # as given
    name: str  # its report folder under --out (safe, unique)
    chapter: str = ""
    cells: list[str] = field(default_factory=list)  # code cells, made plain Python
    notes: Notes = field(default_factory=Notes)  # what happened to the cells
    #: exercise -> its answers (one per trial) | why there are none (the grader's words) | None
    answers: dict[str, Any] = field(default_factory=dict)
    error: str = ""  # why it was not graded
    seconds: float = 0.0  # wall time of its grading, all its children together
    peak_mb: float = 0.0  # largest resident memory of its child and what that started
    deadline: float = 0.0  # time.monotonic() at which its budget runs out (while graded)

    @property
    def shown(self) -> str:
        """The path as every output and line of the grader shows it (:func:`visible`)."""
        return visible(self.path)

    @property
    def file(self) -> str:
        """The file's name as every output shows it (:func:`visible`)."""
        return visible(self.path.name)


def names(paths: list[pathlib.Path]) -> list[str]:
    """A report folder name for each path: its stem made safe (letters, digits, ``._-``; no
    leading dot, so never ``.`` or ``..`` or the lock; never one of :data:`OUTPUTS` or a
    :data:`PART` file), unique ignoring case (``-2``, ``-3``, ... on a clash)."""
    reserved = {name.lower() for name in OUTPUTS}
    taken, found = set(), []
    for path in paths:
        stem = path.name[: -len(".ipynb")] if path.name.endswith(".ipynb") else path.name
        base = _UNSAFE.sub("_", stem).lstrip(".")[:100] or "submission"
        if base.lower() in reserved or base.lower().endswith(PART):
            base = "submission-" + base
        name, k = base, 1
        while name.lower() in taken:
            k += 1
            name = f"{base}-{k}"
        taken.add(name.lower())
        found.append(name)
    return found


def outcome_for(ex: Exercise, cases: list[Any], expected: list[Any], got: Any,
                seed: int | None = None) -> Outcome:
    if got is None:
        return Outcome(ex, False, f"✗ {ex.title}: no function called `{ex.name}` is defined in "
                                  "the notebook. Define it with exactly this name.")
    if isinstance(got, str):
        return Outcome(ex, False, f"✗ {ex.title} {got}; it gets no points.")
    return evaluate(ex, cases, expected, got, seed=seed)


#: what became of a failed exercise, for the class report (``extra_data.failure``): a named
#: mistake apart from what is not one (never read back from text the submission produced)
FAILURES = ("mistake", "wrong", "not attempted", "missing", "by hand", "error", "limit")


def verdict(outcome: Outcome, got: Any) -> dict[str, str]:
    """The structured verdict of one exercise (``extra_data`` of its test): ``failure`` (one
    of :data:`FAILURES`, "" when it passed), ``mistake`` (the check's sentence), ``hedge``
    (why the mistake is only likely) and ``error`` (for an error or a limit, what happened, in
    the grader's words). Built from the check's :class:`Outcome` and the kind of answer only:
    a learner's exception message never reaches it."""
    found = {"failure": "", "mistake": outcome.mistake, "hedge": outcome.hedge, "error": ""}
    raised = next((a for a in got if isinstance(a, Raised)), None) if isinstance(got, list) \
        else None
    if outcome.passed:
        found["mistake"] = found["hedge"] = ""
    elif outcome.mistake:
        found["failure"] = "mistake"
    elif got is None:
        found["failure"] = "missing"
    elif isinstance(got, str):  # the grader's own words: a limit, a crash, no answer
        limit = next((k for k in _LIMITS if k in got), "")
        found["failure"] = "limit" if limit else "error"
        found["error"] = (f"ran past the {limit}" if limit else
                          next((v for k, v in _ERRORS.items() if k in got),
                               "sent back no usable answer"))
    elif raised is not None and raised.kind == "NotImplementedError":
        found["failure"] = "not attempted"
    elif raised is not None and raised.kind == BY_HAND:
        found["failure"] = "by hand"
    elif raised is not None:
        found["failure"], found["error"] = "error", raised_label(raised.kind)
    else:
        found["failure"] = "wrong"
    return found


_LIMITS = ("time limit", "time budget", "memory limit")  # in rnnbook.grading.attempt's words
_ERRORS = {"crashed": "crashed its process", "ended the process": "ended its process",
           "was not run": "was not run"}
#: Python's own exceptions: the only class names a label of the class report repeats (a class
#: a submission defines can be named anything, a sentence aimed at the instructor included)
BUILTIN_ERRORS = frozenset(name for name, value in vars(builtins).items()
                           if isinstance(value, type) and issubclass(value, BaseException))
OWN_ERROR = "raised an exception of its own class"


def raised_label(kind: str) -> str:
    """What the class report says of an exception of class ``kind``: its name when Python
    defines it, else :data:`OWN_ERROR`."""
    return f"raised {kind}" if kind in BUILTIN_ERRORS else OWN_ERROR


def own_words(label: str) -> bool:
    """Whether ``label`` (a verdict's ``error``) is one the grader writes (:func:`verdict`)."""
    return (label in (*_ERRORS.values(), "sent back no usable answer", OWN_ERROR)
            or label in {f"ran past the {k}" for k in _LIMITS}
            or label in {f"raised {k}" for k in BUILTIN_ERRORS})


def points_for(outcome: Outcome, points: float) -> float:
    """The points an outcome earns of an exercise's ``points``: all when it passed; for an
    answer of several parts, the weights of the parts right on every trial, at most
    :data:`rnnbook.compare.CEILING` of the points (rounded to 2 decimals); else 0."""
    return round(points * outcome.share, 2)


def score_line(outcome: Outcome, earned: float, points: float) -> str:
    """The line of feedback that says how the points were given (an answer of parts)."""
    weights = outcome.exercise.part_weights
    right = outcome.parts_earned
    capped = (f" (a failing answer earns at most {CEILING_SAID})" if outcome.capped
              else "")
    if len(set(weights)) == 1:
        share = points / outcome.parts
        return (f"Score: {right} of {outcome.parts} parts right on every trial, {share:.3g} "
                f"point{'s' * (share != 1)} a part: {earned:g} of {points} "
                f"point{'s' * (points != 1)}{capped}.")
    split = ", ".join(f"{name} {points * w / sum(weights):.3g}"
                      for name, w in zip(outcome.exercise.parts, weights, strict=True))
    return (f"Score: {right} of {outcome.parts} parts right on every trial; the points are "
            f"split by part ({split}): {earned:g} of {points} point{'s' * (points != 1)}"
            f"{capped}.")


class ReportFormatError(ValueError):
    """A results.json that cannot be read back (one line, names the file)."""


def _read_text(value: object) -> str:
    """A text field read back: ``str(value)``, "" for a missing or empty one."""
    return str(value or "")


def _read_number(value: object, where: str) -> float:
    """A number read back as written (an int stays an int); text that is a number is one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ReportFormatError(f"{where}: {value!r} is not a number") from None


@dataclass
class TestResult:
    """One exercise of one report (a test of Gradescope's results.json): its points, the
    feedback, and the structured verdict (``extra_data``) that the class report reads."""

    name: str  # "Exercise N.K <function name>"
    score: float
    max_score: float
    output: str = ""
    visibility: str = "visible"
    kind: str = ""  # "by hand" or "API"
    failure: str = ""  # one of FAILURES, "" when it passed
    mistake: str = ""  # the check's sentence
    hedge: str = ""  # why the mistake is only likely
    error: str = ""  # for an error or a limit, what happened, in the grader's words
    parts: int = 1
    parts_right: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "score": self.score, "max_score": self.max_score,
                "output": self.output, "visibility": self.visibility,
                "extra_data": {"kind": self.kind, "failure": self.failure,
                               "mistake": self.mistake, "hedge": self.hedge,
                               "error": self.error, "parts": self.parts,
                               "parts_right": self.parts_right}}

    @classmethod
    def from_json(cls, data: object, where: str) -> TestResult:
        """A test read back; lenient where older reports (and Gradescope's) leave fields out."""
        if not isinstance(data, dict):
            raise ReportFormatError(f"{where}: a test is not an object")
        extra = data.get("extra_data")
        extra = extra if isinstance(extra, dict) else {}
        return cls(str(data.get("name", "?")), _read_number(data.get("score", 0), where),
                   _read_number(data.get("max_score", 0), where), _read_text(data.get("output")),
                   str(data.get("visibility", "visible")), _read_text(extra.get("kind")),
                   _read_text(extra.get("failure")), _read_text(extra.get("mistake")),
                   _read_text(extra.get("hedge")), _read_text(extra.get("error")),
                   int(_read_number(extra.get("parts", 1), where)),
                   int(_read_number(extra.get("parts_right", 0), where)))


@dataclass
class Report:
    """One submission's report. Its views: :meth:`to_json` (Gradescope's results.json),
    :meth:`feedback` (feedback.md) and :meth:`gradebook_cells` (its cells of gradebook.csv);
    :meth:`from_json` reads a results.json back. ``error`` says why it was not graded."""

    score: float
    output: str
    seed: int | None
    chapter: str
    max_score: float | None  # None: not graded, and its chapter unknown
    tests: list[TestResult] = field(default_factory=list)
    isolation: str = ""  # how the children were walled in (a graded report)
    error: str = ""  # why it was not graded ("" when it was)
    seconds: float | None = None  # only in reports of older versions (now timings.csv)
    peak_mb: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Gradescope's results object (a not graded report: no tests, its ``error``)."""
        if self.error:
            extra: dict[str, Any] = {"seed": self.seed, "chapter": self.chapter,
                                     "error": self.error}
            if self.max_score is not None:
                extra["max_score"] = self.max_score
        else:
            extra = {"seed": self.seed, "chapter": self.chapter, "max_score": self.max_score,
                     "isolation": self.isolation}
        return {"score": self.score, "output": self.output,
                "tests": [t.to_json() for t in self.tests], "extra_data": extra}

    def json_text(self) -> str:
        """results.json's text."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    def feedback(self) -> str:
        """feedback.md: the score, the run's notes, then each exercise's feedback."""
        top = self.max_score
        lines = [f"# Feedback: {self.score:g} / {top} points" if top is not None else
                 "# Feedback: not graded", "", self.output, ""]
        for test in self.tests:
            lines += [f"## {test.name}: {test.score:g} / {test.max_score}", "", "```",
                      test.output, "```", ""]
        return "\n".join(lines)

    def gradebook_cells(self, columns: list[str]) -> tuple[list[object], object]:
        """``(points, max)``: its points per gradebook column ("N.K name"; "" where it has no
        such exercise), then its total; and its maximum ("" when unknown)."""
        scores = {t.name.removeprefix("Exercise "): t.score for t in self.tests}
        return ([*[scores.get(c, "") for c in columns], self.score],
                "" if self.max_score is None else self.max_score)

    @classmethod
    def from_json(cls, path: pathlib.Path) -> Report:
        """The report a results.json holds; :class:`ReportFormatError` (one line, the file)
        when it is not one."""
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise ReportFormatError(f"{path}: not a readable results.json ({error})") from None
        if not isinstance(data, dict) or not isinstance(data.get("tests", []), list):
            raise ReportFormatError(f"{path}: not a results.json (no object with a list of "
                                    "tests)")
        extra = data.get("extra_data")
        extra = extra if isinstance(extra, dict) else {}
        top = extra.get("max_score")

        def measured(key: str) -> float | None:
            return None if extra.get(key) is None else _read_number(extra[key], str(path))

        return cls(_read_number(data.get("score", 0), str(path)), _read_text(data.get("output")),
                   extra.get("seed"), str(extra.get("chapter", "")),
                   None if top is None else _read_number(top, str(path)),
                   [TestResult.from_json(t, str(path)) for t in data.get("tests", [])],
                   _read_text(extra.get("isolation")), str(extra.get("error", "")),
                   measured("seconds"), measured("peak_mb"))


def graded(sub: Submission, table: list[tuple[ExerciseCell, Exercise]], seed: int,
           oracle: dict[str, tuple[Any, Any]], isolation: str,
           visibility: str = "visible") -> Report:
    """The report of a graded submission. Each test's verdict names the mistake its check
    recognised (for the class report)."""
    tests, score, maximum = [], 0.0, 0
    for cell, ex in table:
        cases, expected = oracle[ex.name]
        outcome = outcome_for(ex, cases, expected, sub.answers.get(ex.name), seed)
        points = points_for(outcome, cell.points)
        score += points
        maximum += cell.points
        # it may quote what the submission raised: control characters made visible
        output = cap(visible(outcome.message, lines=True), MAX_OUTPUT)
        if 0 < outcome.share < 1:  # partial credit: say how it was counted
            output += "\n" + score_line(outcome, points, cell.points)
        tests.append(TestResult(f"Exercise {cell.number} {ex.name}", points, cell.points,
                                output, visibility, cell.kind,
                                **verdict(outcome, sub.answers.get(ex.name)),
                                parts=outcome.parts, parts_right=outcome.parts_earned))
    notes = Notes().then(sub.notes).text()
    return Report(round(score, 2),
                  f"{sub.file}: chapter {sub.chapter}, graded with seed {seed} "
                  f"(rnnbook {__version__}).{notes}",
                  seed, sub.chapter, maximum, tests, isolation)


def not_graded(sub: Submission, seed: int, cells: list[ExerciseCell] | None = None) -> Report:
    """The report of a submission that could not be graded: 0 of its chapter's points when
    the chapter is known (``cells``: its exercise cells), and why in words the student can act
    on (:func:`why_not_graded`)."""
    why = cap(why_not_graded(sub), MAX_OUTPUT)
    top = sum(cell.points for cell in cells) if cells else None
    return Report(0, f"Not graded: {why}", seed, sub.chapter, top, error=why)


#: an absolute path in an error (the grader's, or the submission's on the grader's machine)
_ABSOLUTE = re.compile(r"(?<![\w.~])/(?:[^\s/:'\"(),]+/)+([^\s/:'\"(),]+)")
UNREADABLE = ("(it could not be read as one): open it in Jupyter or Colab, save it, and hand "
              "in the .ipynb file again")


def why_not_graded(sub: Submission) -> str:
    """``sub.error`` as its student reads it: the file by its name (no path of the grader's
    machine), and for a file that is not a notebook, what to do instead of the parser's words
    and the file's raw content. The gradebook and the grader's log keep the full error."""
    text = sub.error.replace(sub.shown, sub.file)
    if "not a valid notebook" in text:
        return f"{sub.file} is not a valid notebook {UNREADABLE}"
    return _ABSOLUTE.sub(r"\1", text)


PART = ".part"  # what an output is called while it is written (never a report folder's name)
#: the files the grader writes in a report folder (similarity.CODE the last)
IN_REPORT = ("results.json", "feedback.md", "exercise-code.json")


def write_atomic(path: pathlib.Path, data: str | bytes) -> None:
    """Write ``path`` whole or not at all: ``data`` goes to ``<path>.part``, which is then
    renamed into place; a write that fails (a full disk, a signal) removes the ``.part`` and
    leaves the previous file, or none. Every output of the grader is written by this. (A
    ``.part`` that a killed run left is removed by the next run: :func:`clear_parts`.)"""
    tmp = path.with_name(path.name + PART)
    try:
        if isinstance(data, bytes):
            with open(tmp, "wb") as f:
                f.write(data)
        else:  # (errors: any surrogate that visible() and safe_text() missed)
            with open(tmp, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(data)
        os.replace(tmp, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(error, OSError) and error.errno:  # named by the file it was to be
            raise OSError(error.errno, error.strerror, str(path)) from None
        raise


def clear_parts(out: pathlib.Path) -> list[pathlib.Path]:
    """Remove the ``.part`` files of the grader's outputs in ``out`` and its report folders
    (left by a run that was killed while writing; only under the folder's lock); returns
    them."""
    names = {n + PART for n in (*OUTPUTS, PROFILE)}
    found = [p for p in out.glob("*" + PART) if p.name in names]
    found += [p for p in out.glob("*/*" + PART) if p.name in {n + PART for n in IN_REPORT}]
    for path in found:
        with contextlib.suppress(OSError):
            path.unlink()
    return found


def write(out: pathlib.Path, sub: Submission, report: Report) -> None:
    """``out/<name>/results.json`` and ``feedback.md``."""
    folder = out / sub.name
    folder.mkdir(exist_ok=True)
    write_atomic(folder / "results.json", report.json_text())
    write_atomic(folder / "feedback.md", report.feedback())


def gradebook(rows: list[tuple[Submission, Report]],
              tables: dict[str, list[tuple[ExerciseCell, Exercise]]],
              roster: list[Student] | None = None) -> str:
    """A row per submission (every one, graded or not), a column per exercise in book order;
    with a ``roster`` (its rows), the student's id, name and email, a row for every student
    without a submission, and in column ``roster`` why a row has no match (or clashes). A
    submission whose id clashes gets no score: the ``error`` column says why. Every cell goes
    through :func:`csv_cell`."""
    columns = [f"{cell.number} {ex.name}" for stem in sorted(tables) for cell, ex in tables[stem]]
    people = ["id", "name", "email", "roster"] if roster is not None else []
    lines: list[list[object]] = [["submission", "report", "path", *people, "chapter", "seed",
                                  *columns, "total", "max", "error"]]
    match = match_roster([sub for sub, _ in rows], roster or [])
    for sub, report in rows:
        who, error = [], f"not graded: {sub.error}" if sub.error else ""
        points, top = report.gradebook_cells(columns)
        if roster is not None:
            student = match.student.get(sub.name)
            why = ("id clash" if sub.name in match.clash else "" if student
                   else "not on the roster")
            who = [*([student.id, student.name, student.email] if student else ["", "", ""]),
                   why]
            if sub.name in match.clash:
                points = ["" for _ in points]
                error = "; ".join(filter(None, [match.clash[sub.name], error]))
        lines.append([sub.file, sub.name, sub.shown, *who, sub.chapter, report.seed,
                      *points, top, error])
    for student in match.missing:
        lines.append([student.file, "", "", student.id, student.name, student.email,
                      "no submission", "", "", *["" for _ in columns], "", "", ""])
    return csv_text(lines)


@dataclass
class Beside:
    """What a grading run wrote beside its report folders, read back: from ``gradebook.csv``
    (with a roster) each report folder's student ``ids`` and ``names`` and the roster's rows
    without a submission (``missing``: ``(id, name, file)``), from ``timings.csv`` each one's
    ``times`` (seconds, peak MB); empty where they are not there (files downloaded from
    Gradescope)."""

    ids: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    missing: list[tuple[str, str, str]] = field(default_factory=list)
    times: dict[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def read(cls, folder: pathlib.Path) -> Beside:
        found = cls()
        try:
            with open(folder / GRADEBOOK, newline="", encoding="utf-8") as f:
                for row in read_back(f):
                    if row.get("report") and row.get("id"):
                        found.ids[row["report"]] = row["id"]
                    if row.get("roster") == "no submission" and row.get("id"):
                        found.missing.append((row["id"], row.get("name") or "",
                                              row.get("submission", "")))
                    elif row.get("report") and row.get("name"):
                        found.names[row["report"]] = row["name"]
        except (OSError, csv.Error):
            pass
        try:
            with open(folder / TIMINGS, newline="", encoding="utf-8") as f:
                for row in read_back(f):
                    found.times[row["report"]] = (float(row["seconds"]),
                                                  float(row["peak_mb"]))
        except (OSError, csv.Error, KeyError, ValueError):
            pass
        return found

    def student(self, folder: str, roster: dict[str, str] | None = None) -> str:
        """Who wrote the report in ``folder`` (its name): ``roster[folder]`` when given, else
        the id the run's gradebook gives it, else the folder's name."""
        return (roster or {}).get(folder) or self.ids.get(folder, folder)
