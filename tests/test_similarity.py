"""Similar submissions (rnnbook/grading/similarity.py): hand-written near-copies are found,
independent answers, the stub and the solution are not, and the report shows it safely."""
import csv
import json
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

from rnnbook import checks
from rnnbook.grading import classreport, results, similarity
from rnnbook.source import ExerciseCell
from tests.learners import sources
from tests.test_exercise_names import number, title

ROOT = pathlib.Path(__file__).resolve().parent.parent
CH1 = "01-basic-rnn-cell"
UNROLL = title("rnn_unroll")  # "Exercise N.K rnn_unroll": numbers derive from the headers
LSTM = title("lstm_step")
HEAD = f'''# Exercise {number("rnn_unroll")} (3 points, 2 parts, by hand)
def rnn_unroll(inputs, h0, kernel, bias):
    """BasicRNNCell over inputs (B, T, D) from h0 (B, H).

    Returns (outputs (B, T, H), final_state (B, H)), as dynamic_rnn does.
    """
'''

# A right answer, written otherwise than the solution (which calls rnn_step in a loop): a
# learner's from tests/learners/ch01.py...
ALICE = HEAD + textwrap.indent(
    dict(sources.answers(CH1)["rnn_unroll"])["unroll_preallocated"], "    ") + "\n"
# ... and a near-copy of it: names changed, two independent lines swapped, comments added,
# spacing and line breaks changed
BOB = HEAD + """    # my own version
    n_batch, n_steps, depth = inputs.shape
    state = h0.astype(np.float64)          # start from h0
    W_in, W_rec = kernel[:depth], kernel[depth:]
    result = np.empty((n_batch, n_steps,
                       kernel.shape[1]))   # (B, T, H)
    for step in range( n_steps ):
        # one step of the cell
        state = np.tanh(inputs[:, step] @ W_in + state @ W_rec + bias)
        result[:, step] = state
    return result, result[:, -1]  # outputs and the final state
"""
# Two more right answers, each written independently
CAROL = HEAD + """    h = h0
    outs = []
    for t in range(inputs.shape[1]):
        xh = np.concatenate([inputs[:, t], h], axis=1)
        h = np.tanh(xh @ kernel + bias)
        outs.append(h)
    return np.stack(outs, axis=1), h
"""
DAN = HEAD + """    batch, steps, _ = inputs.shape
    states = []
    state = h0
    t = 0
    while t < steps:
        joined = np.hstack((inputs[:, t, :], state))
        state = np.tanh(np.dot(joined, kernel) + bias)
        states.append(state)
        t += 1
    return np.transpose(np.array(states), (1, 0, 2)), state
"""
# A wrong answer (the state starts at zero, not at h0)...
ERIN = HEAD + """    H = kernel.shape[1]
    depth = inputs.shape[2]
    state = np.zeros((inputs.shape[0], H))
    seq = []
    for k in range(inputs.shape[1]):
        pre = inputs[:, k] @ kernel[:depth] + state @ kernel[depth:]
        state = np.tanh(pre + bias)
        seq.append(state)
    return np.stack(seq, 1), state
"""
# ... and its near-copy, mistake and all
FRANK = HEAD + """    D = inputs.shape[2]   # input depth
    units = kernel.shape[1]
    s = np.zeros((inputs.shape[0], units))  # zero state
    collected = []
    for time_step in range(inputs.shape[1]):
        a = inputs[:, time_step] @ kernel[:D] + \\
            s @ kernel[D:]
        s = np.tanh(a + bias)  # new state
        collected.append(s)
    return np.stack(collected, 1), s
"""


def solution_cell():
    return similarity.baseline(CH1)[UNROLL][1]


def stub_cell():
    return similarity.baseline(CH1)[UNROLL][0]


def test_the_baseline_is_the_stub_and_the_solution_of_each_exercise():
    base = similarity.baseline(CH1)
    assert len(base) == len(checks.load(CH1).exercises) and UNROLL in base
    stub, solution = base[UNROLL]
    assert f'raise NotImplementedError("Exercise {number("rnn_unroll")}: write rnn_unroll")' in stub
    assert "rnn_step(inputs[:, t], h, kernel, bias)" in solution
    assert similarity.baseline("../etc") == {} and similarity.baseline("99-none") == {}


def pairs(codes, stub=True, solution=True):
    found = similarity.pairs_of(CH1, UNROLL, codes, stub_cell() if stub else "",
                                solution_cell() if solution else "")
    return {(p.a, p.b): p for p in found}


def test_near_copies_of_a_right_and_of_a_wrong_answer_are_found_and_nothing_else():
    found = pairs({"alice": ALICE, "bob": BOB, "carol": CAROL, "dan": DAN, "erin": ERIN,
                   "frank": FRANK, "gina": stub_cell(), "harry": stub_cell(),
                   "ivan": solution_cell(), "jack": solution_cell().replace("# (B", "# mine (B")})
    assert set(found) == {("alice", "bob"), ("erin", "frank")}
    for p in found.values():
        assert p.score >= similarity.THRESHOLD and p.shared >= similarity.MIN_SHARED
        assert 0 < min(p.share_a, p.share_b) <= p.score == max(p.share_a, p.share_b) <= 1
        assert "<mark>" in p.shown_a and "<mark>" in p.shown_b
        for shown in (p.shown_a, p.shown_b):  # the stub's lines (header to docstring) never match
            assert "mark>" not in "\n".join(shown.split("\n")[:6]), shown


def test_the_stub_lines_are_blanked_in_place():
    """Without this, "docstring, then the first line" would be a match in every pair."""
    out = similarity.without_stub(BOB, stub_cell())
    assert len(out) == len(BOB) and out.count("\n") == BOB.count("\n")
    assert not out[:BOB.index("    # my own version")].strip()
    assert out.splitlines()[6:] == BOB.splitlines()[6:]
    assert similarity.without_stub(BOB, "") == BOB


# Chapter 2's lstm_step: a learner's right answer (tests/learners/ch02.py) and a near-copy
LSTM_COPY = """    # gates
    D = x.shape[1]
    x, c, h = (v.astype(np.float64) for v in (x, c, h))
    H = h.shape[1]
    pre = h @ kernel[D:] + x @ kernel[:D]
    pre += bias
    g = {n: pre[:, k * H:(k + 1) * H]
         for k, n in enumerate("ijfo")}
    c *= 0.5 * (1 + np.tanh((g["f"] + forget_bias) / 2))   # forget
    c += 0.5 * (1 + np.tanh(g["i"] / 2)) * np.tanh(g["j"])  # input
    h = np.tanh(c) * 0.5 * (1 + np.tanh(g["o"] / 2))
    return [c, h]
"""


def test_every_learners_right_answer_is_independent_and_a_near_copy_is_found():
    """tests/learners' right answers, written differently, make no pair in any exercise; a
    hand-made near-copy of one of them (names, line order, comments, layout) is found beside
    them."""

    exercises = 0
    for stem in sources.FILES:
        right = sources.answers(stem)
        pages = similarity.pages(stem)  # as the grader compares them
        for exercise, (stub, solution) in similarity.baseline(stem).items():
            codes = {n: sources.as_cell(stub, body) for n, body in right[exercise.split()[-1]]}
            assert len(codes) >= 2
            if exercise == LSTM:
                codes["copy"] = sources.as_cell(stub, LSTM_COPY)
            found = similarity.pairs_of(stem, exercise, codes, stub, solution, pages)
            names = [(p.a, p.b) for p in found]
            assert names == ([("copy", "step_right_float64_in_place")]
                             if "copy" in codes else []), (exercise, names)
            exercises += 1
    assert exercises == sum(len(checks.load(stem).exercises) for stem in checks.CHAPTERS)


def test_the_baseline_is_what_keeps_the_stub_and_the_solution_from_pairing():
    """The same submissions without the baseline: the untouched stubs and the pasted solutions
    pair up, so it is the baseline (not luck) that sets them aside above."""
    codes = {"gina": stub_cell(), "harry": stub_cell(), "ivan": solution_cell(),
             "jack": solution_cell().replace("# (B", "# mine (B")}
    assert set(pairs(codes, stub=False, solution=False)) >= {("gina", "harry"), ("ivan", "jack")}
    assert not pairs(codes)


def test_a_one_token_change_to_the_solution_shared_by_two_is_too_little_to_list(monkeypatch):
    """Two students wrote the solution with ``axis=1`` as ``1``: all their own code is shared
    (100%), but it is a few tokens, which two students write alike by chance."""
    mine = solution_cell().replace("np.stack(outputs, axis=1)", "np.stack(outputs, 1)")
    codes = {"kim": mine, "lee": mine.replace("# (B, T, H)", "# the outputs")}
    assert not pairs(codes)
    monkeypatch.setattr(similarity, "MIN_SHARED", 0)
    (pair,) = pairs(codes).values()
    assert pair.score == 1 and pair.shared < 24


def test_code_most_of_a_large_class_wrote_alike_is_set_aside():
    """In a class of 30, 25 wrote Carol's answer (reworded comments): it is the natural way,
    not evidence; Alice and Bob are still found."""
    codes = {f"s{k:02d}": CAROL.replace("outs = []", f"outs = []  # list {k}") for k in range(25)}
    codes.update({"alice": ALICE, "bob": BOB, "dan": DAN, "erin": ERIN, "frank": FRANK})
    assert set(pairs(codes)) == {("alice", "bob"), ("erin", "frank")}


def test_exercises_compared_in_parallel_give_the_same_pairs():

    stem = "02-lstm-gate-tensors"
    right = sources.answers(stem)
    codes = {(stem, exercise): {n: sources.as_cell(stub, body)
                                for n, body in right[exercise.split()[-1]]}
             for exercise, (stub, _) in similarity.baseline(stem).items()}
    codes[(stem, LSTM)]["copy"] = sources.as_cell(
        similarity.baseline(stem)[LSTM][0], LSTM_COPY)
    alone, parallel = similarity.find(codes, workers=1), similarity.find(codes, workers=2)
    assert [(p.exercise, p.a, p.b) for p in alone] == [
        (LSTM, "copy", "step_right_float64_in_place")]
    assert parallel == alone


def test_exercise_code_is_the_exercise_cell():
    table = [ExerciseCell(number("rnn_unroll"), "rnn_unroll", 3, 9),
             ExerciseCell(number("rnn_step"), "rnn_step", 2, 5),
             ExerciseCell(number("split_kernel"), "split_kernel", 1, 1)]
    helper = "def rnn_step(x, h, kernel, bias):\n    return np.tanh(x)\n"
    cells = ["import numpy as np", f"# Exercise {number('rnn_step')} (2 points, by hand)\nx = 1\n",
             helper, ALICE,
             f"# Exercise {number('rnn_unroll')} (3 points, 2 parts, by hand)\nprint('later')"]
    code = similarity.exercise_code(cells, table)
    assert code == {UNROLL: ALICE, title("rnn_step"): helper}  # split_kernel: nowhere


def test_save_writes_the_code_of_graded_submissions_only(tmp_path):
    table = {CH1: [ExerciseCell(number("rnn_unroll"), "rnn_unroll", 3, 9)]}
    good = results.Submission(path=pathlib.Path("alice.ipynb"), name="alice", chapter=CH1,
                              cells=[ALICE])
    bad = results.Submission(path=pathlib.Path("bob.ipynb"), name="bob", chapter=CH1,
                             cells=[BOB], error="bob.ipynb: not a valid notebook")
    for sub in (good, bad):
        (tmp_path / sub.name).mkdir()
    (tmp_path / "bob" / similarity.CODE).write_text("{}")  # stale, from an earlier run
    similarity.save(tmp_path, [good, bad], table)
    saved = json.loads((tmp_path / "alice" / similarity.CODE).read_text())
    assert saved == {"chapter": CH1, "exercises": {UNROLL: ALICE}}
    assert not (tmp_path / "bob" / similarity.CODE).exists()


def reports(tmp_path, codes, save_code=True):
    """Report folders as a grading run leaves them: results.json and exercise-code.json."""
    top = tmp_path / "grades"
    for name, code in codes.items():
        folder = top / name
        folder.mkdir(parents=True)
        test = {"name": UNROLL, "score": 3, "max_score": 3, "output": "✓", "visibility": "visible"}
        (folder / "results.json").write_text(json.dumps(
            {"score": 3, "tests": [test], "extra_data": {"chapter": CH1, "max_score": 3}}))
        if save_code:
            (folder / similarity.CODE).write_text(json.dumps(
                {"chapter": CH1, "exercises": {UNROLL: code}}))
    return top


HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"


def test_the_report_shows_pairs_side_by_side_escaped_and_writes_the_csv(tmp_path):
    top = reports(tmp_path, {"alice": ALICE.replace("# my", "# " + HOSTILE),
                             "bob": BOB.replace("# my own version", "# " + HOSTILE),
                             "carol": CAROL, "dan": DAN})
    page, _ = classreport.write_report([top], tmp_path / "out", roster={"bob": "=HYPERLINK(\"x\")"})
    text = page.read_text()
    section = text[text.index("<h2 id='similar'>Similar submissions</h2>"):]
    assert "<script" not in text and "onerror=alert" not in text.replace("onerror=alert(2)&gt;", "")
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in section
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", text)
    assert text.rstrip().endswith("</body></html>") and text.count("</body>") == 1
    assert section.count("<details>") == 1 and "class=sbs" in section and "<mark>" in section
    assert "<b>=HYPERLINK(&quot;x&quot;)</b> and <b>alice</b>" in section
    rows = list(csv.DictReader((tmp_path / "out" / similarity.TABLE).open()))
    assert [(r["exercise"], r["student_a"], r["student_b"]) for r in rows] == [
        (UNROLL, "'=HYPERLINK(\"x\")", "alice")]
    assert float(rows[0]["score"]) >= similarity.THRESHOLD


def test_reports_without_saved_code_skip_the_section_with_a_note(tmp_path):
    top = reports(tmp_path, {"alice": ALICE, "bob": BOB}, save_code=False)
    page, _ = classreport.write_report([top], tmp_path / "out")
    assert "No code was saved beside these reports" in page.read_text()
    assert not (tmp_path / "out" / similarity.TABLE).exists()


def test_a_broken_or_hostile_code_file_is_left_out(tmp_path):
    top = reports(tmp_path, {"alice": ALICE, "bob": BOB, "carol": CAROL})
    (top / "carol" / similarity.CODE).write_text("[1, 2")
    (top / "bob" / similarity.CODE).write_text(json.dumps({"chapter": CH1,
                                                           "exercises": {UNROLL: 7}}))
    codes, missing = similarity.collect_code([top])
    assert codes == {(CH1, UNROLL): {"alice": ALICE}} and missing == 1


def test_a_failure_costs_the_section_only(tmp_path, monkeypatch):
    """Whatever goes wrong in the comparison, the rest of the class report is written."""
    top = reports(tmp_path, {"alice": ALICE, "bob": BOB})

    def broken(codes):
        raise ValueError("<b>boom</b>")

    monkeypatch.setattr(similarity, "find", broken)
    page, table = classreport.write_report([top], tmp_path / "out")
    text = page.read_text()
    assert "Not computed: ValueError: &lt;b&gt;boom&lt;/b&gt;" in text and "Class report" in text
    assert table.exists() and not (tmp_path / "out" / similarity.TABLE).exists()


def test_two_runs_with_the_same_names_are_compared_across(tmp_path):
    """Last term's reports beside this term's: an alice in each is two students, and this
    term's bob copying last term's alice is found."""
    old = reports(tmp_path / "2025", {"alice": ALICE, "carol": CAROL})
    new = reports(tmp_path / "2026", {"alice": DAN, "bob": BOB})
    codes, _ = similarity.collect_code([old, new])
    assert set(codes[(CH1, UNROLL)]) == {"alice", "carol", f"alice ({new / 'alice'})", "bob"}
    found = similarity.find(codes)
    assert [(p.a, p.b) for p in found] == [("alice", "bob")]
    assert codes[(CH1, UNROLL)]["alice"] == ALICE


def test_the_benchmark_runs_quickly():
    done = subprocess.run([sys.executable, "benchmarks/similarity.py", "--quick"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"similar submissions, \d+ of chapter 01-basic-rnn-cell: +[\d.]+ s",
                     done.stdout), done.stdout


@pytest.mark.slow
def test_a_grading_run_saves_the_code_and_reports_the_near_copy(tmp_path):
    """Grade three Chapter 1 notebooks: Alice's answer to rnn_unroll, Bob's near-copy of it, and the
    solution; the class report lists Alice and Bob, and only them."""
    import nbformat

    from rnnbook import source

    subs = tmp_path / "subs"
    subs.mkdir()
    for name, answer in (("alice", ALICE), ("bob", BOB), ("sol", None)):
        nb = source.read(ROOT / "solutions" / f"{CH1}.ipynb")
        if answer:
            header = f"# Exercise {number('rnn_unroll')} "
            cell = next(c for c in nb.cells if c.source.startswith(header))
            cell.source = answer
        nbformat.write(nb, str(subs / f"{name}.ipynb"))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "rnnbook.grading", str(subs), "--out", str(out),
                          "--seed", "1"], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads((out / "bob" / "results.json").read_text())["score"] > 0
    saved = json.loads((out / "bob" / similarity.CODE).read_text())
    assert saved["chapter"] == CH1 and saved["exercises"][UNROLL] == BOB
    rows = list(csv.DictReader((out / similarity.TABLE).open()))
    assert [(r["exercise"], r["student_a"], r["student_b"]) for r in rows] == [
        (UNROLL, "alice", "bob")]
    assert "alice</b> and <b>bob</b>" in (out / "class-report.html").read_text()


# --- the chapter's own pages are baseline too -----------------------------------------------

WEIGHTS = title("read_cell_weights")


def weights_answer(body):
    stub = similarity.baseline(CH1)[WEIGHTS][0]
    return stub.split("    raise NotImplementedError")[0] + textwrap.indent(body, "    ")


# Two independent answers that string together the chapter's idioms (cell.build((None, D)),
# cell.variables[0], kernel[:D]): 73 % alike with the stub and the solution only as baseline
ANN = weights_answer("""if not cell.variables:
    cell.build((None, input_depth))
kernel = cell.variables[0].numpy()
bias = cell.variables[1].numpy()
return kernel[:input_depth], kernel[input_depth:], bias
""")
BEN = weights_answer("""if len(cell.variables) == 0:
    cell.build((None, input_depth))
weights = cell.variables[0].numpy()
b = cell.variables[1].numpy()
W = weights[:input_depth, :]
U = weights[input_depth:, :]
return W, U, b
""")


def test_the_pages_are_the_chapters_code_and_statements_without_the_solution():
    pages = similarity.pages(CH1)
    assert "keras_cell.build((None, D))" in pages  # book/01-basic-rnn-cell.ipynb
    assert "cell.variables" in pages.splitlines()  # an inline span of a statement
    solution = similarity.baseline(CH1)[WEIGHTS][1]
    assert "(variable.numpy() for variable in cell.variables)" in solution
    assert "(variable.numpy() for variable in cell.variables)" not in pages
    assert similarity.pages("../etc") == "" and similarity.pages("99-none") == ""


def test_the_chapters_idioms_pair_no_one_and_a_near_copy_still_pairs():
    codes = {(CH1, WEIGHTS): {"ann": ANN, "ben": BEN},
             (CH1, UNROLL): {"alice": ALICE, "bob": BOB, "carol": CAROL, "dan": DAN}}
    without = similarity.find(codes, chapter_pages={CH1: ""}, workers=1)
    assert {(p.exercise, p.a, p.b) for p in without} == {
        (WEIGHTS, "ann", "ben"), (UNROLL, "alice", "bob")}
    found = similarity.find(codes, workers=1)  # the pages read from book/ and solutions/
    assert {(p.exercise, p.a, p.b) for p in found} == {(UNROLL, "alice", "bob")}


def test_an_idiom_is_blanked_in_place():
    known = similarity.idioms("keras_cell.build((None, D))\ncell.variables[0]\nnot python (")
    assert known >= {"V.build((None, V))", "V.variables[0]", "V.build"}
    out = similarity.without_idioms(ANN, known)
    assert len(out) == len(ANN) and out.count("\n") == ANN.count("\n")
    assert "build" not in out and "cell.variables[0]" not in out and ".numpy()" in out
    assert similarity.without_idioms("def broken(:\n", known) == "def broken(:\n"


def test_numpy_is_never_an_idiom_set_aside():
    """A by-hand answer is NumPy: its calls stay compared, even where the pages write the same
    call with TensorFlow (names are anonymous: ``tf.split`` and ``np.split`` look alike)."""
    known = similarity.idioms("z = np.concatenate([x, h], axis=1)\ni, j = tf.split(z, 2, 1)")
    assert known == {"V.split(V, 2, 1)", "V.split"}
    code = "a = np.split(z, 2, 1)\nb = tf.split(z, 2, 1)\n"
    assert similarity.without_idioms(code, known) == (
        "a = np.split(z, 2, 1)\nb = " + " " * len("tf.split(z, 2, 1)") + "\n")
