"""The diagnosis that needs no list (rnnbook/diagnose.py, issue 35), and messages that never
give the answer away.

- Wrong answers no listed mistake models (the right answer with h ignored, doubled, in
  float16, its batch rows mixed, its blocks reordered) get one sentence naming what is wrong,
  from relations between the arrays or from the probes' extra trials.
- No message a learner can see (every listed mistake's sentence, every generic diagnosis made
  from every exercise's right answer changed in each way the diagnosis knows) holds the
  solution's slices, index expressions or a whole formula.
"""
import re

import numpy as np
import pytest

from rnnbook import checks, diagnose
from rnnbook.byhand import answer
from rnnbook.compare import evaluate, type_sentence
from rnnbook.exercise import right_answer
from rnnbook.plaindata import to_plain
from tests.learners import ch01, ch02, ch05, ch06


def judged(stem, name, fn, seed=0):
    chapter = checks.load(stem)
    ex = chapter[name]
    cases = chapter.trial_cases(name, seed)
    right = right_answer(ex)
    expected = [to_plain(right(case)) for case in cases]
    return evaluate(ex, cases, expected, [answer(ex, fn, case) for case in cases], seed=seed)


STEP = ch01.RIGHT["rnn_step"][0]
LSTM = ch02.RIGHT["lstm_step"][0]
GRU = ch06.RIGHT["fresh_gru_step"][0]
BACK = ch05.RIGHT["rnn_step_backward"][0]


def _half16(*arrays):
    return [np.asarray(a).astype(np.float16) for a in arrays]


CASES = [
    ("01-basic-rnn-cell", "rnn_step", lambda x, h, k, b: 2 * np.asarray(STEP(x, h, k, b)),
     "Your answer is twice the expected values"),
    ("01-basic-rnn-cell", "rnn_step", lambda x, h, k, b: -np.asarray(STEP(x, h, k, b)),
     "Your answer has the right size but the opposite sign"),
    ("01-basic-rnn-cell", "rnn_step", lambda *a: np.asarray(STEP(*_half16(*a))),
     "Your answer is right only to about three digits"),
    ("01-basic-rnn-cell", "rnn_step",
     lambda x, h, k, b: np.asarray(STEP(x, h, k, b)).mean(0, keepdims=True) + 0 * h,
     "changing row"),
    ("02-lstm-gate-tensors", "lstm_step", lambda x, c, h, k, b, fb: LSTM(x, 0 * c, h, k, b, fb),
     "Your c' does not change when `c` changes"),
    ("06-gru-layouts", "fresh_gru_step", lambda x, h, gk, ck: GRU(x, 0 * h, gk, ck),
     "Your answer does not change when `h` changes"),
    ("05-gradients-by-hand", "rnn_step_backward",
     lambda x, h, k, b, d: [*BACK(x, h, k, b, d)[:2], BACK(x, h, k, b, d)[2].T,
                            BACK(x, h, k, b, d)[3]],
     "dkernel is transposed"),
    # the last resorts (issue 35, h35): which parts are wrong, which trials pass, an input
    # whose zero makes the answer right; and a probe of the bias for a derivative
    ("05-gradients-by-hand", "lstm_step_backward", ch05.named(ch05.lstm_c, "dc_not_through_f",
                                                              wrong="dc no f"),
     "dc is wrong while dx, dh, dkernel and dbias are right"),
    ("01-basic-rnn-cell", "rnn_unroll", ch01.unroll_reversed,
     "Your answer is right on the trials where `T` (steps) is 1 and wrong where"),
    ("06-gru-layouts", "keras_gru_step", ch06.keras_bias_interleaved,
     "Your answer is right when the bias is zero and wrong otherwise"),
    ("05-gradients-by-hand", "rnn_step_backward", ch05.named(ch05.rnn_step_c,
                                                             "tanh_prime_at_old_h",
                                                             wrong="old h"),
     "Your dx does not change when the bias changes"),
    # a formula wrong everywhere (every probe moves the answer otherwise): the pins say which
    # quantity the answer implies wrong (h35c); the upstream gradient changed at one step
    ("06-gru-layouts", "fresh_gru_step", ch06.fresh_tanh_gates,
     "Your answer's update gate z (the one it implies) rises and falls with TensorFlow's"),
    ("06-gru-layouts", "fresh_gru_step", ch06.fresh_bias_after_sigmoid,
     "Your answer's update gate z (the one it implies) rises and falls with TensorFlow's but "
     "takes other values, some outside (0, 1)"),
    ("06-gru-layouts", "fresh_gru_step", ch06.fresh_cand_h_first,
     "Your answer is what TensorFlow computes with another candidate h~"),
    ("05-gradients-by-hand", "rnn_backward", ch05.named(ch05.rnn_seq_c, "walks_forward",
                                                        wrong="forward walk"),
     "changing the upstream gradient at the first step moves your dinputs at steps 1, 2, 3,"),
    ("05-gradients-by-hand", "rnn_backward", ch05.named(ch05.rnn_seq_c, "tanh_at_h_t_1",
                                                        wrong="tanh at h_t-1"),
     "changing the upstream gradient at the first step moves your dinputs at the same steps"),
    ("05-gradients-by-hand", "truncated_rnn_backward",
     ch05.named(ch05.trunc_c, "cut_one_step_late", wrong="cut after"),
     "Your dkernel responds to a change of the upstream gradient at the last step otherwise"),
]


@pytest.mark.parametrize("stem,name,fn,sentence", CASES)
def test_an_unlisted_mistake_is_named(stem, name, fn, sentence):
    outcome = judged(stem, name, fn)
    assert not outcome.passed
    assert outcome.mistake.startswith(sentence), outcome.message
    if not any(m.sentence == outcome.mistake for m in outcome.exercise.mistakes):
        assert f"What is wrong: {outcome.mistake}" in outcome.message


@pytest.mark.parametrize("stem,name", [(stem, ex.name) for stem in checks.CHAPTERS
                                       for ex in checks.load(stem).exercises if ex.pins])
def test_a_pin_holds_its_quantity_at_the_ends_of_its_range(stem, name):
    """Each pin's hold really holds it: the value TensorFlow's own answer implies lies inside
    the pin's range on every trial (a hold that missed its end, or an answer not affine in the
    quantity, would imply values outside it), and differs from entry to entry."""
    chapter = checks.load(stem)
    ex = chapter[name]
    right = right_answer(ex)
    for case in chapter.trial_cases(name, 0):
        want = to_plain(right(case))
        for pin in ex.pins:
            found = diagnose.implied(pin, case, want, want)
            if found is None:  # too few entries tell (a small trial)
                continue
            values, same = found
            assert np.array_equal(values, same)
            assert (values > pin.low - 1e-6).all() and (values < pin.high + 1e-6).all(), (
                f"{ex.number} pin {pin.said}: TensorFlow's own answer implies {values}")
            assert np.ptp(values) > 0.01


def test_pins_say_nothing_of_a_right_quantity():
    """An answer whose z and h~ are right but wrong otherwise (scaled after) is no pin's
    business: the sentence blames neither."""
    chapter = checks.load("06-gru-layouts")
    ex = chapter["fresh_gru_step"]
    case = chapter.cases("fresh_gru_step", 0)[1]  # B=3, H=4: 12 entries
    want = to_plain(right_answer(ex)(case))
    assert diagnose.pinned_sentence(ex, [(case, want, want)]) is None
    rng = np.random.default_rng(0)
    noise = want + rng.normal(size=want.shape)  # no quantity explains it
    assert diagnose.pinned_sentence(ex, [(case, want, noise)]) is None


def test_an_input_left_out_or_taken_for_another_is_named():
    """The right answer with a declared input at zero (keras_gru_from_session's session variables: no second
    call of the learner's function), or with two inputs of one shape swapped (read from the
    case, no declaration), is named when it is the learner's answer, and only then."""
    chapter = checks.load("06-gru-layouts")
    ex = chapter["keras_gru_from_session"]
    case = chapter.cases(ex.name, 0)[0]
    want = to_plain(ex.right(case))
    no_bias = to_plain(ex.right({**case, "cand_bias": 0 * case["cand_bias"]}))
    assert diagnose.without_sentence(ex, [(case, no_bias)], [want]).startswith(
        "your answer is what TensorFlow computes with the session's `candidate/bias` at zero")
    assert diagnose.without_sentence(ex, [(case, 1.5 * want)], [want]) is None
    lstm = checks.load("02-lstm-gate-tensors")
    ex = lstm["lstm_step"]
    case = lstm.cases(ex.name, 0)[0]
    want = to_plain(ex.right(case))
    swapped = to_plain(ex.right({**case, "c": case["h"], "h": case["c"]}))
    assert diagnose.substitution_sentence(ex, [(case, swapped)], [want]) == (
        "your answer is what TensorFlow computes with `c` and `h` swapped: the two are taken "
        "one for the other.")
    assert diagnose.substitution_sentence(ex, [(case, want)], [want]) is None


def test_a_block_all_zeros_is_named():
    chapter = checks.load("05-gradients-by-hand")
    ex = chapter["keras_grads_to_tf1"]
    case = chapter.cases(ex.name, 0)[0]
    dkernel, dbias = (np.array(a) for a in to_plain(ex.right(case)))
    H = case["H"]
    got = [1.3 * dkernel + 0.1, 0.7 * dbias]
    got[0][:, 3 * H:] = 0
    assert diagnose.generic(ex, [(case, got)], [[dkernel, dbias]]).startswith(
        "dkernel: your o block is all zeros where TensorFlow's is not")


def test_blocks_in_another_order_are_named_by_the_exercises_names():
    ex = checks.load("02-lstm-gate-tensors")["gate_weights"]
    case = checks.load("02-lstm-gate-tensors").cases("gate_weights", 0)[0]
    want = to_plain(ex.reference(case))
    got = [w.copy() for w in want]
    got[2] = want[2][[0, 2, 1, 3]]  # j and f swapped in b
    said = diagnose.generic(ex, [(case, got)], [want])
    assert said == ("b has its blocks in another order: your j block holds the f values, "
                    "your f block holds the j values.")
    got[2] = want[2].copy()
    got[2][3] += 1  # only o wrong
    assert diagnose.generic(ex, [(case, got)], [want]).startswith("b: the o block is wrong")


def test_a_probe_changes_only_its_input_and_is_named_on_the_case():
    chapter = checks.load("02-lstm-gate-tensors")
    cases = chapter.trial_cases("lstm_step", 3)
    main = chapter.cases("lstm_step", 3)
    probes = [c for c in cases if "probe" in c]
    assert len(probes) == len(chapter["lstm_step"].probes) and len(cases) == len(main) + len(
        probes) and all("probe" not in case for case in cases[:len(main)])
    for probe, case in zip(chapter["lstm_step"].probes, probes, strict=True):
        base = main[case["probed"]]
        changed = [k for k in base if not np.array_equal(np.asarray(base[k]),
                                                         np.asarray(case[k]))]
        assert changed == [probe.input] and case["probe"] == probe.name


# --- no message gives the answer away -------------------------------------------------------

#: a slice or index expression (``kernel[:, H:2H]``, ``[H:2H]``, ``bias[H:]``), an equation
#: with the cell's operations on its right, or code to call
GIVE_AWAY = [
    re.compile(r"\[[^\]\[]*:[^\]\[]*\]"),
    re.compile(r"=\s*[^=.;]*(@|\btanh\(|\bsigmoid\(|\bsplit\()"),
    re.compile(r"\bnp\.\w+"),
]


def gives_away(sentence):
    return [p.pattern for p in GIVE_AWAY if p.search(sentence)]


def generic_sentences():
    """Every exercise's right answer changed in each way the diagnosis knows, diagnosed."""
    found = set()
    for stem in checks.CHAPTERS:
        chapter = checks.load(stem)
        for ex in chapter.exercises:
            case = chapter.cases(ex.name, 0)[0]
            try:
                want = to_plain(right_answer(ex)(case))
            except Exception:  # noqa: BLE001 - an API exercise whose oracle needs more
                continue
            for change in CHANGES:
                got = _changed(want, change)
                said = diagnose.generic(ex, [(case, got)], [want])
                if said:
                    found.add(said)
    return sorted(found)


def _changed(value, change):
    if isinstance(value, list):
        return [_changed(v, change) if k == len(value) - 1 else v
                for k, v in enumerate(value)]
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f":
        return value
    return change(value)


CHANGES = [
    lambda a: 2 * a, lambda a: -a, lambda a: a.T.copy(), lambda a: np.flip(a, -1),
    lambda a: np.roll(a, 1, axis=0), lambda a: np.roll(a, 1, axis=-1),
    lambda a: a.astype(np.float16), lambda a: a + 1.0, lambda a: np.zeros_like(a),
    lambda a: a.reshape(-1), lambda a: a[..., :-1], lambda a: np.full_like(a, np.nan),
]


def test_no_message_gives_the_solution_away():
    sentences = [(f"{stem} {ex.number}", m.sentence) for stem in checks.CHAPTERS
                 for ex in checks.load(stem).exercises for m in ex.mistakes]
    sentences.append(("compare.type_sentence", type_sentence(None)))
    generic = generic_sentences()
    assert len(generic) > 10  # the diagnosis said something for most changes
    sentences += [("rnnbook.diagnose", s) for s in generic]
    bad = [f"{where}: {sentence!r} ({', '.join(found)})" for where, sentence in sentences
           if (found := gives_away(sentence))]
    assert not bad, ("messages that give the solution away (say what is wrong, never the "
                     "slice, index or formula to write):\n" + "\n".join(bad))


@pytest.mark.parametrize("sentence", [
    "so r is kernel[:, H:2H] and z is kernel[:, :H].", "holds r in columns [:H]",
    "h' = tanh([x, h] @ kernel + bias)", "np.stack them",
])
def test_the_give_away_test_can_fail(sentence):
    assert gives_away(sentence)


class _Recorder:
    def __init__(self):
        self.args = []

    def __call__(self, *args, **kwargs):
        self.args += _flattened([*args, *kwargs.values()])
        return 0.0


def _flattened(values):
    found = []
    for value in values:
        if isinstance(value, dict):
            found += _flattened(value.values())
        elif isinstance(value, (list, tuple)):
            found += _flattened(value)
        else:
            found.append(value)
    return found


@pytest.mark.parametrize("stem,name", [(stem, ex.name) for stem in checks.CHAPTERS
                                       for ex in checks.load(stem).exercises if ex.probes])
def test_a_probe_changes_an_input_the_function_is_given(stem, name):
    """A probe of an input the learner's function never receives (a bias the oracle reads
    from the case only) would blame the learner for the oracle's response."""
    chapter = checks.load(stem)
    ex = chapter[name]
    for case in chapter.trial_cases(name, 0):
        if "probe" not in case:
            continue
        recorder = _Recorder()
        try:
            ex.call(recorder, case)
        except Exception:  # noqa: BLE001 - an API call refuses the recorder's 0.0 (backward_state_by_name's
            pass  # session answer must be fetched): the arguments it was given are what count
        assert recorder.args, f"{ex.number}: its call never called the function"
        changed = case[case["probe"].split(":")[0]]
        assert any(a is changed or (isinstance(a, np.ndarray) and a.shape == changed.shape
                                    and np.array_equal(a, changed)) for a in recorder.args), (
            f"{ex.number} probe {case['probe']}: the function is not given that input")


def test_the_notebook_asks_the_probes_only_for_a_diagnosis(monkeypatch):
    """``check(fn)`` in a notebook runs the oracle on the probes' trials only when the
    diagnosis needs them (no probe for a passing answer: the in-notebook check's time), and
    says then what the grader says, which answers every trial at once."""
    chapter = checks.load("06-gru-layouts")
    ex = chapter["keras_gru_step"]
    asked = []
    oracle = ex.oracle
    monkeypatch.setattr(ex, "oracle", lambda case: asked.append("probe" in case) or oracle(case))
    right = ch06.RIGHT["keras_gru_step"][0]
    assert chapter.check(right, "keras_gru_step", seed=3).passed and asked and not any(asked)
    asked.clear()
    lazy = chapter.check(ch06.keras_bias_interleaved, "keras_gru_step", seed=3)
    assert any(asked)  # the relations named nothing: the probes were asked
    eager = judged("06-gru-layouts", "keras_gru_step", ch06.keras_bias_interleaved, seed=3)
    assert lazy.message == eager.message and lazy.mistake == eager.mistake != ""


def test_a_failing_answer_earns_at_most_two_thirds():
    """However many parts are right (8 of 9, 15 of 16 weights), a failing answer earns two
    thirds at most, and the feedback says why (issue 35)."""
    from rnnbook.compare import CEILING, Outcome

    ex = checks.load("05-gradients-by-hand")["lstm_cell_backward"]
    almost = Outcome(ex, False, "", parts_right=tuple(p for p in ex.parts if p != "dkernel"))
    assert almost.parts_share == pytest.approx(15 / 16) and almost.share == CEILING == 2 / 3
    assert almost.capped
    half = Outcome(ex, False, "", parts_right=("dc",))
    assert half.share == pytest.approx(0.5) and not half.capped
