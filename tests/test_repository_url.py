"""The book's repository URL is set once, in _config.yml (`repository.url`), which feeds the
launch buttons; the Colab install line of every notebook and the README use that same URL."""
import pathlib
import re

import nbformat
import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
NOTEBOOKS = sorted(p for folder in ("book", "solutions", "notebooks")
                   for p in (ROOT / folder).glob("[0-9]*.ipynb"))
INSTALL = re.compile(r'%pip install [^\n]*"rnnbook @ git\+(?P<url>[^"]+)"')


def test_the_readme_names_the_configured_repository():
    assert URL in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_notebook_installs_rnnbook_from_the_configured_repository(path):
    nb = nbformat.read(str(path), as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code" and "rnnbook" in c.source)
    found = INSTALL.search(first.source)
    assert found, f"{path.name}: the set-up cell has no Colab install line"
    assert found["url"] == URL
    assert first.source.index("%pip") < first.source.index("rnnbook.setup()")
