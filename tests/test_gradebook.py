"""The gradebook and the class report as a spreadsheet and an LMS read them: no cell a
spreadsheet would run as a formula, one row per student id (two submissions under one id count
neither), and roster files matched by name or by path. Calls rnnbook/grading/results.py and
classreport.py directly (no grading run)."""
import csv
import io
import json
import pathlib
from types import SimpleNamespace

import pytest

from rnnbook.grading import classreport
from rnnbook.grading import results as reports
from rnnbook.grading import roster as rosters
from tests.test_exercise_names import number

SPLIT = number("split_kernel")  # its gradebook column is f"{SPLIT} split_kernel"

STEM = "01-basic-rnn-cell"
#: the issue's file names, and roster entries starting with every character OWASP names
HOSTILE_FILES = ['=2+5+N("x").ipynb', "-2-3.ipynb", "+1.ipynb", "@SUM(A1).ipynb"]
HOSTILE_IDS = ["=HYPERLINK(\"http://x\")", "+1", "-1+2", "@SUM(A1)", "\t=1", "\r=1", "'=1"]


def table():
    """One exercise of 2 points, as the grader's table gives it."""
    cell = SimpleNamespace(number=SPLIT, points=2)
    return {STEM: [(cell, SimpleNamespace(name="split_kernel"))]}


def submission(path, name, score=2.0, error=""):
    sub = reports.Submission(path=pathlib.Path(path), name=name, chapter=STEM, error=error)
    tests = [] if error else [reports.TestResult(f"Exercise {SPLIT} split_kernel", score, 2, "✓")]
    return sub, reports.Report(score, "", 7, STEM, 2, tests, error=error)


def subs(*paths, score=2.0):
    names = reports.names([pathlib.Path(p) for p in paths])
    return [submission(p, n, score) for p, n in zip(paths, names, strict=True)]


def roster_file(tmp_path, rows):
    path = tmp_path / "roster.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(rosters.ROSTER_COLUMNS)
        writer.writerows(rows)
    return path


def read(text):
    return list(csv.reader(io.StringIO(text)))


def rows_by(text, key="submission"):
    return {rosters.csv_value(r[key]): r for r in csv.DictReader(io.StringIO(text))}


def assert_no_formula(text):
    for row in read(text):
        for cell in row:
            assert not cell.startswith(rosters.FORMULA_STARTS), f"formula cell {cell!r}"


# --- CSV cells ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [*HOSTILE_IDS, *HOSTILE_FILES, "'", "''x", "a=b", "", "s1"])
def test_a_cell_is_neutralised_and_read_back_as_written(value):
    cell = rosters.csv_cell(value)
    assert not cell.startswith(rosters.FORMULA_STARTS)
    assert rosters.csv_value(cell) == value
    back = read(rosters.csv_text([[value, -1.5, 3]]))[0]
    assert rosters.csv_value(back[0]) == value and back[1:] == ["-1.5", "3"]


def test_the_gradebook_neutralises_file_names_and_roster_entries(tmp_path):
    rows = subs(*[f"subs/{name}" for name in HOSTILE_FILES])
    roster = rosters.read_roster(roster_file(tmp_path, [
        [name, student, student + " name", "@" + student]
        for name, student in zip(HOSTILE_FILES, HOSTILE_IDS, strict=False)]
        + [["nobody", "-absent", "=absent", "+absent"]]))
    text = reports.gradebook(rows, table(), roster)
    assert_no_formula(text)
    book = rows_by(text)
    for name, student in zip(HOSTILE_FILES, HOSTILE_IDS, strict=False):
        row = book[name]
        assert rosters.csv_value(row["id"]) == student, row
        assert rosters.csv_value(row["email"]) == "@" + student
        assert row["total"] == "2.0" and row["roster"] == ""
    assert book["nobody.ipynb"]["roster"] == "no submission"
    assert rosters.csv_value(book["nobody.ipynb"]["name"]) == "=absent"


# --- the roster -----------------------------------------------------------------------------


def test_one_id_on_two_submissions_counts_neither(tmp_path):
    """The issue's impersonation: d2/alice.ipynb is not Alice's, but its name is."""
    rows = subs("d1/alice.ipynb", "d2/alice.ipynb", "d1/bob.ipynb")
    roster = rosters.read_roster(roster_file(tmp_path, [["alice.ipynb", "s1", "Alice", ""],
                                                        ["bob", "s2", "Bob", ""]]))
    match = rosters.match_roster([sub for sub, _ in rows], roster)
    assert sorted(match.clash) == ["alice", "alice-2"]
    for why in match.clash.values():
        assert "s1" in why and "d1/alice.ipynb" in why and "d2/alice.ipynb" in why
    book = list(csv.DictReader(io.StringIO(reports.gradebook(rows, table(), roster))))
    alice = [row for row in book if row["id"] == "s1"]
    assert len(alice) == 2
    for row in alice:
        assert row["total"] == "" and row[f"{SPLIT} split_kernel"] == "" and row["roster"] == "id clash"
        assert "d1/alice.ipynb" in row["error"] and "d2/alice.ipynb" in row["error"]
    bob = next(row for row in book if row["id"] == "s2")
    assert bob["total"] == "2.0" and bob["error"] == ""


def test_the_roster_can_name_the_exact_path(tmp_path):
    """A path in the file column wins over a bare file name; a path is matched from its end."""
    rows = subs("subs/d1/alice.ipynb", "subs/d2/alice.ipynb")
    roster = rosters.read_roster(roster_file(tmp_path, [
        ["alice.ipynb", "s1", "Alice", ""], ["./d2//alice", "s9", "Mallory", ""],
        ["d3/alice.ipynb", "s3", "Absent", ""]]))
    match = rosters.match_roster([sub for sub, _ in rows], roster)
    assert not match.clash and not match.unknown
    assert {k: v.id for k, v in match.student.items()} == {"alice": "s1", "alice-2": "s9"}
    assert [s.id for s in match.missing] == ["s3"]
    book = rows_by(reports.gradebook(rows, table(), roster), "id")
    assert book["s9"]["path"] == "subs/d2/alice.ipynb" and book["s9"]["total"] == "2.0"
    assert book["s3"]["roster"] == "no submission"
    assert book["s3"]["submission"] == "d3/alice.ipynb"


def test_a_path_matching_two_submissions_is_a_clash_too(tmp_path):
    rows = subs("a/x/alice.ipynb", "b/x/alice.ipynb")
    roster = rosters.read_roster(roster_file(tmp_path, [["x/alice.ipynb", "s1", "", ""]]))
    assert len(rosters.match_roster([sub for sub, _ in rows], roster).clash) == 2


@pytest.mark.parametrize("rows,says", [
    ([["a", "s1", "", ""], ["b", "s1", "", ""]], "rows 2 and 3: the id s1 is listed twice"),
    ([["a", "s1", "", ""], ["b", " ", "", ""]], "row 3: no id for b "),
    ([["a", "s1", "", ""], ["a.ipynb", "s2", "", ""]], "rows 2 and 3: a.ipynb is listed twice"),
    ([["", "s1", "", ""]], "row 2: no file name"),
])
def test_a_bad_roster_is_one_line_naming_the_rows(tmp_path, rows, says):
    with pytest.raises(rosters.RosterError) as error:
        rosters.read_roster(roster_file(tmp_path, rows))
    assert says in str(error.value) and "\n" not in str(error.value)


# --- the class report reads the gradebook back ----------------------------------------------


def write_run(out, rows, roster):
    for sub, result in rows:
        reports.write(out, sub, result)
    reports.write_atomic(out / reports.GRADEBOOK, reports.gradebook(rows, table(), roster))
    lines = [["report", "seconds", "peak_mb"]] + [[s.name, 1.5, 20] for s, _ in rows]
    reports.write_atomic(out / "timings.csv", rosters.csv_text(lines))


def test_the_class_report_counts_no_id_twice_and_keeps_ids_as_typed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    rows = subs("d1/alice.ipynb", "d2/alice.ipynb", "d1/-2-3.ipynb", 'd1/=2+5+N("x").ipynb')
    rows[2][1].score = rows[2][1].tests[0].score = 0.5
    roster = rosters.read_roster(roster_file(tmp_path, [
        ["alice", "s1", "", ""], ["-2-3", "=x", "", ""], ['=2+5+N("x")', "@y", "", ""]]))
    write_run(out, rows, roster)
    book = rows_by((out / reports.GRADEBOOK).read_text())
    assert book["-2-3.ipynb"][f"{SPLIT} split_kernel"] == book["-2-3.ipynb"]["total"] == "0.5"
    page, table_path = classreport.write_report([out], out)
    text = table_path.read_text()
    assert_no_formula(text)
    found = list(csv.DictReader(io.StringIO(text)))
    students = {rosters.csv_value(r["student"]): r for r in found if r["row"] == "submission"}
    assert sorted(students) == ["=x", "@y"]  # s1 left out: two submissions under one id
    assert students["=x"]["score"] == "0.5" and students["=x"]["seconds"] == "1.5"
    left = [r for r in found if r["row"] == "left out"]
    assert [r["student"] for r in left] == ["s1", "s1"]
    assert "2 submissions" in left[0]["mistake"]
    exercise = next(r for r in found if r["row"] == "exercise")
    assert exercise["submissions"] == "2" and exercise["partial"] == "0.5"
    html = page.read_text()
    assert "=x" in html and "Left out (2)" in html and "'=x" not in html


def test_merged_runs_of_one_student_and_chapter_count_neither(tmp_path):
    for run in ("run1", "run2"):
        folder = tmp_path / run
        folder.mkdir()
        for sub, result in subs("alice.ipynb"):
            reports.write(folder, sub, result)
    kept, left_out = classreport.split_clashes(classreport.load([tmp_path / "run1", tmp_path / "run2"]))
    assert kept == [] and len(left_out) == 2
    assert json.loads((tmp_path / "run1" / "alice" / "results.json").read_text())["score"] == 2


@pytest.mark.slow
def test_a_grading_run_reports_the_clash_and_writes_no_formula(tmp_path):
    """The grader itself, on learner copies (stubs: quick) named as the issue named them."""
    import subprocess
    import sys

    import nbformat

    from rnnbook import generate, source

    root = pathlib.Path(__file__).resolve().parent.parent
    stub = generate.learner_copy(source.read(root / "solutions" / f"{STEM}.ipynb"))
    for path in ("d1/alice.ipynb", "d2/alice.ipynb", 'd1/=2+5+N("x").ipynb', "d2/-2-3.ipynb"):
        (tmp_path / path).parent.mkdir(exist_ok=True)
        nbformat.write(stub, str(tmp_path / path))
    roster = roster_file(tmp_path, [["alice", "s1", "Alice", ""], ["-2-3", "=x", "@x", "-x"]])
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "rnnbook.grading", str(tmp_path / "d1"),
                          str(tmp_path / "d2"), "--out", str(out), "--roster", str(roster),
                          "--seed", "1", "--workers", "1"], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 1, run.stderr[-3000:]
    clash = [line for line in run.stderr.splitlines() if "the id s1 is on 2" in line]
    assert len(clash) == 1 and clash[0].startswith("grade: error: roster:")
    assert str(tmp_path / "d1/alice.ipynb") in clash[0]
    assert str(tmp_path / "d2/alice.ipynb") in clash[0]
    for name in ("gradebook.csv", "class-report.csv", "timings.csv"):
        assert_no_formula((out / name).read_text())
    book = rows_by((out / "gradebook.csv").read_text())
    assert book["alice.ipynb"]["total"] == "" and book["alice.ipynb"]["roster"] == "id clash"
    assert rosters.csv_value(book["-2-3.ipynb"]["id"]) == "=x"
    assert book['=2+5+N("x").ipynb']["roster"] == "not on the roster"
    found = list(csv.DictReader((out / "class-report.csv").open(newline="")))
    assert {rosters.csv_value(r["student"]) for r in found if r["row"] == "submission"} == {
        "=x", "_2_5_N_x_"}
    assert [r["student"] for r in found if r["row"] == "left out"] == ["s1", "s1"]


# --- partial credit -------------------------------------------------------------------------


def exercise_cells(stem):
    from rnnbook import source

    root = pathlib.Path(__file__).resolve().parent.parent
    return source.exercises(source.read(root / "solutions" / f"{stem}.ipynb"))


def test_a_header_of_one_part_or_a_bad_header_is_refused():
    import nbformat

    from rnnbook import source

    for header in ("# Exercise 1.1 (2 points, 1 parts, by hand)",
                   "# Exercise 1.1 (2 points, by hand, 3 parts)"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(header + "\ndef f(): pass")])
        with pytest.raises(source.SourceError):
            source.exercises(nb)


def judged(stem, name, seed, wrong):
    """The results object of one exercise whose answers are the reference's, trial ``k``'s
    changed by ``wrong(k, answer)`` (``answer``: a list of its parts; it may return anything)."""
    from rnnbook import checks
    from rnnbook.plaindata import to_plain

    chapter = checks.load(stem)
    ex = chapter[name]
    cell = next(c for c in exercise_cells(stem) if c.name == name)
    cases = chapter.cases(name, seed)
    expected = [to_plain(ex.reference(case)) for case in cases]
    sub = reports.Submission(path=pathlib.Path(f"{name}.ipynb"), name=name, chapter=stem)
    sub.answers[name] = [wrong(k, list(want)) for k, want in enumerate(expected)]
    report_ = reports.graded(sub, [(cell, ex)], seed, {name: (cases, expected)}, "test")
    return report_, report_.tests[0]


def test_a_part_earns_its_share_when_right_on_every_trial():
    """lstm_cell_backward: nine parts, 5 points, dc weighs 8 and the others 1; dkernel wrong on every trial
    -> 8 of 9 parts, 15 of 16 weights, held to two thirds: a failing answer earns no more
    (rnnbook.compare.CEILING)."""
    def doubled_dkernel(k, answer):
        answer[3] = answer[3] * 2
        return answer

    report_, test = judged("05-gradients-by-hand", "lstm_cell_backward", 3, doubled_dkernel)
    assert test.score == 3.33 and test.max_score == 5 and report_.score == 3.33
    assert test.parts == 9 and test.parts_right == 8
    assert "Parts right on every trial: 8 of 9; wrong on some trial: dkernel." in test.output
    assert test.output.endswith("(dx 0.312, dc 2.5, dm 0.312, dkernel 0.312, dbias 0.312, "
                                   "dw_i_diag 0.312, dw_f_diag 0.312, dw_o_diag 0.312, "
                                   "dprojection 0.312): 3.33 of 5 points (a failing "
                                   "answer earns at most two thirds).")
    assert "this answer earns 67% (a failing answer earns at most two thirds)." in test.output
    assert "# Feedback: 3.33 / 5 points" in report_.feedback()


def test_a_part_wrong_on_one_trial_only_earns_nothing():
    """rnn_step_backward (2 points, 4 parts, dkernel weighs 3): dh wrong on the second trial only -> 3 of
    4 parts, 5 of 6 weights, held to two thirds."""
    _, test = judged("05-gradients-by-hand", "rnn_step_backward", 0, lambda k, a: a)
    assert test.score == 2 and "Score:" not in test.output

    def wrong_dh(k, answer):
        answer[1] = answer[1] + (k == 1)
        return answer

    _, test = judged("05-gradients-by-hand", "rnn_step_backward", 0, wrong_dh)
    assert test.score == 1.33 and "3 of 4 parts" in test.output
    assert "wrong on some trial: dh." in test.output


@pytest.mark.parametrize("wrong,score", [
    (lambda k, answer: answer, 1),
    (lambda k, answer: [answer[0], answer[1].T], 0.5),  # U transposed: W still right
    (lambda k, answer: answer[::-1], 0),  # swapped: both wrong
    (lambda k, answer: answer[0], 0),  # W alone: not two parts
    (lambda k, answer: [*answer, answer[0]], 0),  # three parts
])
def test_no_wrong_answer_gets_full_marks(wrong, score):
    _, test = judged("01-basic-rnn-cell", "split_kernel", 5, wrong)
    assert test.score == score and test.max_score == 1
    assert (0 < score < 1) == ("Score:" in test.output)


def test_an_answer_that_raises_on_a_trial_earns_nothing():
    from rnnbook.plaindata import Raised

    _, test = judged("01-basic-rnn-cell", "split_kernel", 5,
                     lambda k, answer: Raised("ValueError", "no") if k == 0 else answer)
    assert test.score == 0 and "raised ValueError" in test.output
    assert test.parts_right == 0 and "Score:" not in test.output


def test_two_mistakes_in_two_parts_are_named_by_part():
    """rnn_step_backward: dkernel transposed and dbias not summed: no known mistake explains the whole answer,
    so the first wrong part's mistake is named, and the two right parts earn their share (2 of
    6 weights: dkernel weighs 3)."""
    from rnnbook import checks
    from rnnbook.compare import evaluate
    from rnnbook.plaindata import to_plain

    chapter = checks.load("05-gradients-by-hand")
    ex = chapter["rnn_step_backward"]
    by = {m.sentence.split(":")[0]: m for m in ex.mistakes}
    transposed, unsummed = by["dkernel is transposed"], by["dbias is not summed over the batch"]
    cases = chapter.cases(ex.name, 11)
    expected = [to_plain(ex.reference(case)) for case in cases]
    answers = [[*want[:2], to_plain(transposed.answer(case))[2],
                to_plain(unsummed.answer(case))[3]] for case, want in zip(cases, expected,
                                                                         strict=True)]
    outcome = evaluate(ex, cases, expected, answers)
    assert outcome.parts_right == ("dx", "dh") and outcome.share == pytest.approx(1 / 3)
    assert outcome.mistake == transposed.sentence
    assert f"Likely mistake in dkernel: {transposed.sentence}" in outcome.message


# --- what the class report shows of the roster and of a file it could not grade ------------


def test_the_class_report_names_students_and_lists_the_missing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    rows = subs("alice.ipynb", "bob.ipynb")
    rows[1][1].score = rows[1][1].tests[0].score = 1.0
    rows[1][1].tests[0].failure, rows[1][1].tests[0].mistake = "mistake", "W is U"
    roster = rosters.read_roster(roster_file(tmp_path, [
        ["alice", "s1", "Alice Liddell", ""], ["bob", "s2", "=Bob", ""],
        ["dan", "s4", "Dan Brown", "dan@example.org"]]))
    write_run(out, rows, roster)
    page, table_path = classreport.write_report([out], out)
    found = list(csv.DictReader(table_path.open(newline="")))
    people = {rosters.csv_value(r["student"]): rosters.csv_value(r["name"]) for r in found
              if r["row"] == "submission"}
    assert people == {"s1": "Alice Liddell", "s2": "=Bob"}
    missing = [r for r in found if r["row"] == "missing"]
    assert [(r["student"], r["name"]) for r in missing] == [("s4", "Dan Brown")]
    html = page.read_text()
    assert "<td>s1</td><td>Alice Liddell</td>" in html and "Missing (1)" in html
    assert "1 on the roster handed nothing in: s4 (Dan Brown)" in html
    assert "e.g. s2 (=Bob)" in html  # an example by id and name; the CSV's by id
    assert [rosters.csv_value(r["example"]) for r in found if r["row"] == "mistake"] == ["s2"]
    assert "mean 1.50 of 2 over 2 graded" in html


def test_a_broken_notebook_counts_in_its_chapter_and_its_feedback_shows_no_grader_path(
        tmp_path):
    from rnnbook.grading import run

    broken = tmp_path / "deep" / "folder" / "carol.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"cells": 5, "secret": "raw json"}')
    cells = run.exercise_cells()
    sub = run.load_submission(reports.Submission(path=broken, name="carol"), STEM, cells)
    assert sub.error and sub.chapter == STEM  # --chapter was given: it is still its chapter
    report = reports.not_graded(sub, 7, cells[STEM])
    assert report.max_score == sum(c.points for c in cells[STEM])
    reports.write(tmp_path, sub, report)
    feedback = (tmp_path / "carol" / "feedback.md").read_text()
    assert feedback.startswith(f"# Feedback: 0 / {report.max_score} points")
    shown = feedback + report.json_text()
    assert str(tmp_path) not in shown and "raw json" not in shown and "object" not in shown
    assert "carol.ipynb is not a valid notebook" in feedback
    other = reports.Submission(path=broken, name="carol", error=f"{broken}: larger than 32 MB")
    assert reports.why_not_graded(other) == "carol.ipynb: larger than 32 MB"
    crash = reports.Submission(path=broken, name="c", error="failed (OSError: /opt/grader/x.py)")
    assert reports.why_not_graded(crash) == "failed (OSError: x.py)"
    book = rows_by(reports.gradebook([(sub, report)], table()))
    assert book["carol.ipynb"]["chapter"] == STEM
    assert book["carol.ipynb"]["max"] == str(report.max_score)


# --- where an error points: the function that raised, the learner's cell numbers ------------

CELL = ("import numpy as np\n"  # a learner's cell: rnn_unroll calls rnn_step, which raises
        "def rnn_step(x):\n"
        "    y = np.ones(2)\n"
        "    return y @ np.ones(3)\n"
        "def rnn_unroll(x):\n"
        "    return [rnn_step(x)]\n"
        "def rnn_alone(x):\n"
        "    return np.ones(2) @ np.ones(3)\n")


def raised_by(child, name):
    """The exception ``name`` raises, caught as a check catches it (from rnnbook's code), its
    cell compiled as the grader's child compiles it."""
    space = {}
    exec(child.compiled(CELL, 7), space)  # noqa: S102
    check = {}
    exec(compile("def call(fn):\n    try:\n        fn(1)\n    except Exception as e:\n"  # noqa: S102
                 "        return e\n", "rnnbook/checks/fake.py", "exec"), check)
    return check["call"](space[name])


def test_an_error_in_a_called_function_names_that_function_in_both_verdicts(monkeypatch):
    """rnn_unroll failing because rnn_step raised says "in rnn_step", the notebook's check
    (rnnbook.byhand) and the grader's child alike; a function that raised itself is not named
    again."""
    import importlib
    import sys

    from rnnbook import byhand, plaindata

    monkeypatch.setitem(sys.modules, "rnnbook_plaindata", plaindata)  # as the zygote does
    child = importlib.import_module("rnnbook.grading.child")
    error = raised_by(child, "rnn_unroll")
    notebook = byhand.raised(error)
    assert notebook.where == "line 4 in rnn_step: return y @ np.ones(3)"
    assert child.raised(error)["__raised__"][2] == notebook.where
    alone = raised_by(child, "rnn_alone")
    assert byhand.raised(alone).where == "line 8: return np.ones(2) @ np.ones(3)"
    assert child.raised(alone)["__raised__"][2] == byhand.raised(alone).where


def test_cell_numbers_count_every_cell_as_the_learner_sees_them(tmp_path):
    import nbformat

    from rnnbook.grading import attempt, run

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("text"), nbformat.v4.new_code_cell("1 / 0")])
    nbformat.write(nb, str(tmp_path / "n.ipynb"))
    sub = run.load_submission(reports.Submission(path=tmp_path / "n.ipynb", name="n"), STEM,
                              run.exercise_cells())
    assert sub.cells[3].strip() == "1 / 0" and sub.cells[0] == sub.cells[2] == ""
    attempt.finish_stage(sub, {"status": "error", "error": "ZeroDivisionError: x"},
                         ("cell", 3), [], {}, {}, "")
    assert sub.notes == ["cell 4 raised ZeroDivisionError: x"]  # the 4th cell in Jupyter


def test_a_hedged_diagnosis_is_recorded_as_hedged():
    """The mistake explains one failing trial of three: the verdict keeps the hedge (the class
    report counts it as likely); on every trial, it is sure."""
    from rnnbook import checks
    from rnnbook.plaindata import to_plain

    stem, name = "01-basic-rnn-cell", "rnn_step"
    chapter = checks.load(stem)
    ex = chapter[name]
    cell = next(c for c in exercise_cells(stem) if c.name == name)
    cases = chapter.cases(name, 2)
    expected = [to_plain(ex.reference(case)) for case in cases]
    slip = ex.mistakes[0].models[0]
    for hits, hedge in ((1, f"it explains 1 of the {len(cases)} failing trials"), (len(cases), "")):
        sub = reports.Submission(path=pathlib.Path("s.ipynb"), name="s", chapter=stem)
        sub.answers[name] = [to_plain(slip(case)) if k < hits else want + 1
                             for k, (case, want) in enumerate(zip(cases, expected, strict=True))]
        test = reports.graded(sub, [(cell, ex)], 2, {name: (cases, expected)}, "t").tests[0]
        assert (test.failure, test.mistake, test.hedge) == (
            "mistake", ex.mistakes[0].sentence, hedge)
        assert classreport.mistake_of(test) == ("mistake", ex.mistakes[0].sentence, bool(hedge))
