"""Where a grading run's wall time goes (``--profile``): the grader's own spans, its zygotes'
(each says when its imports, prebuilds and checks ended, in its ``ready`` message) and each
child's stages (the cells and exercises it announced), on one clock.

Every time is ``time.monotonic()`` (``CLOCK_MONOTONIC``, one clock for every process of the
machine), shown in seconds since the grader's process started (:func:`process_start`: the
kernel's start time of the process, so Python's own start and the grader's imports count).
The spans are recorded on every run (a few list appends); ``--profile`` prints them on stderr
(``grade: profile ...`` lines) and writes them to ``--out``'s ``profile.csv``. Spans overlap:
the zygotes start while the grader goes on, the oracle runs in a thread.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass
from typing import Iterator

PROFILE = "profile.csv"  # in --out, with --profile


def process_start(pid: int | str = "self") -> float:
    """When process ``pid`` started, on ``time.monotonic()``'s clock (to the kernel's tick):
    its age is the boot clock now less its start time in ``/proc/PID/stat`` (ticks since
    boot)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat(5)
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError):
        age = 0.0
    return time.monotonic() - max(age, 0.0)


@dataclass(frozen=True)
class Span:
    """``what`` in ``who`` (the grader, a zygote, a child), from ``start`` to ``end``."""

    who: str
    what: str
    start: float
    end: float


class Profile:
    """The spans of one run (thread-safe), from the process's start (:attr:`born`)."""

    def __init__(self) -> None:
        self.born = process_start()
        self.spans: list[Span] = []
        self._lock = threading.Lock()

    def add(self, who: str, what: str, start: float, end: float | None = None) -> None:
        with self._lock:
            self.spans.append(Span(who, what, start, time.monotonic() if end is None else end))

    @contextlib.contextmanager
    def span(self, who: str, what: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.add(who, what, start)

    def ordered(self) -> list[Span]:
        with self._lock:
            return sorted(self.spans, key=lambda s: (s.start, s.end))

    def lines(self) -> list[str]:
        """One line per span: ``  0.00-  0.04   0.04 s  grader: python start``."""
        return [f"{s.start - self.born:6.2f}-{s.end - self.born:6.2f} {s.end - s.start:6.2f} s  "
                f"{s.who}: {s.what}" for s in self.ordered()]

    def csv(self) -> str:
        rows = ["who,what,start,end,seconds"]
        rows += [f"{s.who},{s.what},{s.start - self.born:.3f},{s.end - self.born:.3f},"
                 f"{s.end - s.start:.3f}" for s in self.ordered()]
        return "\n".join(rows) + "\n"


#: when the command line's ``main`` was entered (``python -m rnnbook.grading``): the
#: interpreter's start and the grader's imports end there
ENTERED: list[float] = []
