"""The fast loop, ``make test-fast``: only the tests that the change at hand concerns.

    python scripts/fast.py                  # what the working tree changes against HEAD
    python scripts/fast.py --base main      # make test-fast BASE=main
    python scripts/fast.py --dry-run        # print the selection, run nothing

The changed files are ``git diff --name-only BASE`` and the untracked ones. Each is
mapped to the tests that concern it, and the plan says why ("rnnbook/compare.py ->
tests/test_diagnose.py (imports rnnbook.compare)"):

- a package module: every test file that imports it (``import rnnbook.x``, ``from
  rnnbook import x``, ``rnnbook.x.`` in use, ``"rnnbook.x"`` or its path in a string:
  the grader runs in subprocesses and loads its zygote and child by path); a test that
  runs the grader (``rnnbook.grading.cli``, ``.run``, ``-m rnnbook.grading``) concerns
  every grader module;
- a chapter's files (``rnnbook/checks/chNN.py``, ``tests/learners/chNN.py``,
  ``solutions/``, ``book/`` and ``notebooks/NN-*.ipynb``): that chapter's ``make
  exercise-check STEM=<stem>`` (scripts/focus.py's selection), plus nbval of a changed
  ``book/`` notebook;
- a test file: itself; a test helper (``tests/hostile/``, ``tests/rendered.py``, ...) or
  a doc (README, CONTRIBUTING, CHANGELOG, benchmarks/RESULTS.md, ``book/*.md``): the
  tests that import it or name it in a string, and tests/test_docs.py for a doc;
- what the derivation cannot see: :data:`OVERRIDES`, each with its reason.

A file that maps to nothing, or that every test depends on (:data:`EVERYTHING`), gets
one line: the change needs ``make test``. Nothing runs the whole suite here.

The fast loop is the suite made smaller, and says so: seed sweeps run on
``RNNBOOK_SEEDS`` (:data:`SEEDS`) seeds instead of 200, and the tests of
:data:`LEFT_TO_CI` are left to ``make test`` (and CI), which keep all of it.
``--estimate <junit.xml>`` prints each package module's selection time on two workers
from a full run's durations (``make test-times`` writes one).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import fnmatch
import functools
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import focus  # noqa: E402  (scripts/focus.py: the chapter's selection, its one definition)

#: the seeds each seed sweep runs on in the fast loop (``make test`` and CI: 200)
SEEDS = 20
#: files every test may depend on: a change to one needs ``make test``
EVERYTHING = (
    "Makefile",
    "pyproject.toml",
    "requirements.txt",
    "conftest.py",
    "tests/conftest.py",
    ".ci/run",
    "runtime.txt",
)
#: the docs a maintainer edits: tests/test_docs.py holds them, and the tests naming them
DOCS = (
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "benchmarks/RESULTS.md",
    "book/*.md",
)
#: the modules whose use means "runs the grader" (attempt: a submission's zygote and
#: child): such a test concerns every grader module
GRADER_RUNS = (
    "rnnbook.grading.cli",
    "rnnbook.grading.run",
    "rnnbook.grading.__main__",
    "rnnbook.grading.attempt",
)
CHAPTER_FILES = (
    r"rnnbook/checks/ch(\d\d)\.py",
    r"tests/learners/ch(\d\d)\.py",
    r"(?:solutions|book|notebooks)/(\d\d)-[^/]*\.ipynb",
)


@dataclasses.dataclass(frozen=True)
class Override:
    """Tests a file concerns that the derivation cannot see."""

    pattern: str  # fnmatch pattern of the changed file
    tests: tuple[str, ...]
    reason: str


OVERRIDES: tuple[Override, ...] = (
    Override(
        "rnnbook/exercise.py",
        ("tests/test_record.py",),
        "a chapter's check(fn) (rnnbook.exercise, reached through CHAPTER) writes the "
        "record of passed exercises that tests/test_record.py reads",
    ),
    Override(
        "rnnbook/grading/templates/*",
        ("tests/test_release.py", "tests/test_autograder.py"),
        "rnnbook.grading.release copies the templates into the release and the bundle",
    ),
)


@dataclasses.dataclass(frozen=True)
class LeftToCI:
    """A test the fast loop leaves to ``make test``, and why; ``unless``: the paths (their
    start) whose change keeps it in the loop, where its subject is what changed."""

    node: str  # a test file, or a node id prefix (pytest's --deselect)
    reason: str
    unless: tuple[str, ...] = ()

    def left(self, changed: list[str]) -> bool:
        return not any(path.startswith(self.unless) for path in changed if self.unless)


LEFT_TO_CI: tuple[LeftToCI, ...] = (
    LeftToCI("tests/test_bench.py", "the speed and memory benchmarks (minutes)"),
    LeftToCI("tests/test_intro_install.py", "installs the package into a fresh venv"),
    LeftToCI("tests/test_ci_run.py", "runs CI's own script"),
    LeftToCI(
        "tests/test_one_verdict.py::"
        "test_every_learners_answer_gets_one_verdict_in_four_places",
        "every learner's answer graded in four places (minutes)",
    ),
    *(
        LeftToCI(
            f"tests/test_grade.py::{test}",
            "the hostile corpus's grading run (1.5 min), kept where the grader or the "
            "corpus changed",
            unless=("rnnbook/grading/", "tests/hostile/", "tests/test_grade.py"),
        )
        for test in ("test_corpus_is_large_enough_and_walls_stand_here",
                     "test_corpus_outcome")
    ),
)


class Refused(Exception):
    """A bad BASE: the message is the one line to print."""


@dataclasses.dataclass(frozen=True)
class Selected:
    """One line of the plan: ``changed`` maps to ``target`` (a test file, a notebook, or
    ``chapter:<stem>``) because of ``why``."""

    changed: str
    target: str
    why: str


@dataclasses.dataclass
class Plan:
    selected: list[Selected]
    unmapped: list[str]  # files that map to nothing
    everything: list[str]  # files every test depends on

    def tests(self) -> list[str]:
        """The test files and notebooks of the plain run (no chapter focus), sorted."""
        return sorted(
            {s.target for s in self.selected if not s.target.startswith("chapter:")}
        )

    def chapters(self) -> list[str]:
        return sorted(
            {
                s.target.partition(":")[2]
                for s in self.selected
                if s.target.startswith("chapter:")
            }
        )


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise Refused(f"git {' '.join(args)}: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout


def changed_files(base: str) -> list[str]:
    """The files the working tree changes against ``base`` (a git revision), untracked
    ones too; Refused when ``base`` is not a commit."""
    check = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if check.returncode or not base.strip() or base.startswith("-"):
        raise Refused(
            f"BASE={base!r} is not a git revision of this repository "
            "(give a commit, branch or tag, e.g. BASE=HEAD or BASE=main)"
        )
    diff = git("diff", "-z", "--name-only", base, "--").split("\0")
    untracked = git("ls-files", "-z", "--others", "--exclude-standard").split("\0")
    return sorted((set(diff) | set(untracked)) - {""})  # -z: names as they are


def test_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py"))


def package_modules() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rnnbook").rglob("*.py"))


def dotted(path: str) -> str:
    """``rnnbook/grading/run.py`` -> ``rnnbook.grading.run`` (a package: its name)."""
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


@dataclasses.dataclass(frozen=True)
class Uses:
    """What a test file uses: modules (dotted, as imported or named) and its strings."""

    modules: frozenset[str]
    strings: tuple[str, ...]


@functools.cache
def uses(test: str) -> Uses:
    tree = ast.parse((ROOT / test).read_text(), filename=test)
    modules: set[str] = set()
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        )
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    strings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # ``from rnnbook import checks`` uses the module rnnbook.checks; the package
            # rnnbook itself only where a name of its own is imported
            inner = [f"{node.module}.{alias.name}" for alias in node.names]
            modules.update(inner)
            if not all(is_module(name) for name in inner):
                modules.add(node.module)
        elif isinstance(node, ast.Attribute):
            chain = attribute_chain(node)
            if chain:
                modules.add(chain)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            strings.append(node.value)
            modules.update(re.findall(r"\brnnbook(?:\.\w+)+", node.value))
    helpers = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "conftest"
        for alias in node.names
    ]
    modules |= {m for name in helpers for m in conftest_uses().get(name, ())}
    return Uses(frozenset(modules), tuple(strings))


@functools.cache
def conftest_uses() -> dict[str, frozenset[str]]:
    """The package modules each top-level function of tests/conftest.py uses (through
    the names it imports and the conftest's functions it calls): ``from conftest import
    verdict`` uses what ``verdict`` does."""
    tree = ast.parse((ROOT / "tests/conftest.py").read_text())
    imported: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported |= {
                a.asname or a.name: f"{node.module}.{a.name}" for a in node.names
            }
        elif isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0]: a.name for a in node.names}
    called = {
        node.name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }
    found: dict[str, frozenset[str]] = {}
    for name in called:
        seen, todo = {name}, [name]
        while todo:
            for used in called.get(todo.pop(), ()):
                if used in called and used not in seen:
                    seen.add(used)
                    todo.append(used)
        found[name] = frozenset(
            imported[n] for f in seen for n in called[f] if n in imported
        )
    return found


def is_module(name: str) -> bool:
    """Whether dotted ``name`` is a module or package of this repository."""
    path = ROOT / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def attribute_chain(node: ast.Attribute) -> str:
    """``rnnbook.grading.run.main`` for that attribute use, else ""."""
    parts = [node.attr]
    value = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if isinstance(value, ast.Name) and value.id == "rnnbook":
        return ".".join(["rnnbook", *reversed(parts)])
    return ""


def imports(test: str, module: str) -> str:
    """Why ``test`` concerns package module ``module`` (a path), or ""."""
    name = dotted(module)
    used = uses(test).modules
    inner = [u for u in used if u.startswith(name + ".")]
    if name in used or (not module.endswith("__init__.py") and inner):
        return f"imports {name}"
    if (
        module.endswith("__main__.py")
        and dotted(module).removesuffix(".__main__") in used
    ):
        return f"runs python -m {name.removesuffix('.__main__')}"
    named = names(test, module)
    if named:
        return named
    if module.startswith("rnnbook/grading/"):
        runs = sorted(u for u in used if u in GRADER_RUNS or u == "rnnbook.grading")
        if runs:
            return f"runs the grader ({runs[0]})"
    return ""


def names(test: str, path: str) -> str:
    """Why ``test`` concerns ``path`` because a string of it names the file, or ""."""
    base = pathlib.PurePosixPath(path).name
    for text in uses(test).strings:
        if path in text:
            return f"names {path}"
        if text == base and base != "__init__.py" and unique_name(base):
            return f"names {base}"
    return ""


@functools.cache
def unique_name(base: str) -> bool:
    tracked = git("ls-files", "-z").split("\0")
    return sum(pathlib.PurePosixPath(p).name == base for p in tracked) == 1


def helper_importers(test: str, path: str) -> str:
    """Why ``test`` concerns test helper ``path`` (tests/x/y.py), or ""."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    wanted = {".".join(parts[k:]) for k in range(len(parts))}
    hit = sorted(uses(test).modules & wanted)
    if hit:
        return f"imports {hit[0]}"
    return names(test, path)


def chapter_stem(path: str) -> str:
    """The chapter notebook's stem that ``path`` belongs to, or ""."""
    for pattern in CHAPTER_FILES:
        found = re.fullmatch(pattern, path)
        if found:
            return next((s for s in focus.stems() if s.startswith(found.group(1))), "")
    return ""


def select(path: str) -> list[Selected]:
    """Every test ``path`` maps to, with the reason."""
    found = [
        Selected(path, t, f"{o.reason}")
        for o in OVERRIDES
        if fnmatch.fnmatch(path, o.pattern)
        for t in o.tests
    ]
    stem = chapter_stem(path)
    if stem:
        found.append(
            Selected(path, f"chapter:{stem}", "make exercise-check STEM=" + stem)
        )
        if path.startswith("book/"):
            found.append(Selected(path, path, "the changed notebook under nbval"))
    if re.fullmatch(r"tests/test_\w+\.py", path):
        found.append(Selected(path, path, "the test file itself"))
    if path.startswith("rnnbook/"):
        found += [
            Selected(path, t, why)
            for t in test_files()
            for why in [imports(t, path)]
            if why
        ]
    elif path.endswith(".py"):  # a test helper, a script, a benchmark
        found += [
            Selected(path, t, why)
            for t in test_files()
            if t != path
            for why in [helper_importers(t, path)]
            if why
        ]
    elif not stem:
        if any(fnmatch.fnmatch(path, d) for d in DOCS):
            found.append(Selected(path, "tests/test_docs.py", "a doc"))
        found += [
            Selected(path, t, why)
            for t in test_files()
            for why in [names(t, path)]
            if why and t != "tests/test_docs.py"
        ]
    return found


def plan(paths: list[str]) -> Plan:
    result = Plan([], [], [])
    for path in paths:
        if path in EVERYTHING:
            result.everything.append(path)
        found = select(path)
        result.selected += found
        if not found and path not in EVERYTHING:
            result.unmapped.append(path)
    return result


def left_out(result: Plan) -> list[LeftToCI]:
    """What of :data:`LEFT_TO_CI` the plan's run leaves out."""
    targets, changed = result.tests(), [s.changed for s in result.selected]
    return [left for left in LEFT_TO_CI
            if left.node.split("::")[0] in targets and left.left(changed)]


def commands(result: Plan, jobs: str = "auto") -> list[list[str]]:
    """The pytest runs: one plain run (the suite's own options) and one per chapter."""
    python = sys.executable
    chapters = [
        focus.check_command(stem, "", jobs, python) for stem in result.chapters()
    ]
    deselect = [
        a
        for x in left_out(result)
        if "::" in x.node
        for a in ("--deselect", x.node)
    ]
    done = {x.node for x in left_out(result)}
    done |= {a for command in chapters for a in command}
    plain = [t for t in result.tests() if t not in done]  # not twice
    runs = [[python, "-m", "pytest", "-n", jobs, *deselect, *plain]] if plain else []
    return runs + [command + deselect for command in chapters]


def describe(result: Plan) -> list[str]:
    lines = []
    for s in result.selected:
        target = (
            s.target.partition(":")[2] + "'s exercise-check"
            if s.target.startswith("chapter:")
            else s.target
        )
        lines.append(f"  {s.changed} -> {target} ({s.why})")
    for path in result.unmapped:
        lines.append(f"  {path}: no test maps to it")
    for left in left_out(result):
        lines.append(f"  left to make test and CI: {left.node} ({left.reason})")
    if result.selected:
        lines.append(
            f"  seed sweeps on {SEEDS} seeds (RNNBOOK_SEEDS); make test and CI: 200"
        )
    if result.everything or result.unmapped:
        why = [f"{', '.join(result.everything)}: every test may depend on it"] * bool(
            result.everything
        ) + [f"{', '.join(result.unmapped)}: no test maps to it"] * bool(
            result.unmapped
        )
        lines.append(f"  this change needs `make test` ({'; '.join(why)})")
    return lines


def durations(junit: pathlib.Path) -> dict[str, float]:
    """Seconds per test (``file::name``; a notebook's cells: ``book/x.ipynb::Cell 3``)
    of a JUnit XML file."""
    seconds: dict[str, float] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        name = case.get("classname", "")
        path = (
            name.replace(".", "/") + ".py"
            if not name.endswith(".ipynb")
            else name.replace(".", "/", 1)
        )
        node = f"{path}::{case.get('name')}"
        seconds[node] = seconds.get(node, 0.0) + float(case.get("time", 0))
    return seconds


def estimate(result: Plan, seconds: dict[str, float], workers: int = 2) -> float:
    """The plan's time on ``workers`` from a full run's ``seconds``: the summed
    durations over the workers, or the slowest file if longer (the suite runs a file on
    one worker). A chapter's tests are those whose id names its stem or no chapter's;
    the sweep is counted at SEEDS of its 200 seeds; the tests left to CI are not
    counted."""
    left = [x.node for x in left_out(result)]
    plain = set(result.tests())
    chapter_files = {f"solutions/{s}.ipynb" for s in result.chapters()} | set(
        focus.TESTS
    )
    chapter_files |= {
        str(p.relative_to(ROOT))
        for s in result.chapters()
        for p in ROOT.glob(f"tests/test_ch{s[:2]}*.py")
    }
    every = focus.stems()
    cost: dict[str, float] = {}
    for node, took in seconds.items():
        file, _, name = node.partition("::")
        if any(file == x or node == x or node.startswith(x + "[") for x in left):
            continue
        wanted = file in plain or (
            file in chapter_files
            and result.chapters()
            and (
                any(s in name for s in result.chapters())
                or not any(s in name for s in every)
            )
        )
        if wanted:
            scale = SEEDS / 200 if file == "tests/test_sweep.py" else 1
            cost[file] = cost.get(file, 0.0) + took * scale
    return max(sum(cost.values()) / workers, max(cost.values(), default=0.0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/fast.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--base", default="HEAD", help="the git revision to compare with"
    )
    parser.add_argument("--jobs", default="auto", help="pytest-xdist workers")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan, run nothing"
    )
    parser.add_argument(
        "--estimate",
        type=pathlib.Path,
        metavar="JUNIT_XML",
        help="print each package module's selection time, run nothing",
    )
    args = parser.parse_args(argv)
    if args.estimate:
        seconds = durations(args.estimate)
        for module in package_modules():
            print(f"{estimate(plan([module]), seconds) / 60:6.1f} min  {module}")
        return 0
    try:
        paths = changed_files(args.base)
    except Refused as refused:
        print(f"make: {refused}", file=sys.stderr)
        return 2
    if not paths:
        print(f"test-fast: nothing changed against {args.base}")
        return 0
    result = plan(paths)
    print(f"test-fast: {len(paths)} changed file(s) against {args.base}")
    print("\n".join(describe(result)))
    runs = commands(result, args.jobs)
    status = 0
    for command in runs:
        print("  " + " ".join(command), flush=True)
        if not args.dry_run:
            env = {**os.environ, "RNNBOOK_SEEDS": str(SEEDS)}
            status = max(status, subprocess.run(command, cwd=ROOT, env=env).returncode)
    return status


if __name__ == "__main__":
    sys.exit(main())
