"""Chapter 4's own helpers: the NumPy cell models behind its mistake feedback must reproduce
TensorFlow when no mistake is switched on (otherwise a "likely mistake" could be named for an
answer that is merely right), and the Keras test of a stateful layout must tell layouts apart."""
import numpy as np
import pytest

from rnnbook.checks import ch04

CHAPTER = ch04.CHAPTER


@pytest.mark.parametrize("seed", range(3))
def test_numpy_stack_model_is_tf1_multirnncell(seed):
    """The chunked NumPy run with the state carried equals TF1's one dynamic_rnn call."""
    for case in CHAPTER.cases("run_in_chunks", seed):
        outputs, state = ch04._chunks_oracle(case)
        mine_outputs, mine_state = ch04._chunked(case)
        np.testing.assert_allclose(mine_outputs, outputs, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(mine_state, state, rtol=1e-4, atol=1e-5)


def test_not_carrying_the_state_changes_the_answer():
    case = next(c for c in CHAPTER.cases("run_in_chunks", 0, trials=20) if c["chunk"] < c["T"])
    right, _ = ch04._chunks_oracle(case)
    wrong, _ = ch04._chunked(case, start="zeros")
    assert np.abs(wrong - right).max() > 1e-3


@pytest.mark.parametrize("seed", range(3))
def test_numpy_keras_model_is_a_stateful_keras_layer(seed):
    for case in CHAPTER.cases("stream_steps", seed):
        outputs, (h, c) = ch04._stream_oracle(case)
        mine_outputs, (mine_h, mine_c) = ch04._keras(case)
        np.testing.assert_allclose(mine_outputs, outputs, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(mine_h, h, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(mine_c, c, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(h, outputs[:, -1])  # Keras' h is the last output


def test_keras_tells_row_continuous_from_contiguous_batches():
    series = np.arange(48, dtype=np.float32) / 48  # (48,)
    right = ch04.row_continuous(series, 3, 4)  # (4, 3, 4)
    contiguous = series.reshape(4, 3, 4)  # batch k = the next 3 windows of 4
    assert right.shape == contiguous.shape == (4, 3, 4)
    np.testing.assert_array_equal(right[1, 0], series[4:8])  # row 0 of batch 1 continues 0..3
    rows = series.reshape(3, 16)  # the three stretches the rows must continue
    assert ch04.keras_continuity_error(right, rows) < 1e-5
    assert ch04.keras_continuity_error(contiguous, rows) > 1e-3


def test_reset_model_matches_zero_state():
    for case in CHAPTER.cases("reset_ended", 0):
        np.testing.assert_array_equal(
            ch04._zero_rows(case["state"], case["ended"]), ch04._reset_oracle(case)
        )


def test_chunks_cover_the_sequence_once():
    assert ch04.chunks(7, 3) == [(0, 3), (3, 6), (6, 7)]
    assert ch04.chunks(6, 3) == [(0, 3), (3, 6)]
