"""``make test-times``: where the suite's time goes, and how much of the package it covers
(issue 54).

``make test-times`` runs the whole suite as ``make test`` does, with pytest's JUnit XML and
coverage.py (lines and branches of ``rnnbook/``, in the pytest processes) switched on, into
``_build/test-times/``; then this script reads both and prints a Markdown summary (also
written to ``_build/test-times/summary.md``): the run's wall time and counts, each test
file's summed time (setup, call and teardown of its tests, on whichever worker ran them),
the 30 slowest tests, and the coverage. ``python scripts/test_times.py JUNIT COVERAGE``
summarises any pair of such files (the figures in ``benchmarks/RESULTS.md`` were made so).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass

OUT = pathlib.Path("_build") / "test-times"
SLOWEST = 30


@dataclass(frozen=True)
class TestTime:
    """One test's outcome and its time in seconds (setup, call and teardown)."""

    file: str  # tests/test_grade.py, book/01-basic-rnn-cell.ipynb
    name: str
    seconds: float
    outcome: str  # passed, failed, skipped, error


@dataclass(frozen=True)
class Coverage:
    """coverage.py's totals: covered lines and branches of the measured files."""

    lines: int
    lines_covered: int
    branches: int
    branches_covered: int

    def share(self, covered: int, total: int) -> str:
        return f"{100 * covered / total:.1f} %" if total else "n/a"


def read_junit(path: pathlib.Path) -> tuple[list[TestTime], float]:
    """The tests of a JUnit XML file and the run's wall time in seconds."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise SystemExit(f"test_times: cannot read {path}: {e}") from None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = []
    for case in root.iter("testcase"):
        kids = {child.tag for child in case}
        outcome = next((o for o in ("failure", "error", "skipped") if o in kids), "passed")
        tests.append(TestTime(file=test_file(case), name=case.get("name", "?"),
                              seconds=float(case.get("time", 0) or 0),
                              outcome={"failure": "failed"}.get(outcome, outcome)))
    return tests, sum(float(s.get("time", 0) or 0) for s in suites)


def test_file(case: ET.Element) -> str:
    """The file a JUnit test case came from: ``tests.test_grade`` -> ``tests/test_grade.py``;
    nbval's cells carry the notebook's path in their class name."""
    cls = case.get("classname", "")
    if ".ipynb" in cls:
        return cls.split(".ipynb", 1)[0].replace(".", "/") + ".ipynb"
    parts = cls.split(".")
    while parts and parts[-1][:1].isupper():  # a test class
        parts.pop()
    return "/".join(parts) + ".py"


def read_coverage(path: pathlib.Path) -> Coverage:
    """coverage.py's JSON report's totals."""
    try:
        totals = json.loads(path.read_text())["totals"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"test_times: cannot read coverage from {path}: {e}") from None
    return Coverage(lines=totals["num_statements"], lines_covered=totals["covered_lines"],
                    branches=totals.get("num_branches", 0),
                    branches_covered=totals.get("covered_branches", 0))


def summary(tests: list[TestTime], wall: float, cover: Coverage | None) -> str:
    """The Markdown summary: counts, wall time, time per file, the slowest tests, coverage."""
    per_file: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for t in tests:
        per_file[t.file] += t.seconds
        counts[t.outcome] += 1
    total = sum(per_file.values())
    said = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
    lines = [f"Wall time {wall / 60:.1f} min; {said}; {total / 60:.1f} min of test time "
             "summed over the workers.", ""]
    if cover:
        lines += [f"Coverage of `rnnbook/` (pytest's processes): lines "
                  f"{cover.share(cover.lines_covered, cover.lines)} "
                  f"({cover.lines_covered} of {cover.lines}), branches "
                  f"{cover.share(cover.branches_covered, cover.branches)} "
                  f"({cover.branches_covered} of {cover.branches}).", ""]
    lines += ["| file | tests | seconds |", "|---|---|---|"]
    by_file: dict[str, int] = defaultdict(int)
    for t in tests:
        by_file[t.file] += 1
    for name, seconds in sorted(per_file.items(), key=lambda kv: -kv[1]):
        lines.append(f"| `{name}` | {by_file[name]} | {seconds:.0f} |")
    lines += ["", f"The {SLOWEST} slowest tests:", "", "| test | seconds |", "|---|---|"]
    for t in sorted(tests, key=lambda t: -t.seconds)[:SLOWEST]:
        lines.append(f"| `{t.file}::{t.name}` | {t.seconds:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="test_times", description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", nargs="?", type=pathlib.Path, default=OUT / "junit.xml")
    parser.add_argument("coverage", nargs="?", type=pathlib.Path,
                        default=OUT / "coverage.json")
    args = parser.parse_args(argv)
    tests, wall = read_junit(args.junit)
    if not tests:
        print(f"test_times: no test in {args.junit}", file=sys.stderr)
        return 1
    cover = read_coverage(args.coverage) if args.coverage.exists() else None
    text = summary(tests, wall, cover)
    if args.junit.parent == OUT:
        (OUT / "summary.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
