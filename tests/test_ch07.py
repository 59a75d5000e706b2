"""Chapter 7's own tests: the designed trials' lengths, the padding probe, the facts the checks
rest on (dynamic_rnn's zeros and copied state, a tf.keras mask carrying the state, the
backward direction's names), the real objects the API exercises hand out, and the generic
diagnosis naming what no listed mistake foresaw.

The generic both-ways tests of the exercises (solution passes, stub fails, every mistake
named) are in tests/test_checks.py; the 200-seed sweep in tests/test_sweep.py; the reference
against TensorFlow in tests/test_reference.py."""
import functools
from typing import Any

import numpy as np
import pytest

import rnnbook

tf = rnnbook.setup()  # before anything imports TensorFlow

from conftest import verdict  # noqa: E402
from rnnbook import oracles  # noqa: E402
from rnnbook.byhand import answer  # noqa: E402
from rnnbook.checks import ch07  # noqa: E402
from rnnbook.compare import evaluate  # noqa: E402
from rnnbook.diagnose import probe_cases, probe_sentence  # noqa: E402
from rnnbook.plaindata import to_plain  # noqa: E402
from tests.learners import ch07 as learners  # noqa: E402

CHAPTER = ch07.CHAPTER
PADDING = ch07.PADDING_PROBE
PADDED = ["final_state", "padded_outputs", "reverse_within_lengths", "stacked_final_state",
          "run_with_lengths", "keras_final_state", "bidirectional_outputs"]


def judged(name, fn, seed=0):
    """The check's verdict on ``fn`` at ``seed``, with the expected answers from TensorFlow's
    oracle and the probes asked as the notebook's check asks them."""
    ex, cases = CHAPTER[name], CHAPTER.cases(name, seed)
    extra = probe_cases(ex, cases)

    def probing():
        return extra, [ex.oracle(c) for c in extra], [answer(ex, fn, c) for c in extra]

    return evaluate(ex, cases, [ex.oracle(c) for c in cases],
                    [answer(ex, fn, c) for c in cases], seed=seed, probing=probing)


@pytest.mark.parametrize("name", PADDED)
def test_every_trial_set_holds_each_kind_of_row_at_random_places(name):
    """Over a trial set: a row of full length, one of length 1, one of length 0 and a row with
    padding; the row that holds each kind changes from seed to seed."""
    places = {kind: set() for kind in ("full", "one", "zero")}
    for seed in range(8):
        cases = CHAPTER.cases(name, seed)
        every = np.concatenate([c["lengths"] for c in cases])
        assert {0, 1}.issubset(every), (name, seed, every)
        assert any((c["lengths"] == c["T"]).any() for c in cases), (name, seed)
        assert any(((c["lengths"] > 0) & (c["lengths"] < c["T"])).any() for c in cases)
        first = cases[0]["lengths"]
        for kind, value in (("full", cases[0]["T"]), ("one", 1), ("zero", 0)):
            places[kind].update(np.flatnonzero(first == value).tolist())
    assert all(len(rows) > 1 for rows in places.values()), places


def test_the_padding_probe_changes_only_the_padding_and_tensorflow_does_not_move():
    for name in ("final_state", "padded_outputs", "stacked_final_state",
                 "bidirectional_outputs"):
        ex = CHAPTER[name]
        cases = CHAPTER.cases(name, 3)
        probed = [c for c in probe_cases(ex, cases) if c["probe"] == "inputs:padding"][0]
        base = cases[probed["probed"]]
        padded = np.arange(base["T"])[None, :] >= base["lengths"][:, None]  # (B, T)
        assert padded.any()
        np.testing.assert_array_equal(probed["inputs"][~padded], base["inputs"][~padded])
        assert (probed["inputs"][padded] != base["inputs"][padded]).all()
        for want, got in zip(ex.oracle(base), ex.oracle(probed), strict=True):
            np.testing.assert_array_equal(np.asarray(want), np.asarray(got))


def test_dynamic_rnn_writes_zeros_and_copies_the_state_through():
    """The facts the by-hand exercises rest on, on a trial of every kind of row: outputs past
    each length exactly 0.0, h of the final state the output at step n - 1, a row of length 0
    at the zero state, and the run without sequence_length another state."""
    case = CHAPTER.cases("final_state", 0)[0]
    outputs, (c, h) = ch07._tf1_run(case)
    for b, n in enumerate(case["lengths"]):
        assert (outputs[b, n:] == 0.0).all()
        np.testing.assert_array_equal(h[b], outputs[b, n - 1] if n else np.zeros_like(h[b]))
        if n == 0:
            assert (c[b] == 0).all()
    _, (c_all, h_all) = ch07._tf1_run({**case, "lengths": np.full(case["B"], case["T"])})
    short = case["lengths"] < case["T"]
    assert not np.allclose(h_all[short], h[short], atol=1e-3)


def test_the_stack_oracle_lists_layer_0_first():
    """MultiRNNCell's tuple is layer 0 first: layer 0 alone, run as a one-layer cell on the
    same inputs, gives the tuple's first pair."""
    case = CHAPTER.cases("stacked_final_state", 1)[0]
    stack = ch07._stacked_oracle(case)
    alone = ch07._tf1_run({**case, "kernel": case["kernel0"], "bias": case["bias0"],
                           "forget_bias": 1.0})[1]
    for got, want in zip(stack[0], alone, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _handed(name, case):
    """What the check hands the learner's function for ``case``: its arguments."""
    seen = []
    CHAPTER[name].call(lambda *args: seen.append(args), case)
    return seen[0]


def test_run_with_lengths_hands_out_the_trials_cell():
    """Each trial's cell holds that trial's weights, also after other trials reused the same
    cached cell, and running it with sequence_length gives the oracle's state."""
    cases = CHAPTER.cases("run_with_lengths", 4) + CHAPTER.cases("run_with_lengths", 5)
    for case in cases + cases[:1]:
        cell, inputs, lengths = _handed("run_with_lengths", case)
        kernel, bias = (v.numpy() for v in cell.variables)
        np.testing.assert_array_equal(kernel, case["kernel"])
        np.testing.assert_array_equal(bias, case["bias"])
        assert cell.get_config()["forget_bias"] == 1.0
        got = learners.run_dynamic(cell, inputs, lengths)
        for g, w in zip(got, CHAPTER["run_with_lengths"].oracle(case), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_tf_keras_mask_carries_the_state_through_as_sequence_length_does():
    """The fact 7.6 rests on, on its trials: a tf.keras LSTM given TF1's weights (ported) and
    the mask of the lengths returns TF1's final state; the same layer given no mask returns
    the state after the padding."""
    for case in CHAPTER.cases("keras_final_state", 2):
        c, h = learners.keras_mask_argument(case["inputs"], case["lengths"], case["kernel"],
                                            case["bias"])
        want = CHAPTER["keras_final_state"].oracle(case)
        np.testing.assert_allclose(c, want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(h, want[1], rtol=1e-5, atol=1e-5)
        after = ch07._tf1_run({**case, "lengths": np.full(case["B"], case["T"])})[1]
        unmasked = learners.keras_no_mask(case["inputs"], case["lengths"], case["kernel"],
                                          case["bias"])
        np.testing.assert_allclose(unmasked[0], after[0], rtol=1e-5, atol=1e-5)


def test_a_by_hand_answer_that_calls_tensorflow_earns_nothing():
    def reverse_within_lengths(inputs, lengths):
        return tf.reverse_sequence(inputs, lengths, seq_axis=1, batch_axis=0).numpy()

    outcome = judged("reverse_within_lengths", reverse_within_lengths)
    assert not outcome.passed
    assert "by hand" in outcome.message and "TensorFlow" in outcome.message


def test_a_state_that_reads_the_padding_is_named_by_its_padded_rows():
    """No listed mistake foresees a mask applied to c and not to h: the generic diagnosis
    names it by the rows it is wrong on, exactly those with padding."""
    outcome = judged("final_state", learners.final_h_masked_only)
    assert not outcome.passed
    assert ("h is right on the rows without padding and wrong on every row with padding"
            in outcome.message), outcome.message


def test_the_padding_probe_names_an_answer_that_moves_with_the_padding():
    """The probe's own sentence (what the diagnosis says when no relation between the arrays
    names the mistake): the answer moves when only padded steps change; TensorFlow's does
    not."""
    ex = CHAPTER["final_state"]
    cases = CHAPTER.cases("final_state", 0)
    extra = [c for c in probe_cases(ex, cases) if c["probe"] == "inputs:padding"]
    base = cases[extra[0]["probed"]]
    fn = learners.final_h_masked_only
    said = probe_sentence(ex, (to_plain(ex.oracle(base)), answer(ex, fn, base)),
                          [(PADDING, to_plain(ex.oracle(c)), answer(ex, fn, c)) for c in extra])
    assert said == ("changing the padded steps of `inputs` moves your h; it does not move "
                    "TensorFlow's h."), said
    right = learners.final_masked
    assert probe_sentence(ex, (to_plain(ex.oracle(base)), answer(ex, right, base)),
                          [(PADDING, to_plain(ex.oracle(c)), answer(ex, right, c))
                           for c in extra]) is None


def test_the_reference_is_the_oracle_on_every_exercises_trials():
    for ex in CHAPTER.exercises:
        for case in CHAPTER.cases(ex.name, 11):
            want, got = ex.oracle(case), ex.reference(case)
            np.testing.assert_allclose(np.asarray(got, np.float64),
                                       np.asarray(want, np.float64), rtol=1e-4, atol=1e-5,
                                       err_msg=ex.name)


outcome = functools.partial(verdict, CHAPTER)  # (name, fn, seed=0): the reference's verdict


def test_a_prebuilt_graph_grades_as_the_graph_built_here(monkeypatch):
    """The grader's children import the zygote's serialised bidirectional graph
    (``ch07.PREBUILT``): the same operations (the names 7.7 fetches among them), the same
    variables, and the learners' answers pass or are named as on a graph built here."""
    built = ch07.prebuild()
    key = (ch07.BIDI["T"], ch07.BIDI["D"], ch07.BIDI["H"])
    assert set(built) == {key}
    here = ch07._bidi_graph(*key)
    monkeypatch.setitem(ch07.PREBUILT, key, built[key])
    imported = ch07._bidi_graph(*key)
    names = sorted(op.name for op in imported.get_operations())
    assert names == sorted(op.name for op in here.get_operations())
    assert "bidirectional_rnn/bw/bw/cond_2/Identity_1" in names
    assert [v.name for v in imported.get_collection("variables")] == [
        v.name for v in here.get_collection("variables")]
    monkeypatch.setattr(oracles, "LIVE", {})  # sessions over imported graphs from here on
    name = "backward_state_by_name"
    for fn in learners.RIGHT[name]:
        assert outcome(name, fn, 0).passed, fn.__name__
    for fn, sentence in learners.WRONG[name]:
        result = outcome(name, fn, 0)
        assert not result.passed
        assert sentence is None or result.mistake.startswith(sentence), fn.__name__


def test_the_backward_names_hold_what_the_exercise_says():
    """In the static bidirectional graph, step k's conditional of the backward direction gives
    (output, c, h) as Identity, Identity_1, Identity_2: the output is zero past a row's
    length, the state is not; the last step's state is the direction's final state, and the
    backward half of the output at time 0 is its final output."""
    case = CHAPTER.cases("backward_state_by_name", 2)[0]
    session = ch07.bidi_session(case)
    last = case["T"] - 1
    feed = {"inputs:0": case["inputs"], "lengths:0": case["lengths"]}
    step = f"bidirectional_rnn/bw/bw/cond_{last}/"
    output, c, h, both = session.run([step + "Identity:0", step + "Identity_1:0",
                                      step + "Identity_2:0", "concat:0"], feed)
    want = CHAPTER["backward_state_by_name"].oracle({**case, "k": last})
    np.testing.assert_allclose(c, want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, want[1], rtol=1e-5, atol=1e-6)
    short = case["lengths"] < case["T"]
    assert short.any() and (output[short] == 0).all() and not (h[short] == 0).all()
    H, some = case["H"], case["lengths"] > 0
    np.testing.assert_allclose(both[some, H:], h[some], rtol=1e-5, atol=1e-6)


def test_the_learner_side_reversal_equals_the_reference():
    """backward_state_by_name's forward-direction mistake makes its case with the release's own reversal (the
    reference does not ship): the same as the reference's, which tests/test_reference.py holds
    to tf.reverse_sequence."""
    from rnnbook import reference as ref

    for case in CHAPTER.cases("reverse_within_lengths", 4):
        np.testing.assert_array_equal(ch07._reversed_within(case["inputs"], case["lengths"]),
                                      ref.reverse_within(case["inputs"], case["lengths"]))


def test_the_bidirectional_oracle_is_each_direction_run_with_lengths():
    """bidirectional_outputs' oracle (the real bidirectional_dynamic_rnn) against each
    direction run on its own by TensorFlow: the forward half is dynamic_rnn with the forward
    weights; the backward half is dynamic_rnn with the backward weights on
    tf.reverse_sequence of the batch, its outputs reversed back the same way; zeros past each
    length in both."""
    ex = CHAPTER["bidirectional_outputs"]
    for seed in (0, 7):
        for case in CHAPTER.cases("bidirectional_outputs", seed):
            both = ex.oracle(case)
            H, lengths = case["H"], case["lengths"].astype(np.int64)
            forward = ch07._tf1_run({**case, "kernel": case["kernel_fw"],
                                     "bias": case["bias_fw"], "forget_bias": 1.0})[0]
            flipped = tf.reverse_sequence(case["inputs"], lengths, seq_axis=1,
                                          batch_axis=0).numpy()
            read = ch07._tf1_run({**case, "inputs": flipped, "kernel": case["kernel_bw"],
                                  "bias": case["bias_bw"], "forget_bias": 1.0})[0]
            backward = tf.reverse_sequence(read, lengths, seq_axis=1, batch_axis=0).numpy()
            np.testing.assert_allclose(both[..., :H], forward, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(both[..., H:], backward, rtol=1e-5, atol=1e-6)
            padded = np.arange(case["T"])[None, :] >= case["lengths"][:, None]  # (B, T)
            assert (both[padded] == 0.0).all()


def _bidi_dynamic_graph(D: int, H: int) -> Any:
    """bidirectional_dynamic_rnn in a graph over the placeholders inputs (None, None, D) and
    lengths (None,); ``outputs:0`` (B, T, 2H) the two directions concatenated."""
    v1, rc = tf.compat.v1, tf.compat.v1.nn.rnn_cell
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [None, None, D], name="inputs")  # (B, T, D)
        lengths = v1.placeholder(tf.int32, [None], name="lengths")  # (B,)
        both, _ = v1.nn.bidirectional_dynamic_rnn(rc.BasicLSTMCell(H), rc.BasicLSTMCell(H), x,
                                                  sequence_length=lengths, dtype=tf.float32)
        tf.concat(both, axis=2, name="outputs")  # (B, T, 2H)
    return graph


def test_the_bidirectional_oracle_runs_eagerly_with_the_graphs_bits():
    """bidirectional_outputs' oracle runs bidirectional_dynamic_rnn eagerly (its cells built, then given the
    trial's weights): the same bits as the same call in a graph, on 12 seeds' trials."""
    ex = CHAPTER["bidirectional_outputs"]
    for seed in range(12):
        for case in CHAPTER.cases("bidirectional_outputs", seed):
            key = (case["D"], case["H"])
            session = oracles.live_session(("test", "bidi", *key),
                                           functools.partial(_bidi_dynamic_graph, *key),
                                           ch07._bidi_weights(case))
            fed = {"inputs:0": case["inputs"].astype(np.float32), "lengths:0": case["lengths"]}
            in_graph = session.run("outputs:0", fed)  # (B, T, 2H)
            np.testing.assert_array_equal(ex.oracle(case), in_graph)


def test_bidirectional_answers_no_mistake_foresaw_are_named_by_half_and_by_padding():
    """The backward weights run forward (no reversal at all): the backward half is named
    wrong and the forward half right. Outputs past each length that continue the run: named
    by the rows with padding, or by the padding probe."""
    said = judged("bidirectional_outputs", learners.bidi_backward_unreversed).message
    assert "the backward block is wrong; the other blocks are right" in said, said
    said = judged("bidirectional_outputs", learners.bidi_outputs_run_on).message
    assert "What is wrong" in said and ("padding" in said or "axis 0" in said), said
