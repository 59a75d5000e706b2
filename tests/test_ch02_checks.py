"""Chapter 2's checks on their own: the real objects the API exercises hand to learners carry the
trial's weights, the designed trials hold what the chapter's mistakes need, and the check module
never touches the NumPy reference at import (it does not ship to learners).

The generic tests (solution passes, stub fails, every mistake named on 200 seeds) are in
tests/test_checks.py and tests/test_sweep.py.
"""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import rnnbook

rnnbook.setup()  # before anything imports TensorFlow

from rnnbook import graphs  # noqa: E402
from rnnbook.byhand import BY_HAND, answer  # noqa: E402
from rnnbook.checks import ch02  # noqa: E402
from rnnbook.compare import evaluate  # noqa: E402
from rnnbook.plaindata import Raised  # noqa: E402
from tests.test_sweep import SEEDS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SESSION_EXERCISES = ["gate_preactivations", "gate_activations"]


def variables_of(session):
    return session.run(session.graph.get_collection("variables"))


@pytest.mark.parametrize("name", SESSION_EXERCISES)
def test_live_session_carries_each_trials_weights(name):
    """The session handed to the learner holds THIS trial's kernel and bias, and its Split
    outputs are what the independent oracle fetches from a graph of its own."""
    for case in ch02.CHAPTER.cases(name, seed=11):
        session = ch02.live_session(case)
        kernel, bias = variables_of(session)
        np.testing.assert_array_equal(kernel, case["kernel"])
        np.testing.assert_array_equal(bias, case["bias"])
        fetched = session.run([f"{ch02.SPLIT}:{k}" for k in range(4)], {"x:0": case["inputs"]})
        want = ch02._fetch_static(case, [f"{ch02.SPLIT}:{k}" for k in range(4)])
        for got, expected in zip(fetched, want, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_live_session_graphs_are_built_once_and_reloaded():
    cases = ch02.CHAPTER.cases("gate_activations", seed=3)
    first = ch02.live_session(cases[0])
    other = ch02.CHAPTER.cases("gate_activations", seed=4)[0]  # same design, new weights
    again = ch02.live_session(other)
    assert again is first
    np.testing.assert_array_equal(variables_of(again)[0], other["kernel"])


def test_a_closed_session_is_replaced():
    """A learner's `with session:` closes the session; the next trial gets a fresh one."""
    case = ch02.CHAPTER.cases("gate_preactivations", seed=5)[0]

    def closes(session, inputs, t):
        with session:
            return session.run([f"{ch02.SPLIT}:{k}" for k in range(4)], {"x:0": inputs})

    ex = ch02.CHAPTER["gate_preactivations"]
    answer(ex, closes, case)
    assert not isinstance(answer(ex, closes, case), Raised)


def test_the_forget_bias_of_the_session_graph_is_the_trials():
    """The cell's forget_bias is a constant in the graph: the designs choose it, and the
    session graph really was built with it."""
    for case in ch02.CHAPTER.cases("gate_activations", seed=0):
        graph = ch02.live_session(case).graph
        add = graph.get_tensor_by_name(f"{ch02.SPLIT}:2").consumers()[0]
        assert add.type in ("Add", "AddV2")
        forget_bias = ch02.live_session(case).run(add.inputs[1])
        assert forget_bias == case["forget_bias"]


@pytest.mark.parametrize("name", ["lstm_step", "gate_preactivations", "gate_activations"])
def test_every_trial_set_has_a_forget_bias_other_than_1_and_0(name):
    """A hard-coded forget_bias=1.0 (or none at all) must fail on every seed."""
    for seed in range(20):
        biases = [case["forget_bias"] for case in ch02.CHAPTER.cases(name, seed)]
        assert any(b not in (0.0, 1.0) for b in biases), biases
        assert 0.0 not in biases


@pytest.mark.parametrize("name, steps", [("gate_tensor_name", lambda case: 7),
                                         ("gate_preactivations", lambda case: case["T"])])
def test_every_trial_set_asks_for_the_first_second_and_last_step(name, steps):
    """Issue 25's boundaries: step 0 (the bare `split`), step 1 (the first suffix) and the
    last step are asked on every seed, so an answer wrong at only one of them never gets full
    marks (tests/learners/ch02.py's `*_suffix_from_two` are wrong at step 1 alone)."""
    for seed in SEEDS:
        cases = ch02.CHAPTER.cases(name, seed)
        asked = {case["t"] for case in cases}
        last = {steps(case) - 1 for case in cases}
        assert {0, 1} <= asked and asked & last, (seed, asked)


def test_a_wrong_first_suffix_fails_on_every_seed_with_its_sentence():
    from tests.learners import ch02 as learners

    ex = ch02.CHAPTER["gate_tensor_name"]
    for seed in SEEDS:
        cases = ch02.CHAPTER.cases(ex.name, seed)
        got = [answer(ex, learners.name_suffix_from_two, case) for case in cases]
        outcome = evaluate(ex, cases, [ex.reference(c) for c in cases], got)
        assert not outcome.passed and outcome.mistake == ch02.SPLIT_1, (seed, outcome)


def test_perturbed_families_change_the_case_not_the_model():
    """common.py's ``*_case`` families: the right answer on a changed case (blocks j and f
    swapped, forget_bias set); ``split_at_h_raises`` names NumPy's row mismatch of D and H
    only."""
    from rnnbook.checks import common

    case = {"kernel": np.arange(8.0).reshape(1, 8), "bias": np.arange(8.0), "forget_bias": 2.5,
            "D": 2, "H": 3}
    changed = common.keras_order_case("s").perturb(case)
    assert changed["kernel"].tolist() == [[0, 1, 4, 5, 2, 3, 6, 7]]
    assert changed["bias"].tolist() == [0, 1, 4, 5, 2, 3, 6, 7]
    assert common.forget_bias_left_out_case("s").perturb(case)["forget_bias"] == 0.0
    assert common.forget_bias_twice_case("s").perturb(case)["forget_bias"] == 5.0
    assert common.forget_bias_hard_coded_case("s").perturb(case)["forget_bias"] == 1.0
    mistake = common.split_at_h_raises("s")
    for rows, error in ((3, ValueError), (2, None)):
        try:
            np.ones((1, 2)) @ np.ones((rows, 4))
        except ValueError as raised:
            assert error is ValueError
            assert mistake.raises(case, Raised("ValueError", str(raised)))
    try:
        np.dot(np.ones((1, 2)), np.ones((3, 4)))
    except ValueError as raised:
        assert mistake.raises(case, Raised("ValueError", str(raised)))
    try:
        np.ones((1, 2)) @ np.ones((5, 4))  # D + H rows: x @ kernel, not a split at H
    except ValueError as raised:
        assert not mistake.raises(case, Raised("ValueError", str(raised)))


def test_event_file_holds_the_graph_the_oracle_reads():
    for case in ch02.CHAPTER.cases("split_ops_in_event_file", seed=2):
        path = ch02.event_file(*ch02._key(case))
        graph_def = graphs.read_graph(path)
        assert graphs.ops_of_type(graph_def, "Split") == ch02._event_oracle(case)
        assert ch02._event_reference(case) == ch02._event_oracle(case)


def test_name_matching_split_meets_a_const_on_every_seed():
    """The reason matching 'split' in names fails on every seed: a design with tf.split."""
    for seed in SEEDS:
        cases = ch02.CHAPTER.cases("split_ops_in_event_file", seed)
        assert any(n == "split/split_dim" for c in cases for n, _ in ch02._nodes(*ch02._key(c)))


def test_an_op_name_fetch_says_so():
    """session.run on an op name returns None: the check says to fetch 'op_name:k'."""
    ex = ch02.CHAPTER["gate_preactivations"]
    case = ch02.CHAPTER.cases("gate_preactivations", seed=1)[0]
    got = answer(ex, lambda session, inputs, t: [session.run(ch02.SPLIT, {"x:0": inputs})] * 4,
                 case)
    assert isinstance(got, Raised) and "OP name" in got.message and "op_name:k" in got.message


def test_by_hand_step_answered_with_tensorflow_gets_no_credit():
    import tensorflow as tf

    ex = ch02.CHAPTER["lstm_step"]
    case = ch02.CHAPTER.cases("lstm_step", seed=1)[0]

    def with_tf(x, c, h, kernel, bias, forget_bias):
        z = tf.matmul(tf.concat([x, h], 1), kernel) + bias
        i, j, f, o = tf.split(z, 4, axis=1)
        c_new = c * tf.sigmoid(f + forget_bias) + tf.sigmoid(i) * tf.tanh(j)
        return c_new, tf.tanh(c_new) * tf.sigmoid(o)

    got = answer(ex, with_tf, case)
    assert isinstance(got, Raised) and got.kind == BY_HAND


def test_the_check_module_does_not_touch_the_reference_at_import():
    """Learners get a stub for rnnbook.reference whose attributes raise; importing the chapter's
    checks (and making its cases) must not touch it."""
    code = (
        "import sys, types\n"
        "class Stub(types.ModuleType):\n"
        "    def __getattr__(self, name):\n"
        "        raise RuntimeError('reference.' + name)\n"
        "sys.modules['rnnbook.reference'] = Stub('rnnbook.reference')\n"
        "from rnnbook.checks import ch02\n"
        "for ex in ch02.CHAPTER.exercises:\n"
        "    ch02.CHAPTER.cases(ex.name, 0)\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.stdout.strip().endswith("ok"), run.stderr[-2000:]


def test_an_unfed_placeholder_is_reported_briefly_at_the_learners_line():
    """The question's `.eval()` failure: TensorFlow's message names the placeholder; the stack
    that built the graph (the check's) is left out, the learner's own line is named."""
    ex = ch02.CHAPTER["gate_preactivations"]
    case = ch02.CHAPTER.cases("gate_preactivations", seed=1)[0]

    def no_feed(session, inputs, t):
        return session.run([f"{ch02.SPLIT}:{k}" for k in range(4)])

    got = answer(ex, no_feed, case)
    assert isinstance(got, Raised) and got.kind == "InvalidArgumentError"
    assert "You must feed a value for placeholder tensor 'x'" in got.message
    assert "File " not in got.message and "stack trace" not in got.message
    assert "session.run(" in got.where


def test_agrees_is_difference_without_the_message():
    """compare.agrees (the fast comparison mistake recognition uses) says what difference()
    says, on arrays near the tolerance, NaN, inf, shapes, dtypes, sequences and strings."""
    from rnnbook.compare import agrees, difference

    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(300):
        a = rng.standard_normal((2, 3)).astype(np.float32)
        noise = rng.choice([0.0, 1e-6, 1e-5, 3e-5, 1e-4, 1e-3]) * rng.standard_normal(a.shape)
        pairs.append((a, (a + noise).astype(rng.choice([np.float32, np.float64]))))
    a = np.ones((2, 2), np.float32)
    pairs += [(a, a * np.nan), (a * np.inf, a * np.inf), (a, a * np.inf), (a, a[:1]),
              (a, a.astype(int)), (a, np.ones((2, 2), bool)), ([a, a], [a, a + 1]),
              ([a, a], [a]), ([a, a], (a, a)), ("x:0", "x:0"), ("x:0", "x"), (["a", "b"],
              ["b", "a"]), (a, None), (a, [[1.0, 1.0], [1.0, 1.0]])]
    for expected, got in pairs:
        assert agrees(expected, got) == (difference(expected, got) is None), (expected, got)


def test_a_graph_the_learner_added_ops_to_is_replaced():
    """Ops a learner adds to the session's graph (a tf.sigmoid of split:2, say) become new
    consumers of the gates; the next trial must not walk into them."""
    case = ch02.CHAPTER.cases("gate_activations", seed=6)[0]
    session = ch02.live_session(case)
    import tensorflow as tf

    with session.graph.as_default():
        tf.sigmoid(session.graph.get_tensor_by_name(f"{ch02.SPLIT}:2"))
    fresh = ch02.live_session(case)
    assert fresh is not session
    assert len(fresh.graph.get_tensor_by_name(f"{ch02.SPLIT}:2").consumers()) == 1
    np.testing.assert_array_equal(variables_of(fresh)[1], case["bias"])
