"""Chapter 1's own tests: the facts its API exercises stand on, and that the cells the checks
hand to learners really are what the task says (built or never called, holding the trial's
weights or other ones).

The generic tests (solution passes, stub fails, 200-seed sweeps of right and wrong answers) are
in tests/test_checks.py and tests/test_sweep.py.
"""
import functools

import numpy as np
import pytest

import rnnbook

tf = rnnbook.setup()  # before anything imports TensorFlow

from conftest import verdict  # noqa: E402
from rnnbook.checks import ch01  # noqa: E402
from tests.learners import ch01 as learners  # noqa: E402
from tests.test_sweep import SEEDS  # noqa: E402

CHAPTER = ch01.CHAPTER
v1 = tf.compat.v1
#: the TF1 cells warn at every construction that they are deprecated; the chapter says so once
pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated and will be removed")


outcome = functools.partial(verdict, CHAPTER)  # (name, fn, seed=0): the reference's verdict


def test_a_cell_has_no_variables_before_its_first_call():
    """The 2017 symptom, and what read_cell_weights asks learners to handle."""
    cell = v1.nn.rnn_cell.BasicRNNCell(3)
    assert cell.variables == []
    with pytest.raises(AttributeError):
        cell._kernel  # noqa: B018 - the attribute access is the test
    output, state = cell(tf.zeros([2, 4]), cell.zero_state(2, tf.float32))
    assert output is state
    kernel, bias = cell.variables
    assert kernel.shape == (4 + 3, 3) and bias.shape == (3,)
    assert cell._kernel is kernel
    np.testing.assert_array_equal(bias.numpy(), np.zeros(3))  # the bias starts at zeros


@pytest.mark.parametrize("seed", [0, 1])
def test_read_cell_weights_hands_over_cells_with_the_trials_weights(seed):
    seen = []

    def spy(cell, input_depth):
        seen.append(list(cell.variables))  # before anything is done to the cell
        if not cell.variables:
            cell.build((None, input_depth))
        return tuple(v.numpy() for v in cell.variables)

    ex = CHAPTER["read_cell_weights"]
    for case in CHAPTER.cases("read_cell_weights", seed):
        kernel, bias = ex.call(spy, case)
        np.testing.assert_array_equal(kernel, case["kernel"])
        np.testing.assert_array_equal(bias, case["bias"])
        assert bool(seen[-1]) == case["built"]
    assert [c["built"] for c in CHAPTER.cases("read_cell_weights", seed)] == [True, True, False]


def test_run_keras_weights_hands_over_cells_holding_other_weights():
    """A built cell holds weights that are not the trial's (loading them is the task); a new
    cell has none; the third part of the answer is the cell itself on new inputs."""
    ex = CHAPTER["run_keras_weights"]
    for case in CHAPTER.cases("run_keras_weights", 4):
        held = {}

        def spy(cell, kernel, recurrent_kernel, bias, inputs, h0):
            held["variables"] = [v.numpy() for v in cell.variables]  # noqa: B023
            return learners.port_loop(cell, kernel, recurrent_kernel, bias, inputs, h0)

        *_, probe = ex.call(spy, case)
        if case["built"]:
            np.testing.assert_array_equal(held["variables"][0], case["old_kernel"])
            np.testing.assert_array_equal(held["variables"][1], case["old_bias"])
        else:
            assert held["variables"] == []
        want = np.tanh(np.concatenate([case["x"], case["h"]], 1)
                       @ np.concatenate([case["W"], case["U"]]) + case["bias"])
        np.testing.assert_allclose(probe, want, rtol=1e-5, atol=1e-6)


def test_the_cached_cell_survives_a_learner_who_rebuilds_it():
    """Calling ``build`` on a built cell makes new variables; the next trial gets a good cell."""
    def rebuild(cell, input_depth):
        cell.build((None, input_depth))
        return learners.read_builds_if_needed(cell, input_depth)

    outcome("read_cell_weights", rebuild)
    assert outcome("read_cell_weights", learners.read_builds_if_needed).passed


def test_an_unbuilt_cell_is_explained_not_just_an_index_error():
    result = outcome("read_cell_weights", learners.read_never_builds)
    assert not result.passed
    assert "raised NoVariablesYet" in result.message
    assert "kernel, bias = cell.variables" in result.message  # the learner's own line
    assert "no variables yet" in result.message and "first call" in result.message


def test_loading_into_a_cell_of_ones_own_is_explained():
    result = outcome("run_keras_weights", learners.port_into_own_cell)
    assert not result.passed
    assert "still has no variables after your function ran" in result.message


def test_building_a_built_cell_again_is_explained():
    result = outcome("run_keras_weights", learners.port_builds_always)
    assert not result.passed
    assert "raised BuiltTwice" in result.message and "now has 4 variables" in result.message


def test_a_built_cell_left_as_it_was_is_explained():
    """Weights set on a copy (``cell.get_weights()``'s list) leave the built cell as it was:
    the message says none of Keras' weights reached its variables (issue 35)."""
    result = outcome("run_keras_weights", learners.port_sets_a_copy)
    assert not result.passed
    assert "raised NothingLoaded" in result.message and "still holds the kernel" in (
        result.message)
    assert outcome("run_keras_weights", learners.port_loop).passed


def test_a_trial_that_raises_does_not_hide_the_mistake_on_the_others():
    """np.hstack of W and U raises when D != H and returns a (H, 2H) array when D == H: the
    message shows the error and names the mistake."""
    result = outcome("tf1_from_keras", learners.stack_hstack)
    assert "raised ValueError" in result.message
    assert result.mistake.startswith("the blocks are side by side")
    assert result.mistake in result.message


def test_by_hand_exercises_refuse_tensorflow():
    result = outcome("rnn_step", learners.step_uses_tensorflow)
    assert not result.passed and "this exercise is by hand" in result.message
    assert "TensorFlow" in result.message


def test_every_design_has_the_structure_the_mistakes_need():
    """D > H, D < H and D == H in every by-hand exercise (D != H and D == H in the API ones,
    whose trials are few because each costs TensorFlow calls); B = 1, T >= 2 where there is
    time (and at most one trial of one step, such as rnn_unroll's near tanh's centre, where a
    float16 state shows); a nonzero bias and a nonzero h0."""
    for ex in CHAPTER.exercises:
        for seed in range(20):
            cases = CHAPTER.cases(ex.name, seed)
            shapes = {int(np.sign(c["D"] - c["H"])) for c in cases}
            assert shapes == {-1, 0, 1} if ex.by_hand else {0} < shapes, (ex.name, seed)
            for c in cases:
                if "bias" in c:
                    assert np.all(c["bias"] != 0)
                if "T" in c:
                    assert c["T"] >= 1 and np.all(c["h0"] != 0)
            timed = [c["T"] for c in cases if "T" in c]
            if timed:
                assert sum(T == 1 for T in timed) <= 1 and max(timed) >= 2, (ex.name, timed)
            if "x" in cases[0] or "inputs" in cases[0]:
                assert any(c["B"] == 1 for c in cases), ex.name


@pytest.mark.parametrize("name", sorted(learners.MORE_RIGHT))
def test_more_api_answers_on_every_seed(name):
    """The same 200 seeds as the sweep (tests/test_sweep.py): each right answer passes, each
    wrong one fails and, where a sentence is given, is named by it."""
    for fn in learners.MORE_RIGHT[name]:
        for seed in SEEDS:
            result = outcome(name, fn, seed)
            assert result.passed, f"{fn.__name__}, seed {seed}:\n{result}"
    for fn, sentence in learners.MORE_WRONG[name]:
        for seed in SEEDS:
            result = outcome(name, fn, seed)
            assert not result.passed, f"{fn.__name__} passed on seed {seed}"
            if sentence is not None:
                assert result.mistake.startswith(sentence), f"{fn.__name__}:\n{result}"
