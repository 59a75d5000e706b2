"""Every check against answers a learner would write, on every one of 200 seeds.

``tests/learners/chNN.py`` holds, per exercise, functions written the way learners write them,
independently of the checks' own mistake models:

- ``RIGHT[name]``: right answers written several ways (float64, lists, plain tuples, in-place
  updates, TensorFlow where the exercise allows it); each must pass on every seed;
- ``WRONG[name]``: ``(function, sentence)`` pairs: a wrong answer, and the start of the
  mistake sentence the check must name for it (None where no named mistake is expected); each
  must fail on every seed, naming that mistake, and earn the same share of the points
  (parts right on every trial) on every seed, as Gradescope draws a seed per submission.
- ``WRONG_XFAIL[name]`` / ``RIGHT_XFAIL[name]`` (optional): ``(function, reason)`` pairs, a
  wrong answer a check passes on some seed or grades unevenly, a right one it rejects (issue
  35's holes): each is a strict xfail, red once the check is fixed; then move it to ``WRONG``
  or ``RIGHT``.

Each of the check's own mistake models must fail on every seed too, and be named as itself (a
mistake that passes on some seed would give the same wrong code different grades on
Gradescope; one named as another is a duplicate). The expected answers come from each
exercise's NumPy ``reference`` (no TensorFlow call per seed); ``test_reference_agrees_with_
tensorflow`` holds that reference to the TensorFlow oracle.

One pass over the seeds per exercise serves its three sweep tests; the reference and mistake
models answer each trial once (``rnnbook.memo.remembered``), whichever function is judged.
"""
import functools
import importlib
import os

import pytest

from rnnbook import checks
from rnnbook.byhand import answer
from rnnbook.compare import evaluate
from rnnbook.plaindata import Raised, to_plain


def seeds() -> range:
    """200 seeds; the fast loop (``make test-fast``, scripts/fast.py) sets RNNBOOK_SEEDS to
    fewer. Every seed sweep of the suite reads this one."""
    text = os.environ.get("RNNBOOK_SEEDS", "200")
    if not text.isdigit() or not 1 <= int(text) <= 200:
        raise pytest.UsageError(f"RNNBOOK_SEEDS={text!r}: give a number of seeds, 1 to 200")
    return range(int(text))


SEEDS = seeds()
CHAPTERS = list(checks.CHAPTERS)


def learners(stem):
    return importlib.import_module(f"tests.learners.ch{stem[:2]}")


def exercises():
    return [(stem, ex.name) for stem in CHAPTERS for ex in checks.load(stem).exercises]


def answers_of(stem, name):
    """``(RIGHT[name], WRONG[name])`` of the chapter's learners module; a missing entry fails
    saying which file and dict to add it to."""
    module = learners(stem)
    where = f"tests/learners/ch{stem[:2]}.py"
    assert len(module.RIGHT.get(name, ())) >= 2, (
        f"{name}: {where} has {len(module.RIGHT.get(name, ()))} right answers in "
        f"RIGHT[{name!r}]: write two or more, written differently (CONTRIBUTING.md, step 3)")
    assert module.WRONG.get(name), (
        f"{name}: {where} has no WRONG[{name!r}]: write the wrong answers a learner would, "
        "each with the start of the mistake sentence the check must name (CONTRIBUTING.md, "
        "step 3)")
    return module.RIGHT[name], module.WRONG[name]


@functools.cache
def swept(stem, name):
    """``{"right": [...], "wrong": [...], "mistakes": [...]}``: per function (or mistake), the
    list of ``(seed, outcome)`` over every seed."""
    chapter = checks.load(stem)
    original = chapter[name]
    right, wrong = answers_of(stem, name)
    found = {"right": [[] for _ in right], "wrong": [[] for _ in wrong],
             "mistakes": [[] for _ in original.mistakes]}
    for seed in SEEDS:
        ex = original
        cases = chapter.cases(name, seed)
        expected = [to_plain(ex.reference(case)) for case in cases]

        def judge(fn, ex=ex, cases=cases, expected=expected):
            return evaluate(ex, cases, expected, [answer(ex, fn, case) for case in cases])

        for k, fn in enumerate(right):
            found["right"][k].append((seed, judge(fn)))
        for k, (fn, _) in enumerate(wrong):
            found["wrong"][k].append((seed, judge(fn)))
        for k, mistake in enumerate(ex.mistakes):
            answers = []
            for case, want in zip(cases, expected, strict=True):
                try:  # the mistake where it applies, the right answer elsewhere
                    answers.append(mistake.answer(case))
                except Exception as error:  # noqa: BLE001
                    # where the mistake raises the learner's own error, the learner's function
                    # raises it: Mistake.raises must name it
                    got = Raised(type(error).__name__, str(error))
                    named = mistake.raises is not None and mistake.raises(case, got)
                    answers.append(got if named else want)
            found["mistakes"][k].append((seed, evaluate(ex, cases, expected, answers)))
    return found


@pytest.mark.parametrize("stem,name", exercises())
def test_every_exercise_has_learners_answers_and_a_reference(stem, name):
    ex = checks.load(stem)[name]
    assert ex.reference is not None, (
        f"{name}: its Exercise in rnnbook/checks/ch{stem[:2]}.py has no `reference` (the NumPy "
        "answer the sweep expects, from rnnbook.reference)")
    answers_of(stem, name)


def test_learners_expect_sentences_their_exercise_has():
    """Every sentence start in ``WRONG`` (and Chapter 1's ``MORE_WRONG``) starts one of its own
    exercise's mistake sentences. Book-wide and cheap, so ``make exercise-check`` of one
    exercise runs it: a sentence changed there may be one that other exercises reuse (rnn_step's
    step mistakes are rnn_unroll's too), whose learners' answers then expect the old words."""
    stale = []
    for stem in CHAPTERS:
        module, chapter = learners(stem), checks.load(stem)
        for table in ("WRONG", "MORE_WRONG"):
            for name, pairs in getattr(module, table, {}).items():
                ex = chapter[name]
                stale += [f"{table}[{name!r}] (Exercise {ex.number}): {fn.__name__} expects "
                          f"{sentence!r}" for fn, sentence in pairs if sentence is not None
                          and not any(m.sentence.startswith(sentence) for m in ex.mistakes)]
    assert not stale, ("tests/learners expect mistakes no sentence of their exercise starts "
                       "with (a sentence was changed: update the start there):\n"
                       + "\n".join(stale))


@pytest.mark.parametrize("stem,name", exercises())
def test_reference_agrees_with_tensorflow(stem, name):
    chapter = checks.load(stem)
    ex = chapter[name]
    for seed in range(3):
        cases = chapter.cases(name, seed)
        outcome = evaluate(ex, cases, [ex.oracle(c) for c in cases],
                           [to_plain(ex.reference(c)) for c in cases])
        assert outcome.passed, outcome.message


@pytest.mark.slow
@pytest.mark.parametrize("stem,name", exercises())
def test_right_answers_pass_on_every_seed(stem, name):
    for fn, outcomes in zip(answers_of(stem, name)[0], swept(stem, name)["right"], strict=True):
        for seed, outcome in outcomes:
            assert outcome.passed, f"right answer {fn.__name__}, seed {seed}:\n{outcome}"


@pytest.mark.slow
@pytest.mark.parametrize("stem,name", exercises())
def test_learners_mistakes_fail_on_every_seed_and_are_named(stem, name):
    pairs = zip(answers_of(stem, name)[1], swept(stem, name)["wrong"], strict=True)
    unfair = []
    for (fn, sentence), outcomes in pairs:
        # the same wrong code earns the same points whichever seed Gradescope draws
        shares = {}
        for seed, outcome in outcomes:
            shares.setdefault(outcome.share, seed)
        if len(shares) > 1:
            unfair.append(f"{fn.__name__}: " + ", ".join(
                f"share {share:g} on seed {seed}" for share, seed in sorted(shares.items())))
        for seed, outcome in outcomes:
            assert not outcome.passed, f"wrong answer {fn.__name__} passed on seed {seed}"
            assert len(outcome.parts_right) < outcome.parts and outcome.share < 1, (
                f"wrong answer {fn.__name__} has every part right on seed {seed}")
            if sentence is not None:
                assert outcome.mistake.startswith(sentence), (
                    f"{fn.__name__}, seed {seed}: expected the mistake {sentence!r}, got:\n"
                    f"{outcome}")
    assert not unfair, (f"{name}: a wrong answer earns different points on different seeds "
                        "(change the designed trials):\n" + "\n".join(unfair))


@pytest.mark.slow
@pytest.mark.parametrize("stem,name", exercises())
def test_each_known_mistake_fails_on_every_seed(stem, name):
    mistakes = checks.load(stem)[name].mistakes
    for mistake, outcomes in zip(mistakes, swept(stem, name)["mistakes"], strict=True):
        for seed, outcome in outcomes:
            assert not outcome.passed, (
                f"{mistake.sentence!r} passes on seed {seed}: no trial tells its model from the "
                "right answer (where the model raises, the sweep counts the right answer): "
                "change the exercise's `designs`, give the mistake a `raises=` if its error "
                "is what shows it, or drop it")
            assert outcome.mistake == mistake.sentence, (
                f"seed {seed}: the model of {mistake.sentence!r} is named as:\n{outcome}")



#: no wrong answer earns this share of an exercise's points or more (issue 35)
LESS_THAN = 0.75


@pytest.mark.slow
@pytest.mark.parametrize("stem,name", exercises())
def test_no_wrong_answer_earns_three_quarters_of_the_points(stem, name):
    """Every ``WRONG`` answer and every one of the check's mistake models earns under 75 % of
    the exercise's points on every seed: partial credit never makes a wrong answer look right
    (the parts' weights, and :data:`rnnbook.compare.CEILING` for any failing answer)."""
    wrong, mistakes = answers_of(stem, name)[1], checks.load(stem)[name].mistakes
    judged = [(f"wrong answer {fn.__name__}", outcomes) for (fn, _), outcomes in
              zip(wrong, swept(stem, name)["wrong"], strict=True)]
    judged += [(f"the mistake model of {m.sentence[:40]!r}", outcomes) for m, outcomes in
               zip(mistakes, swept(stem, name)["mistakes"], strict=True)]
    rich = [next(f"{who}: {outcome.share:.0%} on seed {seed}" for seed, outcome in outcomes
                 if outcome.share >= LESS_THAN)
            for who, outcomes in judged if any(o.share >= LESS_THAN for _, o in outcomes)]
    assert not rich, (f"{name}: wrong answers earning {LESS_THAN:.0%} or more of the points "
                      "(weigh the part the exercise is about):\n" + "\n".join(rich))


def _xfail(table, what):
    """``WRONG_XFAIL`` or ``RIGHT_XFAIL`` of every chapter's learners as strict xfails: answers
    that break the sweep's contract today (issue 35), each with the reason."""
    return [pytest.param(stem, name, fn, id=f"{name}-{fn.__name__}", marks=pytest.mark.xfail(
                strict=True, reason=f"issue 35: {what}: {why}"))
            for stem in CHAPTERS
            for name, pairs in getattr(learners(stem), table, {}).items()
            for fn, why in pairs]


def _outcomes(stem, name, fn):
    chapter = checks.load(stem)
    ex = chapter[name]
    for seed in SEEDS:
        cases = chapter.cases(name, seed)
        expected = [to_plain(ex.reference(case)) for case in cases]
        yield seed, evaluate(ex, cases, expected, [answer(ex, fn, case) for case in cases])


@pytest.mark.slow
@pytest.mark.parametrize("stem,name,fn", _xfail("WRONG_XFAIL", "a wrong answer the check "
                                                 "passes on some seed, or grades unevenly"))
def test_wrong_answers_the_checks_miss_today(stem, name, fn):
    """What ``WRONG`` asks of a wrong answer (fails on every seed, one share on all): a strict
    xfail, red (XPASS) once the check holds it; then move the answer to ``WRONG``."""
    shares = set()
    for seed, outcome in _outcomes(stem, name, fn):
        assert not outcome.passed, f"wrong answer {fn.__name__} passed on seed {seed}"
        shares.add(outcome.share)
    assert len(shares) == 1, f"{fn.__name__} earns shares {sorted(shares)} on different seeds"


@pytest.mark.slow
@pytest.mark.parametrize("stem,name,fn", _xfail("RIGHT_XFAIL", "a right answer the check "
                                                 "rejects"))
def test_right_answers_the_checks_reject_today(stem, name, fn):
    """What ``RIGHT`` asks of a right answer (passes on every seed): a strict xfail, red
    (XPASS) once the check accepts it; then move the answer to ``RIGHT``."""
    for seed, outcome in _outcomes(stem, name, fn):
        assert outcome.passed, f"right answer {fn.__name__}, seed {seed}:\n{outcome}"
