"""Chapter 6 (GRU layouts: TF1, Keras, PyTorch): exercises and their checks.

The question: why does the "same" GRU give different numbers in TensorFlow 1, Keras and
PyTorch, and how do trained weights move from one to another? The exercises:

- ``keras_gru_blocks`` (by hand): Keras' kernel columns z, r, h~ as (r, z, cand);
- ``fresh_gru_step`` (by hand): one step of a freshly built TF1 ``GRUCell`` (gates bias
  1.0, r applied to h before the candidate's matmul);
- ``keras_gru_step`` (by hand): one step of Keras 3's default ``GRU`` (``reset_after=True``,
  two bias rows, r applied after the matmul);
- ``keras_from_tf1_gru`` (by hand): TF1 GRUCell weights to Keras ``GRU(reset_after=False)``,
  the port proven by running both real cells over a sequence;
- ``torch_from_keras_gru`` (by hand): Keras ``reset_after=True`` weights to PyTorch's
  ``nn.GRU`` layout (rows r, z, n, transposed, two biases);
- ``gru_gates`` (API): step t's r and z fetched by graph name from a live session over TF1's
  GRUCell unrolled by ``static_rnn``;
- ``keras_gru_from_session`` (API): a Keras GRU built from the TF1 variables read in gru_gates'
  live session, run over the inputs: TF1's outputs (the oracle runs ``dynamic_rnn``).

Every step exercise's case says its layout (``form``): ``"tf1"`` (``gates_kernel`` (D + H, 2H)
blocks r, z, ``gates_bias``, ``cand_kernel`` (D + H, H), ``cand_bias``), ``"keras_after"`` and
``"keras_before"`` (``kernel`` (D, 3H), ``recurrent_kernel`` (H, 3H), ``bias`` (2, 3H) or
(3H,), blocks z, r, h~). The oracles run the real cell of the case's form, so a mistake is the
right answer on a case moved to another form or with blocks changed (``perturb=``): the learner
release, which has no reference, names the same mistakes. The layout conversions those
perturbations need are written here in NumPy (learner side), as Chapter 3's
:func:`~rnnbook.checks.common.tf1_to_keras_weights` is: ``tests/test_ch06.py`` holds them to
:mod:`rnnbook.reference`'s.

Notation (book/notation.md): ``B`` batch, ``T`` time, ``D`` input depth, ``H`` units; r reset
gate, z update gate (TF1's ``u``), candidate h~ (``cand``); new h = z * h + (1 - z) * h~.
"""
from __future__ import annotations

import functools
import importlib
from typing import Any, Callable, NotRequired, Sequence, TypedDict

import numpy as np

from rnnbook import oracles
from rnnbook import reference as ref
from rnnbook.checks.ch02 import (  # Chapter 2 asks for a step and a session the same way
    NOT_FETCHED,
    _at_step,
    _fetched,
    _logit,
    _with_session,  # (TensorFlow's errors, short)
)
from rnnbook.checks.common import Trial, names_split_0, not_from_api, raising, says
from rnnbook.diagnose import Pin, Probe, Without
from rnnbook.exercise import Chapter, Exercise, Mistake, normal
from rnnbook.oracles import (
    graph_bytes,
    graph_from_bytes,
    gru_cell,
    load_weights,
    quick_session,
    run_keras_gru,
    run_tf1_gru,
    tensorflow,
)

TF1_KEYS = ("gates_kernel", "gates_bias", "cand_kernel", "cand_bias")
KERAS_KEYS = ("kernel", "recurrent_kernel", "bias")
#: a bias so large that sigmoid gives 1.0 in float32: a gate held open
OPEN = np.float32(40.0)


class GruTrial(TypedDict):
    """A GRU trial of every exercise but keras_gru_blocks and torch_from_keras_gru, in the
    layout ``form`` names: TF1's four weights, or Keras' three (a mistake's case moved to
    another form holds both). fresh_gru_step and keras_gru_step take one step from ``x``;
    keras_from_tf1_gru runs ``inputs`` (no ``x``); gru_gates and keras_gru_from_session run
    the session's graph from the zero state (gru_gates at step ``t``)."""

    B: int
    D: int
    H: int
    form: str  # "tf1", "keras_after" (reset_after=True) or "keras_before"
    x: NotRequired[np.ndarray]  # (B, D): one step (fresh_gru_step, keras_gru_step)
    h: np.ndarray  # (B, H): the state the step or the run starts from
    gates_kernel: NotRequired[np.ndarray]  # (D + H, 2H): r, z ("tf1")
    cand_kernel: NotRequired[np.ndarray]  # (D + H, H)
    gates_bias: NotRequired[np.ndarray]  # (2H,)
    cand_bias: NotRequired[np.ndarray]  # (H,)
    kernel: NotRequired[np.ndarray]  # (D, 3H): z, r, h~ (Keras' forms)
    recurrent_kernel: NotRequired[np.ndarray]  # (H, 3H)
    bias: NotRequired[np.ndarray]  # (2, 3H): input row, state row; (3H,) "keras_before"
    T: NotRequired[int]  # a run (keras_from_tf1_gru, gru_gates, keras_gru_from_session)
    inputs: NotRequired[np.ndarray]  # (B, T, D)
    t: NotRequired[int]  # gru_gates' step


class BlocksTrial(TypedDict):
    """keras_gru_blocks' trial: a Keras GRU kernel or recurrent kernel."""

    rows: int  # D or H
    H: int
    kernel: np.ndarray  # (rows, 3H): z, r, h~


class TorchTrial(TypedDict):
    """torch_from_keras_gru's trial: Keras reset_after=True weights, and inputs to run an answer's on."""

    D: int
    H: int
    kernel: np.ndarray  # (D, 3H): z, r, h~
    recurrent_kernel: np.ndarray  # (H, 3H)
    bias: np.ndarray  # (2, 3H)
    inputs: np.ndarray  # (B, T, D)
    h0: np.ndarray  # (B, H)


#: a GRU answer of several parts: weights, or gates
Parts = tuple[np.ndarray, ...]


# --- Layouts, learner side (NumPy only) -------------------------------------------------------


def blocks(a: np.ndarray, k: int, axis: int = -1) -> list[np.ndarray]:
    """The ``k`` equal column blocks of ``a`` (a list)."""
    return np.split(np.asarray(a), k, axis=axis)


def tf1_to_keras(gates_kernel: np.ndarray, gates_bias: np.ndarray, cand_kernel: np.ndarray,
                 cand_bias: np.ndarray,
                 depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keras ``GRU(reset_after=False)`` weights for TF1 GRUCell's: blocks r, z + candidate laid
    out z, r, h~, rows split at ``depth``. The learner side's
    :func:`rnnbook.reference.keras_gru_from_tf1`."""
    r, z = blocks(gates_kernel, 2)
    kernel = np.concatenate([z, r, cand_kernel], axis=1)  # (D + H, 3H)
    b_r, b_z = blocks(gates_bias, 2)
    return kernel[:depth], kernel[depth:], np.concatenate([b_z, b_r, cand_bias])


def keras_to_torch(kernel: np.ndarray, recurrent_kernel: np.ndarray,
                   bias: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch ``nn.GRU`` weights for Keras' ``reset_after=True`` ones: columns z, r, h~ to rows
    r, z, n, transposed, bias's two rows as ``bias_ih`` and ``bias_hh``. The learner side's
    :func:`rnnbook.reference.torch_gru_from_keras`."""
    def move(a):
        z, r, h = blocks(a, 3)
        return np.concatenate([r, z, h], axis=-1)
    bias = np.asarray(bias)
    return move(kernel).T, move(recurrent_kernel).T, move(bias[0]), move(bias[1])


def _weights(case: Trial) -> list[np.ndarray]:
    keys = TF1_KEYS if case["form"] == "tf1" else KERAS_KEYS
    return [case[k] for k in keys]


def _tf1(case: Trial) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A ``"tf1"`` case's :data:`TF1_KEYS`, a tuple of four (mypy counts them)."""
    return (case["gates_kernel"], case["gates_bias"],
            case["cand_kernel"], case["cand_bias"])


def _keras(case: Trial) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A Keras case's :data:`KERAS_KEYS`, a tuple of three (mypy counts them)."""
    return case["kernel"], case["recurrent_kernel"], case["bias"]


def _as_keras_after(case: GruTrial) -> GruTrial:
    """A TF1 case as the Keras ``reset_after=True`` case of the same weights (bias row 1 zero):
    what TF1's cell computes with r applied AFTER the candidate's matmul."""
    kernel, recurrent, bias = tf1_to_keras(*_tf1(case), case["D"])
    return {**case, "form": "keras_after", "kernel": kernel, "recurrent_kernel": recurrent,
            "bias": np.stack([bias, np.zeros_like(bias)])}  # (2, 3H)


def _as_keras_before(case: GruTrial) -> GruTrial:
    """A Keras ``reset_after=True`` case as ``reset_after=False`` with the two bias rows summed:
    r applied to h BEFORE the candidate's matmul."""
    return {**case, "form": "keras_before", "bias": case["bias"][0] + case["bias"][1]}


def _block_changed(case: Trial, key: str, k: int, n: int,
                   change: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``case[key]``'s block ``k`` of ``n`` (columns; a bias's last axis) set to
    ``change(block)``."""
    parts = blocks(case[key], n)
    parts[k] = change(parts[k])
    return np.concatenate(parts, axis=-1)


def _blocks_swapped(case: Trial, key: str, n: int, i: int, j: int) -> np.ndarray:
    parts = blocks(case[key], n)
    parts[i], parts[j] = parts[j], parts[i]
    return np.concatenate(parts, axis=-1)


def _gates_swapped(case: Trial) -> Trial:
    """r and z swapped in the case's own layout (TF1's first two blocks, Keras' first two)."""
    if case["form"] == "tf1":
        return {**case, **{k: _blocks_swapped(case, k, 2, 0, 1)
                           for k in ("gates_kernel", "gates_bias")}}
    return {**case, **{k: _blocks_swapped(case, k, 3, 0, 1) for k in KERAS_KEYS}}


def _z_flipped(case: Trial) -> Trial:
    """z's pre-activation negated: sigmoid(-a) = 1 - sigmoid(a), so z and 1 - z trade places."""
    if case["form"] == "tf1":
        return {**case, **{k: _block_changed(case, k, 1, 2, np.negative)
                           for k in ("gates_kernel", "gates_bias")}}
    return {**case, **{k: _block_changed(case, k, 0, 3, np.negative) for k in KERAS_KEYS}}


# --- The real cells: oracles for every form ---------------------------------------------------


def _step_oracle(case: GruTrial) -> np.ndarray:
    """h' (B, H) after one step of the real cell of ``case["form"]``."""
    if case["form"] == "tf1":
        return run_tf1_gru(case["x"], case["h"], *_tf1(case), mode="step")[1]
    after = case["form"] == "keras_after"
    return run_keras_gru(case["x"][:, None], _weights(case), case["h"], reset_after=after)[1]


def _step_reference(case: GruTrial) -> np.ndarray:
    if case["form"] == "tf1":
        return ref.tf1_gru_step(case["x"], case["h"], *_weights(case))
    after = case["form"] == "keras_after"
    return ref.keras_gru_step(case["x"], case["h"], *_keras(case), reset_after=after)


def _step_case(rng: np.random.Generator, B: int, D: int, H: int, form: str,
               fresh: bool = False) -> GruTrial:
    case: GruTrial = {"B": B, "D": D, "H": H, "form": form,
            "x": normal(rng, B, D),  # (B, D)
            "h": normal(rng, B, H)}  # (B, H)
    if form == "tf1":
        case["gates_kernel"] = normal(rng, D + H, 2 * H, scale=0.6)  # (D + H, 2H): r, z
        case["cand_kernel"] = normal(rng, D + H, H, scale=0.6)  # (D + H, H)
        # a fresh cell's biases: gates 1.0, candidate 0 (GRUCell's initialisers)
        case["gates_bias"] = (np.ones(2 * H, np.float32) if fresh
                              else normal(rng, 2 * H, scale=0.6))  # (2H,)
        case["cand_bias"] = np.zeros(H, np.float32) if fresh else normal(rng, H, scale=0.6)
    else:
        case["kernel"] = normal(rng, D, 3 * H, scale=0.6)  # (D, 3H): z, r, h~
        case["recurrent_kernel"] = normal(rng, H, 3 * H, scale=0.6)  # (H, 3H)
        case["bias"] = normal(rng, 2, 3 * H, scale=0.6)  # (2, 3H): input row, state row
    return case


#: B, D and H all different in every trial, and each in two orders: a transposed array or a
#: sum over the wrong axis cannot fit every trial
STEP_SIZES = (dict(B=1, D=3, H=2), dict(B=3, D=2, H=4), dict(B=2, D=4, H=3))


# --- keras_gru_blocks: Keras' kernel, split into its gates -----------------------------------


def _blocks_case(rng: np.random.Generator, rows: int, H: int) -> BlocksTrial:
    return {"rows": rows, "H": H,
            "kernel": normal(rng, rows, 3 * H)}  # (D or H, 3H): z, r, h~


def _blocks_reference(case: BlocksTrial) -> Parts:
    found = ref.split_gates(case["kernel"], ref.GRU_KERAS)
    return found["r"], found["z"], found["h"]


def _blocks_oracle(case: BlocksTrial) -> Parts:
    """The blocks as the real Keras GRU reads them. With a zero recurrent kernel and bias, a
    state of ones and a kernel that keeps one block only, the layer's h' on input x = e_i / 8
    is sigmoid(a) for the z block (h~ = tanh(0) = 0, h' = z * 1), 0.5 + 0.5 * tanh(a) for the
    candidate's (z = 0.5), a = kernel[i] / 8: read back, they name the z and h~ columns; r's
    are the remaining block. (Small inputs keep the inverse functions exact in float32.)"""
    rows, H = case["rows"], case["H"]
    kernel = case["kernel"]
    x = np.eye(rows, dtype=np.float32)[:, None] / 8  # (rows, 1, rows): one step each
    ones = np.ones((rows, H), np.float32)
    rest = [np.zeros((H, 3 * H), np.float32), np.zeros((2, 3 * H), np.float32)]
    read = {}
    for k in range(3):
        only = np.zeros_like(kernel)
        only[:, k * H:(k + 1) * H] = kernel[:, k * H:(k + 1) * H]
        h = np.float64(run_keras_gru(x, [only, *rest], ones)[1])  # (rows, H)
        read[k] = (8 * np.log(h / (1 - h)), 8 * np.arctanh(2 * h - 1))  # as z, as h~
    z = next(k for k in range(3) if np.allclose(read[k][0], kernel[:, k * H:(k + 1) * H],
                                                 rtol=1e-3, atol=1e-4))
    cand = next(k for k in range(3) if k != z and np.allclose(
        read[k][1], kernel[:, k * H:(k + 1) * H], rtol=1e-3, atol=1e-4))
    (r,) = set(range(3)) - {z, cand}
    return tuple(kernel[:, k * H:(k + 1) * H] for k in (r, z, cand))


def _parts_swapped(i: int, j: int) -> Callable[[Trial, list[np.ndarray]], list[np.ndarray]]:
    def after(case: Trial, right: list[np.ndarray]) -> list[np.ndarray]:
        right = list(right)
        right[i], right[j] = right[j], right[i]
        return right
    return after


NOT_FED = "You must feed a value for placeholder tensor 'x'"  # TensorFlow's words


keras_gru_blocks = Exercise[BlocksTrial](
    name="keras_gru_blocks",
    task="(r, z, cand): the three column blocks (rows, H) of a Keras GRU kernel or recurrent "
    "kernel (rows, 3H), in the book's order",
    make_case=_blocks_case,
    call=lambda fn, c: fn(c["kernel"]),
    oracle=_blocks_oracle,
    reference=_blocks_reference,
    parts=("r", "z", "cand"),
    designs=(
        dict(rows=2, H=3),  # rows != H and not a multiple of 3: a split of rows raises
        dict(rows=4, H=2),
        dict(rows=5, H=1),  # H = 1: one column a gate
    ),
    mistakes=(
        Mistake(
            "you read Keras' columns in TF1's and PyTorch's order (r, z, h~): your r "
            "and z are each other's blocks, since Keras' column order is neither "
            "TF1's nor PyTorch's.",
            after=_parts_swapped(0, 1),
        ),
        Mistake(
            "you split the rows: a gate is a block of H columns, every row of the "
            "kernel.",
            perturb=raising("array split does not result in an equal division"),
            raises=says("equal division"),
        ),
        Mistake(
            "the blocks are transposed: Keras right-multiplies its inputs by the "
            "kernel, so each block keeps the kernel's rows and H of its columns, as "
            "it stands.",
            after=lambda c, right: [np.asarray(v).T for v in right],
        ),
    ),
)


# --- fresh_gru_step: one step of a freshly built TF1 GRUCell ---------------------------------


def _fresh_case(rng: np.random.Generator, B: int, D: int, H: int) -> GruTrial:
    return _step_case(rng, B, D, H, form="tf1", fresh=True)


def _held(key: str, k: int, n: int) -> Callable[[GruTrial, float], GruTrial]:
    """A TF1 case with block ``k`` of ``n`` of its bias ``key`` so large that the block's
    squashing gives the end ``end`` of its range (a gate shut or open: a pin's hold)."""
    def hold(case: GruTrial, end: float) -> GruTrial:
        value = OPEN if end > 0 else -OPEN
        return {**case, key: _block_changed(case, key, k, n,  # type: ignore[misc]
                                            lambda b: np.full_like(b, value))}
    return hold


#: TF1's h' = z * h + (1 - z) * h~ is affine in z and in h~ (rnnbook.diagnose.Pin)
TF1_PINS = (Pin("update gate z", _held("gates_bias", 1, 2)),
            Pin("candidate h~", _held("cand_bias", 0, 1), low=-1.0))

fresh_gru_step = Exercise[GruTrial](
    name="fresh_gru_step",
    probes=(Probe("h", "zero"), Probe("x", "row")),
    pins=TF1_PINS,
    task="h' (B, H), one step of a freshly built TF1 GRUCell(H) with these kernels (its biases "
    "at their initial values)",
    make_case=_fresh_case,
    call=lambda fn, c: fn(c["x"], c["h"], c["gates_kernel"], c["cand_kernel"]),
    oracle=_step_oracle,
    reference=_step_reference,
    designs=STEP_SIZES,
    mistakes=(
        Mistake(
            "r and z (TF1's u) are swapped: your r is read from u's block of TF1's "
            "gates kernel and your z from r's.",
            perturb=_gates_swapped,
        ),
        Mistake(
            "z and 1 - z are swapped: in TF1's GRUCell, u (z) is the share of the old "
            "state that is kept, and the rest is the candidate's.",
            perturb=_z_flipped,
        ),
        Mistake(
            "the gates' bias is left at 0: a fresh GRUCell initialises gates/bias to "
            "1.0 (the candidate's bias to 0).",
            perturb=lambda c: {**c, "gates_bias": np.zeros_like(c["gates_bias"])},
        ),
        Mistake(
            "the candidate's bias is 1.0 too: only gates/bias starts at 1.0; candidate/bias "
            "starts at 0.",
            perturb=lambda c: {**c, "cand_bias": np.ones_like(c["cand_bias"])},
        ),
        Mistake(
            "r is applied after the matmul (Keras' reset_after=True): TF1 resets the "
            "state before the candidate's matmul, so r scales what the candidate "
            "kernel reads.",
            perturb=_as_keras_after,
        ),
        Mistake(
            "the reset gate is left out: the candidate reads the state scaled by r, "
            "not the state as it is.",
            perturb=lambda c: {**c, "gates_kernel": _block_changed(c, "gates_kernel", 0, 2,
                                                                  np.zeros_like),
                               "gates_bias": _block_changed(c, "gates_bias", 0, 2,
                                                            lambda b: np.full_like(b, OPEN))},
        ),
    ),
)


# --- keras_gru_step: one step of Keras 3's default GRU (reset_after=True) --------------------


def _keras_case(rng: np.random.Generator, B: int, D: int, H: int) -> GruTrial:
    return _step_case(rng, B, D, H, form="keras_after")


def _bias_changed(
        change: Callable[[np.ndarray, slice], None]) -> Callable[[GruTrial], GruTrial]:
    def perturb(case: GruTrial) -> GruTrial:
        bias = np.array(case["bias"], copy=True)  # (2, 3H)
        H = case["H"]
        change(bias, slice(2 * H, 3 * H))
        return {**case, "bias": bias}
    return perturb


def _rows_summed(bias: np.ndarray, cand: slice) -> None:
    bias[0, cand] += bias[1, cand]
    bias[1, cand] = 0


def _rows_swapped(bias: np.ndarray, cand: slice) -> None:
    bias[0, cand], bias[1, cand] = bias[1, cand].copy(), bias[0, cand].copy()


def _row_1_dropped(bias: np.ndarray, cand: slice) -> None:
    bias[1] = 0


keras_gru_step = Exercise[GruTrial](
    name="keras_gru_step",
    probes=(Probe("h", "zero"), *(Probe("bias", "block", k, 3, f"the {b} block of the bias")
                                   for k, b in enumerate(("z", "r", "h~"))),
            Probe("bias", "zero", said="the bias")),
    task="h' (B, H), one step of Keras 3's GRU(H) with reset_after=True (the default): kernel "
    "(D, 3H), recurrent_kernel (H, 3H), bias (2, 3H)",
    make_case=_keras_case,
    call=lambda fn, c: fn(c["x"], c["h"], c["kernel"], c["recurrent_kernel"], c["bias"]),
    oracle=_step_oracle,
    reference=_step_reference,
    designs=STEP_SIZES,
    mistakes=(
        Mistake(
            "you read Keras' blocks in TF1's and PyTorch's order (r, z, h~): Keras lays out z, "
            "r, h~ in the kernel, the recurrent kernel and both bias rows.",
            perturb=_gates_swapped,
        ),
        Mistake(
            "z and 1 - z are swapped: in Keras, z is the share of the old state that "
            "is kept, and the rest is the candidate's.",
            perturb=_z_flipped,
        ),
        Mistake(
            "r is applied before the matmul (reset_after=False, TF1's form): with "
            "reset_after=True, r scales the state's whole candidate term, after its "
            "matmul and with its bias row.",
            perturb=_as_keras_before,
        ),
        Mistake(
            "bias[1] is left out: there are two bias rows, one for x's matmul and one "
            "for h's, and both count.",
            perturb=_bias_changed(_row_1_dropped),
        ),
        Mistake(
            "the candidate's two biases were added together outside r: the state's "
            "bias row belongs to the term that r scales, in the candidate's block.",
            perturb=_bias_changed(_rows_summed),
        ),
        Mistake(
            "bias's rows are swapped: row 0 goes with x's matmul, row 1 with h's (inside r for "
            "the candidate).",
            perturb=_bias_changed(_rows_swapped),
        ),
    ),
)


# --- keras_from_tf1_gru: TF1 GRUCell weights to Keras (proven by running both) ---------------


def _port_case(rng: np.random.Generator, B: int, T: int, D: int, H: int) -> GruTrial:
    case = _step_case(rng, B, D, H, form="tf1")
    case.pop("x")
    case["T"] = T
    case["inputs"] = normal(rng, B, T, D)  # (B, T, D)
    return case


def _port_oracle(case: GruTrial) -> Parts:
    """The port, proven: the real TF1 GRUCell (dynamic_rnn) and the real Keras GRU
    (reset_after=False) with the ported weights, from the case's h, give the same outputs."""
    port = tf1_to_keras(*_tf1(case), case["D"])
    tf1, _ = run_tf1_gru(case["inputs"], case["h"], *_tf1(case))
    keras, _ = run_keras_gru(case["inputs"], port, case["h"], reset_after=False)
    if not np.allclose(tf1, keras, rtol=1e-4, atol=1e-5):
        raise AssertionError("keras_from_tf1_gru's oracle: the ported Keras GRU differs from "
                             "TF1's GRUCell")
    return port


def _keras_gru_computes(case: GruTrial, weights: Sequence[np.ndarray]) -> np.ndarray:
    """What Keras ``GRU(reset_after=False)`` weights compute (keras_from_tf1_gru's ``computes``): the outputs
    (B, T, H) over the case's inputs from its h, by the equations in NumPy
    (rnnbook.reference) where installed, else by the real layer."""
    w = [np.asarray(v, np.float64) for v in weights]
    if len(w) != 3:
        raise ValueError("three weights")
    try:
        step = ref.gru_cell(ref.keras_gru_step, *w, reset_after=False)
        return ref.unroll(step, case["inputs"], case["h"])[0]
    except ImportError:
        return run_keras_gru(case["inputs"], w, case["h"], reset_after=False)[0]


def _port_reference(case: GruTrial) -> Parts:
    return ref.keras_gru_from_tf1(*_tf1(case), case["D"])


def _each_part(change: Callable[[Trial, np.ndarray], np.ndarray],
               ) -> Callable[[Trial, list[np.ndarray]], list[np.ndarray]]:
    return lambda case, right: [change(case, np.asarray(v)) for v in right]


#: B, T, D, H all different in each trial (no size a learner could take for another)
PORT_SIZES = (dict(B=4, T=5, D=3, H=2), dict(B=1, T=3, D=2, H=4))

keras_from_tf1_gru = Exercise[GruTrial](
    name="keras_from_tf1_gru",
    blocks=("z", "r", "h~"),
    task="(kernel (D, 3H), recurrent_kernel (H, 3H), bias (3H,)) for Keras 3's "
    "GRU(H, reset_after=False)",
    make_case=_port_case,
    designs=PORT_SIZES,
    call=lambda fn, c: fn(c["gates_kernel"], c["gates_bias"], c["cand_kernel"], c["cand_bias"],
                          c["D"]),
    oracle=_port_oracle,
    reference=_port_reference,
    computes=_keras_gru_computes,  # any weights that compute the same function pass
    parts=("kernel", "recurrent_kernel", "bias"),
    mistakes=(
        Mistake(
            "the gate blocks are still in TF1's order (r, u, h~): Keras reads r and z "
            "from each other's blocks (z is TF1's u) in each weight.",
            after=_each_part(lambda c, v: np.concatenate(
                [blocks(v, 3)[k] for k in (1, 0, 2)], axis=-1)),
        ),
        Mistake(
            "kernel and recurrent_kernel are swapped: Keras' kernel holds the rows of "
            "TF1's kernels that multiply x, its recurrent_kernel the rows that "
            "multiply h.",
            after=_parts_swapped(0, 1),
        ),
        Mistake(
            "that bias is reset_after=True's (2, 3H): GRU(reset_after=False), TF1's form, has one "
            "bias (3H,).",
            after=lambda c, right: [*right[:2], np.stack([right[2], np.zeros_like(right[2])])],
        ),
    ),
)


# --- torch_from_keras_gru: Keras (reset_after=True) weights to PyTorch's nn.GRU --------------


def _torch_case(rng: np.random.Generator, D: int, H: int) -> TorchTrial:
    case: TorchTrial = {"D": D, "H": H,
            "kernel": normal(rng, D, 3 * H),  # (D, 3H): z, r, h~
            "recurrent_kernel": normal(rng, H, 3 * H),  # (H, 3H)
            "bias": normal(rng, 2, 3 * H),  # (2, 3H)
            # what an answer computes is run on these (drawn last: the weights are as before)
            "inputs": normal(rng, 3, 4, D),  # (B, T, D)
            "h0": normal(rng, 3, H)}  # (B, H)
    return case


def torch_to_keras(weight_ih: np.ndarray, weight_hh: np.ndarray, bias_ih: np.ndarray,
                   bias_hh: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keras ``reset_after=True`` weights for PyTorch ``nn.GRU``'s: the inverse of
    :func:`keras_to_torch` (a layout move: the same function)."""
    def move(a):
        r, z, h = blocks(a, 3)
        return np.concatenate([z, r, h], axis=-1)
    return (move(np.asarray(weight_ih).T), move(np.asarray(weight_hh).T),
            np.stack([move(bias_ih), move(bias_hh)]))


def _torch_computes(case: TorchTrial, weights: Sequence[np.ndarray]) -> np.ndarray:
    """The outputs (B, T, H) of PyTorch's ``nn.GRU`` with ``weights`` over the case's inputs
    from its h0: its documented equations in NumPy (rnnbook.reference) where installed, else
    the real Keras GRU (reset_after=True, the same equations) on the weights moved back."""
    w = [np.asarray(v, np.float64) for v in weights]
    if len(w) != 4:
        raise ValueError("four weights")
    try:
        step = ref.gru_cell(ref.torch_gru_step, *w)
        return ref.unroll(step, case["inputs"], case["h0"])[0]
    except ImportError:
        return run_keras_gru(case["inputs"], torch_to_keras(*w),
                             case["h0"], reset_after=True)[0]


def _torch_oracle(case: TorchTrial) -> Parts:
    """PyTorch's documented layout (PyTorch is not installed): rows r, z, n, ``W x``, two
    biases; Keras' reset_after=True is the same function (tests/test_reference.py runs the
    real Keras GRU against PyTorch's documented step on these weights)."""
    return keras_to_torch(case["kernel"], case["recurrent_kernel"], case["bias"])


def _torch_reference(case: TorchTrial) -> Parts:
    return ref.torch_gru_from_keras(case["kernel"], case["recurrent_kernel"], case["bias"])


def _rows_order(order: Sequence[int]) -> Callable[[Trial, np.ndarray], np.ndarray]:
    return lambda c, v: np.concatenate([blocks(v, 3, axis=0)[k] for k in order], axis=0)


torch_from_keras_gru = Exercise[TorchTrial](
    name="torch_from_keras_gru",
    task="(weight_ih (3H, D), weight_hh (3H, H), bias_ih (3H,), bias_hh (3H,)) for PyTorch's "
    "nn.GRU",
    make_case=_torch_case,
    designs=(dict(D=3, H=2), dict(D=2, H=4)),  # D != H, both above 1: reshape != transpose
    call=lambda fn, c: fn(c["kernel"], c["recurrent_kernel"], c["bias"]),
    oracle=_torch_oracle,
    reference=_torch_reference,
    source="PyTorch's equations",  # nn.GRU's, as documented, in NumPy (not installed)
    computes=_torch_computes,  # any weights that compute the same (the biases' r, z blocks)
    parts=("weight_ih", "weight_hh", "bias_ih", "bias_hh"),
    weights=(2, 2, 1, 1),
    mistakes=(
        Mistake(
            "the weights are not transposed: Keras stores (D, 3H) and "
            "right-multiplies the input; PyTorch stores (3H, D) and left-multiplies "
            "it.",
            after=lambda c, right: [np.asarray(right[0]).T, np.asarray(right[1]).T,
                                    *right[2:]],
        ),
        Mistake(
            "the blocks are still in Keras' order z, r, h~: PyTorch reads r and z "
            "from each other's rows, in every weight and bias.",
            after=_each_part(lambda c, v: _rows_order((1, 0, 2))(c, v)),
        ),
        Mistake(
            "the two biases were summed into one: PyTorch applies r to the state's "
            "candidate term with its own bias, so the candidate's two bias blocks "
            "cannot be merged.",
            after=lambda c, right: [*right[:2], np.asarray(right[2]) + right[3],
                                    np.zeros_like(np.asarray(right[3]))],
        ),
        Mistake(
            "the weights are reshaped, not transposed: reshape keeps the memory order "
            "and scrambles the gates.",
            after=lambda c, right: [
                np.asarray(right[0]).T.reshape(3 * c["H"], c["D"]),
                np.asarray(right[1]).T.reshape(3 * c["H"], c["H"]), *right[2:]],
        ),
    ),
)


# --- Live sessions for the API exercises ------------------------------------------------------

#: The one graph of the API exercises (gru_gates, keras_gru_from_session): built once per
#: process (each grading child pays for it once, so one shape, not two); a trial only loads
#: its weights. D, H, T all different; the batch is free (the placeholder's first dimension
#: is None).
GRAPH = dict(T=4, D=2, H=3)



def _gru_graph(D: int, H: int, T: int) -> Any:
    """TF1's GRUCell(H) unrolled by ``static_rnn`` over the placeholder ``x`` (None, T, D) from
    the zero state: ops ``rnn/gru_cell/split``, ``split_1``, ... Returns the graph. Imported
    from :data:`PREBUILT` where the grader's zygote built it (the same graph, op for op)."""
    if (D, H, T) in PREBUILT:
        return graph_from_bytes(PREBUILT[D, H, T])
    tf = tensorflow()
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [None, T, D], name="x")  # (B, T, D)
        v1.nn.static_rnn(gru_cell()(H), tf.unstack(x, axis=1), dtype=tf.float32)
    return graph


#: ``{(D, H, T): MetaGraphDef bytes}``: the API exercises' graph built in another process. The
#: grader's TensorFlow zygote fills it with :func:`prebuild`'s result before it forks (as
#: Chapter 4's), so each grading child imports the graph (0.03 s) instead of unrolling a
#: GRUCell T times (0.15 s); empty elsewhere (a notebook builds).
PREBUILT: dict[tuple[int, int, int], bytes] = {}


def prebuild() -> dict[tuple[int, int, int], bytes]:
    """``{(D, H, T): bytes}``: :data:`GRAPH`'s graph, serialised."""
    key = (GRAPH["D"], GRAPH["H"], GRAPH["T"])
    return {key: graph_bytes(_gru_graph(*key))}


def _tf1_weights(case: GruTrial) -> dict[str, np.ndarray]:
    return {"gates/kernel": case["gates_kernel"], "gates/bias": case["gates_bias"],
            "candidate/kernel": case["cand_kernel"], "candidate/bias": case["cand_bias"]}


def live_session(case: GruTrial) -> Any:
    """A ``tf.compat.v1.Session`` over TF1's GRUCell graph for the case's D, H, T (built once
    per shape and process, :func:`rnnbook.oracles.live_session`), with the case's weights
    loaded into its variables."""
    key = (case["D"], case["H"], case["T"])
    return oracles.live_session(("ch06", *key), lambda: _gru_graph(*key), _tf1_weights(case))


def _session_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
                  t: int | None = None) -> GruTrial:
    case = _port_case(rng, B, T, D, H)
    case["h"] = np.zeros((B, H), np.float32)  # the graphs start from the zero state
    if t is not None:  # gru_gates' step
        case["t"] = t
    return case


# --- gru_gates: step t's r and z by graph name -----------------------------------------------


@functools.lru_cache(maxsize=None)
def gate_tensors(D: int, H: int, T: int) -> tuple[tuple[str, str], ...]:
    """For GRUCell unrolled by ``static_rnn``: per step, ``(r name, z name)``, found by their
    roles: z is the split output that ``1 - z`` (a Sub) reads; r the other."""
    graph = _gru_graph(D, H, T)
    splits = [op for op in graph.get_operations() if op.type == "Split"]
    assert len(splits) == T, [op.name for op in splits]
    found = []
    for op in splits:
        kinds = [{c.type for c in out.consumers()} for out in op.outputs]
        z = next(k for k, types in enumerate(kinds) if "Sub" in types)
        found.append((op.outputs[1 - z].name, op.outputs[z].name))
    return tuple(found)


@functools.lru_cache(maxsize=None)
def _oracle_session(D: int, H: int, T: int) -> tuple[Any, Any]:
    """The oracle's own session over TF1's GRUCell graph (static_rnn, zero state) for one
    shape, and its variables: built once per shape and process, apart from the learner's
    (:func:`live_session`), which the learner's function may close or add ops to."""
    graph = _gru_graph(D, H, T)
    return quick_session(graph), graph.get_collection("variables")


def _gates_oracle(case: GruTrial) -> Parts:
    """Fetch step t's r and z (found by their roles) from the oracle's own real graph with the
    case's weights loaded, fed the case's inputs."""
    names = gate_tensors(case["D"], case["H"], case["T"])[case["t"]]
    session, variables = _oracle_session(case["D"], case["H"], case["T"])
    load_weights(session, variables, _tf1_weights(case))
    inputs = np.asarray(case["inputs"], np.float32)  # (B, T, D)
    return tuple(session.run(list(names), {"x:0": inputs}))


def _gates_reference(case: GruTrial) -> Parts:
    """r and z at step t (instructor-side): the run up to t, then that step's gates."""
    weights, h = _weights(case), case["h"]
    if case["t"]:
        _, h = ref.unroll(ref.gru_cell(ref.tf1_gru_step, *weights),
                          case["inputs"][:, :case["t"]], h)
    x = case["inputs"][:, case["t"]]
    gates = ref.sigmoid(np.concatenate([x, h], axis=1) @ weights[0] + weights[1])
    found = ref.split_gates(gates, ref.GRU_TF1)
    return found["r"], found["z"]


gru_gates = Exercise[GruTrial](
    name="gru_gates",
    task="(r, z): two arrays (B, H), the reset and update gates' values at step t, fetched "
    "from the session with `inputs` fed to the placeholder 'x:0'",
    make_case=_session_case,
    call=lambda fn, c: _fetched(fn, live_session(c), (c["inputs"], c["t"]), ("r", "z"),
                                "the gates' values"),
    oracle=_gates_oracle,
    reference=_gates_reference,
    parts=("r", "z"),
    by_hand=False,
    # the first step (no suffix), middle ones, the last (no next step); B apart from D, H, T
    designs=(dict(GRAPH, B=1, t=0), dict(GRAPH, B=5, t=1), dict(GRAPH, B=5, t=2),
             dict(GRAPH, B=1, t=3)),
    mistakes=(
        Mistake(
            "r and z are swapped: your r is the split's output that is u (z), and "
            "your z is r.",
            after=_parts_swapped(0, 1),
        ),
        Mistake(
            "these are the pre-activations (the Sigmoid's input): GRUCell applies the sigmoid "
            "BEFORE its split, so the split's outputs are the gates' values.",
            after=lambda c, right: [_logit(v) for v in right],
        ),
        Mistake(
            "you fetched the next step's split: your values are one step late.",
            perturb=_at_step(lambda c: c["t"] + 1),
        ),
        Mistake(
            "you fetched step 0's split (`split`) whatever t is: each step has its "
            "own split op.",
            perturb=_at_step(lambda c: 0),
        ),
        Mistake(
            "`split_0` does not exist: TensorFlow gives the first op of a name no "
            "suffix.",
            perturb=raising("split_0"),
            raises=names_split_0,
        ),
        Mistake(
            "the placeholder 'x:0' is not fed: session.run needs the inputs for it.",
            perturb=raising(NOT_FED), raises=says(NOT_FED),
        ),
        not_from_api(
            f"the gates' values {NOT_FETCHED}: the exercise is to read step t's r and z "
            "from the session by their names, and these numbers are not what it returned "
            "(a recomputation from the weights).", NOT_FETCHED),
    ),
)


# --- keras_gru_from_session: a Keras GRU from a live TF1 session -----------------------------


def _sequence_oracle(case: GruTrial) -> np.ndarray:
    """TF1's real GRUCell over the inputs (dynamic_rnn, zero state); a case moved to Keras'
    reset_after=True form (a mistake's) runs the real Keras GRU instead."""
    if case.get("form") == "keras_after":
        return run_keras_gru(case["inputs"], _weights(case), None)[0]
    return run_tf1_gru(case["inputs"], case["h"], *_tf1(case))[0]


def _sequence_reference(case: GruTrial) -> np.ndarray:
    if case.get("form") == "keras_after":
        step = ref.gru_cell(ref.keras_gru_step, *_weights(case))
    else:
        step = ref.gru_cell(ref.tf1_gru_step, *_weights(case))
    return ref.unroll(step, case["inputs"], case["h"])[0]


#: keras_gru_from_session's answer must come from a Keras 3 GRU built in the learner's function (issue 35: an
#: answer that returned TF1's own outputs, or a NumPy unroll, earned full marks)
NO_LAYER = "no Keras 3 GRU layer was built"
NOT_ITS_OUTPUTS = "are not the outputs of the Keras 3 GRU built"


@functools.lru_cache(maxsize=None)
def _gru_cell_class() -> Any:
    """Keras 3's ``GRUCell`` (every Keras 3 GRU layer holds one; ``RNN(GRUCell(...))`` too)."""
    return importlib.import_module("keras").layers.GRUCell


def _built_gru_cells(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[Any]]:
    """``fn(*args)`` and the Keras 3 GRU cells constructed while it ran (the class's
    ``__init__`` noted for the call's length)."""
    cls = _gru_cell_class()
    made: list[Any] = []
    init = cls.__init__

    def noting(self, *a, **k):
        init(self, *a, **k)
        made.append(self)

    cls.__init__ = noting
    try:
        result = fn(*args)
    finally:
        cls.__init__ = init
    return result, made


def _from_built_layer(fn: Callable[..., Any], case: GruTrial) -> Any:
    """keras_gru_from_session's call: the learner's outputs, provided a Keras 3 GRU was built
    in the function and, run again here over the inputs from the zero state, gives those
    outputs (so the layer holds weights that compute them). Outputs of another shape
    (time-major) are left to the comparison with TF1's, which names them."""
    inputs = np.array(case["inputs"], copy=True)  # as given (the function may change its own)
    outputs, cells = _built_gru_cells(
        lambda: _with_session(fn, live_session(case), case["inputs"]))
    cells = [cell for cell in cells if cell.built]
    if outputs is None:  # "returns nothing", said as for every exercise
        return None
    if not cells:
        raise TypeError(f"{NO_LAYER} in keras_gru_from_session: its outputs must come from a "
                        "Keras 3 GRU holding the session's weights (a tf.keras layer is Keras "
                        "2's)")
    got = np.asarray(outputs, np.float64)
    keras = importlib.import_module("keras")
    for cell in reversed(cells):
        again = np.asarray(keras.layers.RNN(cell, return_sequences=True)(inputs))
        if again.shape != got.shape or np.allclose(again, got, rtol=1e-4, atol=1e-5):
            return outputs
    raise ValueError(f"the outputs returned {NOT_ITS_OUTPUTS} in keras_gru_from_session (run "
                     "again over the inputs from the zero state, it gives others)")


keras_gru_from_session = Exercise[GruTrial](
    name="keras_gru_from_session",
    task="outputs (B, T, H) of a Keras 3 GRU holding the weights of the session's TF1 "
    "GRUCell (read by their names), run over `inputs`: equal to TF1's",
    make_case=_session_case,
    call=_from_built_layer,
    oracle=_sequence_oracle,
    reference=_sequence_reference,
    by_hand=False,
    # no probes (each would build another layer in the child): the weights it may leave out
    without=tuple(Without(key, f"the session's `{name}`") for key, name in zip(
        TF1_KEYS, ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias"),
        strict=True)),
    # one trial: each builds and runs a Keras layer in the grading child (the chapter's cost),
    # and one shows every mistake; B apart from D, H, T
    designs=(dict(GRAPH, B=5),),
    mistakes=(
        Mistake(
            "the gate blocks are still in TF1's order (r, u, h~): Keras reads r and z "
            "from each other's blocks in the kernel, the recurrent kernel and the "
            "bias.",
            perturb=_gates_swapped,
        ),
        Mistake(
            "the layer has reset_after=True (Keras' default): TF1's GRUCell resets h "
            "before the candidate's matmul, and that layer resets after it.",
            perturb=_as_keras_after,
        ),
        Mistake(
            "the outputs are time-major (T, B, H): a Keras GRU's outputs are (B, T, H).",
            after=lambda c, right: np.swapaxes(right, 0, 1),
        ),
        Mistake(
            f"{NO_LAYER} in the function: the exercise is to move the weights into a Keras "
            "layer, so the outputs must come from a Keras 3 GRU holding them, not from the "
            "session's own outputs or a NumPy loop.",
            perturb=raising(NO_LAYER), raises=says(NO_LAYER),
        ),
        Mistake(
            f"the outputs returned {NOT_ITS_OUTPUTS} in the function: return what that "
            "layer gives over `inputs`.",
            perturb=raising(NOT_ITS_OUTPUTS), raises=says(NOT_ITS_OUTPUTS),
        ),
    ),
)


CHAPTER = Chapter(6, "06-gru-layouts", [
    keras_gru_blocks, fresh_gru_step, keras_gru_step, keras_from_tf1_gru, torch_from_keras_gru,
    gru_gates, keras_gru_from_session,
])
check = CHAPTER.check
