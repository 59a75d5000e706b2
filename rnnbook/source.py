"""Reading the one source of an exercise notebook (``solutions/NN-*.ipynb``).

An exercise is a code cell that starts with a header comment and defines the learner's function::

    # Exercise 1.2 (2 points, by hand)
    def rnn_step(x, h, kernel, bias):
        # BEGIN SOLUTION
        ...
        # END SOLUTION

The header sets the exercise's number, its points (the grader reads points only from here),
for an answer of several parts their number (``# Exercise 5.2 (2 points, 4 parts, by hand)``:
the points are shared equally, and a part earns its share when it matches TensorFlow on every
trial; it must equal the number of parts the check names) and its kind: ``by hand`` (NumPy
only: TensorFlow, Keras and rnnbook may not be called; the check and the grader enforce it) or
``API`` (the learner drives TensorFlow or Keras itself). The lines from ``# BEGIN SOLUTION``
to ``# END SOLUTION`` are the solution; the learner's copy gets
a stub in their place. Cells tagged ``solution`` (worked explanations) are left out of it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

from rnnbook.notebook import DEF as DEF
from rnnbook.notebook import HEADER as HEADER
from rnnbook.notebook import SourceError as SourceError
from rnnbook.notebook import read as read

#: a header's number, for renumbering: ``# Exercise `` + N.K + `` (``
HEADER_NUMBER = re.compile(r"^(# Exercise )(\d+\.\d+)( \()")
KINDS = ("by hand", "API")
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
SOLUTION_TAG = "solution"


@dataclass(frozen=True)
class ExerciseCell:
    number: str  # "1.2"
    name: str  # the function the learner writes
    points: int
    cell: int  # index of the code cell in the notebook
    kind: str = "by hand"  # "by hand" (NumPy only) or "API" (TensorFlow / Keras allowed)
    parts: int = 1  # the answer's parts, each earning points / parts (1: all or nothing)

    @property
    def by_hand(self) -> bool:
        return self.kind == "by hand"


def exercises(nb: nbformat.NotebookNode, where: str = "notebook") -> list[ExerciseCell]:
    """The exercises of a source notebook, in order."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        first = cell.source.split("\n", 1)[0]
        header = HEADER.match(first)
        if not header:
            if first.startswith("# Exercise"):
                raise SourceError(f"{where}, cell {index}: bad header {first!r}; write "
                                  "'# Exercise N.K (P points, by hand)' or "
                                  "'# Exercise N.K (P points, API)', with ', Q parts' after "
                                  "the points for an answer of Q parts")
            continue
        parts = int(header["parts"] or 1)
        if header["parts"] and parts < 2:
            raise SourceError(f"{where}, cell {index}: exercise {header['number']} says "
                              f"{parts} parts; leave the parts out of an answer in one piece")
        name = DEF.search(cell.source)
        if not name:
            raise SourceError(f"{where}, cell {index}: exercise {header['number']} defines no function")
        found.append(ExerciseCell(header["number"], name["name"], int(header["points"]), index,
                                  header["kind"], parts))
    return found


def stub(source: str, number: str | None, name: str | None, where: str = "notebook") -> str:
    """``source`` with every solution block replaced by a stub that raises NotImplementedError."""
    out, inside = [], False
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise SourceError(f"{where}: {BEGIN} inside another solution block")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            message = f"Exercise {number}: write {name}" if name else "write this part"
            out.append(f'{indent}raise NotImplementedError("{message}")')
        elif stripped == END:
            if not inside:
                raise SourceError(f"{where}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise SourceError(f"{where}: {BEGIN} is never closed by {END}")
    return "\n".join(out)

