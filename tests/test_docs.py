"""The pages a newcomer reads agree with the repository, each fact in one place: README.md's
layout table names every tracked module and top-level entry and nothing that is gone, its
dependency table every pin of requirements.txt, it carries no dated measurement and it fits
in 12 KB; the intro's versions table is the pins; the instructors' measured figures are
benchmarks/RESULTS.md's latest full ``make bench``, stated once; CHANGELOG.md keeps Keep a
Changelog's form and no measured figure."""
import re
import subprocess

from rnnbook import checks
from tests.test_book import ROOT
from tests.test_package import pins

README = (ROOT / "README.md").read_text()
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
RESULTS = (ROOT / "benchmarks" / "RESULTS.md").read_text()
INSTRUCTORS = (ROOT / "book" / "instructors.md").read_text()
INTRO = (ROOT / "book" / "intro.md").read_text()


def table(text, after):
    """The body rows (lists of cells) of the first Markdown table after the text ``after``."""
    rows, started = [], False
    for line in text.split(after, 1)[1].splitlines():
        line = line.strip()  # RESULTS' tables are indented under their bullet
        if line.startswith("|"):
            started = True
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
        elif started:
            break
    rule = next(k for k, row in enumerate(rows) if all(set(c) <= set("-:") for c in row))
    return rows[rule + 1:]  # below the header's |---| line


def tracked():
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


def layout():
    """README's layout: every path its first column names, ``chNN`` as a pattern; a bare name
    after a comma (``cli.py`, `__main__.py``) is in the first one's folder."""
    named = []
    for row in table(README, "## Layout"):
        paths = re.findall(r"`([^`]+)`", row[0])
        folder = paths[0].rsplit("/", 1)[0] + "/" if "/" in paths[0].rstrip("/") else ""
        named += [paths[0]] + [p if "/" in p else folder + p for p in paths[1:]]
    return named


def covered(path, named):
    for entry in named:
        pattern = re.escape(entry).replace("NN", r"\d\d")
        if re.fullmatch(pattern, path):
            return True
    return False


def test_the_readme_layout_names_what_exists_and_nothing_else():
    files, named = tracked(), layout()
    for entry in named:
        pattern = re.escape(entry).replace("NN", r"\d\d")
        assert any(re.match(pattern, f) for f in files), f"README's layout names {entry}: gone"
    modules = [f for f in files if f.endswith(".py") and f.split("/")[0] in
               ("rnnbook", "scripts", "benchmarks")]
    for module in modules:
        folder = module.rsplit("/", 1)[0] + "/"
        if module.endswith("__init__.py") and folder in named:
            continue  # the folder's row says what the package is
        if folder in named and folder.endswith("templates/"):
            continue
        assert covered(module, named), f"README's layout has no row for {module}"
    top = {f.split("/")[0] + ("/" if "/" in f else "") for f in files} - {"README.md",
                                                                          ".gitignore"}
    for entry in top:
        assert any(n == entry or n.startswith(entry) for n in named), \
            f"README's layout has no row for {entry}"


def test_the_readme_says_why_for_every_pinned_package_and_nothing_else():
    rows = table(README, "## Dependencies")
    listed = {name.strip() for row in rows for name in row[0].split(",")}
    assert listed == set(pins()), listed ^ set(pins())


def test_the_readme_holds_no_measured_figure():
    """Dated measurements are benchmarks/RESULTS.md's; the instructors' page has the current
    ones."""
    assert not re.search(r"\d\.\d+ ?s\b|\d+ MB\b|\d\.\d+x\b", README), \
        re.search(r".*(\d\.\d+ ?s\b|\d+ MB\b|\d\.\d+x\b).*", README).group(0)


def test_the_intro_versions_are_the_pins():
    rows = table(INTRO, "## Versions")
    assert len(rows) >= 5
    runtime = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    for package, version in rows:
        expected = runtime if package == "Python" else pins()[package]
        assert version == expected, (package, version, expected)


def latest_bench(results=RESULTS):
    """benchmarks/RESULTS.md's latest full ``make bench`` (the first table of marginal costs,
    newest first): ``{chapter: (one more submission, 300 submissions)}``, and the
    yardstick."""
    rows = table(results, "| Chapter | Marginal cost")
    costs = {row[0]: (re.match(r"[\d.]+ s", row[1]).group(0), row[2]) for row in rows}
    yardstick = re.search(r"Yardstick, a bare\s+`import tensorflow`: ([\d.]+ s)",
                          results).group(1)
    return costs, yardstick


def test_the_instructors_figures_are_the_latest_bench_and_said_once():
    costs, yardstick = latest_bench()
    assert len(costs) == len(checks.CHAPTERS)  # every chapter measured
    rows = table(INSTRUCTORS, "**Measured**")
    assert {row[0]: (row[1], row[2]) for row in rows} == costs
    measured = INSTRUCTORS.split("**Measured**", 1)[1].split("\n## ", 1)[0]
    assert f"`import tensorflow` {yardstick}" in measured
    figures = [one_more for one_more, _ in costs.values()]
    for one_more in figures:  # one place for the lead to update (two chapters may tie)
        assert INSTRUCTORS.count(one_more) == figures.count(one_more), one_more
    outside = re.sub(r"```.*?```", "", INSTRUCTORS.replace(measured, ""), flags=re.DOTALL)
    stray = re.search(r".*\b\d+(\.\d+)? s\b.*", outside)  # example outputs aside
    assert not stray, f"a timing figure outside the Measured block: {stray.group(0)}"


#: the README's size: a learner's and an instructor's first screen, then links (issue 54)
README_BYTES = 12 * 1024


def test_the_readme_fits_in_12_kb():
    size = len(README.encode())
    assert size <= README_BYTES, (
        f"README.md is {size} bytes, over {README_BYTES}: keep a row a row, and move the "
        "explanation to CONTRIBUTING.md's reference")


#: Keep a Changelog's headings (https://keepachangelog.com): a release, then its kinds
RELEASE = re.compile(r"## \[(Unreleased|\d{4}-\d\d-\d\d)\]( .+)?")
KINDS = ("### Added", "### Changed", "### Deprecated", "### Removed", "### Fixed",
         "### Security")


def changelog_form(text):
    """What breaks Keep a Changelog's form in ``text``: headings other than a release or a
    kind, a release without a kind, an entry of more than one line, a measured figure's
    section (those are benchmarks/RESULTS.md's)."""
    wrong, release, kinds = [], None, 0
    body = text.split("\n## ", 1)[1] if "\n## " in text else ""
    for line in ("## " + body).splitlines():
        if line.startswith("## "):
            if release is not None and not kinds:
                wrong.append(f"{release!r} has no ### Added / Changed / Fixed")
            release, kinds = line, 0
            if not RELEASE.fullmatch(line):
                wrong.append(f"not a release heading: {line!r}")
        elif line.startswith("#"):
            kinds += 1
            if line not in KINDS:
                wrong.append(f"not one of Keep a Changelog's kinds: {line!r}")
        elif line.strip() and not line.startswith("- "):
            wrong.append(f"an entry is one line starting '- ': {line[:60]!r}")
    if release is not None and not kinds:
        wrong.append(f"{release!r} has no ### Added / Changed / Fixed")
    return wrong


def test_the_changelog_keeps_keep_a_changelogs_form():
    assert CHANGELOG.count("## [Unreleased]") == 1
    assert changelog_form(CHANGELOG) == []
    assert "| Chapter | Marginal cost" not in CHANGELOG, "measured figures: benchmarks/RESULTS.md"
    bad = "# Changelog\n\n## [Unreleased]\n\n### Measured\n- a\n  b\n## 2026-11-22\n"
    assert len(changelog_form(bad)) == 4  # the test can fail: kind, wrapped entry, heading


def test_the_latest_bench_is_the_first_of_the_results_file():
    """A newer run recorded above the others is the one the instructors' page must show."""
    newer = RESULTS.replace("## Grading (make bench)\n", "## Grading (make bench)\n\n"
                            "- Yardstick, a bare `import tensorflow`: 9.99 s\n\n"
                            "  | Chapter | Marginal cost | 300 |\n  |---|---|---|\n"
                            "  | 1 | 9.999 s = 1x | about 1 s |\n", 1)
    assert latest_bench(newer) == ({"1": ("9.999 s", "about 1 s")}, "9.99 s")
