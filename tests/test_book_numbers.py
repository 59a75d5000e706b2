"""Every number a chapter's prose states about a run is computed by the page.

A number typed into prose drifts from the run that produced it (issue 27: "settles near
-1.2" beside a plot at -1.6). So the prose of each chapter page (``book/0N-*.ipynb``) may
state a number only when it is

- glued: ``{glue:text}`name:.2f``` inserts the value a cell computed with ``myst_nb.glue``
  (the glued name must be glued by a code cell of the same page);
- a number the page's own code sets (a size, a seed, a parameter: a numeric literal of one of
  its code cells, read with :mod:`tokenize`, so comments and strings do not count);
- a reference: a chapter, section or exercise number, a year, a version (``TensorFlow 1.2``);
- or one of the few constants in :data:`CONSTANTS`.

Inline code, roles (``{doc}``, ``{cite}``, ...), link targets and fenced blocks are not prose.
"""
import decimal
import io
import json
import re
import tokenize

import nbformat
import pytest

from tests.conftest import ROOT

CHAPTERS = sorted((ROOT / "book").glob("0[0-9]-*.ipynb"))

#: numbers any page may state: 0, 1 and 2 (bounds, first steps, "the two halves") and the
#: value a gate takes with no input, sigma(0) = 0.5
CONSTANTS = {"0", "1", "0.5", "2"}

#: references, not results: "Chapter 4", "Exercise 5.4", "Exercises 2", "TensorFlow 1.2",
#: "Python 3.11", a year
REFERENCES = re.compile(
    r"\b(?:Chapters?|Exercises?|Sections?|TensorFlow|TensorBoard|Keras|Python|tf-keras|TF)"
    r"\s+(?:\d+(?:\.\d+)*(?:\s*(?:to|and|-|,)\s*)?)+"
    r"|\b(?:19|20)\d\d\b"
    r"|^#+\s+\d+\.",  # a chapter's title, "# 2. LSTM gates"
    re.MULTILINE)
#: a number; not a power's base ("$10^{x}$" states no 10)
NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w^])")
GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)(?::[^`]*)?`")
NOT_PROSE = [
    re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL),  # fenced blocks, directives
    re.compile(r"\{[\w:-]+\}`[^`]*`"),  # roles: {doc}, {cite}, {term}, {glue:text}, ...
    re.compile(r"``.*?``|`[^`]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"https?://\S+"),
]


def prose(markdown):
    """The markdown with everything that is not prose removed (replaced by a space)."""
    for pattern in NOT_PROSE:
        markdown = pattern.sub(" ", markdown)
    return REFERENCES.sub(" ", markdown)


def code_literals(nb):
    """The numeric literals of a notebook's code cells ("12", "0.5", "1.0" and "1")."""
    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines()
                           if not line.lstrip().startswith(("%", "!")))
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source + "\n").readline))
        except (tokenize.TokenError, SyntaxError):
            continue
        for token in tokens:
            if token.type == tokenize.NUMBER:
                text = token.string.replace("_", "")
                found.add(text)
                try:
                    value = float(text)
                except ValueError:
                    continue
                found.add(f"{value:g}")
    return found


def stored_glue(nb):
    """The names glued in the page's stored outputs (what the book build inserts)."""
    names = set()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook", {})
            if "name" in record:
                names.add(record["name"])
    return names


def typed_numbers(nb):
    """Numbers in the prose that are neither glued, nor the page's own inputs, nor constants."""
    allowed = CONSTANTS | code_literals(nb)
    typed = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for number in NUMBER.findall(prose(cell.source)):
            plain = number.replace("−", "-").lstrip("-")
            try:
                canonical = f"{float(plain):g}"
            except ValueError:
                canonical = plain
            if plain not in allowed and canonical not in allowed:
                typed.append(number)
    return typed


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_prose_states_no_typed_number(path):
    nb = nbformat.read(str(path), as_version=4)
    typed = typed_numbers(nb)
    assert not typed, (f"{path.stem}: numbers typed into the prose (glue them, or assert "
                       f"them in the cell that computes them): {', '.join(typed)}")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_glued_name_is_glued_by_the_page(path):
    """A {glue:text} role whose name no cell glues builds with a warning and shows nothing;
    the stored outputs must hold every name (the build never runs the notebook)."""
    nb = nbformat.read(str(path), as_version=4)
    used = {name for cell in nb.cells if cell.cell_type == "markdown"
            for name in GLUE.findall(cell.source)}
    missing = used - stored_glue(nb)
    assert not missing, f"{path.stem}: glued in the prose, not in the outputs: {missing}"


def test_the_scan_sees_a_typed_number_and_skips_what_is_not_prose():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("T, H = 40, 16\nrate = 0.25  # about 0.73"),
        nbformat.v4.new_markdown_cell(
            "# 5. Gradients\nOver the 40 steps it fades 3.7 orders of magnitude; "
            "unit 1 settles near {glue:text}`settled:.2f` (`x[:, 7]`, Exercise 5.4, "
            "{doc}`04-stateful-batching`, TensorFlow 1.2, in 2017), not 0.73, at rate "
            "0.25 and −1.2.\n```python\nprint(9.5)\n```"),
    ])
    assert typed_numbers(nb) == ["3.7", "0.73", "−1.2"]


def test_glue_outputs_are_found_in_stored_outputs():
    out = nbformat.v4.new_output("display_data", data={"text/plain": "1.5"},
                                 metadata={"scrapbook": {"name": "x", "mime_prefix": ""}})
    cell = nbformat.v4.new_code_cell('glue("x", 1.5, display=False)', outputs=[out])
    nb = nbformat.v4.new_notebook(cells=[cell])
    assert stored_glue(nb) == {"x"}
    assert json.loads(json.dumps(nb))  # plain data, as stored


#: a glue role with its format: ``{glue:text}`name:.2f```
GLUE_FORMAT = re.compile(r"\{glue(?::\w+)?\}`([^`:]+):([^`]+)`")


def significant(text):
    """The significant digits of a number as text ("0.0540" -> 3, "1.4e+04" -> 2)."""
    mantissa = re.split(r"[eE]", text.strip().lstrip("+-"))[0]
    return len(mantissa.replace(".", "").lstrip("0")) or 1


def held(record):
    """The significant digits a stored record holds ("14400.0" -> 3, "0.0421" -> 3)."""
    return len(decimal.Decimal(repr(float(record))).normalize().as_tuple().digits)


def stored_records(nb):
    """name -> the glued record's text as stored (what nbval compares)."""
    return {o.metadata["scrapbook"]["name"]: o.data["application/papermill.record/text/plain"]
            for cell in nb.cells for o in cell.get("outputs", [])
            if "scrapbook" in o.get("metadata", {})}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_glued_numbers_are_stored_as_the_page_shows_them(path):
    """Issue 34: a record is what rnnbook.numbers.glue stores (DIGITS significant digits, one
    more off a half point), so no record holds the 6th digit another CPU computes otherwise;
    and the prose's format
    never shows a digit the record does not hold (``.3f`` of a stored 1.23 would add a 0)."""
    from rnnbook import numbers

    nb = nbformat.read(str(path), as_version=4)
    records = stored_records(nb)
    long = {n: r for n, r in records.items()
            if held(r) > numbers.DIGITS + 1 or numbers.rounded(float(r)) != float(r)}
    assert not long, f"{path.stem}: records not stored by rnnbook.numbers.glue: {long}"
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for name, spec in GLUE_FORMAT.findall(cell.source):
            shown = format(float(records[name]), spec)
            assert significant(shown) <= numbers.DIGITS, (
                f"{path.stem}: {{glue:text}}`{name}:{spec}` shows {shown}, more digits than "
                f"the {numbers.DIGITS} glue keeps (rnnbook.numbers.DIGITS)")


def test_the_digit_counts_see_what_they_must():
    assert [significant(t) for t in ("0.0540", "1.4e+04", "-5.96", "1.00", "0.00")] == [
        3, 2, 3, 3, 1]
    assert [held(r) for r in ("14400.0", "0.0421", "-5.96", "0.00540002", "12")] == [
        3, 3, 3, 6, 2]


def test_glue_keeps_what_every_shorter_format_shows_of_the_value():
    from rnnbook import numbers

    for value in (-3.74551, 0.794998, 0.795002, 3.4996, 14426.2, 0.00540002, 0.5, 3.75):
        kept = numbers.rounded(value)
        assert held(repr(kept)) <= numbers.DIGITS + 1 and numbers.rounded(kept) == kept
        for spec in (".1f", ".2f", ".1e", ".0f"):
            if significant(format(value, spec)) <= numbers.DIGITS:
                assert format(kept, spec) == format(value, spec), (value, spec)
    assert numbers.rounded(0.00540002) == numbers.rounded(0.00540001) == 0.0054
    assert numbers.rounded(-3.74551) == -3.749  # -3.75 would show as -3.8
