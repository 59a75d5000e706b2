"""Committed notebooks hold no local path and no state of the machine that ran them.

`make execute` once stored the maintainer's own progress table, with `/root/.rnnbook/...`,
in solutions/06 (issue 37). scripts/focus.py now runs nbconvert with a throw-away record (as
conftest.py does for the tests) and stores no progress table's output; this test holds every
committed notebook to that, and to naming no home folder in any output.
"""
import pathlib
import re
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import focus  # noqa: E402

NOTEBOOKS = sorted(p for folder in ("book", "solutions", "notebooks")
                   for p in (ROOT / folder).glob("*.ipynb"))
#: what a path of this machine looks like in an output: a home folder or the record's folder
LOCAL = re.compile(r"/root/|/home/[^/\s]+/|/Users/[^/\s]+/|~/\.rnnbook|\.rnnbook/progress")


def output_text(cell):
    """Everything a code cell's outputs show as text (streams, results, errors)."""
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        for kind, value in out.get("data", {}).items():
            if kind.startswith("text/"):
                parts.append(value if isinstance(value, str) else "".join(value))
        parts += out.get("traceback", [])
    return "\n".join(parts)


def machine_state(path):
    """``[(cell index, what)]``: local paths in outputs, and stored progress tables."""
    found = []
    nb = nbformat.read(str(path), as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        text = output_text(cell)
        found += [(index, f"a local path {m.group(0)!r}") for m in LOCAL.finditer(text)]
        if focus.PROGRESS_CALL in cell.source and cell.outputs:
            found.append((index, "a stored progress table"))
        elif "exercises passed" in text and "(kept in" in text:
            found.append((index, "a progress table"))
    return found


def test_there_are_notebooks_to_check():
    assert len(NOTEBOOKS) >= 18


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_notebook_holds_no_local_path_or_progress_table(path):
    assert machine_state(path) == []


def test_the_check_sees_a_progress_table_and_a_home_path_and_execute_clears_them(tmp_path):
    nb = nbformat.read(str(ROOT / "solutions" / "06-gru-layouts.ipynb"), as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if focus.PROGRESS_CALL in c.source)
    nb.cells[index].outputs = [nbformat.v4.new_output(
        "stream", name="stdout", text="42 of 42 exercises passed (kept in "
        "/root/.rnnbook/progress.json)\n")]
    other = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and i != index)
    nb.cells[other].outputs = [nbformat.v4.new_output("stream", name="stdout",
                                                      text="log in /home/ann/logs\n")]
    path = tmp_path / "06.ipynb"
    nbformat.write(nb, str(path))
    kinds = sorted(what for _, what in machine_state(path))
    assert kinds == sorted(["a local path '/home/ann/'", "a local path '/root/'",
                            "a local path '.rnnbook/progress'", "a stored progress table"])
    assert focus.without_progress_output(path)
    assert sorted(what for _, what in machine_state(path)) == ["a local path '/home/ann/'"]
    assert not focus.without_progress_output(path)  # nothing left to clear
