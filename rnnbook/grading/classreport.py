"""The class report: what a whole class got right and, mistake by mistake, what it got wrong.

    python -m rnnbook.grading.classreport DIR [MORE ...] [--out DIR]

reads every ``results.json`` below the folders given (a grading run's ``--out``, or the files
downloaded from Gradescope) and writes ``class-report.html`` (self-contained: styles inline,
figures embedded as PNG, nothing loaded from the network) and ``class-report.csv``:

- per exercise: submissions, mean score, difficulty (mean / max), the shares of full, partial
  and zero scores, discrimination (the point-biserial correlation of the exercise's score with
  the rest of the student's score), and the named mistakes with their counts and one example
  submission each;
- per submission: score, seconds and peak memory (when the grader recorded them);
- per chapter, a figure a lecturer can project: full / partial / zero per exercise beside the
  class's commonest mistakes.

The grader writes both files after every run; this command rebuilds them from reports alone
(after a regrade, or merged from several runs).
"""
from __future__ import annotations

import argparse
import base64
import collections
import ctypes
import html
import io
import math
import os
import pathlib
import re
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnnbook.grading import results, similarity
from rnnbook.grading.roster import csv_text

#: what the report says of a failure that is not a named mistake (``extra_data.failure``)
LABELS = {
    "wrong": "wrong answer, no known mistake recognised",
    "not attempted": "not attempted (the stub still raises NotImplementedError)",
    "missing": "the function is missing or misnamed",
    "by hand": "used TensorFlow, Keras or rnnbook in a by-hand exercise",
    "error": "raised an error",
    "limit": "ran past a limit",
}
#: the groups of failures the report keeps apart from the named mistakes, in its order
GROUPS = (("error", "errors"), ("limit", "limits"), ("missing", "missing"),
          ("by hand", "by hand"), ("wrong", "no mistake recognised"))


@dataclass
class Result:
    """One exercise of one submission."""

    student: str
    chapter: str
    exercise: str  # "Exercise N.K <function name>"
    score: float
    max_score: float
    failure: str = ""  # one of results.FAILURES ("" when it passed)
    label: str = ""  # the mistake's sentence, or what else went wrong, in a few words
    hedged: bool = False  # the mistake is only likely (it explains some failing trials)

    @property
    def mistake(self) -> str:
        """The named mistake ("" when none was named)."""
        return self.label if self.failure == "mistake" else ""


@dataclass
class StudentReport:
    """One report as the class report counts it: who (``student``: the id, or the report
    folder's name; ``name``: the roster's), the :class:`~.results.Report`, and its measurements
    (from the run's timings.csv, or the report of an older version)."""

    student: str
    report: results.Report
    path: str  # its results.json
    seconds: float | None = None
    peak_mb: float | None = None
    name: str = ""  # the student's name, from the roster
    exercises: list[Result] = field(default_factory=list)

    @property
    def chapter(self) -> str:
        return self.report.chapter

    @property
    def error(self) -> str:
        return self.report.error

    @property
    def score(self) -> float:
        return float(self.report.score)

    @property
    def max_score(self) -> float:
        """Its maximum: the report's, else the sum of its tests'."""
        return float(self.report.max_score or sum(t.max_score for t in self.report.tests))


def mistake_of(test: results.TestResult) -> tuple[str, str, bool]:
    """``(failure, label, hedged)`` of a failing test, from its structured verdict only (what
    the grader wrote from the check's Outcome: :func:`results.verdict`), never from its output,
    which can hold text the submission wrote."""
    failure = test.failure
    if failure not in results.FAILURES:  # a results.json from before the verdict was recorded
        failure = "mistake" if test.mistake else "wrong"
    if failure == "mistake" and test.mistake:
        return failure, test.mistake, bool(test.hedge)
    failure = "wrong" if failure == "mistake" else failure
    # only the grader's own words become a label (a results.json can be edited by hand)
    label = test.error if results.own_words(test.error) else LABELS[failure]
    return failure, label, False


def who(student: str, name: str) -> str:
    """How the report names a student: the id, and the roster's name beside it."""
    return f"{student} ({name})" if name else student


def load(paths: Sequence[str | pathlib.Path],
         roster: dict[str, str] | None = None) -> list[StudentReport]:
    """Every ``results.json`` below ``paths`` as :class:`StudentReport` objects (sorted by
    student). The student is the report's folder name (the submission's file stem), the id
    the run's gradebook gives it (a run with ``--roster``), or ``roster[folder name]`` when
    given."""
    files = []
    for raw in paths:
        path = pathlib.Path(raw)
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += sorted(path.rglob("results.json"))
        else:
            raise ReportError(f"{path}: no such file or folder")
    if not files:
        raise ReportError(f"no results.json below {', '.join(map(str, paths))}")
    subs, runs = [], {}
    for path in files:
        try:
            report = results.Report.from_json(path)
        except results.ReportFormatError as error:
            raise ReportError(str(error)) from None
        name, folder = path.parent.name, path.parent.parent
        if folder not in runs:
            runs[folder] = results.Beside.read(folder)
        run = runs[folder]
        student = run.student(name, roster)
        seconds, peak = run.times.get(name, (report.seconds, report.peak_mb))
        sub = StudentReport(student, report, str(path), seconds, peak, run.names.get(name, ""))
        for test in report.tests:
            score, top = float(test.score), float(test.max_score)
            verdict = ("", "", False) if score >= top else mistake_of(test)
            sub.exercises.append(Result(student, sub.chapter, test.name, score, top, *verdict))
        subs.append(sub)
    return sorted(subs, key=lambda s: s.student)


def split_clashes(subs: list[StudentReport]
                  ) -> tuple[list[StudentReport], list[tuple[StudentReport, str]]]:
    """``(kept, left_out)``: one student id on two submissions of one chapter (a roster id the
    grader found on two files, or the same student in two merged runs) counts neither; each
    left out submission comes with why."""
    same = collections.defaultdict(list)
    for sub in subs:
        same[(sub.student, sub.chapter)].append(sub)
    kept, left_out = [], []
    for sub in subs:
        others = same[(sub.student, sub.chapter)]
        if len(others) == 1:
            kept.append(sub)
            continue
        where = ", ".join(o.path for o in others)
        left_out.append((sub, f"{sub.student} has {len(others)} submissions of chapter "
                              f"{sub.chapter} ({where}): none counts until resolved"))
    return kept, left_out


class ReportError(Exception):
    """Bad input to the report (one line, names the file)."""


def _number(exercise: str) -> tuple[int, int]:
    match = re.search(r"(\d+)\.(\d+)", exercise)
    return (int(match[1]), int(match[2])) if match else (999, 999)


def point_biserial(scores: Sequence[float], rest: Sequence[float]) -> float:
    """Correlation of an exercise's scores with the rest of each student's score (nan when
    either does not vary: every student scored the same)."""
    mine, others = np.asarray(scores, float), np.asarray(rest, float)  # (n,), (n,)
    if len(mine) < 2 or mine.std() == 0 or others.std() == 0:
        return math.nan
    return float(np.corrcoef(mine, others)[0, 1])


def exercise_stats(subs: list[StudentReport]) -> list[dict[str, Any]]:
    """One dict per exercise, in book order: the statistics the report shows. Named mistakes
    (``mistakes``: sentence, sure, likely, example) are kept apart from the other failures
    (``others``: failure, label, count, example), and "not attempted" is a share of its own
    beside full, partial and zero."""
    by_exercise = collections.defaultdict(list)
    for sub in subs:
        for result in sub.exercises:
            by_exercise[result.exercise].append((sub, result))
    order = {failure: k for k, (failure, _) in enumerate(GROUPS)}
    rows = []
    for exercise in sorted(by_exercise, key=_number):
        pairs = by_exercise[exercise]
        scores = [r.score for _, r in pairs]
        top = max(r.max_score for _, r in pairs) or 1.0
        rest = [s.score - r.score for s, r in pairs]
        sure: collections.Counter[str] = collections.Counter()
        likely: collections.Counter[str] = collections.Counter()
        others: collections.Counter[tuple[str, str]] = collections.Counter()
        examples: dict[tuple[str, str], str] = {}
        for s, r in pairs:
            if r.failure == "mistake":
                (likely if r.hedged else sure)[r.label] += 1
            elif r.failure:
                others[(r.failure, r.label)] += 1
            examples.setdefault((r.failure, r.label), s.student)
        absent = sum(r.failure == "not attempted" for _, r in pairs)
        named = sorted(sure | likely, key=lambda m: (-sure[m] - likely[m], -sure[m], m))
        rows.append({
            "chapter": pairs[0][1].chapter,
            "exercise": exercise,
            "max_score": top,
            "submissions": len(pairs),
            "mean": float(np.mean(scores)),
            "difficulty": float(np.mean(scores)) / top,
            "full": sum(s >= top for s in scores) / len(scores),
            "partial": sum(0 < s < top for s in scores) / len(scores),
            "zero": (sum(s <= 0 for s in scores) - absent) / len(scores),
            "not_attempted": absent / len(scores),
            "discrimination": point_biserial(scores, rest),
            "mistakes": [(m, sure[m], likely[m], examples[("mistake", m)]) for m in named],
            "others": [(f, label, n, examples[(f, label)]) for (f, label), n in
                       sorted(others.items(), key=lambda i: (order.get(i[0][0], -1), -i[1],
                                                             i[0][1]))
                       if f != "not attempted"],
        })
    return rows


def chapter_figure(rows: list[dict[str, Any]], chapter: str) -> bytes:
    """A PNG (bytes): full / partial / zero / not attempted per exercise, beside the chapter's
    commonest named mistakes (sure, and likely hatched). Errors and limits are not mistakes
    and stay out of it. Labels at 10 pt: it is meant to be projected."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    rows = [r for r in rows if r["chapter"] == chapter]
    top = commonest(rows)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.5 * max(len(rows), len(top), 3) + 1.4),
                                      gridspec_kw={"width_ratios": [1, 1.4]})
    labels = [r["exercise"].removeprefix("Exercise ") for r in rows][::-1]
    start = np.zeros(len(rows))
    for key, colour in (("full", "#2a9d8f"), ("partial", "#e9c46a"), ("zero", "#e76f51"),
                        ("not_attempted", "#bbbbbb")):
        share = np.array([r[key] for r in rows][::-1]) * 100
        left.barh(labels, share, left=start, color=colour, label=key.replace("_", " "))
        start += share
    left.set_xlim(0, 100)
    left.set_xlabel("% of submissions", fontsize=10)
    left.tick_params(labelsize=10)
    left.legend(fontsize=9, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.6 / len(rows)))
    left.set_title(f"Chapter {chapter}: scores", fontsize=11)
    if top:
        names = [t for t, _, _ in top][::-1]
        sure = np.array([n for _, n, _ in top][::-1])
        right.barh(names, sure, color="#e76f51", label="named")
        right.barh(names, [n for _, _, n in top][::-1], left=sure, color="white",
                   edgecolor="#e76f51", hatch="//", label="likely (explains some trials)")
        right.legend(fontsize=9, ncol=2, loc="upper center",
                     bbox_to_anchor=(0.5, -0.12 - 0.6 / len(top)))
        right.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        right.set_xlabel("submissions", fontsize=10)
    else:
        right.text(0.5, 0.5, "no mistakes named", ha="center", va="center", fontsize=10)
        right.set_yticks([])
    right.tick_params(labelsize=9)
    right.set_title("commonest mistakes", fontsize=11)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return out.getvalue()


def commonest(rows: list[dict[str, Any]], count: int = 6) -> list[tuple[str, int, int]]:
    """The chart's bars: ``[(label, sure, likely)]`` of the ``count`` named mistakes of
    ``rows`` seen most often (sure and likely together), labelled "N.K: the mistake"."""
    found: collections.Counter[tuple[str, str]] = collections.Counter()
    for r in rows:
        number = ".".join(map(str, _number(r["exercise"])))
        for sentence, sure, likely, _ in r["mistakes"]:
            found[(f"{number}: {_short(sentence)}", "sure")] += sure
            found[(f"{number}: {_short(sentence)}", "likely")] += likely
    labels = {label for label, _ in found}
    ranked = sorted(labels, key=lambda m: (-found[(m, "sure")] - found[(m, "likely")],
                                           -found[(m, "sure")], m))
    return [(m, found[(m, "sure")], found[(m, "likely")]) for m in ranked[:count]]


def _short(sentence: str, width: int = 60) -> str:
    first = sentence.split(":")[0]
    return first if len(first) <= width else first[: width - 1] + "…"


def _fmt(value: float | None, digits: int = 2) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else (
        f"{value:.{digits}f}" if isinstance(value, float) else str(value))


def _num(value: float | None, digits: int = 2) -> int | float | str:
    """A number for a CSV cell (``""`` when there is none): a number, never text, so that a
    negative one stays a number when :func:`csv_cell` neutralises text starting with ``-``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return int(round(value)) if digits == 0 else round(float(value), digits)


def headline(subs: list[StudentReport],
             missing: Sequence[tuple[str, str, str]] = ()) -> list[str]:
    """The report's first lines, per chapter: "mean 8.42 of 13 over 17 graded; 1 could not be
    graded (carol)"; a submission that could not be graded counts in no mean. Then those not
    graded whose chapter is unknown, and the roster's students without a submission."""
    lines = []
    chapters = sorted({s.chapter for s in subs if s.chapter})
    for chapter in chapters:
        these = [s for s in subs if s.chapter == chapter]
        done = [s for s in these if not s.error]
        line = f"Chapter {chapter}: " if len(chapters) > 1 or "" in {s.chapter for s in subs} \
            else ""
        if done:
            top = max(s.max_score for s in done)
            line += (f"mean {np.mean([s.score for s in done]):.2f} of {top:g} over {len(done)} "
                     "graded")
        else:
            line += "none graded"
        lines.append(line + _not_graded([s for s in these if s.error], "; "))
    if any(not s.chapter for s in subs):
        lines.append(_not_graded([s for s in subs if not s.chapter], "", ", chapter unknown"))
    if missing:
        lines.append(f"{len(missing)} on the roster handed nothing in: "
                     + ", ".join(who(i, n) for i, n, _ in missing))
    return lines


def _not_graded(subs: list[StudentReport], start: str, unknown: str = "") -> str:
    if not subs:
        return ""
    return (f"{start}{len(subs)} could not be graded{unknown}: "
            + ", ".join(who(s.student, s.name) for s in subs))


def missing_students(paths: Sequence[str | pathlib.Path], subs: list[StudentReport]
                     ) -> list[tuple[str, str, str]]:
    """``[(id, name, file)]``: the roster's students without a submission, as each grading
    run's gradebook lists them (none that another run merged here has a submission for)."""
    found: dict[str, tuple[str, str, str]] = {}
    handed = {s.student for s in subs}
    for raw in paths:
        path = pathlib.Path(raw)
        for folder in {p.parent.parent for p in ([path] if path.is_file()
                                                 else path.rglob("results.json"))}:
            for row in results.Beside.read(folder).missing:
                if row[0] not in handed:
                    found.setdefault(row[0], row)
    return sorted(found.values())


def write_report_csv(rows: list[dict[str, Any]], subs: list[StudentReport], path: pathlib.Path,
                     left_out: Sequence[tuple[StudentReport, str]] = (),
                     missing: Sequence[tuple[str, str, str]] = ()) -> None:
    """``class-report.csv``: a row per exercise, a row per (exercise, named mistake: ``count``
    sure, ``likely`` hedged), a row per (exercise, other ``failure``: an error, a limit, ...),
    a row per submission (``mistake`` says why one was not graded), a row per submission
    ``left out`` (why in column ``mistake``), a row per roster student ``missing``; the first
    column says which. Every cell goes through :func:`~rnnbook.grading.roster.csv_cell` (a
    student's id or file name may start with ``=``)."""
    lines: list[list[str | float]] = [[
        "row", "chapter", "exercise", "max_score", "submissions", "mean", "difficulty",
        "full", "partial", "zero", "discrimination", "mistake", "count", "example",
        "student", "score", "seconds", "peak_mb", "not_attempted", "likely", "failure",
        "name"]]
    blank = [""] * 4
    for r in rows:
        lines.append(["exercise", r["chapter"], r["exercise"], _num(r["max_score"]),
                      r["submissions"], _num(r["mean"]), _num(r["difficulty"]), _num(r["full"]),
                      _num(r["partial"]), _num(r["zero"]), _num(r["discrimination"]), "", "", "",
                      "", "", "", "", _num(r["not_attempted"]), "", "", ""])
        for sentence, sure, likely, example in r["mistakes"]:
            lines.append(["mistake", r["chapter"], r["exercise"], "", "", "", "", "", "", "", "",
                          sentence, sure, example, "", "", "", "", "", likely, "mistake", ""])
        for failure, label, count, example in r["others"]:
            lines.append(["failure", r["chapter"], r["exercise"], "", "", "", "", "", "", "",
                          "", label, count, example, "", "", "", "", "", "", failure, ""])
    for s in subs:
        lines.append(["submission", s.chapter, "", _num(s.max_score), "", "", "", "", "", "", "",
                      s.error, "", "", s.student, "" if s.error else _num(s.score),
                      _num(s.seconds, 1), _num(s.peak_mb, 0), *blank[:3], s.name])
    for s, why in left_out:
        lines.append(["left out", s.chapter, "", _num(s.max_score), "", "", "", "", "", "", "",
                      why, "", "", s.student, "", "", "", *blank[:3], s.name])
    for student, name, file in missing:
        lines.append(["missing", "", "", "", "", "", "", "", "", "", "",
                      f"no submission ({file})", "", "", student, "", "", "", *blank[:3], name])
    results.write_atomic(path, csv_text(lines))


#: The page on any screen (tests/test_book.py measures it at 1280 and 390 px): tables scroll
#: sideways rather than widen the page; a chart is never shown below 760 px (its 10 pt labels
#: stay above 9 px), and on a narrower screen the page's body scrolls sideways to it.
REPORT_STYLE = """html{overflow-x:auto}
body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 .5em;color:#222;
overflow-x:auto;overflow-wrap:anywhere}
table{display:block;max-width:100%;overflow-x:auto;border-collapse:collapse;margin:1em 0;
overflow-wrap:normal}td,th{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.n{text-align:right}
img{max-width:max(100%,760px)}.note{color:#555}"""


def report_html(rows: list[dict[str, Any]], subs: list[StudentReport],
                left_out: Sequence[tuple[StudentReport, str]] = (),
                missing: Sequence[tuple[str, str, str]] = ()) -> str:
    """``class-report.html``'s text: one self-contained page (no script, no remote
    resource)."""
    e = html.escape
    names = collections.defaultdict(str, {s.student: s.name for s in subs})
    chapters = sorted({r["chapter"] for r in rows})
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>"
             # a phone lays the page out at its own width, not a desktop's 980 px
             "<meta name='viewport' content='width=device-width, initial-scale=1'>"
             "<title>Class report</title>"
             f"<style>{REPORT_STYLE}</style></head><body><h1>Class report</h1>",
             *(f"<p>{e(line)}.</p>" for line in headline(subs, missing))]
    for chapter in chapters:
        png = base64.b64encode(chapter_figure(rows, chapter)).decode()
        parts.append(f"<h2>Chapter {e(chapter)}</h2><img alt='scores and mistakes, chapter "
                     f"{e(chapter)}' src='data:image/png;base64,{png}'>")
        parts.append(similarity.HTML_TABLE
                     + "<tr><th>exercise</th><th>n</th><th>mean</th><th>difficulty</th>"
                     "<th>full / partial / zero / not attempted</th><th>discrimination</th>"
                     "<th>named mistakes (count, example)</th>"
                     "<th>errors, limits and other failures</th></tr>")
        for r in (r for r in rows if r["chapter"] == chapter):
            named = "<br>".join(
                f"{e(m)} &middot; <b>{n}</b>{f' + {k} likely' if k else ''}, "
                f"e.g. {e(who(x, names[x]))}" for m, n, k, x in r["mistakes"])
            others = "<br>".join(f"{e(label)} &middot; <b>{n}</b>, e.g. {e(who(x, names[x]))}"
                                 for _, label, n, x in r["others"])
            parts.append(
                f"<tr><td>{e(r['exercise'])}</td><td class=n>{r['submissions']}</td>"
                f"<td class=n>{_fmt(r['mean'])} / {_fmt(r['max_score'], 0)}</td>"
                f"<td class=n>{_fmt(r['difficulty'])}</td>"
                f"<td class=n>{r['full']:.0%} / {r['partial']:.0%} / {r['zero']:.0%} / "
                f"{r['not_attempted']:.0%}</td>"
                f"<td class=n>{_fmt(r['discrimination']) or 'n/a'}</td><td>{named}</td>"
                f"<td>{others}</td></tr>")
        parts.append("</table>")
    with_names = any(s.name for s in subs)  # a roster gave names
    parts.append(f"<h2>Submissions</h2>{similarity.HTML_TABLE}<tr><th>student</th>"
                 f"{'<th>name</th>' * with_names}"
                 "<th>chapter</th><th>score</th><th>seconds</th><th>peak MB</th>"
                 "<th>not graded</th></tr>")
    for s in subs:
        score = "not graded" if s.error else f"{_fmt(s.score, 2)} / {_fmt(s.max_score, 0)}"
        name = f"<td>{e(s.name)}</td>" if with_names else ""
        parts.append(f"<tr><td>{e(s.student)}</td>{name}<td>{e(s.chapter)}</td>"
                     f"<td class=n>{score}</td>"
                     f"<td class=n>{_fmt(s.seconds, 1)}</td><td class=n>{_fmt(s.peak_mb, 0)}</td>"
                     f"<td>{e(s.error)}</td></tr>")
    if missing:
        parts.append(f"</table><h2>Missing ({len(missing)})</h2><p>On the roster, no "
                     "submission:</p>" + similarity.HTML_TABLE
                     + "<tr><th>student</th><th>name</th><th>file</th></tr>")
        parts += [f"<tr><td>{e(i)}</td><td>{e(n)}</td><td>{e(f)}</td></tr>"
                  for i, n, f in missing]
    if left_out:
        parts.append(f"</table><h2>Left out ({len(left_out)})</h2>"
                     f"{similarity.HTML_TABLE}<tr><th>student</th>"
                     "<th>chapter</th><th>why</th></tr>")
        parts += [f"<tr><td>{e(who(s.student, s.name))}</td><td>{e(s.chapter)}</td>"
                  f"<td>{e(why)}</td></tr>" for s, why in left_out]
    parts.append("</table><p class=note>Difficulty is the mean score over the maximum (1 = "
                 "everyone right). Discrimination is the correlation of an exercise's score with "
                 "the rest of the score: near 0 or negative, the exercise does not separate "
                 "students who know the chapter from those who do not. A named mistake is the "
                 "check's verdict; \"likely\" ones explain only some of the failing trials. "
                 "Errors (the function raised), limits (time, memory) and answers not attempted "
                 "are not mistakes and are counted apart.</p></body></html>")
    return "\n".join(parts)


def write_report(paths: Sequence[str | pathlib.Path], out: str | pathlib.Path,
                 roster: dict[str, str] | None = None) -> tuple[pathlib.Path, pathlib.Path]:
    """Write ``class-report.html`` and ``class-report.csv`` into ``out``; return their paths."""
    subs, left_out = split_clashes(load(paths, roster))
    rows = exercise_stats(subs)
    missing = missing_students(paths, [*subs, *(s for s, _ in left_out)])
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    page, table = out / "class-report.html", out / "class-report.csv"
    shown, pairs = similarity.compare(paths, roster)  # its section, similar-submissions.csv
    text = similarity.into_page(report_html(rows, subs, left_out, missing), shown)
    writes: list[tuple[pathlib.Path, Callable[[], object]]] = [
        (page, lambda: results.write_atomic(page, text)),
        (table, lambda: write_report_csv(rows, subs, table, left_out, missing))]
    if pairs is not None:
        found = pairs
        writes.append((out / similarity.TABLE,
                       lambda: similarity.write_pairs_csv(found, out / similarity.TABLE)))
    failed = []
    for path, write in writes:  # each whole or not at all, each on its own
        try:
            write()
        except OSError as error:
            failed.append(f"{path.name} ({error.strerror or error})")
    if failed:
        raise OSError(f"could not write {', '.join(failed)}")
    return page, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnbook.grading.classreport",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+", help="folders holding results.json files")
    parser.add_argument("--out", help="where to write the report (default: the first folder)")
    # the grader's process id, when the grader runs this: it ends with the grader (killed
    # mid-run, the grader leaves no process that writes into --out after it)
    parser.add_argument("--parent", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.parent:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != args.parent:  # (it ended before the line above)
            return 2
    try:
        page, table = write_report(args.reports, args.out or args.reports[0])
    except (ReportError, OSError) as error:
        print(f"report: error: {error}", file=sys.stderr)
        return 2
    print(f"report: wrote {page} and {table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
