"""Rosters and CSV files: who wrote which submission, and cells no spreadsheet runs.

A roster (``--roster``) is a CSV with the columns :data:`ROSTER_COLUMNS`; :func:`read_roster`
reads it (one-line :class:`RosterError` naming the file and the row), :func:`match_roster`
matches it to the submissions. Every CSV the grader writes goes through :func:`csv_cell`
(:func:`csv_text`), and :func:`read_back` gives back what was written.
"""
from __future__ import annotations

import csv
import io
import os
import pathlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

#: a spreadsheet reads a cell that starts with one of these as a formula (OWASP, "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet runs: text that starts with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading ``'`` (OWASP's advice); numbers stay
    numbers. Text that starts with ``'`` gets one more, so :func:`csv_value` gives back exactly
    what was written. Every CSV the grader writes goes through this."""
    if isinstance(value, str) and value.startswith((*FORMULA_STARTS, "'")):
        return "'" + value
    return value


def csv_value(cell: Any) -> Any:
    """What :func:`csv_cell` was given, from the cell it wrote (read back from a CSV)."""
    return cell[1:] if isinstance(cell, str) and cell.startswith("'") else cell


def csv_text(rows: Iterable[Sequence[Any]]) -> str:
    """``rows`` (lists of cells) as CSV text, every cell through :func:`csv_cell`. Lines end
    in CRLF (RFC 4180), so that a cell holding a carriage return is quoted too."""
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([csv_cell(cell) for cell in row])
    return out.getvalue()


class Submitted(Protocol):
    """What a roster is matched against: a submission's path and its report folder's name."""

    @property
    def path(self) -> pathlib.Path: ...
    @property
    def name(self) -> str: ...


ROSTER_COLUMNS = ("file", "id", "name", "email")


class RosterError(ValueError):
    """A roster that cannot be read (one line, names the file and the row)."""


@dataclass(frozen=True)
class Student:
    """A roster row: ``file`` is a notebook's file name or its path (``d1/alice.ipynb``)."""

    file: str
    id: str
    name: str = ""
    email: str = ""
    row: int = 0  # its line in the roster file

    def who(self) -> str:
        """The student as the grader's end-of-run lines name them: name (or id) and file."""
        return f"{self.name or self.id} ({self.file})"

    def names(self, path: pathlib.Path) -> int:
        """How closely this row names the submission at ``path``: 0 not at all, 1 by file
        name (a row without a folder), else 1 + the number of path components that match (a
        path is matched from its end, made absolute: ``d1/alice.ipynb`` names
        ``subs/d1/alice.ipynb``)."""
        wanted = self.file.split("/")
        if len(wanted) == 1:
            return 1 if path.name == self.file else 0
        parts = _parts(os.path.abspath(path))
        return 1 + len(wanted) if parts[-len(wanted):] == wanted else 0


def safe_text(text: str) -> str:
    """``text`` as UTF-8 can always write it: a file name's byte that is not UTF-8 (Python
    holds it as a surrogate, ``\\udce9``) becomes ``\\xe9``, a lone surrogate (valid JSON in a
    notebook) ``\\ud800``; all else is kept. The grader converts paths and notebook text once,
    when it reads them, and every output after uses what this returns."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff"
                   else f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c
                   for c in text)


#: the characters a terminal acts on rather than shows: C0 (but for newline and tab where
#: lines are kept), DEL and C1 (``\x9b`` is a second ESC[ to some terminals)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_IN_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def visible(text: object, lines: bool = False) -> str:
    """``text`` (a submission's: a file name, an exception message, anything read from it) as
    the grader prints it to a terminal and writes it in a CSV or a report:
    :func:`safe_text`, and every control character shown as its escape (ESC as the 4
    characters ``\\x1b``), so a name like ``ESC[2J.ipynb`` clears no screen. ``lines``: newlines
    and tabs are kept (an exception's message in a report); else they are shown too."""
    pattern = _CONTROL if lines else _CONTROL_IN_LINE
    return pattern.sub(lambda m: f"\\x{ord(m[0]):02x}", safe_text(str(text)))


def safe_path(path: object) -> str:
    """A path as the grader's outputs show it (:func:`visible`)."""
    return visible(path)


def _parts(path: object) -> list[str]:
    """``path``'s components without ``.`` (``./a//b`` -> ``[a, b]``)."""
    return [p for p in str(path).replace("\\", "/").split("/") if p not in ("", ".")]


def read_roster(path: str | os.PathLike[str]) -> list[Student]:
    """The roster's rows (:class:`Student`) from a CSV with the columns :data:`ROSTER_COLUMNS`
    (``file`` is the notebook's file name or its path, with or without .ipynb). Every row needs
    a file and an id; no file and no id may be listed twice."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise RosterError(f"{path}: cannot read the roster ({error})") from None
    if not rows or set(ROSTER_COLUMNS) - set(rows[0]):
        raise RosterError(f"{path}: a roster needs the columns {', '.join(ROSTER_COLUMNS)}")
    roster: list[Student] = []
    files: dict[str, int] = {}  # file -> its row
    ids: dict[str, int] = {}  # id -> its row
    for line, row in enumerate(rows, 2):
        values = {k: (row[k] or "").strip() for k in ROSTER_COLUMNS}
        file = "/".join(_parts(values["file"]))
        if not file:
            raise RosterError(f"{path}, row {line}: no file name")
        if not values["id"]:
            raise RosterError(f"{path}, row {line}: no id for {file} (every student needs one: "
                              "it is how the gradebook tells them apart)")
        file = file if file.endswith(".ipynb") else file + ".ipynb"
        if file in files:
            raise RosterError(f"{path}, rows {files[file]} and {line}: {file} is listed twice")
        if values["id"] in ids:
            raise RosterError(f"{path}, rows {ids[values['id']]} and {line}: the id "
                              f"{values['id']} is listed twice")
        files[file], ids[values["id"]] = line, line
        roster.append(Student(file, values["id"], values["name"], values["email"], line))
    return roster


@dataclass
class Match:
    """Who wrote which submission: ``student`` per report folder, ``clash`` per report folder
    whose student id is on another submission too (why it does not count), ``missing`` (roster
    rows with no submission) and ``unknown`` (submissions on no row)."""

    student: dict[str, Student] = field(default_factory=dict)
    clash: dict[str, str] = field(default_factory=dict)
    missing: list[Student] = field(default_factory=list)
    unknown: list[Submitted] = field(default_factory=list)


def match_roster(subs: Sequence[Submitted], roster: Sequence[Student]) -> Match:
    """Match submissions to roster rows: the row that names a submission most exactly (its
    path, then its file name). One student id on two submissions (a file name in two folders,
    or another student's file name) is a clash: neither counts until the instructor resolves it
    (renames the file, or lists each file's path in the roster)."""
    found = Match()
    for sub in subs:
        best = max(roster, key=lambda s, p=sub.path: s.names(p),  # type: ignore[misc]
                   default=None)
        if best is not None and best.names(sub.path):
            found.student[sub.name] = best
        else:
            found.unknown.append(sub)
    by_id: dict[str, list[Submitted]] = {}
    for sub in subs:
        if sub.name in found.student:
            by_id.setdefault(found.student[sub.name].id, []).append(sub)
    for student_id, same in by_id.items():
        if len(same) > 1:
            files = ", ".join(safe_path(s.path) for s in same)
            for sub in same:
                found.clash[sub.name] = (
                    f"roster: the id {student_id} is on {len(same)} submissions ({files}); none "
                    "of them counts until you resolve it: remove the one that is not theirs, or "
                    "put each file's path in the roster's file column")
    found.missing = [s for s in roster if s.id not in by_id]
    return found


def read_back(f: IO[str]) -> Iterator[dict[str, Any]]:
    """The rows of a CSV the grader wrote, each cell as it was before :func:`csv_cell`."""
    for row in csv.DictReader(f):
        yield {key: csv_value(value) for key, value in row.items()}
