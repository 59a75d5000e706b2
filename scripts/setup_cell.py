"""Write the set-up cell's install block into every notebook of book/ and solutions/.

    python scripts/setup_cell.py [--check]

The block is `rnnbook.generate.setup_block` with `_config.yml`'s `repository.url`: on Colab it
installs the package from there; elsewhere it says what to install and stops. Only the cell's
source changes (its stored outputs and metadata stay as they are: no notebook is re-run).
Then `make notebooks` carries it into the learner copies. `--check` writes nothing and exits
1 when a notebook's block differs (tests/test_repository_url.py checks the same).
"""
import argparse
import pathlib
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rnnbook import generate, source  # noqa: E402


def notebooks():
    return sorted(ROOT.glob("book/[0-9]*.ipynb")) + sorted(ROOT.glob("solutions/*.ipynb"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    url, stale = generate.repository_url(), []
    for path in notebooks():
        nb = nbformat.read(str(path), as_version=4)
        cell = nb.cells[generate.setup_cell(nb)]
        try:
            wanted = generate.with_setup_block(cell.source, url, str(path.relative_to(ROOT)))
        except source.SourceError as error:
            print(f"setup_cell: error: {error}", file=sys.stderr)
            return 2
        if wanted == cell.source:
            continue
        stale.append(path)
        if not args.check:
            cell.source = wanted
            path.write_text(generate.text(nb))
        print(f"{'out of date' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
