"""Expected answers: what each exercise's oracle (TensorFlow) answers on a seed's trials.

One record per chapter, ``{"chapter", "seed", "version", "exercises": {name: (digest,
answers)}}``, the answers as plain data (:func:`untyped`) and the digest of the trials they
answer (:func:`trials_digest`), so that a reader uses them only for the very same trials. Two
places compute them and the grader reads both the same way (:func:`matching`):

- a Gradescope bundle built with a fixed seed (``make autograder SEED=N``) holds its chapter's
  record (:data:`rnnbook.grading.config.EXPECTED`), computed when it is built;
- otherwise the grader's TensorFlow zygote forks an *oracle* before it strips the chapters down
  to their callers (:mod:`rnnbook.grading.zygote`): it already has TensorFlow, so the grader
  does not import it a second time. It answers one request, ``{"seed": N, "exercises": {stem:
  [name, ...]}}``, with :func:`answer` (pickled records and their timings).

Standard library only at module level: the grader reads records without NumPy's or
TensorFlow's import (unpickling the answers imports NumPy)."""
from __future__ import annotations

import hashlib
import pickle
import time
from typing import TYPE_CHECKING, Any

from rnnbook import __version__

if TYPE_CHECKING:
    from rnnbook.exercise import Case


def trials_digest(cases: list[Case]) -> str:
    """A digest of an exercise's trials ("" for trials that cannot be pickled)."""
    try:
        return hashlib.sha256(pickle.dumps(cases, protocol=4)).hexdigest()
    except (pickle.PicklingError, TypeError, AttributeError):
        return ""


def untyped(value: Any) -> Any:
    """``value`` with every named tuple in it a plain tuple (lists and dicts walked): an
    oracle's ``LSTMStateTuple`` is tf-keras's class, and unpickling it would import TensorFlow
    and Keras into the grader on Gradescope's cold path (about as long as the zygote's own
    import, on the same two cores). A check compares answers as plain data
    (:func:`rnnbook.plaindata.to_plain`), where the two are the same."""
    if isinstance(value, tuple):
        return tuple(untyped(item) for item in value)
    if isinstance(value, list):
        return [untyped(item) for item in value]
    if isinstance(value, dict):
        return {key: untyped(item) for key, item in value.items()}
    return value


#: what an exercise's answers took: ``(what, start, end)`` (``time.monotonic``)
Span = tuple[str, float, float]


def trials(stem: str, name: str, seed: int) -> list[Case]:
    """Exercise ``name`` of chapter ``stem``: what its oracle answers on ``seed`` (the trials
    and the probes' trials, :meth:`rnnbook.exercise.Chapter.trial_cases`: NumPy only, no op)."""
    from rnnbook import checks

    return checks.load(stem).trial_cases(name, seed)


def trial_answer(stem: str, name: str, case: Case) -> Any:
    """Exercise ``name``'s oracle on one trial, as plain data (:func:`untyped`)."""
    from rnnbook import checks

    return untyped(checks.load(stem)[name].oracle(case))


def label(stem: str, name: str) -> str:
    """An exercise as a span names it: ``"7.8 bidirectional_outputs"``."""
    from rnnbook import checks

    ex = checks.load(stem)[name]
    return f"{ex.number} {ex.name}"


def exercise_answers(stem: str, name: str, seed: int) -> tuple[Any, list[Span]]:
    """Exercise ``name`` of chapter ``stem``: its oracle's answers on ``seed``'s trials, with
    their digest (None where the trials cannot be digested: its reader computes them), and what
    they took (one span)."""
    start = time.monotonic()
    cases = trials(stem, name, seed)
    digest = trials_digest(cases)
    entry = (digest, [trial_answer(stem, name, case) for case in cases]) if digest else None
    return entry, [(label(stem, name), start, time.monotonic())]


def wanted(request: dict[str, Any]) -> list[tuple[str, str]]:
    """``(stem, exercise)`` of every exercise ``request`` asks for (``{"exercises": {stem:
    [name, ...]}}``), in each chapter's order."""
    from rnnbook import checks

    return [(stem, ex.name) for stem, names in request["exercises"].items()
            for ex in checks.load(stem).exercises if ex.name in names]


def record(stem: str, seed: int, names: list[str] | None = None,
           times: list[Span] | None = None) -> dict[str, Any]:
    """Chapter ``stem``'s record on ``seed``'s trials: every exercise's (those ``names`` only,
    if given), computed here by its oracle. An exercise whose trials cannot be digested is left
    out (its reader computes it). ``times`` gets ``(exercise, start, end)`` per exercise."""
    from rnnbook import checks

    names = names if names is not None else [ex.name for ex in checks.load(stem).exercises]
    done = {(stem, name): exercise_answers(stem, name, seed)
            for stem, name in wanted({"exercises": {stem: names}})}
    return _records({stem: names}, seed, done, times)[0]


def _records(asked: dict[str, list[str]], seed: int, done: dict[tuple[str, str], Any],
             times: list[Span] | None = None) -> list[dict[str, Any]]:
    """One record per chapter ``asked``, of the answers ``done`` (``{(stem, name): (entry,
    [span, ...])}``); ``times`` gets their spans, in the order they started."""
    if times is not None:
        times.extend(sorted((span for _, spans in done.values() for span in spans),
                            key=lambda span: span[1]))
    return [{"chapter": stem, "seed": seed, "version": __version__,
             "exercises": {name: entry for (chapter, name), (entry, _) in done.items()
                           if chapter == stem and entry}}
            for stem in asked]


def matching(data: Any, seed: int, cases: dict[tuple[str, str], list[Case]]
             ) -> dict[tuple[str, str], Any]:
    """``{(chapter, exercise): expected answers}`` from a ``record``, for the exercises whose
    trials are ``cases``' (same seed, same version, same trials by digest); ``{}`` for anything
    that is not such a record."""
    if (not isinstance(data, dict) or data.get("seed") != seed
            or data.get("version") != __version__ or not isinstance(data.get("exercises"), dict)):
        return {}
    found = {}
    for name, entry in data["exercises"].items():
        key = (data.get("chapter"), name)
        if (key in cases and isinstance(entry, tuple) and len(entry) == 2 and entry[0]
                and trials_digest(cases[key]) == entry[0]):
            found[key] = entry[1]
    return found


def answer(request: dict[str, Any], done: dict[tuple[str, str], Any] | None = None) -> bytes:
    """The oracle's answer to ``{"seed": N, "exercises": {stem: [name, ...]}}``: pickled
    ``{"records": [record, ...], "times": [(what, start, end), ...]}``. ``done``: answers
    already computed elsewhere (``{(stem, name): exercise_answers(...)}``: the oracle's helper's);
    the rest are computed here."""
    seed = int(request["seed"])
    done = dict(done or {})
    for stem, name in wanted(request):
        if (stem, name) not in done:
            done[(stem, name)] = exercise_answers(stem, name, seed)
    times: list[Span] = []
    records = _records(request["exercises"], seed, done, times)
    return pickle.dumps({"records": records, "times": times}, protocol=4)
