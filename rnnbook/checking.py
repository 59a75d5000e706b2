"""The check framework: fresh random trials, TensorFlow as the oracle, feedback a learner can act on.

An :class:`Exercise` says how to make a random case (plain NumPy data), how to call the learner's
function on it, how TensorFlow computes the right answer (the *oracle*), and which known mistakes
to recognise. :func:`evaluate` compares answers with the oracle's and writes the feedback. The same
code serves the in-notebook ``check(fn)`` and the grader; in the grader the learner's answers come
from another process and the oracle runs in the grader's own (see :mod:`rnnbook.grading`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import linecache
import os
import sys
import sysconfig
import traceback
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np

from rnnbook import plain, record

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
    """A known wrong answer: ``answer(case)`` computes what that mistake returns (with NumPy).

    ``variants`` are other ways to write the same mistake (each a function of the case, like
    ``answer``); the mistake is recognised when any of them matches. A model that raises does
    not apply to that case (for example a peephole mistake on a cell without peepholes).
    ``raises(case, got)`` says whether the :class:`Raised` ``got`` on ``case`` is this mistake's
    error (the mistake raises where its answer cannot be computed: a (B,) mask that broadcasts
    over the units when B = H raises when B != H; a name with no such tensor in the graph).
    """

    sentence: str  # what went wrong and what to change, one sentence
    answer: Callable[[dict], Any]
    variants: tuple = ()
    raises: Callable[[dict, Raised], bool] | None = None

    @property
    def models(self):
        return (self.answer, *self.variants)


@dataclass
class Exercise:
    """One graded exercise: a function the learner writes, checked against TensorFlow."""

    name: str  # the learner's function name, e.g. "one_step"
    task: str  # what it returns, e.g. "the new state h' for one time step"
    make_case: Callable[[np.random.Generator], dict]  # random inputs and weights: plain data
    call: Callable[[Callable, dict], Any]  # runs the learner's function on a case
    oracle: Callable[[dict], Any]  # TensorFlow's answer for a case
    #: the same answer from the NumPy reference (rnnbook/reference.py), for the tests' 200-seed
    #: sweeps; tests/test_sweep.py holds it to the oracle
    reference: Callable[[dict], Any] | None = None
    mistakes: tuple = ()  # Mistake, ...
    parts: tuple = ()  # names of the parts of a tuple answer, e.g. ("outputs", "final state")
    trials: int = 5
    rtol: float = RTOL
    atol: float = ATOL
    number: str = ""  # "1.2": set by the Chapter
    by_hand: bool = True  # NumPy only: calling TensorFlow, Keras or rnnbook earns nothing
    #: designed trials: trial k is ``make_case(rng, **designs[k])``, so that every seed's trial
    #: set holds the cases that tell each known mistake apart (then ``trials`` is their number)
    designs: tuple = ()

    def __post_init__(self):
        if self.designs:
            self.trials = len(self.designs)

    @property
    def title(self):
        return f"Exercise {self.number} `{self.name}`"

    @property
    def kind(self):
        return "by hand" if self.by_hand else "API"


@dataclass
class Outcome:
    """The verdict on one exercise: ``passed`` and a message for the learner; for an answer of
    several parts, which parts matched TensorFlow on every trial (the grader's partial credit).
    """

    exercise: Exercise
    passed: bool
    message: str
    trials: int = 0
    mistake: str = ""  # the sentence of the mistake it recognised, if any
    parts_right: tuple = ()  # the names of the parts right on every trial (all when passed)

    @property
    def parts(self):
        """How many parts the answer has (1 for an answer that is not made of parts)."""
        return max(len(self.exercise.parts), 1)

    @property
    def share(self):
        """The share of the points it earns: 1 when it passed; else the parts right on every
        trial over all parts, never all of them (no wrong answer gets full marks)."""
        if self.passed:
            return 1.0
        return min(len(self.parts_right), self.parts - 1) / self.parts

    def __str__(self):
        return self.message

    def __bool__(self):
        return self.passed

    def _ipython_display_(self):
        """Nothing: ``check(...)`` has printed the message already, and a notebook cell that
        ends in ``check(fn)`` should not show it twice."""


@dataclass
class Chapter:
    """A chapter's exercises, in book order; numbers them ``<chapter>.<k>``."""

    number: int
    stem: str  # "01-basic-rnn-cell": ties book/, solutions/ and notebooks/ together
    exercises: list = field(default_factory=list)

    def __post_init__(self):
        for k, ex in enumerate(self.exercises, 1):
            ex.number = f"{self.number}.{k}"
            if ex.reference is not None:
                ex.reference = remembered(ex.reference)
            ex.mistakes = tuple(dataclasses.replace(m, answer=remembered(m.answer),
                                                    variants=tuple(map(remembered, m.variants)))
                                for m in ex.mistakes)

    def __getitem__(self, name):
        for ex in self.exercises:
            if ex.name == name:
                return ex
        names = ", ".join(ex.name for ex in self.exercises)
        raise KeyError(f"chapter {self.number} has no exercise called {name!r} (it has {names})")

    def cases(self, name, seed, trials=None):
        """The trial cases of exercise ``name``; the same seed always gives the same cases.

        The random stream is keyed by the exercise's NAME, not its position, so reordering or
        inserting exercises changes no other exercise's trials.
        """
        ex = self[name]
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        if ex.designs and trials is None:
            return [ex.make_case(rng, **design) for design in ex.designs]
        return [ex.make_case(rng) for _ in range(trials or ex.trials)]

    def check(self, fn, name=None, seed=None):
        """Check the learner's function ``fn`` on fresh random trials, print the verdict and
        return it (an :class:`Outcome`, true when it passed; a notebook shows the message once).

        Under the grader (``RNNBOOK_GRADING=1``) it does nothing and returns None: the grader
        runs the real checks in its own process.
        """
        if os.environ.get("RNNBOOK_GRADING") == "1":
            return None
        name = name or getattr(fn, "__name__", "")
        ex = self[name]
        seed = int(np.random.SeedSequence().entropy % 2**32) if seed is None else seed
        cases = self.cases(name, seed)
        expected = [ex.oracle(case) for case in cases]
        answers = [answer(ex, fn, case) for case in cases]
        outcome = evaluate(ex, cases, expected, answers)
        print(outcome.message)
        if outcome.passed:
            record.record(self.stem, ex.number, ex.name)
        return outcome


# ---------------------------------------------------------------------------------------------
# Remembering the NumPy models' answers


_REMEMBERED = {}  # (model, case fingerprint) -> (applies, answer or error); bounded
REMEMBER_AT_MOST = 50_000


def fingerprint(case):
    """A digest of a case's content (keys, arrays' dtypes, shapes and bytes, other values)."""
    digest = hashlib.blake2b(digest_size=16)

    def feed(value):
        if isinstance(value, np.ndarray):
            digest.update(f"a{value.dtype}{value.shape}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, dict):
            digest.update(b"{")
            for key in sorted(value):
                digest.update(repr(key).encode())
                feed(value[key])
            digest.update(b"}")
        elif isinstance(value, (list, tuple)):
            digest.update(b"[")
            for item in value:
                feed(item)
            digest.update(b"]")
        else:
            digest.update(repr(value).encode())

    feed(case)
    return digest.digest()


def remembered(model):
    """``model`` (a function of a case) answering each distinct case once: the checks' reference
    and mistake models are NumPy and deterministic, and recognising a mistake asks every model
    about every failing trial (the 200-seed sweeps show each trial to every learner function).
    A model that does not apply to a case raises the same error each time."""
    if getattr(model, "__wrapped__", None) is not None:
        return model

    def answer_once(case):
        key = (model, fingerprint(case))
        if key not in _REMEMBERED:
            if len(_REMEMBERED) >= REMEMBER_AT_MOST:
                _REMEMBERED.clear()
            try:
                _REMEMBERED[key] = (True, to_plain(model(case)))
            except Exception as error:  # noqa: BLE001 - the model does not apply to this case
                _REMEMBERED[key] = (False, error)
        applies, value = _REMEMBERED[key]
        if not applies:
            raise value
        return value

    answer_once.__wrapped__ = model
    return answer_once


# ---------------------------------------------------------------------------------------------
# Making random cases (every chapter's make_case uses these)


def normal(rng, *shape, scale=1.0):
    """A float32 array of ``shape`` drawn from N(0, scale^2): the trials' inputs and weights."""
    return (scale * rng.standard_normal(size=shape)).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Running the learner's function


def to_plain(value):
    """Answers as plain data (:func:`rnnbook.plain.to_plain`); a :class:`Raised` stays as it is."""
    return value if isinstance(value, Raised) else plain.to_plain(value)


BY_HAND = "ByHand"  # the kind of Raised for a by-hand exercise answered with a library
#: what a by-hand answer may not call: TensorFlow, Keras and this package (its checks, oracles
#: and reference would answer the exercise)
FORBIDDEN = ("tensorflow", "keras", "tf_keras", "rnnbook")


def answer(ex, fn, case):
    """Call ``fn`` on ``case`` the way exercise ``ex`` says; exceptions become :class:`Raised`.

    A by-hand exercise's function is watched while it runs: a call into TensorFlow, Keras or
    rnnbook makes the answer a :class:`Raised` of kind ``ByHand`` (no credit, and says why).
    """
    case = {k: _copy(v) for k, v in case.items()}
    try:
        if not ex.by_hand:
            return to_plain(ex.call(fn, case))
        guard = ByHandGuard(fn)
        result = to_plain(ex.call(guard, case))
        if guard.offence:
            return Raised(BY_HAND, guard.offence)
        return result
    except Exception as error:  # noqa: BLE001 - every learner error becomes feedback
        return raised(error)


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _forbidden_dirs():
    """Folders of the forbidden packages' Python code (found without importing them)."""
    dirs = []
    for name in FORBIDDEN:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None:
            dirs += [os.path.realpath(d) for d in spec.submodule_search_locations or ()]
    return tuple(d + os.sep for d in dirs)


class ByHandGuard:
    """Calls the learner's function with a profiler that notes the first call into a forbidden
    package (a Python frame in its folder, or a C function it defines). The notebook side of
    "by hand is by hand"; the grader also calls by-hand functions where those packages cannot
    even be imported."""

    _dirs = None

    def __init__(self, fn):
        self.fn = fn
        self.offence = ""
        if ByHandGuard._dirs is None:
            ByHandGuard._dirs = _forbidden_dirs()
        self.__name__ = getattr(fn, "__name__", "function")

    def _note(self, package, caller):
        """Remember the first offence: which package, and the learner's line that called it."""
        label = {"tensorflow": "TensorFlow", "keras": "Keras", "tf_keras": "Keras (tf-keras)",
                 "_pywrap_tf": "TensorFlow"}.get(package, package)
        where = ""
        path = caller.f_code.co_filename if caller is not None else "<none>"
        if not (path.startswith("<frozen") or os.path.realpath(path).startswith(_library_dirs())):
            line = linecache.getline(path, caller.f_lineno).strip()
            where = f" at line {caller.f_lineno}" + (f" (`{line}`)" if line else "")
        self.offence = (f"this exercise is by hand, but your function called {label}{where}. "
                        "TensorFlow, Keras and rnnbook's own code earn no credit here: compute "
                        "it with NumPy")

    def _watch(self, frame, event, arg):
        if self.offence:
            return
        if event == "call":
            if frame.f_code.co_filename.startswith(self._dirs):
                module = frame.f_globals.get("__name__") or "rnnbook"
                self._note(module.split(".")[0], frame.f_back)
        elif event == "c_call":
            module = getattr(arg, "__module__", None) or ""
            top = module.split(".")[0]
            if top in FORBIDDEN or top.startswith("_pywrap_tf"):
                self._note("_pywrap_tf" if top.startswith("_pywrap_tf") else top, frame)

    def __call__(self, *args, **kwargs):
        previous = sys.getprofile()
        sys.setprofile(self._watch)
        try:
            result = self.fn(*args, **kwargs)
        finally:
            still_ours = sys.getprofile() == self._watch
            sys.setprofile(previous)
        if not still_ours and not self.offence:
            self.offence = ("this exercise is by hand, and your function switched off the "
                            "check's watch (sys.setprofile), so it earns no credit")
        return result


def _library_dirs():
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    here = os.path.dirname(os.path.abspath(__file__))
    return tuple(os.path.realpath(p) + os.sep for p in paths | {here})


def raised(error):
    """A :class:`Raised` for ``error`` that points at the learner's own line: the last frame of
    the traceback that is not in rnnbook, the standard library or an installed package."""
    where = ""
    skip = _library_dirs()
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not os.path.realpath(f.filename).startswith(skip) and "rnnbook" not in f.filename]
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


def difference(expected, got, rtol=RTOL, atol=ATOL, path="answer", parts=()):
    """``None`` when ``got`` matches ``expected``; otherwise what differs, in a few lines (one
    line per part that differs, for an answer made of named parts)."""
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
        found, right = [], []
        for k, (e, g) in enumerate(zip(expected, got, strict=True)):
            sub = parts[k] if k < len(parts) else f"{path}[{k}]"
            one = difference(e, g, rtol, atol, sub)
            (found if one else right).append(one or sub)
        if not found:
            return None
        if right and len(expected) > 1:
            found.append(f"right: {', '.join(right)}")
        return "\n  ".join(found)
    if isinstance(expected, np.ndarray):
        if isinstance(got, list):  # numbers as nested lists (``.tolist()``) are an array too
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
            index = tuple(int(i) for i in np.argwhere(expected != got)[0])
            return (f"{path}: differs at {list(index)}: expected {expected[index]!r}, "
                    f"got {got[index]!r}")
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
            f"largest error {largest} at {at}: expected {expected[index]:.6g}, "
            f"got {got[index]:.6g}"
        )
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
    if got != expected or type(got) is not type(expected):
        return f"{path}: expected {expected!r}, got {got!r}"
    return None


def _as_array(got, expected):
    """``got`` (nested lists) as an array of numbers when it is one, else unchanged."""
    try:
        array = np.asarray(got, dtype=np.float64 if expected.dtype.kind == "f" else None)
    except (ValueError, TypeError):
        return got
    return got if array.dtype == object else array


def _strings_difference(expected, got, path):
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


def _matches(model, case, got, ex):
    """Whether mistake model ``model`` gives ``got`` on ``case`` (None: does not apply)."""
    try:
        wrong = to_plain(model(case))
    except Exception:  # noqa: BLE001 - a mistake model that does not apply to this case
        return None
    return agrees(wrong, got, ex.rtol, ex.atol)


def agrees(expected, got, rtol=RTOL, atol=ATOL):
    """``difference(expected, got) is None``, without building the message: recognising a
    mistake compares every model with every answer, and the message costs ten times the test."""
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got) and (
            not expected or not all(isinstance(e, str) for e in expected)):
        return all(agrees(e, g, rtol, atol) for e, g in zip(expected, got, strict=True))
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
    return difference(expected, got, rtol, atol) is None


def _mistake_matches(mistake, case, got, ex):
    found = [_matches(model, case, got, ex) for model in mistake.models]
    if any(found):
        return True
    return None if all(f is None for f in found) else False


def recognise(ex, case, got):
    """The sentences of the known mistakes whose answer ``got`` matches on ``case``."""
    return [m.sentence for m in ex.mistakes if _mistake_matches(m, case, got, ex)]


def diagnose(ex, failing, passing=()):
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


def evaluate(ex, cases, expected, answers):
    """Compare the learner's ``answers`` with the oracle's ``expected`` over all ``cases``: the
    verdict, what differs on the first failing trial, and the one known mistake that explains
    the failing trials best."""
    failing, passing, first, error = [], [], None, None
    for trial, (case, want, got) in enumerate(zip(cases, expected, answers, strict=True), 1):
        where = f"trial {trial} of {len(cases)}" + (f", {describe(case)}" if describe(case) else "")
        if isinstance(got, Raised):
            error = error or (got, where, case)
            continue
        want = to_plain(want)
        if agrees(want, got, ex.rtol, ex.atol):
            passing.append((case, got))
            continue
        failing.append((case, got))  # only the first failing trial's difference is shown
        first = first or (where, difference(want, got, ex.rtol, ex.atol, parts=ex.parts))
    if error is not None:
        return _raised_outcome(ex, cases, error, failing, passing)
    if not failing:
        trials = "1 random trial" if len(cases) == 1 else f"{len(cases)} random trials"
        message = f"{PASS} {ex.title} matches TensorFlow on {trials}."
        return Outcome(ex, True, message, len(cases), parts_right=tuple(ex.parts))
    where, found = first
    count = (f"{len(failing)} of {len(cases)} trials" if len(failing) > 1
             else f"1 of {len(cases)} trials")
    lines = [f"{FAIL} {ex.title} does not match TensorFlow on {count}.",
             f"  First ({where}):", f"  {found}"]
    right = parts_right(ex, expected, answers)
    if ex.parts:
        wrong = [p for p in ex.parts if p not in right]
        lines.append(f"  Parts right on every trial: {len(right)} of {len(ex.parts)}"
                     + (f"; wrong on some trial: {', '.join(wrong)}." if right else "."))
    mistake, hits = diagnose(ex, failing, passing)
    if mistake is None and right:
        part, mistake = diagnose_part(ex, failing, right)
        if mistake is not None:
            lines.append(f"  Likely mistake in {part}: {mistake.sentence}")
            return Outcome(ex, False, "\n".join(lines), len(cases), mistake.sentence, right)
    if mistake is None:
        lines.append(f"  It should return {ex.task}.")
        return Outcome(ex, False, "\n".join(lines), len(cases), parts_right=right)
    if len(hits) < len(failing):
        lines.append(f"  Likely mistake (it explains {len(hits)} of the {len(failing)} failing "
                     f"trials): {mistake.sentence}")
    else:
        lines.append(f"  Likely mistake: {mistake.sentence}")
    return Outcome(ex, False, "\n".join(lines), len(cases), mistake.sentence, right)


def diagnose_part(ex, failing, right):
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


def _part_matches(mistake, case, got, k, ex):
    for model in mistake.models:
        try:
            wrong = to_plain(model(case))
        except Exception:  # noqa: BLE001 - a mistake model that does not apply to this case
            continue
        if (isinstance(wrong, list) and len(wrong) == len(ex.parts)
                and agrees(wrong[k], got[k], ex.rtol, ex.atol)):
            return True
    return False


def parts_right(ex, expected, answers):
    """The names of the parts of ``ex``'s answer that match the oracle's on every trial: none
    when an answer is not a sequence of as many parts on some trial (or raised), or when the
    exercise's answer is not made of parts."""
    if not ex.parts:
        return ()
    right = list(ex.parts)
    for want, got in zip(expected, answers, strict=True):
        want = to_plain(want)
        if not (isinstance(got, list) and isinstance(want, list)
                and len(got) == len(want) == len(ex.parts)):
            return ()
        right = [name for name, e, g in zip(ex.parts, want, got, strict=True)
                 if name in right and agrees(e, g, ex.rtol, ex.atol)]
    return tuple(right)


def _raised_outcome(ex, cases, error, failing, passing):
    """The verdict when the function raised on a trial: the error, and the known mistake that
    explains the trials where it returned a wrong answer, if one does (``np.hstack`` of W and U
    returns an array when D == H and raises when D != H)."""
    got, where, case = error
    message = _raised_message(ex, got, where)
    if got.kind in (BY_HAND, "NotImplementedError"):
        return Outcome(ex, False, message, len(cases))
    for mistake in ex.mistakes:
        if mistake.raises is not None and mistake.raises(case, got):
            message += f"\n  Likely mistake: {mistake.sentence}"
            return Outcome(ex, False, message, len(cases), mistake.sentence)
    if not failing:
        return Outcome(ex, False, message, len(cases))
    mistake, _ = diagnose(ex, failing, passing)
    if mistake is None:
        return Outcome(ex, False, message, len(cases))
    message += (f"\n  On the {'trial' if len(failing) == 1 else 'trials'} where it returned, "
                f"likely mistake: {mistake.sentence}")
    return Outcome(ex, False, message, len(cases), mistake.sentence)


def _raised_message(ex, got, where):
    if got.kind == "NotImplementedError":
        return (
            f"{FAIL} {ex.title} is not written yet: replace the `raise NotImplementedError` line "
            f"with code that returns {ex.task}."
        )
    if got.kind == BY_HAND:
        return f"{FAIL} {ex.title}: {got.message}."
    at = f" at {got.where}" if got.where else ""
    return f"{FAIL} {ex.title} raised {got.kind}{at} ({where}): {got.message}"
