"""The learner's first run: every notebook in notebooks/ runs top to bottom in a real Jupyter
kernel, and every check cell says which function to write (no traceback, no silent pass)."""
import nbclient
import pytest

from conftest import ROOT
from rnnbook import source

LEARNER = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", LEARNER, ids=lambda p: p.stem)
def test_learner_notebook_runs_and_every_check_asks_for_its_function(path):
    nb = source.read(path)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    names = [ex.name for ex in source.exercises(nb)]
    assert names, "a learner notebook with no exercises"
    printed = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{path.name}: {output.get('ename')}"
            if output.output_type == "stream":
                assert output.name == "stdout", output.text  # nothing on stderr
                printed.append(output.text)
    text = "".join(printed)
    for name in names:
        assert f"`{name}` is not written yet" in text, name
