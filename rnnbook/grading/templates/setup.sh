#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu, python3).
# It finds Python 3.11 or newer (installing python3.11 with apt when the image's python3 is
# older), makes a venv in source/.venv with the pinned requirements.txt, installs the rnnbook
# package from source/ (editable: the grader reads exercises.json next to it), checks that
# TensorFlow loads, so that a broken image fails here and not on every submission, and makes the
# instructor's side (the grader, the checks, the reference, the settings and every compiled
# module of the package) readable by root only: where the walls cannot stand, the grader runs
# each submission as nobody. No .pyc of the package is written (PYTHONDONTWRITEBYTECODE).
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
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
    "import rnnbook, rnnbook.grading.run; rnnbook.setup(); print('rnnbook autograder ready')"
chmod -R a+rX "$SOURCE/.venv"
cd "$SOURCE" && "$SOURCE/.venv/bin/python" -m rnnbook.grading.gradescope --lock \
    --root "$(dirname "$SOURCE")"
