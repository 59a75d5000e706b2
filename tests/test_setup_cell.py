"""The set-up cell's install block (``rnnbook.generate.setup_block``): the same in every
notebook; on Colab it installs the package, elsewhere it says in one sentence what to install
and stops, never installing over a learner's own copy; where rnnbook is importable it does
nothing (so the stored outputs stay as they are)."""
import importlib.util
import pathlib
import sys
import types

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from rnnbook import generate, source

ROOT = pathlib.Path(__file__).resolve().parent.parent
URL = generate.repository_url()
NOTEBOOKS = sorted(p for folder in ("book", "solutions", "notebooks")
                   for p in (ROOT / folder).glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_set_up_cell_holds_the_one_install_block(path):
    nb = nbformat.read(str(path), as_version=4)
    cell = nb.cells[generate.setup_cell(nb)].source
    assert generate.setup_block(URL) in cell, (
        f"{path.relative_to(ROOT)}: its set-up cell's install block is not "
        "rnnbook.generate.setup_block: run  python scripts/setup_cell.py  and make notebooks")
    assert cell.index(generate.SETUP_FIRST) < cell.index("import rnnbook\n")


def test_the_block_is_replaced_whole_and_a_cell_without_one_is_refused():
    cell = "import importlib.util\n\n" + generate.setup_block("https://old") + "\nimport rnnbook"
    new = generate.with_setup_block(cell, "https://example.org/course")
    assert new == ("import importlib.util\n\n" + generate.setup_block("https://example.org/course")
                   + "\nimport rnnbook")
    assert "https://old" not in new
    with pytest.raises(source.SourceError, match="no install block"):
        generate.with_setup_block("import rnnbook", URL, "nb.ipynb")


class FakeShell:
    """What ``get_ipython()`` gives the block: records the magics it runs."""

    def __init__(self):
        self.magics = []

    def run_line_magic(self, name, line, *args):
        self.magics.append(f"%{name} {line}")


def run_block(monkeypatch, importable, colab):
    """Run the install block as IPython runs a cell's code; returns the magics it ran."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: real(name, *a) if importable or name != "rnnbook"
                        else None)
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    shell = FakeShell()
    code = TransformerManager().transform_cell(
        "import importlib.util\n" + generate.setup_block(URL) + "\n")
    exec(compile(code, "set-up cell", "exec"), {"get_ipython": lambda: shell})
    return shell.magics


def test_off_colab_without_rnnbook_it_says_what_to_install_and_stops(monkeypatch):
    with pytest.raises(ModuleNotFoundError) as raised:
        run_block(monkeypatch, importable=False, colab=False)
    message = str(raised.value)
    assert message.count(". ") == 0 and "\n" not in message  # one sentence
    assert 'pip install -e ".[jupyter]"' in message and "restart the kernel" in message


def test_off_colab_with_rnnbook_nothing_is_installed(monkeypatch):
    assert run_block(monkeypatch, importable=True, colab=False) == []


def test_on_colab_it_installs_the_package_from_the_repository(monkeypatch):
    magics = run_block(monkeypatch, importable=False, colab=True)
    assert magics == [f'%pip install --quiet "rnnbook @ git+{URL}"']


def test_on_colab_with_rnnbook_already_there_nothing_is_installed(monkeypatch):
    assert run_block(monkeypatch, importable=True, colab=True) == []
