"""``make test-fast`` (scripts/fast.py): a change maps to the tests that concern it,
and says what it cannot map. Nothing here runs the suite: plans are read, not run."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import fast  # noqa: E402
import focus  # noqa: E402


def targets(path):
    return {s.target: s.why for s in fast.select(path)}


def test_a_module_maps_to_the_test_files_that_import_it():
    found = targets("rnnbook/compare.py")
    assert found["tests/test_diagnose.py"] == "imports rnnbook.compare"
    assert found["tests/test_sweep.py"] == "imports rnnbook.compare"
    assert "tests/test_plots.py" not in found  # it does not import rnnbook.compare
    assert "imports rnnbook.numbers" in targets("rnnbook/numbers.py").values()


def test_a_grader_module_maps_to_every_test_that_runs_the_grader():
    found = targets("rnnbook/grading/zygote.py")
    # tests/test_grade.py runs `python -m rnnbook.grading`; test_ch04 loads the zygote
    # by path
    assert found["tests/test_grade.py"].startswith(("runs", "imports", "names"))
    assert found["tests/test_ch04.py"] == "names rnnbook/grading/zygote.py"
    assert "tests/test_plots.py" not in found


def test_importing_a_submodule_is_not_a_use_of_the_package():
    found = targets("rnnbook/__init__.py")
    assert "tests/test_checks.py" not in found  # from rnnbook import checks, only
    assert "tests/test_ch02_checks.py" in found  # import rnnbook; rnnbook.setup()


@pytest.mark.parametrize(
    "path",
    [
        "rnnbook/checks/ch03.py",
        "tests/learners/ch03.py",
        "solutions/03-c-state-m-state.ipynb",
        "notebooks/03-c-state-m-state.ipynb",
    ],
)
def test_a_chapter_file_maps_to_its_exercise_check(path):
    result = fast.plan([path])
    assert result.chapters() == ["03-c-state-m-state"]
    runs = fast.commands(result)
    assert focus.check_command("03-c-state-m-state", "", "auto") in runs


def test_a_changed_book_notebook_runs_under_nbval_too():
    result = fast.plan(["book/03-c-state-m-state.ipynb"])
    assert result.chapters() == ["03-c-state-m-state"]
    assert "book/03-c-state-m-state.ipynb" in result.tests()


def test_a_test_file_maps_to_itself_and_to_the_tests_importing_it():
    alone = (
        "tests/test_" + "notation.py"
    )  # (built: a string here naming it would map it)
    assert targets(alone) == {alone: "the test file itself"}
    found = targets("tests/test_sweep.py")
    assert found["tests/test_sweep.py"] == "the test file itself"
    assert found["tests/test_ch01.py"] == "imports tests.test_sweep"  # its SEEDS


@pytest.mark.parametrize(
    "doc", ["README.md", "CHANGELOG.md", "benchmarks/RESULTS.md", "book/instructors.md"]
)
def test_a_doc_maps_to_test_docs(doc):
    assert targets(doc)["tests/test_docs.py"] == "a doc"


def test_a_script_maps_to_the_tests_that_import_it():
    assert targets("scripts/fast.py")["tests/test_fast.py"] == "imports fast"


def test_every_package_module_maps_to_a_test():
    """A new module without a test is named here: write its test (or, where the
    derivation cannot see it, an entry of fast.OVERRIDES with the reason)."""
    lonely = [m for m in fast.package_modules() if not fast.select(m)]
    assert not lonely, f"no test file imports or names: {', '.join(lonely)}"


def test_an_unknown_file_and_a_global_one_say_the_change_needs_make_test():
    unknown = "nothing-maps" + "-here.txt"  # (built, as above)
    result = fast.plan([unknown, "pyproject.toml"])
    assert result.unmapped == [unknown]
    assert result.everything == ["pyproject.toml"]
    said = "\n".join(fast.describe(result))
    assert f"{unknown}: no test maps to it" in said
    assert "needs `make test`" in said and "pyproject.toml" in said


def test_the_plan_names_what_it_leaves_to_ci():
    result = fast.plan(["rnnbook/grading/run.py"])
    left = (
        "tests/test_one_verdict.py::"
        "test_every_learners_answer_gets_one_verdict_in_four_places"
    )
    said = "\n".join(fast.describe(result))
    assert f"left to make test and CI: {left}" in said
    assert "seed sweeps on 20 seeds" in said
    plain = fast.commands(result)[0]
    assert plain[plain.index("--deselect") + 1] == left


def test_the_estimate_counts_a_chapter_s_tests_and_the_sweep_at_its_seeds():
    seconds = {
        "tests/test_sweep.py::test_x[03-c-state-m-state-a]": 200.0,
        "tests/test_sweep.py::test_x[01-basic-rnn-cell-a]": 1000.0,
        "tests/test_checks.py::test_names_unique": 10.0,
        "tests/test_bench.py::test_runs": 500.0,
    }
    result = fast.plan(["rnnbook/checks/ch03.py"])
    # chapter 3's sweep on 20 of 200 seeds (20 s) is longer than the whole over 2 (15 s)
    assert fast.estimate(result, seconds) == pytest.approx(200.0 * fast.SEEDS / 200)


def test_a_bad_base_is_one_line():
    ran = subprocess.run(
        [sys.executable, "scripts/fast.py", "--base", "no-such-rev", "--dry-run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 2
    assert ran.stderr.strip().splitlines() == [
        "make: BASE='no-such-rev' is not a git revision of this repository "
        "(give a commit, "
        "branch or tag, e.g. BASE=HEAD or BASE=main)"
    ]


def test_the_hostile_corpus_runs_in_the_fast_loop_only_where_the_grader_changed():
    corpus = "tests/test_grade.py::test_corpus_outcome"
    for changed, kept in (("rnnbook/checks/__init__.py", False),
                          ("rnnbook/grading/walls.py", True),
                          ("tests/hostile/corpus.py", True)):
        result = fast.plan([changed])
        assert "tests/test_grade.py" in result.tests(), changed
        plain = fast.commands(result)[0]
        assert (corpus not in plain) is kept, (changed, plain)
        said = "\n".join(fast.describe(result))
        assert (f"left to make test and CI: {corpus}" in said) is not kept, said


def test_every_hand_mutation_is_run_by_the_fast_loop_of_its_module():
    """tests/mutations.toml names, for each bug put into a module, the tests that catch
    it: the fast loop of that module alone runs them (a chapter's: its exercise-check
    files)."""
    import tomllib

    missed = []
    for entry in tomllib.loads((ROOT / "tests/mutations.toml").read_text())["mutation"]:
        result = fast.plan([entry["module"]])
        selected = set(result.tests())
        for stem in result.chapters():
            command = focus.check_command(stem, "", "auto")
            selected |= {a for a in command if a.startswith("tests/")}
        missed += [
            f"{entry['id']}: {t}"
            for t in entry["tests"]
            if t.split("::")[0] not in selected
        ]
    assert not missed, "the fast loop of the mutated module misses: " + "; ".join(
        missed
    )


def test_the_seed_sweeps_run_on_rnnbook_seeds_200_unless_told_and_refuse_a_bad_value(
    monkeypatch,
):
    from tests import test_sweep

    monkeypatch.delenv("RNNBOOK_SEEDS", raising=False)
    assert test_sweep.seeds() == range(200)
    monkeypatch.setenv("RNNBOOK_SEEDS", str(fast.SEEDS))
    assert test_sweep.seeds() == range(fast.SEEDS)
    for bad in ("0", "x", "201"):
        monkeypatch.setenv("RNNBOOK_SEEDS", bad)
        with pytest.raises(pytest.UsageError, match=f"RNNBOOK_SEEDS='{bad}'"):
            test_sweep.seeds()
