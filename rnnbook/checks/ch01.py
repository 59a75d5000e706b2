"""Chapter 1 (BasicRNNCell internals): exercises and their checks.

Every oracle runs TensorFlow's real ``BasicRNNCell`` (or Keras 3's ``SimpleRNNCell``) with the
trial's random weights. Notation (book/notation.md): ``B`` batch, ``T`` time, ``D`` input depth,
``H`` num_units; ``kernel`` is ``(D + H, H)`` with ``W = kernel[:D]`` and ``U = kernel[D:]``.
"""
import functools

import numpy as np

from rnnbook.checking import Chapter, Exercise, Mistake, normal, sizes
from rnnbook.oracles import keras3, run_tf1, tensorflow


def _cell(H):
    return lambda: tensorflow().compat.v1.nn.rnn_cell.BasicRNNCell(H)


@functools.cache
def _tanh_input():
    """The name of the tensor the cell feeds to tanh, read once from a small real cell's graph."""
    tf = tensorflow()
    with tf.Graph().as_default() as graph:
        cell = tf.compat.v1.nn.rnn_cell.BasicRNNCell(2)
        cell(tf.zeros([1, 3]), tf.zeros([1, 2]))
        return [op.inputs[0].name for op in graph.get_operations() if op.type == "Tanh"]


def _preactivation(case, x, h):
    """``[x, h] @ kernel + bias`` read from the real cell's graph (the tensor before tanh)."""
    weights = {"kernel": case["kernel"], "bias": case.get("bias", np.zeros(case["H"], np.float32))}
    return run_tf1(_cell(case["H"]), x, h, weights, fetch=_tanh_input())[2]


# --- Exercise 1.1: split the kernel ----------------------------------------------------------


def _split_case(rng):
    case = sizes(rng)
    case["kernel"] = normal(rng, case["D"] + case["H"], case["H"], scale=0.5)
    return case


def _split_oracle(case):
    """W is what the cell multiplies x by, U what it multiplies h by: probe with identity rows."""
    D, H = case["D"], case["H"]
    x = np.concatenate([np.eye(D), np.zeros((H, D))]).astype(np.float32)  # (D + H, D)
    h = np.concatenate([np.zeros((D, H)), np.eye(H)]).astype(np.float32)  # (D + H, H)
    z = _preactivation(case, x, h)  # (D + H, H): one probe row per row of the kernel, no bias
    return z[:D], z[D:]


split_kernel = Exercise(
    name="split_kernel",
    task="(W, U): W = the (D, H) rows that multiply x, U = the (H, H) rows that multiply h",
    make_case=_split_case,
    call=lambda fn, c: fn(c["kernel"], c["D"]),
    oracle=_split_oracle,
    parts=("W", "U"),
    mistakes=(
        Mistake(
            "W and U are swapped: the first D rows of the kernel multiply x, so W = kernel[:D] "
            "and U = kernel[D:].",
            lambda c: (c["kernel"][c["D"]:], c["kernel"][: c["D"]]),
        ),
        Mistake(
            "W and U are transposed: TF right-multiplies (x @ W), so W is (D, H) and U is (H, H); "
            "return the row blocks as they are.",
            lambda c: (c["kernel"][: c["D"]].T, c["kernel"][c["D"]:].T),
        ),
        Mistake(
            "you split the kernel at row H instead of row D: the input x comes first in "
            "concat([x, h]), so the split is at input_depth.",
            lambda c: (c["kernel"][: c["H"]], c["kernel"][c["H"]:]),
        ),
    ),
)


# --- Exercise 1.2: one step by hand ----------------------------------------------------------


def _step_case(rng):
    case = sizes(rng)
    B, D, H = case["B"], case["D"], case["H"]
    case["x"] = normal(rng, B, D)  # (B, D)
    case["h"] = normal(rng, B, H)  # (B, H)
    case["kernel"] = normal(rng, D + H, H, scale=0.5)  # (D + H, H)
    case["bias"] = normal(rng, H, scale=0.5)  # (H,)
    return case


def _step_oracle(case):
    output, state = run_tf1(_cell(case["H"]), case["x"], case["h"], _step_weights(case))
    assert np.array_equal(output, state)  # BasicRNNCell returns (h', h')
    return state


def _step_weights(case):
    return {"kernel": case["kernel"], "bias": case["bias"]}


def _z(c, x, h, kernel=None):
    return np.concatenate([x, h], axis=1) @ (c["kernel"] if kernel is None else kernel)


RNN_STEP_MISTAKES = (
    Mistake(
        "W and U are swapped: concatenate [x, h] (input first), not [h, x].",
        lambda c: np.tanh(np.concatenate([c["h"], c["x"]], 1) @ c["kernel"] + c["bias"]),
    ),
    Mistake(
        "W and U are swapped: x multiplies W = kernel[:D] and h multiplies U = kernel[D:].",
        lambda c: np.tanh(c["x"] @ c["kernel"][c["H"]:] + c["h"] @ c["kernel"][: c["H"]] + c["bias"]),
    ),
    Mistake(
        "the bias is left out: add `bias` before tanh.",
        lambda c: np.tanh(_z(c, c["x"], c["h"])),
    ),
    Mistake(
        "tanh is left out: BasicRNNCell's activation is tanh, applied to [x, h] @ kernel + bias.",
        lambda c: _z(c, c["x"], c["h"]) + c["bias"],
    ),
    Mistake(
        "the bias is added after tanh: it belongs inside, tanh([x, h] @ kernel + bias).",
        lambda c: np.tanh(_z(c, c["x"], c["h"])) + c["bias"],
    ),
    Mistake(
        "the previous state h is left out: the new state depends on both x and h.",
        lambda c: np.tanh(c["x"] @ c["kernel"][: c["D"]] + c["bias"]),
    ),
)

rnn_step = Exercise(
    name="rnn_step",
    task="h' = tanh([x, h] @ kernel + bias), an array of shape (B, H)",
    make_case=_step_case,
    call=lambda fn, c: fn(c["x"], c["h"], c["kernel"], c["bias"]),
    oracle=_step_oracle,
    mistakes=RNN_STEP_MISTAKES,
)


# --- Exercise 1.3: unroll a sequence ---------------------------------------------------------


def _unroll_case(rng):
    case = sizes(rng, time=True)
    B, T, D, H = case["B"], case["T"], case["D"], case["H"]
    case["inputs"] = normal(rng, B, T, D)  # (B, T, D), batch-major
    case["h0"] = normal(rng, B, H)  # (B, H)
    case["kernel"] = normal(rng, D + H, H, scale=0.5)
    case["bias"] = normal(rng, H, scale=0.5)
    return case


def _unroll_oracle(case):
    outputs, final = run_tf1(
        _cell(case["H"]), case["inputs"], case["h0"], _step_weights(case), mode="dynamic"
    )
    return outputs, final  # (B, T, H), (B, H)


def _unroll_with(c, step, carry=True):
    h, outputs = c["h0"], []
    for t in range(c["inputs"].shape[1]):
        h_new = step(c, c["inputs"][:, t], h)
        outputs.append(h_new)
        h = h_new if carry else h
    return np.stack(outputs, axis=1), outputs[-1]


def _step_with(mistake):
    """A step function that makes ``mistake`` (a Mistake of Exercise 1.2)."""
    return lambda c, x, h: mistake.answer({**c, "x": x, "h": h})


def _tf_step(c, x, h):
    return np.tanh(np.concatenate([x, h], 1) @ c["kernel"] + c["bias"])


rnn_unroll = Exercise(
    name="rnn_unroll",
    task="(outputs, final_state): outputs (B, T, H), one h per time step, and the last h (B, H)",
    make_case=_unroll_case,
    call=lambda fn, c: fn(c["inputs"], c["h0"], c["kernel"], c["bias"]),
    oracle=_unroll_oracle,
    parts=("outputs", "final_state"),
    mistakes=(
        Mistake(
            "the state is not carried from step to step: feed each step's new h into the next "
            "step instead of reusing h0.",
            lambda c: _unroll_with(c, _tf_step, carry=False),
        ),
        Mistake(
            "the outputs are time-major (T, B, H): stack them along axis 1 to get (B, T, H), as "
            "dynamic_rnn returns them.",
            lambda c: (np.swapaxes(_unroll_with(c, _tf_step)[0], 0, 1), _unroll_with(c, _tf_step)[1]),
        ),
        Mistake(
            "the final state is the first step's h: return the h after the LAST step.",
            lambda c: (_unroll_with(c, _tf_step)[0], _unroll_with(c, _tf_step)[0][:, 0]),
        ),
        # every mistake of a single step, made at each step
        *(Mistake(m.sentence, lambda c, m=m: _unroll_with(c, _step_with(m))) for m in RNN_STEP_MISTAKES),
    ),
)


# --- Exercise 1.4: a TF1 kernel from Keras 3 weights -----------------------------------------


def _keras_case(rng):
    case = sizes(rng)
    D, H = case["D"], case["H"]
    case["kernel"] = normal(rng, D, H, scale=0.5)  # Keras 3 SimpleRNNCell: W (D, H)
    case["recurrent_kernel"] = normal(rng, H, H, scale=0.5)  # U (H, H)
    case["bias"] = normal(rng, H, scale=0.5)  # (H,)
    return case


def _keras_oracle(case):
    """Probe Keras 3's own SimpleRNNCell (activation off) for what multiplies x, h and 1."""
    keras = keras3()
    D, H = case["D"], case["H"]
    cell = keras.layers.SimpleRNNCell(H, activation=None)
    cell.build((None, D))
    cell.set_weights([case["kernel"], case["recurrent_kernel"], case["bias"]])

    def run(x, h):
        return np.asarray(cell(np.asarray(x, np.float32), [np.asarray(h, np.float32)])[0])

    bias = run(np.zeros((1, D)), np.zeros((1, H)))[0]
    W = run(np.eye(D), np.zeros((D, H))) - bias
    U = run(np.zeros((H, D)), np.eye(H)) - bias
    return np.concatenate([W, U], axis=0), bias  # (D + H, H), (H,)


tf1_from_keras = Exercise(
    name="tf1_from_keras",
    task="(kernel, bias) for BasicRNNCell: kernel (D + H, H) = W stacked on U, bias (H,)",
    make_case=_keras_case,
    call=lambda fn, c: fn(c["kernel"], c["recurrent_kernel"], c["bias"]),
    oracle=_keras_oracle,
    parts=("kernel", "bias"),
    mistakes=(
        Mistake(
            "W and U are swapped: stack Keras' kernel (W, multiplies x) ABOVE its "
            "recurrent_kernel (U), because BasicRNNCell concatenates [x, h].",
            lambda c: (np.concatenate([c["recurrent_kernel"], c["kernel"]]), c["bias"]),
        ),
        Mistake(
            "the blocks are stacked side by side: BasicRNNCell's kernel is (D + H, H), so stack "
            "along axis 0 (np.concatenate([W, U], axis=0)).",
            lambda c: (np.concatenate([c["kernel"], c["recurrent_kernel"]], axis=1), c["bias"]),
        ),
        Mistake(
            "the kernel is transposed: keep it (D + H, H), as TF right-multiplies.",
            lambda c: (np.concatenate([c["kernel"], c["recurrent_kernel"]]).T, c["bias"]),
        ),
        Mistake(
            "the bias is left out: Keras' bias carries over to BasicRNNCell's bias unchanged.",
            lambda c: (np.concatenate([c["kernel"], c["recurrent_kernel"]]), np.zeros_like(c["bias"])),
        ),
    ),
)


CHAPTER = Chapter(1, "01-basic-rnn-cell", [split_kernel, rnn_step, rnn_unroll, tf1_from_keras])
check = CHAPTER.check
