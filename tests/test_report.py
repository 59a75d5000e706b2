"""The class report (rnnbook/grading/classreport.py) from a class's results.json files."""
import csv
import json
import math
import pathlib
import re

import pytest

from rnnbook.grading import classreport

SWAP = "W and U are swapped: concatenate [x, h] (input first), not [h, x]."
TANH = "tanh is applied to the pre-activation: return it before the tanh."
#: a learner's exception message that writes a mistake line into the test's output
PLANTED = "boom\n  Likely mistake: Everyone copied from https://evil.example: see there."


def results(tmp_path, student, scores, verdicts=None, seconds=None, outputs=None):
    """A results.json as the grader writes it; ``verdicts``: test -> its structured verdict
    (results.verdict's fields); ``outputs``: test -> its text."""
    folder = tmp_path / "grades" / student
    folder.mkdir(parents=True)
    tests = []
    for k, score in enumerate(scores):
        verdict = {"failure": "", "mistake": "", "hedge": "", "error": "",
                   **(verdicts or {}).get(k, {})}
        tests.append({"name": f"Exercise 1.{k + 1} ex{k + 1}", "score": score, "max_score": 2,
                      "output": (outputs or {}).get(k, "✓ fine"), "visibility": "visible",
                      "extra_data": {"kind": "by hand", **verdict}})
    data = {"score": sum(scores), "tests": tests,
            "extra_data": {"chapter": "01-basic-rnn-cell", "max_score": 2 * len(scores),
                           "seconds": seconds, "peak_mb": 600}}
    (folder / "results.json").write_text(json.dumps(data))


def named(sentence, hedge=""):
    return {"failure": "mistake", "mistake": sentence, "hedge": hedge}


NOT_WRITTEN = {"failure": "not attempted"}


@pytest.fixture
def graded(tmp_path):
    hedged = named(SWAP, "it explains 1 of the 3 failing trials")
    results(tmp_path, "alice", [2, 2], seconds=2.5)
    results(tmp_path, "bob", [0, 2], {0: named(SWAP)})
    results(tmp_path, "carol", [0, 0], {0: named(SWAP), 1: NOT_WRITTEN})
    results(tmp_path, "dan", [0, 2], {0: {"failure": "by hand"}})
    results(tmp_path, "erin", [0, 0], {0: hedged, 1: {"failure": "error",
                                                      "error": "raised ValueError"}},
            outputs={1: f"✗ raised ValueError: {PLANTED}"})
    results(tmp_path, "fay", [0, 0], {0: {"failure": "limit", "error": "ran past the time limit"},
                                      1: NOT_WRITTEN})
    return tmp_path / "grades"


def test_counts_difficulty_and_examples(graded):
    rows = classreport.exercise_stats(classreport.load([graded]))
    first, second = rows
    assert first["exercise"] == "Exercise 1.1 ex1" and first["submissions"] == 6
    assert first["difficulty"] == pytest.approx(1 / 6)
    assert (first["full"], first["partial"], first["zero"]) == (1 / 6, 0.0, 5 / 6)
    # a hedged diagnosis stays hedged: 2 sure, 1 likely
    assert first["mistakes"] == [(SWAP, 2, 1, "bob")]
    assert first["others"] == [
        ("limit", "ran past the time limit", 1, "fay"),
        ("by hand", "used TensorFlow, Keras or rnnbook in a by-hand exercise", 1, "dan")]
    # not attempted is a share of its own, not a mistake nor a zero
    assert second["mistakes"] == [] and second["not_attempted"] == pytest.approx(2 / 6)
    assert second["zero"] == pytest.approx(1 / 6)
    assert second["others"] == [("error", "raised ValueError", 1, "erin")]
    # exercise 1.1 against the rest: alice 2 vs 2, bob 0 vs 2, carol 0 vs 0, dan 0 vs 2, ...
    assert first["discrimination"] == pytest.approx(
        classreport.point_biserial([2, 0, 0, 0, 0, 0], [2, 2, 0, 2, 0, 0]))


def test_the_chart_counts_named_mistakes_only_and_keeps_the_hedge(graded):
    rows = classreport.exercise_stats(classreport.load([graded]))
    assert classreport.commonest(rows) == [("1.1: W and U are swapped", 2, 1)]


def test_a_learners_message_plants_no_mistake(graded, tmp_path):
    """Issue 26, item 5: text the submission wrote ("\n  Likely mistake: ...") in an
    exercise's output never becomes a named mistake, nor a link, nor a count."""
    page, table = classreport.write_report([graded], tmp_path / "out")
    assert "evil.example" not in page.read_text() and "evil.example" not in table.read_text()
    found = list(csv.DictReader(table.open()))
    assert {r["mistake"] for r in found if r["row"] == "mistake"} == {SWAP}
    # a results.json written before the verdict was recorded: no mistake from its text either
    results(tmp_path / "old", "gus", [0], outputs={0: f"✗ raised ValueError: {PLANTED}"})
    old = json.loads((tmp_path / "old/grades/gus/results.json").read_text())
    for test in old["tests"]:
        del test["extra_data"]
    (tmp_path / "old/grades/gus/results.json").write_text(json.dumps(old))
    (row,) = classreport.exercise_stats(classreport.load([tmp_path / "old/grades"]))
    assert row["mistakes"] == []


def test_the_grader_records_the_verdict_not_the_learners_text():
    """results.graded on a real exercise whose function raised with a planted mistake line:
    the structured verdict says "raised ValueError", and no mistake."""
    from rnnbook import checks
    from rnnbook.grading import results as reports
    from rnnbook.plaindata import Raised

    stem = "01-basic-rnn-cell"
    chapter = checks.load(stem)
    cell = next(c for c in reports_cells(stem) if c.by_hand)
    ex = chapter[cell.name]
    cases = chapter.cases(ex.name, 1)
    oracle = {ex.name: (cases, [ex.reference(c) for c in cases])}
    sub = reports.Submission(path=pathlib.Path("erin.ipynb"), name="erin", chapter=stem)
    sub.answers[ex.name] = [Raised("ValueError", PLANTED, "line 2")] * len(cases)
    report = reports.graded(sub, [(cell, ex)], 1, oracle, "none")
    (test,) = report.tests
    assert PLANTED.split("\n")[1] in test.output  # the learner's text, as it was written
    assert (test.failure, test.mistake, test.error) == (
        "error", "", "raised ValueError")
    assert classreport.mistake_of(test) == ("error", "raised ValueError", False)


def test_a_report_reads_back_as_the_grader_wrote_it(tmp_path):
    """results.json -> Report.from_json -> results.json gives the same bytes, graded (every
    exercise of Chapter 1: right, wrong, missing) and not graded (chapter known or not)."""
    from rnnbook import checks
    from rnnbook.grading import results as reports

    stem = "01-basic-rnn-cell"
    chapter, table, oracle = checks.load(stem), [], {}
    for cell in reports_cells(stem):
        ex = chapter[cell.name]
        cases = chapter.cases(ex.name, 3)
        oracle[ex.name] = (cases, [ex.reference(c) for c in cases])
        table.append((cell, ex))
    sub = reports.Submission(path=pathlib.Path("ann.ipynb"), name="ann", chapter=stem)
    first, second = table[0][1].name, table[1][1].name
    sub.answers = {first: oracle[first][1], second: [1.5] * len(oracle[second][0])}
    broken = reports.Submission(path=pathlib.Path("/x/bo.ipynb"), name="bo", error="/x/bo: no")
    made = [reports.graded(sub, table, 3, oracle, "none"), reports.not_graded(broken, 3),
            reports.not_graded(broken, 3, [cell for cell, _ in table])]
    assert made[0].tests[0].score == table[0][0].points and made[0].tests[1].score == 0
    for report in made:
        path = tmp_path / "results.json"
        path.write_text(report.json_text())
        again = reports.Report.from_json(path)
        assert again == report and again.json_text() == path.read_text()
        assert again.feedback() == report.feedback()


@pytest.mark.parametrize("text,says", [
    ("{broken", "not a readable results.json"),
    ("[1, 2]", "not a results.json"),
    ('{"tests": 3}', "not a results.json"),
    ('{"score": "lots", "tests": []}', "'lots' is not a number"),
    ('{"tests": [7]}', "a test is not an object"),
    ('{"tests": [{"name": "x", "score": [1]}]}', "[1] is not a number"),
])
def test_a_malformed_results_json_is_one_line_naming_the_file(tmp_path, capsys, text, says):
    from rnnbook.grading import results as reports

    path = tmp_path / "x" / "results.json"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(reports.ReportFormatError) as error:
        reports.Report.from_json(path)
    assert str(error.value).startswith(f"{path}: ") and says in str(error.value)
    assert len(str(error.value).splitlines()) == 1
    assert classreport.main([str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("report: error:") and len(err.strip().splitlines()) == 1


def reports_cells(stem):
    from rnnbook import source
    from rnnbook.grading.config import SOLUTIONS

    return source.exercises(source.read(SOLUTIONS / f"{stem}.ipynb"))


def test_the_headline_counts_only_what_was_graded(tmp_path):
    """"mean 8.42 of 13 over 17 graded; 1 could not be graded: name", not a mean that
    counts an unreadable notebook as 0 with no maximum."""
    results(tmp_path, "ann", [2, 2])
    results(tmp_path, "ben", [2, 0], {1: named(TANH)})
    folder = tmp_path / "grades" / "cat"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({
        "score": 0, "tests": [], "output": "Not graded: cat.ipynb is not a valid notebook",
        "extra_data": {"chapter": "01-basic-rnn-cell", "max_score": 4,
                       "error": "cat.ipynb is not a valid notebook"}}))
    subs = classreport.load([tmp_path / "grades"])
    assert classreport.headline(subs) == [
        "mean 3.00 of 4 over 2 graded; 1 could not be graded: cat"]
    page, table = classreport.write_report([tmp_path / "grades"], tmp_path / "out")
    assert "mean 3.00 of 4 over 2 graded; 1 could not be graded: cat" in page.read_text()
    cat = next(r for r in csv.DictReader(table.open()) if r["student"] == "cat")
    assert (cat["chapter"], float(cat["max_score"]), cat["score"]) == ("01-basic-rnn-cell", 4, "")


def test_discrimination_is_undefined_when_nobody_differs():
    assert math.isnan(classreport.point_biserial([1, 1, 1], [0, 1, 2]))


def test_html_is_self_contained_and_csv_has_every_row(graded, tmp_path):
    page, table = classreport.write_report([graded], tmp_path / "out")
    text = page.read_text()
    assert "data:image/png;base64," in text and SWAP.split(":")[0] in text
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", text)
    assert "<script" not in text
    rows = list(csv.DictReader(table.open()))
    kinds = [r["row"] for r in rows]
    assert kinds.count("exercise") == 2 and kinds.count("submission") == 6
    swap = [r for r in rows if r["row"] == "mistake" and r["mistake"] == SWAP]
    assert (swap[0]["count"], swap[0]["likely"], swap[0]["example"]) == ("2", "1", "bob")
    limit = [r for r in rows if r["row"] == "failure" and r["failure"] == "limit"]
    assert limit[0]["mistake"] == "ran past the time limit" and limit[0]["count"] == "1"
    alice = [r for r in rows if r["student"] == "alice"][0]
    assert alice["seconds"] == "2.5" and alice["peak_mb"] == "600"


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert classreport.main([str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("report: error:") and len(err.strip().splitlines()) == 1
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "results.json").write_text("{broken")
    assert classreport.main([str(tmp_path / "x")]) == 2


@pytest.mark.slow
def test_a_grading_run_writes_the_class_report_and_uses_the_roster(tmp_path):
    """Grade three notebooks (right, one wrong line, a stub) with a roster that misses one of
    them and lists a student who handed nothing in."""
    import subprocess
    import sys

    import nbformat

    from rnnbook import generate, source

    root = pathlib.Path(__file__).resolve().parent.parent
    solution = source.read(root / "solutions" / "01-basic-rnn-cell.ipynb")
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(solution, str(subs / "ann.ipynb"))
    wrong = source.read(root / "solutions" / "01-basic-rnn-cell.ipynb")
    cell = next(c for c in wrong.cells if c.source.startswith("# Exercise")
                and "def rnn_step(" in c.source)
    cell.source = cell.source.replace("[x, h]", "[h, x]")
    assert "[h, x]" in cell.source
    nbformat.write(wrong, str(subs / "ben.ipynb"))
    nbformat.write(generate.learner_copy(solution), str(subs / "cat.ipynb"))
    roster = tmp_path / "roster.csv"
    roster.write_text("file,id,name,email\nann.ipynb,s1,Ann,ann@example.org\n"
                      "ben,s2,Ben,ben@example.org\ndan.ipynb,s4,Dan,dan@example.org\n")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "rnnbook.grading", str(subs), "--out", str(out),
                          "--roster", str(roster), "--seed", "1", "--visibility",
                          "after_due_date"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"not on the roster: {subs / 'cat.ipynb'}\n" in run.stderr
    assert "no submission from 1: Dan (dan.ipynb)" in run.stderr
    full = f"{sum(ex.points for ex in source.exercises(solution)):g}"  # the headers' total
    assert f"\nAnn (ann.ipynb): {full} / {full}\n" in run.stderr  # by the roster's names
    assert f"\ncat.ipynb: {json.loads((out / 'cat' / 'results.json').read_text())['score']:g}" \
        in run.stderr
    book = list(csv.DictReader((out / "gradebook.csv").open()))
    by_file = {row["submission"]: row for row in book}
    assert by_file["ann.ipynb"]["id"] == "s1" and by_file["ben.ipynb"]["name"] == "Ben"
    assert by_file["cat.ipynb"]["roster"] == "not on the roster"
    assert by_file["dan.ipynb"]["roster"] == "no submission" and by_file["dan.ipynb"]["id"] == "s4"
    ben = json.loads((out / "ben" / "results.json").read_text())
    step = next(t for t in ben["tests"] if t["name"].endswith(" rnn_step"))
    assert step["score"] == 0 and step["visibility"] == "after_due_date"
    assert step["extra_data"]["mistake"].startswith("you concatenated [h, x]")
    page = (out / "class-report.html").read_text()
    assert "you concatenated [h, x]" in page and "e.g. s2 (Ben)" in page
    assert "<td>s1</td><td>Ann</td>" in page and "Missing (1)" in page
    rows = list(csv.DictReader((out / "class-report.csv").open()))
    assert any(r["row"] == "mistake" and r["example"] == "s2" for r in rows)
    assert [(r["student"], r["name"]) for r in rows if r["row"] == "missing"] == [("s4", "Dan")]
    stubs = [r for r in rows if r["row"] == "exercise"]
    assert all(float(r["not_attempted"]) > 0 for r in stubs)  # cat handed in the stubs
    assert (out / "timings.csv").read_text().startswith("report,seconds,peak_mb")


@pytest.mark.slow
def test_a_planted_mistake_line_reaches_no_report_of_a_grading_run(tmp_path):
    """The hostile corpus's ``plants_mistake`` (issue 26, item 5), graded beside an honest
    notebook: its feedback shows the error as the learner wrote it, its verdict is an error,
    and the class report names no mistake and holds no link of the learner's."""
    import subprocess
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from hostile import corpus

    subs, out = tmp_path / "subs", tmp_path / "out"
    corpus.build(subs, out, walls=False, only=["plants_mistake", "honest"])
    run = subprocess.run([sys.executable, "-m", "rnnbook.grading", str(subs), "--out", str(out),
                          "--seed", "3", "--workers", "1"], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((out / "plants_mistake" / "results.json").read_text())
    planted = [t for t in report["tests"] if corpus.PLANTED_MISTAKE in t["output"]]
    assert len(planted) == 2  # the learner's message is in the feedback, as written
    for test in planted:
        assert test["score"] == 0 and test["extra_data"]["failure"] == "error"
        assert test["extra_data"]["mistake"] == ""
    page = (out / "class-report.html").read_text()
    table = (out / "class-report.csv").read_text()
    assert "evil.example" not in page and "evil.example" not in table
    rows = list(csv.DictReader(table.splitlines()))
    assert not [r for r in rows if r["row"] == "mistake"]
    errors = [r for r in rows if r["row"] == "failure" and r["failure"] == "error"]
    assert len(errors) == 2 and {r["mistake"] for r in errors} == {"raised ValueError"}


def test_a_class_name_a_submission_chooses_is_no_label():
    """An exception class named like a sentence for the instructor: the verdict and the class
    report say "raised an exception of its own class"; Python's own names are kept; a label
    edited into a results.json by hand is not repeated either."""
    from rnnbook.grading import results as reports
    from rnnbook.plaindata import Raised

    forged = Raised("FORGED: the grader is wrong, give full marks", "x")
    assert reports.verdict(_outcome(), [forged])["error"] == reports.OWN_ERROR
    assert reports.verdict(_outcome(), [Raised("KeyError", "x")])["error"] == "raised KeyError"
    test = reports.TestResult("Exercise 1.1 f", 0, 2, failure="error",
                              error="raised FORGED: the grader is wrong")
    assert classreport.mistake_of(test) == ("error", classreport.LABELS["error"], False)
    test.error = "ran past the time limit"
    assert classreport.mistake_of(test)[1] == "ran past the time limit"


def _outcome():
    from rnnbook.compare import Outcome

    return Outcome(exercise=None, passed=False, message="")
