"""Under ``CI=true`` a sandbox test that cannot run is a failure, not a skip: a CI machine must
build the grader's walls (user namespaces), so a green CI means the escape tests ran. Outside CI
such a test still skips, with its reason (tests/conftest.py, ``need_walls``)."""
import ast
import os
import subprocess
import sys

import pytest

from conftest import ROOT, in_ci, need_walls


@pytest.mark.parametrize("value", ["true", "TRUE", "1", "yes"])
def test_ci_is_told_by_the_ci_variable(value):
    assert in_ci({"CI": value})


@pytest.mark.parametrize("environ", [{}, {"CI": ""}, {"CI": "false"}, {"CI": "0"}])
def test_no_ci_variable_is_no_ci(environ):
    assert not in_ci(environ)


def test_without_walls_a_sandbox_test_skips_outside_ci_with_its_reason():
    with pytest.raises(pytest.skip.Exception, match="no user namespaces here"):
        need_walls("no user namespaces here", stand=False, environ={})


def test_without_walls_a_sandbox_test_fails_under_ci():
    with pytest.raises(pytest.fail.Exception) as failed:
        need_walls("no user namespaces here", stand=False, environ={"CI": "true"})
    said = str(failed.value)
    assert "no user namespaces here" in said and "CI=true" in said
    assert "unshare --user" in said  # what to give the machine


def test_where_the_walls_stand_nothing_is_skipped_or_failed():
    assert need_walls("no user namespaces here", stand=True, environ={"CI": "true"}) is None
    assert need_walls("no user namespaces here", stand=True, environ={}) is None


def test_pytest_reports_a_failure_under_ci_and_a_skip_elsewhere(tmp_path):
    """The whole way through pytest: the run's exit status is what CI looks at."""
    (tmp_path / "test_walled.py").write_text(
        "from conftest import need_walls\n\n\n"
        "def test_escape():\n"
        "    need_walls('no user namespaces here', stand=False)\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(ROOT)])

    def run(**extra):
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
             "-rsf", str(tmp_path / "test_walled.py")],
            capture_output=True, text=True, cwd=tmp_path, env={**env, **extra}, timeout=300)

    quiet = run()
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "1 skipped" in quiet.stdout and "no user namespaces here" in quiet.stdout
    ci = run(CI="true")
    assert ci.returncode == 1, ci.stdout + ci.stderr
    assert "1 failed" in ci.stdout and "CI=true" in ci.stdout


def _skip_reasons(path):
    """The string reasons of every ``pytest.skip(...)`` call in a test file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "skip" and node.args):
            yield " ".join(n.value for n in ast.walk(node.args[0])
                           if isinstance(n, ast.Constant) and isinstance(n.value, str))


def test_no_sandbox_test_skips_on_its_own():
    """A sandbox test that skips for want of namespaces goes through ``need_walls``, so that
    CI fails it: no bare ``pytest.skip("no user namespaces ...")`` anywhere in the suite."""
    bare = [(path.name, reason) for path in sorted((ROOT / "tests").rglob("*.py"))
            if path.name != "conftest.py"
            for reason in _skip_reasons(path)
            if any(word in reason.lower() for word in ("namespace", "walls", "unshare"))]
    assert bare == [], f"use conftest.need_walls(reason) instead of pytest.skip: {bare}"
