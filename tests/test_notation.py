"""One notation in the book's pages (book/notation.md): Keras' candidate block is g.

Keras 3 orders an LSTM's blocks i, f, g, o; its source calls the candidate ``c``, a letter the
book keeps for the cell state. A page that writes Keras' order as "i, f, c, o" teaches two
meanings of c. (``book/mistakes.md`` is generated from the checks' sentences, which
``rnnbook/checks`` owns; it is left out here.)
"""
import re

import nbformat
import pytest

from tests.conftest import ROOT

#: Keras' order with c for the candidate, however it is written: "i, f, c, o", "$i, f, c, o$",
#: "i,f,c,o", "ifco"
KERAS_C = re.compile(r"\bi\s*,\s*f\s*,\s*c\s*,\s*o\b|\bifco\b", re.IGNORECASE)
GENERATED = {"mistakes.md"}
PAGES = sorted(p for p in (ROOT / "book").iterdir()
               if p.suffix in (".md", ".ipynb") and p.name not in GENERATED)


def text_of(path):
    if path.suffix == ".md":
        return path.read_text()
    nb = nbformat.read(str(path), as_version=4)
    return "\n".join(cell.source for cell in nb.cells)


def keras_c(text):
    return [m.group(0) for m in KERAS_C.finditer(text)]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_keras_candidate_is_g_on_every_page(path):
    found = keras_c(text_of(path))
    assert not found, (f"book/{path.name} writes Keras' order with c for the candidate "
                       f"({found}): the book writes i, f, g, o (book/notation.md)")


def test_the_pattern_sees_every_spelling_and_not_the_right_one():
    assert keras_c("Keras' i, f, c, o and $i, f, c, o$ and i,f,c,o and IFCO") == \
        ["i, f, c, o", "i, f, c, o", "i,f,c,o", "IFCO"]
    assert keras_c("Keras orders them i, f, g, o; TF1 i, j, f, o; the state (c, h)") == []


def test_the_chapters_and_the_notation_page_are_read():
    names = {p.name for p in PAGES}
    assert "notation.md" in names and "05-gradients-by-hand.ipynb" in names
