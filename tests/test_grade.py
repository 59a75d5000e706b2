"""The grader, run as instructors run it (``python -m rnnbook.grading``), on honest and hostile
submissions made from Chapter 1's solution notebook. The hostile corpus is tests/hostile/corpus.py,
graded in one run (``--workers 2``) by the ``corpus_run`` fixture. Exercise names, points and kinds
come from the solution notebook, never from this file."""
import csv
import hashlib
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile

import nbformat
import numpy as np
import pytest
from hostile import corpus

from conftest import ROOT, need_walls, walls_stand
from rnnbook import source
from rnnbook.grading import attempt, cli, config, procs, run, walls, wire
from rnnbook.grading import results as reports

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"
LEARNER = ROOT / "notebooks" / f"{STEM}.ipynb"
EXERCISES = source.exercises(source.read(SOLUTION))
TOTAL = sum(ex.points for ex in EXERCISES)

slow = pytest.mark.slow


#: seconds a grading run may take before the submissions are graded (TensorFlow's import in
#: the grader and its zygote: 280 s were seen at load 20); each submission then takes at most
#: its --budget (the grader's own words, held by its clock)
START_UP = 600


def grade(*args, env=None, timeout=START_UP + 300):
    """Run the grader; returns the finished process (stdout, stderr, returncode)."""
    return subprocess.run([sys.executable, "-m", "rnnbook.grading", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=None if env is None else {**os.environ, **env})


def results(out, name):
    return json.loads((out / name / "results.json").read_text())


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


@slow
def test_solution_full_marks_stub_zero_and_gradescope_format(tmp_path):
    out = tmp_path / "out"
    stub = tmp_path / "stub.ipynb"
    stub.write_bytes(LEARNER.read_bytes())
    before = digest(SOLUTION), digest(stub)
    ran = grade(SOLUTION, stub, "--out", out, "--seed", 11, *([] if walls_stand() else
                                                              ["--no-walls"]))
    assert ran.returncode == 0, ran.stderr
    assert (digest(SOLUTION), digest(stub)) == before  # submissions are only read

    solved, empty = results(out, STEM), results(out, "stub")
    assert solved["score"] == TOTAL and empty["score"] == 0
    assert [t["name"] for t in solved["tests"]] == [f"Exercise {e.number} {e.name}"
                                                    for e in EXERCISES]
    for test in solved["tests"] + empty["tests"]:
        assert set(test) == {"name", "score", "max_score", "output", "visibility", "extra_data"}
    assert solved["extra_data"]["seed"] == 11 and "seed 11" in solved["output"]
    assert all("not written yet" in t["output"] for t in empty["tests"])
    first = EXERCISES[0]
    assert (f"## Exercise {first.number} {first.name}: 0 / {first.points}"
            in (out / "stub" / "feedback.md").read_text())

    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert [r["submission"] for r in rows] == [SOLUTION.name, "stub.ipynb"]
    assert [r["report"] for r in rows] == [STEM, "stub"]
    assert list(rows[0])[5:5 + len(EXERCISES)] == [f"{e.number} {e.name}" for e in EXERCISES]
    assert float(rows[0]["total"]) == TOTAL and float(rows[1]["total"]) == 0


@slow
def test_same_seed_same_report(tmp_path):
    """A wrong answer (every float input shifted) gets the same report from the same seed."""
    nb = source.read(SOLUTION)
    shift = ("    args = [a + 0.5 if getattr(a, 'dtype', None) is not None and a.dtype.kind == 'f'"
             " else a for a in args]\n")
    for ex in EXERCISES:
        corpus._wrap(nb, ex, shift)
    wrong = tmp_path / "wrong.ipynb"
    nbformat.write(nb, str(wrong))
    first, second = tmp_path / "a", tmp_path / "b"
    walls = [] if walls_stand() else ["--no-walls"]
    assert grade(wrong, "--out", first, "--seed", 5, *walls).returncode == 0
    assert grade(wrong, "--out", second, "--seed", 5, *walls).returncode == 0
    a = (first / "wrong" / "results.json").read_text()
    assert a == (second / "wrong" / "results.json").read_text()
    assert json.loads(a)["score"] < TOTAL


@slow
def test_bad_files_get_one_line_errors_and_the_rest_are_graded(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    text = tmp_path / "essay.ipynb"
    text.write_text("I did not do the homework.")
    out = tmp_path / "out"
    ran = grade(broken, text, SOLUTION, "--out", out, "--seed", 3, "--no-walls")
    assert ran.returncode == 1
    errors = [line for line in ran.stderr.splitlines() if line.startswith("grade: error:")]
    assert len(errors) == 2 and "broken.ipynb: not a valid notebook" in errors[0]
    scores = ran.stderr.splitlines()[-3:]  # every submission in the score list (issue 37)
    assert scores == ["broken.ipynb: not graded (see its report)",
                      "essay.ipynb: not graded (see its report)",
                      f"{SOLUTION.name}: {TOTAL} / {TOTAL}"], ran.stderr
    assert results(out, STEM)["score"] == TOTAL
    assert results(out, "broken")["score"] == 0
    assert "not a valid notebook" in results(out, "broken")["output"]
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert rows["broken.ipynb"]["error"].startswith("not graded: ")
    assert broken.read_text() == "{not json"


@slow
def test_without_walls_nothing_outlives_its_submission(tmp_path):
    """--no-walls: a daemon and a detached chain of processes are gone when grading ends, and
    the reports and gradebook are as the grader wrote them."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    ctx = {"subs": subs, "out": out}
    for name in ("background_process", "detached_chain", "honest"):
        nbformat.write(getattr(corpus, name)(ctx), str(subs / f"{name}.ipynb"))
    ran = grade(subs, "--out", out, "--seed", 4, "--no-walls")
    assert ran.returncode == 0, ran.stderr
    assert "walls: none (--no-walls" in ran.stderr
    book = (out / "gradebook.csv").read_text()
    for name in ("background_process", "detached_chain", "honest"):
        assert results(out, name)["score"] == TOTAL
        assert "raised" not in results(out, name)["output"]  # so the processes did start
    assert not running(["sleep", corpus.SLEEP]) and not running(["sleep", corpus.CHAIN])
    import time

    time.sleep(1.5)  # the chain would have rewritten the reports after a second
    assert (out / "gradebook.csv").read_text() == book
    assert all(json.loads(p.read_text()) for p in out.glob("*/results.json"))

    again = grade(SOLUTION, "--out", out, "--no-walls")
    assert again.returncode == 2 and "already holds reports" in again.stderr
    assert (out / "gradebook.csv").read_text() == book
    missing = grade(tmp_path / "nope.ipynb", "--out", tmp_path / "o2")
    assert missing.returncode == 2
    assert missing.stderr.strip() == (f"grade: error: {tmp_path / 'nope.ipynb'}: no such file "
                                      "or folder")


@slow
def test_a_submission_directly_in_tmp_keeps_a_writable_tmp(tmp_path):
    need_walls("no user namespaces here")
    nb = corpus._append(corpus._notebook(), "open('/tmp/scratch.txt', 'w').write('ok')\n")
    fd, name = tempfile.mkstemp(suffix=".ipynb", dir="/tmp")
    os.close(fd)
    path = pathlib.Path(name)
    try:
        nbformat.write(nb, name)
        ran = grade(path, "--out", tmp_path / "out", "--seed", 1)
        assert ran.returncode == 0, ran.stderr
        report = results(tmp_path / "out", path.stem)
        assert report["score"] == TOTAL and "Note:" not in report["output"], report["output"]
        assert "walls: namespaces" in ran.stderr
    finally:
        path.unlink()


# ---------------------------------------------------------------------------------------------
# The hostile corpus (tests/hostile/corpus.py), graded in one run


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    # Outside /tmp (the children's own scratch /tmp covers everything in it): the hidden
    # folders subs/, subs/late/ and subs/out/ nest, which once made the walls fail open.
    base = pathlib.Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else None
    tmp = (pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-corpus-", dir=base)) if base
           else tmp_path_factory.mktemp("corpus"))
    subs = tmp / "subs"
    out = subs / "out"  # --out inside the submissions' folder, and subs/late/ inside it too
    stand = walls_stand()
    made = corpus.build(subs, out, walls=stand)
    before = {name: digest(path) for name, path in made.items() if path.is_file()}
    package = {p: digest(p) for p in [ROOT / "rnnbook" / name for name in corpus.PACKAGE_FILES]}
    rounds = -(-len(made) // corpus.WORKERS)  # the submissions, WORKERS at a time
    ran = grade(subs, subs / "late", "--out", out, "--seed", 7, *corpus.LIMITS,
                *([] if stand else ["--no-walls"]), env={"CORPUS_TOKEN": corpus.SECRET},
                timeout=START_UP + rounds * corpus.BUDGET)
    yield {"run": ran, "out": out, "subs": subs, "made": made, "before": before,
           "package": package, "walls": stand}
    for folder in (ROOT, ROOT / "rnnbook", ROOT / "solutions", subs, out):
        (folder / corpus.MARKER).unlink(missing_ok=True)  # only there if the walls fell
    if base:
        shutil.rmtree(tmp, ignore_errors=True)


@slow
def test_corpus_is_large_enough_and_walls_stand_here(corpus_run):
    assert len(corpus.EXPECTED) >= 40
    if os.environ.get("RNNBOOK_CORPUS_ONLY"):
        pytest.skip("a part of the corpus only")
    need_walls("no user namespaces here: the escape attempts were not graded",
               stand=corpus_run["walls"])
    assert "walls: namespaces" in corpus_run["run"].stderr  # nested hidden folders included


@slow
@pytest.mark.parametrize("name", list(corpus.EXPECTED))
def test_corpus_outcome(corpus_run, name):
    """Each hostile or broken submission gets exactly the outcome it must get: no false credit."""
    expect = corpus.EXPECTED[name]
    if name not in corpus_run["made"]:
        if os.environ.get("RNNBOOK_CORPUS_ONLY"):
            pytest.skip("a part of the corpus only")
        need_walls("an escape attempt: graded only behind the grader's walls",
                   stand=corpus_run["walls"])
    report = results(corpus_run["out"], corpus.report_name(name))
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
        got = (tests[exercise]["score"], phrase in tests[exercise]["output"])
        assert got == (points, True), (exercise, tests[exercise]["output"])
    assert report["score"] == expect.score
    notes = report["output"].split("\nNote: ")[1:]
    assert len(notes) == len(expect.notes), notes  # and no other note
    for phrase in expect.notes:
        assert phrase in report["output"]


@slow
def test_corpus_loses_no_report_and_changes_nothing(corpus_run):
    ran, out, made = corpus_run["run"], corpus_run["out"], corpus_run["made"]
    if os.environ.get("RNNBOOK_CORPUS_ONLY"):
        pytest.skip("a part of the corpus only")
    assert ran.returncode == 1  # some files are not notebooks
    for name, path in made.items():  # every submission has its reports, none was modified
        folder = out / corpus.report_name(name)
        assert (folder / "results.json").is_file() and (folder / "feedback.md").is_file()
        if path.is_file():
            assert digest(path) == corpus_run["before"][name], name
    assert not list(out.parent.parent.glob("*/results.json"))  # nothing above --out
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    # a name that is not UTF-8 is written as text (\xe9), and loses no row
    assert sorted(r["path"] for r in rows) == sorted(reports.safe_text(str(p))
                                                     for p in made.values())
    for name in made:  # each graded submission's code is saved, a lone surrogate or not
        graded = not corpus.EXPECTED[name].error
        assert (out / corpus.report_name(name) / "exercise-code.json").is_file() == graded, name
    for name in ("class-report.csv", "class-report.html"):  # only the grader's own words
        assert corpus.FORGED not in (out / name).read_text(), name
    links = [line for line in ran.stderr.splitlines() if corpus.LINK in line]
    assert len(links) == sum(e.error == corpus.LINK for n, e in corpus.EXPECTED.items()
                             if n in made)  # one line each
    assert sorted(r["report"] for r in rows) == sorted(map(corpus.report_name, made))
    assert {p: digest(p) for p in corpus_run["package"]} == corpus_run["package"]
    for folder in (ROOT, ROOT / "rnnbook", ROOT / "solutions", corpus_run["subs"], out):
        assert not (folder / corpus.MARKER).exists(), folder
    assert not running(["sleep", corpus.SLEEP])  # nothing a submission started outlives it
    assert not running(["sleep", corpus.CHAIN])
    assert corpus.SECRET not in (out / "environment" / "results.json").read_text()
    for name in ("results.json", "feedback.md"):  # 3,000 long errors: 20 short notes
        assert (out / "long_errors" / name).stat().st_size < 32_000
    for name in reports.OUTPUTS if ran.returncode != 2 else ():  # none lost to a report's name
        assert (out / name).is_file(), name


@slow
def test_corpus_progress_is_one_line_per_event(corpus_run):
    lines = corpus_run["run"].stderr.splitlines()
    graded = [n for n, e in corpus.EXPECTED.items() if not e.error and n in corpus_run["made"]]
    if len(graded) < 2:
        pytest.skip("a part of the corpus only")
    progress = [line for line in lines if line.startswith("grade: [")]
    assert len(progress) == len(graded)
    assert progress[-1].startswith(f"grade: [{'#' * 20}] {len(graded)}/{len(graded)} ")
    for line in progress:  # each submission's seconds and peak memory (make bench reads them)
        assert re.search(r"\.ipynb: \d+\.\d s, peak \d+ MB \(\d+ s in all\)$", line), line
    start = [line for line in lines if re.match(r"grade: \d+ submissions", line)]
    assert len(start) == 1 and f"{len(graded)} submissions, 2 at a time, seed 7" in start[0]
    for line in lines:
        assert line.startswith("grade: ") or line.split(": ")[0].endswith(".ipynb"), line


# ---------------------------------------------------------------------------------------------
# Pieces of the grader, without TensorFlow


def test_report_names_are_safe_and_distinct():
    paths = [pathlib.Path(p) for p in ("a/...ipynb", "b/gradebook.csv.ipynb", "a/x y.ipynb",
                                        "b/X Y.ipynb", "c/..ipynb", "d/.hidden.ipynb",
                                        "e/ok.ipynb", "f/ok.ipynb", "g/../../up.ipynb")]
    names = reports.names(paths)
    assert names == ["submission", "submission-gradebook.csv", "x_y", "X_Y-2", "submission-2",
                     "hidden", "ok", "ok-2", "up"]
    for name in names:
        assert "/" not in name and not name.startswith(".") and name != "gradebook.csv"
    outputs = [pathlib.Path(f"h/{n}.ipynb") for n in reports.OUTPUTS]
    outputs += [pathlib.Path(p) for p in ("h/CLASS-REPORT.html.ipynb", "h/timings.csv.part.ipynb")]
    for name in reports.names(outputs):
        assert name.startswith("submission-"), name
    from rnnbook.grading import classreport, similarity

    assert similarity.TABLE in reports.OUTPUTS
    written = set(re.findall(r'"([\w-]+\.(?:html|csv))"', pathlib.Path(classreport.__file__)
                             .read_text()))
    assert written and written <= set(reports.OUTPUTS), written  # what the class report writes


@slow
def test_an_output_that_cannot_be_written_stops_no_other(tmp_path):
    """A folder where timings.csv goes: every other output is written, one line says what
    could not be and why, the exit status is 1. A submission named like an output is fine."""
    out = tmp_path / "out"
    (out / "timings.csv").mkdir(parents=True)
    subs = []
    for name in ("timings.csv", "class-report.html", "similar-submissions.csv"):
        subs.append(tmp_path / f"{name}.ipynb")
        subs[-1].write_bytes(SOLUTION.read_bytes())
    ran = grade(*subs, "--out", out, "--seed", 3, *([] if walls_stand() else ["--no-walls"]))
    assert ran.returncode == 1, ran.stderr
    failed = [line for line in ran.stderr.splitlines() if "could not write" in line]
    assert len(failed) == 1, ran.stderr
    assert failed[0].startswith("grade: error: could not write 1 output: timings.csv "
                                "(IsADirectoryError: [Errno 21] Is a directory: "), failed
    for name in ("gradebook.csv", "class-report.html", "class-report.csv",
                 "similar-submissions.csv"):
        assert (out / name).is_file(), name
    for path in subs:
        report = results(out, "submission-" + path.stem)
        assert report["score"] == TOTAL
    scores = [line for line in ran.stderr.splitlines() if line.endswith(f": {TOTAL:g} / {TOTAL}")]
    assert len(scores) == 3


def test_what_a_submission_says_reaches_a_report_capped():
    notes = reports.Notes()
    for k in range(10_000):
        notes.add(f"cell {k + 1} raised ValueError: " + "x" * 2000)
    assert len(notes) == reports.MAX_NOTES and notes.more == 10_000 - reports.MAX_NOTES
    assert all(len(n) < reports.MAX_TEXT + 40 for n in notes)
    assert notes[0].endswith(" ... and 1526 more characters")
    text = reports.Notes(["first"]).then(notes).text()
    assert text.startswith("\nNote: first\nNote: cell 1 raised")
    assert text.endswith("\nAnd 9981 more notes.") and len(text) < 12_000
    sub = reports.Submission(path=pathlib.Path("s.ipynb"), name="s", error="y" * 10**6)
    assert len(reports.not_graded(sub, 1).json_text()) < 3 * reports.MAX_OUTPUT
    assert reports.cap("short") == "short"


def test_answers_are_bounded_before_they_are_decoded():
    cases = [{"x": np.ones((3, 4), np.float32)}]
    bound = wire.answer_bound(cases)
    fine = wire.encode([np.arange(6, dtype=np.float32).reshape(2, 3), 1.5, "text", None])
    assert wire.decode(json.loads(json.dumps(fine)), bound)[0].shape == (2, 3)
    claims = {"__array__": ["float64", [2**29], "AAAA"]}  # 4 GiB claimed in 4 characters
    for bad in (claims, {"__array__": ["object", [1], "AAAA"]},
                {"__array__": ["float32", [2], "AAAA"]}, {"a": 1}, {"__dict__": [["a", 1]]}):
        with pytest.raises(wire.WireError):
            wire.decode(bad, bound)
    big = wire.encode(np.zeros(bound // 8 + 1))
    with pytest.raises(wire.WireError):
        wire.decode(big, bound)
    reader = wire.LineReader(10)
    assert reader.feed(b"short\n" + b"x" * 50) == [b"short"]
    assert reader.feed(b"x" * 50 + b"\nok\n") == [b"ok"] and reader.dropped


def test_only_well_formed_events_count():
    assert attempt.parse_event(b'{"cell": 2, "status": "start"}') == {"cell": 2, "status": "start"}
    assert attempt.parse_event(b'{"exercise": "f", "status": "done"}')
    for junk in (b"[1, 2]", b"not json", b'{"cell": "2", "status": "ok"}',
                 b'{"cell": 1, "status": "won"}', b'{"exercise": 5, "status": "done"}',
                 b'{"finished": 1}', b'{"cell": 1, "status": "error", "error": 5}'):
        assert attempt.parse_event(junk) is None, junk


def test_nested_hidden_folders_and_tmp_make_no_stray_mounts():
    spec = {"hide": ["/a/subs", "/a/subs/late", "/a/subs/out", "/tmp", "/b", "/b/c/site"],
            "scratch": {"/tmp": 128, "/a/work/job": 256}, "readonly": ["/b/c"]}
    ops = [(path, kind) for path, kind, _ in walls.mount_plan(spec)]
    assert ("/a/subs", "hide") in ops and ("/tmp", "scratch") in ops
    assert ("/a/subs/late", "hide") not in ops and ("/a/subs/out", "hide") not in ops
    assert ("/tmp", "hide") not in ops  # a submission directly in /tmp: /tmp stays scratch
    assert ("/b/c/site", "hide") in ops  # inside something brought back: hidden again


def test_a_repository_under_tmp_stays_hidden_and_read_only():
    """A clone under /tmp (as CI may make one): the repository is hidden with a tmpfs of its own
    inside the scratch /tmp, so the folders made for rnnbook's package are not writable."""
    spec = {"hide": ["/tmp/clone", "/tmp/subs"], "scratch": {"/tmp": 128},
            "readonly": ["/tmp/clone/rnnbook"]}
    ops = [(path, kind) for path, kind, _ in walls.mount_plan(spec)]
    assert ("/tmp/clone", "hide") in ops and ("/tmp/clone/rnnbook", "readonly") in ops
    assert ops.index(("/tmp", "scratch")) < ops.index(("/tmp/clone", "hide"))
    assert ("/tmp/subs", "hide") not in ops  # nothing comes back there: scratch hides it


def test_a_python_under_tmp_outside_the_repository_is_reached_through_read_only_folders():
    """The repository elsewhere, its Python (a venv) under /tmp: the venv's top folder below
    the scratch /tmp is a read-only tmpfs of its own, so nothing made to reach it is writable
    (a fresh clone under /tmp grading a copy of itself did fail the probe this way)."""
    spec = {"hide": ["/var/tmp/tree", "/tmp/subs"], "scratch": {"/tmp": 128},
            "readonly": ["/tmp/clone/.venv/lib", "/var/tmp/tree/rnnbook"]}
    ops = [(path, kind) for path, kind, _ in walls.mount_plan(spec)]
    assert ("/tmp/clone", "hide") in ops and ("/tmp/clone/.venv/lib", "readonly") in ops
    assert ops.index(("/tmp", "scratch")) < ops.index(("/tmp/clone", "hide"))
    assert ops.index(("/tmp/clone", "hide")) < ops.index(("/tmp/clone/.venv/lib", "readonly"))
    direct = walls.mount_plan({"hide": [], "scratch": {"/tmp": 128}, "readonly": ["/tmp/py"]})
    assert ("/tmp/py", "hide") not in [(p, k) for p, k, _ in direct]  # its own mount suffices


def test_walls_that_cannot_stand_refuse_to_grade_unless_told(monkeypatch, tmp_path):
    sub = tmp_path / "s.ipynb"
    sub.write_bytes(SOLUTION.read_bytes())
    grading = run.Run(config.Config(seed=1), [sub], tmp_path / "out")
    grading.zygotes = {"numpy": object()}
    monkeypatch.setattr(run.Run, "_probe", lambda self, zygote, job: "no user namespaces")
    with pytest.raises(run.GradeError) as refused:
        grading.build_walls(tmp_path)
    said = str(refused.value)  # why, what to do (user namespaces, root), --no-walls's cost
    assert "user namespaces work for this user" in said and "or as root" in said
    assert "is --no-walls safe: without walls a submission can read" in said
    grading.config.walls = "auto"  # what Gradescope uses: a container per submission
    grading.build_walls(tmp_path)
    # (as root, where nobody can read Python: "; submissions run as nobody" follows)
    assert grading.isolation.startswith("none (no user namespaces)") and not grading.specs


def test_where_the_kernel_keeps_user_namespaces_from_a_user_the_refusal_says_what_to_do(
        monkeypatch, tmp_path):
    """Ubuntu 23.10's AppArmor switch, Debian's old sysctl, no namespaces at all: one sentence
    each, naming the setting and what the instructor can do; nothing where none is off."""
    files = {name: tmp_path / name for name in ("apparmor", "clone", "max")}
    switches = [(str(files[n]), off, sentence) for n, (_, off, sentence)
                in zip(files, walls.USERNS_SWITCHES, strict=True)]
    monkeypatch.setattr(walls, "USERNS_SWITCHES", tuple(switches))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    for path in files.values():
        path.write_text("5\n")
    assert walls.why_no_walls() == ""
    files["max"].write_text("0\n")
    assert "user.max_user_namespaces=0" in walls.why_no_walls()
    files["apparmor"].write_text("1\n")
    said = walls.why_no_walls("/usr/bin/python3")
    assert "AppArmor" in said and "/usr/bin/python3" in said and "grade as root" in said
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert walls.why_no_walls() == ""  # root needs none of them


def test_chapter_comes_from_the_exercises_never_the_file_name():
    cells = run.exercise_cells()
    other = next(stem for stem in cells if stem != STEM)
    nb = source.read(ROOT / "solutions" / f"{other}.ipynb")
    nb.metadata["rnnbook"] = {"chapter": STEM}  # and saved as 01-....ipynb: still `other`
    assert run.which_chapter(nb, None, cells) == other
    assert run.which_chapter(nb, STEM, cells) == STEM  # --chapter decides
    nb.cells, nb.metadata = [], {}
    with pytest.raises(run.GradeError, match="cannot tell which chapter"):
        run.which_chapter(nb, None, cells)
    nb.metadata = {"rnnbook": {"chapter": [STEM]}}  # the learner's metadata: not a name
    with pytest.raises(run.GradeError, match="cannot tell which chapter"):
        run.which_chapter(nb, None, cells)


def test_by_hand_trials_are_plain_calls():
    from rnnbook import checks

    chapter = checks.load(STEM)
    for ex in EXERCISES:
        if ex.by_hand:
            cases = chapter.cases(ex.name, 3)
            trials = run.plain_trials(chapter[ex.name], cases)
            assert trials is not None and len(trials) == len(cases), ex.name
            assert all(isinstance(t["args"], list) for t in trials)


def test_how_a_process_ended_is_said_plainly():
    assert procs.ended(3) == "ended the process (exit code 3)"
    assert procs.ended(-11) == "crashed its process (SIGSEGV)"
    assert procs.ended(-9) == "crashed its process (SIGKILL)"


def test_a_fifo_among_the_submissions_stops_nothing(tmp_path):
    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    sub = reports.Submission(path=fifo, name="pipe")
    run.load_submission(sub, None, run.exercise_cells())  # returns at once: never opened
    assert "not a regular file" in sub.error


@slow
def test_api_exercises_run_with_tensorflow_but_not_the_instructors_side(tmp_path):
    """A chapter with API exercises: they run in the TensorFlow child, which still cannot
    reach the grader or the reference (the learner release's stub is all it sees)."""
    cells = run.exercise_cells()
    found = [(stem, c) for stem, cs in cells.items() for c in cs if not c.by_hand]
    if not found:
        pytest.skip("no API exercise in the book yet")
    stem, api = found[0]
    need_walls("no user namespaces here")
    nb = source.read(ROOT / "solutions" / f"{stem}.ipynb")
    corpus._wrap(nb, api, (
        "    import importlib, pathlib\n"
        f"    text = pathlib.Path({str(ROOT / 'rnnbook' / 'reference.py')!r}).read_text()\n"
        "    if 'not part of the learner release' not in text:\n"
        "        raise RuntimeError('the reference is in reach')\n"
        f"    if pathlib.Path({str(ROOT / 'rnnbook' / 'grading' / 'run.py')!r}).exists():\n"
        "        raise RuntimeError('the grader is in reach')\n"
        "    try:\n"
        "        importlib.import_module('rnnbook.reference').anything\n"
        "    except ImportError:\n"
        "        pass\n"
        "    else:\n"
        "        raise RuntimeError('the reference imports')\n"))
    path = tmp_path / "api.ipynb"
    nbformat.write(nb, str(path))
    ran = grade(path, "--out", tmp_path / "out", "--seed", 2)
    assert ran.returncode == 0, ran.stderr
    report = results(tmp_path / "out", "api")
    total = sum(c.points for c in cells[stem])
    assert report["score"] == total, report


def test_links_and_other_files_are_refused_by_name_and_the_rest_loaded(tmp_path):
    """A link (to the solution, to a system file, to /dev/zero), a fifo: one line each naming
    the file; a real notebook beside them loads; the walls come from the gradable files only."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "real.ipynb").write_bytes(SOLUTION.read_bytes())
    for name, target in (("sol", SOLUTION), ("os", "/etc/os-release"), ("zero", "/dev/zero")):
        (subs / f"{name}.ipynb").symlink_to(target)
    os.mkfifo(subs / "fifo.ipynb")
    (subs / "folder.ipynb").mkdir()  # a real folder is no submission
    paths = run.find_notebooks([subs])
    assert [p.name for p in paths] == ["fifo.ipynb", "os.ipynb", "real.ipynb", "sol.ipynb",
                                       "zero.ipynb"]
    grading = run.Run(config.Config(seed=1), paths, tmp_path / "out")
    errors = {s.path.name: s.error for s in grading.subs}
    assert errors["real.ipynb"] == "" and grading.gradable[0].path.name == "real.ipynb"
    for name in ("os.ipynb", "sol.ipynb", "zero.ipynb"):
        assert errors[name] == f"{subs / name}: {corpus.LINK}" + errors[name].split(
            corpus.LINK, 1)[1], errors[name]
    assert errors["fifo.ipynb"].endswith("not a regular file")
    spec = grading.walls_spec("numpy", tmp_path, tmp_path / "w")
    assert not [p for p in spec["probe_absent"] if p.startswith(("/etc", "/usr/lib", "/dev"))]
    assert str(subs) in spec["hide"]


def test_a_file_swapped_for_another_between_lstat_and_open_is_refused(tmp_path, monkeypatch):
    sub = tmp_path / "s.ipynb"
    sub.write_bytes(SOLUTION.read_bytes())
    other = os.lstat(LEARNER)  # what lstat saw: another file
    monkeypatch.setattr(run.os, "lstat", lambda path: other)
    loaded = run.load_submission(reports.Submission(sub, "s"), None, run.exercise_cells())
    assert loaded.error.endswith("not a regular file (it changed while it was read)")


def test_names_and_text_that_are_not_utf8_become_safe_text_once():
    name = os.fsdecode(b"caf\xe9.ipynb")  # a byte that is not UTF-8: a surrogate in Python
    assert reports.safe_text(name) == "caf\\xe9.ipynb"
    assert reports.safe_text("x = 1  # \ud800") == "x = 1  # \\ud800"
    assert reports.safe_text("déjà vu ∂") == "déjà vu ∂"  # valid text is kept
    sub = reports.Submission(pathlib.Path("/s") / name, "caf_")
    assert (sub.file, sub.shown) == ("caf\\xe9.ipynb", "/s/caf\\xe9.ipynb")
    sub.shown.encode("utf-8")


def test_a_submission_whose_code_cannot_be_saved_stops_no_other(tmp_path):
    from rnnbook.grading import similarity

    cells = run.exercise_cells()
    subs = [reports.Submission(pathlib.Path(f"{n}.ipynb"), n, chapter=STEM,
                               cells=[c.source if c.cell_type == "code" else ""
                                      for c in source.read(SOLUTION).cells])
            for n in ("gone", "kept")]
    (tmp_path / "kept").mkdir()  # "gone" has no report folder: its code cannot be written
    with pytest.raises(OSError, match=r"not saved for 1: gone \(FileNotFoundError\)"):
        similarity.save(tmp_path, subs, cells)
    assert json.loads((tmp_path / "kept" / similarity.CODE).read_text())["chapter"] == STEM


def test_no_child_is_started_once_the_budget_is_spent(monkeypatch, tmp_path):
    """The budget's words: wall time for the whole submission. Once it is spent, the exercises
    still pending say so and no child is started for them (a TensorFlow child started only to
    be killed cost a loaded machine 15 s beyond the budget, issue 36)."""
    sub = tmp_path / "s.ipynb"
    sub.write_bytes(SOLUTION.read_bytes())
    grading = run.Run(config.Config(seed=1, budget=30), [sub], tmp_path / "out")

    def started(*args):
        raise AssertionError("a child was started after the budget ran out")

    monkeypatch.setattr(run.Run, "_attempt", started)
    graded = grading.gradable[0]
    graded.deadline = 0.0  # spent long ago (time.monotonic()'s clock)
    names = [ex.name for ex in EXERCISES]
    grading._grade_group(graded, "tf", names, tmp_path, set(), reports.Notes())
    assert graded.answers == dict.fromkeys(names, attempt.budget_spent(30))
    assert graded.answers[names[0]] == ("was not run: the submission's time budget of 30 s "
                                        "ran out")


def test_each_run_in_one_process_writes_where_fd_2_points_now(tmp_path):
    """The grader writes on a copy of fd 2 (TensorFlow's import points fd 2 at /dev/null for a
    while); a second run in the same process copies it anew, so its lines reach where fd 2
    points now (a test's capture, a caller's redirect), not where it pointed for the first."""
    saved = os.dup(2)
    try:
        for n in range(2):
            said = tmp_path / f"stderr-{n}.txt"
            with open(said, "w") as file:
                os.dup2(file.fileno(), 2)
            cli.main([str(tmp_path / "missing.ipynb"), "--out", str(tmp_path / f"out-{n}")])
            assert "missing.ipynb" in said.read_text(), (n, said.read_text())
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@pytest.mark.slow
def test_a_zygote_that_cannot_start_is_said_once_and_its_submissions_are_not_graded(
        tmp_path, monkeypatch, capfd):
    """The TensorFlow zygote fails to start (a broken TensorFlow): one error line for the run,
    naming why and how many submissions it left ungraded, not one per submission; each report
    says "not graded" with the reason, and no row gets a score it did not earn."""
    failing = procs.Zygote.wait_ready

    def wait_ready(self):
        if self.kind == "tf":
            raise procs.ZygoteFailed("tf", "ImportError: forced by the test")
        failing(self)

    monkeypatch.setattr(procs.Zygote, "wait_ready", wait_ready)
    for n in range(3):
        shutil.copy(ROOT / "solutions" / "01-basic-rnn-cell.ipynb", tmp_path / f"s{n}.ipynb")
    status = cli.main([*(str(tmp_path / f"s{n}.ipynb") for n in range(3)), "--out",
                       str(tmp_path / "out"), "--seed", "3", "--no-walls"])
    err = capfd.readouterr().err
    assert status == 1, err
    said = [line for line in err.splitlines() if "forced by the test" in line]
    assert said == ["grade: error: the tf zygote failed: ImportError: forced by the test: 3 "
                    "submissions not graded (each report says so); the grader's Python must "
                    "import what the children use (`python -c \"import tensorflow\"` there "
                    "says why it cannot)"], err
    for n in range(3):
        assert f"s{n}.ipynb: not graded (see its report)" in err, err
        report = json.loads((tmp_path / "out" / f"s{n}" / "results.json").read_text())
        assert "not graded (the tf zygote failed: ImportError: forced by the test)" in (
            report["output"]), report["output"]


def test_a_failed_zygote_names_what_its_python_could_not_import():
    assert procs.ZygoteFailed("tf", "x").module == "tensorflow"
    assert procs.ZygoteFailed("numpy", "x").module == "numpy"
    assert str(procs.ZygoteFailed("numpy", "No module named numpy")) == (
        "the numpy zygote failed: No module named numpy")
