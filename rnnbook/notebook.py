"""What a learner's exercise notebook says of itself, read without its source.

An exercise cell starts with a header line (``# Exercise 1.2 (2 points, by hand)``) and
defines the learner's function; in a generated learner notebook it keeps, in its
metadata, the digest of the source it was generated with, so a changed cell is a
learner's work (:func:`edited`). :mod:`rnnbook.source` (the one source's conventions,
instructor side) and :mod:`rnnbook.workspace` (the learner's own copies; in the learner
release too) read notebooks here.
"""
from __future__ import annotations

import hashlib
import os
import re
import sys

# nbformat validates with jsonschema, which imports rfc3987_syntax when it is installed
# (the Jupyter packages ask for it); that builds about 35 Lark parsers at import, 1.5 s
# of every tool's start-up (python-jsonschema/jsonschema#1428). No notebook schema uses the
# "iri" formats it checks, so these processes (generator, grader, release, workspace) do
# without it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

import nbformat  # noqa: E402

HEADER = re.compile(
    r"^# Exercise (?P<number>\d+\.\d+) \((?P<points>\d+) points?, "
    r"(?:(?P<parts>\d+) parts, )?(?P<kind>by hand|API)\)\s*$"
)
DEF = re.compile(r"^def (?P<name>\w+)\(", re.MULTILINE)
#: the metadata of a learner's exercise cell that says what was generated:
#: ``{"rnnbook": {GENERATED: digest of the cell's source as generated}}``; a source
#: without that digest is a learner's work (:func:`edited`)
GENERATED = "generated"


class SourceError(ValueError):
    """A notebook that cannot be read, or a source that breaks the conventions of
    :mod:`rnnbook.source` (message names the file or the cell)."""


def read(path: str | os.PathLike[str]) -> nbformat.NotebookNode:
    """Read a notebook; any failure becomes one line naming the file."""
    try:
        nb = nbformat.read(str(path), as_version=4)
        nbformat.validate(nb)
    except Exception as error:  # noqa: BLE001 - json, schema, encoding: not a notebook
        said = str(error).strip()
        reason = said.splitlines()[0] if said else type(error).__name__
        raise SourceError(f"{path}: not a valid notebook ({reason[:200]})") from None
    return nb


def digest(text: str) -> str:
    """A short digest of a cell's source (what :data:`GENERATED` holds)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def edited(cell: nbformat.NotebookNode) -> bool | None:
    """Whether a learner's exercise cell was changed since it was generated: its source
    no longer has the digest its metadata keeps; None for a cell that keeps none."""
    kept = cell.get("metadata", {}).get("rnnbook", {})
    if not isinstance(kept, dict) or not isinstance(kept.get(GENERATED), str):
        return None
    return digest(cell.source) != kept[GENERATED]
