"""The editions (`make book`, `make book EDITION=course`, scripts/edition.py): the repository
a build points to, read once at build time; the course edition without the Solutions part and
the page *For instructors*, pointing to the course's own repository (its set-up cells install
the learner release from there), with no solution code, no link and no Binder or Colab button
to the public repository anywhere in its HTML or its `_sources/`."""
import os
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
import edition  # noqa: E402
import rendered  # noqa: E402

PUBLIC = edition.generate.repository_url()
COURSE = "https://github.com/example-university/rnn-course"


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


def test_course_toc_drops_every_solutions_page_and_the_instructors_page_and_nothing_else():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    course = course_edition.course_toc(yaml.safe_load((ROOT / "_toc.yml").read_text()))

    def files(t):
        return [e["file"] for p in t["parts"] for c in p["chapters"]
                for e in [c] + c.get("sections", [])]

    assert [f for f in files(toc) if not f.startswith("solutions/")
            and f != course_edition.INSTRUCTORS] == files(course)
    assert any(f.startswith("solutions/") for f in files(toc))


def test_course_toc_leaves_out_the_instructors_page_and_keeps_its_sections():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    course = course_edition.course_toc(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    files = [c["file"] for p in course["parts"] for c in p["chapters"]]
    files += [s["file"] for p in course["parts"] for c in p["chapters"]
              for s in c.get("sections", [])]
    assert course_edition.INSTRUCTORS not in files and "book/mistakes" in files
    assert "For instructors" not in [p.get("caption") for p in course["parts"]]
    assert any(c["file"] == course_edition.INSTRUCTORS for p in toc["parts"]
               for c in p["chapters"])


def test_a_build_points_to_the_repository_it_is_given_else_to_the_configured_one(tmp_path):
    assert edition.repository({}) == (PUBLIC, "_config.yml's repository.url")
    fork = {edition.ENV: "someone/rnn-fork"}
    assert edition.repository(fork) == ("https://github.com/someone/rnn-fork", edition.ENV)
    assert edition.repository({edition.ENV: COURSE + "/"}, "course") == (COURSE, edition.ENV)
    url = edition.write("self-study", tmp_path, fork)
    conf = yaml.safe_load((tmp_path / "_config.yml").read_text())
    assert url == conf["repository"]["url"] == conf["sphinx"]["config"]["rnnbook_repository"]
    assert conf["launch_buttons"]["colab_url"]  # the self-study edition keeps its buttons
    assert not (tmp_path / "_toc.yml").exists()


@pytest.mark.parametrize("environ", [{}, {edition.ENV: PUBLIC}, {edition.ENV: "no-slash"}])
def test_the_course_edition_refuses_the_public_repository_or_none(environ, capsys):
    with pytest.raises(SystemExit) as stopped:
        edition.repository(environ, "course")
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("edition: error: ") and error.count("\n") == 1


def test_the_pages_workflow_builds_with_the_repository_it_runs_in():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    build = [step for step in workflow["jobs"]["build"]["steps"] if "make book" in
             step.get("run", "")]
    assert build and build[0]["env"][edition.ENV] == "${{ github.repository }}"


def test_the_intro_names_the_configured_repository_where_it_says_how_to_install():
    """The edition rewrites the configured URL: a page that names another is left behind."""
    text = (ROOT / "book" / "intro.md").read_text()
    assert f"git clone {PUBLIC} " in text and f'"rnnbook[jupyter] @ git+{PUBLIC}"' in text


def test_the_course_edition_cuts_its_blocks_and_renames_the_repository():
    conf = type("Config", (), dict(rnnbook_public=PUBLIC, rnnbook_repository=COURSE,
                                   rnnbook_edition="course"))
    page = (f"a {PUBLIC} b\n```{{only}} not course\nsee {{doc}}`instructors`\n```\nc\n"
            "1. item\n\n   ```{only} not course\n   Binder\n   ```\n   d\n")
    assert edition.edited(conf, page) == f"a {COURSE} b\nc\n1. item\n\n   d\n"
    conf.rnnbook_edition = "self-study"
    assert "instructors" in edition.edited(conf, page)


def test_the_course_edition_says_no_word_of_a_solutions_part():
    """Every sentence of the book's pages that points to the Solutions part is cut in the
    course edition (each chapter's last paragraph, Chapter 4's, the intro's item on hints),
    wherever its source wraps it; the self-study edition keeps them."""
    course = type("Config", (), dict(rnnbook_public="", rnnbook_repository="",
                                     rnnbook_edition="course"))
    study = type("Config", (), dict(rnnbook_public="", rnnbook_repository="",
                                    rnnbook_edition="self-study"))
    pointing = 0
    for path in sorted((ROOT / "book").glob("*.ipynb")) + [ROOT / "book" / "intro.md"]:
        text = path.read_text()
        pointing += "Solutions" in text
        assert "Solutions" not in edition.edited(course, text, f"book/{path.stem}"), path
        assert edition.edited(study, text) == text
    assert pointing >= 7  # six chapters and the intro
    wrapped = ("see {doc}`x`; worked answers are in the\nbook's Solutions part (left out of "
               "a course's edition).")
    assert edition.without_solutions(wrapped) == "see {doc}`x`."


def test_the_course_edition_names_mistakes_without_their_fixes():
    course = type("Config", (), dict(rnnbook_public="", rnnbook_repository="",
                                     rnnbook_edition="course"))
    page = (ROOT / "book" / "mistakes.md").read_text()
    shown = edition.edited(course, page, edition.MISTAKES)
    mistakes = [line for line in page.splitlines() if line.startswith("- ")]
    assert len(mistakes) > 100 and all(": " in line for line in mistakes)  # names_only cuts there
    fix = "a gate is a block of H columns"  # what the self-study page adds after the name
    assert "- you split the rows.\n" in shown and fix not in shown
    assert f"- you split the rows: {fix}" in page
    assert all(": " not in line for line in shown.splitlines() if line.startswith("- "))
    assert edition.edited(course, page, "book/notation") == page  # only the mistakes page


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course edition, built as `make book EDITION=course REPOSITORY=...` builds it."""
    out = tmp_path_factory.mktemp("course")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "edition.py"), "course", str(out)],
                   check=True, capture_output=True, env={**os.environ, edition.ENV: COURSE})
    exe = pathlib.Path(sys.executable).with_name("jupyter-book")
    run = subprocess.run([str(exe if exe.exists() else shutil.which("jupyter-book")), "build",
                          str(ROOT), "-W", "-n", "--keep-going", "--config",
                          str(out / "_config.yml"), "--toc", str(out / "_toc.yml"),
                          "--path-output", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out / "_build" / "html"


def pages(html):
    """``(path, text without tags, raw text)`` of every page and source copy of the build."""
    unescape = {"&quot;": '"', "&#39;": "'", "&lt;": "<", "&gt;": ">", "&amp;": "&"}
    for page in sorted(html.rglob("*")):
        if page.suffix not in (".html", ".ipynb", ".md", ".txt", ".py") or not page.is_file():
            continue
        raw = page.read_text(errors="replace")
        text = re.sub(r"<[^>]+>", "", raw)
        for escaped, plain in unescape.items():
            text = text.replace(escaped, plain)
        yield page.relative_to(html), text, raw


@pytest.mark.slow
def test_course_edition_holds_no_solution_code(course):
    html = course
    assert not (html / "solutions").exists() and not (html / "_sources" / "solutions").exists()
    assert (html / "notebooks" / "01-basic-rnn-cell.html").is_file()
    wanted = solution_lines()
    assert len(wanted) > 20
    for name, text, _ in pages(html):
        leaked = [line for line in wanted if line in text]
        assert not leaked, f"{name} holds solution code: {leaked[:3]}"


@pytest.mark.slow
def test_course_edition_points_only_to_the_course_and_has_no_instructors_page(course):
    html = course
    assert not (html / "book" / "instructors.html").exists()
    assert (html / "book" / "mistakes.html").is_file()
    for name, text, raw in pages(html):
        assert PUBLIC not in raw, f"{name} names the public repository {PUBLIC}"
        for button in ("mybinder.org", "colab.research.google.com"):
            assert button not in raw, f"{name} has a launch button ({button})"
        assert "For instructors" not in text and "instructors.html" not in raw, name
        assert "Binder" not in text, f"{name} speaks of Binder, which the course has no button for"
    notebook = (html / "notebooks" / "01-basic-rnn-cell.html").read_text()
    assert f'href="{COURSE}"' in notebook  # the repository button
    setup = re.sub(r"<[^>]+>", "", notebook).replace("&quot;", '"')
    assert f'%pip install --quiet "rnnbook @ git+{COURSE}"' in setup  # the learner release
    intro = (html / "book" / "intro.html").read_text()
    assert "open a notebook from your course" in intro  # its {only} course block
    source_copy = (html / "_sources" / "notebooks" / "01-basic-rnn-cell.ipynb").read_text()
    assert f"git+{COURSE}" in source_copy  # what the page's download button gives


@pytest.mark.slow
def test_course_edition_pages_say_no_word_of_solutions_and_name_mistakes_only(course):
    for name, text, _ in pages(course):
        if name.suffix == ".html":
            assert "Solutions" not in text and "worked answers" not in text.lower(), name
    mistakes = re.sub(r"<[^>]+>", "", (course / "book" / "mistakes.html").read_text())
    assert "you split the rows." in mistakes and "H:2H" not in mistakes


@pytest.mark.slow
def test_course_edition_shows_no_tex_as_text_and_has_no_dead_relative_link(course):
    found = [f"{page.relative_to(course)}: {what}" for page in rendered.pages(course)
             for what in rendered.unrendered_tex(page.read_text(encoding="utf-8"))]
    assert not found, "TeX left unrendered:\n" + "\n".join(found)
    assert rendered.dead_links(course) == []


@pytest.mark.slow
def test_every_course_page_reads_at_1280_and_390_px(course, tmp_path):
    """tests/test_book.py's rendered check, on the course edition's pages."""
    browser = rendered.need_browser(rendered.find_browser())
    measured = rendered.measure(browser, course, tmp_path)
    assert len(measured) == 2 * len(rendered.pages(course)) >= 2 * 15
    found = rendered.report(measured)
    assert not found, f"{len(found)} problems:\n" + "\n".join(found)
