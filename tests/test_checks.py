"""Every check, both ways, for every chapter: passes on the solution, fails on the stub, and
recognises each of its known mistakes by name."""
import itertools

import numpy as np
import pytest

from conftest import ROOT, verdict
from rnnbook import checks, source
from rnnbook.byhand import answer
from rnnbook.compare import evaluate

STEMS = list(checks.CHAPTERS)

EXERCISES = [
    (stem, ex.name)
    for stem in checks.CHAPTERS
    for ex in checks.load(stem).exercises
]


def run(stem, name, fn, seed=1):
    return verdict(checks.load(stem), name, fn, seed, oracle=True)


@pytest.mark.parametrize("stem,name", EXERCISES)
def test_solution_passes(stem, name, solutions):
    outcome = run(stem, name, solutions(stem)[name])
    assert outcome.passed, outcome.message


@pytest.mark.parametrize("stem,name", EXERCISES)
def test_stub_fails_and_says_what_to_do(stem, name, stubs):
    outcome = run(stem, name, stubs(stem)[name])
    assert not outcome.passed
    assert "not written yet" in outcome.message and "NotImplementedError" in outcome.message


@pytest.mark.parametrize("stem", list(checks.CHAPTERS))
def test_each_mistake_sentence_is_unique(stem):
    """One sentence, one mistake: two ways to write the same mistake are variants of one."""
    for ex in checks.load(stem).exercises:
        sentences = [m.sentence for m in ex.mistakes]
        assert len(sentences) == len(set(sentences)), f"{ex.name}: a sentence is repeated"


@pytest.mark.parametrize("stem", list(checks.CHAPTERS))
def test_a_chapter_without_keras_3_never_reaches_for_it(stem):
    """``Chapter.keras3`` False (its grading zygote leaves Keras 3 out, and so does the child's
    ``rnnbook.setup()``) only where nothing a grading child runs uses Keras 3: no exercise's
    ``call`` reaches it (followed as the zygote follows what a child may keep,
    ``zygote._reachable``: Chapter 1's oracles use Keras 3, its callers TF1's cells only), and
    its solution and learner notebooks never import it. (True is always safe: the flag only
    saves a cold start the import.)"""
    import importlib.util

    chapter = checks.load(stem)
    if chapter.keras3:
        return
    spec = importlib.util.spec_from_file_location(
        "zygote_for_test", ROOT / "rnnbook" / "grading" / "zygote.py")
    zygote = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(zygote)
    reached = zygote._reachable([ex.call for ex in chapter.exercises])
    names = set().union(*reached.values())
    assert names and not names & {"keras3", "import_keras"}, (
        f"{stem}'s callers reach Keras 3: set keras3=True")
    for path in (ROOT / "solutions" / f"{stem}.ipynb", ROOT / "notebooks" / f"{stem}.ipynb"):
        text = path.read_text()
        for use in ("keras3()", "import keras", "from keras", 'import_module("keras")'):
            assert use not in text, f"{path.name} uses Keras 3 ({use}): set keras3=True"


@pytest.mark.parametrize("stem", STEMS)
def test_drawing_a_chapters_trials_imports_no_tensorflow(stem):
    """The grader draws every exercise's trials (and digests them) before any oracle runs: in
    a fresh process, on two seeds, that imports neither TensorFlow nor Keras (Chapter 5's
    right dkernel by TensorFlow's GradientTape cost every Chapter 5 grading run a TensorFlow
    import of its own, and half a gigabyte: issue 39)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from rnnbook import checks\n"
            "from rnnbook.expected import trials_digest\n"
            f"chapter = checks.load({stem!r})\n"
            "for ex in chapter.exercises:\n"
            "    for seed in (0, 5):\n"
            "        assert trials_digest(chapter.trial_cases(ex.name, seed))\n"
            "print(sorted(m for m in ('tensorflow', 'keras', 'tf_keras') if m in sys.modules))\n")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert ran.stdout.split() == ["[]"], ran.stdout


def test_exercise_names_are_unique_in_the_book():
    """Trials are seeded by exercise name, so a name may not stand twice."""
    names = [name for _, name in EXERCISES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("stem", list(checks.CHAPTERS))
def test_headers_agree_with_checks(stem):
    """The headers in solutions/ (what the grader reads) and the chapter's checks name the same
    exercises in the same order (the checks number them by place), of the same kind ("by hand"
    is the check's ``by_hand``) and with as many parts (the points are shared per part)."""
    cells = source.exercises(source.read(ROOT / "solutions" / f"{stem}.ipynb"))
    chapter = checks.load(stem)
    where = f"solutions/{stem}.ipynb's headers and rnnbook/checks/ch{stem[:2]}.py's CHAPTER"
    assert [(c.number, c.name) for c in cells] == [(ex.number, ex.name)
                                                   for ex in chapter.exercises], (
        f"{where} differ: each exercise needs a header cell and a check in CHAPTER, at the "
        "same place (the K-th of CHAPTER is Exercise N.K)")
    for cell in cells:
        ex = chapter[cell.name]
        assert cell.by_hand == ex.by_hand, (
            f"exercise {cell.number} {cell.name}: the header says {cell.kind}, the check "
            f"{ex.kind} (by_hand={ex.by_hand})")
        fix = (f"write '{len(ex.parts)} parts, ' in the header" if len(ex.parts) > 1
               else "take the parts out of the header")
        assert cell.parts == max(len(ex.parts), 1), (
            f"exercise {cell.number} {cell.name}: the header says {cell.parts} part(s), the "
            f"check's parts are {ex.parts or '(one answer)'}: {fix}")


def test_trials_are_keyed_by_name_not_position():
    chapter = checks.load(STEMS[0])
    first = chapter.exercises[0]
    before = chapter.cases(first.name, 3)
    chapter.exercises.reverse()
    try:
        after = chapter.cases(first.name, 3)
    finally:
        chapter.exercises.reverse()
    for a, b in zip(before, after, strict=True):
        assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("stem,name", EXERCISES)
def test_same_seed_same_cases(stem, name):
    chapter = checks.load(stem)
    a, b = chapter.cases(name, 7), chapter.cases(name, 7)
    for ca, cb in zip(a, b, strict=True):
        assert ca.keys() == cb.keys()
        for key in ca:
            assert np.array_equal(ca[key], cb[key])


@pytest.mark.parametrize("stem,name", EXERCISES)
def test_a_missing_return_is_named(stem, name):
    """The commonest slip: the function computes its answer and forgets to return it."""
    outcome = run(stem, name, lambda *args, **kwargs: None)
    assert not outcome.passed
    assert "returns nothing; end it with `return ...`" in outcome.message, outcome.message


def test_a_mistake_is_named_by_the_error_it_raises():
    """``Mistake.raises``: a (B,) mask against (B, H) arrays without [:, None] raises when B != H
    and answers wrong when B = H; both get the mistake's sentence, other errors do not."""
    from rnnbook.exercise import Exercise, Mistake
    from rnnbook.plaindata import Raised

    def row_mask(c):
        return c["x"] * ~c["mask"][:, None]

    def unit_mask(c):
        return c["x"] * ~c["mask"]  # raises unless B = H

    def unit_error(case, got):
        return case["B"] != case["H"] and "broadcast" in got.message

    sentence = "the mask lines up with the units: index it as mask[:, None]."
    ex = Exercise("masked", "x with masked rows zeroed", make_case=None,
                  call=lambda fn, c: fn(c), oracle=row_mask,
                  mistakes=(Mistake(sentence, unit_mask, raises=unit_error),))
    ex.number = "0.1"
    square = {"B": 2, "H": 2, "x": np.ones((2, 2)), "mask": np.array([True, False])}
    wide = {"B": 2, "H": 3, "x": np.ones((2, 3)), "mask": np.array([True, False])}
    cases = [square, wide]
    expected = [row_mask(c) for c in cases]
    for order in (cases, cases[::-1]):
        out = evaluate(ex, order, [row_mask(c) for c in order],
                       [answer(ex, unit_mask, c) for c in order])
        assert not out.passed and out.mistake == sentence, out.message
        assert "broadcast" in out.message  # the error itself is still shown
    only_wide = evaluate(ex, [wide], [expected[1]], [answer(ex, unit_mask, wide)])
    assert only_wide.mistake == sentence, only_wide.message
    other = Raised("ValueError", "could not broadcast input array")
    assert evaluate(ex, [square], [expected[0]], [other]).mistake == ""  # B = H: not this
    stub = Raised("NotImplementedError", "broadcast")
    assert evaluate(ex, [wide], [expected[1]], [stub]).mistake == ""


SIZES = ("B", "D", "H", "T", "L", "P", "num_proj", "S", "chunk", "n")


@pytest.mark.parametrize("stem,name", EXERCISES)
def test_no_two_sizes_coincide_in_every_trial(stem, name):
    """Issue 18: where two sizes are equal in every trial (B = H, say), an answer that confuses
    them (a (B,) mask over the units, a transpose) fits; each seed's trials must tell them apart.
    And an index a learner could hard-code (the row to serve, the step t) is a middle one in
    some trial: neither the first nor the last."""
    chapter = checks.load(stem)
    for seed in range(20):
        cases = chapter.cases(name, seed)
        sizes = [k for k in SIZES if all(isinstance(c.get(k), int) for c in cases)]
        for a, b in itertools.combinations(sizes, 2):
            assert any(c[a] != c[b] for c in cases), f"seed {seed}: {a} = {b} in every trial"
        for index, length in (("row", "B"), ("t", "T")):
            if all(index in c and length in c for c in cases):
                assert any(0 < c[index] < c[length] - 1 for c in cases), (
                    f"seed {seed}: {index} is never a middle one")


# --- one verdict (issue 25): arguments left as they came, seeds, types -----------------------


def _first_array(value):
    """The first NumPy array in ``value`` (nested in tuples, lists and dicts), or None."""
    if isinstance(value, np.ndarray):
        return value
    items = value.values() if isinstance(value, dict) else (
        value if isinstance(value, (list, tuple)) else ())
    for item in items:
        found = _first_array(item)
        if found is not None:
            return found
    return None


def changing(fn, seen):
    """``fn`` that, after answering, changes the first array it was given in place (and notes
    the argument's name in ``seen``)."""
    import functools
    import inspect

    @functools.wraps(fn)
    def learner(*args, **kwargs):
        result = fn(*args, **kwargs)
        for name, value in inspect.signature(fn).bind(*args, **kwargs).arguments.items():
            array = _first_array(value)
            if array is not None and array.size:
                array[...] = ~array if array.dtype == bool else array + 1
                seen.append(name)
                break
        return result

    return learner


@pytest.mark.parametrize("stem,name", EXERCISES)
def test_a_function_that_changes_its_arguments_fails_and_names_them(stem, name, solutions):
    """The solution, changing an array it was given after answering (reset_ended answered in place,
    ``state[:, :, ended] = 0``): it fails, and the mistake names the argument. An exercise
    whose arguments hold no array passes as before."""
    from rnnbook.plaindata import changed_sentence

    seen = []
    outcome = run(stem, name, changing(solutions(stem)[name], seen))
    if not seen:
        assert outcome.passed, outcome.message
        return
    assert not outcome.passed and outcome.share == 0, outcome.message
    assert outcome.mistake == changed_sentence(seen[0]), outcome.message
    assert f"`{seen[0]} = {seen[0]}.copy()`" in outcome.message


def test_a_failure_says_how_to_see_it_again(capsys):
    """check(fn, seed=N) prints the seed of a failing run's trials and the trial's sizes, and
    the same seed shows the same failure."""
    from rnnbook.checks import ch01

    def split_kernel(kernel, input_depth):
        return kernel[:input_depth].T, kernel[input_depth:]

    first = ch01.check(split_kernel, seed=12)
    assert "To see these trials again: check(split_kernel, seed=12)." in first.message
    assert "First (trial 1 of 3, D=" in first.message
    assert ch01.check(split_kernel, seed=12).message == first.message
    assert capsys.readouterr().out.count("seed=12") == 2

    def stub(kernel, input_depth):
        raise NotImplementedError("Exercise 1.1: write split_kernel")

    assert "seed=" not in ch01.check(stub, "split_kernel", seed=12).message  # nothing to see


def test_the_parts_line_says_how_they_set_the_points():
    from rnnbook.compare import evaluate
    from rnnbook.exercise import Exercise

    def exercise(weights=()):
        return Exercise("pair", "a pair", make_case=None, call=lambda fn, c: fn(),
                        oracle=None, parts=("a", "b"), weights=weights)

    case, want = {"n": 1}, [np.ones(2), np.zeros(2)]
    got = [np.ones(2), np.ones(2)]
    equal = evaluate(exercise(), [case], [want], [got]).message
    assert "Points: each part right on every trial earns 1/2; this answer earns 50%." in equal
    weighed = evaluate(exercise((1, 3)), [case], [want], [got]).message
    assert "Points: split by part (a 25%, b 75%); this answer earns 25%." in weighed


@pytest.mark.parametrize("same_type,got,passed", [
    (False, [[1.0, 2.0]], True),  # nested lists of numbers are an array
    (True, [[1.0, 2.0]], False),  # ... unless the type is part of the answer
    (True, np.array([[1.0, 2.0]]), True),  # float64 stands for float32 either way
    (False, np.array([[1.0, 2.0]]), True),
])
def test_the_type_is_part_of_the_answer_only_where_the_exercise_says(same_type, got, passed):
    from rnnbook.compare import evaluate, type_sentence
    from rnnbook.exercise import Exercise

    ex = Exercise("one", "an array", make_case=None, call=None, oracle=None,
                  same_type=same_type)
    outcome = evaluate(ex, [{"n": 1}], [np.array([[1, 2]], dtype=np.float32)], [got])
    assert outcome.passed == passed, outcome.message
    assert outcome.passed or outcome.mistake == type_sentence(ex)


def test_numbers_are_judged_by_value_unless_the_type_is_part_of_the_answer():
    from rnnbook.compare import difference

    assert difference(14, 14.0) is None  # 14.0 is 14
    assert difference(14, 14.0, strict=True) == "answer: expected 14, got 14.0"
    assert difference(14, 14.5) == "answer: expected 14, got 14.5"
    assert difference(14, True) is not None
