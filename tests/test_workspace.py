"""A learner's own notebooks (rnnbook.workspace) survive updates of the book, and `make
notebooks` never overwrites a learner's answers in notebooks/.

The "newer version" of the book is built in a temporary folder from edited copies of
solutions/ (the repository's files are never changed): every chapter's text rewritten,
an exercise inserted in the middle of chapter 1, one renamed in chapter 2, one signature
changed in chapter 3. The learner answers every exercise with its solution's code.
"""
import shutil

import nbformat
import pytest

from conftest import ROOT
from rnnbook import generate, notebook, source, workspace

TODAY = "2026-12-02"
RENAMED = ("02-lstm-gate-tensors", 1)  # (chapter, k): its k-th exercise is renamed
RESIGNED = ("03-c-state-m-state", 0)  # its first exercise gets another signature


def _answer(solution_cell: str) -> str:
    """A learner's answer: the solution's cell without its markers."""
    return "\n".join(line for line in solution_cell.split("\n")
                     if line.strip() not in (source.BEGIN, source.END))


def _generated(solutions, out):
    assert generate.generate(solutions, out) or True
    return out


def _answered(book, tmp_path):
    """The book's notebooks copied to a workspace, every exercise answered, and one cell
    of the learner's own after each chapter's first exercise; returns the workspace and
    ``{chapter: {name: answer}}``."""
    where = tmp_path / "my-notebooks"
    said, errors = workspace.update(book, where, TODAY)
    assert errors == [] and len(said) == len(list(book.glob("*.ipynb")))
    answers = {}
    for path in sorted(where.glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        solved = source.read(ROOT / "solutions" / path.name)
        mine = {ex.name: _answer(solved.cells[ex.cell].source)
                for ex in source.exercises(solved)}
        first = None
        for index, cell in enumerate(nb.cells):
            found = source.DEF.search(cell.source) if cell.cell_type == "code" else None
            if found and found["name"] in mine and notebook.edited(cell) is False:
                cell.source = mine[found["name"]]
                first = index if first is None else first
        own = nbformat.v4.new_code_cell("my_note = 'mine'  # my own")
        nb.cells.insert(first + 1, own)
        nbformat.write(nb, str(path))
        answers[path.stem] = mine
    return where, answers


def _newer(tmp_path):
    """The newer version's notebooks, from edited copies of solutions/."""
    solutions = tmp_path / "new" / "solutions"
    shutil.copytree(ROOT / "solutions", solutions)
    renamed = resigned = None
    for path in sorted(solutions.glob("*.ipynb")):
        nb = source.read(path)
        nb.cells[0].source += "\n\nThis text was rewritten in the newer version."
        cells = source.exercises(nb, str(path))
        if path.stem == "01-basic-rnn-cell":  # a new docstring, a new exercise
            cell = nb.cells[cells[0].cell]
            cell.source = cell.source.replace('"""', '"""Newer. ', 1)
            middle = cells[len(cells) // 2].cell
            new = nbformat.v4.new_code_cell(
                "# Exercise 1.99 (1 point, by hand)\ndef brand_new(x):\n"
                '    """New."""\n    # BEGIN SOLUTION\n    return x\n'
                "    # END SOLUTION\n")
            nb.cells.insert(middle, new)
        if path.stem == RENAMED[0]:
            ex = cells[RENAMED[1]]
            renamed = ex.name
            cell = nb.cells[ex.cell]
            cell.source = cell.source.replace(f"def {ex.name}(", f"def {ex.name}_v2(")
        if path.stem == RESIGNED[0]:
            ex = cells[RESIGNED[1]]
            resigned = ex.name
            cell = nb.cells[ex.cell]
            cell.source = cell.source.replace(f"def {ex.name}(", f"def {ex.name}(z, ")
        nbformat.write(nb, str(path))
    out = _generated(solutions, tmp_path / "new" / "notebooks")
    return out, renamed, resigned


def _files(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_learners_answers_in_every_chapter_survive_an_update(tmp_path):
    where, answers = _answered(ROOT / "notebooks", tmp_path)
    before = _files(where)
    newer, renamed, resigned = _newer(tmp_path)
    said, errors = workspace.update(newer, where, TODAY)
    assert errors == []
    assert len([s for s in said if s.startswith("updated")]) == len(answers)
    for stem, mine in answers.items():
        path = where / f"{stem}.ipynb"
        nb = source.read(path)
        new = source.read(newer / path.name)
        assert nb.cells[0].source.endswith("rewritten in the newer version.")
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        kept = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown"
                         and c.source.startswith("### "))
        for name, answer in mine.items():
            body = answer.split(f"def {name}(", 1)[1].split('"""')[-1]  # docstring's end
            if name in (renamed, resigned):  # kept as text at the end, and listed
                assert body in kept and not any(body in c for c in code), name
                assert any(name in s and "not carried" in s for s in said), said
            else:
                assert sum(body in c for c in code) == 1, (stem, name)
        # the learner's own cell, right after the first exercise's cell
        ours = next(i for i, c in enumerate(nb.cells) if "my_note = 'mine'" in c.source)
        assert source.DEF.search(nb.cells[ours - 1].source)["name"] == next(iter(mine))
        backup = where / "backups" / f"{stem}.{TODAY}.ipynb"
        assert backup.read_bytes() == before[path]  # the old notebook, byte for byte
        if stem == "01-basic-rnn-cell":  # the new docstring above the learner's code
            first = next(iter(mine))
            cell = next(c for c in code if f"def {first}(" in c)
            assert '"""Newer. ' in cell and mine[first].split('"""')[-1] in cell
            # the inserted exercise is there, as a stub
            stub = next(c.source for c in nb.cells if "def brand_new(" in c.source)
            assert 'raise NotImplementedError("Exercise 1.4: write brand_new")' in stub
            assert stub == next(c.source for c in new.cells
                                if "def brand_new(" in c.source)
    assert any("the exercise was renamed or removed" in s for s in said)
    assert any("its signature changed" in s for s in said)


def test_an_update_run_twice_writes_nothing_the_second_time(tmp_path, capsys):
    where, _ = _answered(ROOT / "notebooks", tmp_path)
    newer, *_ = _newer(tmp_path)
    argv = ["update", "--notebooks", str(newer), "--workspace", str(where)]
    assert workspace.main(argv) == 0
    after = _files(where)
    times = {p: p.stat().st_mtime_ns for p in after}
    capsys.readouterr()
    assert workspace.main(argv) == 0
    assert "nothing to update" in capsys.readouterr().out
    assert _files(where) == after
    assert {p: p.stat().st_mtime_ns for p in after} == times


def test_an_update_never_overwrites_an_earlier_backup(tmp_path):
    where, _ = _answered(ROOT / "notebooks", tmp_path)
    newer, *_ = _newer(tmp_path)
    path = where / "01-basic-rnn-cell.ipynb"
    first = path.read_bytes()
    workspace.update(newer, where, TODAY)
    second = path.read_bytes()
    workspace.update(ROOT / "notebooks", where, TODAY)  # back to the older version
    backups = where / "backups"
    assert (backups / f"01-basic-rnn-cell.{TODAY}.ipynb").read_bytes() == first
    assert (backups / f"01-basic-rnn-cell.{TODAY}-2.ipynb").read_bytes() == second


def test_a_notebook_the_learner_never_changed_is_replaced(tmp_path):
    where = tmp_path / "my-notebooks"
    workspace.update(ROOT / "notebooks", where, TODAY)
    newer, *_ = _newer(tmp_path)
    said, errors = workspace.update(newer, where, TODAY)
    assert errors == [] and all("you had not changed it" in s for s in said)
    assert _files(where / workspace.BASE) == {
        where / workspace.BASE / p.name: p.read_bytes() for p in newer.glob("*.ipynb")}
    assert not (where / "backups").exists()


def test_a_corrupt_notebook_in_the_workspace_gets_one_line_and_is_left_untouched(
        tmp_path, capsys):
    where, _ = _answered(ROOT / "notebooks", tmp_path)
    broken = where / "02-lstm-gate-tensors.ipynb"
    broken.write_text('{"cells": [')
    newer, *_ = _newer(tmp_path)
    code = workspace.main(["update", "--notebooks", str(newer),
                           "--workspace", str(where)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and str(broken) in err and "not a valid notebook" in err
    assert broken.read_text() == '{"cells": ['
    assert "rewritten" in source.read(where / "01-basic-rnn-cell.ipynb").cells[0].source


def test_a_new_chapter_is_added_and_nothing_of_the_learners_is_removed(tmp_path):
    book = tmp_path / "book-notebooks"
    shutil.copytree(ROOT / "notebooks", book)
    (book / "07-final-state.ipynb").unlink()
    where, _ = _answered(book, tmp_path)
    mine = where / "scratch.ipynb"  # a notebook of the learner's own
    mine.write_text("anything")
    said, errors = workspace.update(ROOT / "notebooks", where, TODAY)
    assert errors == [] and said == [f"added {where / '07-final-state.ipynb'}"]
    assert mine.read_text() == "anything"


def _book(tmp_path):
    """A copy of solutions/ and of the notebooks generated from it."""
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    return tmp_path / "solutions", tmp_path / "notebooks"


def test_make_notebooks_refuses_to_overwrite_a_learners_answer(tmp_path, capsys):
    solutions, notebooks = _book(tmp_path)
    path = notebooks / "03-c-state-m-state.ipynb"
    nb = source.read(path)
    cell = next(c for c in nb.cells if notebook.edited(c) is False)
    cell.source = cell.source.replace("raise NotImplementedError", "return 1  #", 1)
    nbformat.write(nb, str(path))
    before = _files(tmp_path)
    argv = ["--solutions", str(solutions), "--out", str(notebooks)]
    assert generate.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err
    assert "make workspace" in err and "FORCE=1" in err
    assert _files(tmp_path) == before  # nothing changed
    assert generate.main(argv + ["--force"]) == 0
    assert path.read_bytes() == (ROOT / "notebooks" / path.name).read_bytes()


def test_make_notebooks_regenerates_notebooks_made_from_older_solutions(tmp_path):
    """The maintainers' case: solutions changed, notebooks/ as generated before."""
    solutions, notebooks = _book(tmp_path)
    path = solutions / "01-basic-rnn-cell.ipynb"
    nb = source.read(path)
    cell = nb.cells[source.exercises(nb)[0].cell]
    cell.source = cell.source.replace('"""', '"""Changed. ', 1)
    nbformat.write(nb, str(path))
    assert generate.main(["--solutions", str(solutions), "--out", str(notebooks)]) == 0
    assert "Changed. " in (notebooks / path.name).read_text()


def test_make_notebooks_refuses_a_file_that_is_not_a_notebook(tmp_path, capsys):
    solutions, notebooks = _book(tmp_path)
    (notebooks / "01-basic-rnn-cell.ipynb").write_text("{")
    assert generate.main(["--solutions", str(solutions), "--out", str(notebooks)]) == 2
    assert "not a valid notebook" in capsys.readouterr().err
    assert (notebooks / "01-basic-rnn-cell.ipynb").read_text() == "{"


@pytest.mark.slow
def test_carried_answers_pass_their_checks_and_are_recorded(tmp_path, monkeypatch):
    """Chapter 1's answers, carried over an update that rewrote its text, run in a
    kernel from the workspace: every check passes, and the progress record has them."""
    from nbclient import NotebookClient

    from rnnbook import record

    where, answers = _answered(ROOT / "notebooks", tmp_path)
    solutions = tmp_path / "new" / "solutions"
    solutions.mkdir(parents=True)
    nb = source.read(ROOT / "solutions" / "01-basic-rnn-cell.ipynb")
    nb.cells[0].source += "\n\nRewritten."
    nbformat.write(nb, str(solutions / "01-basic-rnn-cell.ipynb"))
    newer = _generated(solutions, tmp_path / "new" / "notebooks")
    said, _ = workspace.update(newer, where, TODAY)
    assert said[0].startswith(f"updated {where / '01-basic-rnn-cell.ipynb'}")
    run = source.read(where / "01-basic-rnn-cell.ipynb")
    progress = tmp_path / "progress.json"
    monkeypatch.setenv("RNNBOOK_PROGRESS", str(progress))
    resources = {"metadata": {"path": str(where)}}
    NotebookClient(run, timeout=600, resources=resources).execute()
    outputs = "\n".join(o.get("text", "") for c in run.cells if c.cell_type == "code"
                        for o in c.outputs)
    assert outputs.count("✓") == len(answers["01-basic-rnn-cell"]), outputs[-3000:]
    assert "✗" not in outputs
    passed = record.load(progress)["01-basic-rnn-cell"]
    assert sorted(r["name"] for r in passed.values() if record.latest(r)) == sorted(
        answers["01-basic-rnn-cell"])


def test_the_progress_record_follows_an_exercise_renumbered_by_an_update(tmp_path):
    """Exercise 1.3 `rnn_step` passed; an update inserts an exercise before it, so it is
    1.4 and the new one is 1.3: the table says 1.4 is done and 1.3 is not."""
    from rnnbook import record

    where = tmp_path / "progress.json"
    assert record.record("01-x", "1.3", "rnn_step", where)
    names = {"01-x": {"1.3": "brand_new", "1.4": "rnn_step"}}
    rows = record.table([("01-x", ["1.3", "1.4"])], where, names=names)
    assert rows == [("01-x", 1, 2, ["1.3"], 1)]
