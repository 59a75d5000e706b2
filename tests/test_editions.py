"""The course edition (`make book EDITION=course`): the book without the Solutions part, and
no solution code anywhere in its HTML or its `_sources/`."""
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from rnnbook import source

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import course_edition  # noqa: E402


def code(line):
    """A line's code: without its comment and the spaces around it."""
    return line.split("  #", 1)[0].strip()


def solution_lines():
    """Distinctive lines of every solution block in solutions/ (long enough to be telling) that
    no chapter page shows."""
    lines = set()
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = source.read(path)
        for cell in nb.cells:
            inside = False
            for line in cell.source.splitlines():
                if line.strip() == source.BEGIN:
                    inside = True
                elif line.strip() == source.END:
                    inside = False
                elif inside and len(code(line)) >= 24 and not line.strip().startswith("#"):
                    lines.add(code(line))
    public = chapter_text()
    return {line for line in lines if line not in public}


def chapter_text():
    """Every line of the chapters and pages in book/ and of the learner notebooks: what the
    book gives everyone (a solution may reuse a line a chapter shows, such as the logistic
    function, or a statement the exercise gives)."""
    seen = []
    for path in sorted((ROOT / "book").glob("*")) + sorted((ROOT / "notebooks").glob("*")):
        if path.suffix == ".ipynb":
            text = "\n".join(c.source for c in source.read(path).cells)
        elif path.suffix == ".md":
            text = path.read_text()
        else:
            continue
        seen.append(text)
    return "\n".join(seen)


def test_course_toc_drops_every_solutions_page_and_nothing_else():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    course = course_edition.course_toc(yaml.safe_load((ROOT / "_toc.yml").read_text()))

    def files(t):
        return [c["file"] for p in t["parts"] for c in p["chapters"]]

    assert [f for f in files(toc) if not f.startswith("solutions/")] == files(course)
    assert any(f.startswith("solutions/") for f in files(toc))


@pytest.mark.slow
def test_course_edition_holds_no_solution_code(tmp_path):
    toc = tmp_path / "_toc.yml"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "course_edition.py"), str(toc)],
                   check=True, capture_output=True)
    exe = pathlib.Path(sys.executable).with_name("jupyter-book")
    run = subprocess.run([str(exe if exe.exists() else shutil.which("jupyter-book")), "build",
                          str(ROOT), "-W", "-n", "--keep-going", "--toc", str(toc),
                          "--path-output", str(tmp_path)], capture_output=True, text=True)
    html = tmp_path / "_build" / "html"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not (html / "solutions").exists() and not (html / "_sources" / "solutions").exists()
    assert (html / "notebooks" / "01-basic-rnn-cell.html").is_file()
    wanted = solution_lines()
    assert len(wanted) > 20
    unescape = {"&quot;": '"', "&#39;": "'", "&lt;": "<", "&gt;": ">", "&amp;": "&"}
    for page in html.rglob("*"):
        if page.suffix not in (".html", ".ipynb", ".md", ".txt", ".py") or not page.is_file():
            continue
        text = re.sub(r"<[^>]+>", "", page.read_text(errors="replace"))
        for escaped, plain in unescape.items():
            text = text.replace(escaped, plain)
        leaked = [line for line in wanted if line in text]
        assert not leaked, f"{page.relative_to(html)} holds solution code: {leaked[:3]}"
