"""Chapter 7 (padded batches, sequence_length and masks, directions and layers): exercises
and their checks.

The cell is TF1's ``BasicLSTMCell`` (``forget_bias`` 1.0, kernel ``[W; U]`` (D + H, 4H), gates
i, j, f, o) run over a padded batch ``inputs`` (B, T, D) whose row b holds ``lengths[b]``
valid steps, then padding. By hand (NumPy): ``final_state``, the state
``dynamic_rnn(..., sequence_length=lengths)`` returns (each row's state at its last valid
step); ``padded_outputs``, its outputs (zeros past each length); ``reverse_within_lengths``,
``tf.reverse_sequence`` (what the backward direction of a bidirectional RNN reads);
``stacked_final_state``, a two-layer ``MultiRNNCell``'s final state (a tuple of per-layer
``(c, h)``, layer 0 first). API: ``run_with_lengths`` runs a real cell handed over by the
check; ``keras_final_state`` builds a tf.keras LSTM whose masked final state is TF1's;
``backward_state_by_name`` fetches the backward direction's state at a step of a static
bidirectional graph by its name. By hand again, last: ``bidirectional_outputs``, the outputs
(B, T, 2H) of ``bidirectional_dynamic_rnn`` with ``sequence_length``, forward half first.

Every trial's lengths hold a row of full length T and a row of length 1 where the batch has
room, and a row of length 0 (``dynamic_rnn`` accepts it: that row's state stays the initial
one and its outputs are zeros), at random places; the padding is zeros (as a real padded
batch's) in some trials and noise in others (what ``tf.reverse_sequence`` leaves where it
was). The padding probe (:class:`rnnbook.diagnose.Probe` ``"padding"``) changes only the
padded steps: TensorFlow's answer does not move, so an answer that does is named ("changing
the padded steps moves your h").

Oracles: the real cells (:func:`rnnbook.oracles.run_tf1` with ``lengths``,
``tf.reverse_sequence``, a ``MultiRNNCell``, ``bidirectional_dynamic_rnn``). ``reference``
is :mod:`rnnbook.reference` (:func:`~rnnbook.reference.unroll_lengths`,
:func:`~rnnbook.reference.reverse_within`), touched only inside functions. Each mistake is
the right answer on a changed case (the lengths moved, the padding read as steps) or changed
after (c and h swapped, the layers swapped, the zeros moved), so the learner release names it
too.
Notation (book/notation.md): ``B`` batch, ``T`` time, ``D`` input depth, ``H`` num_units.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Sequence, TypedDict

import numpy as np

from rnnbook import oracles
from rnnbook import reference as ref
from rnnbook.checks.ch02 import NOT_FETCHED, _fetched  # a session's answer, fetched
from rnnbook.checks.common import (
    TF1_TO_KERAS,
    ApiCall,
    Trial,
    not_from_api,
    not_returned,
    parts_swapped_after,
    raising,
    recording,
    reorder_blocks,
    says,
)
from rnnbook.diagnose import Probe
from rnnbook.exercise import Chapter, Exercise, Mistake, normal
from rnnbook.oracles import (
    graph_bytes,
    graph_from_bytes,
    run_tf1,
    tensorflow,
)
from rnnbook.plaindata import Case


class PaddedTrial(TypedDict):
    """A padded batch and one BasicLSTMCell's weights (final_state, padded_outputs,
    run_with_lengths, keras_final_state)."""

    B: int
    T: int
    D: int
    H: int
    inputs: np.ndarray  # (B, T, D): row b valid for its first lengths[b] steps
    lengths: np.ndarray  # (B,) int32, 0 <= lengths[b] <= T
    kernel: np.ndarray  # (D + H, 4H), gates i, j, f, o
    bias: np.ndarray  # (4H,)
    forget_bias: float  # 1.0, BasicLSTMCell's default; a mistake's case changes it


class ReverseTrial(TypedDict):
    """reverse_within_lengths' trial: a padded batch."""

    B: int
    T: int
    D: int
    inputs: np.ndarray  # (B, T, D)
    lengths: np.ndarray  # (B,) int32


# stacked_final_state's trial is a ``Case``: the padded batch and ``kernel{l}`` ((D + H, 4H)
# for layer 0, (2H, 4H) for layer 1) and ``bias{l}`` (4H,), keys no TypedDict can name.

#: what a row's length is, in a design: T (``full``), 1 (``one``), 0 (``zero``), between 1 and
#: T - 1 (``short``: the row has padding)
ROW_KINDS = ("full", "one", "zero", "short")


# --- Shared by several exercises: padded batches, the real run with lengths -------------------


def _lengths(rng: np.random.Generator, T: int, rows: Sequence[str]) -> np.ndarray:
    """One length per row of kind ``rows`` (:data:`ROW_KINDS`), in a random order: no row
    index a learner could hard-code holds the same kind in every trial."""
    draw = {"full": lambda: T, "one": lambda: 1, "zero": lambda: 0,
            "short": lambda: int(rng.integers(1, T))}
    lengths = np.array([draw[kind]() for kind in rows], np.int32)
    return lengths[rng.permutation(len(rows))]


def _padded(rng: np.random.Generator, B: int, T: int, D: int, rows: Sequence[str],
            padding: str) -> tuple[np.ndarray, np.ndarray]:
    """``(inputs (B, T, D), lengths (B,))``: ``padding`` ``"zeros"`` (a real padded batch)
    or ``"noise"`` (values that show where an answer reads them)."""
    assert len(rows) == B
    lengths = _lengths(rng, T, rows)
    inputs = normal(rng, B, T, D)  # (B, T, D)
    if padding == "zeros":
        inputs[np.arange(T)[None, :] >= lengths[:, None]] = 0.0
    return inputs, lengths


def _padded_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
                 rows: Sequence[str], padding: str) -> PaddedTrial:
    inputs, lengths = _padded(rng, B, T, D, rows, padding)
    return {"B": B, "T": T, "D": D, "H": H, "inputs": inputs, "lengths": lengths,
            "kernel": normal(rng, D + H, 4 * H, scale=0.5),  # (D + H, 4H)
            "bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
            "forget_bias": 1.0}


#: (B, T, D, H, rows, padding): every kind of row in one batch (B = 4) with noise padding
#: (the trial the probes change); one row with padding (B = 1); D < H and D > H, D = 1
PADDED_DESIGNS = (
    {"B": 4, "T": 5, "D": 3, "H": 2, "rows": ("full", "one", "zero", "short"),
     "padding": "noise"},
    {"B": 1, "T": 4, "D": 2, "H": 3, "rows": ("short",), "padding": "zeros"},
    {"B": 3, "T": 3, "D": 1, "H": 4, "rows": ("full", "one", "short"), "padding": "zeros"},
)


def _cell(H: int, forget_bias: float = 1.0) -> Callable[[], Any]:
    return lambda: tensorflow().compat.v1.nn.rnn_cell.BasicLSTMCell(H, forget_bias=forget_bias)


def _tf1_run(case: Trial) -> tuple[np.ndarray, Any]:
    """The real BasicLSTMCell under ``dynamic_rnn(..., sequence_length=lengths)`` from the zero
    state: ``(outputs (B, T, H), LSTMStateTuple(c, h))``."""
    weights = {"kernel": case["kernel"], "bias": case["bias"]}
    outputs, final = run_tf1(_cell(case["H"], case["forget_bias"]), case["inputs"], None,
                             weights, mode="dynamic", lengths=case["lengths"])
    return outputs, final


def _ref_run(case: Trial, past: str = "zeros") -> tuple[np.ndarray, Any]:
    """The reference run with lengths: ``(outputs (B, T, H), (c, h))``."""
    zero = np.zeros((case["B"], case["H"]), np.float32)  # (B, H)
    step = ref.lstm_cell(case["kernel"], case["bias"], case["forget_bias"])
    return ref.unroll_lengths(step, case["inputs"], (zero, zero), case["lengths"], past)


def _with_lengths(change: Callable[[np.ndarray, int], np.ndarray]) -> Callable[[Trial], Trial]:
    """perturb=: the case with ``lengths`` changed by ``change(lengths, T)`` (kept in 0..T, as
    ``sequence_length`` must be)."""
    def perturb(case: Trial) -> Trial:
        moved = np.clip(change(np.asarray(case["lengths"]), case["T"]), 0, case["T"])
        return {**case, "lengths": moved.astype(np.int32)}

    return perturb


#: the lengths as a learner's mistake reads them
EVERY_STEP = _with_lengths(lambda n, T: np.full_like(n, T))
ONE_MORE = _with_lengths(lambda n, T: n + 1)
ONE_LESS = _with_lengths(lambda n, T: n - 1)

AFTER_PADDING = ("the final state is taken after the padding: with sequence_length, each "
                 "row's state stops changing at its last valid step and is copied through "
                 "the padded steps.")
ONE_PAST = ("the state is read one step past each row's length: a row of length n has "
            "valid steps 0 to n - 1, and its state after step n - 1 is final.")
ONE_BEFORE = ("the state is read one step before each row's end: a row of length n runs n "
              "steps, the last of them step n - 1.")
C_H = ("c and h are swapped: TF1's state is LSTMStateTuple(c, h), the cell state first, "
       "the output h second.")
PADDING_PROBE = Probe("inputs", "padding", said="the padded steps of `inputs`")


# --- final_state: the final state of a padded batch (by hand) ---------------------------------


final_state = Exercise[PaddedTrial](
    name="final_state",
    task="(c, h), each (B, H): the final state dynamic_rnn returns with sequence_length",
    make_case=_padded_case,
    designs=PADDED_DESIGNS,
    call=lambda fn, c: fn(c["inputs"], c["lengths"], c["kernel"], c["bias"]),
    oracle=lambda c: tuple(_tf1_run(c)[1]),
    reference=lambda c: _ref_run(c)[1],
    parts=("c", "h"),
    probes=(PADDING_PROBE, Probe("inputs", "row")),
    mistakes=(
        Mistake(AFTER_PADDING, perturb=EVERY_STEP),
        Mistake(ONE_PAST, perturb=ONE_MORE),
        Mistake(ONE_BEFORE, perturb=ONE_LESS),
        parts_swapped_after(C_H),
    ),
)


# --- padded_outputs: the outputs, zeros past each length (by hand) ----------------------------


def _zeros_from(case: Trial, outputs: Any, start: np.ndarray) -> np.ndarray:
    """``outputs`` (B, T, H) with zeros from step ``start[b]`` of each row on."""
    outputs = np.array(outputs, dtype=np.float32)
    outputs[np.arange(case["T"])[None, :] >= start[:, None]] = 0.0
    return outputs


def _repeated(case: Trial, right: Any) -> np.ndarray:
    """after=: past each row's length, its last valid output again (zeros for a row of length
    0), where dynamic_rnn writes zeros."""
    outputs = np.array(right, dtype=np.float32)  # (B, T, H)
    for b, n in enumerate(case["lengths"]):
        outputs[b, n:] = outputs[b, n - 1] if n else 0.0
    return outputs


padded_outputs = Exercise[PaddedTrial](
    name="padded_outputs",
    task="the outputs (B, T, H) dynamic_rnn returns with sequence_length",
    make_case=_padded_case,
    designs=PADDED_DESIGNS,
    call=lambda fn, c: fn(c["inputs"], c["lengths"], c["kernel"], c["bias"]),
    oracle=lambda c: _tf1_run(c)[0],
    reference=lambda c: _ref_run(c)[0],
    probes=(PADDING_PROBE, Probe("inputs", "row")),
    mistakes=(
        Mistake(
            "the outputs past each row's length are not zero: dynamic_rnn with "
            "sequence_length writes zeros at every padded step.",
            perturb=EVERY_STEP,
        ),
        Mistake(
            "the zeros start one step early: a row of length n has outputs at steps 0 to "
            "n - 1, and zeros from step n on.",
            after=lambda c, right: _zeros_from(c, right, np.asarray(c["lengths"]) - 1),
        ),
        Mistake(
            "the zeros start one step late: step n of a row of length n is already padding, "
            "and its output is zero.",
            perturb=ONE_MORE,
        ),
        Mistake(
            "the outputs past each row's length repeat its last valid output: dynamic_rnn "
            "copies the STATE through the padding, but its outputs there are zeros.",
            after=_repeated,
        ),
    ),
)


# --- reverse_within_lengths: tf.reverse_sequence (by hand) ------------------------------------


def _reverse_case(rng: np.random.Generator, B: int, T: int, D: int, rows: Sequence[str],
                  padding: str) -> ReverseTrial:
    inputs, lengths = _padded(rng, B, T, D, rows, padding)
    return {"B": B, "T": T, "D": D, "inputs": inputs, "lengths": lengths}


#: noise padding in two trials (an answer that zeroes or moves the padding shows); a row of
#: each kind; B = 1 with padding
REVERSE_DESIGNS = (
    {"B": 4, "T": 5, "D": 2, "rows": ("full", "one", "zero", "short"), "padding": "noise"},
    {"B": 1, "T": 4, "D": 3, "rows": ("short",), "padding": "zeros"},
    {"B": 3, "T": 6, "D": 1, "rows": ("short", "full", "short"), "padding": "noise"},
)


def _reverse_oracle(case: ReverseTrial) -> np.ndarray:
    tf = tensorflow()
    return tf.reverse_sequence(case["inputs"], case["lengths"].astype(np.int64), seq_axis=1,
                               batch_axis=0).numpy()


reverse_within_lengths = Exercise[ReverseTrial](
    name="reverse_within_lengths",
    task="(B, T, D): each row's first lengths[b] steps reversed, its padding where it was",
    make_case=_reverse_case,
    designs=REVERSE_DESIGNS,
    call=lambda fn, c: fn(c["inputs"], c["lengths"]),
    oracle=_reverse_oracle,
    reference=lambda c: ref.reverse_within(c["inputs"], c["lengths"]),
    mistakes=(
        Mistake(
            "the padding was reversed to the front: reversing every step of a padded row "
            "puts its padding first, so the backward direction reads the padding before "
            "the sequence; reverse only the first lengths[b] steps.",
            lambda c: np.flip(c["inputs"], axis=1),
        ),
        Mistake(
            "the reversal is one step too long: a row of length n reverses steps 0 to "
            "n - 1, so its last valid step comes first and step n stays where it was.",
            perturb=ONE_MORE,
        ),
        Mistake(
            "the reversal is one step too short: the row's last valid step is step n - 1, "
            "and it must come first.",
            perturb=ONE_LESS,
        ),
    ),
)


# --- stacked_final_state: a two-layer MultiRNNCell's final state (by hand) --------------------

LAYERS = 2


def _stacked_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
                  rows: Sequence[str], padding: str) -> Case:
    case: Case = {**_padded_case(rng, B, T, D, H, rows, padding)}
    del case["kernel"], case["bias"]
    for layer in range(LAYERS):
        depth = D if layer == 0 else H
        case[f"kernel{layer}"] = normal(rng, depth + H, 4 * H, scale=0.5)  # (D_l + H, 4H)
        case[f"bias{layer}"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
    return case


def _kernels(case: Trial) -> tuple[list[np.ndarray], list[np.ndarray]]:
    return ([case[f"kernel{k}"] for k in range(LAYERS)],
            [case[f"bias{k}"] for k in range(LAYERS)])


def _stacked_oracle(case: Case) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The real MultiRNNCell of two BasicLSTMCells (one per layer) under dynamic_rnn with
    sequence_length: its final state, a tuple of LSTMStateTuple(c, h), layer 0 first."""
    rc = tensorflow().compat.v1.nn.rnn_cell
    H = case["H"]
    weights = {f"cell_{k}/basic_lstm_cell/{name}": case[f"{name}{k}"]
               for k in range(LAYERS) for name in ("kernel", "bias")}
    _, final = run_tf1(lambda: rc.MultiRNNCell([rc.BasicLSTMCell(H) for _ in range(LAYERS)]),
                       case["inputs"], None, weights, mode="dynamic", lengths=case["lengths"])
    return tuple((c, h) for c, h in final)


def _stacked_ref(case: Trial) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    zero = np.zeros((case["B"], case["H"]), np.float32)  # (B, H)
    steps = [ref.lstm_cell(k, b) for k, b in zip(*_kernels(case), strict=True)]
    state = tuple((zero, zero) for _ in steps)
    return ref.unroll_lengths(ref.stacked(steps), case["inputs"], state, case["lengths"])[1]


#: D != H in every trial (a layer given the other's kernel raises), B = 1, every kind of row
STACK_DESIGNS = (
    {"B": 4, "T": 4, "D": 3, "H": 2, "rows": ("full", "one", "zero", "short"),
     "padding": "noise"},
    {"B": 1, "T": 3, "D": 1, "H": 3, "rows": ("short",), "padding": "zeros"},
    {"B": 2, "T": 5, "D": 4, "H": 3, "rows": ("full", "one"), "padding": "zeros"},
)


stacked_final_state = Exercise[Case](
    name="stacked_final_state",
    task="((c, h) of layer 0, (c, h) of layer 1), each (B, H): the final state of "
         "MultiRNNCell under dynamic_rnn with sequence_length",
    make_case=_stacked_case,
    designs=STACK_DESIGNS,
    call=lambda fn, c: fn(c["inputs"], c["lengths"], *_kernels(c)),
    oracle=_stacked_oracle,
    reference=_stacked_ref,
    parts=("layer 0", "layer 1"),
    probes=(PADDING_PROBE,),
    mistakes=(
        Mistake(
            "the layers are swapped: MultiRNNCell's state lists layer 0 (the one that "
            "reads the input) first.",
            after=lambda _c, right: right[::-1],
        ),
        Mistake(
            "the state is one array of every layer's c and h: MultiRNNCell's state is a "
            "tuple with one (c, h) pair per layer.",
            after=lambda _c, right: np.array(right),
        ),
        Mistake(
            "c and h are swapped in each layer: every layer's state is "
            "LSTMStateTuple(c, h), the cell state first.",
            after=lambda _c, right: [pair[::-1] for pair in right],
        ),
        Mistake(
            "the final state is taken after the padding: with sequence_length, every "
            "layer of the stack stops at each row's last valid step.",
            perturb=EVERY_STEP,
        ),
        Mistake(ONE_PAST, perturb=ONE_MORE),
        Mistake(ONE_BEFORE, perturb=ONE_LESS),
    ),
)


# --- run_with_lengths: a real cell over a padded batch (API) ----------------------------------


@functools.cache
def _real_cell(D: int, H: int) -> Any:
    """One real eager BasicLSTMCell per shape, built once; each trial loads its weights."""
    cell = tensorflow().compat.v1.nn.rnn_cell.BasicLSTMCell(H)
    cell.build((None, D))
    return cell


def _eager_cells() -> None:
    """Make TF1 cells usable eagerly again after an oracle built one in a graph (tf-keras
    switches the cells' base class then; see ``rnnbook/checks/ch03.py``)."""
    cls = tensorflow().compat.v1.nn.rnn_cell.BasicLSTMCell
    if any(base.__module__.endswith("base_layer_v1") for base in cls.__mro__):
        cls(1)


def _loaded(cell: Any, kernel: np.ndarray, bias: np.ndarray) -> Any:
    """A built BasicLSTMCell given ``kernel`` (D + H, 4H) and ``bias`` (4H,)."""
    for var, value in zip(cell.variables, (kernel, bias), strict=True):
        var.assign(np.asarray(value, np.float32), read_value=False)
    return cell


def _cell_for(case: Trial) -> Any:
    _eager_cells()
    return _loaded(_real_cell(case["D"], case["H"]), case["kernel"], case["bias"])


def _from_api(owners: Sequence[tuple[Any, str]], run: Callable[[], Any],
              parts: Sequence[str]) -> tuple[Any, str | None]:
    """``run()`` with each ``owner.<name>`` recorded (:func:`rnnbook.checks.common.recording`):
    its result, and the part of it holding a number none of them returned (None: none does).
    Zero counts as returned: a row of length 0 keeps the zero initial state, which no call of
    the cell returns."""
    calls: list[ApiCall] = [ApiCall((), {}, np.zeros(1, np.float32))]
    with contextlib.ExitStack() as stack:
        for owner, name in owners:
            stack.enter_context(recording(owner, name, calls))
        result = run()
    return result, (None if result is None else not_returned(result, calls, parts))


#: run_with_lengths' state must come from the cell (a NumPy restatement from its weights earns nothing)
NOT_RUN = "was not computed by the cell"


def _run_call(fn: Callable[..., Any], case: PaddedTrial) -> Any:
    cell = _cell_for(case)
    result, unrun = _from_api(
        [(type(cell), "__call__"), (type(cell), "call")],
        lambda: fn(cell, case["inputs"], case["lengths"]), ("c", "h"))
    if unrun is not None:
        raise ValueError(f"the final state {NOT_RUN}: {unrun} holds numbers no call of the "
                         "cell returned, so it was recomputed")
    return result


#: two trials of one (D, H), so a grading child builds one real cell: every kind of row, and
#: B = 1 with padding
RUN_DESIGNS = (
    PADDED_DESIGNS[0],
    {"B": 1, "T": 4, "D": 3, "H": 2, "rows": ("short",), "padding": "zeros"},
)

run_with_lengths = Exercise[PaddedTrial](
    name="run_with_lengths",
    task="(c, h), each (B, H): the cell's final state over the padded batch, each row's state "
         "at its last valid step",
    make_case=_padded_case,
    designs=RUN_DESIGNS,
    call=_run_call,
    oracle=lambda c: tuple(_tf1_run(c)[1]),
    reference=lambda c: _ref_run(c)[1],
    by_hand=False,
    parts=("c", "h"),
    probes=(PADDING_PROBE,),
    mistakes=(
        Mistake(AFTER_PADDING, perturb=EVERY_STEP),
        Mistake(ONE_PAST, perturb=ONE_MORE),
        Mistake(ONE_BEFORE, perturb=ONE_LESS),
        parts_swapped_after(C_H),
        not_from_api(
            f"the final state {NOT_RUN}: the exercise is to let the real cell run the "
            "batch, and these numbers are not what its calls returned (a recomputation "
            "from its weights).", NOT_RUN),
    ),
)


# --- keras_final_state: a tf.keras LSTM with a mask, TF1's final state (API) ------------------


#: keras_final_state's state must come from a Keras layer or model run on the batch
NOT_KERAS = "was not computed by a Keras layer"


def _keras_call(fn: Callable[..., Any], case: PaddedTrial) -> Any:
    """The learner's function on the trial; what tf.keras' LSTM layers and models returned
    while it ran is recorded (an eager call, or ``predict``)."""
    keras = tensorflow().keras  # tf-keras: the legacy switch is on
    owners = [(keras.layers.LSTM, "__call__"), (keras.Model, "__call__"),
              (keras.Model, "predict")]
    result, unkeras = _from_api(
        owners, lambda: fn(case["inputs"], case["lengths"], case["kernel"], case["bias"]),
        ("c", "h"))
    if unkeras is not None:
        raise ValueError(f"the final state {NOT_KERAS}: {unkeras} holds numbers no tf.keras "
                         "LSTM or model returned, so it was computed another way")
    return result


def _keras_order(case: Trial) -> Trial:
    """The case with the TF1 gate blocks j and f swapped: the right port of it is the port
    that left the blocks in TF1's order."""
    return {**case, "kernel": reorder_blocks(case["kernel"], TF1_TO_KERAS),
            "bias": reorder_blocks(case["bias"], TF1_TO_KERAS)}


#: zero padding (a Masking layer finds it) in both trials: every kind of row, and B = 1
KERAS_DESIGNS = (
    {"B": 4, "T": 5, "D": 3, "H": 2, "rows": ("full", "one", "zero", "short"),
     "padding": "zeros"},
    {"B": 1, "T": 4, "D": 2, "H": 3, "rows": ("short",), "padding": "zeros"},
)

keras_final_state = Exercise[PaddedTrial](
    name="keras_final_state",
    task="(c, h), each (B, H): a tf.keras LSTM's final state over the masked batch, TF1's "
         "with sequence_length",
    make_case=_padded_case,
    designs=KERAS_DESIGNS,
    call=_keras_call,
    oracle=lambda c: tuple(_tf1_run(c)[1]),
    reference=lambda c: _ref_run(c)[1],
    by_hand=False,
    parts=("c", "h"),
    mistakes=(
        Mistake(
            "the final state is taken after the padding: without a mask Keras runs every "
            "step; give the LSTM the mask (a Masking layer, or mask=) so that padded steps "
            "carry the state through.", perturb=EVERY_STEP),
        Mistake(
            "forget_bias is not folded: TF1's BasicLSTMCell adds 1.0 to f at every step, "
            "Keras adds nothing, so the f block of the Keras bias must hold it.",
            perturb=lambda c: {**c, "forget_bias": 0.0}),
        Mistake(
            "the gate blocks are still in TF1's order i, j, f, o: Keras orders them i, f, "
            "g, o, in the kernel, the recurrent kernel and the bias.",
            perturb=_keras_order),
        Mistake(ONE_PAST, perturb=ONE_MORE),
        Mistake(ONE_BEFORE, perturb=ONE_LESS),
        parts_swapped_after(
            "c and h are swapped: with return_state=True Keras returns the output, then h, "
            "then c; TF1's state is (c, h)."),
        not_from_api(
            f"the final state {NOT_KERAS}: the exercise is to build the Keras model and "
            "let it run the batch, and these numbers are not what it returned.", NOT_KERAS),
    ),
)


# --- backward_state_by_name: the backward direction's state at a step, by name (API) ----------

#: The one graph of backward_state_by_name: a static bidirectional BasicLSTMCell (one op per
#: step) over the placeholders ``inputs`` (None, T, D) and ``lengths`` (None,), built once per
#: process (a grading child imports it from PREBUILT); a trial only loads its weights.
BIDI = dict(T=5, D=2, H=3)
SCOPE = "bidirectional_rnn"


class BidiPaddedTrial(TypedDict):
    """bidirectional_outputs' trial: a padded batch and both directions' weights."""

    B: int
    T: int
    D: int
    H: int
    inputs: np.ndarray  # (B, T, D)
    lengths: np.ndarray  # (B,) int32
    kernel_fw: np.ndarray  # (D + H, 4H)
    bias_fw: np.ndarray  # (4H,)
    kernel_bw: np.ndarray  # (D + H, 4H)
    bias_bw: np.ndarray  # (4H,)


class BidiTrial(BidiPaddedTrial):
    """backward_state_by_name's trial: bidirectional_outputs' and a step."""

    k: int  # the backward direction's step: its (k + 1)-th call of the cell


def _bidi_graph(T: int, D: int, H: int) -> Any:
    """``static_bidirectional_rnn`` of two BasicLSTMCell(H) over the placeholder ``inputs``
    (None, T, D) with ``sequence_length`` the placeholder ``lengths``; from PREBUILT where the
    grader's zygote built it (the same graph, op for op)."""
    if (T, D, H) in PREBUILT:
        return graph_from_bytes(PREBUILT[T, D, H])
    tf = tensorflow()
    v1, rc = tf.compat.v1, tf.compat.v1.nn.rnn_cell
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [None, T, D], name="inputs")  # (B, T, D)
        lengths = v1.placeholder(tf.int32, [None], name="lengths")  # (B,)
        v1.nn.static_bidirectional_rnn(rc.BasicLSTMCell(H), rc.BasicLSTMCell(H),
                                       tf.unstack(x, axis=1), sequence_length=lengths,
                                       dtype=tf.float32, scope=SCOPE)
    return graph


#: ``{(T, D, H): MetaGraphDef bytes}``: the graph built in another process, filled by the
#: grader's TensorFlow zygote with :func:`prebuild`'s result before it forks (Chapters 4 and
#: 6 do the same); empty elsewhere (a notebook builds)
PREBUILT: dict[tuple[int, int, int], bytes] = {}


def prebuild() -> dict[tuple[int, int, int], bytes]:
    """``{(T, D, H): bytes}``: :data:`BIDI`'s graph, serialised."""
    key = (BIDI["T"], BIDI["D"], BIDI["H"])
    return {key: graph_bytes(_bidi_graph(*key))}


def _bidi_weights(case: Trial) -> dict[str, np.ndarray]:
    return {f"{way}/basic_lstm_cell/{name}": case[f"{name}_{way}"]
            for way in ("fw", "bw") for name in ("kernel", "bias")}


def bidi_session(case: Trial) -> Any:
    """A ``tf.compat.v1.Session`` over the bidirectional graph (built once per shape and
    process, :func:`rnnbook.oracles.live_session`), with the case's weights loaded into both
    directions' variables."""
    key = (case["T"], case["D"], case["H"])
    return oracles.live_session(("ch07", *key), lambda: _bidi_graph(*key),
                                _bidi_weights(case))


def _bidi_trial(rng: np.random.Generator, inputs: np.ndarray,
                lengths: np.ndarray, H: int) -> BidiPaddedTrial:
    """The padded batch ``inputs`` (B, T, D) with its ``lengths`` (B,), and both directions'
    weights, drawn now."""
    B, T, D = inputs.shape
    return {"B": B, "T": T, "D": D, "H": H, "inputs": inputs, "lengths": lengths,
            "kernel_fw": normal(rng, D + H, 4 * H, scale=0.5),  # (D + H, 4H)
            "bias_fw": normal(rng, 4 * H, scale=0.5),  # (4H,)
            "kernel_bw": normal(rng, D + H, 4 * H, scale=0.5),  # (D + H, 4H)
            "bias_bw": normal(rng, 4 * H, scale=0.5)}  # (4H,)


def _bidi_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
               rows: Sequence[str], padding: str, k: str) -> BidiTrial:
    inputs, lengths = _padded(rng, B, T, D, rows, padding)
    step = {"first": 0, "last": T - 1, "middle": int(rng.integers(1, T - 1))}[k]
    return {**_bidi_trial(rng, inputs, lengths, H), "k": step}


#: the first step (its names have no suffix), a middle one, the last (the final state); every
#: kind of row; B = 1 with padding
BIDI_DESIGNS = (
    dict(BIDI, B=4, rows=("full", "one", "zero", "short"), padding="noise", k="middle"),
    dict(BIDI, B=1, rows=("short",), padding="zeros", k="first"),
    dict(BIDI, B=3, rows=("full", "short", "one"), padding="noise", k="last"),
)


def _bidi_oracle(case: BidiTrial) -> tuple[np.ndarray, np.ndarray]:
    """The backward direction's state after its step k, from TensorFlow without the graph's
    names: the real cell with the backward weights under ``dynamic_rnn`` with
    ``sequence_length``, on ``tf.reverse_sequence`` of the batch, each length cut to k + 1
    steps."""
    tf = tensorflow()
    reversed_inputs = tf.reverse_sequence(case["inputs"], case["lengths"].astype(np.int64),
                                          seq_axis=1, batch_axis=0).numpy()
    cut = {**case, "inputs": reversed_inputs, "kernel": case["kernel_bw"],
           "lengths": np.minimum(case["lengths"], case["k"] + 1),  # (stops after step k)
           "bias": case["bias_bw"], "forget_bias": 1.0}
    return tuple(_tf1_run(cut)[1])


def _bidi_reference(case: Trial) -> tuple[np.ndarray, np.ndarray]:
    steps = case["k"] + 1
    cut = {**case, "T": steps, "lengths": case["lengths"], "forget_bias": 1.0,
           "inputs": ref.reverse_within(case["inputs"], case["lengths"])[:, :steps],
           "kernel": case["kernel_bw"], "bias": case["bias_bw"]}
    return _ref_run(cut)[1]


def _forward(case: Trial) -> Trial:
    """The case whose backward direction computes what the forward one computes on the
    original: the forward weights, and the batch reversed within its lengths (the backward
    direction reverses it back)."""
    return {**case, "kernel_bw": case["kernel_fw"], "bias_bw": case["bias_fw"],
            "inputs": _reversed_within(case["inputs"], case["lengths"])}


def _reversed_within(inputs: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """tf.reverse_sequence in NumPy on the learner's side (a mistake's case is made there;
    the reference's :func:`~rnnbook.reference.reverse_within` does not ship to learners)."""
    steps = np.arange(inputs.shape[1])[None, :]  # (1, T)
    ends = np.asarray(lengths)[:, None]  # (B, 1)
    source = np.where(steps < ends, ends - 1 - steps, steps)  # (B, T): where each step is from
    return np.take_along_axis(np.asarray(inputs), source[:, :, None], axis=1)


def _output_not_state(case: Trial, right: Any) -> list[np.ndarray]:
    """after=: h zero where the row has no step k (the step's output, not the state)."""
    ended = (np.asarray(case["lengths"]) <= case["k"])[:, None]  # (B, 1)
    return [right[0], np.where(ended, 0.0, right[1]).astype(np.float32)]


def _step_moved(by: int) -> Callable[[Trial], Trial]:
    """perturb=: the case with the backward direction's step ``k`` moved by ``by``; a model
    that raises (does not apply) where that step does not exist, as the learner's name does
    not."""
    def perturb(case: Trial) -> Trial:
        k = case["k"] + by
        if not 0 <= k < case["T"]:
            raise ValueError(f"the backward direction has no step {k}")
        return {**case, "k": k}

    return perturb


def _bidi_call(fn: Callable[..., Any], case: BidiTrial) -> Any:
    return _fetched(fn, bidi_session(case), (case["inputs"], case["lengths"], case["k"]),
                    ("c", "h"), "the state's values")


NOT_FED = "You must feed a value for placeholder tensor"  # TensorFlow's words

backward_state_by_name = Exercise[BidiTrial](
    name="backward_state_by_name",
    task="(c, h), each (B, H): the backward direction's state after its step k, fetched from "
         "the session by name",
    make_case=_bidi_case,
    designs=BIDI_DESIGNS,
    call=_bidi_call,
    oracle=_bidi_oracle,
    reference=_bidi_reference,
    by_hand=False,
    parts=("c", "h"),
    probes=(PADDING_PROBE,),
    mistakes=(
        Mistake(
            "this is the forward direction's state: the backward direction has tensors of "
            "its own, and its step k reads each row from its end.",
            perturb=_forward,
        ),
        parts_swapped_after(
            "c and h are swapped: each step's state is LSTMStateTuple(c, h), the cell state "
            "first."),
        Mistake(
            "this h is the step's output, not the state: past a row's length the output is "
            "zero while the state is copied through.",
            after=_output_not_state,
        ),
        Mistake(
            "this is the state one step late, after the backward direction's step k + 1: "
            "its steps count from 0, so step k is the (k + 1)-th it reads.",
            perturb=_step_moved(1),
        ),
        Mistake(
            "this is the state one step early, after the backward direction's step k - 1: "
            "its steps count from 0, and the first one's names have no suffix.",
            perturb=_step_moved(-1),
        ),
        Mistake(
            "`cond_0` does not exist: TensorFlow gives the first op of a name no suffix.",
            perturb=raising("cond_0"), raises=says("cond_0"),
        ),
        Mistake(
            "the placeholders are not both fed: session.run needs the batch for 'inputs' and "
            "its lengths for 'lengths'.",
            perturb=raising(NOT_FED), raises=says(NOT_FED),
        ),
        not_from_api(
            f"the state's values {NOT_FETCHED}: the exercise is to read the backward "
            "direction's state from the session by its names, and these numbers are not "
            "what it returned (a recomputation from the weights).", NOT_FETCHED),
    ),
)


# --- bidirectional_outputs: a bidirectional LSTM's outputs over a padded batch (by hand) -------


def _bidi_padded_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
                      rows: Sequence[str], padding: str) -> BidiPaddedTrial:
    return _bidi_trial(rng, *_padded(rng, B, T, D, rows, padding), H)


#: every kind of row with noise padding (the trial the probe changes); B = 1 with padding;
#: two short rows of zero padding, T unlike the others'. One (D, H), D != H: one kept graph
#: (building one costs 0.3-0.4 s, most of a notebook's check; the batch and T are fed)
BIDI_OUTPUT_DESIGNS = (
    {"B": 4, "T": 5, "D": 3, "H": 2, "rows": ("full", "one", "zero", "short"),
     "padding": "noise"},
    {"B": 1, "T": 4, "D": 3, "H": 2, "rows": ("short",), "padding": "zeros"},
    {"B": 3, "T": 6, "D": 3, "H": 2, "rows": ("short", "full", "short"), "padding": "zeros"},
)


def _bidi_outputs_oracle(case: BidiPaddedTrial) -> np.ndarray:
    """The real ``bidirectional_dynamic_rnn`` of two BasicLSTMCell(H) with
    ``sequence_length``, run eagerly (no graph to build for five trials): its two outputs
    concatenated along the last axis, forward first (B, T, 2H)."""
    tf = tensorflow()
    v1, rc = tf.compat.v1, tf.compat.v1.nn.rnn_cell
    _eager_cells()
    x = tf.constant(np.asarray(case["inputs"], np.float32))  # (B, T, D)
    lengths = tf.constant(np.asarray(case["lengths"], np.int32))  # (B,)
    cells = []
    for kernel, bias in ((case["kernel_fw"], case["bias_fw"]),
                         (case["kernel_bw"], case["bias_bw"])):
        cell = rc.BasicLSTMCell(case["H"])
        cell.build((None, case["D"]))  # the variables a first call makes
        cells.append(_loaded(cell, kernel, bias))
    both, _ = v1.nn.bidirectional_dynamic_rnn(*cells, x, sequence_length=lengths,
                                               dtype=tf.float32)
    return tf.concat(both, axis=2).numpy()  # (B, T, 2H)


def _bidi_outputs_ref(case: Trial) -> np.ndarray:
    """Forward: the run with lengths; backward: the same run on the batch reversed within
    its lengths, its outputs reversed back."""
    lengths = case["lengths"]
    forward = _ref_run({**case, "kernel": case["kernel_fw"], "bias": case["bias_fw"],
                        "forget_bias": 1.0})[0]  # (B, T, H)
    backward = _ref_run({**case, "inputs": ref.reverse_within(case["inputs"], lengths),
                         "kernel": case["kernel_bw"], "bias": case["bias_bw"],
                         "forget_bias": 1.0})[0]  # (B, T, H), in the order it reads
    return np.concatenate([forward, ref.reverse_within(backward, lengths)], axis=2)


def _halves(case: Trial, both: Any) -> tuple[np.ndarray, np.ndarray]:
    """(forward (B, T, H), backward (B, T, H)) of an answer (B, T, 2H)."""
    both = np.asarray(both, np.float32)
    return both[..., :case["H"]], both[..., case["H"]:]


def _backward_changed(change: Callable[[Trial, np.ndarray], np.ndarray]
                      ) -> Callable[[Trial, Any], np.ndarray]:
    """after=: the right answer with its backward half changed by ``change(case, half)``."""
    def after(case: Trial, right: Any) -> np.ndarray:
        forward, backward = _halves(case, right)
        return np.concatenate([forward, change(case, backward)], axis=2)

    return after


def _with_flipped_rows(case: Trial) -> Trial:
    """perturb=: the batch twice, its second copy holding the rows whose reversal WITHIN
    their lengths is the padded row reversed whole (the padding first): the right answer's
    backward half there is what a backward direction fed ``np.flip`` reads."""
    inputs, lengths = np.asarray(case["inputs"]), np.asarray(case["lengths"])
    flipped = _reversed_within(np.flip(inputs, axis=1), lengths)
    return {**case, "B": 2 * case["B"], "inputs": np.concatenate([inputs, flipped]),
            "lengths": np.concatenate([lengths, lengths])}


def _flipped_back(case: Trial, right: Any) -> np.ndarray:
    """after= of :func:`_with_flipped_rows`: the forward half of the first copy, and the
    backward outputs of the second run on the flipped batch, flipped back whole."""
    B, lengths = case["B"], np.asarray(case["lengths"])
    forward, backward = _halves(case, right)
    read = _reversed_within(backward[B:], lengths)  # in the order the direction read
    return np.concatenate([forward[:B], np.flip(read, axis=1)], axis=2)


def _last_repeated(case: Trial, half: np.ndarray, at: Callable[[int], int]) -> np.ndarray:
    """``half`` (B, T, H) with each row's output at step ``at(n)`` repeated past its length
    ``n`` (zeros stay for a row of length 0)."""
    half = np.array(half)
    for b, n in enumerate(np.asarray(case["lengths"])):
        if n:
            half[b, n:] = half[b, at(n)]
    return half


def _repeated_both(case: Trial, right: Any) -> np.ndarray:
    """after=: past each length, each direction's last output again (the state carried
    through the padding, its h output there): the forward one's at step n - 1, the backward
    one's at step 0 (the last it computes)."""
    forward, backward = _halves(case, right)
    return np.concatenate([_last_repeated(case, forward, lambda n: n - 1),
                           _last_repeated(case, backward, lambda n: 0)], axis=2)


bidirectional_outputs = Exercise[BidiPaddedTrial](
    name="bidirectional_outputs",
    task="(B, T, 2H): the outputs of bidirectional_dynamic_rnn with sequence_length, "
         "forward then backward, both in the input's time order",
    make_case=_bidi_padded_case,
    designs=BIDI_OUTPUT_DESIGNS,
    call=lambda fn, c: fn(c["inputs"], c["lengths"], c["kernel_fw"], c["bias_fw"],
                          c["kernel_bw"], c["bias_bw"]),
    oracle=_bidi_outputs_oracle,
    reference=_bidi_outputs_ref,
    blocks=("forward", "backward"),
    probes=(PADDING_PROBE, Probe("inputs", "row")),
    mistakes=(
        Mistake(
            "the directions are swapped: the outputs hold the forward direction's first, "
            "then the backward direction's.",
            after=lambda c, right: np.concatenate(_halves(c, right)[::-1], axis=2),
        ),
        Mistake(
            "the backward direction read the padding first: the padded batch was reversed "
            "whole; each row must be reversed within its own length, its padding left "
            "where it was.",
            perturb=_with_flipped_rows, after=_flipped_back,
        ),
        Mistake(
            "the backward outputs are in reversed time order, the order that direction "
            "read: bidirectional_dynamic_rnn reverses them back within each row's length, "
            "so that step t of both halves belongs to input step t.",
            after=_backward_changed(lambda c, half: _reversed_within(half, c["lengths"])),
        ),
        Mistake(
            "the outputs run one step past each row's length: a row of length n has valid "
            "steps 0 to n - 1 in both directions, and zeros from step n on.",
            perturb=ONE_MORE,
        ),
        Mistake(
            "the outputs stop one step early: a row of length n has n valid steps, the "
            "last of them step n - 1, in both directions.",
            perturb=ONE_LESS,
        ),
        Mistake(
            "the outputs past each row's length are not zeros: they repeat each direction's "
            "last output; the state is copied through the padding, but both directions "
            "output zeros there.",
            after=_repeated_both,
        ),
    ),
)


CHAPTER = Chapter(7, "07-final-state", [
    final_state, padded_outputs, reverse_within_lengths, stacked_final_state,
    run_with_lengths, keras_final_state, backward_state_by_name, bidirectional_outputs,
], keras3=False,  # TF1's cells and tf.keras (tf-keras): never Keras 3
    warm=("tf.keras",))
check = CHAPTER.check
