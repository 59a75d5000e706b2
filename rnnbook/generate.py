"""Write the learner notebooks in ``notebooks/`` from their one source in ``solutions/``.

``python -m rnnbook.generate`` (``make notebooks``): every solution block becomes a stub that
raises NotImplementedError, cells tagged ``solution`` are dropped, outputs and execution counts
are cleared; checks, hints and text are kept. ``--check`` writes nothing and exits 1 when a
learner notebook is out of date. The output depends only on the source, so regenerating leaves
git clean.
"""
import argparse
import pathlib
import sys

import nbformat

from rnnbook import source

ROOT = pathlib.Path(__file__).resolve().parent.parent
KEEP_METADATA = ("kernelspec", "rnnbook")


def learner_copy(nb, where="notebook"):
    """The learner's notebook for source notebook ``nb`` (``nb`` is not changed)."""
    headers = {cell.cell: cell for cell in source.exercises(nb, where)}
    out = nbformat.v4.new_notebook()
    out.metadata = {k: nb.metadata[k] for k in KEEP_METADATA if k in nb.metadata}
    for index, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if source.SOLUTION_TAG in tags:
            continue
        text = cell.source
        if cell.cell_type == "code":
            ex = headers.get(index)
            text = source.stub(text, ex and ex.number, ex and ex.name, f"{where}, cell {index}")
            new = nbformat.v4.new_code_cell(text)
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(text)
        else:
            new = nbformat.v4.new_raw_cell(text)
        new.id = cell.get("id", new.id)
        if tags:
            new.metadata["tags"] = list(tags)
        out.cells.append(new)
    return out


def text(nb):
    return nbformat.writes(nb) + "\n"


def generate(solutions_dir, notebooks_dir, check=False):
    """Write (or with ``check``, compare) every learner notebook; returns the stale paths."""
    stale = []
    sources = sorted(pathlib.Path(solutions_dir).glob("*.ipynb"))
    if not sources:
        raise source.SourceError(f"{solutions_dir}: no .ipynb files to generate from")
    for path in sources:
        wanted = text(learner_copy(source.read(path), str(path)))
        target = pathlib.Path(notebooks_dir) / path.name
        if target.exists() and target.read_text() == wanted:
            continue
        stale.append(target)
        if not check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(wanted)
    return stale


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m rnnbook.generate", description=__doc__.split("\n")[0])
    parser.add_argument("--solutions", default=ROOT / "solutions", type=pathlib.Path)
    parser.add_argument("--out", default=ROOT / "notebooks", type=pathlib.Path)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if out of date")
    args = parser.parse_args(argv)
    try:
        stale = generate(args.solutions, args.out, check=args.check)
    except source.SourceError as error:
        print(f"generate: error: {error}", file=sys.stderr)
        return 2
    for path in stale:
        print(f"{'out of date' if args.check else 'wrote'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
