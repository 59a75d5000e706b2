"""The exercise model: what an exercise is, and a chapter of them.

An :class:`Exercise` says how to make a random case (plain NumPy data, drawn with
:func:`normal`), how to call the learner's function on it, how TensorFlow computes the right
answer (the *oracle*), and which known mistakes (:class:`Mistake`) to recognise. A
:class:`Chapter` numbers its exercises, makes their trial cases from a seed, and is the
notebook's ``check(fn)``: it calls the function (:func:`rnnbook.byhand.answer`), compares its
answers with the oracle's (:func:`rnnbook.compare.evaluate`) and records a pass. In the grader
the learner's answers come from another process and the oracle runs in the grader's own (see
:mod:`rnnbook.grading`).
"""
from __future__ import annotations

import dataclasses
import os
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Mapping, TypeVar

import numpy as np

from rnnbook import record
from rnnbook.byhand import answer
from rnnbook.compare import ATOL, RTOL, Outcome, evaluate
from rnnbook.diagnose import Pin, Probe, Without, probe_cases, unique_names
from rnnbook.memo import remembered
from rnnbook.plaindata import Case, Raised, to_plain

#: an exercise's trial type: its own TypedDict (each chapter module declares one per exercise,
#: with the shapes), a plain dict at run time; ``Case`` where any exercise's is meant
C = TypeVar("C", bound=Mapping[str, Any])
#: the same for a mistake, which only reads a case: a mistake of any case (a helper's, typed
#: with a Mapping) is one of each exercise's
C_in = TypeVar("C_in", bound=Mapping[str, Any], contravariant=True)


@dataclass(frozen=True)
class Mistake(Generic[C_in]):
    """A known wrong answer, and the sentence that names it.

    What the mistake returns on a case is said in one of two ways:

    - ``answer(case)`` computes it with NumPy from the case alone (a transposed block, the
      columns split instead of the rows), needing no model of the cell; or
    - ``perturb`` and ``after``: the mistake is the RIGHT answer with the case changed first
      (``perturb(case)``, a new case: the gate blocks reordered, ``forget_bias`` set to 0) and/or
      the right answer changed after (``after(case, right)``, ``right`` as plain data: the two
      parts swapped, one step dropped). The right answer comes from the exercise's NumPy
      reference where it is installed and from TensorFlow's oracle where it is not (the learner
      release ships no reference), so the repository, the release and the grader name the same
      mistakes; each chapter's tests (``tests/test_ch0N*.py``, "the same with the oracle as
      with the reference") hold the two to each other on every mistake.

    ``variants`` are other ways to write the same mistake (each a function of the case, like
    ``answer``); the mistake is recognised when any of them matches. A model that raises does
    not apply to that case (for example a peephole mistake on a cell without peepholes).
    ``raises(case, got)`` says whether the :class:`~rnnbook.plaindata.Raised` ``got`` on
    ``case`` is this mistake's error (the mistake raises where its answer cannot be computed: a
    (B,) mask that broadcasts over the units when B = H raises when B != H; a name with no such
    tensor in the graph).
    """

    sentence: str  # what went wrong and what to change, one sentence
    answer: Callable[[C_in], Any] | None = None
    variants: tuple = ()
    raises: Callable[[C_in, Raised], bool] | None = None
    #: the case changed before the right answer (a case of the same exercise)
    perturb: Callable[[C_in], Mapping[str, Any]] | None = None
    after: Callable[[C_in, Any], Any] | None = None  # the right answer changed after

    def __post_init__(self):
        if self.answer is None and self.perturb is None and self.after is None:
            raise ValueError(f"mistake {self.sentence[:40]!r}...: give answer= or "
                             "perturb=/after=")
        if self.answer is not None and (self.perturb or self.after):
            raise ValueError(f"mistake {self.sentence[:40]!r}...: answer= OR perturb=/after=")

    @property
    def models(self) -> tuple[Any, ...]:
        return (self.answer, *self.variants)

    def bound(self, right: Callable[[Any], Any]) -> Mistake[C_in]:
        """This mistake with its ``answer`` made from ``right`` (the exercise's right answer on
        a case) when it is given by ``perturb``/``after``."""
        if self.answer is not None:
            return self
        perturb = self.perturb or (lambda case: case)
        after = self.after or (lambda case, value: value)

        def answer(case):
            return after(case, to_plain(right(perturb(case))))

        return dataclasses.replace(self, answer=answer, perturb=None, after=None)


def right_answer(ex: Exercise[Any]) -> Callable[[Mapping[str, Any]], Any]:
    """``ex``'s right answer on a case: the NumPy reference where it is installed (fast: the
    sweeps ask it thousands of times), TensorFlow's oracle where it is not (the learner
    release's ``rnnbook.reference`` is a stub that raises ImportError)."""
    def right(case):
        if ex.reference is not None:
            try:
                return ex.reference(case)
            except ImportError:
                pass
        return ex.oracle(case)

    return right


@dataclass
class Exercise(Generic[C]):
    """One graded exercise: a function the learner writes, checked against TensorFlow."""

    name: str  # the learner's function name, e.g. "one_step"
    task: str  # what it returns, e.g. "the new state h' for one time step"
    make_case: Callable[..., C]  # (rng, **design): random inputs and weights: plain data
    call: Callable[[Callable[..., Any], C], Any]  # runs the learner's function on a case
    oracle: Callable[[C], Any]  # TensorFlow's answer for a case
    #: the same answer from the NumPy reference (rnnbook/reference.py), for the tests' 200-seed
    #: sweeps; tests/test_sweep.py holds it to the oracle
    reference: Callable[[C], Any] | None = None
    mistakes: tuple[Mistake[C], ...] = ()
    parts: tuple = ()  # names of the parts of a tuple answer, e.g. ("outputs", "final state")
    #: how the points are split between the parts (one number a part; equal when empty):
    #: weigh the quantity the exercise is about so that a wrong one earns at most half
    weights: tuple = ()
    trials: int = 5
    rtol: float = RTOL
    atol: float = ATOL
    number: str = ""  # "1.2": set by the Chapter
    by_hand: bool = True  # NumPy only: calling TensorFlow, Keras or rnnbook earns nothing
    #: a failure also says each wrong array's relative error (compare.relative_error)
    relative_error: bool = False
    #: designed trials: trial k is ``make_case(rng, **designs[k])``, so that every seed's trial
    #: set holds the cases that tell each known mistake apart (then ``trials`` is their number)
    designs: tuple = ()
    #: whether the type is part of the answer: True where the statement asks for one array
    #: (or an int) and another form is a different answer (stream_in_chunks' packed final state, not the
    #: session's tuple of LSTMStateTuples); False (the default): only the values count, so
    #: nested lists of numbers are an array and 14.0 is 14. A sequence of parts is a sequence
    #: either way; any dtype of numbers stands for a float array (float64 is not a mistake).
    same_type: bool = False
    #: where the expected answer comes from, as the verdict names it ("matches TensorFlow"):
    #: an oracle that ports another framework's documented equations to NumPy says so
    source: str = "TensorFlow"
    #: a conversion exercise's test of FUNCTION, not layout: ``computes(case, answer)`` runs
    #: the answer's weights through the target framework's equations on the case's inputs;
    #: an answer that computes what the expected weights compute passes, whatever its
    #: layout (two biases split another way). None: the answer is compared as it stands
    computes: Callable[[C, Any], Any] | None = None
    #: the names of the equal blocks the last axis of the answer's arrays is cut into, in
    #: order (("i", "j", "f", "o"), ("r", "z", "h~")): the generic diagnosis
    #: (rnnbook.diagnose) names a block wrong or blocks in another order by these
    blocks: tuple[str, ...] = ()
    #: the inputs the generic diagnosis changes, one extra trial each
    #: (rnnbook.diagnose.Probe): how the learner's answer responds against the oracle's
    probes: tuple[Probe, ...] = ()
    #: the quantities inside the answer a case can hold at either end of their range
    #: (rnnbook.diagnose.Pin: a gate held shut or open), for a formula wrong everywhere
    pins: tuple[Pin, ...] = ()
    #: inputs (or blocks) an answer may leave out (rnnbook.diagnose.Without): the right answer
    #: with each at zero, compared with the learner's (no extra call of the function)
    without: tuple[Without, ...] = ()
    #: the right answer on a case (the reference, else the oracle), memoised: set by the
    #: Chapter, for the diagnoses that ask it on a changed case (rnnbook.diagnose)
    right: Callable[[C], Any] | None = field(default=None, repr=False)

    def __post_init__(self):
        unique_names(self.probes)
        if self.designs:
            self.trials = len(self.designs)
        if self.weights and len(self.weights) != len(self.parts):
            raise ValueError(f"exercise {self.name}: {len(self.weights)} weights for "
                             f"{len(self.parts)} parts")

    @property
    def part_weights(self) -> tuple[float, ...]:
        """One weight a part (all 1 when the exercise sets none); () for a single answer."""
        return tuple(self.weights) or (1,) * len(self.parts)

    @property
    def title(self) -> str:
        return f"Exercise {self.number} `{self.name}`"

    @property
    def kind(self) -> str:
        return "by hand" if self.by_hand else "API"


@dataclass
class Chapter:
    """A chapter's exercises, in book order; numbers them ``<chapter>.<k>``."""

    number: int
    stem: str  # "01-basic-rnn-cell": ties book/, solutions/ and notebooks/ together
    exercises: list = field(default_factory=list)
    #: a grading child uses Keras 3 (an exercise builds a Keras 3 layer, or the notebook
    #: imports it): the TensorFlow zygote imports it once before it forks. False: the child's
    #: ``rnnbook.setup()`` leaves it out too (a second or more of a cold start)
    keras3: bool = True
    #: what its learners' code loads lazily beyond TF1's cells (of
    #: :data:`rnnbook.oracles.LAZY`: ``"tf.keras"``, ``"tensorboard"``): the TensorFlow zygote
    #: imports it before it forks (:func:`rnnbook.oracles.warm_imports`), and only for the
    #: chapters being graded; a child that needs more imports it itself, a little slower
    warm: tuple[str, ...] = ()

    def __post_init__(self):
        for k, ex in enumerate(self.exercises, 1):
            ex.number = f"{self.number}.{k}"
            if ex.reference is not None:
                ex.reference = remembered(ex.reference)
            right = remembered(right_answer(ex))  # each changed case asked once
            ex.right = right
            ex.mistakes = tuple(_remembered(m.bound(right)) for m in ex.mistakes)
            ex.pins = tuple(p.bound(right) for p in ex.pins)
            ex.without = tuple(w.bound(right) for w in ex.without)

    def __getitem__(self, name):
        for ex in self.exercises:
            if ex.name == name:
                return ex
        names = ", ".join(ex.name for ex in self.exercises)
        raise KeyError(f"chapter {self.number} has no exercise called {name!r} (it has {names})")

    def cases(self, name: str, seed: int,
              trials: int | None = None) -> list[Case]:
        """The trial cases of exercise ``name``; the same seed always gives the same cases.

        The random stream is keyed by the exercise's NAME, not its position, so reordering or
        inserting exercises changes no other exercise's trials.
        """
        ex = self[name]
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        if ex.designs and trials is None:
            return [ex.make_case(rng, **design) for design in ex.designs]
        return [ex.make_case(rng) for _ in range(trials or ex.trials)]

    def trial_cases(self, name: str, seed: int) -> list[Case]:
        """What the learner's function answers: the trials (:meth:`cases`), then the probes'
        trials made from the first (:func:`rnnbook.diagnose.probe_cases`), which the verdict
        leaves out and the diagnosis reads. The notebook's check and the grader ask these."""
        cases = self.cases(name, seed)
        return cases + probe_cases(self[name], cases)

    def check(self, fn: Callable[..., Any], name: str | None = None,
              seed: int | None = None) -> Outcome | None:
        """Check the learner's function ``fn`` on fresh random trials, print the verdict and
        return it (an :class:`~rnnbook.compare.Outcome`, true when it passed; a notebook shows
        the message once).

        Under the grader (``RNNBOOK_GRADING=1``) it does nothing and returns None: the grader
        runs the real checks in its own process.
        """
        if os.environ.get("RNNBOOK_GRADING") == "1":
            return None
        name = name or getattr(fn, "__name__", "")
        assert name is not None  # for the checker: "" at worst
        ex = self[name]
        if seed is None:  # a fresh SeedSequence's entropy is an int
            seed = int(np.random.SeedSequence().entropy % 2**32)  # type: ignore[operator]
        cases = self.cases(name, seed)
        expected = [ex.oracle(case) for case in cases]
        answers = [answer(ex, fn, case) for case in cases]

        def probing() -> tuple[list[Case], list[Any], list[Any]]:
            """The probes' trials (``trial_cases``' last), asked only for a diagnosis."""
            extra = probe_cases(ex, cases)
            return extra, [ex.oracle(c) for c in extra], [answer(ex, fn, c) for c in extra]

        outcome = evaluate(ex, cases, expected, answers, seed=seed, probing=probing)
        print(outcome.message)
        record.record(self.stem, ex.number, ex.name, passed=bool(outcome.passed))
        return outcome


def _remembered(mistake: Mistake[C]) -> Mistake[C]:
    assert mistake.answer is not None  # a bound mistake
    return dataclasses.replace(mistake, answer=remembered(mistake.answer),
                               variants=tuple(map(remembered, mistake.variants)))


def normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    """A float32 array of ``shape`` drawn from N(0, scale^2): the trials' inputs and weights."""
    return (scale * rng.standard_normal(size=shape)).astype(np.float32)
