"""Chapter 3 specifics: the Keras 3 oracle helper and the oracles' own cross-checks.

The generic both-ways tests (solution passes, stub fails, every mistake named) are in
tests/test_checks.py. Here: ``run_keras_lstm`` computes what Keras 3's LSTM documents (gate order
i, f, c, o, state [h, c], chunks through one stateful layer); the conversion oracles really prove
their expected weights against TF1 / PyTorch's equations, so a wrong expectation raises instead
of grading learners against it.
"""
import numpy as np
import pytest

from rnnbook.checks import ch03
from rnnbook.oracles import run_keras_lstm


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def keras_numpy(inputs, kernel, recurrent, bias, h, c):
    """Keras 3's LSTM in NumPy: blocks i, f, c, o, no forget bias at run time."""
    outputs = []
    for t in range(inputs.shape[1]):
        i, f, g, o = np.split(inputs[:, t] @ kernel + h @ recurrent + bias, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), h, c


@pytest.fixture
def lstm_case():
    rng = np.random.default_rng(3)
    B, T, D, H = 2, 5, 3, 4
    return {
        "inputs": rng.normal(size=(B, T, D)).astype(np.float32),
        "weights": [rng.normal(0, 0.5, size=shape).astype(np.float32)
                    for shape in ((D, 4 * H), (H, 4 * H), (4 * H,))],
        "h": rng.normal(size=(B, H)).astype(np.float32),
        "c": rng.normal(size=(B, H)).astype(np.float32),
    }


def test_run_keras_lstm_is_keras_order_and_h_first(lstm_case):
    k = lstm_case
    got = run_keras_lstm(k["inputs"], k["weights"], initial_state=[k["h"], k["c"]])
    want = keras_numpy(k["inputs"], *k["weights"], k["h"], k["c"])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    swapped = run_keras_lstm(k["inputs"], k["weights"], initial_state=[k["c"], k["h"]])
    assert not np.allclose(swapped[0], want[0], atol=1e-3)  # [c, h] is accepted and wrong


def test_run_keras_lstm_dict_weights_and_stateful_chunks(lstm_case):
    k = lstm_case
    names = dict(zip(("kernel", "recurrent_kernel", "bias"), k["weights"], strict=True))
    whole = run_keras_lstm(k["inputs"], names, initial_state=[k["h"], k["c"]])
    halves = run_keras_lstm([k["inputs"][:, :2], k["inputs"][:, 2:]], k["weights"],
                            initial_state=[k["h"], k["c"]], stateful=True)
    assert len(halves) == 2
    np.testing.assert_allclose(np.concatenate([halves[0][0], halves[1][0]], axis=1), whole[0], atol=1e-6)
    np.testing.assert_allclose(halves[1][2], whole[2], atol=1e-6)
    reset = run_keras_lstm([k["inputs"][:, :2], k["inputs"][:, 2:]], k["weights"],
                           initial_state=[k["h"], k["c"]])  # not stateful: 2nd call from zeros
    assert not np.allclose(reset[1][0], whole[0][:, 2:], atol=1e-3)


def test_split_oracle_reads_the_cells_own_slices():
    case = {"B": 2, "D": 3, "H": 4, "num_proj": 2,
            "state": np.arange(12, dtype=np.float32).reshape(2, 6)}
    c, m = ch03._split_oracle(case)
    np.testing.assert_array_equal(c, case["state"][:, :4])
    np.testing.assert_array_equal(m, case["state"][:, 4:])


def test_pytorch_reference_matches_its_documented_single_step():
    """One step of ``pytorch_lstm`` written out gate by gate from PyTorch's documentation."""
    case = ch03._sequence_case(np.random.default_rng(5), "torch")
    case["inputs"] = case["inputs"][:, :1]
    _, h, c = ch03.pytorch_lstm(case)
    x, h0, c0, H = case["inputs"][:, 0], case["h0"], case["c0"], case["H"]
    W_i, W_h = case["weight_ih"], case["weight_hh"]

    def gate(k):  # rows [kH:(k+1)H] of each weight: W_i? x + b_i? + W_h? h + b_h?
        rows = slice(k * H, (k + 1) * H)
        return (x @ W_i[rows].T + case["bias_ih"][rows] + h0 @ W_h[rows].T + case["bias_hh"][rows])

    i, f, g, o = sigmoid(gate(0)), sigmoid(gate(1)), np.tanh(gate(2)), sigmoid(gate(3))
    np.testing.assert_allclose(c, f * c0 + i * g, rtol=1e-6)
    np.testing.assert_allclose(h, o * np.tanh(f * c0 + i * g), rtol=1e-6)


def _unfolded(original):
    return lambda case, fold=True: original(case, fold=False)


def _one_bias(original):
    return lambda case: (*original(case)[:2], case["bias_ih"])


@pytest.mark.parametrize("exercise,target,breaker", [
    ("keras_state_from_tf1", "_keras_from_tf1", _unfolded),
    ("keras_from_tf1", "_keras_from_tf1", _unfolded),
    ("keras_from_pytorch", "_keras_from_torch", _one_bias),
])
def test_oracles_refuse_a_wrong_expectation(monkeypatch, exercise, target, breaker):
    """With the port deliberately broken, the oracle's cross-check raises instead of returning."""
    case = ch03.CHAPTER.cases(exercise, 0, trials=1)[0]
    ch03.CHAPTER[exercise].oracle(case)  # as shipped: no error
    monkeypatch.setattr(ch03, target, breaker(getattr(ch03, target)))
    with pytest.raises(AssertionError, match="does not reproduce"):
        ch03.CHAPTER[exercise].oracle(case)
