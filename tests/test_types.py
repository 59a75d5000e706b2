"""The package's annotations, and the type checker that `make lint` runs over them (mypy,
configured in pyproject.toml's [tool.mypy])."""
import ast
import subprocess
import sys

from conftest import ROOT

PACKAGE = ROOT / "rnnbook"
#: modules being rewritten, annotated by their authors (file names: matched by basename):
#: drop a name once its module is annotated
NOT_YET: set[str] = set()


def public_functions(tree):
    """The module's top-level functions and its top-level classes' public methods."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and not m.name.startswith("_"))


def unannotated(tree):
    """Names of the public functions of ``tree`` whose return or some argument (but self and
    cls) has no annotation."""
    missing = []
    for fn in public_functions(tree):
        a = fn.args
        args = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
        if fn.returns is None or any(x.annotation is None for x in args
                                     if x.arg not in ("self", "cls")):
            missing.append(fn.name)
    return missing


def test_the_finder_sees_a_missing_annotation():
    tree = ast.parse("def f(x: int) -> int: ...\ndef g(x) -> int: ...\ndef h(x: int): ...\n"
                     "class C:\n    def m(self, y) -> None: ...\n    def _p(self, z): ...\n")
    assert unannotated(tree) == ["g", "h", "m"]


def test_every_public_function_is_annotated():
    missing = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in NOT_YET or "templates" in path.parts:
            continue
        found = unannotated(ast.parse(path.read_text()))
        if found:
            missing[str(path.relative_to(ROOT))] = found
    assert missing == {}, f"not annotated (CONTRIBUTING.md, Types): {missing}"


def test_make_lint_runs_ruff_and_mypy():
    recipe = (ROOT / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "ruff check" in recipe and "mypy" in recipe, recipe


def mypy(tmp_path, source):
    (tmp_path / "mod.py").write_text(source)
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / "cache"), str(tmp_path / "mod.py")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return run.returncode, run.stdout


def test_the_checker_checks_annotated_functions_only(tmp_path):
    """An annotated function's error fails `make lint`; an unannotated one's waits until its
    module is annotated (mypy's default, which the modules in NOT_YET rely on)."""
    code, said = mypy(tmp_path, 'def f(n: int) -> str:\n    return n\n')
    assert code == 1 and "Incompatible return value type" in said, said
    code, said = mypy(tmp_path, 'def f(n):\n    return n + "a" - 1\n')
    assert code == 0, said
