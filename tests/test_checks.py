"""Every check, both ways, for every chapter: passes on the solution, fails on the stub, and
recognises each of its known mistakes by name."""
import itertools

import numpy as np
import pytest

from conftest import ROOT
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
    chapter = checks.load(stem)
    ex = chapter[name]
    cases = chapter.cases(name, seed)
    expected = [ex.oracle(c) for c in cases]
    return evaluate(ex, cases, expected, [answer(ex, fn, c) for c in cases])


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
