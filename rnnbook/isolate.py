"""The sandbox's walls: what a submission's process can see and change of the machine.

:mod:`rnnbook.grade` starts each sandbox child inside new Linux namespaces, made without any
privilege on the host (user namespaces)::

    unshare --user --map-root-user --mount --pid --net --ipc \\
        python -I -S rnnbook/isolate.py SPEC.json -- python -I -m rnnbook.sandbox ...

In there, before any submission code runs, this script

1. makes every mount read-only (the repository, the venv, the whole file system);
2. hides folders under empty tmpfs: the repository (solutions/, .git, _build, ...), each
   submission's folder, the ``--out`` folder, the grading run's work folder (the other
   submissions' jobs), the grader's home folder and ``/run`` (sockets of system services);
3. brings back what the child needs from inside them: read-only the ``rnnbook`` package, the
   Python installation and any file a trial names; read-write only its own job's ``answers/``;
4. gives it a private, size-limited ``/tmp``, ``/dev/shm`` and working folder, a ``/dev`` with
   only null, zero, full, random and urandom, a network namespace with only loopback and its own
   System V IPC;
5. forks: the child is the first process of a new pid namespace (it sees no other process) and
   gets a fresh, read-only ``/proc``; it enters one more user and mount namespace, so that none
   of these mounts can be undone (mounts handed down to a less privileged namespace are
   locked), sets ``no_new_privs`` and execs the command. The parent waits and ends as it ended.

With ``--check`` the child verifies the walls instead of running a command (the grader's probe).

It runs as a plain script with ``-S`` and imports only the standard library: creating a user
namespace needs a single-threaded process, and NumPy would start threads. Where ``unshare`` or
user namespaces are unavailable (many containers, e.g. Gradescope's, where each submission has a
container of its own anyway) the grader falls back to the bare sandbox and says so.
"""
import ctypes
import errno
import json
import os
import resource
import signal
import socket
import struct
import sys

FAILED = 125  # exit status when the walls could not be built (the grader reports it)

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
SYS_MOUNT_SETATTR = 442  # the same number on every architecture (added in Linux 5.12)
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38

_libc = ctypes.CDLL(None, use_errno=True)


class WallError(Exception):
    pass


def _check(result, what):
    if result != 0:
        code = ctypes.get_errno()
        raise WallError(f"{what}: {os.strerror(code)}")


def mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(_b(source), _b(target), _b(fstype), ctypes.c_ulong(flags), _b(data)),
           f"mount {target}")


def _b(text):
    return None if text is None else os.fsencode(text)


def _kept_flags(path):
    """The per-mount flags a remount must keep (a user namespace may not drop them)."""
    got = os.statvfs(path).f_flag
    flags = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                   (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                   (os.ST_RELATIME, MS_RELATIME)):
        if got & st:
            flags |= ms
    return flags


def remount(path, readonly):
    flags = MS_REMOUNT | MS_BIND | _kept_flags(path) | (MS_RDONLY if readonly else 0)
    mount(None, path, None, flags)


def readonly_everything():
    """Every mount read-only, recursively (mount_setattr; per mount on kernels before 5.12)."""
    class MountAttr(ctypes.Structure):
        _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                    ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]

    attr = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    done = _libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), b"/",
                         ctypes.c_uint(AT_RECURSIVE), ctypes.byref(attr), ctypes.c_size_t(32))
    if done == 0:
        return
    with open("/proc/self/mountinfo") as f:  # oldest kernels: one remount per mount point
        points = [line.split()[4].encode().decode("unicode_escape") for line in f]
    for point in points:
        try:
            remount(point, readonly=True)
        except (WallError, OSError):
            if point == "/":
                raise


def under(path, folder):
    """Whether ``path`` is ``folder`` or inside it (both absolute, as strings)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _makedirs(path, file=False):
    if os.path.lexists(path):
        return
    os.makedirs(os.path.dirname(path) if file else path, exist_ok=True)
    if file:
        with open(path, "w"):
            pass


def build(spec):
    """Build the walls described by ``spec`` (made by :meth:`rnnbook.grade.Walls.spec`)."""
    # Handles on everything to bring back, taken before anything is hidden.
    kept = {}
    for path in spec["readonly"] + spec["writable"]:
        if os.path.exists(path):
            kept[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here propagates to the host
    readonly_everything()

    ops = [(p, "hide", 0) for p in spec["hide"]]
    ops += [(p, "scratch", size) for p, size in spec["scratch"].items()]
    ops += [(p, "readonly", 0) for p in spec["readonly"] if p in kept]
    ops += [(p, "writable", 0) for p in spec["writable"] if p in kept]
    # Outer folders first; at the same depth hide before bringing back.
    order = {"hide": 0, "scratch": 0, "readonly": 1, "writable": 1}
    ops.sort(key=lambda op: (op[0].rstrip("/").count("/"), order[op[1]], op[0]))
    hidden, fresh = [], []  # tmpfs mounted here: hidden folders, and all (scratch too)
    for path, kind, size in ops:
        if kind == "hide":
            if not os.path.isdir(path):
                if not any(under(path, f) for f in fresh):
                    continue  # never there
                # Out of sight under a tmpfs of ours, but what comes back into it (say, the
                # repository's rnnbook/ when the repository lives under /tmp) needs a read-only
                # folder around it, not a writable one on the scratch /tmp.
                _makedirs(path)
            mount("none", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
            hidden.append(path)
            fresh.append(path)
        elif kind == "scratch":
            _makedirs(path)
            mount("none", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size}m,mode=1777")
            fresh.append(path)
        else:
            _makedirs(path, file=not os.path.isdir(f"/proc/self/fd/{kept[path]}"))
            mount(f"/proc/self/fd/{kept[path]}", path, None, MS_BIND | MS_REC)
            remount(path, readonly=kind == "readonly")
    for link, target in spec.get("symlinks", {}).items():
        if not os.path.lexists(link):
            os.symlink(target, link)
    for path in hidden:
        remount(path, readonly=True)
    for fd in kept.values():
        os.close(fd)


def enter():
    """In the first process of the new pid namespace: its own /proc, loopback, locked mounts."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the process that forked it
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this pid namespace only
    _loopback_up()
    _lock()
    remount("/proc", readonly=True)  # no sysctl or /proc file can be written from here on


def _loopback_up():
    """Bring ``lo`` up in the new network namespace (it starts down): local servers still work."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sh", b"lo", 0)
            flags = struct.unpack("16sh", _ioctl(sock, siocgifflags, request))[1]
            _ioctl(sock, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))
    except OSError:
        pass  # not fatal: the submission only loses local networking


def _ioctl(sock, request, arg):
    import fcntl

    return fcntl.ioctl(sock.fileno(), request, arg)


def _lock():
    """Enter a new user + mount namespace: the mounts above become locked (cannot be undone)."""
    _check(_libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS)), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", "0 0 1"), ("gid_map", "0 0 1")):
        try:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        except OSError as error:
            if name != "setgroups":
                raise WallError(f"{name}: {error}") from None
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def verify(spec):
    """The probe: the walls hold (hidden folders are empty, nothing outside scratch is writable)."""
    for path in spec["hide"]:
        if os.path.isdir(path) and os.listdir(path) and not any(
                p.startswith(path.rstrip("/") + "/") for p in spec["readonly"] + spec["writable"]):
            raise WallError(f"{path} is still visible")
    for path in spec.get("probe_absent", []):  # gone, or an empty folder
        if os.path.lexists(path) and not (os.path.isdir(path) and not os.listdir(path)):
            raise WallError(f"{path} is still visible")
    for path in spec["probe_readonly"]:
        try:
            with open(os.path.join(path, ".rnnbook-probe"), "w"):
                pass
        except OSError as error:
            if error.errno in (errno.EROFS, errno.ENOENT, errno.EACCES):
                continue
            raise
        raise WallError(f"{path} is writable")
    for path in spec["writable"]:
        probe = os.path.join(path, ".rnnbook-probe")
        with open(probe, "w"):
            pass
        os.unlink(probe)


def main(argv):
    check = argv[:1] == ["--check"]
    argv = argv[1:] if check else argv
    if len(argv) < 1 or (not check and (len(argv) < 3 or argv[1] != "--")):
        print("usage: isolate.py [--check] SPEC.json [-- COMMAND ...]", file=sys.stderr)
        return 2
    try:
        with open(argv[0]) as f:
            spec = json.load(f)
        build(spec)
    except (WallError, OSError, ValueError, KeyError) as error:
        return _failed(error)
    # unshare --pid put our children, not us, in the new pid namespace: the first one is its init.
    pid = os.fork()
    if pid == 0:
        try:
            enter()
            os.chdir(spec["cwd"])
            if check:
                verify(spec)
                os._exit(0)
            os.execv(argv[2], argv[2:])
        except (WallError, OSError, ValueError, KeyError) as error:
            os._exit(_failed(error))
    return _wait(pid)


def _failed(error):
    print(f"isolate: could not build the sandbox's walls: {error}", file=sys.stderr, flush=True)
    return FAILED


def _wait(pid):
    """Wait for the child; end the way it ended (same exit status, or killed by the same signal)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the grader stops us with SIGKILL, the child with us
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if sig != signal.SIGKILL:
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
