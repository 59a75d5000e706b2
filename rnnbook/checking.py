"""The check framework: fresh random trials, TensorFlow as the oracle, feedback a learner can act on.

An :class:`Exercise` says how to make a random case (plain NumPy data), how to call the learner's
function on it, how TensorFlow computes the right answer (the *oracle*), and which known mistakes
to recognise. :func:`evaluate` compares answers with the oracle's and writes the feedback. The same
code serves the in-notebook ``check(fn)`` and the grader; in the grader the learner's answers come
from another process and the oracle runs in the grader's own (see :mod:`rnnbook.grade`).
"""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np

PASS, FAIL = "✓", "✗"
#: float32 tolerance: TensorFlow's and NumPy's matmuls differ in the last bits
RTOL, ATOL = 1e-4, 1e-5


class Raised(NamedTuple):
    """The learner's function raised instead of answering (plain data, so it can cross processes)."""

    kind: str
    message: str
    where: str = ""


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: ``answer(case)`` computes what that mistake returns (with NumPy)."""

    sentence: str  # what went wrong and what to change, one sentence
    answer: Callable[[dict], Any]


@dataclass
class Exercise:
    """One graded exercise: a function the learner writes, checked against TensorFlow."""

    name: str  # the learner's function name, e.g. "one_step"
    task: str  # what it returns, e.g. "the new state h' for one time step"
    make_case: Callable[[np.random.Generator], dict]  # random inputs and weights: plain data
    call: Callable[[Callable, dict], Any]  # runs the learner's function on a case
    oracle: Callable[[dict], Any]  # TensorFlow's answer for a case
    mistakes: tuple = ()  # Mistake, ...
    parts: tuple = ()  # names of the parts of a tuple answer, e.g. ("outputs", "final state")
    trials: int = 5
    rtol: float = RTOL
    atol: float = ATOL
    number: str = ""  # "1.2": set by the Chapter

    @property
    def title(self):
        return f"Exercise {self.number} `{self.name}`"


@dataclass
class Outcome:
    """The verdict on one exercise: ``passed`` and a message for the learner."""

    exercise: Exercise
    passed: bool
    message: str
    trials: int = 0

    def __str__(self):
        return self.message


@dataclass
class Chapter:
    """A chapter's exercises, in book order; numbers them ``<chapter>.<k>``."""

    number: int
    stem: str  # "01-basic-rnn-cell": ties book/, solutions/ and notebooks/ together
    exercises: list = field(default_factory=list)

    def __post_init__(self):
        for k, ex in enumerate(self.exercises, 1):
            ex.number = f"{self.number}.{k}"

    def __getitem__(self, name):
        for ex in self.exercises:
            if ex.name == name:
                return ex
        names = ", ".join(ex.name for ex in self.exercises)
        raise KeyError(f"chapter {self.number} has no exercise called {name!r} (it has {names})")

    def cases(self, name, seed, trials=None):
        """``trials`` cases for exercise ``name``; the same seed always gives the same cases."""
        ex = self[name]
        index = self.exercises.index(ex)
        rng = np.random.default_rng([seed, self.number, index])
        return [ex.make_case(rng) for _ in range(trials or ex.trials)]

    def check(self, fn, name=None, seed=None):
        """Check the learner's function ``fn`` on fresh random trials and print the verdict.

        Returns the :class:`Outcome` only when asked to be quiet by the grader (it prints otherwise,
        so a notebook cell shows one clean message and no ``Outcome(...)`` repr).
        """
        if os.environ.get("RNNBOOK_GRADING") == "1":
            return None  # the grader runs the real checks in its own process
        name = name or getattr(fn, "__name__", "")
        ex = self[name]
        seed = int(np.random.SeedSequence().entropy % 2**32) if seed is None else seed
        cases = self.cases(name, seed)
        expected = [ex.oracle(case) for case in cases]
        answers = [answer(ex, fn, case) for case in cases]
        print(evaluate(ex, cases, expected, answers).message)


# ---------------------------------------------------------------------------------------------
# Making random cases (every chapter's make_case uses these)


def normal(rng, *shape, scale=1.0):
    """A float32 array of ``shape`` drawn from N(0, scale^2): the trials' inputs and weights."""
    return (scale * rng.standard_normal(size=shape)).astype(np.float32)


def sizes(rng, time=False):
    """Random small sizes ``{"B", "D", "H"}`` (and ``"T"``): a trial's batch, depth, units, time."""
    case = {"B": int(rng.integers(1, 5)), "D": int(rng.integers(1, 6)), "H": int(rng.integers(1, 6))}
    if time:
        case["T"] = int(rng.integers(2, 7))
    return case


def sigmoid(z):
    """The logistic function, as TensorFlow's gates apply it (for the NumPy mistake models)."""
    return 1.0 / (1.0 + np.exp(-z))


# ---------------------------------------------------------------------------------------------
# Running the learner's function


def to_plain(value):
    """Answers as plain data: arrays, numbers, strings, lists; anything else is refused."""
    if isinstance(value, Raised):
        return value
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, (tuple, list)):
        return [to_plain(v) for v in value]
    if hasattr(value, "numpy") and callable(value.numpy):  # a TensorFlow eager tensor
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"returned a {type(value).__name__}, which is not an array of numbers")
    return array


def answer(ex, fn, case):
    """Call ``fn`` on ``case`` the way exercise ``ex`` says; exceptions become :class:`Raised`."""
    try:
        return to_plain(ex.call(fn, {k: _copy(v) for k, v in case.items()}))
    except Exception as error:  # noqa: BLE001 - every learner error becomes feedback
        return raised(error)


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def raised(error):
    """A :class:`Raised` for ``error`` that points at the learner's line, not at rnnbook's."""
    where = ""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "rnnbook" not in f.filename]
    if frames:
        frame = frames[-1]
        where = f"line {frame.lineno}: {frame.line}" if frame.line else f"line {frame.lineno}"
    return Raised(type(error).__name__, str(error), where)


# ---------------------------------------------------------------------------------------------
# Comparing and explaining


def describe(case):
    """``B=3, D=4, H=2, cell_clip=0.5``: a case's sizes and options (its scalar entries)."""
    scalars = (bool, int, float, np.integer, np.floating, np.bool_)
    return ", ".join(f"{k}={v:g}" if isinstance(v, (float, np.floating)) else f"{k}={v}"
                     for k, v in case.items() if isinstance(v, scalars))


def kind(value, parts=()):
    """How a value looks, in words: ``array of shape (3, 4), dtype float32``, ``a sequence of 2
    (W, U)``."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, list):
        named = f" ({', '.join(parts)})" if len(parts) == len(value) else ""
        return f"a sequence of {len(value)}{named}"
    return f"{type(value).__name__} {value!r}"


def difference(expected, got, rtol=RTOL, atol=ATOL, path="answer", parts=()):
    """``None`` when ``got`` matches ``expected``; otherwise what differs, in a few lines."""
    if got is None and expected is not None:
        return (f"{path}: expected {kind(expected, parts)}, got None: the function returns "
                "nothing; end it with `return ...`")
    if isinstance(expected, list):
        if not isinstance(got, list):
            return f"{path}: expected {kind(expected, parts)}, got {kind(got)}"
        if len(got) != len(expected):
            return f"{path}: expected {len(expected)} items, got {len(got)}"
        for k, (e, g) in enumerate(zip(expected, got, strict=True)):
            sub = parts[k] if k < len(parts) else f"{path}[{k}]"
            found = difference(e, g, rtol, atol, sub)
            if found:
                return found
        return None
    if isinstance(expected, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"{path}: expected {kind(expected)}, got {kind(got)}"
        if got.shape != expected.shape:
            return f"{path}: expected shape {expected.shape}, got shape {got.shape}"
        if expected.dtype.kind == "f" and got.dtype.kind not in "fiu":
            return f"{path}: expected numbers ({expected.dtype}), got dtype {got.dtype}"
        if expected.dtype.kind != "f":
            if np.array_equal(expected, got):
                return None
            index = tuple(int(i) for i in np.argwhere(expected != got)[0])
            return f"{path}: differs at {list(index)}: expected {expected[index]!r}, got {got[index]!r}"
        got = got.astype(np.float64)
        close = np.isclose(got, expected, rtol=rtol, atol=atol)
        if close.all():
            return None
        error = np.where(np.isnan(got), np.inf, np.abs(got - expected))
        index = np.unravel_index(int(np.argmax(error)), error.shape)
        largest = "nan" if np.isinf(error[index]) else f"{error[index]:.4g}"
        at = list(int(i) for i in index)
        return (
            f"{path} ({expected.shape}): {int((~close).sum())} of {close.size} values differ; "
            f"largest error {largest} at {at}: expected {expected[index]:.6g}, got {got[index]:.6g}"
        )
    if isinstance(expected, float) and isinstance(got, (int, float)):
        return None if np.isclose(got, expected, rtol=rtol, atol=atol) else (
            f"{path}: expected {expected:.6g}, got {got:.6g}"
        )
    if got != expected or type(got) is not type(expected):
        return f"{path}: expected {expected!r}, got {got!r}"
    return None


def recognise(ex, case, got):
    """The sentences of the known mistakes whose answer ``got`` matches."""
    found = []
    for mistake in ex.mistakes:
        try:
            wrong = to_plain(mistake.answer(case))
        except Exception:  # noqa: BLE001 - a mistake model that does not apply to this case
            continue
        if difference(wrong, got, ex.rtol, ex.atol) is None:
            found.append(mistake.sentence)
    return found


def evaluate(ex, cases, expected, answers):
    """Compare the learner's ``answers`` with the oracle's ``expected`` over all ``cases``."""
    for trial, (case, want, got) in enumerate(zip(cases, expected, answers, strict=True), 1):
        where = f"trial {trial} of {len(cases)}" + (f", {describe(case)}" if describe(case) else "")
        if isinstance(got, Raised):
            return Outcome(ex, False, _raised_message(ex, got, where), len(cases))
        found = difference(to_plain(want), got, ex.rtol, ex.atol, parts=ex.parts)
        if found:
            lines = [f"{FAIL} {ex.title} does not match TensorFlow ({where}).", f"  {found}"]
            mistakes = recognise(ex, case, got)
            if mistakes:
                lines += [f"  Likely mistake: {m}" for m in mistakes]
            else:
                lines.append(f"  It should return {ex.task}.")
            return Outcome(ex, False, "\n".join(lines), len(cases))
    message = f"{PASS} {ex.title} matches TensorFlow on {len(cases)} random trials."
    return Outcome(ex, True, message, len(cases))


def _raised_message(ex, got, where):
    if got.kind == "NotImplementedError":
        return (
            f"{FAIL} {ex.title} is not written yet: replace the `raise NotImplementedError` line "
            f"with code that returns {ex.task}."
        )
    at = f" at {got.where}" if got.where else ""
    return f"{FAIL} {ex.title} raised {got.kind}{at} ({where}): {got.message}"
