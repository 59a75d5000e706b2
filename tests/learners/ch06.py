"""Chapter 6 answers written the way learners write them (tests/test_sweep.py).

Each function is written from the exercise's text alone, as a learner would, with the wrong line
a learner writes; none calls the check's mistake models or rnnbook's reference.
"""
import numpy as np

OP = "rnn/gru_cell/split"
CELL = "rnn/gru_cell/"


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


# --- keras_gru_blocks -------------------------------------------------------------------------


def blocks_right(kernel):
    z, r, cand = np.split(kernel, 3, axis=1)
    return r, z, cand


def blocks_slices_lists(kernel):
    H = kernel.shape[1] // 3
    return (kernel[:, H:2 * H].tolist(), kernel[:, :H].tolist(),
            kernel[:, 2 * H:].astype(np.float64))


def blocks_tf1_order(kernel):
    r, z, cand = np.split(kernel, 3, axis=1)  # read as r, z, h~
    return r, z, cand


def blocks_rows(kernel):
    z, r, cand = np.split(kernel, 3, axis=0)
    return r, z, cand


def blocks_transposed(kernel):
    z, r, cand = np.split(kernel.T, 3, axis=0)
    return r, z, cand


def blocks_keras_order_returned(kernel):
    z, r, cand = np.split(kernel, 3, axis=1)
    return z, r, cand  # "in the kernel's order"


def blocks_h_from_rows(kernel):
    H = kernel.shape[0]  # "the kernel is (H, 3H)"
    return kernel[:, H:2 * H], kernel[:, :H], kernel[:, 2 * H:3 * H]


def blocks_float16(kernel):
    z, r, cand = np.split(kernel.astype(np.float16), 3, axis=1)  # "weights are small"
    return r, z, cand


# --- fresh_gru_step -----------------------------------------------------------------------


def fresh_right(x, h, gates_kernel, cand_kernel):
    H = h.shape[1]
    gates = sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel + 1.0)
    r, u = gates[:, :H], gates[:, H:]
    cand = np.tanh(np.concatenate([x, r * h], axis=1) @ cand_kernel)
    return u * h + (1 - u) * cand


def fresh_right_split_rows_float64(x, h, gates_kernel, cand_kernel):
    x, h = np.float64(x), np.float64(h)
    D, H = x.shape[1], h.shape[1]
    gates_bias = np.ones(2 * H)
    a = x @ gates_kernel[:D] + h @ gates_kernel[D:] + gates_bias
    r, u = np.split(sigmoid(a), 2, axis=1)
    cand = np.tanh(x @ cand_kernel[:D] + (r * h) @ cand_kernel[D:] + np.zeros(H))
    return (1 - u) * cand + u * h


def fresh_r_u_swapped(x, h, gates_kernel, cand_kernel):
    u, r = np.split(sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel + 1.0), 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * h], axis=1) @ cand_kernel)
    return u * h + (1 - u) * cand


def fresh_one_minus_u_on_h(x, h, gates_kernel, cand_kernel):
    r, u = np.split(sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel + 1.0), 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * h], axis=1) @ cand_kernel)
    return (1 - u) * h + u * cand


def fresh_no_bias(x, h, gates_kernel, cand_kernel):
    r, u = np.split(sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel), 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * h], axis=1) @ cand_kernel)
    return u * h + (1 - u) * cand


def fresh_all_biases_one(x, h, gates_kernel, cand_kernel):
    r, u = np.split(sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel + 1.0), 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * h], axis=1) @ cand_kernel + 1.0)
    return u * h + (1 - u) * cand


def fresh_reset_after(x, h, gates_kernel, cand_kernel):
    D = x.shape[1]
    r, u = np.split(sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel + 1.0), 2, axis=1)
    cand = np.tanh(x @ cand_kernel[:D] + r * (h @ cand_kernel[D:]))
    return u * h + (1 - u) * cand


def fresh_no_reset(x, h, gates_kernel, cand_kernel):
    xh = np.concatenate([x, h], axis=1)
    r, u = np.split(sigmoid(xh @ gates_kernel + 1.0), 2, axis=1)
    cand = np.tanh(xh @ cand_kernel)
    return u * h + (1 - u) * cand


def fresh_cand_h_first(x, h, gates_kernel, cand_kernel):
    H = h.shape[1]
    gates = sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel + 1.0)
    r, u = gates[:, :H], gates[:, H:]
    cand = np.tanh(np.concatenate([r * h, x], axis=1) @ cand_kernel)  # "the state first"
    return u * h + (1 - u) * cand


def fresh_bias_after_sigmoid(x, h, gates_kernel, cand_kernel):
    H = h.shape[1]
    gates = sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel) + 1.0  # "bias 1"
    r, u = gates[:, :H], gates[:, H:]
    cand = np.tanh(np.concatenate([x, r * h], axis=1) @ cand_kernel)
    return u * h + (1 - u) * cand


def fresh_tanh_gates(x, h, gates_kernel, cand_kernel):
    H = h.shape[1]
    gates = np.tanh(np.concatenate([x, h], axis=1) @ gates_kernel + 1.0)  # "RNN activation"
    r, u = gates[:, :H], gates[:, H:]
    cand = np.tanh(np.concatenate([x, r * h], axis=1) @ cand_kernel)
    return u * h + (1 - u) * cand


# --- keras_gru_step -----------------------------------------------------------------------


def keras_right(x, h, kernel, recurrent_kernel, bias):
    xz, xr, xh = np.split(x @ kernel + bias[0], 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel + bias[1], 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return z * h + (1 - z) * np.tanh(xh + r * hh)


def keras_right_loops(x, h, kernel, recurrent_kernel, bias):
    H = h.shape[1]
    W = {g: kernel[:, k * H:(k + 1) * H] for k, g in enumerate("zrh")}
    U = {g: recurrent_kernel[:, k * H:(k + 1) * H] for k, g in enumerate("zrh")}
    b_x = {g: bias[0][k * H:(k + 1) * H] for k, g in enumerate("zrh")}
    b_h = {g: bias[1][k * H:(k + 1) * H] for k, g in enumerate("zrh")}
    z = sigmoid(x @ W["z"] + b_x["z"] + h @ U["z"] + b_h["z"])
    r = sigmoid(x @ W["r"] + b_x["r"] + h @ U["r"] + b_h["r"])
    cand = np.tanh(x @ W["h"] + b_x["h"] + r * (h @ U["h"] + b_h["h"]))
    return [list(row) for row in (z * h + (1 - z) * cand)]


def keras_r_z_order(x, h, kernel, recurrent_kernel, bias):
    xr, xz, xh = np.split(x @ kernel + bias[0], 3, axis=1)
    hr, hz, hh = np.split(h @ recurrent_kernel + bias[1], 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return z * h + (1 - z) * np.tanh(xh + r * hh)


def keras_z_flipped(x, h, kernel, recurrent_kernel, bias):
    xz, xr, xh = np.split(x @ kernel + bias[0], 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel + bias[1], 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return (1 - z) * h + z * np.tanh(xh + r * hh)


def keras_reset_before(x, h, kernel, recurrent_kernel, bias):
    H = h.shape[1]
    b = bias[0] + bias[1]
    xz, xr, xh = np.split(x @ kernel + b, 3, axis=1)
    hz, hr, _ = np.split(h @ recurrent_kernel, 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    cand = np.tanh(xh + (r * h) @ recurrent_kernel[:, 2 * H:])
    return z * h + (1 - z) * cand


def keras_one_bias_row(x, h, kernel, recurrent_kernel, bias):
    xz, xr, xh = np.split(x @ kernel + bias[0], 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel, 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return z * h + (1 - z) * np.tanh(xh + r * hh)


def keras_bias_summed(x, h, kernel, recurrent_kernel, bias):
    xz, xr, xh = np.split(x @ kernel + bias.sum(axis=0), 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel, 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return z * h + (1 - z) * np.tanh(xh + r * hh)


def keras_bias_rows_swapped(x, h, kernel, recurrent_kernel, bias):
    xz, xr, xh = np.split(x @ kernel + bias[1], 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel + bias[0], 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return z * h + (1 - z) * np.tanh(xh + r * hh)


def keras_r_outside_bias(x, h, kernel, recurrent_kernel, bias):
    xz, xr, xh = np.split(x @ kernel + bias[0], 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel, 3, axis=1)
    bz, br, bh = np.split(bias[1], 3)
    z, r = sigmoid(xz + hz + bz), sigmoid(xr + hr + br)
    return z * h + (1 - z) * np.tanh(xh + r * hh + bh)  # "r gates the state's product"


def keras_bias_interleaved(x, h, kernel, recurrent_kernel, bias):
    b_x, b_h = bias.reshape(-1, 2).T  # "one pair of biases per unit"
    xz, xr, xh = np.split(x @ kernel + b_x, 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel + b_h, 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return z * h + (1 - z) * np.tanh(xh + r * hh)


def keras_float16(x, h, kernel, recurrent_kernel, bias):
    x, h = x.astype(np.float16), h.astype(np.float16)  # "GPU-style half precision"
    xz, xr, xh = np.split(x @ kernel.astype(np.float16) + bias[0], 3, axis=1)
    hz, hr, hh = np.split(h @ recurrent_kernel.astype(np.float16) + bias[1], 3, axis=1)
    z, r = sigmoid(xz + hz), sigmoid(xr + hr)
    return z * h + (1 - z) * np.tanh(xh + r * hh)


def keras_einsum(x, h, kernel, recurrent_kernel, bias):
    H = h.shape[1]
    a = np.einsum("bd,dk->bk", x, kernel) + bias[0]  # (B, 3H)
    b = np.einsum("bh,hk->bk", h, recurrent_kernel) + bias[1]
    z, r = sigmoid(a[:, :2 * H] + b[:, :2 * H]).reshape(-1, 2, H).transpose(1, 0, 2)
    return (z * h + (1 - z) * np.tanh(a[:, 2 * H:] + r * b[:, 2 * H:])).astype(np.float64)


# --- keras_from_tf1_gru -------------------------------------------------------------------


def port_right(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    r, u = np.split(gates_kernel, 2, axis=1)
    b_r, b_u = np.split(gates_bias, 2)
    full = np.concatenate([u, r, cand_kernel], axis=1)
    return full[:D], full[D:], np.concatenate([b_u, b_r, cand_bias])


def port_right_by_blocks(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    H = cand_bias.shape[0]
    kernel = np.hstack([gates_kernel[:D, H:], gates_kernel[:D, :H], cand_kernel[:D]])
    recurrent = np.hstack([gates_kernel[D:, H:], gates_kernel[D:, :H], cand_kernel[D:]])
    bias = [*gates_bias[H:], *gates_bias[:H], *cand_bias]
    return kernel.astype(np.float64), recurrent, bias


def port_tf1_order(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    full = np.concatenate([gates_kernel, cand_kernel], axis=1)
    return full[:D], full[D:], np.concatenate([gates_bias, cand_bias])


def port_rows_swapped(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    r, u = np.split(gates_kernel, 2, axis=1)
    b_r, b_u = np.split(gates_bias, 2)
    full = np.concatenate([u, r, cand_kernel], axis=1)
    return full[D:], full[:D], np.concatenate([b_u, b_r, cand_bias])


def port_two_bias_rows(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    r, u = np.split(gates_kernel, 2, axis=1)
    b_r, b_u = np.split(gates_bias, 2)
    full = np.concatenate([u, r, cand_kernel], axis=1)
    bias = np.concatenate([b_u, b_r, cand_bias])
    return full[:D], full[D:], np.stack([bias, np.zeros_like(bias)])


def port_bias_not_reordered(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    r, u = np.split(gates_kernel, 2, axis=1)
    full = np.concatenate([u, r, cand_kernel], axis=1)
    return full[:D], full[D:], np.concatenate([gates_bias, cand_bias])  # "a bias is a bias"


def port_no_cand_bias(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    r, u = np.split(gates_kernel, 2, axis=1)
    b_r, b_u = np.split(gates_bias, 2)
    full = np.concatenate([u, r, cand_kernel], axis=1)
    return full[:D], full[D:], np.concatenate([b_u, b_r, 0 * cand_bias])  # "starts at 0"


def port_split_at_h(gates_kernel, gates_bias, cand_kernel, cand_bias, D):
    H = cand_bias.shape[0]
    r, u = np.split(gates_kernel, 2, axis=1)
    b_r, b_u = np.split(gates_bias, 2)
    full = np.concatenate([u, r, cand_kernel], axis=1)
    return full[:-H - 1], full[-H - 1:], np.concatenate([b_u, b_r, cand_bias])


# --- torch_from_keras_gru -----------------------------------------------------------------


def _rzn(a):
    z, r, n = np.split(a, 3, axis=-1)
    return np.concatenate([r, z, n], axis=-1)


def torch_right(kernel, recurrent_kernel, bias):
    return _rzn(kernel).T, _rzn(recurrent_kernel).T, _rzn(bias[0]), _rzn(bias[1])


def torch_right_rows(kernel, recurrent_kernel, bias):
    H = recurrent_kernel.shape[0]

    def rows(w):  # w.T has rows z, r, n
        t = w.T
        return np.vstack([t[H:2 * H], t[:H], t[2 * H:]])

    b_ih = np.concatenate([bias[0][H:2 * H], bias[0][:H], bias[0][2 * H:]])
    b_hh = np.concatenate([bias[1][H:2 * H], bias[1][:H], bias[1][2 * H:]])
    return rows(kernel), rows(recurrent_kernel), list(b_ih), b_hh.astype(np.float64)


def torch_not_transposed(kernel, recurrent_kernel, bias):
    return _rzn(kernel), _rzn(recurrent_kernel), _rzn(bias[0]), _rzn(bias[1])


def torch_keras_order(kernel, recurrent_kernel, bias):
    return kernel.T, recurrent_kernel.T, bias[0], bias[1]


def torch_biases_summed(kernel, recurrent_kernel, bias):
    b = _rzn(bias[0] + bias[1])
    return _rzn(kernel).T, _rzn(recurrent_kernel).T, b, np.zeros_like(b)


def torch_reshaped(kernel, recurrent_kernel, bias):
    H = recurrent_kernel.shape[0]
    return (_rzn(kernel).reshape(3 * H, -1), _rzn(recurrent_kernel).reshape(3 * H, H),
            _rzn(bias[0]), _rzn(bias[1]))


def torch_biases_swapped(kernel, recurrent_kernel, bias):
    return _rzn(kernel).T, _rzn(recurrent_kernel).T, _rzn(bias[1]), _rzn(bias[0])  # "hh first"


def torch_hh_not_reordered(kernel, recurrent_kernel, bias):
    return _rzn(kernel).T, recurrent_kernel.T, _rzn(bias[0]), _rzn(bias[1])  # "U is square"


def torch_float16(kernel, recurrent_kernel, bias):
    half = [_rzn(a).astype(np.float16) for a in (kernel, recurrent_kernel, bias[0], bias[1])]
    return half[0].T, half[1].T, half[2], half[3]  # "PyTorch on GPU uses half"


def torch_rz_biases_in_ih(kernel, recurrent_kernel, bias):
    H = recurrent_kernel.shape[0]
    b_ih, b_hh = _rzn(bias[0]), _rzn(bias[1])
    b_ih[:2 * H] += b_hh[:2 * H]  # r and z see the sum of the two biases: keep one
    b_hh[:2 * H] = 0.0
    return _rzn(kernel).T, _rzn(recurrent_kernel).T, b_ih, b_hh


# --- gru_gates (API) ----------------------------------------------------------------------


def _split(t):
    return OP if t == 0 else f"{OP}_{t}"


def gates_right(session, inputs, t):
    r, z = session.run([f"{_split(t)}:0", f"{_split(t)}:1"], feed_dict={"x:0": inputs})
    return r, z


def gates_right_op_outputs(session, inputs, t):
    op = session.graph.get_operation_by_name(_split(t))
    x = session.graph.get_tensor_by_name("x:0")
    values = session.run(list(op.outputs), {x: inputs.astype(np.float64)})
    return tuple(values)


def gates_swapped(session, inputs, t):
    z, r = session.run([f"{_split(t)}:0", f"{_split(t)}:1"], {"x:0": inputs})
    return r, z


def gates_preactivation(session, inputs, t):
    sigmoid_op = session.graph.get_operation_by_name(_split(t)).inputs[1].op
    a = session.run(sigmoid_op.inputs[0], {"x:0": inputs})  # the Sigmoid's input
    return tuple(np.split(a, 2, axis=1))


def gates_next_step(session, inputs, t):
    return tuple(session.run([f"{OP}_{t + 1}:0", f"{OP}_{t + 1}:1"], {"x:0": inputs}))


def gates_step_0(session, inputs, t):
    return tuple(session.run([f"{OP}:0", f"{OP}:1"], {"x:0": inputs}))


def gates_split_0(session, inputs, t):
    return tuple(session.run([f"{OP}_{t}:0", f"{OP}_{t}:1"], {"x:0": inputs}))


def gates_no_feed(session, inputs, t):
    return tuple(session.run([f"{_split(t)}:0", f"{_split(t)}:1"]))


def gates_previous_step(session, inputs, t):
    op = OP if t <= 1 else f"{OP}_{t - 1}"  # "split_1 is the second split, step 1"
    return tuple(session.run([f"{op}:0", f"{op}:1"], {"x:0": inputs}))


def gates_time_major_feed(session, inputs, t):
    names = [f"{_split(t)}:0", f"{_split(t)}:1"]
    return tuple(session.run(names, {"x:0": inputs.transpose(1, 0, 2)}))  # "TF1 is time-major"


def gates_from_sigmoid(session, inputs, t):
    name = CELL + ("Sigmoid" if t == 0 else f"Sigmoid_{t}") + ":0"  # one Sigmoid per step
    value = session.run(name, {"x:0": inputs})
    return tuple(np.split(value, 2, axis=1))


def gates_recomputed(session, inputs, t):
    """Reads the four variables by name and recomputes the GRU up to step t in NumPy."""
    gk, gb = _read(session, "gates/kernel"), _read(session, "gates/bias")
    ck, cb = _read(session, "candidate/kernel"), _read(session, "candidate/bias")
    h = np.zeros((inputs.shape[0], cb.shape[0]))
    for step in range(t + 1):
        x = inputs[:, step]
        r, z = np.split(sigmoid(np.concatenate([x, h], 1) @ gk + gb), 2, axis=1)
        h = z * h + (1 - z) * np.tanh(np.concatenate([x, r * h], 1) @ ck + cb)
    return r, z

# --- keras_gru_from_session (API) ---------------------------------------------------------


def _read(session, name):
    return session.run(CELL + name + "/Read/ReadVariableOp:0")


def _keras_gru(inputs, kernel, recurrent, bias, **options):
    import keras

    layer = keras.layers.GRU(recurrent.shape[0], return_sequences=True, **options)
    layer.build(inputs.shape)
    layer.set_weights([kernel, recurrent, bias])
    return np.asarray(layer(inputs))


def from_session_right(session, inputs):
    gk, gb = _read(session, "gates/kernel"), _read(session, "gates/bias")
    ck, cb = _read(session, "candidate/kernel"), _read(session, "candidate/bias")
    D = inputs.shape[2]
    r, u = np.split(gk, 2, axis=1)
    b_r, b_u = np.split(gb, 2)
    full = np.concatenate([u, r, ck], axis=1)
    bias = np.concatenate([b_u, b_r, cb])
    return _keras_gru(inputs, full[:D], full[D:], bias, reset_after=False)


def from_session_variables(session, inputs):
    import keras

    values = {v.op.name.split("gru_cell/")[1]: session.run(v)
              for v in session.graph.get_collection("variables")}
    H = values["candidate/bias"].shape[0]
    D = inputs.shape[2]
    gk, ck = values["gates/kernel"], values["candidate/kernel"]
    kernel = np.concatenate([gk[:, H:], gk[:, :H], ck], axis=1)
    bias = np.concatenate([values["gates/bias"][H:], values["gates/bias"][:H],
                           values["candidate/bias"]])
    cell = keras.layers.GRUCell(H, reset_after=False)
    layer = keras.layers.RNN(cell, return_sequences=True)
    layer.build((None, None, D))
    layer.set_weights([kernel[:D], kernel[D:], bias])
    return layer(inputs).numpy().tolist()


def from_session_tf1_order(session, inputs):
    gk, gb = _read(session, "gates/kernel"), _read(session, "gates/bias")
    ck, cb = _read(session, "candidate/kernel"), _read(session, "candidate/bias")
    D = inputs.shape[2]
    full = np.concatenate([gk, ck], axis=1)
    return _keras_gru(inputs, full[:D], full[D:], np.concatenate([gb, cb]), reset_after=False)


def from_session_reset_after(session, inputs):
    gk, gb = _read(session, "gates/kernel"), _read(session, "gates/bias")
    ck, cb = _read(session, "candidate/kernel"), _read(session, "candidate/bias")
    D = inputs.shape[2]
    r, u = np.split(gk, 2, axis=1)
    b_r, b_u = np.split(gb, 2)
    full = np.concatenate([u, r, ck], axis=1)
    bias = np.concatenate([b_u, b_r, cb])
    return _keras_gru(inputs, full[:D], full[D:], np.stack([bias, 0 * bias]))


def from_session_time_major(session, inputs):
    return np.transpose(from_session_right(session, inputs), (1, 0, 2))


def from_session_handles(session, inputs):
    gk, gb = session.run(CELL + "gates/kernel:0"), session.run(CELL + "gates/bias:0")  # values
    ck, cb = session.run(CELL + "candidate/kernel:0"), session.run(CELL + "candidate/bias:0")
    D = inputs.shape[2]
    r, u = np.split(gk, 2, axis=1)
    full = np.concatenate([u, r, ck], axis=1)
    bias = np.concatenate([*np.split(gb, 2)[::-1], cb])
    return _keras_gru(inputs, full[:D], full[D:], bias, reset_after=False)


def from_session_last_output(session, inputs):
    import keras

    gk, gb = _read(session, "gates/kernel"), _read(session, "gates/bias")
    ck, cb = _read(session, "candidate/kernel"), _read(session, "candidate/bias")
    D, H = inputs.shape[2], cb.shape[0]
    full = np.concatenate([gk[:, H:], gk[:, :H], ck], axis=1)
    layer = keras.layers.GRU(H, reset_after=False)  # "the GRU's output"
    layer.build(inputs.shape)
    layer.set_weights([full[:D], full[D:], np.concatenate([gb[H:], gb[:H], cb])])
    return np.asarray(layer(inputs))


def from_session_no_cand_bias(session, inputs):
    gk, gb = _read(session, "gates/kernel"), _read(session, "gates/bias")
    ck = _read(session, "candidate/kernel")  # "the candidate has no bias of its own"
    D, H = inputs.shape[2], ck.shape[1]
    full = np.concatenate([gk[:, H:], gk[:, :H], ck], axis=1)
    bias = np.concatenate([gb[H:], gb[:H], np.zeros(H)])
    return _keras_gru(inputs, full[:D], full[D:], bias, reset_after=False)


RIGHT = {
    "keras_gru_blocks": [blocks_right, blocks_slices_lists],
    "fresh_gru_step": [fresh_right, fresh_right_split_rows_float64],
    "keras_gru_step": [keras_right, keras_right_loops, keras_einsum],
    "keras_from_tf1_gru": [port_right, port_right_by_blocks],
    "torch_from_keras_gru": [torch_right, torch_right_rows],
    "gru_gates": [gates_right, gates_right_op_outputs, gates_from_sigmoid],
    "keras_gru_from_session": [from_session_right, from_session_variables],
}

WRONG = {
    "keras_gru_blocks": [
        (blocks_tf1_order, "you read Keras' columns in TF1's and PyTorch's order"),
        (blocks_rows, "you split the rows"),  # raises: named by its error
        (blocks_transposed, "the blocks are transposed"),
        (blocks_keras_order_returned, None),
        (blocks_h_from_rows, None),
        (blocks_float16, None),
    ],
    "fresh_gru_step": [
        (fresh_r_u_swapped, "r and z (TF1's u) are swapped"),
        (fresh_one_minus_u_on_h, "z and 1 - z are swapped"),
        (fresh_no_bias, "the gates' bias is left at 0"),
        (fresh_all_biases_one, "the candidate's bias is 1.0 too"),
        (fresh_reset_after, "r is applied after the matmul"),
        (fresh_no_reset, "the reset gate is left out"),
        (fresh_cand_h_first, None),
        (fresh_bias_after_sigmoid, None),
        (fresh_tanh_gates, None),
    ],
    "keras_gru_step": [
        (keras_r_z_order, "you read Keras' blocks in TF1's and PyTorch's order"),
        (keras_z_flipped, "z and 1 - z are swapped"),
        (keras_reset_before, "r is applied before the matmul"),
        (keras_one_bias_row, "bias[1] is left out"),
        (keras_bias_summed, "the candidate's two biases were added together"),
        (keras_bias_rows_swapped, "bias's rows are swapped"),
        (keras_r_outside_bias, "the candidate's two biases were added together"),
        (keras_bias_interleaved, None),
        (keras_float16, None),
    ],
    "keras_from_tf1_gru": [
        (port_tf1_order, "the gate blocks are still in TF1's order"),
        (port_rows_swapped, "kernel and recurrent_kernel are swapped"),
        (port_two_bias_rows, "that bias is reset_after=True's"),
        (port_bias_not_reordered, None),
        (port_no_cand_bias, None),
        (port_split_at_h, None),
    ],
    "torch_from_keras_gru": [
        (torch_not_transposed, "the weights are not transposed"),
        (torch_keras_order, "the blocks are still in Keras' order"),
        (torch_biases_summed, "the two biases were summed into one"),
        (torch_reshaped, "the weights are reshaped, not transposed"),
        (torch_biases_swapped, None),
        (torch_hh_not_reordered, None),
        (torch_float16, None),
    ],
    "gru_gates": [
        (gates_swapped, "r and z are swapped"),
        (gates_preactivation, "these are the pre-activations"),
        (gates_next_step, "you fetched the next step's split"),
        (gates_step_0, "you fetched step 0's split"),
        (gates_split_0, "`split_0` does not exist"),  # raises at t = 0, named
        (gates_no_feed, "the placeholder 'x:0' is not fed"),  # raises: named by its error
        (gates_previous_step, None),
        (gates_time_major_feed, None),
        (gates_recomputed, "the gates' values were not fetched from the graph"),
    ],
    "keras_gru_from_session": [
        (from_session_tf1_order, "the gate blocks are still in TF1's order"),
        (from_session_reset_after, "the layer has reset_after=True"),
        (from_session_time_major, "the outputs are time-major"),
        (from_session_handles, None),
        (from_session_last_output, None),
        (from_session_no_cand_bias, None),
    ],
}

#: Right answers the check rejects today (issue 35): tests/test_sweep.py holds each as a
#: strict xfail, red once the check accepts it on every seed (then move it to RIGHT).
#: r and z see only bias_ih + bias_hh, so any split of it is right: accepted since the
#: conversions are checked by the function they compute. None today.


# --- issue 35 (h35s): answers for the checks that test their skill ---------------------------
# 6.7 without a Keras layer: TF1's own outputs fetched from the session, and a NumPy unroll of
# the weights read from it. Both give TF1's numbers and build no layer.


def from_session_tf1_outputs(session, inputs):
    T = inputs.shape[1]
    names = [f"{CELL}add" + (f"_{t}" if t else "") + ":0" for t in range(T)]
    steps = session.run(names, {"x:0": inputs})  # T x (B, H): each step's new h
    return np.stack(steps, axis=1)


def from_session_numpy(session, inputs):
    gk, gb = _read(session, "gates/kernel"), _read(session, "gates/bias")
    ck, cb = _read(session, "candidate/kernel"), _read(session, "candidate/bias")
    H = cb.shape[0]
    h = np.zeros((inputs.shape[0], H))
    outputs = []
    for t in range(inputs.shape[1]):
        x = inputs[:, t]
        gates = sigmoid(np.concatenate([x, h], 1) @ gk + gb)
        r, u = gates[:, :H], gates[:, H:]
        cand = np.tanh(np.concatenate([x, r * h], 1) @ ck + cb)
        h = u * h + (1 - u) * cand
        outputs.append(h)
    return np.stack(outputs, axis=1)


def from_session_layer_unused(session, inputs):
    """A Keras GRU built (with its own random weights), TF1's outputs returned."""
    import keras

    keras.layers.GRU(3, return_sequences=True)(inputs)
    return from_session_tf1_outputs(session, inputs)


WRONG["keras_gru_from_session"] += [
    (from_session_tf1_outputs, "no Keras 3 GRU layer was built"),
    (from_session_numpy, "no Keras 3 GRU layer was built"),
    (from_session_layer_unused, "the outputs returned are not the outputs"),
]


# 6.5 right in another layout: PyTorch adds the r and z blocks of its two biases before the
# sigmoid, so moving them all into bias_ih computes the same function (the chapter's own cell
# shows it); only the n blocks must stay apart.


def torch_right_biases_split(kernel, recurrent_kernel, bias):
    H = recurrent_kernel.shape[0]
    w_ih, w_hh, b_ih, b_hh = torch_right(kernel, recurrent_kernel, bias)
    b_ih, b_hh = b_ih.copy(), b_hh.copy()
    b_ih[:2 * H] += b_hh[:2 * H]  # r and z: one sum either way
    b_hh[:2 * H] = 0
    return w_ih, w_hh, b_ih, b_hh


RIGHT["torch_from_keras_gru"] += [torch_right_biases_split, torch_rz_biases_in_ih]
