"""One verdict wherever an answer is checked (issue 25).

A learner's answer meets its check in four places: ``check(fn)`` in a notebook with the
repository's package, ``check(fn)`` with the learner release (``make release``), the grader's
NumPy or TensorFlow child (``python -m rnnbook.grading``), and the Gradescope bundle
(``make autograder``). Each must give the same verdict, the same parts right, the same named
mistake and the same points.

- :func:`test_arguments_reach_the_grader_as_the_notebook_passes_them`: a probe per exercise
  records the type tree of what it receives (named tuples and their fields, tuples and lists,
  dtypes and shapes, NumPy scalars) on every trial; the grader's children must see what the
  notebook's check passes.
- :func:`test_every_learners_answer_gets_one_verdict_in_four_places`: every answer of
  ``tests/learners`` (RIGHT and WRONG, all exercises; read as source text, with the helpers it
  uses) is written into notebooks, one notebook per *round* (the k-th answer of each exercise),
  and checked in the four places on one seed (in a notebook's place, each cell's code runs in
  a process of its own package and ``check(fn, seed=SEED)``'s steps follow, the oracle
  computed once per exercise). The release and the bundle are built as an
  instructor builds them (``rnnbook.grading.release``). Verdict, parts and points must agree
  everywhere; the named mistake between the repository's notebook, the grader and the bundle.
  The release names fewer mistakes until every mistake model runs without the reference: its
  differences are printed here, and ``tests/test_release_names.py`` holds that comparison.
  Each chapter's bundle grades that chapter's rounds with its own package, settings and table;
  Gradescope's own run (``run_autograder``) of Chapter 1's bundle on its first round must
  agree with it. The places run side by side (about 10 minutes on two busy cores).
"""
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap

import nbformat
import pytest

from conftest import ROOT
from rnnbook import checks, source
from rnnbook.grading import config, gradescope, release
from tests.learners import sources

SEED = 7
#: the grader's and the bundles' limits here: the verdicts are compared, not the limits, and a
#: right answer went over the default 10 s per exercise with the machine loaded (issue 34)
ROOMY = {"timeout": 300, "cell_timeout": 600, "budget": 3600}
CHAPTERS = list(checks.CHAPTERS)
LEARNER = ROOT / "notebooks"

# --- notebooks ----------------------------------------------------------------------------------


def exercise_cells(stem):
    """``{name: ExerciseCell}`` of the chapter's learner notebook."""
    return {c.name: c for c in source.exercises(source.read(LEARNER / f"{stem}.ipynb"))}


def notebook(stem, codes):
    """The learner's notebook of ``stem`` with each exercise's cell replaced by its header and
    ``codes[name]`` (exercises not in ``codes`` keep their stub)."""
    nb = source.read(LEARNER / f"{stem}.ipynb")
    for name, cell in exercise_cells(stem).items():
        if name in codes:
            header = nb.cells[cell.cell].source.split("\n", 1)[0]
            nb.cells[cell.cell].source = f"{header}\n{codes[name]}"
    nb.metadata["rnnbook"] = {"chapter": stem}
    return nb


def write(nb, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def start(args, cwd=ROOT, env=None):
    """A process of this interpreter, its output in temporary files (several run at once)."""
    handles = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([sys.executable, *map(str, args)], stdout=handles[0],
                            stderr=handles[1], text=True, cwd=cwd,
                            env={**os.environ, **(env or {})})
    return proc, handles


def finish(started):
    """The finished process's standard output; it must have succeeded."""
    proc, (out, err) = started
    code = proc.wait(timeout=1800)
    out.seek(0), err.seek(0)
    text, error = out.read(), err.read()
    out.close(), err.close()
    assert code == 0, error[-3000:]
    return text


def grading(paths, out, *options, cwd=ROOT, env=None):
    """A grader (the repository's, or a bundle's with ``cwd``) started on ``paths``, with
    :data:`ROOMY` limits (``options`` given after them win)."""
    roomy = [x for name, value in ROOMY.items() for x in (f"--{name.replace('_', '-')}", value)]
    return start(["-m", "rnnbook.grading", *paths, "--out", out, "--seed", SEED,
                  "--workers", 1, "--no-class-report", *roomy, *options], cwd=cwd, env=env)


def grade(paths, out, *options, cwd=ROOT, env=None):
    finish(grading(paths, out, *options, cwd=cwd, env=env))
    return out


def reports(out):
    """``{notebook stem: {exercise name: test}}`` of every results.json under ``out``."""
    found = {}
    for path in sorted(out.glob("*/results.json")):
        results = json.loads(path.read_text())
        found[path.parent.name] = {t["name"].split()[-1]: t for t in results["tests"]}
    return found


# --- 1. the arguments ---------------------------------------------------------------------------

PROBE = '''
import numpy as np


def _tree(v):
    if isinstance(v, np.ndarray):
        return f"ndarray[{v.dtype}]{v.shape}"
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return f"{type(v).__name__}{tuple(v._fields)}(" + ", ".join(map(_tree, v)) + ")"
    if isinstance(v, (list, tuple)):
        return type(v).__name__ + "[" + ", ".join(map(_tree, v)) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join((repr(k) if isinstance(k, str) else _tree(k)) + ": " + _tree(x)
                               for k, x in v.items()) + "}"
    return type(v).__name__


_SEEN_NAME = []


def NAME(*args, **kwargs):
    _SEEN_NAME.append(_tree([list(args), kwargs]))
    if len(_SEEN_NAME) == TRIALS:
        raise ValueError("TREES " + " | ".join(_SEEN_NAME) + " SEERT")
'''


def probe(name, trials):
    return PROBE.replace("NAME", name).replace("TRIALS", str(trials))


@pytest.mark.slow
def test_arguments_reach_the_grader_as_the_notebook_passes_them(tmp_path):
    """Every exercise's probe raises, on its last trial, the type trees of all its trials'
    arguments: the grader's feedback must hold the same trees as the notebook's check."""
    from rnnbook.byhand import answer

    expected, paths = {}, []
    for stem in CHAPTERS:
        chapter = checks.load(stem)
        codes = {}
        for ex in chapter.exercises:
            cases = chapter.cases(ex.name, SEED)
            codes[ex.name] = probe(ex.name, len(cases))
            namespace = {}
            exec(codes[ex.name], namespace)  # noqa: S102 - the probe, as the notebook runs it
            got = [answer(ex, namespace[ex.name], case) for case in cases][-1]
            trees = re.search(r"TREES .*? SEERT", got.message)
            assert trees, got
            expected[ex.name] = trees.group(0)
        paths.append(write(notebook(stem, codes), tmp_path / "in" / f"{stem}.ipynb"))
    found = reports(grade(paths, tmp_path / "out"))
    differ = []
    for stem in CHAPTERS:
        for name, trees in [(ex.name, expected[ex.name]) for ex in checks.load(stem).exercises]:
            output = found[stem][name]["output"]
            if trees not in output:
                differ.append(f"{name}:\n  notebook: {trees}\n  grader:   {output}")
    assert not differ, "arguments reach the grader as other types:\n" + "\n".join(differ)


# --- 2. every learner's answer in four places ---------------------------------------------------


def _bound(node):
    """The names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.Assign):
        return {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def answer_cell(text, tree, expr, name):
    """A learner's cell for exercise ``name``: the statements of the learners' module that
    answer ``expr`` needs (its functions, helpers, imports and constants, in the module's
    order), then ``name = <expr>``, or the answer's own ``def`` renamed to ``name`` (so that its
    signature names the arguments as the learner's would)."""
    top = [n for n in tree.body if _bound(n) and not _bound(n) & {"RIGHT", "WRONG",
                                                                     "MORE_RIGHT", "MORE_WRONG"}]
    by_name = {b: n for n in top for b in _bound(n)}
    needed, todo = set(), list(_used(expr))
    while todo:
        node = by_name.get(todo.pop())
        if node is not None and id(node) not in needed:
            needed.add(id(node))
            todo += _used(node)
    lines = [ast.get_source_segment(text, n) for n in top if id(n) in needed]
    if isinstance(expr, ast.Name):
        own = by_name[expr.id]
        lines = [line for n, line in zip([n for n in top if id(n) in needed], lines,
                                         strict=True) if n is not own]
        lines.append(ast.get_source_segment(text, own).replace(f"def {expr.id}(",
                                                                 f"def {name}(", 1))
    else:
        lines.append(f"{name} = {ast.get_source_segment(text, expr)}")
    return "\n\n\n".join(lines) + "\n"


def learners_answers(stem):
    """``{exercise: [(label, cell code, expected sentence or ...)]}``: RIGHT (sentence ``...``:
    must pass) then WRONG answers of the chapter, in their order, as cells."""
    path = sources.HERE / sources.FILES[stem]
    text = path.read_text()
    tree = ast.parse(text)
    found = {}
    for node in tree.body:
        target = getattr(node.targets[0], "id", "") if isinstance(node, ast.Assign) else ""
        if target not in ("RIGHT", "WRONG"):
            continue
        for key, value in zip(node.value.keys, node.value.values, strict=True):
            for entry in value.elts:
                expr = entry.elts[0] if isinstance(entry, ast.Tuple) else entry
                label = f"{target} {ast.get_source_segment(text, expr)}"
                found.setdefault(key.value, []).append(
                    (label, answer_cell(text, tree, expr, key.value)))
    return found


def rounds(stem):
    """The chapter's answers as rounds: round k holds each exercise's k-th answer."""
    answers = learners_answers(stem)
    count = max(len(v) for v in answers.values())
    return [{name: cells[k] for name, cells in answers.items() if k < len(cells)}
            for k in range(count)]


CHECK = """
import json, sys
root, seed, cells = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root)
from rnnbook import checks
from rnnbook.byhand import answer
from rnnbook.compare import evaluate
from rnnbook.diagnose import probe_cases
found, expected = {}, {}
for key, (stem, name, code) in json.loads(open(cells).read()).items():
    chapter = checks.load(stem)
    ex = chapter[name]
    cases = chapter.cases(name, seed)  # what check(fn, seed=seed) does, the oracle once
    if name not in expected:
        expected[name] = [ex.oracle(case) for case in cases]
    namespace = {"__name__": "__main__"}
    try:
        exec(compile(code, "<cell>", "exec"), namespace)
        fn = namespace[name]
    except Exception:  # the cell does not run: no function, as the grader sees it
        found[key] = {"passed": False, "parts": 0, "mistake": "", "share": 0.0}
        continue
    probes = probe_cases(ex, cases)  # asked only for a diagnosis, as check(fn) asks them

    def probing(ex=ex, fn=fn, probes=probes):
        return probes, [ex.oracle(c) for c in probes], [answer(ex, fn, c) for c in probes]

    outcome = evaluate(ex, cases, expected[name], [answer(ex, fn, c) for c in cases], seed,
                       probing=probing)
    found[key] = {"passed": outcome.passed, "parts": outcome.parts_earned,
                  "mistake": outcome.mistake, "share": outcome.share,
                  "message": outcome.message}
print(json.dumps(found))
"""


def checking(root, jobs, tmp_path):
    """``check(fn, seed=SEED)`` started on each ``(stem, name, code)`` of ``jobs`` (a dict), in
    a process whose ``rnnbook`` is the one under ``root``; :func:`finish` it, then
    ``json.loads`` the last line: ``{key: verdict}``."""
    cells = tmp_path / f"cells-{abs(hash(str(root)))}.json"
    cells.write_text(json.dumps(jobs))
    return start(["-c", CHECK, root, SEED, cells], cwd=tmp_path, env={"PYTHONPATH": str(root)})


def unpack(bundle, root):
    """The bundle unpacked as Gradescope unpacks it (tests/test_autograder.py)."""
    from test_autograder import unpack as gradescope_unpack

    return gradescope_unpack(bundle, root)


def from_grader(test):
    extra = test["extra_data"]
    return {"passed": test["score"] == test["max_score"], "mistake": extra["mistake"],
            "parts": extra["parts_right"], "points": test["score"]}


@pytest.mark.slow
def test_every_learners_answer_gets_one_verdict_in_four_places(tmp_path):
    points = {stem: {n: c.points for n, c in exercise_cells(stem).items()} for stem in CHAPTERS}
    labels, paths, jobs = {}, {stem: [] for stem in CHAPTERS}, {}
    for stem in CHAPTERS:
        for k, answers in enumerate(rounds(stem)):
            codes = {name: code for name, (_, code) in answers.items()}
            paths[stem].append(write(notebook(stem, codes),
                                     tmp_path / "in" / f"{stem}-round{k}.ipynb"))
            for name, (label, code) in answers.items():
                key = f"{stem}-round{k} {name}"
                jobs[key], labels[key] = (stem, name, code), label
    learners_release = release.learners(tmp_path / "release")
    everything = [p for stem in CHAPTERS for p in paths[stem]]
    started = {"notebook": checking(ROOT, jobs, tmp_path),
               "release": checking(learners_release, jobs, tmp_path),
               "grader": grading(everything, tmp_path / "graded")}
    bundles = {}
    for stem in CHAPTERS:  # each chapter's bundle grades that chapter's rounds
        bundle = release.autograder(tmp_path / f"{stem}.zip", chapter=stem, seed=SEED,
                                    **ROOMY)
        root = bundles[stem] = unpack(bundle, tmp_path / f"gradescope-{stem}")
        settings = json.loads((root / "source" / gradescope.SETTINGS).read_text())
        finish(grading(paths[stem], tmp_path / f"bundle-{stem}", "--chapter", stem,
                       "--exercises", root / "source" / config.EXERCISES,
                       "--timeout", settings["timeout"], "--memory", settings["memory"],
                       "--cell-timeout", settings["cell_timeout"],
                       "--budget", settings["budget"], "--walls-if-possible",
                       cwd=root / "source", env={"PYTHONPATH": str(root / "source")}))
    places = {place: {} for place in ("notebook", "release", "grader", "bundle")}
    for place in ("notebook", "release"):
        for key, got in json.loads(finish(started[place]).strip().splitlines()[-1]).items():
            stem, name = jobs[key][:2]
            places[place][key] = {
                "passed": got["passed"], "mistake": got["mistake"], "parts": got["parts"],
                "points": round(points[stem][name] * got["share"], 2)}
    finish(started["grader"])
    outs = [tmp_path / "graded"] + [tmp_path / f"bundle-{stem}" for stem in CHAPTERS]
    for place, out in zip(["grader"] + ["bundle"] * len(CHAPTERS), outs, strict=True):
        for notebook_stem, tests in reports(out).items():
            for name, test in tests.items():
                if f"{notebook_stem} {name}" in jobs:  # not the stubs of a short round
                    places[place][f"{notebook_stem} {name}"] = from_grader(test)
    stem = CHAPTERS[0]  # and Gradescope's own run of the bundle on one round
    first, root = paths[stem][0], bundles[stem]
    (root / "submission" / first.name).write_bytes(first.read_bytes())
    from test_autograder import run_autograder

    for test in run_autograder(root)["tests"]:
        name = test["name"].split()[-1]
        if f"{first.stem} {name}" in jobs:
            assert from_grader(test) == places["bundle"][f"{first.stem} {name}"], test
    keys = sorted(jobs)
    for place, found in places.items():
        assert sorted(found) == keys, (place, sorted(set(keys) ^ set(found))[:5])
    differ, release_names = [], []
    for key in keys:
        mine = places["notebook"][key]
        for place in ("release", "grader", "bundle"):
            theirs = places[place][key]
            fields = ("passed", "parts", "points") if place == "release" else (
                "passed", "parts", "points", "mistake")
            wrong = {f: (mine[f], theirs[f]) for f in fields if mine[f] != theirs[f]}
            if wrong:
                differ.append(f"{key} ({labels[key]}), notebook vs {place}: {wrong}")
        if mine["mistake"] != places["release"][key]["mistake"]:
            release_names.append(f"{key} ({labels[key]}): {mine['mistake'][:50]!r} vs "
                                 f"{places['release'][key]['mistake'][:50]!r}")
    print(f"{len(release_names)} of {len(keys)} answers named differently in the release "
          "(held by tests/test_release_names.py):\n  " + "\n  ".join(release_names))
    assert not differ, f"{len(differ)} verdicts differ:\n" + "\n".join(differ)
    for key in keys:  # and no right answer, however written, fails anywhere
        if labels[key].startswith("RIGHT"):
            assert all(places[p][key]["passed"] for p in places), (key, labels[key])


def test_answer_cells_hold_what_the_answer_needs():
    """A round's cell holds the answer's own function under the exercise's name, with the
    helpers and imports it uses, and nothing of RIGHT or WRONG."""
    cells = learners_answers("04-stateful-batching")
    label, code = cells["pack_state"][0]
    assert label == "RIGHT pack_stack"
    assert code == ("import numpy as np\n\n\ndef pack_state(states):\n"
                    "    return np.stack([np.stack([s.c, s.h]) for s in states])\n")
    assert "RIGHT" not in code
    stacked = dict(cells["stacked_step"])
    assert any("def sigmoid(" in c and "import numpy as np" in c for c in stacked.values())
    for stem in CHAPTERS:
        for answers in learners_answers(stem).values():
            for label, code in answers:
                compile(code, label, "exec")
                assert textwrap.dedent(code) == code


# --- the wire and the grader's child ------------------------------------------------------------


def test_a_job_carries_tuples_named_tuples_and_numpy_scalars():
    """What the check passes reaches the child as the same types; an answer (what a child
    sends) may hold none of them."""
    import collections

    import numpy as np

    from rnnbook.grading import wire

    state = collections.namedtuple("LSTMStateTuple", ("c", "h"))
    job = {"args": [(state(np.ones((1, 2), np.float32), np.zeros((1, 2), np.float32)),),
                    [np.float32(0.5), np.int64(3), 1.0, 2, True], {"w": np.arange(3)}]}
    back = wire.decode(json.loads(wire.dumps(wire.encode(job))), 2**20, dicts=True)
    (layer,), numbers, weights = back["args"]
    assert type(back["args"][0]) is tuple and type(layer).__name__ == "LSTMStateTuple"
    assert layer._fields == ("c", "h") and layer.c.dtype == np.float32 and layer.h.shape == (1, 2)
    assert [type(n) for n in numbers] == [np.float32, np.int64, float, int, bool]
    assert numbers[0] == 0.5 and weights["w"].tolist() == [0, 1, 2]
    again = wire.decode(json.loads(wire.dumps(wire.encode(back))), 2**20, dicts=True)
    assert type(again["args"][0][0]) is type(layer)  # one class per name and fields
    for marker in ({"__tuple__": [1]}, {"__named__": ["T", ["a"], [1]]},
                   {"__scalar__": ["float32", 1.0]}):
        with pytest.raises(wire.WireError):
            wire.decode([marker], 2**20)  # an answer: refused
    for bad in (["T", ["a", "a"], [1, 2]], ["T", ["a"], [1, 2]], ["not a name", ["a"], [1]]):
        with pytest.raises(wire.WireError):
            wire.decode({"__named__": bad}, 2**20, dicts=True)
    with pytest.raises(wire.WireError):
        wire.decode({"__scalar__": ["object", 1]}, 2**20, dicts=True)


IN_PLACE = """def reset_ended(state, ended):
    state[:, :, ended] = 0
    return state
"""
FIELDS = """def pack_state(states):
    return np.stack([np.stack([s.c, s.h]) for s in states])
"""


@pytest.mark.slow
def test_the_grader_takes_fields_and_names_a_changed_argument(tmp_path):
    """pack_state answered through LSTMStateTuple's fields earns its points in the grader (it got 0:
    "'list' object has no attribute 'c'"); reset_ended answered in place fails there as in the
    notebook, naming `state`."""
    from rnnbook.plaindata import changed_sentence

    stem = "04-stateful-batching"
    path = write(notebook(stem, {"pack_state": FIELDS, "reset_ended": IN_PLACE}),
                 tmp_path / "in" / f"{stem}.ipynb")
    tests = reports(grade([path], tmp_path / "out"))[stem]
    assert tests["pack_state"]["score"] == tests["pack_state"]["max_score"], tests["pack_state"]
    changed = tests["reset_ended"]
    assert changed["score"] == 0 and changed["extra_data"]["mistake"] == changed_sentence("state")
    assert f"To see these trials again: check(reset_ended, seed={SEED})." in changed["output"]



@pytest.mark.parametrize("scalar", ["float64", "float32", "int64", "bool_"])
def test_a_numpy_scalar_answer_crosses_the_pipe_as_a_number(scalar):
    """``np.float64`` is a subclass of float, yet it must become a Python number before an
    answer crosses the pipe (the wire refuses a NumPy scalar in an answer: gradient_check answered with
    ``rel.max()`` got 0 in the grader and passed in the notebook)."""
    import numpy as np

    from rnnbook.grading import wire
    from rnnbook.plaindata import to_plain

    value = getattr(np, scalar)(1)
    plain = to_plain([value, [value]])
    assert type(plain[0]) in (float, int, bool) and type(plain[1][0]) is type(plain[0])
    assert wire.decode(json.loads(json.dumps(wire.encode(plain))), 1 << 20) == plain
