"""Chapter 4 (stateful batching): exercises and their checks.

The oracles are TensorFlow's real cells: a TF1 ``MultiRNNCell`` of ``BasicLSTMCell`` run with
``dynamic_rnn`` over the WHOLE sequence (what chunked runs must reproduce), the TF1 state
structure (a tuple of ``LSTMStateTuple(c, h)``, one per layer), and Keras 3 ``LSTM`` layers with
``stateful=True``. Notation (book/notation.md): ``L`` layers, ``B`` batch, ``T`` time, ``D`` input
depth, ``H`` num_units. A packed state is one array ``(L, 2, B, H)``: ``state[l, 0]`` is layer
``l``'s c, ``state[l, 1]`` its h, the layout of the ``[num_layers, 2, batch, units]`` placeholder.
"""
import collections

import numpy as np

from rnnbook.checking import Chapter, Exercise, Mistake, normal, sigmoid
from rnnbook.oracles import run_keras_lstm, run_tf1, tensorflow

#: the learner gets states with the same fields as TF1's ``LSTMStateTuple`` (a namedtuple (c, h))
LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))


# --- NumPy models of the cells (used by the mistake models; tests/test_ch04.py holds them to TF) --


def tf1_lstm_step(x, c, h, kernel, bias, forget_bias=1.0, order="ijfo"):
    """One ``BasicLSTMCell`` step: ``(c', h')``. ``order`` names the gate blocks of the kernel."""
    z = np.concatenate([x, h], axis=1) @ kernel + bias  # (B, 4H)
    gates = dict(zip(order, np.split(z, 4, axis=1), strict=True))
    c = c * sigmoid(gates["f"] + forget_bias) + sigmoid(gates["i"]) * np.tanh(gates["j"])
    return c, np.tanh(c) * sigmoid(gates["o"])


def tf1_stack_run(inputs, state, kernels, biases, forget_bias=1.0, order="ijfo", layer=-1):
    """A stack of BasicLSTMCells over ``inputs`` (B, T, D) from a packed ``state`` (L, 2, B, H).

    Returns ``(outputs (B, T, H) of layer ``layer``, final packed state)``.
    """
    state = np.array(state, dtype=np.float64)
    outputs = []
    for t in range(inputs.shape[1]):
        x, seen = inputs[:, t], []
        for k, (kernel, bias) in enumerate(zip(kernels, biases, strict=True)):
            state[k, 0], state[k, 1] = tf1_lstm_step(
                x, state[k, 0], state[k, 1], kernel, bias, forget_bias, order
            )
            x = state[k, 1].copy()  # (B, H), a copy: state is overwritten next step
            seen.append(x)
        outputs.append(seen[layer])
    return np.stack(outputs, axis=1), state


def keras_lstm_run(inputs, h, c, kernel, recurrent_kernel, bias, order="ifco", forget_bias=0.0,
                   carry=True):
    """Keras 3 ``LSTM`` over ``inputs`` (B, T, D) from ``[h, c]``: ``(outputs (B, T, H), h, c)``.

    ``carry=False`` starts every step from the given ``h, c`` (the state-not-carried mistake).
    """
    outputs = []
    for t in range(inputs.shape[1]):
        z = inputs[:, t] @ kernel + h @ recurrent_kernel + bias  # (B, 4H)
        gates = dict(zip(order, np.split(z, 4, axis=1), strict=True))
        c_new = c * sigmoid(gates["f"] + forget_bias) + sigmoid(gates["i"]) * np.tanh(gates["c"])
        h_new = np.tanh(c_new) * sigmoid(gates["o"])
        outputs.append(h_new)
        if carry:
            h, c = h_new, c_new
    return np.stack(outputs, axis=1), h_new, c_new


def chunks(T, size):
    """The ``[start, stop)`` time ranges of chunks of ``size`` steps (the last may be shorter)."""
    return [(start, min(start + size, T)) for start in range(0, T, size)]


def tf_pack(states):
    """TensorFlow stacks a tuple of (c, h) per layer into one (L, 2, B, H) array: c, h on axis 1,
    layers on axis 0 (the oracle of Exercise 4.1, and how the other oracles pack a state)."""
    tf = tensorflow()
    return tf.stack([tf.stack([c, h]) for c, h in states]).numpy()  # (L, 2, B, H)


# --- Exercise 4.1: pack the state ---------------------------------------------------------------


def _state_case(rng):
    L, B, H = (int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 6)))
    return {"L": L, "B": B, "H": H, "packed": normal(rng, L, 2, B, H)}  # (L, 2, B, H)


def _as_tuple(case):
    """The case's state as TF1 keeps it: a tuple of LSTMStateTuple(c, h), one per layer."""
    return tuple(LSTMStateTuple(layer[0], layer[1]) for layer in case["packed"])


def _pack_oracle(case):
    """TensorFlow stacks the tuple the way the chapter's graph does: c, h on axis 1, layers on 0."""
    return tf_pack(_as_tuple(case))  # (L, 2, B, H)


pack_state = Exercise(
    name="pack_state",
    task="one array of shape (L, 2, B, H): packed[l, 0] = layer l's c, packed[l, 1] = its h",
    make_case=_state_case,
    call=lambda fn, c: fn(_as_tuple(c)),
    oracle=_pack_oracle,
    mistakes=(
        Mistake(
            "c and h are swapped: LSTMStateTuple is (c, h), so packed[l, 0] is c and "
            "packed[l, 1] is h.",
            lambda c: c["packed"][:, ::-1],
        ),
        Mistake(
            "the layer axis and the c/h axis are swapped: stack each layer's (c, h) first "
            "(axis 1), then the layers (axis 0), to get (L, 2, B, H).",
            lambda c: np.swapaxes(c["packed"], 0, 1),
        ),
        Mistake(
            "c and h are concatenated along the units axis (the state_is_tuple=False layout): "
            "stack them on a new axis instead, np.stack([c, h]).",
            lambda c: np.stack([np.concatenate([s[0], s[1]], axis=1) for s in c["packed"]]),
        ),
    ),
)


# --- Exercise 4.2: unpack the state -------------------------------------------------------------


def _unpack_oracle(case):
    """The chapter's TF1 graph: a [L, 2, B, H] placeholder unstacked into LSTMStateTuples, checked
    against a real MultiRNNCell's state structure and run in a session."""
    tf = tensorflow()
    v1, rc = tf.compat.v1, tf.compat.v1.nn.rnn_cell
    L, H = case["L"], case["H"]
    with tf.Graph().as_default():
        holder = v1.placeholder(tf.float32, case["packed"].shape)  # (L, 2, B, H)
        state = tuple(rc.LSTMStateTuple(*tf.unstack(layer)) for layer in tf.unstack(holder))
        cell = rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)])
        tf.nest.assert_same_structure(cell.state_size, state)
        with v1.Session() as session:
            return session.run(state, {holder: case["packed"]})


unpack_state = Exercise(
    name="unpack_state",
    task="a tuple of L pairs (c, h), each (B, H): the structure a TF1 MultiRNNCell's state has",
    make_case=_state_case,
    call=lambda fn, c: fn(c["packed"]),
    oracle=_unpack_oracle,
    mistakes=(
        Mistake(
            "c and h are swapped: index 0 on axis 1 is c and index 1 is h, the order of "
            "LSTMStateTuple(c, h).",
            lambda c: tuple((layer[1], layer[0]) for layer in c["packed"]),
        ),
        Mistake(
            "each layer's state is one (2, B, H) array: TF1 needs a pair (c, h) of two (B, H) "
            "arrays per layer, like LSTMStateTuple(c, h).",
            lambda c: tuple(c["packed"]),
        ),
        Mistake(
            "the layers are in reverse order: layer 0 (the one that reads the input) comes first.",
            lambda c: tuple((layer[0], layer[1]) for layer in c["packed"][::-1]),
        ),
    ),
)


# --- Exercise 4.3: run in chunks, state carried ---------------------------------------------------


def _chunks_case(rng):
    # one or two layers, at most 7 steps: every way to get the carrying wrong shows, and the
    # oracle's graph stays small enough for the check to answer within a second
    L, B, D, H = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 6)),
                  int(rng.integers(1, 6)))
    T = int(rng.integers(3, 8))
    case = {"L": L, "B": B, "T": T, "D": D, "H": H, "chunk": int(rng.integers(1, T))}
    case["inputs"] = normal(rng, B, T, D)  # (B, T, D)
    case["state"] = normal(rng, L, 2, B, H, scale=0.5)  # (L, 2, B, H)
    for k in range(L):
        case[f"kernel{k}"] = normal(rng, (D if k == 0 else H) + H, 4 * H, scale=0.5)  # (D_l + H, 4H)
        case[f"bias{k}"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
    return case


def _layers(case):
    return ([case[f"kernel{k}"] for k in range(case["L"])],
            [case[f"bias{k}"] for k in range(case["L"])])


def _chunks_oracle(case):
    """TF1's MultiRNNCell over the WHOLE sequence in one call, from the given state."""
    rc = tensorflow().compat.v1.nn.rnn_cell
    L, H = case["L"], case["H"]
    kernels, biases = _layers(case)
    weights = {f"cell_{k}/basic_lstm_cell/kernel": kernels[k] for k in range(L)}
    weights.update({f"cell_{k}/basic_lstm_cell/bias": biases[k] for k in range(L)})
    state = tuple((layer[0], layer[1]) for layer in case["state"])
    outputs, final = run_tf1(  # static_rnn: the same real cells, quicker to build than a while loop
        lambda: rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)]),
        case["inputs"], state, weights, mode="static",
    )
    return outputs, tf_pack(final)  # (B, T, H), (L, 2, B, H)


def _chunked(case, start="carry", swap_between=False, **options):
    """The chunked run a mistake makes. ``start``: where chunks after the first begin:
    ``"carry"`` (right), ``"zeros"``, ``"initial"`` (the given state again), ``"all-zeros"``
    (every chunk, the first too, from zeros)."""
    kernels, biases = _layers(case)
    x, state = case["inputs"], case["state"]
    if start == "all-zeros":
        state = np.zeros_like(state)
    outputs = []
    for k, (a, b) in enumerate(chunks(case["T"], case["chunk"])):
        if k > 0 and start in ("zeros", "all-zeros"):
            state = np.zeros_like(state)
        elif k > 0 and start == "initial":
            state = case["state"]
        elif k > 0 and swap_between:
            state = state[:, ::-1]
        out, state = tf1_stack_run(x[:, a:b], state, kernels, biases, **options)
        outputs.append(out)
    return np.concatenate(outputs, axis=1), state


NOT_CARRIED = (
    "the state is not carried: every chunk after the first must start from the final state of "
    "the chunk before it, not from zeros."
)

run_in_chunks = Exercise(
    name="run_in_chunks",
    task="(outputs, final_state): the top layer's h at every step (B, T, H) and the packed final "
    "state (L, 2, B, H), equal to one run over the whole sequence",
    make_case=_chunks_case,
    call=lambda fn, c: fn(c["inputs"], c["state"], c["chunk"], *_layers(c)),
    oracle=_chunks_oracle,
    parts=("outputs", "final_state"),
    mistakes=(
        Mistake(NOT_CARRIED, lambda c: _chunked(c, start="zeros")),
        Mistake(NOT_CARRIED, lambda c: _chunked(c, start="all-zeros")),
        Mistake(
            "every chunk starts from the initial state: feed each chunk's final state into the "
            "next chunk instead of reusing `state`.",
            lambda c: _chunked(c, start="initial"),
        ),
        Mistake(
            "c and h are swapped when the state is carried to the next chunk: keep "
            "packed[l, 0] = c and packed[l, 1] = h on the way out and on the way in.",
            lambda c: _chunked(c, swap_between=True),
        ),
        Mistake(
            "c and h are swapped in the final state: pack each layer as (c, h), c first.",
            lambda c: (_chunked(c)[0], _chunked(c)[1][:, ::-1]),
        ),
        Mistake(
            "c and h are swapped in the packed state: state[l, 0] is c and state[l, 1] is h, "
            "when you read it and when you pack it.",
            lambda c: (lambda out, s: (out, s[:, ::-1]))(*_chunked({**c, "state": c["state"][:, ::-1]})),
        ),
        Mistake(
            "forget_bias is missing: BasicLSTMCell adds forget_bias=1.0 to f at run time, "
            "sigmoid(f + 1.0).",
            lambda c: _chunked(c, forget_bias=0.0),
        ),
        Mistake(
            "the gate blocks are in Keras' order: TF1's BasicLSTMCell splits [x, h] @ kernel + "
            "bias into i, j, f, o.",
            lambda c: _chunked(c, order="ifjo"),
        ),
        Mistake(
            "the outputs are the first layer's h: return the TOP layer's h at every step.",
            lambda c: (_chunked(c, layer=0)[0], _chunked(c)[1]),
        ),
    ),
)


# --- Exercise 4.4: reset only the rows that ended ---------------------------------------------------


def _reset_case(rng):
    L, B, H = int(rng.integers(1, 4)), int(rng.integers(2, 6)), int(rng.integers(1, 6))
    ended = np.zeros(B, dtype=bool)
    ended[rng.choice(B, size=int(rng.integers(1, B)), replace=False)] = True  # some, not all
    return {"L": L, "B": B, "H": H, "state": normal(rng, L, 2, B, H), "ended": ended}


def _reset_oracle(case):
    """A row whose sequence ended gets the real cell's zero_state; the others keep theirs."""
    tf = tensorflow()
    v1, rc = tf.compat.v1, tf.compat.v1.nn.rnn_cell
    L, B, H = case["L"], case["B"], case["H"]
    with tf.Graph().as_default():
        cell = rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)])
        zero = tf.stack([tf.stack([s.c, s.h]) for s in cell.zero_state(B, tf.float32)])
        ended = tf.constant(case["ended"])[None, None, :, None]  # (1, 1, B, 1)
        new = tf.where(ended, zero, tf.constant(case["state"]))
        with v1.Session() as session:
            return session.run(new)


def _zero_rows(state, ended, which=(0, 1), layers=None):
    out = state.copy()
    for k in range(state.shape[0]) if layers is None else layers:
        for s in which:
            out[k, s][ended] = 0.0
    return out


reset_ended = Exercise(
    name="reset_ended",
    task="the packed state (L, 2, B, H) with c and h of every row whose sequence ended set to "
    "zero, in every layer, and the other rows unchanged",
    make_case=_reset_case,
    call=lambda fn, c: fn(c["state"], c["ended"]),
    oracle=_reset_oracle,
    mistakes=(
        Mistake(
            "every row is reset: only the rows where `ended` is True start a new sequence; the "
            "others must keep their state.",
            lambda c: np.zeros_like(c["state"]),
        ),
        Mistake(
            "the state is carried across a sequence boundary: the rows where `ended` is True must "
            "start the next batch from zeros.",
            lambda c: c["state"],
        ),
        Mistake(
            "the mask is inverted: zero the rows where `ended` is True and keep the others.",
            lambda c: _zero_rows(c["state"], ~c["ended"]),
        ),
        Mistake(
            "only h is reset: c is the memory that carries the old sequence forward, so zero both "
            "c and h of an ended row.",
            lambda c: _zero_rows(c["state"], c["ended"], which=(1,)),
        ),
        Mistake(
            "only c is reset: zero h as well, it feeds the next step too.",
            lambda c: _zero_rows(c["state"], c["ended"], which=(0,)),
        ),
        Mistake(
            "only the first layer is reset: every layer's c and h belong to the ended sequence.",
            lambda c: _zero_rows(c["state"], c["ended"], layers=[0]),
        ),
        Mistake(
            "the wrong axis is masked: rows are on axis 2 of the (L, 2, B, H) state (the batch "
            "axis), so index it as state[:, :, ended].",
            lambda c: _zero_units(c),
        ),
    ),
)


def _zero_units(case):
    """Mask applied to the units axis (needs B == H)."""
    if case["B"] != case["H"]:
        raise ValueError("only when B == H")
    out = case["state"].copy()
    out[..., case["ended"]] = 0.0
    return out


# --- Exercise 4.5: lay a long series out for stateful batches ------------------------------------


def _batches_case(rng):
    B, steps, n = int(rng.integers(2, 5)), int(rng.integers(2, 6)), int(rng.integers(2, 5))
    extra = int(rng.integers(0, B * steps))  # a tail that does not fill a batch
    return {"batch_size": B, "steps": steps, "series": normal(rng, B * steps * n + extra)}


def row_continuous(series, batch_size, steps):
    """The right layout, written the direct way: B rows, each a contiguous stretch of the series."""
    n = len(series) // (batch_size * steps)
    rows = np.asarray(series)[: batch_size * n * steps].reshape(batch_size, n * steps)  # (B, n*S)
    return rows.reshape(batch_size, n, steps).transpose(1, 0, 2)  # (n, B, S)


def keras_continuity_error(batches, rows, units=2, seed=0):
    """Largest difference between (a) a stateful Keras 3 LSTM fed ``batches`` (n, B, S) in order,
    its outputs joined along time, and (b) the same LSTM run in one call over ``rows`` (B, n*S),
    the whole sequences the batch rows should continue. Zero when row i of every batch continues
    row i of the batch before it, through row i of ``rows``."""
    rng = np.random.default_rng(seed)
    weights = [normal(rng, 1, 4 * units), normal(rng, units, 4 * units), normal(rng, 4 * units)]
    pieces = run_keras_lstm([batch[:, :, None] for batch in batches], weights, stateful=True)
    joined = np.concatenate([outputs for outputs, _, _ in pieces], axis=1)  # (B, n*S, units)
    whole = run_keras_lstm(np.asarray(rows)[:, :, None], weights)[0]  # (B, n*S, units)
    return float(np.abs(joined - whole).max())


def _batches_oracle(case):
    """The row-continuous layout, confirmed by Keras: a stateful LSTM fed the batches in order gives
    what the same LSTM gives in one call on each of the B consecutive stretches of the series."""
    B, S, series = case["batch_size"], case["steps"], case["series"]
    batches = row_continuous(series, B, S)  # (n, B, S)
    n = len(batches)
    rows = series[: B * n * S].reshape(B, n * S)  # the B consecutive stretches, one per row
    error = keras_continuity_error(batches, rows)
    assert error < 1e-5, f"stateful Keras does not continue the rows ({error})"
    return batches


def _per_row_trim(c):
    """Rows of len(series) // B values, each cut to whole batches (other rows start elsewhere)."""
    B, S, series = c["batch_size"], c["steps"], c["series"]
    row = len(series) // B
    n = row // S
    rows = series[: B * row].reshape(B, row)[:, : n * S]
    return rows.reshape(B, n, S).transpose(1, 0, 2)


stateful_batches = Exercise(
    name="stateful_batches",
    task="an array (n_batches, batch_size, steps), n_batches = len(series) // (batch_size * "
    "steps), in which row i of batch k+1 continues row i of batch k",
    make_case=_batches_case,
    call=lambda fn, c: fn(c["series"], c["batch_size"], c["steps"]),
    oracle=_batches_oracle,
    mistakes=(
        Mistake(
            "the batches are laid out contiguously (batch k holds the next batch_size windows in "
            "a row), so row i of batch k+1 does not continue row i of batch k: cut the series "
            "into batch_size long rows first, then cut every row into pieces of `steps`.",
            lambda c: c["series"][: len(row_continuous(**c).ravel())].reshape(
                -1, c["batch_size"], c["steps"]
            ),
        ),
        Mistake(
            "the axes are (batch_size, n_batches, steps): put the batch index k first, so that "
            "answer[k] is the k-th batch.",
            lambda c: row_continuous(**c).transpose(1, 0, 2),
        ),
        Mistake(
            "each row is len(series) // batch_size long with its own tail dropped: drop the tail "
            "of the whole series first (keep n_batches * batch_size * steps values), then cut it "
            "into batch_size rows.",
            _per_row_trim,
        ),
    ),
)


# --- Exercise 4.6: stream one step at a time like a stateful Keras layer ---------------------------


def _stream_case(rng):
    B, T, D, H = (int(rng.integers(1, 5)), int(rng.integers(2, 7)), int(rng.integers(1, 6)),
                  int(rng.integers(1, 6)))
    return {
        "B": B, "T": T, "D": D, "H": H,
        "inputs": normal(rng, B, T, D),  # (B, T, D): step t arrives as inputs[:, t]
        "h": normal(rng, B, H, scale=0.5),  # (B, H)
        "c": normal(rng, B, H, scale=0.5),  # (B, H)
        "kernel": normal(rng, D, 4 * H, scale=0.5),  # (D, 4H)
        "recurrent_kernel": normal(rng, H, 4 * H, scale=0.5),  # (H, 4H)
        "bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
    }


def _stream_oracle(case):
    """A Keras 3 LSTM with stateful=True, started from [h, c] and called once per time step."""
    steps = [case["inputs"][:, t : t + 1] for t in range(case["T"])]  # T x (B, 1, D)
    weights = [case["kernel"], case["recurrent_kernel"], case["bias"]]
    calls = run_keras_lstm(steps, weights, initial_state=[case["h"], case["c"]], stateful=True)
    _, h, c = calls[-1]
    return np.concatenate([outputs for outputs, _, _ in calls], axis=1), [h, c]


def _keras(case, swap=False, **options):
    h, c = (case["c"], case["h"]) if swap else (case["h"], case["c"])
    out, h, c = keras_lstm_run(
        case["inputs"], h, c, case["kernel"], case["recurrent_kernel"], case["bias"], **options
    )
    return out, ([c, h] if swap else [h, c])


def _not_carried(case):
    out, h, c = keras_lstm_run(case["inputs"], case["h"], case["c"], case["kernel"],
                               case["recurrent_kernel"], case["bias"], carry=False)
    return out, [h, c]


stream_steps = Exercise(
    name="stream_steps",
    task="(outputs, [h, c]): h after every step (B, T, H) and the final state as Keras keeps it, "
    "[h, c]",
    make_case=_stream_case,
    call=lambda fn, c: fn(
        [c["inputs"][:, t] for t in range(c["T"])], [c["h"], c["c"]],
        c["kernel"], c["recurrent_kernel"], c["bias"],
    ),
    oracle=_stream_oracle,
    parts=("outputs", "states"),
    mistakes=(
        Mistake(
            "h and c are swapped: Keras keeps an LSTM's state as [h, c] (h first), the opposite "
            "of TF1's LSTMStateTuple(c, h); read and return it in that order.",
            lambda c: _keras(c, swap=True),
        ),
        Mistake(
            "the final state is returned as [c, h]: Keras' order is [h, c].",
            lambda c: (lambda out, s: (out, s[::-1]))(*_keras(c)),
        ),
        Mistake(
            "the state is not carried from one step to the next: feed each step's new [h, c] "
            "into the following step.",
            _not_carried,
        ),
        Mistake(
            "the gate blocks are in TF1's order: Keras 3 splits the four blocks as i, f, c, o "
            "(TF1: i, j, f, o).",
            lambda c: _keras(c, order="icfo"),
        ),
        Mistake(
            "a forget bias of 1.0 is added at run time: Keras adds nothing to f "
            "(unit_forget_bias only initialises the bias).",
            lambda c: _keras(c, forget_bias=1.0),
        ),
        Mistake(
            "the outputs are time-major (T, B, H): stack the steps along axis 1 to get (B, T, H).",
            lambda c: (lambda out, s: (np.swapaxes(out, 0, 1), s))(*_keras(c)),
        ),
    ),
)


CHAPTER = Chapter(
    4,
    "04-stateful-batching",
    [pack_state, unpack_state, run_in_chunks, reset_ended, stateful_batches, stream_steps],
)
check = CHAPTER.check
