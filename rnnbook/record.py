"""A self-learner's progress: which exercises have passed their check, kept on this computer.

Every ``check(...)`` that passes is written down in a small JSON file in the user's home
(``~/.rnnbook/progress.json``; ``RNNBOOK_PROGRESS`` names another file), never in the
repository. ``rnnbook.progress()`` prints a table of exercises done per chapter; each exercise
notebook ends with it. Nothing here is graded: the grader never reads this file.

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
from typing import Any

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
                         and copy in r.get("copies", [copy])})}


def record(stem: str, number: str, name: str, where: str | os.PathLike[str] | None = None,
           copy: str | None = COPY) -> bool:
    """Note that exercise ``number`` (``name``) of chapter ``stem`` passed its check, now, in
    ``copy`` of the book (the copies that passed the same exercise before are kept).

    Written atomically (a temporary file renamed over the old one), so an interrupted write
    never loses earlier progress. Returns False (and changes nothing) when the file cannot be
    written, for example in a read-only home.
    """
    where = pathlib.Path(where) if where else path()
    done = load(where, copy=None)
    when = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    before = done.get(stem, {}).get(number, {})
    copies = set(before.get("copies", [])) if before.get("name") == name else set()
    done.setdefault(stem, {})[number] = {"name": name, "passed": when,
                                         "copies": sorted(copies | {copy})}
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=where.parent, delete=False,
                                         prefix=".progress-", suffix=".json") as out:
            json.dump({"version": VERSION, "passed": done}, out, indent=1, sort_keys=True)
        os.replace(out.name, where)
    except OSError:
        return False
    return True


def table(chapters: list[tuple[str, list[str]]], where: str | os.PathLike[str] | None = None,
          copy: str | None = COPY) -> list[tuple[str, int, int, list[str]]]:
    """One row per chapter: ``(stem, done, total, numbers still to do)``, in the order of
    ``chapters``, a list of ``(stem, [exercise numbers])`` (:func:`rnnbook.checks.exercises`
    gives the book's). This module imports nothing of rnnbook: a chapter's ``check``
    (:class:`rnnbook.exercise.Chapter`) writes here, and the chapters' list comes from the
    caller. Only the passes made in ``copy`` count."""
    done = load(where, copy)
    rows = []
    for stem, numbers in chapters:
        passed = [n for n in numbers if n in done.get(stem, {})]
        rows.append((stem, len(passed), len(numbers), [n for n in numbers if n not in passed]))
    return rows


def show(chapters: list[tuple[str, list[str]]],
         where: str | os.PathLike[str] | None = None) -> None:
    """Print the progress table of ``chapters`` (``rnnbook.progress()`` shows the book's;
    :func:`table` gives its rows); under the grader (``RNNBOOK_GRADING=1``) nothing."""
    if os.environ.get("RNNBOOK_GRADING") == "1":
        return
    rows = table(chapters, where)
    width = max(len(stem) for stem, *_ in rows)
    print(f"{'chapter':<{width}}  done  still to do")
    for stem, passed, total, todo in rows:
        rest = ", ".join(todo) if todo else "all done"
        print(f"{stem:<{width}}  {passed}/{total}   {rest}")
    total = sum(r[2] for r in rows)
    print(f"{sum(r[1] for r in rows)} of {total} exercises passed "
          f"(kept in {where or path()})")
