"""The intro's install commands (book/intro.md, *On your own computer*), typed as written in a
fresh folder with a fresh virtual environment: they install the package with its Jupyter, and
the notebooks' set-up runs there.

It installs TensorFlow and JupyterLab into a new virtualenv (a few minutes, about 2 GB; pip
reuses its cache), so it runs under ``CI=true`` (.ci/run, GitHub's test workflow) or with
``RNNBOOK_INSTALL_TEST=1``, and skips otherwise. The one change to the commands: `git clone`
clones this repository's committed HEAD from its folder instead of from the URL (the URL
may not be published yet, and a test must test this commit).
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import in_ci
from rnnbook import generate

ROOT = pathlib.Path(__file__).resolve().parent.parent
INTRO = ROOT / "book" / "intro.md"
TIMEOUT = 1800  # seconds for the whole install: bounded, even on a cold pip cache


def install_commands(text=None):
    """The lines of the first ```bash block of the intro's ``(install)=`` section."""
    text = INTRO.read_text() if text is None else text
    section = text.split("(install)=", 1)[1]
    block = re.search(r"^```bash\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    return [line for line in block.group(1).splitlines() if line.strip()]


def as_run_here(commands):
    """The commands a test runs: the clone from this folder; the last one, which opens
    JupyterLab on the learner's own notebooks, becomes checks that it would (and that the
    package works, and the workspace holds every exercise notebook)."""
    url = generate.repository_url()
    clone, *rest, last = commands
    assert clone.startswith(f"git clone {url} "), clone
    assert last == ".venv/bin/jupyter lab my-notebooks/", last
    folder = clone.split()[-1]
    return [clone.replace(url, str(ROOT))] + rest + [
        f"test -d my-notebooks && cd .. && test -d {folder} && cd {folder}",
        "diff <(ls notebooks) <(ls my-notebooks)",
        "git status --porcelain | (! grep .)",  # git ignores the workspace
        ".venv/bin/jupyter lab --version",
        ".venv/bin/jupyter labextension list 2>&1 | grep -q jupyterlab-myst",
        ".venv/bin/python -c 'import rnnbook, pathlib; "
        "assert pathlib.Path(rnnbook.__file__).parent == pathlib.Path.cwd() / \"rnnbook\"; "
        "tf = rnnbook.setup(); print(\"rnnbook set up, TensorFlow\", tf.__version__)'",
    ]


def test_the_intro_gives_the_commands_the_test_runs():
    commands = install_commands()
    assert commands[2:] == ["python3 -m venv .venv",
                            '.venv/bin/python -m pip install -e ".[jupyter]"',
                            ".venv/bin/python -m rnnbook.workspace init",
                            ".venv/bin/jupyter lab my-notebooks/"], commands
    assert as_run_here(commands)[0] == f"git clone {ROOT} rnn-internals"
    with pytest.raises(AssertionError):  # a clone of another URL is not this book's
        as_run_here(["git clone https://example.org/x x"] + commands[1:])


@pytest.mark.slow
def test_the_intro_s_install_commands_work_in_a_fresh_virtualenv(tmp_path):
    if not (in_ci() or os.environ.get("RNNBOOK_INSTALL_TEST") == "1"):
        pytest.skip("installs TensorFlow into a fresh virtualenv: runs under CI=true or "
                    "RNNBOOK_INSTALL_TEST=1")
    if shutil.which("git") is None or shutil.which("python3") is None:
        pytest.fail("the intro's commands need git and python3 on PATH", pytrace=False)
    script = "set -euo pipefail\n" + "\n".join(as_run_here(install_commands())) + "\n"
    bin_dir = str(pathlib.Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != bin_dir)
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.update(PATH=path, PIP_NO_INPUT="1", PIP_PROGRESS_BAR="off",
               RNNBOOK_PROGRESS=str(tmp_path / "progress.json"))
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=TIMEOUT)
    assert run.returncode == 0, (f"the intro's commands failed (exit {run.returncode}):\n"
                                 + run.stdout[-2000:] + run.stderr[-3000:])
    assert "rnnbook set up, TensorFlow 2." in run.stdout
