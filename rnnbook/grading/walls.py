"""The walls around each child: what a submission's process can see and change of the machine.

Each child is forked by :mod:`rnnbook.grading.zygote`; before it runs any submission code, the
forked process (the *keeper*) enters new Linux namespaces, made without privilege on the host
(user, mount, pid, network, IPC), and there

1. makes every mount read-only;
2. hides folders under empty tmpfs: everything but the system (an allow-list: every folder of
   ``/`` but :data:`SYSTEM`, so another copy of the repository anywhere is out of sight), and
   wherever it may be, the repository (solutions/, .git, the grader), each submission's
   folder, the ``--out`` folder, the grading run's work folder, the home folder, ``/run``;
   for a NumPy-only child also every site-packages folder (TensorFlow, Keras, ...);
3. brings back read-only what the child needs from inside them (the Python standard library;
   NumPy; for a TensorFlow child the venv and, one file at a time, the ``.py`` files of
   rnnbook's learner side, with ``reference.py`` / ``backward.py`` covered by the release's
   stub: no ``__pycache__`` (a compiled reference would solve the by-hand exercises), no
   ``rnnbook/checks`` (the zygote imported the exercises' ``call`` already; their oracles are
   not to be imported again), no ``rnnbook/grading``, nothing added to the folder later);
4. gives it one private scratch tmpfs of ``scratch_mb`` for ``/tmp``, ``/dev/shm`` and its
   working folder together (the grader counts what is in it towards ``--memory``: see
   :func:`scratch_used`) and a ``/dev`` with only null, zero, full, random and urandom;
5. forks the child as the first process of the new pid namespace (it sees no other process, and
   when it ends the kernel kills everything it started), with a fresh read-only ``/proc``, one
   more user and mount namespace (so none of these mounts can be undone) and ``no_new_privs``;
   its IPC namespace holds at most :data:`SHM_SEGMENTS` SysV segments of :data:`SHM_MB` MB.

A hidden folder inside another hidden folder is covered already and is not mounted again; a
hidden folder that is also a scratch folder (a submission directly in ``/tmp``) is just the
scratch folder. :func:`verify` is the probe the grader runs once before grading: where it fails,
the grader refuses to grade unless told ``--no-walls``.

This module needs only the standard library: the zygotes load it by path.
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import socket
import struct
import sys
import sysconfig
from typing import Any, Sequence

FAILED = 125  # exit status when the walls could not be built (the grader reports it)

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC = 0x20000000, 0x40000000, 0x08000000
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
SYS_MOUNT_SETATTR = 442  # the same number on every architecture (added in Linux 5.12)
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
POOL = "/dev"  # where the scratch pool is mounted, under the hidden /dev
SHM_SEGMENTS, SHM_MB = 16, 32  # SysV shared memory a child may hold (segments, MB together)

_libc = ctypes.CDLL(None, use_errno=True)


class WallError(Exception):
    pass


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise WallError(f"{what}: {os.strerror(code)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int,
          data: str | None = None) -> None:
    _check(_libc.mount(_b(source), _b(target), _b(fstype), ctypes.c_ulong(flags), _b(data)),
           f"mount {target}")


def _b(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def _kept_flags(path: str) -> int:
    """The per-mount flags a remount must keep (a user namespace may not drop them)."""
    got = os.statvfs(path).f_flag
    flags = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                   (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                   (os.ST_RELATIME, MS_RELATIME)):
        if got & st:
            flags |= ms
    return flags


def remount(path: str, readonly: bool) -> None:
    flags = MS_REMOUNT | MS_BIND | _kept_flags(path) | (MS_RDONLY if readonly else 0)
    mount(None, path, None, flags)


def readonly_everything() -> None:
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


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both absolute, as strings)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")




def _makedirs(path: str, file: bool = False) -> None:
    if os.path.lexists(path):
        return
    os.makedirs(os.path.dirname(path) if file else path, exist_ok=True)
    if file:
        with open(path, "w"):
            pass


ORDER = {"hide": 0, "scratch": 0, "readonly": 1, "writable": 1, "overlay": 2}


def mount_plan(spec: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The mounts to make, outer folders first: ``[(path, kind, arg)]``. A hidden folder whose
    nearest enclosing mount is already a hidden or scratch folder (or that is one) is dropped:
    it is out of sight already, and mounting it again inside a covering tmpfs would leave a
    stray folder there (and a read-only one over a scratch folder)."""
    ops = [(p, "scratch", size) for p, size in spec["scratch"].items()]
    ops += [(p, "readonly", 0) for p in spec["readonly"]]
    ops += [(p, "writable", 0) for p in spec.get("writable", [])]
    ops += [(p, "overlay", src) for p, src in spec.get("overlay", {}).items()]
    kept, hide = [], set(spec["hide"]) | _covers_inside_scratch(ops)
    for path in sorted(hide):
        enclosing = [(p, k) for p, k, _ in ops + [(h, "hide", 0) for h in hide]
                     if under(path, p) and (p != path or k == "scratch")]
        if enclosing:
            nearest = max(enclosing, key=lambda pk: (len(pk[0].rstrip("/")), ORDER[pk[1]]))
            # Inside a scratch folder (the repository under /tmp), a hidden folder that gets
            # something back (the rnnbook package) stays a read-only tmpfs of its own: else the
            # folders made for what comes back would be writable scratch.
            inside_scratch = nearest[1] == "scratch" and nearest[0] != path
            brings_back = any(under(p, path) and p != path for p, k, _ in ops
                              if k in ("readonly", "writable", "overlay"))
            if nearest[1] == "hide" or (nearest[1] == "scratch"
                                        and not (inside_scratch and brings_back)):
                continue
        kept.append((path, "hide", 0))
    ops += kept
    ops.sort(key=lambda op: (op[0].rstrip("/").count("/"), ORDER[op[1]], op[0]))
    return ops


def _covers_inside_scratch(ops: list[tuple[str, str, Any]]) -> set[str]:
    """For what is brought back from inside a scratch folder (a Python installed under /tmp,
    the scratch /tmp's own place): hide its top folder below the scratch, so that the folders
    made to reach it are a read-only tmpfs, not writable scratch."""
    covers = set()
    for path, kind, _ in ops:
        if kind not in ("readonly", "writable", "overlay"):
            continue
        for folder, other, _ in ops:
            if other == "scratch" and under(path, folder) and path != folder:
                top = path[len(folder.rstrip("/")) + 1:].split("/")[0]
                covers.add(os.path.join(folder, top))
    return covers


def unshare() -> None:
    """Enter new user, mount, pid, network and IPC namespaces, as root inside (our own uid
    outside). Only a single-threaded process may: a process forked from a zygote is one."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                       ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def raise_walls(spec: dict[str, Any]) -> int | None:
    """Build the walls described by ``spec`` (made by :func:`spec`) in this mount namespace;
    returns a handle on the scratch pool (for :func:`scratch_used`), or None."""
    ops = mount_plan(spec)
    kept = {}  # handles on everything to bring back, taken before anything is hidden
    present = {p for p in spec.get("overlay", {}) if os.path.exists(p)}
    for path, kind, arg in ops:
        for wanted in ([path] if kind in ("readonly", "writable") else
                       [arg] if kind == "overlay" else []):
            if os.path.exists(wanted):
                kept[wanted] = os.open(wanted, os.O_PATH | os.O_CLOEXEC)
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here propagates to the host
    readonly_everything()
    pool, scratch = _scratch_pool(spec, [path for path, kind, _ in ops if kind == "scratch"])
    hidden: list[str] = []
    fresh: list[str] = []  # tmpfs mounted here: hidden folders, and all (scratch too)
    for path, kind, arg in ops:
        if kind == "hide":
            if not os.path.isdir(path):
                if not any(under(path, f) for f in fresh):
                    continue  # never there
                _makedirs(path)  # under a tmpfs of ours, with something brought back inside
            mount("none", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
            hidden.append(path)
            fresh.append(path)
        elif kind == "scratch":
            _makedirs(path)
            mount(f"/proc/self/fd/{scratch[path]}", path, None, MS_BIND)
            fresh.append(path)
        else:
            source = arg if kind == "overlay" else path
            if source not in kept or (kind == "overlay" and path not in present):
                continue
            _makedirs(path, file=not os.path.isdir(f"/proc/self/fd/{kept[source]}"))
            mount(f"/proc/self/fd/{kept[source]}", path, None, MS_BIND | MS_REC)
            remount(path, readonly=kind != "writable")
    for link, target in spec.get("symlinks", {}).items():
        if not os.path.lexists(link):
            os.symlink(target, link)
    for path in hidden:
        remount(path, readonly=True)
    for fd in [*kept.values(), *scratch.values()]:
        os.close(fd)
    return pool


def _scratch_pool(spec: dict[str, Any], paths: list[str]) -> tuple[int | None, dict[str, int]]:
    """One tmpfs of ``spec["scratch_mb"]`` MB with a folder for each scratch path: ``(fd of its
    top, {path: fd of its folder})``, bind-mounted to their paths later. It is mounted on
    ``/dev``, which is hidden under a tmpfs of its own right after: nothing shows the pool
    itself, and the folders together hold no more than its size."""
    if not paths:
        return None, {}
    mount("none", POOL, "tmpfs", MS_NOSUID | MS_NODEV, f"size={spec['scratch_mb']}m,mode=0700")
    folders = {}
    for k, path in enumerate(paths):
        inner = os.path.join(POOL, str(k))
        os.mkdir(inner)
        os.chmod(inner, 0o1777)
        folders[path] = os.open(inner, os.O_PATH | os.O_CLOEXEC)
    return os.open(POOL, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), folders


def scratch_used(fd: int) -> int:
    """Bytes in the scratch pool (``fd`` from :func:`raise_walls`)."""
    info = os.fstatvfs(fd)
    return (info.f_blocks - info.f_bfree) * info.f_frsize


def verify(spec: dict[str, Any]) -> None:
    """The probe: hidden folders are empty (but for what was brought back), what must be
    absent is, nothing outside scratch is writable, the overlays are in place."""
    back = (spec["readonly"] + spec.get("writable", []) + list(spec.get("overlay", {}))
            + list(spec.get("symlinks", {})) + list(spec["scratch"]))
    for path, kind, _ in mount_plan(spec):
        if kind != "hide" or not os.path.isdir(path):
            continue
        for entry in os.listdir(path):
            inner = os.path.join(path, entry)
            if not any(under(p, inner) for p in back):
                raise WallError(f"{inner} is still visible")
    for path in spec.get("probe_absent", []):  # gone, or an empty folder
        if os.path.lexists(path) and not (os.path.isdir(path) and not os.listdir(path)):
            raise WallError(f"{path} is still visible")
    for target in spec.get("overlay", {}):
        if os.path.exists(target):
            with open(target) as f:
                if f.read() != spec["overlay_text"]:
                    raise WallError(f"{target} is not covered")
    for path in spec["probe_readonly"]:
        try:
            with open(os.path.join(path, ".rnnbook-probe"), "w"):
                pass
        except OSError as error:
            if error.errno in (errno.EROFS, errno.ENOENT, errno.EACCES):
                continue
            raise
        raise WallError(f"{path} is writable")
    for path in list(spec["scratch"]):
        probe = os.path.join(path, ".rnnbook-probe")
        with open(probe, "w"):
            pass
        os.unlink(probe)


def enter() -> None:
    """In the first process of the new pid namespace: its own /proc, loopback, locked mounts."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the process that forked it
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this pid namespace only
    _cap_shared_memory()
    _loopback_up()
    _lock()
    remount("/proc", readonly=True)  # no sysctl or /proc file can be written from here on


def _cap_shared_memory() -> None:
    """SysV shared memory (this IPC namespace's own; no resident size shows it) capped at
    :data:`SHM_SEGMENTS` segments of :data:`SHM_MB` MB together. Before :func:`_lock`: the
    namespace belongs to the keeper's user namespace."""
    for name, value in (("shmmni", SHM_SEGMENTS), ("shmmax", SHM_MB * 2**20),
                        ("shmall", SHM_MB * 2**20 // os.sysconf("SC_PAGE_SIZE"))):
        try:
            with open(f"/proc/sys/kernel/{name}", "w") as f:
                f.write(str(value))
        except OSError:
            pass  # a kernel that keeps them to the host's root: not capped


def _loopback_up() -> None:
    """Bring ``lo`` up in the new network namespace (it starts down): local servers still work."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sh", b"lo", 0)
            flags = struct.unpack("16sh", _ioctl(sock, siocgifflags, request))[1]
            _ioctl(sock, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))
    except OSError:
        pass  # not fatal: the submission only loses local networking


def _ioctl(sock: socket.socket, request: int, arg: bytes) -> bytes:
    import fcntl

    return fcntl.ioctl(sock.fileno(), request, arg)


def _lock() -> None:
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




# ---------------------------------------------------------------------------------------------
# The grader's side: what to hide and bring back, for each kind of child

DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
DEV_LINKS = {"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
             "/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2"}
SCRATCH = ["/tmp", "/dev/shm"]  # private to each child, in one pool with its working folder
SCRATCH_MAX = 256  # MB: the pool is a quarter of --memory, at most this (and counted in it)
#: what a child sees of the file system besides what comes back for it (the Python installation,
#: NumPy or the venv, rnnbook's learner side, its scratch): the system's programs, libraries and
#: settings, read-only. Every other folder of ``/`` is hidden (/home, /root, /srv, /opt, /var,
#: /work, /mnt, ...: wherever another copy of the project may be), and so are these folders of
#: the system where sources are kept
SYSTEM = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "proc", "sys", "dev")
SYSTEM_HIDDEN = ("/usr/src", "/usr/local/src", "/usr/share/doc")
#: what the learner release leaves out of rnnbook/ (the instructor's folder, and the tools that
#: read solutions/), and the modules that solve exercises (the release and every child get the
#: stub in their place)
INSTRUCTOR = ("grading", "generate.py", "source.py")
STUBBED = ("reference.py", "backward.py")


#: where a kernel says that unprivileged user namespaces are off, and what turns them on
USERNS_SWITCHES = (
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
     "AppArmor restricts user namespaces to programs with a profile that allows them (Ubuntu "
     "23.10 and later): grade as root, or have an administrator add an AppArmor profile with "
     "`userns,` for {python} (as Ubuntu ships for bwrap) or set "
     "kernel.apparmor_restrict_unprivileged_userns=0"),
    ("/proc/sys/kernel/unprivileged_userns_clone", "0",
     "this kernel keeps user namespaces to root (kernel.unprivileged_userns_clone=0): grade as "
     "root, or have an administrator set it to 1"),
    ("/proc/sys/user/max_user_namespaces", "0",
     "this machine allows no user namespaces (user.max_user_namespaces=0): grade as root, or "
     "have an administrator raise it"),
)


def why_no_walls(python: str = sys.executable) -> str:
    """Where the kernel's settings say why user namespaces cannot be made by this user, one
    sentence with what the instructor can do; "" where none does."""
    if os.geteuid() == 0:
        return ""
    for path, off, sentence in USERNS_SWITCHES:
        try:
            with open(path) as f:
                if f.read().strip() == off:
                    return sentence.format(python=real(python))
        except OSError:
            continue
    return ""


def scratch_mb(memory: int) -> int:
    """The scratch pool's size in MB for a memory limit of ``memory`` MB."""
    return max(8, min(SCRATCH_MAX, memory // 4))


def learner_files(package: str) -> list[str]:
    """The ``.py`` files of rnnbook's learner side that a TensorFlow child sees (one level: not
    ``checks/``, whose modules the zygote imported, nor ``grading/``; no ``__pycache__``)."""
    found = []
    for name in sorted(os.listdir(package)):
        path = os.path.join(package, name)
        if name.endswith(".py") and name not in INSTRUCTOR + STUBBED and os.path.isfile(path):
            found.append(path)
    return found


def outside_system(top: str = "/") -> list[str]:
    """The folders a child does not see: every folder of ``top`` but :data:`SYSTEM` (a link
    there leads to a folder that is hidden or system), and :data:`SYSTEM_HIDDEN`."""
    found = []
    for name in sorted(os.listdir(top)):
        path = os.path.join(top, name)
        if name not in SYSTEM and not os.path.islink(path) and os.path.isdir(path):
            found.append(path)
    return found + [p for p in SYSTEM_HIDDEN if os.path.isdir(p) and not os.path.islink(p)]


def real(path: str) -> str:
    return os.path.realpath(str(path))


def site_folders() -> list[str]:
    """Every folder Python installs packages into, here (venv, base, user, distribution)."""
    found = set()
    for scheme_vars in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        paths = sysconfig.get_paths(vars=scheme_vars)
        found |= {paths["purelib"], paths["platlib"]}
    found |= {p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages"))}
    try:
        import site

        found.add(site.getusersitepackages())
    except (ImportError, AttributeError):
        pass
    return sorted(real(p) for p in found if p and os.path.isdir(p))


def spec(kind: str, root: str, work: str, out: str, subs: Sequence[str], workdir: str,
         extra_readonly: Sequence[str] = (), numpy_dirs: Sequence[str] = (),
         absent: Sequence[str] = (), stub: str | None = None,
         scratch: int = SCRATCH_MAX) -> dict[str, Any]:
    """The walls for one child of ``kind`` ("numpy" or "tf"): see the module's docstring."""
    hide = {real(p) for p in [root, work, out, os.path.expanduser("~"), "/run",
                              *outside_system()]}
    hide |= {real(os.path.dirname(p)) for p in subs} | {os.path.dirname(os.path.abspath(p))
                                                         for p in subs}
    stdlib = {real(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}
    stdlib |= {real(os.path.join(p, "lib-dynload")) for p in stdlib}
    overlay = {}
    if kind == "numpy":
        hide |= set(site_folders())
        needed = stdlib | {real(p) for p in numpy_dirs}
    else:
        package = os.path.join(real(root), "rnnbook")
        needed = stdlib | set(learner_files(package)) | {real(p) for p in [
            sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]}
        needed |= {real(p) for p in sysconfig.get_paths().values()}
        hide |= {os.path.join(p, "rnnbook") for p in site_folders()  # an installed copy
                 if os.path.isdir(os.path.join(p, "rnnbook"))}
        for name in STUBBED:
            overlay[os.path.join(package, name)] = stub
    needed |= {real(p) for p in extra_readonly}
    hidden = sorted(hide - {"/"})
    covered = hidden + SCRATCH
    readonly = sorted(p for p in needed
                      if os.path.exists(p) and any(under(p, h) for h in covered))
    return {
        "hide": hidden + ["/dev"],
        "scratch": {p: scratch for p in [*SCRATCH, str(workdir)]},
        "scratch_mb": scratch,
        "readonly": readonly + DEVICES,
        "overlay": overlay,
        "overlay_text": "",
        "symlinks": DEV_LINKS,
        "probe_readonly": [str(root), sys.prefix],
        "probe_absent": [os.path.join(real(root), "solutions"), os.path.join(real(root), ".git"),
                         real(out), *(real(p) for p in subs), *absent],
        "cwd": str(workdir),
    }


def main(argv: list[str]) -> int:
    """``python walls.py --plan SPEC.json``: print the mounts a spec makes (for debugging)."""
    with open(argv[-1]) as f:
        for op in mount_plan(json.load(f)):
            print(*op)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
