"""Building what instructors hand out: the Gradescope bundle and the learner release.

    python -m rnnbook.release autograder [--out _build/autograder.zip] [--chapter STEM]
                                         [--seed N] [--timeout S] [--cell-timeout S] [--memory MB]
    python -m rnnbook.release learners [--out _build/release]

``autograder`` (``make autograder``) writes the zip for Gradescope's "Zip file upload". At its top:
``setup.sh`` (run once by Gradescope: Python 3.11+, a venv with the pinned requirements, the
rnnbook package), ``run_autograder`` (run for each submission: ``python -m rnnbook.gradescope``),
``autograder.json`` (the settings given here), ``requirements.txt``, ``pyproject.toml``, the
``rnnbook`` package and ``solutions/`` (the grader reads each exercise's points from its header;
only Gradescope sees the zip, never a student).

``learners`` (``make release``) writes a folder to give students: ``notebooks/`` (generated
afresh from ``solutions/``: stubs in place of the solutions), the ``rnnbook`` package without
the instructor's modules (grader, sandbox, generator, this one), ``requirements.txt``, a
``pyproject.toml`` for ``pip install -e .`` and a README. No solution code.
"""
import argparse
import json
import pathlib
import shutil
import stat
import sys
import zipfile

from rnnbook import checks, generate, gradescope, source

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: modules that only instructors need; the learner release leaves them out
INSTRUCTOR_MODULES = {"grade.py", "sandbox.py", "isolate.py", "gradescope.py", "release.py",
                      "generate.py", "source.py"}
PYPROJECT_SECTIONS = ("[build-system]", "[project]", "[tool.setuptools]")

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu, python3).
# It finds Python 3.11 or newer (installing python3.11 with apt when the image's python3 is
# older), makes a venv in source/.venv with the pinned requirements.txt, installs the rnnbook
# package from source/ (editable: the grader reads solutions/ next to it), and checks that
# TensorFlow loads, so that a broken image fails here and not on every submission.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export DEBIAN_FRONTEND=noninteractive

recent() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }

PY=""
for candidate in python3.11 python3.12 python3; do
    if command -v "$candidate" >/dev/null && recent "$candidate"; then
        PY="$(command -v "$candidate")"
        break
    fi
done
if [ -z "$PY" ]; then
    apt-get update
    if ! apt-get install -y --no-install-recommends python3.11 python3.11-venv; then
        apt-get install -y --no-install-recommends software-properties-common
        add-apt-repository -y ppa:deadsnakes/ppa
        apt-get update
        apt-get install -y --no-install-recommends python3.11 python3.11-venv
    fi
    PY="$(command -v python3.11)"
fi
if ! "$PY" -m venv "$SOURCE/.venv"; then  # Debian's python3 keeps venv in a separate package
    rm -rf "$SOURCE/.venv"
    VERSION="$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt-get update
    apt-get install -y --no-install-recommends "python$VERSION-venv"
    "$PY" -m venv "$SOURCE/.venv"
fi
"$SOURCE/.venv/bin/python" -m pip install --quiet --upgrade pip
"$SOURCE/.venv/bin/python" -m pip install --quiet -r "$SOURCE/requirements.txt"
"$SOURCE/.venv/bin/python" -m pip install --quiet --no-deps -e "$SOURCE"
cd "$SOURCE" && "$SOURCE/.venv/bin/python" -c \
    "import rnnbook, rnnbook.grade; rnnbook.setup(); print('rnnbook autograder ready')"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission: grade the notebook in $AUTOGRADER_ROOT/submission
# into $AUTOGRADER_ROOT/results/results.json (AUTOGRADER_ROOT: /autograder unless set).
# RNNBOOK_PYTHON picks the interpreter (default: the venv setup.sh made in source/.venv).
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${RNNBOOK_PYTHON:-$ROOT/source/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"
mkdir -p "$ROOT/results"
cd "$ROOT/source" && "$PYTHON" -m rnnbook.gradescope --root "$ROOT"
status=$?
if [ ! -s "$ROOT/results/results.json" ]; then  # Python itself failed: still tell the student
    why="the autograder could not start (exit status $status); tell your instructor."
    printf '{"score": 0, "output": "Not graded: %s", "tests": []}\n' "$why" \
        > "$ROOT/results/results.json"
fi
exit 0
"""

STUDENT_README = """# RNN Internals: the exercises

Notebooks with graded exercises about TensorFlow's recurrent cells, from the book *RNN
Internals*. Each exercise is a function you write; its check runs the real TensorFlow cell on
fresh random inputs and weights, runs your function, and tells you what differs.

## Set up once (Python 3.11 or newer)

```bash
python3 -m venv .venv
.venv/bin/python -m pip install -r requirements.txt
.venv/bin/python -m pip install --no-deps -e .
```

## Work

```bash
.venv/bin/jupyter lab notebooks/
```

Run the first cell first (`tf = rnnbook.setup()`: it must run before anything imports
TensorFlow). Then, for each exercise, write your code in place of the
`raise NotImplementedError(...)` line, run the cell, and run the `check(...)` cell under it.
A ✓ means your function matched TensorFlow on every random trial; a ✗ says what differs and,
when it recognises the mistake, what to change. Hints are in the collapsed boxes.

## Hand in

Hand in the notebook file itself (for example `notebooks/01-basic-rnn-cell.ipynb`), saved.
Your instructor grades it by running it from the top in a fresh process and calling your
functions on hidden random trials, so:

- keep each function's name and arguments as given (the grader calls them by name);
- keep the set-up cell first, and make the notebook run from top to bottom on its own;
- a function that never returns or uses gigabytes of memory gets no points (there are limits
  per exercise); the other exercises are still graded;
- nothing you print, and no change to `rnnbook` or NumPy in your notebook, changes your score:
  the expected answers are computed outside your notebook's process.
"""


def _pyproject():
    """pyproject.toml cut to what ``pip install -e .`` needs (no test configuration)."""
    kept, keep = [], False
    for line in (ROOT / "pyproject.toml").read_text().splitlines():
        if line.startswith("["):
            keep = line.strip() in PYPROJECT_SECTIONS
        if keep:
            kept.append(line)
    return "\n".join(kept).strip() + "\n"


def _package_files(learner):
    """``[(path in the package folder, file)]`` of the rnnbook package, without caches."""
    files = []
    for path in sorted((ROOT / "rnnbook").rglob("*.py")):
        relative = path.relative_to(ROOT)
        if learner and relative.parent.name == "rnnbook" and relative.name in INSTRUCTOR_MODULES:
            continue
        files.append((relative, path))
    return files


def _source_notebooks():
    paths = sorted((ROOT / "solutions").glob("*.ipynb"))
    if not paths:
        raise source.SourceError(f"{ROOT / 'solutions'}: no exercise notebooks")
    return paths


def _add(bundle, name, data, executable=False):
    """One file in the zip, with fixed date and mode: the same sources give the same bytes."""
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


def autograder(out, chapter=None, seed=None, timeout=None, cell_timeout=None, memory=None):
    """Write the Gradescope bundle to ``out`` (a .zip); returns its path."""
    settings = dict(gradescope.DEFAULTS, chapter=chapter, seed=seed)
    for key, value in (("timeout", timeout), ("cell_timeout", cell_timeout), ("memory", memory)):
        if value is not None:
            settings[key] = value
    for path in _source_notebooks():  # a broken header would fail every submission: fail now
        source.exercises(source.read(path), str(path))
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", SETUP_SH, executable=True)
        _add(bundle, "run_autograder", RUN_AUTOGRADER, executable=True)
        _add(bundle, gradescope.SETTINGS, json.dumps(settings, indent=2) + "\n")
        for name in ("requirements.txt", "pyproject.toml"):
            _add(bundle, name, (ROOT / name).read_bytes())
        for relative, path in _package_files(learner=False):
            _add(bundle, str(relative), path.read_bytes())
        for path in _source_notebooks():
            _add(bundle, f"solutions/{path.name}", path.read_bytes())
    tmp.replace(out)
    return out


def learners(out):
    """Write the learner release into the folder ``out`` (replaced if it exists); returns it."""
    out = pathlib.Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    for path in _source_notebooks():
        nb = generate.learner_copy(source.read(path), str(path))
        (out / "notebooks" / path.name).write_text(generate.text(nb))
    for relative, path in _package_files(learner=True):
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out / relative)
    shutil.copyfile(ROOT / "requirements.txt", out / "requirements.txt")
    (out / "pyproject.toml").write_text(_pyproject())
    (out / "README.md").write_text(STUDENT_README)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m rnnbook.release", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    bundle = sub.add_parser("autograder", help="the Gradescope bundle (a zip)")
    bundle.add_argument("--out", type=pathlib.Path, default=ROOT / "_build" / "autograder.zip")
    bundle.add_argument("--chapter", choices=sorted(checks.CHAPTERS),
                        help="grade every submission as this chapter (default: from the notebook)")
    bundle.add_argument("--seed", type=int, help="the same hidden trials for everyone (default: "
                        "a fresh seed per submission, recorded in its results)")
    bundle.add_argument("--timeout", type=float, help="seconds per exercise")
    bundle.add_argument("--cell-timeout", type=float, help="seconds per notebook cell")
    bundle.add_argument("--memory", type=int, help="MB of memory for the notebook's process")
    release = sub.add_parser("learners", help="the folder to give students")
    release.add_argument("--out", type=pathlib.Path, default=ROOT / "_build" / "release")
    args = parser.parse_args(argv)
    try:
        if args.what == "autograder":
            path = autograder(args.out, args.chapter, args.seed, args.timeout, args.cell_timeout,
                              args.memory)
        else:
            path = learners(args.out)
    except source.SourceError as error:
        print(f"release: error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
