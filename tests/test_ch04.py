"""Chapter 4's own tests: the objects the API checks hand to learners are the real ones and carry
the trial's weights and state; ``run_chunk`` really refuses a whole-sequence run; the designed
trials hold the cases that tell the mistakes apart; and the learners' answers that the sweep
leaves out (each costs real TF calls) pass or fail, named, on the sweep's 200 seeds too."""
import functools

import numpy as np
import pytest

from conftest import verdict
from rnnbook import reference as ref
from rnnbook.checks import ch04
from rnnbook.oracles import keras3, tensorflow
from tests.learners import ch04 as learners
from tests.test_sweep import SEEDS

CHAPTER = ch04.CHAPTER


outcome = functools.partial(verdict, CHAPTER)  # (name, fn, seed=0): the reference's verdict


# --- stream_in_chunks: the session-backed run_chunk -----------------------------------------------


def test_run_chunk_is_the_real_graph_with_the_trials_weights():
    for case in CHAPTER.cases("stream_in_chunks", 0):
        ch04.make_run_chunk(case)
        graph = ch04.state_graph(case["L"], case["D"], case["H"])
        values = {v.op.name: graph.session.run(v) for v in graph.variables}
        for k in range(case["L"]):
            name = f"rnn/multi_rnn_cell/cell_{k}/basic_lstm_cell/"
            np.testing.assert_array_equal(values[name + "kernel"], case[f"kernel{k}"])
            np.testing.assert_array_equal(values[name + "bias"], case[f"bias{k}"])
        assert graph.state.shape.as_list() == [case["L"], 2, None, case["H"]]
        rc = tensorflow().compat.v1.nn.rnn_cell
        assert all(isinstance(s, rc.LSTMStateTuple) for s in graph.final)


def test_a_prebuilt_graph_is_the_graph_built_here():
    """The grader's children import the zygote's serialised graphs (``ch04.PREBUILT``) instead
    of building them: same variables, same tensors, same numbers, bit for bit, and the
    LSTMStateTuple structure a learner's code reads."""
    shapes = {(d["L"], d["D"], d["H"]) for d in ch04.STREAM_DESIGNS}
    built = ch04.prebuild()
    assert set(built) == shapes  # every designed shape, so no child builds one
    rc = tensorflow().compat.v1.nn.rnn_cell
    for case in CHAPTER.cases("stream_in_chunks", 3):
        shape = (case["L"], case["D"], case["H"])
        here, imported = ch04.StateGraph(*shape), ch04.StateGraph(*shape, meta=built[shape])
        assert [v.op.name for v in imported.variables] == [v.op.name for v in here.variables]
        results = []
        for graph in (here, imported):
            graph.load(case)
            outputs, final = graph.run(case["inputs"][:, :2], case["state"])
            assert all(isinstance(s, rc.LSTMStateTuple) for s in final)
            _, packed = graph.run(case["inputs"], case["state"], fetch_packed=True)
            results.append((outputs, *(t for s in final for t in s), packed))
        for a, b in zip(*results, strict=True):
            np.testing.assert_array_equal(a, b)


def run_in_a_fresh_process(code):
    """``code`` run by a fresh Python from the repository's root, with ``TF_ENV``; it must
    succeed (what a zygote does, seen from outside: threads and imports are the process's)."""
    import os
    import subprocess
    import sys

    from rnnbook.environment import TF_ENV

    root = ch04.__file__.rsplit("/rnnbook/", 1)[0]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, env={**os.environ, **TF_ENV}, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_the_zygote_prebuilds_in_a_child_and_forks_without_its_threads():
    """``zygote._prebuild`` fills ``PREBUILT`` from a throwaway child; the zygote itself builds
    nothing (no TensorFlow graph, no new thread), so forking it stays safe."""
    code = (
        "import os, importlib.util\n"
        "from rnnbook import environment\n"
        "environment.import_tensorflow(); environment.import_keras()\n"
        "from rnnbook.checks import ch04\n"
        "spec = importlib.util.spec_from_file_location('z', 'rnnbook/grading/zygote.py')\n"
        "z = importlib.util.module_from_spec(spec); spec.loader.exec_module(z)\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "z._prebuild(ch04, os.getcwd())  # (no bundle's graphs here: it builds)\n"
        "import time\n"
        "for _ in range(600):  # a thread of the import may still be ending (30 s at most:\n"
        "    # a loaded machine ends it later; the loop stops as soon as it has)\n"
        "    after = len(os.listdir('/proc/self/task'))\n"
        "    if after <= before: break\n"
        "    time.sleep(0.05)\n"
        "assert after <= before, f'threads: {before} before, {after} after'\n"
        "assert ch04.state_graph.cache_info().currsize == 0\n"
        "print(sorted(ch04.PREBUILT))\n"
    )
    done = run_in_a_fresh_process(code)
    shapes = sorted((d["L"], d["D"], d["H"]) for d in ch04.STREAM_DESIGNS)
    assert done.stdout.strip() == str(shapes)


def test_the_zygote_imports_keras_without_its_plotting_and_saving_extras():
    """Keras 3 imports matplotlib.pyplot, psutil and IPython where it can: about half of its
    import, none of it used by a grading child (Chapter 4's children run Keras 3's LSTM). The
    zygote imports Keras without them and leaves them importable afterwards."""
    code = (
        "import sys, importlib.util\n"
        "from rnnbook import environment\n"
        "environment.import_tensorflow()\n"
        "spec = importlib.util.spec_from_file_location('z', 'rnnbook/grading/zygote.py')\n"
        "z = importlib.util.module_from_spec(spec); spec.loader.exec_module(z)\n"
        "environment.call_with_roomy_stack(z._import_keras)\n"
        "import keras\n"
        "assert keras.layers.LSTM(2).units == 2\n"
        "print(sorted(n for n in z.KERAS_EXTRAS if n in sys.modules))\n"
        "import matplotlib, psutil\n"
        "print(matplotlib.__name__, psutil.__name__)\n"
    )
    done = run_in_a_fresh_process(code)
    assert done.stdout.split("\n")[:2] == ["[]", "matplotlib psutil"], done.stdout


def test_the_zygote_takes_a_bundles_graphs_only_when_they_were_built_by_this_code(
        tmp_path, monkeypatch):
    """A Gradescope bundle carries the chapter's prebuilt graphs (``prebuilt.pickle``): the
    zygote takes them as they are when the record names this module, this TensorFlow and this
    source; a record of other source or another TensorFlow is refused (it would build)."""
    import importlib.util
    import pickle

    from rnnbook import oracles
    from rnnbook.grading import config, run

    record = pickle.loads(run.prebuilt_graphs("04-stateful-batching"))
    assert set(record["graphs"]) == set(ch04.prebuild())  # (the same shapes; bytes may differ)
    assert oracles.graphs_from_record(record, ch04) == record["graphs"]
    for field, other in (("source", "0" * 64), ("tensorflow", "2.0.0"),
                         ("module", "rnnbook.checks.ch06"), ("graphs", None)):
        assert oracles.graphs_from_record({**record, field: other}, ch04) is None, field
    marked = {**record, "graphs": {("L", "D", "H"): b"from the bundle"}}
    (tmp_path / config.PREBUILT).write_bytes(pickle.dumps(marked))
    spec = importlib.util.spec_from_file_location("z", "rnnbook/grading/zygote.py")
    z = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(z)
    monkeypatch.setattr(ch04, "PREBUILT", {})
    assert z._prebuild(ch04, str(tmp_path))  # taken: no child was forked to build
    assert ch04.PREBUILT == {("L", "D", "H"): b"from the bundle"}


def test_run_chunk_refuses_more_than_chunk_steps():
    case = CHAPTER.cases("stream_in_chunks", 1)[0]
    run_chunk = ch04.make_run_chunk(case)
    x, state = case["inputs"], case["state"]
    with pytest.raises(ValueError, match="feed the sequence one chunk at a time"):
        run_chunk(x, state)  # the whole sequence in one call
    with pytest.raises(ValueError, match="packed state"):
        run_chunk(x[:, :1], state[:, :, :, :1])
    outputs, final = run_chunk(x[:, : case["chunk"]], ref.unpack(state))  # tuples feed too
    assert outputs.shape == (case["B"], case["chunk"], case["H"])
    assert len(final) == case["L"] and final[0].c.shape == (case["B"], case["H"])


def test_carrying_the_state_is_needed_in_every_design():
    """A run whose chunks all start from the given state differs from the right one."""
    for case in CHAPTER.cases("stream_in_chunks", 2):
        right, _ = ch04._stream_oracle(case)
        restart, _ = ch04._chunk_by_chunk(case, between=lambda _s, c=case: c["state"])
        assert np.abs(right - restart).max() > 1e-3


def test_stream_designs_tell_the_mistakes_apart():
    designs = ch04.STREAM_DESIGNS
    assert all(d["T"] > d["chunk"] for d in designs)
    # a tail (T % chunk) and none (a loop of T // chunk + 1 calls asks for 0 steps)
    assert any(d["T"] % d["chunk"] for d in designs)
    assert any(d["T"] % d["chunk"] == 0 for d in designs)
    assert all(d["L"] >= 2 for d in designs)
    assert any(d["B"] == 1 for d in designs) and all(d["D"] != d["H"] for d in designs)
    # no axis of the packed state (L, 2, B, H) of the same length as another
    assert any(len({d["L"], 2, d["B"], d["H"]}) == 4 for d in designs)


# --- drive_stateful and serve_at_batch_1: the Keras layers ----------------------------------------


def test_compiled_layer_is_a_stateful_keras_lstm_with_the_same_numbers():
    keras = keras3()
    case = CHAPTER.cases("drive_stateful", 0)[0]
    layer = ch04.stateful_layer(case["B"], case["S"], case["D"], case["H"])
    ch04._load_layer(layer, ch04._keras_weights(case), case["h"], case["c"])
    assert isinstance(layer, keras.layers.LSTM) and layer.stateful
    for got, want in zip(layer.get_weights(), ch04._keras_weights(case), strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(layer.states[0].numpy(), case["h"])  # Keras keeps [h, c]
    np.testing.assert_array_equal(layer.states[1].numpy(), case["c"])
    plain = keras.layers.LSTM(case["H"], stateful=True, return_sequences=True)
    plain.build(case["batches"][0].shape)
    plain.set_weights(ch04._keras_weights(case))
    for variable, value in zip(plain.states, (case["h"], case["c"]), strict=True):
        variable.assign(value)
    for x in case["batches"]:  # the state carried from call to call, in both
        np.testing.assert_allclose(np.asarray(layer(x)), np.asarray(plain(x)), rtol=1e-6,
                                   atol=1e-6)


def test_served_layer_starts_with_weights_and_state_of_its_own():
    seen = []
    for case in CHAPTER.cases("serve_at_batch_1", 0):
        def look(trained, served, row, stream, case=case):
            assert trained.stateful and served.stateful
            assert trained.states[0].shape[0] == case["B"] and served.states[0].shape[0] == 1
            seen.append(not np.allclose(served.get_weights()[0], trained.get_weights()[0]))
            np.testing.assert_array_equal(trained.states[1].numpy(), case["c"])
            return None  # (outputs no call of `served` returned would be refused)
        ch04._serve_call(look, case)
    assert seen and all(seen)


def test_drive_designs_reset_some_all_and_none():
    for design in ch04.DRIVE_DESIGNS:
        starts = np.array(design["starts"], bool)
        assert not starts[0].all()  # the state the layer holds matters
    big = np.array(ch04.DRIVE_DESIGNS[0]["starts"], bool)
    assert any(0 < row.sum() < len(row) for row in big) and any(row.all() for row in big)
    assert any(d["B"] == 1 for d in ch04.DRIVE_DESIGNS)
    assert all(d["B"] != d["H"] for d in ch04.DRIVE_DESIGNS)  # a (B,) mask raises, B > 1


def test_serve_designs_serve_a_middle_row():
    """Neither row 0 nor the last row: `[:1]` and `[-1:]` both fail (issue 18)."""
    assert any(0 < d["row"] < d["B"] - 1 for d in ch04.SERVE_DESIGNS)
    assert all(len({d["B"], d["D"], d["H"]}) == 3 for d in ch04.SERVE_DESIGNS)


# --- the by-hand exercises' helpers ---------------------------------------------------------


def test_keras_tells_row_continuous_from_contiguous_batches():
    series = np.arange(48, dtype=np.float32) / 48  # (48,)
    right = ch04.row_continuous(series, 3, 4)  # (4, 3, 4)
    contiguous = series.reshape(4, 3, 4)  # batch k = the next 3 windows of 4
    np.testing.assert_array_equal(right[1, 0], series[4:8])  # row 0 of batch 1 continues 0..3
    rows = series.reshape(3, 16)  # the three stretches the rows must continue
    assert ch04.keras_continuity_error(right, rows) < 1e-5
    assert ch04.keras_continuity_error(contiguous, rows) > 1e-3


def test_reset_reference_is_zero_state():
    for case in CHAPTER.cases("reset_ended", 0):
        np.testing.assert_array_equal(CHAPTER["reset_ended"].reference(case),
                                      ch04._reset_oracle(case))


def test_stacked_designs_read_the_layer_below_only_where_shapes_allow():
    for case in CHAPTER.cases("stacked_step", 0):
        assert case["L"] == 1 or case["D"] == case["H"]
    assert any(c["D"] != c["H"] for c in CHAPTER.cases("stacked_step", 0))


# --- learners' wrong answers left out of the 200-seed sweep (each costs real TF calls) ------

EXTRA_WRONG = [
    ("stream_in_chunks", learners.stream_keeps_last, None),  # the message: expected (B, T, H)
    ("drive_stateful", learners.drive_every_batch_fresh, "the state is not carried from batch"),
    ("drive_stateful", learners.drive_no_reset, "the state is never reset"),
    ("drive_stateful", learners.drive_inverted, "the reset mask is inverted"),
    ("serve_at_batch_1", learners.serve_no_state, "the stream does not continue the trained"),
    ("serve_at_batch_1", learners.serve_copy_each_step, "the state is not carried from step"),
]
EXTRA_RIGHT = [("stream_in_chunks", learners.stream_packed)]


@pytest.mark.parametrize("name,fn,sentence", EXTRA_WRONG, ids=lambda v: getattr(v, "__name__",
                                                                                   None))
def test_more_wrong_answers_fail_and_are_named(name, fn, sentence):
    for seed in SEEDS:
        result = outcome(name, fn, seed)
        assert not result.passed, (seed, str(result))
        if sentence is None:
            assert "expected array of shape" in str(result) or "expected shape" in str(result)
        else:
            assert result.mistake.startswith(sentence), (seed, str(result))


@pytest.mark.parametrize("name,fn", EXTRA_RIGHT, ids=lambda v: getattr(v, "__name__", None))
def test_more_right_answers_pass(name, fn):
    for seed in SEEDS:
        result = outcome(name, fn, seed)
        assert result.passed, (seed, str(result))


def test_a_whole_sequence_run_gets_no_credit():
    """stream_in_chunks' old loophole: running everything in one call. run_chunk refuses it."""
    def whole(run_chunk, inputs, state, chunk):
        outputs, final = run_chunk(inputs, state)
        return outputs, np.array(final)

    result = outcome("stream_in_chunks", whole, 0)
    assert not result.passed and "one chunk at a time" in str(result)


@pytest.mark.parametrize("batch,samples,rows", [(6, 13, 18), (3, 10, 12), (6, 10, None)])
def test_predict_on_a_partial_last_batch_does_what_the_chapter_says(batch, samples, rows):
    """Chapter 4's trap, with the numbers its prose gives: a stateful model's leftover batch of
    1 broadcasts against the B-row state (B rows come back for it); 2 to B - 1 left raise."""
    keras = keras3()
    model = keras.Sequential([keras.Input(shape=(None, 1), batch_size=batch),
                              keras.layers.LSTM(2, stateful=True, return_sequences=True)])
    x = np.zeros((samples, 4, 1), np.float32)
    if rows is None:
        with pytest.raises(tensorflow().errors.InvalidArgumentError, match="Incompatible"):
            model.predict(x, batch_size=batch, verbose=0)
    else:
        assert len(model.predict(x, batch_size=batch, verbose=0)) == rows


def test_a_handed_over_layer_gives_the_same_numbers_eager_then_compiled():
    """The layers drive_stateful and serve_at_batch_1 hand over run their first ``EAGER_CALLS``
    calls eagerly (a grading
    child calls each a few times: tracing would cost more), then as one ``tf.function`` (the
    sweeps call one cached layer thousands of times); the state carries across the switch."""
    rng = np.random.default_rng(0)
    B, S, D, H = 2, 3, 2, 3
    weights = [rng.normal(size=s).astype(np.float32) * 0.5 for s in ((D, 4 * H), (H, 4 * H),
                                                                       (4 * H,))]
    h, c = (rng.normal(size=(B, H)).astype(np.float32) for _ in range(2))
    layer = ch04._compiled_lstm_class()(H, stateful=True, return_sequences=True)
    layer.build((B, S, D))
    ch04._load_layer(layer, weights, h, c)
    step, state = ref.keras_cell(*weights), [h, c]
    calls = ch04.EAGER_CALLS + 3
    for k in range(calls):
        assert (getattr(layer, "_compiled_call", None) is None) == (k < ch04.EAGER_CALLS + 1)
        x = rng.normal(size=(B, S, D)).astype(np.float32)
        want, state = ref.unroll(step, x, state)
        np.testing.assert_allclose(np.asarray(layer(x)), want, rtol=1e-5, atol=1e-5)
    assert layer._compiled_call is not None


# --- boundaries (issue 25): every exercise indexed by a layer, a batch, a chunk or a row ------


def _chunks(T, chunk):
    return [(a, min(a + chunk, T)) for a in range(0, T, chunk)]


def test_designs_hold_a_first_a_second_and_a_last_that_differ():
    """An answer that gets one position wrong (the first, the second or the last layer, batch,
    chunk or row) fails on every seed: some designed trial has the three apart."""
    for designs in (ch04.STATE_DESIGNS, ch04.RESET_DESIGNS, ch04.STACK_DESIGNS,
                    ch04.STREAM_DESIGNS):  # layers 0, 1 and L - 1
        assert any(d["L"] >= 3 for d in designs)
        assert any(d["L"] == 1 for d in designs) or designs is ch04.STREAM_DESIGNS
    # stacked_step's three layers read the layer below (D == H), so a wrong second layer shows
    assert any(d["L"] >= 3 and d["square"] for d in ch04.STACK_DESIGNS)
    assert any(d["n"] >= 3 for d in ch04.BATCH_DESIGNS)  # batches 0, 1 and n - 1
    assert any(len(d["starts"]) >= 3 for d in ch04.DRIVE_DESIGNS)
    for d in ch04.STREAM_DESIGNS:  # chunks 0, 1 and the last one
        assert len(_chunks(d["T"], d["chunk"])) >= 3
    assert any(d["T"] % d["chunk"] for d in ch04.STREAM_DESIGNS)  # a last chunk shorter
    # serve_at_batch_1: a row neither the first nor the last, and a batch of one row (first and last)
    assert any(0 < d["row"] < d["B"] - 1 for d in ch04.SERVE_DESIGNS)
    assert any(d["B"] == 1 for d in ch04.SERVE_DESIGNS)


def test_reset_designs_end_the_first_and_the_last_row():
    """reset_ended: a one-row batch whose row ends (row 0 is the last row: a loop that skips the first
    or the last row fails there) and batches of three or more rows where some rows end."""
    assert any(d["B"] == 1 and d["ended"] == "all" for d in ch04.RESET_DESIGNS)
    assert any(d["B"] >= 3 and d["ended"] == "some" for d in ch04.RESET_DESIGNS)


@pytest.mark.parametrize("fn", [learners.stream_tuple_back])
def test_a_final_state_left_as_the_sessions_tuple_is_refused_and_named(fn):
    """stream_in_chunks's type is part of its answer: the session's tuple of LSTMStateTuple holds the same
    numbers as the packed array, and is not one array."""
    result = outcome("stream_in_chunks", fn, 0)
    assert not result.passed and result.share == 0
    assert result.mistake.startswith("the final state is the session's tuple"), str(result)


def test_an_answer_that_changes_the_callers_array_fails():
    result = outcome("reset_ended", learners.reset_in_place_no_copy, 0)
    assert not result.passed and result.share == 0
    assert result.mistake.startswith("your function changed its argument `state`"), str(result)
