"""One attempt at a submission: one child runs the notebook's cells and answers its exercises.

:class:`rnnbook.grading.run.Run` grades a submission's group of exercises (by hand, or with
TensorFlow) in as many attempts as it takes: a child that crashes or goes over a limit is
started again without the cell or exercise that did it. An attempt goes through these stages,
each testable on its own (tests/test_attempt.py):

1. :func:`job` and :func:`stages`: what the child is sent (the cells, which to skip, each
   exercise's trials, its environment, folder and walls) and the order of the stages it must
   announce (the cells, then the exercises). Pure.
2. :class:`Child`: the child forked on a zygote (:mod:`.procs`), its events pipe, its memory.
3. :class:`Events`: what the child said so far, fed one chunk (or line) at a time: which stage
   of the plan is open and until when, which exercises flooded the pipe, why the walls failed.
   A stage only moves forward through the plan; the end of a stage goes to :func:`finish_stage`.
4. :func:`over_limits`: memory (resident + scratch), the submission's budget, the open stage's
   time limit: why the child must be stopped, or None. Pure.
5. :func:`settle`: from the events, the breach and the exit status, what the attempt gave
   (answers, exercises still pending, cells to skip next time) and whether to stop the group.
6. :func:`finish_stage`: the end of one cell (its error, as a note) or one exercise (its
   answers, decoded within their bound). Pure.

:func:`watch` is the loop that ties 2, 3 and 4 together. Every sentence here ends up in a
student's feedback: change one and the reports change.
"""
from __future__ import annotations

import json
import os
import pathlib
import select
import time
from typing import TYPE_CHECKING, Any, Callable, Literal

from rnnbook.grading import procs, walls, wire
from rnnbook.grading.config import child_limits
from rnnbook.grading.job import Job
from rnnbook.plaindata import Raised

if TYPE_CHECKING:
    from rnnbook.grading.config import Config
    from rnnbook.grading.results import Notes, Submission

#: a stage of an attempt: a cell (its index) or an exercise (its name)
Stage = tuple[Literal["cell"], int] | tuple[Literal["exercise"], str]

BUDGET = "budget"  # the breach that stops the whole submission, not one stage
NO_SANDBOX = "was not run: the grader could not build its sandbox"
FLOODED = "sent back more data than its trials allow"
NO_ANSWER = "sent back no answer (the notebook's code got in the way of the grader's)"


# --- 1. the job ----------------------------------------------------------------------------


def job(sub: Submission, pending: list[str], skip: set[int], trials: dict[str, list[Any]],
        env: dict[str, str], workdir: pathlib.Path, config: Config, drop: int | None = None,
        walls_spec: dict[str, Any] | None = None, pids_cgroup: bool = False) -> Job:
    """What the child is sent: ``sub``'s cells (but ``skip``), each exercise of ``pending``
    with its ``trials`` (``{name: [trial]}``), ``env``, its working folder, ``config``'s
    child-side limits, the uid to drop to (no walls, as root) and the walls (None: none);
    behind the walls, the scratch pool's size and, unless a ``pids_cgroup`` bounds them, the
    number of processes and threads it may have (RLIMIT_NPROC)."""
    walled = walls_spec is not None
    return Job(str(workdir), env, child_limits(config), chapter=sub.chapter,
               cells=sub.cells, skip=sorted(skip),
               exercises=[{"name": n, "trials": trials[n]} for n in pending], drop_to=drop,
               scratch_mb=walls.scratch_mb(config.memory) if walled else None,
               walls=walls_spec,
               processes=config.processes if walled and not pids_cgroup else None)


def stages(cells: int, skip: set[int], pending: list[str]) -> list[Stage]:
    """The stages the child announces, in order: ``("cell", index)`` for each of ``cells``
    cells not in ``skip``, then ``("exercise", name)`` for each of ``pending``."""
    cell: list[Stage] = [("cell", i) for i in range(cells) if i not in skip]
    return cell + [("exercise", n) for n in pending]


def time_limit(limits: Config, stage: Stage | None) -> float:
    """The seconds ``stage`` may take (before the first cell starts: a cell's)."""
    return limits.timeout if stage and stage[0] == "exercise" else limits.cell_timeout


def make_workdir(workdir: pathlib.Path, drop: int | None = None) -> None:
    """Without walls: the child's working folder, its own (``drop``'s, as root)."""
    workdir.mkdir()
    os.chmod(workdir, 0o700)
    if drop is not None:
        os.chown(workdir, drop, drop)


# --- 2. the child --------------------------------------------------------------------------


class Child:
    """A child forked on ``zygote`` for ``job``: its events pipe, its keeper (the child and
    everything it starts are below it), behind the walls the meter of its scratch pool, and
    where the machine has one, its cgroup (``group``, :class:`~.procs.Group`: the kernel's
    bound on its memory and processes)."""

    def __init__(self, zygote: procs.Zygote, job: Job, walled: bool,
                 group: procs.Group | None = None) -> None:
        payload = json.dumps(wire.encode(job.plain())).encode()
        self.zygote, self.group = zygote, group
        self.scratch, self.oom = 0.0, False  # the last scratch reading; killed by the kernel
        self.meter = procs.Meter() if walled else None
        self.pipe, w = os.pipe()
        try:
            self.token, self.keeper = zygote.spawn(payload, w,
                                                   self.meter.fd if self.meter else None,
                                                   group)
        except BaseException:
            os.close(self.pipe)
            if self.meter:
                self.meter.close()
            raise
        finally:
            os.close(w)

    def read(self, timeout: float = 0.05) -> bytes | None:
        """What the child wrote since (b"" once it closed the pipe), or None: nothing yet."""
        ready, _, _ = select.select([self.pipe], [], [], timeout)
        return os.read(self.pipe, 1 << 16) if ready else None

    def memory(self, limit: float = float("inf")) -> tuple[float, float]:
        """``(resident, scratch)``: MB below the keeper, resident (each page once, where
        together they are near ``limit`` MB: :func:`~.procs.rss_mb`) or in the memfd files it
        holds (memory no resident size shows); MB in the scratch pool."""
        below = procs.descendants(self.keeper)
        self.scratch = self.meter.mb() if self.meter else 0.0
        memfd = procs.memfd_mb(below)
        resident = procs.rss_mb(below, above=limit - memfd - self.scratch) + memfd
        return resident, self.scratch

    def end(self) -> int | None:
        """Kill whatever is left of the child; its exit status (None: it never ended)."""
        try:
            procs.kill_below(self.keeper)
            os.close(self.pipe)
            status = self.zygote.wait(self.token, 10)
            if status is None:
                procs.kill(self.keeper)
                status = self.zygote.wait(self.token, 10)
            return status
        finally:
            if self.meter:
                self.meter.close()
            if self.group:
                self.oom = self.group.oom_killed()
                self.group.close()

    def killed_for_memory(self, limits: Config) -> str | None:
        """After :meth:`end`: the breach when the kernel killed the child at its cgroup's
        memory limit (before the grader's reading saw it), or None."""
        return memory_breach(limits, self.scratch) if self.oom else None


# --- 3. the events -------------------------------------------------------------------------


class Events:
    """What the child said so far. ``stage`` is the last stage of ``plan`` that started (None:
    none yet), ``open`` whether it has not ended, ``deadline`` when its time is up (by
    ``clock``); ``flooded`` the exercises that sent a line too long while open;
    ``walls_failed`` why the child could not build its walls (its first event said so);
    ``times`` when each stage started and ended, by ``clock`` (``--profile``).
    A stage's end is finished by :func:`finish_stage`, into ``sub`` and ``pending``."""

    def __init__(self, sub: Submission, plan: list[Stage], pending: list[str],
                 bounds: dict[str, int], counts: dict[str, int], limits: Config,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sub, self.plan, self.pending = sub, plan, pending
        self.bounds, self.counts, self.limits, self.clock = bounds, counts, limits, clock
        self.position = {stage: k for k, stage in enumerate(plan)}
        self.reader = wire.LineReader(max(wire.line_bound(b) for b in bounds.values()))
        self.at, self.open, self.first = -1, False, True
        self.deadline = clock() + limits.cell_timeout  # until the first cell starts
        self.flooded: set[str] = set()
        self.walls_failed = ""
        self.times: list[tuple[Stage, float, float]] = []

    @property
    def stage(self) -> Stage | None:
        return self.plan[self.at] if self.at >= 0 else None

    def feed(self, chunk: bytes) -> None:
        """Bytes from the pipe: whole lines are read as events; a line too long is dropped
        (and, while an exercise is open, that exercise flooded)."""
        lines = self.reader.feed(chunk)
        stage = self.stage  # not None while open
        if self.reader.dropped and self.open and stage and stage[0] == "exercise":
            self.flooded.add(stage[1])  # a line too long while it answered
        self.reader.dropped = False
        for line in lines:
            self.line(line)

    def line(self, line: bytes) -> None:
        """One line (bytes, no newline): a stage later in the plan starts, or the open stage
        ends; anything else (malformed, out of order, repeated) changes nothing."""
        event = parse_event(line)
        if event is None:
            return
        if self.first and "walls" in event:
            self.walls_failed = str(event.get("why", ""))[:300]
        self.first = False
        stage = event_stage(event)
        if stage is None:  # neither starts nor ends a stage
            return
        if event.get("status") == "start" and self.position.get(stage, -1) > self.at:
            self.at, self.open = self.position[stage], True
            now = self.clock()
            self.deadline = now + time_limit(self.limits, stage)
            self.times.append((stage, now, now))
        elif self.open and stage == self.stage:
            finish_stage(self.sub, event, stage, self.pending, self.bounds, self.counts, line)
            self.times[-1] = (stage, self.times[-1][1], self.clock())
            self.open = stage[0] == "exercise" and stage[1] in self.pending


def event_stage(event: dict[str, Any]) -> Stage | None:
    """The stage an event is about: ``("cell", index)``, ``("exercise", name)`` or None."""
    if "cell" in event:
        return ("cell", event["cell"])
    if "exercise" in event:
        return ("exercise", event["exercise"])
    return None


def parse_event(line: bytes) -> dict[str, Any] | None:
    """A well-formed event, or None."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    status = event.get("status")
    if "walls" in event:
        return event
    if "cell" in event:
        ok = (type(event["cell"]) is int and status in ("start", "ok", "error")
              and isinstance(event.get("error", ""), str))
    elif "exercise" in event:
        ok = isinstance(event["exercise"], str) and status in ("start", "done")
    else:
        ok = list(event) == ["finished"] and event["finished"] is True
    return event if ok else None


# --- 4. the limits -------------------------------------------------------------------------


def over_limits(limits: Config, rss: float, scratch: float, now: float,
                budget_deadline: float, stage_deadline: float,
                stage: Stage | None) -> str | None:
    """Why the child must stop (memory first, then the submission's budget: :data:`BUDGET`,
    then ``stage``'s time limit), or None. MB and seconds of one clock."""
    if rss + scratch > limits.memory:
        return memory_breach(limits, scratch)
    if now > budget_deadline:
        return BUDGET
    if now > stage_deadline:
        return f"went over the time limit of {time_limit(limits, stage):g} s"
    return None


def memory_breach(limits: Config, scratch: float) -> str:
    """The sentence for a child over ``limits.memory`` MB, ``scratch`` MB of it in files."""
    return f"went over the memory limit of {limits.memory} MB" + (
        f" ({scratch:.0f} MB of it in scratch files)" if scratch >= 1 else "")


def watch(child: Child, events: Events, limits: Config, sub: Submission,
          clock: Callable[[], float] = time.monotonic) -> str | None:
    """Feed ``events`` what ``child`` writes until it closes its pipe (None) or breaks a limit
    (the breach, see :func:`over_limits`). Keeps ``sub.peak_mb``."""
    last_rss = 0.0
    while True:
        chunk = child.read()
        if chunk == b"":
            return None
        if chunk:
            events.feed(chunk)
        rss_now, scratch = child.memory(limits.memory)
        rss, last_rss = min(rss_now, last_rss), rss_now  # two readings in a row
        sub.peak_mb = max(sub.peak_mb, rss + scratch)
        breach = over_limits(limits, rss, scratch, clock(), sub.deadline, events.deadline,
                             events.stage)
        if breach:
            return breach


# --- 5. settling ---------------------------------------------------------------------------


def settle(events: Events, breach: str | None, status: int | None, skip: set[int],
           skipped: Notes, budget: float) -> str:
    """What the attempt gave, once the child ended with ``status`` after ``breach``: answers
    into ``events.sub.answers`` (each one leaves ``events.pending``), the cell that killed the
    child into ``skip`` (its note into ``skipped``). Returns why the group must stop (walls,
    budget: every exercise still pending gets it), or ""."""
    sub, pending = events.sub, events.pending
    if events.walls_failed and status == walls.FAILED:
        return NO_SANDBOX
    stage = events.stage
    if breach == BUDGET:
        if stage and stage[0] == "exercise" and stage[1] in pending:
            sub.answers[stage[1]] = (f"went over the submission's time budget of "
                                     f"{budget:g} s")
            pending.remove(stage[1])
        return budget_spent(budget)
    why = breach or (procs.ended(status) if status != 0 else "")
    for name in events.flooded & set(pending):
        sub.answers[name] = FLOODED
        pending.remove(name)
    if not why:
        for name in list(pending):
            sub.answers[name] = NO_ANSWER
            pending.remove(name)
        return ""
    if stage and stage[0] == "exercise" and stage[1] in pending:
        sub.answers[stage[1]] = why
        pending.remove(stage[1])
    elif stage and stage[0] == "cell":  # the last cell that started (whatever it said since)
        skip.add(stage[1])
        skipped.add(f"cell {stage[1] + 1} {why}; it was skipped")
    elif pending:
        sub.answers[pending.pop(0)] = why
    return ""


def budget_spent(budget: float) -> str:
    """What each exercise still pending says once the submission's ``budget`` ran out."""
    return f"was not run: the submission's time budget of {budget:g} s ran out"


# --- 6. one stage's end --------------------------------------------------------------------




def finish_stage(sub: Submission, event: dict[str, Any], stage: Stage, pending: list[str],
                 bounds: dict[str, int], counts: dict[str, int], line: bytes) -> None:
    """The end of ``stage``: a cell's error becomes a note; an exercise's answers (``line``,
    parsed as ``event``) are checked against its bound (``bounds``: array bytes) and its
    number of trials (``counts``) and decoded into ``sub.answers``; it leaves ``pending``."""
    if stage[0] == "cell":
        if event["status"] == "error":
            sub.notes.add(f"cell {stage[1] + 1} raised {event.get('error', '')}")
        return
    name = stage[1]
    if event["status"] != "done" or name not in pending:
        return
    pending.remove(name)
    if len(line) > wire.line_bound(bounds[name]):
        sub.answers[name] = FLOODED
        return
    if not event.get("defined"):
        sub.answers[name] = None
        return
    try:
        answers = wire.decode(event.get("answers"), bounds[name], raised=Raised)
    except (wire.WireError, ValueError, TypeError) as error:
        sub.answers[name] = f"sent back an answer that is not plain data ({error})"
        return
    if not isinstance(answers, list) or len(answers) != counts[name]:
        sub.answers[name] = "did not return one answer per trial"
    else:
        sub.answers[name] = answers
