"""A grading run: what to grade against, the trials (drawn once), the children, the results.

1. Every submission is read (a regular file, not too large, a valid notebook) and its chapter
   decided: ``--chapter``, else the chapter whose exercise functions it defines (exactly one),
   else its metadata. A file that cannot be graded gets its report at once ("Not graded: why").
2. The exercise table (number, name, points, kind) comes from ``solutions/`` or, in the
   Gradescope bundle, from the table built from it; never from a submission.
3. Each exercise's trials are drawn once from the seed. The oracle (TensorFlow and the
   instructor's reference) answers them: a bundle built with a fixed seed holds its answers;
   otherwise a fork of the TensorFlow zygote made before the zygote serves (it has TensorFlow
   already) answers, or, failing that, this process in a thread. The children get the same
   trials and never the expected answers.
4. Each submission runs in children forked from a zygote (:mod:`.procs`): by-hand exercises in a
   NumPy-only child, API exercises in a TensorFlow child. Deadlines are kept by this process's
   clock: a stage (a cell, an exercise) gets its limit once, a child's events can only move
   forward through the plan, and a submission has a wall-clock budget. A child that crashes or
   goes over a limit is started again without the cell or exercise that did it (one child's
   attempt, stage by stage: :mod:`.attempt`).
5. A submission's report is written as soon as it is graded; the gradebook, listing every
   submission, at the end (atomically).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import importlib.util
import json
import os
import pathlib
import pickle
import secrets
import shutil
import stat
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TextIO

from rnnbook import checks, expected, source
from rnnbook.environment import call_with_roomy_stack, import_tensorflow
from rnnbook.grading import attempt, lock, procs, profile, results, similarity, walls, wire
from rnnbook.grading import roster as rosters
from rnnbook.grading.config import EXPECTED, ROOT, SOLUTIONS, Config, child_limits
from rnnbook.grading.job import Job
from rnnbook.grading.profile import PROFILE, Profile

if TYPE_CHECKING:
    import nbformat

    from rnnbook.exercise import Case, Exercise

NOBODY = 65534
STUB = ROOT / "rnnbook" / "grading" / "templates" / "learner-stub.py"


class GradeError(Exception):
    """A problem that stops the whole run (one line)."""


def log(text: str) -> None:
    """A line on the grader's stderr; any control character in it shown as its escape
    (:func:`results.visible`: a submission's name or message never drives the terminal)."""
    print(f"grade: {results.visible(text, lines=True)}", file=_stderr(), flush=True)


_STDERR: list[TextIO] = []


def _stderr(fresh: bool = False) -> TextIO:
    """The grader's stderr, on a copy of fd 2: importing TensorFlow (in the oracle thread) points
    fd 2 at /dev/null for a while, and a progress line must not vanish into it. ``fresh`` (at
    the start of a run) copies fd 2 anew: a second run in one process writes where fd 2 points
    now, not where it pointed for the first."""
    if fresh and _STDERR:
        _STDERR.pop().close()
    if not _STDERR:
        sys.stderr.flush()
        _STDERR.append(os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace"))
    return _STDERR[0]


# ---------------------------------------------------------------------------------------------
# What to grade against (trusted: solutions/ or the bundle's table, never the submission)


def exercise_cells(table_file: str | os.PathLike[str] | None = None
                   ) -> dict[str, list[source.ExerciseCell]]:
    """``{stem: [ExerciseCell]}`` for every chapter, from solutions/ or a table file: the one
    table of an exercise's cells, the grader's and the Gradescope bundle's (``release.py``
    writes it as ``exercises.json``, each cell a dict of its fields)."""
    if table_file:
        data = json.loads(pathlib.Path(table_file).read_text())
        return {stem: [source.ExerciseCell(**cell) for cell in cells]
                for stem, cells in data.items() if stem in checks.CHAPTERS}
    found: dict[str, list[source.ExerciseCell]] = {}
    for stem in checks.CHAPTERS:
        path = SOLUTIONS / f"{stem}.ipynb"
        if path.exists():
            try:
                found[stem] = source.exercises(source.read(path), f"solutions/{stem}.ipynb")
            except source.SourceError as error:  # the instructor's side is broken: say so
                raise GradeError(str(error)) from None
    return found


def expected_answers(stem: str, seed: int) -> bytes:
    """The bundle's :data:`~.config.EXPECTED` for a fixed ``seed`` (``make autograder
    SEED=N``): chapter ``stem``'s record (:func:`rnnbook.expected.record`), computed here by its
    oracles (TensorFlow) as a grading run computes them; pickled (the bundle is the
    instructor's own code)."""
    return pickle.dumps(expected.record(stem, seed), protocol=4)


def prebuilt_graphs(stem: str) -> bytes | None:
    """The bundle's :data:`~.config.PREBUILT` for chapter ``stem``: its checks module's
    ``prebuild()`` graphs (:func:`rnnbook.oracles.graphs_record`), pickled; None for a chapter
    that builds none."""
    checks.load(stem)
    module = sys.modules[checks.CHAPTERS[stem]]
    if getattr(module, "prebuild", None) is None:
        return None
    from rnnbook.oracles import graphs_record

    return pickle.dumps(graphs_record(module), protocol=4)


def read_expected(path: pathlib.Path, seed: int,
                  cases: dict[tuple[str, str], list[Case]]) -> dict[tuple[str, str], Any]:
    """``{(chapter, exercise): expected answers}`` from a bundle's :data:`~.config.EXPECTED`
    at ``path``, for the exercises whose trials are ``cases``' (:func:`rnnbook.expected.matching`);
    ``{}`` when there is none (the oracle computes them all)."""
    try:
        data = pickle.loads(path.read_bytes())  # noqa: S301 - the bundle's own, root-only
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return {}
    return expected.matching(data, seed, cases)


def graded_exercises(stem: str, cells: dict[str, list[source.ExerciseCell]]
                     ) -> list[tuple[source.ExerciseCell, Exercise]]:
    """``[(ExerciseCell, Exercise)]`` for a chapter, in book order. A header whose number of
    parts is not the check's stops the run: the points per part would be wrong."""
    chapter = checks.load(stem)
    table = [(cell, chapter[cell.name]) for cell in cells[stem]]
    for cell, ex in table:
        if cell.parts != max(len(ex.parts), 1):
            raise GradeError(f"exercise {cell.number} {ex.name}: its header says {cell.parts} "
                             f"part{'s' * (cell.parts != 1)}, its check {len(ex.parts) or 1} "
                             f"({', '.join(ex.parts) or 'one answer'}); fix the header in "
                             "solutions/")
    return table


def which_chapter(nb: nbformat.NotebookNode, forced: str | None,
                  cells: dict[str, list[source.ExerciseCell]]) -> str:
    """The chapter to grade ``nb`` as: ``forced``; else the one chapter whose exercise
    functions the notebook defines most of; else its metadata. Never the file's name."""
    if forced:
        return forced
    defined: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            defined |= {m["name"] for m in source.DEF.finditer(cell.source)}
    share = {stem: len(defined & {c.name for c in found}) / max(len(found), 1)
             for stem, found in cells.items()}
    best = max(share.values(), default=0)
    tied = [stem for stem, s in share.items() if s == best and s > 0]
    meta = nb.metadata.get("rnnbook", {})
    named = meta.get("chapter") if isinstance(meta, dict) else None
    if len(tied) == 1:
        return tied[0]
    if isinstance(named, str) and named in (tied or cells):  # (a list would not hash)
        return named
    raise GradeError("cannot tell which chapter this notebook is (its exercise functions and "
                     "metadata name none, or several); pass --chapter")


class _Recorder:
    """Stands in for the learner's function to see how ``Exercise.call`` calls it."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.result = object()

    def __call__(self, *args: Any, **kwargs: Any) -> object:
        self.calls.append((args, kwargs))
        return self.result


def plain_trials(ex: Exercise, cases: list[Case]) -> list[dict[str, Any]] | None:
    """How to call a by-hand exercise's function on each case with plain arguments
    (``[{"args", "kwargs"}]``), or None when its ``call`` does more than one plain call."""
    trials = []
    for case in cases:
        recorder = _Recorder()
        try:
            got = ex.call(recorder, dict(case))
        except Exception:  # noqa: BLE001
            return None
        if got is not recorder.result or len(recorder.calls) != 1:
            return None
        args, kwargs = recorder.calls[0]
        trials.append({"args": list(args), "kwargs": dict(kwargs)})
    return trials


def load_submission(sub: results.Submission, forced: str | None,
                    cells: dict[str, list[source.ExerciseCell]],
                    max_mb: int = Config.max_notebook,
                    max_cells: int = Config.max_cells) -> results.Submission:
    """Read ``sub.path`` (only read: never written), of at most ``max_mb`` MB and
    ``max_cells`` cells, without following a link (a link or anything but a regular file is
    refused by name); ``sub.error`` says why it cannot be graded. Its code is kept as
    :func:`results.safe_text` (the text every output shows)."""
    sub.chapter = forced or ""  # a file that cannot be read still counts in its chapter
    try:
        with _open_plain(sub.path, max_mb) as fd:
            _count_cells(fd, max_cells)
            try:
                nb = source.read(f"/proc/self/fd/{fd}")
            except source.SourceError as error:
                raise GradeError(str(error).split(": ", 1)[-1]) from None
        sub.chapter = which_chapter(nb, forced, cells)
    except (GradeError, OSError) as error:
        sub.error = f"{sub.shown}: {results.visible(str(error))}"
    else:
        # every cell keeps its place (markdown as ""), so "cell 7" is the learner's 7th cell;
        # code as written: the child makes IPython's magics plain Python, under its limits
        sub.cells = [results.safe_text(c.source) if c.cell_type == "code" else ""
                     for c in nb.cells]
    return sub


@contextlib.contextmanager
def _open_plain(path: pathlib.Path, max_mb: int) -> Iterator[int]:
    """A descriptor on ``path``, a regular file of at most ``max_mb`` MB, opened without
    following a link (``O_NOFOLLOW``, checked against ``lstat`` and by ``fstat``: a file swapped
    for a link between the two is refused too)."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise GradeError("a link, not a file (the notebook itself is graded, never what a link "
                         "points to)")
    if not stat.S_ISREG(info.st_mode):
        raise GradeError("not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (not stat.S_ISREG(opened.st_mode)
                or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino)):
            raise GradeError("not a regular file (it changed while it was read)")
        if opened.st_size > max_mb * 2**20:
            raise GradeError(f"larger than {max_mb} MB")
        yield fd
    finally:
        os.close(fd)


def _count_cells(fd: int, max_cells: int) -> None:
    """Refuse a notebook of more than ``max_cells`` cells before it is checked cell by cell:
    reading and checking a notebook costs the grader's own process time in the number of its
    cells (40,000 tiny cells, 6 MB: 10 s), before any child's limit applies (the count is one
    JSON parse: a file that is not JSON is left to the full read)."""
    try:
        cells = json.loads(os.pread(fd, os.fstat(fd).st_size + 1, 0)).get("cells")
    except (ValueError, AttributeError, RecursionError):
        return
    if isinstance(cells, list) and len(cells) > max_cells:
        raise GradeError(f"more than {max_cells:,} cells ({len(cells):,})")


def find_notebooks(paths: Sequence[str | pathlib.Path]) -> list[pathlib.Path]:
    """Expand folders into their notebooks (regular files); a missing path stops the run."""
    found = []
    for raw in paths:
        path = pathlib.Path(raw)
        if path.is_dir():
            # a link is listed (and refused by name); a real folder named *.ipynb is not
            found += sorted(p for p in path.glob("*.ipynb") if p.is_symlink() or not p.is_dir())
        elif os.path.lexists(path):
            found.append(path)
        else:
            raise GradeError(f"{path}: no such file or folder")
    return found


# ---------------------------------------------------------------------------------------------
# The run


class Run:
    def __init__(self, config: Config, paths: list[pathlib.Path], out: pathlib.Path,
                 table_file: str | os.PathLike[str] | None = None,
                 profile: Profile | None = None) -> None:
        self.config = config
        self.out = out
        self.profile = profile or Profile()  # where the wall time goes (--profile)
        self.cells = exercise_cells(table_file)
        self.subs = [results.Submission(path=p, name=n)
                     for p, n in zip(paths, results.names(paths), strict=True)]
        for sub in self.subs:
            load_submission(sub, config.chapter, self.cells, config.max_notebook,
                            config.max_cells)
            if sub.chapter and sub.chapter not in self.cells and not sub.error:
                sub.error = f"{sub.shown}: chapter {sub.chapter} has no exercises here"
        self.seed = config.seed if config.seed is not None else secrets.randbelow(2**31)
        self.gradable = [s for s in self.subs if not s.error]
        self.chapters = sorted({s.chapter for s in self.gradable})
        self.tables = {stem: graded_exercises(stem, self.cells) for stem in self.chapters}
        # (chapter, exercise) -> its cases, its trials (plain or the cases), its kind of
        # child ("numpy" or "tf") and the bytes its answers may take
        self.cases: dict[tuple[str, str], list[Case]] = {}
        self.trials: dict[tuple[str, str], list[Any]] = {}
        self.kind: dict[tuple[str, str], str] = {}
        self.bound: dict[tuple[str, str], int] = {}
        for stem in self.chapters:
            chapter = checks.load(stem)
            for cell, ex in self.tables[stem]:
                cases = chapter.trial_cases(ex.name, self.seed)  # the probes' trials too
                key = (stem, ex.name)
                self.cases[key] = cases
                plain = plain_trials(ex, cases) if cell.by_hand else None
                if cell.by_hand and plain is None:
                    log(f"note: exercise {cell.number} {ex.name} is by hand but its check does "
                        "more than call the function; it runs with TensorFlow")
                self.kind[key] = "numpy" if plain is not None else "tf"
                self.trials[key] = plain if plain is not None else cases
                self.bound[key] = wire.answer_bound(cases)
        #: (chapter, exercise) -> its expected answers from the bundle (built with this seed):
        #: the oracle computes only the others
        self.expected: dict[tuple[str, str], Any] = {}
        if table_file and self.chapters:
            with self.profile.span("grader", "read the bundle's expected answers"):
                self.expected = read_expected(pathlib.Path(table_file).with_name(EXPECTED),
                                              self.seed, self.cases)
        # chapter -> {exercise: (cases, expected answers)}, once TensorFlow has them
        self.oracle: dict[str, dict[str, tuple[Any, Any]]] = {}
        self.oracle_ready = {s: threading.Event() for s in self.chapters}
        self.oracle_error = ""
        #: why a zygote could not start (said once), and the submissions it left ungraded
        self.zygote_failed: procs.ZygoteFailed | None = None
        self.unstarted: set[str] = set()
        self.zygotes: dict[str, procs.Zygote] = {}
        self.specs: dict[str, bool] = {}  # the kinds of child that run behind walls
        self.zlog: pathlib.Path  # the zygotes' output, once start_zygotes made it
        self.numpy_dirs: list[str] = []  # what the NumPy-only zygote reads (numpy_only)
        self.isolation = ""
        self.drop: int | None = None  # without walls, as root: the children's uid
        #: each child's memory and processes, by the kernel (None: the grader counts)
        self.cgroups: procs.Cgroups | None = None

    # --- set-up -----------------------------------------------------------------------------

    def env(self, home: str | pathlib.Path) -> dict[str, str]:
        return procs.child_env(home)

    def start_zygotes(self, work: pathlib.Path, early: procs.Early | None = None) -> None:
        """A zygote per kind of child this run needs: those ``early`` started (the same
        chapter) are taken, the others it started closed."""
        kinds = sorted({self.kind[k] for k in self.kind if k[0] in self.chapters})
        self.zlog = work / procs.ZYGOTE_LOG
        zlog = open(self.zlog, "ab")  # noqa: SIM115 - open while they run
        home = work / "zygote-home"
        home.mkdir(exist_ok=True)
        for kind in kinds:
            taken = early.take(kind, self.chapters) if early else None
            if early and taken:
                self.zygotes[kind] = taken
                self.numpy_dirs = early.numpy_dirs if kind == "numpy" else self.numpy_dirs
                continue
            if kind == "numpy":
                args = [str(self._numpy_prefix(work))]
            else:
                args = [str(ROOT), *self.chapters]
            self.zygotes[kind] = procs.Zygote(kind, args, self.env(home), zlog)
        if early:
            early.close()

    def _numpy_prefix(self, work: pathlib.Path) -> pathlib.Path:
        try:
            prefix, self.numpy_dirs = procs.numpy_only(work)
        except procs.ZygoteError as error:
            raise GradeError(str(error)) from None
        return prefix

    def walls_spec(self, kind: str, work: pathlib.Path,
                   workdir: pathlib.Path) -> dict[str, Any]:
        paths = [str(s.path) for s in self.gradable]  # (a refused file's link leads anywhere)
        absent = []
        if kind == "numpy":
            tf = importlib.util.find_spec("tensorflow")
            if tf and tf.origin:
                absent.append(os.path.dirname(tf.origin))
            absent.append(str(ROOT / "rnnbook" / "checks"))
            extra = []
        else:
            absent += [str(ROOT / "rnnbook" / p) for p in ("grading/run.py", "__pycache__",
                                                           "checks/__init__.py")]
            extra = _case_paths([self.cases[k] for k in self.cases if self.kind[k] == "tf"])
        spec = walls.spec(kind, str(ROOT), str(work), str(self.out), paths,
                          str(workdir), extra_readonly=extra,
                          numpy_dirs=self.numpy_dirs, absent=absent,
                          stub=str(STUB), scratch=walls.scratch_mb(self.config.memory))
        spec["overlay_text"] = STUB.read_text()
        return spec

    def build_walls(self, work: pathlib.Path) -> None:
        """Probe the walls for each kind of child; refuse to grade without them unless told.

        Every kind's walls are probed through the NumPy-only zygote where there is one: it is
        ready while the TensorFlow zygote is still importing, and a probe needs only the
        keeper (the same walls module in both zygotes: it builds the walls from the job's spec
        and checks them, :func:`.walls.verify`). A cold start does not wait for TensorFlow
        before its first child, and the TensorFlow child, the first to need that zygote, waits
        for it (:meth:`.procs.Zygote.spawn`)."""
        mode = self.config.walls
        if mode == "off":
            self.isolation = "none (--no-walls)" + self._as_nobody()
            return
        failed = ""
        prober = self.zygotes.get("numpy") or next(iter(self.zygotes.values()))
        for kind in self.zygotes:
            spec = self.walls_spec(kind, work, work / f"probe-{kind}")
            job = Job(spec["cwd"], self.env("/tmp"), child_limits(self.config), walls=spec,
                      probe=True)
            why = self._probe(prober, job)
            if why:
                failed = why
                break
            self.specs[kind] = True
        if not failed:
            self.isolation = ("namespaces (only the system, Python and its scratch: no other "
                              "submission, no copy of the repository, no --out; read-only; "
                              "by-hand exercises without TensorFlow)")
            return
        self.specs = {}
        if mode == "required":
            why = walls.why_no_walls()
            raise GradeError(
                f"the walls around submissions cannot be built here ({failed}): "
                + (why + "." if why else
                   "grade where user namespaces work for this user (most Linux desktops, "
                   "servers and containers allow them; `unshare --user --map-root-user --mount "
                   "true` tells) or as root.")
                + " Only where each submission already has a container of its own (as on "
                "Gradescope) is --no-walls safe: without walls a submission can read the other "
                "submissions and the repository (solutions included)")
        self.isolation = f"none ({failed})" + self._as_nobody()
        log(f"note: submissions run without walls here ({failed})")

    def count(self) -> None:
        """Find the cgroups each child will have (none: the grader counts), and say in the
        ``walls:`` line how memory and processes are counted and bounded."""
        self.cgroups = procs.Cgroups.find()
        walled, limit = bool(self.specs), self.config.processes
        shm = (f", SysV shared memory at most {walls.SHM_SEGMENTS} segments of "
               f"{walls.SHM_MB} MB" if walled else "")
        # a child's descriptors are listed by root, or behind the walls (where it is dumpable)
        memfd = ("memfd files" if os.geteuid() == 0 or walled
                 else "not memfd files (not root)")
        unique = ("a fork's shared pages once" if os.geteuid() == 0 or walled
                  else "a fork's shared pages twice: not root")
        if self.cgroups:
            memory = (f"memory: {self.cgroups.describe()} (the kernel's count), and resident "
                      f"({unique}) + scratch + {memfd}{shm}")
            processes = f"processes: {self.cgroups.describe()} pids, {limit}"
        else:
            memory = (f"memory: resident ({unique}) + scratch + {memfd} (no memory cgroup)"
                      f"{shm}")
            processes = (f"processes: RLIMIT_NPROC {limit} in the child's user namespace"
                         + (" (not binding: the grader runs as root)" if os.geteuid() == 0
                            else "") if walled else
                         "processes: not bounded (no walls, no pids cgroup)")
        self.isolation += f"; {memory}; {processes}"

    def _as_nobody(self) -> str:
        """Without walls, a grader running as root runs its children as nobody, where nobody
        can read Python and NumPy (so not the files made root-only: the bundle's setup.sh)."""
        needed = [os.path.dirname(os.__file__), sys.prefix, *self.numpy_dirs]
        if os.geteuid() != 0 or not all(_world_readable(p) for p in needed):
            return ""
        self.drop = NOBODY
        _lock_bytecode()
        return "; submissions run as nobody"

    def _probe(self, zygote: procs.Zygote, job: Job) -> str:
        r, w = os.pipe()
        try:
            token, _ = zygote.spawn(json.dumps(wire.encode(job.plain())).encode(), w)
        except procs.ZygoteError as error:
            os.close(r)
            os.close(w)
            return str(error)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            text = f.read(65536)
        status = zygote.wait(token, 60)
        if status == 0:
            return ""
        for line in text.splitlines():
            with contextlib.suppress(ValueError, AttributeError, KeyError, TypeError):
                return json.loads(line)["why"]
        return f"the probe {procs.ended(status)}: {_last_line(self.zlog)}"

    # --- oracle -------------------------------------------------------------------------------

    def compute_oracle(self) -> None:
        """The expected answers of every exercise graded: the bundle's (:func:`read_expected`),
        else those of the TensorFlow zygote's oracle (a fork that has TensorFlow already:
        :meth:`.procs.Zygote.oracle`), else, for what that oracle did not answer (it failed, or
        no child of this run needs TensorFlow), computed here, TensorFlow imported for them."""
        try:
            wanted = {stem: [ex.name for _, ex in self.tables[stem]
                             if (stem, ex.name) not in self.expected]
                      for stem in self.chapters}
            self.ask_the_zygotes_oracle({s: names for s, names in wanted.items() if names})
            for stem in self.chapters:
                table: dict[str, tuple[Any, Any]] = {}
                for _, ex in self.tables[stem]:
                    cases = self.cases[(stem, ex.name)]
                    if (stem, ex.name) in self.expected:  # the bundle's or the zygote's oracle's
                        table[ex.name] = (cases, self.expected[(stem, ex.name)])
                        continue
                    if "tensorflow" not in sys.modules:
                        with self.profile.span("oracle", "import TensorFlow"):
                            import_tensorflow()
                    with self.profile.span("oracle", f"{ex.number} {ex.name}"):
                        table[ex.name] = (cases, [ex.oracle(case) for case in cases])
                self.oracle[stem] = table
                self.oracle_ready[stem].set()
        except Exception as error:  # noqa: BLE001 - said once, every report waits on it
            self.oracle_error = f"{type(error).__name__}: {error}"
        finally:
            for event in self.oracle_ready.values():
                event.set()

    def ask_the_zygotes_oracle(self, wanted: dict[str, list[str]]) -> None:
        """Put the TensorFlow zygote's oracle's answers to ``wanted`` (``{stem: [exercise]}``)
        in :attr:`expected` (those that match this run's trials); an empty ``wanted`` lets the
        oracle go. Its answers are pickled by a fork of the zygote, in which no submission ever
        ran (the zygote forks it before it serves)."""
        zygote = self.zygotes.get("tf")
        if zygote is None:
            return
        with self.profile.span("grader", "wait for the TensorFlow zygote's oracle"):
            blob = zygote.oracle(self.seed, wanted) if wanted else zygote.oracle(None, {})
        try:
            said = pickle.loads(blob) if blob else {}  # noqa: S301 - our own fork's
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
            said = {}
        if wanted and not said.get("records"):
            why = said.get("error") or "it ended without an answer"
            log(f"note: the TensorFlow zygote's oracle did not answer ({why}); the grader "
                "computes the expected answers itself")
        for found in said.get("records", []):
            self.expected.update(expected.matching(found, self.seed, self.cases))
        for what, start, end in said.get("times", []):
            self.profile.add("oracle (zygote)", what, start, end)

    # --- one submission -----------------------------------------------------------------------

    def grade_one(self, sub: results.Submission, work: pathlib.Path) -> None:
        started = time.monotonic()
        sub.deadline = started + self.config.budget
        groups: dict[str, list[str]] = {}  # "numpy" or "tf" -> its exercises
        for _cell, ex in self.tables[sub.chapter]:
            groups.setdefault(self.kind[(sub.chapter, ex.name)], []).append(ex.name)
        try:
            # Both kinds of child run the whole notebook: a cell that hung or crashed in one is
            # skipped in the other too, and its note is said once; other notes are the last
            # child's (the cells raise the same errors in both, but for TensorFlow's absence).
            notes: dict[str, list[str]] = {}
            skip: set[int] = set()
            skipped = results.Notes()
            for kind in ("numpy", "tf"):
                if kind in groups:
                    sub.notes = results.Notes()
                    self._grade_group(sub, kind, groups[kind], work, skip, skipped)
                    notes[kind] = sub.notes
            sub.notes = skipped.then(notes.get("tf", notes.get("numpy", [])))
        except procs.ZygoteFailed as error:  # every submission of its kind: said once
            sub.error = f"{sub.shown}: not graded ({error})"
            self.zygote_failed = error
            self.unstarted.add(sub.name)
        except Exception as error:  # noqa: BLE001 - one submission never stops the others
            sub.error = (f"{sub.shown}: the grader failed on this submission "
                         f"({type(error).__name__}: {error})")
        finally:
            sub.seconds = time.monotonic() - started

    def _grade_group(self, sub: results.Submission, kind: str, names: list[str],
                     work: pathlib.Path, skip: set[int],
                     skipped: results.Notes) -> None:
        pending = list(names)
        for number in range(len(sub.cells) + len(names) + 2):
            if not pending:
                break
            before = (len(pending), len(skip))
            if time.monotonic() > sub.deadline:  # no child is started once it is spent
                stop = attempt.budget_spent(self.config.budget)
            else:
                stop = self._attempt(sub, kind, pending, skip, skipped,
                                     work / f"{sub.name}-{kind}{number}")
            if stop:
                for name in pending:
                    sub.answers[name] = stop
                pending.clear()
            if (len(pending), len(skip)) == before:
                break
        for name in pending:
            sub.answers.setdefault(name, "was not run: the notebook's process kept failing")

    def _attempt(self, sub: results.Submission, kind: str, pending: list[str],
                 skip: set[int], skipped: results.Notes,
                 workdir: pathlib.Path) -> str:
        """One child (:mod:`.attempt`): runs the cells not in ``skip``, answers ``pending``.
        Returns a reason to stop grading this group (the walls, the budget), or ""."""
        walled = kind in self.specs
        drop = None if walled else self.drop
        if not walled:
            attempt.make_workdir(workdir, drop)
        job = attempt.job(sub, pending, skip, {n: self.trials[(sub.chapter, n)] for n in pending},
                          self.env(workdir), workdir, self.config, drop,
                          self.walls_spec(kind, workdir.parent, workdir) if walled else None,
                          pids_cgroup=bool(self.cgroups))
        bounds = {n: self.bound[(sub.chapter, n)] for n in pending}
        counts = {n: len(self.trials[(sub.chapter, n)]) for n in pending}
        self.zygotes[kind].wait_ready()  # (a cold start's first TensorFlow child: its import)
        forked = time.monotonic()
        group = (self.cgroups.group(self.config.memory, self.config.processes)
                 if self.cgroups else None)
        try:
            child = attempt.Child(self.zygotes[kind], job, walled, group)
        except BaseException:
            if group:
                group.close()
            raise
        try:
            events = attempt.Events(sub, attempt.stages(len(sub.cells), skip, pending), pending,
                                    bounds, counts, self.config)
            breach = attempt.watch(child, events, self.config, sub)
        finally:
            status = child.end()
            shutil.rmtree(workdir, ignore_errors=True)
            self._profile_child(f"child {kind} ({sub.file})", forked, events.times)
        breach = breach or child.killed_for_memory(self.config)
        stop = attempt.settle(events, breach, status, skip, skipped, self.config.budget)
        if stop == attempt.NO_SANDBOX:
            log(f"error: {sub.shown}: {events.walls_failed}")
        return stop

    def _profile_child(self, who: str, forked: float,
                       times: list[tuple[attempt.Stage, float, float]]) -> None:
        """A child's spans: its fork and walls (to its first stage), its cells together, each
        exercise, its end (to now)."""
        first = times[0][1] if times else time.monotonic()
        self.profile.add(who, "fork, walls, limits", forked, first)
        cells = [t for t in times if t[0][0] == "cell"]
        if cells:
            self.profile.add(who, f"the notebook's {len(cells)} code cells", cells[0][1],
                             cells[-1][2])
        for stage, start, end in times:
            if stage[0] == "exercise":
                self.profile.add(who, f"exercise {stage[1]}", start, end)
        self.profile.add(who, "exit", times[-1][2] if times else first)

    def profile_zygotes(self) -> None:
        """Each zygote's start-up steps, as it said them (once ready)."""
        for kind, zygote in self.zygotes.items():
            if zygote.times:
                self.profile.add(f"zygote {kind}", "python start", zygote.started,
                                 zygote.times[0][1])
            for what, start, end in zygote.times:
                self.profile.add(f"zygote {kind}", what, start, end)

    # --- the whole run ------------------------------------------------------------------------

    def report(self, sub: results.Submission) -> results.Report:
        if sub.error:
            return results.not_graded(sub, self.seed, self.cells.get(sub.chapter))
        self.oracle_ready[sub.chapter].wait()
        if sub.chapter not in self.oracle:
            sub.error = (f"{sub.shown}: TensorFlow could not compute the expected answers "
                         f"({self.oracle_error})")
            return results.not_graded(sub, self.seed, self.cells.get(sub.chapter))
        return results.graded(sub, self.tables[sub.chapter], self.seed,
                               self.oracle[sub.chapter], self.isolation,
                               self.config.visibility)


def _lock_bytecode() -> None:
    """Without walls, as root: every compiled module under rnnbook/ becomes root's only (the
    children run as nobody; a reference.pyc written before setup.sh made reference.py root's
    would solve the by-hand exercises). It is only a cache: Python still imports the sources."""
    for folder in (ROOT / "rnnbook").rglob("__pycache__"):
        for path in [folder, *folder.iterdir()]:
            with contextlib.suppress(OSError):
                os.chmod(path, os.stat(path).st_mode & ~0o077)


def _world_readable(path: str) -> bool:
    """Whether any user can reach and read ``path`` (every folder on the way searchable)."""
    parts = pathlib.Path(os.path.realpath(path)).parts
    for k in range(1, len(parts) + 1):
        try:
            mode = os.stat(os.path.join(*parts[:k])).st_mode
        except OSError:
            return False
        if not mode & (stat.S_IXOTH if k < len(parts) or stat.S_ISDIR(mode) else stat.S_IROTH):
            return False
    return True


def _last_line(path: str | pathlib.Path) -> str:
    try:
        lines = pathlib.Path(path).read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no output)"
    return lines[-1][:300] if lines else "(no output)"


def _case_paths(cases: list[list[Case]]) -> list[str]:
    """Absolute paths of existing files named by the trials (e.g. an event file)."""
    found: list[str] = []
    stack: list[Any] = [cases]  # the trials' plain data, walked
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += value.values()
        elif isinstance(value, (list, tuple)):
            stack += value
        elif isinstance(value, str) and value.startswith("/") and os.path.exists(value):
            found.append(os.path.realpath(value))
    return found


class Outputs:
    """Writes each output in --out on its own: one that fails (a full disk, a folder in the
    way) is remembered with why, and the others are still written."""

    def __init__(self) -> None:
        self.failed: list[str] = []  # "what (why)"

    def write(self, what: str, action: Callable[..., object], *args: Any) -> bool:
        try:
            action(*args)
        except Exception as error:  # noqa: BLE001 - one output never stops the others
            lines = str(error).strip().splitlines()
            why = f"{type(error).__name__}: {lines[-1][:200]}" if lines else type(error).__name__
            self.failed.append(f"{what} ({why})")
            return False
        return True

    def said(self) -> bool:
        """One line on stderr naming every output that could not be written; True if any."""
        if self.failed:
            log(f"error: could not write {len(self.failed)} output"
                f"{'s' * (len(self.failed) != 1)}: " + "; ".join(self.failed))
        return bool(self.failed)


def _timings(out: pathlib.Path,
             ordered: list[tuple[results.Submission, results.Report]]) -> None:
    """``timings.csv``: each submission's seconds and peak memory (they vary run to run, so
    they stay out of the reports)."""
    lines: list[list[str | float]] = [["report", "seconds", "peak_mb"]]
    lines += [[sub.name, round(sub.seconds, 2), round(sub.peak_mb)]
              for sub, _ in ordered]
    results.write_atomic(out / results.TIMINGS, rosters.csv_text(lines))


def _class_report(out: pathlib.Path) -> None:
    """``class-report.html`` and ``.csv`` (and the similarity table) from the reports, in a
    process of its own (it draws; this one keeps matplotlib out). A failure costs no grade:
    the reports are written already."""
    made = subprocess.run([sys.executable, "-m", "rnnbook.grading.classreport", str(out),
                           "--parent", str(os.getpid())], capture_output=True, text=True)
    if made.returncode != 0:
        reason = (made.stderr.strip().splitlines() or [f"exit status {made.returncode}"])[-1]
        raise GradeError(reason)


def progress(done: int, total: int, sub: results.Submission, seconds: float,
             width: int = 20) -> str:
    """One line per graded submission: a bar, the count, which one, its seconds and peak memory
    (see --timeout and --memory), seconds so far."""
    filled = round(width * done / total)
    return (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {sub.file}: "
            f"{sub.seconds:.1f} s, peak {sub.peak_mb:.0f} MB ({seconds:.0f} s in all)")


def grade(config: Config, submissions: list[str], out: str | pathlib.Path,
          table_file: str | os.PathLike[str] | None = None,
          early: procs.Early | None = None) -> int:
    """Grade ``submissions`` (paths) into ``out``; returns the exit status. ``early``: the
    zygotes started before the grader's imports (Gradescope's side), and their folder."""
    sys.dont_write_bytecode = True  # no .pyc of the reference (or any of ours) for a child to find
    paths = find_notebooks(submissions)
    if not paths:
        raise GradeError("no notebooks found in " + " ".join(map(str, submissions)))
    try:
        roster = rosters.read_roster(config.roster) if config.roster else None
    except rosters.RosterError as error:
        raise GradeError(str(error)) from None
    out = pathlib.Path(out)
    made = not out.exists()
    with contextlib.ExitStack() as held:
        try:
            out.mkdir(parents=True, exist_ok=True)
            if made:  # a run that stops before writing anything leaves no empty folder
                held.callback(_remove_if_empty, out)
            held.enter_context(lock.hold(out, log))  # to its last output, this run's alone
        except lock.FolderBusy as error:
            raise GradeError(str(error)) from None
        except OSError as error:
            raise GradeError(f"{out}: cannot grade into it ({error.strerror or error})"
                             ) from None
        left = results.clear_parts(out)
        if left:
            log(f"note: removed {len(left)} half-written output{'s' * (len(left) != 1)} "
                f"that a killed run left in {out} (*{results.PART})")
        return _grade_into(config, paths, out, roster, table_file, early)


def _remove_if_empty(folder: pathlib.Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()


def _grade_into(config: Config, paths: list[pathlib.Path], out: pathlib.Path,
                roster: list[rosters.Student] | None,
                table_file: str | os.PathLike[str] | None, early: procs.Early | None) -> int:
    """The run of :func:`grade`, under ``out``'s lock."""
    prof = Profile()
    if profile.ENTERED:
        prof.add("grader", "python start, the grader's imports", prof.born, profile.ENTERED[0])
    with prof.span("grader", "read the submissions, draw the trials"):
        run = Run(config, paths, out, table_file, prof)
    if out.exists() and not config.overwrite:
        taken = [s.name for s in run.subs if (out / s.name).exists()]
        if (out / results.GRADEBOOK).exists() or taken:
            raise GradeError(f"{out} already holds reports; choose a new --out or pass "
                             "--overwrite")
    procs.guard_this_process()
    rows, outputs = {}, Outputs()
    for sub in run.subs:
        if sub.error:
            log(f"error: {sub.error}")
            rows[sub.name] = run.report(sub)
            outputs.write(f"{sub.name}/", results.write, out, sub, rows[sub.name])
    work = early.work if early else procs.work_folder()
    oracle = threading.Thread(target=call_with_roomy_stack, args=(run.compute_oracle,))
    try:
        if run.gradable:
            with prof.span("grader", "start the zygotes"):
                run.start_zygotes(work, early)
            oracle.start()  # (it waits for the TensorFlow zygote's oracle, or imports it)
            with prof.span("grader", "probe the walls (once the first zygote is ready)"):
                run.build_walls(work)
            with prof.span("grader", "find the cgroups"):
                run.count()
            workers = min(config.workers, len(run.gradable))
            log(f"{len(run.gradable)} submission{'s' * (len(run.gradable) != 1)}, {workers} at a "
                f"time, seed {run.seed}, limits {config.limits_text()}, "
                f"walls: {run.isolation}")
            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(run.grade_one, sub, work): sub for sub in run.gradable}
                for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                    sub = futures[future]
                    if sub.error and sub.name not in run.unstarted:
                        log(f"error: {sub.error}")
                    with prof.span("grader", f"wait for the oracle, report {sub.file}"):
                        rows[sub.name] = run.report(sub)
                        outputs.write(f"{sub.name}/", results.write, out, sub,
                                      rows[sub.name])
                    log(progress(done, len(run.gradable), sub, time.monotonic() - started))
            run.profile_zygotes()  # (ready by now: each child waited for its zygote)
    finally:
        with prof.span("grader", "close the zygotes, clean up"):
            if early:  # (those no submission needed)
                early.close()
            for zygote in run.zygotes.values():
                zygote.close()
            if run.cgroups:
                run.cgroups.close()
            shutil.rmtree(work, ignore_errors=True)
    if oracle.ident:
        oracle.join()
    if run.unstarted and run.zygote_failed:
        count, module = len(run.unstarted), run.zygote_failed.module
        log(f"error: {run.zygote_failed}: {count} submission{'s' * (count != 1)} not graded "
            "(each report says so); the grader's Python must import what the children use "
            f"(`python -c \"import {module}\"` there says why it cannot)")
    if run.oracle_error:
        log(f"error: TensorFlow could not compute the expected answers ({run.oracle_error})")
    ordered = [(sub, rows[sub.name]) for sub in run.subs]
    ended = time.monotonic()
    outputs.write(results.GRADEBOOK, lambda: results.write_atomic(
        out / results.GRADEBOOK, results.gradebook(ordered, run.tables, roster)))
    prof.add("grader", "the gradebook", ended)
    match = rosters.match_roster(run.subs, roster or [])
    if roster is not None:
        missing = [student.who() for student in match.missing]
        if missing:
            log(f"roster: no submission from {len(missing)}: {', '.join(missing)}")
        if match.unknown:
            unknown = [rosters.safe_path(s.path) for s in match.unknown]
            log(f"roster: not on the roster: {', '.join(unknown)}")
        for why in dict.fromkeys(match.clash.values()):
            log(f"error: {why}")
    # each exercise's code, for "Similar submissions"
    with prof.span("grader", "each exercise's code (similarity)"):
        outputs.write("exercise-code.json", similarity.save, out, run.subs, run.cells)
    if config.class_report:
        with prof.span("grader", "the class report"):
            outputs.write(results.TIMINGS, _timings, out, ordered)
            outputs.write("the class report", _class_report, out)
    if config.profile:
        prof.add("grader", "the whole run, to here", prof.born)
        for line in prof.lines():
            log(f"profile {line}")
        outputs.write(PROFILE, results.write_atomic, out / PROFILE, prof.csv())
    for sub, report in ordered:  # every submission, by its student's name where known
        student = match.student.get(sub.name)
        who = f"{student.name or student.id} ({sub.file})" if student else sub.file
        if sub.name in match.clash:
            continue  # said above: no score until it is resolved
        print(f"{who}: not graded (see its report)" if sub.error else
              f"{who}: {report.score:g} / {report.max_score}", file=_stderr())
    failed = outputs.said()
    return 1 if failed or match.clash or any(s.error for s in run.subs) else 0
