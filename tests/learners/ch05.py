"""Chapter 5 answers written the way learners write them, independently of the checks' models.

Each exercise has a learner's own solution; a wrong answer is that solution with ONE line
written the wrong way (a keyword switches the line, so that the wrong line sits where a learner
would write it). RIGHT holds right answers written differently (float64, lists, in-place
updates, TensorFlow where the exercise allows it); WRONG pairs each wrong answer with the start
of the mistake sentence the check must name (see tests/test_sweep.py).
"""
import numpy as np


def named(fn, name, **wrong):
    """``fn`` with its wrong-line switches set, under a name of its own (for the sweep's
    messages)."""
    def answer(*args):
        return fn(*args, **wrong)
    answer.__name__ = name
    return answer


def sig(z):
    return 1 / (1 + np.exp(-z))


# --- clip_global_norm ------------------------------------------------------------------------


def clip_a(grads, clip_norm, wrong=None):
    if wrong == "per tensor":
        out = [g * clip_norm / max(np.linalg.norm(g), clip_norm) for g in grads]
        return out, float(np.sqrt(sum((g ** 2).sum() for g in grads)))
    if wrong == "sum of norms":
        norm = sum(np.linalg.norm(g) for g in grads)
    elif wrong == "no sqrt":
        norm = sum(np.sum(g * g) for g in grads)
    else:
        norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    if wrong == "always":
        scale = clip_norm / norm
    else:
        scale = clip_norm / max(norm, clip_norm)
    return [g * scale for g in grads], norm


def clip_b(grads, clip_norm):
    flat = np.concatenate([np.ravel(g).astype(np.float64) for g in grads])
    norm = float(np.linalg.norm(flat))
    if norm > clip_norm:
        grads = [g * (clip_norm / norm) for g in grads]
    return tuple(grads), norm


def clip_in_place(grads, clip_norm):
    grads = [np.array(g, dtype=np.float64) for g in grads]
    total = 0.0
    for g in grads:
        total += float(np.vdot(g, g))
    norm = total ** 0.5
    for g in grads:
        g *= clip_norm / max(norm, clip_norm)
    return grads, norm


def clip_returns_new_norm(grads, clip_norm):
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    scale = clip_norm / max(norm, clip_norm)
    return [g * scale for g in grads], norm * scale  # "the norm, after clipping"


def clip_rms(grads, clip_norm):
    flat = np.concatenate([np.ravel(g) for g in grads])
    norm = np.sqrt(np.mean(flat ** 2))  # "the norm of one long vector"
    return [g * clip_norm / max(norm, clip_norm) for g in grads], norm


def clip_float16(grads, clip_norm):
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    scale = clip_norm / max(norm, clip_norm)
    return [(g * scale).astype(np.float16) for g in grads], norm  # "gradients in half"


# --- rnn_step_backward -------------------------------------------------------------------


def rnn_step_a(x, h, kernel, bias, dh_new, wrong=None):
    xh = np.concatenate([x, h], axis=1)
    z = xh @ kernel + bias
    h_new = np.tanh(z)
    if wrong == "tanh at z":
        dz = dh_new * (1 - z ** 2)
    elif wrong == "no tanh":
        dz = dh_new
    else:
        dz = dh_new * (1 - h_new ** 2)
    dkernel = dz.T @ xh if wrong == "transposed" else xh.T @ dz
    dbias = dz if wrong == "bias" else dz.sum(0)
    if wrong == "mean":
        dbias = dz.mean(axis=0)
    dxh = dz @ kernel.T
    D = h.shape[1] if wrong == "split at H" else x.shape[1]
    if wrong == "U as is":
        return dxh[:, :D], dz @ kernel[D:], dkernel, dbias
    return dxh[:, :D], dxh[:, D:], dkernel, dbias


def rnn_step_side_by_side(x, h, kernel, bias, dh_new):
    """dW and dU joined along the wrong axis: NumPy raises where D != H."""
    D = x.shape[1]
    W, U = kernel[:D], kernel[D:]
    dz = dh_new * (1 - np.tanh(x @ W + h @ U + bias) ** 2)
    return dz @ W.T, dz @ U.T, np.concatenate([x.T @ dz, h.T @ dz], axis=1), dz.sum(0)


def rnn_step_b(x, h, kernel, bias, dh_new):
    D = x.shape[1]
    W, U = kernel[:D].astype(np.float64), kernel[D:].astype(np.float64)
    h_new = np.tanh(x @ W + h @ U + bias)
    dz = (1.0 - h_new * h_new) * dh_new
    dW, dU = x.T @ dz, h.T @ dz
    return [dz @ W.T, dz @ U.T, np.vstack([dW, dU]), np.sum(dz, axis=0)]


def rnn_step_c(x, h, kernel, bias, dh_new, wrong=None):
    """Learner C: W and U from the kernel, the batch summed by einsum."""
    D = x.shape[1]
    h_new = np.tanh(np.concatenate([x, h], 1) @ kernel + bias)
    dz = dh_new * (1 - (h if wrong == "old h" else h_new) ** 2)
    dkernel = np.einsum("bk,bh->kh", np.concatenate([x, h], 1), dz)
    if wrong == "dkernel mean":
        dkernel = dkernel / x.shape[0]  # "average over the batch"
    dbias = dz.sum(axis=1 if wrong == "bias axis" else 0)
    return dz @ kernel[:D].T, dz @ kernel[D:].T, dkernel, dbias


# --- rnn_backward ------------------------------------------------------------------------


def rnn_seq_a(inputs, h0, kernel, bias, doutputs, wrong=None):
    B, T, D = inputs.shape
    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(np.concatenate([inputs[:, t], hs[-1]], 1) @ kernel + bias))
    dinputs = np.zeros_like(inputs)
    dkernel = np.zeros_like(kernel)
    dbias = np.zeros_like(bias)
    dh_next = np.zeros_like(h0)
    stop = 0 if wrong == "skip 0" else -1
    for t in range(T - 1, stop, -1):
        dh = doutputs[:, t] if wrong == "no carry" else doutputs[:, t] + dh_next
        if wrong == "tanh at z":
            z = np.concatenate([inputs[:, t], hs[t]], 1) @ kernel + bias
            dz = dh * (1 - z ** 2)
        else:
            dz = dh * (1 - hs[t + 1] ** 2)
        xh = np.concatenate([inputs[:, t], hs[t]], 1)
        if wrong == "overwrite":
            dkernel = xh.T @ dz
            dbias = dz.sum(0)
        elif wrong == "mean":
            dkernel += xh.T @ dz
            dbias += dz.mean(0)
        else:
            dkernel += xh.T @ dz
            dbias += dz.sum(0)
        dxh = dz @ kernel.T
        dinputs[:, t] = dxh[:, :D]
        dh_next = dxh[:, D:]
    return dinputs, dh_next, dkernel, dbias


def rnn_seq_b(inputs, h0, kernel, bias, doutputs):
    """Time-major lists, W and U apart, float64."""
    D = inputs.shape[2]
    W, U = kernel[:D].astype(np.float64), kernel[D:].astype(np.float64)
    xs = [inputs[:, t].astype(np.float64) for t in range(inputs.shape[1])]
    hs = [h0.astype(np.float64)]
    for x in xs:
        hs.append(np.tanh(x @ W + hs[-1] @ U + bias))
    dW, dU, db = np.zeros_like(W), np.zeros_like(U), np.zeros(len(bias))
    dxs = [None] * len(xs)
    carry = np.zeros_like(hs[0])
    for t in reversed(range(len(xs))):
        dz = (doutputs[:, t] + carry) * (1 - hs[t + 1] ** 2)
        dW += xs[t].T @ dz
        dU += hs[t].T @ dz
        db += dz.sum(axis=0)
        dxs[t] = dz @ W.T
        carry = dz @ U.T
    return np.stack(dxs, axis=1), carry, np.concatenate([dW, dU]), db


def rnn_seq_c(inputs, h0, kernel, bias, doutputs, wrong=None):
    """Learner C: a list of the states, dinputs gathered in a list while walking back."""
    D, T = inputs.shape[2], inputs.shape[1]
    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(np.concatenate([inputs[:, t], hs[-1]], 1) @ kernel + bias))
    dk, db, carry, dxs = np.zeros(kernel.shape), np.zeros(bias.shape), np.zeros(h0.shape), []
    steps = range(T) if wrong == "forward walk" else reversed(range(T))
    for t in steps:
        after = hs[t] if wrong == "tanh at h_t-1" else hs[t + 1]
        dz = (doutputs[:, t] + carry) * (1 - after ** 2)
        dk += np.concatenate([inputs[:, t], hs[t]], 1).T @ dz
        db += dz.sum(0)
        dxs.append(dz @ kernel[:D].T)
        carry = dz @ kernel[D:].T
    if wrong != "dinputs reversed":
        dxs = dxs if wrong == "forward walk" else dxs[::-1]
    return np.stack(dxs, axis=1), carry, dk, db


# --- truncated_rnn_backward --------------------------------------------------------------


def trunc_a(inputs, h0, kernel, bias, doutputs, chunk, wrong=None):
    """Chunk by chunk, as training code does: each chunk's backward starts from dh = 0."""
    T = inputs.shape[1]
    dkernel, dbias = np.zeros(kernel.shape), np.zeros(bias.shape)
    h = h0
    starts = range(0, T - T % chunk, chunk) if wrong == "drop tail" else range(0, T, chunk)
    for a in starts:
        if wrong == "reset":
            h = h0
        x, dout = inputs[:, a:a + chunk], doutputs[:, a:a + chunk]
        _, _, dk, db = rnn_seq_a(x, h, kernel, bias, dout)
        if wrong == "keep last":
            dkernel, dbias = dk, db
        else:
            dkernel, dbias = dkernel + dk, dbias + db
        for t in range(x.shape[1]):  # carry the state forward (no gradient through it)
            h = np.tanh(np.concatenate([x[:, t], h], 1) @ kernel + bias)
    return dkernel, dbias


def trunc_equal_pieces(inputs, h0, kernel, bias, doutputs, chunk):
    """Chunks cut with np.split into T // chunk equal pieces: NumPy raises when T is not a
    multiple of chunk."""
    T = inputs.shape[1]
    dkernel, dbias, h = 0.0, 0.0, h0
    for x, dout in zip(np.split(inputs, T // chunk, axis=1),
                       np.split(doutputs, T // chunk, axis=1), strict=True):
        _, _, dk, db = rnn_seq_a(x, h, kernel, bias, dout)
        dkernel, dbias = dkernel + dk, dbias + db
        for t in range(x.shape[1]):
            h = np.tanh(np.concatenate([x[:, t], h], 1) @ kernel + bias)
    return dkernel, dbias


def trunc_b(inputs, h0, kernel, bias, doutputs, chunk, wrong=None):
    """One backward loop over the whole sequence that drops dh at each chunk's first step."""
    B, T, D = inputs.shape
    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(np.concatenate([inputs[:, t], hs[-1]], 1) @ kernel + bias))
    dkernel = np.zeros(kernel.shape)
    dbias = np.zeros(bias.shape)
    dh_next = np.zeros(h0.shape)
    for t in range(T - 1, -1, -1):
        dz = (doutputs[:, t] + dh_next) * (1 - hs[t + 1] ** 2)
        dkernel += np.concatenate([inputs[:, t], hs[t]], 1).T @ dz
        dbias += dz.sum(0)
        dh_next = (dz @ kernel.T)[:, D:]
        if t % chunk == 0 and wrong != "full":
            dh_next = np.zeros(h0.shape)
    return [dkernel, dbias]


def trunc_c(inputs, h0, kernel, bias, doutputs, chunk, wrong=None):
    """Learner C: one backward loop, dh cut where a chunk begins; chunks counted."""
    D, T = inputs.shape[2], inputs.shape[1]
    hs = [h0]
    for t in range(T):
        hs.append(np.tanh(np.concatenate([inputs[:, t], hs[-1]], 1) @ kernel + bias))
    dk, db, carry = np.zeros(kernel.shape), np.zeros(bias.shape), np.zeros(h0.shape)
    for t in reversed(range(T)):
        dz = (doutputs[:, t] + carry) * (1 - hs[t + 1] ** 2)
        dk, db = dk + np.concatenate([inputs[:, t], hs[t]], 1).T @ dz, db + dz.sum(0)
        carry = dz @ kernel[D:].T
        cut = (t + 1) % chunk == 0 if wrong == "cut after" else t % chunk == 0
        carry = np.zeros(h0.shape) if cut else carry
    if wrong == "mean of chunks":
        n = -(-T // chunk)
        return dk / n, db / n  # "the average over the chunks"
    return dk, db


# --- lstm_step_backward ------------------------------------------------------------------


def lstm_a(x, c, h, kernel, bias, forget_bias, dc_new, dh_new, wrong=None):
    xh = np.concatenate([x, h], axis=1)
    z = xh @ kernel + bias
    i, j, f, o = np.split(z, 4, axis=1)
    fb = {"fb 1": 1.0, "fb 0": 0.0}.get(wrong, forget_bias)
    si, tj, sf, so = sig(i), np.tanh(j), sig(f + fb), sig(o)
    c_new = c * sf + si * tj
    tc = np.tanh(c_new)
    dc_t = dc_new + dh_new * so * (1 - tc ** 2)
    if wrong == "no c from h":
        dc_t = dc_new
    do = dh_new * tc * so * (1 - so)
    di = dc_t * tj * si * (1 - si)
    dj = dc_t * si * (1 - tj ** 2)
    if wrong == "f no bias":
        df = dc_t * c * sig(f) * (1 - sig(f))
    else:
        df = dc_t * c * sf * (1 - sf)
    if wrong == "keras":
        dz = np.concatenate([di, df, dj, do], axis=1)
    else:
        dz = np.concatenate([di, dj, df, do], axis=1)
    dxh = dz @ kernel.T
    D = h.shape[1] if wrong == "split at H" else x.shape[1]
    dkernel = dz.T @ xh if wrong == "transposed" else xh.T @ dz
    dbias = dz.mean(0) if wrong == "mean" else dz.sum(0)
    out = (dxh[:, :D], dc_t * sf, dxh[:, D:], dkernel, dbias)
    if wrong == "d forget_bias":
        return (*out, df.sum(axis=0))
    return out


def lstm_b(x, c, h, kernel, bias, forget_bias, dc_new, dh_new, wrong=None):
    """Gates by name from column slices, W and U apart, float64."""
    H, D = h.shape[1], x.shape[1]
    K = kernel.astype(np.float64)
    z = x @ K[:D] + h @ K[D:] + bias
    gate = {name: z[:, k * H:(k + 1) * H] for k, name in enumerate("ijfo")}
    i = sig(gate["i"])
    g = np.tanh(gate["j"])
    f = sig(gate["f"] + forget_bias)
    o = sig(gate["o"])
    c2 = f * c + i * g
    dc2 = dc_new + dh_new * o * (1 - np.tanh(c2) ** 2)
    d = {"i": dc2 * g * i * (1 - i), "j": dc2 * i * (1 - g ** 2),
         "f": dc2 * c * f * (1 - f), "o": dh_new * np.tanh(c2) * o * (1 - o)}
    dz = np.hstack([d[name] for name in "ijfo"])
    dK = np.hstack([x.T @ dz, h.T @ dz]) if wrong == "hstack" else np.vstack([x.T @ dz, h.T @ dz])
    return [dz @ K[:D].T, dc2 * f, dz @ K[D:].T, dK, dz.sum(axis=0)]


def lstm_c(x, c, h, kernel, bias, forget_bias, dc_new, dh_new, wrong=None):
    """Learner C: gates from np.split, the chain rule one gate at a time."""
    D = x.shape[1]
    xh = np.concatenate([x, h], 1)
    i, j, f, o = np.split(xh @ kernel + bias, 4, axis=1)
    si, tj, sf, so = sig(i), np.tanh(j), sig(f + forget_bias), sig(o)
    tc = np.tanh(c * sf + si * tj)
    dct = dc_new + dh_new * so * (1 - tc ** 2)
    do = dh_new * (np.tanh(c) if wrong == "o old c" else tc) * so * (1 - so)
    dj = dct * si * (tj * (1 - tj) if wrong == "j sigmoid prime" else 1 - tj ** 2)
    dz = np.concatenate([dct * tj * si * (1 - si), dj, dct * c * sf * (1 - sf), do], 1)
    dc = dct if wrong == "dc no f" else dct * sf
    dxh = dz @ kernel.T
    return dxh[:, :D], dc, dxh[:, D:], xh.T @ dz, dz.sum(0)


# --- split_grad_by_name (API) ------------------------------------------------------------


def by_name_a(session, feed, t, wrong=None):
    step = {"next": t + 1, "previous": t - 1}.get(wrong, t)
    name = "split_grad" if step == 0 else f"split_{step}_grad"
    if wrong == "first suffix":  # as if the suffixes started at 2
        name = "split_grad" if t < 2 else f"split_{t}_grad"
    if wrong == "split_0":
        name = f"split_{t}_grad"
    if wrong == "forward":
        name = "rnn/basic_lstm_cell/split" + ("" if t == 0 else f"_{t}")
        return tuple(session.run([f"{name}:{k}" for k in range(4)], feed))
    dz = session.run(f"gradients/rnn/basic_lstm_cell/{name}/concat:0", feed)
    if wrong == "keras":
        i, f, j, o = np.split(dz, 4, axis=1)
        return i, j, f, o
    return tuple(np.split(dz, 4, axis=1))


def by_name_search(session, feed, t):
    """Find the step's gradient op among the graph's ops, as a learner exploring would."""
    want = "split_grad" if t == 0 else f"split_{t}_grad"
    names = [op.name for op in session.graph.get_operations()
             if op.name.startswith("gradients/") and op.name.endswith(want + "/concat")]
    return np.split(session.run(names[0] + ":0", feed), 4, axis=1)


def by_name_op_outputs(session, feed, t):
    """Through the graph's op: its output tensor, and the blocks by column slices."""
    graph = session.graph
    suffix = "" if t == 0 else f"_{t}"
    op = graph.get_operation_by_name(f"gradients/rnn/basic_lstm_cell/split{suffix}_grad/concat")
    dz = session.run(op.outputs[0], feed).astype(np.float64)
    H = dz.shape[1] // 4
    return [dz[:, k * H:(k + 1) * H] for k in range(4)]


def by_name_rows(session, feed, t):
    name = "split_grad" if t == 0 else f"split_{t}_grad"
    dz = session.run(f"gradients/rnn/basic_lstm_cell/{name}/concat:0", feed)
    return tuple(np.array_split(dz, 4))  # "four blocks"


def by_name_no_feed(session, feed, t):
    name = "split_grad" if t == 0 else f"split_{t}_grad"
    dz = session.run(f"gradients/rnn/basic_lstm_cell/{name}/concat:0")  # "the graph has it"
    return tuple(np.split(dz, 4, axis=1))


def by_name_numpy_bptt(session, feed, t):
    """Reads kernel, bias and the fed arrays; backpropagates through time in NumPy."""
    kernel, bias = session.run(session.graph.get_collection("trainable_variables"))
    fed = {key.name: value for key, value in feed.items()}
    inputs, doutputs = fed["x:0"], fed["doutputs:0"]
    B, T, D = inputs.shape
    H = bias.shape[0] // 4
    h = c = np.zeros((B, H))
    steps = []
    for s in range(T):
        i, j, f, o = np.split(np.concatenate([inputs[:, s], h], 1) @ kernel + bias, 4, 1)
        gates = sig(i), np.tanh(j), sig(f + 1.0), sig(o)
        c_prev, c = c, c * gates[2] + gates[0] * gates[1]
        h = np.tanh(c) * gates[3]
        steps.append((gates, c_prev, c))
    dh_next = dc_next = np.zeros((B, H))
    for s in reversed(range(T)):
        (si, tj, sf, so), c_prev, c = steps[s]
        dh = doutputs[:, s] + dh_next
        dc = dc_next + dh * so * (1 - np.tanh(c) ** 2)
        dz = np.concatenate([dc * tj * si * (1 - si), dc * si * (1 - tj**2),
                             dc * c_prev * sf * (1 - sf), dh * np.tanh(c) * so * (1 - so)], 1)
        if s == t:
            return tuple(np.split(dz, 4, axis=1))
        dh_next, dc_next = (dz @ kernel.T)[:, D:], dc * sf

# --- keras_grads_to_tf1 (API) ------------------------------------------------------------


def keras_a(cell, x, state, dh, wrong=None):
    import tensorflow as tf

    initial = [state[0], state[1]] if wrong == "c first" else [state.h, state.c]
    with tf.GradientTape() as tape:
        h, _ = cell(x, initial)
        loss = tf.reduce_sum(h * dh)
    dk, dr, db = tape.gradient(loss, [cell.kernel, cell.recurrent_kernel, cell.bias])
    dk, dr, db = np.asarray(dk), np.asarray(dr), np.asarray(db)
    stacked = np.concatenate([dr, dk] if wrong == "recurrent first" else [dk, dr])

    def tf1(a):
        i, f, j, o = np.split(a, 4, axis=-1)
        return np.concatenate([i, j, f, o], axis=-1)

    if wrong == "keras order":
        return stacked, db
    return tf1(stacked), tf1(db)


def keras_b(cell, x, state, dh):
    import tensorflow as tf

    c, h = state
    with tf.GradientTape() as tape:
        out, new_state = cell(tf.constant(x), [tf.constant(h), tf.constant(c)])
        loss = tf.reduce_sum(out * dh)
    grads = dict(zip(["kernel", "recurrent", "bias"],
                     tape.gradient(loss, [cell.kernel, cell.recurrent_kernel, cell.bias]),
                     strict=True))
    full = tf.concat([grads["kernel"], grads["recurrent"]], axis=0)
    H = full.shape[1] // 4
    order = [0, 2, 1, 3]  # Keras i, f, g, o -> TF1 i, j, f, o
    kernel = tf.concat([full[:, k * H:(k + 1) * H] for k in order], axis=1)
    bias = tf.concat([grads["bias"][k * H:(k + 1) * H] for k in order], axis=0)
    return kernel.numpy(), bias.numpy()


def _keras_grads(cell, x, state, dh, loss_of):
    import tensorflow as tf

    with tf.GradientTape() as tape:
        h, new_state = cell(x, [state.h, state.c])
        loss = loss_of(h, new_state)
    grads = tape.gradient(loss, [cell.kernel, cell.recurrent_kernel, cell.bias])
    return [np.asarray(g) for g in grads]


def _ifjo_to_ijfo(a):
    i, f, j, o = np.split(a, 4, axis=-1)
    return np.concatenate([i, j, f, o], axis=-1)


def keras_loss_mean(cell, x, state, dh):
    import tensorflow as tf

    dk, dr, db = _keras_grads(cell, x, state, dh,
                              lambda h, s: tf.reduce_mean(h * dh))  # "the loss is a mean"
    return _ifjo_to_ijfo(np.concatenate([dk, dr])), _ifjo_to_ijfo(db)


def keras_loss_of_c(cell, x, state, dh):
    import tensorflow as tf

    dk, dr, db = _keras_grads(cell, x, state, dh,
                              lambda h, s: tf.reduce_sum(s[-1] * dh))  # "the state's last"
    return _ifjo_to_ijfo(np.concatenate([dk, dr])), _ifjo_to_ijfo(db)


def keras_bias_not_reordered(cell, x, state, dh):
    import tensorflow as tf

    dk, dr, db = _keras_grads(cell, x, state, dh, lambda h, s: tf.reduce_sum(h * dh))
    return _ifjo_to_ijfo(np.concatenate([dk, dr])), db  # "a bias has no layout"


def keras_c(cell, x, state, dh):
    import tensorflow as tf

    dk, dr, db = _keras_grads(cell, x, state, dh, lambda h, s: tf.reduce_sum(h * dh))
    H = dr.shape[0]
    cols = np.r_[0:H, 2 * H:3 * H, H:2 * H, 3 * H:4 * H]
    return np.vstack([dk, dr])[:, cols].astype(np.float64), db[cols]


def keras_numpy_backward(cell, x, state, dh):
    """Moves the Keras weights to TF1's layout and runs a backward pass by hand (lstm_a)."""
    def tf1(a):  # Keras i, f, g, o -> TF1 i, j, f, o
        i, f, j, o = np.split(np.asarray(a), 4, axis=-1)
        return np.concatenate([i, j, f, o], axis=-1)

    kernel = tf1(np.concatenate([cell.kernel.numpy(), cell.recurrent_kernel.numpy()]))
    c, h = state
    grads = lstm_a(x, c, h, kernel, tf1(cell.bias.numpy()), 0.0, np.zeros_like(c), dh)
    return grads[3], grads[4]

# --- lstm_cell_backward ------------------------------------------------------------------


def cell_a(x, c, m, weights, forget_bias, cell_clip, dc_new, dm_new, wrong=None):
    K, b = weights["kernel"], weights["bias"]
    wi, wf, wo = weights["w_i_diag"], weights["w_f_diag"], weights["w_o_diag"]
    P_ = weights["projection/kernel"]
    D = x.shape[1]
    if wrong == "clip 1":
        cell_clip = 1.0
    if wrong == "fb 0":
        forget_bias = 0.0
    xm = np.concatenate([x, m], 1)
    i, j, f, o = np.split(xm @ K + b, 4, axis=1)
    gi = sig(i + wi * c)
    gf = sig(f + forget_bias + wf * c)
    gj = np.tanh(j)
    c_raw = gf * c + gi * gj
    c_new = np.clip(c_raw, -cell_clip, cell_clip)
    go = sig(o + wo * c_new)
    m_raw = go * np.tanh(c_new)
    dm_raw = dm_new @ P_.T
    dP = dm_new.T @ m_raw if wrong == "projection T" else m_raw.T @ dm_new
    do = dm_raw * np.tanh(c_new) * go * (1 - go)
    dc_new_total = dc_new + dm_raw * go * (1 - np.tanh(c_new) ** 2)
    if wrong != "no wo path":
        dc_new_total = dc_new_total + do * wo
    inside = np.abs(c_raw) <= cell_clip
    if wrong == "no mask":
        dc_raw = dc_new_total
    elif wrong == "mask upstream":
        dc_raw = dc_new * inside + (dc_new_total - dc_new)
    else:
        dc_raw = dc_new_total * inside
    di = dc_raw * gj * gi * (1 - gi)
    dj = dc_raw * gi * (1 - gj ** 2)
    df = dc_raw * c * gf * (1 - gf)
    dc = dc_raw * gf if wrong == "no peepholes in dc" else dc_raw * gf + di * wi + df * wf
    dz = np.concatenate([di, dj, df, do], 1)
    dxm = dz @ K.T
    dwo = (do * c_new).sum(0)
    dbias = dz.mean(0) if wrong == "mean" else dz.sum(0)
    return (dxm[:, :D], dc, dxm[:, D:], xm.T @ dz, dbias, (di * c).sum(0), (df * c).sum(0),
            dwo, dP)


def cell_b(x, c, m, weights, forget_bias, cell_clip, dc_new, dm_new):
    """Step by step with named intermediate values, float64, results in a list."""
    w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    H = c.shape[1]
    D = x.shape[1]
    z = x @ w["kernel"][:D] + m @ w["kernel"][D:] + w["bias"]
    zi, zj, zf, zo = (z[:, k * H:(k + 1) * H] for k in range(4))
    i = sig(zi + w["w_i_diag"] * c)
    f = sig(zf + forget_bias + w["w_f_diag"] * c)
    g = np.tanh(zj)
    c_unclipped = f * c + i * g
    clipped = np.abs(c_unclipped) > cell_clip
    c1 = np.minimum(np.maximum(c_unclipped, -cell_clip), cell_clip)
    o = sig(zo + w["w_o_diag"] * c1)
    hidden = o * np.tanh(c1)  # (B, H) before the projection
    d_hidden = dm_new @ w["projection/kernel"].T
    d_zo = d_hidden * np.tanh(c1) * o * (1 - o)
    d_c1 = dc_new + d_hidden * o * (1 - np.tanh(c1) ** 2) + d_zo * w["w_o_diag"]
    d_c1[clipped] = 0.0
    d_zi = d_c1 * g * i * (1 - i)
    d_zj = d_c1 * i * (1 - g * g)
    d_zf = d_c1 * c * f * (1 - f)
    dz = np.hstack([d_zi, d_zj, d_zf, d_zo])
    d_c = d_c1 * f + d_zi * w["w_i_diag"] + d_zf * w["w_f_diag"]
    return [dz @ w["kernel"][:D].T, d_c, dz @ w["kernel"][D:].T,
            np.vstack([x.T @ dz, m.T @ dz]), dz.sum(axis=0), np.sum(d_zi * c, axis=0),
            np.sum(d_zf * c, axis=0), np.sum(d_zo * c1, axis=0), hidden.T @ dm_new]


def cell_c(x, c, m, weights, forget_bias, cell_clip, dc_new, dm_new, wrong=None):
    """Learner C: the forward pass with every value named, then backward in reverse."""
    w = weights
    D = x.shape[1]
    xm = np.concatenate([x, m], 1)
    i, j, f, o = np.split(xm @ w["kernel"] + w["bias"], 4, axis=1)
    gi, gj = sig(i + w["w_i_diag"] * c), np.tanh(j)
    gf = sig(f + forget_bias + w["w_f_diag"] * c)
    c_raw = gf * c + gi * gj
    c2 = np.clip(c_raw, -cell_clip, cell_clip)
    go = sig(o + w["w_o_diag"] * c2)
    hidden = go * np.tanh(c2)
    dhid = dm_new @ w["projection/kernel"].T
    do = dhid * np.tanh(c2) * go * (1 - go)
    dc2 = (dc_new + dhid * go * (1 - np.tanh(c2) ** 2) + do * w["w_o_diag"])
    dc2 = dc2 * (np.abs(c_raw) <= cell_clip)
    di, dj = dc2 * gj * gi * (1 - gi), dc2 * gi * (1 - gj ** 2)
    df = dc2 * (c2 if wrong == "df new c" else c) * gf * (1 - gf)
    dz = np.concatenate([di, dj, df, do], 1)
    dxm = dz @ w["kernel"].T
    dwo = (do * (c if wrong == "dwo old c" else c2)).sum(0)
    dm = dhid if wrong == "dm before projection" else dxm[:, D:]
    return (dxm[:, :D], dc2 * gf + di * w["w_i_diag"] + df * w["w_f_diag"], dm, xm.T @ dz,
            dz.sum(0), (di * c).sum(0), (df * c).sum(0), dwo, hidden.T @ dm_new)


# --- gradient_check ----------------------------------------------------------------------


def grad_check_a(x, h, kernel, bias, dh_new, dkernel, eps, wrong=None):
    def loss(k):
        return float(np.sum(np.tanh(np.concatenate([x, h], 1) @ k + bias) * dh_new))

    numeric = np.zeros(kernel.shape)
    for index in np.ndindex(*kernel.shape):
        plus, minus = kernel.copy(), kernel.copy()
        plus[index] += eps
        minus[index] -= eps
        if wrong == "forward":
            numeric[index] = (loss(plus) - loss(kernel)) / eps
        elif wrong == "no 2":
            numeric[index] = (loss(plus) - loss(minus)) / eps
        else:
            numeric[index] = (loss(plus) - loss(minus)) / (2 * eps)
    gap = np.abs(numeric - dkernel)
    if wrong == "sum":
        return numeric, float(np.max(gap / (np.abs(numeric) + np.abs(dkernel))))
    if wrong == "analytic only":
        return numeric, float(np.max(gap / np.abs(dkernel)))
    each = gap / np.maximum(np.abs(numeric), np.abs(dkernel))
    return numeric, float(np.mean(each) if wrong == "mean" else np.max(each))


def grad_check_b(x, h, kernel, bias, dh_new, dkernel, eps):
    """W and U apart, the kernel flattened, a list of rows for the numeric gradient."""
    D = x.shape[1]
    flat = kernel.ravel().astype(np.float64)

    def loss(values):
        k = values.reshape(kernel.shape)
        return np.sum(np.tanh(x @ k[:D] + h @ k[D:] + bias) * dh_new)

    steps = np.eye(flat.size) * eps
    numeric = np.array([(loss(flat + e) - loss(flat - e)) / (2 * eps) for e in steps])
    numeric = numeric.reshape(kernel.shape)
    a, b = np.abs(numeric), np.abs(dkernel)
    rel = np.where(np.maximum(a, b) > 0, np.abs(numeric - dkernel) / np.maximum(a, b), 0.0)
    return [numeric.tolist(), rel.max()]


def grad_check_c(x, h, kernel, bias, dh_new, dkernel, eps, wrong=None):
    """Learner C: nudges one entry at a time, the loss as a function of the kernel."""
    def loss(k):
        value = np.tanh(np.concatenate([x, h], 1) @ k + bias) * dh_new
        return value.mean() if wrong == "loss mean" else value.sum()

    numeric = np.zeros(kernel.shape)
    k = kernel if wrong == "in place" else kernel.copy()
    for index in np.ndindex(*kernel.shape):
        k[index] += eps
        up = loss(k)
        k[index] -= 2 * eps
        numeric[index] = (up - loss(k)) / (2 * eps)
        if wrong != "in place":
            k[index] += eps  # "put it back" (the in-place one forgets to)
    gap = np.abs(numeric - dkernel)
    if wrong == "global":
        return numeric, gap.max() / max(np.abs(numeric).max(), np.abs(dkernel).max())
    return numeric, float(np.max(gap / np.maximum(np.abs(numeric), np.abs(dkernel))))


RIGHT = {
    "clip_global_norm": [clip_a, clip_b, clip_in_place],
    "rnn_step_backward": [rnn_step_a, rnn_step_b, rnn_step_c],
    "rnn_backward": [rnn_seq_a, rnn_seq_b, rnn_seq_c],
    "truncated_rnn_backward": [trunc_a, trunc_b, trunc_c],
    "lstm_step_backward": [lstm_a, lstm_b, lstm_c],
    "split_grad_by_name": [by_name_a, by_name_search, by_name_op_outputs],
    "keras_grads_to_tf1": [keras_a, keras_b, keras_c],
    "lstm_cell_backward": [cell_a, cell_b, cell_c],
    "gradient_check": [grad_check_a, grad_check_b, grad_check_c],
}

WRONG = {
    "clip_global_norm": [
        (named(clip_a, "clip_each_tensor", wrong="per tensor"), "each tensor is clipped"),
        (named(clip_a, "clip_sum_of_norms", wrong="sum of norms"), "the global norm is the sum"),
        (named(clip_a, "clip_always", wrong="always"), "the tensors are rescaled even"),
        (named(clip_a, "clip_no_sqrt", wrong="no sqrt"), "the square root is missing"),
        (clip_returns_new_norm, None),
        (clip_rms, None),
        (clip_float16, None),
    ],
    "rnn_step_backward": [
        (named(rnn_step_a, "tanh_prime_at_z", wrong="tanh at z"), "tanh' is taken at the wrong"),
        (named(rnn_step_a, "no_tanh_prime", wrong="no tanh"), "the derivative of tanh is"),
        (named(rnn_step_a, "dkernel_transposed", wrong="transposed"), "dkernel is transposed"),
        (named(rnn_step_a, "dbias_per_row", wrong="bias"), "dbias is not summed"),
        (named(rnn_step_a, "dh_through_u_as_is", wrong="U as is"), "dh went through U"),
        (named(rnn_step_a, "dbias_mean_over_batch", wrong="mean"),
         "the bias gradient is averaged"),
        (named(rnn_step_a, "dxh_split_at_h", wrong="split at H"), "dx and dh are split at"),
        (rnn_step_side_by_side, "dW and dU are joined side by side"),
        (named(rnn_step_c, "tanh_prime_at_old_h", wrong="old h"), None),
        (named(rnn_step_c, "dkernel_mean_over_batch", wrong="dkernel mean"), None),
        (named(rnn_step_c, "dbias_summed_over_units", wrong="bias axis"), None),
    ],
    "rnn_backward": [
        (named(rnn_seq_a, "dh_not_carried", wrong="no carry"), "dh is not carried back"),
        (named(rnn_seq_a, "dkernel_overwritten", wrong="overwrite"),
         "the kernel's gradient is not accumulated"),
        (named(rnn_seq_a, "skips_step_0", wrong="skip 0"), "the backward loop skips step 0"),
        (named(rnn_seq_a, "tanh_prime_at_z_in_time", wrong="tanh at z"),
         "tanh' is taken at the wrong"),
        (named(rnn_seq_a, "dbias_mean_in_time", wrong="mean"), "the bias gradient is averaged"),
        (named(rnn_seq_c, "walks_forward", wrong="forward walk"), None),
        (named(rnn_seq_c, "dinputs_in_backward_order", wrong="dinputs reversed"), None),
        (named(rnn_seq_c, "tanh_prime_at_previous_state", wrong="tanh at h_t-1"), None),
    ],
    "truncated_rnn_backward": [
        (named(trunc_b, "not_truncated", wrong="full"), "the gradient is not truncated"),
        (named(trunc_a, "state_reset_per_chunk", wrong="reset"), "the state is reset"),
        (named(trunc_a, "last_chunk_only", wrong="keep last"), "only one chunk's gradient"),
        (named(trunc_a, "tail_dropped", wrong="drop tail"), "the last, shorter chunk"),
        (trunc_equal_pieces, "the last, shorter chunk"),
        (named(trunc_c, "cut_one_step_late", wrong="cut after"), None),
        (named(trunc_c, "chunks_averaged", wrong="mean of chunks"), None),
    ],
    "lstm_step_backward": [
        (named(lstm_a, "grad_for_forget_bias", wrong="d forget_bias"),
         "you returned a gradient for forget_bias"),
        (named(lstm_a, "keras_order", wrong="keras"), "the gradient's gate blocks are in Keras'"),
        (named(lstm_a, "sigmoid_f_without_bias", wrong="f no bias"), "sigmoid' of f is taken"),
        (named(lstm_a, "forget_bias_hard_coded", wrong="fb 1"), "the forget_bias argument"),
        (named(lstm_a, "forget_bias_left_out", wrong="fb 0"), "forget_bias is left out"),
        (named(lstm_a, "no_dc_from_dh", wrong="no c from h"), "the path from h' back to c'"),
        (named(lstm_a, "lstm_dbias_mean", wrong="mean"), "the bias gradient is averaged"),
        (named(lstm_a, "lstm_dkernel_transposed", wrong="transposed"), "dkernel is transposed"),
        (named(lstm_a, "lstm_dxh_split_at_h", wrong="split at H"), "dx and dh are split at"),
        (named(lstm_b, "lstm_dw_du_hstacked", wrong="hstack"), "dW and dU are joined side by"),
        (named(lstm_c, "dc_not_through_f", wrong="dc no f"), None),
        (named(lstm_c, "do_from_old_c", wrong="o old c"), None),
        (named(lstm_c, "dj_with_sigmoid_prime", wrong="j sigmoid prime"), None),
    ],
    "split_grad_by_name": [
        (named(by_name_a, "keras_blocks", wrong="keras"), "the blocks are in Keras' order"),
        (named(by_name_a, "next_step", wrong="next"), "you fetched the next step's"),
        (named(by_name_a, "previous_step", wrong="previous"), "you fetched the previous step's"),
        (named(by_name_a, "split_0_for_step_0", wrong="split_0"), "step 0 has no suffix"),
        (named(by_name_a, "forward_split", wrong="forward"), "you fetched the forward"),
        (named(by_name_a, "first_suffix_wrong", wrong="first suffix"),
         "you fetched the previous step's"),
        (by_name_rows, None),
        (by_name_no_feed, None),
        (by_name_numpy_bptt, "the gradients were not fetched from the graph"),
    ],
    "keras_grads_to_tf1": [
        (named(keras_a, "left_in_keras_order", wrong="keras order"),
         "the gate blocks are still in Keras' order"),
        (named(keras_a, "state_c_first", wrong="c first"), "the state went into the Keras"),
        (named(keras_a, "recurrent_stacked_first", wrong="recurrent first"),
         "the recurrent kernel's gradient is stacked"),
        (keras_loss_mean, None),
        (keras_loss_of_c, None),
        (keras_bias_not_reordered, None),
        (keras_numpy_backward, "the gradients were not taken by tf.GradientTape"),
    ],
    "lstm_cell_backward": [
        (named(cell_a, "clip_not_zeroed", wrong="no mask"), "the clipped region is not zeroed"),
        (named(cell_a, "clip_masks_upstream_only", wrong="mask upstream"),
         "only the upstream dc' is zeroed"),
        (named(cell_a, "no_o_peephole_path", wrong="no wo path"), "the o-peephole's path"),
        (named(cell_a, "clip_hard_coded", wrong="clip 1"), "cell_clip is taken as 1.0"),
        (named(cell_a, "dc_without_peepholes", wrong="no peepholes in dc"),
         "dc misses the peepholes' terms"),
        (named(cell_a, "dprojection_transposed", wrong="projection T"),
         "dprojection is transposed"),
        (named(cell_a, "cell_dbias_mean", wrong="mean"), "the bias gradient is averaged"),
        (named(cell_a, "cell_forget_bias_left_out", wrong="fb 0"), "forget_bias is left out"),
        (named(cell_c, "dwo_from_old_c", wrong="dwo old c"), None),
        (named(cell_c, "df_from_new_c", wrong="df new c"), None),
        (named(cell_c, "dm_before_projection", wrong="dm before projection"), None),
    ],
    "gradient_check": [
        (named(grad_check_a, "one_sided_difference", wrong="forward"),
         "the difference is one-sided"),
        (named(grad_check_a, "divided_by_eps", wrong="no 2"),
         "the centred difference is divided by eps"),
        (named(grad_check_a, "relative_over_sum", wrong="sum"),
         "the relative error divides by |a| + |b|"),
        (named(grad_check_a, "relative_error_mean", wrong="mean"),
         "the relative error is averaged"),
        (named(grad_check_a, "relative_to_analytic", wrong="analytic only"),
         "the relative error divides by |dkernel|"),
        (named(grad_check_c, "kernel_nudged_in_place", wrong="in place"), None),
        (named(grad_check_c, "relative_error_of_maxima", wrong="global"), None),
        (named(grad_check_c, "loss_as_mean", wrong="loss mean"), None),
    ],
}


# --- issue 35 (h35s): answers for the checks that test their skill ---------------------------
# 5.9: a "numerical" check that never takes a difference, returning the exact gradient from a
# backward pass written by hand; it passes wherever eps is small and fails at a large eps.


def grad_check_analytic(x, h, kernel, bias, dh_new, dkernel, eps):
    xh = np.concatenate([x, h], axis=1)  # (B, D + H)
    h_new = np.tanh(xh @ kernel + bias)
    numeric = xh.T @ ((1 - h_new**2) * dh_new)  # dL/dkernel, exactly
    scale = np.maximum(np.abs(numeric), np.abs(dkernel))
    return numeric, float(np.max(np.abs(numeric - dkernel) / scale))


WRONG["gradient_check"].append(
    (grad_check_analytic, "numeric is the exact gradient"))
