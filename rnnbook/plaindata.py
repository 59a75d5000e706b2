"""Answers as plain data: arrays, numbers, strings and lists; anything else is refused.

One function for both sides of a check: the checks (:mod:`rnnbook.byhand`, :mod:`rnnbook.compare`)
turn every answer into plain data before comparing it, and the grader's NumPy-only child does the
same before an answer crosses the pipe. That child cannot import this package, so this module
needs only the standard library and NumPy, and the grader's zygote loads it by path as
``rnnbook_plaindata`` (:mod:`rnnbook.grading.zygote`; its TensorFlow zygote uses the package's
module under both names, so there is one :class:`Raised` class in a process, never two).
"""
from __future__ import annotations

import inspect
import traceback
from typing import Any, Callable, NamedTuple

import numpy as np

#: the kind of :class:`Raised` for a function that changed an argument in place (its message
#: names the argument): wherever the answer is checked, such an answer fails with
#: :func:`changed_sentence`
CHANGED = "ChangedArgument"

#: a trial's inputs and weights as plain data: sizes, NumPy arrays, numbers, strings
Case = dict[str, Any]


class Raised(NamedTuple):
    """The learner's function raised instead of answering (plain data, so it can cross processes)."""

    kind: str
    message: str
    where: str = ""


def to_plain(value: Any) -> Any:
    """``value`` as plain data: numbers and strings as Python values, tuples and lists as
    lists, tensors and anything array-like as NumPy arrays; TypeError for anything else.
    A :class:`Raised` (the answer is that the function raised) stays as it is."""
    return value if isinstance(value, Raised) else _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating, np.bool_)):  # np.float64 is a float too
        return value.item()
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "numpy") and callable(value.numpy):  # a TensorFlow eager tensor
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"returned a {type(value).__name__}, which is not an array of numbers")
    return array


def changed_sentence(names: str) -> str:
    """The mistake sentence for a function that changed its arguments ``names`` (a message of a
    :data:`CHANGED` ``Raised``: the names joined by ", ")."""
    listed = names.split(", ")
    first = listed[0] if listed[0].isidentifier() else "x"
    return (f"your function changed its argument{'s' * (len(listed) > 1)} "
            f"{', '.join(f'`{n}`' for n in listed)} in place: the caller's data must stay as "
            f"it was; return a new array (work on a copy: `{first} = {first}.copy()`).")


class Watch:
    """Calls ``fn`` and notes which of its arguments it changed in place: an array's values,
    shape or dtype, or what a list or dict holds (arrays nested in tuples, lists and dicts
    too). ``names_of`` is the function whose signature names the arguments (``fn`` itself
    unless ``fn`` wraps it). After the calls, :attr:`changed` lists the names, first seen
    first."""

    def __init__(self, fn: Callable[..., Any],
                 names_of: Callable[..., Any] | None = None) -> None:
        self.fn = fn
        self.names_of = names_of or fn
        self.changed: list[str] = []
        self.__name__ = getattr(self.names_of, "__name__", "function")

    def _names(self, args, kwargs):
        try:
            bound = inspect.signature(self.names_of).bind(*args, **kwargs)
        except (TypeError, ValueError):  # the call fails on its own; name by position
            return [(f"argument {k + 1}", a) for k, a in enumerate(args)] + list(kwargs.items())
        return list(bound.arguments.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        named = self._names(args, kwargs)
        before = [(name, value, _snapshot(value)) for name, value in named]
        try:
            return self.fn(*args, **kwargs)
        finally:
            for name, value, copy in before:
                if not _same(value, copy) and name not in self.changed:
                    self.changed.append(name)

    def raised(self) -> Raised | None:
        """The answer when the function changed an argument: a :data:`CHANGED` Raised."""
        return Raised(CHANGED, ", ".join(self.changed)) if self.changed else None


def _snapshot(value: Any, depth: int = 0) -> Any:
    """What ``value`` holds now: arrays copied, containers' items listed (dict keys by
    identity), anything else by identity."""
    if depth > 16:
        return value
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple)):
        return [_snapshot(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return [(k, _snapshot(v, depth + 1)) for k, v in value.items()]
    return value


def _same(value: Any, copy: Any, depth: int = 0) -> bool:
    """Whether ``value`` still holds what its :func:`_snapshot` ``copy`` recorded."""
    if depth > 16:
        return True
    if isinstance(value, np.ndarray):
        return (isinstance(copy, np.ndarray) and value.shape == copy.shape
                and value.dtype == copy.dtype
                and np.array_equal(value, copy, equal_nan=value.dtype.kind in "fc"))
    if isinstance(value, (list, tuple)):
        return isinstance(copy, list) and len(value) == len(copy) and all(
            _same(v, c, depth + 1) for v, c in zip(value, copy, strict=True))
    if isinstance(value, dict):
        items = list(value.items())
        return isinstance(copy, list) and len(items) == len(copy) and all(
            k is k0 and _same(v, c, depth + 1)
            for (k, v), (k0, c) in zip(items, copy, strict=True))
    return value is copy


def where(frames: list[traceback.FrameSummary]) -> str:
    """Where a :class:`Raised` points, from the learner's own frames of its traceback
    (``traceback.FrameSummary``, outermost first): the last one's line; and its function's
    name when it is not the function the check called (an exercise that fails because a
    function it calls raised blames that function, not itself)."""
    if not frames:
        return ""
    frame = frames[-1]
    place = f"line {frame.lineno}"
    if frame.name != frames[0].name and frame.name != "<module>":
        place += f" in {frame.name}"
    return f"{place}: {frame.line}" if frame.line else place
