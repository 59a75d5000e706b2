"""Answers as plain data: arrays, numbers, strings and lists; anything else is refused.

One function for both sides of a check: :mod:`rnnbook.checking` turns every answer into plain
data before comparing it, and the grader's NumPy-only child does the same before an answer
crosses the pipe. That child cannot import this package, so this module needs only the
standard library and NumPy, and the grader loads it by path (:mod:`rnnbook.grading.zygote`).
"""
import numpy as np


def to_plain(value):
    """``value`` as plain data: numbers and strings as Python values, tuples and lists as
    lists, tensors and anything array-like as NumPy arrays; TypeError for anything else."""
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
