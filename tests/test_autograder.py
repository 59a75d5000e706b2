"""The Gradescope bundle (``make autograder``), run the way Gradescope runs it.

The bundle is built with ``python -m rnnbook.grading.release autograder``, unpacked (file modes kept, as
``unzip`` keeps them) into a temporary tree shaped like Gradescope's ``/autograder``
(``source/``, ``submission/``, ``results/``, and ``run_autograder`` copied to the top), and
``run_autograder`` is executed with ``AUTOGRADER_ROOT`` pointing at that tree.

``setup.sh`` is not run: it would make a fresh venv and install TensorFlow and the other pinned
requirements again. ``RNNBOOK_PYTHON`` points ``run_autograder`` at this suite's own interpreter
instead, whose packages come from the same requirements.txt that setup.sh installs. setup.sh is
checked for shell syntax (``bash -n``) only.
"""
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

import nbformat
import pytest
from hostile import corpus

from conftest import ROOT
from rnnbook import source
from rnnbook.checks import CHAPTERS
from rnnbook.grading import config, gradescope, release

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"
LEARNER = ROOT / "notebooks" / f"{STEM}.ipynb"


unpack = release.unpack_as_gradescope  # as Gradescope unpacks a bundle


def run_autograder(root, python=sys.executable):
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "RNNBOOK_PYTHON": python}
    run = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True,
                         timeout=600, env=env, cwd=root)
    assert run.returncode == 0, run.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_bundle_holds_what_grading_needs(tmp_path):
    bundle = release.autograder(tmp_path / "autograder.zip", chapter=STEM, seed=5)
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
        settings = json.loads(z.read("autograder.json"))
        table = json.loads(z.read("exercises.json"))
        requirements = z.read("requirements.txt")
        setup = z.read("setup.sh")
    assert {"setup.sh", "run_autograder", "README.md", "autograder.json", "exercises.json",
            "requirements.txt", "pyproject.toml", "rnnbook/__init__.py",
            "rnnbook/grading/run.py", "rnnbook/grading/attempt.py", "rnnbook/grading/child.py",
            "rnnbook/grading/zygote.py", "rnnbook/grading/walls.py", "rnnbook/grading/gradescope.py",
            "rnnbook/grading/templates/learner-stub.py", "rnnbook/checks/ch01.py"} <= names
    assert not [n for n in names if n.startswith(("solutions", "notebooks", "book", "tests"))]
    assert not [n for n in names if n.endswith(".ipynb")]  # no solution notebook at all
    assert not [n for n in names if "__pycache__" in n or n.startswith((".venv", "_build"))]
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert requirements == (ROOT / "requirements.txt").read_bytes()  # the pins, unchanged
    assert settings == {**config.bundle_defaults(), "chapter": STEM, "seed": 5}
    assert [c["name"] for c in table[STEM]] == [
        ex.name for ex in source.exercises(source.read(SOLUTION))]
    assert b"pip install --quiet -r" in setup and b"--no-deps -e" in setup
    assert b"gradescope --lock" in setup  # the instructor's side: root only
    assert b"export PYTHONDONTWRITEBYTECODE=1" in setup
    check = subprocess.run(["bash", "-n", str(unpack(bundle, tmp_path / "ag") / "source" / "setup.sh")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    again = release.autograder(tmp_path / "again.zip", chapter=STEM, seed=5)
    assert again.read_bytes() == bundle.read_bytes()  # reproducible


def test_lock_leaves_no_instructor_code_readable_compiled_or_not(tmp_path):
    """After compileall (every module has a .pyc), the lock setup.sh runs (and every grading as
    root) leaves nothing of the grader, the checks, the reference, the backward pass or any
    __pycache__ readable by other users (the child runs as nobody where walls cannot stand);
    the learner side stays readable."""
    root = unpack(release.autograder(tmp_path / "autograder.zip", chapter=STEM), tmp_path / "ag")
    package = root / "source" / "rnnbook"
    compiled = subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    pycs = sorted(package.rglob("*.pyc"))
    assert {p.name.split(".")[0] for p in pycs} >= {"reference", "backward", "ch01", "run"}
    changed = gradescope.lock(root / "source")
    assert changed
    secret = [*pycs, *(package / "grading").rglob("*"), *(package / "checks").rglob("*"),
              package / "reference.py", package / "backward.py", package / "grading",
              package / "checks", *package.rglob("__pycache__"),
              root / "source" / "exercises.json", root / "source" / "autograder.json"]
    for path in secret:
        assert path.stat().st_mode & 0o077 == 0, path
    for name in ("__init__.py", "exercise.py", "compare.py", "byhand.py", "memo.py", "plaindata.py",
                 "oracles.py"):
        assert (package / name).stat().st_mode & 0o044 == 0o044, name
    assert gradescope.lock(root / "source") == []  # once is enough


@pytest.mark.slow
def test_bundle_without_walls_as_root_reaches_no_instructor_code():
    """Gradescope where namespaces are refused: the grader runs as root, the notebook as nobody.
    After compileall and the lock, a notebook that hunts for oracles, references and mistake
    models (frames, objects, the checks imported again, any bytecode under the bundle) finds
    nothing in any exercise."""
    from rnnbook.grading.run import _world_readable

    if os.geteuid() != 0:
        pytest.skip("needs root: Gradescope runs the bundle as root")
    if not all(map(_world_readable, [os.path.dirname(os.__file__), sys.prefix])):
        pytest.skip("nobody cannot read this Python: the grader would not run the child as "
                    "nobody")
    base = tempfile.mkdtemp(prefix="rnnbook-bundle-", dir="/var/tmp")
    try:
        os.chmod(base, 0o755)  # as Gradescope's /autograder: nobody may pass through
        root = unpack(release.autograder(pathlib.Path(base) / "autograder.zip", chapter=STEM),
                      pathlib.Path(base) / "autograder")
        source = root / "source"
        subprocess.run([sys.executable, "-m", "compileall", "-q", "rnnbook"], cwd=source,
                       check=True, capture_output=True)
        gradescope.lock(source)
        sub = root / "submission" / f"{STEM}.ipynb"
        nbformat.write(corpus.steal_oracles({"roots": [str(source), str(root)]}), str(sub))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        ran = subprocess.run(
            [sys.executable, "-m", "rnnbook.grading", str(sub), "--out", str(root / "out"),
             "--no-walls", "--exercises", str(source / config.EXERCISES), "--chapter", STEM,
             "--seed", "3", "--no-class-report"],
            capture_output=True, text=True, timeout=600, cwd=source, env=env)
        assert ran.returncode == 0, ran.stderr
        assert "submissions run as nobody" in ran.stderr
        report = json.loads((root / "out" / STEM / "results.json").read_text())
        assert len(report["tests"]) == len(source_exercises())
        for test in report["tests"]:
            assert test["score"] == 0 and "nothing to steal" in test["output"], test
    finally:
        shutil.rmtree(base, ignore_errors=True)


def source_exercises():
    return source.exercises(source.read(SOLUTION))


def test_bundle_needs_the_assignments_chapter(tmp_path):
    with pytest.raises(source.SourceError, match="CHAPTER"):
        release.autograder(tmp_path / "autograder.zip", chapter=None)
    with pytest.raises(SystemExit):  # --chapter is required
        release.main(["autograder", "--out", str(tmp_path / "a.zip")])


def test_run_autograder_writes_results_even_when_python_fails(tmp_path):
    root = unpack(release.autograder(tmp_path / "autograder.zip", STEM), tmp_path / "autograder")
    results = run_autograder(root, python="/bin/false")
    assert results == {"score": 0, "tests": [], "output": "Not graded: the autograder could not "
                       "start (exit status 1); tell your instructor."}


def _notebook(path, chapter=None):
    nb = nbformat.v4.new_notebook()
    if chapter:
        nb.metadata["rnnbook"] = {"chapter": chapter}
    nbformat.write(nb, str(path))
    return path


def test_pick_chooses_the_notebook_sensibly(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert gradescope.pick(empty) == (None, "No notebook (.ipynb file) was found in the submission "
                                            "(it is empty).")
    (empty / "answers.py").write_text("pass")
    assert "(it holds: answers.py)" in gradescope.pick(empty)[1]

    one = tmp_path / "one"
    (one / ".ipynb_checkpoints").mkdir(parents=True)
    _notebook(one / ".ipynb_checkpoints" / "work-checkpoint.ipynb", STEM)
    only = _notebook(one / "anything.ipynb")
    assert gradescope.pick(one, STEM) == (only, "")  # checkpoints are not submissions

    many = tmp_path / "many"
    many.mkdir()
    _notebook(many / "a-scratch.ipynb")
    tagged = _notebook(many / "homework.ipynb", STEM)
    assert gradescope.pick(many)[0] == tagged  # the one whose metadata names a chapter
    named = _notebook(many / f"{STEM}.ipynb")
    best, note = gradescope.pick(many, STEM)
    assert best == named  # the file named after the chapter wins
    assert note == f"Graded {STEM}.ipynb; also submitted, not graded: a-scratch.ipynb, homework.ipynb."


@pytest.mark.slow
def test_run_autograder_as_gradescope_runs_it(tmp_path):
    """One submission with an extra notebook: the right one is graded, results.json is written;
    then a submission without any notebook still gets a results.json."""
    bundle = release.autograder(tmp_path / "autograder.zip", chapter=STEM, seed=5)
    root = unpack(bundle, tmp_path / "autograder")
    shutil.copy(SOLUTION, root / "submission" / f"{STEM}.ipynb")
    shutil.copy(LEARNER, root / "submission" / "old-draft.ipynb")
    results = run_autograder(root)
    assert results["score"] == sum(ex.points for ex in source.exercises(source.read(SOLUTION)))
    assert results["extra_data"]["seed"] == 5 and results["extra_data"]["chapter"] == STEM
    assert "isolation" in results["extra_data"]  # walls, or why not (Gradescope: often none)
    assert results["output"].startswith(f"Graded {STEM}.ipynb; also submitted, not graded: "
                                        "old-draft.ipynb.")
    assert [t["name"] for t in results["tests"]] == [
        f"Exercise {ex.number} {ex.name}" for ex in source.exercises(source.read(SOLUTION))]
    for test in results["tests"]:
        assert set(test) == {"name", "score", "max_score", "output", "visibility", "extra_data"}
    assert (root / "submission" / f"{STEM}.ipynb").read_bytes() == SOLUTION.read_bytes()

    for path in (root / "submission").iterdir():
        path.unlink()
    (root / "submission" / "answers.py").write_text("def split_kernel(k, d): ...\n")
    (root / "results" / "results.json").unlink()
    results = run_autograder(root)
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"] == ("Not graded: No notebook (.ipynb file) was found in the "
                                 "submission (it holds: answers.py).")

    # Another chapter's solution (from the public book), saved under this chapter's name and
    # metadata: graded as this assignment's chapter, so no points.
    (root / "submission" / "answers.py").unlink()
    other = sorted(p for p in (ROOT / "solutions").glob("*.ipynb") if p.stem != STEM)[-1]
    shutil.copy(other, root / "submission" / f"{STEM}.ipynb")
    (root / "results" / "results.json").unlink()
    results = run_autograder(root)
    assert results["extra_data"]["chapter"] == STEM and results["score"] == 0



def test_make_autograder_takes_every_option_the_bundle_carries(tmp_path):
    """``make autograder`` passes SEED, VISIBILITY and OPTIONS on; every option the bundle
    carries, given there, is in its autograder.json and in the Config Gradescope grades
    with (a new bundle option needs no edit of the Makefile)."""
    import shlex
    from dataclasses import fields

    wanted = {}
    for f in fields(config.Config):
        if not config.declared(f).bundle or f.name == "chapter":
            continue
        wanted[f.name] = ({"seed": 11, "visibility": "hidden"}.get(f.name)
                          or f.default * 2)
    options = " ".join(f"{config.flag(f)} {wanted[f.name]}" for f in fields(config.Config)
                       if f.name in wanted and f.name not in ("seed", "visibility"))
    ran = subprocess.run(["make", "--no-print-directory", "-n", "-o", ".venv/.installed",
                          "autograder", f"CHAPTER={STEM}", "SEED=11", "VISIBILITY=hidden",
                          f"OPTIONS={options}"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    line = ran.stdout.split("-m rnnbook.grading.release", 1)[1].replace("\\\n", " ")
    argv = shlex.split(line)
    argv[argv.index("--out") + 1] = str(tmp_path / "bundle.zip")
    assert release.main(argv) == 0
    with zipfile.ZipFile(tmp_path / "bundle.zip") as bundle:
        settings = json.loads(bundle.read(gradescope.SETTINGS))
    assert {name: settings[name] for name in wanted} == wanted
    graded = config.from_settings(settings, **gradescope.ON_GRADESCOPE)
    assert {name: getattr(graded, name) for name in wanted} == wanted


@pytest.mark.slow
def test_a_bundle_with_a_fixed_seed_carries_tensorflows_answers_for_those_trials_only(
        tmp_path):
    """``make autograder SEED=N`` computes TensorFlow's expected answers on that seed's trials
    once (``expected.pickle``, root-only after the lock); the grader takes them for the very
    trials they were computed on (same seed, same digest) and computes any other itself. The
    answers are read: forged ones in the bundle change the verdict."""
    import pickle

    from rnnbook import checks
    from rnnbook.expected import untyped
    from rnnbook.grading import run

    root = unpack(release.autograder(tmp_path / "a.zip", chapter=STEM, seed=5), tmp_path / "ag")
    path = root / "source" / config.EXPECTED
    chapter = checks.load(STEM)
    cases = {(STEM, ex.name): chapter.trial_cases(ex.name, 5) for ex in chapter.exercises}
    found = run.read_expected(path, 5, cases)
    assert set(found) == set(cases)
    for (_, name), expected in found.items():  # TensorFlow's own answers, as the grader's
        again = [untyped(chapter[name].oracle(case)) for case in cases[(STEM, name)]]
        assert pickle.dumps(expected) == pickle.dumps(again), name
    assert run.read_expected(path, 6, cases) == {}  # another seed: the grader computes them
    first = chapter.exercises[0].name
    other = {**cases, (STEM, first): chapter.trial_cases(first, 6)}
    assert (STEM, first) not in run.read_expected(path, 5, other)  # other trials: the same

    shutil.copy(SOLUTION, root / "submission" / f"{STEM}.ipynb")
    full = sum(ex.points for ex in source_exercises())
    assert gradescope.run(root).score == full
    assert path.stat().st_mode & 0o077 == 0  # locked with the settings
    data = pickle.loads(path.read_bytes())
    forged = chapter.exercises[-1].name  # its answers shifted by one, the digest kept
    digest, expected = data["exercises"][forged]
    data["exercises"][forged] = (digest, shifted(expected))
    path.write_bytes(pickle.dumps(data))
    report = gradescope.run(root)
    failed = [t.name for t in report.tests if t.score < t.max_score]
    assert failed == [f"Exercise {chapter[forged].number} {forged}"], failed


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(CHAPTERS))
def test_a_bundles_expected_answers_are_read_without_tensorflow(stem):
    """The expected answers a bundle carries name no class but NumPy's: reading them costs the
    grader no TensorFlow import (an LSTMStateTuple pickled as itself imported TensorFlow and
    Keras into the grader on Gradescope's cold path, 12 s on a loaded machine). Every
    exercise's oracle on one of its trials, as ``make autograder SEED=N`` stores it; and the
    verdict the same with the answer untyped (the checks compare plain data)."""
    import pickle

    from rnnbook import checks
    from rnnbook.expected import untyped
    from rnnbook.plaindata import to_plain

    modules: set[str] = set()

    class Names(pickle.Unpickler):
        def find_class(self, module, name):
            modules.add(module)
            return super().find_class(module, name)

    chapter = checks.load(stem)
    for ex in chapter.exercises:
        case = chapter.trial_cases(ex.name, 0)[0]
        answer = ex.oracle(case)
        stored = Names(io.BytesIO(pickle.dumps(untyped(answer), protocol=4))).load()
        assert pickle.dumps(to_plain(stored)) == pickle.dumps(to_plain(answer)), ex.name
    assert {m.split(".")[0] for m in modules} <= {"numpy"}, sorted(modules)


def shifted(value):
    """``value`` with every array and float one larger (its structure kept)."""
    import numpy as np

    if isinstance(value, np.ndarray) or (isinstance(value, float)):
        return value + 1
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*map(shifted, value))
    if isinstance(value, (list, tuple)):
        return type(value)(map(shifted, value))
    if isinstance(value, dict):
        return {key: shifted(item) for key, item in value.items()}
    return value


def test_gradescope_starts_the_zygotes_before_its_own_imports(tmp_path):
    """Gradescope's side imports none of the grader's heavy modules (not even NumPy: checking
    the bundle's settings would, so the zygotes start before that) before it has started the
    bundle's chapter's zygotes (procs.Early), and the run takes them: the profile shows both
    zygotes started before the grader read the submission, and none started again. The bundle
    has no fixed seed, and still the grader imports no TensorFlow: the TensorFlow zygote's
    oracle answered every exercise (issue 39)."""
    bare = subprocess.run(
        [sys.executable, "-c", "import sys, rnnbook.grading.gradescope as g; print(sorted("
         "m for m in ('nbformat', 'numpy', 'rnnbook.checks', 'rnnbook.grading.run', "
         "'tensorflow') "
         "if m in sys.modules))"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert bare.stdout.split() == ["[]"], bare.stdout
    root = unpack(release.autograder(tmp_path / "a.zip", chapter=STEM), tmp_path / "ag")
    shutil.copy(SOLUTION, root / "submission" / f"{STEM}.ipynb")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "RNNBOOK_PYTHON": sys.executable,
           "RNNBOOK_PROFILE": "1"}
    ran = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True,
                         timeout=600, env=env, cwd=root)
    spans = {}
    for line in ran.stderr.splitlines():
        if line.startswith("grade: profile "):
            start, _, rest = line.removeprefix("grade: profile ").partition("-")
            spans.setdefault(rest.split(" s  ", 1)[1], []).append(float(start))
    read = spans["grader: read the submissions, draw the trials"][0]
    for kind in ("numpy", "tf"):
        assert len(spans[f"zygote {kind}: python start"]) == 1, spans
        assert spans[f"zygote {kind}: python start"][0] < read, spans
    assert not [s for s in spans if s.startswith("oracle: ")], spans  # nothing in the grader
    answered = [s.removesuffix(" (helper)") for s in spans
                if s.startswith("oracle (zygote): ")]  # the oracle's helper, on 2+ cores
    assert sorted(set(answered)) == sorted(  # (an exercise twice: the helper shared it)
        f"oracle (zygote): {ex.number} {ex.name}" for ex in source_exercises())
    assert json.loads((root / "results" / "results.json").read_text())["score"] == sum(
        ex.points for ex in source_exercises())
