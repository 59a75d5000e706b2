"""Every function of the NumPy reference (rnnbook/reference.py) against the real TensorFlow cell.

The checks' 200-seed sweeps compare learners' answers with the reference instead of calling
TensorFlow each time; this file is what entitles them to: each reference function is held here
to TensorFlow's own cell on random weights, with every option it has.
"""
import numpy as np
import pytest

from rnnbook import reference as ref
from rnnbook.oracles import run_keras_gru, run_keras_lstm, run_tf1, run_tf1_gru, tensorflow

TOL = dict(rtol=1e-4, atol=1e-5)


def normal(rng, *shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def rnn_cells():
    return tensorflow().compat.v1.nn.rnn_cell


@pytest.mark.parametrize("B,D,H", [(1, 1, 1), (3, 4, 2), (2, 2, 5)])
def test_basic_rnn_step(B, D, H):
    rng = np.random.default_rng([B, D, H])
    x, h = normal(rng, B, D), normal(rng, B, H)
    kernel, bias = normal(rng, D + H, H, scale=0.5), normal(rng, H, scale=0.5)
    out, state = run_tf1(lambda: rnn_cells().BasicRNNCell(H), x, h,
                         {"kernel": kernel, "bias": bias})
    np.testing.assert_allclose(ref.basic_rnn_step(x, h, kernel, bias), state, **TOL)
    np.testing.assert_array_equal(out, state)


@pytest.mark.parametrize("forget_bias", [1.0, 0.3, -1.5])
def test_basic_lstm_unrolled_with_preactivations(forget_bias):
    rng = np.random.default_rng(7)
    B, T, D, H = 2, 3, 3, 4
    inputs = normal(rng, B, T, D)
    c0, h0 = normal(rng, B, H), normal(rng, B, H)
    kernel, bias = normal(rng, D + H, 4 * H, scale=0.5), normal(rng, 4 * H, scale=0.5)
    names = [f"rnn/basic_lstm_cell/split:{k}" for k in range(4)]
    outputs, (c, h), *split = run_tf1(
        lambda: rnn_cells().BasicLSTMCell(H, forget_bias=forget_bias), inputs, (c0, h0),
        {"kernel": kernel, "bias": bias}, mode="static", fetch=names)
    step = ref.lstm_cell(kernel, bias, forget_bias)
    want_out, (want_c, want_h) = ref.unroll(step, inputs, (c0, h0))
    np.testing.assert_allclose(want_out, outputs, **TOL)
    np.testing.assert_allclose(want_c, c, **TOL)
    np.testing.assert_allclose(want_h, h, **TOL)
    gates = ref.lstm_preactivations(inputs[:, 0], h0, kernel, bias)  # step 0's Split outputs
    for k, gate in enumerate(ref.TF1):
        np.testing.assert_allclose(gates[gate], split[k], **TOL)


LSTM_CELL_OPTIONS = [
    dict(),
    dict(use_peepholes=True),
    dict(cell_clip=0.4),
    dict(num_proj=2),
    dict(num_proj=3, proj_clip=0.3),
    dict(use_peepholes=True, cell_clip=0.5, num_proj=2, proj_clip=0.2, forget_bias=0.5),
]


@pytest.mark.parametrize("options", LSTM_CELL_OPTIONS, ids=str)
def test_lstm_cell_step(options):
    rng = np.random.default_rng(len(str(options)))
    B, D, H = 3, 2, 4
    P = options.get("num_proj") or H
    x, c, m = normal(rng, B, D), normal(rng, B, H, scale=2.0), normal(rng, B, P)
    weights = {"lstm_cell/kernel": normal(rng, D + P, 4 * H, scale=0.5),
               "bias": normal(rng, 4 * H, scale=0.5)}
    if options.get("use_peepholes"):
        weights.update({k: normal(rng, H) for k in ("w_i_diag", "w_f_diag", "w_o_diag")})
    if options.get("num_proj"):
        weights["projection/kernel"] = normal(rng, H, P)
    _, (want_c, want_m) = run_tf1(lambda: rnn_cells().LSTMCell(H, **options), x, (c, m),
                                  weights)
    got_c, got_m = ref.lstm_cell_step(
        x, c, m, weights["lstm_cell/kernel"], weights["bias"],
        forget_bias=options.get("forget_bias", 1.0), w_i_diag=weights.get("w_i_diag"),
        w_f_diag=weights.get("w_f_diag"), w_o_diag=weights.get("w_o_diag"),
        cell_clip=options.get("cell_clip"), projection=weights.get("projection/kernel"),
        proj_clip=options.get("proj_clip"))
    np.testing.assert_allclose(got_c, want_c, **TOL)
    np.testing.assert_allclose(got_m, want_m, **TOL)


def test_every_lstm_cell_slip_changes_the_answer():
    """Each slip is a different wrong answer on a case where all options bite."""
    rng = np.random.default_rng(3)
    B, D, H, P = 3, 2, 4, 2
    args = (normal(rng, B, D), normal(rng, B, H, scale=3.0), normal(rng, B, P),
            normal(rng, D + P, 4 * H), normal(rng, 4 * H))
    options = dict(w_i_diag=normal(rng, H), w_f_diag=normal(rng, H), w_o_diag=normal(rng, H),
                   cell_clip=0.5, projection=normal(rng, H, P), proj_clip=0.2)
    right = ref.lstm_cell_step(*args, **options)
    answers = {None: right}
    for slip in sorted(ref.LSTM_CELL_SLIPS):
        got = ref.lstm_cell_step(*args, **options, slip=slip)
        for other, seen in answers.items():
            assert any(g.shape != s.shape or not np.allclose(g, s) for g, s in
                       zip(got, seen, strict=True)), (slip, other)
        answers[slip] = got


def test_keras_lstm_and_the_tf1_port():
    rng = np.random.default_rng(11)
    B, T, D, H = 2, 4, 3, 2
    inputs, c0, h0 = normal(rng, B, T, D), normal(rng, B, H), normal(rng, B, H)
    kernel, bias = normal(rng, D + H, 4 * H, scale=0.5), normal(rng, 4 * H, scale=0.5)
    keras_weights = ref.keras_from_tf1(kernel, bias, 0.7, D)
    outputs, h, c = run_keras_lstm(inputs, keras_weights, [h0, c0])
    want_out, (want_h, want_c) = ref.unroll(ref.keras_cell(*keras_weights), inputs, [h0, c0])
    np.testing.assert_allclose(want_out, outputs, **TOL)
    np.testing.assert_allclose(want_h, h, **TOL)
    np.testing.assert_allclose(want_c, c, **TOL)
    tf1_out, _ = ref.unroll(ref.lstm_cell(kernel, bias, 0.7), inputs, (c0, h0))
    np.testing.assert_allclose(tf1_out, outputs, **TOL)


def test_pytorch_step_through_its_keras_port():
    """PyTorch is not installed: its documented step must agree with the real Keras 3 LSTM
    given :func:`reference.keras_from_pytorch`'s weights."""
    rng = np.random.default_rng(5)
    B, T, D, H = 2, 3, 2, 3
    inputs, c0, h0 = normal(rng, B, T, D), normal(rng, B, H), normal(rng, B, H)
    torch = [normal(rng, 4 * H, D), normal(rng, 4 * H, H), normal(rng, 4 * H), normal(rng, 4 * H)]

    def step(x, state):
        h, c = ref.pytorch_lstm_step(x, *state, *torch)
        return h, (h, c)

    want, _ = ref.unroll(step, inputs, (h0, c0))
    outputs, _, _ = run_keras_lstm(inputs, ref.keras_from_pytorch(*torch), [h0, c0])
    np.testing.assert_allclose(want, outputs, **TOL)


@pytest.mark.parametrize("L,T,chunk", [(1, 5, 2), (2, 7, 3), (3, 4, 4)])
def test_stacked_and_chunked_runs_equal_multi_rnn_cell(L, T, chunk):
    rng = np.random.default_rng([L, T, chunk])
    B, D, H = 2, 3, 2
    inputs = normal(rng, B, T, D)
    packed = normal(rng, L, 2, B, H)
    kernels = [normal(rng, (D if k == 0 else H) + H, 4 * H, scale=0.5) for k in range(L)]
    biases = [normal(rng, 4 * H, scale=0.5) for _ in range(L)]
    weights = {f"cell_{k}/basic_lstm_cell/kernel": kernels[k] for k in range(L)}
    weights.update({f"cell_{k}/basic_lstm_cell/bias": biases[k] for k in range(L)})
    rc = rnn_cells()
    outputs, final = run_tf1(lambda: rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)]),
                             inputs, ref.unpack(packed), weights, mode="static")
    step = ref.stacked([ref.lstm_cell(k, b) for k, b in zip(kernels, biases, strict=True)])
    whole, state = ref.unroll(step, inputs, ref.unpack(packed))
    chunked, chunk_state = ref.run_in_chunks(step, inputs, ref.unpack(packed), chunk)
    np.testing.assert_allclose(whole, outputs, **TOL)
    np.testing.assert_allclose(ref.pack(state), ref.pack(final), **TOL)
    np.testing.assert_allclose(chunked, whole, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ref.pack(chunk_state), ref.pack(state), rtol=1e-6, atol=1e-7)
    tf = tensorflow()
    np.testing.assert_array_equal(
        tf.stack([tf.stack([c, h]) for c, h in final]).numpy(), ref.pack(final))


def test_gate_orders_round_trip():
    a = np.arange(8.0)
    moved = ref.reorder(a, ref.TF1, ref.KERAS)
    np.testing.assert_array_equal(moved, [0, 1, 4, 5, 2, 3, 6, 7])
    np.testing.assert_array_equal(ref.reorder(moved, ref.KERAS, ref.TF1), a)
    with pytest.raises(ValueError, match="unknown slip"):
        ref.basic_rnn_step(a[None, :1], a[None, :1], np.ones((2, 1)), 0.0, slip="nonsense")


# --- GRU (Chapter 6): the three layouts and the conversions, against the real cells ---------


def gru_weights(rng, D, H):
    """TF1 GRUCell weights: gates kernel (D + H, 2H), bias (2H,), candidate kernel and bias."""
    return (normal(rng, D + H, 2 * H, scale=0.6), normal(rng, 2 * H, scale=0.6),
            normal(rng, D + H, H, scale=0.6), normal(rng, H, scale=0.6))


@pytest.mark.parametrize("B,T,D,H", [(2, 4, 3, 5), (1, 2, 4, 2)])
def test_tf1_gru_and_its_keras_port(B, T, D, H):
    """TF1's GRUCell (dynamic_rnn), the reference, and Keras 3's GRU(reset_after=False) with
    the ported weights: one function."""
    rng = np.random.default_rng([B, T, D, H])
    inputs, h0 = normal(rng, B, T, D), normal(rng, B, H)
    weights = gru_weights(rng, D, H)
    outputs, final = run_tf1_gru(inputs, h0, *weights)
    mine, h = ref.unroll(ref.gru_cell(ref.tf1_gru_step, *weights), inputs, h0)
    np.testing.assert_allclose(mine, outputs, **TOL)
    np.testing.assert_allclose(h, final, **TOL)
    port = ref.keras_gru_from_tf1(*weights, D)
    assert [w.shape for w in port] == [(D, 3 * H), (H, 3 * H), (3 * H,)]
    k_out, k_h = run_keras_gru(inputs, port, h0, reset_after=False)
    np.testing.assert_allclose(k_out, outputs, **TOL)
    again, _ = ref.unroll(ref.gru_cell(ref.keras_gru_step, *port, reset_after=False), inputs, h0)
    np.testing.assert_allclose(again, k_out, **TOL)
    # the same weights under reset_after=True (the bias as row 0, row 1 zero) differ
    after = [*port[:2], np.stack([port[2], np.zeros_like(port[2])])]
    assert not np.allclose(run_keras_gru(inputs, after, h0)[0], outputs, **TOL)


def test_tf1_gru_fresh_gates_bias_is_one():
    """A fresh GRUCell's gates/bias starts at 1.0 and its candidate/bias at 0."""
    tf = tensorflow()
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        cell = v1.nn.rnn_cell.GRUCell(3)
        v1.nn.dynamic_rnn(cell, v1.placeholder(tf.float32, (1, 2, 2)), dtype=tf.float32)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            values = {v.op.name: session.run(v) for v in v1.global_variables()}
    np.testing.assert_array_equal(values["rnn/gru_cell/gates/bias"], np.ones(6))
    np.testing.assert_array_equal(values["rnn/gru_cell/candidate/bias"], np.zeros(3))
    assert values["rnn/gru_cell/gates/kernel"].shape == (5, 6)


def test_keras_gru_reset_after_and_pytorch_round_trip():
    """Keras 3's default GRU (reset_after=True) equals the reference and PyTorch's documented
    step on the converted weights; the conversion goes there and back exactly."""
    rng = np.random.default_rng(6)
    B, T, D, H = 3, 3, 2, 4
    inputs, h0 = normal(rng, B, T, D), normal(rng, B, H)
    keras_w = [normal(rng, D, 3 * H), normal(rng, H, 3 * H), normal(rng, 2, 3 * H)]
    outputs, h = run_keras_gru(inputs, keras_w, h0)
    mine, _ = ref.unroll(ref.gru_cell(ref.keras_gru_step, *keras_w), inputs, h0)
    np.testing.assert_allclose(mine, outputs, **TOL)
    torch = ref.torch_gru_from_keras(*keras_w)
    assert [w.shape for w in torch] == [(3 * H, D), (3 * H, H), (3 * H,), (3 * H,)]
    via_torch, _ = ref.unroll(ref.gru_cell(ref.torch_gru_step, *torch), inputs, h0)
    np.testing.assert_allclose(via_torch, outputs, **TOL)
    for back, original in zip(ref.keras_gru_from_torch(*torch), keras_w, strict=True):
        np.testing.assert_array_equal(back, original)
    # r and z are the first two row blocks in PyTorch, the second and first columns in Keras
    np.testing.assert_array_equal(torch[0][:H], keras_w[0][:, H:2 * H].T)


# --- Chapter 7: padded batches ------------------------------------------------------------


@pytest.mark.parametrize("mode,L", [("dynamic", 1), ("static", 1), ("dynamic", 2)])
def test_a_run_with_lengths_equals_sequence_length(mode, L):
    """unroll_lengths against dynamic_rnn / static_rnn with sequence_length, one layer and a
    MultiRNNCell: zeros past each length, the state copied through, a row of length 0 left
    at its initial state; without lengths (every row of length T) the state after the
    padding, which differs."""
    rng = np.random.default_rng([L, len(mode)])
    B, T, D, H = 4, 5, 3, 2
    inputs, lengths = normal(rng, B, T, D), np.array([5, 0, 2, 1], np.int32)
    kernels = [normal(rng, (D if k == 0 else H) + H, 4 * H, scale=0.5) for k in range(L)]
    biases = [normal(rng, 4 * H, scale=0.5) for _ in range(L)]
    packed = normal(rng, L, 2, B, H)
    rc = rnn_cells()
    if L == 1:
        weights = {"kernel": kernels[0], "bias": biases[0]}
        state, step = ref.unpack(packed)[0], ref.lstm_cell(kernels[0], biases[0])

        def cell():
            return rc.BasicLSTMCell(H)
    else:
        weights = {f"cell_{k}/basic_lstm_cell/{name}": w[k] for k in range(L)
                   for name, w in (("kernel", kernels), ("bias", biases))}
        state = ref.unpack(packed)
        step = ref.stacked([ref.lstm_cell(k, b) for k, b in zip(kernels, biases, strict=True)])

        def cell():
            return rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)])
    outputs, final = run_tf1(cell, inputs, state, weights, mode=mode, lengths=lengths)
    want, want_final = ref.unroll_lengths(step, inputs, state, lengths)
    np.testing.assert_allclose(want, outputs, **TOL)
    np.testing.assert_allclose(np.asarray(want_final), np.asarray(final), **TOL)
    assert (outputs[1] == 0).all() and (outputs[3, 1:] == 0).all()
    np.testing.assert_array_equal(np.asarray(final)[..., 1, :], np.asarray(state)[..., 1, :])
    _, after = ref.unroll_lengths(step, inputs, state, np.full(B, T))
    assert not np.allclose(np.asarray(after), np.asarray(final), atol=1e-3)


def test_the_outputs_past_the_length_as_the_mistakes_write_them():
    """past="last" repeats each row's last valid output (zeros before it has one); past="run"
    is the run's output with the state still kept."""
    rng = np.random.default_rng(7)
    inputs, lengths = normal(rng, 3, 4, 2), np.array([4, 0, 2])
    step = ref.lstm_cell(normal(rng, 5, 12, scale=0.5), normal(rng, 12, scale=0.5))
    zero = (np.zeros((3, 3), np.float32),) * 2
    right, final = ref.unroll_lengths(step, inputs, zero, lengths)
    last, _ = ref.unroll_lengths(step, inputs, zero, lengths, past="last")
    run, kept = ref.unroll_lengths(step, inputs, zero, lengths, past="run")
    np.testing.assert_array_equal(last[2, 2:], np.stack([right[2, 1]] * 2))
    assert (last[1] == 0).all()
    np.testing.assert_array_equal(run[:, :1], np.where(lengths[:, None, None] > 0,
                                                       right[:, :1], run[:, :1]))
    assert not np.allclose(run[2, 2:], 0)
    np.testing.assert_array_equal(np.asarray(kept), np.asarray(final))


def test_reverse_within_is_reverse_sequence():
    rng = np.random.default_rng(1)
    inputs, lengths = normal(rng, 4, 6, 3), np.array([6, 0, 1, 3])
    want = tensorflow().reverse_sequence(inputs, lengths, seq_axis=1, batch_axis=0).numpy()
    np.testing.assert_array_equal(ref.reverse_within(inputs, lengths), want)
    np.testing.assert_array_equal(ref.reverse_within(want, lengths), inputs)  # an involution


# --- run_tf1: eager where nothing needs the graph -------------------------------------------


def _cells(H):
    """Every TF1 cell the oracles run, with its weights named as the checks name them."""
    rc = rnn_cells()
    return {
        "basic_rnn": (lambda: rc.BasicRNNCell(H), ("kernel", "bias"), 1),
        "basic_lstm": (lambda: rc.BasicLSTMCell(H, forget_bias=0.5), ("kernel", "bias"), 2),
        "lstm_all": (lambda: rc.LSTMCell(H, use_peepholes=True, cell_clip=0.3, num_proj=2,
                                         proj_clip=0.4),
                     ("lstm_cell/kernel", "bias", "w_i_diag", "w_f_diag", "w_o_diag",
                      "projection/kernel"), 2),
        "multi": (lambda: rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(2)]),
                  tuple(f"cell_{k}/basic_lstm_cell/{n}" for k in range(2)
                        for n in ("kernel", "bias")), 4),
        "gru": (lambda: rc.GRUCell(H), ("gates/kernel", "gates/bias", "candidate/kernel",
                                        "candidate/bias"), 1),
    }


@pytest.mark.parametrize("kind", ["basic_rnn", "basic_lstm", "lstm_all", "multi", "gru"])
@pytest.mark.parametrize("mode,lengths", [("step", None), ("static", None),
                                          ("dynamic", None), ("dynamic", [3, 0, 1])])
def test_a_tf1_cell_run_eagerly_gives_the_graphs_bits(kind, mode, lengths):
    """run_tf1 runs a cell eagerly where nothing needs its graph (no fetch, no kept graph): the
    same outputs and final state as in a graph, bit for bit, for every cell the oracles run;
    the weights reach the variables by the names a fresh graph gives them, also for the second
    and later cells of a kind in the process (Keras numbers those: basic_rnn_cell_3)."""
    B, T, D, H = 3, 4, 5, 3
    make, names, _ = _cells(H)[kind]
    # a graph's variables, to learn each one's shape (the weights are drawn for them)
    tf = tensorflow()
    with tf.Graph().as_default() as graph:
        cell = make()
        cell(tf.zeros([B, D]), cell.zero_state(B, tf.float32))
        shapes = {v.op.name: v.shape.as_list() for v in graph.get_collection("variables")}
    rng = np.random.default_rng([len(kind), len(mode)])
    weights = {}
    for name in names:
        full = max((n for n in shapes if n == name or n.endswith("/" + name)), key=len)
        weights[name] = normal(rng, *shapes[full], scale=0.5)
    inputs = normal(rng, B, D) if mode == "step" else normal(rng, B, T, D)
    with tf.Graph().as_default():
        state = make().zero_state(B, tf.float32)
    state = tf.nest.map_structure(lambda s: normal(rng, *s.shape.as_list()), state)
    for _ in range(2):  # the second run's cells are numbered by Keras
        eager = run_tf1(make, inputs, state, weights, mode=mode, lengths=lengths)
        in_graph = run_tf1(make, inputs, state, weights, mode=mode, lengths=lengths, graph=True)
        for a, b in zip(tf.nest.flatten(eager), tf.nest.flatten(in_graph), strict=True):
            np.testing.assert_array_equal(a, b)
        assert type(eager[1]) is type(in_graph[1])  # (c, h): the same state tuple


def test_a_weight_no_variable_takes_is_refused_eagerly_too():
    rc = rnn_cells()
    x, h = np.zeros((1, 2), np.float32), np.zeros((1, 3), np.float32)
    weights = {"kernel": np.zeros((5, 3), np.float32), "bias": np.zeros(3, np.float32)}
    with pytest.raises(KeyError, match="match no variable"):
        run_tf1(lambda: rc.BasicRNNCell(3), x, h, {**weights, "projection/kernel": x})
    with pytest.raises(KeyError, match="matches none"):
        run_tf1(lambda: rc.BasicRNNCell(3), x, h, {"bias": weights["bias"]})
