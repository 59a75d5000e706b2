"""``make exercise-check`` and ``make execute STEM=...`` (scripts/focus.py, CONTRIBUTING.md):
a bad EXERCISE or STEM gets one line and a non-zero exit, with nothing run or changed; a good
one runs only the tests that concern it."""
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys

import nbformat
import pytest
from test_exercise_names import number

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import focus  # noqa: E402

BIN = pathlib.Path(sys.executable).parent
STEM = "01-basic-rnn-cell"


def make(*args):
    """``make`` in the repository with this interpreter's bin folder; the venv stamp is taken
    as it is (``-o``), so nothing is installed. Run as a top-level make even under
    ``make test`` (no MAKELEVEL or MAKEFLAGS), so its own error line reads ``make: ***``."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    return subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed",
                           f"BIN={BIN}", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=env)


def notebooks_digest():
    return {p: hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in ("book", "solutions", "notebooks") for p in (ROOT / folder).glob("*.ipynb")}


def ours(stderr):
    """stderr without make's own ``make: *** [...] Error 2`` line."""
    return [line for line in stderr.splitlines() if not line.startswith("make: ***")]


@pytest.mark.parametrize("args,said", [
    (["EXERCISE=abc"], "make: EXERCISE=abc: no exercise of solutions/ defines abc"),
    (["EXERCISE=1.x"], "make: EXERCISE='1.x': give an exercise number such as 1.7"),
    (["EXERCISE=1"], "make: EXERCISE='1': give an exercise number such as 1.7"),
    (["EXERCISE=9.1"], "make: EXERCISE=9.1: no chapter 9 in solutions/"),
    (["EXERCISE=1.99"], "make: EXERCISE=1.99: solutions/01-basic-rnn-cell.ipynb has no "
                        "'# Exercise 1.99 (...)' header (it has 1.1, "),
    (["STEM=nope"], "make: STEM='nope' is not a chapter notebook; STEM is one of: "
                    "01-basic-rnn-cell, "),
    (["STEM=../solutions/01-basic-rnn-cell"], "make: STEM='../solutions/01-basic-rnn-cell' is "
                                              "not a chapter notebook"),
    ([f"STEM={STEM}", "EXERCISE=1.2"], "make: give EXERCISE=N.K (or its function's name) or "
                                       "STEM=<notebook stem>, not both"),
    ([], "make: give EXERCISE=N.K or a name (e.g. EXERCISE=1.7, EXERCISE=rnn_step) or "
         "STEM=<notebook stem> (one of: "),
    (["EXERCISE=1.2", "JOBS=many"], "make: JOBS='many': give a number of workers, or auto"),
])
def test_exercise_check_refuses_bad_values_in_one_line(args, said):
    ran = make("exercise-check", *args)
    assert ran.returncode != 0
    assert len(ours(ran.stderr)) == 1 and ours(ran.stderr)[0].startswith(said), ran.stderr
    assert "test session starts" not in ran.stdout  # nothing ran


def test_a_value_is_never_run_as_shell(tmp_path):
    marker = tmp_path / "ran"
    ran = make("exercise-check", f'EXERCISE=1.2"; touch {marker}; echo "', f"STEM=$(touch {marker})")
    assert ran.returncode != 0 and not marker.exists()
    assert len(ours(ran.stderr)) == 1


@pytest.mark.parametrize("args,said", [
    (["STEM=nope"], "make: STEM='nope' is not a chapter notebook"),
    (["STEM=01-basic-rnn-cell.ipynb"], "make: STEM='01-basic-rnn-cell.ipynb' is not a chapter"),
])
def test_execute_refuses_a_bad_stem_and_touches_no_notebook(args, said):
    before = notebooks_digest()
    ran = make("execute", *args)
    assert ran.returncode != 0
    assert len(ours(ran.stderr)) == 1 and ours(ran.stderr)[0].startswith(said), ran.stderr
    assert notebooks_digest() == before


def test_the_targets_run_focus_and_execute_runs_every_notebook_without_stem():
    """Both paths of ``make execute`` are focus.py's, so nbconvert's options are one tuple."""
    ran = make("-n", "exercise-check", "EXERCISE=1.3")
    assert "scripts/focus.py check --exercise \"$EXERCISE\" --stem \"$STEM\"" in ran.stdout
    ran = make("-n", "execute", f"STEM={STEM}")
    assert "scripts/focus.py execute --stem \"$STEM\"" in ran.stdout
    assert ran.stdout == make("-n", "execute").stdout  # without STEM: the same command
    every = focus.execute_command("")
    assert every[1:len(focus.NBCONVERT) + 1] == list(focus.NBCONVERT)
    assert every[len(focus.NBCONVERT) + 1:] == sorted(
        str(p.relative_to(ROOT)) for folder in ("book", "solutions")
        for p in (ROOT / folder).glob("[0-9]*.ipynb"))
    helped = make("help").stdout
    assert "make exercise-check EXERCISE=N.K" in helped and "STEM=<stem>" in helped


def test_an_exercise_is_found_from_its_header():
    assert focus.target(number("rnn_step"), "") == (STEM, "rnn_step")  # "1.3" today
    assert focus.target("rnn_step", "") == (STEM, "rnn_step")  # by its function's name
    assert focus.target("gru_gates", "")[0] == "06-gru-layouts"
    assert focus.target("", STEM) == (STEM, "")
    command = focus.check_command(STEM, "rnn_step", "0")
    assert f"--focus={STEM}:rnn_step" in command and f"solutions/{STEM}.ipynb" in command
    assert "--nbval" in command and command[command.index("-n") + 1] == "0"
    assert "--dist" not in command  # one process
    assert "tests/test_ch01.py" in command and "tests/test_ch02.py" not in command
    command = focus.execute_command(STEM)
    assert command[-2:] == [f"book/{STEM}.ipynb", f"solutions/{STEM}.ipynb"]
    assert "--ExecutePreprocessor.record_timing=False" in command


@pytest.mark.slow
def test_focus_keeps_only_what_concerns_the_exercise():
    """The pytest run of ``make exercise-check EXERCISE=1.3``, collected only."""
    command = focus.check_command(STEM, "rnn_step", "0") + ["--collect-only", "-q"]
    ran = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    ids = [line for line in ran.stdout.splitlines() if "::" in line]
    assert f"tests/test_sweep.py::test_right_answers_pass_on_every_seed[{STEM}-rnn_step]" in ids
    assert f"tests/test_checks.py::test_solution_passes[{STEM}-rnn_step]" in ids
    assert f"tests/test_notebooks.py::test_learner_notebook_runs_and_every_check_asks_for_its_" \
           f"function[{STEM}]" in ids
    assert any(i.startswith(f"solutions/{STEM}.ipynb::Cell ") for i in ids)  # nbval
    assert f"tests/test_book.py::test_code_and_outputs_fit_the_column[solutions/{STEM}.ipynb]" \
        in ids
    for other in ("split_kernel", "rnn_unroll", "02-lstm", "05-gradients"):
        assert not [i for i in ids if other in i], other
    assert not [i for i in ids if "render_with_collapsed_hints" in i]  # builds the book


def test_help_lists_every_target():
    """CONTRIBUTING.md sends maintainers to ``make help`` for the targets: it names each one."""
    phony = next(line for line in (ROOT / "Makefile").read_text().splitlines()
                 if line.startswith(".PHONY:"))
    helped = make("help").stdout
    missing = [t for t in phony.split(":", 1)[1].split()
               if t != "help" and f"make {t} " not in helped]
    assert not missing, f"make help does not list: {', '.join(missing)}"


def committed_notebooks():
    return sorted(p for folder in ("book", "solutions") for p in (ROOT / folder).glob("*.ipynb"))


@pytest.mark.parametrize("path", committed_notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_committed_notebook_stores_execution_timings(path):
    """``make execute`` records no timings, so a notebook's diff is only what changed."""
    cells = json.loads(path.read_text())["cells"]
    timed = [k for k, cell in enumerate(cells) if "execution" in cell.get("metadata", {})]
    assert not timed, f"{path.relative_to(ROOT)}: metadata.execution in cells {timed}"


@pytest.mark.slow
def test_executing_twice_gives_the_same_bytes(tmp_path):
    """``make execute``'s nbconvert run twice on a throw-away notebook: no timestamps, and a
    cell's output flushed in several chunks stored as one stream (then its stderr)."""
    chunks = ("import sys, time\n"
              "for k in range(3):\n"
              "    print(k, flush=True); time.sleep(0.2)\n"
              "print('warn', file=sys.stderr)")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell(chunks),
        nbformat.v4.new_code_cell("6 * 7"),
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\n"
                                  "plt.show()")])  # a figure: its PNG the same bytes too
    path = tmp_path / "t.ipynb"
    nbformat.write(notebook, path)
    command = [str(BIN / "jupyter"), *focus.NBCONVERT, str(path)]
    runs = []
    for _ in range(2):
        ran = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert ran.returncode == 0, ran.stderr
        runs.append(path.read_bytes())
    assert runs[0] == runs[1]
    cells = json.loads(runs[1])["cells"]
    assert not [c for c in cells if "execution" in c["metadata"]]
    streams = [o["name"] for o in cells[1]["outputs"]]
    assert streams == ["stdout", "stderr"], cells[1]["outputs"]
    assert "image/png" in cells[3]["outputs"][-1]["data"]


def test_exercise_check_runs_every_test_the_checklist_names():
    """CONTRIBUTING.md's step 6 lists what ``make exercise-check`` runs: the same files as
    focus.TESTS (and the chapter's own tests), so a test added to one is added to the other."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    step = text[text.index("### 6. Test it"):text.index("Every test file named in this list")]
    named = set(re.findall(r"`(tests/test_\w+\.py)`", step))
    assert named == set(focus.TESTS), f"CONTRIBUTING.md step 6 names {sorted(named)}; " \
                                      f"scripts/focus.py's TESTS: {sorted(focus.TESTS)}"
    assert "tests/test_chNN*.py" in step and "nbval" in step
    command = focus.check_command(STEM, "rnn_step", "0")
    assert [t for t in focus.TESTS if t not in command] == []
