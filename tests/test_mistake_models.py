"""A mistake given as the right answer on a changed case (``perturb``) or changed after
(``after``), and parts weighed by ``Exercise.weights`` (rnnbook/exercise.py)."""
import numpy as np
import pytest

from rnnbook.compare import evaluate
from rnnbook.exercise import Chapter, Exercise, Mistake, normal


def _case(rng):
    return {"a": normal(rng, 3), "b": normal(rng, 3)}


def _exercise(reference=None, **options):
    def oracle(case):
        return case["a"] * 2.0, case["b"] - 1.0  # (3,), (3,)

    return Exercise(
        name="pair", task="(a2, b1)", make_case=_case, call=lambda fn, c: fn(c["a"], c["b"]),
        oracle=oracle, reference=reference, parts=("a2", "b1"),
        mistakes=(
            Mistake("a and b swapped", perturb=lambda c: {"a": c["b"], "b": c["a"]}),
            Mistake("parts swapped", after=lambda c, right: right[::-1]),
        ),
        **options)


def _stub_reference(case):
    raise ImportError("rnnbook.reference is not part of the learner release")


@pytest.mark.parametrize("reference", [None, _stub_reference,
                                       lambda c: (c["a"] * 2.0, c["b"] - 1.0)])
def test_perturbed_and_after_mistakes_are_named_with_or_without_a_reference(reference):
    chapter = Chapter(9, "09-test", [_exercise(reference)])
    ex = chapter["pair"]
    cases = chapter.cases("pair", seed=3)
    expected = [ex.oracle(c) for c in cases]
    swapped = [[c["b"] * 2.0, c["a"] - 1.0] for c in cases]
    outcome = evaluate(ex, cases, expected, swapped)
    assert not outcome.passed and outcome.mistake == "a and b swapped"
    reversed_parts = [[c["b"] - 1.0, c["a"] * 2.0] for c in cases]
    assert evaluate(ex, cases, expected, reversed_parts).mistake == "parts swapped"


def test_a_mistake_needs_one_way_of_saying_its_answer():
    with pytest.raises(ValueError, match="give answer="):
        Mistake("nothing")
    with pytest.raises(ValueError, match="OR"):
        Mistake("both", answer=lambda c: 0, after=lambda c, r: r)


@pytest.mark.parametrize("weights, right_part, share", [
    ((), "a2", 0.5), ((3, 1), "a2", 0.75), ((3, 1), "b1", 0.25)])
def test_weights_split_the_points(weights, right_part, share):
    chapter = Chapter(9, "09-test", [_exercise(weights=weights)])
    ex = chapter["pair"]
    cases = chapter.cases("pair", seed=5)
    expected = [[np.asarray(v) for v in ex.oracle(c)] for c in cases]
    k = ex.parts.index(right_part)
    answers = [[e[j] if j == k else e[j] + 1.0 for j in range(2)] for e in expected]
    outcome = evaluate(ex, cases, expected, answers)
    assert outcome.parts_right == (right_part,)
    assert outcome.share == pytest.approx(share)


def test_weights_never_give_full_marks_to_a_wrong_answer():
    with pytest.raises(ValueError, match="2 weights for 3 parts"):
        Exercise(name="x", task="", make_case=_case, call=None, oracle=None,
                 parts=("a", "b", "c"), weights=(1, 2))
