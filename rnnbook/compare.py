"""Comparing an answer with the expected one, and saying what went wrong.

:func:`evaluate` compares the learner's answers with the oracle's over a check's trials and
writes the verdict, an :class:`Outcome`: what differs on the first failing trial
(:func:`difference`, in words: :func:`describe`, :func:`kind`), which parts of an answer of
several parts are right on every trial (:func:`parts_right`, the grader's partial credit), and
the known mistake that explains the failing trials best (:func:`diagnose`, :func:`recognise`,
:func:`diagnose_part`); or, when the function raised, where and why. The same code serves the
in-notebook ``check(fn)`` and the grader (:mod:`rnnbook.grading.results`), whose learner's
answers come from another process.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from rnnbook import diagnose as diagnosis
from rnnbook.byhand import BY_HAND
from rnnbook.plaindata import CHANGED, Case, Raised, changed_sentence, to_plain

PASS, FAIL = "✓", "✗"
#: the most a failing answer earns, whatever parts are right (issue 35): a wrong answer in
#: any part stays well below a right one (book/instructors.md, *How points are given*)
CEILING = 2 / 3
CEILING_SAID = "two thirds"
#: float32 tolerance: TensorFlow's and NumPy's matmuls differ in the last bits
RTOL, ATOL = 1e-4, 1e-5


@dataclass
class Outcome:
    """The verdict on one exercise: ``passed`` and a message for the learner; for an answer of
    several parts, which parts matched TensorFlow on every trial (the grader's partial credit).
    """

    exercise: Any  # the rnnbook.exercise.Exercise judged
    passed: bool
    message: str
    trials: int = 0
    mistake: str = ""  # the sentence of the mistake it recognised, if any
    parts_right: tuple = ()  # the names of the parts right on every trial (all when passed)
    hedge: str = ""  # "it explains 1 of the 3 failing trials": the mistake is likely, not sure

    @property
    def parts(self) -> int:
        """How many parts the answer has (1 for an answer that is not made of parts)."""
        return max(len(self.exercise.parts), 1)

    @property
    def parts_earned(self) -> int:
        """How many parts earn their points: all when it passed, else the parts right on every
        trial, never all of them."""
        if self.passed:
            return self.parts
        return min(len(self.parts_right), self.parts - 1)

    @property
    def share(self) -> float:
        """The share of the points it earns: 1 when it passed; else the weights of the parts
        right on every trial over all the weights (:attr:`Exercise.part_weights`), never all of
        them (no wrong answer gets full marks: without its lightest part at most), and never
        more than :data:`CEILING`."""
        if self.passed:
            return 1.0
        weights = self.exercise.part_weights
        if not weights:
            return 0.0
        return min(self.parts_share, CEILING)

    @property
    def parts_share(self) -> float:
        """The weights of the parts right on every trial over all the weights, without the
        lightest part at most: :attr:`share` before :data:`CEILING` (0 for a single answer)."""
        weights = self.exercise.part_weights
        if not weights:
            return 0.0
        earned = sum(w for name, w in zip(self.exercise.parts, weights, strict=True)
                     if name in self.parts_right)
        return min(earned, sum(weights) - min(weights)) / sum(weights)

    @property
    def capped(self) -> bool:
        """Whether :data:`CEILING` lowered the share of a failing answer's parts."""
        return not self.passed and self.parts_share > CEILING

    def __str__(self):
        return self.message

    def __bool__(self):
        return self.passed

    def _ipython_display_(self):
        """Nothing: ``check(...)`` has printed the message already, and a notebook cell that
        ends in ``check(fn)`` should not show it twice."""


def describe(case: Case) -> str:
    """``B=3, D=4, H=2, cell_clip=0.5``: a case's sizes and options (its scalar entries)."""
    scalars = (bool, int, float, np.integer, np.floating, np.bool_)
    return ", ".join(f"{k}={v:g}" if isinstance(v, (float, np.floating)) else f"{k}={v}"
                     for k, v in case.items() if isinstance(v, scalars))


def kind(value: Any, parts: Sequence[str] = ()) -> str:
    """How a value looks, in words: ``array of shape (3, 4), dtype float32``, ``a sequence of 2
    (W, U)``, ``the string 'rnn/split:0'``, ``a sequence of 3 strings``."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return f"a sequence of {len(value)} strings"
        named = f" ({', '.join(parts)})" if len(parts) == len(value) else ""
        return f"a sequence of {len(value)}{named}"
    return f"{type(value).__name__} {value!r}"


def difference(expected: Any, got: Any, rtol: float = RTOL, atol: float = ATOL,
               path: str = "answer", parts: Sequence[str] = (), strict: bool = False,
               relative: bool = False) -> str | None:
    """``None`` when ``got`` matches ``expected``; otherwise what differs, in a few lines (one
    line per part that differs, for an answer made of named parts).

    ``strict`` (:attr:`Exercise.same_type`): the type is part of the answer, so an array must
    come as an array (not nested lists or tuples) and a number as a number of the same type;
    otherwise only the values count (nested lists of numbers are an array, 14.0 is 14). Any
    dtype of numbers stands for a float array either way (float64 is not a mistake).
    ``relative``: an array that differs also gets a line with its :func:`relative_error`
    (Chapter 5's gradients)."""
    if got is None and expected is not None:
        return (f"{path}: expected {kind(expected, parts)}, got None: the function returns "
                "nothing; end it with `return ...`")
    if isinstance(expected, list):
        if not isinstance(got, list):
            return f"{path}: expected {kind(expected, parts)}, got {kind(got)}"
        if len(got) != len(expected):
            return f"{path}: expected {kind(expected, parts)}, got {kind(got)}"
        if expected and all(isinstance(e, str) for e in expected):
            return _strings_difference(expected, got, path)
        found: list[str] = []  # what differs, part by part
        right: list[str] = []  # the parts that do not
        for k, (e, g) in enumerate(zip(expected, got, strict=True)):
            sub = parts[k] if k < len(parts) else f"{path}[{k}]"
            one = difference(e, g, rtol, atol, sub, strict=strict, relative=relative)
            (found if one else right).append(one or sub)
        if not found:
            return None
        if right and len(expected) > 1:
            found.append(f"right: {', '.join(right)}")
        return "\n  ".join(found)
    if isinstance(expected, np.ndarray):
        if isinstance(got, list) and not strict:  # nested lists of numbers are an array too
            got = _as_array(got, expected)
        if not isinstance(got, np.ndarray):
            return f"{path}: expected {kind(expected)}, got {kind(got)}"
        if got.shape != expected.shape:
            return f"{path}: expected shape {expected.shape}, got shape {got.shape}"
        if expected.dtype.kind == "f" and got.dtype.kind not in "fiu":
            return f"{path}: expected numbers ({expected.dtype}), got dtype {got.dtype}"
        if expected.dtype.kind != "f":
            if np.array_equal(expected, got):
                return None
            first = tuple(int(i) for i in np.argwhere(expected != got)[0])
            return (f"{path}: differs at {list(first)}: expected {expected[first]!r}, "
                    f"got {got[first]!r}")
        got = got.astype(np.float64)
        close = np.isclose(got, expected, rtol=rtol, atol=atol)
        if close.all():
            return None
        error = np.where(np.isnan(got), np.inf, np.abs(got - expected))
        index = np.unravel_index(int(np.argmax(error)), error.shape)
        largest = "nan" if np.isinf(error[index]) else f"{error[index]:.4g}"
        at = list(int(i) for i in index)
        said = (
            f"{path} ({expected.shape}): {int((~close).sum())} of {close.size} values differ; "
            f"largest error {largest} at {at}: expected {expected[index]:.6g}, "
            f"got {got[index]:.6g}"
        )
        if relative:
            said += (f"\n  {path}: relative error {relative_error(expected, got):.3g} "
                     "(the largest |a - b| / max(|a|, |b|))")
        return said
    if isinstance(expected, str):
        if got == expected:
            return None
        return f"{path}: expected {kind(expected)}, got {kind(got)}"
    if isinstance(expected, float):
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            return f"{path}: expected a number ({expected:.6g}), got {kind(got)}"
        return None if np.isclose(got, expected, rtol=rtol, atol=atol) else (
            f"{path}: expected {expected:.6g}, got {got:.6g}"
        )
    if (not strict and type(expected) is int and isinstance(got, float)
            and float(expected) == got):
        return None  # the value is the answer: 14.0 is 14
    if got != expected or type(got) is not type(expected):
        return f"{path}: expected {expected!r}, got {got!r}"
    return None


def relative_error(expected: Any, got: Any) -> float:
    """The relative error of a gradient as CS231n's gradient check reports it: the largest
    |a - b| / max(|a|, |b|) over the entries (0 where both are 0; NaN counts as 1)."""
    a, b = np.asarray(expected, np.float64), np.asarray(got, np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    with np.errstate(invalid="ignore"):
        error = np.divide(np.abs(a - b), scale, out=np.zeros_like(scale), where=scale > 0)
    return float(np.nanmax(np.where(np.isnan(error), 1.0, error))) if error.size else 0.0


def _as_array(got: Any, expected: Any) -> Any:
    """``got`` (nested lists) as an array of numbers when it is one, else unchanged."""
    try:
        array = np.asarray(got, dtype=np.float64 if expected.dtype.kind == "f" else None)
    except (ValueError, TypeError):
        return got
    return got if array.dtype == object else array


def _strings_difference(expected: Any, got: Any, path: str) -> str | None:
    if got == expected:
        return None
    if sorted(map(str, got)) == sorted(expected):
        return f"{path}: the right strings in the wrong order"
    missing = [e for e in expected if e not in got]
    extra = [g for g in got if g not in expected]
    said = []
    if missing:
        said.append(f"{len(missing)} missing (first: {missing[0]!r})")
    if extra:
        said.append(f"{len(extra)} not expected (first: {extra[0]!r})")
    return f"{path}: {len(expected)} strings expected; " + "; ".join(said)


def _matches(model: Callable[..., Any], case: Case, got: Any, ex: Any) -> bool | None:
    """Whether mistake model ``model`` gives ``got`` on ``case`` (None: does not apply). Only
    the values count here, whatever :attr:`Exercise.same_type` says: a mistake is named by
    what the answer holds."""
    try:
        wrong = to_plain(model(case))
    except Exception:  # noqa: BLE001 - a mistake model that does not apply to this case
        return None
    return agrees(wrong, got, ex.rtol, ex.atol)


def agrees(expected: Any, got: Any, rtol: float = RTOL, atol: float = ATOL,
           strict: bool = False) -> bool:
    """``difference(expected, got) is None``, without building the message: recognising a
    mistake compares every model with every answer, and the message costs ten times the test."""
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got) and (
            not expected or not all(isinstance(e, str) for e in expected)):
        return all(agrees(e, g, rtol, atol, strict) for e, g in zip(expected, got, strict=True))
    if (isinstance(expected, np.ndarray) and isinstance(got, np.ndarray)
            and expected.dtype.kind == "f" and got.dtype.kind in "fiu"):
        if got.shape != expected.shape:
            return False
        want = expected.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            gap = np.abs(got.astype(np.float64) - want)
        if (gap <= atol + rtol * np.abs(want)).all():
            return True
        if np.isfinite(gap).all():
            return False
    return difference(expected, got, rtol, atol, strict=strict) is None


def _mistake_matches(mistake: Any, case: Case, got: Any, ex: Any) -> bool | None:
    found = [_matches(model, case, got, ex) for model in mistake.models]
    if any(found):
        return True
    return None if all(f is None for f in found) else False


def recognise(ex: Any, case: Case, got: Any) -> list[str]:
    """The sentences of the known mistakes whose answer ``got`` matches on ``case``."""
    return [m.sentence for m in ex.mistakes if _mistake_matches(m, case, got, ex)]


def diagnose(ex: Any, failing: list[tuple[Case, Any]],
             passing: Sequence[tuple[Case, Any]] = ()) -> tuple[Any, list[int]]:
    """The one mistake that best explains the failing trials, and on which of them it matched.

    ``failing`` and ``passing`` are ``(case, got)`` pairs. A mistake explains the learner's
    answers best when it matches on every failing trial, and is most specific when its answers
    also equal the learner's on the passing ones (a mistake that would have failed a trial the
    learner passed is a worse fit); ties go to the first listed. Returns ``(None, [])`` when no
    mistake matches any failing trial.
    """
    best, best_key, best_hits = None, None, []
    for order, mistake in enumerate(ex.mistakes):
        hits = [k for k, (case, got) in enumerate(failing)
                if _mistake_matches(mistake, case, got, ex)]
        if not hits:
            continue
        fits = sum(_mistake_matches(mistake, case, got, ex) is not False
                   for case, got in passing)
        key = (len(hits), fits, -order)
        if best_key is None or key > best_key:
            best, best_key, best_hits = mistake, key, hits
    return best, best_hits


#: the probes' trials asked only when the diagnosis needs them: ``() -> (cases, expected,
#: answers)`` of :func:`rnnbook.diagnose.probe_cases` (the notebook's check)
Probing = Callable[[], tuple[list[Case], list[Any], list[Any]]]


def evaluate(ex: Any, cases: list[Case], expected: Any, answers: Any,
             seed: int | None = None, probing: Probing | None = None) -> Outcome:
    """Compare the learner's ``answers`` with the oracle's ``expected`` over all ``cases``: the
    verdict, what differs on the first failing trial, and the one known mistake that explains
    the failing trials best. ``seed`` (the trials' seed) lets a failure say how to see it
    again: ``check(fn, seed=N)`` makes the same trials, in the notebook and from the grader's
    seed. The probes' trials (:mod:`rnnbook.diagnose`) are among the ``cases`` (the grader
    asks them with the others), or come from ``probing`` when the diagnosis needs them: a
    passing answer, or one a relation or a listed mistake names, costs no probe."""
    main = [k for k, case in enumerate(cases) if "probe" not in case]
    probed = [(case, want, got) for case, want, got in zip(cases, expected, answers, strict=True)
              if "probe" in case]  # the probes' trials (rnnbook.diagnose): diagnosis only
    cases, expected, answers = ([cases[k] for k in main], [expected[k] for k in main],
                                [answers[k] for k in main])
    failing: list[tuple[Case, Any]] = []
    passing: list[tuple[Case, Any]] = []
    wanted: list[Any] = []  # the expected answers of the failing trials
    first: tuple[str, str | None] | None = None  # where the first failing trial is, and why
    error: tuple[Raised, str, Case] | None = None  # the first error raised, where, on what
    loose = True  # whether every failing answer has the right values in another type
    for trial, (case, want, got) in enumerate(zip(cases, expected, answers, strict=True), 1):
        where = f"trial {trial} of {len(cases)}" + (f", {describe(case)}" if describe(case) else "")
        if isinstance(got, Raised):
            error = error or (got, where, case)
            continue
        want = to_plain(want)
        if agrees(want, got, ex.rtol, ex.atol, ex.same_type) or same_function(ex, case, want,
                                                                                got):
            passing.append((case, got))
            continue
        failing.append((case, got))  # only the first failing trial's difference is shown
        wanted.append(want)
        loose = loose and ex.same_type and agrees(want, got, ex.rtol, ex.atol)
        first = first or (where, difference(want, got, ex.rtol, ex.atol, parts=ex.parts,
                                            strict=ex.same_type, relative=ex.relative_error))
    if error is not None:
        return _again(_raised_outcome(ex, cases, error, failing, passing), seed)
    if not failing:
        trials = "1 random trial" if len(cases) == 1 else f"{len(cases)} random trials"
        message = f"{PASS} {ex.title} matches {ex.source} on {trials}."
        return Outcome(ex, True, message, len(cases), parts_right=tuple(ex.parts))
    assert first is not None  # some trial failed
    where, found = first
    count = (f"{len(failing)} of {len(cases)} trials" if len(failing) > 1
             else f"1 of {len(cases)} trials")
    lines = [f"{FAIL} {ex.title} does not match {ex.source} on {count}.",
             f"  First ({where}):", f"  {found}"]
    right = parts_right(ex, expected, answers, cases)
    if ex.parts:
        wrong = [p for p in ex.parts if p not in right]
        lines.append(f"  Parts right on every trial: {len(right)} of {len(ex.parts)}"
                     + (f"; wrong on some trial: {', '.join(wrong)}." if right else "."))
        lines.append(f"  {points_said(Outcome(ex, False, '', parts_right=right))}")
    if loose:
        sentence = type_sentence(ex)
        lines.append(f"  Likely mistake: {sentence}")
        return _again(Outcome(ex, False, "\n".join(lines), len(cases), sentence, right), seed)
    mistake, hits = diagnose(ex, failing, passing)
    if mistake is None and right:
        part, mistake = diagnose_part(ex, failing, right)
        if mistake is not None:
            lines.append(f"  Likely mistake in {part}: {mistake.sentence}")
            return _again(Outcome(ex, False, "\n".join(lines), len(cases), mistake.sentence,
                                  right), seed)
    if mistake is None:
        sentence = diagnosis.generic(ex, failing, wanted, last=not (ex.probes or ex.pins),
                                     cases=cases)  # the relations
        if not sentence and (ex.probes or ex.pins):
            if ex.probes and not probed and probing is not None:
                probed = list(zip(*probing(), strict=True))
            base = _base(probed, expected, answers)
            changed = cases[probed[0][0]["probed"]] if probed else {}
            steps = changed.get("T")
            sentence = diagnosis.generic(ex, failing, wanted, _probed(ex, probed), base,
                                         relations=False, units=diagnosis.units(changed),
                                         steps=int(steps) if isinstance(steps, (int, np.integer)) else None,
                                         cases=cases,
                                         pinned=_pinned(ex, probed, cases, expected, answers,
                                                        failing, wanted))
        if sentence:
            lines.append(f"  What is wrong: {sentence}")
        else:
            lines.append(f"  It should return {ex.task}.")
        return _again(Outcome(ex, False, "\n".join(lines), len(cases), sentence,
                              parts_right=right), seed)
    hedge = (f"it explains {len(hits)} of the {len(failing)} failing trials"
             if len(hits) < len(failing) else "")
    lines.append(f"  Likely mistake ({hedge}): {mistake.sentence}" if hedge
                 else f"  Likely mistake: {mistake.sentence}")
    return _again(Outcome(ex, False, "\n".join(lines), len(cases), mistake.sentence, right,
                          hedge), seed)


def _probed(ex: Any, probed: Sequence[tuple[Case, Any, Any]]) -> list[tuple[Any, Any, Any]]:
    """``(probe, expected, got)`` of each probe trial, by the probe's name on the case."""
    by_name = {p.name: p for p in ex.probes}
    return [(by_name[case["probe"]], to_plain(want), got) for case, want, got in probed
            if case["probe"] in by_name]


def _pinned(ex: Any, probed: Sequence[tuple[Case, Any, Any]], cases: Sequence[Case],
            expected: Any, answers: Any, failing: Sequence[tuple[Case, Any]],
            wanted: Sequence[Any]) -> list[tuple[Case, Any, Any]]:
    """``(case, expected, got)`` of the trials the pins read
    (:func:`rnnbook.diagnose.pinned_sentence`): the trial the probes changed and the probes'
    trials; without probes, the failing trials; none without pins."""
    if not ex.pins:
        return []
    if not probed:
        return [(case, want, got) for (case, got), want in zip(failing, wanted, strict=True)]
    k = probed[0][0]["probed"]
    return [(cases[k], to_plain(expected[k]), answers[k]),
            *((case, to_plain(want), got) for case, want, got in probed)]


def _base(probed: Sequence[tuple[Case, Any, Any]], expected: Any, answers: Any
          ) -> tuple[Any, Any] | None:
    """``(expected, got)`` on the trial the probes changed, None without probes."""
    if not probed:
        return None
    k = probed[0][0]["probed"]
    return to_plain(expected[k]), answers[k]


def type_sentence(ex: Any) -> str:
    """The mistake of an answer with the right values in another type, where the type is part
    of the answer (:attr:`Exercise.same_type`)."""
    return ("the values are right but not their type: return each part as the exercise asks "
            "(one array where one array is asked for, not a tuple or list of its pieces: "
            "pack them as the exercise says).")


def points_said(outcome: Outcome) -> str:
    """How the parts right on every trial set the points, in one line: equal parts, or the
    exercise's weights (:attr:`Exercise.part_weights`), and the share this answer earns."""
    ex = outcome.exercise
    weights = ex.part_weights
    if len(set(weights)) == 1:
        how = f"each part right on every trial earns 1/{len(weights)}"
    else:
        how = "split by part (" + ", ".join(
            f"{name} {w / sum(weights):.0%}" for name, w in zip(ex.parts, weights, strict=True))
        how += ")"
    capped = f" (a failing answer earns at most {CEILING_SAID})" if outcome.capped else ""
    return f"Points: {how}; this answer earns {outcome.share:.0%}{capped}."


def _again(outcome: Outcome, seed: int | None) -> Outcome:
    """``outcome`` with how to see its failure again: the seed of its trials."""
    if seed is None or outcome.passed or "is not written yet" in outcome.message:
        return outcome
    outcome.message += (f"\n  To see these trials again: check({outcome.exercise.name}, "
                        f"seed={seed}).")
    return outcome


def diagnose_part(ex: Any, failing: list[tuple[Case, Any]],
                  right: Sequence[str]) -> tuple[str | None, Any]:
    """``(part, mistake)``: for an answer of parts that no known mistake explains whole (say,
    two mistakes in two parts), the first wrong part, in order, whose value one known mistake
    gives on every failing trial, and that mistake; ``(None, None)`` when there is none."""
    for k, part in enumerate(ex.parts):
        if part in right:
            continue
        for mistake in ex.mistakes:
            if all(_part_matches(mistake, case, got, k, ex) for case, got in failing):
                return part, mistake
    return None, None


def _part_matches(mistake: Any, case: Case, got: Any, k: int, ex: Any) -> bool:
    for model in mistake.models:
        try:
            wrong = to_plain(model(case))
        except Exception:  # noqa: BLE001 - a mistake model that does not apply to this case
            continue
        if (isinstance(wrong, list) and len(wrong) == len(ex.parts) and isinstance(got, list)
                and len(got) == len(ex.parts) and agrees(wrong[k], got[k], ex.rtol, ex.atol)):
            return True
    return False


def same_function(ex: Any, case: Case, want: Any, got: Any) -> bool:
    """Whether ``got`` computes what ``want`` computes (``ex.computes``, a conversion
    exercise's target equations on the case's inputs): any equivalent weights pass. False for
    an exercise without ``computes`` and for an answer the equations cannot run."""
    if ex.computes is None or isinstance(got, Raised):
        return False
    try:
        mine = to_plain(ex.computes(case, got))
    except Exception:  # noqa: BLE001 - an answer of another shape computes nothing
        return False
    return agrees(to_plain(ex.computes(case, to_plain(want))), mine, ex.rtol, ex.atol)


def parts_right(ex: Any, expected: Any, answers: Any,
                cases: Sequence[Case] = ()) -> tuple[str, ...]:
    """The names of the parts of ``ex``'s answer that match the oracle's on every trial: none
    when an answer is not a sequence of as many parts on some trial (or raised), or when the
    exercise's answer is not made of parts. A trial whose answer computes the expected
    function (:func:`same_function`, given the ``cases``) has every part right."""
    if not ex.parts:
        return ()
    right = list(ex.parts)
    for k, (want, got) in enumerate(zip(expected, answers, strict=True)):
        if cases and same_function(ex, cases[k], want, got):
            continue
        want = to_plain(want)
        if not (isinstance(got, list) and isinstance(want, list)
                and len(got) == len(want) == len(ex.parts)):
            return ()
        right = [name for name, e, g in zip(ex.parts, want, got, strict=True)
                 if name in right and agrees(e, g, ex.rtol, ex.atol, ex.same_type)]
    return tuple(right)


def _raised_outcome(ex: Any, cases: list[Case], error: tuple[Raised, str, Case],
                    failing: list[tuple[Case, Any]], passing: Sequence[tuple[Case, Any]]) -> Outcome:
    """The verdict when the function raised on a trial: the error, and the known mistake that
    explains the trials where it returned a wrong answer, if one does (``np.hstack`` of W and U
    returns an array when D == H and raises when D != H)."""
    got, where, case = error
    message = _raised_message(ex, got, where)
    if got.kind in (BY_HAND, "NotImplementedError"):
        return Outcome(ex, False, message, len(cases))
    if got.kind == CHANGED:
        sentence = changed_sentence(got.message)
        return Outcome(ex, False, f"{message}\n  Mistake: {sentence}", len(cases), sentence)
    for mistake in ex.mistakes:
        if mistake.raises is not None and mistake.raises(case, got):
            message += f"\n  Likely mistake: {mistake.sentence}"
            return Outcome(ex, False, message, len(cases), mistake.sentence)
    if not failing:
        return Outcome(ex, False, message, len(cases))
    mistake, _ = diagnose(ex, failing, passing)
    if mistake is None:
        return Outcome(ex, False, message, len(cases))
    hedge = f"on the {'trial' if len(failing) == 1 else 'trials'} where it returned"
    message += f"\n  {hedge[0].upper()}{hedge[1:]}, likely mistake: {mistake.sentence}"
    return Outcome(ex, False, message, len(cases), mistake.sentence, hedge=hedge)


def _raised_message(ex: Any, got: Any, where: str) -> str:
    if got.kind == "NotImplementedError":
        return (
            f"{FAIL} {ex.title} is not written yet: replace the `raise NotImplementedError` line "
            f"with code that returns {ex.task}."
        )
    if got.kind == BY_HAND:
        return f"{FAIL} {ex.title}: {got.message}."
    if got.kind == CHANGED:
        return f"{FAIL} {ex.title} changed the data it was given ({where})."
    at = f" at {got.where}" if got.where else ""
    return f"{FAIL} {ex.title} raised {got.kind}{at} ({where}): {got.message}"
