"""The grader's options, each declared once in ``rnnbook/grading/config.py``: the
command line, the Gradescope bundle's settings (built by ``release.py``, read by
``gradescope.py``), the progress line's limits and the instructors' *Limits* table all
follow the declaration. Quick: nothing here grades a notebook."""
import argparse
import dataclasses
import json
import pathlib
import re
import zipfile
from dataclasses import fields

import pytest

from conftest import ROOT
from rnnbook.grading import cli, config, gradescope, release

STEM = "01-basic-rnn-cell"
#: the command line as it was before the options were declared once: no flag may go
BEFORE = {"--out", "--seed", "--workers", "--timeout", "--cell-timeout", "--budget",
          "--memory", "--processes", "--chapter", "--overwrite", "--visibility",
          "--roster", "--no-class-report", "--no-walls", "--walls-if-possible",
          "--exercises"}
DEFAULTS = {"seed": None, "chapter": None, "timeout": 10.0, "cell_timeout": 120.0,
            "budget": 300.0, "memory": 2048, "processes": 256, "max_notebook": 32,
            "walls": "required",
            "overwrite": False, "visibility": "visible", "roster": None,
            "class_report": True}


def flags(parser):
    named = {s for action in parser._actions for s in action.option_strings}
    return named - {"-h", "--help"}


def parse(*argv):
    return config.from_args(cli.parser().parse_args(["a.ipynb", "--out", "o", *argv]))


def test_every_option_is_declared_whole():
    for f in fields(config.Config):
        o = config.declared(f)
        assert o.help, f"{f.name}: no help"
        if o.limits:
            assert o.unit and o.hit, f"{f.name} is a limit: it needs a unit and a hit"
            assert o.above is not None or o.least is not None, f"{f.name}: no bound"


def test_the_command_line_keeps_its_flags_and_defaults():
    assert BEFORE <= flags(cli.parser())
    got = parse()
    for name, default in DEFAULTS.items():
        assert getattr(got, name) == default, name
    assert got.workers >= 1


def test_each_flag_sets_its_field():
    got = parse("--seed", "7", "--timeout", "2.5", "--cell-timeout", "3", "--budget",
                "40", "--memory", "900", "--processes", "32", "--workers", "3",
                "--chapter", STEM, "--overwrite", "--visibility", "hidden", "--roster",
                "r.csv", "--no-class-report")
    assert (got.seed, got.timeout, got.cell_timeout, got.budget, got.memory,
            got.processes, got.workers) == (7, 2.5, 3.0, 40.0, 900, 32, 3)
    assert (got.chapter, got.overwrite, got.visibility, got.roster,
            got.class_report) == (STEM, True, "hidden", "r.csv", False)
    assert parse("--no-walls").walls == "off"
    assert parse("--walls-if-possible").walls == "auto"
    assert parse("--walls-if-possible", "--no-walls").walls == "off"  # --no-walls wins
    assert parse("--no-walls", "--walls-if-possible").walls == "off"


@pytest.mark.parametrize("argv, error", [
    (["--memory", "0"], "--memory must be positive, not 0"),
    (["--timeout", "nan"], "--timeout must be positive, not nan"),
    (["--workers", "-1"], "--workers must be positive, not -1"),
    (["--budget", "-3"], "--budget must be positive, not -3"),
    (["--processes", "15"], "--processes must be at least 16 (a TensorFlow child has a "
                            "few threads of its own), not 15"),
    (["--memory", "1.5"], "argument --memory: invalid int value: '1.5'"),
    (["--visibility", "soon"], "argument --visibility: invalid choice: 'soon'"),
])
def test_a_bad_value_is_one_line_and_exit_status_2(argv, error, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["a.ipynb", "--out", "o", *argv])
    assert stopped.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.startswith(f"python -m rnnbook.grading: error: {error}"), said


def test_the_bundle_command_takes_the_bundles_options_only():
    bundle = [f for f in fields(config.Config) if config.declared(f).bundle]
    parser = argparse.ArgumentParser()
    config.add_options(parser, bundle=True, required=("chapter",))
    assert flags(parser) == {config.flag(f) for f in bundle}
    assert {"--processes", "--memory", "--seed", "--chapter"} <= flags(parser)
    args = parser.parse_args(["--chapter", STEM, "--memory", "900"])
    assert config.given(args) == {"chapter": STEM, "memory": 900}  # the rest: defaults
    with pytest.raises(SystemExit):
        parser.parse_args(["--memory", "900"])  # --chapter is required


def test_the_bundle_carries_processes_and_refuses_a_bad_value(tmp_path):
    bundle = release.autograder(tmp_path / "a.zip", STEM, processes=64, memory=900)
    with zipfile.ZipFile(bundle) as z:
        settings = json.loads(z.read(gradescope.SETTINGS))
    assert settings == {**config.bundle_defaults(), "chapter": STEM, "processes": 64,
                        "memory": 900}
    with pytest.raises(release.source.SourceError, match="no setting workers"):
        release.autograder(tmp_path / "c.zip", STEM, workers=3)  # Gradescope fixes it
    assert release.main(["autograder", "--chapter", STEM, "--memory", "-3",
                         "--out", str(tmp_path / "b.zip")]) == 2
    assert not (tmp_path / "b.zip").exists()


def write_settings(root, settings):
    (root / "source").mkdir(parents=True, exist_ok=True)
    (root / "source" / gradescope.SETTINGS).write_text(json.dumps(settings))
    return root / "source"


def test_gradescope_builds_its_config_from_the_bundles_settings(tmp_path):
    source = write_settings(tmp_path, {
        "chapter": STEM, "seed": 5, "processes": 64, "memory": "900", "timeout": 3,
        "cell_timeout": None, "something_else": 1})
    got = gradescope.settings(source)
    assert (got.chapter, got.seed, got.processes, got.memory, got.timeout) == (
        STEM, 5, 64, 900, 3.0)
    assert got.cell_timeout == config.Config().cell_timeout  # null: the default
    assert (got.workers, got.walls, got.class_report) == (1, "auto", False)
    assert gradescope.settings(tmp_path / "nothing") == config.from_settings(
        {}, **gradescope.ON_GRADESCOPE)
    for bad, said in (({"memory": -1}, "--memory must be positive, not -1"),
                      ({"memory": "lots"}, "--memory must be a whole number"),
                      ({"memory": True}, "--memory must be a whole number, not True"),
                      ({"visibility": "soon"}, "--visibility must be one of"),
                      ({"chapter": "06-attention"}, "--chapter must be one of")):
        with pytest.raises(ValueError, match=re.escape(said)):
            gradescope.settings(write_settings(tmp_path, bad))


def test_gradescope_passes_the_whole_config_to_the_grader(tmp_path, monkeypatch):
    """The bundle's --processes reached no grading before (an argv rebuilt by hand)."""
    write_settings(tmp_path, {"chapter": STEM, "processes": 64, "memory": 900})
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / f"{STEM}.ipynb").write_text("{}")
    seen = []
    monkeypatch.setattr(cli, "grade_with", lambda config, *_: seen.append(config) or 2)
    report = gradescope.run(tmp_path)
    assert report.output.startswith("Not graded: the autograder wrote no report")
    assert [(c.processes, c.memory, c.chapter, c.workers) for c in seen] == [
        (64, 900, STEM, 1)]
    assert seen == [gradescope.settings(tmp_path / "source")]  # every option, as it is

    write_settings(tmp_path, {"chapter": STEM, "processes": 8})
    report = gradescope.run(tmp_path)
    assert report.output == (
        "Not graded: the bundle's settings are wrong (--processes must be at least 16 "
        "(a TensorFlow child has a few threads of its own), not 8); tell your "
        "instructor")
    assert len(seen) == 1


def test_the_limits_text_names_every_limit_in_force():
    text = config.Config(timeout=2.5, memory=900).limits_text()
    assert text.startswith("--timeout 2.5 --cell-timeout 120 --budget 300 --memory 900")
    for f in fields(config.Config):
        assert (f"{config.flag(f)} " in text) == bool(config.declared(f).limits), f.name


def test_the_instructors_limits_table_is_the_declaration():
    page = config.INSTRUCTORS.read_text()
    assert config.with_limits_table(page) == page, (
        "book/instructors.md's limits' tables differ from rnnbook/grading/config.py: "
        "run .venv/bin/python -m rnnbook.grading.config")
    table = page.split(config.MARKERS[0])[1].split(config.MARKERS[1])[0]
    for f in fields(config.Config):
        if config.declared(f).limits:
            name, unit = config.flag(f), config.declared(f).unit
            default = config.Config().limits_text().split(f"{name} ")[1].split()[0]
            assert f"| `{name} {unit}` | {default} |" in table
    assert config.main(["--check"]) == 0


def test_the_table_follows_a_changed_declaration(monkeypatch):
    page = config.INSTRUCTORS.read_text()
    monkeypatch.setattr(config.Config.__dataclass_fields__["memory"], "default", 4096)
    assert config.with_limits_table(page) != page
    assert "| `--memory MB` | 4096 |" in config.limits_table()
    with pytest.raises(ValueError, match="MARKERS"):
        config.with_limits_table(page.replace(config.MARKERS[1], ""))


def test_what_a_student_sees_is_what_the_grader_says():
    """Each quoted sentence of a limit's ``hit`` is the grader's own words: its pieces
    between the placeholders (S, N, MB, ...) are in the grader's code."""
    code = "".join(p.read_text() for p in (ROOT / "rnnbook" / "grading").glob("*.py")
                   if p.name != "config.py")
    for f in fields(config.Config):
        for quoted in re.findall(r'"([^"]+)"', config.declared(f).hit):
            pieces = re.split(r"\b(?:S s|MB MB|S|N|MB)\b|\.\.\.", quoted)
            for piece in (p.strip() for p in pieces):
                assert len(piece) <= 10 or piece in code, (f.name, piece)


def test_no_other_module_spells_an_option():
    """The flags live in config.py: the grader's other modules do not add them again."""
    for path in (ROOT / "rnnbook" / "grading").glob("*.py"):
        if path.name == "config.py":
            continue
        for f in fields(config.Config):
            spelled = f'add_argument("{config.flag(f)}"'
            assert spelled not in path.read_text(), f"{path.name} adds {config.flag(f)}"


def test_a_config_is_checked_as_the_command_line_checks_it():
    with pytest.raises(ValueError, match="walls must be one of required, auto, off"):
        config.Config(walls="sometimes").check()
    assert config.Config().check() == config.Config()
    assert pathlib.Path(parse("--roster", "").roster) == pathlib.Path(".")  # as before


def test_max_notebook_refuses_a_larger_file(tmp_path):
    """The trial of an option made from a constant (``run.MAX_NOTEBOOK``): its
    declaration, where run.py reads it, and this test; the rest followed."""
    import nbformat

    from rnnbook.grading import run

    big = tmp_path / "big.ipynb"
    text = nbformat.v4.new_markdown_cell("x" * 1_100_000)  # 1.05 MB
    nb = nbformat.v4.new_notebook(cells=[text])
    nbformat.write(nb, str(big))
    refused = run.Run(parse("--max-notebook", "1"), [big], tmp_path / "out").subs[0]
    assert refused.error == f"{big}: larger than 1 MB"
    kept = run.Run(parse(), [big], tmp_path / "out").subs[0]
    assert "larger than" not in (kept.error or "")
    assert config.bundle_defaults()["max_notebook"] == 32  # Gradescope's too


def read_by(name: str, code: str, child: bool) -> bool:
    """Whether ``code`` reads option ``name``: ``config.name`` (``limits.``,
    ``self.config.``) or ``x["name"]``; a child-side option only as ``limits["name"]``."""
    if child:
        return f'limits["{name}"]' in code
    return bool(re.search(rf"\b(?:config|limits)\.{name}\b|\[[\"']{name}[\"']\]", code))


def test_every_option_is_read_by_the_code_it_sets():
    """An option no code outside config.py reads does nothing (a child-side one must be read
    from the job's ``limits`` in the zygote or the child, which get only the job)."""
    package = ROOT / "rnnbook"
    grader = "".join(p.read_text() for p in package.rglob("*.py") if p.name != "config.py")
    child = "".join((package / "grading" / n).read_text() for n in ("zygote.py", "child.py"))
    for f in fields(config.Config):
        side = config.declared(f).child
        assert read_by(f.name, child if side else grader, side), (
            f"{config.flag(f)}: no code reads it"
            + (' (the child: job.limits["' + f.name + '"] in zygote.py or child.py)'
               if side else ""))
    assert not read_by("max_output", "MAX_OUTPUT = 32", True)  # the test can fail
    assert read_by("memory", "if rss > limits.memory:", False)


def test_the_job_carries_exactly_the_child_side_options():
    limits = config.child_limits(config.Config())
    assert set(limits) == {f.name for f in fields(config.Config)
                           if config.declared(f).child}
    assert all(config.declared(f).bundle for f in fields(config.Config)
               if config.declared(f).child), "a child-side limit belongs in the bundle too"


def test_a_limit_the_child_reads_but_the_job_does_not_carry_is_named(monkeypatch):
    """A child-side option declared without ``child=True`` ended every child with only
    "ended the process (exit code 1)" (issue 54): the grader now stops at the job, naming
    the option, the module that reads it and the declaration to fix."""
    assert config.read_by_the_child() == {"max_output": "zygote.py"}
    assert config.not_passed({"max_output": 32}, config.read_by_the_child()) is None
    real = config.declared
    monkeypatch.setattr(config, "declared", lambda f: dataclasses.replace(
        real(f), child=False) if f.name == "max_output" else real(f))
    with pytest.raises(RuntimeError, match=r"job.limits\['max_output'\] \(rnnbook/grading/"
                       r"zygote.py\) .*--max-output .*child=True and bundle=True"):
        config.child_limits(config.Config())


def test_every_fixed_limit_names_the_constant_that_holds_it():
    """A row of the fixed limits' table is a :data:`config.FIXED` entry, and its constant
    is still in the code: a limit made an option leaves no stale row behind."""
    flags = {config.flag(f) for f in fields(config.Config)}
    for fixed in config.FIXED:
        path, name = fixed.where.split()
        assert re.search(rf"^(?:def |[\w ]*, *)?{name}\b[\w, ]*[=(]",
                         (ROOT / path).read_text(), re.MULTILINE), (
            f"the fixed limit '{fixed.limit}': {path} has no {name} (an option now? "
            "remove its row from config.FIXED)")
        uses = len(re.findall(rf"\b{name}\b", (ROOT / path).read_text()))
        assert uses >= 2, f"{path}'s {name} is used nowhere: is '{fixed.limit}' an option?"
        assert not any(flag in fixed.default for flag in flags - {"--memory"}), fixed
