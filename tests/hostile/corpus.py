"""Hostile and broken submissions for the grader, each with the outcome it must get.

Every notebook is built from Chapter 1's solution notebook (or its learner copy) when the test
runs, and every expectation is derived from that notebook's exercises (names, points, kinds),
so the corpus follows the exercises as they change. A case that needs one exercise picks it by
position or kind (the first by-hand exercise, the last exercise), never by name. To look at
them or grade them by hand::

    .venv/bin/python tests/hostile/corpus.py /tmp/hostile       # writes /tmp/hostile/subs/...
    .venv/bin/python -m rnnbook.grading /tmp/hostile/subs /tmp/hostile/subs/late \\
        --out /tmp/hostile/subs/out --workers 2 --timeout 8 --memory 1200 --cell-timeout 20 \\
        --budget 60 --processes 64

The corpus is graded in one run with two folders of submissions, ``subs/`` and ``subs/late/``,
and ``--out`` inside ``subs/``: hidden folders nested in hidden folders, which once made the
walls fail open. By-hand exercises are called in a NumPy-only child, API exercises in a
TensorFlow child: each notebook runs in both when its chapter has both kinds.

:data:`EXPECTED` says, for each submission, its total score and, per exercise, the points and a
phrase its feedback must contain. Entries marked ``walls`` try to get out of the sandbox; they
are graded only where the grader's walls stand, since elsewhere the attempt would succeed.
"""
import json
import os
import pathlib
import re
import sys
from dataclasses import dataclass, field

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from rnnbook import source  # noqa: E402

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"
LEARNER = ROOT / "notebooks" / f"{STEM}.ipynb"
#: the limits the corpus is graded with. Each case holds on a loaded machine by its margin, not
#: by luck (issue 34): a hog reaches MEMORY MB in a small share of TIMEOUT s and holds it until
#: it is stopped; a cell cut at CELL_TIMEOUT s leaves BUDGET - CELL_TIMEOUT s for the notebook's
#: three runs (its other cells, both children, the restart), 40 s where 10 s ran out at load 20;
#: the budget eater's cells sleep half a cell's limit each, and together more than BUDGET.
TIMEOUT, CELL_TIMEOUT, BUDGET, MEMORY, WORKERS = 8, 20, 60, 1200, 2
CUT = f"went over the time limit of {CELL_TIMEOUT} s; it was skipped"  # a cell's note
LIMITS = ["--workers", str(WORKERS), "--timeout", str(TIMEOUT), "--memory", str(MEMORY),
          "--cell-timeout", str(CELL_TIMEOUT), "--budget", str(BUDGET), "--processes", "64"]
LINK = "a link, not a file"  # the one-line error of a submission that is a link
FORGED = "FORGED: the grader is wrong"  # chosen_exception's class name: in no class report
FLOOD = 300  # fork_bomb, thread_flood: at most this many, should every bound fail
MARKER = "HACKED-by-corpus.txt"  # a file break_walls tries to create in every folder it finds
#: the learner side of the check (rnnbook/*.py that a TensorFlow child sees): break_walls tries to
#: open each for writing
PACKAGE_FILES = ("exercise.py", "compare.py", "byhand.py", "memo.py", "plaindata.py")
SLEEP = "77.25"  # `sleep SLEEP`, left running by background_process: must be gone afterwards
CHAIN = "77.5"  # `sleep CHAIN`, a detached chain of processes: must be gone afterwards
SECRET = "corpus-secret-4711"  # in the grader's environment: must not reach a child
NUMPY_ONLY = "must be done with NumPy"
LONG_CELLS = 3000  # long_errors: cells that each raise a 2,000-character error

EXERCISES = source.exercises(source.read(SOLUTION))
BY_HAND = [ex for ex in EXERCISES if ex.by_hand]
FIRST, LAST = EXERCISES[0], EXERCISES[-1]
#: code cells besides the set-up and the exercises that use what the set-up defines (check,
#: np, tf): each raises NameError when the set-up cell is gone or runs last
SETUP_USERS = sum(1 for c in source.read(SOLUTION).cells
                  if c.cell_type == "code" and not c.source.startswith("# Exercise")
                  and "rnnbook.setup(" not in c.source
                  and any(name in c.source for name in ("check(", "np.", "tf.", "rnnbook.")))
FULL = {ex.name: (ex.points, "matches TensorFlow") for ex in EXERCISES}
TOTAL = sum(ex.points for ex in EXERCISES)


@dataclass
class Expect:
    score: float
    tests: dict = field(default_factory=dict)  # exercise -> (points, phrase in its feedback)
    error: str = ""  # for a file that is not graded: phrase of its one-line error
    notes: tuple = ()  # phrases of the report's notes, one for each (and no other note)
    walls: bool = False  # graded only behind the grader's walls
    file: str = ""  # its file name (default: <name>.ipynb), under subs/
    report: str = ""  # its report folder (default: <name>)


def _with(**changes):
    """FULL with some exercises failing: ``_with(NAME=(0, phrase))``; score to match."""
    tests = {**FULL, **changes}
    return tests


def _score(tests):
    return sum(points for points, _ in tests.values())


def _failing(exercises, phrase):
    return _with(**{ex.name: (0, phrase) for ex in exercises})


def _uses_setup(ex):
    """Whether the exercise's solution uses a name the set-up cell defines (np, tf)."""
    body = source.read(SOLUTION).cells[ex.cell].source.split(source.BEGIN, 1)[-1]
    return "np." in body or "tf." in body


def _expect(tests, **kwargs):
    return Expect(_score(tests), tests, **kwargs)


NO_SETUP = [ex for ex in EXERCISES if _uses_setup(ex)]

EXPECTED = {
    "honest": _expect(FULL),
    "endless_loop": _expect(_failing([LAST], f"went over the time limit of {TIMEOUT} s")),
    "endless_cell": _expect(FULL, notes=(CUT,)),
    "memory_hog": _expect(_failing([LAST], f"went over the memory limit of {MEMORY} MB")),
    "forks_briefly": _expect(FULL),
    "os_exit": _expect(_failing([FIRST], "ended the process (exit code 3)")),
    "sys_exit": _expect(_failing([LAST], "raised SystemExit"), notes=("raised SystemExit: 1",)),
    "ctypes_crash": _expect(_failing([FIRST], "crashed its process (SIGSEGV)")),
    "crash_in_cell": _expect(FULL, notes=("crashed its process (SIGSEGV); it was skipped",)),
    "patch_everything": _expect(_failing(EXERCISES, "")),
    "forged_protocol": _expect(_failing(EXERCISES, "")),
    "huge_output": _expect(_failing([LAST], "File too large")),
    "background_process": _expect(FULL),
    "detached_chain": _expect(FULL),
    "deleted_setup": _expect(_failing(NO_SETUP, "is not defined"),
                             notes=("is not defined",) * SETUP_USERS),
    "deleted_exercise": _expect(_failing([LAST], f"no function called `{LAST.name}`"),
                                notes=(f"name '{LAST.name}' is not defined",)),
    "reordered": _expect(FULL, notes=("is not defined",) * SETUP_USERS),
    "renamed": _expect(_failing([LAST], f"no function called `{LAST.name}` is defined"),
                       notes=(f"name '{LAST.name}' is not defined",)),
    "wrong_signature": _expect(_failing([FIRST], "raised TypeError")),
    "empty": Expect(0, {ex.name: (0, f"no function called `{ex.name}`") for ex in EXERCISES}),
    # what a submission says reaches its report capped: 20 notes of 500 characters, and a count
    "long_errors": _expect(FULL, notes=("raised ValueError: xxx",) * 19
                           + (f"And {LONG_CELLS - 20} more notes.",)),
    # time limits the child cannot move
    "resets_deadline": _expect(FULL, notes=(CUT,)),
    # IPython's transformation of a cell is the child's work, under the cell's time limit
    "magic_flood": _expect(FULL, notes=(CUT,)),
    "budget_eater": Expect(0, {ex.name: (0, f"time budget of {BUDGET} s") for ex in EXERCISES}),
    # answers come back only over the pipe, bounded by what the trial implies
    "answer_bombs": _expect(_failing([FIRST], "not plain data")),
    "answer_flood": _expect(_failing([FIRST], "sent back more data than its trials allow")),
    # by hand is by hand
    "tensorflow_by_hand": _expect(_failing(BY_HAND, NUMPY_ONLY)),
    "keras_by_hand": _expect(_failing(BY_HAND, NUMPY_ONLY)),
    "check_oracle": _expect(_failing(BY_HAND, "raised AttributeError")),
    "checks_formulas": _expect(_failing(BY_HAND, NUMPY_ONLY)),
    "undo_numpy_only": _expect(_failing(BY_HAND, "raised ModuleNotFoundError"), walls=True),
    # leaks
    "environment": _expect(FULL),
    # names: reports stay inside --out, clashes get their own folder, bad files stop nothing
    "dots": _expect(FULL, file="...ipynb", report="submission"),
    "gradebook_name": _expect(FULL, file="gradebook.csv.ipynb",
                              report="submission-gradebook.csv"),
    "late_honest": _expect(FULL, file="late/honest.ipynb", report="honest-2"),
    # every name the grader writes in --out is reserved: no report folder takes one
    "timings_name": _expect(FULL, file="timings.csv.ipynb", report="submission-timings.csv"),
    "class_page_name": _expect(FULL, file="class-report.html.ipynb",
                               report="submission-class-report.html"),
    "class_table_name": _expect(FULL, file="Class-Report.CSV.ipynb",
                                report="submission-Class-Report.CSV"),
    "similar_name": _expect(FULL, file="similar-submissions.csv.ipynb",
                            report="submission-similar-submissions.csv"),
    "fifo": Expect(0, error="not a regular file"),
    # links are refused by name, whatever they point to, and stop nothing else (issue 36)
    "link_to_solution": Expect(0, error=LINK),
    "link_outside": Expect(0, error=LINK),
    "link_os_release": Expect(0, error=LINK),
    "link_dev_zero": Expect(0, error=LINK),
    # a file name that is not UTF-8, a lone surrogate in a notebook: every output is written
    "not_utf8_name": _expect(FULL, file=os.fsdecode(b"caf\xe9.ipynb"), report="caf_"),
    "lone_surrogate": _expect(FULL),
    # a class name of the submission's choosing is no label of the class report
    "chosen_exception": _expect(_failing([FIRST], "raised FORGED")),
    # broken files
    "invalid_json": Expect(0, error="not a valid notebook"),
    "not_a_notebook": Expect(0, error="not a valid notebook"),
    "json_not_a_notebook": Expect(0, error="not a valid notebook"),
    "binary": Expect(0, error="not a valid notebook"),
    "unknown_chapter": Expect(0, error="cannot tell which chapter"),
    "cell_flood": Expect(0, error="more than 5,000 cells (40,0"),
    # getting out
    "steal_solutions": Expect(0, {ex.name: (0, "not written yet") for ex in EXERCISES},
                              walls=True),
    "answer_theft": Expect(0, {ex.name: (0, "not written yet") for ex in EXERCISES},
                           walls=True),
    "break_walls": _expect(FULL, walls=True),
    # nothing of the instructor's side in reach: no oracle, reference or mistake model in the
    # child's frames, objects or modules, no bytecode of the reference or the checks anywhere
    "steal_oracles": _expect(_failing(EXERCISES, "nothing to steal"), walls=True),
    # memory no resident size shows: memfd files are counted, SysV shared memory is capped
    "memfd_hog": _expect(_failing([LAST], f"went over the memory limit of {MEMORY} MB"), walls=True),
    "shm_hog": _expect(FULL, walls=True),
    # processes and threads of a submission are bounded (--processes 64)
    "fork_bomb": _expect(FULL, notes=("raised RuntimeError: fork refused after",), walls=True),
    "thread_flood": _expect(FULL, notes=("raised RuntimeError: threads refused after",),
                            walls=True),
    # scratch files count: /tmp, /dev/shm and the working folder share one small pool
    "scratch_hog": _expect(_failing([LAST], "MB of scratch files"), walls=True),
}


def file_name(name):
    return EXPECTED[name].file or f"{name}.ipynb"


def report_name(name):
    return EXPECTED[name].report or name


# ---------------------------------------------------------------------------------------------
# Building blocks


def _notebook(learner=False):
    """Chapter 1's solution (or learner) notebook."""
    return source.read(LEARNER if learner else SOLUTION)


def _header(ex):
    return f"# Exercise {ex.number} ({ex.points} point{'s' * (ex.points != 1)}, {ex.kind})\n"


def _replace(nb, ex, body):
    """Exercise ``ex`` becomes ``def NAME(*args, **kwargs):`` with ``body`` (indented)."""
    nb.cells[ex.cell].source = _header(ex) + f"def {ex.name}(*args, **kwargs):\n" + body
    return nb


def _wrap(nb, ex, prelude):
    """Exercise ``ex`` runs ``prelude`` (indented code) first, then the solution."""
    code = nb.cells[ex.cell].source.split("\n", 1)[1]
    code = re.sub(rf"^def {ex.name}\(", f"def _solution_{ex.name}(", code, flags=re.MULTILINE)
    nb.cells[ex.cell].source = (_header(ex) + code + f"\n\ndef {ex.name}(*args, **kwargs):\n"
                                + prelude + f"    return _solution_{ex.name}(*args, **kwargs)\n")
    return nb


def _append(nb, code):
    nb.cells.append(nbformat.v4.new_code_cell(code))
    return nb


def _cell_index(nb, start):
    return next(i for i, c in enumerate(nb.cells)
                if c.cell_type == "code" and c.source.startswith(start))


#: code that finds the events pipe (any inherited pipe open for writing) and writes to it
PIPES = (
    "import os, stat\n"
    "def pipes():\n"
    "    found = []\n"
    "    for fd in range(3, 256):\n"
    "        try:\n"
    "            if stat.S_ISFIFO(os.fstat(fd).st_mode) and os.get_blocking(fd) is not None:\n"
    "                os.write(fd, b'')\n"
    "                found.append(fd)\n"
    "        except OSError:\n"
    "            pass\n"
    "    return found\n"
    "def send(line):\n"
    "    for fd in pipes():\n"
    "        try:\n"
    "            os.write(fd, line)\n"
    "        except OSError:\n"
    "            pass\n"
)


# ---------------------------------------------------------------------------------------------
# The corpus: one function per submission, returning a notebook or the file's raw bytes


def honest(ctx):
    return _notebook()


def endless_loop(ctx):
    return _replace(_notebook(), LAST, "    while True:\n        pass\n")


def endless_cell(ctx):
    return _append(_notebook(), "while True:  # a training loop left running\n    pass\n")


#: code that makes ``hog(mb)``: ``mb`` MB of memory in 8 threads at once, every page filled by the
#: kernel as it is mapped (MAP_POPULATE: a quarter of the CPU time NumPy's ones take, and 8
#: threads get 8 shares of a loaded machine), then holds it until the process is stopped: once
#: over the limit it stays over, for as many of the grader's readings as it takes (the kernel's
#: cgroup, where there is one, stops it at the limit and a quarter first)
HOG = (
    "import mmap, time\n"
    "from concurrent.futures import ThreadPoolExecutor\n"
    "def _map(mb):\n"
    "    return mmap.mmap(-1, mb * 2**20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS\n"
    "                     | mmap.MAP_POPULATE)\n"
    "def hog(mb):\n"
    "    with ThreadPoolExecutor(8) as pool:\n"
    "        held = list(pool.map(_map, [mb // 8] * 8))\n"
    "    while held:\n"
    "        time.sleep(1)\n"
)


def memory_hog(ctx):
    """The last exercise takes twice the memory limit at once and holds it."""
    nb = _append(_notebook(), HOG)
    return _replace(nb, LAST, f"    hog({2 * MEMORY})\n")


def forks_briefly(ctx):
    """Forks now and then, as TensorFlow does to run uname, and the copy lives on for many of
    the grader's readings: counted by resident size its pages would count twice (in the
    TensorFlow child 2 x (650 + 400) MB > 1200 MB); counted once (issue 36), it is no breach,
    however loaded the machine."""
    return _append(_notebook(), (
        "import os, time\n"
        "big = np.ones(50_000_000)  # 400 MB\n"
        "for _ in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(0.5)  # ten times the grader's 50 ms between readings\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "    time.sleep(0.1)\n"
        "del big\n"))


def os_exit(ctx):
    return _replace(_notebook(), FIRST, "    import os\n    os._exit(3)\n")


def sys_exit(ctx):
    nb = _replace(_notebook(), LAST, "    import sys\n    sys.exit('bye')\n")
    return _append(nb, "import sys\nsys.exit(1)  # in a cell\n")


def ctypes_crash(ctx):
    return _replace(_notebook(), FIRST, "    import ctypes\n    ctypes.string_at(0)\n")


def crash_in_cell(ctx):
    return _append(_notebook(), "import ctypes\nctypes.string_at(0)  # segfault at the top level\n")


def patch_everything(ctx):
    """The learner's stubs, plus every patch that might fake a pass."""
    return _append(_notebook(learner=True), (
        "import builtins, sys, numpy\n"
        "numpy.allclose = numpy.isclose = numpy.array_equal = lambda *a, **k: True\n"
        "numpy.savez = lambda *a, **k: None\n"
        "for name, module in list(sys.modules.items()):\n"
        "    if name.startswith('rnnbook'):\n"
        "        for attr in ('encode', 'to_plain', 'evaluate', 'answer'):\n"
        "            try:\n"
        "                if hasattr(module, attr):\n"
        "                    setattr(module, attr, lambda *a, **k: [1.0] * 5)\n"
        "            except ImportError:  # the reference's stub: nothing to patch\n"
        "                pass\n"
        "builtins.print = lambda *a, **k: None\n"))


def forged_protocol(ctx):
    """The learner's stubs, plus forged answers and forged or garbled events, in a cell."""
    names = [ex.name for ex in EXERCISES]
    return _append(_notebook(learner=True), PIPES + (
        "import json\n"
        f"for name in {names!r}:\n"
        "    send(json.dumps({'exercise': name, 'status': 'start'}).encode() + b'\\n')\n"
        "    send(json.dumps({'exercise': name, 'status': 'done', 'defined': True,\n"
        "                     'answers': [1.0] * 5}).encode() + b'\\n')\n"
        "send(b'{\"cell\": \"x\", \"status\": \"ok\"}\\n[1, 2]\\n{\"exercise\": 5}\\n')\n"
        "send(b'x' * (3 * 2**20) + b'\\n')  # a line far too long to be an event\n"))


def huge_output(ctx):
    nb = _append(_notebook(), "print('x' * 10**6)\n" * 3)
    return _wrap(nb, LAST, "    print('y' * 40 * 2**20)  # 40 MB: over the output cap\n")


def background_process(ctx):
    return _append(_notebook(), (
        "import subprocess\n"
        f"subprocess.Popen(['sleep', '{SLEEP}'], start_new_session=True)  # outlives the notebook?\n"))


def detached_chain(ctx):
    """A chain of processes that detaches itself (new session, double fork) and, a second after
    its submission's process has ended, would rewrite the reports: all of it must be gone when
    grading ends. (It waits for that process to end: while it runs, a submission graded without
    walls may write wherever the grader's user can, as the instructors' page says.)"""
    out = str(ctx["out"])
    return _append(_notebook(), (
        "import os, subprocess\n"
        "script = ('(while kill -0 ' + str(os.getpid()) + ' 2>/dev/null; do sleep 0.1; done; '\n"
        "          'sleep 1; for f in ' + " + repr(out) + " + '/gradebook.csv ' + "
        + repr(out) + " + '/*/results.json; do echo hacked > $f; done; "
        f"sleep {CHAIN}) & exec sleep {CHAIN}')\n"
        "subprocess.Popen(['setsid', 'sh', '-c', script], start_new_session=True,\n"
        "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"))


def deleted_setup(ctx):
    nb = _notebook()
    del nb.cells[next(i for i, c in enumerate(nb.cells)
                      if c.cell_type == "code" and "rnnbook.setup()" in c.source)]
    return nb


def deleted_exercise(ctx):
    nb = _notebook()
    del nb.cells[LAST.cell]
    return nb


def reordered(ctx):
    """Every code cell in reverse order: the set-up cell runs last, the functions are all there."""
    nb = _notebook()
    code = [c for c in nb.cells if c.cell_type == "code"]
    nb.cells = [c for c in nb.cells if c.cell_type != "code"] + code[::-1]
    return nb


def renamed(ctx):
    nb = _notebook()
    cell = nb.cells[LAST.cell]
    cell.source = cell.source.replace(f"def {LAST.name}(", f"def {LAST.name}_v2(")
    return nb


def wrong_signature(ctx):
    nb = _notebook()
    nb.cells[FIRST.cell].source = _header(FIRST) + f"def {FIRST.name}(only):\n    return only\n"
    return nb


def empty(ctx):
    nb = _notebook()
    nb.cells = []
    return nb


def long_errors(ctx):
    """Cells that each raise a 2,000-character error (10,000 of them once made 39 MB of
    results.json and feedback.md from a 1.8 MB notebook)."""
    nb = _notebook()
    for _ in range(LONG_CELLS):
        _append(nb, "raise ValueError('x' * 2000)\n")
    return nb


def resets_deadline(ctx):
    """A cell that never ends but keeps telling the grader it has just started."""
    return _append(_notebook(), PIPES + (
        "import json, time\n"
        "me = len([c for c in range(100)])  # (any index: only moving forward counts)\n"
        "while True:\n"
        "    for cell in range(0, 64):\n"
        "        send(json.dumps({'cell': cell, 'status': 'start'}).encode() + b'\\n')\n"
        "        send(json.dumps({'cell': cell, 'status': 'ok', 'error': ''}).encode() + b'\\n')\n"
        "    time.sleep(0.05)\n"))


def magic_flood(ctx):
    """A cell of 9,000 ``%time`` lines (114 KB): IPython transforms it in 500 passes over the
    whole cell; in the grader's own process once, it held the whole batch for 75 s."""
    return _append(_notebook(), "%time x = 1\n" * 9000)


def budget_eater(ctx):
    """Every cell stays under its limit, and together they take more than the budget."""
    nb = _notebook(learner=True)
    for _ in range(BUDGET // (CELL_TIMEOUT // 2) + 1):
        _append(nb, f"import time\ntime.sleep({CELL_TIMEOUT // 2})  # half a cell's limit\n")
    return nb


def answer_bombs(ctx):
    """The first exercise sends, as its answers, a short line claiming a 4 GiB array."""
    bomb = {"exercise": FIRST.name, "status": "done", "defined": True,
            "answers": [{"__array__": ["float64", [2**29], "AAAA"]}] * 5}
    nb = _append(_notebook(), PIPES)
    return _replace(nb, FIRST, f"    send({json.dumps(bomb).encode()!r} + b'\\n')\n"
                    "    return None\n")


def answer_flood(ctx):
    """The first exercise answers with more data than its trials allow (5 x 2 MB, where trials
    this small allow 1 MB): five times over, yet little for a loaded machine to encode and for
    the grader to read (5 x 8 MB took 20 s at load 20, over the exercise's time limit)."""
    return _replace(_notebook(), FIRST, "    import numpy as np\n"
                    "    return np.zeros(2**18)\n")


def tensorflow_by_hand(ctx):
    """Every by-hand exercise asks TensorFlow (the set-up's `tf`, or an import)."""
    nb = _notebook()
    for k, ex in enumerate(BY_HAND):
        body = ("    import tensorflow\n    return tensorflow.zeros(1)\n" if k % 2 else
                "    return tf.constant(1.0)\n")
        _replace(nb, ex, body)
    return nb


def keras_by_hand(ctx):
    """Every by-hand exercise answered with Keras' own cells."""
    nb = _notebook()
    for k, ex in enumerate(BY_HAND):
        body = ("    import keras\n    return keras.layers.SimpleRNN(1)\n" if k % 2 else
                "    return tf.keras.layers.SimpleRNNCell(1)\n")
        _replace(nb, ex, body)
    return nb


def check_oracle(ctx):
    """Every by-hand exercise calls the check's own oracle through `check.__self__`."""
    nb = _notebook()
    for ex in BY_HAND:
        _replace(nb, ex, f"    return check.__self__['{ex.name}'].oracle(*args)\n")
    return nb


def checks_formulas(ctx):
    """Every by-hand exercise calls the NumPy formulas that ship in rnnbook's checks."""
    nb = _notebook()
    for ex in BY_HAND:
        _replace(nb, ex, (
            "    import importlib\n"
            "    for name in ('rnnbook.reference', 'rnnbook.checks.ch01', 'rnnbook.exercise',\n"
            "                 'rnnbook.compare', 'rnnbook.byhand', 'rnnbook.memo', 'rnnbook.plaindata'):\n"
            "        module = importlib.import_module(name)\n"
            f"    return module.CHAPTER['{ex.name}'].oracle(*args)\n"))
    return nb


def undo_numpy_only(ctx):
    """Takes away the NumPy-only import hook and puts the real installation back on the path."""
    paths = sorted({p for p in sys.path if p.endswith("site-packages")} | {str(ROOT)})
    nb = _notebook()
    for ex in BY_HAND:
        _replace(nb, ex, (
            "    import sys\n"
            "    sys.meta_path[:] = [f for f in sys.meta_path if 'NumPyOnly' not in repr(f)]\n"
            "    for name in [n for n in sys.modules if n.startswith('rnnbook')]:\n"
            "        del sys.modules[name]\n"
            f"    sys.path[:0] = {paths!r}\n"
            "    import tensorflow\n"
            "    from rnnbook import checks\n"
            f"    return checks.load('{STEM}')['{ex.name}'].oracle(*args)\n"))
    return nb


def environment(ctx):
    """Every exercise first looks for the grader's secrets in its environment."""
    nb = _notebook()
    for ex in EXERCISES:
        _wrap(nb, ex, (
            "    import os\n"
            f"    if any({SECRET!r} in v for v in os.environ.values()) or len(os.environ) > 20:\n"
            "        raise RuntimeError('leaked: ' + ', '.join(sorted(os.environ)))\n"))
    return nb


def dots(ctx):
    return _notebook()


def gradebook_name(ctx):
    return _notebook()


def timings_name(ctx):
    return _notebook()


class_page_name = class_table_name = similar_name = timings_name


def late_honest(ctx):
    return _notebook()


def fifo(ctx):
    return "fifo"


def link_to_solution(ctx):
    return ("link", str(SOLUTION))


def link_outside(ctx):
    """A link to a notebook outside the folders given (an honest one: it would get full marks)."""
    outside = ctx["subs"].parent / "outside"
    outside.mkdir(exist_ok=True)
    nbformat.write(_notebook(), str(outside / "elsewhere.ipynb"))
    return ("link", str(outside / "elsewhere.ipynb"))


def link_os_release(ctx):
    return ("link", "/etc/os-release")


def link_dev_zero(ctx):
    return ("link", "/dev/zero")


def not_utf8_name(ctx):
    return _notebook()


def lone_surrogate(ctx):
    """A cell with a lone surrogate (valid JSON) after the answers: nbformat reads it, and no
    UTF-8 writer can write it as it is."""
    nb = _append(_notebook(), "decoy = 0  # \ud800\n")
    return json.dumps(nb, ensure_ascii=True).encode()


def chosen_exception(ctx):
    return _replace(_notebook(), FIRST, (
        f"    raise type({FORGED + ' (see the class report)'!r}, (Exception,), {{}})()\n"))


def invalid_json(ctx):
    return b"{not json"


def not_a_notebook(ctx):
    return b"I did not do the homework."


def json_not_a_notebook(ctx):
    return json.dumps({"cells": 5, "answer": 42}).encode()


def binary(ctx):
    return b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def unknown_chapter(ctx):
    nb = _notebook()
    del nb.metadata["rnnbook"]
    nb.cells = [c for c in nb.cells if not c.source.startswith("# Exercise")]
    return nb


def cell_flood(ctx):
    """40,000 tiny cells (6 MB): reading and checking them once took the grader 10 s."""
    nb = json.loads(nbformat.writes(_notebook()))
    nb["cells"] += [{"cell_type": "code", "id": f"c{k}", "metadata": {}, "source": "x = 1",
                     "outputs": [], "execution_count": None} for k in range(40_000)]
    return json.dumps(nb).encode()


def steal_solutions(ctx):
    """The learner's stubs, plus a cell that runs the solutions' code from wherever it can."""
    paths = [str(SOLUTION), str(ctx["subs"] / "honest.ipynb"), f"/proc/*/root{SOLUTION}",
             f"/proc/*/cwd/../../solutions/{SOLUTION.name}"]
    return _append(_notebook(learner=True), (
        "import glob, json\n"
        f"for pattern in {paths!r}:\n"
        "    for path in glob.glob(pattern) or [pattern]:\n"
        "        try:\n"
        "            cells = json.load(open(path))['cells']\n"
        "        except (OSError, ValueError):\n"
        "            continue\n"
        "        for cell in cells:\n"
        "            code = ''.join(cell['source'])\n"
        "            if cell['cell_type'] == 'code' and code.startswith('# Exercise'):\n"
        "                exec(code, globals())\n"))


def answer_theft(ctx):
    """The learner's stubs, plus a cell that looks for another submission's answers or files
    wherever a path it can learn leads (argv, its folders, /proc, the grader's work folder)."""
    subs = str(ctx["subs"])
    return _append(_notebook(learner=True), (
        "import glob, json, os, sys\n"
        "places = list(sys.argv) + [os.getcwd(), os.path.dirname(os.getcwd())]\n"
        "places += glob.glob('/tmp/rnnbook-grade-*/*') + glob.glob('/proc/*/cwd')\n"
        f"places += glob.glob({subs!r} + '/*.ipynb')\n"
        "for place in places:\n"
        "    for path in glob.glob(os.path.join(place, '*')) + [place]:\n"
        "        try:\n"
        "            cells = json.load(open(path))['cells']\n"
        "        except Exception:\n"
        "            continue\n"
        "        for cell in cells:\n"
        "            code = ''.join(cell['source'])\n"
        "            if cell['cell_type'] == 'code' and code.startswith('# Exercise'):\n"
        "                exec(code, globals())\n"))


def break_walls(ctx):
    """Tries every way out it knows; the first exercise raises, naming each that worked."""
    root, subs, out = str(ROOT), str(ctx["subs"]), str(ctx["out"])
    nb = _append(_notebook(), (
        "import ctypes, glob, os, socket\n"
        "BROKE = []\n"
        "def attempt(what, action):\n"
        "    try:\n"
        "        action()\n"
        "    except Exception:\n"
        "        return\n"
        "    BROKE.append(what)\n"
        "def create(folder):\n"
        f"    open(os.path.join(folder, {MARKER!r}), 'x').close()\n"
        "def umount(path):\n"
        "    if ctypes.CDLL(None).umount2(path.encode(), 2) != 0:\n"
        "        raise OSError(path)\n"
        "def more_than(pattern, n):\n"
        "    if len(glob.glob(pattern)) <= n:\n"
        "        raise OSError(pattern)\n"
        f"for folder in [{root!r}, {root!r} + '/rnnbook', {root!r} + '/solutions', {subs!r},\n"
        f"               {out!r}]:\n"
        "    attempt('create a file in ' + folder, lambda: create(folder))\n"
        f"for name in {PACKAGE_FILES!r}:\n"
        f"    attempt('open the package for writing: ' + name,\n"
        f"            lambda: open({root!r} + '/rnnbook/' + name, 'r+').close())\n"
        f"attempt('read another submission', lambda: open({subs!r} + '/honest.ipynb').read())\n"
        f"attempt('read the solutions', lambda: open({str(SOLUTION)!r}).read())\n"
        f"attempt('read the git history', lambda: open({root!r} + '/.git/HEAD').read())\n"
        f"attempt('read the grader', lambda: open({root!r} + '/rnnbook/grading/run.py').read())\n"
        f"attempt('unmount the walls', lambda: umount({root!r}))\n"
        "attempt('see the grader', lambda: os.kill(os.getppid(), 0) if os.getppid() else 1 / 0)\n"
        "attempt('see other processes', lambda: more_than('/proc/[0-9]*', 3))\n"
        "attempt('see other jobs', lambda: more_than('/tmp/rnnbook-grade-*/*[0-9]', 1))\n"
        "attempt('reach the network', lambda: socket.create_connection(('1.1.1.1', 53), timeout=3))\n"))
    return _wrap(nb, FIRST, "    if BROKE:\n        raise RuntimeError('got out: ' + '; '.join(BROKE))\n")


#: what a student who wants the grader's answers tries in every exercise: the callers' frames
#: and every object the collector knows for an exercise (anything with an oracle, a reference or
#: mistakes) and a case; the checks modules, imported again; the compiled reference, backward
#: pass and checks from any __pycache__ it can find, loaded with marshal. ROOTS: where to look;
#: UNFREEZE: whether to list the objects frozen after TensorFlow's import too (each of them:
#: seconds, and every page the zygote shares is copied; tests/test_isolation.py does it, and
#: checks the zygote's frozen objects directly).
STEAL = """
import gc, importlib, marshal, os, sys, types
_FOUND = []
_TOP = ('reference', 'backward', 'exercise', 'compare', 'byhand', 'memo', 'plaindata')
def _cases():
    found, frame = [], sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if (isinstance(value, dict) and value
                    and all(isinstance(k, str) and not k.startswith('__') for k in value)):
                found.append(value)
        frame = frame.f_back
    return found
def _pycs(roots):
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ('.venv', '.git', 'site-packages')]
            for name in files:
                stem = name.split('.')[0]
                if name.endswith('.pyc') and (stem in _TOP or stem.startswith('ch0')):
                    yield stem, os.path.join(folder, name)
def _holders():
    if _FOUND:
        return _FOUND[1:]
    found = []
    if UNFREEZE:  # what the grader froze (TensorFlow), too: slow, and it copies shared pages
        gc.unfreeze()
    for obj in gc.get_objects():
        try:
            attrs = object.__getattribute__(obj, '__dict__')
        except Exception:
            continue
        if isinstance(attrs, dict) and any(k in attrs for k in ('oracle', 'mistakes', 'exercises',
                                                                  'CHAPTER')):
            found.append(obj)
    for name in [n for n in sys.modules if n.startswith('rnnbook.checks.')]:
        found.append(getattr(sys.modules[name], 'CHAPTER', None))
        try:
            del sys.modules[name]
            found.append(importlib.import_module(name).CHAPTER)
        except Exception:
            pass
    roots = list(ROOTS)
    try:
        import rnnbook
        roots.append(os.path.dirname(rnnbook.__file__))
    except Exception:
        pass
    for stem, path in sorted(_pycs(roots)):  # reference and backward before the checks
        try:
            with open(path, 'rb') as f:
                code = marshal.loads(f.read()[16:])
            package = 'rnnbook.' if stem in _TOP else 'rnnbook.checks.'
            module = types.ModuleType(package + stem)
            module.__file__ = path
            if stem in ('reference', 'backward'):
                sys.modules[package + stem] = module
            exec(code, module.__dict__)
            found.append(getattr(module, 'CHAPTER', module))
        except Exception:
            pass
    _FOUND.append('searched')
    _FOUND.extend(x for x in found if x is not None)
    return _FOUND[1:]
def steal(name):
    holders = _holders()
    exercises = []
    for holder in holders:
        try:  # a list of exercises, or a function that lists them (rnnbook.checks.exercises)
            items = getattr(holder, 'exercises', [holder])
            exercises += list(items() if callable(items) else items)
        except Exception:
            pass
    for ex in exercises:
        if getattr(ex, 'name', name) != name:
            continue
        models = [getattr(ex, 'oracle', None), getattr(ex, 'reference', None)]
        models += [m.answer for m in getattr(ex, 'mistakes', ())]
        for case in _cases():
            for model in models:
                try:
                    return model(case)
                except Exception:
                    pass
    useful = [ex for ex in exercises
              if any(getattr(ex, a, None) for a in ('oracle', 'reference', 'mistakes'))]
    if useful:  # something of the instructor's side is here: the grader let it leak
        raise RuntimeError('found, but could not use: ' + ', '.join(
            sorted({type(ex).__name__ + ' ' + str(getattr(ex, 'name', '')) for ex in useful})))
    raise RuntimeError('nothing to steal')
"""


def steal_oracles(ctx, unfreeze=False):
    """Every exercise returns what the instructor's side would answer, from whatever it finds
    (frames, gc.get_objects(), modules, bytecode on disk); it raises when it finds nothing."""
    roots = ctx.get("roots") or [str(ctx.get("root", ROOT)), "/tmp", "."]  # (the child's cwd)
    nb = _append(_notebook(), f"ROOTS = {roots!r}\nUNFREEZE = {unfreeze!r}\n" + STEAL)
    for ex in EXERCISES:
        _replace(nb, ex, f"    return steal({ex.name!r})\n")
    return nb


def scratch_hog(ctx, mb=400, ram_mb=0, ex=LAST):
    """Exercise ``ex`` fills /dev/shm, /tmp and its working folder with ``mb`` MB (files of
    10 MB, under the 32 MB cap on one file, in turn), keeps them, then holds ``ram_mb`` MB of
    memory for half a second and answers right."""
    return _wrap(_notebook(), ex, (
        "    import numpy as np, os\n"
        f"    for k in range({mb} // 10):\n"
        "        name = ('/dev/shm', '/tmp', '.')[k % 3] + f'/hog{k}.bin'\n"
        "        if not os.path.exists(name):  # written once, kept for every trial\n"
        "            with open(name, 'wb') as f:\n"
        "                f.write(b'x' * 10 * 2**20)\n"
        f"    kept = np.ones({ram_mb} * 2**17)\n"
        "    __import__('time').sleep(0.5 if kept.size else 0)\n"))


# --- issue 26, item 5: a student writes the class report (helper h8) ------------------------
#: what the learner's exception message says; the class report must not name it as a mistake
PLANTED_MISTAKE = "everyone in this class copied: see https://evil.example/answers"
PLANTED = f"bad shapes\n  Likely mistake: {PLANTED_MISTAKE}"


def plants_mistake(ctx):
    """The first and the last exercise (by hand, API) compute the right answer, then raise
    ValueError with a message that ends in a "Likely mistake:" line, as the check's own verdict
    would: the feedback shows the error, and the class report counts an error ("raised
    ValueError"), never a named mistake."""
    nb = _notebook()
    for ex in (FIRST, LAST):
        _wrap(nb, ex, "")
        call = f"    return _solution_{ex.name}(*args, **kwargs)\n"
        nb.cells[ex.cell].source = nb.cells[ex.cell].source.replace(
            call, call.replace("return ", "") + f"    raise ValueError({PLANTED!r})\n")
    return nb


EXPECTED["plants_mistake"] = _expect(_failing([FIRST, LAST], "raised ValueError"))
# --- end of issue 26, item 5 -----------------------------------------------------------------

def memfd_hog(ctx):
    """The last exercise fills memfd files of 16 MB, never mapped (60 of them once held 960 MB
    under --memory 600, and the report said 274 MB), up to the memory limit and a half, in 8
    threads (posix_fallocate: the kernel fills the pages), and holds them until it is stopped."""
    return _replace(_notebook(), LAST, (
        "    import os, time\n"
        "    from concurrent.futures import ThreadPoolExecutor\n"
        "    def fill(_):\n"
        "        fd = os.memfd_create('hog')\n"
        "        os.posix_fallocate(fd, 0, 16 * 2**20)\n"
        "        return fd\n"
        "    with ThreadPoolExecutor(8) as pool:\n"
        f"        held = list(pool.map(fill, range({MEMORY} * 3 // 2 // 16)))\n"
        "    while held:\n"
        "        time.sleep(1)\n"))


def shm_hog(ctx):
    """The first exercise makes SysV segments of 16 MB, fills each and lets it go (no resident
    size shows them), up to 80; it raises if it got more than the cap of 32 MB together."""
    return _wrap(_notebook(), FIRST, (
        "    import ctypes\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    libc.shmat.restype = ctypes.c_void_p\n"
        "    made = globals().setdefault('MADE', [])\n"
        "    while len(made) < 80 and not globals().get('REFUSED'):\n"
        "        segment = libc.shmget(0, 16 * 2**20, 0o1600)  # IPC_PRIVATE, IPC_CREAT\n"
        "        if segment < 0:\n"
        "            globals()['REFUSED'] = True\n"
        "            break\n"
        "        address = libc.shmat(segment, None, 0)\n"
        "        ctypes.memset(address, 1, 16 * 2**20)\n"
        "        libc.shmdt(ctypes.c_void_p(address))\n"
        "        made.append(segment)\n"
        "    if len(made) * 16 > 32:\n"
        "        raise RuntimeError(f'held {len(made) * 16} MB of SysV shared memory')\n"))


def fork_bomb(ctx):
    """A cell starts processes until refused (small ones, ``sleep``: a fork of the notebook's
    process would go over the memory limit first), at most FLOOD should the bound fail, then
    ends them and says how many it made."""
    return _append(_notebook(), (
        "import os\n"
        "pids, refused = [], ''\n"
        f"for _ in range({FLOOD}):\n"
        "    try:\n"
        "        pids.append(os.posix_spawnp('sleep', ['sleep', '20'], {}))\n"
        "    except OSError as error:\n"
        "        refused = str(error)\n"
        "        break\n"
        "for pid in pids:\n"
        "    os.kill(pid, 9)\n"
        "    os.waitpid(pid, 0)\n"
        "raise RuntimeError(f'fork refused after {len(pids)} processes ({refused})' if refused\n"
        f"                   else 'all {FLOOD} processes made')\n"))


def thread_flood(ctx):
    """A cell starts threads until refused (at most FLOOD, should the bound fail), then ends
    them and says how many it made."""
    return _append(_notebook(), (
        "import threading\n"
        "stop, threads, refused = threading.Event(), [], ''\n"
        f"for _ in range({FLOOD}):\n"
        "    thread = threading.Thread(target=stop.wait, daemon=True)\n"
        "    try:\n"
        "        thread.start()\n"
        "    except RuntimeError as error:\n"
        "        refused = str(error)\n"
        "        break\n"
        "    threads.append(thread)\n"
        "stop.set()\n"
        "for thread in threads:\n"
        "    thread.join()\n"
        "raise RuntimeError(f'threads refused after {len(threads)} ({refused})' if refused\n"
        f"                   else 'all {FLOOD} threads made')\n"))


def build(subs, out, walls=True, only=None):
    """Write every submission under ``subs`` (``out`` is where their reports will go); returns
    ``{name: path}``. ``walls=False`` leaves out the entries that try to break out; ``only``
    (names, or $RNNBOOK_CORPUS_ONLY, comma-separated) builds just those (to try a change)."""
    only = only or [n for n in os.environ.get("RNNBOOK_CORPUS_ONLY", "").split(",") if n]
    subs.mkdir(parents=True, exist_ok=True)
    (subs / "late").mkdir(exist_ok=True)
    ctx = {"subs": subs.resolve(), "out": out.resolve()}
    made = {}
    for name, expect in EXPECTED.items():
        if (expect.walls and not walls) or (only and name not in only):
            continue
        path = subs / file_name(name)
        content = globals()[name](ctx)
        if content == "fifo":
            os.mkfifo(path)
        elif isinstance(content, tuple):  # ("link", target)
            path.symlink_to(content[1])
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            nbformat.write(content, str(path))
        made[name] = path
    return made


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: corpus.py FOLDER")
    folder = pathlib.Path(sys.argv[1])
    for name, path in build(folder / "subs", folder / "subs" / "out").items():
        print(f"{path}  ({EXPECTED[name].score:g} points expected)")
