"""rnnbook/checks/common.py: what the chapters' checks share.

Its case helpers run on the learner's side, where rnnbook.reference is a stub, so they keep a
NumPy copy of a reference function (the TF1 -> Keras port): held here to the reference. Its
mistake families are held by the sweeps (tests/test_sweep.py) and the fingerprint of every
check; the grader's zygote cuts the module like a chapter's (tests/test_isolation.py).
"""
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from rnnbook import checks
from rnnbook import reference as ref
from rnnbook.checks import common
from rnnbook.plaindata import Raised


@pytest.mark.parametrize("D,H,forget_bias", [(3, 2, 1.0), (1, 4, -0.7), (2, 3, 2.35)])
def test_learner_side_port_is_the_references(D, H, forget_bias):
    rng = np.random.default_rng(D * 10 + H)
    kernel = rng.standard_normal((D + H, 4 * H)).astype(np.float32)
    bias = rng.standard_normal(4 * H).astype(np.float32)
    got = common.tf1_to_keras_weights(kernel, bias, forget_bias, D)
    want = ref.keras_from_tf1(kernel, bias, forget_bias, D)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    assert np.array_equal(common.reorder_blocks(common.reorder_blocks(
        kernel, common.TF1_TO_KERAS), common.TF1_TO_KERAS), kernel)  # the swap goes back


def test_names_split_0_only_on_step_0():
    error = Raised("KeyError", "The name 'rnn/basic_lstm_cell/split_0:0' refers to a Tensor "
                   "which does not exist.")
    assert common.names_split_0({"t": 0}, error)
    assert common.names_split_0({}, error)  # a case of every step
    assert not common.names_split_0({"t": 2}, error)
    assert not common.names_split_0({"t": 0}, Raised("KeyError", "no such tensor 'split:0'"))


CASES_WITHOUT_REFERENCE = """
import sys, types
stub = open(sys.argv[1] + '/rnnbook/grading/templates/learner-stub.py').read()
for name in ('reference', 'backward'):
    module = types.ModuleType('rnnbook.' + name)
    exec(stub, module.__dict__)
    sys.modules['rnnbook.' + name] = module
from rnnbook import checks
made = 0
for stem in checks.CHAPTERS:
    chapter = checks.load(stem)
    for ex in chapter.exercises:
        made += len(chapter.cases(ex.name, 5))
print(made)
"""


def test_every_case_is_made_without_the_reference():
    """The learner release has a stub for rnnbook.reference and rnnbook.backward, and makes
    every trial's case on the learner's side: no case helper (common's included) may need them."""
    ran = subprocess.run([sys.executable, "-c", CASES_WITHOUT_REFERENCE, str(ROOT)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr[-2000:]
    total = sum(len(checks.load(stem)[ex.name].designs) or checks.load(stem)[ex.name].trials
                for stem in checks.CHAPTERS for ex in checks.load(stem).exercises)
    assert int(ran.stdout.split()[-1]) == total


FAMILIES = [common.keras_order, common.forget_bias_hard_coded, common.forget_bias_left_out,
            common.forget_bias_twice, common.split_at_h, common.w_and_u_swapped,
            common.not_carried, common.parts_swapped]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__)
def test_every_family_passes_variants_and_raises_on(family):
    """A family member is written like any other mistake: its Mistake keeps the sentence and
    the ``variants=`` and ``raises=`` it was given (CONTRIBUTING.md says so)."""
    def variant(case):
        return None

    def raises(case, got):
        return True

    mistake = family("the sentence: what to change", lambda c, **change: (c, c),
                     variants=(variant,), raises=raises)
    assert mistake.sentence == "the sentence: what to change"
    assert mistake.variants == (variant,) and mistake.raises is raises


class _Api:
    """A stand-in for an API: ``run`` returns a fixed (B, 4H) array, as session.run would."""

    def __init__(self, value):
        self.value = value

    def run(self, fetch, feed=None):
        return self.value, (self.value[:, :2],)  # nested, as a session's fetches are


def test_an_answer_holding_numbers_the_api_never_returned_is_named_part_by_part():
    rng = np.random.default_rng(3)
    api = _Api(rng.standard_normal((3, 8)).astype(np.float32))

    def fetched(api):  # the right way: slices of what the API returned, float64
        value = api.run("split:0", {"x": 1})[0].astype(np.float64)
        return value[:, :4], value[:, 4:]

    def restated(api):  # the shortcut: the same numbers, recomputed, never returned
        value = api.run("kernel:0")[0]
        return value[:, :4], np.tanh(np.arctanh(np.clip(value[:, 4:], -0.9, 0.9))) + 0.01

    result, part = common.api_answer(api, "run", lambda: fetched(api), ("a", "b"))
    assert part is None and np.allclose(result[0], api.value[:, :4])
    assert common.api_answer(api, "run", lambda: restated(api), ("a", "b"))[1] == "b"
    assert common.api_answer(api, "run", lambda: np.ones(3))[1] == "the answer"  # no call
    assert common.api_answer(api, "run", lambda: "split:0")[1] is None  # no numbers: compared
    assert common.api_answer(api, "run", lambda: None)[1] is None  # "returns nothing"
    assert "run" not in vars(api)  # the method is the class's again
    # a float16 copy is still the API's numbers (the comparison names the dtype)
    half = common.api_answer(api, "run", lambda: api.run("x")[0].astype(np.float16))
    assert half[1] is None


def test_recording_a_class_method_restores_it_even_when_the_function_raises():
    calls = []
    original = _Api.__dict__["run"]
    with pytest.raises(KeyError), common.recording(_Api, "run", calls):
        _Api(np.zeros((1, 4))).run("x")
        raise KeyError("the learner's function raised")
    assert _Api.__dict__["run"] is original and len(calls) == 1
    assert calls[0].args == ("x",) and calls[0].result[0].shape == (1, 4)
