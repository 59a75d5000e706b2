"""The one-source generator: learner notebooks come from solutions/ and are up to date."""
import nbformat
import pytest

from conftest import ROOT
from rnnbook import generate, source


def test_committed_learner_notebooks_are_up_to_date(tmp_path):
    """Regenerating changes nothing (as nbdev's CI checks): run `make notebooks` if this fails."""
    assert generate.generate(ROOT / "solutions", ROOT / "notebooks", check=True) == []
    names = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert names == sorted(p.name for p in (ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_learner_notebooks_hold_no_outputs_and_no_solution(path):
    nb = source.read(path)
    solved = source.read(ROOT / "solutions" / path.name)
    text = path.read_text()
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    learner_code = "\n".join(c.source for c in nb.cells)
    statements = "\n".join(c.source for c in solved.cells if c.cell_type == "markdown")
    for ex in source.exercises(solved):
        body = solved.cells[ex.cell].source
        solution = body.split(source.BEGIN, 1)[1].split(source.END, 1)[0]
        for line in solution.strip().splitlines():
            line = line.split("  #", 1)[0].strip()  # the code, not its comment
            if len(line) > 12 and line not in statements:  # (a statement may define a quantity)
                assert line not in learner_code, line
        assert f'raise NotImplementedError("Exercise {ex.number}: write {ex.name}")' in learner_code


def _source_nb(*codes, tags=None):
    nb = nbformat.v4.new_notebook()
    for code in codes:
        nb.cells.append(nbformat.v4.new_code_cell(code))
    if tags:
        nb.cells[-1].metadata["tags"] = tags
    return nb


def test_stub_keeps_indentation_and_drops_solution_cells():
    nb = _source_nb(
        "# Exercise 9.1 (3 points, by hand)\ndef f(x):\n    y = 1\n    # BEGIN SOLUTION\n    return x\n"
        "    # END SOLUTION\n",
        "print('worked answer')", tags=["solution"])
    out = generate.learner_copy(nb)
    assert len(out.cells) == 1
    assert out.cells[0].source == (
        "# Exercise 9.1 (3 points, by hand)\ndef f(x):\n    y = 1\n"
        '    raise NotImplementedError("Exercise 9.1: write f")\n')
    assert [(e.number, e.name, e.points) for e in source.exercises(nb)] == [("9.1", "f", 3)]


@pytest.mark.parametrize("code,error", [
    ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "never closed"),
    ("def f():\n    return 1\n    # END SOLUTION\n", "without"),
    ("# Exercise 1 (2 points)\ndef f():\n    pass\n", "bad header"),
    ("# Exercise 1.1 (2 points)\ndef f():\n    pass\n", "bad header"),  # kind missing
    ("# Exercise 1.1 (2 points, by eye)\ndef f():\n    pass\n", "bad header"),
    ("# Exercise 1.1 (2 points, API)\nx = 1\n", "defines no function"),
])
def test_broken_sources_are_refused_with_the_reason(code, error):
    with pytest.raises(source.SourceError, match=error):
        generate.learner_copy(_source_nb(code))


def test_cli_check_mode_and_bad_input(tmp_path, capsys):
    out = tmp_path / "notebooks"
    assert generate.main(["--out", str(out)]) == 0
    assert generate.main(["--out", str(out), "--check"]) == 0
    first = next(out.glob("*.ipynb"))
    first.write_text(first.read_text().replace("NotImplementedError", "NotImplementedErr"))
    assert generate.main(["--out", str(out), "--check"]) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert generate.main(["--solutions", str(empty), "--out", str(out)]) == 2
    assert "no .ipynb files" in capsys.readouterr().err


def test_mistakes_page_is_up_to_date_and_lists_every_mistake():
    """book/mistakes.md is generated from the checks: run `make notebooks` if this fails."""
    from rnnbook import checks

    assert generate.write_mistakes_page(ROOT / "solutions", check=True) == []
    text = generate.MISTAKES_PAGE.read_text()
    for stem in checks.CHAPTERS:
        for ex in checks.load(stem).exercises:
            assert f"### Exercise {ex.number} `{ex.name}`" in text
            assert all(f"- {m.sentence}" in text for m in ex.mistakes)


EXECUTED = sorted([*(ROOT / "book").glob("0*.ipynb"), *(ROOT / "solutions").glob("*.ipynb")])


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_committed_notebooks_were_run_by_make_execute(path):
    """Step 5 of CONTRIBUTING's checklist (`make execute STEM=...`) was not forgotten: every
    code cell of a chapter or solutions notebook holds the count of one run from the top (a
    cell added since has none, and nbval passes a cell with no stored output: it cannot tell),
    and its printed output is stored as `make execute` stores it, one stream per flush run
    (a notebook saved another way differs from the next `make execute` in every such cell).
    Cells tagged ``nbval-ignore-output`` keep nothing (their output is the machine's)."""
    cells = [cell for cell in source.read(path).cells if cell.cell_type == "code"
             and "nbval-ignore-output" not in cell.metadata.get("tags", [])]
    counts = [cell.execution_count for cell in cells]
    where = f"{path.relative_to(ROOT)}: run `make execute STEM={path.stem}`"
    assert counts == list(range(1, len(counts) + 1)), (
        f"{where}: its code cells were not run in one pass from the top (counts {counts})")
    for cell in cells:
        pairs = zip(cell.outputs, cell.outputs[1:], strict=False)
        assert not any(a.output_type == b.output_type == "stream" and a.name == b.name
                       for a, b in pairs), f"{where}: cell {cell.execution_count}'s streams"
