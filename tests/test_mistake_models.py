"""A mistake given as the right answer on a changed case (``perturb``) or changed after
(``after``), and parts weighed by ``Exercise.weights`` (rnnbook/exercise.py); for every
chapter, the learner release (no NumPy reference) computes each mistake as the repository does
and its checks run on the release's stubs (one test for all chapters, in place of five)."""
import numpy as np
import pytest

from rnnbook import checks
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
    ((), "a2", 0.5), ((3, 1), "a2", 2 / 3), ((3, 1), "b1", 0.25)])  # 3/4 held to 2/3
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


# --- Every chapter: the learner release computes each mistake as the repository does --------

#: mistakes whose model needs rnnbook.reference, so the release cannot name them (listed on the
#: instructors' page, with why); the test wants exactly these, so a fix or a new one shows
NEEDS_THE_REFERENCE = {"lstm_step": ("sigmoid is applied to j",)}


def release_chapter(stem, monkeypatch):
    """Chapter ``stem``'s checks loaded as the learner release loads them: ``rnnbook.reference``
    and ``rnnbook.backward`` are the release's stub (every attribute raises ImportError), and
    the chapter module and ``rnnbook.checks.common`` are imported afresh on top of them."""
    import importlib.util
    import sys
    import types

    import rnnbook
    from conftest import ROOT

    stub_text = (ROOT / "rnnbook/grading/templates/learner-stub.py").read_text()
    for name in ("reference", "backward"):
        stub = types.ModuleType(f"rnnbook.{name}")
        exec(stub_text, stub.__dict__)  # noqa: S102 - the release's own stub
        monkeypatch.setitem(sys.modules, f"rnnbook.{name}", stub)
        monkeypatch.setattr(rnnbook, name, stub, raising=False)
    module = None
    for name in ("rnnbook.checks.common", checks.CHAPTERS[stem]):
        spec = importlib.util.spec_from_file_location(name, sys.modules[name].__file__)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
    return module.CHAPTER


def _answer(model, case):
    """The model's answer on ``case``, or the class of what it raised: ImportError (it needs
    the reference) or Exception (it does not apply to this case)."""
    from rnnbook.plaindata import to_plain

    try:
        return to_plain(model(case))
    except ImportError:
        return ImportError
    except Exception:  # noqa: BLE001 - the mistake does not apply to this case
        return Exception


EVERY_EXERCISE = [(stem, ex.name) for stem in checks.CHAPTERS
                  for ex in checks.load(stem).exercises]


@pytest.mark.parametrize("stem,name", EVERY_EXERCISE, ids=lambda v: v)
def test_the_release_computes_each_mistake_as_the_repository_does(stem, name, monkeypatch):
    """The learner release has no NumPy reference: a mistake given as the right answer on a
    changed case (``perturb=``) or changed after (``after=``) is computed there from
    TensorFlow's oracle (rnnbook/exercise.py). On two seeds, every model of every mistake gives
    the same answer (or does not apply, or raises, in both) in the repository and in the
    release, so both name the same mistakes; only :data:`NEEDS_THE_REFERENCE` may not."""
    from rnnbook.compare import agrees

    chapter = checks.load(stem)
    here = chapter[name]
    there = release_chapter(stem, monkeypatch)[name]
    differ, unnamed = [], set()
    for seed in (0, 1):
        for k, case in enumerate(chapter.cases(name, seed)):
            for ours, theirs in zip(here.mistakes, there.mistakes, strict=True):
                for model, same in zip(ours.models, theirs.models, strict=True):
                    want, got = _answer(model, case), _answer(same, case)
                    raised = isinstance(want, type), isinstance(got, type)  # no answer
                    if got is ImportError and not raised[0]:
                        unnamed.add(ours.sentence)
                    elif any(raised):
                        if want is not got:
                            differ.append(f"seed {seed} trial {k + 1}: {ours.sentence[:60]!r}")
                    elif not agrees(want, got, 10 * here.rtol, 10 * here.atol):
                        differ.append(f"seed {seed} trial {k + 1}: {ours.sentence[:60]!r}")
    assert not differ, f"{here.number}: the release computes other answers:\n" + "\n".join(
        differ)
    allowed = NEEDS_THE_REFERENCE.get(name, ())
    assert sorted(s for s in unnamed if not s.startswith(allowed)) == [], (
        f"{here.number}: the release cannot compute these mistakes (give them perturb=/after=, "
        "rnnbook/exercise.py)")
    assert all(any(s.startswith(a) for s in unnamed) for a in allowed), (
        f"{here.number}: the release now names {allowed}: drop it from NEEDS_THE_REFERENCE "
        "and from book/instructors.md")


@pytest.mark.parametrize("stem", list(checks.CHAPTERS))
def test_every_chapter_works_with_the_release_stubs(stem, monkeypatch):
    """As in the learner release, rnnbook.reference and rnnbook.backward raise ImportError on
    any attribute: each chapter's checks still import, make their cases and run their
    oracles (a reference that needs them raises; some need only NumPy)."""
    release = release_chapter(stem, monkeypatch)
    assert [ex.name for ex in release.exercises] == [
        ex.name for ex in checks.load(stem).exercises]
    for ex in release.exercises:
        case = release.cases(ex.name, 0)[0]
        assert ex.oracle(case) is not None
