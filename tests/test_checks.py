"""Every check, both ways, for every chapter: passes on the solution, fails on the stub, and
recognises each of its known mistakes by name."""
import numpy as np
import pytest

from conftest import ROOT
from rnnbook import checks, source
from rnnbook.checking import answer, evaluate

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
def test_headers_and_checks_agree_on_kind(stem):
    """The header's "by hand" / "API" (what the grader reads) is the check's ``by_hand``."""
    cells = source.exercises(source.read(ROOT / "solutions" / f"{stem}.ipynb"))
    chapter = checks.load(stem)
    assert [c.name for c in cells] == [ex.name for ex in chapter.exercises]
    # the header's number is the exercise's place in the chapter (the checks number by place)
    assert [c.number for c in cells] == [ex.number for ex in chapter.exercises]
    for cell in cells:
        assert cell.by_hand == chapter[cell.name].by_hand, cell.name


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
