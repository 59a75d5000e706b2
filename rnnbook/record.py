"""A self-learner's progress: which exercises have passed their check, kept on this computer.

Every ``check(...)`` that passes is written down in a small JSON file in the user's home
(``~/.rnnbook/progress.json``; ``RNNBOOK_PROGRESS`` names another file), never in the
repository; so is every check that fails, as the exercise's latest verdict.
``rnnbook.progress()`` prints a table per chapter of the exercises whose latest check passed
and of those that ever passed (a right answer followed by a wrong one is not "done"); each
exercise notebook ends with it. Nothing here is graded: the grader never reads this file.

Two copies of the book may share one home folder (two clones, or a clone beside a course's
release): each pass names the copy it was made in (:data:`COPY`), and each copy counts only its
own passes, so one copy never shows another's exercises or claims its work. Records written
before passes named their copy count for every copy (there is no telling whose they were).
"""
from __future__ import annotations

import datetime
import json
import os
import pathlib
import tempfile
from typing import Any, NamedTuple

VERSION = 1
#: this copy of the book: the folder its ``rnnbook`` package is imported from (a clone's
#: ``rnnbook/`` with an editable install; ``site-packages/rnnbook`` on Colab)
COPY = str(pathlib.Path(__file__).resolve().parent)


def path() -> pathlib.Path:
    """Where progress is kept: ``$RNNBOOK_PROGRESS``, else ``~/.rnnbook/progress.json``."""
    named = os.environ.get("RNNBOOK_PROGRESS")
    return pathlib.Path(named) if named else pathlib.Path.home() / ".rnnbook" / "progress.json"


def load(where: str | os.PathLike[str] | None = None,
         copy: str | None = COPY) -> dict[str, dict[str, Any]]:
    """``{chapter stem: {exercise number: {"name", "passed", "copies"}}}``: the passes made in
    ``copy`` (None: in any copy); empty when nothing is kept yet or the file cannot be read (a
    damaged file is never fatal to a notebook)."""
    where = pathlib.Path(where) if where else path()
    try:
        data = json.loads(where.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    done = data.get("passed", {})
    if not isinstance(done, dict):
        return {}
    if copy is None:
        return done
    return {stem: mine for stem, numbers in done.items() if isinstance(numbers, dict)
            if (mine := {n: r for n, r in numbers.items() if isinstance(r, dict)
                         and (copy in r.get("copies", [copy])
                              or copy in (r.get("latest") or {}))})}


def latest(entry: dict[str, Any], copy: str | None = COPY) -> bool:
    """Whether the latest check of an exercise (its record ``entry``) passed in ``copy``.
    Records written before failures were kept hold passes only: their latest is a pass."""
    verdicts = entry.get("latest")
    if isinstance(verdicts, dict) and copy in verdicts:
        return verdicts[copy] == "passed"
    return "passed" in entry and copy in entry.get("copies", [copy])


def ever(entry: dict[str, Any], copy: str | None = COPY) -> bool:
    """Whether the exercise passed its check at least once in ``copy`` (the best kept)."""
    return "passed" in entry and copy in entry.get("copies", [copy])


def record(stem: str, number: str, name: str, where: str | os.PathLike[str] | None = None,
           copy: str | None = COPY, passed: bool = True) -> bool:
    """Note that exercise ``number`` (``name``) of chapter ``stem`` passed its check (with
    ``passed=False``: failed it), now, in ``copy`` of the book: the latest verdict in that
    copy. The time of the last pass and the copies that passed the exercise are kept, so the
    best result survives a later failure.

    Written atomically (a temporary file renamed over the old one), so an interrupted write
    never loses earlier progress. Returns False (and changes nothing) when the file cannot be
    written, for example in a read-only home.
    """
    where = pathlib.Path(where) if where else path()
    done = load(where, copy=None)
    when = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    before = done.get(stem, {}).get(number, {})
    same = before.get("name") == name
    copies = set(before.get("copies", [])) if same else set()
    verdicts = dict(before.get("latest") or {}) if same else {}
    if same and "passed" in before:  # older records: a kept pass was each copy's latest
        verdicts = {c: "passed" for c in copies} | verdicts
    verdicts[str(copy)] = "passed" if passed else "failed"
    entry: dict[str, Any] = {"name": name, "latest": dict(sorted(verdicts.items()))}
    if passed or (same and "passed" in before):
        entry["passed"] = when if passed else before["passed"]
        entry["copies"] = sorted(copies | {copy} if passed else copies)
    done.setdefault(stem, {})[number] = entry
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=where.parent, delete=False,
                                         prefix=".progress-", suffix=".json") as out:
            json.dump({"version": VERSION, "passed": done}, out, indent=1, sort_keys=True)
        os.replace(out.name, where)
    except OSError:
        return False
    return True


def by_name(mine: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A chapter's records (``{number: entry}``) under the numbers its exercises have
    now (``names``: ``{number: function name}``): an exercise keeps its record when an
    update of the book renumbers it (one inserted before it), and a new exercise under
    an old number does not take another's. An exercise is known by its function's
    name."""
    named = {entry.get("name"): entry for entry in mine.values()
             if isinstance(entry, dict)}
    return {number: named[name] for number, name in names.items() if name in named}


class Row(NamedTuple):
    """A chapter's line of the progress table."""

    stem: str
    done: int  # exercises whose latest check passed
    total: int
    todo: list[str]  # the numbers whose latest check did not pass (or never ran)
    ever: int  # exercises that passed at least once (the best kept)


def table(chapters: list[tuple[str, list[str]]], where: str | os.PathLike[str] | None = None,
          copy: str | None = COPY, names: dict[str, dict[str, str]] | None = None
          ) -> list[Row]:
    """One :class:`Row` per chapter, in the order of ``chapters``, a list of ``(stem,
    [exercise numbers])`` (:func:`rnnbook.checks.exercises` gives the book's). This module
    imports nothing of rnnbook: a chapter's ``check`` (:class:`rnnbook.exercise.Chapter`)
    writes here, and the chapters' list comes from the caller. Only the checks run in
    ``copy`` count; an exercise is done when its LATEST check passed. With ``names``
    (``{stem: {number: function name}}``), records follow the exercises' names
    (:func:`by_name`)."""
    done = load(where, copy)
    rows = []
    for stem, numbers in chapters:
        mine = done.get(stem, {})
        if names is not None and stem in names:
            mine = by_name(mine, names[stem])
        now = [n for n in numbers if n in mine and latest(mine[n], copy)]
        best = [n for n in numbers if n in mine and ever(mine[n], copy)]
        rows.append(Row(stem, len(now), len(numbers), [n for n in numbers if n not in now],
                        len(best)))
    return rows


def show(chapters: list[tuple[str, list[str]]],
         where: str | os.PathLike[str] | None = None,
         names: dict[str, dict[str, str]] | None = None) -> None:
    """Print the progress table of ``chapters`` (``rnnbook.progress()`` shows the book's;
    :func:`table` gives its rows); under the grader (``RNNBOOK_GRADING=1``) nothing.

    "latest" counts the exercises whose latest check passed, "best" those that ever did;
    an exercise that passed and then failed is still to do, and marked so."""
    if os.environ.get("RNNBOOK_GRADING") == "1":
        return
    rows = table(chapters, where, names=names)
    records = load(where)
    width = max(len(row.stem) for row in rows)
    print(f"{'chapter':<{width}}  latest  best  still to do (by each exercise's latest check)")
    for row in rows:
        mine = records.get(row.stem, {})
        if names is not None and row.stem in names:
            mine = by_name(mine, names[row.stem])
        todo = [n + (" (passed before, failed last)" if n in mine and ever(mine[n]) else "")
                for n in row.todo]
        rest = ", ".join(todo) if todo else "all done"
        print(f"{row.stem:<{width}}  {f'{row.done}/{row.total}':<6}  "
              f"{f'{row.ever}/{row.total}':<4}  {rest}")
    total = sum(row.total for row in rows)
    print(f"{sum(row.done for row in rows)} of {total} exercises passed their latest check, "
          f"{sum(row.ever for row in rows)} at least once (kept in {where or path()})")
