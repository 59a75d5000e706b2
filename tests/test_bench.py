"""``make bench`` keeps working: its quick mode runs every step of the benchmark once. No figure
is checked here (speed is measured by ``make bench``, never by a timed test): only that each
step ran and printed its line."""
import subprocess
import sys

from rnnbook import checks
from tests.test_book import ROOT

NUMBERS = [int(stem[:2]) for stem in checks.CHAPTERS]  # every chapter's number


def test_the_benchmark_runs_every_step():
    done = subprocess.run([sys.executable, "benchmarks/bench.py", "--quick"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "bare `import tensorflow`" in out
    assert "grade Chapter 1's solution alone" in out
    checks = [line for line in out.splitlines() if line.startswith("in-notebook check ")]
    assert len(checks) >= 30, out  # every exercise of every chapter
    for number in NUMBERS:  # every chapter's marginal cost, and its row in the table
        assert f"Chapter {number}: marginal cost of one more submission" in out, out
        assert any(line.startswith(f"| {number} | ") for line in out.splitlines()), out
    for how in ("seed 0, expected answers from the bundle", "a fresh seed, oracle"):
        # one submission cold, as run_autograder grades it, with where the time went
        assert f"Chapter 1 cold ({how}): " in out, out
    assert "zygote tf ready at" in out and "| cold, seed in the bundle |" in out


def test_the_benchmark_refuses_an_unknown_argument():
    done = subprocess.run([sys.executable, "benchmarks/bench.py", "--fast"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "bench: unknown argument '--fast' (options: --quick, --cold, --chapter N (repeatable))"]


def test_the_benchmark_refuses_an_unknown_chapter():
    done = subprocess.run([sys.executable, "benchmarks/bench.py", "--chapter", "9"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    known = ", ".join(map(str, NUMBERS))
    assert done.stderr.strip().splitlines() == [f"bench: no chapter '9' (chapters: {known})"]
