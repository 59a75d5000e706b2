"""Process control on the grader's side: the zygotes, the children's trees, memory, killing.

A :class:`Zygote` is a process that imported what its children need once (NumPy only, or
TensorFlow with rnnbook's learner side) and forks a child per job (:mod:`.zygote`). The grader
talks to it on a SEQPACKET socket; each job gets its own events pipe and job pipe.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Sequence

from rnnbook.environment import TF_ENV

HERE = pathlib.Path(__file__).resolve().parent
ZYGOTE = HERE / "zygote.py"
IPYTHON = "RNNBOOK_IPYTHON"  # IPython's folder, in a zygote's environment (zygote.IPYTHON)
ZYGOTE_LOG = "zygotes.log"  # in the run's folder: the zygotes' output
#: a child's thread pools, one thread each: --workers children share the cores
ONE_CORE = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1"}


class ZygoteError(RuntimeError):
    """The zygote could not start (its imports failed) or went away."""


class ZygoteFailed(ZygoteError):
    """The zygote of ``kind`` could not start: no child of its kind can run in this run.
    ``module``: what its Python could not import, so the run can say how to see why."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(f"the {kind} zygote failed: {why}")
        self.module = "tensorflow" if kind == "tf" else "numpy"


class Zygote:
    """One zygote process of ``kind`` ("numpy" or "tf")."""

    def __init__(self, kind: str, args: list[str], env: dict[str, str], log: Any) -> None:
        self.kind = kind
        self.started = time.monotonic()  # (--profile: the zygote's spans, from here)
        self.times: list[list[Any]] = []  # [what, start, end] of its start-up, once ready
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        flags = ["-I", "-S"] if kind == "numpy" else ["-I"]
        fds, passed = str(theirs.fileno()), [theirs.fileno()]
        #: the TensorFlow zygote's oracle (:meth:`oracle`): where the request goes, where the
        #: answers come from (None once taken)
        self.ask: int | None = None
        self.answers: int | None = None
        if kind == "tf":
            asked, self.ask = os.pipe()
            self.answers, answered = os.pipe()
            fds, passed = f"{fds},{asked},{answered}", [*passed, asked, answered]
        try:
            self.proc = subprocess.Popen(
                [sys.executable, *flags, str(ZYGOTE), kind, fds, *map(str, args)],
                pass_fds=passed, env={**env, IPYTHON: ipython_folder()},
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/")
        finally:
            for fd in passed:
                os.close(fd)
        self.sock = ours
        self.lock = threading.Lock()
        self.changed = threading.Condition()
        self.forked: dict[int, int] = {}  # token -> pid
        self.exited: dict[int, int] = {}  # token -> status
        self.ready: bool | str | None = None  # True, or why it failed
        self.tokens = 0
        self.reader = threading.Thread(target=self._read_events, daemon=True)
        self.reader.start()

    def _read_events(self) -> None:
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:
                data = b""
            with self.changed:
                if not data:
                    if self.ready is None:
                        self.ready = "it ended before it was ready"
                    self.gone = True
                    self.changed.notify_all()
                    return
                message = json.loads(data)
                if "ready" in message:
                    self.ready = True
                    self.times = message.get("times", [])
                elif "failed" in message:
                    self.ready = message["failed"]
                elif "forked" in message:
                    self.forked[message["forked"]] = message["pid"]
                elif "exited" in message:
                    self.exited[message["exited"]] = message["status"]
                self.changed.notify_all()

    gone = False

    def wait_ready(self) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self.ready is not None)
        if self.ready is not True:
            raise ZygoteFailed(self.kind, str(self.ready))

    def spawn(self, payload: bytes, events_w: int, meter: int | None = None,
              group: Group | None = None) -> tuple[int, int]:
        """Fork a child for ``payload`` (bytes: the job); returns ``(token, keeper pid)``.
        ``meter``: a :class:`Meter`'s descriptor, where the keeper writes the child's scratch use;
        ``group``: a :class:`Group` the keeper joins before it gets its job (and so before it
        forks the child)."""
        self.wait_ready()
        job_r, job_w = os.pipe()
        with self.lock:
            self.tokens += 1
            token = self.tokens
            try:
                socket.send_fds(self.sock, [json.dumps({"fork": token}).encode()],
                                [events_w, job_r] + ([meter] if meter is not None else []))
            except OSError as error:
                raise ZygoteError(f"the {self.kind} zygote went away ({error})") from None
            finally:
                os.close(job_r)
        with self.changed:
            self.changed.wait_for(lambda: token in self.forked or self.gone)
        if token not in self.forked:
            os.close(job_w)
            raise ZygoteError(f"the {self.kind} zygote went away")
        if group is not None:
            try:
                group.add(self.forked[token])
            except OSError as error:  # the keeper ends, and the grader says why
                kill(self.forked[token])
                os.close(job_w)
                raise ZygoteError(f"could not put the child in its cgroup ({error})") from None
        threading.Thread(target=_write_all, args=(job_w, payload), daemon=True).start()
        return token, self.forked.pop(token)

    def wait(self, token: int, timeout: float | None = None) -> int | None:
        """The exit status of job ``token`` (negative: killed by that signal), or None."""
        with self.changed:
            self.changed.wait_for(lambda: token in self.exited or self.gone, timeout)
            return self.exited.pop(token, None)

    def oracle(self, seed: int | None, wanted: dict[str, list[str]]) -> bytes:
        """The expected answers to ``wanted`` (``{stem: [exercise]}``) on ``seed``'s trials,
        from the TensorFlow zygote's oracle: a fork that the zygote made, with the chapters
        whole, before it served (:func:`rnnbook.expected.answer`'s bytes; ``b""`` if it
        failed before it answered, or was asked before). Nothing ``wanted`` lets it go. Blocks
        until the oracle ends (it ends with the zygote)."""
        with self.lock:
            ask, answers, self.ask, self.answers = self.ask, self.answers, None, None
        if ask is None or answers is None:
            return b""
        request = json.dumps({"seed": seed, "exercises": wanted}).encode() if wanted else b""
        _write_all(ask, request)  # (closes it: the oracle reads to its end)
        found = bytearray()
        try:
            while wanted:
                chunk = os.read(answers, 1 << 20)
                if not chunk:
                    break
                found += chunk
        except OSError:
            found.clear()
        finally:
            os.close(answers)
        return bytes(found)

    def close(self) -> None:
        with self.lock:
            unused, self.ask, self.answers = (self.ask, self.answers), None, None
        for fd in unused:
            if fd is not None:
                os.close(fd)
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()


def child_env(home: str | pathlib.Path) -> dict[str, str]:
    """The whole environment of a zygote and its children (``home``: their HOME)."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            "TMPDIR": "/tmp", "RNNBOOK_GRADING": "1", "MPLBACKEND": "Agg",
            "PYTHONDONTWRITEBYTECODE": "1", **TF_ENV, **ONE_CORE}


def work_folder() -> pathlib.Path:
    """A grading run's own temporary folder (the zygotes' log and home, each child's folder)."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-grade-"))
    os.chmod(work, 0o711)  # (a child run as nobody, without walls, must reach its own folder)
    return work


def numpy_only(work: pathlib.Path) -> tuple[pathlib.Path, list[str]]:
    """A folder under ``work`` holding only NumPy (the NumPy-only zygote's import path), and
    the folders it links to (the walls let the child read them)."""
    prefix = work / "numpy-only"
    prefix.mkdir()
    spec = importlib.util.find_spec("numpy")
    if spec is None or spec.origin is None:
        raise ZygoteError("NumPy cannot be found, so the NumPy-only child cannot start")
    real = pathlib.Path(spec.origin).resolve().parent
    (prefix / "numpy").symlink_to(real)
    dirs = [str(prefix), str(real)]
    libs = real.parent / "numpy.libs"
    if libs.is_dir():
        (prefix / "numpy.libs").symlink_to(libs)
        dirs.append(str(libs))
    return prefix, dirs


class Early:
    """Both zygotes of one ``chapter``, started first thing (Gradescope's side: the bundle
    names the chapter), so that their imports overlap the grader's own: the run takes those
    it needs (``Run.start_zygotes``) and :meth:`close` ends the others. ``work`` is the run's
    folder (:func:`work_folder`); ``root`` the repository the TensorFlow zygote imports."""

    def __init__(self, root: str | pathlib.Path, chapter: str) -> None:
        self.chapter, self.work = chapter, work_folder()
        home = self.work / "zygote-home"
        home.mkdir()
        prefix, self.numpy_dirs = numpy_only(self.work)
        with open(self.work / ZYGOTE_LOG, "ab") as log:  # (each zygote keeps its own copy)
            self.zygotes = {"tf": Zygote("tf", [str(root), chapter], child_env(home), log),
                            "numpy": Zygote("numpy", [str(prefix)], child_env(home), log)}

    def take(self, kind: str, chapters: list[str]) -> Zygote | None:
        """The zygote of ``kind``, if it was started for ``chapters`` (then it is the run's)."""
        if kind == "tf" and chapters != [self.chapter]:
            return None
        return self.zygotes.pop(kind, None)

    def close(self) -> None:
        """End the zygotes no one took."""
        for zygote in self.zygotes.values():
            zygote.close()
        self.zygotes.clear()


def ipython_folder() -> str:
    """IPython's package folder ("" without it): a zygote loads its cell transformer from it."""
    spec = importlib.util.find_spec("IPython")
    return os.path.dirname(spec.origin) if spec and spec.origin else ""


class Meter:
    """Eight bytes of shared memory (a memfd): the bytes in a child's scratch pool, written by
    its keeper (behind the walls; the child itself cannot reach it), read by the grader."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("rnnbook-scratch", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, 8)

    def mb(self) -> float:
        return int.from_bytes(os.pread(self.fd, 8, 0), "little", signed=True) / 2**20

    def close(self) -> None:
        os.close(self.fd)


def _write_all(fd: int, payload: bytes) -> None:
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view[: 1 << 20]):]
    except OSError:
        pass  # the keeper died before it read its job: the grader learns why from its status
    finally:
        os.close(fd)


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (as far as /proc shows them), children first."""
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(c) for c in f.read().split()]
                    found += kids
                    stack += kids
        except (OSError, ValueError):
            continue
    return found


def rss_mb(pids: Sequence[int], above: float = float("inf")) -> float:
    """Resident memory of ``pids`` together, in MB, each page once where it matters: the sum
    of their resident sizes (cheap to read) counts a page that a fork shares with its parent
    in both; where that sum is above ``above`` MB, the shared pages count once: the largest
    process's resident size and what each other one holds on its own (``Private`` of its
    ``smaps_rollup``, read only then: it walks the process's page tables, 60 ms for a
    TensorFlow process holding 1 GB). A process whose own pages cannot be read (not root and
    without walls: it is not dumpable) counts whole, as resident now: one that ended between
    the two readings (its pages gone, none to read) counts nothing, not its size before."""
    sizes = {p: _kb(f"/proc/{p}/status", "VmRSS:") for p in pids}
    total = sum(sizes.values())
    if total / 1024 <= above or len(sizes) < 2:
        return total / 1024
    largest = max(sizes, key=lambda p: sizes[p])
    total = sizes[largest]
    for p in sizes:
        if p != largest:
            own = _kbs(f"/proc/{p}/smaps_rollup")
            private = own.get("Private_Clean", 0) + own.get("Private_Dirty", 0)
            total += min(private, sizes[p]) if own else _kb(f"/proc/{p}/status", "VmRSS:")
    return total / 1024


def _kbs(path: str) -> dict[str, int]:
    """``{key: kB}`` of a /proc file of ``Key:  N kB`` lines ({}: unreadable)."""
    found = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.partition(":")
                with contextlib.suppress(ValueError, IndexError):
                    found[key] = int(value.split()[0])
    except OSError:
        return {}
    return found


def _kb(path: str, key: str) -> int:
    """The number of kB on the line of ``path`` that starts with ``key`` (0: none, unreadable)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and everything below it, in MB (bench, tests)."""
    return rss_mb([pid, *descendants(pid)])


def kill_below(pid: int) -> None:
    """SIGKILL everything below ``pid`` (a keeper: it then cleans up and ends)."""
    for p in reversed(descendants(pid)):
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


def kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def guard_this_process() -> None:
    """No child may read this process's memory (the expected answers live here)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0


def ended(code: int | None) -> str:
    """How a child ended, in words (None: it never did)."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed its process ({name})"
    return f"ended the process (exit code {code})"


# ---------------------------------------------------------------------------------------------
# Accounting: each child's memory and processes, counted and bounded by the kernel where it can


def memfd_mb(pids: Sequence[int]) -> float:
    """MB in the memfd files that ``pids`` hold open (each file once): memory no resident size
    shows until it is mapped. A process whose descriptors cannot be listed adds nothing."""
    seen, total = set(), 0
    for p in pids:
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if not os.readlink(f"/proc/{p}/fd/{fd}").startswith("/memfd:"):
                    continue
                info = os.stat(f"/proc/{p}/fd/{fd}")
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total / 2**20


def _mounts() -> list[tuple[str, str, list[str]]]:
    """``[(mount point, file system type, super options)]`` of this process."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            found.append((fields[4], fields[sep + 1], fields[sep + 3].split(",")))
    return found


def _own_cgroups() -> dict[str, str]:
    """``{controller or "": path}`` from /proc/self/cgroup ("": the version 2 hierarchy)."""
    found = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                found[name] = path
    return found


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def ceiling(memory_mb: int) -> int:
    """The kernel's bound for a limit of ``memory_mb`` MB: a quarter more, at least 256 MB.
    The grader's own count (resident, scratch, memfd files) stops a child at the limit with
    its sentence; the kernel, near the limit, would first stall the child reclaiming the page
    cache, so it only stops what that count does not see (the same sentence)."""
    return memory_mb + max(256, memory_mb // 4)


class Cgroups:
    """The folders under which each child gets a cgroup of its own with the memory and pids
    controllers: one folder (version 2, where the machine delegates both: root, a systemd
    slice with ``Delegate=yes``, a container) or one per controller (version 1, as root).
    :meth:`find` makes them for this run, or returns None where neither can be made."""

    def __init__(self, version: int, tops: dict[str, str]) -> None:
        self.version, self.tops = version, tops  # {"memory": folder, "pids": folder}
        self.made = 0

    @classmethod
    def find(cls) -> Cgroups | None:
        for version in (2, 1):
            tops = {}
            try:
                tops = cls._v2() if version == 2 else cls._v1()
                if tops:
                    return cls(version, tops)
            except OSError:
                for top in dict.fromkeys(tops.values()):
                    with contextlib.suppress(OSError):
                        os.rmdir(top)
        return None

    @staticmethod
    def _v2():
        point = next((m for m, kind, _ in _mounts() if kind == "cgroup2"), None)
        own = _own_cgroups().get("")
        if point is None or own is None:
            return {}
        here = os.path.join(point, own.lstrip("/"))
        if not {"memory", "pids"} <= set(_read(os.path.join(here, "cgroup.controllers")).split()):
            return {}
        if not {"memory", "pids"} <= set(_read(os.path.join(here, "cgroup.subtree_control"))
                                         .split()):
            _write(os.path.join(here, "cgroup.subtree_control"), "+memory +pids")
        top = os.path.join(here, f"rnnbook-grade-{os.getpid()}")
        os.mkdir(top)
        try:
            _write(os.path.join(top, "cgroup.subtree_control"), "+memory +pids")
        except OSError:
            os.rmdir(top)
            raise
        return {"memory": top, "pids": top}

    @staticmethod
    def _v1():
        own, tops = _own_cgroups(), {}
        for controller in ("memory", "pids"):
            point = next((m for m, kind, opts in _mounts()
                          if kind == "cgroup" and controller in opts), None)
            if point is None or controller not in own:
                return {}
            top = os.path.join(point, own[controller].lstrip("/"), f"rnnbook-grade-{os.getpid()}")
            os.mkdir(top)
            tops[controller] = top
        return tops

    def describe(self) -> str:
        return f"cgroup v{self.version}"

    def group(self, memory_mb: int, processes: int) -> Group:
        """A new cgroup for one child: at most ``processes`` processes and threads, and
        ``memory_mb`` MB and a margin (:func:`ceiling`) by the kernel's count (resident, page
        tables, tmpfs, memfd and shared memory, the kernel's own)."""
        self.made += 1
        return Group(self, f"child-{self.made}", ceiling(memory_mb), processes)

    def close(self) -> None:
        for top in dict.fromkeys(self.tops.values()):
            with contextlib.suppress(OSError):
                os.rmdir(top)


class Group:
    """One child's cgroup (:meth:`Cgroups.group`): its keeper joins it before reading its job,
    so the child and everything it starts are in it."""

    def __init__(self, cgroups: Cgroups, name: str, memory_mb: int, processes: int) -> None:
        self.version = cgroups.version
        self.dirs = {c: os.path.join(top, name) for c, top in cgroups.tops.items()}
        for folder in dict.fromkeys(self.dirs.values()):
            os.mkdir(folder)
        limit = str(int(memory_mb) * 2**20)
        memory, pids = self.dirs["memory"], self.dirs["pids"]
        if self.version == 2:
            _write(os.path.join(memory, "memory.max"), limit)
            with contextlib.suppress(OSError):  # no swap to hide in
                _write(os.path.join(memory, "memory.swap.max"), "0")
        else:
            _write(os.path.join(memory, "memory.limit_in_bytes"), limit)
        _write(os.path.join(pids, "pids.max"), str(processes))

    def add(self, pid: int) -> None:
        for folder in dict.fromkeys(self.dirs.values()):
            _write(os.path.join(folder, "cgroup.procs"), str(pid))

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group for going over its memory."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            for line in _read(os.path.join(self.dirs["memory"], name)).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def close(self) -> None:
        """Kill whatever is left in the group and remove it."""
        folders = list(dict.fromkeys(self.dirs.values()))
        for _ in range(500):
            left = []
            for folder in folders:
                with contextlib.suppress(OSError, ValueError):
                    left += [int(p) for p in _read(os.path.join(folder, "cgroup.procs")).split()]
            for pid in left:
                kill(pid)
            if not left:
                break
            threading.Event().wait(0.002)
        for folder in folders:
            with contextlib.suppress(OSError):
                os.rmdir(folder)
