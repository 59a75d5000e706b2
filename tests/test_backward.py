"""Every function of the NumPy backward pass (rnnbook/backward.py) against TensorFlow's own
automatic differentiation of the real cell, with every option it has.

Chapter 5's 200-seed sweeps compare learners' gradients with rnnbook.backward instead of calling
TensorFlow each time; this file is what entitles them to (as tests/test_reference.py does for
the forward pass).
"""
import numpy as np
import pytest

from rnnbook import backward as bwd
from rnnbook.checks.ch05 import tf_lstm_grads, tf_rnn_grads
from rnnbook.oracles import load_weights, tensorflow

TOL = dict(rtol=1e-4, atol=1e-5)


def normal(rng, *shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


@pytest.mark.parametrize("B,T,D,H,chunk", [(1, 1, 1, 1, None), (3, 4, 2, 5, None),
                                           (2, 7, 3, 2, 3), (2, 6, 2, 3, 2), (1, 5, 4, 2, 5)])
def test_basic_rnn_backward(B, T, D, H, chunk):
    """BPTT through BasicRNNCell, full and truncated (tf.stop_gradient every chunk steps)."""
    rng = np.random.default_rng([B, T, D, H, chunk or 0])
    inputs, h0 = normal(rng, B, T, D), normal(rng, B, H)
    kernel, bias = normal(rng, D + H, H, scale=0.7), normal(rng, H, scale=0.5)
    doutputs = normal(rng, B, T, H)
    want = tf_rnn_grads(inputs, h0, kernel, bias, doutputs, chunk=chunk)
    got = bwd.basic_rnn_backward(inputs, h0, kernel, bias, doutputs, chunk=chunk)
    for name, g, w in zip(("dinputs", "dh0", "dkernel", "dbias"), got, want, strict=True):
        np.testing.assert_allclose(g, w, **TOL, err_msg=name)


def test_one_rnn_step_is_a_sequence_of_one():
    rng = np.random.default_rng(1)
    x, h, dh = normal(rng, 2, 3), normal(rng, 2, 4), normal(rng, 2, 4)
    kernel, bias = normal(rng, 7, 4), normal(rng, 4)
    step = bwd.basic_rnn_step_backward(x, h, kernel, bias, dh)
    seq = bwd.basic_rnn_backward(x[:, None], h, kernel, bias, dh[:, None])
    np.testing.assert_allclose(step[0], seq[0][:, 0])
    for a, b in zip(step[1:], seq[1:], strict=True):
        np.testing.assert_allclose(a, b)


LSTM_OPTIONS = [
    dict(),
    dict(forget_bias=-1.5),
    dict(peepholes=True),
    dict(cell_clip=0.5),
    dict(num_proj=2),
    dict(peepholes=True, cell_clip=0.7, num_proj=3, forget_bias=0.5),
]


@pytest.mark.parametrize("options", LSTM_OPTIONS, ids=str)
def test_lstm_cell_step_backward(options):
    rng = np.random.default_rng(len(str(options)))
    B, D, H = 3, 2, 4
    P = options.get("num_proj") or H
    case = {"x": normal(rng, B, D), "c": normal(rng, B, H, scale=2.5), "m": normal(rng, B, P),
            "kernel": normal(rng, D + P, 4 * H, scale=0.6), "bias": normal(rng, 4 * H),
            "forget_bias": options.get("forget_bias", 1.0),
            "cell_clip": options.get("cell_clip"),
            "dc_new": normal(rng, B, H), "dm_new": normal(rng, B, P)}
    if options.get("peepholes"):
        case.update({k: normal(rng, H) for k in ("w_i_diag", "w_f_diag", "w_o_diag")})
    if options.get("num_proj"):
        case["projection"] = normal(rng, H, P)
    want = tf_lstm_grads(case)
    got = bwd.lstm_cell_step_backward(
        case["x"], case["c"], case["m"], case["kernel"], case["bias"], case["dc_new"],
        case["dm_new"], case["forget_bias"], case.get("w_i_diag"), case.get("w_f_diag"),
        case.get("w_o_diag"), case["cell_clip"], case.get("projection"))
    assert set(want) == set(got) - {"dz"}, "one gradient per input and variable, no more"
    for name, w in want.items():
        np.testing.assert_allclose(got[name], w, **TOL, err_msg=name)
    if options.get("cell_clip"):
        assert (got["dc"] == 0).any() and (got["dc"] != 0).any(), "the clip should bite somewhere"


@pytest.mark.parametrize("forget_bias", [1.0, 0.3, -2.0])
def test_basic_lstm_step_and_sequence_backward(forget_bias):
    """One BasicLSTMCell step, and BPTT through static_rnn (the dz of each step is the value of
    that step's ``split_grad/concat`` tensor)."""
    rng = np.random.default_rng(int(10 * forget_bias) + 50)
    B, T, D, H = 2, 4, 3, 2
    case = {"x": normal(rng, B, D), "c": normal(rng, B, H), "m": normal(rng, B, H),
            "kernel": normal(rng, D + H, 4 * H, scale=0.6), "bias": normal(rng, 4 * H),
            "forget_bias": forget_bias, "dc_new": normal(rng, B, H), "dm_new": normal(rng, B, H)}
    want = tf_lstm_grads(case, basic=True)
    got = bwd.basic_lstm_step_backward(case["x"], case["c"], case["m"], case["kernel"],
                                       case["bias"], case["dc_new"], case["dm_new"], forget_bias)
    for name, g in zip(("dx", "dc", "dm", "dkernel", "dbias"), got, strict=True):
        np.testing.assert_allclose(g, want[name], **TOL, err_msg=name)

    tf = tensorflow()
    v1 = tf.compat.v1
    inputs, doutputs = normal(rng, B, T, D), normal(rng, B, T, H)
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [B, T, D])
        cell = v1.nn.rnn_cell.BasicLSTMCell(H, forget_bias=forget_bias)
        outputs, _ = v1.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
        loss = tf.reduce_sum(tf.stack(outputs, axis=1) * doutputs)
        grads = v1.gradients(loss, [x, *cell.variables])
        names = ["gradients/rnn/basic_lstm_cell/split_grad/concat:0"] + [
            f"gradients/rnn/basic_lstm_cell/split_{t}_grad/concat:0" for t in range(1, T)]
        with v1.Session() as session:
            load_weights(session, cell.variables, {"kernel": case["kernel"], "bias": case["bias"]})
            dinputs, dkernel, dbias, *dz = session.run([*grads, *names], {x: inputs})
    zeros = np.zeros((B, H), np.float32)
    out = bwd.basic_lstm_backward(inputs, zeros, zeros, case["kernel"], case["bias"], doutputs,
                                  forget_bias)
    np.testing.assert_allclose(out["dinputs"], dinputs, **TOL)
    np.testing.assert_allclose(out["dkernel"], dkernel, **TOL)
    np.testing.assert_allclose(out["dbias"], dbias, **TOL)
    np.testing.assert_allclose(out["dz"], np.stack(dz, axis=1), **TOL)


@pytest.mark.parametrize("norms", [(0.2, 0.3), (3.0, 0.1, 0.5), (0.7, 0.7, 0.7)])
def test_clip_by_global_norm(norms):
    tf = tensorflow()
    rng = np.random.default_rng(len(norms))
    grads = [normal(rng, 3, 4) for _ in norms]
    grads = [g * n * 2.0 / np.linalg.norm(g) for g, n in zip(grads, norms, strict=True)]
    want, want_norm = tf.clip_by_global_norm(grads, 2.0)
    got, norm = bwd.clip_by_global_norm(grads, 2.0)
    assert norm == pytest.approx(float(want_norm), rel=1e-5)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), **TOL)
    per_tensor, _ = bwd.clip_by_global_norm(grads, 2.0, slip="per tensor")
    for g, p in zip(per_tensor, grads, strict=True):
        np.testing.assert_allclose(g, tf.clip_by_norm(p, 2.0).numpy(), **TOL)


def test_every_slip_changes_the_answer():
    """Each slip of the LSTMCell backward is a different wrong answer on a case where every
    option bites (so a mistake model can never equal the right answer)."""
    rng = np.random.default_rng(9)
    B, D, H, P = 3, 2, 4, 2
    args = (normal(rng, B, D), normal(rng, B, H, scale=3.0), normal(rng, B, P),
            normal(rng, D + P, 4 * H), normal(rng, 4 * H), normal(rng, B, H), normal(rng, B, P))
    options = dict(forget_bias=0.5, w_i_diag=normal(rng, H), w_f_diag=normal(rng, H),
                   w_o_diag=normal(rng, H), cell_clip=0.8, projection=normal(rng, H, P))
    seen = {None: bwd.lstm_cell_step_backward(*args, **options)}
    for slip in sorted(bwd.LSTM_SLIPS):
        got = bwd.lstm_cell_step_backward(*args, **options, slip=slip)
        for other, answer in seen.items():
            assert any(got[k].shape != answer[k].shape or not np.allclose(got[k], answer[k])
                       for k in answer), (slip, other)
        seen[slip] = got
    with pytest.raises(ValueError, match="unknown slip"):
        bwd.basic_rnn_step_backward(*args[:2], np.ones((6, 4)), 0.0, args[5], slip="nonsense")


@pytest.mark.parametrize("tanh_grad, slip", [("z", "tanh' of z"), ("none", "no tanh'")])
def test_rnn_cell_with_a_wrong_tanh_gradient_is_the_slip(tanh_grad, slip):
    """The changed cells Chapter 5's mistakes are the right answer of, in the learner release
    (checks/ch05.py): a BasicRNNCell whose tanh' is taken wrong is rnnbook.backward's slip."""
    rng = np.random.default_rng(7)
    B, T, D, H = 2, 3, 3, 4
    inputs, h0 = normal(rng, B, T, D), normal(rng, B, H)
    kernel, bias, doutputs = normal(rng, D + H, H), normal(rng, H), normal(rng, B, T, H)
    want = tf_rnn_grads(inputs, h0, kernel, bias, doutputs, tanh_grad=tanh_grad)
    got = bwd.basic_rnn_backward(inputs, h0, kernel, bias, doutputs, step_slip=slip)
    right = bwd.basic_rnn_backward(inputs, h0, kernel, bias, doutputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, **TOL)
    assert not np.allclose(got[2], right[2])


@pytest.mark.parametrize("change, slip, basic", [
    (dict(clip_grad="pass"), "clip not zeroed", False),
    (dict(f_grad="without forget_bias"), "sigmoid' of f without forget_bias", True)])
def test_lstm_cells_with_a_wrong_gradient_are_the_slips(change, slip, basic):
    """TF's LSTMCell whose cell_clip passes the gradient, and BasicLSTMCell whose forget gate's
    sigmoid' is taken at f alone (ch05._changed_tf), are rnnbook.backward's slips; TF's ops
    are back to themselves after."""
    rng = np.random.default_rng(11)
    B, D, H = 3, 2, 4
    case = {"x": normal(rng, B, D), "c": normal(rng, B, H, scale=2.5), "m": normal(rng, B, H),
            "kernel": normal(rng, D + H, 4 * H, scale=0.6), "bias": normal(rng, 4 * H),
            "forget_bias": 0.7, "cell_clip": None if basic else 0.8,
            "dc_new": normal(rng, B, H), "dm_new": normal(rng, B, H), **change}
    want = tf_lstm_grads(case, basic=basic)
    args = [case[k] for k in ("x", "c", "m", "kernel", "bias", "dc_new", "dm_new",
                              "forget_bias")]
    got = bwd.lstm_cell_step_backward(*args, cell_clip=case["cell_clip"], slip=slip)
    right = bwd.lstm_cell_step_backward(*args, cell_clip=case["cell_clip"])
    for name, w in want.items():
        np.testing.assert_allclose(got[name], w, **TOL, err_msg=name)
    assert not np.allclose(got["dkernel"], right["dkernel"])
    plain = tf_lstm_grads({k: v for k, v in case.items() if k not in change}, basic=basic)
    np.testing.assert_allclose(plain["dkernel"], right["dkernel"], **TOL)
