"""What several chapters' checks share: case helpers and families of mistakes.

Case helpers (:data:`LSTMStateTuple`, :func:`reorder_blocks`, :func:`tf1_to_keras_weights`) run
on the learner's side too: a notebook's ``check`` makes its cases there, and the grader's
TensorFlow zygote keeps what an API exercise's ``call`` reaches. So they are NumPy only and never
touch :mod:`rnnbook.reference`, which does not ship to learners.

A *family* of mistakes is one wrong idea that exercises of several chapters meet: the gate blocks
read in Keras' order; ``forget_bias`` hard-coded as 1.0, left out or added twice; the kernel
split at row H, or W and U swapped; the two parts of a state (c and h, c and m) swapped; the
state not carried over time. Each factory makes that exercise's
:class:`~rnnbook.exercise.Mistake` from

- the exercise's own ``sentence`` (its words name the exercise's arguments and layout, so the
  sentences differ from chapter to chapter and are passed in), and
- its *knob model* ``model(case, **change)``: the exercise's reference answer on ``case`` with one
  argument of the :mod:`rnnbook.reference` function it calls turned (``order=``,
  ``forget_bias=``, ``at=``, ``carry=``). The family says which knob, and how far.

A knob model needs the reference, so the learner release (which has none) names nothing with
it. The ``*_case`` and ``*_after`` factories need no model: the mistake is the exercise's RIGHT
answer on a changed case (``perturb=``: the gate blocks reordered, ``forget_bias`` set) or
changed after (``after=``: parts swapped), which the release computes with TensorFlow's oracle
(:class:`~rnnbook.exercise.Mistake`). Prefer them.

Every factory passes its other keyword arguments on to the ``Mistake`` (``variants=``,
``raises=``), so a family member is written like any other mistake.

The factories touch the reference only inside the models they return (in the learner release
it is a stub). The grader's zygote cuts this module as it cuts a chapter's
(:func:`rnnbook.grading.zygote.callers_only`): a grading child keeps only what an API
exercise's ``call`` reaches (``LSTMStateTuple``), never a family or :func:`names_split_0`.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import inspect
import re
from typing import Any, Callable, Iterator, Mapping, NoReturn, Sequence, TypedDict, Unpack

import numpy as np

from rnnbook import reference as ref  # instructor-side: use only inside function bodies
from rnnbook.exercise import C, Mistake
from rnnbook.plaindata import Raised

# ---------------------------------------------------------------------------------------------
# Types the chapters share. Each exercise's trial is a TypedDict of its own in its chapter's
# module (its keys, with their shapes in comments): a plain dict at run time, so the generic
# machinery (rnnbook.plaindata, rnnbook.diagnose, the grader's wire) handles it as it is.

#: any exercise's trial, as a helper that several exercises share reads it
Trial = Mapping[str, Any]
#: a knob model (``model(case, **change)``) or an answer made from a case: its value is
#: passed on as it stands
Model = Callable[..., object]
#: a knob model whose answer is a tuple of arrays, (W, U, ...) or (c, h)
PartsModel = Callable[..., tuple[np.ndarray, ...]]


class Change(TypedDict, total=False):
    """A mistake as the right answer on a changed case and/or changed after: the
    :class:`~rnnbook.exercise.Mistake` fields ``perturb`` and ``after`` (``right``, the right
    answer as plain data, is read by index)."""

    perturb: Callable[[Trial], Trial]
    after: Callable[[Trial, Any], object]


class Variants(TypedDict, total=False):
    variants: tuple[Model, ...]  # other ways to write the same mistake


class MistakeOptions(Variants, total=False):
    """What a family of mistakes passes on to its :class:`~rnnbook.exercise.Mistake`."""

    raises: Callable[..., bool]  # (case, Raised): whether the error is this mistake's

# ---------------------------------------------------------------------------------------------
# Case helpers (learner side: NumPy only)

#: a by-hand exercise gets a state with the fields of TF1's LSTMStateTuple (a namedtuple (c, h)):
#: the grader's NumPy-only child cannot import TensorFlow's; an API exercise gets TensorFlow's own
LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))

TF1_TO_KERAS = (0, 2, 1, 3)  # i, j, f, o -> i, f, g, o (the same swap goes back; g is TF1's j)


def reorder_blocks(a: np.ndarray, order: Sequence[int], axis: int = -1) -> np.ndarray:
    """Reorder the four gate blocks of ``a`` along ``axis``: ``order`` lists old block indices
    (:data:`TF1_TO_KERAS`). The learner side's :func:`rnnbook.reference.reorder`."""
    parts = np.split(a, 4, axis=axis)
    return np.concatenate([parts[k] for k in order], axis=axis)


def tf1_to_keras_weights(kernel: np.ndarray, bias: np.ndarray, forget_bias: float,
                         depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keras 3 LSTM weights ``(kernel (D, 4H), recurrent_kernel (H, 4H), bias (4H,))`` that
    compute what a TF1 BasicLSTMCell / LSTMCell with ``kernel`` (D + H, 4H), ``bias`` and
    ``forget_bias`` computes: blocks i, j, f, o reordered to i, f, g, o, forget_bias folded into
    the f block of the bias, the kernel split at row ``depth`` (D).

    The learner side's :func:`rnnbook.reference.keras_from_tf1`: cases are made with it (on the
    learner's side), and oracles use it (proven against TensorFlow where they do)."""
    H = kernel.shape[1] // 4
    kernel = reorder_blocks(kernel, TF1_TO_KERAS)
    bias = reorder_blocks(bias, TF1_TO_KERAS).copy()
    bias[H: 2 * H] += forget_bias
    return kernel[:depth], kernel[depth:], bias


# ---------------------------------------------------------------------------------------------
# Families of mistakes: ``model(case, **change)`` is the exercise's knob model (see above);
# names_split_0 is the ``raises`` of the mistake "split_0" in Chapters 2 and 5


def names_split_0(case: Trial, got: Raised) -> bool:
    """Whether ``got`` (a :class:`~rnnbook.plaindata.Raised`) is TensorFlow's error for a name
    with ``split_0`` in it, on a step-0 case (or a case of every step): the graph has none
    (static_rnn names step 0's Split `split`, step t's `split_t`)."""
    return case.get("t", 0) == 0 and "split_0" in got.message


class LstmRunTrial(TypedDict):
    """What a trial of a real LSTM run over a batch holds (Chapters 2 and 5 add their own)."""

    B: int
    T: int
    D: int
    H: int
    inputs: np.ndarray  # (B, T, D)
    kernel: np.ndarray  # (D + H, 4H)
    bias: np.ndarray  # (4H,)


def raising(message: str) -> Callable[[Trial], NoReturn]:
    """``perturb=`` of a mistake that shows only as an error (a name not in the graph, an
    unfed placeholder): its model raises it, where the learner's code raises, and ``raises=``
    (:func:`says`) names it."""
    def perturb(case: Trial) -> NoReturn:
        raise ValueError(message)
    return perturb


def says(words: str) -> Callable[[Trial, Raised], bool]:
    """``raises=``: whether the error's message holds ``words``."""
    return lambda case, got: words in got.message


def keras_order(sentence: str, model: Model,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """The gate blocks read in Keras' order i, f, g, o where TF1's is i, j, f, o (``options``:
    the Mistake's other fields, such as ``variants``)."""
    return Mistake(sentence, lambda c: model(c, order=ref.KERAS), **options)


def forget_bias_hard_coded(sentence: str, model: Model,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """``forget_bias`` taken as its default 1.0 whatever the cell was built with."""
    return Mistake(sentence, lambda c: model(c, forget_bias=1.0), **options)


def forget_bias_left_out(sentence: str, model: Model,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """``forget_bias`` left out (TF1 adds it at run time; it is not in the bias variable)."""
    return Mistake(sentence, lambda c: model(c, forget_bias=0.0), **options)


def forget_bias_twice(sentence: str, model: Model,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """``forget_bias`` added twice (once as if it were in the bias, once at run time)."""
    return Mistake(sentence, lambda c: model(c, forget_bias=2 * c["forget_bias"]), **options)


def split_at_h(sentence: str, model: Model,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """The kernel split at row H instead of row D (input_depth), as if the cell concatenated
    [h, x]: ``model(case, at=row)`` splits the kernel's rows at ``row``."""
    return Mistake(sentence, lambda c: model(c, at=c["H"]), **options)


def w_and_u_swapped(sentence: str, model: PartsModel,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """W (the kernel's first D rows: they multiply x) and U (the last H rows: they multiply h)
    returned the other way round: ``model(case)`` is the right ``(W, U, ...)``."""
    def swapped(parts: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        return (parts[1], parts[0], *parts[2:])

    return Mistake(sentence, lambda c: swapped(model(c)), **options)


def not_carried(sentence: str, model: Model,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """The state not carried over time: every step starts from the initial state."""
    return Mistake(sentence, lambda c: model(c, carry=False), **options)


def parts_swapped(sentence: str, model: PartsModel,
                **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """The two parts of a pair answer, (c, h) or (c, m), returned the other way round:
    ``model(case)`` is the right pair."""
    return Mistake(sentence, lambda c: model(c)[::-1], **options)


# ---------------------------------------------------------------------------------------------
# The same families as the right answer on a changed case, or changed after: no knob model, so
# the learner release names them too (its oracle answers; rnnbook/exercise.py)


def keras_order_case(sentence: str, keys: Sequence[str] = ("kernel", "bias"),
                     **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """The gate blocks read in Keras' order i, f, g, o where TF1's is i, j, f, o: the right
    answer on the case whose ``keys`` (arrays of four gate blocks on their last axis) have
    blocks j and f swapped (reading i, f, g, o from TF1's blocks is reading TF1's order from
    the swapped ones)."""
    return Mistake(sentence, perturb=lambda c: {
        **c, **{key: reorder_blocks(c[key], TF1_TO_KERAS) for key in keys}}, **options)


def forget_bias_case(sentence: str, value: Callable[[C], float],
                     **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """A wrong ``forget_bias``: the right answer on the case whose ``forget_bias`` is
    ``value(case)`` (1.0 hard-coded, 0 left out, twice the case's added twice)."""
    return Mistake(sentence, perturb=lambda c: {**c, "forget_bias": value(c)}, **options)


def forget_bias_hard_coded_case(sentence: str,
        **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """``forget_bias`` taken as its default 1.0 whatever the cell was built with."""
    return forget_bias_case(sentence, lambda c: 1.0, **options)


def forget_bias_left_out_case(sentence: str,
        **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """``forget_bias`` left out (TF1 adds it at run time; it is not in the bias variable)."""
    return forget_bias_case(sentence, lambda c: 0.0, **options)


def forget_bias_twice_case(sentence: str,
        **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """``forget_bias`` added twice (once as if it were in the bias, once at run time)."""
    return forget_bias_case(sentence, lambda c: 2 * c["forget_bias"], **options)


def w_and_u_swapped_after(sentence: str,
        **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """W and U returned the other way round: the right ``(W, U, ...)`` with its first two
    parts swapped."""
    return Mistake(sentence, after=lambda c, right: [right[1], right[0], *right[2:]],
                   **options)


def parts_swapped_after(sentence: str,
        **options: Unpack[MistakeOptions]) -> Mistake[C]:
    """The two parts of a pair answer, (c, h) or (c, m), returned the other way round."""
    return Mistake(sentence, after=lambda c, right: right[::-1], **options)


def _rows_mismatch(case: Trial, got: Raised) -> bool:
    """Whether ``got`` is NumPy's error for a (B, D) array meeting H rows of the kernel (or a
    (B, H) one meeting D rows): ``@`` says "size H is different from D", ``np.dot`` "D (dim 1)
    != H (dim 0)"."""
    found = (re.search(r"size (\d+) is different from (\d+)", got.message)
             or re.search(r"(\d+) \(dim 1\) != (\d+) \(dim 0\)", got.message))
    return found is not None and {int(found[1]), int(found[2])} == {case["D"], case["H"]}


def _square_only(case: C) -> C:
    if case["D"] != case["H"]:
        raise ValueError(f"matmul: size {case['H']} is different from {case['D']}")
    return case


def split_at_h_raises(sentence: str,
        **options: Unpack[Variants]) -> Mistake[C]:
    """The kernel's rows split at H with x still first (``x @ kernel[:H] + h @ kernel[H:]``):
    right where D == H, NumPy's shape error wherever D != H, which names it
    (:func:`_rows_mismatch`)."""
    return Mistake(sentence, perturb=_square_only, raises=_rows_mismatch, **options)


# ---------------------------------------------------------------------------------------------
# An API exercise's answer comes from the API it names (issue 35): what the API returned
# while the learner's function ran is noted (``recording``), and an answer holding numbers
# it never returned (a NumPy restatement, a recomputation from the weights) is refused where
# the exercise's ``call`` says so. Learner side: NumPy only.

#: how close a number must be to one the API returned: loose enough for a float16 copy (a
#: dtype mistake, named as such by the comparison), far below what a recomputation misses by
#: on every value at once
FROM_API_RTOL, FROM_API_ATOL = 1e-3, 1e-4


@dataclasses.dataclass(frozen=True)
class ApiCall:
    """One call of a recorded API: its arguments (``self`` left out) and what it returned."""

    args: tuple
    kwargs: dict
    result: Any


@contextlib.contextmanager
def recording(owner: Any, name: str, calls: list[ApiCall]) -> Iterator[None]:
    """While the block runs, ``owner.<name>`` (a method of one object, ``session.run``, or of a
    class, ``LSTM.__call__``) notes each call and its result in ``calls``; then it is as it
    was."""
    own = name in vars(owner)
    original = vars(owner)[name] if own else getattr(owner, name)
    bound = not isinstance(owner, type)  # an object's method: `original` is bound

    @functools.wraps(original)
    def noting(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        calls.append(ApiCall(args if bound else args[1:], kwargs, result))
        return result

    try:  # what inspect.getfullargspec reads (TF1 cells ask whether `call` takes `training`)
        noting.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # a builtin without one
        pass
    setattr(owner, name, noting)
    try:
        yield
    finally:
        if own:
            setattr(owner, name, original)
        else:
            delattr(owner, name)


def api_answer(owner: Any, names: str | tuple[str, ...], run: Callable[[], Any],
               parts: Sequence[str] = ()) -> tuple[Any, str | None]:
    """``run()`` with ``owner.<name>`` recorded for each of ``names`` (:func:`recording`): its
    result, and the part of it holding a number that API never returned
    (:func:`not_returned`; None: none does)."""
    calls: list[ApiCall] = []
    with contextlib.ExitStack() as stack:
        for name in (names,) if isinstance(names, str) else names:
            stack.enter_context(recording(owner, name, calls))
        result = run()
    return result, (None if result is None else not_returned(result, calls, parts))


def returned_values(calls: Sequence[ApiCall]) -> np.ndarray:
    """Every finite number the recorded calls returned, sorted (float64)."""
    found = [_numbers(call.result) for call in calls]
    values = np.concatenate(found) if found else np.zeros(0)
    return np.sort(values[np.isfinite(values)])


def not_returned(answer: Any, calls: Sequence[ApiCall], parts: Sequence[str]) -> str | None:
    """The name of the first part of ``answer`` (``parts``, or "the answer") holding a number
    no recorded call returned; None when every number was returned, or when the answer holds
    no numbers (the comparison says what is wrong with it)."""
    values = returned_values(calls)
    pieces = list(answer) if parts and isinstance(answer, (tuple, list)) else [answer]
    names = list(parts) if parts and len(parts) == len(pieces) else ["the answer"] * len(pieces)
    for name, piece in zip(names, pieces, strict=True):
        numbers = _numbers(piece)
        numbers = numbers[np.isfinite(numbers)]
        if numbers.size and not _all_among(numbers, values):
            return name
    return None


def _numbers(value: Any) -> np.ndarray:
    """Every number in ``value`` (nested tuples, lists, tensors, arrays), flat float64; none
    from what is not numbers (a symbolic tensor, None, a string)."""
    if isinstance(value, (tuple, list)):
        found = [_numbers(v) for v in value]
        return np.concatenate(found) if found else np.zeros(0)
    try:
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    except Exception:  # noqa: BLE001 - a graph tensor, an object: no numbers
        return np.zeros(0)
    if array.dtype.kind not in "fiu":
        return np.zeros(0)
    return array.astype(np.float64).ravel()


def _all_among(numbers: np.ndarray, values: np.ndarray) -> bool:
    """Whether each of ``numbers`` is within tolerance of one of ``values`` (sorted)."""
    if not values.size:
        return False
    padded = np.concatenate([[-np.inf], values, [np.inf]])  # every number has two neighbours
    at = np.searchsorted(padded, numbers)  # padded[at - 1] <= number <= padded[at]
    nearest = np.minimum(np.abs(padded[at - 1] - numbers), np.abs(padded[at] - numbers))
    return bool((nearest <= FROM_API_ATOL + FROM_API_RTOL * np.abs(numbers)).all())


def not_from_api(sentence: str, words: str) -> Mistake:
    """The mistake of an answer whose numbers the API never returned: ``call`` raises an error
    holding ``words`` (the start of ``sentence``), which names it."""
    return Mistake(sentence, perturb=raising(words), raises=says(words))
