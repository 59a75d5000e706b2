"""The result memo: each NumPy model (a reference or a mistake model) answers each case once.

Recognising a mistake asks every model about every failing trial, and the 200-seed sweeps show
each trial to every learner function; the models are NumPy and deterministic, so
:func:`remembered` keeps their answers, keyed by the model and a digest of the case
(:func:`fingerprint`), at most :data:`REMEMBER_AT_MOST` at a time.
"""
from __future__ import annotations

import hashlib
from typing import Any, Callable

import numpy as np

from rnnbook.plaindata import Case, to_plain

# (model, case fingerprint) -> (applies, answer or error); bounded
_REMEMBERED: dict[tuple[Any, bytes], tuple[bool, Any]] = {}
REMEMBER_AT_MOST = 50_000


def fingerprint(case: Case) -> bytes:
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


def remembered(model: Callable[..., Any]) -> Callable[..., Any]:
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

    answer_once.__wrapped__ = model  # type: ignore[attr-defined]  # a function takes any attribute
    return answer_once
