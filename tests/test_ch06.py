"""Chapter 6's own tests: the learner-side layout conversions equal the reference's, the live
sessions carry the trial's weights, the designed trials keep B, D and H apart, the gate map the
oracle finds is the one the chapter states, and every mistake is named the same with TensorFlow's
oracle as with the reference (the learner release).

The generic both-ways tests of the exercises (solution passes, stub fails, every mistake named)
are in tests/test_checks.py; the 200-seed sweep in tests/test_sweep.py."""
import functools

import numpy as np
import pytest

import rnnbook

rnnbook.setup()  # before anything imports TensorFlow

from conftest import verdict  # noqa: E402
from rnnbook import oracles  # noqa: E402
from rnnbook import reference as ref  # noqa: E402
from rnnbook.byhand import answer  # noqa: E402
from rnnbook.checks import ch06  # noqa: E402
from rnnbook.compare import evaluate  # noqa: E402
from tests.learners import ch06 as learners  # noqa: E402

CHAPTER = ch06.CHAPTER


def test_learner_side_conversions_equal_the_reference():
    rng = np.random.default_rng(0)
    D, H = 3, 2
    tf1 = [rng.standard_normal(s).astype(np.float32)
           for s in ((D + H, 2 * H), (2 * H,), (D + H, H), (H,))]
    for mine, theirs in zip(ch06.tf1_to_keras(*tf1, D), ref.keras_gru_from_tf1(*tf1, D),
                            strict=True):
        np.testing.assert_array_equal(mine, theirs)
    keras = [rng.standard_normal(s).astype(np.float32)
             for s in ((D, 3 * H), (H, 3 * H), (2, 3 * H))]
    for mine, theirs in zip(ch06.keras_to_torch(*keras), ref.torch_gru_from_keras(*keras),
                            strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_designed_trials_keep_batch_depth_and_units_apart():
    """Every trial of every exercise with a batch has B, D and H all different."""
    for ex in CHAPTER.exercises:
        for case in CHAPTER.cases(ex.name, 0):
            sizes = [case[k] for k in ("B", "D", "H") if k in case]
            assert len(set(sizes)) == len(sizes), (ex.name, sizes)


def test_sessions_hold_the_trials_weights():
    """The API exercises' live session (one graph for gru_gates and keras_gru_from_session) reads
    back each trial's
    weights, trial after trial (the graph built once a process)."""
    names = {"gates/kernel": "gates_kernel", "gates/bias": "gates_bias",
             "candidate/kernel": "cand_kernel", "candidate/bias": "cand_bias"}
    sessions = set()
    for name in ("gru_gates", "keras_gru_from_session"):
        for seed in range(2):
            for case in CHAPTER.cases(name, seed):
                session = ch06.live_session(case)
                sessions.add(id(session))
                for var in session.graph.get_collection("variables"):
                    key = names[var.op.name.split("gru_cell/")[1]]
                    np.testing.assert_array_equal(session.run(var), case[key])
    assert len(sessions) == 1


def test_gate_map_is_r_then_u():
    """The oracle finds r and z by their roles (z is read by 1 - z): the chapter's statement
    that GRUCell's split gives r as :0 and u as :1 holds on every step."""
    for t, (r, z) in enumerate(ch06.gate_tensors(2, 3, 4)):
        op = "rnn/gru_cell/split" + (f"_{t}" if t else "")
        assert (r, z) == (f"{op}:0", f"{op}:1")


def test_oracle_of_the_port_refuses_a_wrong_port(monkeypatch):
    """keras_from_tf1_gru's oracle runs both real cells: a port that does not reproduce TF1 raises."""
    case = CHAPTER.cases("keras_from_tf1_gru", 0)[0]
    monkeypatch.setattr(ch06, "tf1_to_keras", lambda *w: learners.port_tf1_order(*w))
    with pytest.raises(AssertionError, match="differs from TF1's GRUCell"):
        ch06._port_oracle(case)


def test_reset_after_differs_from_tf1_on_the_trials():
    """TF1's form and reset_after=True differ on every designed trial of fresh_gru_step: the mistake 'r
    applied after the matmul' is never the right answer in disguise."""
    for case in CHAPTER.cases("fresh_gru_step", 0):
        moved = ch06._as_keras_after(case)
        assert not np.allclose(ch06._step_reference(case), ch06._step_reference(moved))


def test_a_by_hand_answer_that_calls_keras_earns_nothing():
    """keras_gru_step is by hand: the right answer computed with a real Keras GRU is refused."""
    ex = CHAPTER["keras_gru_step"]

    def with_keras(x, h, kernel, recurrent_kernel, bias):
        from rnnbook.oracles import run_keras_gru

        return run_keras_gru(x[:, None], [kernel, recurrent_kernel, bias], h)[1]

    cases = CHAPTER.cases(ex.name, 0)
    outcome = evaluate(ex, cases, [ex.oracle(c) for c in cases],
                       [answer(ex, with_keras, c) for c in cases])
    assert not outcome.passed


outcome = functools.partial(verdict, CHAPTER)  # (name, fn, seed=0): the reference's verdict


def test_a_prebuilt_graph_grades_as_the_graph_built_here(monkeypatch):
    """The grader's children import the zygote's serialised graph (``ch06.PREBUILT``): the same
    operations (no Saver's), the same variables, and the learners' answers to gru_gates and
    keras_gru_from_session
    pass or are named as on a graph built in the child."""
    built = ch06.prebuild()
    key = (ch06.GRAPH["D"], ch06.GRAPH["H"], ch06.GRAPH["T"])
    assert set(built) == {key}
    here = ch06._gru_graph(*key)
    monkeypatch.setitem(ch06.PREBUILT, key, built[key])
    imported = ch06._gru_graph(*key)
    names = sorted(op.name for op in imported.get_operations())
    assert names == sorted(op.name for op in here.get_operations())
    assert [v.name for v in imported.get_collection("variables")] == [
        v.name for v in here.get_collection("variables")]
    monkeypatch.setattr(oracles, "LIVE", {})  # sessions over imported graphs from here on
    for name in ("gru_gates", "keras_gru_from_session"):
        for fn in learners.RIGHT[name]:
            assert outcome(name, fn, 0).passed, fn.__name__
        for fn, sentence in learners.WRONG[name]:
            result = outcome(name, fn, 0)
            assert not result.passed
            assert sentence is None or result.mistake.startswith(sentence), fn.__name__


# --- issue 35: checks that test the skill they name ----------------------------------------


def _no_reference(monkeypatch):
    """The learner release's rnnbook.reference: every function raises ImportError."""
    def stub(*args, **kwargs):
        raise ImportError("rnnbook.reference is not shipped")
    for name in ("torch_gru_step", "keras_gru_step", "gru_cell", "unroll"):
        monkeypatch.setattr(ref, name, stub)


@pytest.mark.parametrize("release", [False, True])
def test_any_bias_split_that_computes_the_same_gru_passes(monkeypatch, release):
    """6.5 (issue 35): the r and z blocks of bias_hh moved into bias_ih compute PyTorch's same
    function and earn full marks, with the reference and in the learner release (the real
    Keras GRU runs the answer's weights); the n blocks summed do not, and are named. The
    verdict names where the expected value came from."""
    ex = CHAPTER["torch_from_keras_gru"]
    cases = CHAPTER.cases(ex.name, 3)
    expected = [ex.oracle(c) for c in cases]
    if release:
        _no_reference(monkeypatch)
    split = evaluate(ex, cases, expected,
                     [answer(ex, learners.torch_right_biases_split, c) for c in cases])
    assert split.passed and split.share == 1, split.message
    assert "matches PyTorch's equations" in split.message
    summed = evaluate(ex, cases, expected,
                      [answer(ex, learners.torch_biases_summed, c) for c in cases])
    assert not summed.passed and summed.share < 1
    assert summed.mistake.startswith("the two biases were summed into one"), summed.message
    assert "does not match PyTorch's equations" in summed.message


def test_a_keras_gru_must_be_built_in_the_function():
    """6.7 (issue 35): TF1's own outputs, a NumPy unroll, or a layer built beside them, earn
    nothing, and the message says no layer gave them; the solution's layer passes."""
    for fn, words in ((learners.from_session_tf1_outputs, ch06.NO_LAYER),
                      (learners.from_session_numpy, ch06.NO_LAYER),
                      (learners.from_session_layer_unused, ch06.NOT_ITS_OUTPUTS)):
        result = outcome("keras_gru_from_session", fn, 1)
        assert not result.passed and result.share == 0, fn.__name__
        assert words in result.message and result.mistake, result.message
    assert outcome("keras_gru_from_session", learners.from_session_right, 1).passed
