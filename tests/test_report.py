"""The class report (rnnbook/grading/classreport.py) from a class's results.json files."""
import csv
import json
import math
import pathlib
import re

import pytest

from rnnbook.grading import classreport

SWAP = "W and U are swapped: concatenate [x, h] (input first), not [h, x]."


def results(tmp_path, student, scores, outputs=None, seconds=None):
    folder = tmp_path / "grades" / student
    folder.mkdir(parents=True)
    tests = []
    for k, score in enumerate(scores):
        tests.append({"name": f"Exercise 1.{k + 1} ex{k + 1}", "score": score, "max_score": 2,
                      "output": (outputs or {}).get(k, "✓ fine"), "visibility": "visible"})
    data = {"score": sum(scores), "tests": tests,
            "extra_data": {"chapter": "01-basic-rnn-cell", "max_score": 2 * len(scores),
                           "seconds": seconds, "peak_mb": 600}}
    (folder / "results.json").write_text(json.dumps(data))


@pytest.fixture
def graded(tmp_path):
    wrong = f"✗ Exercise 1.1 `ex1` does not match TensorFlow on 5 of 5 trials.\n  Likely mistake: {SWAP}"
    results(tmp_path, "alice", [2, 2], seconds=2.5)
    results(tmp_path, "bob", [0, 2], {0: wrong})
    results(tmp_path, "carol", [0, 0], {0: wrong, 1: "✗ Exercise 1.2 `ex2` is not written yet"})
    results(tmp_path, "dan", [0, 2], {0: "✗ Exercise 1.1 `ex1`: this exercise is by hand, but"})
    return tmp_path / "grades"


def test_counts_difficulty_and_examples(graded):
    rows = classreport.exercise_table(classreport.load([graded]))
    first, second = rows
    assert first["exercise"] == "Exercise 1.1 ex1" and first["submissions"] == 4
    assert first["difficulty"] == pytest.approx(0.25)
    assert (first["full"], first["partial"], first["zero"]) == (0.25, 0.0, 0.75)
    assert first["mistakes"][0] == (SWAP, 2, "bob")
    assert ("used TensorFlow, Keras or rnnbook in a by-hand exercise", 1, "dan") in first["mistakes"]
    assert second["mistakes"] == [
        ("not attempted (the stub still raises NotImplementedError)", 1, "carol")]
    # exercise 1.1 against the rest: alice 2 vs 2, bob 0 vs 2, carol 0 vs 0, dan 0 vs 2
    assert first["discrimination"] == pytest.approx(1 / 3)


def test_discrimination_is_undefined_when_nobody_differs():
    assert math.isnan(classreport.point_biserial([1, 1, 1], [0, 1, 2]))


def test_html_is_self_contained_and_csv_has_every_row(graded, tmp_path):
    page, table = classreport.build([graded], tmp_path / "out")
    text = page.read_text()
    assert "data:image/png;base64," in text and SWAP.split(":")[0] in text
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", text)
    assert "<script" not in text
    rows = list(csv.DictReader(table.open()))
    kinds = [r["row"] for r in rows]
    assert kinds.count("exercise") == 2 and kinds.count("submission") == 4
    swap = [r for r in rows if r["row"] == "mistake" and r["mistake"] == SWAP]
    assert swap[0]["count"] == "2" and swap[0]["example"] == "bob"
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
    assert "no submission from 1: dan.ipynb" in run.stderr
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
    assert "you concatenated [h, x]" in page and "s2" in page
    rows = list(csv.DictReader((out / "class-report.csv").open()))
    assert any(r["row"] == "mistake" and r["example"] == "s2" for r in rows)
    assert (out / "timings.csv").read_text().startswith("report,seconds,peak_mb")
