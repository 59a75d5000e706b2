"""Chapter 2 (LSTM gate tensors by graph name): exercises and their checks.

The question: "How do I get the i, j, f, o gates of BasicLSTMCell? `.eval()` fails." The
exercises climb from a name to the values:

- ``gate_tensor_name`` (by hand): the string ``"rnn/basic_lstm_cell/split_t:k"``;
- ``split_ops_in_event_file`` (API): the Split ops of an event file the check writes;
- ``gate_weights`` (by hand): each gate's W, U and b blocks of the kernel and bias;
- ``gate_preactivations`` (API): step t's Split outputs fetched from a live session;
- ``lstm_step`` (by hand): one step, with the ``forget_bias`` argument;
- ``gate_activations`` (API, the capstone): every step's gate VALUES (the Sigmoid and Tanh
  tensors after the split) fetched from a live session whose ``forget_bias`` is not 1.

The API exercises get the real thing, built in the process that runs the learner's function:
an event file written by ``FileWriter``, or a ``tf.compat.v1.Session`` over the chapter's
``static_rnn`` graph (:func:`rnnbook.graphs.lstm_graph`) with the trial's random weights
loaded. Each designed graph is built once per process; a trial only loads its weights. The
oracles are independent of those objects: they build their own graph and read the gates by
their roles in it (:func:`gate_tensors`). The references (for the tests' sweeps) are
:mod:`rnnbook.reference`, touched only inside functions (it never ships to learners).

Notation (book/notation.md): ``B`` batch, ``T`` time, ``D`` input depth, ``H`` num_units;
``kernel`` is ``(D + H, 4H)``, ``bias`` ``(4H,)``, gate blocks i, j, f, o.
"""
from __future__ import annotations

import atexit
import functools
import pathlib
import shutil
import tempfile
from typing import Any, Callable, Iterable, NoReturn, NotRequired, Sequence, TypedDict

import numpy as np

from rnnbook import graphs, oracles
from rnnbook import reference as ref
from rnnbook.checks.common import (
    ApiCall,
    LstmRunTrial,
    Trial,
    forget_bias_hard_coded_case,
    forget_bias_left_out_case,
    forget_bias_twice_case,
    keras_order_case,
    names_split_0,
    not_from_api,
    not_returned,
    parts_swapped_after,
    raising,
    recording,
    says,
    split_at_h_raises,
    w_and_u_swapped_after,
)
from rnnbook.diagnose import Probe
from rnnbook.exercise import C, Chapter, Exercise, Mistake, normal
from rnnbook.oracles import run_tf1, tensorflow

GATES = "ijfo"  # TF1's order: input, new input (candidate), forget, output
KERAS = "ifjo"  # Keras' order i, f, g, o, written with TF1's letters (Keras' g is TF1's j)
SPLIT = "rnn/basic_lstm_cell/split"  # step 0's Split op in the question's graph

#: The designed graphs of the session exercises (gate_preactivations, gate_activations):
#: two shapes, each built once per process. forget_bias is a constant in the graph, so it is
#: part of the design: neither is 1.0 (a hard-coded 1.0 fails) nor 0 (leaving it out fails);
#: D != H, T > 2.
GRAPH_A = dict(T=3, D=2, H=3, forget_bias=2.5)
GRAPH_B = dict(T=4, D=3, H=2, forget_bias=-1.0)


class NameTrial(TypedDict):
    """gate_tensor_name's trial."""

    gate: str  # "i", "j", "f" or "o"
    t: int  # the time step


class EventTrial(TypedDict):
    """split_ops_in_event_file's trial: the graph an event file holds."""

    T: int
    L: int  # layers
    split_inputs: bool | str  # x cut into steps by tf.split (a Split op of its own)


class WeightsTrial(TypedDict):
    """gate_weights' trial."""

    D: int
    H: int
    kernel: np.ndarray  # (D + H, 4H)
    bias: np.ndarray  # (4H,)


class SessionTrial(LstmRunTrial):
    """gate_preactivations' and gate_activations' trial: a live session's graph and weights
    (a mistake's case may be a batch of one-step sequences)."""

    forget_bias: float
    t: NotRequired[int]  # gate_preactivations' step


class StepTrial(TypedDict):
    """lstm_step's trial."""

    B: int
    D: int
    H: int
    forget_bias: float
    x: np.ndarray  # (B, D)
    c: np.ndarray  # (B, H)
    h: np.ndarray  # (B, H)
    kernel: np.ndarray  # (D + H, 4H)
    bias: np.ndarray  # (4H,)


#: the four gates' arrays, i, j, f, o
Gates = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


# --- The gates in the real graph -------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def gate_tensors(T: int) -> tuple[dict[str, tuple[str, str]], ...]:
    """For ``BasicLSTMCell`` unrolled over ``T`` steps by ``static_rnn``: one dict per time step,
    ``{gate: (pre-activation tensor name, activation tensor name)}``, found by walking back from
    each step's output ``h_t = tanh(c_t) * sigmoid(o)`` through the real graph."""
    _, _, outputs, _ = graphs.lstm_graph(T, D=2, H=3)
    return tuple(_gates_of_step(h) for h in outputs)


def _only(items: Iterable[Any], what: str) -> Any:
    items = list(items)
    if len(items) != 1:
        raise AssertionError(f"expected one {what} in BasicLSTMCell's graph, found {len(items)}")
    return items[0]


def _gates_of_step(h: Any) -> dict[str, tuple[str, str]]:
    mul = h.op  # h_t = tanh(c_t) * sigmoid(o)
    sigmoid_o = _only((t for t in mul.inputs if t.op.type == "Sigmoid"), "sigmoid(o)")
    o = sigmoid_o.op.inputs[0]
    split = o.op
    assert split.type == "Split" and len(split.outputs) == 4, split
    gates = {"o": (o.name, sigmoid_o.name)}
    for out in split.outputs:
        if out is o:
            continue
        consumer = _only(out.consumers(), f"consumer of {out.name}")
        if consumer.type == "Tanh":  # tanh(j)
            gates["j"] = (out.name, consumer.outputs[0].name)
        elif consumer.type in ("Add", "AddV2"):  # sigmoid(f + forget_bias)
            sigmoid_f = _only(consumer.outputs[0].consumers(), "sigmoid(f + forget_bias)")
            assert sigmoid_f.type == "Sigmoid", sigmoid_f
            gates["f"] = (out.name, sigmoid_f.outputs[0].name)
        elif consumer.type == "Sigmoid":  # sigmoid(i) * tanh(j)
            gates["i"] = (out.name, consumer.outputs[0].name)
    assert sorted(gates) == sorted(GATES), gates
    return gates


def _cell(H: int, forget_bias: float) -> Callable[[], Any]:
    return lambda: tensorflow().compat.v1.nn.rnn_cell.BasicLSTMCell(H, forget_bias=forget_bias)


def _weights(case: WeightsTrial | SessionTrial | StepTrial) -> dict[str, np.ndarray]:
    return {"kernel": case["kernel"], "bias": case["bias"]}


def _fetch_static(case: SessionTrial, names: Sequence[str]) -> tuple[np.ndarray, ...]:
    """Run a FRESH real cell (the oracle's own graph) over ``case["inputs"]`` from the zero
    state with the case's weights and ``forget_bias``; return the tensors ``names``."""
    cell = _cell(case["H"], case["forget_bias"])
    return run_tf1(cell, case["inputs"], None, _weights(case), mode="static", fetch=names)[2:]


# --- Live sessions for the API exercises -----------------------------------------------------

def live_session(case: SessionTrial) -> Any:
    """A ``tf.compat.v1.Session`` over the chapter's graph (``BasicLSTMCell(H, forget_bias)``
    unrolled ``T`` steps by ``static_rnn``, input placeholder ``x:0`` of shape (None, T, D)),
    with the case's kernel and bias loaded into its variables: built once per shape and
    process (:func:`rnnbook.oracles.live_session`), each call loads new weights."""
    key = (case["T"], case["D"], case["H"], float(case["forget_bias"]))
    return oracles.live_session(("ch02", *key), lambda: graphs.lstm_graph(
        *key[:3], forget_bias=key[3])[0], _weights(case))


def _no_missing_parts(result: object) -> object:
    """A tuple answer with a None in it came from ``session.run`` on an op name: say so."""
    if isinstance(result, (tuple, list)) and any(part is None for part in result):
        raise TypeError("a part of your answer is None: session.run of an OP name (such as "
                        f"'{SPLIT}') runs the op and returns None; fetch its output TENSORS, "
                        "'op_name:k'")
    return result


_STACK_LINES = ("File ", "Detected at node", "Original stack trace", "Node:", "[[")


def _with_session(fn: Callable[..., object], *args: object) -> object:
    """``fn(session, *args)`` as the learner wrote it. TensorFlow's run-time errors (an unfed
    placeholder, the question's `.eval()` failure) carry the stack that BUILT the graph, which
    is the check's, not the learner's: keep their own sentences, and the learner's traceback."""
    tf = tensorflow()
    try:
        return _no_missing_parts(fn(*args))
    except tf.errors.OpError as error:
        lines = [line.strip() for line in error.message.splitlines()]
        short = " ".join(line for line in lines
                         if line and not line.startswith(_STACK_LINES) and "most recent" not in line)
        try:
            shorter = type(error)(error.node_def, None, short)  # no op: no graph stack
        except TypeError:  # a subclass with another signature: keep the original
            raise error from None
        raise shorter.with_traceback(error.__traceback__) from None


#: an answer of a session exercise (gate_preactivations, gate_activations; split_grad_by_name
#: and gru_gates too) must come from the session (issue 35): numbers no session.run
#: returned were recomputed, from the weights it holds
NOT_FETCHED = "were not fetched from the graph"


class NotFetched(ValueError):
    """The answer holds numbers no ``session.run`` returned (or, where the values may be
    finished by hand, no run was fed the inputs)."""


def _fetched(fn: Callable[..., Any], session: Any, args: Sequence[Any], parts: Sequence[str],
             what: str = "the values", fed: bool = False) -> Any:
    """``fn(session, *args)`` (:func:`_with_session`), provided its answer came from the
    session: every number of each part among those ``session.run`` returned while ``fn`` ran;
    ``fed``: a run was fed at least (gate_activations' gate values may be finished in NumPy from fetched
    tensors, but not recomputed from the weights, which need no feed)."""
    calls: list[ApiCall] = []
    with recording(session, "run", calls):
        result = _with_session(fn, session, *args)
    if result is None:
        return None
    if fed:
        if not any(_feed_of(call) for call in calls):
            raise NotFetched(f"{what} {NOT_FETCHED}: no session.run was fed the batch, so "
                             "they were recomputed, not read from the graph's tensors")
        return result
    part = not_returned(result, calls, parts)
    if part is not None:
        raise NotFetched(f"{what} {NOT_FETCHED}: {part} holds numbers no session.run "
                         "returned, so it was recomputed, not fetched by its name")
    return result


def _feed_of(call: ApiCall) -> Any:
    """What a recorded ``session.run`` call was fed (its second argument or ``feed_dict``)."""
    return call.kwargs.get("feed_dict", call.args[1] if len(call.args) > 1 else None)


def _session_case(rng: np.random.Generator, T: int, D: int, H: int, forget_bias: float,
                  B: int | None = None, t: int | None = None) -> SessionTrial:
    B = int(rng.integers(1, 5)) if B is None else B
    case: SessionTrial = {
        "B": B, "T": T, "D": D, "H": H, "forget_bias": forget_bias,
        "inputs": normal(rng, B, T, D),  # (B, T, D)
        "kernel": normal(rng, D + H, 4 * H, scale=0.5),  # (D + H, 4H)
        "bias": normal(rng, 4 * H, scale=0.5)}  # (4H,)
    if t is not None:
        case["t"] = t
    return case


def _zero_state(case: SessionTrial) -> tuple[np.ndarray, np.ndarray]:
    zero = np.zeros((case["inputs"].shape[0], case["H"]), np.float32)  # (B, H)
    return zero, zero


def _state_before(case: SessionTrial, t: int) -> tuple[np.ndarray, np.ndarray]:
    """``(c, h)`` entering step ``t`` from the zero state (the reference cell)."""
    if t == 0:
        return _zero_state(case)
    step = ref.lstm_cell(case["kernel"], case["bias"], case["forget_bias"])
    return ref.unroll(step, case["inputs"][:, :t], _zero_state(case))[1]


def _tf1(gates: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    return tuple(gates[g] for g in GATES)


# --- gate_tensor_name: the name of a gate's tensor ------------------------------------------------


def _tensor_name(t: int, k: int, op: str = SPLIT) -> str:
    """``op`` for step 0, ``op_t`` for step t, output ``:k`` (``t=None``: no suffix)."""
    return f"{op}{f'_{t}' if t else ''}:{k}"


def _name_case(rng: np.random.Generator, gate: str | None = None, t: int | None = None,
               gates: Sequence[str] = GATES, steps: tuple[int, int] = (0, 7)) -> NameTrial:
    gate = str(rng.choice(list(gates))) if gate is None else gate
    t = int(rng.integers(*steps)) if t is None else t
    return {"gate": gate, "t": t}


def _name_oracle(case: NameTrial) -> str:
    return gate_tensors(7)[case["t"]][case["gate"]][0]  # the question's 7 steps


def _name_reference(case: NameTrial) -> str:
    return _tensor_name(case["t"], ref.TF1.index(case["gate"]))


def _name_with(case: NameTrial, t: int | None = None, k: int | None = None,
               op: str = SPLIT) -> str:
    t = case["t"] if t is None else t
    return _tensor_name(t, GATES.index(case["gate"]) if k is None else k, op)


SPLIT_0 = ("`split_0` does not exist: TensorFlow names the first op `split` and suffixes the "
           "repeats `split_1`, `split_2`, ..., so step 0 is `split` and step t is `split_t`.")


NOT_FED = "You must feed a value for placeholder tensor 'x'"  # TensorFlow's words
OP_FETCHED = "session.run of an OP name"  # _no_missing_parts's words


SPLIT_1 = ("step 1's op is `split_1`: only step 0's has no suffix (`split`), so every t > 0 "
           "names `split_t`; check the condition that adds the suffix (t > 0, not t > 1).")


gate_tensor_name = Exercise[NameTrial](
    name="gate_tensor_name",
    task="a string: the name 'op_name:k' of the tensor that holds gate `gate`'s "
    "pre-activation at time step t of static_rnn's BasicLSTMCell graph",
    make_case=_name_case,
    call=lambda fn, c: fn(c["gate"], c["t"]),
    oracle=_name_oracle,
    reference=_name_reference,
    designs=(
        dict(gate="j", t=0),  # step 0 has no suffix; j is :1, not Keras' :2
        dict(gate="f", t=1),  # step 1 is split_1; f is :2, not Keras' :1
        dict(gates="io", steps=(2, 6)),
        dict(t=6),  # the last of the question's 7 steps
        dict(),
    ),
    mistakes=(
        Mistake(
            "you used Keras' gate order (i, f, g, o): TF1's BasicLSTMCell splits into i, j, f, "
            "o, so j is output :1 and f is output :2.",
            lambda c: _name_with(c, k=KERAS.index(c["gate"])),
        ),
        Mistake(
            "the output index counts from 1: a Split op's outputs are :0, :1, :2, :3 = i, j, f, "
            "o.",
            lambda c: _name_with(c, k=GATES.index(c["gate"]) + 1),
        ),
        Mistake(
            "every gate got output :0: the four gates are the four outputs of one Split op, "
            ":0, :1, :2, :3 = i, j, f, o.",
            lambda c: _name_with(c, k=0),
        ),
        Mistake(SPLIT_0, lambda c: f"{SPLIT}_{c['t']}:{GATES.index(c['gate'])}"),
        Mistake(SPLIT_1, lambda c: _name_with(c, t=0 if c["t"] == 1 else c["t"])),
        Mistake(
            "the time-step suffix is off by one: step 0 is `split`, step 1 is `split_1`, step t "
            "is `split_t` (time steps count from 0).",
            lambda c: _name_with(c, t=c["t"] + 1),
        ),
        Mistake(
            "the time-step suffix is off by one the other way: step t is `split_t`, not "
            "`split_(t-1)`; only step 0 has no suffix.",
            lambda c: _name_with(c, t=max(c["t"] - 1, 0)),
        ),
        Mistake(
            "that is an op name: a tensor name adds the output index, 'op_name:k' (k = 0, 1, 2, "
            "3 for i, j, f, o).",
            lambda c: _name_with(c).rsplit(":", 1)[0],
        ),
        Mistake(
            "the scope is `basic_lstm_cell`: `lstm_cell` is LSTMCell's; the question's cell is "
            "BasicLSTMCell, so the name starts 'rnn/basic_lstm_cell/'.",
            lambda c: _name_with(c, op="rnn/lstm_cell/split"),
        ),
        Mistake(
            "the scope is missing: static_rnn builds the cell under `rnn/`, so the name starts "
            "'rnn/basic_lstm_cell/'.",
            lambda c: _name_with(c, op="basic_lstm_cell/split"),
        ),
    ),
)


# --- split_ops_in_event_file: the Split ops in an event file --------------------------------------


@functools.lru_cache(maxsize=None)
def _graph(T: int, layers: int, split_inputs: bool | str) -> Any:
    return graphs.lstm_graph(T, D=2, H=3, layers=layers, split_inputs=split_inputs)[0]


@functools.lru_cache(maxsize=None)
def _nodes(T: int, layers: int, split_inputs: bool | str) -> tuple[tuple[str, str], ...]:
    """``(name, op type)`` of every node, in the order the GraphDef lists them."""
    graph_def = _graph(T, layers, split_inputs).as_graph_def()
    return tuple((node.name, node.op) for node in graph_def.node)


# (T, layers, split_inputs) -> event file, written in the process that runs fn
_EVENT_FILES: dict[tuple[int, int, bool | str], pathlib.Path] = {}


def event_file(T: int, layers: int, split_inputs: bool | str) -> str:
    """Write (once per process) the graph for these settings with ``FileWriter`` into a fresh
    temporary folder; return the event file's absolute path, as a string."""
    key = (T, layers, split_inputs)
    path = _EVENT_FILES.get(key)
    if path is None or not path.exists():
        folder = tempfile.mkdtemp(prefix="rnnbook-ch02-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # readers are done by then
        path = _EVENT_FILES[key] = graphs.write_graph(_graph(*key), folder).resolve()
    return str(path)


def _event_case(rng: np.random.Generator, Ts: Sequence[int], L: int,
                split_inputs: bool | str) -> EventTrial:
    return {"T": int(rng.choice(Ts)), "L": L, "split_inputs": split_inputs}


def _key(case: EventTrial) -> tuple[int, int, bool | str]:
    return case["T"], case["L"], case["split_inputs"]


def _event_oracle(case: EventTrial) -> list[str]:
    """The Split ops of TensorFlow's live graph (not of the event file the learner reads)."""
    return [op.name for op in _graph(*_key(case)).get_operations() if op.type == "Split"]


def _event_reference(case: EventTrial) -> list[str]:
    """The names as the chapter derives them: `split` for tf.split of x, then per step (and
    layer) the cell's Split op; MultiRNNCell's ops sit under `rnn/rnn/multi_rnn_cell/cell_l/`."""
    names = ["split"] if case["split_inputs"] is True else []  # "sizes": a SplitV
    scopes = (["rnn/basic_lstm_cell"] if case["L"] == 1 else
              [f"rnn/rnn/multi_rnn_cell/cell_{k}/basic_lstm_cell" for k in range(case["L"])])
    for t in range(case["T"]):
        names += [f"{scope}/split{f'_{t}' if t else ''}" for scope in scopes]
    return names


def _names_where(case: EventTrial, keep: Callable[[str, str], bool]) -> list[str]:
    return [name for name, op in _nodes(*_key(case)) if keep(name, op)]


split_ops_in_event_file = Exercise[EventTrial](
    name="split_ops_in_event_file",
    task="a list of strings: the names of every node whose op type is 'Split' in the event "
    "file's graph, in the order the GraphDef lists its nodes",
    make_case=_event_case,
    call=lambda fn, c: fn(event_file(*_key(c))),
    oracle=_event_oracle,
    reference=_event_reference,
    by_hand=False,
    designs=(
        # tf.split of x adds the Split `split` and the Const `split/split_dim`; two layers
        # interleave their steps, so sorting changes the order
        dict(Ts=(2, 3), L=2, split_inputs=True),
        # tf.split with a list of sizes: a SplitV op named `split`, whose type is not Split
        dict(Ts=(3, 5), L=1, split_inputs="sizes"),
        dict(Ts=(2, 4), L=1, split_inputs=True),
    ),
    mistakes=(
        Mistake(
            "those are tensor names: a node's `name` is the op name (`.../split`), without ':0'.",
            lambda c: [f"{n}:0" for n in _event_reference(c)],
        ),
        Mistake(
            "those are op types: a node's `op` field is its type ('Split'); return each "
            "matching node's `name`.",
            lambda c: ["Split" for _ in _event_reference(c)],
        ),
        Mistake(
            "you matched 'split' in the name, which also catches the Const `split/split_dim`: "
            "keep the nodes whose `op` is 'Split'.",
            lambda c: _names_where(c, lambda name, op: "split" in name),
        ),
        Mistake(
            "you kept only the cell's Split ops: the graph also has the Split op `split` that "
            "cut x into time steps (tf.split); return every node whose `op` is 'Split'.",
            lambda c: _names_where(c, lambda name, op: "basic_lstm_cell/split" in name),
        ),
        Mistake(
            "you kept only names that end in 'split', which drops `split_1`, `split_2`, ... "
            "(steps 1, 2, ...): select the nodes by their `op` type, not by their names.",
            lambda c: _names_where(c, lambda name, op: name.endswith("split")),
        ),
        Mistake(
            "the names are sorted: return them in the order the GraphDef lists its nodes (time "
            "step by time step), which is the order TensorFlow created the ops.",
            lambda c: sorted(_event_reference(c)),
        ),
    ),
)


# --- gate_weights: the weights of every gate ------------------------------------------------------


def _weights_case(rng: np.random.Generator, D: int, H: int) -> WeightsTrial:
    return {"D": D, "H": H,
            "kernel": normal(rng, D + H, 4 * H, scale=0.5),  # (D + H, 4H)
            "bias": normal(rng, 4 * H, scale=0.5)}  # (4H,)


def _weights_oracle(case: WeightsTrial) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probe the real cell: a gate's pre-activation for x = 0, h = 0 is its bias; for x = a row
    of I_D it adds that row of its W; for h = a row of I_H, that row of its U."""
    D, H = case["D"], case["H"]
    rows = 1 + D + H
    x = np.zeros((rows, 1, D), np.float32)  # (1 + D + H, T=1, D)
    x[1:1 + D, 0] = np.eye(D)
    h = np.zeros((rows, H), np.float32)
    h[1 + D:] = np.eye(H)
    c = np.zeros((rows, H), np.float32)
    names = [gate_tensors(1)[0][g][0] for g in GATES]
    cell = _cell(H, 1.0)
    z = np.stack(run_tf1(cell, x, (c, h), _weights(case), mode="static", fetch=names)[2:])
    b = z[:, 0]  # (4, H)
    return z[:, 1:1 + D] - b[:, None], z[:, 1 + D:] - b[:, None], b  # (4,D,H), (4,H,H), (4,H)


def _blocks(case: WeightsTrial, order: tuple[str, ...] | None = None, at: int | None = None,
            kernel: np.ndarray | None = None,
            bias: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """(W, U, b) stacked by gate i, j, f, o, read as a learner who believes ``order`` (TF1's
    when None) and splits the rows at ``at`` (D) would."""
    order = ref.TF1 if order is None else order
    kernel = case["kernel"] if kernel is None else kernel
    bias = case["bias"] if bias is None else bias
    at = case["D"] if at is None else at
    parts = (kernel[:at], kernel[at:], bias)
    return tuple(np.stack(_tf1(ref.split_gates(p, order))) for p in parts)


def _weights_reference(case: WeightsTrial) -> tuple[np.ndarray, ...]:
    return _blocks(case)


def _rows_split_at(right: Sequence[np.ndarray], at: int | None) -> list[np.ndarray]:
    """``(W, U, b)`` with the kernel's rows split at ``at`` instead of D: the right blocks'
    rows joined back (4, D + H, H) and cut again."""
    rows = np.concatenate([right[0], right[1]], axis=1)  # (4, D + H, H)
    return [rows[:, :at], rows[:, at:], right[2]]


gate_weights = Exercise[WeightsTrial](
    name="gate_weights",
    blocks=("i", "j", "f", "o"),
    task="(W, U, b), one block per gate i, j, f, o: W (4, D, H), U (4, H, H) and b (4, H), "
    "NumPy arrays",
    make_case=_weights_case,
    call=lambda fn, c: fn(c["kernel"], c["bias"], c["D"]),
    oracle=_weights_oracle,
    reference=_weights_reference,
    parts=("W", "U", "b"),
    weights=(2, 2, 1),  # the kernel's blocks are what the exercise is about
    designs=(dict(D=2, H=3), dict(D=3, H=2), dict(D=1, H=4)),  # D != H: rows D and H differ
    mistakes=(
        keras_order_case(
            "you used Keras' gate order (i, f, g, o): in TF1's kernel the column "
            "blocks are i, j, f, o, so j is the second block of H columns and f the "
            "third.",
        ),
        w_and_u_swapped_after(
            "W and U are swapped: the first D rows of the kernel multiply x (W), the last H "
            "rows multiply h (U).",
        ),
        Mistake(
            "you split the kernel at row H, as if the cell concatenated [h, x]: it "
            "concatenates [x, h], so W is the first D rows and U the H rows after them"
            " (D = input_depth).",
            after=lambda c, right: _rows_split_at(right, c["H"]),
        ),
        Mistake(
            "forget_bias is not stored in the bias variable: the forget gate's bias is"
            " just the f block of the bias variable; BasicLSTMCell adds forget_bias at"
            " run time, inside the sigmoid.",
            after=lambda c, right: [*right[:2], right[2] + np.array([[0], [0], [1.0], [0]])],
        ),
        Mistake(
            "the blocks are transposed: TF right-multiplies (x @ W), so W[k] is (D, H) and U[k] "
            "(H, H) as they stand in the kernel.",
            after=lambda c, right: [np.swapaxes(right[0], 1, 2), np.swapaxes(right[1], 1, 2),
                                    right[2]],
        ),
        Mistake(
            "reshape(4, D, H) mixes the gates' columns: a gate is a block of H "
            "consecutive COLUMNS, and a reshape to (4, D, H) cuts the kernel's rows "
            "instead.",
            lambda c: (c["kernel"][:c["D"]].reshape(4, c["D"], c["H"]),
                       c["kernel"][c["D"]:].reshape(4, c["H"], c["H"]), c["bias"].reshape(4, -1)),
        ),
    ),
)


# --- gate_preactivations: step t's Split outputs from a live session ------------------------------


def _preactivations_oracle(case: SessionTrial) -> tuple[np.ndarray, ...]:
    return tuple(_fetch_static(case, [gate_tensors(case["T"])[case["t"]][g][0] for g in GATES]))


def _preactivations(case: SessionTrial) -> tuple[np.ndarray, ...]:
    """Step t's Split outputs (i, j, f, o): the reference (instructor-side)."""
    _, h = _state_before(case, case["t"])
    return _tf1(ref.lstm_preactivations(case["inputs"][:, case["t"]], h, case["kernel"],
                                        case["bias"]))


# The mistakes of gate_preactivations and gate_activations are the real cell's answer on a
# changed case (another step, a batch of one-step sequences) or changed after (the
# activations applied, blocks reordered): they need no model of the cell, so the learner
# release (its oracle answering) names them.


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.asarray(z, np.float64)))


def _logit(p: np.ndarray) -> np.ndarray:
    """The inverse of the sigmoid: a gate's pre-activation from its value (float32 values
    give it to 1e-5 for |z| < 8)."""
    p = np.asarray(p, np.float64)
    return np.log(p) - np.log1p(-p)


def _at_step(step: Callable[[C], int]) -> Callable[[C], Trial]:
    """The case asking for step ``step(case)`` instead of t; a step the graph does not have
    makes the mistake not apply."""
    def perturb(case: C) -> Trial:
        t = step(case)
        if not 0 <= t < case["T"]:
            raise IndexError(f"no step {t}")
        return {**case, "t": t}
    return perturb


def _split_0(case: SessionTrial) -> SessionTrial:
    """``split_t`` for every t: right for t > 0; at t = 0 the graph has no such tensor and
    the session raises (recognised by ``names_split_0``)."""
    if case["t"] == 0:
        raise KeyError(f"The name '{SPLIT}_0:0' refers to a Tensor which does not exist.")
    return case


def _split_0_every_step(case: SessionTrial) -> NoReturn:
    """Every step's gates found from ``split_t``, step 0 included: the graph has no `split_0`."""
    raise KeyError(f"The name '{SPLIT}_0' refers to an Operation not in the graph.")


gate_preactivations = Exercise[SessionTrial](
    name="gate_preactivations",
    task="(i, j, f, o): four arrays (B, H), the gates' pre-activations at step t, fetched from "
    "the session with `inputs` fed to the placeholder 'x:0'",
    make_case=_session_case,
    call=lambda fn, c: _fetched(fn, live_session(c), (c["inputs"], c["t"]), "ijfo",
                                "the pre-activations"),
    oracle=_preactivations_oracle,
    reference=_preactivations,
    parts=("i", "j", "f", "o"),
    weights=(1, 1, 3, 1),  # f is the chapter's trap (the Add after the split)
    by_hand=False,
    designs=(  # the first step (the bare name), the second (the first suffix), the last
        dict(GRAPH_A, t=0, B=1),
        dict(GRAPH_B, t=2),  # t - 1 is not step 0
        dict(GRAPH_A, t=1),
        dict(GRAPH_B, t=3),  # the last: split_(t+1) does not exist
    ),
    mistakes=(
        Mistake(
            "these are the gate activations (the Sigmoid and Tanh tensors after the split): "
            "the pre-activations are the Split op's own outputs, before any sigmoid or tanh.",
            after=lambda c, right: [_sigmoid(right[0]), np.tanh(right[1]),
                                    _sigmoid(right[2] + c["forget_bias"]), _sigmoid(right[3])],
        ),
        Mistake(
            "your f already has forget_bias added (that is the Add after the split): the "
            "Split op's output :2 is f alone; the cell adds forget_bias after the split.",
            after=lambda c, right: [*right[:2], right[2] + c["forget_bias"], right[3]],
        ),
        Mistake(
            "you read the Split outputs in Keras' gate order (i, f, g, o): TF1's are :0, :1, "
            ":2, :3 = i, j, f, o, so j is :1 and f is :2.",
            after=lambda c, right: [right[0], right[2], right[1], right[3]],
        ),
        Mistake(
            "you fetched the next step's Split op: step t's is `split_t` (step 0's is `split`), "
            "not `split_(t+1)`.",
            perturb=_at_step(lambda c: c["t"] + 1),
        ),
        Mistake(
            "you fetched the previous step's Split op: step t's is `split_t`, not "
            "`split_(t-1)`.",
            perturb=_at_step(lambda c: c["t"] - 1),
        ),
        Mistake(
            "you fetched step 0's Split op (`split`) whatever t is: step t's op is `split_t`.",
            perturb=_at_step(lambda c: 0),
        ),
        Mistake(SPLIT_1, perturb=_at_step(lambda c: 0 if c["t"] == 1 else c["t"])),
        Mistake(SPLIT_0, perturb=_split_0, raises=names_split_0),
        Mistake(
            "the placeholder 'x:0' is not fed: the gates depend on the inputs, so pass "
            "feed_dict={'x:0': inputs} to session.run (the question's `.eval()` failure).",
            perturb=raising(NOT_FED), raises=says(NOT_FED),
        ),
        Mistake(
            "you fetched the Split OP, and session.run of an op returns None: fetch its output "
            "tensors, 'op_name:k'.",
            perturb=raising(OP_FETCHED), raises=says(OP_FETCHED),
        ),
        not_from_api(
            f"the pre-activations {NOT_FETCHED}: the exercise is to read step t's tensors "
            "from the session by their names, and these numbers are not what it returned "
            "(a recomputation from the weights).", NOT_FETCHED),
    ),
)


# --- lstm_step: one BasicLSTMCell step ------------------------------------------------------------


def _step_case(rng: np.random.Generator, B: int, D: int, H: int,
               forget_bias: float) -> StepTrial:
    return {"B": B, "D": D, "H": H, "forget_bias": forget_bias,
            "x": normal(rng, B, D),  # (B, D)
            "c": normal(rng, B, H),  # (B, H)
            "h": normal(rng, B, H),  # (B, H)
            "kernel": normal(rng, D + H, 4 * H, scale=0.5),  # (D + H, 4H)
            "bias": normal(rng, 4 * H, scale=0.5)}  # (4H,)


def _step_oracle(case: StepTrial) -> tuple[np.ndarray, np.ndarray]:
    weights = _weights(case)
    _, state = run_tf1(_cell(case["H"], case["forget_bias"]), case["x"], (case["c"], case["h"]),
                       weights)
    return state.c, state.h  # LSTMStateTuple(c, h)


def _step(case: StepTrial) -> tuple[np.ndarray, np.ndarray]:
    """The reference step (instructor-side)."""
    return ref.basic_lstm_step(case["x"], case["c"], case["h"], case["kernel"], case["bias"],
                               case["forget_bias"])


def _xh_swapped(case: StepTrial) -> StepTrial:
    """The case whose kernel applies to [x, h] what the case's applies to [h, x]."""
    H, kernel = case["H"], case["kernel"]
    return {**case, "kernel": np.concatenate([kernel[H:], kernel[:H]])}  # (D + H, 4H)


#: a cell state so large that c' >= 100 whatever the gates (f + forget_bias > -16): then
#: tanh(c') is 1.0 in float32 and h' = sigmoid(o), the output gate's value
HUGE_C = np.float32(1e9)


def _o_probed(case: Trial, **change: float) -> Trial:
    """The case (with ``change``) and below it the same rows with c = HUGE_C: the real cell's
    h' there is sigmoid(o) of each row."""
    case = {**case, **change}
    return {**case, "B": 2 * case["B"], "x": np.concatenate([case["x"], case["x"]]),
            "h": np.concatenate([case["h"], case["h"]]),
            "c": np.concatenate([case["c"], np.full_like(case["c"], HUGE_C)])}  # (2B, H)


def _with_o(change_h: Callable[[StepTrial, np.ndarray, np.ndarray], np.ndarray],
            ) -> Callable[[StepTrial, list[np.ndarray]], list[np.ndarray]]:
    """After :func:`_o_probed`: ``(c', change_h(case, c', sigmoid(o)))`` of the case's rows."""
    def after(case: StepTrial, right: list[np.ndarray]) -> list[np.ndarray]:
        B = case["B"]
        c_new, o = np.asarray(right[0])[:B], np.asarray(right[1])[B:]
        return [c_new, change_h(case, c_new, o)]
    return after


lstm_step = Exercise[StepTrial](
    name="lstm_step",
    probes=(Probe("h", "zero"), Probe("c", "zero"), Probe("x", "row"),
            Probe("bias", "block", 2, 4, "the f block of the bias")),
    task="(c', h'), the new state after one BasicLSTMCell(H, forget_bias=forget_bias) step: "
    "two arrays (B, H)",
    make_case=_step_case,
    call=lambda fn, c: fn(c["x"], c["c"], c["h"], c["kernel"], c["bias"], c["forget_bias"]),
    oracle=_step_oracle,
    reference=_step,
    parts=("c'", "h'"),
    designs=(  # forget_bias never 0; 1.0 once, so a hard-coded 1.0 passes one trial only
        dict(B=1, D=2, H=3, forget_bias=2.5),
        dict(B=3, D=4, H=2, forget_bias=-1.0),  # B != D (audit, issue 18)
        dict(B=2, D=1, H=4, forget_bias=1.0),
    ),
    mistakes=(
        keras_order_case(
            "you used Keras' gate order (i, f, g, o): TF1's BasicLSTMCell splits the kernel's "
            "columns into i, j, f, o.",
        ),
        forget_bias_hard_coded_case(
            "forget_bias is hard-coded as 1.0: use the `forget_bias` argument, "
            "sigmoid(f + forget_bias) (1.0 is only its default).",
        ),
        forget_bias_left_out_case(
            "forget_bias is left out: BasicLSTMCell computes sigmoid(f + forget_bias), and "
            "forget_bias is not in the bias variable.",
        ),
        forget_bias_twice_case(
            "forget_bias is added twice: add it once, inside sigmoid(f + forget_bias).",
        ),
        Mistake(
            "forget_bias is outside the sigmoid: the forget gate is sigmoid(f + forget_bias), "
            "not sigmoid(f) + forget_bias.",
            # c * (sigmoid(f) + fb) + ... is the c' of forget_bias 0, plus c * fb
            perturb=lambda c: _o_probed(c, forget_bias=0.0),
            after=lambda c, right: (lambda new, o: [new, np.tanh(new) * o])(
                np.asarray(right[0])[:c["B"]] + c["c"] * c["forget_bias"],
                np.asarray(right[1])[c["B"]:]),
        ),
        Mistake(
            "sigmoid is applied to j: j is the candidate and goes through tanh; only i, f and o "
            "are sigmoid gates.",
            lambda c: ref.basic_lstm_step(c["x"], c["c"], c["h"], c["kernel"], c["bias"],
                                          c["forget_bias"], candidate=ref.sigmoid),
        ),
        Mistake(
            "h' is computed from the old cell state: h' comes from the NEW c', the one"
            " this step computes.",
            perturb=_o_probed, after=_with_o(lambda c, new, o: np.tanh(c["c"]) * o),
        ),
        Mistake(
            "tanh of the new cell state is missing: the output gate scales tanh of c',"
            " not c' itself.",
            perturb=_o_probed, after=_with_o(lambda c, new, o: new * o),
        ),
        Mistake(
            "x and h are swapped: the cell concatenates [x, h] (input first), so the "
            "kernel's first D rows multiply x.",
            perturb=_xh_swapped,
        ),
        Mistake(
            "the previous h is left out: the gates read [x, h], so the kernel's rows "
            "for h count too.",
            perturb=lambda c: {**c, "h": np.zeros_like(c["h"])},
        ),
        Mistake(
            "the bias is left out: add `bias` before splitting into i, j, f, o.",
            perturb=lambda c: {**c, "bias": np.zeros_like(c["bias"])},
        ),
        parts_swapped_after("c' and h' are swapped: LSTMStateTuple is (c, h), cell state first."),
        split_at_h_raises(
            "the kernel is split at row H: x (B, D) meets the kernel's first D rows "
            "and h the rows after them (D = input_depth); a split at row H fits x "
            "only where D == H."),
    ),
)


# --- gate_activations: every step's gate values from a live session (capstone) --------------------


def _activations_oracle(case: SessionTrial) -> tuple[np.ndarray, ...]:
    """Fetch the real activation tensors sigmoid(i), tanh(j), sigmoid(f + forget_bias),
    sigmoid(o) of every step (found by their roles in the graph) and stack them along time."""
    steps = gate_tensors(case["T"])
    T = case["T"]
    fetched = _fetch_static(case, [steps[t][g][1] for g in GATES for t in range(T)])
    return tuple(np.stack(fetched[k * T:(k + 1) * T], axis=1) for k in range(4))  # 4 x (B,T,H)


def _activations_reference(case: SessionTrial) -> tuple[np.ndarray, ...]:
    """The gate values at every step of the run from the zero state (instructor-side)."""
    kernel, bias, forget_bias = case["kernel"], case["bias"], case["forget_bias"]
    state: Any = _zero_state(case)
    values = []
    for t in range(case["T"]):
        x = case["inputs"][:, t]
        values.append(_tf1(ref.basic_lstm_activations(x, *state, kernel, bias, forget_bias)))  # type: ignore[call-arg]
        state = ref.basic_lstm_step(x, *state, kernel, bias, forget_bias)  # type: ignore[call-arg]
    return tuple(np.stack([v[k] for v in values], axis=1) for k in range(4))  # 4 x (B, T, H)


def _f_changed(change: Callable[[SessionTrial, np.ndarray], np.ndarray],
               ) -> Callable[[SessionTrial, list[np.ndarray]], list[np.ndarray]]:
    """The right gate values with f's value changed: ``change(case, z)`` of its argument
    z = f + forget_bias, read back from the value (the state still carried rightly)."""
    return lambda case, right: [right[0], right[1], change(case, _logit(right[2])), right[3]]


def _steps_alone(case: SessionTrial) -> SessionTrial:
    """Every step of every sequence as a sequence of one step from the zero state, in a batch of
    B * T: row b * T + t is step t of sequence b (a state not carried)."""
    B, T, D = case["inputs"].shape
    return {**case, "inputs": case["inputs"].reshape(B * T, 1, D), "B": B * T, "T": 1}


def _gates_of_steps_alone(case: SessionTrial, right: list[np.ndarray]) -> list[np.ndarray]:
    B, T = case["inputs"].shape[:2]
    return [np.asarray(v).reshape(B, T, -1) for v in right]  # 4 x (B, T, H)


gate_activations = Exercise[SessionTrial](
    name="gate_activations",
    task="(i, j, f, o): four arrays (B, T, H), the gates' values (after their activations) at "
    "every time step, fetched from the session with `inputs` fed to the placeholder 'x:0'",
    make_case=_session_case,
    call=lambda fn, c: _fetched(fn, live_session(c), (c["inputs"],), "ijfo",
                                "the gate values", fed=True),
    oracle=_activations_oracle,
    reference=_activations_reference,
    parts=("i", "j", "f", "o"),
    weights=(1, 1, 3, 1),  # f is the chapter's trap (forget_bias, the Add after the split)
    by_hand=False,
    designs=(dict(GRAPH_A, B=2), dict(GRAPH_B, B=1)),  # forget_bias 2.5 and -1.0
    mistakes=(
        Mistake(
            "these are the pre-activations (the Split op's outputs): the gate values are the "
            "tensors after the split, sigmoid(i), tanh(j), sigmoid(f + forget_bias), "
            "sigmoid(o); follow each output's consumers to its Sigmoid or Tanh.",
            after=lambda c, right: [_logit(right[0]), np.arctanh(np.float64(right[1])),
                                    _logit(right[2]) - c["forget_bias"], _logit(right[3])],
        ),
        Mistake(
            "your f is the Add op's output, f + forget_bias, before its sigmoid: the forget "
            "gate's value is the Sigmoid that reads that Add (follow the Add's consumer too).",
            after=_f_changed(lambda c, z: z),
        ),
        Mistake(
            "i and f are swapped: the step's first Sigmoid is the forget gate's (it reads the "
            "Add of f and forget_bias); find each gate's Sigmoid from its Split output, not by "
            "the Sigmoid's number.",
            after=lambda c, right: [right[2], right[1], right[0], right[3]],
        ),
        Mistake(
            "you used Keras' gate order (i, f, g, o): the Split outputs are :0, :1, :2, :3 = i, "
            "j, f, o in TF1.",
            after=lambda c, right: [
                right[0], np.tanh(_logit(right[2]) - c["forget_bias"]),
                _sigmoid(np.arctanh(np.float64(right[1])) + c["forget_bias"]), right[3]],
        ),
        Mistake(
            "forget_bias is hard-coded as 1.0: this graph's cell was built with another "
            "forget_bias; take the gate's value from the graph (or read the constant the Add "
            "after split:2 adds).",
            after=_f_changed(lambda c, z: _sigmoid(z - c["forget_bias"] + 1.0)),
        ),
        Mistake(
            "forget_bias is left out: the forget gate's value is sigmoid(f + forget_bias), the "
            "Sigmoid after the Add that follows split:2.",
            after=_f_changed(lambda c, z: _sigmoid(z - c["forget_bias"])),
        ),
        Mistake(
            "forget_bias is added twice: the Add after split:2 has added it already, so its "
            "output goes into the sigmoid as it is.",
            after=_f_changed(lambda c, z: _sigmoid(z + c["forget_bias"])),
        ),
        Mistake(
            "forget_bias is outside the sigmoid: the forget gate is sigmoid(f + forget_bias), "
            "not sigmoid(f) + forget_bias.",
            after=_f_changed(lambda c, z: _sigmoid(z - c["forget_bias"]) + c["forget_bias"]),
        ),
        Mistake(
            "sigmoid is applied to j: j is the candidate and goes through tanh (its consumer is "
            "a Tanh op).",
            after=lambda c, right: [right[0], _sigmoid(np.arctanh(np.float64(right[1]))),
                                    *right[2:]],
        ),
        Mistake(
            "the arrays are time-major (T, B, H): stack the steps along axis 1 to get "
            "(B, T, H).",
            after=lambda c, right: [np.swapaxes(v, 0, 1) for v in right],
        ),
        Mistake(
            "step 0 is missing: the first step is `split` (no suffix), then `split_1`, ... "
            "`split_(T-1)`: T steps in all.",
            after=lambda c, right: [np.asarray(v)[:, 1:] for v in right],
        ),
        Mistake(SPLIT_0, _split_0_every_step, raises=names_split_0),
        Mistake(
            "the state is not carried: each step's gates depend on the h from the step before, "
            "so update (c, h) after every step (or fetch the graph's own gate tensors).",
            perturb=_steps_alone, after=_gates_of_steps_alone,
        ),
        not_from_api(
            f"the gate values {NOT_FETCHED}: the exercise is to read them from the graph's "
            "own tensors, and no session.run was fed the batch (a recomputation from the "
            "weights).", NOT_FETCHED),
    ),
)


CHAPTER = Chapter(2, "02-lstm-gate-tensors", [
    gate_tensor_name, split_ops_in_event_file, gate_weights, gate_preactivations, lstm_step,
    gate_activations,
], keras3=False,  # TF1's cells only: tf-keras, never Keras 3
    warm=("tensorboard",))  # its learners read event files
check = CHAPTER.check
