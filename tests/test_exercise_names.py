"""Exercises are named, not numbered, everywhere but their headings (issues 38 and 54).

An exercise's number is its place in its chapter's solutions notebook (``# Exercise N.K``
headers, read by :func:`rnnbook.source.exercises`). Tests and pages refer to an exercise by its
function name, or derive the number (:func:`number`, :func:`title`); where a page writes a
number beside a name (``rnnbook.generate.NAMED``: "Exercise N.K name", "N.K `name`",
"Exercise N.K: write name"), ``make notebooks`` keeps it the name's
(``rnnbook.generate.renumber_prose``) and this test holds the two to the headings, so an
exercise inserted in the middle of a chapter leaves no stale reference behind. ``make
exercise-check`` runs it.
"""
import functools
import re

import pytest

from conftest import ROOT
from rnnbook import checks, generate, source

#: a number and the name beside it (the one definition: ``make notebooks`` rewrites these)
REFERENCE = generate.NAMED
#: an exercise cited by its number alone in prose: "Exercise 2.2," (not a header's "("), or
#: a possessive (N.K + "'s"): a number ``make notebooks`` cannot keep right (cite the
#: function's name)
BARE = re.compile(r"\bExercises? (\d+\.\d+)(?![\d.]*:? `?[A-Za-z_(])"
                  r"|(?<!TensorFlow )(?<!Python )(?<![\w.])\d\.\d{1,2}'s\b")
PROSE = generate.PROSE


@functools.cache
def numbers() -> dict[str, str]:
    """``{function name: "N.K"}`` of every exercise, from the solutions' headers."""
    return generate.numbers_by_name(ROOT / "solutions")


def number(name: str) -> str:
    """The number of exercise ``name`` ("N.K": its place in the headers)."""
    return numbers()[name]


def title(name: str) -> str:
    """The grader's name of a test: ``Exercise N.K name``."""
    return f"Exercise {number(name)} {name}"


def files():
    found = sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "rnnbook").rglob("*.py"))
    for pattern in PROSE:
        found += sorted(ROOT.glob(pattern))
    return found


def stale(text: str) -> list[str]:
    """Each reference in ``text`` whose number is not its named exercise's."""
    return [f"{m.group(0)!r} ({m.group(2)} is {numbers()[m.group(2)]})"
            for m in REFERENCE.finditer(text)
            if m.group(2) in numbers() and numbers()[m.group(2)] != m.group(1)]


# (not "path": tests/conftest.py's --focus would keep only a chapter notebook's own)
@pytest.mark.parametrize("page", files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_numbered_reference_names_its_exercise(page):
    path, text = page, page.read_text()
    assert not stale(text), (
        f"{path.relative_to(ROOT)}: a number that is not its exercise's (derive it in a "
        f"test: test_exercise_names.number(name)): {stale(text)}")
    if path.suffix == ".md" or path.parent.name != "learners":
        bare = [m.group(0) for m in BARE.finditer(text)
                if path.suffix == ".md" or m.group(0).endswith("'s")]
        assert not bare, f"{path.relative_to(ROOT)}: cite an exercise by its name: {bare}"
    if path.suffix == ".md" or path.name in ("README.md", "CONTRIBUTING.md"):
        assert generate.cited_by_name(text, numbers()) == text, (
            f"{path.relative_to(ROOT)}: run `make notebooks` (it numbers the exercises these "
            f"pages cite by name): {stale(text)}")


def test_the_check_can_fail():
    first = next(iter(numbers()))
    wrong = "9.9" if number(first) != "9.9" else "9.8"
    assert stale(f"as Exercise {wrong} {first} says") and stale(f"| {wrong} `{first}` |")
    assert stale(f'raise NotImplementedError("Exercise {wrong}: write {first}")')
    assert not stale(f"{title(first)}; TensorFlow 1.2 to 1.4; Exercise 9.1 f")
    assert BARE.search("the event file of Exercise 2.2, ") and not BARE.search(
        "# Exercise 1.3 (2 points, by hand)")
    assert BARE.search("as 1.6" "'s outputs") and not BARE.search("TensorFlow 2.19's ops")


def test_the_instructors_core_exercises_are_names_of_their_chapter():
    """*Planning the course*: the column lists function names, each of its own chapter."""
    page = (ROOT / "book" / "instructors.md").read_text()
    rows = [line for line in page.splitlines() if re.match(r"\| \d\. ", line)]
    assert len(rows) == len(checks.CHAPTERS)
    for row, stem in zip(rows, checks.CHAPTERS, strict=True):
        core = row.rstrip(" |").rsplit("|", 1)[1]
        names = re.findall(r"`(\w+)`", core)
        assert names and ", ".join(f"`{n}`" for n in names) == core.strip(), row
        mine = {ex.name for ex in checks.load(stem).exercises}
        assert set(names) <= mine, (stem, set(names) - mine)


def test_make_notebooks_numbers_the_exercises_by_their_place(tmp_path):
    """An exercise inserted mid-chapter with any unused number (1.99) takes its place's
    number; those after it move on, in their headers, titles and every citation of the
    chapter's pages (``rnnbook.generate.renumber``, run by ``make notebooks``)."""
    import nbformat

    from rnnbook import generate

    stem = next(iter(checks.CHAPTERS))
    (tmp_path / "solutions").mkdir()
    (tmp_path / "book").mkdir()
    nb = source.read(ROOT / "solutions" / f"{stem}.ipynb")
    cells = source.exercises(nb)
    third = cells[2]
    n = third.number.split(".")[0]
    new = [nbformat.v4.new_markdown_cell(f"## Exercise {n}.99: New (1 point, by hand)"),
           nbformat.v4.new_code_cell(f"# Exercise {n}.99 (1 point, by hand)\n"
                                     "def new_one(x):\n    return x\n")]
    at = max(i for i, c in enumerate(nb.cells[:third.cell]) if c.source.startswith("## Ex"))
    nb.cells[at:at] = new  # before the third exercise's title
    nb.cells.append(nbformat.v4.new_markdown_cell(
        f"As in Exercise {third.number}; Exercises {cells[0].number} to {third.number}."))
    path = tmp_path / "solutions" / f"{stem}.ipynb"
    path.write_text(generate.text(nb))
    page = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        f"Exercise {third.number} again; TensorFlow {third.number} is a version.")])
    (tmp_path / "book" / f"{stem}.ipynb").write_text(generate.text(page))

    assert generate.renumber(tmp_path / "solutions", check=True) == [
        path, tmp_path / "book" / f"{stem}.ipynb"]
    generate.renumber(tmp_path / "solutions")
    after = source.read(path)
    got = source.exercises(after)
    assert [c.number for c in got] == [f"{n}.{k}" for k in range(1, len(cells) + 2)]
    assert [c.name for c in got] == [*[c.name for c in cells[:2]], "new_one",
                                     *[c.name for c in cells[2:]]]
    moved = f"{n}.{int(third.number.split('.')[1]) + 1}"
    assert after.cells[-1].source == (f"As in Exercise {moved}; Exercises "
                                      f"{cells[0].number} to {moved}.")
    titles = [c.source.split("\n")[0] for c in after.cells if c.source.startswith("## Ex")]
    assert [t.split(":")[0] for t in titles] == [f"## Exercise {c.number}" for c in got]
    assert source.read(tmp_path / "book" / f"{stem}.ipynb").cells[0].source == (
        f"Exercise {moved} again; TensorFlow {third.number} is a version.")
    assert generate.renumber(tmp_path / "solutions") == []  # in place: nothing to do
    assert generate.recount(tmp_path / "solutions") == [path]  # its summary counts one more
    summary = next(c for c in source.read(path).cells if c.cell_type == "markdown").source
    assert f"{generate.WORDS[len(cells) + 1].capitalize()} graded exercises" in summary
    page = tmp_path / "book" / "page.md"  # a page citing by name, as instructors.md does
    cited = (f"(`Exercise {third.number} {third.name}`), TensorFlow {third.number} to 2.1\n"
             f"# Exercise {third.number} (1 point, by hand)\ndef {third.name}(x):\n")
    page.write_text(cited)
    assert generate.renumber_prose(tmp_path / "solutions", check=True) == [page]
    assert generate.renumber_prose(tmp_path / "solutions") == [page]
    assert page.read_text() == cited.replace(f"{third.number} {third.name}",
                                             f"{moved} {third.name}").replace(
        f"# Exercise {third.number} (", f"# Exercise {moved} (")
    nb.cells[at + 1].source = nb.cells[at + 1].source.replace(
        f"{n}.99", third.number)  # two headers of one number: which one is new?
    path.write_text(generate.text(nb))
    with pytest.raises(source.SourceError, match="two exercises' headers say"):
        generate.renumber(tmp_path / "solutions")
