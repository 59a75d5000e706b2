"""What a grading child can reach and fill (issue 18): no solution code, compiled or not; no
oracle, reference or mistake model in its frames, objects or modules; scratch files counted.

Each test grades Chapter 1 notebooks from tests/hostile/corpus.py with the real grader
(``python -m rnnbook.grading``), behind the walls (skipped where user namespaces do not work).
"""
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import nbformat
import pytest
from hostile import corpus

from conftest import ROOT, need_walls
from rnnbook.grading import walls

slow = pytest.mark.slow


def grade(root, *args):
    """The grader of the tree ``root``, run from a normal shell (bytecode is written)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run([sys.executable, "-m", "rnnbook.grading", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=root, env=env)


def reports(out, name):
    report = json.loads((out / name / "results.json").read_text())
    return {t["name"].split()[-1]: t for t in report["tests"]}


@pytest.fixture
def place():
    """A folder outside /tmp (the children's own /tmp covers /tmp), removed afterwards."""
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    folder = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-isolation-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@slow
def test_nothing_of_the_instructors_side_in_reach_after_compileall(place):
    """A copy of the repository whose every module was compiled (``compileall``: the reference,
    the backward pass, the checks and the grader have .pyc files), graded from a normal shell:
    every exercise of a notebook that looks for oracles, references and mistake models in its
    frames, in gc.get_objects() (frozen objects too), in the checks modules imported again and
    in any bytecode it can find, finds nothing, and gets 0."""
    need_walls("no user namespaces here")
    tree = place / "tree"
    ignore = shutil.ignore_patterns("__pycache__")
    for part in ("rnnbook", "solutions"):
        shutil.copytree(ROOT / part, tree / part, ignore=ignore)
    compiled = subprocess.run([sys.executable, "-m", "compileall", "-q", "rnnbook"], cwd=tree,
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    for name in ("reference", "backward", "checks/ch01", "grading/run"):
        folder, stem = (tree / "rnnbook" / name).parent, pathlib.Path(name).name
        assert list((folder / "__pycache__").glob(f"{stem}.*.pyc")), name
    subs, out = place / "subs", place / "out"
    subs.mkdir()
    nbformat.write(corpus.steal_oracles({"root": tree}, unfreeze=True), str(subs / "steal.ipynb"))
    ran = grade(tree, subs / "steal.ipynb", "--out", out, "--seed", 3, "--no-class-report")
    assert ran.returncode == 0, ran.stderr
    assert "walls: namespaces" in ran.stderr
    tests = reports(out, "steal")
    assert list(tests) == list(corpus.FULL)
    for name, test in tests.items():
        assert test["score"] == 0 and "nothing to steal" in test["output"], (name, test["output"])


@slow
def test_scratch_files_count_towards_the_memory_limit(place):
    """--memory 300: /tmp, /dev/shm and the working folder share one pool of 75 MB. A by-hand
    exercise that writes 400 MB there is stopped at 75 MB and told so; one that writes 60 MB and
    holds 230 MB of memory (290 MB of memory alone would pass) went over the memory limit."""
    need_walls("no user namespaces here")
    pool = walls.scratch_mb(300)
    assert pool == 75
    hog = corpus.BY_HAND[-1]  # run in the NumPy-only child (about 25 MB)
    subs, out = place / "subs", place / "out"
    subs.mkdir()
    nbformat.write(corpus.scratch_hog({}, mb=400, ex=hog), str(subs / "hog.ipynb"))
    nbformat.write(corpus.scratch_hog({}, mb=60, ram_mb=230, ex=hog), str(subs / "mixed.ipynb"))
    ran = grade(ROOT, subs, "--out", out, "--seed", 3, "--memory", 300, "--workers", 1,
                "--no-class-report")
    assert ran.returncode == 0, ran.stderr
    test = reports(out, "hog")[hog.name]
    assert test["score"] == 0, test["output"]
    assert "raised OSError" in test["output"]
    assert f"it wrote more than {pool} MB of scratch files" in test["output"], test["output"]
    test = reports(out, "mixed")[hog.name]
    assert test["score"] == 0, test["output"]
    assert "went over the memory limit of 300 MB (60 MB of it in scratch files)" in test["output"]


ZYGOTE_PROBE = """
import gc, sys
sys.path.insert(0, sys.argv[1] + '/rnnbook/grading')
import zygote
callers = zygote.prepare('tf', sys.argv[1:])
from rnnbook.exercise import Chapter, Exercise, Mistake
gc.unfreeze()
found = set()
for obj in gc.get_objects():
    try:
        attrs = object.__getattribute__(obj, '__dict__')
    except Exception:
        attrs = {}
    if isinstance(obj, (Chapter, Exercise, Mistake)) or (
            isinstance(attrs, dict) and ('oracle' in attrs or 'CHAPTER' in attrs)):
        found.add(type(obj).__name__)
    if isinstance(obj, dict) and ('CHAPTER' in obj or callable(obj.get('oracle'))):
        found.add('a namespace holding ' + ', '.join(k for k in ('CHAPTER', 'oracle') if k in obj))
for name, module in sys.modules.items():
    if name.startswith('rnnbook.checks.') and sorted(vars(module)) != sorted(
            ['__builtins__', '__doc__', '__loader__', '__name__', '__package__', '__spec__',
             'check']):
        found.add(name)
print(sorted(found))
print(sorted(callers), sum(len(c) for c in callers.values()))
"""


@slow
def test_the_tensorflow_zygote_keeps_no_exercise_oracle_or_chapter():
    """Every chapter's TensorFlow zygote, as the grader starts it: nothing the collector lists
    (frozen objects too) is a chapter, an exercise or a mistake, or holds an oracle or a
    CHAPTER; every checks module is the stub; a caller for every exercise is there."""
    from rnnbook import checks
    from rnnbook.environment import TF_ENV

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/"),
           "RNNBOOK_GRADING": "1", "PYTHONDONTWRITEBYTECODE": "1", **TF_ENV}
    ran = subprocess.run([sys.executable, "-I", "-c", ZYGOTE_PROBE, str(ROOT), *checks.CHAPTERS],
                         capture_output=True, text=True, timeout=600, env=env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    found, listed = ran.stdout.strip().splitlines()[-2:]
    assert found == "[]", found
    total = sum(len(checks.load(stem).exercises) for stem in checks.CHAPTERS)
    assert listed == f"{sorted(checks.CHAPTERS)} {total}"


PLAINDATA_PROBE = """
import json, os, sys
sys.path.insert(0, sys.argv[1] + '/rnnbook/grading')
import zygote
kind = sys.argv[2]
chapters = zygote.prepare(kind, sys.argv[3:])
child, plaindata = sys.modules['rnnbook_child'], sys.modules['rnnbook_plaindata']
byhand = sys.modules.get('rnnbook.byhand')
print(json.dumps({
    'package': sorted(n for n in sys.modules if n == 'rnnbook' or n.startswith('rnnbook.')),
    'one_module': sys.modules.get('rnnbook.plaindata', plaindata) is plaindata,
    'child_uses_it': child.Raised is plaindata.Raised and child.to_plain is plaindata.to_plain,
    'answer_returns_it': byhand is None or byhand.Raised is plaindata.Raised,
}))
if chapters is not None:  # an API exercise's function raises in a TensorFlow child
    job = sys.modules['rnnbook_job'].Job.read(
        sys.modules['rnnbook_wire'].decode(json.load(sys.stdin), 2**24, dicts=True))
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        child.main(job, write, chapters)
    os.close(write)
    with os.fdopen(read) as events:
        for line in events:
            if json.loads(line).get('status') == 'done':
                print(json.dumps(json.loads(line)['answers']))
"""


@slow
def test_each_zygote_has_one_plain_data_module(tmp_path):
    """rnnbook/plaindata.py is the child's ``rnnbook_plaindata``: loaded by path in the NumPy
    zygote, which imports nothing of the package; the package's own module under both names in
    the TensorFlow zygote, so the :class:`Raised` that ``rnnbook.byhand.answer`` returns is the
    child's, and an API exercise's function that raises reaches the grader as an error, not as
    a sequence of three strings."""
    from rnnbook import checks
    from rnnbook.environment import TF_ENV
    from rnnbook.grading import wire

    prefix = tmp_path / "numpy-only"
    prefix.mkdir()
    (prefix / "numpy").symlink_to(pathlib.Path(importlib.util.find_spec("numpy").origin).parent)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/"),
           "RNNBOOK_GRADING": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run([sys.executable, "-I", "-S", "-c", PLAINDATA_PROBE, str(ROOT), "numpy",
                          str(prefix)], capture_output=True, text=True, timeout=600, env=env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    said = json.loads(ran.stdout.strip().splitlines()[-1])
    assert said == {"package": [], "one_module": True, "child_uses_it": True,
                    "answer_returns_it": True}, said

    stem, name = "01-basic-rnn-cell", "read_cell_weights"
    assert not checks.load(stem)[name].by_hand  # run by its ``call`` in the TensorFlow child
    case = checks.load(stem).cases(name, 3)[0]
    job = {"cells": [f"def {name}(*args):\n    raise ValueError('no weights here')\n"],
           "skip": [], "chapter": stem, "exercises": [{"name": name, "trials": [case]}],
           "workdir": "/tmp", "env": {}, "limits": {}}
    ran = subprocess.run([sys.executable, "-I", "-c", PLAINDATA_PROBE, str(ROOT), "tf",
                          str(ROOT), stem], input=json.dumps(wire.encode(job)),
                         capture_output=True, text=True, timeout=600, env={**env, **TF_ENV})
    assert ran.returncode == 0, ran.stderr[-3000:]
    said, answers = map(json.loads, ran.stdout.strip().splitlines()[-2:])
    assert "rnnbook.plaindata" in said.pop("package")
    assert said == {"one_module": True, "child_uses_it": True, "answer_returns_it": True}, said
    assert answers == [{"__raised__": ["ValueError", "no weights here",
                                         "line 2: raise ValueError('no weights here')"]}], answers


@slow
def test_another_copy_of_the_project_is_out_of_reach():
    """The walls are an allow-list: a second clone of the repository outside the home folder
    (here under /srv; under /var/tmp, /opt or /work it is the same) is unreadable to both kinds
    of child, which see the Python installation, the learner package and their scratch only."""
    need_walls("no user namespaces here")
    from rnnbook.grading import run

    base = "/srv" if os.access("/srv", os.W_OK) else "/var/tmp"
    clone = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-clone-", dir=base))
    try:
        wanted = ["rnnbook/reference.py", "rnnbook/backward.py", "rnnbook/checks/ch01.py",
                  "tests/learners/ch01.py"]
        for name in wanted:
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, clone / name)
        paths = [str(clone / name) for name in wanted] + [str(clone)]
        prelude = (
            "    import os\n"
            f"    for path in {paths!r}:\n"
            "        if os.path.exists(path):\n"
            "            raise RuntimeError('another copy is in reach: ' + path)\n")
        cells = run.exercise_cells()
        api = next(((stem, c) for stem, cs in cells.items() for c in cs if not c.by_hand), None)
        subs, out = clone / "subs", clone / "out"
        subs.mkdir()
        nb = corpus._wrap(corpus._notebook(), corpus.FIRST, prelude)  # the NumPy-only child
        nbformat.write(nb, str(subs / "numpy.ipynb"))
        if api:  # the TensorFlow child
            stem, cell = api
            nb = corpus._wrap(corpus.source.read(ROOT / "solutions" / f"{stem}.ipynb"), cell,
                              prelude)
            nbformat.write(nb, str(subs / "tf.ipynb"))
        ran = grade(ROOT, subs, "--out", out, "--seed", 2, "--no-class-report")
        assert ran.returncode == 0, ran.stderr
        assert "walls: namespaces" in ran.stderr
        for path in subs.glob("*.ipynb"):
            report = json.loads((out / path.stem / "results.json").read_text())
            assert report["score"] == report["extra_data"]["max_score"], report["output"]
            assert "in reach" not in json.dumps(report)
    finally:
        shutil.rmtree(clone, ignore_errors=True)


def test_the_walls_are_an_allow_list(tmp_path):
    """Every folder of / but the system's is hidden; links and files are not folders."""
    for name in ("usr", "etc", "srv", "opt", "work", "home"):
        (tmp_path / name).mkdir()
    (tmp_path / "lib").symlink_to("usr")
    (tmp_path / "file").write_text("")
    hidden = walls.outside_system(str(tmp_path))
    assert [p for p in hidden if p.startswith(str(tmp_path))] == [
        str(tmp_path / n) for n in ("home", "opt", "srv", "work")]


def test_a_fork_counts_the_pages_it_shares_with_its_parent_once():
    """Near the limit the memory reading counts shared pages once: a copy of a process that
    holds 200 MB adds little, where resident sizes would count the 200 MB twice (issue 36,
    item 7); far from it, the cheap sum of resident sizes is enough."""
    import signal as signals

    from rnnbook.grading import procs

    held = bytearray(200 * 2**20)
    held[::4096] = b"x" * len(held[::4096])  # every page touched: resident
    alone = procs.rss_mb([os.getpid()])
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: shares every page with its parent until either writes
        os.close(read)
        os.write(write, b"1")
        signals.pause()
        os._exit(0)
    try:
        os.close(write)
        assert os.read(read, 1) == b"1"
        resident = procs.rss_mb([os.getpid(), pid])  # no limit near: the plain sum
        assert resident > alone + 150
        both = procs.rss_mb([os.getpid(), pid], above=alone + 100)
        assert both < alone + 50, (alone, both)
    finally:
        os.kill(pid, signals.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read)
    del held


def test_a_process_that_ends_between_the_readings_counts_nothing(monkeypatch):
    """A process whose own pages cannot be read counts whole, as resident now: where it ended
    between the reading of its size and of its own pages (a grading child ending), that is
    nothing, not the size it had (one cold run read 300 MB too many that way)."""
    from rnnbook.grading import procs

    sizes = {"/proc/1/status": [400 * 1024], "/proc/2/status": [300 * 1024, 0]}
    monkeypatch.setattr(procs, "_kb", lambda path, key: sizes[path].pop(0))
    monkeypatch.setattr(procs, "_kbs", lambda path: {})  # 2 has ended: no pages to read
    assert procs.rss_mb([1, 2], above=0) == 400
    sizes = {"/proc/1/status": [400 * 1024], "/proc/2/status": [300 * 1024, 300 * 1024]}
    assert procs.rss_mb([1, 2], above=0) == 700  # unreadable and alive (not dumpable): whole
