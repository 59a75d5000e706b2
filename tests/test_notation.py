"""One notation in the book's pages (book/notation.md): Keras' candidate block is g, and a
GRU's letters are r, z and h~ (never c).

Keras 3 orders an LSTM's blocks i, f, g, o; its source calls the candidate ``c``, a letter the
book keeps for the cell state. A page that writes Keras' order as "i, f, c, o" teaches two
meanings of c. The same holds wherever a learner reads: the book's pages (``book/mistakes.md``
too, generated from the checks' sentences), the exercise notebooks, and the package's own text
(the checks' sentences and tasks, docstrings).

A GRU's candidate is h~ in the book (TF1's source calls it ``c``, Keras ``hh``, PyTorch ``n``):
an order written "r, z, c" or "z, r, c" would give c, the LSTM's cell state, a second meaning.
"""
import re

import nbformat
import pytest

from tests.conftest import ROOT

#: Keras' order with c for the candidate, however it is written: "i, f, c, o", "$i, f, c, o$",
#: "i,f,c,o", "ifco"
KERAS_C = re.compile(r"\bi\s*,\s*f\s*,\s*c\s*,\s*o\b|\bifco\b", re.IGNORECASE)
#: a GRU's three blocks with c for the candidate: "r, z, c", "z, r, c", "$z, r, c$", "zrc"
GRU_C = re.compile(r"\b(?:r\s*,\s*z|z\s*,\s*r)\s*,\s*c\b|\b(?:rzc|zrc)\b", re.IGNORECASE)
PAGES = sorted(p for folder in ("book", "solutions") for p in (ROOT / folder).iterdir()
               if p.suffix in (".md", ".ipynb"))
SOURCES = sorted((ROOT / "rnnbook").rglob("*.py"))


def text_of(path):
    if path.suffix == ".md":
        return path.read_text()
    nb = nbformat.read(str(path), as_version=4)
    return "\n".join(cell.source for cell in nb.cells)


def keras_c(text):
    return [m.group(0) for m in KERAS_C.finditer(text)]


def gru_c(text):
    return [m.group(0) for m in GRU_C.finditer(text)]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_keras_candidate_is_g_on_every_page(path):
    found = keras_c(text_of(path))
    assert not found, (f"{path.parent.name}/{path.name} writes Keras' order with c for the "
                       f"candidate ({found}): the book writes i, f, g, o (book/notation.md)")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_keras_candidate_is_g_in_the_package(path):
    found = keras_c(path.read_text())
    assert not found, (f"{path.relative_to(ROOT)} writes Keras' order with c for the candidate "
                       f"({found}): its messages reach learners; write i, f, g, o")


def test_the_pattern_sees_every_spelling_and_not_the_right_one():
    assert keras_c("Keras' i, f, c, o and $i, f, c, o$ and i,f,c,o and IFCO") == \
        ["i, f, c, o", "i, f, c, o", "i,f,c,o", "IFCO"]
    assert keras_c("Keras orders them i, f, g, o; TF1 i, j, f, o; the state (c, h)") == []


def test_the_chapters_and_the_notation_page_are_read():
    names = {f"{p.parent.name}/{p.name}" for p in PAGES}
    assert {"book/notation.md", "book/mistakes.md", "book/05-gradients-by-hand.ipynb",
            "solutions/03-c-state-m-state.ipynb"} <= names
    assert any(p.name == "ch03.py" for p in SOURCES)


@pytest.mark.parametrize("path", PAGES + SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_gru_candidate_is_h_tilde_everywhere(path):
    found = gru_c(text_of(path) if path.suffix != ".py" else path.read_text())
    assert not found, (f"{path.relative_to(ROOT)} writes a GRU's blocks with c for the candidate "
                       f"({found}): the book writes r, z, h~ (Keras orders z, r, h~; "
                       f"book/notation.md)")


def test_the_gru_pattern_sees_every_spelling_and_not_the_right_one():
    assert gru_c("TF1's r, z, c and Keras' $z, r, c$ and z,r,c and ZRC") == \
        ["r, z, c", "z, r, c", "z,r,c", "ZRC"]
    assert gru_c(r"Keras orders z, r, h~ ($z, r, \\tilde h$); PyTorch r, z, n; the LSTM c, h") == []


def test_the_notation_page_names_the_gru_letters():
    """book/notation.md's GRU section: r, z, h~, G = 3, and each library's name for them."""
    text = " ".join((ROOT / "book" / "notation.md").read_text().split())
    for words in ("**reset gate $r$**", "**update gate $z$**", r"**candidate $\tilde h$**",
                  "$G = 3$", "`u`", "`hh`", "$n_t$", "$z, r, \\tilde h$"):
        assert words in text, words
