"""Chapter 3 specifics: the Keras 3 oracle helper, the oracles' own cross-checks, and the real TF
objects the API exercises hand to learners.

The generic tests (solution passes, stub fails, every mistake named on 200 seeds) are in
tests/test_checks.py and tests/test_sweep.py. Here: ``run_keras_lstm`` computes what Keras 3's
LSTM documents (gate order i, f, g, o, state [h, c], chunks through one stateful layer); the port
oracles really prove their expected weights against the TF1 cell, so a wrong expectation raises
instead of grading learners against it; the cells that step_lstm_cell and port_to_keras hand out
carry the trial's
weights, forget_bias and state form, also when one cached cell serves many trials.
"""
import numpy as np
import pytest

import rnnbook
from rnnbook import reference as ref
from rnnbook.byhand import answer
from rnnbook.checks import ch03
from rnnbook.compare import evaluate
from rnnbook.oracles import run_keras_lstm

tf = rnnbook.setup()


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
    outputs, (h, c) = ref.unroll(ref.keras_cell(*k["weights"]), k["inputs"], [k["h"], k["c"]])
    for g, w in zip(got, (outputs, h, c), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    swapped = run_keras_lstm(k["inputs"], k["weights"], initial_state=[k["c"], k["h"]])
    assert not np.allclose(swapped[0], outputs, atol=1e-3)  # [c, h] is accepted and wrong


def test_run_keras_lstm_dict_weights_and_stateful_chunks(lstm_case):
    k = lstm_case
    names = dict(zip(("kernel", "recurrent_kernel", "bias"), k["weights"], strict=True))
    whole = run_keras_lstm(k["inputs"], names, initial_state=[k["h"], k["c"]])
    halves = run_keras_lstm([k["inputs"][:, :2], k["inputs"][:, 2:]], k["weights"],
                            initial_state=[k["h"], k["c"]], stateful=True)
    assert len(halves) == 2
    np.testing.assert_allclose(np.concatenate([halves[0][0], halves[1][0]], axis=1), whole[0],
                               atol=1e-6)
    np.testing.assert_allclose(halves[1][2], whole[2], atol=1e-6)
    reset = run_keras_lstm([k["inputs"][:, :2], k["inputs"][:, 2:]], k["weights"],
                           initial_state=[k["h"], k["c"]])  # not stateful: 2nd call from zeros
    assert not np.allclose(reset[1][0], whole[0][:, 2:], atol=1e-3)


def test_split_oracle_reads_the_cells_own_slices():
    case = {"B": 2, "H": 4, "num_proj": 2, "state": np.arange(12, dtype=np.float32).reshape(2, 6)}
    c, m = ch03._split_oracle(case)
    np.testing.assert_array_equal(c, case["state"][:, :4])
    np.testing.assert_array_equal(m, case["state"][:, 4:])


def _unordered(original):
    """A port that forgets to reorder the gate blocks (and to fold forget_bias)."""
    return lambda case: (case["kernel"][:case["D"]], case["kernel"][case["D"]:], case["bias"])


@pytest.mark.parametrize("exercise", ["keras_from_tf1", "port_to_keras"])
def test_oracles_refuse_a_wrong_expectation(monkeypatch, exercise):
    """With the port deliberately broken, the oracle's cross-check raises instead of returning."""
    case = ch03.CHAPTER.cases(exercise, 0)[0]
    ch03.CHAPTER[exercise].oracle(case)  # as shipped: no error
    monkeypatch.setattr(ch03, "_keras_from_tf1", _unordered(ch03._keras_from_tf1))
    with pytest.raises(AssertionError, match="does not reproduce"):
        ch03.CHAPTER[exercise].oracle(case)


def _handed(exercise, case):
    """What the check hands the learner's function for ``case``: its arguments."""
    seen = []
    ch03.CHAPTER[exercise].call(lambda *args: seen.append(args), case)
    return seen[0]


def test_step_lstm_cell_hands_out_the_trials_own_cell():
    """Each trial's cell holds that trial's weights and state form, and running it gives the
    oracle's answer, also after other trials reused the same cached cell."""
    cases = ch03.CHAPTER.cases("step_lstm_cell", 5) + ch03.CHAPTER.cases("step_lstm_cell", 6)
    for case in cases + cases[:2]:  # the first two again, after the cache served the others
        cell, x, c, m = _handed("step_lstm_cell", case)
        values = {v.name.split(":")[0].split("/", 1)[1]: v.numpy() for v in cell.variables}
        for name in ch03.WEIGHT_NAMES:
            if name in case:
                np.testing.assert_array_equal(values[name], case[name])
        assert cell.get_config()["state_is_tuple"] == case["state_is_tuple"]
        assert cell.get_config()["num_proj"] == case["num_proj"]
        state = ((c, m) if case["state_is_tuple"] else np.concatenate([c, m], axis=1))
        _, new = cell(x, state)
        if not case["state_is_tuple"]:
            new = (new[:, :case["H"]], new[:, case["H"]:])
        want = ch03.CHAPTER["step_lstm_cell"].oracle(case)
        for got, expected in zip(new, want, strict=True):
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-6)


def test_port_to_keras_hands_out_a_real_state_tuple_and_the_trials_forget_bias():
    for case in ch03.CHAPTER.cases("port_to_keras", 2):
        cell, state = _handed("port_to_keras", case)
        assert cell.get_config()["forget_bias"] == case["forget_bias"]
        kernel, bias = cell.get_weights()
        np.testing.assert_array_equal(kernel, case["kernel"])
        np.testing.assert_array_equal(bias, case["bias"])
        if case["state_is_tuple"]:
            assert isinstance(state, tf.compat.v1.nn.rnn_cell.LSTMStateTuple)
            np.testing.assert_array_equal(state.c, case["c0"])
            np.testing.assert_array_equal(state.h, case["h0"])
        else:
            np.testing.assert_array_equal(state, np.concatenate([case["c0"], case["h0"]], 1))


def test_the_cell_really_uses_the_forget_bias_it_reports():
    """port_to_keras sets forget_bias on a cached cell: the cell must compute with it, not only report it."""
    case = ch03.CHAPTER.cases("port_to_keras", 0)[0]
    cell, state = _handed("port_to_keras", case)
    x = case["inputs"][:, 0]
    _, (c, h) = cell(x, state)
    want_c, want_h = ref.lstm_cell_step(x, case["c0"], case["h0"], case["kernel"], case["bias"],
                                        forget_bias=case["forget_bias"])
    np.testing.assert_allclose(c, want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)


def test_a_by_hand_answer_that_calls_tensorflow_earns_nothing():
    def split_state(state, num_units):
        c, m = tf.split(state, [num_units, -1], axis=1)
        return c.numpy(), m.numpy()

    chapter = ch03.CHAPTER
    ex = chapter["split_state"]
    cases = chapter.cases("split_state", 0)
    outcome = evaluate(ex, cases, [ex.reference(c) for c in cases],
                       [answer(ex, split_state, c) for c in cases])
    assert not outcome.passed
    assert "by hand" in outcome.message and "TensorFlow" in outcome.message


# --- the mistake models: the same with TensorFlow's oracle as with the reference (issue 25) ---
