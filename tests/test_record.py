"""A self-learner's record of passed exercises (rnnbook/record.py, ``rnnbook.progress()``)."""
import json

import rnnbook
from rnnbook import checks, record
from rnnbook.checks.ch01 import CHAPTER


def test_a_passing_check_is_recorded_and_shown(tmp_path, monkeypatch, capsys):
    where = tmp_path / "home" / ".rnnbook" / "progress.json"
    monkeypatch.setenv("RNNBOOK_PROGRESS", str(where))
    monkeypatch.delenv("RNNBOOK_GRADING", raising=False)
    first = CHAPTER.exercises[0]
    assert record.load() == {}
    assert record.record(CHAPTER.stem, first.number, first.name)
    assert rnnbook.progress() is None  # it prints; nothing for a notebook to echo
    out = capsys.readouterr().out
    rows = record.table(checks.exercises())
    assert rows[0][:3] == (CHAPTER.stem, 1, len(CHAPTER.exercises))
    assert first.number not in rows[0][3]
    assert CHAPTER.stem in out and str(where) in out
    assert len(rows) == len(checks.CHAPTERS)
    saved = json.loads(where.read_text())
    assert saved["passed"][CHAPTER.stem][first.number]["name"] == first.name


def test_a_failing_check_is_recorded_as_the_latest_verdict_and_counts_as_not_done(
        tmp_path, monkeypatch):
    where = tmp_path / "progress.json"
    monkeypatch.setenv("RNNBOOK_PROGRESS", str(where))
    monkeypatch.delenv("RNNBOOK_GRADING", raising=False)
    first = CHAPTER.exercises[0]
    outcome = CHAPTER.check(lambda *args: None, name=first.name)
    assert not outcome
    assert record.table([(CHAPTER.stem, [first.number])]) == [
        (CHAPTER.stem, 0, 1, [first.number], 0)]


def test_a_wrong_run_after_a_right_one_is_not_all_done(tmp_path, capsys):
    """Issue 37: after a right run and then a wrong one the table still said "7/7 all done".
    The table counts each exercise's latest verdict and keeps the best beside it."""
    where = tmp_path / "progress.json"
    chapters = [("01-x", ["1.1", "1.2"])]
    assert record.record("01-x", "1.1", "a", where)
    assert record.record("01-x", "1.2", "b", where)
    assert record.table(chapters, where) == [("01-x", 2, 2, [], 2)]
    assert record.record("01-x", "1.2", "b", where, passed=False)
    assert record.table(chapters, where) == [("01-x", 1, 2, ["1.2"], 2)]
    record.show(chapters, where)
    out = capsys.readouterr().out
    assert "all done" not in out and "1/2     2/2   1.2 (passed before, failed last)" in out
    assert "latest" in out and "best" in out
    assert record.record("01-x", "1.2", "b", where)  # right again
    assert record.table(chapters, where) == [("01-x", 2, 2, [], 2)]
    assert record.record("01-x", "1.1", "a", where, copy="/another/copy", passed=False)
    assert record.table(chapters, where)[0].done == 2  # another copy's failure is its own


def test_damaged_or_unwritable_files_never_break_a_notebook(tmp_path):
    bad = tmp_path / "progress.json"
    bad.write_text("{not json")
    assert record.load(bad) == {}
    assert record.record("01-basic-rnn-cell", "1.1", "x", bad)  # replaced, atomically
    assert record.load(bad)["01-basic-rnn-cell"]["1.1"]["name"] == "x"
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert not record.record("01-basic-rnn-cell", "1.1", "x", blocked / "progress.json")


def test_the_table_counts_what_it_is_given(tmp_path):
    """The record knows no chapter itself: the table is of the chapters it is handed."""
    where = tmp_path / "progress.json"
    assert record.record("01-x", "1.2", "b", where)
    assert record.record("09-y", "9.1", "z", where)  # a chapter not asked about is not shown
    rows = record.table([("01-x", ["1.1", "1.2", "1.3"]), ("02-y", ["2.1"])], where)
    assert rows == [("01-x", 1, 3, ["1.1", "1.3"], 1), ("02-y", 0, 1, ["2.1"], 0)]


def test_progress_is_silent_under_the_grader_and_loads_no_chapter(monkeypatch, capsys):
    """A grading child's chapter modules are stubs holding only ``check``: the notebook's last
    cell, ``rnnbook.progress()``, may not ask them for their exercises."""
    monkeypatch.setenv("RNNBOOK_GRADING", "1")

    def stubbed(stem):
        raise AttributeError(f"module for {stem} has no attribute 'CHAPTER'")

    monkeypatch.setattr(checks, "load", stubbed)
    assert rnnbook.progress() is None
    assert capsys.readouterr().out == ""


def test_two_copies_sharing_a_home_count_only_their_own_passes(tmp_path):
    """Issue 27: a copy showed another copy's "1.7" and "6/6 done" for a 2.3 it never passed."""
    where = tmp_path / "progress.json"
    mine, theirs = "/home/me/book-a/rnnbook", "/home/me/book-b/rnnbook"
    assert record.record("02-x", "2.3", "gates", where, copy=theirs)
    assert record.record("01-x", "1.7", "extra", where, copy=theirs)  # not in this copy
    chapters = [("01-x", ["1.1"]), ("02-x", ["2.2", "2.3"])]
    assert record.table(chapters, where, copy=mine) == [("01-x", 0, 1, ["1.1"], 0),
                                                        ("02-x", 0, 2, ["2.2", "2.3"], 0)]
    assert record.record("02-x", "2.3", "gates", where, copy=mine)  # now passed here too
    assert record.table(chapters, where, copy=mine)[1] == ("02-x", 1, 2, ["2.2"], 1)
    assert record.table(chapters, where, copy=theirs)[1] == ("02-x", 1, 2, ["2.2"], 1)
    assert record.load(where, copy=None)["02-x"]["2.3"]["copies"] == sorted([mine, theirs])
    assert "01-x" not in record.load(where, copy=mine)


def test_passes_recorded_before_copies_were_named_count_everywhere(tmp_path):
    where = tmp_path / "progress.json"
    where.write_text(json.dumps({"version": record.VERSION,
                                 "passed": {"01-x": {"1.1": {"name": "a", "passed": "t"}}}}))
    assert record.table([("01-x", ["1.1"])], where, copy="/any/copy") == [("01-x", 1, 1, [], 1)]
    assert record.COPY.endswith("rnnbook")  # this copy: the imported package's folder
