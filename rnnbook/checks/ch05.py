"""Chapter 5 (gradients by hand: backpropagation through time through TF's own cells): checks.

Every oracle is TensorFlow's automatic differentiation on the REAL cell with the trial's random
weights: ``tf.GradientTape`` around an eager ``BasicRNNCell`` / ``BasicLSTMCell`` /
``LSTMCell`` (the legacy TF1 cells run eagerly), ``tf.stop_gradient`` for truncation,
``tf.clip_by_global_norm``, and ``tf.compat.v1.gradients`` in a ``static_rnn`` graph for the
gradient tensors by name. The NumPy ``reference`` of each exercise (for the 200-seed sweeps)
is :mod:`rnnbook.backward`, the one NumPy backward pass of each cell. Like
:mod:`rnnbook.reference`, that module solves the exercises and never ships to learners: it is
touched only inside the references (and :func:`_first_state`, which falls back on TF).

The mistake models never call it: each is the exercise's RIGHT answer (the reference where it
is installed, the oracle in the learner release: :func:`_right`) on a changed case, changed
after, or a sum of such answers. A changed case may change the cell itself: a tanh or a
``cell_clip`` whose gradient is taken wrong (``tanh_grad``, ``clip_grad``, ``f_grad``: TF's
side in :func:`_tanh_with_grad` and :func:`_changed_tf`, the reference's as its named slip),
chunks of one step (the gradient not carried), one row of the batch at a time (dz itself);
the gradients are linear in the upstream ones, so a missing path is the right answer with the
upstream lowered by that path's share. Both sides agree on every changed case
(tests/test_ch05.py, tests/test_backward.py), so the repository, the release and the grader
name the same mistakes (tests/test_release_names.py).

Upstream gradients: a loss L is never built by hand; each case carries dL/d(output) (``dh_new``,
``doutputs``, ...), as CS231n's ``rnn_step_backward`` does. Notation (book/notation.md): ``B``
batch, ``T`` time, ``D`` input depth, ``H`` num_units, ``P`` num_proj; TF1 gate order i, j, f,
o; ``d<name>`` is dL/d<name> with the shape of <name>.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
from typing import Any, Callable, Iterator, NotRequired, Sequence, TypedDict

import numpy as np

from rnnbook import backward as bwd
from rnnbook import reference as ref
from rnnbook.checks.ch02 import NOT_FETCHED, _fetched  # a session's answer, fetched
from rnnbook.checks.common import (
    TF1_TO_KERAS,
    LstmRunTrial,
    Trial,
    api_answer,
    forget_bias_hard_coded,
    forget_bias_left_out,
    names_split_0,
    not_from_api,
    reorder_blocks,
    tf1_to_keras_weights,
)
from rnnbook.compare import relative_error
from rnnbook.diagnose import Probe
from rnnbook.exercise import Chapter, Exercise, Mistake, normal, right_answer
from rnnbook.oracles import (
    graph_bytes,
    graph_from_bytes,
    keras3,
    load_weights,
    quick_session,
    run_tf1,
    tensorflow,
)
from rnnbook.plaindata import Case, Raised


class SequenceTrial(TypedDict):
    """rnn_backward's and truncated_rnn_backward's trial: a BasicRNNCell over a sequence."""

    B: int
    T: int
    D: int
    H: int
    inputs: np.ndarray  # (B, T, D)
    h0: np.ndarray  # (B, H)
    kernel: np.ndarray  # (D + H, H)
    bias: np.ndarray  # (H,)
    doutputs: np.ndarray  # (B, T, H): dL/dh_t for every step
    chunk: NotRequired[int]  # truncated_rnn_backward's (a mistake's: rnn_backward's too)
    tanh_grad: NotRequired[str]  # a mistake's changed cell (_tanh_with_grad)


class LstmStepTrial(TypedDict):
    """lstm_step_backward's trial."""

    B: int
    D: int
    H: int
    forget_bias: float
    x: np.ndarray  # (B, D)
    c: np.ndarray  # (B, H)
    h: np.ndarray  # (B, H)
    kernel: np.ndarray  # (D + H, 4H): gates i, j, f, o
    bias: np.ndarray  # (4H,)
    dc_new: np.ndarray  # (B, H): dL/dc'
    dh_new: np.ndarray  # (B, H): dL/dh'
    f_grad: NotRequired[str]  # a mistake's changed cell (_changed_tf)


class ByNameTrial(LstmRunTrial):
    """split_grad_by_name's trial: the graph's shape, the step, weights and upstream."""

    t: int
    doutputs: np.ndarray  # (B, T, H): the loss is sum(outputs * doutputs)


# The trials of clip_global_norm (gradients named by their shapes), rnn_step_backward and
# gradient_check (its trial is rnn_step_backward's, in float64, and more), keras_grads_to_tf1
# and lstm_cell_backward (the cell's weights named as its variables) are ``Case``s; their
# keys and shapes are in their ``make_case``s.

#: a backward pass's answer: its gradients, one part each
Grads = tuple[np.ndarray, ...]
#: ``after``: the right answer (plain data: a list of parts) changed
After = Callable[[Trial, list[np.ndarray]], list[np.ndarray]]

# ---------------------------------------------------------------------------------------------
# TensorFlow's gradients of the real cells (the oracles)


def _f32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float32)


def _weight_key(var: Any) -> str:
    """``kernel``, ``bias``, ``w_i_diag``, ... or ``projection``: which weight a variable is."""
    name = var.name.split(":")[0]
    return "projection" if "/projection/" in name else name.split("/")[-1]


def _eager_cell(cell: Any, depth: int, weights: Trial) -> Any:
    """Build a TF1 cell for inputs of ``depth`` and load ``weights`` (keyed as
    :func:`_weight_key` names the cell's variables)."""
    tf = tensorflow()
    cell.build(tf.TensorShape([None, depth]))
    for var in cell.variables:
        var.assign(_f32(weights[_weight_key(var)]))
    return cell


def _tanh_with_grad(kind: str) -> Callable[..., Any]:
    """tanh whose gradient is taken the wrong way (a mistake's changed cell): ``"z"``
    1 - z^2 at the pre-activation, ``"none"`` no tanh' at all (dz = dh')."""
    tf = tensorflow()

    @tf.custom_gradient
    def activation(z):
        def grad(dy):
            return dy * (1.0 - z * z) if kind == "z" else dy
        return tf.tanh(z), grad
    return activation


def tf_rnn_grads(inputs: np.ndarray, h0: np.ndarray, kernel: np.ndarray, bias: np.ndarray,
                 doutputs: np.ndarray, chunk: int | None = None,
                 tanh_grad: str | None = None) -> Grads:
    """TF's ``(dinputs, dh0, dkernel, dbias)`` for a real ``BasicRNNCell`` run over ``inputs``
    (B, T, D) from ``h0``, for the loss ``sum(outputs * doutputs)``. With ``chunk``, the state
    entering each chunk after the first is passed through ``tf.stop_gradient`` (truncated BPTT:
    the value is carried, the gradient is not). ``tanh_grad`` (``"z"``, ``"none"``) gives the
    cell an activation whose gradient is taken wrong (:func:`_tanh_with_grad`): mistakes are
    the right answer of such a changed cell."""
    tf = tensorflow()
    rnn_cell = tf.compat.v1.nn.rnn_cell
    activation = _tanh_with_grad(tanh_grad) if tanh_grad else None
    cell = _eager_cell(rnn_cell.BasicRNNCell(h0.shape[1], activation=activation),
                       inputs.shape[2], {"kernel": kernel, "bias": bias})
    x, h = tf.constant(_f32(inputs)), tf.constant(_f32(h0))
    with tf.GradientTape() as tape:
        tape.watch([x, h])
        state, outputs = h, []
        for t in range(inputs.shape[1]):
            if chunk and t and t % chunk == 0:
                state = tf.stop_gradient(state)
            out, state = cell(x[:, t], state)
            outputs.append(out)
        loss = tf.reduce_sum(tf.stack(outputs, axis=1) * _f32(doutputs))
    return tuple(g.numpy() for g in tape.gradient(loss, [x, h, *cell.variables]))


@contextlib.contextmanager
def _changed_tf(clip_grad: str | None = None, f_grad: str | None = None,
                forget_bias: float | None = None) -> Iterator[None]:
    """TF's own ops changed for one cell call (a mistake's changed cell, on TF's side):
    ``clip_grad="pass"`` makes ``tf.clip_by_value`` (LSTMCell's cell_clip) pass the gradient
    where it clips; ``f_grad="without forget_bias"`` takes the gradient of BasicLSTMCell's
    first sigmoid, sigmoid(f + forget_bias), at f alone. The legacy cells look both up on
    ``tensorflow.compat.v2`` when they run; tests/test_backward.py holds these cells to
    rnnbook.backward's slips."""
    tf2 = importlib.import_module("tensorflow.compat.v2")
    saved = {name: getattr(tf2, name) for name in ("clip_by_value", "sigmoid")}
    clip, sigmoid = saved["clip_by_value"], saved["sigmoid"]
    calls = []

    def passing_clip(t, low, high, name=None):
        return t + tf2.stop_gradient(clip(t, low, high) - t)

    def f_sigmoid(z, name=None):
        calls.append(z)
        if len(calls) > 1:
            return sigmoid(z)
        shifted = sigmoid(z - forget_bias)  # its gradient is sigmoid' at f alone
        return tf2.stop_gradient(sigmoid(z)) + shifted - tf2.stop_gradient(shifted)

    try:
        if clip_grad == "pass":
            tf2.clip_by_value = passing_clip  # type: ignore[attr-defined]
        if f_grad == "without forget_bias":
            tf2.sigmoid = f_sigmoid  # type: ignore[attr-defined]
        yield
    finally:
        for name, value in saved.items():
            setattr(tf2, name, value)


def tf_lstm_grads(case: Trial, basic: bool = False) -> dict[str, np.ndarray]:
    """TF's gradients of one step of a real ``LSTMCell`` (peepholes, ``cell_clip`` and
    projection as the case has them) or ``BasicLSTMCell``, for the loss
    ``sum(c' * dc_new) + sum(m' * dm_new)`` (a mistake's changed cell where the case says
    ``clip_grad`` or ``f_grad``, :func:`_changed_tf`): a dict with ``dx, dc, dm`` and ``d<variable>`` for
    every variable of the cell (``dkernel``, ``dbias``, ``dw_i_diag``, ..., ``dprojection``).
    ``forget_bias`` has no variable, so it has no gradient."""
    tf = tensorflow()
    rnn_cell = tf.compat.v1.nn.rnn_cell
    H = case["c"].shape[1]
    if basic:
        cell = rnn_cell.BasicLSTMCell(H, forget_bias=case["forget_bias"])
    else:
        cell = rnn_cell.LSTMCell(H, use_peepholes=case.get("w_i_diag") is not None,
                                 cell_clip=case.get("cell_clip"),
                                 num_proj=case["m"].shape[1] if "projection" in case else None,
                                 forget_bias=case["forget_bias"])
    cell = _eager_cell(cell, case["x"].shape[1], case)
    x, c, m = (tf.constant(_f32(case[k])) for k in ("x", "c", "m"))
    changed = _changed_tf(case.get("clip_grad"), case.get("f_grad"), case["forget_bias"])
    with tf.GradientTape() as tape, changed:
        tape.watch([x, c, m])
        _, (c_new, m_new) = cell(x, rnn_cell.LSTMStateTuple(c, m))
        loss = (tf.reduce_sum(c_new * _f32(case["dc_new"]))
                + tf.reduce_sum(m_new * _f32(case["dm_new"])))
    grads = tape.gradient(loss, [x, c, m, *cell.variables])
    out = dict(zip(("dx", "dc", "dm"), (g.numpy() for g in grads[:3]), strict=True))
    for var, g in zip(cell.variables, grads[3:], strict=True):
        out["d" + _weight_key(var)] = g.numpy()
    return out


# ---------------------------------------------------------------------------------------------
# Shared by several exercises: the right answer on a changed case (the mistakes' models), the
# mistakes of a step's gradients that several exercises name, the sequence trial. Defined
# before every exercise, so that a new exercise can use them wherever it goes in the chapter.


def _right(name: str, **change: object) -> Callable[[Trial], Any]:
    """Exercise ``name``'s right answer on a case with ``change`` made: rnnbook.backward where
    it is installed, TensorFlow's oracle in the learner release (exercise.right_answer)."""
    def model(case: Trial) -> Any:
        return right_answer(CHAPTER[name])({**case, **change})
    return model


def _right_on_changed(name: str, perturb: Callable[[Trial], Trial]) -> Callable[[Trial], Any]:
    """Exercise ``name``'s right answer on ``perturb(case)`` (for a Mistake's ``variants``,
    which are functions of the case)."""
    return lambda case: right_answer(CHAPTER[name])(perturb(case))


#: a case's ``tanh_grad`` (a mistake's changed cell, _tanh_with_grad) as rnnbook.backward's slip
TANH_SLIPS = {None: None, "z": "tanh' of z", "none": "no tanh'"}


TANH_AT_Z = ("tanh' is taken at the wrong point: it is computed from the "
             "pre-activation z as if z were tanh's output; tanh' comes from the "
             "cell's output h'.")


NO_TANH = ("the derivative of tanh is missing: what reaches the kernel, the bias, x "
           "and h is dh' through tanh', not dh' itself.")


BIAS_AVERAGED = ("the bias gradient is averaged over the batch: the loss adds every row's "
                 "term, so dbias is the SUM of the rows' gradients, not their mean.")


def _rows(name: str, part: int,
          batched: Sequence[str] = ("x", "h", "c", "m", "dh_new", "dc_new", "dm_new"),
          ) -> Callable[[Trial], np.ndarray]:
    """Part ``part`` of exercise ``name``'s right answer on each row of the batch alone,
    stacked: with ``part`` the bias gradient, the (B, G * H) gradient of the pre-activations
    dz, row by row."""
    def model(case: Trial) -> np.ndarray:
        return np.stack([np.asarray(_right(name, **{k: case[k][b: b + 1] for k in batched
                                                    if k in case}, B=1)(case)[part])
                         for b in range(case["B"])])
    return model


def _averaged(part: int) -> After:
    """``after``: the right answer with part ``part`` (a bias gradient) divided by B."""
    def after(case: Trial, right: list[np.ndarray]) -> list[np.ndarray]:
        right = list(right)
        right[part] = np.asarray(right[part]) / case["B"]
        return right
    return after


SPLIT_AT_H = ("dx and dh are split at column H: the gradient of [x, h] has D columns "
              "for x first, then H for h (D == H would hide this).")


def _split_at_h(dx: int, dh: int) -> After:
    """``after``: the right answer with parts ``dx`` and ``dh`` joined and split at column H
    instead of D (a kernel split at row H gives the same)."""
    def after(case: Trial, right: list[np.ndarray]) -> list[np.ndarray]:
        right = list(right)
        both = np.concatenate([np.asarray(right[dx]), np.asarray(right[dh])], axis=1)
        right[dx], right[dh] = both[:, :case["H"]], both[:, case["H"]:]
        return right
    return after


SIDE_BY_SIDE = ("dW and dU are joined side by side: the kernel stacks W (D rows) on top of U "
                "(H rows), so its gradient stacks dW on top of dU (axis 0).")


def _side_by_side(part: int) -> After:
    """``after``: the kernel's gradient with dW (its first D rows) and dU joined along axis 1;
    NumPy raises where D != H (``raises=_joins_unequal_rows``)."""
    def after(case: Trial, right: list[np.ndarray]) -> list[np.ndarray]:
        right = list(right)
        dkernel = np.asarray(right[part])
        right[part] = np.concatenate([dkernel[:case["D"]], dkernel[case["D"]:]], axis=1)
        return right
    return after


def _joins_unequal_rows(case: Trial, got: Raised) -> bool:
    """Whether ``got`` is NumPy's error for joining arrays of D and H rows along axis 1."""
    return case["D"] != case["H"] and got.kind == "ValueError" and (
        "concatenation axis must match" in got.message)


def _transposed(part: int) -> After:
    """``after``: the right answer with part ``part`` transposed."""
    def after(case: Trial, right: list[np.ndarray]) -> list[np.ndarray]:
        right = list(right)
        right[part] = np.asarray(right[part]).T
        return right
    return after


def _rnn_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
              chunk: int | None = None) -> SequenceTrial:
    case: SequenceTrial = {"B": B, "T": T, "D": D, "H": H,
            "inputs": normal(rng, B, T, D),  # (B, T, D)
            "h0": normal(rng, B, H),  # (B, H)
            "kernel": normal(rng, D + H, H, scale=0.7),  # (D + H, H)
            "bias": normal(rng, H, scale=0.5),  # (H,)
            "doutputs": normal(rng, B, T, H)}  # (B, T, H): dL/dh_t for every step
    if chunk:
        case["chunk"] = chunk
    return case


def _blocks_swapped(parts: Sequence[int]) -> After:
    """``after``: the right answer with the 2nd and 3rd gate blocks of ``parts`` swapped."""
    def after(case: Trial, right: list[np.ndarray]) -> list[np.ndarray]:
        right = list(right)
        for k in parts:
            right[k] = reorder_blocks(np.asarray(right[k]), TF1_TO_KERAS)
        return right
    return after



# --- clip_global_norm: clip by global norm ---------------------------------------------------

CLIP_DESIGNS = (
    dict(norms=(0.7, 0.8, 0.75)),  # each tensor below clip_norm, the global norm above it
    dict(norms=(2.5, 0.3, 0.4)),  # one tensor far above, the rest below
    dict(norms=(0.5, 0.5, 0.55)),  # global below (nothing changes), the sum of the norms above
)


def _clip_case(rng: np.random.Generator, norms: Sequence[float]) -> Case:
    """Three gradient tensors (a kernel's, a bias', a projection's) with designed norms, as
    multiples of ``clip_norm``."""
    D, H, P = (int(rng.integers(1, 4)) for _ in range(3))
    clip_norm = round(float(rng.uniform(1.5, 4.0)), 2)
    shapes = {"dkernel": (D + H, 4 * H), "dbias": (4 * H,), "dprojection": (H, P)}
    case: Case = {"clip_norm": clip_norm}
    for (name, shape), share in zip(shapes.items(), norms, strict=True):
        g = normal(rng, *shape)
        case[name] = _f32(g * share * clip_norm / np.sqrt((g.astype(np.float64) ** 2).sum()))
    return case


GRAD_NAMES = ("dkernel", "dbias", "dprojection")


def _clip_oracle(case: Case) -> list[object]:
    tf = tensorflow()
    clipped, norm = tf.clip_by_global_norm([case[k] for k in GRAD_NAMES], case["clip_norm"])
    return [[g.numpy() for g in clipped], float(norm)]


def _clip_ref(case: Case) -> list[object]:
    clipped, norm = bwd.clip_by_global_norm([case[k] for k in GRAD_NAMES], case["clip_norm"])
    return [clipped, norm]


# The mistakes are the right answer on a changed case or changed after (Mistake perturb= and
# after=), so the learner release (TensorFlow's oracle, no rnnbook.backward) names them too.


def _norm(a: np.ndarray) -> float:
    return float(np.sqrt((np.asarray(a, np.float64) ** 2).sum()))


def _clip_with_norm(norm_of: Callable[[Trial, float], float]) -> Callable[[Trial], list[object]]:
    """The right answer scaled as if the global norm were ``norm_of(case, right_norm)``: the
    right one with clip_norm * N / M for a norm N taken as M (both below clip_norm: nothing
    changes; else the tensors are scaled by clip_norm / M), and M returned as the norm."""
    def model(case: Trial) -> list[object]:
        right_norm = _right("clip_global_norm")(case)[1]
        wrong = norm_of(case, right_norm)
        clip = case["clip_norm"] * right_norm / wrong
        return [_right("clip_global_norm", clip_norm=clip)(case)[0], wrong]
    return model


def _clip_each(case: Case) -> list[object]:
    """Each tensor clipped by its own norm: the right answer on the case with the other
    tensors zero (then the global norm is that tensor's), the global norm kept."""
    zero = {k: np.zeros_like(case[k]) for k in GRAD_NAMES}
    own = [_right("clip_global_norm", **{**zero, k: case[k]})(case)[0][n]
           for n, k in enumerate(GRAD_NAMES)]
    return [own, _right("clip_global_norm")(case)[1]]


def _clip_always(case: Case, right: Any) -> Any:
    """Scaled by clip_norm / global_norm whatever the norm: right's tensors times
    max(norm, clip_norm) / norm."""
    clipped, norm = right
    return [np.asarray(g) * max(norm, case["clip_norm"]) / norm for g in clipped], norm


clip_global_norm = Exercise(
    name="clip_global_norm",
    task="(clipped, global_norm): the list of tensors scaled as tf.clip_by_global_norm does, "
         "and their global norm (a number)",
    make_case=_clip_case,
    designs=CLIP_DESIGNS,
    call=lambda fn, c: fn([c[k] for k in GRAD_NAMES], c["clip_norm"]),
    oracle=_clip_oracle,
    reference=_clip_ref,
    parts=("clipped", "global_norm"),
    mistakes=(
        Mistake(
            "each tensor is clipped on its own (tf.clip_by_norm per tensor): global-norm clipping "
            "takes ONE norm over all the tensors together and scales every tensor by the same "
            "factor clip_norm / max(global_norm, clip_norm).",
            _clip_each,
        ),
        Mistake(
            "the global norm is the sum of the tensors' norms: it is the norm of all their "
            "entries together, sqrt(sum of every tensor's squared entries).",
            _clip_with_norm(lambda c, n: sum(_norm(c[k]) for k in GRAD_NAMES)),
        ),
        Mistake(
            "the square root is missing: the global norm is sqrt(sum of the squared entries), "
            "not the sum of squares.",
            _clip_with_norm(lambda c, n: n * n),
        ),
        Mistake(
            "the tensors are rescaled even when the global norm is below clip_norm: scale by "
            "clip_norm / max(global_norm, clip_norm), which is 1 below the threshold.",
            after=_clip_always,
        ),
    ),
)


# --- rnn_step_backward: one BasicRNNCell step backward ---------------------------------------

STEP_DESIGNS = (dict(B=3, D=2, H=4), dict(B=1, D=4, H=3))  # D != H; B > 1 and B = 1


def _rnn_step_case(rng: np.random.Generator, B: int, D: int, H: int) -> Case:
    return {"B": B, "D": D, "H": H,
            "x": normal(rng, B, D),  # (B, D)
            "h": normal(rng, B, H),  # (B, H)
            "kernel": normal(rng, D + H, H, scale=0.6),  # (D + H, H): W on top of U
            "bias": normal(rng, H, scale=0.5),  # (H,)
            "dh_new": normal(rng, B, H)}  # (B, H): dL/dh'


def _rnn_step_oracle(case: Case) -> Grads:
    dinputs, dh, dkernel, dbias = tf_rnn_grads(case["x"][:, None], case["h"], case["kernel"],
                                               case["bias"], case["dh_new"][:, None],
                                               tanh_grad=case.get("tanh_grad"))
    return dinputs[:, 0], dh, dkernel, dbias


def _rnn_step_ref(c: Case) -> Grads:
    return bwd.basic_rnn_step_backward(c["x"], c["h"], c["kernel"], c["bias"], c["dh_new"],
                                       slip=TANH_SLIPS[c.get("tanh_grad")])


def _dh_through_u_as_is(c: Case) -> Grads:
    """dh = dz @ U, U not transposed (dz row by row, _rows): U is (H, H), so the shape cannot
    tell."""
    dx, _, dkernel, dbias = _right("rnn_step_backward")(c)
    return dx, _rows("rnn_step_backward", 3)(c) @ c["kernel"][c["D"]:], dkernel, dbias


def _dbias_per_row(c: Case) -> Grads:
    """dbias not summed over the batch: dz itself (B, H), row by row (_rows)."""
    dx, dh, dkernel, _ = _right("rnn_step_backward")(c)
    return dx, dh, dkernel, _rows("rnn_step_backward", 3)(c)


rnn_step_backward = Exercise(
    name="rnn_step_backward",
    # the bias moves h' alone: a derivative taken at another state does not respond to it
    probes=(Probe("h", "zero"), Probe("dh_new", "row"), Probe("bias", "all", said="the bias")),
    relative_error=True,  # a gradient: a failure says its relative error
    task="(dx (B, D), dh (B, H), dkernel (D + H, H), dbias (H,)) for one BasicRNNCell step",
    make_case=_rnn_step_case,
    designs=STEP_DESIGNS,
    call=lambda fn, c: fn(c["x"], c["h"], c["kernel"], c["bias"], c["dh_new"]),
    oracle=_rnn_step_oracle,
    reference=_rnn_step_ref,
    parts=("dx", "dh", "dkernel", "dbias"),
    weights=(1, 1, 3, 1),  # a wrong dkernel earns at most half
    mistakes=(
        Mistake(TANH_AT_Z, perturb=lambda c: {**c, "tanh_grad": "z"}),
        Mistake(NO_TANH, perturb=lambda c: {**c, "tanh_grad": "none"}),
        Mistake(
            "dkernel is transposed: the kernel is (D + H, H) and so is its gradient, "
            "with dW's rows on top of dU's.",
            after=_transposed(2),
        ),
        Mistake(
            "dbias is not summed over the batch: every row uses the same bias, so its gradient "
            "is dz summed over axis 0, shape (H,).",
            _dbias_per_row,
        ),
        Mistake(BIAS_AVERAGED, after=_averaged(3)),
        Mistake(SPLIT_AT_H, after=_split_at_h(0, 1)),
        Mistake(SIDE_BY_SIDE, after=_side_by_side(2), raises=_joins_unequal_rows),
        Mistake(
            "dh went through U as it is, not transposed: U is square, so the shape "
            "hides the missing transpose.",
            _dh_through_u_as_is,
        ),
    ),
)


# --- rnn_backward: BPTT over a sequence ------------------------------------------------------

#: B, T, D and H all different in each trial (audit, issue 18: B = H = 2 hid a transposed
#: (B, H) array in the first trial; only B = 1 told it apart), and B = 1
SEQ_DESIGNS = (dict(B=2, T=4, D=3, H=5), dict(B=1, T=5, D=2, H=3))


def _rnn_oracle(case: SequenceTrial) -> Grads:
    return tf_rnn_grads(case["inputs"], case["h0"], case["kernel"], case["bias"],
                        case["doutputs"], chunk=case.get("chunk"),
                        tanh_grad=case.get("tanh_grad"))


def _rnn_ref(c: SequenceTrial) -> Grads:
    """rnnbook.backward's BPTT, truncated where the case has a ``chunk`` and with a changed
    tanh' where it has a ``tanh_grad`` (the mistakes' changed cases)."""
    return bwd.basic_rnn_backward(c["inputs"], c["h0"], c["kernel"], c["bias"], c["doutputs"],
                                  chunk=c.get("chunk"), step_slip=TANH_SLIPS[c.get("tanh_grad")])


def _first_state(c: SequenceTrial) -> np.ndarray:
    """h_1, the state after step 0: rnnbook.reference where installed, the real
    BasicRNNCell's step (TensorFlow) in the learner release."""
    x, weights = c["inputs"][:, 0], {"kernel": c["kernel"], "bias": c["bias"]}
    try:
        return ref.basic_rnn_step(x, c["h0"], c["kernel"], c["bias"])
    except ImportError:
        rnn_cell = tensorflow().compat.v1.nn.rnn_cell
        return run_tf1(lambda: rnn_cell.BasicRNNCell(c["H"]), x, c["h0"], weights)[0]


def _from_step_1(c: SequenceTrial) -> Grads:
    """The right answer of the sequence from step 1 on, from h_1: its dh0 is what step 1
    sends back to h_1, its dkernel and dbias the steps' 1 to T - 1."""
    return _right("rnn_backward", inputs=c["inputs"][:, 1:], doutputs=c["doutputs"][:, 1:],
                  h0=_first_state(c), T=c["T"] - 1)(c)


def _skips_step_0(c: SequenceTrial) -> Grads:
    dinputs, dh1, dkernel, dbias = _from_step_1(c)
    return np.concatenate([np.zeros_like(c["inputs"][:, :1]), dinputs], axis=1), dh1, dkernel, \
        dbias


def _step_0_only(c: SequenceTrial) -> Grads:
    """The kernel's gradient overwritten at every step: step 0's is left (the whole minus the
    steps' from 1 on)."""
    dinputs, dh0, dkernel, dbias = _right("rnn_backward")(c)
    _, _, later_k, later_b = _from_step_1(c)
    return dinputs, dh0, np.asarray(dkernel) - later_k, np.asarray(dbias) - later_b


#: the upstream gradient changed at one step only: which steps of the answer respond
#: (a gradient flows back from its step to the chunk's start, never forward)
STEP_PROBES = (Probe("doutputs", "step", 0, said="the upstream gradient at the first step"),
               Probe("doutputs", "step", -1, said="the upstream gradient at the last step"))

rnn_backward = Exercise[SequenceTrial](
    name="rnn_backward",
    probes=(Probe("h0", "zero"), Probe("doutputs", "row"), *STEP_PROBES),
    relative_error=True,  # a gradient: a failure says its relative error
    task="(dinputs (B, T, D), dh0 (B, H), dkernel (D + H, H), dbias (H,)) through the whole "
         "sequence",
    make_case=_rnn_case,
    designs=SEQ_DESIGNS,
    call=lambda fn, c: fn(c["inputs"], c["h0"], c["kernel"], c["bias"], c["doutputs"]),
    oracle=_rnn_oracle,
    reference=_rnn_ref,
    parts=("dinputs", "dh0", "dkernel", "dbias"),
    weights=(1, 1, 3, 1),  # a wrong dkernel earns at most half
    mistakes=(
        Mistake(
            "dh is not carried back through time: dL/dh_t is the upstream gradient at "
            "step t PLUS what step t + 1 sends back to its previous state.",
            perturb=lambda c: {**c, "chunk": 1},  # truncated at every step
        ),
        Mistake(
            "the kernel's gradient is not accumulated over time: every step uses the same "
            "kernel and bias, so dkernel and dbias are the SUMS of the steps' gradients; add "
            "each step's, do not overwrite.",
            _step_0_only,
        ),
        Mistake(
            "the backward loop skips step 0: the first step is left out, and it is "
            "the one that gives the first input's gradient and dh0.",
            _skips_step_0,
        ),
        Mistake(TANH_AT_Z, _right("rnn_backward", tanh_grad="z"),
                variants=(_right("rnn_backward", tanh_grad="none"),)),
        Mistake(BIAS_AVERAGED, after=_averaged(3)),
    ),
)


# --- truncated_rnn_backward: truncated BPTT --------------------------------------------------

#: T % chunk: 1 and 0; B, D, H all different (audit, issue 18: B = D = 2 in the first trial)
TRUNC_DESIGNS = (dict(B=2, T=7, D=4, H=3, chunk=3), dict(B=1, T=6, D=3, H=2, chunk=3))


def _trunc_oracle(case: SequenceTrial) -> Grads:
    return tf_rnn_grads(case["inputs"], case["h0"], case["kernel"], case["bias"],
                        case["doutputs"], chunk=case["chunk"])[2:]


def _trunc_ref(case: SequenceTrial) -> Grads:
    return bwd.basic_rnn_backward(case["inputs"], case["h0"], case["kernel"], case["bias"],
                                  case["doutputs"], chunk=case["chunk"])[2:]


def _chunk_bounds(case: Trial) -> list[tuple[int, int]]:
    T, size = case["T"], case["chunk"]
    return [(a, min(a + size, T)) for a in range(0, T, size)]


def _only_chunks(keep: Callable[[list[tuple[int, int]]], Sequence[tuple[int, int]]],
                 ) -> Callable[[Trial], Trial]:
    """The right answer with the upstream gradient of every chunk but those ``keep(bounds)``
    picks set to 0: the gradient does not cross a chunk's start, so that is the sum of the kept
    chunks' gradients (raises when it keeps none)."""
    def perturb(case: Trial) -> Trial:
        kept = keep(_chunk_bounds(case))
        if not kept:
            raise ValueError("no such chunk")
        doutputs = np.zeros_like(case["doutputs"])
        for a, b in kept:
            doutputs[:, a:b] = case["doutputs"][:, a:b]
        return {**case, "doutputs": doutputs}
    return perturb


def _whole_chunks(bounds: Sequence[tuple[int, int]]) -> Sequence[tuple[int, int]]:
    """The chunks but a last, shorter one (none when T is a multiple of chunk)."""
    (a, b), (y, z) = bounds[0], bounds[-1]
    return bounds[:-1] if z - y < b - a else []


def _assumed_whole_chunks(case: Trial, got: Raised) -> bool:
    """Whether ``got`` is NumPy's error for cutting T steps into T // chunk equal pieces (a
    split or reshape) where T is not a multiple of chunk."""
    return bool(case["T"] % case["chunk"]) and got.kind == "ValueError" and (
        "equal division" in got.message or "reshape" in got.message)


def _each_chunk_from(start: str) -> Callable[[Trial], list[np.ndarray | int]]:
    """Every chunk run from ``start`` (``"h0"`` or ``"zeros"``) instead of the carried state:
    the sum of the right answers of the chunks alone."""
    def model(case: Trial) -> list[np.ndarray | int]:
        h = case["h0"] if start == "h0" else np.zeros_like(case["h0"])
        pieces = [_right("truncated_rnn_backward", inputs=case["inputs"][:, a:b], h0=h,
                         doutputs=case["doutputs"][:, a:b], T=b - a)(case)
                  for a, b in _chunk_bounds(case)]
        return [sum(np.asarray(p[k]) for p in pieces) for k in (0, 1)]
    return model


truncated_rnn_backward = Exercise[SequenceTrial](
    name="truncated_rnn_backward",
    probes=STEP_PROBES,
    relative_error=True,  # a gradient: a failure says its relative error
    task="(dkernel (D + H, H), dbias (H,)), the two arrays TensorFlow returns for the "
         "chunked run",
    make_case=_rnn_case,
    designs=TRUNC_DESIGNS,
    call=lambda fn, c: fn(c["inputs"], c["h0"], c["kernel"], c["bias"], c["doutputs"],
                          c["chunk"]),
    oracle=_trunc_oracle,
    reference=_trunc_ref,
    parts=("dkernel", "dbias"),
    mistakes=(
        Mistake(
            "the gradient is not truncated: the state that enters a chunk is a constant "
            "(tf.stop_gradient), so dh must be zero when the backward pass crosses the start of "
            "a chunk.",
            perturb=lambda c: {**c, "chunk": c["T"]},  # one chunk: no truncation
        ),
        Mistake(
            "the state is reset at every chunk: truncation stops the gradient, not the state; "
            "the forward pass carries h from one chunk into the next.",
            _each_chunk_from("h0"),
            variants=(_each_chunk_from("zeros"),),
        ),
        Mistake(
            "only one chunk's gradient is kept: the answer is the sum of every chunk's dkernel "
            "and dbias; add them up.",
            _right_on_changed("truncated_rnn_backward", _only_chunks(lambda b: b[-1:])),
            variants=(_right_on_changed("truncated_rnn_backward",
                                        _only_chunks(lambda b: b[:1])),),
        ),
        Mistake(
            "the last, shorter chunk is left out: when T is not a multiple of chunk, the final "
            "chunk has T % chunk steps and its gradient counts too.",
            perturb=_only_chunks(_whole_chunks),
            raises=_assumed_whole_chunks,
        ),
    ),
)


# --- lstm_step_backward: one BasicLSTMCell step backward -------------------------------------

#: B, D, H all different (audit, issue 18: B = H = 2 in the first trial)
LSTM_DESIGNS = (dict(B=2, D=3, H=4, forget_bias=0.5), dict(B=1, D=2, H=3, forget_bias=-1.0))
# forget_bias never 1.0 (a hard-coded 1.0 must fail) nor 0 (sigmoid' of f without it must fail)


def _lstm_case(rng: np.random.Generator, B: int, D: int, H: int,
               forget_bias: float) -> LstmStepTrial:
    return {"B": B, "D": D, "H": H, "forget_bias": forget_bias,
            "x": normal(rng, B, D),  # (B, D)
            "c": normal(rng, B, H, scale=1.5),  # (B, H)
            "h": normal(rng, B, H, scale=0.7),  # (B, H)
            "kernel": normal(rng, D + H, 4 * H, scale=0.6),  # (D + H, 4H): gates i, j, f, o
            "bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
            "dc_new": normal(rng, B, H),  # (B, H): dL/dc'
            "dh_new": normal(rng, B, H)}  # (B, H): dL/dh'


def _lstm_oracle(case: LstmStepTrial) -> Grads:
    g = tf_lstm_grads({**case, "m": case["h"], "dm_new": case["dh_new"]}, basic=True)
    return g["dx"], g["dc"], g["dm"], g["dkernel"], g["dbias"]


#: a case's ``f_grad`` (a mistake's changed cell, _changed_tf) as rnnbook.backward's slip
F_SLIPS = {None: None, "without forget_bias": "sigmoid' of f without forget_bias"}


def _lstm_ref(c: LstmStepTrial) -> Grads:
    return bwd.basic_lstm_step_backward(c["x"], c["c"], c["h"], c["kernel"], c["bias"],
                                        c["dc_new"], c["dh_new"], c["forget_bias"],
                                        slip=F_SLIPS[c.get("f_grad")])


def _lstm_with(case: Trial, **change: object) -> Grads:
    """The knob model of lstm_step_backward: the right answer on ``case`` with one argument changed."""
    return _right("lstm_step_backward", **change)(case)


def _blocks_read_as_keras(name: str,
                          parts: Sequence[int]) -> Callable[[Trial], list[np.ndarray]]:
    """Exercise ``name``'s answer by a learner who reads the kernel's gate blocks in Keras'
    order throughout: the right answer of the cell with the kernel's and the bias' 2nd and 3rd
    blocks swapped, its gradients' blocks (``parts``) swapped back."""
    def model(c: Trial) -> list[np.ndarray]:
        swap = {k: reorder_blocks(c[k], TF1_TO_KERAS) for k in ("kernel", "bias")}
        return _blocks_swapped(parts)(c, _right(name, **swap)(c))
    return model


def _with_forget_gradient(case: Trial, right: list[np.ndarray]) -> list[np.ndarray]:
    """The right answer and a sixth part: the gradient a variable forget_bias would get (the
    f block of dbias, (H,))."""
    H = case["H"]
    return [*right, np.asarray(right[4])[2 * H: 3 * H]]


def _no_c_from_h(c: LstmStepTrial) -> Grads:
    """dc' without the path from h': the right answer with dc' lowered by that path's share,
    dh' * sigmoid(o) * tanh'(c'), found from the right answers (its dc is dc' * f: with
    dc' = 1 and dh' = 0 it is f; with dc' = 0 it is the path's share times f)."""
    zero, one = np.zeros_like(c["dc_new"]), np.ones_like(c["dc_new"])
    f = np.asarray(_right("lstm_step_backward", dc_new=one, dh_new=zero)(c)[1], np.float64)
    through_h = np.asarray(_right("lstm_step_backward", dc_new=zero)(c)[1]) / f
    return _right("lstm_step_backward", dc_new=c["dc_new"] - through_h)(c)


KERAS_ORDER = ("the gradient's gate blocks are in Keras' order i, f, g, o: TF1's "
               "kernel and bias hold i, j, f, o, so your 2nd and 3rd blocks are each "
               "other's.")
F_WITHOUT_BIAS = ("sigmoid' of f is taken without forget_bias: the forget gate's "
                  "sigmoid reads f plus forget_bias, and its derivative is taken at "
                  "that same point.")

lstm_step_backward = Exercise[LstmStepTrial](
    name="lstm_step_backward",
    blocks=("i", "j", "f", "o"),
    probes=(Probe("c", "zero"), Probe("dc_new", "zero"), Probe("dh_new", "row")),
    relative_error=True,  # a gradient: a failure says its relative error
    task="(dx (B, D), dc (B, H), dh (B, H), dkernel (D + H, 4H), dbias (4H,)) for one "
         "BasicLSTMCell step",
    make_case=_lstm_case,
    designs=LSTM_DESIGNS,
    call=lambda fn, c: fn(c["x"], c["c"], c["h"], c["kernel"], c["bias"], c["forget_bias"],
                          c["dc_new"], c["dh_new"]),
    oracle=_lstm_oracle,
    reference=_lstm_ref,
    parts=("dx", "dc", "dh", "dkernel", "dbias"),
    weights=(1, 4, 1, 1, 1),  # a wrong dc earns at most half
    mistakes=(
        Mistake(
            "you returned a gradient for forget_bias: it is a constant the cell adds at run "
            "time, not a variable, so it gets none; return (dx, dc, dh, dkernel, dbias).",
            after=_with_forget_gradient,
        ),
        Mistake(KERAS_ORDER, after=_blocks_swapped((3, 4)),
                variants=(_blocks_read_as_keras("lstm_step_backward", (3, 4)),)),
        Mistake(F_WITHOUT_BIAS, perturb=lambda c: {**c, "f_grad": "without forget_bias"}),
        Mistake(
            "the path from h' back to c' is missing: h' is computed from c', so dc' "
            "also gets what comes back through h', on top of the upstream dc'.",
            _no_c_from_h,
        ),
        forget_bias_hard_coded(
            "the forget_bias argument is ignored: the forward pass adds the forget_bias given, "
            "sigmoid(f + forget_bias), and the backward pass must use the same gate.",
            _lstm_with,
        ),
        forget_bias_left_out(
            "forget_bias is left out: the cell adds it to f at run time (it is not in "
            "the bias variable), in the forward values the backward pass recomputes "
            "too.",
            _lstm_with,
        ),
        Mistake(BIAS_AVERAGED, after=_averaged(4)),
        Mistake(SPLIT_AT_H, after=_split_at_h(0, 2)),
        Mistake(SIDE_BY_SIDE, after=_side_by_side(3), raises=_joins_unequal_rows),
        Mistake(
            "dkernel is transposed: the kernel is (D + H, 4H) and so is its gradient, with "
            "dW's rows on top of dU's.",
            after=_transposed(3),
        ),
    ),
)


# --- split_grad_by_name: a gradient tensor by its name in the graph (API) --------------------

#: the first step (no suffix), the second (the first suffixed name, `split_1`: issue 25 found
#: an answer wrong there at 2/2 when only t = 0 and t = 2 were tried) and the last (no next
#: step); t != T - 1 - t where t > 0 (a reversed index shows); B, D, H all different (issue 18)
BY_NAME_DESIGNS = (dict(B=2, T=3, D=4, H=3, t=0), dict(B=1, T=4, D=2, H=3, t=1),
                   dict(B=3, T=4, D=2, H=4, t=3))
SPLIT_0 = ("step 0 has no suffix: static_rnn gives the first op of a name no suffix, "
           "and its gradient op follows it.")


def _split_0(case: ByNameTrial, right: list[np.ndarray]) -> list[np.ndarray]:
    """``after``: ``split_{t}_grad`` for every t: right for t > 0, no such tensor at t = 0 (the
    error the session raises, which ``names_split_0`` recognises)."""
    if case["t"] == 0:
        raise KeyError("The name 'gradients/rnn/basic_lstm_cell/split_0_grad/concat:0' refers "
                       "to a Tensor which does not exist.")
    return right


def _step(shift: int) -> Callable[[Trial], Trial]:
    """``perturb``: step t + ``shift`` (raises where there is no such step)."""
    def perturb(case: Trial) -> Trial:
        t = case["t"] + shift
        if not 0 <= t < case["T"]:
            raise ValueError("no such step")
        return {**case, "t": t}
    return perturb


def _by_name_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
                  t: int) -> ByNameTrial:
    return {"B": B, "T": T, "D": D, "H": H, "t": t,
            "inputs": normal(rng, B, T, D),  # (B, T, D)
            "kernel": normal(rng, D + H, 4 * H, scale=0.6),  # (D + H, 4H)
            "bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
            "doutputs": normal(rng, B, T, H)}  # (B, T, H): the loss is sum(outputs * doutputs)


def _build_lstm_graph(B: int, T: int, D: int, H: int, split_grads: bool = False) -> Any:
    """A ``static_rnn`` BasicLSTMCell graph over the placeholders ``x`` (B, T, D) and
    ``doutputs`` (B, T, H), with the loss ``loss`` and ``tf.compat.v1.gradients`` of it; from
    :data:`PREBUILT` where the grader's zygote built it (the same graph, op for op).
    ``split_grads``: the oracle's graph, with the gradient of the loss with respect to each
    Split output added after (scope ``gradients_1``), in the collection :data:`SPLIT_GRADS`."""
    if (B, T, D, H, split_grads) in PREBUILT:
        return graph_from_bytes(PREBUILT[B, T, D, H, split_grads])
    tf = tensorflow()
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [B, T, D], name="x")  # (B, T, D)
        upstream = v1.placeholder(tf.float32, [B, T, H], name="doutputs")  # (B, T, H)
        cell = v1.nn.rnn_cell.BasicLSTMCell(H)
        outputs, _ = v1.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
        loss = tf.reduce_sum(tf.stack(outputs, axis=1) * upstream, name="loss")
        v1.gradients(loss, cell.variables)  # the gradient ops a training step would build
        if split_grads:
            _add_split_grads(graph)
    return graph


def _add_split_grads(graph: Any) -> tuple[Any, ...]:
    """Add to ``graph`` (:func:`_build_lstm_graph`'s) the gradient of its loss with respect to
    each Split output, step after step (4 per step: i, j, f, o), in :data:`SPLIT_GRADS`."""
    v1 = tensorflow().compat.v1
    splits = [op for op in graph.get_operations() if op.type == "Split"]  # one per step
    with graph.as_default():
        grads = v1.gradients(graph.get_tensor_by_name("loss:0"),
                             [out for op in splits for out in op.outputs])
        for grad in grads:
            v1.add_to_collection(SPLIT_GRADS, grad)
    return tuple(grads)


#: the graph collection of the oracle's gradients, one per Split output (:func:`_add_split_grads`)
SPLIT_GRADS = "rnnbook_split_grads"
#: ``{(B, T, D, H, split_grads): MetaGraphDef bytes}``: split_grad_by_name's graphs (one per
#: design) built in another process, for the grading children (``split_grads`` False) and for
#: the oracle (True: with its gradients of the Split outputs). The grader's TensorFlow zygote
#: fills it with :func:`prebuild`'s result before it forks (as Chapters 4, 6 and 7 do), so each
#: grading child, and the oracle, import the three graphs (0.1 s) instead of unrolling and
#: differentiating them (about 1 s, and 0.9 s more for the oracle's gradients); empty
#: elsewhere (a notebook builds).
PREBUILT: dict[tuple[int, int, int, int, bool], bytes] = {}


def prebuild() -> dict[tuple[int, int, int, int, bool], bytes]:
    """``{(B, T, D, H, split_grads): bytes}``: the graphs of each of :data:`BY_NAME_DESIGNS`,
    serialised: the children's and the oracle's."""
    keys = {(d["B"], d["T"], d["D"], d["H"], oracle) for d in BY_NAME_DESIGNS
            for oracle in (False, True)}
    return {key: graph_bytes(_build_lstm_graph(*key)) for key in sorted(keys)}


def _handles(graph: Any) -> tuple[Any, ...]:
    """``(session, variables, x, doutputs, split_ops, loss)`` of :func:`_build_lstm_graph`'s
    ``graph``, in a session of its own."""
    splits = [op for op in graph.get_operations()
              if op.type == "Split" and not op.name.startswith("gradients")]  # one per step
    return (quick_session(graph), tuple(graph.get_collection("variables")),
            graph.get_tensor_by_name("x:0"), graph.get_tensor_by_name("doutputs:0"),
            tuple(splits), graph.get_tensor_by_name("loss:0"))


@functools.cache
def _lstm_graph(B: int, T: int, D: int, H: int) -> Any:
    """:func:`_build_lstm_graph`'s graph with its session, built (or imported) once per shape;
    returns ``(session, variables, x, doutputs, split_ops, loss)``."""
    return _handles(_build_lstm_graph(B, T, D, H))


@functools.cache
def _oracle_graph(B: int, T: int, D: int, H: int) -> Any:
    """The oracle's: :func:`_lstm_graph`'s handles and the gradients of the loss with respect
    to the Split outputs. The zygote's prebuilt graph with them where there is one; else
    they are added to :func:`_lstm_graph`'s graph the first time the oracle asks, so that a
    grading child, which never runs the oracle, does not build them."""
    if (B, T, D, H, True) in PREBUILT:
        graph = _build_lstm_graph(B, T, D, H, split_grads=True)
        return *_handles(graph), tuple(graph.get_collection(SPLIT_GRADS))
    handles = _lstm_graph(B, T, D, H)
    return *handles, _add_split_grads(handles[-1].graph)


def _by_name_session(case: ByNameTrial, handles: tuple[Any, ...] | None = None
                     ) -> tuple[Any, dict[object, np.ndarray]]:
    """The session of ``handles`` (by default :func:`_lstm_graph`'s for the case's shape) with
    the trial's weights loaded, and the feed of its inputs and upstream gradient."""
    if handles is None:
        handles = _lstm_graph(case["B"], case["T"], case["D"], case["H"])
    session, variables, x, upstream = handles[:4]
    load_weights(session, variables, {"kernel": case["kernel"], "bias": case["bias"]})
    return session, {x: case["inputs"], upstream: case["doutputs"]}


def _by_name_call(fn: Callable[..., Any], case: ByNameTrial) -> Any:
    session, feed = _by_name_session(case)
    return _fetched(fn, session, (feed, case["t"]), ("di", "dj", "df", "do"), "the gradients")


def _by_name_oracle(case: ByNameTrial) -> Grads:
    """The gradient of the loss with respect to step t's four Split outputs, taken by
    ``tf.compat.v1.gradients`` on the Split op itself (found by type, not by name)."""
    handles = _oracle_graph(case["B"], case["T"], case["D"], case["H"])
    session, feed = _by_name_session(case, handles)
    t = case["t"]
    return tuple(session.run(list(handles[-1][4 * t: 4 * t + 4]), feed))


def _by_name_ref(c: ByNameTrial) -> Grads:
    B, H = c["B"], c["H"]
    dz = bwd.basic_lstm_backward(c["inputs"], np.zeros((B, H)), np.zeros((B, H)), c["kernel"],
                                 c["bias"], c["doutputs"])["dz"][:, c["t"]]
    return tuple(np.split(dz, 4, axis=1))


def _forward_split(case: ByNameTrial) -> Grads:
    """Step t's Split op's outputs (the forward pre-activations), from the real graph."""
    *_, splits, _ = _lstm_graph(case["B"], case["T"], case["D"], case["H"])
    session, feed = _by_name_session(case)
    return tuple(session.run(list(splits[case["t"]].outputs), feed))


split_grad_by_name = Exercise[ByNameTrial](
    name="split_grad_by_name",
    relative_error=True,  # a gradient: a failure says its relative error
    task="(di, dj, df, do), each (B, H): the gradient of the graph's loss with respect to step "
         "t's pre-activations, fetched by name from the session",
    make_case=_by_name_case,
    designs=BY_NAME_DESIGNS,
    call=_by_name_call,
    oracle=_by_name_oracle,
    reference=_by_name_ref,
    parts=("di", "dj", "df", "do"),
    by_hand=False,
    mistakes=(
        Mistake(
            "the blocks are in Keras' order i, f, g, o: split_grad/concat joins the gradients "
            "of the Split's outputs in TF1's order, so its four blocks are di, dj, df, do.",
            after=lambda c, g: [g[0], g[2], g[1], g[3]],
        ),
        Mistake(
            "you fetched the next step's gradient: your values are one step late.",
            perturb=_step(1),
        ),
        Mistake(
            "you fetched the previous step's gradient: your values are one step "
            "early.",
            perturb=_step(-1),
        ),
        Mistake(SPLIT_0, after=_split_0, raises=names_split_0),
        Mistake(
            "you fetched the forward pre-activations (the Split op's outputs), not "
            "their gradient: the gradient of a Split has an op of its own, under "
            "gradients/.",
            _forward_split,
        ),
        not_from_api(
            f"the gradients {NOT_FETCHED}: the exercise is to read the gradient tensor of "
            "step t's Split from the session by its name, and these numbers are not what it "
            "returned (a backward pass recomputed from the weights).", NOT_FETCHED),
    ),
)


# --- keras_grads_to_tf1: Keras 3's gradients in TF1's layout (API) ---------------------------

#: B, D, H all different (audit, issue 18: B = H = 2 in the first trial); forget_bias 1.0 once
KERAS_DESIGNS = (dict(B=2, D=3, H=4, forget_bias=0.5), dict(B=1, D=2, H=3, forget_bias=1.0))


def _keras_case(rng: np.random.Generator, B: int, D: int, H: int, forget_bias: float) -> Case:
    """A TF1 BasicLSTMCell's weights, and the same cell as Keras 3 weights (blocks i, f, g, o,
    forget_bias folded into the f block of the bias): the data the check loads."""
    case: Case = {"B": B, "D": D, "H": H, "forget_bias": forget_bias,
            "x": normal(rng, B, D), "c": normal(rng, B, H, scale=1.5),
            "h": normal(rng, B, H, scale=0.7),
            "tf1_kernel": normal(rng, D + H, 4 * H, scale=0.6),  # (D + H, 4H), i, j, f, o
            "tf1_bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
            "dh_new": normal(rng, B, H)}  # (B, H): dL/dh' (the cell's output)
    kernel, recurrent_kernel, bias = tf1_to_keras_weights(case["tf1_kernel"], case["tf1_bias"],
                                                          forget_bias, D)
    case.update(kernel=kernel, recurrent_kernel=recurrent_kernel, bias=bias)
    return case


@functools.cache
def _keras_cell(D: int, H: int) -> Any:
    keras = keras3()
    cell = keras.layers.LSTMCell(H)
    cell.build((None, D))
    return cell


def _keras_call(fn: Callable[..., Any], case: Case) -> Any:
    tf = tensorflow()
    cell = _keras_cell(case["D"], case["H"])
    cell.set_weights([case["kernel"], case["recurrent_kernel"], case["bias"]])
    state = tf.compat.v1.nn.rnn_cell.LSTMStateTuple(case["c"], case["h"])
    result, part = api_answer(tf.GradientTape, "gradient",
                              lambda: fn(cell, case["x"], state, case["dh_new"]),
                              ("dkernel", "dbias"))
    if part is not None:
        raise ValueError(f"the gradients {NOT_TAPED}: {part} holds numbers no "
                         "GradientTape returned, so it was recomputed by hand")
    return result


#: keras_grads_to_tf1's gradients must come from the tape (issue 35: a NumPy backward pass earned full marks)
NOT_TAPED = "were not taken by tf.GradientTape"


def _keras_oracle(case: Case) -> tuple[np.ndarray, np.ndarray]:
    g = tf_lstm_grads({"x": case["x"], "c": case["c"], "m": case["h"], "kernel":
                       case["tf1_kernel"], "bias": case["tf1_bias"],
                       "forget_bias": case["forget_bias"], "dc_new": np.zeros_like(case["c"]),
                       "dm_new": case["dh_new"]}, basic=True)
    return g["dkernel"], g["dbias"]


def _keras_ref(c: Case) -> tuple[np.ndarray, np.ndarray]:
    g = bwd.basic_lstm_step_backward(c["x"], c["c"], c["h"], c["tf1_kernel"], c["tf1_bias"],
                                     np.zeros_like(c["c"]), c["dh_new"], c["forget_bias"])
    return g[3], g[4]


def _recurrent_on_top(case: Case, right: list[np.ndarray]) -> list[np.ndarray]:
    """``after``: the kernel's gradient with the rows of U (the last H) on top of W's."""
    dkernel = np.asarray(right[0])
    return [np.concatenate([dkernel[case["D"]:], dkernel[:case["D"]]]), right[1]]


keras_grads_to_tf1 = Exercise(
    name="keras_grads_to_tf1",
    blocks=("i", "j", "f", "o"),
    relative_error=True,  # a gradient: a failure says its relative error
    task="(dkernel (D + H, 4H), dbias (4H,)): two arrays with the shapes of the TF1 "
         "BasicLSTMCell's kernel and bias",
    make_case=_keras_case,
    designs=KERAS_DESIGNS,
    call=_keras_call,
    oracle=_keras_oracle,
    reference=_keras_ref,
    parts=("dkernel", "dbias"),
    by_hand=False,
    mistakes=(
        Mistake(
            "the gate blocks are still in Keras' order i, f, g, o: TF1's kernel holds "
            "i, j, f, o, so your 2nd and 3rd column blocks are each other's, in both "
            "gradients.",
            after=_blocks_swapped((0, 1)),
        ),
        Mistake(
            "the recurrent kernel's gradient is stacked on top: TF1's kernel is [W; U] for "
            "[x, h], so the gradient of Keras' kernel (rows that multiply x) goes first.",
            after=_recurrent_on_top,
        ),
        Mistake(
            "the state went into the Keras cell as (c, h): Keras 3 wants [h, c], h first, and "
            "the TF1 state is LSTMStateTuple(c, h), so pass [state.h, state.c].",
            perturb=lambda c: {**c, "c": c["h"], "h": c["c"]},
        ),
        not_from_api(
            f"the gradients {NOT_TAPED}: the exercise is to take them from the Keras cell "
            "with the tape, and these numbers are not what it returned (a backward pass "
            "by hand).", NOT_TAPED),
    ),
)


# --- lstm_cell_backward: LSTMCell backward: peepholes, cell_clip, projection -----------------

#: forget_bias 1.0 once; cell_clip never 1.0 and different in each trial (audit, issue 18: it
#: was always 1.0, so a hard-coded clip at 1.0 passed every seed); B != P in the third
#: the first trial also has one value of c' that only the given clip clips (below)
CELL_DESIGNS = (dict(B=2, D=3, H=4, P=2, forget_bias=1.0, cell_clip=0.8, between=True),
                dict(B=1, D=2, H=3, P=3, forget_bias=0.5, cell_clip=1.3),
                dict(B=4, D=1, H=2, P=3, forget_bias=-0.5, cell_clip=0.6))
CELL_PARTS = ("dx", "dc", "dm", "dkernel", "dbias", "dw_i_diag", "dw_f_diag", "dw_o_diag",
              "dprojection")


def _cell_case(rng: np.random.Generator, B: int, D: int, H: int, P: int, forget_bias: float,
               cell_clip: float | None, between: bool = False) -> Case:
    case = {"B": B, "D": D, "H": H, "P": P, "forget_bias": forget_bias, "cell_clip": cell_clip,
            "x": normal(rng, B, D),  # (B, D)
            "c": normal(rng, B, H, scale=2.5),  # (B, H): large, so that cell_clip bites
            "m": normal(rng, B, P, scale=0.7),  # (B, P)
            "kernel": normal(rng, D + P, 4 * H, scale=0.6),  # (D + P, 4H), gates i, j, f, o
            "bias": normal(rng, 4 * H, scale=0.5)}  # (4H,)
    for name in ("w_i_diag", "w_f_diag", "w_o_diag"):
        case[name] = normal(rng, H, scale=0.7)  # (H,)
    case["projection"] = normal(rng, H, P, scale=0.8)  # (H, P)
    case["dc_new"] = normal(rng, B, H)  # (B, H): dL/dc' (c' after the clip)
    case["dm_new"] = normal(rng, B, P)  # (B, P): dL/dm' (m' after the projection)
    if between:
        _clip_between(case)
    return case


def _clip_between(case: Case) -> None:
    """Make c'[0, 0] = 0.9 before the clip, between cell_clip (< 0.9) and 1.0, on every seed:
    x and m of row 0 are 0 (the gates there are their biases), c[0, 0] = 0.6 and the biases
    of unit 0 give f = sigmoid(0) = 0.5 and i = sigmoid(1), so c' = 0.5 * 0.6 + i * tanh(j) =
    0.9. There a clip hard-coded at 1.0 changes c, dw_i_diag and dw_f_diag too (else, on some
    seeds, those parts were right: the same wrong code got 0 or 3 of 9 parts)."""
    H, c0 = case["H"], 0.6
    assert case["cell_clip"] < 0.9, "the design's cell_clip must clip 0.9"
    case["x"][0] = 0.0
    case["m"][0] = 0.0
    case["c"][0, 0] = c0
    bias = case["bias"]  # gates i, j, f, o, H each
    bias[0] = 1.0 - case["w_i_diag"][0] * c0  # i = sigmoid(1)
    bias[H] = np.arctanh((0.9 - 0.5 * c0) * (1.0 + np.exp(-1.0)))  # i * tanh(j) = 0.6
    bias[2 * H] = -case["forget_bias"] - case["w_f_diag"][0] * c0  # f = sigmoid(0)


#: the learner's ``weights`` keys, as lstm_cell_step names them (the variables' name suffixes);
#: the case keeps the projection as ``projection``, as _weight_key names its variable
WEIGHTS = {"kernel": "kernel", "bias": "bias", "w_i_diag": "w_i_diag", "w_f_diag": "w_f_diag",
           "w_o_diag": "w_o_diag", "projection/kernel": "projection"}


def _cell_call(fn: Callable[..., Any], case: Case) -> Any:
    weights = {k: case[v] for k, v in WEIGHTS.items()}
    return fn(case["x"], case["c"], case["m"], weights, case["forget_bias"], case["cell_clip"],
              case["dc_new"], case["dm_new"])


def _cell_oracle(case: Case) -> Grads:
    g = tf_lstm_grads(case)
    return tuple(g[k] for k in CELL_PARTS)


#: a case's ``clip_grad`` (a mistake's changed cell, _changed_tf) as rnnbook.backward's slip
CLIP_SLIPS = {None: None, "pass": "clip not zeroed"}


def _cell_ref(c: Case) -> Grads:
    g = bwd.lstm_cell_step_backward(
        c["x"], c["c"], c["m"], c["kernel"], c["bias"], c["dc_new"], c["dm_new"],
        c["forget_bias"], c["w_i_diag"], c["w_f_diag"], c["w_o_diag"], c["cell_clip"],
        c["projection"], slip=CLIP_SLIPS[c.get("clip_grad")])
    return tuple(g[k] for k in CELL_PARTS)


def _cell_with(case: Trial, **change: object) -> Grads:
    """The knob model of lstm_cell_backward: the right answer on ``case`` with one argument changed."""
    return _right("lstm_cell_backward", **change)(case)


def _plus(*terms: tuple[int, Sequence[np.ndarray]]) -> list[np.ndarray | int]:
    """The sum of right answers (lists of parts) with signs: ``(sign, answer), ...``."""
    return [sum(sign * np.asarray(a[k], np.float64) for sign, a in terms)
            for k in range(len(CELL_PARTS))]


def _clip_zeroes_upstream_only(c: Case) -> list[np.ndarray | int]:
    """Only dc' zeroed where the clip bites, the m' path passed: with R the right answer and
    R0 that of the cell whose clip passes the gradient (both linear in the upstream dc', dm'),
    R0 - R0(dm' = 0) + R(dm' = 0)."""
    no_m = {"dm_new": np.zeros_like(c["dm_new"])}
    return _plus((1, _cell_with(c, clip_grad="pass")),
                 (-1, _cell_with(c, clip_grad="pass", **no_m)), (1, _cell_with(c, **no_m)))


def _gate_rows(c: Case) -> list[np.ndarray]:
    """dz (B, 4H), row by row (_rows), as the gate blocks di, dj, df, do."""
    return np.split(_rows("lstm_cell_backward", 4)(c), 4, axis=1)


def _no_o_peephole(c: Case) -> Grads:
    """dc' without do * w_o_diag: the right answer with dc' lowered by it (do, the o block of
    dz, does not depend on dc')."""
    do = _gate_rows(c)[3]
    return _cell_with(c, dc_new=c["dc_new"] - do * c["w_o_diag"])


def _no_peephole_terms_in_dc(c: Case) -> list[np.ndarray]:
    """dc without the peepholes' terms di * w_i_diag + df * w_f_diag."""
    di, _, df, _ = _gate_rows(c)
    right = list(_right("lstm_cell_backward")(c))
    right[1] = np.asarray(right[1]) - di * c["w_i_diag"] - df * c["w_f_diag"]
    return right


lstm_cell_backward = Exercise(
    name="lstm_cell_backward",
    blocks=("i", "j", "f", "o"),
    probes=(Probe("dc_new", "zero"), Probe("dm_new", "row")),
    relative_error=True,  # a gradient: a failure says its relative error
    task="(dx, dc, dm, dkernel, dbias, dw_i_diag, dw_f_diag, dw_o_diag, dprojection) for one "
         "LSTMCell step with peepholes, cell_clip and num_proj",
    make_case=_cell_case,
    designs=CELL_DESIGNS,
    call=_cell_call,
    oracle=_cell_oracle,
    reference=_cell_ref,
    parts=CELL_PARTS,
    weights=(1, 8, 1, 1, 1, 1, 1, 1, 1),  # a wrong dc earns at most half
    mistakes=(
        Mistake(
            "the clipped region is not zeroed: where cell_clip bites (|c'| > cell_clip before "
            "the clip) tf.clip_by_value passes no gradient, so dL/dc' is 0 there before it "
            "reaches the gates, the peepholes and c.",
            perturb=lambda c: {**c, "clip_grad": "pass"},
        ),
        Mistake(
            "only the upstream dc' is zeroed where the clip bites: m' and the o-peephole use "
            "the CLIPPED c' too, so the whole gradient of the unclipped c' (upstream, from m' "
            "and from o) is 0 there.",
            _clip_zeroes_upstream_only,
        ),
        Mistake(
            "the o-peephole's path into c' is missing: o reads the new, clipped c' "
            "through w_o_diag, so dc' also gets a share from do.",
            _no_o_peephole,
        ),
        Mistake(
            "cell_clip is taken as 1.0: clip c' to [-cell_clip, cell_clip] with the cell_clip "
            "you were given, and zero the gradient where that clip bites.",
            perturb=lambda c: {**c, "cell_clip": 1.0},
        ),
        Mistake(
            "dc misses the peepholes' terms: c feeds i and f through w_i_diag and "
            "w_f_diag, so dc also gets a share from di and from df.",
            _no_peephole_terms_in_dc,
        ),
        Mistake(
            "dprojection is transposed: the projection is (H, P) and so is its "
            "gradient.",
            after=_transposed(8),
        ),
        Mistake(BIAS_AVERAGED, after=_averaged(4)),
        forget_bias_left_out(
            "forget_bias is left out: LSTMCell adds it to f at run time (it is not in "
            "the bias variable), in the forward values the backward pass recomputes "
            "too.",
            _cell_with,
        ),
    ),
)


# --- gradient_check: check a backward pass (centred differences, relative error) -------------

#: D != H; B = 1 once. Trials 1-2: small steps, where a one-sided difference's error (eps / 2
#: times the second derivative) shows and a centred one's (eps^2 / 6 times the third) does not;
#: trial 2's dkernel is mostly smaller than the gradient (there max(|a|, |b|) is not
#: |dkernel|). Trial 3: a large step, where the centred difference itself is well off the
#: exact gradient (an answer that returns the exact gradient, from a backward pass, fails
#: there). Trial 4: a RIGHT dkernel (the exact gradient), so that the check passes: its
#: relative error is tiny.
GRAD_CHECK_DESIGNS = (dict(B=2, D=3, H=2, eps=1e-3, scale=1.0),
                      dict(B=1, D=2, H=3, eps=2e-3, scale=0.05),
                      dict(B=3, D=2, H=3, eps=0.25, scale=1.0),
                      dict(B=2, D=2, H=2, eps=1e-5, scale=1.0, right=True))


def _grad_check_case(rng: np.random.Generator, B: int, D: int, H: int, eps: float,
                     scale: float, right: bool = False) -> Case:
    """One BasicRNNCell step (float64: a centred difference in float32 is mostly rounding) and
    ``dkernel``, the gradient some backward pass returned, to be checked: random, or the
    exact gradient (``right``: by the complex step, :func:`_complex_step_kernel_grad`)."""
    case = _rnn_step_case(rng, B, D, H)
    for k in ("x", "h", "kernel", "bias", "dh_new"):
        case[k] = case[k].astype(np.float64)
    case["eps"] = eps
    dkernel = normal(rng, D + H, H, scale=scale).astype(np.float64)  # (D + H, H)
    case["dkernel"] = _complex_step_kernel_grad(case) if right else dkernel
    return case


#: the complex step's size: far below float64's resolution, and no difference is taken
COMPLEX_STEP = 1e-30


def _complex_step_kernel_grad(case: Case) -> np.ndarray:
    """The exact dL/dkernel (D + H, H) for L = sum(h' * dh_new), h' = tanh([x, h] kernel +
    bias), in float64, without TensorFlow (drawing the trials must not import it: the grader
    draws them) and without a backward pass (none ships with the checks): the derivative of
    L along each entry of the kernel is Im L(kernel + i t e_k) / t, with no difference of
    two losses to lose digits in, so exact to float64's precision (a test holds it to
    TensorFlow's GradientTape, :func:`_tf_kernel_grad`)."""
    xh = np.concatenate([case["x"], case["h"]], axis=1)  # (B, D + H)
    rows, units = case["kernel"].shape  # (D + H, H)
    nudges = np.eye(rows * units).reshape(rows * units, rows, units)  # (N, D + H, H)
    kernels = case["kernel"] + 1j * COMPLEX_STEP * nudges  # (N, D + H, H), complex
    out = np.tanh(xh @ kernels + case["bias"])  # (N, B, H)
    losses = (out * case["dh_new"]).sum(axis=(1, 2))  # (N,)
    return (losses.imag / COMPLEX_STEP).reshape(rows, units)


def _float64_cell(case: Case, copies: int = 1) -> Any:
    """The real ``BasicRNNCell`` in float64 for the case's shapes, ``copies`` cells side by
    side (copies * H units), its variables not yet loaded."""
    tf = tensorflow()
    cell = tf.compat.v1.nn.rnn_cell.BasicRNNCell(copies * case["H"], dtype=tf.float64)
    cell.build(tf.TensorShape([None, case["D"]]))
    return cell


def _tf_kernel_grad(case: Case) -> np.ndarray:
    """TensorFlow's exact dL/dkernel (D + H, H) for L = sum(h' * dh_new), in float64."""
    tf = tensorflow()
    cell = _float64_cell(case)
    cell.variables[0].assign(case["kernel"])
    cell.variables[1].assign(case["bias"])
    with tf.GradientTape() as tape:
        out, _ = cell(tf.constant(case["x"]), tf.constant(case["h"]))
        loss = tf.reduce_sum(out * case["dh_new"])
    return np.asarray(tape.gradient(loss, cell.variables[0]), np.float64)


def _tf_losses(case: Case, kernels: np.ndarray) -> np.ndarray:
    """L = sum(h' * dh_new) (N,) for each of N kernels (N, D + H, H), from ONE call of the
    real cell: N cells side by side, each reading x and its own copy of h (a block-diagonal
    recurrent part: the zeros add exactly 0)."""
    tf = tensorflow()
    N, D, H = len(kernels), case["D"], case["H"]
    big = np.zeros((D + N * H, N * H))  # (D + NH, NH)
    for n, kernel in enumerate(kernels):
        big[:D, n * H:(n + 1) * H] = kernel[:D]
        big[D + n * H:D + (n + 1) * H, n * H:(n + 1) * H] = kernel[D:]
    cell = _float64_cell(case, copies=N)
    cell.variables[0].assign(big)
    cell.variables[1].assign(np.tile(case["bias"], N))
    out, _ = cell(tf.constant(case["x"]), tf.constant(np.tile(case["h"], (1, N))))
    out = np.asarray(out, np.float64).reshape(-1, N, H)  # (B, N, H)
    return (out * case["dh_new"][:, None]).sum(axis=(0, 2))


#: how numeric is taken: the exercise's centred difference, or a mistake's (a changed case)
DIFFERENCES = ("centred", "forward", "exact")


def _differences(case: Case, losses: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The case's numeric gradient (D + H, H) from ``losses(kernels)`` (N kernels, N
    losses): centred, or, for a mistake's changed case (``difference``), one-sided."""
    kernel, eps = case["kernel"], case["eps"]
    steps = eps * np.eye(kernel.size).reshape(-1, *kernel.shape)  # (N, D + H, H)
    N = len(steps)
    if case.get("difference") == "forward":
        found = losses(np.concatenate([kernel + steps, kernel[None]]))  # (N + 1,)
        numeric = (found[:N] - found[N]) / eps
    else:
        found = losses(np.concatenate([kernel + steps, kernel - steps]))  # (2N,)
        numeric = (found[:N] - found[N:]) / (2 * eps)
    return numeric.reshape(kernel.shape)


def _grad_check_oracle(case: Case) -> tuple[np.ndarray, float]:
    """The centred differences of TensorFlow's real cell (float64) at the given eps, and
    their relative error against the given dkernel. A mistake's case may ask for one-sided
    differences or the exact gradient (TensorFlow's) instead."""
    if case.get("difference") == "exact":
        numeric = _tf_kernel_grad(case)
    else:
        numeric = _differences(case, functools.partial(_tf_losses, case))
    return numeric, relative_error(numeric, case["dkernel"])


def _grad_check_ref(case: Case) -> tuple[np.ndarray, float]:
    if case.get("difference") == "exact":
        numeric = np.asarray(_rnn_step_ref(case)[2], np.float64)
    else:
        def losses(kernels):
            return np.array([np.sum(ref.basic_rnn_step(case["x"], case["h"], k, case["bias"])
                                    * case["dh_new"]) for k in kernels])

        numeric = _differences(case, losses)
    return numeric, relative_error(numeric, case["dkernel"])


def _numeric_doubled(case: Case, right: list[np.ndarray]) -> list[object]:
    numeric = 2 * np.asarray(right[0], np.float64)
    return [numeric, relative_error(numeric, case["dkernel"])]


gradient_check = Exercise(
    name="gradient_check",
    task="(numeric, relative_error): an array with the kernel's shape (D + H, H) and a number",
    make_case=_grad_check_case,
    designs=GRAD_CHECK_DESIGNS,
    call=lambda fn, c: fn(c["x"], c["h"], c["kernel"], c["bias"], c["dh_new"], c["dkernel"],
                          c["eps"]),
    oracle=_grad_check_oracle,
    reference=_grad_check_ref,
    # one answer, not two parts: the relative error of a wrong numeric gradient is right or
    # wrong by a hair, as the seed falls (the same wrong code would earn 0 or half)
    relative_error=True,
    mistakes=(
        Mistake(
            "the difference is one-sided: it compares the loss at the nudged kernel with the "
            "loss at the kernel itself, and is off by eps / 2 times the second derivative; a "
            "centred difference, nudged both ways, is off by eps^2 / 6 times the third.",
            perturb=lambda c: {**c, "difference": "forward"},
        ),
        Mistake(
            "numeric is the exact gradient (as a backward pass computes it), not a difference "
            "of the loss: with a large eps the centred difference is off the exact gradient, "
            "and a check that reuses a backward pass cannot catch that pass's mistakes.",
            perturb=lambda c: {**c, "difference": "exact"},
        ),
        Mistake(
            "the centred difference is divided by eps: the two points are 2 eps apart, so "
            "divide by 2 eps.",
            after=_numeric_doubled,
        ),
        Mistake(
            "the relative error divides by |a| + |b|: this exercise's relative error is "
            "|a - b| / max(|a|, |b|), the largest over the entries.",
            after=lambda c, r: [r[0], float(np.max(np.abs(np.asarray(r[0]) - c["dkernel"])
                                                   / (np.abs(r[0]) + np.abs(c["dkernel"]))))],
        ),
        Mistake(
            "the relative error is averaged over the entries: report the largest, the entry "
            "that is furthest off.",
            after=lambda c, r: [r[0], float(np.mean(
                np.abs(np.asarray(r[0]) - c["dkernel"])
                / np.maximum(np.abs(r[0]), np.abs(c["dkernel"]))))],
        ),
        Mistake(
            "the relative error divides by |dkernel| alone: divide by max(|a|, |b|), so that "
            "neither gradient is taken as the right one.",
            after=lambda c, r: [r[0], float(np.max(np.abs(np.asarray(r[0]) - c["dkernel"])
                                                   / np.abs(c["dkernel"])))],
        ),
    ),
)


CHAPTER = Chapter(5, "05-gradients-by-hand", [
    clip_global_norm, rnn_step_backward, rnn_backward, truncated_rnn_backward,
    lstm_step_backward, split_grad_by_name, keras_grads_to_tf1, lstm_cell_backward,
    gradient_check,
])
check = CHAPTER.check
