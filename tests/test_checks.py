"""Every check, both ways, for every chapter: passes on the solution, fails on the stub, and
recognises each of its known mistakes by name."""
import numpy as np
import pytest

from rnnbook import checks
from rnnbook.checking import answer, evaluate, to_plain

EXERCISES = [
    (stem, ex.name)
    for stem in checks.CHAPTERS
    for ex in checks.load(stem).exercises
]
MISTAKES = [
    (stem, ex.name, k)
    for stem in checks.CHAPTERS
    for ex in checks.load(stem).exercises
    for k in range(len(ex.mistakes))
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


@pytest.mark.parametrize("stem,name,k", MISTAKES)
def test_each_mistake_is_named(stem, name, k):
    """Feed a mistake's own answer back as the learner's: the check fails and names it."""
    chapter = checks.load(stem)
    ex = chapter[name]
    mistake = ex.mistakes[k]
    for seed in range(20):  # a trial where this mistake applies and is not by chance right
        for case in chapter.cases(name, seed):
            try:
                wrong = to_plain(mistake.answer(case))
            except Exception:  # noqa: BLE001 - the mistake needs other shapes (e.g. D == H)
                continue
            outcome = evaluate(ex, [case], [ex.oracle(case)], [wrong])
            if not outcome.passed:
                assert mistake.sentence in outcome.message, outcome.message
                return
    pytest.fail(f"mistake {mistake.sentence!r} never differs from the right answer")


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
