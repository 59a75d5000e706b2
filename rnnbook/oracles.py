"""TensorFlow's real cells, run with weights we choose: the oracle behind every check.

Each function builds the real cell, loads the given NumPy weights into its variables by name, runs
it and returns NumPy arrays. TF1 cells run in a fresh ``tf.Graph`` with a ``Session`` (eager stays
on in the process, so Keras 3 code keeps working in the same notebook); Keras 3 cells run eagerly.
"""
import numpy as np

from rnnbook.environment import import_tensorflow as tensorflow


def _f32(value):
    return np.asarray(value, dtype=np.float32)


def load_weights(session, variables, weights):
    """Assign ``weights`` (name suffix -> array) to ``variables``; every variable gets one."""
    unused = dict(weights)
    for var in variables:
        name = var.op.name
        keys = [k for k in weights if name == k or name.endswith("/" + k)]
        if len(keys) != 1:
            raise KeyError(f"variable {name} matches {keys or 'none'} of {sorted(weights)}")
        var.load(_f32(weights[keys[0]]), session)
        unused.pop(keys[0], None)
    if unused:
        raise KeyError(f"weights {sorted(unused)} match no variable of the cell")


def run_tf1(make_cell, inputs, state=None, weights=None, mode="step", fetch=()):
    """Run a TF1 cell made by ``make_cell()`` and return ``(output, final_state, *fetched)``.

    ``mode``: ``"step"`` calls the cell once on ``inputs`` ``(B, D)``; ``"static"`` and
    ``"dynamic"`` unroll it over ``inputs`` ``(B, T, D)`` with ``static_rnn`` / ``dynamic_rnn``
    and return outputs ``(B, T, H)``. ``state`` is the initial state with the structure of the
    cell's ``state_size`` (an array, or nested tuples of arrays such as ``(c, h)``); None means
    zeros. ``weights`` maps variable-name suffixes (``"kernel"``, ``"bias"``,
    ``"projection/kernel"``) to arrays. ``fetch`` names extra tensors to return (``"rnn/...:0"``).
    """
    tf = tensorflow()
    v1 = tf.compat.v1
    inputs = _f32(inputs)
    with tf.Graph().as_default() as graph:
        cell = make_cell()
        x = v1.placeholder(tf.float32, inputs.shape, name="x")
        feed = {x: inputs}
        batch = inputs.shape[0]
        if state is None:
            initial = cell.zero_state(batch, tf.float32)
        else:
            flat = [_f32(s) for s in tf.nest.flatten(state)]
            holders = [v1.placeholder(tf.float32, s.shape) for s in flat]
            feed.update(zip(holders, flat))
            initial = tf.nest.pack_sequence_as(cell.state_size, holders)
        if mode == "step":
            output, final = cell(x, initial)
        elif mode == "static":
            outputs, final = v1.nn.static_rnn(cell, tf.unstack(x, axis=1), initial_state=initial)
            output = tf.stack(outputs, axis=1)
        elif mode == "dynamic":
            output, final = v1.nn.dynamic_rnn(cell, x, initial_state=initial)
        else:
            raise ValueError(f"mode must be step, static or dynamic, not {mode!r}")
        extra = [graph.get_tensor_by_name(name) for name in fetch]
        with v1.Session(graph=graph) as session:
            session.run(v1.global_variables_initializer())
            if weights is not None:
                load_weights(session, v1.global_variables(), weights)
            return tuple(session.run([output, final, *extra], feed))
