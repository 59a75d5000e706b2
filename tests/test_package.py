"""The package a Colab learner installs: ``%pip install "rnnbook @ git+<url>"`` builds a wheel
from ``pyproject.toml``, so every module a book page or an exercise notebook imports must be
in that wheel, and not only in this checkout."""
import re
import shutil
import subprocess
import sys
import zipfile

import nbformat

from tests.test_book import ROOT

IMPORT = re.compile(
    r"^\s*(?:from\s+(rnnbook(?:\.\w+)*)\s+import\s+(.+)|import\s+(rnnbook(?:\.\w+)*))",
    re.MULTILINE)


def imported_modules(source):
    """The rnnbook modules a piece of code imports: ``from rnnbook import graphs`` names
    ``rnnbook.graphs`` (a module) or a name in ``rnnbook`` (then ``rnnbook`` itself)."""
    found = set()
    for frm, names, plain in IMPORT.findall(source):
        if plain:
            found.add(plain)
            continue
        found.add(frm)
        for name in re.split(r"[,\s()]+", names):
            if name and name != "as":
                found.add(f"{frm}.{name}")  # kept only if it is a module (see below)
    return found


def pages():
    for folder in ("book", "notebooks"):
        yield from sorted((ROOT / folder).glob("*.ipynb"))


def build_wheel(tmp, pyproject):
    """The files of a wheel built from a copy of the package with this ``pyproject`` text, as
    pip builds it from git."""
    src, out = tmp / "src", tmp / "wheel"
    src.mkdir()
    (src / "pyproject.toml").write_text(pyproject)
    shutil.copytree(ROOT / "rnnbook", src / "rnnbook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "--no-build-isolation", "--wheel-dir", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("rnnbook-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def missing_from(wheel_files):
    """``page: module`` for every rnnbook module a page imports that the wheel lacks."""
    missing = []
    for path in pages():
        nb = nbformat.read(str(path), as_version=4)
        source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        for module in sorted(imported_modules(source)):
            as_path = module.replace(".", "/")
            if not ((ROOT / f"{as_path}.py").exists()
                    or (ROOT / as_path / "__init__.py").exists()):
                continue  # a function or class imported from a module, not a module
            if not {f"{as_path}.py", f"{as_path}/__init__.py"} & wheel_files:
                missing.append(f"{path.relative_to(ROOT)}: {module}")
    return missing


def test_every_module_the_pages_import_is_in_the_installed_package(tmp_path):
    missing = missing_from(build_wheel(tmp_path, (ROOT / "pyproject.toml").read_text()))
    assert not missing, "imported by a page but not in the wheel pip builds:\n" + "\n".join(
        missing)


def test_the_wheel_check_sees_a_subpackage_left_out(tmp_path):
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"rnnbook.checks", ' in pyproject
    files = build_wheel(tmp_path, pyproject.replace('"rnnbook.checks", ', ""))
    assert "notebooks/04-stateful-batching.ipynb: rnnbook.checks.ch04" in missing_from(files)


def test_the_import_scan_finds_modules_and_names():
    code = ("import rnnbook\nfrom rnnbook.plots import figure, chunk_runs\n"
            "from rnnbook import graphs")
    assert imported_modules(code) == {"rnnbook", "rnnbook.plots", "rnnbook.plots.figure",
                                      "rnnbook.plots.chunk_runs", "rnnbook.graphs"}


# ---------------------------------------------------------------- declared dependencies

#: the learner side: what a notebook imports (not the grader, the generator, the source reader)
INSTRUCTOR_ONLY = ("generate.py", "source.py")


def declared():
    """``{distribution: SpecifierSet}`` of pyproject.toml's ``dependencies``."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {Requirement(r).name: Requirement(r).specifier for r in project["dependencies"]}


def pins():
    """``{distribution: version}`` of requirements.txt's exact pins."""
    found = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "requirements.txt").read_text(),
                       re.MULTILINE)
    return {name.lower().replace("_", "-"): version for name, version in found}


def top_level_imports(code):
    """The top-level names of every absolute import in ``code`` (parsed, not grepped), but an
    optional one: an import in a ``try`` whose handler catches ImportError (rnnbook.numbers
    glues with myst-nb where the book is built and does nothing without it)."""
    import ast

    tree = ast.parse(code)
    optional = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.Try)
                and any(getattr(h.type, "id", "") in ("ImportError", "ModuleNotFoundError")
                        for h in node.handlers)
                for stmt in node.body for inner in ast.walk(stmt)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_pip_install_of_the_package_brings_what_the_learner_side_imports():
    """Every third-party module the learner side imports is declared (tf-keras too: the TF1
    cells live there, though only TensorFlow imports it)."""
    import importlib.metadata
    import sys as _sys

    distributions = importlib.metadata.packages_distributions()
    needed = {"tf-keras"}
    for path in (ROOT / "rnnbook").rglob("*.py"):
        if "grading" in path.parts or path.name in INSTRUCTOR_ONLY:
            continue
        for top in top_level_imports(path.read_text()):
            if top in _sys.stdlib_module_names or top in ("rnnbook", "__future__"):
                continue
            needed |= {d.lower().replace("_", "-") for d in distributions.get(top, [top])}
    assert needed - set(declared()) == set(), "imported but not declared in pyproject.toml"


def test_the_pins_are_inside_the_declared_ranges_and_the_ranges_admit_colab():
    ranges, pinned = declared(), pins()
    for name, specifier in ranges.items():
        assert pinned[name] in specifier, (name, pinned[name], str(specifier))
    for oldest in ("2.19.0", "2.19.1", "2.20.0"):  # what Colab has run since 2025
        assert oldest in ranges["tensorflow"] and oldest in ranges["tf-keras"]
    assert "2.22.0" not in ranges["tensorflow"]  # untested: not admitted
    assert ranges["tensorflow"] == ranges["tf-keras"]  # released in step


def test_the_intro_states_the_supported_range():
    """Learners read it in the book's intro, *Versions* (the README links there)."""
    text = (ROOT / "book" / "intro.md").read_text()
    spec = str(declared()["tensorflow"])  # e.g. "<2.22,>=2.19"
    low = re.search(r">=([\d.]+)", spec).group(1)
    high = re.search(r"<([\d.]+)", spec).group(1)
    newest = f"{high.split('.')[0]}.{int(high.split('.')[1]) - 1}"
    assert f"TensorFlow {low} to {newest}" in text, (low, newest)


def test_the_jupyter_extra_is_pinned_inside_its_ranges_and_opens_the_notebooks():
    """`pip install -e ".[jupyter]"` (the intro's command, the set-up cell's advice) brings a
    JupyterLab that renders the exercise boxes, and a kernel; requirements.txt pins each."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = {Requirement(r).name: Requirement(r).specifier
             for r in project["optional-dependencies"]["jupyter"]}
    assert {"jupyterlab", "jupyterlab-myst", "ipykernel"} <= set(extra)
    pinned = pins()
    for name, specifier in extra.items():
        assert name in pinned and pinned[name] in specifier, (name, str(specifier))
    assert '-e ".[jupyter]"' in (ROOT / "book" / "intro.md").read_text()
