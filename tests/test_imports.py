"""The package's modules form layers: no import cycle, counting the imports made inside
functions and modules imported by name (``importlib.import_module("rnnbook.checks.ch01")``).
A lazy import is no excuse for an arrow that runs back up: a chapter's ``check`` writes the
learner's record, so the record cannot ask the chapters for their exercises itself."""
import ast
import sys

from conftest import ROOT

PACKAGE = ROOT / "rnnbook"


def _name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules():
    """``{module name: path}`` of the package's Python modules (templates are not modules)."""
    return {_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "templates" not in p.parts}


def imports(path, known):
    """The package's modules that the module at ``path`` imports, wherever in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                     for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a submodule imported by name (the bare package's name is a word in messages)
            names = [node.value] if node.value in known and "." in node.value else []
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found - {_name(path)}


def graph():
    known = modules()
    return {name: imports(path, known) for name, path in known.items()}


def a_cycle(edges):
    """One import cycle as a list of modules (first == last), or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for after in sorted(edges[node]):
            if state.get(after) == "open":
                return path[path.index(after):] + [after] if after in path else [node, after]
            if after not in state:
                found = visit(after, path + [after])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(edges):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_chapters_imported_by_name_are_seen():
    assert "rnnbook.checks.ch01" in graph()["rnnbook.checks"]


def test_no_import_cycle_in_the_package():
    cycle = a_cycle(graph())
    assert cycle is None, "an import cycle (lazy imports included): " + " -> ".join(cycle)


def test_only_the_chapters_import_the_figures():
    """``rnnbook.plots`` (matplotlib) is the chapters' own: no module of the package imports
    it, so a check, a grading child or the zygote never loads matplotlib (README's Layout)."""
    importers = sorted(name for name, after in graph().items() if "rnnbook.plots" in after)
    assert not importers, f"rnnbook.plots is imported by {importers}"


def test_the_learners_record_is_the_bottom_layer():
    """rnnbook/record.py needs the standard library only: a chapter's ``check``
    (rnnbook/exercise.py) writes to it, ``rnnbook.progress()`` hands it the chapters'
    exercises."""
    assert graph()["rnnbook.record"] == set()
    assert "rnnbook.record" in graph()["rnnbook.exercise"]


#: the check's modules, bottom up, and the package's modules each may import (lazily or not)
CHECK_LAYERS = {
    "rnnbook.plaindata": set(),  # the grader's NumPy-only child loads it by path
    "rnnbook.memo": {"rnnbook.plaindata"},
    "rnnbook.byhand": {"rnnbook.plaindata"},
    "rnnbook.diagnose": {"rnnbook.plaindata"},  # what is wrong when no listed mistake is
    "rnnbook.compare": {"rnnbook.plaindata", "rnnbook.byhand", "rnnbook.diagnose"},
    "rnnbook.exercise": {"rnnbook.plaindata", "rnnbook.memo", "rnnbook.byhand",
                         "rnnbook.compare", "rnnbook.diagnose", "rnnbook.record"},
}


def test_the_check_is_layered():
    """Answers as plain data at the bottom (NumPy only), then the memo and the call of the
    learner's function, then the comparison, then the exercise model, whose ``Chapter.check``
    uses them all; no module of the check imports the chapters, the oracles or the grader."""
    found = graph()
    assert {name: found[name] for name in CHECK_LAYERS} == CHECK_LAYERS
    assert "rnnbook.checking" not in found and "rnnbook.plain" not in found  # no shim left


# --- The zygote and the child: loaded by path in another process, so no import shows them ---
# procs.py starts ``python -I [-S] zygote.py``; the zygote loads wire.py, walls.py, child.py,
# plaindata.py and environment.py by path as ``rnnbook_<name>``. The NumPy zygote's import path
# is the standard library and NumPy: none of that may import rnnbook at module level, and
# neither may reach the grader, the chapters' checks or the instructor's side.
GRADING = PACKAGE / "grading"
STDLIB = frozenset(sys.stdlib_module_names)
#: what each file may import at module level and inside functions (beyond the standard library)
BY_PATH = {
    "zygote.py": (set(), {"rnnbook.environment", "rnnbook.exercise", "rnnbook.checks",
                          "rnnbook.oracles", "rnnbook.plaindata", "rnnbook.expected"}),
    # the TensorFlow child's answer goes through byhand.answer; the NumPy child's never does
    "child.py": ({"rnnbook_plaindata"}, {"rnnbook_wire", "rnnbook.byhand"}),
}
#: the files the zygote loads by path, by the name the child and the zygote import them by
LOADED = {"rnnbook_plaindata": PACKAGE / "plaindata.py", "rnnbook_wire": GRADING / "wire.py",
          "rnnbook_walls": GRADING / "walls.py", "rnnbook_child": GRADING / "child.py",
          "rnnbook_environment": PACKAGE / "environment.py"}


def imported(tree):
    """``(module level, inside functions)``: the module names ``tree`` imports."""
    top, inner, known = set(), set(), modules()

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                (inner if nested else top).update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom) and not child.level:
                (inner if nested else top).update(  # a module of the package by its name
                    f"{child.module}.{a.name}" if f"{child.module}.{a.name}" in known
                    else child.module for a in child.names)
            visit(child, nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return top, inner


def beyond(names, allowed, also=()):
    """The names that are neither the standard library's nor ``allowed`` (nor ``also``)."""
    return sorted(n for n in names
                  if n.split(".")[0] not in STDLIB and n not in allowed and n not in also)


def test_the_zygote_and_the_child_import_only_what_their_layer_allows():
    for name, (top_ok, inner_ok) in BY_PATH.items():
        top, inner = imported(ast.parse((GRADING / name).read_text()))
        assert beyond(top, top_ok) == [], f"rnnbook/grading/{name} imports at module level " \
            f"{beyond(top, top_ok)}: it runs under python -I -S with the standard library only"
        assert beyond(inner, top_ok, inner_ok) == [], \
            f"rnnbook/grading/{name} imports {beyond(inner, top_ok, inner_ok)}: its layer " \
            f"allows the standard library and {sorted(top_ok | inner_ok)}"


def test_what_the_zygote_loads_by_path_needs_only_numpy():
    source = (GRADING / "zygote.py").read_text()
    for name in ("wire", "walls", "child"):
        assert f'"{name}"' in source, f"zygote.py no longer loads {name}.py: update LOADED"
    for name, path in LOADED.items():
        top, _ = imported(ast.parse(path.read_text()))
        assert beyond(top, {"numpy"} | set(LOADED)) == [], \
            f"{path.relative_to(ROOT)} (loaded by path as {name}) imports " \
            f"{beyond(top, {'numpy'} | set(LOADED))} at module level: the NumPy zygote has " \
            "only the standard library and NumPy"


def test_the_import_finder_sees_a_forbidden_import():
    tree = ast.parse("import os\nfrom rnnbook.grading import run\n"
                     "def f():\n    import rnnbook.reference\n")
    top, inner = imported(tree)
    assert (top, inner) == ({"os", "rnnbook.grading.run"}, {"rnnbook.reference"})
    assert beyond(top, *BY_PATH["child.py"]) == ["rnnbook.grading.run"]
    assert beyond(inner, *BY_PATH["child.py"]) == ["rnnbook.reference"]


# --- One name, one thing: no two modules of rnnbook/grading define the same top-level name ---
#: every module's entry point (``python -m ...``, ``python walls.py``) is ``main``
ENTRY_POINT = "main"


def defined(tree):
    """``{top-level name: line}`` that a module defines (functions, classes, assignments; not
    what it imports)."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node.lineno
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update({t.id: node.lineno for t in targets if isinstance(t, ast.Name)})
    return found


def restated(name, files):
    """Whether ``name`` may be defined in every one of ``files``: a constant (``HERE``,
    ``IPYTHON``) or private name (``_libc``) that a module loaded by path restates, since it
    cannot import the package (the zygote and what it loads: see above)."""
    by_path = {"zygote.py"} | {p.name for p in LOADED.values()}
    constant = name.isupper() or name.startswith("_")
    return constant and len([f for f in files if f not in by_path]) <= 1


def same_names(trees):
    """``{name: [file, ...]}`` of the top-level names that two of ``trees`` define (``{file
    name: ast}``), but the entry point and what a by-path module restates."""
    where = {}
    for file, tree in trees.items():
        for name in defined(tree):
            where.setdefault(name, []).append(file)
    return {name: files for name, files in where.items()
            if len(files) > 1 and name != ENTRY_POINT and not restated(name, files)}


def shadowing(tree):
    """``["Class.method", ...]``: the methods named like a function of their own module (the
    method ``Run.grade`` beside the function ``run.grade``: which one does ``grade`` mean?)."""
    functions = {n.name for n in tree.body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return [f"{cls.name}.{m.name}" for cls in tree.body if isinstance(cls, ast.ClassDef)
            for m in cls.body
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in functions]


def test_no_two_grading_modules_define_the_same_name():
    trees = {p.name: ast.parse(p.read_text()) for p in sorted(GRADING.glob("*.py"))}
    assert same_names(trees) == {}, \
        "rnnbook/grading: these names are defined in several modules; merge them where they " \
        f"are one thing, else rename: {same_names(trees)}"
    shadows = {name: shadowing(tree) for name, tree in trees.items() if shadowing(tree)}
    assert shadows == {}, f"rnnbook/grading: a method named like its module's function: {shadows}"


def test_the_name_checks_see_a_clash_and_a_shadow():
    one = ast.parse("def plan(spec):\n    pass\nclass Run:\n    def plan(self):\n        pass\n"
                    "HERE = 1\n_libc = 2\nfrom x import write_csv\n")
    two = ast.parse("plan = 3\nHERE = 4\n_libc = 5\ndef write_csv():\n    pass\n"
                    "def main():\n    pass\n")
    main = ast.parse("def main():\n    pass\n")
    assert same_names({"attempt.py": one, "walls.py": two, "cli.py": main}) == {
        "plan": ["attempt.py", "walls.py"]}  # walls.py restates HERE and _libc, not plan
    assert same_names({"attempt.py": one, "run.py": two}) == {
        "plan": ["attempt.py", "run.py"], "HERE": ["attempt.py", "run.py"],
        "_libc": ["attempt.py", "run.py"]}
    assert shadowing(one) == ["Run.plan"] and shadowing(two) == []
