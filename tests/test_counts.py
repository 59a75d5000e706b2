"""Every count a page states about the exercises, against the exercise table: the headers of
``solutions/NN-*.ipynb`` (``rnnbook.source``: number, points, kind), which
``tests/test_checks.py`` holds to the checks. A new exercise that leaves "Six graded
exercises ... Four are by hand" stale fails here, naming the page and the sentence.

Where counts are stated: the first markdown cell of each ``solutions/NN-*.ipynb`` (its
summary), the ``## Exercises`` section of each chapter ``book/NN-*.ipynb``, and
``book/instructors.md`` (the whole book's count). A summary must state how many exercises
its chapter has; what else it states (how many by hand or API, a range ``4.1 to 4.5`` of one
kind, points in all) is checked when it is there.
"""
import re

import pytest

from conftest import ROOT
from rnnbook import checks, generate, source

WORDS, CLAIMS = generate.WORDS, generate.CLAIMS  # one definition: make notebooks writes them
#: "Exercises 4.1 to 4.5 are **by hand**": every exercise of a range is of that kind
RANGE = re.compile(r"Exercises (?P<first>\d+\.\d+) to (?P<last>\d+\.\d+) are (?:\*\*)?"
                   r"(?P<kind>by hand|API)")


def value(word):
    return int(word) if word.isdigit() else WORDS.index(word.lower())


def table(stem):
    """``{"exercises", "by hand", "API", "points"}`` of a chapter, from its headers."""
    nb = source.read(ROOT / "solutions" / f"{stem}.ipynb")
    return {**generate.exercise_table(nb, stem), "cells": source.exercises(nb, stem)}


def stated(text):
    """``[(what, count, the words)]`` that ``text`` states (its line breaks as spaces)."""
    text = " ".join(text.split())
    return [(what, value(m["n"]), m[0]) for what, pattern in CLAIMS
            for m in re.finditer(pattern, text, re.IGNORECASE)]


def summary(stem):
    """The first markdown cell of ``solutions/<stem>.ipynb``."""
    nb = source.read(ROOT / "solutions" / f"{stem}.ipynb")
    return next(cell.source for cell in nb.cells if cell.cell_type == "markdown")


def chapter_exercises(stem):
    """The ``## Exercises`` section of ``book/<stem>.ipynb`` (to the next heading)."""
    nb = source.read(ROOT / "book" / f"{stem}.ipynb")
    for cell in nb.cells:
        found = re.search(r"^## Exercises\n(.*?)(?=^#|\Z)", cell.source, re.M | re.S)
        if cell.cell_type == "markdown" and found:
            return found[1]
    raise AssertionError(f"book/{stem}.ipynb has no '## Exercises' section")


PAGES = {"solutions/{}.ipynb, its first markdown cell": summary,
         "book/{}.ipynb, its '## Exercises' section": chapter_exercises}


@pytest.mark.parametrize("where", PAGES, ids=["solutions", "chapter"])
@pytest.mark.parametrize("stem", list(checks.CHAPTERS))
def test_a_chapters_summary_states_its_exercise_table(stem, where):
    page, text, counts = where.format(stem), PAGES[where](stem), table(stem)
    claims = stated(text)
    assert "exercises" in [what for what, _, _ in claims], \
        f"{page} does not say how many exercises ({counts['exercises']}) the chapter has"
    for what, count, words in claims:
        assert count == counts[what], f"{page} says '{words}': the chapter has " \
                                      f"{counts[what]} ({what}, from its headers)"
    assert ranges_wrong(text, counts["cells"]) == [], page


def ranges_wrong(text, cells):
    """What is wrong with each "Exercises 4.1 to 4.5 are by hand" in ``text``."""
    numbers, kinds = [cell.number for cell in cells], {cell.number: cell.kind for cell in cells}
    wrong = []
    for m in RANGE.finditer(" ".join(text.split())):
        if m["first"] not in kinds or m["last"] not in kinds:
            wrong.append(f"'{m[0]}': the exercises are {', '.join(numbers)}")
            continue
        inside = numbers[numbers.index(m["first"]):numbers.index(m["last"]) + 1]
        other = [n for n in inside if kinds[n] != m["kind"]]
        if not inside or other:
            wrong.append(f"'{m[0]}': not so for {', '.join(other) or 'an empty range'}")
    return wrong


def test_the_instructors_page_counts_every_exercise():
    total = sum(table(stem)["exercises"] for stem in checks.CHAPTERS)
    text = " ".join((ROOT / "book" / "instructors.md").read_text().split())
    said = [int(n) for n in re.findall(r"all (\d+) exercises", text)]  # (it says none now)
    assert set(said) <= {total}, f"book/instructors.md says all {said} exercises; the book " \
                                 f"has {total}"


def test_the_counts_are_read_as_written():
    """The patterns themselves: a changed count is seen, with the words that state it."""
    text = ("Seven graded exercises practise this chapter.\nFour are by hand, with NumPy. "
            "Three are on the real API. 14 points in all.")
    assert stated(text) == [("exercises", 7, "Seven graded exercises"),
                            ("by hand", 4, "Four are by hand"),
                            ("API", 3, "Three are on the real API"),
                            ("points", 14, "14 points in all")]
    assert stated("Eight exercises, two of them on TensorFlow's and Keras' own APIs") == [
        ("exercises", 8, "Eight exercises"), ("API", 2, "two of them on TensorFlow's and "
                                                        "Keras' own API")]


def test_make_notebooks_writes_the_counts_as_they_were_written():
    """An exercise added: ``generate.recount`` (run by ``make notebooks``) makes every stated
    count the headers', a word as a word (capitalised or not), digits as digits."""
    text = ("Seven graded exercises practise this chapter.\nFour are by hand, with NumPy. "
            "three are on the real\nAPI. 14 points in all.")
    table = {"exercises": 8, "by hand": 5, "API": 3, "points": 15}
    assert generate.counted(text, table) == (
        "Eight graded exercises practise this chapter.\nFive are by hand, with NumPy. "
        "three are on the real\nAPI. 15 points in all.")
    assert generate.counted(text, {**table, "exercises": 21, "points": 15.5}).startswith(
        "21 graded exercises") and "15.5 points in all" in generate.counted(text, {
            **table, "points": 15.5})


def test_a_wrong_range_is_seen():
    cells = [source.ExerciseCell(f"4.{k}", f"f{k}", 1, k, "by hand" if k <= 5 else "API")
             for k in range(1, 9)]  # a made-up chapter: 4.1 to 4.5 by hand, then API
    said = "Exercises 4.1 to 4.5 are **by hand**. Exercises 4.6 to 4.8 are **API**."
    assert ranges_wrong(said, cells) == []
    assert ranges_wrong("Exercises 4.1 to 4.6 are **by hand**", cells) == [
        "'Exercises 4.1 to 4.6 are **by hand': not so for 4.6"]
    assert ranges_wrong("Exercises 4.6 to 4.9 are **API**", cells)[0].startswith(
        "'Exercises 4.6 to 4.9 are **API': the exercises are 4.1, ")
