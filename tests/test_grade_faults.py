"""Faults as an instructor meets them (issue 57): two runs into one ``--out``, a full disk, a
grader killed mid-run, and file names and messages that are terminal control sequences. Each
output in ``--out`` is the previous one or a whole new one, never a partial one; the
instructor's terminal and CSV files never receive a control character a submission chose.

Also run as a user who is not root (``make test-as-user``: the lock file and the walls
differ there; the tiny filesystem is a tmpfs only where this user may mount one, else a
write that fails by injection)."""
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import nbformat
import pytest
from hostile import corpus

from conftest import ROOT, walls_stand
from rnnbook import source
from rnnbook.grading import classreport, lock, results
from rnnbook.grading.roster import visible

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"
LEARNER = ROOT / "notebooks" / f"{STEM}.ipynb"
EXERCISES = source.exercises(source.read(SOLUTION))
TOTAL = sum(ex.points for ex in EXERCISES)
WALLS = [] if walls_stand() else ["--no-walls"]
#: the control sequences of issue 57: a colour, a title change, a screen clear, a clipboard
#: write (OSC 52, "hi" in base64)
SEQUENCES = {"colour": "\x1b[31mred\x1b[0m", "title": "\x1b]0;title\x07",
             "clear": "\x1b[2J", "clipboard": "\x1b]52;c;aGk=\x07"}
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

slow = pytest.mark.slow


def grader(*args):
    return [sys.executable, "-m", "rnnbook.grading", *map(str, args), *WALLS]


def grade(*args):
    return subprocess.run(grader(*args), capture_output=True, text=True, cwd=ROOT,
                          timeout=900)


def snapshot(out):
    """Every file below ``out``: its bytes."""
    return {p.relative_to(out).as_posix(): p.read_bytes()
            for p in sorted(out.rglob("*")) if p.is_file()}


def whole(path):
    """Whether ``path`` is a whole output of the grader (read to its end as its format)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        json.loads(text)
    elif path.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        return bool(rows) and all(len(r) == len(rows[0]) for r in rows)
    elif path.suffix == ".html":
        return text.rstrip().endswith("</html>")
    elif path.suffix == ".md":
        return text.startswith("# Feedback")
    return bool(text)


def assert_whole(out, before):
    """Every file in ``out`` is as it was (``before``) or a whole new one; none is empty, none
    is a ``.part``; the lock file aside (a killed run's record)."""
    for path in sorted(out.rglob("*")):
        name = path.relative_to(out).as_posix()
        if not path.is_file() or name == lock.LOCK:
            continue
        if name.endswith(results.PART):  # a killed run's: the next run removes it
            continue
        if before.get(name) != path.read_bytes():
            assert path.stat().st_size and whole(path), name


def submissions(folder, learner=False, count=3):
    """``count`` copies of Chapter 1's solution (or learner copy), ``s1.ipynb``, ..."""
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(1, count + 1):
        (folder / f"s{k}.ipynb").write_bytes((LEARNER if learner else SOLUTION).read_bytes())
    return folder


# --- the lock ------------------------------------------------------------------------------


def test_a_held_folder_refuses_a_second_holder_by_its_process_and_start(tmp_path):
    said = []
    with lock.hold(tmp_path, said.append) as me:
        assert json.loads((tmp_path / lock.LOCK).read_text())["pid"] == os.getpid()
        with pytest.raises(lock.FolderBusy) as busy, lock.hold(tmp_path, said.append):
            pass
    assert str(busy.value) == (f"{tmp_path} is in use by another grading run (process "
                               f"{os.getpid()}, started {me.started}); wait for it to end or "
                               "choose another --out")
    assert not (tmp_path / lock.LOCK).exists() and said == []
    with lock.hold(tmp_path, said.append):  # let go: free again
        pass


def test_a_lock_left_by_a_run_that_is_gone_is_taken_over_with_a_note(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (tmp_path / lock.LOCK).write_text(json.dumps({"pid": int(gone),
                                                  "started": "2026-01-01 00:00:00 UTC"}))
    said = []
    with lock.hold(tmp_path, said.append) as me:
        assert me.pid == os.getpid()
    assert said == [f"note: {tmp_path} was left locked by a grading run that ended without "
                    f"letting go (process {gone}, started 2026-01-01 00:00:00 UTC); this run "
                    "takes the lock over"]


@slow
def test_two_runs_into_one_folder_one_result_one_refusal(tmp_path):
    """The second run, started while the first holds the folder, stops with one line naming
    the first (its process and start time), exit 2, and writes nothing; the first's outputs
    are whole, and the lock is gone once it ends."""
    subs, out = submissions(tmp_path / "subs", count=4), tmp_path / "out"
    first = subprocess.Popen(grader(subs, "--out", out, "--seed", 5, "--workers", 1),
                             stderr=subprocess.PIPE, text=True, cwd=ROOT)
    held = out / lock.LOCK
    deadline = time.monotonic() + 600
    while not (held.exists() and held.stat().st_size) and first.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    holder = json.loads(held.read_text())
    second = grade(SOLUTION, "--out", out, "--seed", 6, "--overwrite")
    _, said = first.communicate(timeout=900)
    assert first.returncode == 0, said
    assert second.returncode == 2
    assert second.stderr.splitlines() == [
        f"grade: error: {out} is in use by another grading run (process {first.pid}, started "
        f"{holder['started']}); wait for it to end or choose another --out"]
    book = list(csv.DictReader(io.StringIO((out / "gradebook.csv").read_text())))
    assert [(r["submission"], r["seed"], r["total"]) for r in book] == [
        (f"s{k}.ipynb", "5", str(float(TOTAL))) for k in range(1, 5)]
    assert not held.exists() and not list(out.rglob("*" + results.PART))


# --- a full disk -----------------------------------------------------------------------------


def test_a_write_that_fails_leaves_the_previous_file_and_no_part(tmp_path, monkeypatch):
    """Injected: the disk fills half-way through a write. The previous file stays as it was,
    no .part is left, and the error names the file that was not written."""
    target = tmp_path / "gradebook.csv"
    target.write_text("previous\n")

    class Full(io.StringIO):
        def write(self, text):
            super().write(text[: len(text) // 2])
            raise OSError(28, "No space left on device")

    real = open

    def filling(path, mode="r", *args, **kwargs):
        if "w" in mode:
            real(path, mode, *args, **kwargs).close()  # the .part exists, as on a real disk
            return Full()
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(results, "open", filling, raising=False)
    with pytest.raises(OSError) as full:
        results.write_atomic(target, "new gradebook\n" * 100)
    assert str(full.value) == f"[Errno 28] No space left on device: '{target}'"
    assert target.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gradebook.csv"]
    with pytest.raises(OSError):
        results.write_atomic(tmp_path / "class-report.html", "<html></html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gradebook.csv"]  # none: not empty


def test_the_parts_a_killed_run_left_are_removed_and_nothing_else(tmp_path):
    from rnnbook.grading import similarity

    assert similarity.CODE in results.IN_REPORT
    ours = [tmp_path / "gradebook.csv.part", tmp_path / "class-report.html.part",
            tmp_path / "s1" / "results.json.part", tmp_path / "s1" / "exercise-code.json.part"]
    theirs = [tmp_path / "notes.part", tmp_path / "s1" / "draft.md.part",
              tmp_path / "s1" / "results.json"]
    (tmp_path / "s1").mkdir()
    for path in ours + theirs:
        path.write_text("x")
    assert sorted(results.clear_parts(tmp_path)) == sorted(ours)
    assert [p for p in ours + theirs if p.exists()] == theirs


def test_a_class_report_that_cannot_be_written_names_each_file_and_leaves_none(
        tmp_path, monkeypatch):
    report = tmp_path / "a"
    report.mkdir()
    (report / "results.json").write_text(json.dumps(
        {"score": 1, "output": "", "tests": [], "extra_data": {"chapter": STEM,
                                                                "max_score": 2}}))
    real = results.write_atomic

    def no_room(path, data):
        if path.name != "class-report.csv":
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(results, "write_atomic", no_room)
    with pytest.raises(OSError) as full:
        classreport.write_report([tmp_path], tmp_path)
    assert str(full.value) == "could not write class-report.html (No space left on device)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "class-report.csv"]


def _tmpfs(folder, size):
    """A tmpfs of ``size`` at ``folder``, or False where this user may not mount one."""
    folder.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True)
    return made.returncode == 0


@slow
def test_a_run_on_a_tiny_filesystem_leaves_whole_files_or_none(tmp_path):
    """A tmpfs of 12 KB (a few outputs fit): the run says which outputs it could not write
    and exits 1; every file there is whole (no empty class-report.html, no .part). Then a
    regrade of other submissions onto a disk that is full again: each file is its previous
    self or a whole new one."""
    disk = tmp_path / "disk"
    if not _tmpfs(disk, "12k"):
        pytest.skip("this user may not mount a tmpfs: the injected failures above stand in")
    try:
        out = disk / "out"
        ran = grade(submissions(tmp_path / "subs", count=1), "--out", out, "--seed", 3)
        assert ran.returncode == 1, ran.stderr
        failed = [line for line in ran.stderr.splitlines() if "could not write" in line]
        assert len(failed) == 1 and "No space left on device" in failed[0], ran.stderr
        assert "class-report.html" in failed[0]
        assert_whole(out, {})
        assert not list(disk.rglob("*" + results.PART)) and not (out / lock.LOCK).exists()
        assert all(p.stat().st_size for p in out.rglob("*") if p.is_file())

        subprocess.run(["umount", str(disk)], check=True)
        assert _tmpfs(disk.with_name("disk2"), "256k")
        disk = disk.with_name("disk2")
        out = disk / "out"
        first = grade(tmp_path / "subs", "--out", out, "--seed", 3)
        assert first.returncode == 0, first.stderr
        before = snapshot(out)
        room = os.statvfs(disk)
        (disk / "filler").write_bytes(b"x" * (room.f_bavail * room.f_frsize - 8192))
        again = grade(submissions(tmp_path / "learner", learner=True, count=1), "--out", out,
                      "--seed", 4, "--overwrite")
        assert again.returncode == 1, again.stderr
        assert "No space left on device" in again.stderr
        assert_whole(out, before)
        assert not list(disk.rglob("*" + results.PART)) and not (out / lock.LOCK).exists()
        changed = [n for n, data in snapshot(out).items() if before.get(n) != data]
        assert set(changed) < set(before)  # some outputs are new, the rest as they were
    finally:
        for folder in (tmp_path / "disk", tmp_path / "disk2"):
            subprocess.run(["umount", str(folder)], capture_output=True)


# --- a grader killed mid-run ------------------------------------------------------------


@slow
def test_a_run_killed_at_any_point_leaves_the_previous_outputs_whole(tmp_path):
    """A regrade (other submissions, same names) killed with SIGTERM or SIGKILL: once it
    holds the lock, after its first report, after its last report, while it writes what
    comes after the gradebook. Each time every output is the previous one or a whole new one;
    the next run takes the killed run's lock over with a note, removes any .part it left, and
    ends with the reports whole."""
    out = tmp_path / "out"
    first = grade(submissions(tmp_path / "subs"), "--out", out, "--seed", 3, "--workers", 1)
    assert first.returncode == 0, first.stderr
    learner = submissions(tmp_path / "learner", learner=True)
    points = [("the lock", signal.SIGTERM), ("1/3", signal.SIGKILL),
              ("3/3", signal.SIGTERM), ("the gradebook", signal.SIGKILL)]
    for when, how in points:
        before = snapshot(out)
        book = (out / "gradebook.csv").stat().st_mtime_ns
        regrade = subprocess.Popen(grader(learner, "--out", out, "--seed", 4, "--overwrite",
                                          "--workers", 1),
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT)
        deadline = time.monotonic() + 600
        if when == "the lock":
            while not (out / lock.LOCK).exists() and regrade.poll() is None:
                time.sleep(0.01)
        elif when == "the gradebook":
            while ((out / "gradebook.csv").stat().st_mtime_ns == book
                   and regrade.poll() is None):
                time.sleep(0.01)
        else:
            for line in regrade.stderr:
                if f"] {when} " in line:
                    break
        assert time.monotonic() < deadline
        assert regrade.poll() is None, f"{when}: the run ended before it could be killed"
        regrade.send_signal(how)
        regrade.wait(timeout=60)
        regrade.stderr.close()
        assert regrade.returncode == -how, when
        assert_whole(out, before)
    last = grade(learner, "--out", out, "--seed", 4, "--overwrite", "--workers", 1)
    assert last.returncode == 0, last.stderr
    assert re.search(r"grade: note: .* was left locked by a grading run that ended without "
                     r"letting go \(process \d+, started [^)]+\); this run takes the lock over",
                     last.stderr), last.stderr
    assert not list(out.rglob("*" + results.PART)) and not (out / lock.LOCK).exists()
    assert_whole(out, {})
    assert all(results_of(out, f"s{k}")["score"] == 0 for k in (1, 2, 3))


def results_of(out, name):
    return json.loads((out / name / "results.json").read_text())


# --- control characters ------------------------------------------------------------------


def test_control_characters_are_made_visible_and_the_rest_kept():
    for name, seq in SEQUENCES.items():
        shown = visible(seq)
        assert not CONTROL.search(shown) and "\\x1b" in shown, name
    assert visible("\x1b[2J\x9b\x7f\x00") == "\\x1b[2J\\x9b\\x7f\\x00"
    assert visible("a\nb\tc") == "a\\x0ab\\x09c"  # a file name: one line
    assert visible("a\nb\tc\x1b]0;t\x07", lines=True) == "a\nb\tc\\x1b]0;t\\x07"  # a message
    assert visible("déjà vu ∂ caf\udce9") == "déjà vu ∂ caf\\xe9"


@slow
def test_control_sequences_in_names_and_messages_reach_no_terminal_csv_or_report(tmp_path):
    """Submissions named with each sequence of issue 57, one whose cell and exercise raise
    messages made of them: the grader's stderr, the gradebook, the reports and the class
    report hold none of their control characters, and show each as its escape
    (``\\x1b``)."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    message = "".join(SEQUENCES.values()).encode("unicode_escape").decode()
    for name, seq in SEQUENCES.items():
        nb = source.read(SOLUTION)
        if name == "clear":
            nb = corpus._replace(nb, corpus.FIRST, f"    raise ValueError('{message}')\n")
            nb.cells.append(nbformat.v4.new_code_cell(f"raise RuntimeError('{message}')"))
        nbformat.write(nb, str(subs / f"{seq}.ipynb"))
    ran = subprocess.run(grader(subs, "--out", out, "--seed", 3), capture_output=True,
                         cwd=ROOT, timeout=900)
    assert ran.returncode == 0, ran.stderr
    said = ran.stderr.decode("utf-8")
    assert not CONTROL.search(said.replace("\n", "")), said
    for seq in SEQUENCES.values():
        assert f"{visible(seq)}.ipynb: " in said, (seq, said)
    for path in out.rglob("*"):
        if path.is_file():
            assert not CONTROL.search(path.read_text().replace("\n", "").replace("\r", "")
                                      .replace("\t", "")), path
    book = {r["submission"]: r for r in csv.DictReader(io.StringIO(
        (out / "gradebook.csv").read_text()))}
    assert sorted(book) == sorted(f"{visible(seq)}.ipynb" for seq in SEQUENCES.values())
    cleared = results_of(out, book[f"{visible(SEQUENCES['clear'])}.ipynb"]["report"])
    shown = visible("".join(SEQUENCES.values()))
    assert shown in cleared["output"]  # the cell's RuntimeError, as a note
    assert any(shown in t["output"] for t in cleared["tests"])  # the exercise's ValueError
