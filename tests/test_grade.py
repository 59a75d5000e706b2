"""The grader, run as instructors run it (``python -m rnnbook.grade``), on honest and hostile
submissions made from Chapter 1's solution notebook."""
import csv
import hashlib
import json
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT
from rnnbook import source

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"
LEARNER = ROOT / "notebooks" / f"{STEM}.ipynb"

pytestmark = pytest.mark.slow


def grade(*args):
    """Run the grader; returns the finished process (stdout, stderr, returncode)."""
    return subprocess.run([sys.executable, "-m", "rnnbook.grade", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def results(out, stem):
    return json.loads((out / stem / "results.json").read_text())


def scores(report):
    return {t["name"]: t["score"] for t in report["tests"]}


def submission(tmp_path, name, replace=None, extra=()):
    """The solution notebook with some exercise functions replaced and extra cells appended."""
    nb = source.read(SOLUTION)
    for ex in source.exercises(nb):
        if replace and ex.name in replace:
            nb.cells[ex.cell].source = f"# Exercise {ex.number} ({ex.points} points)\n" + replace[ex.name]
    for code in extra:
        nb.cells.append(nbformat.v4.new_code_cell(code))
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, str(path))
    return path


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_solution_full_marks_stub_zero_and_gradescope_format(tmp_path):
    out = tmp_path / "out"
    stub = tmp_path / "stub.ipynb"
    stub.write_bytes(LEARNER.read_bytes())
    before = digest(SOLUTION), digest(stub)
    run = grade(SOLUTION, stub, "--out", out, "--seed", 11)
    assert run.returncode == 0, run.stderr
    assert (digest(SOLUTION), digest(stub)) == before  # submissions are only read

    solved, empty = results(out, STEM), results(out, "stub")
    assert solved["score"] == 6 and empty["score"] == 0
    assert [t["name"] for t in solved["tests"]] == [
        "Exercise 1.1 split_kernel", "Exercise 1.2 rnn_step",
        "Exercise 1.3 rnn_unroll", "Exercise 1.4 tf1_from_keras"]
    for test in solved["tests"] + empty["tests"]:
        assert set(test) == {"name", "score", "max_score", "output", "visibility"}
    assert solved["extra_data"]["seed"] == 11 and "seed 11" in solved["output"]
    assert all("not written yet" in t["output"] for t in empty["tests"])
    assert "## Exercise 1.2 rnn_step: 0 / 2" in (out / "stub" / "feedback.md").read_text()

    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert [r["submission"] for r in rows] == [SOLUTION.name, "stub.ipynb"]
    assert list(rows[0])[3:7] == ["1.1 split_kernel", "1.2 rnn_step", "1.3 rnn_unroll",
                                  "1.4 tf1_from_keras"]
    assert rows[0]["total"] == "6.0" and rows[1]["total"] == "0.0"


def test_same_seed_same_report(tmp_path):
    wrong = submission(tmp_path, "wrong", {"rnn_step": (
        "def rnn_step(x, h, kernel, bias):\n"
        "    return np.tanh(np.concatenate([h, x], 1) @ kernel + bias)\n")})
    first, second = tmp_path / "a", tmp_path / "b"
    assert grade(wrong, "--out", first, "--seed", 5).returncode == 0
    assert grade(wrong, "--out", second, "--seed", 5).returncode == 0
    a = (first / "wrong" / "results.json").read_text()
    assert a == (second / "wrong" / "results.json").read_text()
    report = json.loads(a)
    step = next(t for t in report["tests"] if t["name"].endswith("rnn_step"))
    assert step["score"] == 0 and "concatenate [x, h]" in step["output"]
    assert scores(report)["Exercise 1.3 rnn_unroll"] == 0  # unroll calls the wrong step
    assert scores(report)["Exercise 1.1 split_kernel"] == 1


def test_each_exercise_misbehaving_costs_only_its_points(tmp_path):
    hostile = submission(tmp_path, "hostile", {
        "split_kernel": "def split_kernel(kernel, input_depth):\n    import os\n    os._exit(3)\n",
        "rnn_step": "def rnn_step(x, h, kernel, bias):\n    while True:\n        pass\n",
        "rnn_unroll": ("def rnn_unroll(inputs, h0, kernel, bias):\n    hog = []\n"
                       "    while True:\n        hog.append(np.ones(2**24))\n"),
    }, extra=["import sys\nsys.exit(1)", "print('x' * 10**6)\n" * 3])
    out = tmp_path / "out"
    before = digest(hostile)
    run = grade(hostile, "--out", out, "--seed", 1, "--timeout", 3, "--memory", 1500)
    assert run.returncode == 0, run.stderr
    assert digest(hostile) == before
    report = results(out, "hostile")
    by_name = {t["name"]: t for t in report["tests"]}
    assert by_name["Exercise 1.4 tf1_from_keras"]["score"] == 1  # the honest one still counts
    assert "exit code 3" in by_name["Exercise 1.1 split_kernel"]["output"]
    assert "time limit of 3 s" in by_name["Exercise 1.2 rnn_step"]["output"]
    assert "memory limit of 1500 MB" in by_name["Exercise 1.3 rnn_unroll"]["output"]
    assert report["score"] == 1


def test_patching_the_checks_or_numpy_gives_no_credit(tmp_path):
    cheat = tmp_path / "cheat.ipynb"
    nb = source.read(LEARNER)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import numpy, rnnbook.checking, builtins\n"
        "rnnbook.checking.evaluate = lambda *a, **k: rnnbook.checking.Outcome(None, True, 'ok')\n"
        "rnnbook.checking.difference = lambda *a, **k: None\n"
        "numpy.allclose = numpy.isclose = lambda *a, **k: True\n"
        "builtins.print = lambda *a, **k: None\n"))
    nbformat.write(nb, str(cheat))
    out = tmp_path / "out"
    assert grade(cheat, "--out", out, "--seed", 2).returncode == 0
    assert results(out, "cheat")["score"] == 0


def test_bad_files_get_one_line_errors_and_the_rest_are_graded(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    text = tmp_path / "essay.ipynb"
    text.write_text("I did not do the homework.")
    out = tmp_path / "out"
    run = grade(broken, text, SOLUTION, "--out", out, "--seed", 3)
    assert run.returncode == 1
    errors = [line for line in run.stderr.splitlines() if line.startswith("grade: error:")]
    assert len(errors) == 2 and "broken.ipynb: not a valid notebook" in errors[0]
    assert results(out, STEM)["score"] == 6
    assert results(out, "broken")["score"] == 0 and "not a valid notebook" in results(out, "broken")["output"]
    assert broken.read_text() == "{not json"


def test_refuses_to_overwrite_reports_and_missing_files(tmp_path):
    out = tmp_path / "out"
    assert grade(SOLUTION, "--out", out, "--seed", 4).returncode == 0
    first = (out / "gradebook.csv").read_text()
    again = grade(SOLUTION, "--out", out)
    assert again.returncode == 2 and "already holds reports" in again.stderr
    assert (out / "gradebook.csv").read_text() == first
    missing = grade(tmp_path / "nope.ipynb", "--out", tmp_path / "o2")
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"grade: error: {tmp_path / 'nope.ipynb'}: no such file or folder"
