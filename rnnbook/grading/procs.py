"""Process control on the grader's side: the zygotes, the children's trees, memory, killing.

A :class:`Zygote` is a process that imported what its children need once (NumPy only, or
TensorFlow with rnnbook's learner side) and forks a child per job (:mod:`.zygote`). The grader
talks to it on a SEQPACKET socket; each job gets its own events pipe and job pipe.
"""
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
import threading

HERE = pathlib.Path(__file__).resolve().parent
ZYGOTE = HERE / "zygote.py"
IPYTHON = "RNNBOOK_IPYTHON"  # IPython's folder, in a zygote's environment (zygote.IPYTHON)


class ZygoteError(RuntimeError):
    """The zygote could not start (its imports failed) or went away."""


class Zygote:
    """One zygote process of ``kind`` ("numpy" or "tf")."""

    def __init__(self, kind, args, env, log):
        self.kind = kind
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        flags = ["-I", "-S"] if kind == "numpy" else ["-I"]
        self.proc = subprocess.Popen(
            [sys.executable, *flags, str(ZYGOTE), kind, str(theirs.fileno()), *map(str, args)],
            pass_fds=[theirs.fileno()], env={**env, IPYTHON: ipython_folder()}, stdin=subprocess.DEVNULL,
            stdout=log, stderr=log, cwd="/")
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.changed = threading.Condition()
        self.forked, self.exited = {}, {}
        self.ready = None  # True, or why it failed
        self.tokens = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
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
                elif "failed" in message:
                    self.ready = message["failed"]
                elif "forked" in message:
                    self.forked[message["forked"]] = message["pid"]
                elif "exited" in message:
                    self.exited[message["exited"]] = message["status"]
                self.changed.notify_all()

    gone = False

    def wait_ready(self):
        with self.changed:
            self.changed.wait_for(lambda: self.ready is not None)
        if self.ready is not True:
            raise ZygoteError(f"the {self.kind} zygote failed: {self.ready}")

    def spawn(self, payload, events_w, meter=None):
        """Fork a child for ``payload`` (bytes: the job); returns ``(token, keeper pid)``.
        ``meter``: a :class:`Meter`'s descriptor, where the keeper writes the child's scratch use."""
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
        threading.Thread(target=_write_all, args=(job_w, payload), daemon=True).start()
        return token, self.forked.pop(token)

    def wait(self, token, timeout=None):
        """The exit status of job ``token`` (negative: killed by that signal), or None."""
        with self.changed:
            self.changed.wait_for(lambda: token in self.exited or self.gone, timeout)
            return self.exited.pop(token, None)

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()


def ipython_folder():
    """IPython's package folder ("" without it): a zygote loads its cell transformer from it."""
    spec = importlib.util.find_spec("IPython")
    return os.path.dirname(spec.origin) if spec and spec.origin else ""


class Meter:
    """Eight bytes of shared memory (a memfd): the bytes in a child's scratch pool, written by
    its keeper (behind the walls; the child itself cannot reach it), read by the grader."""

    def __init__(self):
        self.fd = os.memfd_create("rnnbook-scratch", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, 8)

    def mb(self):
        return int.from_bytes(os.pread(self.fd, 8, 0), "little", signed=True) / 2**20

    def close(self):
        os.close(self.fd)


def _write_all(fd, payload):
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view[: 1 << 20]):]
    except OSError:
        pass  # the keeper died before it read its job: the grader learns why from its status
    finally:
        os.close(fd)


def descendants(pid):
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


def rss_mb(pids):
    """Resident memory of ``pids`` together, in MB."""
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue
    return total / 1024


def tree_rss_mb(pid):
    """Resident memory of ``pid`` and everything below it, in MB (bench, tests)."""
    return rss_mb([pid, *descendants(pid)])


def kill_below(pid):
    """SIGKILL everything below ``pid`` (a keeper: it then cleans up and ends)."""
    for p in reversed(descendants(pid)):
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


def kill(pid):
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def guard_this_process():
    """No child may read this process's memory (the expected answers live here)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0


def ended(code):
    """How a child ended, in words."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed its process ({name})"
    return f"ended the process (exit code {code})"
