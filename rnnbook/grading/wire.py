"""The wire protocol between the grader and a child: JSON lines on one pipe, plain data only.

The child is handed its job (the notebook's code, the trials) on a pipe and answers on another
pipe, one JSON object a line. Arrays travel as ``{"__array__": [dtype, shape, base64]}``; an
exception the learner's function raised as ``{"__raised__": [kind, message, where]}``. Nothing
is ever unpickled, and nothing a child sends is decoded before its size is checked against what
the trial implies (:func:`answer_bound`).

A job's trials reach the learner's function as the types the notebook's check passes (issue
25, one verdict): a tuple stays a tuple (``{"__tuple__": [...]}``), a named tuple such as
``LSTMStateTuple`` a named tuple of the same name and fields (``{"__named__": [name, fields,
values]}``; a class made here, as the NumPy-only child cannot import TensorFlow's), a NumPy
scalar a NumPy scalar of its dtype (``{"__scalar__": [dtype, value]}``). Only a job holds them
(``decode(..., dicts=True)``); an answer never does (it is plain data: arrays, numbers,
strings, lists).

This module needs only the standard library and NumPy: the NumPy-only child loads it by path.
"""
from __future__ import annotations

import base64
import collections
import json
from typing import Any, Callable

import numpy as np

MAX_TEXT = 2000  # characters kept of an error message
#: the array dtypes an answer may hold (numbers and booleans: never objects, never strings)
DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"}
EVENT_BYTES = 4096  # the longest line that is not an exercise's answers


class WireError(ValueError):
    """A message that is not plain data of the expected shape."""


def encode(value: Any) -> Any:
    """``value`` (arrays, numbers, strings, lists, tuples, dicts with string keys, None) as
    JSON-ready data. Raises TypeError for anything else."""
    if isinstance(value, np.ndarray):
        if value.dtype.name not in DTYPES:
            raise TypeError(f"an array of dtype {value.dtype}, which is not numbers")
        data = np.ascontiguousarray(value)
        return {"__array__": [data.dtype.name, list(data.shape),
                              base64.b64encode(data.tobytes()).decode("ascii")]}
    if isinstance(value, tuple) and isinstance(getattr(value, "_fields", None), tuple):
        return {"__named__": [type(value).__name__, list(value._fields),  # type: ignore[attr-defined]
                              [encode(v) for v in value]]}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[str(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return {"__scalar__": [value.dtype.name, value.item()]}
    if isinstance(value, str):
        return value[: 100 * MAX_TEXT]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"a {type(value).__name__}, which is not plain data")


def decode(obj: Any, budget: int, raised: Callable[..., Any] | None = None,
           dicts: bool = False) -> Any:
    """Inverse of :func:`encode`. ``budget`` is the most array bytes it may create; ``raised``
    builds the value for a ``__raised__`` entry (None: refused); ``dicts`` allows what only a
    job holds: mappings, tuples, named tuples and NumPy scalars."""
    left = [budget]

    def walk(obj, depth):
        if depth > 32:
            raise WireError("an answer nested more than 32 deep")
        if isinstance(obj, dict):
            if set(obj) == {"__array__"}:
                return _array(obj["__array__"], left)
            if set(obj) == {"__raised__"} and raised is not None:
                parts = obj["__raised__"]
                if not (isinstance(parts, list) and len(parts) == 3):
                    raise WireError("a malformed exception")
                return raised(*(str(p)[:MAX_TEXT] for p in parts))
            if set(obj) == {"__dict__"} and dicts and isinstance(obj["__dict__"], list):
                return {str(k): walk(v, depth + 1) for k, v in obj["__dict__"]}
            if set(obj) == {"__tuple__"} and dicts and isinstance(obj["__tuple__"], list):
                return tuple(walk(v, depth + 1) for v in obj["__tuple__"])
            if set(obj) == {"__named__"} and dicts:
                return _named(obj["__named__"], lambda v: walk(v, depth + 1))
            if set(obj) == {"__scalar__"} and dicts:
                return _scalar(obj["__scalar__"])
            raise WireError("an answer holds a mapping, which no exercise returns")
        if isinstance(obj, list):
            return [walk(v, depth + 1) for v in obj]
        if obj is None or isinstance(obj, (str, int, float, bool)):
            return obj
        raise WireError(f"an answer holds a {type(obj).__name__}")

    return walk(obj, 0)


# (name, fields) -> the named tuple class made for it (one per process)
_NAMED: dict[tuple[str, tuple[str, ...]], type] = {}


def _named(parts: list[Any], walk: Callable[..., Any]) -> Any:
    """A named tuple of the class ``name(fields)`` holding ``values``."""
    if not (isinstance(parts, list) and len(parts) == 3 and isinstance(parts[1], list)
            and isinstance(parts[2], list) and len(parts[1]) == len(parts[2])):
        raise WireError("a malformed named tuple")
    name, fields = str(parts[0]), tuple(str(f) for f in parts[1])
    if (name, fields) not in _NAMED:
        try:
            _NAMED[name, fields] = collections.namedtuple(name, fields)
        except ValueError as error:
            raise WireError(f"a named tuple that cannot be made: {error}") from None
    return _NAMED[name, fields](*map(walk, parts[2]))


def _scalar(parts: list[Any]) -> Any:
    if not (isinstance(parts, list) and len(parts) == 2 and parts[0] in DTYPES
            and isinstance(parts[1], (bool, int, float))):
        raise WireError("a malformed NumPy scalar")
    return np.dtype(parts[0]).type(parts[1])


def _array(parts: list[Any], left: list[int]) -> np.ndarray:
    if not (isinstance(parts, list) and len(parts) == 3):
        raise WireError("a malformed array")
    dtype, shape, data = parts
    if dtype not in DTYPES:
        raise WireError(f"an array of dtype {dtype!r}, which is not numbers")
    if not (isinstance(shape, list) and len(shape) <= 32
            and all(type(n) is int and 0 <= n for n in shape)):
        raise WireError("an array with a malformed shape")
    size = int(np.dtype(dtype).itemsize) * int(np.prod(shape, dtype=object))
    if not isinstance(data, str) or size > left[0] or len(data) != 4 * ((size + 2) // 3):
        raise WireError("an array larger than its trial allows, or with missing data")
    left[0] -= size
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    if len(raw) != size:
        raise WireError("an array whose data does not fit its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def answer_bound(cases: Any) -> int:
    """The most array bytes a plausible answer to ``cases`` may hold: 16 times the trials'
    own arrays, and at least 1 MB (an answer is never much larger than its inputs)."""
    total, stack = 0, list(cases)
    while stack:
        value = stack.pop()
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, dict):
            stack += value.values()
        elif isinstance(value, (list, tuple)):
            stack += value
    return 2**20 + 16 * total


def line_bound(bound: int) -> int:
    """The longest answer line for an answer of at most ``bound`` array bytes (base64 + JSON)."""
    return EVENT_BYTES + 2 * bound


def dumps(obj: Any) -> bytes:
    """One line of the protocol (bytes, newline-terminated)."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


class LineReader:
    """Splits what a pipe delivers into lines of at most ``limit`` bytes; a longer line is
    dropped whole (it is never an event), without buffering it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buffer = bytearray()
        self.dropping = False  # inside a line that is too long: skip to its end
        self.dropped = False  # whether any line was too long (the caller resets it)

    def feed(self, chunk: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not self.dropping:
                    self.buffer += chunk[start:]
                    if len(self.buffer) > self.limit:
                        self.buffer.clear()
                        self.dropping = self.dropped = True
                return lines
            if self.dropping:
                self.dropping = False
            else:
                self.buffer += chunk[start:end]
                if len(self.buffer) <= self.limit:
                    lines.append(bytes(self.buffer))
                else:
                    self.dropped = True
            self.buffer.clear()
            start = end + 1
