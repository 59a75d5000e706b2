"""The Jupyter Book: its configuration, its references, and a strict offline build.

The fast tests read `_config.yml`, `_toc.yml`, `book/references.bib` and `book/glossary.md` and
the sources that cite or use them. The slow test builds the whole book into a temporary folder
exactly as `make book` does (`jupyter-book build . -W -n --keep-going`) and inspects the HTML:
every page of the table of contents is there, no page loads a script or a style from the
network, MathJax comes from `_static`, and every exercise renders with its hint collapsed.
"""
import html
import html.parser
import os
import pathlib
import re
import shutil
import subprocess
import sys

import nbformat
import pytest
import rendered
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
STEMS = ["01-basic-rnn-cell", "02-lstm-gate-tensors", "03-c-state-m-state", "04-stateful-batching",
         "05-gradients-by-hand", "06-gru-layouts", "07-final-state"]
BIB_KEYS = {"hochreiter1997", "gers2000", "gers2002", "sak2014", "olah2015", "williams1990", "tfrnncell",
            "tfrnncell14", "tf12release", "pascanu2013", "cs231n", "cho2014", "chung2014", "cudnn",
            "tfcudnngru", "kerasgru", "pytorchgru", "cho2014v1", "kerascudnn", "onnxgru",
            "keras2gru", "tfrnn", "tfkerasrnn", "pytorchpack", "pytorchlstm", "pytorchrnnsrc",
            "schuster1997"}
REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def toc_entries(entries):
    """The `file:` of each entry and of its sections, in reading order."""
    files = []
    for entry in entries:
        files.append(entry["file"])
        files += toc_entries(entry.get("sections", []))
    return files


def toc_files():
    """Every `file:` of _toc.yml (root first, sections after their chapter), without extension."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += toc_entries(part["chapters"])
    return files


def book_sources():
    """(path, markdown text) for every page in the table of contents that exists."""
    out = []
    for name in toc_files():
        for suffix in (".md", ".ipynb"):
            path = ROOT / f"{name}{suffix}"
            if path.exists():
                if suffix == ".md":
                    out.append((path, path.read_text()))
                else:
                    nb = nbformat.read(str(path), as_version=4)
                    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
                    out.append((path, text))
    return out


def glossary_terms():
    """Terms defined in book/glossary.md's {glossary} block (unindented lines inside it)."""
    text = (ROOT / "book" / "glossary.md").read_text()
    block = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    return {line.strip().lower() for line in block.splitlines() if line.strip() and not line[0].isspace()}


# ---------------------------------------------------------------- configuration (fast)


def test_config_builds_offline_from_committed_outputs():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["only_build_toc_files"] is True
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["launch_buttons"]["thebe"] is False, "thebe would load a script from the network"
    assert config["launch_buttons"]["binderhub_url"] and config["launch_buttons"]["colab_url"]
    assert config["bibtex_bibfiles"] == ["book/references.bib"]
    extensions = config["sphinx"]["extra_extensions"]
    assert "sphinx_exercise" in extensions
    assert "sphinx-mathjax-offline" in extensions
    for folder in (".venv", "_build", "tests", "logs"):
        assert folder in config["exclude_patterns"]


def test_toc_lists_every_chapter_exercise_and_solution_page():
    files = toc_files()
    assert files[0] == "book/intro"
    for folder in ("book", "notebooks", "solutions"):
        for stem in STEMS:
            assert f"{folder}/{stem}" in files
    for page in ("book/notation", "book/glossary", "book/bibliography"):
        assert page in files
    assert len(files) == len(set(files)), "a page is listed twice"


def test_each_chapter_is_followed_by_its_exercises():
    """Reading order (what the book's "Next" button follows): book/NN, then notebooks/NN."""
    files = toc_files()
    for stem in STEMS:
        chapter = files.index(f"book/{stem}")
        assert files[chapter + 1] == f"notebooks/{stem}", files[chapter : chapter + 2]


#: "each chapter about 400 source lines": every line of every cell, blank ones too, counts
CHAPTER_LINES = 500  # the set-up cell (Colab or a one-sentence stop) included


def source_lines(path):
    return sum(len(cell.source.splitlines())
               for cell in nbformat.read(str(path), as_version=4).cells)


def test_each_chapter_is_about_400_source_lines():
    sizes = {stem: source_lines(ROOT / "book" / f"{stem}.ipynb") for stem in STEMS}
    long = {stem: n for stem, n in sizes.items() if n > CHAPTER_LINES}
    assert not long, f"chapters over {CHAPTER_LINES} source lines: {long}"
    assert sum(sizes.values()) / len(sizes) <= 455, sizes


def test_bibliography_has_exactly_the_books_keys():
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "book" / "references.bib").read_text(), re.MULTILINE))
    assert keys == BIB_KEYS


def test_every_citation_and_term_resolves():
    terms = glossary_terms()
    assert {"cell state", "hidden state", "kernel", "recurrent kernel", "forget bias",
            "truncated backpropagation through time"} <= terms
    problems = []
    for path, text in book_sources():
        for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", text):
            for key in group.split(","):
                if key.strip() not in BIB_KEYS:
                    problems.append(f"{path.relative_to(ROOT)}: unknown citation key {key.strip()!r}")
        for term in re.findall(r"\{term\}`([^`]+)`", text):
            target = re.search(r"<([^>]+)>\s*$", term)  # {term}`text <target>`
            name = (target.group(1) if target else term).strip().lower()
            if name not in terms:
                problems.append(f"{path.relative_to(ROOT)}: {{term}} {name!r} is not in book/glossary.md")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- lines that fit the column (fast)

#: the longest code or output line a page shows without a scroll bar (STYLE.md; ruff's default)
MAX_LINE = 88
#: notebooks whose code and stored outputs are pages of the book
PAGE_NOTEBOOKS = sorted((ROOT / "book").glob("[0-9]*.ipynb")) + sorted(
    (ROOT / "solutions").glob("[0-9]*.ipynb"))
FENCE = re.compile(r"^(```+|~~~+)")


def shown_lines(nb):
    """(where, line) for every line a notebook shows as code: code cells' source, their text
    outputs (stream, text/plain, tracebacks) and fenced code blocks inside markdown cells."""
    for number, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            fence, code = None, False  # the open fence, and whether it is code (not a directive)
            for line in cell.source.splitlines():
                stripped = line.strip()
                opened = FENCE.match(stripped)
                if fence is None and opened:
                    fence = opened.group(1)
                    code = not stripped[len(fence):].startswith("{")
                elif fence is not None and stripped == fence:
                    fence = None
                elif fence is not None and code:
                    yield f"cell {number} (markdown code block)", line
            continue
        if cell.cell_type != "code":
            continue
        for line in cell.source.splitlines():
            yield f"cell {number} (source)", line
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                text = output.text
            elif output.output_type == "error":
                text = ANSI.sub("", "\n".join(output.traceback))
            else:
                text = output.get("data", {}).get("text/plain", "")
            for line in text.splitlines():
                yield f"cell {number} (output)", line


@pytest.mark.parametrize("path", PAGE_NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_code_and_outputs_fit_the_column(path):
    nb = nbformat.read(str(path), as_version=4)
    wide = [f"{where}, {len(line)} characters: {line[:60]}..."
            for where, line in shown_lines(nb) if len(line) > MAX_LINE]
    assert not wide, f"{len(wide)} lines longer than {MAX_LINE} characters:\n" + "\n".join(wide)


def test_the_width_check_sees_a_wide_line():
    """The check above can fail: a code line, an output line and a markdown code block line
    one character too long are each reported; a long prose or directive line is not."""
    long = "x" * (MAX_LINE + 1)
    code = nbformat.v4.new_code_cell(f"{long} = 1")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=long + "\n")]
    text = nbformat.v4.new_markdown_cell(
        f"{long}\n\n```{{figure}} a.png\n:alt: {long}\n```\n\n```python\n{long}\n```\n")
    nb = nbformat.v4.new_notebook(cells=[code, text])
    found = [where for where, line in shown_lines(nb) if len(line) > MAX_LINE]
    assert found == ["cell 0 (source)", "cell 0 (output)", "cell 1 (markdown code block)"]


# ---------------------------------------------------------------- Chapter 1's table of errors (slow)


def chapter1_program_table():
    """From Chapter 1's markdown: the 2017 program, its diff's hunks (old lines, new lines) and
    the table's rows (program, stops at, last line of the traceback)."""
    nb = nbformat.read(str(ROOT / "book" / "01-basic-rnn-cell.ipynb"), as_version=4)
    text = next(c.source for c in nb.cells
                if c.cell_type == "markdown" and "## The 2017 program, run today" in c.source)
    program = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1)
    hunks, old, new = [], [], []
    for line in re.search(r"```diff\n(.*?)```", text, re.DOTALL).group(1).splitlines():
        if line.startswith("-") and new:
            hunks.append((old, new))
            old, new = [], []
        (old if line.startswith("-") else new).append(line[1:])
    hunks.append((old, new))
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| ")][1:]  # without the header
    return program, hunks, rows


@pytest.mark.slow
def test_chapter1_table_of_errors_is_what_tensorflow_prints():
    """Each version of the 2017 program stops with the error the chapter's table shows, and
    the last, with tf-keras and TF_USE_LEGACY_KERAS=1, prints the zeros it shows."""
    program, hunks, rows = chapter1_program_table()
    assert len(hunks) == 2 and len(rows) == 4
    versions = [program]
    for old, new in hunks:
        assert "\n".join(old) in versions[-1], old
        versions.append(versions[-1].replace("\n".join(old), "\n".join(new)))
    versions.append(versions[-1])  # the same code, with the legacy switch on
    for number, (source, row) in enumerate(zip(versions, rows, strict=True)):
        legacy = "1" if number == 3 else "0"
        env = {**os.environ, "TF_USE_LEGACY_KERAS": legacy, "TF_CPP_MIN_LOG_LEVEL": "3",
               "TF_ENABLE_ONEDNN_OPTS": "0"}
        run = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
                             text=True, timeout=300, check=False)
        if number < 3:
            fence = "``" if row[2].startswith("``") else "`"
            expected = row[2][len(fence):-len(fence)]  # the error, without its code marks
            assert run.returncode != 0, row
            last = [line for line in run.stderr.splitlines() if line.strip()][-1]
            assert last == expected, (row[0], last)
        else:
            assert run.returncode == 0, run.stderr[-2000:]
            assert row[2] == f"prints `{' '.join(run.stdout.split())}`", (row[2], run.stdout)


# ---------------------------------------------------------------- the built book (slow)


class Loads(html.parser.HTMLParser):
    """Collects the URLs a page loads: scripts, stylesheets, preloads, frames, images."""

    def __init__(self):
        super().__init__()
        self.loads = []  # (tag, url)
        self.styles = []  # inline <style> text

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "iframe", "img", "source", "embed") and attrs.get("src"):
            self.loads.append((tag, attrs["src"]))
        if tag == "link" and attrs.get("href"):
            rel = (attrs.get("rel") or "").lower().split()
            if {"stylesheet", "preload", "modulepreload", "icon", "manifest"} & set(rel):
                self.loads.append((f"link rel={' '.join(rel)}", attrs["href"]))
        if tag == "style":
            self.styles.append("")

    def handle_data(self, data):
        if self.lasttag == "style" and self.styles:
            self.styles[-1] += data


class Build:
    """One strict build: its exit status, its warning lines and its HTML folder."""

    def __init__(self, out):
        env = {k: v for k, v in os.environ.items() if k != "RNNBOOK_REPOSITORY"}
        subprocess.run([sys.executable, str(ROOT / "scripts" / "edition.py"), "self-study",
                        str(out)], check=True, capture_output=True, env=env)
        exe = pathlib.Path(sys.executable).parent / "jupyter-book"
        command = [str(exe if exe.exists() else shutil.which("jupyter-book")), "build", str(ROOT),
                   "--config", str(out / "_config.yml"),
                   "--path-output", str(out), "-W", "-n", "--keep-going"]
        result = subprocess.run(command, check=False, capture_output=True, text=True, timeout=900)
        self.returncode = result.returncode
        self.log = ANSI.sub("", result.stdout + result.stderr)
        self.warnings = [line for line in self.log.splitlines() if "WARNING" in line or "ERROR" in line]
        self.html = out / "_build" / "html"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """A fresh strict build into a temporary folder (the command `make book` runs)."""
    return Build(tmp_path_factory.mktemp("book"))


@pytest.fixture(scope="module")
def built(build):
    """The HTML folder of that build (with --keep-going it exists even after a warning)."""
    if not (build.html / "index.html").is_file():
        pytest.fail("the book build wrote no HTML:\n" + build.log[-3000:])
    return build.html


@pytest.mark.slow
def test_strict_build_has_no_warnings(build):
    assert build.returncode == 0, "strict book build failed:\n" + "\n".join(
        build.warnings or [build.log[-3000:]])


@pytest.mark.slow
def test_every_toc_page_is_built(built):
    missing = [name for name in toc_files() if not (built / f"{name}.html").is_file()]
    assert not missing, f"pages not built: {missing}"
    for folder in ("book", "notebooks", "solutions"):
        for stem in STEMS:
            assert (built / folder / f"{stem}.html").is_file()


@pytest.mark.slow
def test_next_after_a_chapter_is_its_exercises(built):
    for stem in STEMS:
        page = (built / "book" / f"{stem}.html").read_text(encoding="utf-8")
        found = re.search(r'<a class="right-next"\s+href="([^"]+)"', page)
        assert found and found.group(1) == f"../notebooks/{stem}.html", (stem, found)


@pytest.mark.slow
def test_no_page_loads_anything_from_the_network(built):
    remote = []
    pages = sorted(built.rglob("*.html"))
    assert len(pages) >= 15
    for page in pages:
        parser = Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        for tag, url in parser.loads:
            if REMOTE.match(url):
                remote.append(f"{page.relative_to(built)}: <{tag}> {url}")
        for style in parser.styles:
            for url in re.findall(r"""@import\s+(?:url\()?["']?([^"')\s;]+)""", style):
                if REMOTE.match(url):
                    remote.append(f"{page.relative_to(built)}: <style> @import {url}")
    css_url = re.compile(r"""(?:@import\s+(?:url\()?|url\()\s*["']?([^"')\s;]+)""")
    for css in sorted(built.glob("_static/**/*.css")):
        for url in css_url.findall(css.read_text("utf-8", "replace")):
            if REMOTE.match(url):
                remote.append(f"{css.relative_to(built)}: {url}")
    assert not remote, "the book must read offline:\n" + "\n".join(remote)


@pytest.mark.slow
def test_mathjax_is_served_locally(built):
    assert (built / "_static" / "mathjax" / "tex-chtml.js").is_file()
    page = (built / "book" / "notation.html").read_text(encoding="utf-8")
    assert 'src="../_static/mathjax/tex-chtml.js"' in page
    assert 'class="math' in page


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
@pytest.mark.parametrize("stem", STEMS)
def test_exercises_render_with_collapsed_hints(built, folder, stem):
    """Each graded exercise (a `# Exercise N.K` cell) has a sphinx-exercise box and a hint in a
    dropdown admonition, which sphinx-togglebutton shows collapsed."""
    nb = nbformat.read(str(ROOT / folder / f"{stem}.ipynb"), as_version=4)
    graded = sum(1 for c in nb.cells if c.cell_type == "code" and c.source.startswith("# Exercise "))
    page = (built / folder / f"{stem}.html").read_text(encoding="utf-8")
    boxes = page.count('<div class="exercise admonition"')
    hints = re.findall(r'<div class="dropdown admonition[^"]*">\s*<p class="admonition-title">([^<]*)</p>',
                       page)
    assert graded >= 1
    assert boxes == graded, f"{graded} graded exercises but {boxes} exercise boxes"
    assert sum(1 for title in hints if title.startswith("Hint")) >= graded, f"hint dropdowns: {hints}"
    assert "togglebutton.js" in page and "'.toggle, .admonition.dropdown'" in page
    assert "sphinx-exercise directive" not in page and "Unknown directive" not in page


# ---------------------------------------------------------------- rendered (slow, Chromium)


@pytest.fixture(scope="module")
def browser():
    return rendered.need_browser(rendered.find_browser())


def test_without_chromium_ci_fails_and_elsewhere_it_skips():
    assert rendered.need_browser("/usr/bin/chromium", {"CI": "true"}) == "/usr/bin/chromium"
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        rendered.need_browser(None, {"CI": "true"})
    with pytest.raises(pytest.skip.Exception, match="no Chromium"):
        rendered.need_browser(None, {})


#: Chapter 6's cuDNN equation as it once rendered: a source line of an inline equation that
#: began with "+ " was read as a list item, and the TeX around it stayed as text
STRAY_ITEM = ("<article><p>its equation is <span class=\"math\">\\(x\\)</span> $h'_t = "
              "\\tanh(W_h x_t + r_t \\odot (R_h h_{t-1} + b_{Rh})</p><ul><li><p>b_{Wh})$ "
              "[NVIDIA]</p></li></ul><pre>a_{b} $HOME</pre></article>")


def test_the_tex_check_sees_tex_as_text_and_a_list_item_inside_math():
    found = rendered.unrendered_tex(STRAY_ITEM)
    assert any("a list item starting inside math: 'b_{Wh})$" in f for f in found), found
    assert sum(f.startswith("TeX as text") for f in found) >= 4, found
    assert not any("HOME" in f or "a_{b}" in f for f in found)  # code is not prose
    fine = ('<article><p>a <span class="math notranslate nohighlight">\\(\\tanh(x_{t})'
            '\\)</span> b</p><div class="math">\\[h_{t}\\]</div><ul><li><p>item</p>'
            "</li></ul></article>")
    assert rendered.unrendered_tex(fine) == []


@pytest.mark.slow
def test_no_page_shows_tex_as_text(built):
    found = [f"{page.relative_to(built)}: {what}" for page in rendered.pages(built)
             for what in rendered.unrendered_tex(page.read_text(encoding="utf-8"))]
    assert not found, "TeX left unrendered:\n" + "\n".join(found)


@pytest.mark.slow
def test_no_relative_link_of_the_book_is_dead(built):
    assert rendered.dead_links(built) == []


@pytest.mark.slow
def test_every_page_reads_at_1280_and_390_px(built, browser, tmp_path):
    """Every page, in one Chromium run, in a 1280 px and a 390 px frame: no code block wider
    than its column at 1280 px (it scrolls at 390 px, never cut), no figure whose smallest type
    is under 9 px, no table or block cut at the right or widening the page, no sideways
    scroller the keyboard cannot reach."""
    measured = rendered.measure(browser, built, tmp_path)
    assert len(measured) == 2 * len(rendered.pages(built)) >= 2 * 25
    found = rendered.report(measured)
    assert not found, f"{len(found)} problems:\n" + "\n".join(found)


@pytest.mark.slow
def test_the_rendered_check_sees_wide_code_a_small_figure_and_a_cut_table(
        built, browser, tmp_path):
    """The check can fail: a chapter page with a code line of 150 characters, a figure
    squeezed to 120 px, a wide table in a box that hides what overflows and a box that
    scrolls sideways with nothing the keyboard can reach."""
    text = (built / "book" / f"{STEMS[0]}.html").read_text(encoding="utf-8")
    marker = '<div class="highlight"><pre>'
    long = "wide = " + "x" * 143
    assert marker in text and "</article>" in text
    text = text.replace(marker, marker + long + "\n", 1)
    table = ("<div style='overflow:hidden'><table style='display:table'><tr>"
             + "<td>column</td>" * 120 + "</tr></table></div>"
             + "<div style='overflow-x:auto'><p style='width:3000px'>wide</p></div>")
    text = text.replace("</article>", table + "</article>", 1)
    text, squeezed = re.subn(r'(<img [^>]*src="\.\./_images/[^"]*\.png")',
                             r'\1 style="width:120px"', text, count=1)
    assert squeezed == 1
    page = rendered.build_html(text, built / "book", "rendered-self-test.html")
    try:
        found = rendered.measure(browser, built, tmp_path, only=[page])
    finally:
        page.unlink()
    wide = [f["kind"] for f in found[("book/rendered-self-test.html", 1280)]]
    narrow = [f["kind"] for f in found[("book/rendered-self-test.html", 390)]]
    assert "code wider than its column" in wide and "figure type too small" in wide, wide
    assert "cut at the right (table)" in narrow, narrow
    assert "a scrolling region the keyboard cannot reach (div)" in narrow, narrow
    assert "code wider than its column" not in narrow  # at 390 px code scrolls


def test_the_class_report_fits_a_phone_and_its_chart_stays_readable(browser, tmp_path):
    """The class report's style (rnnbook.grading.classreport.REPORT_STYLE) on a page of its
    shape: a chart drawn 1100 px wide (11 in at 100 dpi, 10 pt labels) and a table of eight
    columns. At 390 px the page was 841 px wide; now the table and the body scroll sideways and
    the chart is shown at 760 px at least (its 13.9 px labels at 9.6 px)."""
    from rnnbook.grading.classreport import REPORT_STYLE
    from rnnbook.grading.similarity import HTML_TABLE

    chart = tmp_path / "chart.png"
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(11, 3), dpi=100)
    fig.savefig(chart, dpi=100)
    plt.close(fig)
    row = "<tr>" + "".join(f"<td>a long cell {k} with words</td>" for k in range(8)) + "</tr>"
    page = tmp_path / "class-report.html"
    page.write_text(f"<!DOCTYPE html><html><head><style>{REPORT_STYLE}</style></head><body>"
                    f"<h1>Class report</h1><img class='chart' src='chart.png'>{HTML_TABLE}{row * 3}"
                    "</table></body></html>")
    script = rendered.HARNESS.replace('".cell_output img"', '"img"')
    found = rendered.measure(browser, tmp_path, tmp_path / "profile", only=[page],
                             harness=script, scale=10 * 100 / 72)
    assert found == {("class-report.html", 1280): [], ("class-report.html", 390): []}, found


# ---------------------------------------------------------------- pages as a learner runs them


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("RNNBOOK_PAGES") != "run",
                    reason="run by .github/workflows/learner.yml on the oldest and newest "
                    "TensorFlow (here nbval runs the pages against their stored outputs)")
@pytest.mark.parametrize("stem", STEMS)
def test_chapter_page_runs_cleanly_with_the_installed_package(stem, tmp_path):
    """A chapter page run top to bottom in a real kernel, from a folder of its own as on Colab
    (``/content``): no error, nothing on stderr (no TensorFlow log line), and whatever it
    writes for TensorBoard lands beside it, where its ``%tensorboard --logdir`` looks."""
    import nbclient

    page = tmp_path / f"{stem}.ipynb"
    shutil.copy(ROOT / "book" / f"{stem}.ipynb", page)
    nb = nbformat.read(str(page), as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{stem}: {output.get('ename')}: " \
                f"{output.get('evalue')}"
            if output.output_type == "stream":
                assert output.name == "stdout", f"{stem} wrote to stderr: {output.text}"
    text = "\n".join(cell.source for cell in nb.cells)
    for folder in set(re.findall(r"%tensorboard --logdir (\S+?)`", text)):
        assert list((tmp_path / folder).rglob("events.out.tfevents.*")), folder


@pytest.mark.slow
def test_the_bibliography_page_describes_the_citations_as_they_render(tmp_path):
    """Render {cite}`hochreiter1997` with the book's bibtex settings (a small Sphinx project:
    the whole book takes minutes) and find the rendered form quoted on the bibliography page."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    (tmp_path / "conf.py").write_text(
        'extensions = ["myst_parser", "sphinxcontrib.bibtex"]\n'
        f'bibtex_bibfiles = ["{ROOT / "book" / "references.bib"}"]\n'
        f'bibtex_reference_style = "{config["bibtex_reference_style"]}"\n'
        f'bibtex_default_style = "{config["bibtex_default_style"]}"\n')
    (tmp_path / "index.md").write_text("# T\n\nCITE {cite}`hochreiter1997` END\n\n"
                                       "```{bibliography}\n```\n")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path),
                           str(tmp_path / "_b")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "_b" / "index.html").read_text()
    shown = html.unescape(re.sub(r"<[^>]+>", "", page.split("CITE", 1)[1].split("END")[0]))
    assert shown.strip() == "[Hochreiter and Schmidhuber, 1997]"
    assert f'"{shown.strip()}"' in (ROOT / "book" / "bibliography.md").read_text()


def test_instructors_page_states_prerequisites_and_the_course_edition():
    text = (ROOT / "book" / "instructors.md").read_text()
    rows = [line for line in text.splitlines() if re.match(r"\| \d\. ", line)]
    assert len(rows) == len(STEMS)
    for number, row in enumerate(rows, start=1):
        needed = row.split("|")[3]
        if number == 1:
            continue
        # each chapter states the earlier chapters it builds on: Chapters 2-5 all before them,
        # Chapter 6 (GRU layouts) Chapters 1-3, without stateful batching or gradients, and
        # Chapter 7 (padding, directions, layers) Chapters 1-4, without gradients or the GRU
        found = re.search(r"Chapters? (\d)(?:-(\d))?", needed)
        assert found, (number, needed)
        last = int(found.group(2) or found.group(1))
        assert last < number and (number in (6, 7) or last == number - 1), (number, needed)
    # its measured figures: tests/test_docs.py (benchmarks/RESULTS.md's latest bench, once)
    assert "make book EDITION=course" in text
    assert "EDITION=course" in (ROOT / "Makefile").read_text()


def test_chapter5_forget_gate_section_states_the_numbers_its_run_computes():
    """The forget gate at initialisation (issue 27): the answer has its own section, before
    clipping; its numbers are glued from the run (the printed ones); and they say what the
    prose concludes: the c path alone fades about as fast as the plain RNN, slower than the
    LSTM measured."""
    nb = nbformat.read(str(ROOT / "book" / "05-gradients-by-hand.ipynb"), as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    headings = re.findall(r"^## (.+)$", markdown, re.MULTILINE)
    forget = headings.index("The forget gate at initialisation")
    assert headings[forget + 1] == "Clipping by global norm", headings
    section = markdown.split("## The forget gate at initialisation")[1].split("## Clipping")[0]
    for name in ("f_unit_low", "f_unit_high", "c_low", "c_high", "rnn", "lstm", "kept3",
                 "fade_rnn_low", "fade_rnn_high"):
        assert f"{{glue:text}}`{name}:" in section, name
    glued = {o.metadata["scrapbook"]["name"]: float(next(iter(o.data.values())))
             for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "scrapbook" in o.get("metadata", {})}
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    low, high = re.search(r"per unit ([\d.]+) to ([\d.]+)", printed).groups()
    assert (f"{glued['f_unit_low']:.2f}", f"{glued['f_unit_high']:.2f}") == (low, high)
    lost = dict(re.findall(r"^(\S+(?: \S+)*?)\s+log10\(.*\) = ([+-][\d.]+)$", printed,
                           re.MULTILINE))
    assert f"{glued['lstm']:+.1f}" == lost["BasicLSTMCell"]
    assert f"{glued['rnn']:+.1f}" == lost["BasicRNNCell"]
    # the plain RNN is compared only as "this run's", with its range over 8 draws beside it
    assert "fade_rnn_low" in section and "In this run the plain" in section
    assert glued["c_high"] < glued["lstm"]  # the measured advantage is not the c path's
