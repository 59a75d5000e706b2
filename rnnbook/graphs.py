"""Writing and reading TensorFlow graphs for TensorBoard (Chapters 2 and 6).

The chapter, its checks, its tests and ``scripts/tensorboard_screenshot.py`` all use these, so the
graph a reader opens in TensorBoard is the graph the tests look into:

- :func:`logdir`          ``logs/<stem>`` in the working folder (gitignored): where the book writes
- :func:`lstm_graph`      the question's graph: ``BasicLSTMCell`` unrolled by ``static_rnn``
- :func:`gru_graph`       the same for TF1's ``GRUCell`` (Chapter 6)
- :func:`write_graph`     a ``FileWriter`` event file holding a graph; returns its path
- :func:`write_chapter_logs`  the chapter's TensorBoard run(s), written afresh
- :func:`read_graph`      the ``GraphDef`` back from an event file with TensorBoard's own reader
- :func:`ops_of_type`     op names of one type in a ``GraphDef`` (``"Split"``), in graph order
- :func:`tensorboard`     a real TensorBoard server on 127.0.0.1 (context manager), for tests
- :func:`run_program`     a whole TF1 program in a fresh Python process (the chapter's 2017 code)

Only the standard library is imported at module level; TensorFlow and TensorBoard are imported
when a function needs them.
"""
from __future__ import annotations

import contextlib
import os
import pathlib
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from typing import IO, Any, Callable, Iterator

#: the run (sub-folder of the chapter's log folder) that holds the question's graph
STATIC_RUN = "static_rnn"


def logdir(stem: str) -> pathlib.Path:
    """``logs/<stem>``, relative to the working folder: where a chapter writes event files for
    TensorBoard (git-ignored at any depth).

    The working folder is the notebook's in Jupyter (``book/`` in the repository) and
    ``/content`` on Colab, so the page's ``%tensorboard --logdir logs/<stem>`` finds the files
    however ``rnnbook`` is installed: a path computed from this module's ``__file__`` would lie
    under ``site-packages`` on Colab's non-editable install.
    """
    return pathlib.Path("logs", stem)


def lstm_graph(T: int = 7, D: int = 3, H: int = 4, forget_bias: float = 1.0,
               batch: int | None = None, layers: int = 1, split_inputs: bool | str = False,
               scope: Any = None) -> tuple[Any, Any, Any, Any]:
    """The question's graph in a new ``tf.Graph``: ``BasicLSTMCell(H)`` unrolled over ``T`` steps.

    Returns ``(graph, x, outputs, state)``: ``x`` is the ``(batch, T, D)`` placeholder named
    ``"x"``, ``outputs`` the list of ``T`` outputs and ``state`` the final ``LSTMStateTuple``.
    ``static_rnn`` names the cell's ops ``rnn/basic_lstm_cell/...`` (``scope`` replaces
    ``rnn``); ``layers > 1`` stacks cells in a ``MultiRNNCell``; ``split_inputs`` cuts ``x``
    into time steps with ``tf.split`` (as many 2017 tutorials did) instead of ``tf.unstack``;
    ``split_inputs="sizes"`` passes ``tf.split`` a list of sizes, whose op is a ``SplitV``.
    """
    def make_cell(v1):
        cells = [v1.nn.rnn_cell.BasicLSTMCell(H, forget_bias=forget_bias) for _ in range(layers)]
        return cells[0] if layers == 1 else v1.nn.rnn_cell.MultiRNNCell(cells)

    return _unrolled(make_cell, T, D, batch, split_inputs, scope)


def gru_graph(T: int = 7, D: int = 3, H: int = 4,
              batch: int | None = None) -> tuple[Any, Any, Any, Any]:
    """:func:`lstm_graph` for TF1's ``GRUCell(H)`` (Chapter 6): ops ``rnn/gru_cell/split``
    (outputs r, z), ``split_1``, ... one per step; variables ``rnn/gru_cell/gates/kernel``,
    ``gates/bias``, ``candidate/kernel``, ``candidate/bias``. Returns ``(graph, x, outputs,
    state)``, ``state`` the final h."""
    return _unrolled(lambda v1: v1.nn.rnn_cell.GRUCell(H), T, D, batch)


def _unrolled(make_cell: Callable[[Any], Any], T: int, D: int, batch: int | None = None,
              split_inputs: bool | str = False,
              scope: Any = None) -> tuple[Any, Any, Any, Any]:
    """``make_cell(tf.compat.v1)``'s cell unrolled by ``static_rnn`` over a placeholder ``x``
    (batch, T, D) in a new ``tf.Graph``: ``(graph, x, outputs, state)``."""
    from rnnbook.environment import import_tensorflow

    tf = import_tensorflow()
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [batch, T, D], name="x")  # (B, T, D)
        if split_inputs:  # "sizes": tf.split with a list of sizes, a SplitV op
            cut = [1] * T if split_inputs == "sizes" else T
            steps = [tf.squeeze(s, axis=1) for s in tf.split(x, cut, axis=1)]  # T x (B, D)
        else:
            steps = tf.unstack(x, axis=1)  # T x (B, D)
        outputs, state = v1.nn.static_rnn(make_cell(v1), steps, dtype=tf.float32, scope=scope)
    return graph, x, outputs, state


def write_graph(graph: Any, directory: str | os.PathLike[str]) -> pathlib.Path:
    """Write ``graph`` with ``tf.compat.v1.summary.FileWriter`` into ``directory``; returns the
    event file's path (``events.out.tfevents.<time>.<host>``)."""
    from rnnbook.environment import import_tensorflow

    tf = import_tensorflow()
    directory = pathlib.Path(directory)
    before = set(directory.glob("events.out.tfevents.*"))
    with graph.as_default():  # FileWriter refuses to run eagerly
        writer = tf.compat.v1.summary.FileWriter(str(directory), graph)
        writer.close()
    (path,) = set(directory.glob("events.out.tfevents.*")) - before
    return path


def write_chapter_logs(directory: str | os.PathLike[str], T: int = 7, D: int = 3,
                       H: int = 4, graph: Any = None) -> pathlib.Path:
    """Chapter 2's TensorBoard logs in ``directory``: run ``static_rnn/`` holds the question's
    graph, or ``graph`` when given (Chapter 6's GRU), written afresh, so re-running never piles
    up event files. Returns the event file."""
    run = pathlib.Path(directory) / STATIC_RUN
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    return write_graph(lstm_graph(T, D, H)[0] if graph is None else graph, run)


def read_graph(path: str | os.PathLike[str]) -> Any:
    """The ``GraphDef`` stored in an event file (or a folder of them), read with TensorBoard's
    ``EventAccumulator``: no server, no TensorFlow session."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    return EventAccumulator(str(path)).Reload().Graph()


def ops_of_type(graph_def: Any, op_type: str = "Split") -> list[str]:
    """Names of the ops of type ``op_type`` in ``graph_def``, in the order the graph lists them."""
    return [node.name for node in graph_def.node if node.op == op_type]


def run_program(source: str, timeout: float = 300.0) -> str:
    """Run ``source`` with this interpreter in a fresh Python process and return what it
    printed. The child inherits this process's environment (so ``TF_USE_LEGACY_KERAS=1`` too);
    its stderr, TensorFlow's log, is dropped. A program that calls
    ``tf.compat.v1.disable_v2_behavior()`` needs a process of its own: the switch is global and
    one-way, and a notebook that ran it could no longer run Keras 3."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0"}
    return subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
                          text=True, check=True, timeout=timeout).stdout


# ---------------------------------------------------------------------------------------------
# A real TensorBoard server


@contextlib.contextmanager
def tensorboard(directory: str | os.PathLike[str], timeout: float = 60.0,
                python: str | None = None) -> Iterator[Any]:
    """Run ``tensorboard --logdir directory --host 127.0.0.1`` on a free port; yields its URL.

    The server is the real one from the environment (``python -m tensorboard.main``), bound to
    loopback only. Waits at most ``timeout`` seconds for it to say where it listens, and always
    stops it on the way out.
    """
    command = [python or sys.executable, "-m", "tensorboard.main", "--logdir", str(directory),
               "--host", "127.0.0.1", "--port", "0"]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0"}
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env)
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_drain, args=(server.stdout, lines), daemon=True)
    reader.start()  # keeps reading, so the server never blocks on a full pipe
    try:
        yield _wait_for_url(lines, timeout)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
        reader.join(10)
        if server.stdout is not None:  # always: stdout=PIPE
            server.stdout.close()


def _drain(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.rstrip())
    lines.put(None)  # the server exited


def _wait_for_url(lines: queue.Queue[str | None], timeout: float) -> str:
    """Read the server's log until it prints ``TensorBoard ... at http://127.0.0.1:PORT/``."""
    deadline = time.monotonic() + timeout
    seen = []
    while True:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/", line)
        if found:
            return found.group(1)
        if time.monotonic() > deadline:
            break
    tail = "\n".join(seen[-10:])
    raise RuntimeError(f"TensorBoard did not start within {timeout:.0f} s; its last lines:\n{tail}")


def get(url: str, timeout: float = 30.0) -> str:
    """The body of ``GET url`` as text (for the TensorBoard HTTP API)."""
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - loopback only
        return response.read().decode()
