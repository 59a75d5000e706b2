"""Chapter 3 (c_state and m_state, LSTMCell's full step, Keras 3 and PyTorch): exercises and checks.

Six exercises in two ramps. The state: ``split_state`` slices a concatenated state by hand,
``step_lstm_cell`` drives a real ``LSTMCell`` (tuple or concatenated state, with a projection)
and takes its new state apart, ``lstm_cell_step`` recomputes a step with every option by hand.
The same LSTM elsewhere: ``keras_from_pytorch`` ports PyTorch's weights to Keras 3,
``keras_from_tf1`` ports a TF1 cell's, and ``port_to_keras`` moves a real TF1 ``LSTMCell`` (its
variables, its ``forget_bias``, its state in either form) into what a Keras 3 ``LSTM`` needs.

Oracles: TF1's real ``LSTMCell`` (:func:`rnnbook.oracles.run_tf1`) and Keras 3's real ``LSTM``
(:func:`rnnbook.oracles.run_keras_lstm`); the ports are proven inside their oracles (the real Keras
3 LSTM with the expected weights and state must reproduce the real TF1 cell on a random sequence,
or the oracle raises). ``reference`` is :mod:`rnnbook.reference`, touched only inside functions
(it does not ship to learners). Each mistake is the right answer on a changed case or changed
after (``Mistake(perturb=, after=)``: the gate blocks reordered, ``forget_bias`` 0 or 1, a
peephole fed through extra input columns, m read before the projection), so the learner release,
which computes it with TensorFlow's oracle, names it too.

API exercises (step_lstm_cell, port_to_keras) get real TF objects that ``call`` builds from
the plain-data case: one cached cell per shape, loaded with the trial's weights, so a trial
costs milliseconds.

Every design below exists to make a known mistake show on every seed: ``P != H`` both ways with
an even ``H + P`` (a halves split neither raises nor passes), clips small enough to bite,
peepholes on, ``forget_bias`` other than 1 (and than 0), both state forms, ``B = 1``, ``D != H``.
Notation (book/notation.md): ``B`` batch, ``T`` time, ``D`` input depth, ``H`` num_units, ``P``
num_proj; TF1 gate order i, j, f, o; Keras 3 and PyTorch i, f, g, o (Keras names g "c").
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NotRequired, Sequence, TypedDict

import numpy as np

from rnnbook import reference as ref
from rnnbook.checks.common import (
    TF1_TO_KERAS,
    Trial,
    api_answer,
    not_from_api,
    reorder_blocks,
    tf1_to_keras_weights,
)
from rnnbook.diagnose import Probe
from rnnbook.exercise import C, Chapter, Exercise, Mistake, normal, right_answer
from rnnbook.oracles import run_keras_lstm, run_tf1, tensorflow
from rnnbook.plaindata import Case, to_plain


class SplitTrial(TypedDict):
    """split_state's trial: a concatenated state [c, m]."""

    B: int
    H: int
    num_proj: int | None  # P
    state: np.ndarray  # (B, H + P): [c, m]


class SequenceTrial(TypedDict):
    """A sequence and a state to prove a port on (keras_from_pytorch, keras_from_tf1,
    port_to_keras)."""

    B: int
    T: int
    D: int
    H: int
    inputs: np.ndarray  # (B, T, D)
    c0: np.ndarray  # (B, H)
    h0: np.ndarray  # (B, H)


class PortTrial(SequenceTrial):
    """keras_from_tf1's and port_to_keras' trial: a TF1 cell's weights, and the sequence."""

    kernel: np.ndarray  # (D + H, 4H), gates i, j, f, o
    bias: np.ndarray  # (4H,)
    forget_bias: float
    state_is_tuple: NotRequired[bool]  # port_to_keras: the state as a tuple, or [c, h]


# The trials of step_lstm_cell and lstm_cell_step (_cell_case: an LSTMCell's options, x, c, m
# and its weights named as its variables are, "projection/kernel" and the peepholes only
# where the cell has them) and keras_from_pytorch (_torch_case) are ``Case``s; their keys
# and shapes are in their ``make_case``s.

#: three Keras 3 LSTM weights: kernel (D, 4H), recurrent_kernel (H, 4H), bias (4H,)
KerasWeights = tuple[np.ndarray, np.ndarray, np.ndarray]

#: the oracle's own cross-check between the TF1 cell and Keras 3 (float32 loops)
AGREE: dict[str, Any] = dict(rtol=1e-4, atol=1e-5)


def _agree(name: str, got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> None:
    for g, w in zip(got, want, strict=True):
        if not np.allclose(g, w, **AGREE):
            raise AssertionError(f"oracle for {name}: Keras 3 does not reproduce the TF1 cell")


def _lstm_cell(H: int, **options: object) -> Callable[[], Any]:
    return lambda: tensorflow().compat.v1.nn.rnn_cell.LSTMCell(H, **options)


def _forget_bias(rng: np.random.Generator, kind: str) -> float:
    """``"default"``: 1.0; ``"other"``: far from 1 and from 0, so that both a missing and a
    hard-coded forget_bias show."""
    if kind == "default":
        return 1.0
    return round(float(rng.uniform(1.6, 2.8) if rng.random() < 0.5 else rng.uniform(-2.0, -0.6)), 2)


def _tf_state_tuple(c: np.ndarray, h: np.ndarray) -> Any:
    return tensorflow().compat.v1.nn.rnn_cell.LSTMStateTuple(c, h)


def _right_on(name: str, perturb: Callable[[Trial], Trial] | None = None,
              after: Callable[..., object] | None = None) -> Callable[[Trial], Any]:
    """A mistake model as a function of the case, for what ``Mistake(perturb=, after=)`` cannot
    say (a variant; a change that needs a right answer first): exercise ``name``'s right answer
    (the reference, or TensorFlow's oracle in the learner release) on ``perturb(case)``, then
    ``after(case, right)``, as :meth:`rnnbook.exercise.Mistake.bound` computes it."""
    def model(case: Trial) -> Any:
        right = to_plain(right_answer(CHAPTER[name])(perturb(case) if perturb else case))
        return after(case, right) if after else right

    return model


def _swapped_parts(_case: Trial, right: Sequence[np.ndarray]) -> Sequence[np.ndarray]:
    """after=: the two parts of a pair answer returned the other way round."""
    return right[::-1]


def _reordered(*weights: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each array's four gate blocks with the 2nd and 3rd swapped (TF1 <-> Keras order)."""
    return tuple(reorder_blocks(np.asarray(w), TF1_TO_KERAS) for w in weights)


# --- split_state: split a concatenated state (by hand) ---------------------------------------


def _split_case(rng: np.random.Generator, proj: str | None) -> SplitTrial:
    """``proj``: ``"wider"`` (P > H), ``"narrower"`` (P < H), both with H + P even, or ``None``."""
    B = int(rng.integers(1, 4))
    if proj == "wider":
        H = int(rng.integers(1, 4))
        P = H + 2 * int(rng.integers(1, 3))
    elif proj == "narrower":
        P = int(rng.integers(1, 3))
        H = P + 2 * int(rng.integers(1, 3))
    else:
        H, P = int(rng.integers(1, 6)), None
    return {"B": B, "H": H, "num_proj": P,
            "state": normal(rng, B, H + (P or H))}  # (B, H + P): [c, m]


def _split_oracle(case: SplitTrial) -> tuple[np.ndarray, np.ndarray]:
    """What the real LSTMCell(state_is_tuple=False) itself reads as c_prev and m_prev: its two
    Slice ops, fetched while it runs on the case's concatenated state."""
    H, P = case["H"], case["num_proj"]
    x = np.zeros((case["B"], 1), np.float32)
    cell = _lstm_cell(H, num_proj=P, state_is_tuple=False)
    _, _, c, m = run_tf1(cell, x, case["state"], fetch=["lstm_cell/Slice:0", "lstm_cell/Slice_1:0"])
    return c, m


def _width(case: SplitTrial) -> int:
    return case["state"].shape[1] - case["H"]  # P, or H without a projection


split_state = Exercise[SplitTrial](
    name="split_state",
    task="(c, m): c (B, num_units) and m (B, num_proj or num_units), the parts the cell reads",
    make_case=_split_case,
    designs=({"proj": "wider"}, {"proj": "narrower"}, {"proj": None}),
    call=lambda fn, c: fn(c["state"], c["H"]),
    oracle=_split_oracle,
    reference=lambda c: ref.split_state(c["state"], c["H"]),
    parts=("c", "m"),
    mistakes=(
        Mistake(
            "you read the state as [h, c], Keras' order: TF1 concatenates c first, "
            "then m, so your c and m are each other's columns.",
            lambda c: (c["state"][:, _width(c):], c["state"][:, :_width(c)]),
        ),
        Mistake(
            "c and m are swapped: your c is the state's second part, and the pair is "
            "returned c first.",
            after=_swapped_parts,
        ),
        Mistake(
            "you cut the state into two equal halves: with num_proj, c has num_units columns and "
            "m has num_proj, so cut at column num_units, not in the middle.",
            lambda c: tuple(np.split(c["state"], 2, axis=1)),
        ),
        Mistake(
            "m got num_units columns: m is everything after c, which is num_proj "
            "columns when the cell projects.",
            after=lambda c, right: (right[0], c["state"][:, c["H"]: 2 * c["H"]]),
        ),
    ),
)


# --- Shared by step_lstm_cell and lstm_cell_step: LSTMCell's weights and options -------------

PEEPHOLES = ("w_i_diag", "w_f_diag", "w_o_diag")


def _cell_case(rng: np.random.Generator, B: int, D: int, H: int, P: int | None, peepholes: bool,
               forget_bias: float) -> Case:
    """x, state (c, m) and the weights of an LSTMCell, named as its variables are."""
    case = {
        "B": B, "D": D, "H": H, "num_proj": P, "use_peepholes": peepholes,
        "forget_bias": forget_bias,
        "x": normal(rng, B, D),  # (B, D)
        "c": normal(rng, B, H, scale=3.0),  # (B, H): large, so that a cell_clip bites
        "m": normal(rng, B, P or H),  # (B, P or H)
        "kernel": normal(rng, D + (P or H), 4 * H, scale=0.5),  # (D + P, 4H), gates i, j, f, o
        "bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
    }
    if peepholes:
        for name in PEEPHOLES:
            case[name] = normal(rng, H)  # (H,)
    if P:
        case["projection/kernel"] = normal(rng, H, P, scale=1.5)  # (H, P): so proj_clip bites
    return case


WEIGHT_NAMES = ("kernel", "bias", *PEEPHOLES, "projection/kernel")


def _weights_of(case: Trial) -> dict[str, np.ndarray]:
    return {k: case[k] for k in WEIGHT_NAMES if k in case}


def _step_ref(case: Trial, c: np.ndarray | None = None, m: np.ndarray | None = None,
              **change: float | np.ndarray | tuple[str, ...] | None,
              ) -> tuple[np.ndarray, np.ndarray]:
    """The reference step on ``case`` (from the state ``c``, ``m`` if given), one thing changed."""
    args = dict(
        forget_bias=case["forget_bias"], w_i_diag=case.get("w_i_diag"),
        w_f_diag=case.get("w_f_diag"), w_o_diag=case.get("w_o_diag"),
        cell_clip=case.get("cell_clip"), projection=case.get("projection/kernel"),
        proj_clip=case.get("proj_clip") if case["num_proj"] else None)
    args.update(change)
    c = case["c"] if c is None else c
    m = case["m"] if m is None else m
    return ref.lstm_cell_step(case["x"], c, m, case["kernel"], case["bias"], **args)


def _needs(case: C, *options: str) -> C:
    """Raise (the mistake does not apply, and costs nothing to rule out) unless every option
    is on in ``case``: ``"peepholes"``, ``"cell_clip"``, ``"projection"``, ``"proj_clip"``,
    ``"forget_bias"`` (other than the default 1)."""
    on = {"peepholes": case.get("use_peepholes"), "cell_clip": case.get("cell_clip") is not None,
          "projection": case.get("num_proj") is not None,
          "proj_clip": case.get("num_proj") is not None and case.get("proj_clip") is not None,
          "forget_bias": case.get("forget_bias") != 1.0}
    missing = [name for name in options if not on[name]]
    if missing:
        raise ValueError(f"does not apply without {', '.join(missing)}")
    return case


def _needing(model: Callable[..., object], *options: str) -> Callable[..., object]:
    """The knob model ``model(case, **change)`` applying only where ``options`` are on
    (:func:`_needs`)."""
    return lambda case, **change: model(_needs(case, *options), **change)


def _tf1_options(case: Trial) -> dict[str, object]:
    return {k: case[k] for k in ("use_peepholes", "cell_clip", "num_proj", "proj_clip",
                                 "forget_bias", "state_is_tuple") if k in case}


def _cell_oracle(case: Trial) -> tuple[np.ndarray, np.ndarray]:
    """The real LSTMCell, built afresh in a graph with the case's options and weights."""
    weights = _weights_of(case)
    weights["lstm_cell/kernel"] = weights.pop("kernel")  # not also projection/kernel
    tuple_state = case.get("state_is_tuple", True)
    state = (case["c"], case["m"]) if tuple_state else np.concatenate([case["c"], case["m"]], 1)
    cell = _lstm_cell(case["H"], **_tf1_options(case))
    output, final = run_tf1(cell, case["x"], state, weights)
    c, m = final if tuple_state else (final[:, :case["H"]], final[:, case["H"]:])
    assert np.array_equal(output, m)  # LSTMCell returns (m, new state)
    return c, m


# --- step_lstm_cell: drive a real LSTMCell (API) ---------------------------------------------


@functools.cache
def _real_cell(D: int, H: int, P: int, peepholes: bool, state_is_tuple: bool) -> Any:
    """One real eager LSTMCell per structure, built once; each trial loads its own weights."""
    cell = tensorflow().compat.v1.nn.rnn_cell.LSTMCell(
        H, use_peepholes=peepholes, num_proj=P, state_is_tuple=state_is_tuple)
    cell.build((None, D))
    return cell


def _load(cell: Any, weights: dict[str, np.ndarray]) -> None:
    """Assign ``weights`` (name suffix -> array) to the cell's variables; the longest suffix wins
    (``projection/kernel`` over ``kernel``); every variable must get one."""
    for var, key in _keys(cell):
        var.assign(np.asarray(weights[key], np.float32), read_value=False)


@functools.cache
def _keys(cell: Any) -> Any:
    """``(variable, weight name)`` for each of the cell's variables."""
    pairs = []
    for var in cell.variables:
        name = var.name.split(":")[0]
        names = [k for k in WEIGHT_NAMES if name == k or name.endswith("/" + k)]
        pairs.append((var, max(names, key=len)))
    return tuple(pairs)


def _eager_cells() -> None:
    """Make TF1 cells usable eagerly again. tf-keras switches the base class of every TF1 cell
    to its v1 Layer whenever a cell is made inside a ``tf.Graph`` (as the oracles do), and a cell
    built eagerly before that then refuses to run ("Your Layer or Model is in an invalid state")
    until a cell is made eagerly again, which switches the class back."""
    cls = tensorflow().compat.v1.nn.rnn_cell.LSTMCell
    if any(base.__module__.endswith("base_layer_v1") for base in cls.__mro__):
        cls(1)


def _cell_for(case: Case, state_is_tuple: bool) -> Any:
    _eager_cells()
    cell = _real_cell(case["D"], case["H"], case["num_proj"], case["use_peepholes"],
                      state_is_tuple)
    _load(cell, _weights_of(case))
    cell._forget_bias = case["forget_bias"]  # noqa: SLF001 - read at call time and by get_config
    return cell


RUN_DESIGNS = (
    # concatenated state with P > H and with P < H (H + P even); a tuple state at B = 1 with
    # peepholes and P != H
    {"B": (1, 3), "D": 3, "H": 2, "P": 4, "state_is_tuple": False, "peepholes": False},
    {"B": (2, 4), "D": 1, "H": 4, "P": 2, "state_is_tuple": False, "peepholes": True},
    {"B": (1, 1), "D": 2, "H": 3, "P": 1, "state_is_tuple": True, "peepholes": True},
)


def _run_case(rng: np.random.Generator, B: tuple[int, int], D: int, H: int, P: int,
              state_is_tuple: bool,
              peepholes: bool) -> Case:
    rows = int(rng.integers(B[0], B[1] + 1))
    case = _cell_case(rng, rows, D, H, P, peepholes, 1.0)
    case["state_is_tuple"] = state_is_tuple
    return case


def _run_call(fn: Callable[..., Any], case: Case) -> Any:
    cell = _cell_for(case, case["state_is_tuple"])
    result, unrun = api_answer(type(cell), ("__call__", "call"),
                               lambda: fn(cell, case["x"], case["c"], case["m"]), ("c", "m"))
    if unrun is not None:
        raise ValueError(f"the new state {NOT_RUN}: {unrun} holds numbers no call of the "
                         "cell returned, so it was recomputed")
    return result


#: step_lstm_cell's state must come from the cell (issue 35: a NumPy restatement of LSTMCell earned it)
NOT_RUN = "was not computed by the cell"


def _state_in_h_first(case: Trial) -> Trial:
    """The case changed so that the right cell runs from [m, c] (concatenated) or
    LSTMStateTuple(m, c): what the learner's cell ran from."""
    if case["state_is_tuple"]:
        if case["m"].shape != case["c"].shape:
            raise ValueError("the cell refuses it: a shape error, not this mistake")
        return {**case, "c": case["m"], "m": case["c"]}
    flat = np.concatenate([case["m"], case["c"]], axis=1)  # (B, P + H)
    H = case["H"]
    return {**case, "c": flat[:, :H], "m": flat[:, H:]}


def _out_as_h_first(case: Trial, right: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    c, m = right
    if case["state_is_tuple"]:
        return m, c
    flat = np.concatenate([c, m], axis=1)  # (B, H + P)
    P = m.shape[1]
    return flat[:, P:], flat[:, :P]


def _out_halves(case: Trial, right: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    if case["state_is_tuple"]:
        raise ValueError("only for a concatenated state")
    return tuple(np.split(np.concatenate(right, axis=1), 2, axis=1))


def _out_whole(case: Trial, right: Sequence[np.ndarray]) -> np.ndarray:
    if case["state_is_tuple"]:
        raise ValueError("only for a concatenated state")
    return np.concatenate(right, axis=1)  # (B, H + P): the cell's new state as it came


def _zero_state(case: Trial) -> Trial:
    return {**case, "c": np.zeros_like(case["c"]), "m": np.zeros_like(case["m"])}


step_lstm_cell = Exercise[Case](
    name="step_lstm_cell",
    task="(c, m), the cell's new state taken apart: c (B, num_units), m (B, num_proj or "
         "num_units)",
    make_case=_run_case,
    designs=RUN_DESIGNS,
    call=_run_call,
    oracle=_cell_oracle,
    reference=_step_ref,
    by_hand=False,
    parts=("c", "m"),
    mistakes=(
        Mistake(
            "the state went in h first, [m, c]: TF1's state is LSTMStateTuple(c, h), and "
            "state_is_tuple=False concatenates [c, m], c first.",
            perturb=_state_in_h_first,
        ),
        Mistake(
            "you read the new state as [h, c], Keras' order: TF1's concatenated state is [c, m], "
            "so c is its first num_units columns and m the rest.",
            after=_out_as_h_first,
        ),
        Mistake(
            "you cut the new state into two equal halves: c has num_units columns and m has "
            "num_proj, so cut at column num_units.",
            after=_out_halves,
        ),
        Mistake(
            "the new state is returned whole: with state_is_tuple=False the cell "
            "returns one array holding c and m side by side, and the exercise asks "
            "for the two apart.",
            after=_out_whole,
        ),
        Mistake(
            "c and m are swapped in what you return: the new state is (c, m), the cell state "
            "first.",
            after=_swapped_parts,
        ),
        Mistake(
            "the cell ran from a zero state: build its state from the given c and m "
            "(LSTMStateTuple(c, m), or [c, m] concatenated when the cell wants one array).",
            perturb=_zero_state,
        ),
        not_from_api(
            f"the new state {NOT_RUN}: the exercise is to let the real cell compute it, and "
            "these numbers are not what its call returned (a recomputation from its "
            "weights).", NOT_RUN),
    ),
)


# --- lstm_cell_step: LSTMCell's full step by hand --------------------------------------------

STEP_DESIGNS = (
    # peepholes and a cell_clip that bites (B * H = 8 values of c'), default forget_bias, B = 1
    {"B": 1, "D": 2, "H": 8, "P": None, "peepholes": True, "cell_clip": True,
     "proj_clip": False, "forget_bias": "default"},
    # P < H with a proj_clip that bites on m's first column and spares its last one
    # (there any mistake shows in m, as in c: the same wrong code gets the same part credit
    # on every seed), forget_bias other than 1 and 0; peepholes without a cell_clip (a clip
    # that bites on every value of c hides a peephole mistake in c: issue 25 found a seed)
    {"B": 4, "D": 1, "H": 3, "P": 2, "peepholes": True, "cell_clip": False,
     "proj_clip": "spares some", "forget_bias": "other"},
    # every option at once, P > H
    {"B": 3, "D": 2, "H": 3, "P": 5, "peepholes": True, "cell_clip": True,
     "proj_clip": True, "forget_bias": "other"},
)


def _step_case(rng: np.random.Generator, B: int, D: int, H: int, P: int | None, peepholes: bool,
               cell_clip: float | None, proj_clip: str | None, forget_bias: str) -> Case:
    case = _cell_case(rng, B, D, H, P, peepholes, _forget_bias(rng, forget_bias))
    # small clips, so that they bite: most |c'| exceed cell_clip; proj_clip is below most |m'|
    # even before the projection, so that clipping before it is a different answer
    case["cell_clip"] = round(float(rng.uniform(0.1, 0.3)), 2) if cell_clip else None
    case["proj_clip"] = round(float(rng.uniform(0.05, 0.12)), 2) if proj_clip else None
    if proj_clip == "spares some":
        # the last column of projection/kernel scaled down, so that m' stays inside the clip
        # there (|m'| < 1 before the projection: at most 0.9 proj_clip after it), where any
        # mistake in m' shows; made from the draws alone (no reference: cases are made on the
        # learner's side too)
        column = case["projection/kernel"][:, -1]
        column *= 0.9 * case["proj_clip"] / np.abs(column).sum()
    return case


def _step_call(fn: Callable[..., Any], case: Case) -> Any:
    options = {k: case[k] for k in ("use_peepholes", "cell_clip", "num_proj", "proj_clip",
                                    "forget_bias")}
    return fn(case["x"], case["c"], case["m"], _weights_of(case), **options)


def _keras_blocks(case: Trial) -> Trial:
    """The case with the kernel's and bias' 2nd and 3rd gate blocks swapped: the right cell on it
    reads the blocks as i, f, g, o (Keras' order) read the original ones."""
    kernel, bias = _reordered(case["kernel"], case["bias"])
    return {**case, "kernel": kernel, "bias": bias}


def _o_peeps_at(case: Trial, seen: np.ndarray) -> Trial:
    """The case changed so that the real cell's output gate adds ``w_o_diag * seen`` ((B, H))
    instead of ``w_o_diag * c'``: ``seen`` joins x as H more input columns whose kernel rows
    are diag(w_o_diag) in the o block (zeros in i, j, f), and w_o_diag itself is 0."""
    D, H = case["x"].shape[1], case["H"]
    rows = np.zeros((H, 4 * H), np.float32)  # (H, 4H)
    rows[:, 3 * H:] = np.diag(case["w_o_diag"])  # TF1's blocks i, j, f, o: o is the last
    kernel = np.concatenate([case["kernel"][:D], rows, case["kernel"][D:]])  # (D + H + P, 4H)
    x = np.concatenate([case["x"], np.asarray(seen, np.float32)], axis=1)  # (B, D + H)
    return {**case, "x": x, "kernel": kernel, "w_o_diag": np.zeros_like(case["w_o_diag"])}


def _unclipped_c(case: Trial) -> np.ndarray:
    """The new c before cell_clip: the right c of the case without cell_clip."""
    return _right_on("lstm_cell_step")({**case, "cell_clip": None})[0]


def _no_peepholes(case: Trial) -> Trial:
    _needs(case, "peepholes")
    return {**{k: v for k, v in case.items() if k not in PEEPHOLES}, "use_peepholes": False}


def _unprojected(case: Trial) -> Trial:
    """The case changed so that the real cell returns m BEFORE the projection (and its clip):
    no num_proj; the previous m (B, P) joins x as P more input columns (its kernel rows stay
    its own) and the cell's own previous m is (B, H) zeros, with H zero rows."""
    H, B = case["H"], case["x"].shape[0]
    new = {k: v for k, v in case.items() if k != "projection/kernel"}
    new.update(num_proj=None, proj_clip=None, m=np.zeros((B, H), np.float32),
               x=np.concatenate([case["x"], case["m"]], axis=1),  # (B, D + P)
               kernel=np.concatenate([case["kernel"], np.zeros((H, 4 * H), np.float32)]))
    return new


def _clip(a: np.ndarray, bound: float | None) -> np.ndarray:
    return a if bound is None else np.clip(a, -bound, bound)


def _clip_m(case: Trial, right: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """after=: m clipped with cell_clip (the right m of the case without cell_clip); applies
    where there is no projection (the clip would come before it)."""
    if case["num_proj"] is not None:
        raise ValueError("does not apply with a projection")
    return right[0], _clip(right[1], case["cell_clip"])


lstm_cell_step = Exercise[Case](
    name="lstm_cell_step",
    probes=(Probe("c", "zero"), Probe("m", "zero"),
            Probe("w_f_diag", "zero", said="the forget peephole")),
    task="(c, m), the new state: c (B, num_units), m (B, num_proj or num_units)",
    make_case=_step_case,
    designs=STEP_DESIGNS,
    call=_step_call,
    oracle=_cell_oracle,
    reference=_step_ref,
    parts=("c", "m"),
    mistakes=(
        Mistake(
            "c and m are swapped: LSTMCell's new state is LSTMStateTuple(c, m), the cell state "
            "(memory) first and the output m second.",
            after=_swapped_parts,
        ),
        Mistake(
            "the gate blocks are in the wrong order: you split i, f, g, o (Keras' order); TF1 "
            "splits the pre-activation into i, j, f, o.",
            perturb=_keras_blocks,
        ),
        Mistake(
            "forget_bias is ignored: you add 1.0 whatever the argument says; add the "
            "forget_bias you are given, sigmoid(f + forget_bias + ...).",
            perturb=lambda c: {**_needs(c, "forget_bias"), "forget_bias": 1.0},
        ),
        Mistake(
            "forget_bias is missing: LSTMCell adds it to f at every step, "
            "sigmoid(f + forget_bias + ...).",
            perturb=lambda c: {**c, "forget_bias": 0.0},
        ),
        Mistake(
            "the output-gate peephole looks at the unclipped c: the o peephole reads "
            "the clipped c, the same c that tanh sees.",
            perturb=lambda c: _o_peeps_at(_needs(c, "peepholes", "cell_clip"), _unclipped_c(c)),
        ),
        Mistake(
            "the output-gate peephole looks at the previous c: w_o_diag multiplies the NEW c "
            "(after clipping); only w_i_diag and w_f_diag use c_prev.",
            perturb=lambda c: _o_peeps_at(_needs(c, "peepholes"), c["c"]),
        ),
        Mistake(
            "the peepholes are left out: with use_peepholes, i and f also see the "
            "previous c through w_i_diag and w_f_diag, and o sees the new c through "
            "w_o_diag.",
            perturb=_no_peepholes,
        ),
        Mistake(
            "cell_clip is applied to m: it clips the cell state c, before m is computed from it.",
            perturb=lambda c: {**_needs(c, "cell_clip"), "cell_clip": None}, after=_clip_m,
        ),
        Mistake(
            "m is computed from the unclipped c: clip the new c to [-cell_clip, cell_clip] "
            "first, then compute m (and the output-gate peephole) from the clipped c.",
            perturb=lambda c: {**_needs(c, "cell_clip"), "cell_clip": None},
            after=lambda c, right: (np.clip(right[0], -c["cell_clip"], c["cell_clip"]),
                                    right[1]),
        ),
        Mistake(
            "cell_clip is missing: clip the new c to [-cell_clip, cell_clip] before m is "
            "computed from it.",
            perturb=lambda c: {**_needs(c, "cell_clip"), "cell_clip": None},
        ),
        Mistake(
            "proj_clip is applied before the projection: it clips the projected m.",
            perturb=lambda c: _unprojected(_needs(c, "proj_clip")),
            after=lambda c, right: (right[0], _clip(right[1], c["proj_clip"])
                                    @ c["projection/kernel"]),
        ),
        Mistake(
            "proj_clip is missing: with num_proj and proj_clip, clip the projected m to "
            "[-proj_clip, proj_clip].",
            perturb=lambda c: {**_needs(c, "proj_clip"), "proj_clip": None},
        ),
        Mistake(
            "the projection is applied to c: only m is projected; c keeps num_units "
            "columns.",
            perturb=lambda c: _unprojected(_needs(c, "projection")),
            after=lambda c, right: (right[0] @ c["projection/kernel"],
                                    _clip(right[1], c["proj_clip"])),
            variants=(_right_on("lstm_cell_step", after=lambda c, right: (
                right[0] @ _needs(c, "projection")["projection/kernel"], right[1])),),
        ),
        Mistake(
            "the projection is missing: with num_proj, m goes through "
            "projection/kernel and has num_proj columns.",
            perturb=lambda c: _unprojected(_needs(c, "projection")),
        ),
    ),
)


# --- Shared by the ports: a sequence and a state to prove a port on --------------------------


def _sequence(rng: np.random.Generator, B: int, T: int, D: int, H: int) -> SequenceTrial:
    return {"B": B, "T": T, "D": D, "H": H,
            "inputs": normal(rng, B, T, D),  # (B, T, D)
            "c0": normal(rng, B, H),  # (B, H)
            "h0": normal(rng, B, H, scale=0.5)}  # (B, H)


def _keras_from_tf1(case: PortTrial) -> KerasWeights:
    """The oracle's own port (weights plumbing, proven against TF by :func:`_tf1_matches_keras`)."""
    return tf1_to_keras_weights(case["kernel"], case["bias"], case["forget_bias"], case["D"])


def _tf1_matches_keras(case: PortTrial, name: str, weights: Sequence[np.ndarray],
                       state_is_tuple: bool = True) -> None:
    """Raise unless the real Keras 3 LSTM with ``weights`` and initial state [h0, c0] reproduces
    the real TF1 LSTMCell (with the case's forget_bias) run from (c0, h0), as a tuple or
    concatenated: outputs and both final states."""
    H = case["H"]
    options = {"forget_bias": case["forget_bias"], "state_is_tuple": state_is_tuple}
    state = (case["c0"], case["h0"])
    if not state_is_tuple:
        state = np.concatenate(state, axis=1)  # type: ignore[assignment]  # (B, 2H): [c, h]
    tf1 = {"kernel": case["kernel"], "bias": case["bias"]}
    # static_rnn: the same real cell as dynamic_rnn, and quicker to build than its while loop
    outputs, final = run_tf1(_lstm_cell(H, **options), case["inputs"], state, tf1, mode="static")
    c, h = final if state_is_tuple else (final[:, :H], final[:, H:])
    k_out, k_h, k_c = run_keras_lstm(case["inputs"], weights, [case["h0"], case["c0"]])
    _agree(name, (k_out, k_h, k_c), (outputs, h, c))


def _ref_port(case: PortTrial, forget_bias: float | None = None) -> KerasWeights:
    fb = case["forget_bias"] if forget_bias is None else forget_bias
    return ref.keras_from_tf1(case["kernel"], case["bias"], fb, case["D"])


def _on_weights(change: Callable[..., Sequence[np.ndarray]],
                ) -> Callable[[Trial, list[np.ndarray]], list[np.ndarray]]:
    """after=: ``change(case, kernel, recurrent_kernel, bias)`` applied to the right answer's
    three Keras weights (keras_from_tf1's whole answer, port_to_keras' first three parts); the
    rest kept."""
    return lambda case, right: [*change(case, *right[:3]), *right[3:]]


def _fold_into(where: Any) -> Callable[[Trial, list[np.ndarray]], list[np.ndarray]]:
    """after= on the case without forget_bias: forget_bias added to block ``where`` of the
    Keras bias, or to ``"all"`` of it."""
    def change(case: Trial, kernel: np.ndarray, recurrent: np.ndarray,
               bias: np.ndarray) -> Sequence[np.ndarray]:
        bias, fb, H = np.array(bias, copy=True), case["forget_bias"], case["H"]
        if where == "all":
            return kernel, recurrent, bias + fb
        bias[where * H: (where + 1) * H] += fb
        return kernel, recurrent, bias

    return _on_weights(change)


def _unfolded(case: Trial) -> Trial:
    return {**case, "forget_bias": 0.0}


def _port_mistakes(name: str, few: int = False) -> tuple[Mistake[Trial], ...]:
    """The weight-port mistakes of keras_from_tf1 and port_to_keras (exercise ``name``), each
    the right port on a changed case (forget_bias 0 or 1, the TF1 gate blocks reordered)
    and/or changed after (the Keras blocks put back in TF1's order, forget_bias added to a
    block). ``few``: only the four
    that port_to_keras names (keras_from_tf1 drills the rest; fewer models keep its 200-seed
    sweep quick)."""
    order = ("the gate blocks are still in TF1's order i, j, f, o: Keras 3 orders "
             "them i, f, g, o, so your 2nd and 3rd blocks are each other's, in the "
             "kernel, the recurrent kernel and the bias.")
    back_in_tf1_order = _on_weights(lambda _c, *weights: _reordered(*weights))
    mistakes: tuple[Mistake[Trial], ...] = (
        Mistake(
            "forget_bias is not folded: TF1 adds forget_bias to f at every step and "
            "Keras 3 adds nothing, so the Keras bias's f block must hold it.",
            perturb=_unfolded,
        ),
        Mistake(
            "you folded 1.0, not the cell's forget_bias: add the forget_bias it was built with "
            "to the f block of the Keras bias.",
            perturb=lambda c: {**_needs(c, "forget_bias"), "forget_bias": 1.0},
        ),
        # forget_bias folded into TF1's f block (the third), or into the second
        Mistake(order, after=back_in_tf1_order,
                variants=(_right_on(name, perturb=_keras_blocks),)),
        Mistake(
            "the kernel was only split: the gate blocks are still in TF1's order i, "
            "j, f, o (Keras' is i, f, g, o) and forget_bias is not in the f block of "
            "the bias.",
            perturb=_unfolded, after=back_in_tf1_order,
        ),
        Mistake(
            "forget_bias went into the wrong block: it went into the third block of "
            "the Keras bias, which after reordering is not f's.",
            perturb=_unfolded, after=_fold_into(2),
        ),
        Mistake(
            "forget_bias was added to the whole bias: it belongs to the f block only.",
            perturb=_unfolded, after=_fold_into("all"),
        ),
        Mistake(
            "kernel and recurrent_kernel are swapped: Keras' kernel holds the rows of "
            "the TF1 kernel that multiply x, its recurrent_kernel the rows that "
            "multiply h.",
            after=_on_weights(lambda _c, kernel, recurrent, bias: (recurrent, kernel, bias)),
        ),
    )
    return tuple(mistakes[k] for k in (0, 1, 2, 6)) if few else mistakes


def _keras_lstm_computes(case: Trial, weights: Sequence[np.ndarray]) -> np.ndarray:
    """What Keras 3 weights ``(kernel, recurrent_kernel, bias)`` compute (a conversion's
    ``computes``): the LSTM's outputs (B, T, H) over the case's inputs from [h0, c0], by its
    equations in NumPy (rnnbook.reference) where installed, else by the real layer."""
    w = [np.asarray(v, np.float64) for v in weights]
    if len(w) != 3:
        raise ValueError("three weights")
    try:
        return ref.unroll(ref.keras_cell(*w), case["inputs"], [case["h0"], case["c0"]])[0]
    except ImportError:
        return run_keras_lstm(case["inputs"], w, [case["h0"], case["c0"]])[0]


# --- keras_from_pytorch: PyTorch-layout weights to Keras 3 (by hand) -------------------------


def _torch_case(rng: np.random.Generator, D: int, H: int) -> Case:
    case = {"D": D, "H": H,
            "weight_ih": normal(rng, 4 * H, D, scale=0.5),  # (4H, D), gates i, f, g, o
            "weight_hh": normal(rng, 4 * H, H, scale=0.5),  # (4H, H)
            "bias_ih": normal(rng, 4 * H, scale=0.5),  # (4H,)
            "bias_hh": normal(rng, 4 * H, scale=0.5)}  # (4H,)
    # what an answer computes is run on these (drawn last: the weights are as before)
    return {**_sequence(rng, 5, 3, D, H), **case}


def _torch_oracle(case: Case) -> KerasWeights:
    """PyTorch's documented layout (PyTorch is not installed here): it computes ``W x`` with W
    (4H, D) and two biases, Keras ``x @ kernel`` with kernel (D, 4H) and one; both order the gates
    i, f, g, o. tests/test_reference.py runs the real Keras 3 LSTM with these weights against
    PyTorch's documented step."""
    return case["weight_ih"].T, case["weight_hh"].T, case["bias_ih"] + case["bias_hh"]


def _torch_ref(case: Case) -> KerasWeights:
    return ref.keras_from_pytorch(case["weight_ih"], case["weight_hh"], case["bias_ih"],
                                  case["bias_hh"])


def _torch_bias(case: Trial, name: str) -> Trial:
    """The case with PyTorch's bias ``name`` zero: the right port of it keeps only the other."""
    return {**case, name: np.zeros_like(case[name])}


def _torch_with(**change: Callable[[Trial], np.ndarray],
                ) -> Callable[[Trial, Sequence[np.ndarray]], tuple[np.ndarray, ...]]:
    """after=: parts of the right (kernel, recurrent_kernel, bias) replaced, each
    ``change[part](case)`` from the case alone."""
    names = ("kernel", "recurrent", "bias")
    return lambda case, right: tuple(change[k](case) if k in change else v
                                     for k, v in zip(names, right, strict=True))


keras_from_pytorch = Exercise[Case](
    name="keras_from_pytorch",
    blocks=("i", "f", "c", "o"),
    task="(kernel (D, 4H), recurrent_kernel (H, 4H), bias (4H,)) for Keras 3's LSTM",
    make_case=_torch_case,
    # D != H and both above 1: a reshape is not a transpose, and the two kernels differ in shape
    designs=({"D": 3, "H": 2}, {"D": 2, "H": 4}),
    call=lambda fn, c: fn(c["weight_ih"], c["weight_hh"], c["bias_ih"], c["bias_hh"]),
    oracle=_torch_oracle,
    reference=_torch_ref,
    source="PyTorch's equations",  # nn.LSTM's, as documented, in NumPy (not installed)
    computes=_keras_lstm_computes,  # any weights that compute the same function pass
    parts=("kernel", "recurrent_kernel", "bias"),
    weights=(1, 1, 2),  # the two biases summed: half the points
    mistakes=(
        Mistake(
            "the PyTorch weights are not transposed: PyTorch stores (4H, D) and "
            "left-multiplies the input; Keras stores (D, 4H) and right-multiplies it.",
            after=_torch_with(kernel=lambda c: c["weight_ih"], recurrent=lambda c: c["weight_hh"]),
        ),
        Mistake(
            "the PyTorch weights are reshaped, not transposed: reshape keeps the "
            "memory order and scrambles the gates.",
            after=_torch_with(kernel=lambda c: c["weight_ih"].reshape(c["D"], -1),
                              recurrent=lambda c: c["weight_hh"].reshape(c["H"], -1)),
        ),
        Mistake(
            "one of PyTorch's two biases is dropped: PyTorch adds bias_ih AND bias_hh, Keras has "
            "one bias, so use bias_ih + bias_hh.",
            perturb=lambda c: _torch_bias(c, "bias_hh"),
            variants=(_right_on("keras_from_pytorch",
                                perturb=lambda c: _torch_bias(c, "bias_ih")),),
        ),
        Mistake(
            "the gate blocks were moved: PyTorch's i, f, g, o is already Keras' i, f, g, o, so "
            "keep the blocks where they are (TF1's i, j, f, o is the odd one out).",
            after=lambda _c, right: _reordered(*right),
        ),
        Mistake(
            "a forget bias was added: PyTorch adds nothing to f at run time, so the Keras bias is "
            "just bias_ih + bias_hh.",
            after=lambda c, right: (*right[:2], right[2] + np.repeat(
                np.eye(4, dtype=np.float32)[1], c["H"])),
        ),
    ),
)


# --- keras_from_tf1: TF1 cell weights to Keras 3 (by hand) -----------------------------------


def _port_case(rng: np.random.Generator, B: int, T: int, D: int, H: int,
               forget_bias: str) -> PortTrial:
    return {**_sequence(rng, B, T, D, H),
            "kernel": normal(rng, D + H, 4 * H, scale=0.5),  # (D + H, 4H), gates i, j, f, o
            "bias": normal(rng, 4 * H, scale=0.5),  # (4H,)
            "forget_bias": _forget_bias(rng, forget_bias)}


PORT_DESIGNS = (
    {"B": 2, "T": 3, "D": 3, "H": 2, "forget_bias": "other"},
    {"B": 1, "T": 4, "D": 1, "H": 3, "forget_bias": "other"},
    {"B": 3, "T": 2, "D": 2, "H": 4, "forget_bias": "default"},
)


def _port_oracle(case: PortTrial) -> KerasWeights:
    expected = _keras_from_tf1(case)
    _tf1_matches_keras(case, "keras_from_tf1", expected)
    return expected


keras_from_tf1 = Exercise[PortTrial](
    name="keras_from_tf1",
    blocks=("i", "f", "c", "o"),
    task="(kernel (D, 4H), recurrent_kernel (H, 4H), bias (4H,)) for Keras 3's LSTM",
    make_case=_port_case,
    designs=PORT_DESIGNS,
    call=lambda fn, c: fn(c["kernel"], c["bias"], c["forget_bias"], c["D"]),
    oracle=_port_oracle,
    reference=_ref_port,
    computes=_keras_lstm_computes,  # any weights that compute the same function pass
    parts=("kernel", "recurrent_kernel", "bias"),
    weights=(1, 1, 2),  # forget_bias folded into the right block: half the points
    mistakes=_port_mistakes("keras_from_tf1"),
)


# --- port_to_keras: a real TF1 LSTMCell and its state, into Keras 3 (API) --------------------


@functools.cache
def _port_cell(D: int, H: int, state_is_tuple: bool) -> Any:
    cell = tensorflow().compat.v1.nn.rnn_cell.LSTMCell(H, state_is_tuple=state_is_tuple)
    cell.build((None, D))
    return cell


def _move_case(rng: np.random.Generator, B: int, T: int, D: int, H: int, forget_bias: str,
               state_is_tuple: bool) -> PortTrial:
    case = _port_case(rng, B, T, D, H, forget_bias)
    case["state_is_tuple"] = state_is_tuple
    return case


MOVE_DESIGNS = (
    {"B": 2, "T": 3, "D": 3, "H": 2, "forget_bias": "other", "state_is_tuple": True},
    {"B": 2, "T": 2, "D": 1, "H": 3, "forget_bias": "other", "state_is_tuple": False},
    {"B": 1, "T": 3, "D": 2, "H": 4, "forget_bias": "default", "state_is_tuple": True},
    {"B": 3, "T": 2, "D": 4, "H": 2, "forget_bias": "other", "state_is_tuple": False},
)

MOVE_PARTS = ("kernel", "recurrent_kernel", "bias", "h", "c")
#: the state handed over in Keras' order is half the points (h and c swapped earns at most 1/2),
#: the bias with its fold counts twice a kernel
MOVE_WEIGHTS = (1, 1, 2, 2, 2)


def _move_call(fn: Callable[..., Any], case: PortTrial) -> Any:
    """Build the real TF1 cell with the trial's weights and its state as TF1 returns it (an
    ``LSTMStateTuple`` of arrays, or the (B, 2H) array [c, h]); flatten the learner's
    ``(weights, initial_state)`` into the five parts."""
    _eager_cells()
    cell = _port_cell(case["D"], case["H"], case["state_is_tuple"])
    _load(cell, {"kernel": case["kernel"], "bias": case["bias"]})
    cell._forget_bias = case["forget_bias"]  # noqa: SLF001 - read at call time and by get_config
    if case["state_is_tuple"]:
        state = _tf_state_tuple(case["c0"], case["h0"])
    else:
        state = np.concatenate([case["c0"], case["h0"]], axis=1)  # (B, 2H): [c, h]
    result = fn(cell, state)
    if result is None:
        return None
    try:
        weights, initial_state = result
        return [*weights, *initial_state]
    except (TypeError, ValueError):
        raise TypeError("return (weights, initial_state): weights = [kernel, recurrent_kernel, "
                        "bias] and initial_state, a list of two (B, H) arrays") from None


def _move_oracle(case: PortTrial) -> list[np.ndarray]:
    expected = _keras_from_tf1(case)
    _tf1_matches_keras(case, "port_to_keras", expected, case["state_is_tuple"])
    return [*expected, case["h0"], case["c0"]]


def _with_state(case: PortTrial, weights: Sequence[np.ndarray],
                state: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    h, c = (case["h0"], case["c0"]) if state is None else state
    return [*weights, h, c]


port_to_keras = Exercise[PortTrial](
    name="port_to_keras",
    blocks=("i", "f", "c", "o"),
    task="(weights, initial_state): weights = [kernel (D, 4H), recurrent_kernel (H, 4H), bias "
         "(4H,)] and initial_state, the list of two (B, H) arrays Keras 3's LSTM takes",
    make_case=_move_case,
    designs=MOVE_DESIGNS,
    call=_move_call,
    oracle=_move_oracle,
    reference=lambda c: _with_state(c, _ref_port(c)),
    by_hand=False,
    parts=MOVE_PARTS,
    weights=MOVE_WEIGHTS,
    mistakes=(
        Mistake(
            "h and c are swapped in initial_state: TF1 keeps c first (the "
            "concatenated state too), but Keras 3 takes h first, and accepts them the "
            "other way round silently.",
            after=lambda _c, right: [*right[:3], right[4], right[3]],
        ),
        *_port_mistakes("port_to_keras", few=True),
    ),
)


CHAPTER = Chapter(3, "03-c-state-m-state", [
    split_state, step_lstm_cell, lstm_cell_step, keras_from_pytorch, keras_from_tf1,
    port_to_keras,
])
check = CHAPTER.check
