"""Chapter 3 answers written the way learners write them, right and wrong (see tests/test_sweep.py).

Written from the exercises' text, not from rnnbook's checks or reference: each wrong answer is a
plausible program with one wrong line, and the string beside it is the start of the mistake
sentence the check must name.
"""
import numpy as np

import rnnbook

tf = rnnbook.setup()


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


# --- split_state ------------------------------------------------------------------------------


def split_slices(state, num_units):
    return state[:, :num_units], state[:, num_units:]


def split_np_split(state, num_units):
    c, m = np.split(state, [num_units], axis=1)
    return c, m


def split_lists_float64(state, num_units):
    state = np.asarray(state, dtype=np.float64)
    return [state[:, :num_units], state[:, num_units:]]


def split_halves(state, num_units):
    half = state.shape[1] // 2
    return state[:, :half], state[:, half:]


def split_np_halves(state, num_units):
    c, m = np.split(state, 2, axis=1)
    return c, m


def split_h_first(state, num_units):
    num_proj = state.shape[1] - num_units
    h = state[:, :num_proj]
    c = state[:, num_proj:]
    return c, h


def split_swapped(state, num_units):
    c = state[:, :num_units]
    m = state[:, num_units:]
    return m, c


def split_m_as_wide_as_c(state, num_units):
    return state[:, :num_units], state[:, num_units:2 * num_units]


def split_c_from_the_end(state, num_units):
    c = state[:, -num_units:]  # "the memory is kept last"
    m = state[:, :-num_units]
    return c, m


def split_rows(state, num_units):
    return state[:num_units], state[num_units:]  # "the first num_units are c"


def split_off_by_one(state, num_units):
    return state[:, :num_units + 1], state[:, num_units + 1:]  # "c ends at num_units"


def split_float16(state, num_units):
    state = state.astype(np.float16)  # "a state is small numbers"
    return state[:, :num_units], state[:, num_units:]


def split_hsplit(state, num_units):
    c, m = np.hsplit(np.array(state, dtype=np.float32), [num_units])
    return c, m


# --- step_lstm_cell -----------------------------------------------------------------------


def step_tuple_or_concat(cell, x, c, m):
    if isinstance(cell.state_size, tuple):  # LSTMStateTuple(c=num_units, h=num_proj)
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, m))
        return new.c, new.h
    _, new = cell(x, tf.concat([c, m], axis=1))
    H = c.shape[1]
    return new[:, :H], new[:, H:]


def step_by_config(cell, x, c, m):
    if cell.get_config()["state_is_tuple"]:
        output, (c_new, m_new) = cell(x, (c, m))
        return np.float64(c_new.numpy()), np.float64(m_new.numpy())
    output, state = cell(x, np.concatenate([c, m], axis=1))
    state = state.numpy()
    width_c = cell.state_size - cell.output_size
    return state[:, :width_c], state[:, width_c:]


def step_concat_h_first(cell, x, c, m):
    if isinstance(cell.state_size, tuple):
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, m))
        return new.c, new.h
    _, new = cell(x, tf.concat([m, c], axis=1))  # h first, as in Keras
    H = c.shape[1]
    return new[:, :H], new[:, H:]


def step_read_h_first(cell, x, c, m):
    if isinstance(cell.state_size, tuple):
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, m))
        h, c_new = new
        return c_new, h
    _, new = cell(x, tf.concat([c, m], axis=1))
    P = m.shape[1]
    return new[:, P:], new[:, :P]


def step_halves(cell, x, c, m):
    if isinstance(cell.state_size, tuple):
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, m))
        return new.c, new.h
    _, new = cell(x, tf.concat([c, m], axis=1))
    c_new, m_new = tf.split(new, 2, axis=1)
    return c_new, m_new


def step_returns_m_c(cell, x, c, m):
    if isinstance(cell.state_size, tuple):
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, m))
        return new.h, new.c
    _, new = cell(x, tf.concat([c, m], axis=1))
    H = c.shape[1]
    return new[:, H:], new[:, :H]


def step_concat_h_first_np(cell, x, c, m):
    if cell.get_config()["state_is_tuple"]:
        _, (c_new, m_new) = cell(x, (c, m))
        return c_new, m_new
    _, new = cell(x, np.concatenate([m, c], axis=1))  # [m, c]: the output first
    new = np.asarray(new)
    return new[:, :c.shape[1]], new[:, c.shape[1]:]


def step_returns_whole(cell, x, c, m):
    if isinstance(cell.state_size, tuple):
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, m))
        return new.c, new.h
    _, new = cell(x, tf.concat([c, m], axis=1))
    return new  # the new state as the cell keeps it


def step_zero_state(cell, x, c, m):
    _, new = cell(x, cell.zero_state(x.shape[0], tf.float32))
    if isinstance(new, tuple):
        return new.c, new.h
    H = c.shape[1]
    return new[:, :H], new[:, H:]


def step_tuple_m_first(cell, x, c, m):
    if isinstance(cell.state_size, tuple):
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(m, c))  # "(h, c), as Keras"
        return new.c, new.h
    _, new = cell(x, tf.concat([c, m], axis=1))
    H = c.shape[1]
    return new[:, :H], new[:, H:]


def step_returns_old_c(cell, x, c, m):
    if isinstance(cell.state_size, tuple):
        _, new = cell(x, tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, m))
        return c, new.h  # "c is the memory, it is carried"
    _, new = cell(x, tf.concat([c, m], axis=1))
    return c, new[:, c.shape[1]:]


def step_numpy_restated(cell, x, c, m):
    """Reads the cell's weights and options, and restates LSTMCell in NumPy."""
    weights = {v.name.split("/")[-1].split(":")[0]: v.numpy() for v in cell.variables
               if "projection" not in v.name}
    projection = [v.numpy() for v in cell.variables if "projection" in v.name]
    i, j, f, o = np.split(np.concatenate([x, m], 1) @ weights["kernel"] + weights["bias"], 4, 1)
    if cell._use_peepholes:
        f, i = f + weights["w_f_diag"] * c, i + weights["w_i_diag"] * c
    c_new = sigmoid(f + cell._forget_bias) * c + sigmoid(i) * np.tanh(j)
    if cell._cell_clip is not None:
        c_new = np.clip(c_new, -cell._cell_clip, cell._cell_clip)
    if cell._use_peepholes:
        o = o + weights["w_o_diag"] * c_new
    m_new = sigmoid(o) * np.tanh(c_new)
    if projection:
        m_new = m_new @ projection[0]
        if cell._proj_clip is not None:
            m_new = np.clip(m_new, -cell._proj_clip, cell._proj_clip)
    return c_new, m_new

# --- lstm_cell_step -----------------------------------------------------------------------


def cell_step_solution(x, c, m, weights, use_peepholes=False, cell_clip=None, num_proj=None,
                       proj_clip=None, forget_bias=1.0):
    z = np.concatenate([x, m], axis=1) @ weights["kernel"] + weights["bias"]
    i, j, f, o = np.split(z, 4, axis=1)
    if use_peepholes:
        i = i + weights["w_i_diag"] * c
        f = f + weights["w_f_diag"] * c
    c_new = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    if cell_clip is not None:
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    if use_peepholes:
        o = o + weights["w_o_diag"] * c_new
    m_new = sigmoid(o) * np.tanh(c_new)
    if num_proj is not None:
        m_new = m_new @ weights["projection/kernel"]
        if proj_clip is not None:
            m_new = np.clip(m_new, -proj_clip, proj_clip)
    return c_new, m_new


def cell_step_float64_inplace(x, c, m, weights, use_peepholes=False, cell_clip=None,
                              num_proj=None, proj_clip=None, forget_bias=1.0):
    x, c, m = (np.asarray(a, np.float64) for a in (x, c, m))
    H = c.shape[1]
    z = np.hstack([x, m]).dot(weights["kernel"].astype(np.float64))
    z += weights["bias"]
    gates = {name: z[:, k * H:(k + 1) * H] for k, name in enumerate("ijfo")}
    if use_peepholes:
        gates["i"] += weights["w_i_diag"] * c
        gates["f"] += weights["w_f_diag"] * c
    c_new = c * (1 / (1 + np.exp(-(gates["f"] + forget_bias))))
    c_new += np.tanh(gates["j"]) / (1 + np.exp(-gates["i"]))
    if cell_clip:
        np.clip(c_new, -cell_clip, cell_clip, out=c_new)
    if use_peepholes:
        gates["o"] += weights["w_o_diag"] * c_new
    m_new = np.tanh(c_new) / (1 + np.exp(-gates["o"]))
    if num_proj:
        m_new = m_new @ weights["projection/kernel"]
        if proj_clip:
            m_new = np.minimum(np.maximum(m_new, -proj_clip), proj_clip)
    return [c_new, m_new]


def _learner_step(x, c, m, weights, use_peepholes, cell_clip, num_proj, proj_clip, forget_bias,
                  wrong):
    """One learner's LSTMCell step with one wrong line, picked by ``wrong``."""
    z = np.concatenate([x, m], axis=1) @ weights["kernel"] + weights["bias"]
    if wrong == "keras order":
        i, f, j, o = np.split(z, 4, axis=1)
    else:
        i, j, f, o = np.split(z, 4, axis=1)
    if wrong == "forget_bias 1":
        forget_bias = 1.0
    if wrong == "no forget_bias":
        forget_bias = 0.0
    peep = use_peepholes and wrong != "no peepholes"
    if peep:
        i = i + weights["w_i_diag"] * c
        f = f + weights["w_f_diag"] * c
    c_new = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    unclipped = c_new
    if cell_clip is not None and wrong not in ("clip m", "no cell_clip", "clip after m"):
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    if peep:
        seen = {"o on old c": c, "o on unclipped c": unclipped}.get(wrong, c_new)
        o = o + weights["w_o_diag"] * seen
    m_new = sigmoid(o) * np.tanh(c_new)
    if cell_clip is not None and wrong == "clip m":
        m_new = np.clip(m_new, -cell_clip, cell_clip)
    if cell_clip is not None and wrong == "clip after m":
        c_new = np.clip(c_new, -cell_clip, cell_clip)  # the state is clipped, m came first
    if wrong == "project c" and num_proj is not None:  # the wrong one projected, then clipped
        if proj_clip is not None:
            m_new = np.clip(m_new, -proj_clip, proj_clip)
        return c_new @ weights["projection/kernel"], m_new
    if num_proj is not None and wrong != "no projection":
        if proj_clip is not None and wrong == "proj_clip first":
            m_new = np.clip(m_new, -proj_clip, proj_clip)
        m_new = m_new @ weights["projection/kernel"]
        if proj_clip is not None and wrong not in ("proj_clip first", "no proj_clip"):
            m_new = np.clip(m_new, -proj_clip, proj_clip)
    if wrong == "swapped":
        return m_new, c_new
    return c_new, m_new


def _wrong_step(wrong):
    def lstm_cell_step(x, c, m, weights, use_peepholes=False, cell_clip=None, num_proj=None,
                       proj_clip=None, forget_bias=1.0):
        return _learner_step(x, c, m, weights, use_peepholes, cell_clip, num_proj, proj_clip,
                             forget_bias, wrong)
    lstm_cell_step.__name__ = f"cell_step_{wrong.replace(' ', '_')}"
    return lstm_cell_step


def cell_step_forget_bias_hardcoded(x, c, m, weights, use_peepholes=False, cell_clip=None,
                                    num_proj=None, proj_clip=None, forget_bias=1.0):
    z = np.concatenate([x, m], axis=1) @ weights["kernel"] + weights["bias"]
    i, j, f, o = np.split(z, 4, axis=1)
    if use_peepholes:
        i = i + weights["w_i_diag"] * c
        f = f + weights["w_f_diag"] * c
    c_new = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(j)  # TF's default forget_bias
    if cell_clip is not None:
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    if use_peepholes:
        o = o + weights["w_o_diag"] * c_new
    m_new = sigmoid(o) * np.tanh(c_new)
    if num_proj is not None:
        m_new = m_new @ weights["projection/kernel"]
        if proj_clip is not None:
            m_new = np.clip(m_new, -proj_clip, proj_clip)
    return c_new, m_new


def cell_step_no_proj_clip(x, c, m, weights, use_peepholes=False, cell_clip=None,
                           num_proj=None, proj_clip=None, forget_bias=1.0):
    z = np.concatenate([x, m], axis=1) @ weights["kernel"] + weights["bias"]
    i, j, f, o = np.split(z, 4, axis=1)
    if use_peepholes:
        i, f = i + weights["w_i_diag"] * c, f + weights["w_f_diag"] * c
    c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    if cell_clip is not None:
        c = np.clip(c, -cell_clip, cell_clip)
    if use_peepholes:
        o = o + weights["w_o_diag"] * c
    m = sigmoid(o) * np.tanh(c)
    if num_proj:
        m = m @ weights["projection/kernel"]  # forgot proj_clip
    return c, m


def cell_step_no_f_peephole(x, c, m, weights, use_peepholes=False, cell_clip=None,
                            num_proj=None, proj_clip=None, forget_bias=1.0):
    i, j, f, o = np.split(np.hstack([x, m]) @ weights["kernel"] + weights["bias"], 4, 1)
    if use_peepholes:
        i = i + weights["w_i_diag"] * c  # "peepholes feed i and o"
    c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    c = c if cell_clip is None else np.clip(c, -cell_clip, cell_clip)
    o = o + weights["w_o_diag"] * c if use_peepholes else o
    m = sigmoid(o) * np.tanh(c)
    m = m if num_proj is None else m @ weights["projection/kernel"]
    return c, (m if proj_clip is None or num_proj is None else np.clip(m, -proj_clip, proj_clip))


def cell_step_clip_above_only(x, c, m, weights, use_peepholes=False, cell_clip=None,
                              num_proj=None, proj_clip=None, forget_bias=1.0):
    i, j, f, o = np.split(np.hstack([x, m]) @ weights["kernel"] + weights["bias"], 4, 1)
    if use_peepholes:
        i, f = i + weights["w_i_diag"] * c, f + weights["w_f_diag"] * c
    c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    c = c if cell_clip is None else np.minimum(c, cell_clip)  # "clip: at most cell_clip"
    o = o + weights["w_o_diag"] * c if use_peepholes else o
    m = sigmoid(o) * np.tanh(c)
    m = m if num_proj is None else m @ weights["projection/kernel"]
    return c, (m if proj_clip is None or num_proj is None else np.clip(m, -proj_clip, proj_clip))


def cell_step_projection_transposed(x, c, m, weights, use_peepholes=False, cell_clip=None,
                                    num_proj=None, proj_clip=None, forget_bias=1.0):
    i, j, f, o = np.split(np.hstack([x, m]) @ weights["kernel"] + weights["bias"], 4, 1)
    if use_peepholes:
        i, f = i + weights["w_i_diag"] * c, f + weights["w_f_diag"] * c
    c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    c = c if cell_clip is None else np.clip(c, -cell_clip, cell_clip)
    o = o + weights["w_o_diag"] * c if use_peepholes else o
    m = sigmoid(o) * np.tanh(c)
    m = m if num_proj is None else m @ weights["projection/kernel"].T  # "P x H, as W x"
    return c, (m if proj_clip is None or num_proj is None else np.clip(m, -proj_clip, proj_clip))


def cell_step_compact(x, c, m, weights, use_peepholes=False, cell_clip=None,
                      num_proj=None, proj_clip=None, forget_bias=1.0):
    i, j, f, o = np.split(np.hstack([x, m]) @ weights["kernel"] + weights["bias"], 4, 1)
    if use_peepholes:
        i, f = i + weights["w_i_diag"] * c, f + weights["w_f_diag"] * c
    c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    c = c if cell_clip is None else np.clip(c, -cell_clip, cell_clip)
    o = o + weights["w_o_diag"] * c if use_peepholes else o
    m = sigmoid(o) * np.tanh(c)
    m = m if num_proj is None else m @ weights["projection/kernel"]
    return c, (m if proj_clip is None or num_proj is None else np.clip(m, -proj_clip, proj_clip))


# --- keras_from_pytorch -------------------------------------------------------------------


def torch_transpose(weight_ih, weight_hh, bias_ih, bias_hh):
    return weight_ih.T, weight_hh.T, bias_ih + bias_hh


def torch_np_transpose_float64(weight_ih, weight_hh, bias_ih, bias_hh):
    kernel = np.transpose(weight_ih).astype(np.float64)
    recurrent = np.transpose(weight_hh).astype(np.float64)
    bias = np.add(bias_ih, bias_hh, dtype=np.float64)
    return [kernel, recurrent, bias]


def torch_not_transposed(weight_ih, weight_hh, bias_ih, bias_hh):
    return weight_ih, weight_hh, bias_ih + bias_hh


def torch_reshaped(weight_ih, weight_hh, bias_ih, bias_hh):
    D, H = weight_ih.shape[1], weight_hh.shape[1]
    return weight_ih.reshape(D, 4 * H), weight_hh.reshape(H, 4 * H), bias_ih + bias_hh


def torch_one_bias(weight_ih, weight_hh, bias_ih, bias_hh):
    return weight_ih.T, weight_hh.T, bias_ih


def torch_bias_hh_only(weight_ih, weight_hh, bias_ih, bias_hh):
    return np.transpose(weight_ih), np.transpose(weight_hh), np.array(bias_hh)


def torch_reordered(weight_ih, weight_hh, bias_ih, bias_hh):
    def swap(a):  # i, f, g, o -> i, g, f, o, "as TF1 does"
        i, f, g, o = np.split(a, 4, axis=-1)
        return np.concatenate([i, g, f, o], axis=-1)
    return swap(weight_ih.T), swap(weight_hh.T), swap(bias_ih + bias_hh)


def torch_forget_bias_added(weight_ih, weight_hh, bias_ih, bias_hh):
    H = weight_hh.shape[1]
    bias = bias_ih + bias_hh
    bias[H:2 * H] += 1.0
    return weight_ih.T, weight_hh.T, bias


def torch_bias_averaged(weight_ih, weight_hh, bias_ih, bias_hh):
    return weight_ih.T, weight_hh.T, (bias_ih + bias_hh) / 2  # "one bias from the two"


def torch_hh_not_transposed(weight_ih, weight_hh, bias_ih, bias_hh):
    return weight_ih.T, weight_hh, bias_ih + bias_hh  # "(4H, H) fits already... it is square?"


def torch_float16(weight_ih, weight_hh, bias_ih, bias_hh):
    return (weight_ih.T.astype(np.float16), weight_hh.T.astype(np.float16),  # "half size"
            (bias_ih + bias_hh).astype(np.float16))


def torch_blockwise(weight_ih, weight_hh, bias_ih, bias_hh):
    kernel = np.hstack([block.T for block in np.split(weight_ih, 4)])  # (D, H) per gate
    recurrent = np.hstack([block.T for block in np.split(weight_hh, 4)])
    return kernel, recurrent, np.sum([bias_ih, bias_hh], axis=0)


# --- keras_from_tf1 -----------------------------------------------------------------------


def tf1_port(kernel, bias, forget_bias, input_depth):
    i, j, f, o = np.split(kernel, 4, axis=1)
    kernel = np.concatenate([i, f, j, o], axis=1)
    bi, bj, bf, bo = np.split(bias, 4)
    bias = np.concatenate([bi, bf + forget_bias, bj, bo])
    return kernel[:input_depth], kernel[input_depth:], bias


def tf1_port_index(kernel, bias, forget_bias, input_depth):
    H = kernel.shape[1] // 4
    columns = np.r_[0:H, 2 * H:3 * H, H:2 * H, 3 * H:4 * H]
    new_bias = bias[columns].astype(np.float64)
    new_bias[H:2 * H] += forget_bias
    return kernel[:input_depth, columns], kernel[input_depth:, columns], new_bias


def _tf1_port_wrong(kernel, bias, forget_bias, input_depth, wrong):
    H = kernel.shape[1] // 4
    if wrong in ("unordered", "only split"):
        order = [0, 1, 2, 3]
    else:
        order = [0, 2, 1, 3]
    blocks = np.split(kernel, 4, axis=1)
    kernel = np.concatenate([blocks[k] for k in order], axis=1)
    pieces = np.split(bias, 4)
    bias = np.concatenate([pieces[k] for k in order])
    fold = {"no fold": 0.0, "fold 1": 1.0, "only split": 0.0}.get(wrong, forget_bias)
    if wrong == "fold everywhere":
        bias = bias + fold
    elif wrong == "fold third block":
        bias[2 * H:3 * H] += fold
    else:
        bias[H:2 * H] += fold
    if wrong == "kernels swapped":
        return kernel[input_depth:], kernel[:input_depth], bias
    return kernel[:input_depth], kernel[input_depth:], bias


def _wrong_port(wrong):
    def keras_from_tf1(kernel, bias, forget_bias, input_depth):
        return _tf1_port_wrong(kernel, bias, forget_bias, input_depth, wrong)
    keras_from_tf1.__name__ = f"tf1_port_{wrong.replace(' ', '_')}"
    return keras_from_tf1


def tf1_port_forget_bias_one(kernel, bias, forget_bias, input_depth):
    H = bias.shape[0] // 4
    order = np.concatenate([np.arange(H), np.arange(2 * H, 3 * H), np.arange(H, 2 * H),
                            np.arange(3 * H, 4 * H)])
    kernel, bias = kernel[:, order], bias[order].copy()
    bias[H:2 * H] += 1.0  # "the forget bias is 1"
    return kernel[:input_depth], kernel[input_depth:], bias


def tf1_port_kernel_only_reordered(kernel, bias, forget_bias, input_depth):
    i, j, f, o = np.split(kernel, 4, axis=1)
    kernel = np.concatenate([i, f, j, o], axis=1)
    H = bias.shape[0] // 4
    bias = bias.copy()
    bias[2 * H:3 * H] += forget_bias  # "f's bias": the blocks of the bias stay as they were
    return kernel[:input_depth], kernel[input_depth:], bias


def tf1_port_forget_bias_subtracted(kernel, bias, forget_bias, input_depth):
    i, j, f, o = np.split(kernel, 4, axis=1)
    bi, bj, bf, bo = np.split(bias, 4)
    kernel = np.concatenate([i, f, j, o], axis=1)
    bias = np.concatenate([bi, bf - forget_bias, bj, bo])  # "Keras must not add it again"
    return kernel[:input_depth], kernel[input_depth:], bias


def tf1_port_split_at_h(kernel, bias, forget_bias, input_depth):
    i, j, f, o = np.split(kernel, 4, axis=1)
    bi, bj, bf, bo = np.split(bias, 4)
    kernel = np.concatenate([i, f, j, o], axis=1)
    H = kernel.shape[1] // 4
    return kernel[:-H - 1], kernel[-H - 1:], np.concatenate([bi, bf + forget_bias, bj, bo])


def tf1_port_take(kernel, bias, forget_bias, input_depth):
    H = len(bias) // 4
    order = [k * H + u for k in (0, 2, 1, 3) for u in range(H)]
    new_bias = np.take(bias, order).astype(np.float32)
    new_bias[H:2 * H] += np.float32(forget_bias)
    moved = np.take(kernel, order, axis=1)
    return moved[:input_depth], moved[input_depth:], new_bias


# --- port_to_keras ------------------------------------------------------------------------


def move_get_weights(cell, state):
    kernel, bias = cell.get_weights()
    forget_bias = cell.get_config()["forget_bias"]
    H = bias.shape[0] // 4
    D = kernel.shape[0] - H
    i, j, f, o = np.split(kernel, 4, axis=1)
    kernel = np.concatenate([i, f, j, o], axis=1)
    bi, bj, bf, bo = np.split(bias, 4)
    bias = np.concatenate([bi, bf + forget_bias, bj, bo])
    if isinstance(state, tuple):
        c, h = state.c, state.h
    else:
        c, h = state[:, :H], state[:, H:]
    return [kernel[:D], kernel[D:], bias], [h, c]


def move_tf_ops(cell, state):
    kernel = next(v for v in cell.variables if v.name.endswith("kernel:0"))
    bias = next(v for v in cell.variables if v.name.endswith("bias:0"))
    H = cell.output_size
    D = kernel.shape[0] - H
    i, j, f, o = tf.split(kernel, 4, axis=1)
    new_kernel = tf.concat([i, f, j, o], axis=1)
    bi, bj, bf, bo = tf.split(bias, 4)
    new_bias = tf.concat([bi, bf + cell._forget_bias, bj, bo], axis=0)
    if cell.get_config()["state_is_tuple"]:
        c, h = state
    else:
        c, h = tf.split(state, 2, axis=1)  # no projection here: two halves of H
    return (new_kernel[:D], new_kernel[D:], new_bias), (h, c)


def _move_wrong(wrong):
    def port_to_keras(cell, state):
        kernel, bias = cell.get_weights()
        forget_bias = cell.get_config()["forget_bias"]
        H = bias.shape[0] // 4
        D = kernel.shape[0] - H
        order = [0, 1, 2, 3] if wrong == "unordered" else [0, 2, 1, 3]
        kernel = np.concatenate([np.split(kernel, 4, axis=1)[k] for k in order], axis=1)
        bias = np.concatenate([np.split(bias, 4)[k] for k in order])
        if wrong == "fold 1":
            forget_bias = 1.0
        if wrong == "no fold":
            forget_bias = 0.0
        if wrong == "fold everywhere":
            bias = bias + forget_bias
        else:
            bias[H:2 * H] += forget_bias
        if isinstance(state, tuple):
            c, h = state
        else:
            c, h = state[:, :H], state[:, H:]
        if wrong == "flat read h first" and not isinstance(state, tuple):
            h, c = state[:, :H], state[:, H:]
        initial = [c, h] if wrong == "c first" else [h, c]
        if wrong == "kernels swapped":
            return [kernel[D:], kernel[:D], bias], initial
        return [kernel[:D], kernel[D:], bias], initial
    port_to_keras.__name__ = f"move_{wrong.replace(' ', '_')}"
    return port_to_keras


def move_state_as_given(cell, state):
    """Hands Keras the TF1 state as it came: the LSTMStateTuple itself, or its two halves."""
    weights = move_get_weights(cell, state)[0]
    if isinstance(state, tuple):
        return weights, state
    return weights, np.split(state, 2, axis=1)


def move_c_first_tuple_only(cell, state):
    """Reads the tuple right, but hands Keras the TF1 order for both forms."""
    weights = move_get_weights(cell, state)[0]
    H = weights[1].shape[0]
    c, h = (state.c, state.h) if isinstance(state, tuple) else (state[:, :H], state[:, H:])
    return weights, [c, h]


def move_weights_unsplit(cell, state):
    weights, initial = move_get_weights(cell, state)
    kernel = np.concatenate(weights[:2])  # "one kernel, as the cell keeps it"
    return [kernel, weights[2]], initial


def move_zero_state(cell, state):
    weights = move_get_weights(cell, state)[0]
    B, H = np.asarray(state[0] if isinstance(state, tuple) else state).shape[0], cell.output_size
    return weights, [np.zeros((B, H)), np.zeros((B, H))]  # "a fresh layer starts from zeros"


def move_units_from_kernel(cell, state):
    weights = move_get_weights(cell, state)[0]
    H = weights[0].shape[1]  # "kernel is (D, H)"
    c, h = state if isinstance(state, tuple) else (state[:, :H], state[:, H:])
    return weights, [h, c]


# ---------------------------------------------------------------------------------------------

PORT_ORDER = "the gate blocks are still in TF1's order"

RIGHT = {
    "split_state": [split_slices, split_np_split, split_lists_float64, split_hsplit],
    "step_lstm_cell": [step_tuple_or_concat, step_by_config],
    "lstm_cell_step": [cell_step_solution, cell_step_float64_inplace, cell_step_compact],
    "keras_from_pytorch": [torch_transpose, torch_np_transpose_float64, torch_blockwise],
    "keras_from_tf1": [tf1_port, tf1_port_index, tf1_port_take],
    "port_to_keras": [move_get_weights, move_tf_ops],
}

WRONG = {
    "split_state": [
        (split_halves, "you cut the state into two equal halves"),
        (split_np_halves, "you cut the state into two equal halves"),
        (split_h_first, "you read the state as [h, c]"),
        (split_swapped, "c and m are swapped"),
        (split_m_as_wide_as_c, "m got num_units columns"),
        (split_c_from_the_end, "you read the state as [h, c]"),
        (split_rows, None),
        (split_off_by_one, None),
        (split_float16, None),
    ],
    "step_lstm_cell": [
        (step_concat_h_first, "the state went in h first"),
        (step_read_h_first, "you read the new state as [h, c]"),
        (step_halves, "you cut the new state into two equal halves"),
        (step_zero_state, "the cell ran from a zero state"),
        (step_returns_m_c, "c and m are swapped in what you return"),
        (step_concat_h_first_np, "the state went in h first"),
        (step_returns_whole, "the new state is returned whole"),
        (step_tuple_m_first, None),
        (step_returns_old_c, None),
        (step_numpy_restated, "the new state was not computed by the cell"),
    ],
    "lstm_cell_step": [
        (cell_step_forget_bias_hardcoded, "forget_bias is ignored"),
        (cell_step_no_proj_clip, "proj_clip is missing"),
        (_wrong_step("o on unclipped c"), "the output-gate peephole looks at the unclipped c"),
        (_wrong_step("clip m"), "cell_clip is applied to m"),
        (_wrong_step("proj_clip first"), "proj_clip is applied before the projection"),
        (_wrong_step("keras order"), "the gate blocks are in the wrong order"),
        (_wrong_step("clip after m"), "m is computed from the unclipped c"),
        (_wrong_step("no cell_clip"), "cell_clip is missing"),
        (_wrong_step("no peepholes"), "the peepholes are left out"),
        (_wrong_step("o on old c"), "the output-gate peephole looks at the previous c"),
        (_wrong_step("no forget_bias"), "forget_bias is missing"),
        (_wrong_step("swapped"), "c and m are swapped"),
        (_wrong_step("project c"), "the projection is applied to c"),
        (_wrong_step("no projection"), "the projection is missing"),
        (cell_step_no_f_peephole, None),
        (cell_step_clip_above_only, None),
        (cell_step_projection_transposed, None),
    ],
    "keras_from_pytorch": [
        (torch_not_transposed, "the PyTorch weights are not transposed"),
        (torch_reshaped, "the PyTorch weights are reshaped"),
        (torch_one_bias, "one of PyTorch's two biases is dropped"),
        (torch_bias_hh_only, "one of PyTorch's two biases is dropped"),
        (torch_reordered, "the gate blocks were moved"),
        (torch_forget_bias_added, "a forget bias was added"),
        (torch_bias_averaged, None),
        (torch_hh_not_transposed, None),
        (torch_float16, None),
    ],
    "keras_from_tf1": [
        (_wrong_port("no fold"), "forget_bias is not folded"),
        (tf1_port_forget_bias_one, "you folded 1.0, not the cell's forget_bias"),
        (_wrong_port("unordered"), PORT_ORDER),
        (_wrong_port("fold third block"), "forget_bias went into the wrong block"),
        (_wrong_port("kernels swapped"), "kernel and recurrent_kernel are swapped"),
        (_wrong_port("only split"), "the kernel was only split"),
        (_wrong_port("fold everywhere"), "forget_bias was added to the whole bias"),
        (tf1_port_kernel_only_reordered, None),
        (tf1_port_forget_bias_subtracted, None),
        (tf1_port_split_at_h, None),
    ],
    "port_to_keras": [
        (move_c_first_tuple_only, "h and c are swapped in initial_state"),
        (_move_wrong("flat read h first"), "h and c are swapped in initial_state"),
        (_move_wrong("fold 1"), "you folded 1.0, not the cell's forget_bias"),
        (_move_wrong("unordered"), PORT_ORDER),
        (_move_wrong("no fold"), "forget_bias is not folded"),
        (_move_wrong("kernels swapped"), "kernel and recurrent_kernel are swapped"),
        (_move_wrong("c first"), "h and c are swapped in initial_state"),
        (move_state_as_given, "h and c are swapped in initial_state"),
        (move_weights_unsplit, None),
        (move_zero_state, None),
        (move_units_from_kernel, None),
    ],
}
