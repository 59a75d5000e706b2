"""``make mutations`` (scripts/mutations.py, tests/mutations.toml): the list is whole and
still applies today, and the runner tells a caught mutation from one that is not."""
import pathlib
import re
import sys

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import mutations  # noqa: E402

#: the modules that matter: each has at least one mutation in the list
MODULES = {f"rnnbook/{name}.py" for name in (
    "reference", "backward", "byhand", "diagnose", "compare", "oracles", "generate", "record",
    "numbers", "padded", "exercise", *(f"checks/ch0{n}" for n in range(1, 8)), "checks/common",
    *(f"grading/{name}" for name in ("walls", "child", "zygote", "attempt", "results",
                                     "roster", "classreport", "similarity", "config",
                                     "release", "gradescope", "procs", "run")))}


def test_the_list_holds_thirty_mutations_covering_every_module_that_matters():
    found = mutations.load()
    assert len(found) >= 30
    assert not MODULES - {m.module for m in found}, "modules without a mutation"
    assert all(m.breaks.strip() and "\n" not in m.breaks for m in found)


def test_every_mutation_applies_once_today_and_names_tests_that_exist():
    for m in mutations.load():
        text = (ROOT / m.module).read_text()
        assert text.count(m.old) == 1, f"{m.id}: its old text occurs {text.count(m.old)} times"
        for test in m.tests:
            assert (ROOT / test.split("::")[0]).is_file(), f"{m.id}: no {test}"


def test_a_bad_list_is_refused_naming_the_entry(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[mutation]]\nid = "x"\nmodule = "rnnbook/numbers.py"\nold = "a"\n'
                   'new = "b"\ntests = ["tests/test_record.py"]\n')
    assert mutations.main(["--list", str(bad)]) == 2
    assert capsys.readouterr().err.strip() == (
        "mutations: bad.toml: x: missing ['breaks'] or unknown [] fields")


def entry(id_, old, new, test, k):
    return (f'[[mutation]]\nid = "{id_}"\nmodule = "rnnbook/numbers.py"\nbreaks = "b"\n'
            f"old = '{old}'\nnew = '{new}'\ntests = [\"{test}\"]\nk = \"{k}\"\n\n")


def test_the_runner_catches_a_mutation_in_the_scratch_copy_and_can_fail(tmp_path, capsys):
    """One real mutation (of the scratch copy's rnnbook: caught only if that copy is the one
    imported), one harmless change (NOT CAUGHT), one that no longer applies; the working
    tree is left as it was."""
    before = (ROOT / "rnnbook" / "numbers.py").read_text()
    listed = tmp_path / "list.toml"
    test, k = "tests/test_book_numbers.py", "glue_keeps_what_every_shorter_format_shows"
    listed.write_text(
        entry("real", "kept + math.copysign(unit", "kept - math.copysign(unit", test, k)
        + entry("harmless", "DIGITS = 3", "DIGITS = 3  # a comment", test, k)
        + entry("gone", "no such text", "x", test, k))
    assert mutations.main(["--list", str(listed), "--no-baseline", "--jobs", "2"]) == 1
    said = dict(reversed(m.groups()) for m in re.finditer(
        r"^ *(caught|NOT CAUGHT|does-not-apply|error) +[\d.]+ s  (\S+)$",
        capsys.readouterr().out, re.MULTILINE))
    assert said == {"real": "caught", "harmless": "NOT CAUGHT", "gone": "does-not-apply"}
    assert (ROOT / "rnnbook" / "numbers.py").read_text() == before


def test_a_scratch_copy_imports_its_own_rnnbook(tmp_path):
    copy = mutations.scratch_copy(pathlib.Path(tmp_path))
    assert mutations.imported_from(copy) == str(copy / "rnnbook" / "__init__.py")
