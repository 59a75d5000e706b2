"""Chapter 4's training tasks (rnnbook/tasks.py): the data they train on."""
import numpy as np

from rnnbook.tasks import cue_batch, sine_batches


def test_sine_batches_continue_each_row_and_target_the_next_value():
    xs, ys = sine_batches(rows=6, steps=8)
    n = 960 // 48
    assert xs.shape == ys.shape == (n, 6, 8)
    wave = np.sin(2 * np.pi * np.arange(961) / 22).astype(np.float32)
    for i in range(6):  # row i, batch after batch, is one contiguous stretch
        start = i * n * 8
        np.testing.assert_array_equal(xs[:, i].ravel(), wave[start : start + n * 8])
        np.testing.assert_array_equal(ys[:, i].ravel(), wave[start + 1 : start + n * 8 + 1])


def test_cue_batch_puts_the_target_at_step_0_only():
    x, y = cue_batch(np.random.default_rng(0), size=500)
    assert x.shape == (500, 12, 1) and y.shape == (500, 1)
    assert set(np.unique(y)) == {-1.0, 1.0}
    np.testing.assert_array_equal(x[:, 0], y)
    assert abs(np.corrcoef(x[:, 1:, 0].mean(axis=1), y[:, 0])[0, 1]) < 0.15  # noise after
