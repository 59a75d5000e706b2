"""Chapter 7 answers written the way learners write them (right ones, and wrong ones with the
start of the mistake sentence the check must name). Written from the exercise texts, before
the checks' mistake lists: each wrong answer is a plausible program with one wrong line."""
# ruff: noqa: B905 - learners write zip() without strict=
import numpy as np

from rnnbook.environment import import_tensorflow


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm_step(x, c, h, kernel, bias):
    """One BasicLSTMCell step (forget_bias 1.0), as every learner of Chapter 2 writes it."""
    i, j, f, o = np.split(np.concatenate([x, h], axis=1) @ kernel + bias, 4, axis=1)
    c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
    return c, np.tanh(c) * sigmoid(o)


def zeros_state(inputs, kernel):
    B, H = inputs.shape[0], kernel.shape[1] // 4
    return np.zeros((B, H), np.float32), np.zeros((B, H), np.float32)


# --- 7.1 final_state ---------------------------------------------------------------------------


def final_per_row(inputs, lengths, kernel, bias):
    """Each row alone, for its own number of steps."""
    c, h = zeros_state(inputs, kernel)
    for b, n in enumerate(lengths):
        cb, hb = c[b:b + 1], h[b:b + 1]
        for t in range(n):
            cb, hb = lstm_step(inputs[b:b + 1, t], cb, hb, kernel, bias)
        c[b], h[b] = cb[0], hb[0]
    return c, h


def final_masked(inputs, lengths, kernel, bias):
    """All rows together; a row past its length keeps its state (a 0/1 mask)."""
    c, h = zeros_state(inputs, kernel)
    for t in range(inputs.shape[1]):
        c_new, h_new = lstm_step(inputs[:, t], c, h, kernel, bias)
        alive = (t < np.asarray(lengths))[:, None].astype(np.float32)  # (B, 1)
        c = alive * c_new + (1 - alive) * c
        h = alive * h_new + (1 - alive) * h
    return c, h


def final_where64(inputs, lengths, kernel, bias):
    """np.where, float64, and the states of every step kept, then picked."""
    inputs, kernel, bias = (np.asarray(a, np.float64) for a in (inputs, kernel, bias))
    c, h = zeros_state(inputs, kernel)
    cs, hs = [c], [h]
    for t in range(inputs.shape[1]):
        c, h = lstm_step(inputs[:, t], c, h, kernel, bias)
        cs.append(c)
        hs.append(h)
    rows = np.arange(len(lengths))
    return np.stack(cs)[lengths, rows], [list(r) for r in np.stack(hs)[lengths, rows]]


def final_after_padding(inputs, lengths, kernel, bias):
    c, h = zeros_state(inputs, kernel)
    for t in range(inputs.shape[1]):  # "the padding is zeros, it does nothing"
        c, h = lstm_step(inputs[:, t], c, h, kernel, bias)
    return c, h


def final_one_too_many(inputs, lengths, kernel, bias):
    c, h = zeros_state(inputs, kernel)
    for t in range(inputs.shape[1]):
        c_new, h_new = lstm_step(inputs[:, t], c, h, kernel, bias)
        alive = (t <= np.asarray(lengths))[:, None]  # "up to and including the length"
        c, h = np.where(alive, c_new, c), np.where(alive, h_new, h)
    return c, h


def final_one_too_few(inputs, lengths, kernel, bias):
    c, h = zeros_state(inputs, kernel)
    for t in range(inputs.shape[1]):
        c_new, h_new = lstm_step(inputs[:, t], c, h, kernel, bias)
        alive = (t < np.asarray(lengths) - 1)[:, None]  # "the last index is length - 1"
        c, h = np.where(alive, c_new, c), np.where(alive, h_new, h)
    return c, h


def final_h_c(inputs, lengths, kernel, bias):
    c, h = final_masked(inputs, lengths, kernel, bias)
    return h, c  # "Keras returns h first"


def final_h_masked_only(inputs, lengths, kernel, bias):
    """c is kept past the length, h is not (the mask applied to one of the two)."""
    c, h = zeros_state(inputs, kernel)
    for t in range(inputs.shape[1]):
        c_new, h = lstm_step(inputs[:, t], c, h, kernel, bias)
        c = np.where((t < np.asarray(lengths))[:, None], c_new, c)
    return c, h


def final_last_output(inputs, lengths, kernel, bias):
    """The last step's output as h: zero for every row shorter than T."""
    c, h = final_masked(inputs, lengths, kernel, bias)
    full = (np.asarray(lengths) == inputs.shape[1])[:, None]
    return c, np.where(full, h, 0.0)


# --- 7.2 padded_outputs ------------------------------------------------------------------------


def outputs_mask(inputs, lengths, kernel, bias):
    c, h = zeros_state(inputs, kernel)
    outs = []
    for t in range(inputs.shape[1]):
        c, h = lstm_step(inputs[:, t], c, h, kernel, bias)
        outs.append(h)
    outputs = np.stack(outs, axis=1)  # (B, T, H)
    mask = np.arange(inputs.shape[1])[None, :] < np.asarray(lengths)[:, None]  # (B, T)
    return outputs * mask[:, :, None]


def outputs_per_row(inputs, lengths, kernel, bias):
    B, T, H = inputs.shape[0], inputs.shape[1], kernel.shape[1] // 4
    out = np.zeros((B, T, H), np.float32)
    for b in range(B):
        c = h = np.zeros((1, H))
        for t in range(lengths[b]):
            c, h = lstm_step(inputs[b:b + 1, t], c, h, kernel, bias)
            out[b, t] = h[0]
    return out


def outputs_lists64(inputs, lengths, kernel, bias):
    c, h = zeros_state(inputs.astype(np.float64), kernel)
    rows = [[] for _ in lengths]
    for t in range(inputs.shape[1]):
        c, h = lstm_step(inputs[:, t].astype(np.float64), c, h, kernel, bias)
        for b, n in enumerate(lengths):
            rows[b].append(list(h[b]) if t < n else [0.0] * h.shape[1])
    return rows


def outputs_unmasked(inputs, lengths, kernel, bias):
    c, h = zeros_state(inputs, kernel)
    outs = []
    for t in range(inputs.shape[1]):
        c, h = lstm_step(inputs[:, t], c, h, kernel, bias)
        outs.append(h)
    return np.stack(outs, axis=1)  # "the padding's outputs are ignored anyway"


def outputs_mask_early(inputs, lengths, kernel, bias):
    outputs = outputs_unmasked(inputs, lengths, kernel, bias)
    mask = np.arange(inputs.shape[1])[None, :] < np.asarray(lengths)[:, None] - 1
    return outputs * mask[:, :, None]  # "the last valid index is length - 1"


def outputs_mask_late(inputs, lengths, kernel, bias):
    outputs = outputs_unmasked(inputs, lengths, kernel, bias)
    mask = np.arange(inputs.shape[1])[None, :] <= np.asarray(lengths)[:, None]
    return outputs * mask[:, :, None]


def outputs_repeat_last(inputs, lengths, kernel, bias):
    """The state is carried through the padding and its h is output there."""
    c, h = zeros_state(inputs, kernel)
    outs = []
    for t in range(inputs.shape[1]):
        c_new, h_new = lstm_step(inputs[:, t], c, h, kernel, bias)
        alive = (t < np.asarray(lengths))[:, None]
        c, h = np.where(alive, c_new, c), np.where(alive, h_new, h)
        outs.append(h)  # "a finished row keeps its last output"
    return np.stack(outs, axis=1)


# --- 7.3 reverse_within_lengths ----------------------------------------------------------------


def reverse_loop(inputs, lengths):
    out = inputs.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = inputs[b, :n][::-1]
    return out


def reverse_gather(inputs, lengths):
    T = inputs.shape[1]
    t = np.arange(T)[None, :]  # (1, T)
    n = np.asarray(lengths)[:, None]  # (B, 1)
    source = np.where(t < n, n - 1 - t, t)  # (B, T)
    return np.take_along_axis(inputs, source[:, :, None], axis=1)


def reverse_lists(inputs, lengths):
    rows = []
    for row, n in zip(inputs.tolist(), lengths):
        rows.append(row[:n][::-1] + row[n:])
    return rows


def reverse_flip(inputs, lengths):
    return np.flip(inputs, axis=1)  # "tf.reverse(x, [1])"


def reverse_then_shift(inputs, lengths):
    out = inputs.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = inputs[b, :n + 1][::-1][:n]  # "the slice end is inclusive"
    return out


def reverse_batch_axis(inputs, lengths):
    return inputs[::-1]  # "reverse the sequences"


def reverse_padding_zeroed(inputs, lengths):
    out = np.zeros_like(inputs)
    for b, n in enumerate(lengths):
        out[b, :n] = inputs[b, :n][::-1]  # "the padding is zeros anyway"
    return out


# --- 7.4 stacked_final_state -------------------------------------------------------------------


def stack_run(inputs, lengths, kernels, biases, alive_of=None):
    """Two layers, every step; a row past its length keeps both layers' states."""
    alive_of = alive_of or (lambda t: t < np.asarray(lengths))
    B, H = inputs.shape[0], kernels[0].shape[1] // 4
    states = [[np.zeros((B, H)), np.zeros((B, H))] for _ in kernels]
    for t in range(inputs.shape[1]):
        x = inputs[:, t]
        alive = alive_of(t)[:, None]
        for layer, (kernel, bias) in enumerate(zip(kernels, biases)):
            c, h = states[layer]
            c_new, h_new = lstm_step(x, c, h, kernel, bias)
            states[layer] = [np.where(alive, c_new, c), np.where(alive, h_new, h)]
            x = h_new
    return tuple(tuple(s) for s in states)


def stack_by_row(inputs, lengths, kernels, biases):
    """Each row alone, its own number of steps, through both layers."""
    out = []
    for kernel in kernels:
        H = kernel.shape[1] // 4
        out.append([np.zeros((len(lengths), H)), np.zeros((len(lengths), H))])
    for b, n in enumerate(lengths):
        layer_states = [(np.zeros((1, k.shape[1] // 4)),) * 2 for k in kernels]
        for t in range(n):
            x = inputs[b:b + 1, t]
            for k in range(len(kernels)):
                layer_states[k] = lstm_step(x, *layer_states[k], kernels[k], biases[k])
                x = layer_states[k][1]
        for k in range(len(kernels)):
            out[k][0][b], out[k][1][b] = layer_states[k][0][0], layer_states[k][1][0]
    return [tuple(pair) for pair in out]


def stack_layer_by_layer(inputs, lengths, kernels, biases):
    """Layer 0 over the whole sequence first (its outputs zero past the length), then
    layer 1 over those outputs."""
    x = np.asarray(inputs)
    finals = []
    mask = (np.arange(x.shape[1])[None, :] < np.asarray(lengths)[:, None])[:, :, None]
    for kernel, bias in zip(kernels, biases):
        c, h = zeros_state(x, kernel)
        outs = []
        for t in range(x.shape[1]):
            c_new, h_new = lstm_step(x[:, t], c, h, kernel, bias)
            keep = mask[:, t]
            c, h = np.where(keep, c_new, c), np.where(keep, h_new, h)
            outs.append(h_new)
        finals.append((c, h))
        x = np.stack(outs, axis=1) * mask
    return tuple(finals)


def stack_top_first(inputs, lengths, kernels, biases):
    return stack_run(inputs, lengths, kernels, biases)[::-1]  # "the last layer is the answer"


def stack_h_c(inputs, lengths, kernels, biases):
    return tuple((h, c) for c, h in stack_run(inputs, lengths, kernels, biases))


def stack_after_padding(inputs, lengths, kernels, biases):
    T = inputs.shape[1]
    return stack_run(inputs, lengths, kernels, biases,
                     alive_of=lambda t: np.full(len(lengths), t < T))


def stack_one_past(inputs, lengths, kernels, biases):
    return stack_run(inputs, lengths, kernels, biases,
                     alive_of=lambda t: t <= np.asarray(lengths))  # "up to the length"


def stack_one_short(inputs, lengths, kernels, biases):
    last = np.asarray(lengths) - 1  # "the last valid index is length - 1"
    return stack_run(inputs, lengths, kernels, biases, alive_of=lambda t: t < last)


def stack_top_layer_masked_only(inputs, lengths, kernels, biases):
    """Layer 0 runs through the padding; only the top layer is kept at the length."""
    B, H = inputs.shape[0], kernels[0].shape[1] // 4
    states = [[np.zeros((B, H)), np.zeros((B, H))] for _ in kernels]
    for t in range(inputs.shape[1]):
        x = inputs[:, t]
        for layer, (kernel, bias) in enumerate(zip(kernels, biases)):
            c_new, h_new = lstm_step(x, *states[layer], kernel, bias)
            if layer == len(kernels) - 1:
                alive = (t < np.asarray(lengths))[:, None]
                c_new = np.where(alive, c_new, states[layer][0])
                h_new = np.where(alive, h_new, states[layer][1])
            states[layer] = [c_new, h_new]
            x = h_new
    return tuple(tuple(s) for s in states)


def stack_packed(inputs, lengths, kernels, biases):
    """One array (L, 2, B, H), as Chapter 4 packed it."""
    return np.array(stack_run(inputs, lengths, kernels, biases))


# --- 7.5 run_with_lengths (API) ----------------------------------------------------------------


def run_dynamic(cell, inputs, lengths):
    v1 = import_tensorflow().compat.v1
    _, state = v1.nn.dynamic_rnn(cell, inputs, sequence_length=lengths, dtype=np.float32)
    return state.c.numpy(), state.h.numpy()


def run_cell_loop(cell, inputs, lengths):
    """The cell called step by step; a finished row keeps the state it had."""
    tf = import_tensorflow()
    state = cell.zero_state(inputs.shape[0], tf.float32)
    c, h = state.c.numpy(), state.h.numpy()
    for t in range(inputs.shape[1]):
        _, new = cell(inputs[:, t], (c, h))
        alive = (t < lengths)[:, None]
        c, h = np.where(alive, new.c.numpy(), c), np.where(alive, new.h.numpy(), h)
    return c, h


def run_static(cell, inputs, lengths):
    tf = import_tensorflow()
    steps = tf.unstack(tf.constant(inputs), axis=1)
    _, state = tf.compat.v1.nn.static_rnn(cell, steps, sequence_length=lengths,
                                          dtype=tf.float32)
    return [np.asarray(state[0]), np.asarray(state[1])]


def run_without_lengths(cell, inputs, lengths):
    v1 = import_tensorflow().compat.v1
    _, state = v1.nn.dynamic_rnn(cell, inputs, dtype=np.float32)  # "the padding is zeros"
    return state.c.numpy(), state.h.numpy()


def run_lengths_minus_one(cell, inputs, lengths):
    v1 = import_tensorflow().compat.v1
    _, state = v1.nn.dynamic_rnn(cell, inputs, sequence_length=np.maximum(lengths - 1, 0),
                                 dtype=np.float32)  # "the last index is length - 1"
    return state.c.numpy(), state.h.numpy()


def run_h_c(cell, inputs, lengths):
    v1 = import_tensorflow().compat.v1
    _, (c, h) = v1.nn.dynamic_rnn(cell, inputs, sequence_length=lengths, dtype=np.float32)
    return h.numpy(), c.numpy()


def run_last_output(cell, inputs, lengths):
    v1 = import_tensorflow().compat.v1
    outputs, state = v1.nn.dynamic_rnn(cell, inputs, sequence_length=lengths,
                                       dtype=np.float32)
    return state.c.numpy(), outputs[:, -1].numpy()  # "h is the last output"


def run_by_hand(cell, inputs, lengths):
    """The weights read from the cell, the run recomputed in NumPy."""
    kernel, bias = (v.numpy() for v in cell.variables)
    return final_masked(inputs, lengths, kernel, bias)


# --- 7.6 keras_final_state (API) ---------------------------------------------------------------


def _keras_weights(kernel, bias, D, fold=1.0):
    """TF1 [W; U] with blocks i, j, f, o to Keras' kernel, recurrent kernel, bias (i, f, c,
    o), forget_bias folded into f (Chapter 3)."""
    def order(a):
        i, j, f, o = np.split(a, 4, axis=-1)
        return np.concatenate([i, f, j, o], axis=-1)

    kernel, bias = order(kernel), order(bias).copy()
    H = bias.shape[0] // 4
    bias[H:2 * H] += fold
    return [kernel[:D], kernel[D:], bias]


def keras_mask_argument(inputs, lengths, kernel, bias):
    tf = import_tensorflow()
    B, T, D = inputs.shape
    layer = tf.keras.layers.LSTM(kernel.shape[1] // 4, return_state=True)
    layer.build((None, T, D))
    layer.set_weights(_keras_weights(kernel, bias, D))
    mask = tf.sequence_mask(lengths, T)
    _, h, c = layer(inputs, mask=mask)
    return c.numpy(), h.numpy()


def keras_masking_model(inputs, lengths, kernel, bias):
    tf = import_tensorflow()
    B, T, D = inputs.shape
    keep = (np.arange(T)[None, :] < lengths[:, None])[:, :, None]
    x = tf.keras.Input((T, D))
    masked = tf.keras.layers.Masking(0.0)(x)
    _, h, c = tf.keras.layers.LSTM(kernel.shape[1] // 4, return_state=True)(masked)
    model = tf.keras.Model(x, [c, h])
    model.layers[-1].set_weights(_keras_weights(kernel, bias, D))
    c, h = model(np.where(keep, inputs, 0.0).astype(np.float32))
    return np.asarray(c), np.asarray(h)


def keras_no_mask(inputs, lengths, kernel, bias):
    tf = import_tensorflow()
    B, T, D = inputs.shape
    layer = tf.keras.layers.LSTM(kernel.shape[1] // 4, return_state=True)
    layer.build((None, T, D))
    layer.set_weights(_keras_weights(kernel, bias, D))
    _, h, c = layer(inputs)  # "Keras knows where the sequence ends"
    return c.numpy(), h.numpy()


def keras_no_fold(inputs, lengths, kernel, bias):
    tf = import_tensorflow()
    B, T, D = inputs.shape
    layer = tf.keras.layers.LSTM(kernel.shape[1] // 4, return_state=True)
    layer.build((None, T, D))
    layer.set_weights(_keras_weights(kernel, bias, D, fold=0.0))  # "the bias is the bias"
    _, h, c = layer(inputs, mask=tf.sequence_mask(lengths, T))
    return c.numpy(), h.numpy()


def keras_state_order(inputs, lengths, kernel, bias):
    tf = import_tensorflow()
    B, T, D = inputs.shape
    layer = tf.keras.layers.LSTM(kernel.shape[1] // 4, return_state=True)
    layer.build((None, T, D))
    layer.set_weights(_keras_weights(kernel, bias, D))
    _, c, h = layer(inputs, mask=tf.sequence_mask(lengths, T))  # "state = (c, h)"
    return c.numpy(), h.numpy()


def keras_mask_one_long(inputs, lengths, kernel, bias):
    tf = import_tensorflow()
    B, T, D = inputs.shape
    layer = tf.keras.layers.LSTM(kernel.shape[1] // 4, return_state=True)
    layer.build((None, T, D))
    layer.set_weights(_keras_weights(kernel, bias, D))
    mask = tf.sequence_mask(lengths + 1, T)  # "the mask includes the step at the length"
    _, h, c = layer(inputs, mask=mask)
    return c.numpy(), h.numpy()


def keras_mask_one_short(inputs, lengths, kernel, bias):
    tf = import_tensorflow()
    B, T, D = inputs.shape
    layer = tf.keras.layers.LSTM(kernel.shape[1] // 4, return_state=True)
    layer.build((None, T, D))
    layer.set_weights(_keras_weights(kernel, bias, D))
    mask = np.arange(T)[None, :] < (np.asarray(lengths) - 1)[:, None]  # "last index n - 1"
    _, h, c = layer(inputs, mask=tf.constant(mask))
    return c.numpy(), h.numpy()


def keras_numpy(inputs, lengths, kernel, bias):
    """No Keras at all: the TF1 run recomputed."""
    return final_masked(inputs, lengths, kernel, bias)


# --- 7.7 backward_state_by_name (API) ----------------------------------------------------------


def _bw(k, what, way="bw"):
    """The name a learner reads off the graph: step k's conditional, its output or state."""
    suffix = "" if k == 0 else f"_{k}"
    return f"bidirectional_rnn/{way}/{way}/cond{suffix}/{what}:0"


def _feed(inputs, lengths):
    return {"inputs:0": inputs, "lengths:0": lengths}


def bw_by_name(session, inputs, lengths, k):
    c, h = session.run([_bw(k, "Identity_1"), _bw(k, "Identity_2")], _feed(inputs, lengths))
    return c, h


def bw_by_listing(session, inputs, lengths, k):
    """The backward direction's conditionals found by listing the graph's ops."""
    steps = [op for op in session.graph.get_operations()
             if op.name.startswith("bidirectional_rnn/bw/bw/cond")
             and op.name.endswith("/Identity_1")]
    c_op = steps[k]
    h_name = c_op.name[:-len("Identity_1")] + "Identity_2:0"
    return tuple(session.run([c_op.outputs[0].name, h_name], _feed(inputs, lengths)))


def bw_every_step(session, inputs, lengths, k):
    """Every step's state in one run, then step k's, float64."""
    T = inputs.shape[1]
    names = [[_bw(t, "Identity_1"), _bw(t, "Identity_2")] for t in range(T)]
    states = session.run(names, _feed(inputs, lengths))
    return [np.asarray(part, np.float64) for part in states[k]]


def bw_forward(session, inputs, lengths, k):
    c, h = session.run([_bw(k, "Identity_1", "fw"), _bw(k, "Identity_2", "fw")],
                       _feed(inputs, lengths))  # "the first direction is the one I want"
    return c, h


def bw_h_c(session, inputs, lengths, k):
    h, c = session.run([_bw(k, "Identity_1"), _bw(k, "Identity_2")], _feed(inputs, lengths))
    return c, h  # "the state is (h, c)"


def bw_output_for_h(session, inputs, lengths, k):
    c, h = session.run([_bw(k, "Identity_1"), _bw(k, "Identity")],
                       _feed(inputs, lengths))  # "h is the output"
    return c, h


def bw_cond_0(session, inputs, lengths, k):
    name = f"bidirectional_rnn/bw/bw/cond_{k}/Identity_"  # "every step is numbered"
    return tuple(session.run([name + "1:0", name + "2:0"], _feed(inputs, lengths)))


def bw_one_late(session, inputs, lengths, k):
    step = k + 1  # "its (k + 1)-th step"
    c, h = session.run([_bw(step, "Identity_1"), _bw(step, "Identity_2")],
                       _feed(inputs, lengths))
    return c, h


def bw_one_early(session, inputs, lengths, k):
    """Step k read as "after k steps": the conditional numbered k - 1."""
    name = "bidirectional_rnn/bw/bw/cond" + ("" if k == 1 else f"_{k - 1}")
    return tuple(session.run([name + "/Identity_1:0", name + "/Identity_2:0"],
                             _feed(inputs, lengths)))


def bw_without_lengths(session, inputs, lengths, k):
    return tuple(session.run([_bw(k, "Identity_1"), _bw(k, "Identity_2")],
                             {"inputs:0": inputs}))  # "lengths has a default"


def bw_recomputed(session, inputs, lengths, k):
    """The backward weights fetched, the run recomputed in NumPy on the reversed batch."""
    read = "bidirectional_rnn/bw/basic_lstm_cell/{}/Read/ReadVariableOp:0"
    kernel, bias = session.run([read.format("kernel"), read.format("bias")])
    flipped = reverse_loop(inputs, lengths)[:, :k + 1]
    return final_masked(flipped, np.minimum(lengths, k + 1), kernel, bias)


def bw_input_step(session, inputs, lengths, k):
    """The state that has read the INPUT's step k: backward step n - 1 - k of each row."""
    T = inputs.shape[1]
    names = [[_bw(t, "Identity_1"), _bw(t, "Identity_2")] for t in range(T)]
    states = session.run(names, _feed(inputs, lengths))
    rows = [min(max(n - 1 - k, 0), T - 1) for n in lengths]
    return (np.stack([states[t][0][b] for b, t in enumerate(rows)]),
            np.stack([states[t][1][b] for b, t in enumerate(rows)]))


# --- 7.8 bidirectional_outputs -----------------------------------------------------------------


def bidi_loops(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    """Row by row: forward from step 0, backward from the row's last valid step."""
    B, T, _ = inputs.shape
    H = kernel_fw.shape[1] // 4
    out = np.zeros((B, T, 2 * H), np.float32)
    for b, n in enumerate(lengths):
        c = h = np.zeros((1, H))
        for t in range(n):
            c, h = lstm_step(inputs[b:b + 1, t], c, h, kernel_fw, bias_fw)
            out[b, t, :H] = h[0]
        c = h = np.zeros((1, H))
        for t in reversed(range(n)):
            c, h = lstm_step(inputs[b:b + 1, t], c, h, kernel_bw, bias_bw)
            out[b, t, H:] = h[0]
    return out


def bidi_masked(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    """Vectorised: each direction's masked outputs, the backward one on the batch reversed
    within lengths and reversed back."""
    forward = outputs_mask(inputs, lengths, kernel_fw, bias_fw)
    backward = outputs_mask(reverse_gather(inputs, lengths), lengths, kernel_bw, bias_bw)
    return np.concatenate([forward, reverse_gather(backward, lengths)], axis=2)


def bidi_lists64(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    """float64, both directions in one loop over t, nested lists."""
    inputs = np.asarray(inputs, np.float64)
    B, T, _ = inputs.shape
    H = kernel_fw.shape[1] // 4
    n = np.asarray(lengths)
    rows = np.arange(B)
    cf = hf = cb = hb = np.zeros((B, H))
    fw, bw = np.zeros((B, T, H)), np.zeros((B, T, H))
    for t in range(T):
        alive = (t < n)[:, None]
        cf2, hf2 = lstm_step(inputs[:, t], cf, hf, kernel_fw, bias_fw)
        cf, hf = np.where(alive, cf2, cf), np.where(alive, hf2, hf)
        fw[:, t] = np.where(alive, hf2, 0.0)
        src = np.clip(n - 1 - t, 0, T - 1)  # the backward direction's t-th input, per row
        cb2, hb2 = lstm_step(inputs[rows, src], cb, hb, kernel_bw, bias_bw)
        cb, hb = np.where(alive, cb2, cb), np.where(alive, hb2, hb)
        bw[rows[alive[:, 0]], src[alive[:, 0]]] = hb2[alive[:, 0]]
    return np.concatenate([fw, bw], axis=2).tolist()


def bidi_bw_first(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    right = bidi_masked(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw)
    H = kernel_fw.shape[1] // 4
    return np.concatenate([right[..., H:], right[..., :H]], axis=2)  # "backward, forward"


def bidi_flipped(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    forward = outputs_mask(inputs, lengths, kernel_fw, bias_fw)
    backward = outputs_mask(np.flip(inputs, axis=1), lengths, kernel_bw, bias_bw)
    return np.concatenate([forward, np.flip(backward, axis=1)], axis=2)  # "tf.reverse"


def bidi_not_reversed_back(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    forward = outputs_mask(inputs, lengths, kernel_fw, bias_fw)
    backward = outputs_mask(reverse_gather(inputs, lengths), lengths, kernel_bw, bias_bw)
    return np.concatenate([forward, backward], axis=2)  # "the backward outputs, as run"


def bidi_lengths_plus_one(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    n = np.minimum(np.asarray(lengths) + 1, inputs.shape[1])  # "up to the length"
    return bidi_masked(inputs, n, kernel_fw, bias_fw, kernel_bw, bias_bw)


def bidi_lengths_minus_one(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    n = np.maximum(np.asarray(lengths) - 1, 0)  # "the last index is length - 1"
    return bidi_masked(inputs, n, kernel_fw, bias_fw, kernel_bw, bias_bw)


def bidi_repeat_last(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    """Each direction's state carried through the padding, and its h output there."""
    forward = outputs_repeat_last(inputs, lengths, kernel_fw, bias_fw)
    backward = outputs_repeat_last(reverse_gather(inputs, lengths), lengths, kernel_bw,
                                   bias_bw)
    return np.concatenate([forward, reverse_gather(backward, lengths)], axis=2)


def bidi_outputs_run_on(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    """The state is kept past each length, but every step's new h is output (unmasked)."""
    def run(x, kernel, bias):
        c, h = zeros_state(x, kernel)
        outs = []
        for t in range(x.shape[1]):
            c_new, h_new = lstm_step(x[:, t], c, h, kernel, bias)
            alive = (t < np.asarray(lengths))[:, None]
            c, h = np.where(alive, c_new, c), np.where(alive, h_new, h)
            outs.append(h_new)
        return np.stack(outs, axis=1)

    backward = run(reverse_gather(inputs, lengths), kernel_bw, bias_bw)
    return np.concatenate([run(inputs, kernel_fw, bias_fw),
                           reverse_gather(backward, lengths)], axis=2)


def bidi_weights_swapped(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    return bidi_masked(inputs, lengths, kernel_bw, bias_bw, kernel_fw, bias_fw)


def bidi_backward_unreversed(inputs, lengths, kernel_fw, bias_fw, kernel_bw, bias_bw):
    """The backward weights run forward, in the input's order."""
    return np.concatenate([outputs_mask(inputs, lengths, kernel_fw, bias_fw),
                           outputs_mask(inputs, lengths, kernel_bw, bias_bw)], axis=2)


RIGHT = {
    "final_state": [final_per_row, final_masked, final_where64],
    "padded_outputs": [outputs_mask, outputs_per_row, outputs_lists64],
    "reverse_within_lengths": [reverse_loop, reverse_gather, reverse_lists],
    "stacked_final_state": [stack_run, stack_by_row, stack_layer_by_layer],
    "run_with_lengths": [run_dynamic, run_cell_loop, run_static],
    "keras_final_state": [keras_mask_argument, keras_masking_model],
    "backward_state_by_name": [bw_by_name, bw_by_listing, bw_every_step],
    "bidirectional_outputs": [bidi_loops, bidi_masked, bidi_lists64],
}

WRONG = {
    "final_state": [
        (final_after_padding, "the final state is taken after the padding"),
        (final_one_too_many, "the state is read one step past"),
        (final_one_too_few, "the state is read one step before"),
        (final_h_c, "c and h are swapped"),
        (final_h_masked_only, None),
        (final_last_output, None),
    ],
    "padded_outputs": [
        (outputs_unmasked, "the outputs past each row's length are not zero"),
        (outputs_mask_early, "the zeros start one step early"),
        (outputs_mask_late, "the zeros start one step late"),
        (outputs_repeat_last, "the outputs past each row's length repeat"),
    ],
    "reverse_within_lengths": [
        (reverse_flip, "the padding was reversed to the front"),
        (reverse_then_shift, None),
        (reverse_batch_axis, None),
        (reverse_padding_zeroed, None),
    ],
    "stacked_final_state": [
        (stack_top_first, "the layers are swapped"),
        (stack_h_c, "c and h are swapped"),
        (stack_after_padding, "the final state is taken after the padding"),
        (stack_top_layer_masked_only, "the final state is taken after the padding"),
        (stack_packed, None),
        (stack_one_past, "the state is read one step past"),
        (stack_one_short, "the state is read one step before"),
    ],
    "run_with_lengths": [
        (run_without_lengths, "the final state is taken after the padding"),
        (run_lengths_minus_one, "the state is read one step before"),
        (run_h_c, "c and h are swapped"),
        (run_last_output, None),
        (run_by_hand, "the final state was not computed by the cell"),
    ],
    "keras_final_state": [
        (keras_no_mask, "the final state is taken after the padding"),
        (keras_no_fold, "forget_bias is not folded"),
        (keras_state_order, "c and h are swapped"),
        (keras_numpy, "the final state was not computed by a Keras layer"),
        (keras_mask_one_long, "the state is read one step past"),
        (keras_mask_one_short, "the state is read one step before"),
    ],
    "backward_state_by_name": [
        (bw_forward, "this is the forward direction's state"),
        (bw_h_c, "c and h are swapped"),
        (bw_output_for_h, "this h is the step's output"),
        (bw_cond_0, "`cond_0` does not exist"),
        (bw_without_lengths, "the placeholders are not both fed"),
        (bw_recomputed, "the state's values were not fetched"),
        (bw_input_step, None),
        (bw_one_late, "this is the state one step late"),
        (bw_one_early, "this is the state one step early"),
    ],
    "bidirectional_outputs": [
        (bidi_bw_first, "the directions are swapped"),
        (bidi_flipped, "the backward direction read the padding first"),
        (bidi_not_reversed_back, "the backward outputs are in reversed time order"),
        (bidi_lengths_plus_one, "the outputs run one step past"),
        (bidi_lengths_minus_one, "the outputs stop one step early"),
        (bidi_repeat_last, "the outputs past each row's length are not zeros"),
        (bidi_outputs_run_on, None),
        (bidi_weights_swapped, None),
        (bidi_backward_unreversed, None),
    ],
}

WRONG_XFAIL: dict = {}
