"""Chapter 2's real parts: a real TensorBoard server over logs written by the chapter's own code,
TensorBoard's event-file reader on a file written here, and the gate map the checks rely on.

The generic both-ways tests of the exercises (solution passes, stub fails, every mistake named)
are in tests/test_checks.py.
"""
import pathlib
import re
import subprocess

import pytest

import rnnbook

rnnbook.setup()  # before anything imports TensorFlow

from rnnbook import graphs  # noqa: E402
from rnnbook.checks import ch02  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
STEM = "02-lstm-gate-tensors"
T = 7  # the question's sequence length
#: the names the chapter tells readers to look for in TensorBoard
CHAPTER_OPS = ["rnn/basic_lstm_cell/split"] + [f"rnn/basic_lstm_cell/split_{t}" for t in range(1, T)]
CHAPTER_VARIABLES = ["rnn/basic_lstm_cell/kernel", "rnn/basic_lstm_cell/bias"]


def parse_graph(text):
    """A ``GraphDef`` from the text protobuf the graphs plugin serves."""
    from google.protobuf import text_format
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    return text_format.Parse(text, GraphDef())


def page_logdir():
    """The folder of the chapter page's ``%tensorboard --logdir FOLDER`` command."""
    import nbformat

    nb = nbformat.read(str(ROOT / "book" / f"{STEM}.ipynb"), as_version=4)
    text = "\n".join(cell.source for cell in nb.cells)
    (folder,) = set(re.findall(r"%tensorboard --logdir (\S+?)`", text))
    return folder


@pytest.mark.slow
def test_tensorboard_serves_the_chapter_graph(tmp_path, monkeypatch):
    """Start the real TensorBoard on loopback with the page's own `%tensorboard --logdir`
    folder, in a working folder where the chapter's code wrote its logs (as on Colab, with
    rnnbook installed elsewhere), and find, through its HTTP API, the ops the chapter points
    at."""
    monkeypatch.chdir(tmp_path)
    graphs.write_chapter_logs(graphs.logdir(STEM), T=T)
    with graphs.tensorboard(page_logdir(), timeout=60) as url:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        runs = graphs.get(f"{url}/data/runs")
        assert graphs.STATIC_RUN in runs, runs
        info = graphs.get(f"{url}/data/plugin/graphs/info")
        assert graphs.STATIC_RUN in info and '"run_graph": true' in info, info
        text = graphs.get(f"{url}/data/plugin/graphs/graph?run={graphs.STATIC_RUN}&conceptual=false")
    graph_def = parse_graph(text)
    assert graphs.ops_of_type(graph_def, "Split") == CHAPTER_OPS
    names = {node.name: node.op for node in graph_def.node}
    for name in CHAPTER_VARIABLES:
        assert names.get(name) == "VarHandleOp", (name, names.get(name))
    assert "rnn/basic_lstm_cell/split_0" not in names  # the chapter says so
    assert "rnn/basic_lstm_cell/kernel/Read/ReadVariableOp" in names


def test_tensorboard_start_failure_is_reported(tmp_path):
    """A server that never comes up raises within the timeout and says what it printed."""
    with pytest.raises(RuntimeError, match="did not start"):
        with graphs.tensorboard(tmp_path, timeout=20, python="/bin/false"):
            pass


def test_event_file_reader_on_a_file_written_here(tmp_path, solutions):
    """EventAccumulator (no server) gives back the graph a FileWriter wrote, Split ops and all."""
    graph = graphs.lstm_graph(T=3, D=2, H=5, layers=2, split_inputs=True)[0]
    live = [op.name for op in graph.get_operations() if op.type == "Split"]
    path = graphs.write_graph(graph, tmp_path)
    assert path.parent == tmp_path and path.name.startswith("events.out.tfevents.")
    graph_def = graphs.read_graph(path)
    assert graphs.ops_of_type(graph_def, "Split") == live
    assert len(live) == 1 + 3 * 2  # tf.split of x, then one per step and layer
    assert len(graph_def.node) == len(graph.get_operations())
    assert graphs.read_graph(tmp_path).node == graph_def.node  # a folder reads the same
    assert solutions(STEM)["split_ops_in_event_file"](str(path)) == live


def test_chapter_logs_are_rewritten_not_piled_up(tmp_path):
    first = graphs.write_chapter_logs(tmp_path)
    second = graphs.write_chapter_logs(tmp_path)
    assert not first.exists() or first == second
    assert list((tmp_path / graphs.STATIC_RUN).iterdir()) == [second]


def test_logs_go_beside_the_notebook_where_the_pages_command_finds_them(tmp_path,
                                                                       monkeypatch):
    """Not under the package's folder (site-packages on Colab), but in the working folder,
    the notebook's: the page's `%tensorboard --logdir` names that same folder."""
    monkeypatch.chdir(tmp_path)
    path = graphs.write_chapter_logs(graphs.logdir(STEM))
    assert path.resolve().parent.parent == tmp_path / "logs" / STEM
    assert page_logdir() == f"logs/{STEM}"
    assert "site-packages" not in str(graphs.logdir(STEM).resolve())
    for folder in ("book", "notebooks", "solutions", "."):  # wherever a notebook runs
        x = ROOT / folder / "logs" / STEM / "x"
        ignored = subprocess.run(["git", "check-ignore", "-q", str(x)], cwd=ROOT)
        assert ignored.returncode == 0, f"{folder}/logs/ must be gitignored"


def test_gate_map_from_the_graph_matches_the_cell_source():
    """The checks find each gate by its role in the graph; that must agree with BasicLSTMCell's
    `i, j, f, o = split(...)`, step 0 named `split`, step t named `split_t`."""
    steps = ch02.gate_tensors(T)
    assert len(steps) == T
    for t, gates in enumerate(steps):
        op = "rnn/basic_lstm_cell/split" + (f"_{t}" if t else "")
        assert {g: gates[g][0] for g in "ijfo"} == {g: f"{op}:{k}" for k, g in enumerate("ijfo")}
        assert gates["j"][1].split("/")[-1].startswith("Tanh")
        assert all(gates[g][1].split("/")[-1].startswith("Sigmoid") for g in "ifo")


def test_run_program_runs_source_in_a_fresh_process_with_this_environment(monkeypatch):
    """The chapter's 2017 programs run through graphs.run_program: a new interpreter (so
    disable_v2_behavior() there cannot touch this process) that inherits the environment."""
    monkeypatch.setenv("RNNBOOK_PROBE", "inherited")
    out = graphs.run_program("import os, sys; print(os.environ['RNNBOOK_PROBE'], 'tensorflow' "
                             "in sys.modules)")
    assert out == "inherited False\n"
    with pytest.raises(subprocess.CalledProcessError):
        graphs.run_program("raise SystemExit(3)")


def test_gru_graph_and_its_logs_hold_r_and_z_by_name(tmp_path):
    """graphs.gru_graph (Chapter 6): the four variables by name, one Split per step whose
    output 0 is r (read by r * h) and output 1 is z (read by z * h and 1 - z); the logs
    written from it hold those Split ops."""
    graph = graphs.gru_graph(T=3, D=2, H=4)[0]
    variables = {v.name: tuple(v.shape) for v in graph.get_collection("variables")}
    assert variables == {"rnn/gru_cell/gates/kernel:0": (6, 8), "rnn/gru_cell/gates/bias:0": (8,),
                         "rnn/gru_cell/candidate/kernel:0": (6, 4),
                         "rnn/gru_cell/candidate/bias:0": (4,)}
    split = graph.get_operation_by_name("rnn/gru_cell/split")
    r, z = ({c.type for c in out.consumers()} for out in split.outputs)
    assert r == {"Mul"} and z == {"Mul", "Sub"}
    path = graphs.write_chapter_logs(tmp_path, graph=graph)
    assert graphs.ops_of_type(graphs.read_graph(path), "Split") == [
        "rnn/gru_cell/split", "rnn/gru_cell/split_1", "rnn/gru_cell/split_2"]
