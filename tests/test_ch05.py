"""Chapter 5's own tests: the objects the API checks build carry the trial's weights, the designed
trials really contain what tells the mistakes apart, and the checks module works where the
instructor-side modules (rnnbook.reference, rnnbook.backward) are stubs, as in the learner
release."""

import numpy as np
import pytest

from rnnbook import backward as bwd
from rnnbook import compare
from rnnbook import reference as ref
from rnnbook.checks import ch05
from rnnbook.compare import evaluate
from rnnbook.memo import remembered
from rnnbook.plaindata import to_plain
from tests.test_sweep import SEEDS

CHAPTER = ch05.CHAPTER


def test_split_grad_session_holds_the_trials_weights():
    for seed in range(3):
        for case in CHAPTER.cases("split_grad_by_name", seed):
            session, _ = ch05._by_name_session(case)
            variables = ch05._lstm_graph(case["B"], case["T"], case["D"], case["H"])[1]
            kernel, bias = session.run(list(variables))
            np.testing.assert_array_equal(kernel, case["kernel"])
            np.testing.assert_array_equal(bias, case["bias"])


def test_keras_cell_holds_the_ported_tf1_cell():
    """The Keras 3 cell the check hands out computes what the TF1 BasicLSTMCell of the case
    computes (the port in make_case is right), from the state [h, c]."""
    for seed in range(3):
        for case in CHAPTER.cases("keras_grads_to_tf1", seed):
            seen = {}

            def probe(cell, x, state, dh, seen=seen):
                seen["state"] = state
                h, _ = cell(x, [state.h, state.c])
                seen["h"] = np.asarray(h)  # returned, it would be refused: no tape took it

            ch05._keras_call(probe, case)
            h = seen["h"]
            _, want = ref.basic_lstm_step(case["x"], case["c"], case["h"], case["tf1_kernel"],
                                          case["tf1_bias"], case["forget_bias"])
            np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-5)
            assert type(seen["state"]).__name__ == "LSTMStateTuple"


def test_cell_clip_bites_and_spares_in_every_trial_set():
    """Each seed's trials of lstm_cell_backward hold entries where cell_clip clips c' and entries where it
    does not (else "the clipped region is not zeroed" could pass, or zeroing all could)."""
    for seed in SEEDS:
        bites = []
        for c in CHAPTER.cases("lstm_cell_backward", seed):
            g = ref.lstm_preactivations(c["x"], c["m"], c["kernel"], c["bias"])
            raw = (ref.sigmoid(g["f"] + c["forget_bias"] + c["w_f_diag"] * c["c"]) * c["c"]
                   + ref.sigmoid(g["i"] + c["w_i_diag"] * c["c"]) * np.tanh(g["j"]))
            bites.append(np.abs(raw) > c["cell_clip"])
        bites = np.concatenate([b.ravel() for b in bites])
        assert bites.any() and not bites.all(), seed


def test_truncation_designs_hold_a_partial_and_a_whole_last_chunk():
    designs = ch05.TRUNC_DESIGNS
    assert any(d["T"] % d["chunk"] for d in designs)
    assert any(d["T"] % d["chunk"] == 0 for d in designs)
    assert all(d["T"] > 2 * d["chunk"] - 1 for d in designs), "at least two chunks"


def test_truncated_and_full_gradients_differ_and_agree_within_the_last_chunk():
    case = CHAPTER.cases("truncated_rnn_backward", 0)[0]
    args = [case[k] for k in ("inputs", "h0", "kernel", "bias")]
    full = bwd.basic_rnn_backward(*args, case["doutputs"])
    cut = bwd.basic_rnn_backward(*args, case["doutputs"], chunk=case["chunk"])
    assert np.abs(full[2] - cut[2]).max() > 1e-3
    last = (case["T"] - 1) // case["chunk"] * case["chunk"]
    np.testing.assert_allclose(cut[0][:, last:], full[0][:, last:])


def test_remembered_answers_are_the_models_answers():
    ex = CHAPTER["lstm_step_backward"]
    for case in CHAPTER.cases(ex.name, 4):
        for mistake in ex.mistakes:
            for model in mistake.models:
                try:
                    remembered_answer = model(case)
                except Exception as error:  # noqa: BLE001 - a mistake that raises (raises=)
                    with pytest.raises(type(error)):
                        model.__wrapped__(case)
                    continue
                for got, fresh in zip(remembered_answer, model.__wrapped__(case), strict=True):
                    np.testing.assert_array_equal(got, fresh)
    later = remembered(lambda case: (_ for _ in ()).throw(KeyError("no")))
    for _ in range(2):
        with pytest.raises(KeyError, match="no"):
            later({"x": np.zeros(2)})


def test_indexed_trials_try_the_first_second_and_last_index():
    """Issue 25: split_grad_by_name tried only t = 0 and t = 2, so an answer wrong at the first suffixed
    name (t = 1) got 2/2. Every exercise indexed by a step or a chunk tries the first, the
    second and the last: split_grad_by_name's t; rnn_backward's steps (T >= 3);
    truncated_rnn_backward's chunks (one design with a first,
    a middle and a last chunk)."""
    by_name = ch05.BY_NAME_DESIGNS
    assert {0, 1} <= {d["t"] for d in by_name}
    assert any(d["t"] == d["T"] - 1 for d in by_name), "the last step"
    assert any(0 < d["t"] != d["T"] - 1 - d["t"] for d in by_name), "a reversed index shows"
    assert all(d["T"] >= 3 for d in ch05.SEQ_DESIGNS)
    assert any(-(-d["T"] // d["chunk"]) >= 3 for d in ch05.TRUNC_DESIGNS)


def test_an_answer_wrong_only_at_the_first_suffixed_step_fails():
    from tests.learners.ch05 import WRONG

    fn = dict((f.__name__, f) for f, _ in WRONG["split_grad_by_name"])["first_suffix_wrong"]
    outcome = CHAPTER.check(fn, name="split_grad_by_name", seed=0)
    assert not outcome.passed and outcome.share < 1
    assert outcome.mistake.startswith("you fetched the previous step's")


def test_a_wrong_gradient_is_reported_with_its_relative_error():
    """Issue 27: Chapter 5's failures give CS231n's relative error of each wrong array."""
    from tests.learners.ch05 import WRONG

    fn = dict((f.__name__, f) for f, _ in WRONG["rnn_step_backward"])["dbias_mean_over_batch"]
    ex = CHAPTER["rnn_step_backward"]
    cases = CHAPTER.cases(ex.name, 0)
    expected = [ex.reference(c) for c in cases]
    answers = [to_plain(fn(*[c[k] for k in ("x", "h", "kernel", "bias", "dh_new")]))
               for c in cases]
    message = evaluate(ex, cases, expected, answers).message
    assert "dbias: relative error" in message and "dx: relative error" not in message
    assert compare.relative_error([1.0, 0.0, -2.0], [1.5, 0.0, -2.0]) == pytest.approx(1 / 3)
    assert compare.relative_error([0.0], [0.0]) == 0.0


def test_gradient_check_trials_tell_the_skill_apart():
    """5.9 (issue 35): on every seed, one trial's dkernel is RIGHT (the expected relative
    error is a passing check's, below 1e-5), the others' are wrong (above 1e-2); on the
    large-eps trial the centred difference is off the exact gradient beyond the tolerance (an
    answer that returns the exact gradient fails); on the small-eps trials a one-sided
    difference is off beyond it."""
    ex = ch05.CHAPTER["gradient_check"]
    for seed in range(20):
        cases = ch05.CHAPTER.cases("gradient_check", seed)
        found = [ex.reference(c) for c in cases]
        errors = [error for _, error in found]
        assert [e < 1e-5 for e in errors] == [bool(d.get("right"))
                                              for d in ch05.GRAD_CHECK_DESIGNS], errors
        designs = ch05.GRAD_CHECK_DESIGNS
        assert all(e > 1e-2 for e, d in zip(errors, designs, strict=True)
                   if not d.get("right")), errors
        exact = [ex.reference({**c, "difference": "exact"})[0] for c in cases]
        one_sided = [ex.reference({**c, "difference": "forward"})[0] for c in cases]
        tells = [not compare.agrees(np.asarray(n), np.asarray(e), ex.rtol, ex.atol)
                 for (n, _), e in zip(found, exact, strict=True)]
        assert tells == [d["eps"] > 0.1 for d in ch05.GRAD_CHECK_DESIGNS], seed
        assert all(not compare.agrees(np.asarray(n), np.asarray(f), ex.rtol, ex.atol)
                   for (n, _), f, d in zip(found, one_sided, designs, strict=True)
                   if 5e-4 < d["eps"] < 1e-2), seed


def test_the_right_dkernel_is_tensorflows_gradient():
    """gradient_check's right trial's dkernel (the complex step, drawn without TensorFlow: the grader
    draws the trials) is TensorFlow's GradientTape gradient to float64's last digits, on 8
    seeds of every design."""
    for seed in range(8):
        rng = np.random.default_rng(seed)
        for design in ch05.GRAD_CHECK_DESIGNS:
            case = ch05._grad_check_case(rng, **{**design, "right": False})
            exact = ch05._tf_kernel_grad(case)
            found = ch05._complex_step_kernel_grad(case)
            assert np.abs(found - exact).max() <= 1e-13 * np.abs(exact).max(), (seed, design)


def test_a_prebuilt_graph_grades_as_the_graph_built_here(monkeypatch):
    """The grader's children and its oracle import the zygote's serialised graphs
    (``ch05.PREBUILT``, two per design of split_grad_by_name: the children's, and the oracle's
    with its gradients of the Split outputs): the same operations (the gradient names a
    learner fetches among them), the same variables and Split ops, and the learners' answers
    pass or are named as on graphs built here, with TensorFlow's oracle; the oracle adds
    nothing to the children's graph."""
    from conftest import verdict
    from tests.learners import ch05 as learners

    built = ch05.prebuild()
    shapes = {(d["B"], d["T"], d["D"], d["H"]) for d in ch05.BY_NAME_DESIGNS}
    assert set(built) == {(*shape, oracle) for shape in shapes for oracle in (False, True)}
    cached = (ch05._lstm_graph, ch05._oracle_graph)
    for each in cached:
        each.cache_clear()  # (the oracle adds its own gradients to a graph it has used)
    here = {shape: ch05._lstm_graph(*shape) for shape in shapes}
    oracle_here = {shape: ch05._build_lstm_graph(*shape, split_grads=True) for shape in shapes}
    for each in cached:
        each.cache_clear()
    monkeypatch.setattr(ch05, "PREBUILT", dict(built))
    try:
        for shape in shapes:
            mine, imported = here[shape], ch05._lstm_graph(*shape)
            names = [op.name for op in imported[0].graph.get_operations()]
            assert names == [op.name for op in mine[0].graph.get_operations()]
            assert "gradients/rnn/basic_lstm_cell/split_1_grad/concat" in names
            assert [v.name for v in imported[1]] == [v.name for v in mine[1]]
            assert [op.name for op in imported[4]] == [op.name for op in mine[4]]
            assert len(imported[4]) == shape[1]  # one Split per step
            assert imported[0].graph is not mine[0].graph
            oracle = ch05._oracle_graph(*shape)
            assert oracle[0].graph is not imported[0].graph
            assert ([op.name for op in oracle[0].graph.get_operations()]
                    == [op.name for op in oracle_here[shape].get_operations()])
            assert [op.name for op in oracle[4]] == [op.name for op in mine[4]]
            assert [g.name for g in oracle[-1]] == [
                g.name for g in oracle_here[shape].get_collection(ch05.SPLIT_GRADS)]
            assert len(oracle[-1]) == 4 * shape[1]
        name = "split_grad_by_name"
        for fn in learners.RIGHT[name]:
            assert verdict(CHAPTER, name, fn, 3, oracle=True).passed, fn.__name__
        for fn, sentence in learners.WRONG[name]:
            result = verdict(CHAPTER, name, fn, 3, oracle=True)
            assert not result.passed
            assert sentence is None or result.mistake.startswith(sentence), fn.__name__
        for shape in shapes:  # the children's graphs: no oracle's gradients added to them
            graph = ch05._lstm_graph(*shape)[0].graph
            assert not graph.get_collection(ch05.SPLIT_GRADS)
            assert not [op for op in graph.get_operations()
                        if op.name.startswith("gradients_1/")]
    finally:
        for each in cached:
            each.cache_clear()  # (the graphs built here again, for the tests after)
