"""The learner release (``make release``): what students get holds no solution, and works.

The release is built once (``python -m rnnbook.grading.release learners``) into a temporary folder. No
file in it may carry the solution markers or a solution line; the package may share the odd
line with a solution (a check's mistake model computes a near-solution), but not most of one.
A learner notebook from the release then runs in a real kernel against the release's own
``rnnbook`` (PYTHONPATH and the working folder point into the release).
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib

import nbclient
import nbformat
import pytest

from conftest import ROOT
from rnnbook import generate, source
from rnnbook.grading import release

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
MIN = 12  # lines this short ("return h", "c, h = state") say nothing about a solution


def solution_lines(ex, nb):
    """The distinct code lines (comments dropped) of an exercise's solution, long enough to tell."""
    body = nb.cells[ex.cell].source.split(source.BEGIN, 1)[1].split(source.END, 1)[0]
    return {line.split("#")[0].strip() for line in body.splitlines()} - {""}


EXERCISES = [(path, ex) for path in SOLUTIONS for ex in source.exercises(source.read(path))]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return release.learners(tmp_path_factory.mktemp("release") / "release")


def files(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_release_layout(built):
    names = {str(p.relative_to(built)) for p in files(built)}
    assert {"README.md", "requirements.txt", "pyproject.toml", "rnnbook/__init__.py",
            "rnnbook/exercise.py", "rnnbook/compare.py", "rnnbook/byhand.py", "rnnbook/memo.py",
            "rnnbook/plaindata.py", "rnnbook/checks/ch01.py"} <= names
    assert {f"notebooks/{p.name}" for p in SOLUTIONS} <= names
    assert not (built / "solutions").exists() and not (built / "book").exists()
    for part in release.INSTRUCTOR:  # the instructor's folder and tools: not for students
        assert not (built / "rnnbook" / part).exists(), part
    stub = (release.TEMPLATES / "learner-stub.py").read_text()
    for module in release.STUBBED:  # they would solve exercises: a stub in their place
        if (ROOT / "rnnbook" / module).exists():
            assert (built / "rnnbook" / module).read_text() == stub, module
    shipped = {p.relative_to(built / "rnnbook") for p in files(built / "rnnbook")}
    learner_side = {p.relative_to(ROOT / "rnnbook") for p in (ROOT / "rnnbook").rglob("*.py")
                    if "grading" not in p.parts and p.name not in release.INSTRUCTOR}
    assert shipped == learner_side  # everything else of the learner side, and nothing more
    config = tomllib.loads((built / "pyproject.toml").read_text())
    for package in config["tool"]["setuptools"]["packages"]:  # what `pip install -e .` installs
        assert (built / package.replace(".", "/") / "__init__.py").exists(), package
    assert "pytest" not in config.get("tool", {})
    readme = (built / "README.md").read_text()
    assert "rnnbook.workspace init" in readme and "jupyter lab my-notebooks/" in readme
    # the set-up cell's advice off Colab, `pip install -e ".[jupyter]"`, works in the release
    assert config["project"]["optional-dependencies"]["jupyter"]


def pinned(text):
    return {line.split("==")[0].lower(): line for line in text.splitlines()
            if line.strip() and not line.startswith("#")}


def test_the_release_s_workspace_command_copies_its_notebooks(built, tmp_path):
    """The README's `python -m rnnbook.workspace init`, run in the release: my-notebooks/ gets
    the release's notebooks (its package has what the command needs)."""
    copy = tmp_path / "release"
    shutil.copytree(built, copy)
    run = subprocess.run([sys.executable, "-m", "rnnbook.workspace", "init"], cwd=copy,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert str(copy / "my-notebooks") in run.stdout
    for path in (copy / "notebooks").glob("*.ipynb"):
        assert (copy / "my-notebooks" / path.name).read_bytes() == path.read_bytes()


def test_release_requirements_carry_what_a_student_needs_and_no_maintainers_tool(built):
    pins, book = pinned((built / "requirements.txt").read_text()), pinned(
        (ROOT / "requirements.txt").read_text())
    assert set(pins.values()) <= set(book.values())  # the book's own pins, as it ran
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = project["dependencies"] + project["optional-dependencies"]["jupyter"]
    names = {release._name(r) for r in needed}
    assert set(pins) == names, "the package's dependencies and its [jupyter] extra, no more"
    for tool in ("jupyter-book", "pytest", "ruff", "nbval", "copydetect", "sphinx-exercise"):
        assert not any(name.startswith(tool) for name in pins), tool
    assert {"tensorflow", "tf-keras", "jupyterlab", "jupyterlab-myst"} <= set(pins)


def python_versions(text):
    return set(re.findall(r"\b3\.1\d\b", text))


def test_release_readme_states_the_intro_s_python_range(built):
    """The intro's *Versions* says 3.11 and 3.12 (tests/test_package.py holds it to the
    classifiers); the release's README says the same, and no open-ended "or newer"."""
    intro = (ROOT / "book" / "intro.md").read_text()
    versions = intro.split("(versions)=", 1)[1].split("| Package |", 1)[0]
    wanted = python_versions(versions.split("Python", 1)[1].split(")", 1)[0])
    readme = (built / "README.md").read_text()
    heading = next(line for line in readme.splitlines() if line.startswith("## Set up"))
    assert wanted == {"3.11", "3.12"} and python_versions(heading) == wanted, heading
    assert "or newer" not in readme and "or later" not in readme


def test_release_notebooks_install_from_the_course_s_repository(tmp_path):
    course = "https://github.com/example-university/rnn-course"
    out = release.learners(tmp_path / "release", "example-university/rnn-course")
    for path in sorted((out / "notebooks").glob("*.ipynb")):
        text = path.read_text()
        assert f"rnnbook @ git+{course}" in text and generate.repository_url() not in text


def test_release_has_no_solution_markers(built):
    for path in files(built):
        text = path.read_text(errors="replace")
        assert source.BEGIN not in text and source.END not in text, path
        assert "BEGIN SOLUTION" not in text, path


@pytest.mark.parametrize(("path", "ex"), EXERCISES, ids=lambda v: getattr(v, "name", ""))
def test_release_holds_no_solution_code(built, path, ex):
    """No solution line in the notebooks or the README; no file in the package holds most of
    a solution (every file: its lines, comments dropped, stripped)."""
    lines = {line for line in solution_lines(ex, source.read(path)) if len(line) > MIN}
    for target in files(built):
        held = {line.split("#")[0].strip() for line in target.read_text(errors="replace").splitlines()}
        shared = lines & held
        if target.suffix == ".py":
            assert len(shared) * 2 < len(lines) or not lines, (
                f"{target.relative_to(built)} holds most of the solution of {ex.number} {ex.name}: "
                f"{sorted(shared)}")
        else:
            assert not shared, f"{target.relative_to(built)}: {sorted(shared)}"


@pytest.mark.slow
def test_learner_notebook_from_the_release_runs_its_checks(built, monkeypatch):
    """Chapter 1's learner notebook from the release, with one exercise solved: that check
    passes, the others ask for their function, and `rnnbook` is the release's copy."""
    path = built / "notebooks" / "01-basic-rnn-cell.ipynb"
    nb = source.read(path)
    solved = source.read(ROOT / "solutions" / path.name)
    first = source.exercises(solved)[0]
    nb.cells[first.cell].source = solved.cells[first.cell].source  # the learner solved 1.1
    nb.cells.append(nbformat.v4.new_code_cell("import rnnbook\nprint(rnnbook.__file__)"))
    monkeypatch.setenv("PYTHONPATH", str(built))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", [])
                      if o.output_type == "stream")
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert pathlib.Path(printed.strip().splitlines()[-1]) == built / "rnnbook" / "__init__.py"
    assert f"✓ Exercise {first.number} `{first.name}` matches TensorFlow" in printed
    for ex in source.exercises(solved)[1:]:
        assert f"`{ex.name}` is not written yet" in printed, ex.name



def test_release_readme_gives_the_set_up_cell_s_install_command(built):
    readme = (built / "README.md").read_text()
    assert f"-m {generate.INSTALL}\n" in readme and generate.INSTALL in generate.SETUP_BLOCK
    assert "--no-deps" not in readme


def test_release_describes_the_learner_package_and_ignores_what_work_creates(built):
    project = tomllib.loads((built / "pyproject.toml").read_text())
    assert project["project"]["description"] == release.LEARNER_DESCRIPTION
    assert "grader" not in (built / "pyproject.toml").read_text().lower()
    assert not any("grading" in p for p in project["tool"]["setuptools"]["packages"])
    ignored = (built / ".gitignore").read_text().split()
    assert {".venv/", "*.egg-info/", ".ipynb_checkpoints/", "my-notebooks/"} <= set(ignored)


MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>\s]+)>|\{(?:doc|ref)\}`")


def release_links(built):
    """``[(file, link)]`` of every markdown link (and leftover {doc}/{ref} role) in the
    release's notebooks' text and its README."""
    found = []
    texts = [("README.md", (built / "README.md").read_text())]
    for path in sorted((built / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        texts += [(path.name, c.source) for c in nb.cells if c.cell_type == "markdown"]
    for name, text in texts:
        found += [(name, m.group(1) or m.group(2) or m.group(0)) for m in MARKDOWN_LINK.finditer(text)]
    return found


def dead_links(built, book):
    """The release's links that go nowhere: relative ones (the release holds no book),
    leftover cross-reference roles, and links into ``book`` naming no page or label of it."""
    labels = generate.book_labels()
    dead = []
    for name, link in release_links(built):
        if link.startswith(book):
            page, _, anchor = link[len(book):].partition("#")
            if not page:  # the book's front page
                continue
            if not (ROOT / page.removesuffix(".html")).with_suffix(".ipynb").exists() and not (
                    ROOT / page.removesuffix(".html")).with_suffix(".md").exists():
                dead.append((name, link))
            elif anchor and labels.get(anchor, ("",))[0] != page.removesuffix(".html"):
                dead.append((name, link))
        elif not link.startswith(("https://", "http://", "#")):
            dead.append((name, link))
    return dead


def test_release_has_no_dead_link_and_the_readme_names_the_book(built):
    book = generate.book_url(generate.repository_url())
    assert book == "https://rnn-internals.github.io/rnn-internals/"
    assert f"<{book}>" in (built / "README.md").read_text()
    links = [link for _, link in release_links(built)]
    assert f"{book}book/06-gru-layouts.html" in links
    assert f"{book}book/01-basic-rnn-cell.html#one-step-by-hand" in links
    assert dead_links(built, book) == []


def test_the_release_link_check_sees_a_dead_link(built, tmp_path):
    """The check can fail: a relative link, a leftover role, a page or a label the book lacks."""
    book = generate.book_url(generate.repository_url())
    readme = built / "README.md"
    kept = readme.read_text()
    try:
        readme.write_text(kept + "\n[a](../book/06-gru-layouts) {doc}`b <x>`"
                          f" [c]({book}book/07-none.html) [d]({book}book/notation.html#no-label)\n")
        assert [link for _, link in dead_links(built, book)] == [
            "../book/06-gru-layouts", "{doc}`", f"{book}book/07-none.html",
            f"{book}book/notation.html#no-label"]
    finally:
        readme.write_text(kept)


def test_book_url_of_a_repository():
    assert generate.book_url("https://github.com/Example-U/rnn-course") == (
        "https://example-u.github.io/rnn-course/")
    assert generate.book_url("https://gitlab.com/u/c") == "https://gitlab.com/u/c/"
    with pytest.raises(source.SourceError, match="no-such-label"):
        generate.linked_to_book("{ref}`no-such-label`", "https://x/", "notebooks/01-x")


def test_every_folder_of_the_package_is_declared_so_it_installs_without_a_warning():
    """setuptools warns ("Package 'rnnbook.grading.templates' is absent from the `packages`
    configuration") about a folder of package data that `packages` does not name."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {str(p.relative_to(ROOT)).replace("/", ".") for p in (ROOT / "rnnbook").rglob("*")
               if p.is_dir() and p.name != "__pycache__" and any(q.is_file() for q in p.iterdir())}
    assert folders | {"rnnbook"} == set(config["packages"])
    assert config["package-data"] == {"rnnbook.grading.templates": ["*"]}
    assert release.TEMPLATES.name == "templates" and (release.TEMPLATES / "setup.sh").is_file()
