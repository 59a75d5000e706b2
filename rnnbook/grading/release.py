"""What instructors hand out: the Gradescope bundle and the learner release.

    python -m rnnbook.grading.release autograder --chapter STEM [--out _build/autograder.zip]
        [the bundle's options: --seed N, --timeout S, ... (--help lists them)]
    python -m rnnbook.grading.release learners [--out _build/release] [--repository URL]

``autograder`` (``make autograder CHAPTER=...``) writes the zip for Gradescope: the scripts and
README from ``templates/``, ``autograder.json`` (the settings: the grader's options that
:mod:`.config` declares ``bundle=True``), ``exercises.json`` (each
chapter's exercise table, read from ``solutions/``), ``requirements.txt``, ``pyproject.toml`` and
the whole ``rnnbook`` package; with a fixed seed (``SEED=N``), ``expected.pickle``: the
chapter's expected answers on that seed's trials, computed by the oracles (TensorFlow) as the
grader would, so that a submission's cold start need not import TensorFlow for them
(:func:`.run.expected_answers`); for a chapter whose checks prebuild graphs (4-7),
``prebuilt.pickle``: those graphs, so that a cold start need not build them
(:func:`.run.prebuilt_graphs`). No solution notebook.

``learners`` (``make release``) writes the folder students get: ``notebooks/`` (generated
afresh from ``solutions/``), the ``rnnbook`` package without ``rnnbook/grading/`` (the whole
folder), without the generator, and with ``reference.py`` and
``backward.py`` replaced by a stub that raises ImportError; ``requirements.txt`` (the pins of
what a student needs: the package's dependencies and its ``jupyter`` extra, no maintainers'
tool), a ``pyproject.toml`` for ``pip install -e .``, a ``.gitignore`` (with the students'
own ``my-notebooks/``: :mod:`rnnbook.workspace`) and a README that says where the published
book is and how to work in and update ``my-notebooks/``. Every cross-reference of the
notebooks into the book is a link to the published book (:func:`.generate.book_url`). No
solution code.
``--repository`` (``make release REPOSITORY=...``) is the course's repository the release is
published in: the notebooks' Colab cells install the package from there.
"""
import argparse
import dataclasses
import json
import pathlib
import re
import shutil
import stat
import sys
import tomllib
import zipfile
from typing import Any

from rnnbook import checks, generate, source
from rnnbook.grading import config, run
from rnnbook.grading.config import EXERCISES, EXPECTED, PREBUILT, ROOT, SOLUTIONS
from rnnbook.grading.gradescope import SETTINGS
from rnnbook.grading.walls import INSTRUCTOR, STUBBED

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"
PYPROJECT_SECTIONS = ("[build-system]", "[project]", "[project.optional-dependencies]",
                      "[tool.setuptools]")
#: the extras of pyproject.toml a student installs (a Jupyter to open the notebooks in)
LEARNER_EXTRAS = ("jupyter",)


#: the learner release's pyproject.toml describes what it holds
LEARNER_DESCRIPTION = ("Set-up and checks for the exercises of the RNN Internals book "
                       "(the learner release)")


def _pyproject(learner: bool) -> str:
    """pyproject.toml cut to what ``pip install -e .`` needs (no tests). For learners: no
    grading packages (their comment lines go too) and a description of the learner package."""
    kept: list[str] = []
    keep, comments = False, list[str]()
    for line in (ROOT / "pyproject.toml").read_text().splitlines():
        if line.startswith("["):
            keep = line.strip() in PYPROJECT_SECTIONS
            if learner and line.strip() == "[tool.setuptools.package-data]":
                keep = False
        if not keep:
            comments = []
            continue
        if line.startswith("#"):
            comments.append(line)
            continue
        if learner and line.startswith("packages"):
            names = [n for n in tomllib.loads(line)["packages"]
                     if not n.startswith("rnnbook.grading")]
            line, comments = "packages = " + json.dumps(names), []
        if learner and line.startswith("description"):
            line = "description = " + json.dumps(LEARNER_DESCRIPTION)
        kept += comments + [line]
        comments = []
    return "\n".join(kept).strip() + "\n"


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement line (``tf_keras>=2`` -> tf-keras)."""
    return re.split(r"[<>=!~;\[ ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def learner_requirements() -> str:
    """requirements.txt's pins of what a student needs: the package's dependencies and its
    :data:`LEARNER_EXTRAS` (no book builder, test runner or linter)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + [
        r for extra in LEARNER_EXTRAS for r in project["optional-dependencies"][extra]]
    names = {_name(r) for r in wanted}
    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#") and _name(line) in names]
    missing = names - {_name(line) for line in pins}
    if missing:
        raise source.SourceError(f"requirements.txt pins no {', '.join(sorted(missing))}")
    return ("# What a student needs, pinned as the book ran it (make release writes this from\n"
            "# the book's requirements.txt): the rnnbook package's dependencies and Jupyter.\n"
            + "\n".join(pins) + "\n")


def package_files(learner: bool) -> list[tuple[pathlib.Path, pathlib.Path]]:
    """``[(path in the release, file)]`` of the rnnbook package (no caches)."""
    files = []
    for path in sorted((ROOT / "rnnbook").rglob("*")):
        relative = path.relative_to(ROOT)
        parts = relative.parts[1:]
        if path.is_dir() or "__pycache__" in parts or path.suffix == ".pyc":
            continue
        if path.suffix != ".py" and parts[0] != "grading":
            continue
        if learner and parts[0] in INSTRUCTOR:
            continue
        if learner and len(parts) == 1 and parts[0] in STUBBED:
            path = TEMPLATES / "learner-stub.py"
        files.append((relative, path))
    return files


def _source_notebooks() -> list[pathlib.Path]:
    paths = sorted(SOLUTIONS.glob("*.ipynb"))
    if not paths:
        raise source.SourceError(f"{SOLUTIONS}: no exercise notebooks")
    return paths


def _add(bundle: zipfile.ZipFile, name: str, data: bytes | str,
         executable: bool = False) -> None:
    """One file in the zip, with fixed date and mode: the same sources give the same bytes."""
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


def unpack_as_gradescope(bundle: pathlib.Path, root: pathlib.Path) -> pathlib.Path:
    """The bundle unpacked as Gradescope unpacks it: ``root/source/...`` from the zip, file
    modes kept, ``root/run_autograder`` a copy of the bundle's, empty ``submission/`` and
    ``results/`` (the tests and ``make bench``'s cold rows use it); returns ``root``."""
    with zipfile.ZipFile(bundle) as z:
        for info in z.infolist():
            target = root / "source" / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))
            target.chmod((info.external_attr >> 16) & 0o777 or 0o644)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return root


def autograder(out: str | pathlib.Path, chapter: str | None,
               **settings: Any) -> pathlib.Path:
    """Write the Gradescope bundle to ``out`` (a .zip) for ``chapter``, with the
    bundle's ``settings`` (:func:`.config.bundle_names`; ``None``: the default); returns
    its path."""
    if chapter not in checks.CHAPTERS:
        raise source.SourceError(f"choose the assignment's chapter (CHAPTER=...): one of "
                                 f"{', '.join(checks.CHAPTERS)}")
    unknown = sorted(set(settings) - set(config.bundle_names()))
    if unknown:
        raise source.SourceError(f"the bundle has no setting {', '.join(unknown)}")
    try:
        bundled = config.from_settings({**settings, "chapter": chapter})
    except ValueError as error:
        raise source.SourceError(str(error)) from None
    try:  # the grader's own table (run.exercise_cells), as exercises.json holds it
        table = {stem: [dataclasses.asdict(c) for c in cells]
                 for stem, cells in run.exercise_cells().items()}
    except run.GradeError as error:
        raise source.SourceError(str(error)) from None
    if chapter not in table:
        raise source.SourceError(f"{SOLUTIONS / chapter}.ipynb: no such notebook")
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", (TEMPLATES / "setup.sh").read_text(), executable=True)
        _add(bundle, "run_autograder", (TEMPLATES / "run_autograder").read_text(),
             executable=True)
        _add(bundle, "README.md", (TEMPLATES / "bundle-README.md").read_text())
        settings_text = json.dumps(config.bundle_settings(bundled), indent=2)
        _add(bundle, SETTINGS, settings_text + "\n")
        _add(bundle, EXERCISES, json.dumps(table, indent=2) + "\n")
        if bundled.seed is not None:  # fixed trials: TensorFlow answers them once, here
            _add(bundle, EXPECTED, run.expected_answers(chapter, bundled.seed))
        graphs = run.prebuilt_graphs(chapter)
        if graphs is not None:  # the chapter's graphs, built once, here
            _add(bundle, PREBUILT, graphs)
        _add(bundle, "requirements.txt", (ROOT / "requirements.txt").read_bytes())
        _add(bundle, "pyproject.toml", _pyproject(learner=False))
        for relative, path in package_files(learner=False):
            _add(bundle, str(relative), path.read_bytes(),
                 executable=bool(path.stat().st_mode & 0o111) and path.suffix != ".py")
    tmp.replace(out)
    return out


def learners(out: str | pathlib.Path, repository: str | None = None) -> pathlib.Path:
    """Write the learner release into the folder ``out`` (replaced if it exists); its
    notebooks' Colab cells install from ``repository`` (default: the book's)."""
    out = pathlib.Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    url = generate.repository_from(repository) if repository else generate.repository_url()
    book = generate.book_url(url)
    for path in _source_notebooks():
        nb = generate.learner_copy(source.read(path), str(path))
        cell = nb.cells[generate.setup_cell(nb)]
        cell.source = generate.with_setup_block(cell.source, url, str(path))
        for index, cell in enumerate(nb.cells):  # the book is not in the release: link to it
            if cell.cell_type == "markdown":
                cell.source = generate.linked_to_book(cell.source, book,
                                                      f"notebooks/{path.stem}",
                                                      f"{path}, cell {index}")
        (out / "notebooks" / path.name).write_text(generate.text(nb))
    for relative, path in package_files(learner=True):
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out / relative)
    (out / "requirements.txt").write_text(learner_requirements())
    (out / "pyproject.toml").write_text(_pyproject(learner=True))
    readme = (TEMPLATES / "student-README.md").read_text()
    (out / "README.md").write_text(readme.replace("{book}", book).replace(
        "{install}", generate.INSTALL))
    shutil.copyfile(TEMPLATES / "student-gitignore", out / ".gitignore")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnbook.grading.release",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    bundle = sub.add_parser("autograder", help="the Gradescope bundle (a zip)")
    bundle.add_argument("--out", type=pathlib.Path, default=ROOT / "_build" / "autograder.zip")
    config.add_options(bundle, bundle=True, required=("chapter",))
    release = sub.add_parser("learners", help="the folder to give students")
    release.add_argument("--out", type=pathlib.Path, default=ROOT / "_build" / "release")
    release.add_argument("--repository", help="the course's repository (URL or GitHub "
                         "owner/name) the release is published in: the notebooks' Colab "
                         "cells install from it (default: _config.yml's repository.url)")
    args = parser.parse_args(argv)
    try:
        if args.what == "autograder":
            path = autograder(args.out, **config.given(args))
        else:
            path = learners(args.out, args.repository)
            url = generate.repository_from(args.repository or generate.repository_url())
            print(f"release: the notebooks' Colab cells install from {url}"
                  + ("" if args.repository else " (REPOSITORY=<url>: the course's repository)"))
    except source.SourceError as error:
        print(f"release: error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
