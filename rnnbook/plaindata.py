"""Answers as plain data: arrays, numbers, strings and lists; anything else is refused.

One function for both sides of a check: the checks (:mod:`rnnbook.byhand`, :mod:`rnnbook.compare`)
turn every answer into plain data before comparing it, and the grader's NumPy-only child does the
same before an answer crosses the pipe. That child cannot import this package, so this module
needs only the standard library and NumPy, and the grader's zygote loads it by path as
``rnnbook_plaindata`` (:mod:`rnnbook.grading.zygote`; its TensorFlow zygote uses the package's
module under both names, so there is one :class:`Raised` class in a process, never two).
"""
from typing import NamedTuple

import numpy as np


class Raised(NamedTuple):
    """The learner's function raised instead of answering (plain data, so it can cross processes)."""

    kind: str
    message: str
    where: str = ""


def to_plain(value):
    """``value`` as plain data: numbers and strings as Python values, tuples and lists as
    lists, tensors and anything array-like as NumPy arrays; TypeError for anything else.
    A :class:`Raised` (the answer is that the function raised) stays as it is."""
    return value if isinstance(value, Raised) else _plain(value)


def _plain(value):
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "numpy") and callable(value.numpy):  # a TensorFlow eager tensor
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"returned a {type(value).__name__}, which is not an array of numbers")
    return array


def where(frames):
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
