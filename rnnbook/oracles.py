"""TensorFlow's real cells, run with weights we choose: the oracle behind every check.

Each function builds the real cell, loads the given NumPy weights into its variables by name, runs
it and returns NumPy arrays. TF1 cells run eagerly where nothing asks for their graph
(:func:`run_tf1`), otherwise in a fresh ``tf.Graph`` with a ``Session`` (eager stays on in the
process, so Keras 3 code keeps working in the same notebook); Keras 3 cells run eagerly.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from rnnbook.environment import import_keras as keras3
from rnnbook.environment import import_tensorflow as tensorflow


def _f32(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.float32)


#: what a chapter's learners may load lazily beyond TF1's cells, by the name a chapter gives it
#: in :attr:`rnnbook.exercise.Chapter.warm`: tf-keras's v2 API behind ``tf.keras`` (about 70
#: modules: Chapter 7's learners build a ``tf.keras`` LSTM) and TensorBoard's event reader
#: (Chapter 2's learners read event files); 0.02-0.06 s each, on a cold start's one core
LAZY = ("tf.keras", "tensorboard")
EVENT_READER = "tensorboard.backend.event_processing.event_accumulator"


def warm_imports(lazy: Sequence[str] = LAZY) -> None:
    """Import the modules an API exercise's objects load lazily on first use: tf-keras's v1 API
    behind ``tf.compat.v1.nn.rnn_cell`` (about 90 modules), NumPy's ``random``,
    ``rnnbook.record`` (a notebook's last cell), and those of :data:`LAZY` named in ``lazy``
    (the chapters' :attr:`~rnnbook.exercise.Chapter.warm`). The grader's TensorFlow zygote
    calls this before it forks, so that its children do not each import them again (0.1 s of
    CPU each, more on a busy disk). It only imports: it starts no thread and runs no op, so
    forking after it stays safe."""
    import importlib

    unknown = sorted(set(lazy) - set(LAZY))
    if unknown:
        raise ValueError(f"warm_imports: no lazy import called {', '.join(unknown)} "
                         f"(known: {', '.join(LAZY)})")
    tf = tensorflow()
    tf.compat.v1.nn.rnn_cell.BasicLSTMCell  # noqa: B018 - the lazy loader's import
    if "tf.keras" in lazy:
        tf.keras.layers.LSTM  # noqa: B018 - (tf-keras: the legacy switch is on)
    reader = [EVENT_READER] if "tensorboard" in lazy else []
    for name in ["numpy.random", "rnnbook.record", *reader]:
        try:
            importlib.import_module(name)
        except ImportError:  # (TensorBoard is optional for grading)
            pass


def graph_bytes(graph: Any) -> bytes:
    """``graph`` serialised with its collections (a ``MetaGraphDef``), for
    :func:`graph_from_bytes` in another process: the grader's zygote has the chapters' graphs
    built once in a throwaway child and hands every grading child these bytes (``prebuild``
    in ``rnnbook/checks/ch04.py`` to ``ch07.py``)."""
    with graph.as_default():
        meta = tensorflow().compat.v1.train.export_meta_graph(graph=graph)
    return meta.SerializeToString()


def graph_from_bytes(meta: bytes) -> Any:
    """The graph :func:`graph_bytes` serialised, op for op, with its collections (variables,
    and any the builder added). 0.02-0.03 s where building the chapters' unrolled graphs takes
    0.1-0.15 s. Not ``import_meta_graph``, which adds a Saver's ``save/`` ops a learner would
    see among the graph's operations."""
    tf = tensorflow()
    from tensorflow.python.framework import meta_graph  # (no public form without a Saver)

    with tf.Graph().as_default() as graph:
        meta_graph.import_scoped_meta_graph(tf.compat.v1.MetaGraphDef.FromString(meta))
    return graph


def graphs_record(module: Any) -> dict[str, Any]:
    """What a Gradescope bundle carries of a chapter module's ``prebuild()`` (Chapters 4-7's
    graphs, as bytes), built when the bundle is: the graphs, with the TensorFlow
    version and the digest of the module's source they were built by. The grader's zygote
    takes them (:func:`graphs_from_record`) instead of building them in a throwaway child at
    every cold start."""
    return {"tensorflow": tensorflow().__version__, "module": module.__name__,
            "source": _source_digest(module), "graphs": module.prebuild()}


def graphs_from_record(record: Any, module: Any) -> dict[Any, bytes] | None:
    """``module``'s prebuilt graphs from :func:`graphs_record`'s ``record``, or None when it
    does not hold them: another module, another TensorFlow, or source that changed since."""
    if (not isinstance(record, dict) or record.get("module") != module.__name__
            or record.get("tensorflow") != tensorflow().__version__
            or record.get("source") != _source_digest(module)
            or not isinstance(record.get("graphs"), dict)):
        return None
    return record["graphs"]


def _source_digest(module: Any) -> str:
    import hashlib
    import pathlib

    return hashlib.sha256(pathlib.Path(module.__file__).read_bytes()).hexdigest()


def quick_session(graph: Any) -> Any:
    """A ``tf.compat.v1.Session`` over ``graph`` without Grappler's graph rewrites.

    The checks' graphs are a few dozen ops run a handful of times per process (a grading child
    runs each once or twice): Grappler's passes cost more there (0.1-0.3 s on a session's first
    run) than they could save, and they do not change which tensors exist or what a fetch
    returns, beyond the last bits of a float.
    """
    v1 = tensorflow().compat.v1
    config = v1.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    return v1.Session(graph=graph, config=config)


def load_weights(session: Any, variables: Any, weights: dict[str, np.ndarray]) -> None:
    """Assign ``weights`` (name suffix -> array) to ``variables``; every variable gets one.

    The longest matching suffix wins, so ``"kernel"`` and ``"projection/kernel"`` can be given
    together: ``rnn/lstm_cell/projection/kernel`` takes the second. One ``session.run`` feeds
    each variable's initializer its value (what ``Variable.load`` does, one variable a run).
    """
    matched = _matching([var.op.name for var in variables], weights)
    feed = {var.initializer.inputs[1]: value for var, value in zip(variables, matched, strict=True)}
    session.run([var.initializer for var in variables], feed)


def _matching(names: list[str], weights: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The array of ``weights`` each variable name takes (:func:`load_weights`)."""
    unused, found = dict(weights), []
    for name in names:
        keys = [k for k in weights if name == k or name.endswith("/" + k)]
        if not keys:
            raise KeyError(f"variable {name} matches none of {sorted(weights)}")
        key = max(keys, key=len)
        found.append(_f32(weights[key]))
        unused.pop(key, None)
    if unused:
        raise KeyError(f"weights {sorted(unused)} match no variable of the cell")
    return found


#: the sessions :func:`live_session` keeps: ``key -> (session, variables, graph version)``
LIVE: dict[Any, tuple[Any, Any, int]] = {}


def live_session(key: Any, build: Callable[[], Any], weights: dict[str, np.ndarray]) -> Any:
    """A ``tf.compat.v1.Session`` over the graph ``build()`` returns, built once per ``key``
    (hashable: the chapter's graph and its shapes) and process, with ``weights`` (variable-name
    suffix -> array, :func:`load_weights`) loaded into its variables. The API exercises hand
    the learner this session: a session the learner closed, or a graph the learner added ops
    to (new consumers of a tensor would mislead the next walk through the graph), is replaced
    by a fresh one."""
    found = LIVE.get(key)
    if found is None or found[0]._closed or found[0].graph.version != found[2]:
        graph = build()
        session = quick_session(graph)
        found = LIVE[key] = (session, graph.get_collection("variables"), graph.version)
    session, variables, _ = found
    load_weights(session, variables, weights)
    return session


def run_tf1(make_cell: Callable[..., Any], inputs: Any, state: Any = None,
            weights: dict[str, np.ndarray] | None = None, mode: str = "step",
            fetch: Sequence[str] = (), lengths: Any = None,
            graph: bool = False) -> tuple[Any, ...]:
    """Run a TF1 cell made by ``make_cell()`` and return ``(output, final_state, *fetched)``.

    ``mode``: ``"step"`` calls the cell once on ``inputs`` ``(B, D)``; ``"static"`` and
    ``"dynamic"`` unroll it over ``inputs`` ``(B, T, D)`` with ``static_rnn`` / ``dynamic_rnn``
    and return outputs ``(B, T, H)``. ``state`` is the initial state with the structure of the
    cell's ``state_size`` (an array, or nested tuples of arrays such as ``(c, h)``); None means
    zeros. ``weights`` maps variable-name suffixes (``"kernel"``, ``"bias"``,
    ``"projection/kernel"``) to arrays. ``fetch`` names extra tensors to return (``"rnn/...:0"``).
    ``lengths`` ``(B,)``: the ``sequence_length`` of a padded batch (``"static"``,
    ``"dynamic"``): outputs past each row's length are zeros, its state is copied through.

    Without ``fetch``, and with ``weights``, nothing needs the graph: the cell runs eagerly
    (:func:`_run_eager`), the same kernels on the same values, the same bits
    (``tests/test_reference.py`` compares the two), at a tenth of the cost of building a
    graph for a step and a third for ``dynamic_rnn``'s loop. ``graph=True`` asks for a graph
    anyway (a fresh one, every size fixed).
    """
    tf = tensorflow()
    inputs = _f32(inputs)
    flat = [] if state is None else [_f32(s) for s in tf.nest.flatten(state)]
    if lengths is not None and mode == "step":
        raise ValueError("lengths is for a run over time (static or dynamic), not a step")
    if mode not in ("step", "static", "dynamic"):
        raise ValueError(f"mode must be step, static or dynamic, not {mode!r}")
    if not (graph or fetch or weights is None):
        return _run_eager(make_cell, inputs, state, flat, weights, mode, lengths)
    session, x, holders, ran, variables = _build_tf1(
        make_cell, inputs.shape, state, [s.shape for s in flat], mode, fetch, lengths is not None)
    fed = flat if lengths is None else [*flat, np.asarray(lengths, np.int32)]
    feed = {x: inputs, **dict(zip(holders, fed, strict=True))}
    try:
        if weights is None:  # (each variable's own initializer: no new op in the graph)
            session.run([var.initializer for var in variables])
        else:
            load_weights(session, variables, weights)
        return tuple(session.run(ran, feed))
    finally:
        session.close()


def _run_eager(make_cell: Callable[..., Any], inputs: np.ndarray, state: Any,
               flat: list[np.ndarray], weights: dict[str, np.ndarray], mode: str,
               lengths: Any) -> tuple[Any, ...]:
    """:func:`run_tf1` without a graph: the cell made, its variables created by a first call
    (one step, in the ``rnn`` scope of ``static_rnn`` and ``dynamic_rnn`` over time) and given
    ``weights`` by the names they would have in a fresh graph (:func:`_fresh_graph_name`),
    then the call that counts."""
    tf = tensorflow()
    v1 = tf.compat.v1
    cell = make_cell()
    x = tf.constant(inputs)
    if state is None:
        initial = cell.zero_state(inputs.shape[0], tf.float32)
    else:
        initial = tf.nest.pack_sequence_as(cell.state_size, [tf.constant(s) for s in flat])
    length = None if lengths is None else tf.constant(np.asarray(lengths, np.int32))  # (B,)

    def run() -> tuple[Any, Any]:
        if mode == "step":
            return cell(x, initial)
        if mode == "static":
            outputs, final = v1.nn.static_rnn(cell, tf.unstack(x, axis=1), initial_state=initial,
                                              sequence_length=length)
            return tf.stack(outputs, axis=1), final
        return v1.nn.dynamic_rnn(cell, x, initial_state=initial, sequence_length=length)

    if mode == "step":
        run()  # creates the variables, under the names a graph gives them
    else:  # one step in the scope static_rnn and dynamic_rnn open: the same names, a T-th of
        with v1.variable_scope("rnn"):  # the work (dynamic_rnn's first call also traces)
            cell(x[:, 0], initial)
    layers = [cell, *cell._flatten_layers(include_self=False)]
    names = [_fresh_graph_name(var.name, layers) for var in cell.variables]
    for var, value in zip(cell.variables, _matching(names, weights), strict=True):
        var.assign(value)
    output, final = run()
    return output.numpy(), tf.nest.map_structure(lambda t: t.numpy(), final)


def _fresh_graph_name(name: str, layers: list[Any]) -> str:
    """A variable's eager ``name`` (``rnn/basic_rnn_cell_3/kernel:0``) as a fresh graph names it
    (``rnn/basic_rnn_cell/kernel``): a scope that the process numbered to keep it unique (a
    layer's class's name in snake case, then ``_3``) is the first of its kind again."""
    snakes = set()
    for layer in layers:
        words = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", type(layer).__name__)  # Keras's rule
        snakes.add(re.sub("([a-z])([A-Z])", r"\1_\2", words).lower())
    numbered = re.compile(f"({'|'.join(map(re.escape, sorted(snakes)))})_\\d+")
    return "/".join(numbered.sub(r"\1", part) if numbered.fullmatch(part) else part
                    for part in name.split(":")[0].split("/"))


def _build_tf1(make_cell: Callable[..., Any], shape: tuple[int, ...], state: Any,
               shapes: list[tuple[int, ...]], mode: str, fetch: Sequence[str],
               lengths: bool) -> tuple[Any, ...]:
    """:func:`run_tf1`'s graph: ``(session, x, placeholders (the state's, then the lengths'),
    [output, final, *fetched], variables)``, every size fixed."""
    tf = tensorflow()
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph:
        cell = make_cell()
        x = v1.placeholder(tf.float32, shape, name="x")
        if state is None:
            holders = []
            initial = cell.zero_state(shape[0], tf.float32)
        else:
            holders = [v1.placeholder(tf.float32, s) for s in shapes]
            initial = tf.nest.pack_sequence_as(cell.state_size, holders)
        length = v1.placeholder(tf.int32, [shape[0]]) if lengths else None  # (B,)
        holders = [*holders, length] if lengths else holders
        if mode == "step":
            output, final = cell(x, initial)
        elif mode == "static":
            outputs, final = v1.nn.static_rnn(cell, tf.unstack(x, axis=1), initial_state=initial,
                                              sequence_length=length)
            output = tf.stack(outputs, axis=1)
        elif mode == "dynamic":
            output, final = v1.nn.dynamic_rnn(cell, x, initial_state=initial,
                                              sequence_length=length)
        else:
            raise ValueError(f"mode must be step, static or dynamic, not {mode!r}")
        extra = [graph.get_tensor_by_name(name) for name in fetch]
        variables = v1.global_variables()
    return quick_session(graph), x, holders, [output, final, *extra], variables


#: what every oracle's Keras 3 layer is made with: its weights are set before its first call,
#: so no random or orthogonal initialiser runs (a QR decomposition per recurrent kernel: a
#: third of a small layer's first call); and a Python loop over the time steps, not an eager
#: ``tf.while_loop`` (the same ops on the same values, the same bits, at 0.6x the CPU for the
#: chapters' few steps)
QUICK_LAYER = {"kernel_initializer": "zeros", "recurrent_initializer": "zeros",
               "unroll": True}


def keras_layer(kind: str, weights: Sequence[Any], shape: tuple[int | None, ...],
                **options: Any) -> Any:
    """A real Keras 3 ``LSTM`` or ``GRU`` (``kind``) built for inputs of ``shape`` (B, T, D),
    given ``weights`` (Keras' own list ``[kernel, recurrent_kernel, bias]``), made with
    :data:`QUICK_LAYER` and ``options`` (``stateful=True``, ``return_state=True``, ...); its
    units are the recurrent kernel's rows. A layer that keeps no state between calls is made
    once per process for its kind, shape and options, and given each call's weights (an
    oracle's trials share a few shapes: a layer's making costs as much as its call)."""
    arrays = [_f32(w) for w in weights]
    key = (kind, tuple(shape), arrays[1].shape[0], tuple(sorted(options.items())))
    layer = None if options.get("stateful") else _LAYERS.get(key)
    if layer is None:
        extra = {"unit_forget_bias": False} if kind == "LSTM" else {}
        layer = getattr(keras3().layers, kind)(arrays[1].shape[0], **QUICK_LAYER, **extra,
                                               **options)
        layer.build(shape)
        if not options.get("stateful"):
            _LAYERS[key] = layer
    layer.set_weights(arrays)
    return layer


#: :func:`keras_layer`'s layers that keep no state, by kind, shape, units and options
_LAYERS: dict[tuple[Any, ...], Any] = {}


def run_keras_lstm(inputs: Any, weights: dict[str, np.ndarray] | Sequence[np.ndarray],
                   initial_state: Any = None,
                   **options: Any) -> Any:
    """Run a real Keras 3 ``LSTM`` layer with the given weights; return ``(outputs, h, c)``.

    ``inputs`` is ``(B, T, D)``, or a list of such chunks: then ONE layer is called on each chunk
    in turn (with ``stateful=True`` it carries its state from call to call) and a list of
    ``(outputs, h, c)``, one per call, is returned. ``weights`` is Keras' own list
    ``[kernel (D, 4H), recurrent_kernel (H, 4H), bias (4H,)]`` (gate order i, f, g, o), or a dict
    with those three names. ``initial_state`` is ``[h, c]`` in Keras' order (h FIRST; given with
    chunks it applies to the first call only); None means zeros, or the carried state of a
    stateful layer. ``options`` go to ``keras.layers.LSTM`` (``stateful=True``,
    ``go_backwards=True``, ...); ``return_sequences`` and ``return_state`` are always on, so
    ``outputs`` is ``(B, T, H)``. The layer (:func:`keras_layer`) is built for the first
    chunk's full shape, batch size included, as a stateful layer needs. Runs eagerly.
    """
    chunks = [_f32(x) for x in inputs] if isinstance(inputs, (list, tuple)) else [_f32(inputs)]
    if isinstance(weights, dict):
        weights = [weights["kernel"], weights["recurrent_kernel"], weights["bias"]]
    layer = keras_layer("LSTM", weights, chunks[0].shape, return_sequences=True,
                        return_state=True, **options)
    results = []
    for k, x in enumerate(chunks):
        state = [_f32(s) for s in initial_state] if (k == 0 and initial_state is not None) else None
        outputs, h, c = layer(x, initial_state=state)
        results.append((np.asarray(outputs), np.asarray(h), np.asarray(c)))
    return results if isinstance(inputs, (list, tuple)) else results[0]


def run_keras_gru(inputs: Any, weights: Sequence[np.ndarray], initial_state: Any = None,
                  reset_after: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Run a real Keras 3 ``GRU`` layer with the given weights; return ``(outputs, h)``.

    ``inputs`` (B, T, D); ``weights`` Keras' list ``[kernel (D, 3H), recurrent_kernel (H, 3H),
    bias]`` with blocks z, r, h~ and ``bias`` (2, 3H) for ``reset_after=True`` (the default),
    (3H,) for False. ``initial_state`` h0 (B, H), or None for zeros. Runs eagerly
    (:func:`keras_layer`); outputs are (B, T, H).
    """
    x = _f32(inputs)
    layer = keras_layer("GRU", weights, x.shape, return_sequences=True, return_state=True,
                        reset_after=reset_after)
    state = None if initial_state is None else [_f32(initial_state)]
    outputs, h = layer(x, initial_state=state)
    return np.asarray(outputs), np.asarray(h)


def gru_cell() -> Any:
    """TF1's ``GRUCell`` class (``tf.compat.v1.nn.rnn_cell.GRUCell``, from tf-keras)."""
    return tensorflow().compat.v1.nn.rnn_cell.GRUCell


def run_tf1_gru(inputs: Any, h0: Any, gates_kernel: np.ndarray, gates_bias: np.ndarray,
                cand_kernel: np.ndarray, cand_bias: np.ndarray,
                mode: str = "dynamic") -> tuple[Any, ...]:
    """Run TF1's real ``GRUCell`` with these weights over ``inputs`` (B, T, D) from ``h0``
    (B, H) (``mode="step"``: one step on ``inputs`` (B, D)); return ``(output, final h)``."""
    weights = {"gates/kernel": gates_kernel, "gates/bias": gates_bias,
               "candidate/kernel": cand_kernel, "candidate/bias": cand_bias}
    H = np.shape(cand_bias)[0]
    return run_tf1(lambda: gru_cell()(H), inputs, h0, weights, mode=mode)
