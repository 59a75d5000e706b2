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
