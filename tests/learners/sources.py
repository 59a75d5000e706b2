"""The learners' answers of this folder as code, read as text (nothing is imported, so no
TensorFlow): what tests/test_similarity.py and benchmarks/similarity.py compare."""
import ast
import pathlib
import textwrap

HERE = pathlib.Path(__file__).resolve().parent
FILES = {"01-basic-rnn-cell": "ch01.py", "02-lstm-gate-tensors": "ch02.py",
         "03-c-state-m-state": "ch03.py", "04-stateful-batching": "ch04.py",
         "05-gradients-by-hand": "ch05.py", "06-gru-layouts": "ch06.py",
         "07-final-state": "ch07.py"}


def _bodies(text, tree):
    """``{function name: its body's source, dedented}`` of the module's top-level functions."""
    lines = text.splitlines()
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            body = lines[node.body[0].lineno - 1: node.end_lineno]
            found[node.name] = textwrap.dedent("\n".join(body))
    return found


def _listed(value):
    """The function named by an entry of RIGHT or WRONG: ``f``, ``(f, "...")`` or
    ``(named(f, "name", wrong=...), "...")``; None for an answer a factory makes."""
    if isinstance(value, ast.Tuple):
        value = value.elts[0]
    if isinstance(value, ast.Call) and value.args:
        value = value.args[0]
    return value.id if isinstance(value, ast.Name) else None


def answers(stem, which="RIGHT"):
    """``{exercise function: [(answer's name, its body)]}`` from the chapter's RIGHT or WRONG:
    the dict, and each ``RIGHT["name"] = [...]`` after it (a new exercise's block)."""
    text = (HERE / FILES[stem]).read_text()
    tree = ast.parse(text)
    bodies = _bodies(text, tree)
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        target = node.targets[0]
        if getattr(target, "id", "") == which:
            pairs = zip(node.value.keys, node.value.values, strict=True)
        elif isinstance(target, ast.Subscript) and getattr(target.value, "id", "") == which:
            pairs = [(target.slice, node.value)]
        else:
            continue
        found |= {key.value: [(_listed(v), bodies[_listed(v)]) for v in value.elts
                              if _listed(v) in bodies] for key, value in pairs}
    return found


def as_cell(stub, body):
    """The learner's exercise cell: the ``stub`` cell with ``body`` where it raises
    NotImplementedError."""
    out = []
    for line in stub.split("\n"):
        if line.strip().startswith("raise NotImplementedError"):
            out.append(textwrap.indent(body, line[: len(line) - len(line.lstrip())]))
        else:
            out.append(line)
    return "\n".join(out)
