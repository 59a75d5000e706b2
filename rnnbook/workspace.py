"""A learner's own copy of the exercise notebooks, which no update of the book
overwrites.

    python -m rnnbook.workspace init    # (make workspace) notebooks/ -> my-notebooks/
    python -m rnnbook.workspace update  # after `git pull`: my-notebooks/ up to date

Both do the same, safely, as often as wanted. ``my-notebooks/`` (git ignores it) sits
beside ``notebooks/`` (in a clone of the book or in the learner release), so its
notebooks' links into the book work as theirs do. A notebook that is not there yet is
copied. One whose version in ``notebooks/`` changed since it was copied
(``my-notebooks/.base/`` keeps the copied version) is rebuilt from the new version, and
the learner's work is carried over:

- each exercise's function, by the function's name (wherever the exercise moved,
  whatever its new number), when the learner changed it
  (:func:`rnnbook.notebook.edited`);
- the learner's own cells, after the cell of the book they followed;
- the learner's edits of the book's other cells, where the book left that cell as it
  was.

What cannot be carried (an exercise renamed or removed, a signature changed, a cell both
the learner and the book changed) is kept as text at the end of the notebook, under a
heading that says so, and listed on the terminal. The notebook as it was is first copied
to ``my-notebooks/backups/<stem>.<date>.ipynb`` (never over an earlier backup). A
notebook the learner never touched is replaced. A second run writes nothing and says so;
a notebook that cannot be read gets a one-line error and is left as it is.
"""
from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import datetime
import pathlib
import sys

import nbformat

from rnnbook import notebook

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: the book's notebooks (a clone's or the learner release's), and the learner's copies
NOTEBOOKS, WORKSPACE = ROOT / "notebooks", ROOT / "my-notebooks"
#: in the workspace: the book's notebooks as last copied, the learner's old versions
BASE, BACKUPS = ".base", "backups"
KEPT_TITLE = "## Kept by the update"


@dataclasses.dataclass(frozen=True)
class Kept:
    """A cell of the learner's that the update could not put in place."""

    title: str  # "`rnn_step` (exercise 1.3)"
    why: str  # "its signature changed: (x, h) is now (x, h, kernel)"
    cell: nbformat.NotebookNode


@dataclasses.dataclass
class Merged:
    """A notebook rebuilt from the book's new version with the learner's work."""

    nb: nbformat.NotebookNode
    carried: list[str]  # the exercise functions carried over
    kept: list[Kept]


def _function(code: str, name: str) -> ast.FunctionDef | None:
    """The top-level ``def name`` of ``code``; None if there is none or no parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    return next((node for node in tree.body
                 if isinstance(node, ast.FunctionDef) and node.name == name), None)


def _signature(code: str, name: str) -> str | None:
    found = _function(code, name)
    return None if found is None else ast.unparse(found.args)


@dataclasses.dataclass(frozen=True)
class Span:
    """Where a cell's ``def name`` is: its lines ``[start, end)``, decorators included;
    its head (the ``def`` line and the docstring) ends before line ``body``."""

    lines: list[str]
    start: int
    body: int
    end: int

    def outside(self) -> list[str]:
        return self.lines[:self.start] + self.lines[self.end:]

    def head(self) -> list[str]:
        return self.lines[self.start:self.body]


def _span(code: str, name: str) -> Span | None:
    found = _function(code, name)
    if found is None or found.end_lineno is None:
        return None
    start = min([found.lineno] + [d.lineno for d in found.decorator_list]) - 1
    first = found.body[0]
    documented = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)
    body = first.end_lineno if documented and first.end_lineno else first.lineno - 1
    return Span(code.split("\n"), start, body, found.end_lineno)


def carried(mine: str, new: str, base: str | None, name: str) -> str:
    """The new exercise cell ``new`` with the learner's ``def name`` of ``mine`` in
    place of its own; with the new docstring where the learner kept the old one. When
    the learner changed the cell outside the function too (a helper of their own), or it
    does not parse, the learner's whole cell, under the new cell's header line."""
    ours, theirs = _span(mine, name), _span(new, name)
    before = _span(base, name) if base is not None else theirs
    if ours and theirs and before and ours.outside() == before.outside():
        head = theirs.head() if ours.head() == before.head() else ours.head()
        function = head + ours.lines[ours.body:ours.end]
        return "\n".join(theirs.lines[:theirs.start] + function
                         + theirs.lines[theirs.end:])
    first, _, rest = mine.partition("\n")
    if notebook.HEADER.match(first):
        return new.split("\n", 1)[0] + "\n" + rest
    return mine


def _exercise_names(nb: nbformat.NotebookNode) -> dict[int, str]:
    """``{cell index: function name}`` of a notebook's exercise cells (a header)."""
    found = {}
    for index, cell in enumerate(nb.cells):
        name = notebook.DEF.search(cell.source) if _number(cell) else None
        if cell.cell_type == "code" and name:
            found[index] = name["name"]
    return found


def _number(cell: nbformat.NotebookNode) -> str:
    header = notebook.HEADER.match(cell.source.split("\n", 1)[0])
    return f" (exercise {header['number']})" if header else ""


def merge(mine: nbformat.NotebookNode, base: nbformat.NotebookNode | None,
          new: nbformat.NotebookNode, today: str) -> Merged:
    """``new`` with the learner's work of ``mine`` carried over (the module's docstring
    says how); ``base`` is the version ``mine`` was copied from (None: not known). No
    argument is changed."""
    out = copy.deepcopy(new)
    base_cells = {c.get("id"): c for c in base.cells} if base is not None else {}
    base_names = {} if base is None else {
        base.cells[i].get("id"): n for i, n in _exercise_names(base).items()}
    new_names = {out.cells[i].get("id"): n for i, n in _exercise_names(out).items()}
    by_name: dict[str, nbformat.NotebookNode] = {}  # the learner's cell of each one
    for cell in mine.cells:
        if cell.cell_type != "code":
            continue
        name = base_names.get(cell.get("id")) or new_names.get(cell.get("id"))
        found = notebook.DEF.search(cell.source)
        if found and (name is None or found["name"] == name):
            by_name.setdefault(found["name"], cell)
    base_by_name = {n: base_cells[i] for i, n in base_names.items()}

    def answered(cell: nbformat.NotebookNode,
                 book: nbformat.NotebookNode | None) -> bool:
        changed = notebook.edited(cell)
        if changed is not None:
            return changed
        return book is None or cell.source != book.source

    placed: dict[int, nbformat.NotebookNode] = {}  # id() of the learner's: its place
    kept: list[Kept] = []
    done: list[str] = []
    mine_ids = {c.get("id"): c for c in mine.cells}
    for cell in out.cells:
        name = new_names.get(cell.get("id"))
        if name is not None:
            ours = by_name.get(name)
            if ours is None:
                continue
            placed[id(ours)] = cell
            old = base_by_name.get(name)
            if not answered(ours, old if base is not None else cell):
                continue
            was, now = _signature(ours.source, name), _signature(cell.source, name)
            if was is not None and now is not None and was != now:
                kept.append(Kept(f"`{name}`{_number(ours)}", "its signature changed: "
                                 f"({was}) is now ({now})", ours))
                continue
            cell.source = carried(ours.source, cell.source,
                                  old.source if old is not None else None, name)
            cell.metadata = copy.deepcopy(ours.get("metadata", {})) | {
                k: v for k, v in cell.metadata.items() if k == "rnnbook"}
            done.append(name)
            continue
        ours = mine_ids.get(cell.get("id"))
        if ours is None or ours.cell_type != cell.cell_type:
            continue
        placed[id(ours)] = cell
        book = base_cells.get(cell.get("id"))
        if book is None or ours.source == book.source:
            continue  # not known to be edited, or not edited: the book's new text
        if cell.source == book.source:
            cell.source = ours.source
        else:
            kept.append(Kept(f"your edit of a {ours.cell_type} cell", "the book "
                             "changed this cell too (its new text is in place)", ours))
    mine_names = {id(c): n for n, c in by_name.items()}
    leftover: list[tuple[nbformat.NotebookNode | None, nbformat.NotebookNode]] = []
    anchor: nbformat.NotebookNode | None = None
    for cell in mine.cells:
        if id(cell) in placed:
            anchor = placed[id(cell)]
            continue
        book = base_cells.get(cell.get("id"))
        name = mine_names.get(id(cell)) or base_names.get(cell.get("id"))
        if name is not None and cell.get("id") in base_cells | new_names:
            if answered(cell, book):
                kept.append(Kept(f"`{name}`{_number(cell)}",
                                 "the exercise was renamed or removed", cell))
        elif cell.get("id") in base_cells:
            if book is not None and cell.source != book.source:
                kept.append(Kept(f"your edit of a {cell.cell_type} cell",
                                 "the book removed this cell", cell))
        else:  # the learner's own cell: after the book's cell it followed
            leftover.append((anchor, cell))
    for anchor, cell in reversed(leftover):
        where = 0 if anchor is None else next(
            i for i, c in enumerate(out.cells) if c is anchor) + 1
        out.cells.insert(where, copy.deepcopy(cell))
    if kept:
        out.cells += _kept_cells(kept, today)
    return Merged(out, done, kept)


def _fenced(text: str, language: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


def _kept_cells(kept: list[Kept], today: str) -> list[nbformat.NotebookNode]:
    """A heading, then each kept cell as text (never run: an old function of the same
    name must not replace the exercise's when the notebook runs, nor in the grader)."""
    cells = [nbformat.v4.new_markdown_cell(
        f"{KEPT_TITLE} of {today}\n\nThe book changed where these cells of yours were, "
        "so `python -m rnnbook.workspace update` could not put them back in place. "
        "They are kept here as text, never run: copy what you need into the exercises "
        "above, then delete this part. The whole notebook as it was is in "
        f"`{BACKUPS}/`.")]
    for item in kept:
        language = "python" if item.cell.cell_type == "code" else item.cell.cell_type
        cells.append(nbformat.v4.new_markdown_cell(
            f"### {item.title}: {item.why}\n\n{_fenced(item.cell.source, language)}"))
    return cells


def backup(path: pathlib.Path, today: str) -> pathlib.Path:
    """Copy ``path`` into the workspace's backups, dated, never over an earlier one."""
    folder = path.parent / BACKUPS
    folder.mkdir(exist_ok=True)
    target, n = folder / f"{path.stem}.{today}{path.suffix}", 1
    while target.exists():
        n += 1
        target = folder / f"{path.stem}.{today}-{n}{path.suffix}"
    target.write_bytes(path.read_bytes())
    return target


def _write(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` through a temporary file: an interrupted write leaves the old."""
    part = path.with_name(f".{path.name}.part")
    part.write_bytes(data)
    part.replace(path)


def update(notebooks: pathlib.Path = NOTEBOOKS, workspace: pathlib.Path = WORKSPACE,
           today: str | None = None) -> tuple[list[str], list[str]]:
    """Bring ``workspace`` up to date with ``notebooks``; returns (what was done,
    errors), one line each."""
    today = today or datetime.date.today().isoformat()
    sources = sorted(notebooks.glob("*.ipynb"))
    if not sources:
        return [], [f"{notebooks}: no notebooks to copy (pass --notebooks: the book's "
                    "notebooks/ folder)"]
    said, errors = [], []
    (workspace / BASE).mkdir(parents=True, exist_ok=True)
    for path in sources:
        data = path.read_bytes()
        target, base_path = workspace / path.name, workspace / BASE / path.name
        try:
            new = notebook.read(path)
        except notebook.SourceError as error:
            errors.append(f"{error}: left out")
            continue
        if not target.exists():
            _write(target, data)
            _write(base_path, data)
            said.append(f"added {target}")
            continue
        if base_path.exists() and base_path.read_bytes() == data:
            continue  # the book's is as it was copied: the learner's is up to date
        mine_data = target.read_bytes()
        if mine_data == data:  # the book's as it is: only its base is new
            _write(base_path, data)
            continue
        try:
            mine = notebook.read(target)
        except notebook.SourceError as error:
            errors.append(f"{error}: left as it is")
            continue
        try:
            base = notebook.read(base_path) if base_path.exists() else None
        except notebook.SourceError:
            base = None  # ours, damaged: updated as if it were not known
        untouched = (base_path.exists() and mine_data == base_path.read_bytes()
                     and not any(notebook.edited(c) for c in mine.cells))
        if untouched:
            _write(target, data)
            _write(base_path, data)
            said.append(f"updated {target} (you had not changed it)")
            continue
        merged = merge(mine, base, new, today)
        saved = backup(target, today)
        _write(target, (nbformat.writes(merged.nb) + "\n").encode())
        _write(base_path, data)
        names = ", ".join(merged.carried) or "none"
        said.append(f"updated {target}: your answers carried over: {names}; "
                    f"the old notebook is {saved}")
        for item in merged.kept:
            said.append(f"  not carried, kept at the end of {target.name}: "
                        f"{item.title}: {item.why}")
    return said, errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnbook.workspace",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("init", "update"),
                        help="init: make your copy; update: after git pull (the same)")
    parser.add_argument("--notebooks", type=pathlib.Path, default=NOTEBOOKS,
                        help=f"the book's notebooks (default {NOTEBOOKS})")
    parser.add_argument("--workspace", type=pathlib.Path, default=WORKSPACE,
                        help=f"your copies (default {WORKSPACE})")
    args = parser.parse_args(argv)
    said, errors = update(args.notebooks, args.workspace)
    for line in said:
        print(line)
    for line in errors:
        print(f"workspace: error: {line}", file=sys.stderr)
    if not said and not errors:
        print(f"nothing to update: {args.workspace} is up to date with "
              f"{args.notebooks}")
    if said or not errors:
        print(f"open your notebooks in {args.workspace} "
              f"(jupyter lab {args.workspace.name}/)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
