""".ci/run installs Chromium where it is missing, so that under CI=true the rendered-width
tests run (they fail without it), then runs `make test` and `make test-as-user` (the hostile
corpus as a user who is not root: .ci/as-user). Run here with stand-ins for
apt-get, sudo and make that record their calls, on a PATH that holds only them."""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECORD = '#!/bin/sh\necho "{name} $*" >> "$CALLS"\n'


def run_ci(tmp_path, browser):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "id", "env"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    names = ["apt-get", "sudo", "make"] + (["chromium"] if browser else [])
    for name in names:
        (bin_dir / name).write_text(RECORD.format(name=name))
        (bin_dir / name).chmod(0o755)
    calls = tmp_path / "calls"
    calls.write_text("")
    env = {"PATH": str(bin_dir), "CALLS": str(calls), "HOME": str(tmp_path)}
    run = subprocess.run([shutil.which("bash"), str(ROOT / ".ci" / "run")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return calls.read_text().splitlines()


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_ci_run_installs_chromium_where_it_is_missing(tmp_path):
    calls = run_ci(tmp_path, browser=False)
    installs = [c for c in calls if "apt-get install" in c and c.endswith("chromium")]
    assert installs, calls
    # ruff and mypy, the suite, then the corpus as a user who is not root
    assert calls[-3:] == ["make lint", "make test", "make test-as-user"]


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_ci_run_leaves_an_installed_chromium_alone(tmp_path):
    assert run_ci(tmp_path, browser=True) == ["make lint", "make test", "make test-as-user"]


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_as_user_has_nothing_to_add_for_a_user_who_is_not_root(tmp_path):
    """`make test-as-user` run by someone who is not root: `make test` ran as that user."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "id").chmod(0o755)
    run = subprocess.run([shutil.which("bash"), str(ROOT / ".ci" / "as-user")],
                         env={"PATH": str(bin_dir)}, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "not root" in run.stdout, run.stdout + run.stderr


def test_as_user_runs_the_corpus_walls_and_out_faults_tests_under_ci_as_its_user():
    """What .ci/as-user runs as the user it creates: pytest with the clone's venv, CI=true
    (a walls test that cannot run fails), the corpus, the walls' tests and the faults of
    --out (tests/test_grade_faults.py), a writable folder."""
    script = (ROOT / ".ci" / "as-user").read_text()
    command = script[script.index("setpriv --reuid"):]
    for part in ('CI="${CI:-true}"', ".venv/bin/python\" -m pytest", "tests/test_grade.py",
                 "tests/test_isolation.py", "tests/test_grade_faults.py",
                 '-k "corpus or walls or grade_faults"', '--basetemp="$work/',
                 'TMPDIR="$work"'):
        assert part in command, part
    assert "trap restore EXIT" in script  # the folders' modes come back


def test_the_suite_loads_as_as_user_runs_it_without_xdist():
    """.ci/as-user runs pytest with ``-p no:xdist``: the root conftest.py's xdist scheduler
    hook must not stop it (pytest refuses a hook that no loaded plugin declares)."""
    import sys

    ran = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                          "no:xdist", "-o", "addopts=", "-q", "--collect-only",
                          "tests/test_ci_run.py"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
