"""The output folder's lock: one grading run at a time writes into a ``--out`` folder.

A run holds an exclusive ``flock`` on :data:`LOCK` in the folder from before it reads the
submissions until its last output is written; the file says which run holds it (its process
id and start time). A second run into the folder stops at once, naming the first. The kernel
lets go of the lock when its process ends, however it ends: a file left by a run that was
killed (the lock free, the record still there) is taken over with a note.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pathlib
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

LOCK = ".grading.lock"  # (a report folder's name never starts with a dot: results.names)


class FolderBusy(Exception):
    """Another run holds the folder's lock (one line, names that run)."""


@dataclass(frozen=True)
class Holder:
    """The run that holds (or held) a folder's lock."""

    pid: int
    started: str  # UTC, to the second

    def __str__(self) -> str:
        return f"process {self.pid}, started {self.started}"

    @classmethod
    def now(cls) -> Holder:
        return cls(os.getpid(), time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))

    @classmethod
    def read(cls, fd: int) -> Holder | None:
        """The record in the lock file open at ``fd``; None when it is empty or not one."""
        try:
            data = json.loads(os.pread(fd, 4096, 0) or b"null")
            return cls(int(data["pid"]), str(data["started"]))
        except (OSError, ValueError, TypeError, KeyError):
            return None


def _open(path: pathlib.Path) -> int:
    """A descriptor on the lock file (made if missing; never through a link). A file this
    user may not write is opened to read: enough to see who holds it."""
    flags = os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, os.O_RDWR | flags, 0o644)
    except PermissionError:
        return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)


@contextlib.contextmanager
def hold(folder: pathlib.Path, say: Callable[[str], None]) -> Iterator[Holder]:
    """Hold ``folder``'s lock for the ``with`` block (``folder`` exists). :class:`FolderBusy`
    when another run holds it; a record left by a run that ended without letting go is
    taken over, and ``say`` (a line for the instructor) told so."""
    path = folder / LOCK
    while True:
        fd = _open(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = Holder.read(fd)
            os.close(fd)
            who = f"another grading run ({other})" if other else "another grading run"
            raise FolderBusy(f"{folder} is in use by {who}; wait for it to end or choose "
                             "another --out") from None
        except BaseException:
            os.close(fd)
            raise
        try:  # the file its last holder removed (between our open and flock) is no lock
            if os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        left = Holder.read(fd)
        if left is not None:
            say(f"note: {folder} was left locked by a grading run that ended without "
                f"letting go ({left}); this run takes the lock over")
        me = Holder.now()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(asdict(me)).encode() + b"\n", 0)
            yield me
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)  # (still ours: a waiting run checks the file it locked)
    finally:
        os.close(fd)
