"""Chapter 2 (reading LSTM gate tensors by graph name): exercises and their checks.

Every oracle looks into, or runs, TensorFlow's real ``BasicLSTMCell`` unrolled by ``static_rnn``
(built by :func:`rnnbook.graphs.lstm_graph`, the graph the chapter writes for TensorBoard).
Which Split output is which gate is read from the graph's structure, not from a formula: the
output that feeds ``Tanh`` is j, the one that meets ``forget_bias`` in an ``Add`` is f, the one
whose sigmoid multiplies ``tanh(c')`` is o, the remaining sigmoid is i (:func:`gate_tensors`).
Notation (book/notation.md): ``B`` batch, ``T`` time, ``D`` input depth, ``H`` num_units;
``kernel`` is ``(D + H, 4H)``, ``bias`` ``(4H,)``, gate blocks i, j, f, o.
"""
import atexit
import functools
import shutil
import tempfile

import numpy as np

from rnnbook import graphs
from rnnbook.checking import Chapter, Exercise, Mistake, normal, sigmoid, sizes
from rnnbook.oracles import run_tf1, tensorflow

GATES = "ijfo"  # TF1's order: input, new input (candidate), forget, output
KERAS = "ifjo"  # Keras' order i, f, c, o, written with TF1's letters (Keras' c is TF1's j)
DEFAULT_FORGET_BIAS = 1.0


# --- The gates in the real graph -------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def gate_tensors(T):
    """For ``BasicLSTMCell`` unrolled over ``T`` steps by ``static_rnn``: one dict per time step,
    ``{gate: (pre-activation tensor name, activation tensor name)}``, found by walking back from
    each step's output ``h_t = tanh(c_t) * sigmoid(o)`` through the real graph."""
    _, _, outputs, _ = graphs.lstm_graph(T, D=2, H=3)
    return tuple(_gates_of_step(h) for h in outputs)


def _only(items, what):
    items = list(items)
    if len(items) != 1:
        raise AssertionError(f"expected one {what} in BasicLSTMCell's graph, found {len(items)}")
    return items[0]


def _gates_of_step(h):
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


def _cell(H, forget_bias=DEFAULT_FORGET_BIAS):
    return lambda: tensorflow().compat.v1.nn.rnn_cell.BasicLSTMCell(H, forget_bias=forget_bias)


def _run_static(case, inputs, state, names, forget_bias=DEFAULT_FORGET_BIAS):
    """Run the real cell over ``inputs`` (B, T, D) from ``state`` (c, h); fetch ``names``."""
    weights = {"kernel": case["kernel"], "bias": case["bias"]}
    return run_tf1(_cell(case["H"], forget_bias), inputs, state, weights, mode="static",
                   fetch=names)


def _split(z):
    return np.split(z, 4, axis=-1)  # the four gate blocks of a (..., 4H) array


# --- Exercise 2.1: the name of a gate's tensor -----------------------------------------------


def _name_case(rng):
    T = int(rng.integers(2, 8))
    t = 0 if rng.random() < 1 / 3 else int(rng.integers(1, T))  # step 0 is the special name
    return {"gate": str(rng.choice(list(GATES))), "t": t, "T": T}


def _name_oracle(case):
    return gate_tensors(case["T"])[case["t"]][case["gate"]][0]


def _op_name(case, t):
    """The real Split op name of step 0 (``rnn/basic_lstm_cell/split``) with suffix ``_t``."""
    base = gate_tensors(case["T"])[0]["i"][0].split(":")[0]
    return base if t is None else f"{base}_{t}"


def _oracle_op(case):
    return _name_oracle(case).split(":")[0]


gate_tensor_name = Exercise(
    name="gate_tensor_name",
    task="the tensor name 'op_name:output_index' of gate g's pre-activation at time step t, "
    "e.g. gate_tensor_name('j', 2) == 'rnn/basic_lstm_cell/split_2:1'",
    make_case=_name_case,
    call=lambda fn, c: fn(c["gate"], c["t"]),
    oracle=_name_oracle,
    trials=12,
    mistakes=(
        Mistake(
            "you used Keras' gate order (i, f, c, o): TF1's BasicLSTMCell splits into i, j, f, o, "
            "so j is output :1 and f is output :2.",
            lambda c: f"{_oracle_op(c)}:{KERAS.index(c['gate'])}",
        ),
        Mistake(
            "the output index counts from 1: a Split op's outputs are :0, :1, :2, :3 = i, j, f, o.",
            lambda c: f"{_oracle_op(c)}:{GATES.index(c['gate']) + 1}",
        ),
        Mistake(
            "every gate got output :0: the four gates are the four outputs of one Split op, "
            ":0, :1, :2, :3 = i, j, f, o.",
            lambda c: f"{_oracle_op(c)}:0",
        ),
        Mistake(
            "`split_0` does not exist: TensorFlow names the first op `split` and suffixes the "
            "repeats `split_1`, `split_2`, ... so time step 0 is `split` and step t is `split_t`.",
            lambda c: f"{_op_name(c, c['t'])}:{GATES.index(c['gate'])}",
        ),
        Mistake(
            "the time-step suffix is off by one: step 0 is `split`, step 1 is `split_1`, step t is "
            "`split_t` (time steps count from 0).",
            lambda c: f"{_op_name(c, c['t'] + 1)}:{GATES.index(c['gate'])}",
        ),
        Mistake(
            "the time-step suffix is off by one the other way: step t is `split_t`, not "
            "`split_(t-1)`; only step 0 has no suffix.",
            lambda c: f"{_op_name(c, None if c['t'] <= 1 else c['t'] - 1)}:{GATES.index(c['gate'])}",
        ),
        Mistake(
            "that is an op name: a tensor name adds the output index, 'op_name:k' (k = 0, 1, 2, 3 "
            "for i, j, f, o).",
            lambda c: _oracle_op(c),
        ),
        Mistake(
            "the scope is missing: static_rnn builds the cell under `rnn/`, so the name starts "
            "'rnn/basic_lstm_cell/'.",
            lambda c: _name_oracle(c).split("/", 1)[1],
        ),
    ),
)


# --- Exercise 2.2: the Split ops in an event file --------------------------------------------

_EVENT_FILES = {}  # (T, layers, split_inputs) -> (path, Split op names of the live graph)


def _event_file(T, layers, split_inputs):
    """Write (once per process) the graph for these settings to an event file in a fresh temp
    folder; return its absolute path and the Split op names TensorFlow's live graph holds."""
    key = (T, layers, split_inputs)
    found = _EVENT_FILES.get(key)
    if found is None or not found[0].exists():
        graph = graphs.lstm_graph(T, D=2, H=3, layers=layers, split_inputs=split_inputs)[0]
        names = [op.name for op in graph.get_operations() if op.type == "Split"]
        folder = tempfile.mkdtemp(prefix="rnnbook-ch02-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # readers are done by then
        found = _EVENT_FILES[key] = (graphs.write_graph(graph, folder).resolve(), names)
    return found


def _event_case(rng):
    T, layers, split_inputs = int(rng.integers(2, 8)), int(rng.integers(1, 3)), bool(rng.random() < 0.5)
    path = _event_file(T, layers, split_inputs)[0]
    return {"path": str(path), "T": T, "L": layers, "split_inputs": split_inputs}


def _event_oracle(case):
    return _event_file(case["T"], case["L"], case["split_inputs"])[1]


def _names_containing(case, text):
    return [n.name for n in graphs.read_graph(case["path"]).node if text in n.name]


split_ops_in_event_file = Exercise(
    name="split_ops_in_event_file",
    task="a list of the names of every op of type 'Split' in the event file's graph, in the "
    "order the GraphDef lists its nodes",
    make_case=_event_case,
    call=lambda fn, c: fn(c["path"]),
    oracle=_event_oracle,
    by_hand=False,
    mistakes=(
        Mistake(
            "those are tensor names: a node's `name` is the op name (`.../split`), without ':0'.",
            lambda c: [f"{n}:0" for n in _event_oracle(c)],
        ),
        Mistake(
            "you matched 'split' in the name, which also catches the Const `split/split_dim`: keep "
            "the nodes whose `op` is 'Split'.",
            lambda c: _names_containing(c, "split"),
        ),
        Mistake(
            "you kept only the cell's Split ops: the graph also has the Split op `split` that cut "
            "x into time steps (tf.split); return every node whose `op` is 'Split'.",
            lambda c: _names_containing(c, "basic_lstm_cell/split"),
        ),
        Mistake(
            "the names are sorted: return them in the order the GraphDef lists its nodes (time "
            "step by time step), which is the order TensorFlow created the ops.",
            lambda c: sorted(_event_oracle(c)),
        ),
    ),
)


# --- Exercise 2.3: the weights of every gate -------------------------------------------------


def _weights_case(rng):
    case = sizes(rng)
    del case["B"]  # the weights have no batch
    D, H = case["D"], case["H"]
    case["kernel"] = normal(rng, D + H, 4 * H, scale=0.5)  # (D + H, 4H)
    case["bias"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
    return case


def _weights_oracle(case):
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
    z = np.stack(_run_static(case, x, (c, h), names)[2:])  # (4, 1 + D + H, H)
    b = z[:, 0]  # (4, H)
    return z[:, 1:1 + D] - b[:, None], z[:, 1 + D:] - b[:, None], b  # (4, D, H), (4, H, H), (4, H)


def _stacked(case, order=GATES):
    """(W, U, b) by gate, as a learner who believes the blocks come in ``order`` would stack them."""
    D, H = case["D"], case["H"]
    blocks = [slice(order.index(g) * H, (order.index(g) + 1) * H) for g in GATES]
    W = np.stack([case["kernel"][:D, cols] for cols in blocks])
    U = np.stack([case["kernel"][D:, cols] for cols in blocks])
    b = np.stack([case["bias"][cols] for cols in blocks])
    return W, U, b


def _reshaped(case):
    D, H = case["D"], case["H"]
    return (case["kernel"][:D].reshape(4, D, H), case["kernel"][D:].reshape(4, H, H),
            case["bias"].reshape(4, H))


gate_weights = Exercise(
    name="gate_weights",
    task="(W, U, b) with one block per gate in TF1's order i, j, f, o: W (4, D, H) multiplies "
    "x, U (4, H, H) multiplies h, b (4, H) is each gate's part of the bias variable",
    make_case=_weights_case,
    call=lambda fn, c: fn(c["kernel"], c["bias"], c["D"]),
    oracle=_weights_oracle,
    parts=("W", "U", "b"),
    mistakes=(
        Mistake(
            "you used Keras' gate order (i, f, c, o): in TF1's kernel the column blocks are i, j, "
            "f, o, so j is columns [H:2H] and f is columns [2H:3H].",
            lambda c: _stacked(c, KERAS),
        ),
        Mistake(
            "W and U are swapped: the first D rows of the kernel multiply x (W), the last H rows "
            "multiply h (U).",
            lambda c: (lambda W, U, b: (U, W, b))(*_stacked(c)),
        ),
        Mistake(
            "forget_bias is not stored in the bias variable: the forget gate's bias is just "
            "bias[2H:3H]; BasicLSTMCell adds forget_bias (1.0) at run time, inside the sigmoid.",
            lambda c: (lambda W, U, b: (W, U, b + DEFAULT_FORGET_BIAS * np.eye(4, 1, -2)))(*_stacked(c)),
        ),
        Mistake(
            "reshape(4, D, H) mixes the gates' columns: a gate is a block of H COLUMNS, "
            "kernel[:, k*H:(k+1)*H]; slice the blocks (or reshape to (D, 4, H) and move the gate "
            "axis first).",
            _reshaped,
        ),
    ),
)


# --- Exercise 2.4: the gate pre-activations --------------------------------------------------


def _gates_case(rng):
    case = sizes(rng)
    B, D, H = case["B"], case["D"], case["H"]
    case["x"] = normal(rng, B, D)  # (B, D)
    case["h"] = normal(rng, B, H)  # (B, H)
    case["kernel"] = normal(rng, D + H, 4 * H, scale=0.5)  # (D + H, 4H)
    case["bias"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
    return case


def _gates_oracle(case):
    names = [gate_tensors(1)[0][g][0] for g in GATES]  # rnn/basic_lstm_cell/split:0 ... :3
    c = np.zeros_like(case["h"])
    return tuple(_run_static(case, case["x"][:, None], (c, case["h"]), names)[2:])


def _z(c, x=None, h=None, kernel=None, bias=None):
    """[x, h] @ kernel + bias, (B, 4H)."""
    x = c["x"] if x is None else x
    h = c["h"] if h is None else h
    kernel = c["kernel"] if kernel is None else kernel
    bias = c["bias"] if bias is None else bias
    return np.concatenate([x, h], axis=1) @ kernel + bias


def _in_order(blocks, order):
    """Name the blocks the way a learner who believes ``order`` would, return them as i, j, f, o."""
    named = dict(zip(order, blocks, strict=True))
    return tuple(named[g] for g in GATES)


lstm_gates = Exercise(
    name="lstm_gates",
    task="(i, j, f, o): the four (B, H) blocks of [x, h] @ kernel + bias, the outputs :0..:3 of "
    "BasicLSTMCell's Split op (before any sigmoid or tanh)",
    make_case=_gates_case,
    call=lambda fn, c: fn(c["x"], c["h"], c["kernel"], c["bias"]),
    oracle=_gates_oracle,
    parts=("i", "j", "f", "o"),
    mistakes=(
        Mistake(
            "you used Keras' gate order (i, f, c, o): TF1 splits [x, h] @ kernel + bias into i, j, "
            "f, o, in that order, so j is the second block and f the third.",
            lambda c: _in_order(_split(_z(c)), KERAS),
        ),
        Mistake(
            "forget_bias is not part of the split's f output: BasicLSTMCell adds it (1.0) after "
            "the split, inside sigmoid(f + forget_bias).",
            lambda c: (lambda i, j, f, o: (i, j, f + DEFAULT_FORGET_BIAS, o))(*_split(_z(c))),
        ),
        Mistake("the bias is left out: add `bias` before splitting.",
                lambda c: tuple(_split(_z(c, bias=np.zeros_like(c["bias"]))))),
        Mistake(
            "x and h are swapped: concatenate [x, h] (input first), so rows [:D] of the kernel "
            "multiply x.",
            lambda c: tuple(_split(np.concatenate([c["h"], c["x"]], 1) @ c["kernel"] + c["bias"])),
        ),
        Mistake(
            "these are activations: the Split op's outputs are the pre-activations; sigmoid and "
            "tanh come after the split.",
            lambda c: (lambda i, j, f, o: (sigmoid(i), np.tanh(j), sigmoid(f + DEFAULT_FORGET_BIAS),
                                           sigmoid(o)))(*_split(_z(c))),
        ),
    ),
)


# --- Exercise 2.5: one BasicLSTMCell step ----------------------------------------------------


def _step_case(rng):
    case = _gates_case(rng)
    case["c"] = normal(rng, case["B"], case["H"])  # (B, H)
    case["forget_bias"] = float(rng.choice([0.5, 1.0, 1.5, 2.0]))
    return case


def _step_oracle(case):
    _, state = _run_static(case, case["x"][:, None], (case["c"], case["h"]), [],
                           forget_bias=case["forget_bias"])
    return state.c, state.h  # LSTMStateTuple(c, h)


def _step(c, x, cc, h, order=GATES, forget=1.0, act_j=np.tanh, act_c=np.tanh, h_from_old_c=False):
    """One BasicLSTMCell step with NumPy, with knobs for the known mistakes; returns (c', h')."""
    i, j, f, o = _in_order(_split(_z(c, x=x, h=h)), order)
    c_new = cc * sigmoid(f + forget * c["forget_bias"]) + sigmoid(i) * act_j(j)
    h_new = act_c(cc if h_from_old_c else c_new) * sigmoid(o)
    return c_new, h_new


STEP_MISTAKES = (
    ("you used Keras' gate order (i, f, c, o): TF1's BasicLSTMCell splits the kernel's columns "
     "into i, j, f, o.", dict(order=KERAS)),
    ("forget_bias is left out: BasicLSTMCell computes sigmoid(f + forget_bias), and forget_bias "
     "is not in the bias variable.", dict(forget=0.0)),
    ("forget_bias is added twice: add it once, inside sigmoid(f + forget_bias).", dict(forget=2.0)),
    ("sigmoid is applied to j: j is the new input (candidate) and goes through tanh; only i, f "
     "and o are sigmoid gates.", dict(act_j=sigmoid)),
    ("tanh of the new cell state is missing: h' = tanh(c') * sigmoid(o).",
     dict(act_c=lambda v: v)),
    ("h' uses the old cell state: h' = tanh(c') * sigmoid(o) with the NEW c'.",
     dict(h_from_old_c=True)),
)

lstm_step = Exercise(
    name="lstm_step",
    task="(c', h') after one BasicLSTMCell step: c' = c * sigmoid(f + forget_bias) + "
    "sigmoid(i) * tanh(j), h' = tanh(c') * sigmoid(o), each (B, H)",
    make_case=_step_case,
    call=lambda fn, c: fn(c["x"], c["c"], c["h"], c["kernel"], c["bias"], c["forget_bias"]),
    oracle=_step_oracle,
    parts=("c'", "h'"),
    mistakes=(
        *(Mistake(sentence, lambda c, kw=kw: _step(c, c["x"], c["c"], c["h"], **kw))
          for sentence, kw in STEP_MISTAKES),
        Mistake(
            "c' and h' are swapped: LSTMStateTuple is (c, h), cell state first.",
            lambda c: _step(c, c["x"], c["c"], c["h"])[::-1],
        ),
    ),
)


# --- Exercise 2.6: the gate activations over a sequence --------------------------------------


def _sequence_case(rng):
    case = sizes(rng)
    B, D, H = case["B"], case["D"], case["H"]
    case["T"] = int(rng.integers(2, 6))
    case["inputs"] = normal(rng, B, case["T"], D)  # (B, T, D)
    case["kernel"] = normal(rng, D + H, 4 * H, scale=0.5)  # (D + H, 4H)
    case["bias"] = normal(rng, 4 * H, scale=0.5)  # (4H,)
    case["forget_bias"] = float(rng.choice([0.5, 1.0, 1.5, 2.0]))
    return case


def _sequence_oracle(case):
    """Fetch the real activation tensors sigmoid(i), tanh(j), sigmoid(f + forget_bias),
    sigmoid(o) of every time step and stack them along time."""
    steps = gate_tensors(case["T"])
    names = [steps[t][g][1] for g in GATES for t in range(case["T"])]
    fetched = _run_static(case, case["inputs"], None, names, case["forget_bias"])[2:]
    T = case["T"]
    return tuple(np.stack(fetched[k * T:(k + 1) * T], axis=1) for k in range(4))  # 4 x (B, T, H)


def _activations(c, order=GATES, forget=1.0, act_j=np.tanh, carry=True, time_major=False):
    B, T, _ = c["inputs"].shape
    H = c["H"]
    state = np.zeros((B, H), np.float32), np.zeros((B, H), np.float32)
    out = [[] for _ in GATES]
    for t in range(T):
        x = c["inputs"][:, t]
        cc, h = state
        i, j, f, o = _in_order(_split(_z(c, x=x, h=h)), order)
        acts = sigmoid(i), act_j(j), sigmoid(f + forget * c["forget_bias"]), sigmoid(o)
        for k, a in enumerate(acts):
            out[k].append(a)
        c_new = cc * acts[2] + acts[0] * acts[1]
        new = c_new, np.tanh(c_new) * acts[3]
        state = new if carry else state
    axis = 0 if time_major else 1
    return tuple(np.stack(a, axis=axis) for a in out)


lstm_gate_activations = Exercise(
    name="lstm_gate_activations",
    task="(sigmoid(i), tanh(j), sigmoid(f + forget_bias), sigmoid(o)) at every time step from a "
    "zero state, each (B, T, H)",
    make_case=_sequence_case,
    call=lambda fn, c: fn(c["inputs"], c["kernel"], c["bias"], c["forget_bias"]),
    oracle=_sequence_oracle,
    parts=("sigmoid(i)", "tanh(j)", "sigmoid(f + forget_bias)", "sigmoid(o)"),
    mistakes=(
        *(Mistake(sentence, lambda c, kw=kw: _activations(c, **kw))
          for sentence, kw in STEP_MISTAKES[:4]),
        Mistake(
            "the state is not carried: each step's gates depend on the h from the step before, "
            "so update (c, h) after every step.",
            lambda c: _activations(c, carry=False),
        ),
        Mistake(
            "the arrays are time-major (T, B, H): stack the steps along axis 1 to get (B, T, H).",
            lambda c: _activations(c, time_major=True),
        ),
    ),
)


CHAPTER = Chapter(2, "02-lstm-gate-tensors", [
    gate_tensor_name, split_ops_in_event_file, gate_weights, lstm_gates, lstm_step,
    lstm_gate_activations,
])
check = CHAPTER.check
