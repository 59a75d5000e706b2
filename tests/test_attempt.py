"""One attempt at a submission (rnnbook/grading/attempt.py), stage by stage, without TensorFlow.

The pure stages (the job and its plan, the events, the limits, settling, one stage's end) get
hand-written event lines and numbers; the child and the loop that reads it get a real NumPy-only
zygote and tiny notebooks. The hostile corpus (tests/test_grade.py) grades whole submissions.
"""
import json
import os
import pathlib
import time

import numpy as np
import pytest

from rnnbook.grading import attempt, config, procs, walls, wire
from rnnbook.grading.results import Notes, Submission
from rnnbook.plaindata import Raised

LIMITS = config.Config(timeout=8, cell_timeout=20, budget=30, memory=1200)
NO_ANSWER = "sent back no answer (the notebook's code got in the way of the grader's)"
FLOODED = "sent back more data than its trials allow"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def submission(cells=2):
    return Submission(path=pathlib.Path("s.ipynb"), name="s", chapter="ch",
                      cells=[f"x = {i}" for i in range(cells)])


def events(cells=2, names=("f", "g"), skip=(), bound=2**20, clock=None):
    """The events of a child of ``cells`` cells (not ``skip``) and exercises ``names``, each
    with two trials."""
    pending = list(names)
    return attempt.Events(submission(cells), attempt.stages(cells, set(skip), pending), pending,
                          {n: bound for n in pending}, {n: 2 for n in pending}, LIMITS,
                          clock or Clock())


def say(ev, *sent):
    """The child sends ``sent`` (events, or raw bytes), in one chunk."""
    ev.feed(b"".join(e if isinstance(e, bytes) else wire.dumps(e) for e in sent))


def cells_ok(n=2):
    return [e for i in range(n) for e in ({"cell": i, "status": "start"},
                                           {"cell": i, "status": "ok", "error": ""})]


def done(name, answers, defined=True):
    return {"exercise": name, "status": "done", "defined": defined,
            "answers": wire.encode(answers)}


# --- 1. the job ----------------------------------------------------------------------------


def test_the_job_sends_the_cells_the_skips_and_only_the_pending_exercises_trials():
    sub = submission(3)
    trials = {"f": [{"args": [1], "kwargs": {}}], "g": [{"args": [2], "kwargs": {}}]}
    job = attempt.job(sub, ["g"], {2, 0}, trials, {"HOME": "/w/j"}, pathlib.Path("/w/j"),
                      LIMITS)
    assert job.plain() == {
        "chapter": "ch", "cells": ["x = 0", "x = 1", "x = 2"], "skip": [0, 2],
        "exercises": [{"name": "g", "trials": [{"args": [2], "kwargs": {}}]}],
        "env": {"HOME": "/w/j"}, "workdir": "/w/j", "drop_to": None, "scratch_mb": None,
        "walls": None, "processes": None, "probe": False,
        "limits": config.child_limits(LIMITS)}
    walled = attempt.job(sub, ["f", "g"], set(), trials, {}, "/w/j", LIMITS, 65534,
                         {"cwd": "/w"})
    assert walled.processes == LIMITS.processes  # RLIMIT_NPROC, where no cgroup bounds it
    assert [e["name"] for e in walled.exercises] == ["f", "g"]
    assert (walled.drop_to, walled.scratch_mb, walled.walls) == (
        65534, walls.scratch_mb(LIMITS.memory), {"cwd": "/w"})
    assert attempt.job(sub, [], set(), trials, {}, "/w/j", LIMITS, None, {"cwd": "/w"},
                       pids_cgroup=True).processes is None
    plain = json.loads(json.dumps(wire.encode(walled.plain())))  # plain data on the wire
    assert job_module().Job.read(wire.decode(plain, 2**20, dicts=True)).plain() == {
        **walled.plain(), "walls": {"cwd": "/w"}}


def job_module():
    """rnnbook/grading/job.py loaded by path, as the zygote loads it (no package import)."""
    import importlib.util

    path = pathlib.Path(attempt.__file__).with_name("job.py")
    spec = importlib.util.spec_from_file_location("rnnbook_job_test", path)
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_plan_is_the_cells_not_skipped_then_the_exercises():
    assert attempt.stages(4, {1, 3}, ["f", "g"]) == [("cell", 0), ("cell", 2),
                                                   ("exercise", "f"), ("exercise", "g")]
    assert attempt.stages(0, set(), ["f"]) == [("exercise", "f")]
    assert attempt.time_limit(LIMITS, ("exercise", "f")) == 8
    assert attempt.time_limit(LIMITS, ("cell", 0)) == attempt.time_limit(LIMITS, None) == 20


# --- 3. the events -------------------------------------------------------------------------


def test_a_stage_only_moves_forward_and_its_limit_is_given_once():
    clock = Clock()
    ev = events(clock=clock)
    assert (ev.stage, ev.open, ev.deadline) == (None, False, 1020)  # before the first cell
    clock.now = 1001
    say(ev, {"cell": 1, "status": "start"})  # cell 0 never said it started: skipped over
    assert (ev.stage, ev.open, ev.deadline) == (("cell", 1), True, 1021)
    clock.now = 1010
    say(ev, {"cell": 0, "status": "start"}, {"cell": 1, "status": "start"})  # back, again
    assert (ev.stage, ev.open, ev.deadline) == (("cell", 1), False, 1021)  # not reset
    say(ev, {"exercise": "f", "status": "start"})
    assert (ev.stage, ev.open, ev.deadline) == (("exercise", "f"), True, 1018)
    say(ev, {"exercise": "f", "status": "start"})
    assert (ev.stage, ev.open, ev.deadline) == (("exercise", "f"), True, 1018)
    say(ev, done("f", [1.0, 2.0]))
    assert not ev.open and ev.pending == ["g"] and ev.sub.answers == {"f": [1.0, 2.0]}
    say(ev, done("f", [3.0, 4.0]), done("g", [1, 2]))  # neither is the open stage
    assert ev.sub.answers == {"f": [1.0, 2.0]} and ev.pending == ["g"]


def test_malformed_and_forged_lines_change_nothing():
    ev = events()
    say(ev, b"not json\n", b"[1]\n", {"cell": "0", "status": "start"},
        {"exercise": "zzz", "status": "start"}, {"cell": 7, "status": "start"},
        {"finished": 1}, b"\n")
    assert (ev.stage, ev.open, ev.walls_failed) == (None, False, "")
    assert attempt.parse_event(b'{"finished": true}') == {"finished": True}
    assert attempt.event_stage({"finished": True}) is None


def test_a_cell_that_raised_is_a_note_and_events_may_come_split_anywhere():
    ev = events()
    data = b"".join(wire.dumps(e) for e in (
        {"cell": 0, "status": "start"}, {"cell": 0, "status": "error", "error": "NameError: x"},
        {"cell": 1, "status": "start"}))
    for k in range(len(data)):
        ev.feed(data[k:k + 1])
    assert ev.sub.notes == ["cell 1 raised NameError: x"]
    assert (ev.stage, ev.open) == (("cell", 1), True)


def test_the_walls_failing_counts_only_as_the_first_event():
    ev = events()
    say(ev, {"walls": "failed", "why": "no mount " + "x" * 500})
    assert ev.walls_failed == ("no mount " + "x" * 500)[:300]
    later = events()
    say(later, {"cell": 0, "status": "start"}, {"walls": "failed", "why": "forged"})
    assert later.walls_failed == ""


def test_a_line_too_long_floods_the_open_exercise_only():
    ev = events(bound=10)  # lines of at most 4116 bytes
    say(ev, {"cell": 0, "status": "start"}, b"x" * 5000 + b"\n")
    assert ev.flooded == set()  # a cell may print: it is not an answer
    say(ev, {"exercise": "f", "status": "start"}, b"y" * 3000)
    say(ev, b"y" * 3000 + b"\n")
    assert ev.flooded == {"f"} and ev.open
    say(ev, done("f", [1, 2]))  # and it still may answer
    assert ev.sub.answers == {"f": [1, 2]}


# --- 4. the limits -------------------------------------------------------------------------


def over(rss=100.0, scratch=0.0, now=0.0, budget=50.0, stage_deadline=40.0, stage=None):
    return attempt.over_limits(LIMITS, rss, scratch, now, budget, stage_deadline, stage)


def test_memory_counts_resident_and_scratch_and_says_which():
    assert over(rss=1200) is None
    assert over(rss=1200.5) == "went over the memory limit of 1200 MB"
    assert over(rss=1199.5, scratch=0.9) == "went over the memory limit of 1200 MB"
    assert over(rss=900, scratch=301) == ("went over the memory limit of 1200 MB (301 MB of it "
                                          "in scratch files)")
    assert over(rss=2000, now=99) == "went over the memory limit of 1200 MB"  # memory first


def test_the_budget_comes_before_the_stage_and_the_stage_says_its_own_limit():
    assert over(now=40) is None  # the very instant is still in time
    assert over(now=50, stage_deadline=60) is None
    assert over(now=40.1, stage=("exercise", "f")) == "went over the time limit of 8 s"
    assert over(now=40.1, stage=("cell", 3)) == "went over the time limit of 20 s"
    assert over(now=40.1) == "went over the time limit of 20 s"  # no cell started yet
    assert over(now=50.1, stage=("exercise", "f")) == attempt.BUDGET
    half = attempt.over_limits(config.Config(timeout=0.5), 1, 0, 2, 9, 1, ("exercise", "f"))
    assert half == "went over the time limit of 0.5 s"


# --- 5. settling ---------------------------------------------------------------------------


def settle(ev, breach=None, status=0, skip=None):
    skip, skipped = set() if skip is None else skip, Notes()
    stop = attempt.settle(ev, breach, status, skip, skipped, LIMITS.budget)
    return stop, skip, skipped


def test_a_cell_that_started_and_never_ended_is_skipped_with_its_sentence():
    ev = events()
    say(ev, *cells_ok(1), {"cell": 1, "status": "start"})
    stop, skip, skipped = settle(ev, "went over the time limit of 20 s", -9)
    assert (stop, skip) == ("", {1})
    assert skipped == ["cell 2 went over the time limit of 20 s; it was skipped"]
    assert ev.pending == ["f", "g"] and ev.sub.answers == {}  # tried again without it
    crashed = events()
    say(crashed, {"cell": 0, "status": "start"}, {"cell": 0, "status": "ok", "error": ""})
    assert settle(crashed, None, -11)[2] == ["cell 1 crashed its process (SIGSEGV); it was "
                                             "skipped"]  # the last cell that started


def test_an_exit_after_the_last_exercise_started_is_that_exercises_answer():
    ev = events()
    say(ev, *cells_ok(), {"exercise": "f", "status": "start"}, done("f", [1, 2]),
        {"exercise": "g", "status": "start"})
    assert settle(ev, None, 3) == ("", set(), [])
    assert ev.sub.answers == {"f": [1, 2], "g": "ended the process (exit code 3)"}
    assert ev.pending == []


def test_a_limit_during_an_exercise_is_that_exercises_answer():
    ev = events()
    say(ev, *cells_ok(), {"exercise": "f", "status": "start"})
    memory = "went over the memory limit of 1200 MB (301 MB of it in scratch files)"
    assert settle(ev, memory, -9) == ("", set(), [])
    assert ev.sub.answers == {"f": memory} and ev.pending == ["g"]


def test_a_crash_before_any_stage_is_the_first_pending_exercises_answer():
    ev = events()
    assert settle(ev, None, -9) == ("", set(), [])
    assert ev.sub.answers == {"f": "crashed its process (SIGKILL)"} and ev.pending == ["g"]


def test_no_answer_at_all():
    ev = events()
    say(ev, *cells_ok(), {"finished": True})
    assert settle(ev) == ("", set(), [])
    assert ev.sub.answers == {"f": NO_ANSWER, "g": NO_ANSWER} and ev.pending == []


def test_the_budget_running_out_stops_the_group():
    ev = events()
    say(ev, *cells_ok(), {"exercise": "f", "status": "start"})
    stop, skip, skipped = settle(ev, attempt.BUDGET, -9)
    assert stop == "was not run: the submission's time budget of 30 s ran out"
    assert ev.sub.answers == {"f": "went over the submission's time budget of 30 s"}
    assert ev.pending == ["g"] and (skip, skipped) == (set(), [])  # g gets `stop` (Run)
    in_a_cell = events()
    say(in_a_cell, {"cell": 0, "status": "start"})
    assert settle(in_a_cell, attempt.BUDGET, -9) == (stop, set(), [])
    assert in_a_cell.sub.answers == {}


def test_a_flood_is_the_floods_answer_even_when_the_child_ends_well():
    ev = events(bound=10)
    say(ev, *cells_ok(), {"exercise": "f", "status": "start"})
    say(ev, b"z" * 5000 + b"\n", {"finished": True})  # (a flood is told once f is open)
    assert settle(ev) == ("", set(), [])
    assert ev.sub.answers == {"f": FLOODED, "g": NO_ANSWER}


def test_walls_that_failed_stop_the_group():
    ev = events()
    say(ev, {"walls": "failed", "why": "could not build the sandbox's walls: no /proc"})
    assert settle(ev, None, walls.FAILED) == (attempt.NO_SANDBOX, set(), [])
    assert attempt.NO_SANDBOX == "was not run: the grader could not build its sandbox"
    assert ev.sub.answers == {} and ev.pending == ["f", "g"]
    forged = events()  # the exit status alone, or the event alone, is a plain failure
    say(forged, {"cell": 0, "status": "start"})
    assert settle(forged, None, walls.FAILED)[:2] == ("", {0})


# --- 6. one stage's end --------------------------------------------------------------------


def finish(event, line=None, bound=2**20, pending=("f",)):
    sub, pending = submission(), list(pending)
    line = wire.dumps(event)[:-1] if line is None else line
    attempt.finish_stage(sub, event, attempt.event_stage(event), pending, {"f": bound},
                         {"f": 2}, line)
    return sub.answers.get("f", "(none)"), pending


def test_an_exercises_answers_are_bounded_counted_and_decoded():
    array = np.arange(3, dtype=np.float32)
    got, pending = finish(done("f", [array, 2.0]))
    assert np.array_equal(got[0], array) and got[1] == 2.0 and pending == []
    raised = finish({**done("f", [1]), "answers": [1, {"__raised__": ["E", "m", "l"]}]})[0]
    assert raised == [1, Raised("E", "m", "l")]
    assert finish(done("f", [1])) == ("did not return one answer per trial", [])
    assert finish(done("f", None)) == ("did not return one answer per trial", [])
    assert finish(done("f", [None, None], defined=False)) == (None, [])
    bomb = {**done("f", []), "answers": [{"__array__": ["float64", [2**29], "AAAA"]}, 1]}
    assert finish(bomb) == ("sent back an answer that is not plain data (an array larger than "
                            "its trial allows, or with missing data)", [])
    long = wire.dumps(done("f", [1, 2]))[:-1] + b" " * 5000
    assert finish(done("f", [1, 2]), line=long, bound=10) == (FLOODED, [])
    assert finish({"exercise": "f", "status": "start"}) == ("(none)", ["f"])
    assert finish(done("f", [1, 2]), pending=()) == ("(none)", [])


def test_a_cells_end_is_a_note_only_when_it_raised():
    sub = submission()
    for event in ({"cell": 1, "status": "ok", "error": ""}, {"cell": 1, "status": "start"},
                  {"cell": 1, "status": "error", "error": "ZeroDivisionError: division by zero"}):
        attempt.finish_stage(sub, event, ("cell", 1), ["f"], {}, {}, b"")
    assert sub.notes == ["cell 2 raised ZeroDivisionError: division by zero"]


# --- 2. the child, and the loop that reads it: a real NumPy-only zygote ----------------------


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    work = tmp_path_factory.mktemp("zygote")
    prefix, _ = procs.numpy_only(work)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "LANG": "C.UTF-8"}
    with open(work / "zygote.log", "wb") as log:
        made = procs.Zygote("numpy", [prefix], env, log)
    yield made
    made.close()


class FromStage:
    """The grader's clock (time.monotonic()), but standing still until ``stage`` of ``events``
    starts: a short time limit is kept by the stage under test, however long a loaded machine
    takes to fork the child and run the cells before it (issue 34)."""

    def __init__(self, stage):
        self.stage, self.events, self.zero = stage, None, None

    def __call__(self):
        if self.zero is None:
            if self.events is None or self.events.stage != self.stage:
                return 0.0
            self.zero = time.monotonic()
        return time.monotonic() - self.zero


def attempt_once(zygote, tmp_path, cells, trials, limits=LIMITS, folder="job", clock=None):
    """One attempt of a notebook of ``cells`` at exercise ``f`` (``trials``), as Run makes it
    without walls, in ``tmp_path / folder`` (None: a folder that does not exist), by ``clock``
    (a :class:`FromStage`; None: the grader's): ``(stop, answers, skip, skipped, status,
    notes)``."""
    now = clock or time.monotonic
    sub = Submission(path=tmp_path / "s.ipynb", name="s", chapter="ch", cells=cells)
    sub.deadline = now() + limits.budget
    pending, skip, skipped = ["f"], set(), Notes()
    workdir = tmp_path / (folder or "missing")
    if folder:
        attempt.make_workdir(workdir)
    job = attempt.job(sub, pending, skip, {"f": trials}, {"HOME": str(workdir)}, workdir,
                      limits)
    child = attempt.Child(zygote, job, walled=False)
    ev = attempt.Events(sub, attempt.stages(len(cells), skip, pending), pending, {"f": 2**20},
                        {"f": len(trials)}, limits, clock=now)
    if clock:
        clock.events = ev
    try:
        breach = attempt.watch(child, ev, limits, sub, clock=now)
    finally:
        status = child.end()
    stop = attempt.settle(ev, breach, status, skip, skipped, limits.budget)
    return stop, sub.answers, skip, skipped, status, sub.notes


TWO = [{"args": [1], "kwargs": {}}, {"args": [2.5], "kwargs": {}}]


def test_a_real_child_answers(zygote, tmp_path):
    cells = ["def f(x):\n    return x * 2\n", "1 / 0"]
    stop, answers, skip, skipped, _, notes = attempt_once(zygote, tmp_path, cells, TWO)
    # (its exit status is not asserted: once it closed its pipe the grader kills what is left,
    # which may be the child itself on its way out; every exercise has answered by then)
    assert (stop, answers, skip, skipped) == ("", {"f": [2, 5.0]}, set(), [])
    assert notes == ["cell 2 raised ZeroDivisionError: division by zero"]


def test_a_real_child_that_exits_in_an_exercise(zygote, tmp_path):
    cells = ["import os\ndef f(x):\n    os._exit(3)\n"]
    stop, answers, *_, status, _ = attempt_once(zygote, tmp_path, cells, TWO)
    assert (stop, answers, status) == ("", {"f": "ended the process (exit code 3)"}, 3)


def test_a_real_child_over_its_cells_time_limit_or_memory(zygote, tmp_path):
    """Either limit, in the second cell (a 1.5 s limit counted from its own start)."""
    cells = ["x = 1", "import time\ntime.sleep(60)\n"]
    quick = config.Config(timeout=1, cell_timeout=1.5, budget=30, memory=1200)
    stop, answers, skip, skipped, status, _ = attempt_once(zygote, tmp_path, cells, TWO, quick,
                                                           clock=FromStage(("cell", 1)))
    assert (stop, answers, skip, status != 0) == ("", {}, {1}, True)
    assert skipped == ["cell 2 went over the time limit of 1.5 s; it was skipped"]
    cells[1] = "import numpy, time\nx = numpy.ones(2**25)\ntime.sleep(60)\n"  # 256 MB
    small = config.Config(timeout=1, cell_timeout=30, budget=30, memory=150)
    stop, answers, skip, skipped, status, _ = attempt_once(zygote, tmp_path, cells, TWO, small,
                                                           folder="again")
    assert (stop, answers, skip, status != 0) == ("", {}, {1}, True)
    assert skipped == ["cell 2 went over the memory limit of 150 MB; it was skipped"]


def test_a_real_child_keeps_the_output_limit_its_job_carries(zygote, tmp_path):
    """--max-output reaches the child in its job: a file over it cannot be written."""
    cells = ["open('big', 'wb').write(b'x' * (2 * 2**20))",
             "def f(x):\n    return x\n"]
    *_, notes = attempt_once(zygote, tmp_path, cells, TWO, config.Config(max_output=1))
    assert notes == ["cell 1 raised OSError: [Errno 27] File too large"]
    *_, notes = attempt_once(zygote, tmp_path, cells, TWO, config.Config(max_output=3),
                             folder="again")
    assert notes == []


def test_a_real_child_whose_folder_cannot_be_entered_says_its_walls_failed(zygote, tmp_path):
    stop, answers, *_, status, _ = attempt_once(zygote, tmp_path, ["x = 1"], TWO,
                                                folder=None)
    assert (stop, answers, status) == (attempt.NO_SANDBOX, {}, walls.FAILED)


def test_a_real_child_makes_magics_plain_python_under_its_own_limits(zygote, tmp_path):
    """IPython's magics are transformed in the child (they do nothing there), and a cell whose
    transformation takes too long is the child's time, not the grader's: it is skipped."""
    cells = ["%time y = 3\n!ls\nx = 2\n", "def f(v):\n    return v * x\n",
             "%%time\nz = 1\n", "not python at all\n"]
    stop, answers, skip, skipped, _, notes = attempt_once(zygote, tmp_path, cells, TWO)
    assert (stop, answers, skip, skipped) == ("", {"f": [2, 5.0]}, set(), [])
    assert notes == ["cell 4 raised SyntaxError: invalid syntax (<cell 4>, line 1)"]
    cells = ["def f(v):\n    return v * 2\n", "%time x = 1\n" * 2000]  # 500 passes of it
    quick = config.Config(timeout=5, cell_timeout=1.5, budget=30, memory=1200)
    stop, answers, skip, skipped, status, _ = attempt_once(zygote, tmp_path, cells, TWO, quick,
                                                           folder="again",
                                                           clock=FromStage(("cell", 1)))
    assert (stop, answers, skip, status != 0) == ("", {}, {1}, True)
    # cut at the cell's limit (no wall-clock assertion: a loaded machine is slower, issue 34)
    assert skipped == ["cell 2 went over the time limit of 1.5 s; it was skipped"]


def test_memfd_files_count_as_memory():
    """Memory in memfd files shows in no resident size: the grader counts them (each once)."""
    fds = [os.memfd_create("counted") for _ in range(3)]
    try:
        before = procs.memfd_mb([os.getpid()])
        for fd in fds:
            os.write(fd, b"x" * 4 * 2**20)
        dup = os.dup(fds[0])  # the same file twice: counted once
        assert 11.9 < procs.memfd_mb([os.getpid()]) - before < 12.5
        os.close(dup)
    finally:
        for fd in fds:
            os.close(fd)


def test_a_cgroup_bounds_processes_and_threads():
    """Where the machine has cgroups (root, a delegated v2 slice), a child's group holds at
    most its processes and threads, and is gone when closed."""
    import subprocess
    import sys

    cgroups = procs.Cgroups.find()
    if cgroups is None:
        pytest.skip("no cgroup with the memory and pids controllers can be made here")
    group = cgroups.group(256, 20)
    try:
        threads = subprocess.Popen(
            [sys.executable, "-c",
             "import sys, threading\n"
             "sys.stdin.readline()\n"
             "stop, made = threading.Event(), 0\n"
             "try:\n"
             "    for _ in range(100):\n"
             "        threading.Thread(target=stop.wait, daemon=True).start()\n"
             "        made += 1\n"
             "except RuntimeError:\n"
             "    pass\n"
             "print(made)\n"
             "stop.set()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        group.add(threads.pid)
        made, _ = threads.communicate("go\n", timeout=60)
        assert 10 <= int(made) < 20, made  # the interpreter's own thread counts too
        assert not group.oom_killed()
    finally:
        group.close()
        cgroups.close()
    assert not any(os.path.exists(d) for d in group.dirs.values())
    assert procs.ceiling(600) == 856 and procs.ceiling(2048) == 2560
