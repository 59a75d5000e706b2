"""Chapter 7's runs of the real APIs on one padded batch: the functions its page calls
(and prints), which ``tests/test_claims.py`` holds over ``rnnbook.tasks.SEEDS``.

- :func:`padded_batch`  random sequences padded with zeros past each length, and random
  weights for every cell the chapter runs (a :class:`Padded`)
- :func:`tf1_dynamic`   TF1's ``dynamic_rnn``, with or without ``sequence_length``
- :func:`tf1_bidirectional`  TF1's ``bidirectional_dynamic_rnn``, with or without
  ``sequence_length`` (without, it reverses the padded batch with ``tf.reverse``)
- :func:`keras_masked`  a ``tf.keras`` LSTM behind a mask (``Masking``, ``mask=``,
  ``Embedding(mask_zero=True)``)
- :func:`keras_bidirectional`  ``tf.keras`` ``Bidirectional(LSTM)`` behind a mask
- :func:`tf1_stacked`   two ``BasicLSTMCell`` layers in a ``MultiRNNCell``, and
  :func:`keras_stacked`, the same two as ``tf.keras`` layers
- :func:`static_stack`  the same stack unrolled by ``static_rnn`` (one op per step, so a
  step's tensor has a name); :func:`static_with_lengths`, the forward cell unrolled with
  ``sequence_length`` (a conditional per step); :func:`fetch` runs their tensors by name

Every cell is TF1's ``BasicLSTMCell`` (``forget_bias`` 1.0) or a ``tf.keras`` LSTM
given the same weights (``checks.common.tf1_to_keras_weights``). TF1 graphs are built
in a fresh ``tf.Graph``, so eager execution stays on for Keras. ``x`` is (B, T, D).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from rnnbook.checks.common import tf1_to_keras_weights
from rnnbook.environment import import_tensorflow
from rnnbook.oracles import load_weights, quick_session

#: the chapter's batch: three rows of lengths 4, 2 and 1 out of T = 4 steps
LENGTHS = (4, 2, 1)


@dataclasses.dataclass(frozen=True)
class Padded:
    """A padded batch and the weights of every cell run over it."""

    x: np.ndarray  # (B, T, D): zeros past each row's length
    lengths: np.ndarray  # (B,) int32
    fw: tuple[np.ndarray, np.ndarray]  # kernel (D + H, 4H), bias (4H,): forward cell
    bw: tuple[np.ndarray, np.ndarray]  # the same shapes: the backward cell
    top: tuple[np.ndarray, np.ndarray]  # kernel (H + H, 4H), bias (4H,): layer 2

    @property
    def units(self) -> int:
        return int(self.fw[1].shape[0]) // 4

    @property
    def mask(self) -> np.ndarray:
        """(B, T) bool: True at each row's valid steps."""
        return np.arange(self.x.shape[1]) < self.lengths[:, None]


def padded_batch(seed: int, lengths: tuple[int, ...] = LENGTHS, steps: int = 4,
                 depth: int = 2, units: int = 3) -> Padded:
    """``len(lengths)`` random sequences of ``depth`` features, zero past each length,
    padded to ``steps``; random kernels (scale 0.5) and biases, so that a padded step
    from the zero state is no no-op (a zero bias keeps a zero state at zero)."""
    if not all(0 < n <= steps for n in lengths):
        raise ValueError(f"lengths must be 1 to steps={steps}, not {lengths}")
    rng = np.random.default_rng(seed)
    lengths_ = np.array(lengths, np.int32)  # (B,)
    x = rng.normal(size=(len(lengths), steps, depth)).astype(np.float32)  # (B, T, D)
    x[np.arange(steps) >= lengths_[:, None]] = 0.0  # the padding

    def weights(rows: int) -> tuple[np.ndarray, np.ndarray]:
        return (rng.normal(0, 0.5, (rows, 4 * units)).astype(np.float32),  # (rows, 4H)
                rng.normal(0, 0.5, 4 * units).astype(np.float32))  # (4H,)

    return Padded(x, lengths_, weights(depth + units), weights(depth + units),
                  weights(2 * units))


def _run(case: Padded, build: Callable[[Any, Any, Any], Any],
         weights: dict[str, np.ndarray]) -> Any:
    """``build(v1, x, lengths)``'s tensors run on ``case`` in a fresh graph, ``weights``
    (variable-name suffix -> array) loaded: the same structure, of NumPy arrays."""
    tf = import_tensorflow()
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, case.x.shape, name="x")  # (B, T, D)
        lengths = v1.placeholder(tf.int32, case.lengths.shape, name="lengths")  # (B,)
        fetches = build(v1, x, lengths)
        with quick_session(graph) as session:
            load_weights(session, v1.global_variables(), weights)
            return session.run(fetches, {x: case.x, lengths: case.lengths})


def _cell(v1: Any, units: int, **options: Any) -> Any:
    return v1.nn.rnn_cell.BasicLSTMCell(units, **options)  # forget_bias=1.0


def tf1_dynamic(case: Padded, sequence_length: bool = True) -> Any:
    """``dynamic_rnn`` over the padded batch, told each row's length or not:
    ``(outputs (B, T, H), LSTMStateTuple(c, h))``."""
    def build(v1: Any, x: Any, lengths: Any) -> Any:
        return v1.nn.dynamic_rnn(
            _cell(v1, case.units), x, dtype=x.dtype,
            sequence_length=lengths if sequence_length else None)

    kernel, bias = case.fw
    return _run(case, build, {"kernel": kernel, "bias": bias})


def tf1_bidirectional(case: Padded, sequence_length: bool = True) -> Any:
    """``bidirectional_dynamic_rnn`` (forward cell ``fw``, backward ``bw``), told the
    lengths or not: ``((out_fw, out_bw), (state_fw, state_bw))``, both outputs
    (B, T, H) in the input's time order."""
    def build(v1: Any, x: Any, lengths: Any) -> Any:
        return v1.nn.bidirectional_dynamic_rnn(
            _cell(v1, case.units), _cell(v1, case.units), x, dtype=x.dtype,
            sequence_length=lengths if sequence_length else None)

    weights = {f"{way}/basic_lstm_cell/{name}": value
               for way, (kernel, bias) in (("fw", case.fw), ("bw", case.bw))
               for name, value in (("kernel", kernel), ("bias", bias))}
    return _run(case, build, weights)


def _keras_weights(case: Padded, weights: tuple[np.ndarray, np.ndarray]) -> Any:
    """A TF1 cell's ``(kernel, bias)`` moved into a Keras LSTM's three arrays."""
    return tf1_to_keras_weights(*weights, 1.0, case.x.shape[2])


def keras_masked(case: Padded, how: str = "Masking") -> tuple[np.ndarray, ...]:
    """A ``tf.keras`` LSTM with the forward cell's weights over the batch, its padding
    masked ``how``: ``"Masking"`` (a ``Masking(0.0)`` layer first), ``"mask="`` (the
    boolean mask given to the call) or ``"mask_zero"`` (token ids, 0 for padding,
    through ``Embedding(mask_zero=True)`` whose rows are the batch's vectors).
    Returns ``(outputs (B, T, H), h, c)``, Keras' order."""
    tf = import_tensorflow()
    keras = tf.keras  # tf-keras (Keras 2) with the legacy switch
    lstm = keras.layers.LSTM(case.units, return_sequences=True, return_state=True)
    lstm.build(case.x.shape)
    lstm.set_weights(_keras_weights(case, case.fw))
    if how == "Masking":
        result = lstm(keras.layers.Masking(mask_value=0.0)(case.x))
    elif how == "mask=":
        result = lstm(case.x, mask=tf.constant(case.mask))
    elif how == "mask_zero":
        B, T, D = case.x.shape
        tokens = np.where(case.mask, 1 + np.arange(B * T).reshape(B, T), 0)  # (B, T)
        table = np.concatenate([np.zeros((1, D), np.float32), case.x.reshape(B * T, D)])
        embed = keras.layers.Embedding(1 + B * T, D, mask_zero=True)
        embed.build((B, T))
        embed.set_weights([table])  # (1 + B T, D): row 0 for padding
        result = lstm(embed(tokens))
    else:
        raise ValueError(f"how must be Masking, mask= or mask_zero, not {how!r}")
    return tuple(np.asarray(r) for r in result)


def keras_bidirectional(case: Padded, merge_mode: str | None = "concat") -> Any:
    """``tf.keras`` ``Bidirectional(LSTM(return_sequences=True, return_state=True))``,
    the forward and backward cells' weights, the padding masked: ``[outputs, h_fw,
    c_fw, h_bw, c_bw]`` (``merge_mode=None``: the two outputs apart, first)."""
    tf = import_tensorflow()
    keras = tf.keras
    layer = keras.layers.Bidirectional(
        keras.layers.LSTM(case.units, return_sequences=True, return_state=True),
        merge_mode=merge_mode)
    layer.build(case.x.shape)
    layer.forward_layer.set_weights(_keras_weights(case, case.fw))
    layer.backward_layer.set_weights(_keras_weights(case, case.bw))
    result = layer(case.x, mask=tf.constant(case.mask))
    return [np.asarray(r) for r in tf.nest.flatten(result)]


def _stack_weights(case: Padded) -> dict[str, np.ndarray]:
    return {f"cell_{k}/basic_lstm_cell/{name}": value
            for k, (kernel, bias) in enumerate((case.fw, case.top))
            for name, value in (("kernel", kernel), ("bias", bias))}


def tf1_stacked(case: Padded, state_is_tuple: bool = True) -> Any:
    """Two ``BasicLSTMCell`` layers (weights ``fw``, then ``top``) in a
    ``MultiRNNCell``, run by ``dynamic_rnn`` with ``sequence_length``: ``(outputs
    (B, T, H), state)``, the state one ``LSTMStateTuple`` per layer, layer 0 first
    (``state_is_tuple=False``: one array (B, 4H), each layer's ``[c, h]`` in turn)."""
    def build(v1: Any, x: Any, lengths: Any) -> Any:
        cells = [_cell(v1, case.units, state_is_tuple=state_is_tuple)
                 for _ in range(2)]  # a new cell per layer: [cell] * 2 shares one
        stack = v1.nn.rnn_cell.MultiRNNCell(cells, state_is_tuple=state_is_tuple)
        return v1.nn.dynamic_rnn(stack, x, sequence_length=lengths, dtype=x.dtype)

    return _run(case, build, _stack_weights(case))


def keras_stacked(case: Padded) -> list[tuple[np.ndarray, np.ndarray]]:
    """The same two layers as ``tf.keras`` LSTMs one after the other, the padding
    masked: ``[(h, c) of layer 0, (h, c) of layer 1]``. The lower layer returns its
    sequence for the upper one and, asked, its own state."""
    tf = import_tensorflow()
    keras = tf.keras
    lower = keras.layers.LSTM(case.units, return_sequences=True, return_state=True)
    upper = keras.layers.LSTM(case.units, return_state=True)
    lower.build(case.x.shape)
    upper.build(case.x.shape[:2] + (case.units,))
    lower.set_weights(_keras_weights(case, case.fw))
    upper.set_weights(tf1_to_keras_weights(*case.top, 1.0, case.units))
    mask = tf.constant(case.mask)  # (B, T)
    sequence, h_0, c_0 = lower(case.x, mask=mask)  # (B, T, H), (B, H), (B, H)
    _, h_1, c_1 = upper(sequence, mask=mask)
    return [(np.asarray(h_0), np.asarray(c_0)), (np.asarray(h_1), np.asarray(c_1))]


def static_stack(case: Padded) -> Any:
    """The same two layers unrolled by ``static_rnn`` (``rnnbook.graphs.lstm_graph``):
    its graph, one copy of each layer's ops per step, each op with a name."""
    from rnnbook import graphs

    B, T, D = case.x.shape
    return graphs.lstm_graph(T, D, case.units, batch=B, layers=2)[0]


def static_with_lengths(case: Padded) -> Any:
    """The forward cell unrolled by ``static_rnn`` with ``sequence_length``: its graph,
    each step a conditional ``rnn/cond_t`` (step 0: ``rnn/cond``) whose outputs pass
    through ``Identity`` ops: the step's output, then its new c and h."""
    tf = import_tensorflow()
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, case.x.shape, name="x")  # (B, T, D)
        lengths = v1.placeholder(tf.int32, case.lengths.shape, name="lengths")  # (B,)
        v1.nn.static_rnn(_cell(v1, case.units), tf.unstack(x, axis=1), dtype=x.dtype,
                         sequence_length=lengths)
    return graph


def fetch(case: Padded, graph: Any, names: list[str]) -> list[np.ndarray]:
    """The tensors ``names`` of a graph of :func:`static_stack` (the stack's weights) or
    :func:`static_with_lengths` (the forward cell's), run on the batch: its ``x:0``
    placeholder fed, and its ``lengths:0`` where it has one."""
    v1 = import_tensorflow().compat.v1
    with graph.as_default(), quick_session(graph) as session:
        variables = v1.global_variables()
        stacked = any("/cell_1/" in var.op.name for var in variables)
        kernel, bias = case.fw
        load_weights(session, variables, _stack_weights(case) if stacked
                     else {"kernel": kernel, "bias": bias})
        feed = {graph.get_tensor_by_name("x:0"): case.x}
        if "lengths" in {op.name for op in graph.get_operations()}:
            feed[graph.get_tensor_by_name("lengths:0")] = case.lengths
        return session.run(names, feed)
