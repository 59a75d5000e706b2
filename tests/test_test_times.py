"""``make test-times``' summary (scripts/test_times.py): each file's summed time, the slowest
tests and the coverage, read from pytest's JUnit XML and coverage.py's JSON."""
import json
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import test_times  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"
 errors="0" failures="1" skipped="1" tests="5" time="600.5">
<testcase classname="tests.test_grade" name="test_a[x]" time="100.0"/>
<testcase classname="tests.test_grade" name="test_b" time="20.0"><failure message="no"/></testcase>
<testcase classname="tests.test_ch01.TestSome" name="test_c" time="1.5"/>
<testcase classname="book.01-basic-rnn-cell.ipynb" name="Cell 3" time="7.0"/>
<testcase classname="tests.test_ch01" name="test_d" time="0.0"><skipped message="s"/></testcase>
</testsuite></testsuites>"""


def test_the_summary_sums_each_file_and_ranks_the_slowest_tests(tmp_path, capsys):
    junit, cover = tmp_path / "junit.xml", tmp_path / "coverage.json"
    junit.write_text(JUNIT)
    cover.write_text(json.dumps({"totals": {"num_statements": 200, "covered_lines": 150,
                                            "num_branches": 80, "covered_branches": 40}}))
    assert test_times.main([str(junit), str(cover)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Wall time 10.0 min; 1 failed, 3 passed, 1 skipped;"), out
    assert "lines 75.0 % (150 of 200), branches 50.0 % (40 of 80)" in out
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert rows[:3] == ["| `tests/test_grade.py` | 2 | 120 |",
                        "| `book/01-basic-rnn-cell.ipynb` | 1 | 7 |",
                        "| `tests/test_ch01.py` | 2 | 2 |"], rows
    slowest = rows[3:]  # after the three files: the tests, slowest first
    assert slowest[0] == "| `tests/test_grade.py::test_a[x]` | 100.0 |", slowest
    assert slowest[2] == "| `book/01-basic-rnn-cell.ipynb::Cell 3` | 7.0 |", slowest


def test_a_missing_or_empty_report_is_one_clear_line(tmp_path):
    with pytest.raises(SystemExit, match="cannot read .*nothing.xml"):
        test_times.main([str(tmp_path / "nothing.xml")])
    empty = tmp_path / "empty.xml"
    empty.write_text("<testsuites><testsuite time='1'/></testsuites>")
    assert test_times.main([str(empty), str(tmp_path / "none.json")]) == 1
