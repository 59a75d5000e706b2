"""The zygote: imports what the children need once, then forks one child per job.

    python -I -S zygote.py numpy SOCKET_FD NUMPY_PREFIX                       (by-hand exercises)
    python -I zygote.py tf SOCKET_FD[,ASKED_FD,ANSWERED_FD] ROOT STEM [STEM ...]  (API exercises)

Started by the grader (:mod:`rnnbook.grading.procs`) with a minimal environment. The ``numpy``
zygote's import path is the standard library and a folder holding only NumPy; the ``tf`` zygote
imports TensorFlow, Keras 3 (unless no chapter's children use it: ``Chapter.keras3``; without
its optional plotting and saving extras, :data:`KERAS_EXTRAS`) and rnnbook's learner side
(exercise, compare, byhand, memo, plaindata, checks, oracles), with ``rnnbook.reference`` and
``rnnbook.backward`` replaced by the release's stub first. Of the chapters it keeps only a
*caller* per exercise (its name, its kind and its ``call``, which builds the real cell, session
or layer from the trial's plain data and calls the learner's function): a chapter module with a
``prebuild()`` (Chapters 4-7: TF1 graphs) has it run once in a throwaway child, its result
(bytes) put in the module's ``PREBUILT`` for every child to use. Before those last steps,
given the two pipes' descriptors, it forks the *oracle* (:func:`_fork_oracle`): the chapters
whole and TensorFlow imported, it answers the grader's one request for expected answers, so
that the grader imports no TensorFlow of its own. Then every checks module is swapped
for one whose ``check`` does nothing, and the real modules' globals are cut down to what the
``call`` functions reach (:func:`callers_only`). No frame, global, module or object the
collector can list in a child holds an :class:`Exercise`, a chapter, an oracle, a reference or a
mistake model; the zygote checks that with weak references before it serves, and fails (so the
grader refuses) if one is still alive.

The grader sends a command per job on a SEQPACKET socket, ``{"fork": token}``, with two file
descriptors: the job's events pipe (write end) and a pipe the job arrives on (read end). The
zygote never reads a job (its memory, which every child inherits, holds no submission); it forks
a *keeper* and answers ``{"forked": token, "pid": PID}``, later ``{"exited": token, "status":
S}`` (negative: killed by that signal). The keeper reads the job, builds the walls (when the job
asks), forks the child, waits for it, kills whatever the child left running (it is their
subreaper; behind the walls the pid namespace does it), and ends as the child ended. Behind the
walls it also measures the child's scratch pool (``/tmp``, ``/dev/shm`` and its working folder)
every 20 ms and writes the bytes used into a third descriptor sent with the command (a memfd
the grader reads: it counts them towards ``--memory``). The zygote is a subreaper too and kills
any process that reaches it that is neither a keeper nor the oracle.
"""
from __future__ import annotations

import ctypes
import functools
import gc
import importlib.util
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
import types
import weakref
from typing import Any

STARTED = time.monotonic()  # (the grader's --profile: the zygote's spans, on one clock)
HERE = os.path.dirname(os.path.abspath(__file__))
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36
MAX_JOB = 512 * 2**20
MAX_FILES = 1024  # descriptors a child may hold open
IPYTHON = "RNNBOOK_IPYTHON"  # in the environment: IPython's folder, for its cell transformer
_libc = ctypes.CDLL(None, use_errno=True)
#: ``[what, start, end]`` of the start-up's steps, sent with ``ready`` (the grader's --profile)
TIMES: list[list[Any]] = []


def _timed(what: str, since: float) -> float:
    """Record ``what`` from ``since`` to now in :data:`TIMES`; returns now."""
    now = time.monotonic()
    TIMES.append([what, since, now])
    return now


def _load(name: str, filename: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, filename))
    assert spec is not None and spec.loader is not None  # a .py file's spec has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _stub_module(name: str, text: str) -> types.ModuleType:
    import types

    module = types.ModuleType(name)
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)  # noqa: S102
    sys.modules[name] = module
    return module


def prepare(kind: str, args: list[str], oracle: list[int] | None = None
            ) -> dict[str, Any] | None:
    """Import what the children need; returns the chapters (tf) or None (numpy). ``oracle``:
    the request's and the answers' descriptors of the oracle to fork (:func:`_fork_oracle`)."""
    sys.path[:] = [args[0]] + [p for p in sys.path if p != HERE]  # NumPy only, or the root
    _plaindata(kind)  # before the child, which uses it
    for name in ("wire", "walls", "job", "child"):
        _load(f"rnnbook_{name}", f"{name}.py")
    _ipython_transformer(os.environ.get(IPYTHON, ""))
    _load("rnnbook_environment", os.path.join("..", "environment.py"))
    since = _timed("standard library, NumPy, the child's modules", STARTED)
    if kind == "numpy":
        return None
    stems = args[1:]
    from rnnbook import environment

    with open(os.path.join(HERE, "templates", "learner-stub.py")) as f:
        stub = f.read()
    for name in ("reference", "backward"):
        _stub_module(f"rnnbook.{name}", stub)
    environment.import_tensorflow()
    since = _timed("import TensorFlow", since)
    import rnnbook.exercise  # noqa: F401
    from rnnbook import checks
    from rnnbook.oracles import warm_imports

    for stem in stems:
        checks.load(stem)  # imports the chapter's module
        since = _timed(f"import the checks of {stem}", since)
    if oracle:  # now: the zygote's steps below take one core, and the oracle has the other
        ORACLE.append(_fork_oracle(args[0], *oracle))
    if any(checks.load(stem).keras3 for stem in stems):
        # not import_heavy: its gc.freeze() would keep the chapters' objects, loaded above, out
        # of the collection that must free them before the first fork (all is frozen below)
        environment.call_with_roomy_stack(_import_keras)
        since = _timed("import Keras 3", since)
    else:  # no child needs it: the learner's rnnbook.setup() leaves it out too
        environment.KERAS3 = False
    # what every child would import again on first use (imports only: no thread)
    warm_imports(sorted({name for stem in stems for name in checks.load(stem).warm}))
    since = _timed("rnnbook, warm imports", since)
    for stem in stems:
        if _prebuild(sys.modules[checks.CHAPTERS[stem]], args[0]):
            since = _timed(f"prebuild {stem}'s graphs", since)
    callers, secrets = callers_only({stem: checks.load(stem) for stem in stems})
    gc.collect()
    alive = [describe(ref()) for ref in secrets if ref() is not None]
    if alive:
        raise RuntimeError("the exercises' oracles would be in reach of the child: "
                           + ", ".join(alive[:5]))
    gc.freeze()  # (Keras 3, the warm imports, the callers: out of the children's collections)
    _timed("callers only, no oracle in reach", since)
    return callers


#: what Keras 3 imports only where it can (``try: import ... except ImportError``) and no
#: grading child uses: matplotlib.pyplot (its image gallery), psutil (its saving) and IPython
#: (its file editor), about half of Keras 3's import. Kept out while the zygote imports Keras;
#: a child may still import them itself.
KERAS_EXTRAS = ("matplotlib", "psutil", "IPython")


def _import_keras() -> None:
    """Import Keras 3 with :data:`KERAS_EXTRAS` unimportable meanwhile."""
    blocked = [name for name in KERAS_EXTRAS if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # None: "import" raises
    try:
        importlib.import_module("keras")
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _prebuild(module: types.ModuleType, root: str, build_here: bool = True) -> bool:
    """Fill ``module.PREBUILT`` with ``module.prebuild()``'s result: what every grading child
    would otherwise build again (Chapters 4-7's graphs, as bytes). A Gradescope bundle
    carries it (``root``'s :data:`~rnnbook.grading.config.PREBUILT`,
    taken when :func:`rnnbook.oracles.graphs_from_record` finds it was built by this module's
    source and this TensorFlow); otherwise it is computed in a throwaway child. Building
    starts TensorFlow's threads, so it happens in that child; the zygote only receives bytes
    and stays fit to fork. A build that fails leaves the dict empty, and each child builds
    for itself (slower, the same graph). ``build_here=False``: only what the bundle carries
    (the oracle: its own graphs it builds in its own process). Returns whether it built or
    took."""
    import pickle

    build = getattr(module, "prebuild", None)
    if build is None:
        return False
    from rnnbook.environment import PREBUILT_GRAPHS
    from rnnbook.oracles import graphs_from_record

    try:
        with open(os.path.join(root, PREBUILT_GRAPHS), "rb") as f:
            record = pickle.load(f)  # noqa: S301 - the bundle's own, root-only
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        record = None
    taken = graphs_from_record(record, module) if record is not None else None
    if taken is not None:
        module.PREBUILT.update(taken)
        return True
    if not build_here:
        return False
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the builder: our own code only, no submission
        status = 1
        try:
            os.close(read)
            with os.fdopen(write, "wb") as out:
                out.write(pickle.dumps(build()))
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        blob = f.read()
    _, status = os.waitpid(pid, 0)
    if status == 0 and blob:
        module.PREBUILT.update(pickle.loads(blob))  # noqa: S301 - written by our own child
    return True


#: the oracle's pid, once forked: the zygote's child that is not a keeper and lives
ORACLE: list[int] = []


def _fork_oracle(root: str, asked: int, answered: int, *others: int) -> int:
    """Fork the oracle, with TensorFlow and the chapters whole (before Keras 3, the prebuilt
    graphs and :func:`callers_only`: the oracle takes what it needs of those itself, on the
    core the zygote leaves free meanwhile), and close its descriptors here; returns its pid.
    It reads the grader's request from ``asked`` (to its end: none lets it go), ``{"seed": N,
    "exercises": {stem: [name, ...]}}``, and writes :func:`rnnbook.expected.answer`'s bytes to
    ``answered`` (or pickled ``{"error": why}``): the grader then needs no TensorFlow of its
    own. ``others``: descriptors it closes first (the grader's socket). No submission runs in
    it or before it in the zygote."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            for fd in others:
                os.close(fd)
            status = _oracle(root, asked, answered)
        finally:
            os._exit(status)
    os.close(asked)
    os.close(answered)
    return pid


def _oracle(root: str, asked: int, answered: int) -> int:
    """The oracle's work (in its own process); returns its exit status. The graphs its
    chapters prebuild it takes from the bundle first (:func:`_prebuild`), before any op of its
    own runs; without a bundle its oracles build them as a notebook's do."""
    import pickle

    with os.fdopen(asked, "rb") as f:
        request = f.read(MAX_JOB)
    if not request:
        return 0
    gc.enable()  # (the zygote's heap stays still; this process builds and drops graphs)
    try:
        from rnnbook import checks, environment

        asked_for = json.loads(request)
        for stem in asked_for.get("exercises", {}):
            if stem in checks.CHAPTERS:
                _prebuild(sys.modules[checks.CHAPTERS[stem]], root, build_here=False)
        blob = environment.call_with_roomy_stack(_answer, asked_for)
    except Exception as error:  # noqa: BLE001 - the grader says why, and computes them itself
        blob = pickle.dumps({"error": f"{type(error).__name__}: {error}"[:500]})
    with os.fdopen(answered, "wb") as out:
        out.write(blob)
    return 0


def _answer(request: dict[str, Any]) -> bytes:
    """:func:`rnnbook.expected.answer`'s bytes, with a helper where two cores are usable. If an
    oracle asked for reaches Keras 3 (four chapters' do, where their children may not), it is
    imported first, once, so that the oracle and its helper do not each import it (1.1-1.7 s
    of CPU); meanwhile the zygote's first child has the other core."""
    from rnnbook import checks, environment, expected

    wanted = expected.wanted(request)
    if environment.usable_cores() < 2 or len(wanted) < 2:
        return expected.answer(request)
    reached = _reachable([checks.load(stem)[name].oracle for stem, name in wanted])
    if "keras" not in sys.modules and set().union(*reached.values()) & {"keras3",
                                                                        "import_keras"}:
        _import_keras()
    return expected.answer(request, _helped(request))


def _helped(request: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """The answers a helper and this oracle computed side by side: the helper, a fork of the
    oracle made before either runs an op, and the oracle each take the next *trial* off a pipe
    of ``(exercise, trial)`` indices until none is left, so the two cores share the oracle's
    work to within a trial whatever each exercise costs (taking whole exercises, one core ran
    the last long one alone: 0.3-0.6 s of a cold run). The trials are drawn before the fork
    (NumPy only). The helper's answers come back pickled; an exercise that a trial of is
    missing from (the helper failed) :func:`rnnbook.expected.answer` computes after, whole."""
    import pickle

    from rnnbook import expected

    seed = int(request["seed"])
    todo = expected.wanted(request)[:256]  # (one byte an index; 42 in the whole book)
    cases = [expected.trials(stem, name, seed) for stem, name in todo]
    digests = [expected.trials_digest(trials) for trials in cases]
    items = bytes(index for e, trials in enumerate(cases) if digests[e]
                  for t in range(min(len(trials), 256)) for index in (e, t))
    queue_r, queue_w = os.pipe()
    os.write(queue_w, items[:select.PIPE_BUF])  # (one atomic write: 2048 trials at most)
    os.close(queue_w)
    back_r, back_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            os.close(back_r)
            took = _take(queue_r, todo, cases, " (helper)")
            with os.fdopen(back_w, "wb") as out:
                pickle.dump(took, out, protocol=4)
            status = 0
        finally:
            os._exit(status)
    os.close(back_w)
    try:
        mine = _take(queue_r, todo, cases)
    finally:
        os.close(queue_r)
        with os.fdopen(back_r, "rb") as back:
            theirs = back.read()
        os.waitpid(pid, 0)
    answers, spans = mine
    try:
        their_answers, their_spans = pickle.loads(theirs)  # noqa: S301 - our own fork's
        answers.update(their_answers)
        spans.extend(their_spans)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError,
            TypeError):
        pass  # (the exercises it took trials of are computed again, whole)
    done = {}
    for e, key in enumerate(todo):
        got = [answers.get((e, t)) for t in range(len(cases[e]))]
        if digests[e] and all((e, t) in answers for t in range(len(cases[e]))):
            done[key] = ((digests[e], got), [span for i, span in spans if i == e])
    return done


def _take(queue: int, todo: list[tuple[str, str]], cases: list[list[Any]], who: str = ""
          ) -> tuple[dict[tuple[int, int], Any], list[tuple[int, Any]]]:
    """Answer the trials whose ``(exercise, trial)`` indices this process reads off ``queue``
    (two bytes each: a pipe's read is atomic), to its end: ``({(e, t): answer}, [(e, span)])``,
    a span for each run of one exercise's trials; ``who`` is added to each span's name."""
    from rnnbook import expected

    answers: dict[tuple[int, int], Any] = {}
    spans: list[tuple[int, Any]] = []
    while len(index := os.read(queue, 2)) == 2:
        e, t = index
        stem, name = todo[e]
        start = time.monotonic()
        answers[(e, t)] = expected.trial_answer(stem, name, cases[e][t])
        if spans and spans[-1][0] == e:
            what, first, _ = spans[-1][1]
            spans[-1] = (e, (what, first, time.monotonic()))
        else:
            spans.append((e, (expected.label(stem, name) + who, start, time.monotonic())))
    return answers, spans


def _ipython_transformer(folder: str) -> None:
    """IPython's cell transformer (magics become ``get_ipython()`` calls), loaded by path from
    IPython's ``folder`` as ``rnnbook_ipython``: the child turns a cell into plain Python itself,
    under its own limits (9,000 ``%time`` lines took seconds, in the grader once). It needs only
    the standard library; IPython itself is neither imported nor left importable."""
    if not folder:
        return
    fakes = {name: types.ModuleType(name) for name in ("IPython", "IPython.utils")}
    for module in fakes.values():
        module.__path__ = []
    saved: dict[str, Any] = {name: sys.modules.get(name)
                             for name in [*fakes, "IPython.utils.tokenutil"]}
    try:
        sys.modules.update(fakes)
        fakes["IPython.utils"].tokenutil = _load(  # type: ignore[attr-defined]
            "IPython.utils.tokenutil", os.path.join(folder, "utils", "tokenutil.py"))
        _load("rnnbook_ipython", os.path.join(folder, "core", "inputtransformer2.py"))
    except (OSError, SyntaxError, ImportError):
        sys.modules.pop("rnnbook_ipython", None)  # the child compiles cells as they are
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _plaindata(kind: str) -> types.ModuleType:
    """``rnnbook/plaindata.py`` as ``rnnbook_plaindata``, the name the child imports it by. The
    NumPy zygote cannot import rnnbook: it loads the file by path. The TensorFlow zygote imports
    the package's ``rnnbook.plaindata`` and gives it both names: one module, so one
    :class:`~rnnbook.plaindata.Raised` class, the one :func:`rnnbook.byhand.answer` returns
    and the child tells apart from an answer (a second copy would fail ``isinstance``)."""
    if kind == "numpy":
        return _load("rnnbook_plaindata", os.path.join("..", "plaindata.py"))
    import rnnbook.plaindata

    sys.modules["rnnbook_plaindata"] = rnnbook.plaindata
    return rnnbook.plaindata


def callers_only(chapters: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """``({stem: {name: caller}}, weak references to what no child may reach)``.

    A caller has the exercise's ``name``, ``by_hand`` and ``call`` (all that
    :func:`rnnbook.byhand.answer` uses). Every ``rnnbook.checks.*`` module is replaced by one
    whose ``check`` does nothing (the notebook's import of it), and the real modules' globals
    lose every name the ``call`` functions cannot reach: the chapters, the exercises, the
    oracles, the references, the mistake models and what only they use."""
    from rnnbook import checks

    callers, secrets = {}, []
    for stem, chapter in chapters.items():
        callers[stem] = {ex.name: types.SimpleNamespace(name=ex.name, by_hand=ex.by_hand,
                                                        call=ex.call)
                         for ex in chapter.exercises}
        secrets.append(chapter)
        for ex in chapter.exercises:
            secrets += [ex, ex.oracle, ex.reference]
            for mistake in ex.mistakes:
                secrets += [mistake, *mistake.models]
    secrets += [getattr(s, "__wrapped__", None) for s in secrets]
    refs = []
    for secret in secrets:
        try:
            refs.append(weakref.ref(secret))
        except TypeError:  # None, or a kind of object with no weak references
            pass
    del secrets
    keep = _reachable([c.call for chapter in callers.values() for c in chapter.values()])
    for name, module in list(sys.modules.items()):
        if not name.startswith("rnnbook.checks."):
            continue
        namespace = vars(module)
        for key in list(namespace):
            if key not in keep.get(id(namespace), ()) and key not in ("__name__", "__builtins__"):
                del namespace[key]
        stub = _stub_module(name, "def check(*args, **kwargs):\n    return None\n")
        setattr(checks, name.rsplit(".", 1)[1], stub)
    return callers, refs


def _reachable(roots: list[Any]) -> dict[int, set[str]]:
    """``{id(globals): names}``: the module-level names that the functions ``roots`` reach,
    through their code (nested code too), defaults, closures, ``functools`` wrappers and
    partials, the classes and containers they refer to, and so on from each name found."""
    keep: dict[int, set[str]] = {}
    seen: set[int] = set()
    stack = list(roots)

    def code_names(code, namespace):
        names = keep.setdefault(id(namespace), set())
        for name in code.co_names:
            if name in namespace and name not in names:
                names.add(name)
                stack.append(namespace[name])
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                code_names(const, namespace)

    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, types.ModuleType):
            continue
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType):
            code_names(obj.__code__, obj.__globals__)
            stack += [*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values(),
                      *vars(obj).values()]
            for cell in obj.__closure__ or ():
                try:
                    stack.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
        elif isinstance(obj, functools.partial):
            stack += [obj.func, *obj.args, *obj.keywords.values()]
        elif isinstance(obj, (types.MethodType, staticmethod, classmethod)):
            stack += [obj.__func__, getattr(obj, "__self__", None)]
        elif isinstance(obj, property):
            stack += [obj.fget, obj.fset, obj.fdel]
        elif isinstance(obj, type):
            if obj.__module__.startswith("rnnbook"):
                stack += list(vars(obj).values())
        elif isinstance(obj, (tuple, list, set, frozenset)):
            stack += list(obj)
        elif isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
        elif hasattr(obj, "__wrapped__"):  # functools.lru_cache, cache, wraps
            stack.append(obj.__wrapped__)
    return keep


def describe(obj: Any) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "name", None)
    return f"{type(obj).__name__} {name or ''}".strip()


def keeper(token: int, events_fd: int, job_fd: int, meter_fd: int | None, sock: socket.socket,
           chapters: dict[str, Any] | None) -> None:
    """The forked keeper of one job (never returns)."""
    pool = None
    try:
        sock.close()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        data = bytearray()
        while len(data) <= MAX_JOB:
            chunk = os.read(job_fd, 1 << 20)
            if not chunk:
                break
            data += chunk
        os.close(job_fd)
        wire, walls = sys.modules["rnnbook_wire"], sys.modules["rnnbook_walls"]
        job = sys.modules["rnnbook_job"].Job.read(
            wire.decode(json.loads(bytes(data)), budget=MAX_JOB, dicts=True))
        del data
        if job.walls:
            # The zygote is not dumpable, and so neither is its fork: its /proc/self files then
            # belong to the host's root, and a keeper not run as root could not write its own
            # uid_map. Dumpable from here (no submission code has run in this process); the
            # child stays so behind the walls (alone in its pid namespace: only the grader's
            # processes can reach it, and they read its unique pages and memfd files).
            _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            walls.unshare()
            pool = walls.raise_walls(job.walls)
    except Exception as error:  # noqa: BLE001 - the grader reads why
        _fatal(events_fd, f"could not build the sandbox's walls: {error}")
        os._exit(walls_failed())
    pid = os.fork()
    if pid == 0:
        for fd in (meter_fd, pool):  # the child can neither reach the pool's top nor the meter
            if fd is not None:
                os.close(fd)
        worker(job, events_fd, chapters)
    os.close(events_fd)
    status = _wait_for(pid, pool, meter_fd)
    _kill_children()
    _end_as(status)


def walls_failed() -> int:
    return sys.modules["rnnbook_walls"].FAILED


def worker(job: Any, events_fd: int, chapters: dict[str, Any] | None) -> None:
    """The child proper: behind the walls, limited, in its working folder (never returns)."""
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        walls = sys.modules["rnnbook_walls"]
        if job.walls:
            walls.enter()
            if job.probe:
                walls.verify(job.walls)
                os._exit(0)
        os.chdir(job.workdir)
        log = os.open("output.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        output = job.limits["max_output"] * 2**20  # bytes it may print, or write into a file
        resource.setrlimit(resource.RLIMIT_FSIZE, (output, output))
        _cap(resource.RLIMIT_NOFILE, MAX_FILES)  # memfds are counted one by one: not millions
        if job.processes:  # no pids cgroup: counted in the child's own user namespace
            _cap(resource.RLIMIT_NPROC, job.processes)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if not job.walls:  # without walls another child could read this one
            _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        if job.drop_to is not None:  # root without walls: the submission runs as nobody
            os.setgroups([])
            os.setgid(job.drop_to)
            os.setuid(job.drop_to)
        os.environ.clear()
        os.environ.update(job.env)
    except Exception as error:  # noqa: BLE001
        _fatal(events_fd, f"could not build the sandbox's walls: {error}")
        os._exit(walls_failed())
    child = sys.modules["rnnbook_child"]
    sys.modules["rnnbook_environment"].call_with_roomy_stack(child.main, job, events_fd, chapters)
    os._exit(0)


def _cap(limit: int, value: int) -> None:
    soft, hard = resource.getrlimit(limit)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(limit, (value, value))


def _fatal(fd: int, message: str) -> None:
    try:
        os.write(fd, json.dumps({"walls": "failed", "why": message[:500]}).encode() + b"\n")
    except OSError:
        pass


def _wait_for(pid: int, pool: int | None = None, meter: int | None = None) -> int:
    """Wait for ``pid``, reaping any orphan that reaches this subreaper meanwhile; with a
    scratch ``pool``, write the bytes it holds into ``meter`` every 20 ms."""
    measure = pool is not None and meter is not None
    while True:
        try:
            done, status = os.waitpid(-1, os.WNOHANG if measure else 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        if done == pid:
            return status
        if done == 0:
            try:
                used = sys.modules["rnnbook_walls"].scratch_used(pool)
                os.pwrite(meter, struct.pack("<q", used), 0)  # type: ignore[arg-type]  # measure: set
            except OSError:
                pass
            time.sleep(0.02)


def _children() -> list[int]:
    """This process's children. (Behind the walls /proc is the child's pid namespace's: there
    the keeper has no other child, and the kernel kills the namespace with its first process.)"""
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _kill_children() -> None:
    """Kill every process still below this one, until none is left (orphans keep arriving
    here while their parents die: this process is their subreaper)."""
    while True:
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.002)


def _end_as(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def serve(sock: socket.socket, chapters: dict[str, Any] | None) -> None:
    """Fork a keeper per command; report forks and exits; kill strays."""
    keepers = {}  # pid -> token

    def send(**message):
        sock.send(json.dumps(message).encode())

    send(ready=True, times=TIMES)
    while True:
        ready, _, _ = select.select([sock], [], [], 0.05)
        if ready:
            try:
                data, fds, _, _ = socket.recv_fds(sock, 4096, 3)
            except OSError:
                data, fds = b"", []
            if not data:
                break
            command = json.loads(data)
            if len(fds) in (2, 3):
                pid = os.fork()
                if pid == 0:
                    keeper(command["fork"], fds[0], fds[1], fds[2] if len(fds) == 3 else None,
                           sock, chapters)
                for fd in fds:
                    os.close(fd)
                keepers[pid] = command["fork"]
                send(forked=command["fork"], pid=pid)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in keepers:
                send(exited=keepers.pop(pid), status=os.waitstatus_to_exitcode(status))
            elif pid in ORACLE:
                ORACLE.remove(pid)
        for pid in _children():
            if pid not in keepers and pid not in ORACLE:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
    for pid in keepers:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    kind, fds = argv[0], [int(fd) for fd in argv[1].split(",")]
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    sock = socket.socket(fileno=fds[0])
    try:
        chapters = prepare(kind, argv[2:], [*fds[1:], fds[0]] if fds[1:] else None)
    except BaseException as error:  # noqa: BLE001 - the grader says why
        sock.send(json.dumps({"failed": f"{type(error).__name__}: {error}"[:500]}).encode())
        return 1
    serve(sock, chapters)
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True  # (PYTHONDONTWRITEBYTECODE too): no .pyc of ours anywhere
    gc.disable()  # the zygote's heap is shared with every child: keep it still
    sys.exit(main(sys.argv[1:]))
