"""Write what is generated from the one source: learner notebooks and the mistakes page.

``python -m rnnbook.generate`` (``make notebooks``):

- ``notebooks/``: from ``solutions/``, every solution block becomes a stub that raises
  NotImplementedError, cells tagged ``solution`` are dropped, outputs and execution counts are
  cleared; checks, hints and text are kept;
- ``book/mistakes.md``: for instructors, every exercise with its points, kind and the mistakes
  its check recognises, written from the checks themselves, so the page cannot drift from them.

A learner notebook whose exercise cells are not as generated (a learner's answers: each
exercise cell keeps the digest of its generated source in its metadata) is never
overwritten: ``make notebooks`` names it, says how to keep it (``rnnbook.workspace``)
and exits 2 having written nothing, unless ``--force`` (``make notebooks FORCE=1``).

``--check`` writes nothing and exits 1 when a file is out of date. The output depends only on
the sources, so regenerating leaves git clean.

The set-up cell's install block (:func:`setup_block`) is written here once: on Colab it
installs the package from the book's repository; elsewhere it says what to install and stops,
so it never installs over a learner's own copy. ``scripts/setup_cell.py`` writes it into the
first code cell of every notebook in ``book/`` and ``solutions/``; the learner copies take it
from ``solutions/``.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
from collections.abc import Callable
from typing import Any

import nbformat

from rnnbook import notebook, source

ROOT = pathlib.Path(__file__).resolve().parent.parent
KEEP_METADATA = ("kernelspec", "rnnbook")
CONFIG = ROOT / "_config.yml"

#: The install command the set-up cell's error names off Colab (the learner release's README
#: gives the same one).
INSTALL = 'pip install -e ".[jupyter]"'
#: The set-up cell's install block; ``{url}`` is the repository the book is built from.
SETUP_BLOCK = """\
if importlib.util.find_spec("rnnbook") is None:  # not installed in this kernel's Python
    import sys

    if "google.colab" not in sys.modules:  # never install over a copy of your own
        raise ModuleNotFoundError('rnnbook is not installed: in your clone of the '
                                  'book, run  pip install -e ".[jupyter]"  then '
                                  'restart the kernel')
    %pip install --quiet "rnnbook @ git+{url}\""""
#: The first line of the block, and its last one's start (where a block is found in a cell).
SETUP_FIRST = SETUP_BLOCK.splitlines()[0].split("  #")[0]
SETUP_LAST = "    %pip install"
assert INSTALL in SETUP_BLOCK


def repository_url(config: str | os.PathLike[str] = CONFIG) -> str:
    """The book's repository as ``_config.yml`` sets it (``repository.url``): the Colab install
    line of every notebook in the repository names it."""
    import yaml  # instructor side: PyYAML comes with jupyter-book

    return yaml.safe_load(pathlib.Path(config).read_text())["repository"]["url"]


def repository_from(value: Any) -> str:
    """A repository's URL from ``value``: a URL as it is, a GitHub ``owner/name`` as
    ``https://github.com/owner/name``; raises :class:`source.SourceError` otherwise."""
    value = value.strip().rstrip("/")
    if "://" in value:
        return value
    if value.count("/") != 1 or not all(value.split("/")):
        raise source.SourceError(f"{value!r}: give a repository's URL or a GitHub owner/name")
    return f"https://github.com/{value}"


def book_url(repository: str) -> str:
    """Where the book built from ``repository`` (a URL) is published: GitHub Pages
    (``https://owner.github.io/name/``) for a GitHub repository, as the Pages workflow
    (.github/workflows/book.yml) publishes it; the repository itself for any other host."""
    found = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?", repository)
    if found:
        return f"https://{found.group(1).lower()}.github.io/{found.group(2)}/"
    return repository.rstrip("/") + "/"


#: a MyST cross-reference in a notebook's text: {doc}`text <target>`, {doc}`target`,
#: {ref}`text <label>`, {ref}`label`
CROSS_REFERENCE = re.compile(r"\{(doc|ref)\}`(?:([^`<]*?)\s*<([^`>]+)>|([^`<]+))`")


def book_labels(book: pathlib.Path = ROOT / "book") -> dict[str, tuple[str, str]]:
    """``{label: (page, heading)}`` of every ``(label)=`` in the book's pages: ``page`` as a
    path under the book's root without suffix (``book/01-basic-rnn-cell``)."""
    labels = {}
    for path in sorted(book.glob("*.ipynb")) + sorted(book.glob("*.md")):
        if path.suffix == ".ipynb":
            nb = nbformat.read(str(path), as_version=4)
            text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        else:
            text = path.read_text()
        for found in re.finditer(r"^\(([\w-]+)\)=\s*\n#+\s*(.+)$", text, re.MULTILINE):
            labels[found.group(1)] = (f"book/{path.stem}", found.group(2).strip())
    return labels


def linked_to_book(text: str, book: str, page: str, where: str = "cell") -> str:
    """``text`` (markdown of the notebook ``page``, e.g. ``notebooks/06-gru-layouts``) with
    every {doc} and {ref} cross-reference made a link into the published book at ``book``:
    a copy that lives outside the book (the learner release) has no dead relative link."""
    labels: dict[str, tuple[str, str]] | None = None

    def link(found: re.Match[str]) -> str:
        nonlocal labels
        role, shown, target = found.group(1), found.group(2), found.group(3) or found.group(4)
        target = target.strip()
        if role == "doc":
            path = os.path.normpath(os.path.join(os.path.dirname(page), target))
            return f"[{shown or target}]({book}{path}.html)"
        labels = book_labels() if labels is None else labels
        if target not in labels:
            raise source.SourceError(f"{where}: {{ref}}`{target}` names no label of the book")
        doc, heading = labels[target]
        return f"[{shown or heading}]({book}{doc}.html#{target})"

    return CROSS_REFERENCE.sub(link, text)


def setup_block(url: str) -> str:
    """The install block of the set-up cell, installing from the repository at ``url``."""
    return SETUP_BLOCK.format(url=url)


def with_setup_block(code: str, url: str, where: str = "cell") -> str:
    """``code`` (a set-up cell's source) with its install block replaced by
    :func:`setup_block` for ``url``; raises :class:`source.SourceError` without one."""
    lines = code.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(SETUP_FIRST))
        end = next(i for i in range(start, len(lines)) if lines[i].startswith(SETUP_LAST))
    except StopIteration:
        raise source.SourceError(f"{where}: no install block (a line {SETUP_FIRST!r} down to "
                                 f"{SETUP_LAST.strip()!r})") from None
    return "\n".join(lines[:start] + setup_block(url).split("\n") + lines[end + 1:])


def setup_cell(nb: nbformat.NotebookNode) -> int:
    """The index of ``nb``'s set-up cell: its first code cell."""
    return next(i for i, cell in enumerate(nb.cells) if cell.cell_type == "code")


def learner_copy(nb: nbformat.NotebookNode, where: str = "notebook") -> nbformat.NotebookNode:
    """The learner's notebook for source notebook ``nb`` (``nb`` is not changed)."""
    headers = {cell.cell: cell for cell in source.exercises(nb, where)}
    out = nbformat.v4.new_notebook()
    out.metadata = {k: nb.metadata[k] for k in KEEP_METADATA if k in nb.metadata}
    for index, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if source.SOLUTION_TAG in tags:
            continue
        text = cell.source
        if cell.cell_type == "code":
            ex = headers.get(index)
            number, name = (ex.number, ex.name) if ex else (None, None)
            text = source.stub(text, number, name, f"{where}, cell {index}")
            new = nbformat.v4.new_code_cell(text)
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(text)
        else:
            new = nbformat.v4.new_raw_cell(text)
        new.id = cell.get("id", new.id)
        if cell.cell_type == "code" and index in headers:  # a learner's work changes it
            new.metadata["rnnbook"] = {notebook.GENERATED: notebook.digest(text)}
        if tags:
            new.metadata["tags"] = list(tags)
        out.cells.append(new)
    return out


def text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


#: an exercise cited by number in a notebook's prose: "Exercise 2.4", "Exercises 4.1 to 4.5",
#: "Exercises 3.1 and 3.5", and a title "## Exercise 1.5:"
CITED = re.compile(r"(Exercises? )(\d+\.\d+)((?: (?:to|and) )(\d+\.\d+))?")


def numbering(nb: nbformat.NotebookNode, chapter: int, where: str) -> dict[str, str]:
    """``{number in the headers: number by position}`` of ``nb``'s exercises (chapter
    ``chapter``): the K-th header is N.K, whatever number it was written with. A new
    exercise's header may say any number not used in the chapter (``# Exercise 1.99``)."""
    said = [cell.number for cell in source.exercises(nb, where)]
    twice = sorted({n for n in said if said.count(n) > 1})
    if twice:
        raise source.SourceError(f"{where}: two exercises' headers say {', '.join(twice)}: "
                                 "write a number the chapter does not use in the new one's "
                                 "header (e.g. 99): `make notebooks` renumbers them by place")
    return {n: f"{chapter}.{k}" for k, n in enumerate(said, 1)}


def renumbered(text_: str, numbers: dict[str, str], header: bool) -> str:
    """``text_`` with each exercise number of ``numbers`` changed to its place: a code
    cell's header ``# Exercise N.K (`` (``header``), or every citation and title
    ``Exercise N.K`` of a markdown cell."""
    def cited(m: re.Match[str]) -> str:
        first = numbers.get(m[2], m[2])
        return m[1] + first + (m[3].replace(m[4], numbers.get(m[4], m[4])) if m[3] else "")

    if header:  # only the header (a code cell's citations are the learner's code)
        return source.HEADER_NUMBER.sub(
            lambda m: m[1] + numbers.get(m[2], m[2]) + m[3], text_, count=1)
    return CITED.sub(cited, text_)


def renumber(solutions_dir: str | os.PathLike[str], check: bool = False
             ) -> list[pathlib.Path]:
    """Number every chapter's exercises by their place in ``solutions/NN-*.ipynb``: the
    headers, and the titles and citations ``Exercise N.K`` in the markdown of every chapter's
    solutions notebook and book page (``book/NN-*.ipynb``), so no one renumbers by hand when
    an exercise is inserted. Returns the paths written (with ``check``: that would be)."""
    solutions = sorted(pathlib.Path(solutions_dir).glob("[0-9]*.ipynb"))
    numbers: dict[str, str] = {}
    for path in solutions:
        numbers |= {old: new for old, new in
                    numbering(source.read(path), int(path.name.split("-")[0]),
                              str(path)).items() if old != new}
    if not numbers:
        return []
    book = pathlib.Path(solutions_dir).parent / "book"
    changed = []
    for target in [*solutions, *sorted(book.glob("[0-9]*.ipynb"))]:
        page = source.read(target)
        for cell in page.cells:
            if cell.cell_type != "code":
                cell.source = renumbered(cell.source, numbers, header=False)
            elif target in solutions and source.HEADER.match(cell.source.split("\n", 1)[0]):
                cell.source = renumbered(cell.source, numbers, header=True)
        if text(page) != target.read_text():
            changed.append(target)
            if not check:
                target.write_text(text(page))
    return changed


#: how a learner keeps what ``make notebooks`` refuses to overwrite
#: (:func:`learner_work`)
WAY_OUT = ("keep your work in your own copy: `make workspace` (python -m "
           "rnnbook.workspace init) copies notebooks/ into my-notebooks/, which git "
           "ignores and updates never overwrite; then `make notebooks FORCE=1` "
           "overwrites notebooks/")


def learner_work(target: pathlib.Path, solution: pathlib.Path) -> str | None:
    """Why the learner notebook ``target`` holds a learner's work (the first exercise
    cell that is not as generated), or None. A cell generated with a digest of its
    source (:data:`notebook.GENERATED`) is the learner's when the digest no longer
    matches, whatever the solutions were then: so a notebook generated from older
    solutions is regenerated. A cell without one (generated before digests) is the
    learner's when it differs from the one ``solution`` generates. A file that is not a
    notebook is kept too."""
    try:
        nb = source.read(target)
    except source.SourceError as error:
        return str(error)
    wanted: dict[str, str] | None = None
    for index, cell in enumerate(nb.cells):
        first = cell.source.split("\n", 1)[0] if cell.cell_type == "code" else ""
        header, name = source.HEADER.match(first), source.DEF.search(cell.source)
        changed = notebook.edited(cell) if cell.cell_type == "code" else None
        if changed is None and header and name:
            if wanted is None:
                new = learner_copy(source.read(solution), str(solution))
                wanted = {found["name"]: c.source for c in new.cells if c.cell_type
                          == "code" and (found := source.DEF.search(c.source))}
            changed = wanted.get(name["name"]) != cell.source
        if changed:
            what = f"exercise {header['number']} " if header else ""
            title = f"`{name['name']}`" if name else f"cell {index}"
            return f"{target}: {what}{title} is not as generated (your answer?)"
    return None


#: the pages outside the notebooks that may write a number beside an exercise's name
#: (relative to the repository): :func:`renumber_prose` keeps each number its exercise's
PROSE = ("README.md", "CONTRIBUTING.md", "book/*.md")
#: a number and the name beside it: "Exercise 1.3 name", "1.1 `name`", "Exercise 1.3: write
#: name" (a name that is no exercise's is left alone: "TensorFlow 1.2 to 1.4")
NAMED = re.compile(r"(?<![\w.])(\d+\.\d+)(?::? write)?:? `?([A-Za-z_]\w*)`?")
#: a header shown above its function in a page's example: "# Exercise 1.3 (...)\ndef name("
HEADED = re.compile(r"(# Exercise )(\d+\.\d+)( \([^)\n]*\)\n\s*def )(\w+)\(")


def numbers_by_name(solutions_dir: str | os.PathLike[str]) -> dict[str, str]:
    """``{function name: "N.K"}`` of every exercise, from the headers in ``solutions_dir``."""
    return {cell.name: cell.number
            for path in sorted(pathlib.Path(solutions_dir).glob("[0-9]*.ipynb"))
            for cell in source.exercises(source.read(path), str(path))}


def cited_by_name(text_: str, numbers: dict[str, str]) -> str:
    """``text_`` with the number beside each exercise's name (:data:`NAMED`, :data:`HEADED`)
    made that exercise's number in ``numbers``."""
    def named(m: re.Match[str]) -> str:
        return numbers.get(m[2], m[1]) + m[0][len(m[1]):]

    return HEADED.sub(lambda m: m[1] + numbers.get(m[4], m[2]) + m[3] + m[4] + "(",
                      NAMED.sub(named, text_))


def renumber_prose(solutions_dir: str | os.PathLike[str], check: bool = False
                   ) -> list[pathlib.Path]:
    """The number beside every exercise's name in :data:`PROSE` (beside ``solutions_dir``)
    made its place's, so that a page citing "Exercise N.K <name>" needs no hand edit when
    an exercise is inserted before it. Returns the paths written (``check``: that would be)."""
    root, numbers = pathlib.Path(solutions_dir).parent, numbers_by_name(solutions_dir)
    changed = []
    for pattern in PROSE:
        for path in sorted(root.glob(pattern)):
            if path.name == MISTAKES_PAGE.name and path.parent.name == "book":
                continue  # generated whole by write_mistakes_page
            page = path.read_text()
            if cited_by_name(page, numbers) != page:
                changed.append(path)
                if not check:
                    path.write_text(cited_by_name(page, numbers))
    return changed


#: the counts a chapter states about its exercises, in its solutions notebook's first markdown
#: cell and its book page's ``## Exercises`` section: (what is counted, the pattern, whose
#: group "n" is the count); :func:`recount` writes them, ``tests/test_counts.py`` reads them
WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
NUMBER = r"(?<![\w.])(?P<n>\d+|" + "|".join(WORDS) + r")"
CLAIMS = (
    ("exercises", NUMBER + r"\s+(?:graded\s+)?(?:exercises|functions)\b"),
    ("by hand", NUMBER + r"\s+(?:are|of\s+them\s+are)\s+(?:\*\*)?by\s+hand"),
    ("API", NUMBER + r"\s+(?:are|of\s+them)\s+on\s+(?:the\s+real|TensorFlow's\s+and"
            r"\s+Keras'\s+own)\s+API"),
    ("points", NUMBER + r"\s+points\s+in\s+all"),
)
EXERCISES_SECTION = re.compile(r"^## Exercises\n.*?(?=^#|\Z)", re.M | re.S)


def exercise_table(nb: nbformat.NotebookNode, where: str = "") -> dict[str, float]:
    """``{"exercises", "by hand", "API", "points"}`` of a chapter's solutions notebook, from
    its headers."""
    cells = source.exercises(nb, where)
    hand = sum(cell.by_hand for cell in cells)
    return {"exercises": len(cells), "by hand": hand, "API": len(cells) - hand,
            "points": sum(cell.points for cell in cells)}


def counted(text_: str, table: dict[str, float]) -> str:
    """``text_`` with every count :data:`CLAIMS` finds made the table's, written as it was
    (a word, capitalised or not, or digits)."""
    def one(what: str) -> Callable[[re.Match[str]], str]:
        def put(m: re.Match[str]) -> str:
            was, count = m["n"], table[what]
            if was.isdigit() or count != int(count) or int(count) >= len(WORDS):
                now = f"{count:g}"
            else:
                now = WORDS[int(count)]
                now = now.capitalize() if was[0].isupper() else now
            return now + m[0][len(was):]
        return put
    for what, pattern in CLAIMS:
        text_ = re.sub(pattern, one(what), text_, flags=re.IGNORECASE)
    return text_


def recount(solutions_dir: str | os.PathLike[str], check: bool = False
            ) -> list[pathlib.Path]:
    """The counts each chapter states (:data:`CLAIMS`: its solutions notebook's first
    markdown cell, its book page's ``## Exercises`` section) made its headers', so an
    exercise added or removed needs no count edited by hand. Returns the paths written
    (``check``: that would be)."""
    changed = []
    book = pathlib.Path(solutions_dir).parent / "book"
    for path in sorted(pathlib.Path(solutions_dir).glob("[0-9]*.ipynb")):
        nb = source.read(path)
        table = exercise_table(nb, str(path))
        first = next((c for c in nb.cells if c.cell_type == "markdown"), None)
        pages = [(path, nb, [first] if first is not None else [])]
        if (book / path.name).exists():
            page = source.read(book / path.name)
            pages.append((book / path.name, page, [c for c in page.cells
                                                   if c.cell_type == "markdown"]))
        for target, doc, cells in pages:
            for cell in cells:
                if target.parent == book:  # the chapter: only its ## Exercises section
                    found = EXERCISES_SECTION.search(cell.source)
                    if found:
                        cell.source = (cell.source[:found.start()]
                                       + counted(found[0], table)
                                       + cell.source[found.end():])
                else:
                    cell.source = counted(cell.source, table)
            if text(doc) != target.read_text():
                changed.append(target)
                if not check:
                    target.write_text(text(doc))
    return changed


def generate(solutions_dir: str | os.PathLike[str], notebooks_dir: str | os.PathLike[str],
             check: bool = False, force: bool = False) -> list[pathlib.Path]:
    """Write (or with ``check``, compare) every learner notebook, the exercises numbered by
    their place first (:func:`renumber`, then the chapters' counts, :func:`recount`, and the
    pages' :func:`renumber_prose`); returns the stale paths. Unless ``force``, a notebook that
    holds a learner's work (:func:`learner_work`) is never overwritten: a
    :class:`source.SourceError` names it, before anything is written."""
    sources = sorted(pathlib.Path(solutions_dir).glob("*.ipynb"))
    if not sources:
        raise source.SourceError(f"{solutions_dir}: no .ipynb files to generate from")
    if not check and not force:
        for path in sources:
            target = pathlib.Path(notebooks_dir) / path.name
            why = learner_work(target, path) if target.exists() else None
            if why:
                raise source.SourceError(f"{why}: `make notebooks` would overwrite it; "
                                         + WAY_OUT)
    stale = renumber(solutions_dir, check)
    if stale and check:
        return stale
    stale += recount(solutions_dir, check) + renumber_prose(solutions_dir, check)
    for path in sources:
        wanted = text(learner_copy(source.read(path), str(path)))
        target = pathlib.Path(notebooks_dir) / path.name
        if target.exists() and target.read_text() == wanted:
            continue
        stale.append(target)
        if not check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(wanted)
    return stale


MISTAKES_PAGE = ROOT / "book" / "mistakes.md"


def mistakes_page(solutions_dir: str | os.PathLike[str]) -> str:
    """The text of ``book/mistakes.md``: per chapter, per exercise, the mistakes its check
    names (points and kind from the headers in ``solutions/``)."""
    from rnnbook import checks
    from rnnbook.compare import type_sentence
    from rnnbook.plaindata import changed_sentence

    lines = ["# Common mistakes, exercise by exercise", "",
             "Generated by `make notebooks` from the checks (`rnnbook/checks/`): every mistake "
             "below is one a check recognises and names in its feedback, and in the class "
             "report's counts. Use it to plan a class: the class report says how many of your "
             "students made each one.", "",
             "On every exercise, a function that changes an argument in place (an array's "
             "values, or what a list holds) fails, in the notebook and in the grader, with "
             f"this mistake (here for an argument `x`): {changed_sentence('x')}", "",
             "An answer of several parts earns the points of the parts right on every trial "
             "(*Points* below: equal shares unless the exercise weighs its parts), never all "
             "of them when it is wrong.", ""]
    for stem in checks.CHAPTERS:
        chapter = checks.load(stem)
        path = pathlib.Path(solutions_dir) / f"{stem}.ipynb"
        cells = {c.name: c for c in source.exercises(source.read(path), str(path))}
        lines += [f"## Chapter {chapter.number}: `{stem}`", ""]
        for ex in chapter.exercises:
            cell = cells[ex.name]
            parts = f"{cell.parts} parts, " if cell.parts > 1 else ""
            points = f"{cell.points} point{'s' if cell.points != 1 else ''}, {parts}{cell.kind}"
            lines += [f"### Exercise {ex.number} `{ex.name}` ({points})", "",
                      f"Returns {ex.task}."
                      + (" The type is part of the answer (an array where one array is "
                         "asked for)." if ex.same_type else ""), ""]
            if ex.parts:
                weights = ex.part_weights
                lines += ["Points: " + ", ".join(
                    f"{name} {cell.points * w / sum(weights):.3g}"
                    for name, w in zip(ex.parts, weights, strict=True)) + ".", ""]
            named = [m.sentence for m in ex.mistakes] + [type_sentence(ex)] * ex.same_type
            lines += [f"- {sentence}" for sentence in named] or ["- (no mistake named yet)"]
            lines.append("")
    return "\n".join(lines)


def write_mistakes_page(solutions_dir: str | os.PathLike[str],
                        target: str | os.PathLike[str] = MISTAKES_PAGE,
                        check: bool = False) -> list[pathlib.Path]:
    """Write (or with ``check``, compare) the mistakes page; returns ``[target]`` if stale."""
    wanted = mistakes_page(solutions_dir)
    target = pathlib.Path(target)
    if target.exists() and target.read_text() == wanted:
        return []
    if not check:
        target.write_text(wanted)
    return [target]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnbook.generate", description=__doc__.split("\n")[0])
    parser.add_argument("--solutions", default=ROOT / "solutions", type=pathlib.Path)
    parser.add_argument("--out", default=ROOT / "notebooks", type=pathlib.Path)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if out of date")
    parser.add_argument("--force", action="store_true",
                        help="overwrite notebooks that hold a learner's work "
                        "(make FORCE=1)")
    args = parser.parse_args(argv)
    try:
        stale = generate(args.solutions, args.out, check=args.check, force=args.force)
        if args.solutions == ROOT / "solutions":  # the book's own page, from the book's checks
            stale += write_mistakes_page(args.solutions, check=args.check)
    except source.SourceError as error:
        print(f"generate: error: {error}", file=sys.stderr)
        return 2
    for path in stale:
        print(f"{'out of date' if args.check else 'wrote'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
