"""Chapter 3 (c_state and m_state, LSTMCell's full step, Keras 3 and PyTorch): exercises and checks.

Oracles: TF1's real ``LSTMCell`` / ``BasicLSTMCell`` (:func:`rnnbook.oracles.run_tf1`) and Keras 3's
real ``LSTM`` (:func:`rnnbook.oracles.run_keras_lstm`). For the conversions the expected Keras
weights are computed here AND proven inside the oracle: the real Keras 3 LSTM with them must
reproduce the real TF1 cell (or, for PyTorch, which is not installed, a NumPy transcription of
the equations in PyTorch's ``nn.LSTM`` documentation) on a random sequence from a random state,
or the oracle raises. Notation (book/notation.md): ``B`` batch, ``T`` time, ``D`` input depth,
``H`` num_units, ``P`` num_proj; TF1 gate order i, j, f, o; Keras 3 and PyTorch i, f, c/g, o.
"""
import numpy as np

from rnnbook.checking import Chapter, Exercise, Mistake, normal, sigmoid
from rnnbook.oracles import run_keras_lstm, run_tf1, tensorflow

#: the oracle's own cross-check between TF1 / PyTorch's equations and Keras 3 (float32 loops)
AGREE = dict(rtol=1e-4, atol=1e-5)


def _blocks(a, order, axis=-1):
    """Reorder the four gate blocks of ``a`` along ``axis``: ``order`` lists old block indices."""
    parts = np.split(a, 4, axis=axis)
    return np.concatenate([parts[k] for k in order], axis=axis)


TF1_TO_KERAS = (0, 2, 1, 3)  # i, j, f, o -> i, f, j, o (the same swap goes back)


def _agree(name, got, want):
    for g, w in zip(got, want, strict=True):
        if not np.allclose(g, w, **AGREE):
            raise AssertionError(f"oracle for {name}: Keras 3 does not reproduce the reference")


def _lstm_cell(H, **options):
    return lambda: tensorflow().compat.v1.nn.rnn_cell.LSTMCell(H, **options)


def _basic_lstm_cell(H, **options):
    return lambda: tensorflow().compat.v1.nn.rnn_cell.BasicLSTMCell(H, **options)


# --- Exercise 3.1: split a concatenated state ------------------------------------------------


def _split_case(rng):
    B, D, H = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 6))
    P = int(rng.integers(1, 6)) if rng.random() < 0.6 else None  # num_proj, or no projection
    width = H + (P or H)
    return {"B": B, "D": D, "H": H, "num_proj": P,
            "state": normal(rng, B, width, scale=1.0)}  # (B, H + P): [c, m]


def _split_oracle(case):
    """What the real LSTMCell(state_is_tuple=False) itself reads as c_prev and m_prev: its two
    Slice ops, fetched while it runs on the case's concatenated state."""
    H, P = case["H"], case["num_proj"]
    x = np.zeros((case["B"], case["D"]), np.float32)
    cell = _lstm_cell(H, num_proj=P, state_is_tuple=False)
    _, _, c, m = run_tf1(cell, x, case["state"], fetch=["lstm_cell/Slice:0", "lstm_cell/Slice_1:0"])
    return c, m


split_state = Exercise(
    name="split_state",
    task="(c, m): c = the first num_units columns of the state, m = the rest",
    make_case=_split_case,
    call=lambda fn, c: fn(c["state"], c["H"]),
    oracle=_split_oracle,
    parts=("c", "m"),
    mistakes=(
        Mistake(
            "c and m are swapped: LSTMCell concatenates [c, m], c first, so c = "
            "state[:, :num_units] and m = state[:, num_units:].",
            lambda c: (c["state"][:, c["H"]:], c["state"][:, : c["H"]]),
        ),
        Mistake(
            "you read the state in Keras' order [h, c]: TF1's concatenated state is [c, m], so "
            "the first num_units columns are c.",
            lambda c: (c["state"][:, (c["num_proj"] or c["H"]):], c["state"][:, : (c["num_proj"] or c["H"])]),
        ),
        Mistake(
            "you cut the state into two equal halves: with num_proj, m has num_proj columns and c "
            "has num_units, so split at column num_units, not in the middle.",
            lambda c: tuple(np.split(c["state"], 2, axis=1)),
        ),
    ),
)


# --- Exercise 3.2: LSTMCell's full step ------------------------------------------------------


WEIGHT_NAMES = ("kernel", "bias", "w_i_diag", "w_f_diag", "w_o_diag", "projection/kernel")


def _step_case(rng):
    B, D, H = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    peepholes = bool(rng.random() < 0.7)
    P = int(rng.integers(1, 5)) if rng.random() < 0.6 else None
    case = {
        "B": B, "D": D, "H": H, "num_proj": P, "use_peepholes": peepholes,
        "cell_clip": round(float(rng.uniform(0.5, 1.5)), 2) if rng.random() < 0.6 else None,
        "proj_clip": round(float(rng.uniform(0.2, 0.8)), 2) if P and rng.random() < 0.7 else None,
        "forget_bias": float(rng.choice([1.0, 1.0, 0.5])),
        "x": normal(rng, B, D, scale=1.0),  # (B, D)
        "c": normal(rng, B, H, scale=2.0),  # (B, H): large enough for cell_clip to bite
        "m": normal(rng, B, P or H, scale=1.0),  # (B, P or H)
        "kernel": normal(rng, D + (P or H), 4 * H, scale=0.5),  # (D + P, 4H), gates i, j, f, o
        "bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
    }
    if peepholes:
        for name in ("w_i_diag", "w_f_diag", "w_o_diag"):
            case[name] = normal(rng, H, scale=1.0)  # (H,)
    if P:
        case["projection/kernel"] = normal(rng, H, P, scale=1.0)  # (H, P)
    return case


def _weights_of(case):
    return {k: case[k] for k in WEIGHT_NAMES if k in case}


def _options(case):
    return {k: case[k] for k in ("use_peepholes", "cell_clip", "num_proj", "proj_clip", "forget_bias")}


def _step_call(fn, case):
    return fn(case["x"], case["c"], case["m"], _weights_of(case), **_options(case))


def _step_oracle(case):
    weights = _weights_of(case)
    weights["lstm_cell/kernel"] = weights.pop("kernel")  # not also projection/kernel
    cell = _lstm_cell(case["H"], **_options(case))
    output, (c, m) = run_tf1(cell, case["x"], (case["c"], case["m"]), weights)
    assert np.array_equal(output, m)  # LSTMCell returns (m, LSTMStateTuple(c, m))
    return c, m


def _step(case, order=(0, 1, 2, 3), forget=True, o_peep_prev=False, peepholes=True,
          clip_after_m=False, clip_m=False, proj_clip_first=False, project="m"):
    """One LSTMCell step in NumPy; the keyword arguments switch on the known mistakes."""
    P = case["num_proj"]
    if project != "m" and not P:
        raise ValueError("only with a projection")
    if (clip_after_m or clip_m) and case["cell_clip"] is None:
        raise ValueError("only with cell_clip")
    if proj_clip_first and case["proj_clip"] is None:
        raise ValueError("only with proj_clip")
    if (o_peep_prev or not peepholes) and not case["use_peepholes"]:
        raise ValueError("only with peepholes")
    z = np.concatenate([case["x"], case["m"]], axis=1) @ case["kernel"] + case["bias"]  # (B, 4H)
    i, j, f, o = (np.split(z, 4, axis=1)[k] for k in order)
    c_prev = case["c"]
    b_f = case["forget_bias"] if forget else 0.0
    peep = case["use_peepholes"] and peepholes
    w = {k: case[k] if peep else 0.0 for k in ("w_i_diag", "w_f_diag", "w_o_diag")}
    c = (sigmoid(f + b_f + w["w_f_diag"] * c_prev) * c_prev
         + sigmoid(i + w["w_i_diag"] * c_prev) * np.tanh(j))
    clip = case["cell_clip"]
    if clip is not None and not (clip_after_m or clip_m):
        c = np.clip(c, -clip, clip)
    m = sigmoid(o + w["w_o_diag"] * (c_prev if o_peep_prev else c)) * np.tanh(c)
    if clip_after_m:
        c = np.clip(c, -clip, clip)
    if clip_m:
        m = np.clip(m, -clip, clip)
    if P:
        proj, pclip = case["projection/kernel"], case["proj_clip"]
        if proj_clip_first:
            m = np.clip(m, -pclip, pclip)
        if project in ("m", "both"):
            m = m @ proj
        if project in ("c", "both"):
            c = c @ proj
        if pclip is not None and not proj_clip_first:
            m = np.clip(m, -pclip, pclip)
    return c, m


def _swapped(case):
    c, m = _step(case)
    return m, c


lstm_cell_step = Exercise(
    name="lstm_cell_step",
    task="(c, m), the new LSTMStateTuple: c (B, num_units), m (B, num_proj or num_units)",
    make_case=_step_case,
    call=_step_call,
    oracle=_step_oracle,
    parts=("c", "m"),
    mistakes=(
        Mistake(
            "c and m are swapped: LSTMCell's new state is LSTMStateTuple(c, m), the cell state "
            "(memory) first and the output m second.",
            _swapped,
        ),
        Mistake(
            "the gate blocks are in the wrong order: you split i, f, j, o (Keras' order); TF1 "
            "splits the pre-activation into i, j, f, o.",
            lambda c: _step(c, order=TF1_TO_KERAS),
        ),
        Mistake(
            "forget_bias is missing: LSTMCell adds it to f at every step, "
            "sigmoid(f + forget_bias + ...).",
            lambda c: _step(c, forget=False),
        ),
        Mistake(
            "the output-gate peephole looks at the previous c: w_o_diag multiplies the NEW c "
            "(after clipping); only w_i_diag and w_f_diag use c_prev.",
            lambda c: _step(c, o_peep_prev=True),
        ),
        Mistake(
            "the peepholes are left out: with use_peepholes, add w_i_diag * c_prev to i, "
            "w_f_diag * c_prev to f and w_o_diag * c (the new c) to o.",
            lambda c: _step(c, peepholes=False),
        ),
        Mistake(
            "the cell is clipped too late: clip c to [-cell_clip, cell_clip] BEFORE computing m "
            "from it, so m = sigmoid(o) * tanh(clipped c).",
            lambda c: _step(c, clip_after_m=True),
        ),
        Mistake(
            "cell_clip is applied to m: it clips the cell state c, before m is computed.",
            lambda c: _step(c, clip_m=True),
        ),
        Mistake(
            "proj_clip is applied before the projection: clip m AFTER m @ projection/kernel.",
            lambda c: _step(c, proj_clip_first=True),
        ),
        Mistake(
            "the projection is applied to c: only m is projected (m @ projection/kernel); c "
            "keeps num_units columns.",
            lambda c: _step(c, project="c"),
        ),
        Mistake(
            "the projection is applied to c as well as m: only m is projected; c keeps "
            "num_units columns.",
            lambda c: _step(c, project="both"),
        ),
    ),
)


# --- Exercise 3.3: a TF1 state as a Keras 3 initial state ------------------------------------


def _sequence_case(rng, kind):
    """Sizes, a random sequence and a random initial state (c0, h0); ``kind`` picks the weights."""
    B, T, D, H = (int(rng.integers(1, 4)), int(rng.integers(2, 5)),
                  int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    case = {"B": B, "T": T, "D": D, "H": H,
            "inputs": normal(rng, B, T, D, scale=1.0),  # (B, T, D)
            "c0": normal(rng, B, H, scale=1.0),  # (B, H)
            "h0": normal(rng, B, H, scale=0.5)}  # (B, H)
    if kind == "tf1":
        case["kernel"] = normal(rng, D + H, 4 * H, scale=0.5)  # (D + H, 4H), gates i, j, f, o
        case["bias"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
        case["forget_bias"] = float(rng.choice([1.0, 1.0, 0.5, 2.0]))
    else:  # PyTorch layout, gates i, f, g, o
        case["weight_ih"] = normal(rng, 4 * H, D, scale=0.5)  # (4H, D)
        case["weight_hh"] = normal(rng, 4 * H, H, scale=0.5)  # (4H, H)
        case["bias_ih"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
        case["bias_hh"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
    return case


def _keras_from_tf1(case, fold=True):
    D, H = case["D"], case["H"]
    kernel = _blocks(case["kernel"], TF1_TO_KERAS)
    bias = _blocks(case["bias"], TF1_TO_KERAS).copy()
    if fold:
        bias[H: 2 * H] += case["forget_bias"]
    return kernel[:D], kernel[D:], bias


def _tf1_matches_keras(case, name, basic=True, state_is_tuple=True):
    """Raise unless the real Keras 3 LSTM with the ported weights and initial state [h0, c0]
    reproduces the real TF1 cell (BasicLSTMCell, or LSTMCell without options) run from the
    state (c0, h0), or [c0, h0] concatenated: outputs and both final states."""
    H, options = case["H"], {"forget_bias": case["forget_bias"], "state_is_tuple": state_is_tuple}
    cell = _basic_lstm_cell(H, **options) if basic else _lstm_cell(H, **options)
    state = (case["c0"], case["h0"])
    if not state_is_tuple:
        state = np.concatenate(state, axis=1)  # (B, 2H): [c, h]
    weights = {"kernel": case["kernel"], "bias": case["bias"]}
    # static_rnn: the same real cell as dynamic_rnn, and quicker to build than its while loop
    outputs, final = run_tf1(cell, case["inputs"], state, weights, mode="static")
    c, h = final if state_is_tuple else np.split(final, 2, axis=1)
    k_out, k_h, k_c = run_keras_lstm(case["inputs"], _keras_from_tf1(case), [case["h0"], case["c0"]])
    _agree(name, (k_out, k_h, k_c), (outputs, h, c))


def _state_case(rng):
    case = _sequence_case(rng, "tf1")
    case["state_is_tuple"] = bool(rng.random() < 0.5)
    return case


def _state_call(fn, case):
    if case["state_is_tuple"]:
        return fn((case["c0"], case["h0"]), case["H"])  # LSTMStateTuple(c, h)
    return fn(np.concatenate([case["c0"], case["h0"]], axis=1), case["H"])  # (B, 2H): [c, h]


def _state_oracle(case):
    _tf1_matches_keras(case, "keras_state_from_tf1", basic=False, state_is_tuple=case["state_is_tuple"])
    return [case["h0"], case["c0"]]  # what Keras' initial_state= needs: h first


def _unchanged_concatenated(case):
    if case["state_is_tuple"]:
        raise ValueError("only for a concatenated state")
    return np.concatenate([case["c0"], case["h0"]], axis=1)


keras_state_from_tf1 = Exercise(
    name="keras_state_from_tf1",
    task="[h, c], the list Keras 3's LSTM takes as initial_state (h first)",
    make_case=_state_case,
    call=_state_call,
    oracle=_state_oracle,
    parts=("h", "c"),
    mistakes=(
        Mistake(
            "c and h are swapped: TF1 keeps (c, h) but Keras 3 wants initial_state=[h, c], h "
            "first (Keras accepts [c, h] silently and computes the wrong thing).",
            lambda c: [c["c0"], c["h0"]],
        ),
        Mistake(
            "you returned the concatenated state as it is: Keras wants a list of two arrays, "
            "[h, c]; slice c = state[:, :num_units] and h = state[:, num_units:] first.",
            lambda c: _unchanged_concatenated(c),
        ),
    ),
)


# --- Exercise 3.4: BasicLSTMCell weights to Keras 3 ------------------------------------------


def _port_case(rng):
    return _sequence_case(rng, "tf1")


def _port_oracle(case):
    _tf1_matches_keras(case, "keras_from_tf1")
    return _keras_from_tf1(case)


def _port_unordered(case, fold_block):
    D, H = case["D"], case["H"]
    bias = case["bias"].copy()
    if fold_block is not None:
        bias[fold_block * H: (fold_block + 1) * H] += case["forget_bias"]
    return case["kernel"][:D], case["kernel"][D:], bias


def _port_fold_everywhere(case):
    kernel, recurrent, bias = _keras_from_tf1(case, fold=False)
    return kernel, recurrent, bias + case["forget_bias"]


def _port_fold_in_j(case):
    kernel, recurrent, bias = _keras_from_tf1(case, fold=False)
    H = case["H"]
    bias = bias.copy()
    bias[2 * H: 3 * H] += case["forget_bias"]
    return kernel, recurrent, bias


GATE_ORDER = (
    "the gate blocks are still in TF1's order i, j, f, o: Keras 3 orders them i, f, c, o, so "
    "swap the 2nd and 3rd column blocks of the kernel, the recurrent kernel and the bias."
)

keras_from_tf1 = Exercise(
    name="keras_from_tf1",
    task="(kernel (D, 4H), recurrent_kernel (H, 4H), bias (4H,)) for Keras 3's LSTM, gates i, f, c, o",
    make_case=_port_case,
    call=lambda fn, c: fn(c["kernel"], c["bias"], c["forget_bias"], c["D"]),
    oracle=_port_oracle,
    parts=("kernel", "recurrent_kernel", "bias"),
    mistakes=(
        Mistake(
            "the forget bias is not folded: TF1 adds forget_bias to f at every step, Keras 3 "
            "adds nothing, so add forget_bias to the f block of the Keras bias (bias[H:2H]).",
            lambda c: _keras_from_tf1(c, fold=False),
        ),
        Mistake(GATE_ORDER, lambda c: _port_unordered(c, 2)),
        Mistake(GATE_ORDER, lambda c: _port_unordered(c, 1)),
        Mistake(
            "the kernel was only split: reorder the gate blocks from TF1's i, j, f, o to Keras' "
            "i, f, c, o AND add forget_bias to the f block of the bias (bias[H:2H]).",
            lambda c: _port_unordered(c, None),
        ),
        Mistake(
            "forget_bias went into the wrong block: after reordering, Keras' f block is the "
            "second one, bias[H:2H], not the third.",
            _port_fold_in_j,
        ),
        Mistake(
            "forget_bias was added to the whole bias: it belongs to the f block only, bias[H:2H].",
            _port_fold_everywhere,
        ),
        Mistake(
            "kernel and recurrent_kernel are swapped: rows [:D] of the TF1 kernel multiply x "
            "(Keras' kernel), rows [D:] multiply h (Keras' recurrent_kernel).",
            lambda c: tuple([_keras_from_tf1(c)[1], _keras_from_tf1(c)[0], _keras_from_tf1(c)[2]]),
        ),
    ),
)


# --- Exercise 3.5: PyTorch-layout weights to Keras 3 -----------------------------------------


def pytorch_lstm(case):
    """``nn.LSTM``'s documented equations in NumPy, batch-major: (outputs, h_n, c_n).

    i = sigmoid(W_ii x + b_ii + W_hi h + b_hi), f, g (tanh), o likewise; c' = f * c + i * g;
    h' = o * tanh(c'). ``weight_ih`` stacks W_ii | W_if | W_ig | W_io along its rows (4H, D).
    """
    h, c, outputs = case["h0"], case["c0"], []
    for t in range(case["inputs"].shape[1]):
        z = (case["inputs"][:, t] @ case["weight_ih"].T + case["bias_ih"]
             + h @ case["weight_hh"].T + case["bias_hh"])  # (B, 4H)
        i, f, g, o = np.split(z, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), h, c


def _torch_case(rng):
    return _sequence_case(rng, "torch")


def _keras_from_torch(case):
    return case["weight_ih"].T, case["weight_hh"].T, case["bias_ih"] + case["bias_hh"]


def _torch_oracle(case):
    weights = _keras_from_torch(case)
    keras_run = run_keras_lstm(case["inputs"], weights, [case["h0"], case["c0"]])
    _agree("keras_from_pytorch", keras_run, pytorch_lstm(case))
    return weights


def _torch_with(case, **change):
    kernel, recurrent, bias = _keras_from_torch(case)
    return change.get("kernel", kernel), change.get("recurrent", recurrent), change.get("bias", bias)


keras_from_pytorch = Exercise(
    name="keras_from_pytorch",
    task="(kernel (D, 4H), recurrent_kernel (H, 4H), bias (4H,)) for Keras 3's LSTM",
    make_case=_torch_case,
    call=lambda fn, c: fn(c["weight_ih"], c["weight_hh"], c["bias_ih"], c["bias_hh"]),
    oracle=_torch_oracle,
    parts=("kernel", "recurrent_kernel", "bias"),
    mistakes=(
        Mistake(
            "the PyTorch weights are not transposed: PyTorch stores (4H, D) and computes W x; "
            "Keras stores (D, 4H) and computes x @ kernel, so use weight_ih.T and weight_hh.T.",
            lambda c: _torch_with(c, kernel=c["weight_ih"], recurrent=c["weight_hh"]),
        ),
        Mistake(
            "the PyTorch weights are reshaped, not transposed: reshape keeps the memory order "
            "and scrambles the gates; use weight_ih.T and weight_hh.T.",
            lambda c: _torch_with(c, kernel=c["weight_ih"].reshape(c["D"], -1),
                                  recurrent=c["weight_hh"].reshape(c["H"], -1)),
        ),
        Mistake(
            "one of PyTorch's two biases is dropped: PyTorch adds bias_ih AND bias_hh, Keras has "
            "one bias, so use bias_ih + bias_hh.",
            lambda c: _torch_with(c, bias=c["bias_ih"]),
        ),
        Mistake(
            "one of PyTorch's two biases is dropped: PyTorch adds bias_ih AND bias_hh, Keras has "
            "one bias, so use bias_ih + bias_hh.",
            lambda c: _torch_with(c, bias=c["bias_hh"]),
        ),
        Mistake(
            "the gate blocks are in the wrong order: PyTorch's i, f, g, o is already Keras' "
            "i, f, c, o, so keep the blocks where they are (TF1's i, j, f, o is the odd one out).",
            lambda c: tuple(_blocks(w, TF1_TO_KERAS) for w in _keras_from_torch(c)),
        ),
        Mistake(
            "a forget bias was added: PyTorch adds nothing to f at run time, so the Keras bias is "
            "just bias_ih + bias_hh.",
            lambda c: _torch_with(c, bias=_keras_from_torch(c)[2]
                                  + np.repeat(np.eye(4, dtype=np.float32)[1], c["H"])),
        ),
    ),
)


CHAPTER = Chapter(3, "03-c-state-m-state", [
    split_state, lstm_cell_step, keras_state_from_tf1, keras_from_tf1, keras_from_pytorch,
])
check = CHAPTER.check
