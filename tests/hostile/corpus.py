"""Hostile and broken submissions for the grader, each with the outcome it must get.

Every notebook is built from Chapter 1's solution notebook (or its learner copy) when the test
runs, so the corpus follows the exercises as they change. To look at them or grade them by hand::

    .venv/bin/python tests/hostile/corpus.py /tmp/hostile          # writes /tmp/hostile/subs/*
    .venv/bin/python -m rnnbook.grade /tmp/hostile/subs --out /tmp/hostile/out \\
        --workers 2 --timeout 5 --memory 1200 --cell-timeout 20

The notebooks set up without TensorFlow (``rnnbook.setup(tensorflow=False)``): Chapter 1's
functions are NumPy only, and each child then starts in a second instead of ten. The honest
grading tests in test_grade.py run the real set-up cell.

:data:`EXPECTED` says, for each submission, its total score and, per exercise, the points and a
phrase its feedback must contain. Entries marked ``walls`` try to get out of the sandbox (read
the other submissions or the solutions, write into the repository); they are graded only where
the grader's walls stand (see rnnbook/isolate.py), since elsewhere the attempt would succeed.
"""
import json
import pathlib
import sys
from dataclasses import dataclass, field

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from rnnbook import source  # noqa: E402

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"
LEARNER = ROOT / "notebooks" / f"{STEM}.ipynb"
#: the limits the corpus is graded with
LIMITS = ["--workers", "2", "--timeout", "5", "--memory", "1200", "--cell-timeout", "20"]
MARKER = "HACKED-by-corpus.txt"  # a file break_walls tries to create in every folder it can find
SLEEP = "77.25"  # `sleep SLEEP`, left running by background_process: must be gone afterwards


@dataclass
class Expect:
    score: float
    tests: dict = field(default_factory=dict)  # exercise -> (points, phrase in its feedback)
    error: str = ""  # for a file that is not graded: phrase of its one-line error
    notes: tuple = ()  # phrases of the report's notes, one for each (and no other note)
    walls: bool = False  # graded only behind the grader's walls


FULL = {"split_kernel": (1, "matches TensorFlow"), "rnn_step": (2, "matches TensorFlow"),
        "rnn_unroll": (2, "matches TensorFlow"), "tf1_from_keras": (1, "matches TensorFlow")}


def _with(**changes):
    return {**FULL, **changes}


EXPECTED = {
    "honest": Expect(6, FULL),
    "endless_loop": Expect(5, _with(tf1_from_keras=(0, "went over the time limit of 5 s"))),
    "endless_cell": Expect(6, FULL, notes=("went over the time limit of 20 s; it was skipped",)),
    "memory_hog": Expect(4, _with(rnn_unroll=(0, "went over the memory limit of 1200 MB"))),
    "forks_briefly": Expect(6, FULL),
    "os_exit": Expect(5, _with(split_kernel=(0, "ended the process (exit code 3)"))),
    "sys_exit": Expect(5, _with(tf1_from_keras=(0, "raised SystemExit")),
                       notes=("raised SystemExit: 1",)),
    "ctypes_crash": Expect(5, _with(split_kernel=(0, "crashed its process (SIGSEGV)"))),
    "crash_in_cell": Expect(6, FULL, notes=("crashed its process (SIGSEGV); it was skipped",)),
    "patch_everything": Expect(0, {name: (0, "") for name in FULL}),
    "forged_protocol": Expect(0, {name: (0, "") for name in FULL}),
    "huge_output": Expect(5, _with(tf1_from_keras=(0, "File too large"))),
    "background_process": Expect(6, FULL),
    "deleted_setup": Expect(1, _with(rnn_step=(0, "name 'np' is not defined"),
                                     rnn_unroll=(0, "name 'np' is not defined"),
                                     tf1_from_keras=(0, "name 'np' is not defined")),
                            notes=("name 'check' is not defined",) * len(FULL)),  # check cells
    "deleted_exercise": Expect(4, _with(rnn_unroll=(0, "no function called `rnn_unroll`")),
                               notes=("name 'rnn_unroll' is not defined",)),  # its check cell
    "reordered": Expect(6, FULL, notes=("name 'check' is not defined",) * len(FULL)),
    "renamed": Expect(4, _with(rnn_step=(0, "no function called `rnn_step` is defined")),
                      notes=("name 'rnn_step' is not defined",)),
    "wrong_signature": Expect(5, _with(split_kernel=(0, "raised TypeError"))),
    "empty": Expect(0, {name: (0, f"no function called `{name}`") for name in FULL}),
    "invalid_json": Expect(0, error="not a valid notebook"),
    "not_a_notebook": Expect(0, error="not a valid notebook"),
    "json_not_a_notebook": Expect(0, error="not a valid notebook"),
    "binary": Expect(0, error="not a valid notebook"),
    "unknown_chapter": Expect(0, error="cannot tell which chapter"),
    "steal_solutions": Expect(0, {name: (0, "not written yet") for name in FULL}, walls=True),
    "break_walls": Expect(6, FULL, walls=True),
}


# ---------------------------------------------------------------------------------------------
# Building blocks


def _notebook(learner=False):
    """Chapter 1's solution (or learner) notebook, set up without TensorFlow."""
    nb = source.read(LEARNER if learner else SOLUTION)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = cell.source.replace("rnnbook.setup()", "rnnbook.setup(tensorflow=False)")
    return nb


def _replace(nb, name, code):
    """Give exercise ``name`` a new body (its header line is kept)."""
    for ex in source.exercises(nb):
        if ex.name == name:
            nb.cells[ex.cell].source = f"# Exercise {ex.number} ({ex.points} points, {ex.kind})\n{code}"
            return nb
    raise KeyError(name)


def _append(nb, code):
    nb.cells.append(nbformat.v4.new_code_cell(code))
    return nb


def _cell_index(nb, start):
    return next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.startswith(start))


# ---------------------------------------------------------------------------------------------
# The corpus: one function per submission, returning a notebook or the file's raw bytes


def honest(ctx):
    return _notebook()


def endless_loop(ctx):
    return _replace(_notebook(), "tf1_from_keras",
                    "def tf1_from_keras(kernel, recurrent_kernel, bias):\n    while True:\n        pass\n")


def endless_cell(ctx):
    return _append(_notebook(), "while True:  # a training loop left running\n    pass\n")


def memory_hog(ctx):
    return _replace(_notebook(), "rnn_unroll", (
        "def rnn_unroll(inputs, h0, kernel, bias):\n    hog = []\n    while True:\n"
        "        hog.append(np.ones(2**24))  # 128 MB a time\n"))


def forks_briefly(ctx):
    """Forks now and then, as TensorFlow does to run uname: for an instant the copy's pages count
    twice (2 x 720 MB > 1200 MB). Not a breach: the limit needs two readings in a row."""
    return _append(_notebook(), (
        "import os, time\n"
        "big = np.ones(90_000_000)  # 720 MB\n"
        "for _ in range(8):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(0.03)  # less than the grader's 50 ms between readings\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "    time.sleep(0.1)\n"
        "del big\n"))


def os_exit(ctx):
    return _replace(_notebook(), "split_kernel",
                    "def split_kernel(kernel, input_depth):\n    import os\n    os._exit(3)\n")


def sys_exit(ctx):
    nb = _replace(_notebook(), "tf1_from_keras", (
        "def tf1_from_keras(kernel, recurrent_kernel, bias):\n    import sys\n    sys.exit('bye')\n"))
    return _append(nb, "import sys\nsys.exit(1)  # in a cell: IPython catches it\n")


def ctypes_crash(ctx):
    return _replace(_notebook(), "split_kernel",
                    "def split_kernel(kernel, input_depth):\n    import ctypes\n    ctypes.string_at(0)\n")


def crash_in_cell(ctx):
    return _append(_notebook(), "import ctypes\nctypes.string_at(0)  # segfault at the top level\n")


def patch_everything(ctx):
    """The learner's stubs, plus every patch that might fake a pass."""
    return _append(_notebook(learner=True), (
        "import builtins, sys, numpy, rnnbook.checking\n"
        "ok = rnnbook.checking.Outcome(None, True, 'ok')\n"
        "rnnbook.checking.evaluate = lambda *a, **k: ok\n"
        "rnnbook.checking.difference = lambda *a, **k: None\n"
        "rnnbook.checking.answer = lambda ex, fn, case: None\n"
        "numpy.allclose = numpy.isclose = numpy.array_equal = lambda *a, **k: True\n"
        "numpy.savez = lambda *a, **k: None\n"
        "sys.modules['__main__'].encode = lambda value, arrays: [1.0] * 5  # the sandbox's own\n"
        "builtins.print = lambda *a, **k: None\n"))


def forged_protocol(ctx):
    """The learner's stubs, plus forged answers and forged or garbled progress events."""
    return _append(_notebook(learner=True), (
        "import json, os, sys\n"
        "jobdir, fd = sys.argv[1], int(sys.argv[2])\n"
        "names = ['split_kernel', 'rnn_step', 'rnn_unroll', 'tf1_from_keras']\n"
        "for name in names:\n"
        "    try:\n"
        "        with open(os.path.join(jobdir, 'answers', name + '.json'), 'w') as f:\n"
        "            json.dump({'defined': True, 'answers': [1.0] * 5}, f)\n"
        "        np.savez(os.path.join(jobdir, 'answers', name + '.npz'))\n"
        "    except OSError:\n"
        "        pass\n"
        "os.write(fd, b'{\"cell\": \"x\", \"status\": \"ok\"}\\n[1, 2]\\n{\"exercise\": 5}\\n')\n"
        "os.write(fd, b'x' * (3 * 2**20) + b'\\n')  # a line far too long to be an event\n"
        "for name in names:\n"
        "    os.write(fd, json.dumps({'exercise': name, 'status': 'done'}).encode() + b'\\n')\n"))


def huge_output(ctx):
    nb = _append(_notebook(), "print('x' * 10**6)\n" * 3)
    return _replace(nb, "tf1_from_keras", (
        "def tf1_from_keras(kernel, recurrent_kernel, bias):\n"
        "    print('y' * 40 * 2**20)  # 40 MB: over the output cap\n"
        "    return np.concatenate([kernel, recurrent_kernel], axis=0), bias\n"))


def background_process(ctx):
    return _append(_notebook(), (
        "import subprocess\n"
        f"subprocess.Popen(['sleep', '{SLEEP}'], start_new_session=True)  # outlives the notebook?\n"))


def deleted_setup(ctx):
    nb = _notebook()
    del nb.cells[_cell_index(nb, "import numpy as np")]
    return nb


def deleted_exercise(ctx):
    nb = _notebook()
    del nb.cells[_cell_index(nb, "# Exercise 1.3")]
    return nb


def reordered(ctx):
    """Every code cell in reverse order: the set-up cell runs last, the functions are all there."""
    nb = _notebook()
    code = [c for c in nb.cells if c.cell_type == "code"]
    nb.cells = [c for c in nb.cells if c.cell_type != "code"] + code[::-1]
    return nb


def renamed(ctx):
    nb = _notebook()
    for cell in nb.cells:
        cell.source = cell.source.replace("rnn_step(", "rnn_step_v2(")
    return nb


def wrong_signature(ctx):
    return _replace(_notebook(), "split_kernel", (
        "def split_kernel(kernel):\n    return kernel[:3], kernel[3:]\n"))


def empty(ctx):
    nb = _notebook()
    nb.cells = []
    return nb


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
    return nb


def steal_solutions(ctx):
    """The learner's stubs, plus a cell that runs the solutions' code from wherever it can read it."""
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


def break_walls(ctx):
    """Tries every way out it knows; split_kernel raises, naming each that worked."""
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
        f"for folder in [{root!r}, {root!r} + '/rnnbook', {root!r} + '/solutions', {subs!r}, {out!r}]:\n"
        "    attempt('create a file in ' + folder, lambda: create(folder))\n"
        f"attempt('open the package for writing',\n"
        f"        lambda: open({root!r} + '/rnnbook/checking.py', 'r+').close())\n"
        f"attempt('read another submission', lambda: open({subs!r} + '/honest.ipynb').read())\n"
        f"attempt('read the solutions', lambda: open({str(SOLUTION)!r}).read())\n"
        f"attempt('read the git history', lambda: open({root!r} + '/.git/HEAD').read())\n"
        f"attempt('unmount the walls', lambda: umount({root!r}))\n"
        "attempt('see the grader', lambda: os.kill(os.getppid(), 0) if os.getppid() else 1 / 0)\n"
        "attempt('see other processes', lambda: more_than('/proc/[0-9]*', 3))\n"
        "attempt('see other jobs', lambda: more_than('/tmp/rnnbook-grade-*/sub*', 1))\n"
        "attempt('reach the network', lambda: socket.create_connection(('1.1.1.1', 53), timeout=3))\n"))
    return _replace(nb, "split_kernel", (
        "def split_kernel(kernel, input_depth):\n"
        "    if BROKE:\n"
        "        raise RuntimeError('got out: ' + '; '.join(BROKE))\n"
        "    return kernel[:input_depth], kernel[input_depth:]\n"))


def build(subs, out, walls=True):
    """Write every submission into ``subs`` (``out`` is where their reports will go); returns
    ``{name: path}``. ``walls=False`` leaves out the entries that try to break out."""
    subs.mkdir(parents=True, exist_ok=True)
    ctx = {"subs": subs.resolve(), "out": out.resolve()}
    made = {}
    for name, expect in EXPECTED.items():
        if expect.walls and not walls:
            continue
        path = subs / f"{name}.ipynb"
        made_ = globals()[name](ctx)
        if isinstance(made_, bytes):
            path.write_bytes(made_)
        else:
            nbformat.write(made_, str(path))
        made[name] = path
    return made


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: corpus.py FOLDER")
    folder = pathlib.Path(sys.argv[1])
    for name, path in build(folder / "subs", folder / "out").items():
        print(f"{path}  ({EXPECTED[name].score:g} points expected)")
