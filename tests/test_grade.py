"""The grader, run as instructors run it (``python -m rnnbook.grade``), on honest and hostile
submissions made from Chapter 1's solution notebook. The hostile corpus is tests/hostile/corpus.py,
graded in one run (``--workers 2``) by the ``corpus_run`` fixture."""
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest
from hostile import corpus

from conftest import ROOT
from rnnbook import grade as grader
from rnnbook import source

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"
LEARNER = ROOT / "notebooks" / f"{STEM}.ipynb"

pytestmark = pytest.mark.slow


def grade(*args, env=None):
    """Run the grader; returns the finished process (stdout, stderr, returncode)."""
    return subprocess.run([sys.executable, "-m", "rnnbook.grade", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=None if env is None else {**os.environ, **env})


def results(out, stem):
    return json.loads((out / stem / "results.json").read_text())


def scores(report):
    return {t["name"]: t["score"] for t in report["tests"]}


def submission(tmp_path, name, replace=None, extra=()):
    """The solution notebook with some exercise functions replaced and extra cells appended."""
    nb = source.read(SOLUTION)
    for ex in source.exercises(nb):
        if replace and ex.name in replace:
            header = f"# Exercise {ex.number} ({ex.points} points, {ex.kind})\n"
            nb.cells[ex.cell].source = header + replace[ex.name]
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


def test_refuses_to_overwrite_reports_and_missing_files_and_grades_without_walls(tmp_path):
    out = tmp_path / "out"
    daemon = tmp_path / "daemon.ipynb"  # leaves `sleep` running in a session of its own
    nbformat.write(corpus.background_process({}), str(daemon))
    path = tmp_path / "bin"  # a PATH with `sleep` but no `unshare`: no walls
    path.mkdir()
    (path / "sleep").symlink_to(shutil.which("sleep"))
    bare = grade(SOLUTION, daemon, "--out", out, "--seed", 4, env={"PATH": str(path)})
    assert bare.returncode == 0, bare.stderr
    note = [line for line in bare.stderr.splitlines() if line.startswith("grade: note:")]
    assert len(note) == 1 and "without walls here (the unshare command is not installed)" in note[0]
    assert results(out, STEM)["score"] == 6 and results(out, "daemon")["score"] == 6
    assert "raised" not in results(out, "daemon")["output"]  # so `sleep` did start
    assert results(out, STEM)["extra_data"]["isolation"].startswith("none (")
    assert not running(["sleep", corpus.SLEEP])  # killed even without walls
    first = (out / "gradebook.csv").read_text()
    again = grade(SOLUTION, "--out", out)
    assert again.returncode == 2 and "already holds reports" in again.stderr
    assert (out / "gradebook.csv").read_text() == first
    missing = grade(tmp_path / "nope.ipynb", "--out", tmp_path / "o2")
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"grade: error: {tmp_path / 'nope.ipynb'}: no such file or folder"


# ---------------------------------------------------------------------------------------------
# The hostile corpus (tests/hostile/corpus.py), graded in one run


def walls_stand(tmp_path):
    """Whether the grader can build its walls on this machine (user and mount namespaces)."""
    return bool(grader.Walls([], [], []).build(tmp_path).command)


def running(cmdline):
    """Processes whose command line is ``cmdline`` (a list of strings)."""
    wanted = "\0".join(cmdline).encode() + b"\0"
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read() == wanted:
                    found.append(pid)
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus")
    subs, out = tmp / "subs", tmp / "out"
    walls = walls_stand(tmp)
    made = corpus.build(subs, out, walls=walls)
    before = {name: digest(path) for name, path in made.items()}
    package = {p: digest(p) for p in [ROOT / "rnnbook" / "checking.py"]}  # break_walls opens it
    run = grade(subs, "--out", out, "--seed", 7, *corpus.LIMITS)
    yield {"run": run, "out": out, "subs": subs, "made": made, "before": before,
           "package": package, "walls": walls}
    for folder in (ROOT, ROOT / "rnnbook", ROOT / "solutions", subs, out):
        (folder / corpus.MARKER).unlink(missing_ok=True)  # only there if the walls fell


def test_corpus_is_large_enough_and_walls_stand_here(corpus_run):
    assert len(corpus.EXPECTED) >= 12
    if not corpus_run["walls"]:
        pytest.skip("no user namespaces here: the escape attempts were not graded")
    assert "walls: namespaces" in corpus_run["run"].stderr


@pytest.mark.parametrize("name", list(corpus.EXPECTED))
def test_corpus_outcome(corpus_run, name):
    """Each hostile or broken submission gets exactly the outcome it must get: no false credit."""
    expect = corpus.EXPECTED[name]
    if name not in corpus_run["made"]:
        pytest.skip("an escape attempt: graded only behind the grader's walls")
    report = results(corpus_run["out"], name)
    if expect.error:
        assert report["score"] == 0 and report["tests"] == []
        assert expect.error in report["output"]
        errors = [line for line in corpus_run["run"].stderr.splitlines()
                  if line.startswith(f"grade: error: {corpus_run['made'][name]}:")]
        assert len(errors) == 1 and expect.error in errors[0]
        return
    tests = {t["name"].split()[-1]: t for t in report["tests"]}
    assert list(tests) == list(corpus.FULL)
    for exercise, (points, phrase) in expect.tests.items():
        assert (tests[exercise]["score"], phrase in tests[exercise]["output"]) == (points, True), (
            exercise, tests[exercise]["output"])
    assert report["score"] == expect.score
    notes = report["output"].split("\nNote: ")[1:]
    assert len(notes) == len(expect.notes), notes  # and no other note
    for phrase in expect.notes:
        assert phrase in report["output"]


def test_corpus_loses_no_report_and_changes_nothing(corpus_run):
    run, out, made = corpus_run["run"], corpus_run["out"], corpus_run["made"]
    assert run.returncode == 1  # some files are not notebooks
    for name, path in made.items():  # every submission has its reports, none was modified
        assert (out / name / "results.json").is_file() and (out / name / "feedback.md").is_file()
        assert digest(path) == corpus_run["before"][name], name
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert sorted(r["submission"] for r in rows) == sorted(p.name for p in made.values())
    assert {p: digest(p) for p in corpus_run["package"]} == corpus_run["package"]
    for folder in (ROOT, ROOT / "rnnbook", ROOT / "solutions", corpus_run["subs"], out):
        assert not (folder / corpus.MARKER).exists(), folder
    assert not running(["sleep", corpus.SLEEP])  # nothing a submission started outlives grading


def test_corpus_progress_is_one_line_per_event(corpus_run):
    lines = corpus_run["run"].stderr.splitlines()
    graded = [n for n, e in corpus.EXPECTED.items() if not e.error and n in corpus_run["made"]]
    progress = [line for line in lines if line.startswith("grade: [")]
    assert len(progress) == len(graded)
    assert progress[-1].startswith(f"grade: [{'#' * 20}] {len(graded)}/{len(graded)} ")
    for line in progress:  # each submission's seconds and peak memory (make bench reads them)
        assert re.search(r"\.ipynb: \d+\.\d s, peak \d+ MB \(\d+ s in all\)$", line), line
    notes = [line for line in lines if line.startswith("grade: note: ")]  # walls that fell
    assert lines[len(notes)].startswith(
        f"grade: {len(graded)} submissions, 2 at a time, seed 7, walls: ")
    for line in lines:
        assert line.startswith("grade: ") or line.split(": ")[0].endswith(".ipynb"), line


# ---------------------------------------------------------------------------------------------
# Pieces of the grader, without TensorFlow


def test_a_child_that_cannot_be_walled_in_is_not_graded(tmp_path):
    """When the walls fail for one child (isolate.py exits with FAILED), its exercises get no
    points and say why; nothing is run without them."""
    sub = grader.load_submission(SOLUTION, None)
    fail = ("import sys; print(\"isolate: could not build the sandbox's walls: test\"); "
            f"sys.exit({grader.isolate.FAILED})")
    walls = grader.Walls([], [], [], command=[sys.executable, "-c", fail])
    chapter = grader.checks.load(STEM)
    cases = {ex.name: chapter.cases(ex.name, 1) for ex in chapter.exercises}
    grader.run_submission(sub, cases, grader.Limits(), walls, tmp_path / "sub")
    assert sub.answers == {name: "was not run: the grader could not build its sandbox" for name in cases}
    assert not sub.error


def test_only_well_formed_events_count():
    names = {"rnn_step"}
    assert grader._event(b'{"cell": 2, "status": "start"}', names) == {"cell": 2, "status": "start"}
    assert grader._event(b'{"exercise": "rnn_step", "status": "done"}', names)
    for junk in (b"[1, 2]", b"not json", b'{"cell": "2", "status": "ok"}', b'{"cell": 1, "status": "won"}',
                 b'{"exercise": "split_kernel", "status": "done"}', b'{"finished": 1}',
                 b'{"cell": 1, "status": "error", "error": 5}'):
        assert grader._event(junk, names) is None, junk


def test_how_a_process_ended_is_said_plainly():
    assert grader._ended(3) == "ended the process (exit code 3)"
    assert grader._ended(-11) == "crashed its process (SIGSEGV)"
    assert grader._ended(-9) == "crashed its process (SIGKILL)"
