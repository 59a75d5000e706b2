"""Chapter 4 (stateful batching): exercises and their checks.

Notation (book/notation.md): ``L`` layers, ``B`` batch, ``T`` time, ``D`` input depth, ``H``
num_units. A *packed* state is one array ``(L, 2, B, H)``: ``state[l, 0]`` is layer ``l``'s c,
``state[l, 1]`` its h, the layout of the chapter's ``[num_layers, 2, batch, units]`` placeholder.

``pack_state``, ``unpack_state``, ``reset_ended``, ``stateful_batches`` and ``stacked_step`` are
by hand (NumPy); the other three are API exercises: the check builds the real object with the
trial's random weights and hands it to the learner's function:

- ``stream_in_chunks``: a TF1 graph (state placeholder, ``MultiRNNCell`` of ``BasicLSTMCell``,
  ``dynamic_rnn``) in a session, behind ``run_chunk(inputs, state)``, which refuses more than
  ``chunk`` steps a call: a run of the whole sequence is impossible, so the state must be
  carried;
- ``drive_stateful``: a Keras 3 ``LSTM(stateful=True)`` to drive across batches, resetting all
  rows (``reset_state()``) or some rows (through ``layer.states``) where sequences start;
- ``serve_at_batch_1``: a stateful layer trained at batch B and a batch-1 twin to serve one of
  its streams.

Graphs and layers are built once per designed shape and cached; each trial loads its weights
(milliseconds). A grading child imports the TF1 graphs that its zygote had built once in a
throwaway process (``PREBUILT``, :func:`prebuild`) instead of building them itself. The
Keras layers are real ``keras.layers.LSTM`` objects whose calls run as one ``tf.function``
(same numbers, about 20 times faster than eager op by op).
The expected answers come from TensorFlow (``oracle``) and, for the tests' 200-seed sweeps, from
the NumPy reference (``rnnbook/reference.py``, touched only inside functions: it does not ship
to learners). Each mistake is the right answer on a changed case or changed after
(``Mistake(perturb=, after=)``), or several right answers put together (one per layer, chunk or
step), so the learner release, which computes them with TensorFlow's oracle, names it too.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, Sequence, TypedDict

import numpy as np

from rnnbook import reference as ref
from rnnbook.checks.common import (
    TF1_TO_KERAS,
    LSTMStateTuple,
    api_answer,
    not_from_api,
    reorder_blocks,
)
from rnnbook.diagnose import Probe
from rnnbook.exercise import Chapter, Exercise, Mistake, normal, right_answer
from rnnbook.oracles import (
    QUICK_LAYER,
    graph_bytes,
    graph_from_bytes,
    keras3,
    keras_layer,
    load_weights,
    quick_session,
    run_tf1,
    tensorflow,
)
from rnnbook.plaindata import Case, Raised, to_plain


class StateTrial(TypedDict):
    """pack_state's and unpack_state's trial: a packed state."""

    L: int
    B: int
    H: int
    packed: np.ndarray  # (L, 2, B, H)


class ResetTrial(TypedDict):
    """reset_ended's trial: a packed state and the rows whose sequence ended."""

    L: int
    B: int
    H: int
    state: np.ndarray  # (L, 2, B, H)
    ended: np.ndarray  # (B,) bool


class BatchesTrial(TypedDict):
    """stateful_batches' trial: a series to cut into batches."""

    batch_size: int
    steps: int
    series: np.ndarray  # (B * steps * n + tail,)


# The trials of stacked_step, stream_in_chunks (a stack of L layers: ``kernel{l}`` (D_l + H,
# 4H) and ``bias{l}`` (4H,) for each l, keys no TypedDict can name), drive_stateful and
# serve_at_batch_1 (Keras weights under a prefix: ``kernel``, ``served_kernel``, ...) are
# ``Case``s; their keys and shapes are in their ``make_case``s.

#: a stack's answer: (output or outputs, packed state (L, 2, B, H))
Run = tuple[np.ndarray, np.ndarray]
#: a mask-changing function (``starts`` (n, B) or ``ended`` (B,) to another)
Rows = Callable[[np.ndarray], np.ndarray]


def _flat(packed: np.ndarray) -> list[np.ndarray]:
    """A packed state (L, 2, B, H) as the flat list c_0, h_0, c_1, ... that ``run_tf1`` packs
    into the cell's own state structure with ``tf.nest`` (so the oracle does no unpacking)."""
    return list(packed.reshape(-1, *packed.shape[2:]))


def _tf_pack(final: Any) -> np.ndarray:
    """TensorFlow stacks a tuple of (c, h) per layer into one (L, 2, B, H) array."""
    tf = tensorflow()
    return tf.stack([tf.stack([c, h]) for c, h in final]).numpy()


def _right(name: str, case: Case) -> Any:
    """Exercise ``name``'s right answer on ``case`` as plain data: the reference, or
    TensorFlow's oracle in the learner release (:func:`rnnbook.exercise.right_answer`), for
    mistake models that need it on several changed cases (one per layer, chunk or step)."""
    return to_plain(right_answer(CHAPTER[name])(case))


def _h_c_swapped(packed: np.ndarray) -> np.ndarray:
    """A packed state (L, 2, B, H) with each layer's c and h the other way round."""
    return np.asarray(packed)[:, ::-1]


def _tf1_weights(kernels: Sequence[np.ndarray],
                 biases: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Variable-name suffixes of a MultiRNNCell of BasicLSTMCells -> the trial's arrays."""
    weights = {f"cell_{k}/basic_lstm_cell/kernel": w for k, w in enumerate(kernels)}
    weights.update({f"cell_{k}/basic_lstm_cell/bias": b for k, b in enumerate(biases)})
    return weights


def _stack_case(rng: np.random.Generator, case: Case) -> Case:
    """The trial's L BasicLSTMCell layers: kernel{l} (D_l + H, 4H), D_0 = D then H; bias{l}."""
    D, H = case["D"], case["H"]
    for k in range(case["L"]):
        case[f"kernel{k}"] = normal(rng, (D if k == 0 else H) + H, 4 * H, scale=0.5)
        case[f"bias{k}"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
    return case


def _layers(case: Case) -> tuple[list[np.ndarray], list[np.ndarray]]:
    return ([case[f"kernel{k}"] for k in range(case["L"])],
            [case[f"bias{k}"] for k in range(case["L"])])


def _steps(case: Case, **options: float) -> list[Callable[..., object]]:
    """The reference BasicLSTMCell of every layer (``options`` turn one knob in all of them)."""
    return [ref.lstm_cell(k, b, **options) for k, b in zip(*_layers(case), strict=True)]


# --- pack_state: pack the state -------------------------------------------------------------------

#: (L, B): one layer and B = 1, several layers; H is drawn different from B and L
STATE_DESIGNS = ({"L": 1, "B": 1}, {"L": 2, "B": 3}, {"L": 3, "B": 2})


def _state_case(rng: np.random.Generator, L: int, B: int) -> StateTrial:
    H = int(rng.choice([h for h in range(2, 6) if h not in (B, L)]))
    return {"L": L, "B": B, "H": H, "packed": normal(rng, L, 2, B, H)}  # (L, 2, B, H)


def _as_tuple(case: StateTrial) -> tuple[LSTMStateTuple, ...]:
    """The case's state as TF1 returns it: a tuple of LSTMStateTuple(c, h), one per layer."""
    return tuple(LSTMStateTuple(layer[0], layer[1]) for layer in case["packed"])


C_H_PACKED = ("c and h are swapped: LSTMStateTuple is (c, h), so packed[l, 0] is c and "
              "packed[l, 1] is h.")

pack_state = Exercise[StateTrial](
    name="pack_state",
    task="one array of shape (L, 2, B, H): packed[l, 0] = layer l's c, packed[l, 1] = its h",
    make_case=_state_case,
    designs=STATE_DESIGNS,
    call=lambda fn, c: fn(_as_tuple(c)),
    oracle=lambda c: _tf_pack(_as_tuple(c)),
    same_type=True,  # one array: the tuple it was given holds the same values
    reference=lambda c: ref.pack(ref.unpack(c["packed"])),
    mistakes=(
        Mistake(C_H_PACKED, lambda c: c["packed"][:, ::-1]),
        Mistake(
            "the layer axis and the c/h axis are swapped: stack each layer's (c, h) on a new "
            "axis first, then the layers, to get (L, 2, B, H).",
            lambda c: np.swapaxes(c["packed"], 0, 1),
        ),
        Mistake(
            "c and h are concatenated along the units axis (the state_is_tuple=False layout): "
            "stack them on a new axis instead.",
            lambda c: np.stack([np.concatenate([s[0], s[1]], axis=1) for s in c["packed"]]),
            variants=(lambda c: np.stack([np.concatenate([s[1], s[0]], axis=1)
                                          for s in c["packed"]]),),
        ),
    ),
)


# --- unpack_state: unpack the state ---------------------------------------------------------------


def _unpack_oracle(case: StateTrial) -> tuple[LSTMStateTuple, ...]:
    """TensorFlow's ops on the packed state (L, 2, B, H), eagerly: unstacked into
    LSTMStateTuples, checked against a real MultiRNNCell's state structure."""
    tf = tensorflow()
    rc = tf.compat.v1.nn.rnn_cell
    packed = tf.constant(case["packed"])  # (L, 2, B, H)
    state = tuple(rc.LSTMStateTuple(*tf.unstack(layer)) for layer in tf.unstack(packed))
    cell = rc.MultiRNNCell([rc.BasicLSTMCell(case["H"]) for _ in range(case["L"])])
    tf.nest.assert_same_structure(cell.state_size, state)
    return tf.nest.map_structure(lambda t: t.numpy(), state)


unpack_state = Exercise[StateTrial](
    name="unpack_state",
    task="a tuple of L pairs (c, h), each (B, H): the structure a TF1 MultiRNNCell's state has",
    make_case=_state_case,
    designs=STATE_DESIGNS,
    call=lambda fn, c: fn(c["packed"]),
    oracle=_unpack_oracle,
    reference=lambda c: ref.unpack(c["packed"]),
    mistakes=(
        Mistake(
            "c and h are swapped: index 0 on axis 1 is c and index 1 is h, the order of "
            "LSTMStateTuple(c, h).",
            after=lambda _c, right: [pair[::-1] for pair in right],
        ),
        Mistake(
            "each layer's state is one (2, B, H) array: TF1 needs a pair (c, h) of two (B, H) "
            "arrays per layer, like LSTMStateTuple(c, h).",
            lambda c: tuple(c["packed"]),
        ),
        Mistake(
            "the layers are in reverse order: layer 0 (the one that reads the input) comes first.",
            after=lambda _c, right: right[::-1],
        ),
    ),
)


# --- reset_ended: reset only the rows whose sequence ended ----------------------------------------

#: some rows ended (two layouts), every row of a one-row batch, none of them
RESET_DESIGNS = (
    {"L": 2, "B": 3, "ended": "some"},
    {"L": 3, "B": 4, "ended": "late"},  # an ended row after a live one: rows, not a count
    {"L": 1, "B": 1, "ended": "all"},
    {"L": 2, "B": 2, "ended": "none"},
)


def _ended(rng: np.random.Generator, B: int, which: str) -> np.ndarray:
    """A (B,) mask: ``some`` rows (at least one True and one False), ``all`` or ``none``;
    ``late``: some rows, the first live and the last ended (zeroing the first rows, as many as
    ended, is then wrong on every seed)."""
    if which not in ("some", "late"):
        return np.full(B, which == "all")
    ended = np.zeros(B, dtype=bool)
    ended[rng.choice(B, size=int(rng.integers(1, B)), replace=False)] = True
    if which == "late":
        ended[0], ended[-1] = False, True
    return ended


def _reset_case(rng: np.random.Generator, L: int, B: int, ended: str) -> ResetTrial:
    H = int(rng.integers(2, 5))
    return {"L": L, "B": B, "H": H, "state": normal(rng, L, 2, B, H),
            "ended": _ended(rng, B, ended)}


def _reset_oracle(case: ResetTrial) -> np.ndarray:
    """A row whose sequence ended gets the real cell's zero_state; the others keep theirs
    (TensorFlow's ops, eagerly)."""
    tf = tensorflow()
    rc = tf.compat.v1.nn.rnn_cell
    L, B, H = case["L"], case["B"], case["H"]
    cell = rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)])
    zero = tf.stack([tf.stack([s.c, s.h]) for s in cell.zero_state(B, tf.float32)])
    ended = tf.constant(case["ended"])[None, None, :, None]  # (1, 1, B, 1)
    return tf.where(ended, zero, tf.constant(case["state"])).numpy()  # (L, 2, B, H)


def _ended_rows(which: Rows) -> Callable[[ResetTrial], ResetTrial]:
    """perturb=: the case with ``ended`` changed by ``which(ended)``."""
    return lambda case: {**case, "ended": which(np.asarray(case["ended"]))}


def _kept(part: int | None = None, layers: slice | int = slice(1, None),
          ) -> Callable[[ResetTrial, np.ndarray], np.ndarray]:
    """after=: the given state kept in part ``part`` (0: c, 1: h) of every layer, or in
    ``layers`` (both parts), the right answer elsewhere."""
    def after(case: ResetTrial, right: np.ndarray) -> np.ndarray:
        out = np.array(right, copy=True)
        if part is None:
            out[layers] = case["state"][layers]
        else:
            out[:, part] = case["state"][:, part]
        return out

    return after


RESET_ALL = ("every row is reset: only the rows where a sequence ended (or starts) begin from "
             "zeros; the others must keep their state.")
NOT_RESET = ("the state is carried across a sequence boundary: the rows where a sequence ended "
             "(or starts) must begin the next batch from zeros.")
INVERTED = ("the mask is inverted: zero the rows where it is True (their sequence ended or "
            "starts) and keep the others.")
ONLY_H = ("only h is reset: c is the memory that carries the old sequence forward, so zero both "
          "c and h of those rows.")
ONLY_C = "only c is reset: zero h as well, it feeds the next step too."
UNITS_AXIS = ("the mask indexes the units axis (the last one): the rows are axis 2 of "
              "(L, 2, B, H), and the mask picks rows.")


def _units_axis(case: ResetTrial) -> np.ndarray:
    """``state[..., ended] = 0``: zeros units, not rows, when B = H; otherwise NumPy raises the
    IndexError that ``_mask_on_units`` recognises."""
    state = np.array(case["state"], copy=True)
    state[..., case["ended"]] = 0.0
    return state


def _mask_on_units(case: ResetTrial, got: Raised) -> bool:
    """NumPy's error for a (B,) mask on the units axis (axis 3, of length H != B): the
    IndexError of ``state[..., ended]``, or the ValueError of ``np.where(ended, 0, state)``."""
    B, H = case["B"], case["H"]
    shape = "(" + ",".join(map(str, case["state"].shape)) + ")"
    return B != H and (
        got.kind == "IndexError" and "boolean index did not match indexed array along axis "
        f"3; size of axis is {H} " in got.message
        or got.kind == "ValueError" and "could not be broadcast" in got.message
        and f"({B},)" in got.message.replace(" ", "") and shape in got.message.replace(" ", ""))

reset_ended = Exercise[ResetTrial](
    name="reset_ended",
    task="a new packed state (L, 2, B, H) (the given one unchanged): the rows whose sequence "
    "ended set to zero, the others as they were",
    make_case=_reset_case,
    designs=RESET_DESIGNS,
    call=lambda fn, c: fn(c["state"], c["ended"]),
    oracle=_reset_oracle,
    reference=lambda c: ref.reset_rows(c["state"], c["ended"]),
    mistakes=(
        Mistake(RESET_ALL, perturb=_ended_rows(np.ones_like)),
        Mistake(NOT_RESET, perturb=_ended_rows(np.zeros_like)),
        Mistake(INVERTED, perturb=_ended_rows(np.logical_not)),
        Mistake(ONLY_H, after=_kept(part=0)),
        Mistake(ONLY_C, after=_kept(part=1)),
        Mistake(
            "only the first layer is reset: every layer's c and h belong to the ended sequence.",
            after=_kept(),
        ),
        Mistake(UNITS_AXIS, _units_axis, raises=_mask_on_units),
    ),
)


# --- stateful_batches: lay a long series out for stateful batches ---------------------------------

#: (batch_size, steps, n_batches, tail): a tail longer than batch_size (so trimming each row
#: instead of the series shows), no tail, and n_batches != batch_size throughout
BATCH_DESIGNS = (
    {"B": 3, "steps": 4, "n": 2, "tail": "long"},
    {"B": 2, "steps": 3, "n": 4, "tail": "none"},
    {"B": 4, "steps": 2, "n": 3, "tail": "short"},
)


def _batches_case(rng: np.random.Generator, B: int, steps: int, n: int,
                  tail: str) -> BatchesTrial:
    extra = {"none": 0, "short": int(rng.integers(1, B)),
             "long": int(rng.integers(B, B * steps))}[tail]
    return {"batch_size": B, "steps": steps, "series": normal(rng, B * steps * n + extra)}


def row_continuous(series: np.ndarray, batch_size: int, steps: int) -> np.ndarray:
    """The right layout, written the direct way: B rows, each a contiguous stretch of the series."""
    n = len(series) // (batch_size * steps)
    rows = np.asarray(series)[: batch_size * n * steps].reshape(batch_size, n * steps)  # (B, n*S)
    return rows.reshape(batch_size, n, steps).transpose(1, 0, 2)  # (n, B, S)


def keras_continuity_error(batches: np.ndarray, rows: np.ndarray, units: int = 2, seed: int = 0) -> float:
    """Largest difference between (a) a stateful Keras 3 LSTM fed ``batches`` (n, B, S) in order,
    its outputs joined along time, and (b) the same LSTM run in one call over ``rows`` (B, n*S),
    the whole sequences the batch rows should continue. Zero when row i of every batch continues
    row i of the batch before it, through row i of ``rows``."""
    rng = np.random.default_rng(seed)
    weights = [normal(rng, 1, 4 * units), normal(rng, units, 4 * units), normal(rng, 4 * units)]
    batches, rows = np.asarray(batches, np.float32), np.asarray(rows, np.float32)
    layer = keras_layer("LSTM", weights, (rows.shape[0], None, 1), stateful=True,
                        return_sequences=True)
    joined = np.concatenate([layer(batch[:, :, None]) for batch in batches], axis=1)
    layer.reset_state()  # (B, n*S, units) above; the same layer from zeros again, in one call:
    whole = np.asarray(layer(rows[:, :, None]))  # (B, n*S, units)
    return float(np.abs(joined - whole).max())


def _batches_oracle(case: BatchesTrial) -> np.ndarray:
    """The row-continuous layout, confirmed by Keras: a stateful LSTM fed the batches in order gives
    what the same LSTM gives in one call on each of the B consecutive stretches of the series."""
    B, S, series = case["batch_size"], case["steps"], case["series"]
    batches = row_continuous(series, B, S)  # (n, B, S)
    n = len(batches)
    rows = series[: B * n * S].reshape(B, n * S)  # the B consecutive stretches, one per row
    error = keras_continuity_error(batches, rows)
    assert error < 1e-5, f"stateful Keras does not continue the rows ({error})"
    return batches


def _per_row_trim(c: BatchesTrial) -> np.ndarray:
    """Rows of len(series) // B values, each cut to whole batches (other rows start elsewhere)."""
    B, S, series = c["batch_size"], c["steps"], c["series"]
    row = len(series) // B
    n = row // S
    rows = series[: B * row].reshape(B, row)[:, : n * S]
    return rows.reshape(B, n, S).transpose(1, 0, 2)


TAIL_KEPT = ("the tail is not dropped: keep only the first n_batches * batch_size * steps "
             "values of the series, then cut them into rows and batches.")


def _tail_kept(case: BatchesTrial, right: np.ndarray) -> np.ndarray:
    """after=: reshaping the whole series is right without a tail; with one NumPy raises the
    error ``_reshapes_the_tail`` recognises."""
    size = len(case["series"])
    if size == np.asarray(right).size:
        return right
    raise ValueError(f"cannot reshape array of size {size} into shape")


def _reshapes_the_tail(case: BatchesTrial, got: Raised) -> bool:
    """NumPy's ValueError for a reshape of the whole series, tail included."""
    size = len(case["series"])
    return (got.kind == "ValueError" and size % (case["batch_size"] * case["steps"]) != 0
            and f"cannot reshape array of size {size} into shape" in got.message)


stateful_batches = Exercise[BatchesTrial](
    name="stateful_batches",
    task="an array (n_batches, batch_size, steps), n_batches = len(series) // (batch_size * "
    "steps), in which row i of batch k+1 continues row i of batch k",
    make_case=_batches_case,
    designs=BATCH_DESIGNS,
    call=lambda fn, c: fn(c["series"], c["batch_size"], c["steps"]),
    oracle=_batches_oracle,
    reference=lambda c: row_continuous(**c),
    mistakes=(
        Mistake(
            "the batches are laid out contiguously (batch k holds the next batch_size windows in "
            "a row), so row i of batch k+1 does not continue row i of batch k: cut the series "
            "into batch_size long rows first, then cut every row into pieces of `steps`.",
            lambda c: c["series"][: row_continuous(**c).size].reshape(
                -1, c["batch_size"], c["steps"]
            ),
        ),
        Mistake(
            "the axes are (batch_size, n_batches, steps): put the batch index k first, so that "
            "answer[k] is the k-th batch.",
            lambda c: row_continuous(**c).transpose(1, 0, 2),
        ),
        Mistake(TAIL_KEPT, after=_tail_kept, raises=_reshapes_the_tail),
        Mistake(
            "each row is len(series) // batch_size long with its own tail dropped: drop the tail "
            "of the whole series first (keep n_batches * batch_size * steps values), then cut it "
            "into batch_size rows.",
            _per_row_trim,
        ),
    ),
)


# --- stacked_step: one step of a stack of layers, by hand -----------------------------------------

#: several layers only with D == H (an upper layer that reads x instead of the layer below then
#: runs, and is told apart); D != H with one layer; B = 1
STACK_DESIGNS = (
    {"L": 2, "B": 1, "square": True},
    {"L": 3, "B": 4, "square": True},  # L != B (audit, issue 18: L = B = 3 was the only L > 2)
    {"L": 1, "B": 2, "square": False},
)


def _stacked_case(rng: np.random.Generator, L: int, B: int, square: bool) -> Case:
    H = int(rng.integers(2, 5))
    D = H if square else H + int(rng.integers(1, 3))
    case = {"L": L, "B": B, "D": D, "H": H, "x": normal(rng, B, D),  # (B, D)
            "state": normal(rng, L, 2, B, H)}  # (L, 2, B, H)
    return _stack_case(rng, case)


def _stacked_oracle(case: Case) -> Run:
    """One call of TF1's MultiRNNCell of BasicLSTMCells on x, from the given state."""
    rc = tensorflow().compat.v1.nn.rnn_cell
    L, H = case["L"], case["H"]
    output, final = run_tf1(lambda: rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)]),
                            case["x"], _flat(case["state"]), _tf1_weights(*_layers(case)))
    return output, _tf_pack(final)


def _stacked(case: Case) -> Run:
    """The reference stack on one step: ``(output, packed new state)``."""
    out, new = ref.stacked(_steps(case))(case["x"], ref.unpack(case["state"]))
    return out, ref.pack(new)


def _every_layer(case: Case, change: Callable[[np.ndarray, np.ndarray], Run]) -> Case:
    """The case with ``change(kernel, bias) -> (kernel, bias)`` applied to every layer's."""
    new = dict(case)
    for k in range(case["L"]):
        new[f"kernel{k}"], new[f"bias{k}"] = change(case[f"kernel{k}"], case[f"bias{k}"])
    return new


def _no_forget_bias(kernel: np.ndarray, bias: np.ndarray) -> Run:
    """BasicLSTMCell adds forget_bias = 1.0 to f: 1.0 less in the f block (TF1's third) of the
    bias is the cell without it."""
    bias = np.array(bias, copy=True)
    H = len(bias) // 4
    bias[2 * H: 3 * H] -= 1.0
    return kernel, bias


def _layers_read_x(case: Case) -> Run:
    """Every layer reads x (where its kernel fits x: D == H, or one layer): each layer alone,
    the right one-layer step on x from its own state, stacked."""
    outs = [_right("stacked_step", {
        "L": 1, "B": case["B"], "D": case["D"], "H": case["H"], "x": case["x"],
        "state": case["state"][k: k + 1], "kernel0": case[f"kernel{k}"],
        "bias0": case[f"bias{k}"]}) for k in range(case["L"])]
    return outs[-1][0], np.concatenate([new for _, new in outs])


stacked_step = Exercise(
    name="stacked_step",
    probes=(Probe("state", "zero"), Probe("x", "row")),
    task="(output, new_state): the top layer's new h (B, H) and the packed new state "
    "(L, 2, B, H) after one step of every layer",
    make_case=_stacked_case,
    designs=STACK_DESIGNS,
    call=lambda fn, c: fn(c["x"], c["state"], *_layers(c)),
    same_type=True,  # the packed new state, as stream_in_chunks' final state
    oracle=_stacked_oracle,
    reference=_stacked,
    parts=("output", "new_state"),
    mistakes=(
        Mistake(
            "an upper layer reads the input x instead of the layer below: layer l > 0 reads "
            "the new h of layer l - 1.",
            _layers_read_x,
        ),
        Mistake(
            "the state is read as [h, c] (Keras' order): in the packed state, state[l, 0] is c "
            "and state[l, 1] is h, as in LSTMStateTuple(c, h).",
            perturb=lambda c: {**c, "state": _h_c_swapped(c["state"])},
            after=lambda _c, right: [right[0], _h_c_swapped(right[1])],
            variants=(
                lambda c: _right("stacked_step", {**c, "state": _h_c_swapped(c["state"])}),
                lambda c: (lambda right: [right[0], _h_c_swapped(right[1])])(
                    _right("stacked_step", c)),
            ),
        ),
        Mistake(
            "the output is the first layer's h: return the TOP layer's new h.",
            after=lambda _c, right: [right[1][0, 1], right[1]],
        ),
        Mistake(
            "forget_bias is missing: BasicLSTMCell adds forget_bias=1.0 to f at run time, "
            "sigmoid(f + 1.0).",
            perturb=lambda c: _every_layer(c, _no_forget_bias),
        ),
        Mistake(
            "the gate blocks are in Keras' order: TF1's BasicLSTMCell splits [x, h] @ kernel + "
            "bias into i, j, f, o.",
            perturb=lambda c: _every_layer(c, lambda kernel, bias: (
                reorder_blocks(kernel, TF1_TO_KERAS), reorder_blocks(bias, TF1_TO_KERAS))),
        ),
    ),
)


# --- stream_in_chunks: stream a long sequence through a session, chunk by chunk -------------------

#: (L, B, D, H, T, chunk): several layers, T not a multiple of chunk and T a multiple of chunk
#: (a loop of T // chunk + 1 calls then makes an empty one), B = 1, and L, B, D, H all different
#: and none 2 in the second trial (no axis of the packed state (L, 2, B, H) stands in for
#: another) (two trials: each costs a few session runs, and the tests sweep 200 seeds of them)
#: (audit, issue 18: both trials had a tail, and L = B = 3 = chunk)
STREAM_DESIGNS = (
    {"L": 2, "B": 1, "D": 3, "H": 2, "T": 5, "chunk": 2},
    {"L": 3, "B": 4, "D": 1, "H": 5, "T": 6, "chunk": 2},
)


def _stream_case(rng: np.random.Generator, L: int, B: int, D: int, H: int, T: int,
                 chunk: int | None) -> Case:
    case = {"L": L, "B": B, "D": D, "H": H, "T": T, "chunk": chunk,
            "inputs": normal(rng, B, T, D),  # (B, T, D)
            "state": normal(rng, L, 2, B, H, scale=0.5)}  # (L, 2, B, H)
    return _stack_case(rng, case)


class StateGraph:
    """The chapter's TF1 graph for ``L`` layers, in its own session: inputs ``[None, None, D]``,
    a state placeholder ``[L, 2, None, H]`` unstacked into a tuple of ``LSTMStateTuple(c, h)``,
    a ``MultiRNNCell`` of ``BasicLSTMCell`` (one cell per layer) run by ``dynamic_rnn``.

    ``meta``: the same graph as built in another process (:meth:`meta_graph`, bytes), imported
    instead of built: 0.02 s of CPU where building costs 0.11 s (the grader's zygote builds
    the designed shapes once, :func:`prebuild`, and every child imports them)."""

    def __init__(self, L: int, D: int, H: int, meta: bytes | None = None) -> None:
        tf = tensorflow()
        v1, rc = tf.compat.v1, tf.compat.v1.nn.rnn_cell
        self.graph = tf.Graph() if meta is None else graph_from_bytes(meta)
        with self.graph.as_default():
            if meta is None:
                self.inputs = v1.placeholder(tf.float32, [None, None, D], name="inputs")
                self.state = v1.placeholder(tf.float32, [L, 2, None, H], name="state")
                initial = tuple(rc.LSTMStateTuple(self.state[k, 0], self.state[k, 1])
                                for k in range(L))
                cell = rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(L)])
                self.outputs, self.final = v1.nn.dynamic_rnn(cell, self.inputs,
                                                             initial_state=initial)
                self.packed = tf.stack([tf.stack([s.c, s.h]) for s in self.final])
                for tensor in (self.inputs, self.state, self.outputs, self.packed,
                               *(t for s in self.final for t in s)):
                    v1.add_to_collection(HANDLES, tensor)  # what an import finds them by
            else:
                found = v1.get_collection(HANDLES)
                self.inputs, self.state, self.outputs, self.packed = found[:4]
                pairs = zip(found[4::2], found[5::2], strict=True)
                self.final = tuple(rc.LSTMStateTuple(c, h) for c, h in pairs)
            self.variables = v1.global_variables()
        self.session = quick_session(self.graph)
        self.shape = (L, D, H)

    def meta_graph(self) -> bytes:
        """The graph serialised (:func:`~rnnbook.oracles.graph_bytes`), for
        ``StateGraph(meta=...)``."""
        return graph_bytes(self.graph)

    def load(self, case: Case) -> None:
        """Load the trial's kernels and biases into the graph's variables."""
        load_weights(self.session, self.variables, _tf1_weights(*_layers(case)))

    def run(self, inputs: np.ndarray, state: np.ndarray, fetch_packed: bool = False) -> Any:
        final = self.packed if fetch_packed else self.final
        return self.session.run([self.outputs, final], {self.inputs: inputs, self.state: state})


#: the graph collection that names a StateGraph's tensors: inputs, state, outputs, packed,
#: then c and h of each layer
HANDLES = "rnnbook_state_graph"
#: ``{(L, D, H): MetaGraphDef bytes}`` of the designed shapes, built in another process: the
#: grader's TensorFlow zygote fills it with :func:`prebuild`'s result before it forks its
#: children (a build starts TensorFlow's threads, which a fork must not inherit), so each
#: child imports a graph instead of building it; empty elsewhere (a notebook builds)
PREBUILT: dict[tuple[int, int, int], bytes] = {}


def prebuild() -> dict[tuple[int, int, int], bytes]:
    """``{(L, D, H): bytes}``: every designed shape's :class:`StateGraph`, serialised."""
    shapes = {(d["L"], d["D"], d["H"]) for d in STREAM_DESIGNS}
    return {shape: StateGraph(*shape).meta_graph() for shape in sorted(shapes)}


@functools.cache
def state_graph(L: int, D: int, H: int) -> StateGraph:
    """The :class:`StateGraph` for a designed shape, built once (trials load their weights)."""
    return StateGraph(L, D, H, meta=PREBUILT.get((L, D, H)))


def make_run_chunk(case: Case) -> Callable[[np.ndarray, np.ndarray], Any]:
    """``run_chunk(inputs, state) -> (outputs, final_state)``: one ``session.run`` of the trial's
    graph on at most ``chunk`` steps ``(B, t, D)`` from a packed ``state`` ``(L, 2, B, H)``;
    ``final_state`` is what the session returns, a tuple of ``LSTMStateTuple(c, h)``."""
    graph = state_graph(case["L"], case["D"], case["H"])
    graph.load(case)
    L, B, D, H, chunk = (case[k] for k in ("L", "B", "D", "H", "chunk"))

    def run_chunk(inputs, state):
        inputs = np.asarray(inputs, dtype=np.float32)
        if inputs.ndim != 3 or inputs.shape[0] != B or inputs.shape[2] != D:
            raise ValueError(f"run_chunk takes inputs of shape (B, t, D) = ({B}, t, {D}), "
                             f"not {inputs.shape}")
        if not 1 <= inputs.shape[1] <= chunk:
            raise ValueError(f"run_chunk runs 1 to chunk={chunk} time steps per call, not "
                             f"{inputs.shape[1]}: feed the sequence one chunk at a time")
        state = np.asarray(state, dtype=np.float32)
        if state.shape != (L, 2, B, H):
            raise ValueError(f"run_chunk takes a packed state of shape (L, 2, B, H) = "
                             f"({L}, 2, {B}, {H}), not {state.shape}")
        return graph.run(inputs, state)

    return run_chunk


def _stream_oracle(case: Case) -> Run:
    """The same real graph run over the WHOLE sequence in one session.run."""
    graph = state_graph(case["L"], case["D"], case["H"])
    graph.load(case)
    outputs, packed = graph.run(case["inputs"], case["state"], fetch_packed=True)
    return outputs, packed


#: the last case whose right chunked run was computed, and that run: the expected answer and
#: the sweeps' learners' answers start from it (the sweeps judge thousands of answers)
_last_run: list[Any] = [None, None]


def _chunked(case: Case) -> Run:
    """The reference run chunk by chunk: ``(outputs (B, T, H), packed final state)``."""
    if _last_run[0] is not case:
        step = ref.stacked(_steps(case))
        outputs, final = ref.run_in_chunks(step, case["inputs"], ref.unpack(case["state"]),
                                           case["chunk"])
        _last_run[:] = case, (outputs, ref.pack(final))  # the case is kept alive: `is` is sound
    return _last_run[1]


def _chunk_by_chunk(case: Case, first: np.ndarray | None = None,
                    between: Callable[[np.ndarray], np.ndarray] | None = None,
                    swap_final: bool = False) -> Run:
    """Each chunk run alone (the right answer on a case of that chunk only), chunk 0 from
    ``first`` (the given state by default), chunk k from ``between(final)`` of the chunk before
    (that final state by default); ``swap_final``: the final state packed as (h, c)."""
    state = case["state"] if first is None else first
    T, chunk, outputs = case["T"], case["chunk"], []
    for k, a in enumerate(range(0, T, chunk)):
        if k and between is not None:
            state = between(state)
        b = min(a + chunk, T)
        out, state = _right("stream_in_chunks", {**case, "inputs": case["inputs"][:, a:b],
                                                 "T": b - a, "state": state})
        outputs.append(out)
    return np.concatenate(outputs, axis=1), _h_c_swapped(state) if swap_final else state


def _dropped_tail(case: Case) -> Case:
    stop = case["T"] // case["chunk"] * case["chunk"]
    return {**case, "inputs": case["inputs"][:, :stop], "T": stop}


def _empty_chunk(case: Case, right: Run) -> Run:
    """after=: T // chunk + 1 calls are right when chunk does not divide T; else the last call
    gets 0 steps, and run_chunk raises what ``_asks_empty_chunk`` recognises."""
    if case["T"] % case["chunk"] == 0:
        raise ValueError(f"run_chunk runs 1 to chunk={case['chunk']} time steps per call, not 0")
    return right


def _asks_empty_chunk(case: Case, got: Raised) -> bool:
    return case["T"] % case["chunk"] == 0 and "steps per call, not 0" in got.message


TUPLE_FINAL = ("the final state is the session's tuple of LSTMStateTuple(c, h): pack it into "
               "one array (L, 2, B, H), as pack_state does.")
NOT_ONE_ARRAY = "final_state is a tuple or list, not one array (L, 2, B, H)"


def _stream_call(fn: Callable[..., Any], case: Case) -> Any:
    """Run the learner's function with the trial's run_chunk; the final state is part of the
    answer as one packed array (its type too): a tuple or list of per-layer states (what the
    session returns) is refused, though it holds the same numbers."""
    given = types.SimpleNamespace(run_chunk=make_run_chunk(case))  # its calls recorded
    result, unrun = api_answer(
        given, "run_chunk",
        lambda: fn(given.run_chunk, case["inputs"], case["state"], case["chunk"]),
        ("outputs", "final_state"))
    if isinstance(result, (tuple, list)) and len(result) == 2:
        if isinstance(result[1], (tuple, list)):
            raise TypeError(NOT_ONE_ARRAY)
    if unrun is not None:
        raise ValueError(f"the sequence {NOT_STREAMED}: {unrun} holds numbers no call of "
                         "run_chunk returned, so it was computed another way")
    return result


#: stream_in_chunks' answer must come from run_chunk's session (issue 35: a NumPy
#: restatement earned it)
NOT_STREAMED = "was not run through run_chunk"


def _tuple_final(_case: Case, _right: Run) -> None:
    """after=: the answer the call refuses (what a tuple final state gets)."""
    raise TypeError(NOT_ONE_ARRAY)


stream_in_chunks = Exercise(
    name="stream_in_chunks",
    task="(outputs, final_state): the top layer's h at every step (B, T, H) and the packed final "
    "state, one array (L, 2, B, H)",
    make_case=_stream_case,
    designs=STREAM_DESIGNS,
    call=_stream_call,
    oracle=_stream_oracle,
    reference=_chunked,
    by_hand=False,
    same_type=True,  # the packed array, not the session's tuple of LSTMStateTuples
    parts=("outputs", "final_state"),
    mistakes=(
        Mistake(
            "the state is not carried: every chunk after the first must start from the final "
            "state of the chunk before it (what run_chunk returned), not from zeros.",
            lambda c: _chunk_by_chunk(c, between=np.zeros_like),
            variants=(lambda c: _chunk_by_chunk(c, np.zeros_like(c["state"]), np.zeros_like),),
        ),
        Mistake(
            "every chunk starts from the initial state: feed each chunk's final state into the "
            "next call instead of the `state` you were given.",
            lambda c: _chunk_by_chunk(c, between=lambda _s: c["state"]),
        ),
        Mistake(
            "c and h are swapped on the way back in: run_chunk returns LSTMStateTuple(c, h) per "
            "layer and the placeholder wants packed[l, 0] = c, packed[l, 1] = h.",
            lambda c: _chunk_by_chunk(c, between=_h_c_swapped, swap_final=True),
            variants=(lambda c: _chunk_by_chunk(c, between=_h_c_swapped),),
        ),
        Mistake(
            "c and h are swapped in the final state you return: pack each layer as (c, h).",
            after=lambda _c, right: [right[0], _h_c_swapped(right[1])],
        ),
        Mistake(
            "the last, shorter chunk is missing: T is not always a multiple of chunk, so run "
            "the remaining T % chunk steps too.",
            perturb=_dropped_tail,
        ),
        Mistake(
            "there is one chunk too many when chunk divides T: the last call gets 0 steps; "
            "start the chunks at range(0, T, chunk).",
            after=_empty_chunk, raises=_asks_empty_chunk,
        ),
        Mistake(TUPLE_FINAL, after=_tuple_final,
                raises=lambda _c, got: got.kind == "TypeError" and NOT_ONE_ARRAY in got.message),
        not_from_api(
            f"the sequence {NOT_STREAMED}: the exercise is to stream it through the session "
            "you were given, and these numbers are not what its calls returned (a "
            "recomputation by hand).", NOT_STREAMED),
    ),
)


# --- The Keras layers the API exercises hand over ----------------------------------------------


#: calls of one layer that run eagerly before it is compiled: a grading child calls each of its
#: layers a few times (tracing one costs about as much as 10 eager calls); the tests' sweeps
#: call the same cached layer thousands of times
EAGER_CALLS = 12


@functools.cache
def _compiled_lstm_class() -> Any:
    """A ``keras.layers.LSTM`` whose ``__call__`` runs eagerly for its first
    :data:`EAGER_CALLS` calls, then as one ``tf.function`` (traced once per input shape): the
    learner calls a real Keras layer; the check can afford many trials."""
    tf, keras = tensorflow(), keras3()

    class CompiledLSTM(keras.layers.LSTM):  # type: ignore[name-defined]  # keras: a module
        def __call__(self, *args, **kwargs):
            self._eager_calls = getattr(self, "_eager_calls", 0) + 1
            if self._eager_calls <= EAGER_CALLS:
                return super().__call__(*args, **kwargs)
            if getattr(self, "_compiled_call", None) is None:
                self._compiled_call = tf.function(super().__call__, reduce_retracing=True)
            return self._compiled_call(*args, **kwargs)

    return CompiledLSTM


@functools.cache
def stateful_layer(B: int, S: int, D: int, H: int) -> Any:
    """A real Keras 3 ``LSTM(H, stateful=True, return_sequences=True)`` built for batches
    ``(B, S, D)``, cached per shape (a trial sets its weights and its state). Its initial
    weights are zeros: every trial replaces them, and Keras' random and orthogonal
    initialisers cost a grading child 0.04 s of CPU for nothing."""
    layer = _compiled_lstm_class()(H, stateful=True, return_sequences=True,
                                   unit_forget_bias=False, **QUICK_LAYER)
    layer.build((B, S, D))
    return layer


def _load_layer(layer: Any, weights: Sequence[np.ndarray], h: np.ndarray, c: np.ndarray) -> Any:
    """Give ``layer`` the ``weights`` [kernel, recurrent_kernel, bias] and the state [h, c]."""
    layer.set_weights([np.asarray(w, np.float32) for w in weights])
    for variable, value in zip(layer.states, (h, c), strict=True):
        variable.assign(np.asarray(value, np.float32))
    return layer


def _keras_weights(case: Case, prefix: str = "") -> list[np.ndarray]:
    return [case[prefix + k] for k in ("kernel", "recurrent_kernel", "bias")]


def _keras_case(rng: np.random.Generator, case: Case, prefix: str = "") -> Case:
    """Keras 3 LSTM weights for the case: kernel (D, 4H), recurrent_kernel (H, 4H), bias."""
    D, H = case["D"], case["H"]
    case[prefix + "kernel"] = normal(rng, D, 4 * H, scale=0.5)
    case[prefix + "recurrent_kernel"] = normal(rng, H, 4 * H, scale=0.5)
    case[prefix + "bias"] = normal(rng, 4 * H, scale=0.5)
    return case


@functools.cache
def _stateless_layer(B: int, T: int, D: int, H: int) -> Any:
    """A plain Keras 3 LSTM (no state kept) returning (outputs, h, c): the oracles' runner."""
    layer = keras3().layers.LSTM(H, return_sequences=True, return_state=True,
                                 unit_forget_bias=False, **QUICK_LAYER)
    layer.build((B, T, D))
    return layer


def _keras_run(inputs: np.ndarray, weights: Sequence[np.ndarray], h: np.ndarray,
               c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keras 3 LSTM over ``inputs`` (B, T, D) from [h, c]: ``(outputs, h, c)``, eagerly."""
    inputs = np.asarray(inputs, np.float32)
    layer = _stateless_layer(*inputs.shape, int(np.shape(h)[-1]))
    layer.set_weights([np.asarray(w, np.float32) for w in weights])
    outputs, h, c = layer(inputs, initial_state=[np.asarray(h, np.float32),
                                                 np.asarray(c, np.float32)])
    return np.asarray(outputs), np.asarray(h), np.asarray(c)


# --- drive_stateful: drive a stateful Keras layer across batches, resetting where streams start ---

#: (B, S, D, H, starts): which rows start a new sequence before each batch: some rows (in
#: the first batch, so the state the layer holds matters), all rows, none; and B = 1. B != H
#: and B != n, the number of batches, so outputs stacked on the wrong axis do not fit either
#: (audit, issue 18: B = H = 3 let a (B,) mask used without [:, None] broadcast over the
#: units and return a wrong answer no mistake named; with B != H it raises, and
#: MASK_OVER_UNITS' ``raises`` names that error; at B = 1 that mask is right)
DRIVE_DESIGNS = (
    {"B": 4, "S": 2, "D": 1, "H": 3, "starts": ((0, 1, 1, 0), (1, 1, 1, 1), (1, 0, 0, 1))},
    {"B": 1, "S": 3, "D": 3, "H": 2, "starts": ((0,), (1,), (0,))},
)


def _drive_case(rng: np.random.Generator, B: int, S: int, D: int, H: int,
                starts: Sequence[Sequence[int]] | np.ndarray) -> Case:
    starts = np.array(starts, dtype=bool)  # (n, B)
    case = {"B": B, "S": S, "D": D, "H": H, "n": len(starts),
            "batches": normal(rng, len(starts), B, S, D),  # (n, B, S, D)
            "starts": starts,
            "h": normal(rng, B, H, scale=0.5),  # the state the layer holds when handed over
            "c": normal(rng, B, H, scale=0.5)}
    return _keras_case(rng, case)


def _drive_call(fn: Callable[..., Any], case: Case) -> Any:
    layer = stateful_layer(case["B"], case["S"], case["D"], case["H"])
    _load_layer(layer, _keras_weights(case), case["h"], case["c"])
    return _by_layer(layer, lambda: fn(layer, list(case["batches"]), case["starts"]))


#: drive_stateful's and serve_at_batch_1's outputs must come from the stateful layer
#: (issue 35: a NumPy LSTM over the layer's weights and states earned them)
NOT_CALLED = "were not computed by the layer"


def _by_layer(layer: Any, run: Callable[[], Any]) -> Any:
    """``run()``, provided every number of its answer came from a call of a layer of
    ``layer``'s class (Keras 3's LSTM)."""
    # layer(x), compiled after its first calls (CompiledLSTM.__call__), and layer.call(x)
    result, unrun = api_answer(type(layer), ("__call__", "call"), run)
    if unrun is not None:
        raise ValueError(f"the outputs {NOT_CALLED}: they hold numbers no call of the "
                         "layer returned, so they were computed another way")
    return result


def _drive_oracle(case: Case, reset: str = "hc") -> np.ndarray:
    """A plain Keras 3 LSTM called on each batch from the state carried by hand, rows that start
    zeroed (h and c; ``reset="h"``: h only, a mistake's model) before the batch."""
    h, c, outputs = case["h"], case["c"], []
    for x, start in zip(case["batches"], case["starts"], strict=True):
        keep = (~start)[:, None].astype(np.float32)  # (B, 1)
        out, h, c = _keras_run(x, _keras_weights(case), h * keep,
                               c * keep if "c" in reset else c)
        outputs.append(out)
    return np.stack(outputs)  # (n, B, S, H)


def _driven(case: Case) -> np.ndarray:
    """The reference: each batch from the state carried, the rows where ``start`` is True
    zeroed (h and c) before it."""
    step = ref.keras_cell(*_keras_weights(case))
    h, c, outputs = case["h"], case["c"], []
    for x, start in zip(case["batches"], case["starts"], strict=True):
        keep = (~np.asarray(start, bool))[:, None]  # (B, 1)
        out, (h, c) = ref.unroll(step, x, [h * keep, c * keep])
        outputs.append(out)
    return np.stack(outputs)  # (n, B, S, H)


def _starts(which: Rows) -> Callable[[Case], Case]:
    """perturb=: the case with ``starts`` (n, B) changed by ``which(starts)``."""
    return lambda case: {**case, "starts": which(np.asarray(case["starts"], bool))}


def _any_row(starts: np.ndarray) -> np.ndarray:
    return np.repeat(starts.any(axis=1, keepdims=True), starts.shape[1], axis=1)


def _one_batch_late(starts: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros_like(starts[:1]), starts[:-1]])


def _units_mask(case: Case, right: np.ndarray) -> np.ndarray:
    """after=: a (B,) mask without [:, None] is right at B = 1; with B != H NumPy raises the
    broadcasting error ``_broadcast_error`` recognises (B == H > 1: not modelled)."""
    B, H = case["B"], case["H"]
    if B == 1:
        return right
    if B == H:
        raise ValueError("a wrong answer this model does not compute")
    raise ValueError(f"operands could not be broadcast together with shapes ({B},{H}) ({B},) ")


def _broadcast_error(case: Case, got: Raised) -> bool:
    """Whether ``got`` is the error of a (B,) mask against a (B, H) state, B != H (NumPy says
    shapes ``(B,)`` and ``(B,H)``; TensorFlow ``[B]`` and ``[B,H]``)."""
    B, H = case["B"], case["H"]
    text = got.message.replace(" ", "")
    return B != H and (f"({B},)" in text and f"({B},{H})" in text
                       or f"[{B}]" in text and f"[{B},{H}]" in text)


MASK_OVER_UNITS = ("the (B,) mask lines up with the units axis, not the rows: against "
                   "(B, H) it broadcasts along the last axis, so it zeros units, not "
                   "whole rows of h and c.")


drive_stateful = Exercise(
    name="drive_stateful",
    task="the layer's outputs for every batch, stacked: one array (n, B, S, H)",
    make_case=_drive_case,
    designs=DRIVE_DESIGNS,
    call=_drive_call,
    oracle=_drive_oracle,
    reference=_driven,
    by_hand=False,
    mistakes=(
        Mistake(
            "every row is reset when any row starts: reset_state() zeros the whole batch; "
            "where only some rows start, zero those rows through layer.states.",
            perturb=_starts(_any_row),
        ),
        Mistake(
            "the layer's state is thrown away before the first batch: rows that do not start "
            "in batch 0 continue the state the layer holds; reset only where starts is True.",
            perturb=lambda c: {**c, "h": np.zeros_like(c["h"]), "c": np.zeros_like(c["c"])},
        ),
        Mistake(
            "the state is not carried from batch to batch: a stateful layer keeps [h, c] "
            "between calls; reset it only where a sequence starts.",
            perturb=_starts(np.ones_like),
        ),
        Mistake(
            "the state is never reset: a row where starts[k] is True begins a new sequence, so "
            "its h and c must be zero before batch k.",
            perturb=_starts(np.zeros_like),
        ),
        Mistake(
            "the rows are reset after the batch in which they start: zero them before calling "
            "the layer on that batch.",
            perturb=_starts(_one_batch_late),
        ),
        Mistake(
            "the reset mask is inverted: zero the rows where starts[k] is True, keep the others.",
            perturb=_starts(np.logical_not),
        ),
        Mistake(
            "only h is reset: layer.states is [h, c]; zero the row in both.",
            # TensorFlow's Keras LSTM in every place: the right answer does not carry c
            lambda c: _drive_oracle(c, reset="h"),
        ),
        Mistake(MASK_OVER_UNITS, after=_units_mask, raises=_broadcast_error),
        not_from_api(
            f"the outputs {NOT_CALLED}: the exercise is to drive the stateful layer you "
            "were given, and these numbers are not what its calls returned (an LSTM "
            "recomputed from its weights and states).", NOT_CALLED),
    ),
)


# --- serve_at_batch_1: serve at batch 1 a stream of a layer trained at batch B --------------------

#: (B, D, H, T, row): the row to serve is a middle row when B > 1 (neither row 0 nor the last:
#: audit, issue 18, `[-1:]` passed when it was the last); B = 1; B, D, H all different
SERVE_DESIGNS = (
    {"B": 3, "D": 2, "H": 4, "T": 3, "row": 1},
    {"B": 1, "D": 3, "H": 2, "T": 3, "row": 0},
)
TRAIN_STEPS = 2  # the time steps the trained layer was built for


def _serve_case(rng: np.random.Generator, B: int, D: int, H: int, T: int, row: int) -> Case:
    case = {"B": B, "D": D, "H": H, "T": T, "row": row,
            "stream": normal(rng, T, D),  # (T, D): one value after another
            "h": normal(rng, B, H, scale=0.5),  # the trained layer's state: row r is stream r
            "c": normal(rng, B, H, scale=0.5),
            "served_h": normal(rng, 1, H, scale=0.5),  # what the batch-1 layer holds at first
            "served_c": normal(rng, 1, H, scale=0.5)}
    _keras_case(rng, case)
    return _keras_case(rng, case, prefix="served_")  # the batch-1 layer's own (wrong) weights


def _serve_call(fn: Callable[..., Any], case: Case) -> Any:
    B, D, H = case["B"], case["D"], case["H"]
    trained = _load_layer(stateful_layer(B, TRAIN_STEPS, D, H), _keras_weights(case),
                          case["h"], case["c"])
    served = _load_layer(stateful_layer(1, 1, D, H), _keras_weights(case, "served_"),
                         case["served_h"], case["served_c"])
    return _by_layer(served, lambda: fn(trained, served, case["row"], case["stream"]))


def _serve_oracle(case: Case) -> np.ndarray:
    """A plain Keras 3 LSTM with the trained weights over the stream, from row r's [h, c]."""
    r = case["row"]
    outputs, _, _ = _keras_run(case["stream"][None], _keras_weights(case),
                               case["h"][r : r + 1], case["c"][r : r + 1])
    return outputs[0]  # (T, H)


def _served(case: Case) -> np.ndarray:
    """The reference: the stream from row ``row``'s state, with the trained weights."""
    r = case["row"]
    step = ref.keras_cell(*_keras_weights(case))
    outputs, _ = ref.unroll(step, case["stream"][None], [case["h"][r: r + 1],
                                                          case["c"][r: r + 1]])
    return outputs[0]  # (T, H)


def _own_weights(case: Case) -> Case:
    return {**case, **{k: case["served_" + k] for k in ("kernel", "recurrent_kernel", "bias")}}


def _from_state(h: Callable[[Case], np.ndarray],
                c: Callable[[Case], np.ndarray]) -> Callable[[Case], Case]:
    """perturb=: the stream from the state ``(h, c)`` (each (1, H)) instead of row ``row``'s."""
    return lambda case: {**case, "row": 0, "h": h(case), "c": c(case)}


def _every_step_from_row(case: Case) -> np.ndarray:
    """Every step from row ``row``'s state (the state not carried): each step alone."""
    return np.concatenate([_right("serve_at_batch_1", {**case, "stream": case["stream"][t: t + 1],
                                                       "T": 1})
                           for t in range(case["T"])])


serve_at_batch_1 = Exercise(
    name="serve_at_batch_1",
    task="the outputs (T, H) of the trained model on `stream` at batch 1, continuing row "
    "`row`'s stream",
    make_case=_serve_case,
    designs=SERVE_DESIGNS,
    call=_serve_call,
    oracle=_serve_oracle,
    reference=_served,
    by_hand=False,
    mistakes=(
        Mistake(
            "the batch-1 layer keeps its own weights: copy the trained layer's weights into it "
            "(get_weights / set_weights) before serving.",
            perturb=_own_weights,
            variants=(lambda c: _right("serve_at_batch_1", _from_state(
                lambda c: c["served_h"], lambda c: c["served_c"])(_own_weights(c))),),
        ),
        Mistake(
            "the stream continues row 0: copy row `row` of the trained layer's h and c.",
            perturb=lambda c: {**c, "row": 0},
        ),
        Mistake(
            "the stream continues the last row: the served state is row `row` of the "
            "trained layer's h and c, not its last row.",
            perturb=lambda c: {**c, "row": c["B"] - 1},
        ),
        Mistake(
            "the stream does not continue the trained state: the batch-1 layer starts from "
            "what it held; copy row `row` of the trained layer's [h, c] into its states.",
            perturb=_from_state(lambda c: c["served_h"], lambda c: c["served_c"]),
        ),
        Mistake(
            "the stream starts from zeros: it continues row `row` of the trained layer, so copy "
            "that row's h and c into the batch-1 layer's states.",
            perturb=_from_state(lambda c: 0 * c["served_h"], lambda c: 0 * c["served_c"]),
        ),
        Mistake(
            "the state is not carried from step to step: set the copied state once, before the "
            "first step, and let the stateful layer carry it.",
            _every_step_from_row,
        ),
        Mistake(
            "h and c are swapped when copied: layer.states is [h, c] in both layers.",
            perturb=lambda c: {**c, "h": c["c"], "c": c["h"]},
        ),
        not_from_api(
            f"the outputs {NOT_CALLED}: the exercise is to serve the stream through the "
            "batch-1 layer, and these numbers are not what its calls returned (an LSTM "
            "recomputed from the weights and states).", NOT_CALLED),
    ),
)


CHAPTER = Chapter(
    4,
    "04-stateful-batching",
    [pack_state, unpack_state, reset_ended, stateful_batches, stacked_step, stream_in_chunks,
     drive_stateful, serve_at_batch_1],
)
check = CHAPTER.check
