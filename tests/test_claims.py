"""Claims the chapters draw from random runs hold on every seed the page computes them over
(issue 37): each test calls the function the page calls, over the same seeds, and asserts
what the prose says in words (the page's own assert protects its own run)."""
import numpy as np
import pytest

from rnnbook import tasks


@pytest.fixture(scope="module")
def tf():
    import rnnbook

    return rnnbook.setup()


@pytest.fixture(scope="module")
def sine(tf):
    xs, ys = tasks.sine_batches(6, 8, period=22)  # Chapter 4's batches
    return xs, ys, tasks.sine_comparison(xs, ys)


@pytest.mark.slow
def test_chapter4_carrying_state_wins_step_0_on_every_seed_and_the_seed_decides_later(sine):
    """"... {gain_low} to {gain_high} times lower, on every seed"; the model from zeros'
    step 0 is its worst; "from step 4 on ... the seed decides which is better"."""
    _, _, runs = sine
    assert len(runs.seeds) >= 8 and runs.kept.shape == runs.zeros.shape == (8, 8)
    assert (runs.step0_gain > 5).all(), runs.step0_gain
    assert (runs.zeros[:, 0] > runs.zeros[:, 1:].max(axis=1)).all()
    late_zeros, late_kept = runs.late_wins
    assert 0 < late_zeros and 0 < late_kept and late_zeros + late_kept < len(runs.seeds)


def alone(tf, xs, ys, seed, stateful):
    """The model of Chapter 4 trained by itself (the code the page ran before issue 37)."""
    import keras

    n, batch, steps = xs.shape
    keras.utils.set_random_seed(seed)
    lstm = keras.layers.LSTM(8, stateful=stateful, return_sequences=True)
    model = keras.Sequential([keras.Input(shape=(None, 1), batch_size=batch), lstm,
                              keras.layers.Dense(1)])
    model.compile(keras.optimizers.Adam(0.02), "mse")
    reset = lstm.reset_state if stateful else (lambda: None)
    every_epoch = keras.callbacks.LambdaCallback(on_epoch_begin=lambda *_: reset())
    model.fit(xs.reshape(-1, steps, 1), ys.reshape(-1, steps, 1), batch_size=batch,
              epochs=8, shuffle=False, verbose=0, callbacks=[every_epoch])
    reset()
    return model, np.stack([np.asarray(model(x[..., None]))[..., 0] for x in xs])


@pytest.mark.slow
@pytest.mark.parametrize("stateful", [True, False])
def test_side_by_side_models_are_each_seed_trained_alone(tf, sine, stateful):
    """train_sine's block-diagonal layer trains each seed's model as if it were alone, and
    one_model takes one out with its trained weights."""
    xs, ys, runs = sine
    seed = 3
    model, predicted = alone(tf, xs, ys, seed, stateful)
    side = (runs.kept_predictions if stateful else runs.zeros_predictions)[seed]
    np.testing.assert_allclose(side, predicted, atol=1e-5)
    if stateful:
        one = tasks.one_model(runs.model, seed)
        for ours, theirs in zip(one.get_weights(), model.get_weights(), strict=True):
            np.testing.assert_allclose(ours, theirs, atol=1e-5)


@pytest.mark.slow
def test_chapter5_the_c_path_alone_fades_faster_than_the_lstm_on_every_initialisation(tf):
    """"along c alone they fade steadily ... faster on every one than the LSTM's measured
    gradient", over the 8 initialisations the page computes (on another input sequence)."""
    seq = tf.constant(np.random.default_rng(5).normal(size=(1, 40, 2)).astype(np.float32))
    fades = tasks.gradient_fades(seq, units=16)
    assert len(fades.seeds) >= 8
    assert (fades.c_high < fades.lstm).all(), (fades.c_high, fades.lstm)
    assert (fades.c_low <= fades.c_high).all() and (fades.c_high < 0).all()


def test_forget_gates_are_the_cells_own(tf):
    """forget_gates' by-hand run against BasicLSTMCell's own h: at each step, the f block of
    [x_t, h_{t-1}] @ kernel + bias, with TensorFlow's h_{t-1}, plus forget_bias."""
    cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(3)
    seq = tf.constant(np.random.default_rng(1).normal(size=(1, 5, 2)).astype(np.float32))
    state, hs = cell.zero_state(1, tf.float32), [np.zeros((1, 3), np.float32)]
    for t in range(5):
        out, state = cell(seq[:, t], state)
        hs.append(out.numpy())  # (1, 3)
    kernel, bias = (v.numpy() for v in cell.variables)  # (5, 12), (12,)
    z = np.concatenate([np.concatenate([seq.numpy()[0, t : t + 1], hs[t]], 1) @ kernel + bias
                        for t in range(5)])  # (5, 12): gates i, j, f, o
    expected = 1 / (1 + np.exp(-(z[:, 6:9] + 1.0)))
    np.testing.assert_allclose(tasks.forget_gates(kernel, bias, seq), expected, rtol=1e-5)


# ---------------------------------------------------------------- Chapter 7 (issue 40)


@pytest.fixture(scope="module")
def batches(tf):
    """Chapter 7's padded batch (lengths 4, 2, 1 of 4 steps) drawn from each seed."""
    from rnnbook import padded

    return [padded.padded_batch(seed) for seed in tasks.SEEDS]


def largest_by_row(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max(axis=-1)  # (B,)


@pytest.mark.slow
def test_chapter7_sequence_length_stops_each_row_and_without_it_the_padding_moves_the_state(
        batches):
    """"every output past a row's length is exactly 0 and the final h is the output at step
    n - 1"; without sequence_length "the final state is taken after the padding": the final
    c of every short row differs, the full row's does not."""
    from rnnbook import padded

    assert len(batches) >= 8
    for case in batches:
        rows, last = np.arange(len(case.lengths)), case.lengths - 1
        out, (c, h) = padded.tf1_dynamic(case)
        out_pad, (c_pad, h_pad) = padded.tf1_dynamic(case, sequence_length=False)
        assert (out[~case.mask] == 0).all() and np.array_equal(h, out[rows, last])
        assert np.array_equal(h_pad, out_pad[:, -1])
        moved = largest_by_row(c, c_pad)
        assert moved[0] < 1e-6 and (moved[1:] > 1e-3).all(), moved


@pytest.mark.slow
def test_chapter7_every_keras_mask_gives_tf1s_final_state_and_repeats_the_last_output(
        batches):
    """"All three give TF1's final state"; "return_sequences=True gives ... the last valid
    output again" at a masked step (a plain tf.keras LSTM)."""
    from rnnbook import padded

    for case in batches:
        _, (c, h) = padded.tf1_dynamic(case)
        for how in ("Masking", "mask=", "mask_zero"):
            out, k_h, k_c = padded.keras_masked(case, how)
            assert largest_by_row(k_c, c).max() < 1e-5 and largest_by_row(k_h, h).max() < 1e-5
            for row, n in enumerate(case.lengths):
                assert (out[row, n:] == out[row, n - 1]).all(), (how, row)


@pytest.mark.slow
def test_chapter7_tf_reverse_feeds_the_backward_cell_padding_first(batches):
    """The backward direction's final h is its output at time 0; "fed by tf.reverse ... only
    the full row 0 is right"; Keras' Bidirectional is [forward, backward], zeros past each
    length, TF1's numbers."""
    from rnnbook import padded

    for case in batches:
        (fw_out, bw_out), (fw_state, bw_state) = padded.tf1_bidirectional(case)
        _, (_, rev_state) = padded.tf1_bidirectional(case, sequence_length=False)
        assert largest_by_row(bw_state.h, bw_out[:, 0]).max() < 1e-6
        wrong = largest_by_row(rev_state.c, bw_state.c)
        assert wrong[0] < 1e-6 and (wrong[1:] > 1e-3).all(), wrong
        merged = padded.keras_bidirectional(case)[0]
        assert np.abs(merged - np.concatenate([fw_out, bw_out], axis=2)).max() < 1e-5


@pytest.mark.slow
def test_chapter7_the_second_layers_c_by_name_is_the_stacks_final_state(batches):
    """MultiRNNCell's state is layer 0's then layer 1's; the tf.keras stack returns the same
    states; each row's second-layer c at step n - 1, fetched by its op's name from the
    static_rnn graph (the page's search: AddV2 of two Mul ops in cell_1), is the final
    state's."""
    from rnnbook import padded

    for case in batches:
        _, ((c0, h0), (c1, h1)) = padded.tf1_stacked(case)
        (_, kc0), (kh1, kc1) = padded.keras_stacked(case)
        assert max(np.abs(kc0 - c0).max(), np.abs(kc1 - c1).max(),
                   np.abs(kh1 - h1).max()) < 1e-5
        graph = padded.static_stack(case)
        nodes = {node.name: node for node in graph.as_graph_def().node}
        new_c = [name for name, node in nodes.items() if node.op == "AddV2"
                 and "/cell_1/" in name
                 and all(nodes[i.split(":")[0]].op == "Mul" for i in node.input)]
        assert len(new_c) == case.x.shape[1]
        fetched = padded.fetch(case, graph, [f"{new_c[n - 1]}:0" for n in case.lengths])
        by_name = np.stack([fetched[r][r] for r in range(len(case.lengths))])
        assert np.abs(by_name - c1).max() < 1e-5


@pytest.mark.slow
def test_chapter7_a_static_step_with_lengths_is_a_conditional_whose_c_is_copied_through(
        batches):
    """With sequence_length, step t's c is rnn/cond_t/Identity_1 (step 0: rnn/cond): after
    the last step it is dynamic_rnn's final c, and a row's c stays its state after step
    n - 1 from then on."""
    from rnnbook import padded

    for case in batches:
        _, (c, _) = padded.tf1_dynamic(case)
        graph = padded.static_with_lengths(case)
        T = case.x.shape[1]
        names = [f"rnn/cond{f'_{t}' if t else ''}/Identity_1:0" for t in range(T)]
        c_steps = np.stack(padded.fetch(case, graph, names))  # (T, B, H)
        assert np.abs(c_steps[-1] - c).max() < 1e-5
        for row, n in enumerate(case.lengths):
            assert np.abs(c_steps[n - 1:, row] - c[row]).max() < 1e-6, row
            if n > 1:  # and it moved before: the steps inside the row are not copies
                assert np.abs(c_steps[n - 2, row] - c[row]).max() > 1e-3, row
