"""The one NumPy reference of every cell the book teaches, held to TensorFlow by one test.

Every equation of the book is written here once: BasicRNNCell, BasicLSTMCell, LSTMCell
(peepholes, ``cell_clip``, projection, ``proj_clip``), Keras 3's LSTM, PyTorch's ``nn.LSTM``,
and running any of them over time: unrolled, stacked in layers, or in chunks with the state
carried. ``tests/test_reference.py`` holds each function to the real TensorFlow cell.

A check's *mistake model* is a reference function with one thing changed: an argument
(``forget_bias=0.0``, ``order=KERAS``, ``activation=sigmoid``) or a named ``slip``, one wrong
line a learner writes (``slip="h from old c"``). So a bug in an equation is fixed here, once.

This module solves the by-hand exercises. It is instructor-side: the learner release replaces
it with a stub, and no grading child can import it (the book's page *For instructors*, "Assigning").

Conventions (book/notation.md): batch-major, right-multiplied; ``x`` (B, D), ``h`` (B, H),
``c`` (B, H); TF1 kernels ``(D + H, kH)`` act on ``[x, h]``. Gate blocks are named with the
book's letters: ``i`` input gate, ``j`` candidate (Keras calls its block ``c``, PyTorch
``g``), ``f`` forget gate, ``o`` output gate. A GRU's: ``r`` reset gate, ``z`` update gate
(TF1's source calls it ``u``), ``h`` the candidate h~ (``cand`` in code; TF1 calls it ``c``,
Keras ``hh``, PyTorch ``n``).
"""
from __future__ import annotations

from typing import Any, Callable, Collection, Sequence

import numpy as np

#: A gate order: the gate letter of each column block of a kernel, left to right.
TF1 = ("i", "j", "f", "o")  # BasicLSTMCell and LSTMCell
KERAS = ("i", "f", "j", "o")  # Keras 3's and PyTorch's i, f, g, o (their g is our j)
GATE_NAMES = {TF1: "TF1's i, j, f, o", KERAS: "Keras' and PyTorch's i, f, c/g, o"}


def _identity(z: np.ndarray) -> np.ndarray:
    return z


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function, as TensorFlow's gates apply it."""
    return 1.0 / (1.0 + np.exp(-z))


def split_gates(z: np.ndarray, order: tuple[str, ...] = TF1, axis: int = -1) -> dict[str, np.ndarray]:
    """``{gate: block}`` for the column blocks of ``z`` (..., kH) read in ``order`` (k gates:
    four for an LSTM's orders, two or three for a GRU's)."""
    return dict(zip(order, np.split(z, len(order), axis=axis), strict=True))


def join_gates(blocks: dict[str, np.ndarray], order: tuple[str, ...], axis: int = -1) -> np.ndarray:
    """The inverse of :func:`split_gates`: the blocks of ``blocks`` laid out in ``order``."""
    return np.concatenate([blocks[g] for g in order], axis=axis)


def reorder(a: np.ndarray, source: tuple[str, ...], target: tuple[str, ...], axis: int = -1) -> np.ndarray:
    """``a``'s gate blocks (along ``axis``) moved from ``source`` order to ``target``."""
    return join_gates(split_gates(a, source, axis), target, axis)


def _slip(slip: str | None, allowed: Collection[str]) -> str | None:
    if slip is not None and slip not in allowed:
        raise ValueError(f"unknown slip {slip!r}; this function knows {sorted(allowed)}")
    return slip


# ---------------------------------------------------------------------------------------------
# BasicRNNCell (Chapter 1)


def basic_rnn_step(x: np.ndarray, h: np.ndarray, kernel: np.ndarray, bias: np.ndarray,
                   activation: Callable[[np.ndarray], np.ndarray] = np.tanh,
                   slip: str | None = None) -> np.ndarray:
    """``h' = tanh([x, h] @ kernel + bias)``: BasicRNNCell's output and new state (B, H).

    Slips: ``"[h, x]"`` concatenates the state first (the kernel split at row H).
    """
    _slip(slip, {"[h, x]"})
    xh = np.concatenate([h, x] if slip == "[h, x]" else [x, h], axis=1)  # (B, D + H)
    return activation(xh @ kernel + bias)  # (B, H)


# ---------------------------------------------------------------------------------------------
# BasicLSTMCell (Chapters 2 and 4)


def lstm_preactivations(x: np.ndarray, h: np.ndarray, kernel: np.ndarray, bias: np.ndarray,
                        order: tuple[str, ...] = TF1) -> dict[str, np.ndarray]:
    """``{gate: (B, H)}``: the blocks of ``[x, h] @ kernel + bias``, the outputs of
    BasicLSTMCell's Split op (pre-activations, before any sigmoid or tanh)."""
    z = np.concatenate([x, h], axis=1) @ kernel + bias  # (B, 4H)
    return split_gates(z, order)


BASIC_LSTM_SLIPS = {
    "forget_bias outside sigmoid",  # sigmoid(f) + forget_bias
    "h from old c",  # h' = tanh(c) * sigmoid(o) with the OLD c
}


def basic_lstm_step(x: np.ndarray, c: np.ndarray, h: np.ndarray, kernel: np.ndarray,
                    bias: np.ndarray, forget_bias: float = 1.0, order: tuple[str, ...] = TF1,
                    candidate: Callable[[np.ndarray], np.ndarray] = np.tanh,
                    cell_activation: Callable[[np.ndarray], np.ndarray] = np.tanh,
                    slip: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One BasicLSTMCell step: ``(c', h')``, each (B, H).

    ``c' = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j)``, ``h' = tanh(c') * sigmoid(o)``.
    """
    _slip(slip, BASIC_LSTM_SLIPS)
    g = lstm_preactivations(x, h, kernel, bias, order)
    if slip == "forget_bias outside sigmoid":
        forget = sigmoid(g["f"]) + forget_bias
    else:
        forget = sigmoid(g["f"] + forget_bias)
    c_new = c * forget + sigmoid(g["i"]) * candidate(g["j"])
    h_new = cell_activation(c if slip == "h from old c" else c_new) * sigmoid(g["o"])
    return c_new, h_new


def basic_lstm_activations(x: np.ndarray, c: np.ndarray, h: np.ndarray, kernel: np.ndarray,
                           bias: np.ndarray, forget_bias: float = 1.0,
                           order: tuple[str, ...] = TF1) -> dict[str, np.ndarray]:
    """The gate values of one BasicLSTMCell step: ``{i: sigmoid(i), j: tanh(j),
    f: sigmoid(f + forget_bias), o: sigmoid(o)}``."""
    g = lstm_preactivations(x, h, kernel, bias, order)
    return {"i": sigmoid(g["i"]), "j": np.tanh(g["j"]), "f": sigmoid(g["f"] + forget_bias),
            "o": sigmoid(g["o"])}


# ---------------------------------------------------------------------------------------------
# LSTMCell: peepholes, cell_clip, projection (Chapter 3)

LSTM_CELL_SLIPS = {
    "o peephole on old c",  # w_o_diag * c_prev instead of the new c
    "o peephole on unclipped c",  # w_o_diag * c before cell_clip
    "clip after m",  # m from the unclipped c, c clipped afterwards
    "cell_clip on m",  # m clipped by cell_clip, c never clipped
    "proj_clip before projection",
    "project c",  # c @ projection too, m not projected
    "project c and m",
}


def lstm_cell_step(x: np.ndarray, c: np.ndarray, m: np.ndarray, kernel: np.ndarray,
                   bias: np.ndarray, forget_bias: float = 1.0,
                   w_i_diag: np.ndarray | None = None, w_f_diag: np.ndarray | None = None,
                   w_o_diag: np.ndarray | None = None, cell_clip: float | None = None,
                   projection: np.ndarray | None = None, proj_clip: float | None = None,
                   order: tuple[str, ...] = TF1,
                   slip: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One LSTMCell step: ``(c', m')``, c' (B, H) and m' (B, P or H).

    Peepholes (``w_*_diag``, (H,) each, or None): ``w_i_diag * c`` and ``w_f_diag * c`` use
    the previous c, ``w_o_diag * c'`` the new, clipped one. ``cell_clip`` clips c' before m' is
    computed from it; ``projection`` (H, P) maps m' to P columns; ``proj_clip`` clips the
    projected m'. The kernel is ``(D + P, 4H)`` (or ``(D + H, 4H)`` without projection).
    """
    _slip(slip, LSTM_CELL_SLIPS)
    g = lstm_preactivations(x, m, kernel, bias, order)
    zero = np.zeros(c.shape[-1], np.float32)
    wi, wf, wo = (zero if w is None else w for w in (w_i_diag, w_f_diag, w_o_diag))
    c_new = (sigmoid(g["f"] + forget_bias + wf * c) * c
             + sigmoid(g["i"] + wi * c) * np.tanh(g["j"]))  # (B, H)
    unclipped = c_new
    if cell_clip is not None and slip not in ("clip after m", "cell_clip on m"):
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    peeped = {"o peephole on old c": c, "o peephole on unclipped c": unclipped}.get(slip or "", c_new)
    m_new = sigmoid(g["o"] + wo * peeped) * np.tanh(c_new)  # (B, H)
    if cell_clip is not None and slip == "clip after m":
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    if cell_clip is not None and slip == "cell_clip on m":
        m_new = np.clip(m_new, -cell_clip, cell_clip)
    if projection is not None:
        if proj_clip is not None and slip == "proj_clip before projection":
            m_new = np.clip(m_new, -proj_clip, proj_clip)
        if slip in ("project c", "project c and m"):
            c_new = c_new @ projection
        if slip != "project c":
            m_new = m_new @ projection  # (B, P)
        if proj_clip is not None and slip != "proj_clip before projection":
            m_new = np.clip(m_new, -proj_clip, proj_clip)
    return c_new, m_new


# ---------------------------------------------------------------------------------------------
# Keras 3 and PyTorch (Chapters 3 and 4)


def keras_lstm_step(x: np.ndarray, h: np.ndarray, c: np.ndarray, kernel: np.ndarray,
                    recurrent_kernel: np.ndarray, bias: np.ndarray, order: tuple[str, ...] = KERAS,
                    forget_bias: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """One step of Keras 3's LSTM: ``(h', c')`` (Keras keeps ``[h, c]``, h first).

    ``kernel`` (D, 4H), ``recurrent_kernel`` (H, 4H), ``bias`` (4H,), gates i, f, g, o. Keras
    adds nothing to f at run time (``forget_bias`` is here only for the mistake that does).
    """
    z = x @ kernel + h @ recurrent_kernel + bias  # (B, 4H)
    g = split_gates(z, order)
    c_new = c * sigmoid(g["f"] + forget_bias) + sigmoid(g["i"]) * np.tanh(g["j"])
    return np.tanh(c_new) * sigmoid(g["o"]), c_new


def pytorch_lstm_step(x: np.ndarray, h: np.ndarray, c: np.ndarray, weight_ih: np.ndarray,
                      weight_hh: np.ndarray, bias_ih: np.ndarray, bias_hh: np.ndarray,
                      weight_hr: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One step of PyTorch's ``nn.LSTM`` as its documentation writes it: ``(h', c')``.

    ``weight_ih`` (4H, D) and ``weight_hh`` (4H, H, or P with ``proj_size``) are applied as
    ``W @ x`` (transposed relative to Keras), gates i, f, g, o, two biases; with
    ``weight_hr`` (P, H) the new h is projected: ``h' = weight_hr @ h'``.
    """
    z = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh  # (B, 4H)
    g = split_gates(z, KERAS)
    c_new = sigmoid(g["f"]) * c + sigmoid(g["i"]) * np.tanh(g["j"])
    h_new = sigmoid(g["o"]) * np.tanh(c_new)
    if weight_hr is not None:
        h_new = h_new @ weight_hr.T  # (B, P)
    return h_new, c_new


def keras_from_tf1(kernel: np.ndarray, bias: np.ndarray, forget_bias: float,
                   input_depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keras 3 LSTM weights ``(kernel, recurrent_kernel, bias)`` that compute exactly what a
    TF1 BasicLSTMCell with ``kernel``, ``bias`` and ``forget_bias`` computes."""
    kernel = reorder(kernel, TF1, KERAS)  # (D + H, 4H)
    blocks = split_gates(np.asarray(bias, np.float32), TF1)
    blocks["f"] = blocks["f"] + forget_bias  # Keras adds nothing at run time: fold it in
    return kernel[:input_depth], kernel[input_depth:], join_gates(blocks, KERAS)


def keras_from_pytorch(weight_ih: np.ndarray, weight_hh: np.ndarray, bias_ih: np.ndarray,
                       bias_hh: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keras 3 LSTM weights for PyTorch's: transposed, the two biases added, order kept."""
    return weight_ih.T, weight_hh.T, bias_ih + bias_hh


# ---------------------------------------------------------------------------------------------
# GRU in its three layouts (Chapter 6). New h = z * h + (1 - z) * h~ in all three.

GRU_TF1 = ("r", "z")  # TF1 GRUCell's gates/kernel and gates/bias; candidate/kernel apart
GRU_KERAS = ("z", "r", "h")  # Keras 3's kernel, recurrent_kernel and each row of bias
GRU_TORCH = ("r", "z", "h")  # PyTorch's rows of weight_ih, weight_hh, bias_ih, bias_hh (r, z, n)
#: Keras 3 GRU weights: ``(kernel, recurrent_kernel, bias)``
KerasGRU = tuple[np.ndarray, np.ndarray, np.ndarray]
#: PyTorch GRU weights: ``(weight_ih, weight_hh, bias_ih, bias_hh)``
TorchGRU = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def tf1_gru_step(x: np.ndarray, h: np.ndarray, gates_kernel: np.ndarray,
                 gates_bias: np.ndarray, cand_kernel: np.ndarray,
                 cand_bias: np.ndarray) -> np.ndarray:
    """One step of TF1's ``GRUCell``: h' (B, H), its output and new state.

    ``r, z = sigmoid([x, h] @ gates_kernel + gates_bias)`` (kernel (D + H, 2H), blocks r, z),
    ``h~ = tanh([x, r * h] @ cand_kernel + cand_bias)`` (kernel (D + H, H)): r resets h BEFORE
    the candidate's matmul. A fresh cell's gates bias is 1.0, its candidate bias 0.
    """
    gates = sigmoid(np.concatenate([x, h], axis=1) @ gates_kernel + gates_bias)  # (B, 2H)
    g = split_gates(gates, GRU_TF1)
    cand = np.tanh(np.concatenate([x, g["r"] * h], axis=1) @ cand_kernel + cand_bias)  # (B, H)
    return g["z"] * h + (1 - g["z"]) * cand


def keras_gru_step(x: np.ndarray, h: np.ndarray, kernel: np.ndarray,
                   recurrent_kernel: np.ndarray, bias: np.ndarray,
                   reset_after: bool = True) -> np.ndarray:
    """One step of Keras 3's ``GRU``/``GRUCell``: h' (B, H). Blocks z, r, h~ in every weight.

    ``kernel`` (D, 3H), ``recurrent_kernel`` (H, 3H). ``reset_after=True`` (the default, what
    cuDNN computes): ``bias`` (2, 3H), row 0 for the input's matmul, row 1 for the state's, and
    ``h~ = tanh(x W_h + b_h + r * (h U_h + b'_h))``: r applied AFTER the matmul, so the two
    candidate biases are not one. ``reset_after=False``: ``bias`` (3H,) and
    ``h~ = tanh(x W_h + (r * h) U_h + b_h)``, TF1's form.
    """
    bias = np.asarray(bias)
    b_in, b_rec = (bias[0], bias[1]) if reset_after else (bias, 0.0)
    xi = split_gates(x @ kernel + b_in, GRU_KERAS)  # 3 x (B, H)
    hr = split_gates(h @ recurrent_kernel + b_rec, GRU_KERAS)  # 3 x (B, H)
    z, r = sigmoid(xi["z"] + hr["z"]), sigmoid(xi["r"] + hr["r"])
    if reset_after:
        cand = np.tanh(xi["h"] + r * hr["h"])
    else:
        cand = np.tanh(xi["h"] + (r * h) @ split_gates(recurrent_kernel, GRU_KERAS)["h"])
    return z * h + (1 - z) * cand


def torch_gru_step(x: np.ndarray, h: np.ndarray, weight_ih: np.ndarray,
                   weight_hh: np.ndarray, bias_ih: np.ndarray,
                   bias_hh: np.ndarray) -> np.ndarray:
    """One step of PyTorch's ``nn.GRU`` as its documentation writes it: h' (B, H).

    ``weight_ih`` (3H, D), ``weight_hh`` (3H, H), rows r, z, n, applied as ``W x``; r after the
    hidden matmul (Keras' ``reset_after=True``); ``h' = (1 - z) * n + z * h``.
    """
    gi = split_gates(x @ weight_ih.T + bias_ih, GRU_TORCH)  # 3 x (B, H)
    gh = split_gates(h @ weight_hh.T + bias_hh, GRU_TORCH)  # 3 x (B, H)
    r, z = sigmoid(gi["r"] + gh["r"]), sigmoid(gi["z"] + gh["z"])
    n = np.tanh(gi["h"] + r * gh["h"])
    return (1 - z) * n + z * h


def keras_gru_from_tf1(gates_kernel: np.ndarray, gates_bias: np.ndarray,
                       cand_kernel: np.ndarray, cand_bias: np.ndarray,
                       depth: int) -> KerasGRU:
    """Keras 3 ``GRU(reset_after=False)`` weights ``(kernel (D, 3H), recurrent_kernel (H, 3H),
    bias (3H,))`` that compute exactly what TF1's ``GRUCell`` computes: blocks r, z (and the
    separate candidate) laid out z, r, h~, the rows split at ``depth`` (D). Exact only for
    ``reset_after=False``: with True, r multiplies ``h U_h`` instead of h, another function."""
    gates = split_gates(np.asarray(gates_kernel), GRU_TF1)
    kernel = join_gates({**gates, "h": cand_kernel}, GRU_KERAS)  # (D + H, 3H)
    bias = join_gates({**split_gates(np.asarray(gates_bias), GRU_TF1), "h": cand_bias},
                      GRU_KERAS)  # (3H,)
    return kernel[:depth], kernel[depth:], bias


def keras_gru_from_torch(weight_ih: np.ndarray, weight_hh: np.ndarray,
                         bias_ih: np.ndarray, bias_hh: np.ndarray) -> KerasGRU:
    """Keras 3 ``GRU`` (``reset_after=True``) weights from PyTorch's ``nn.GRU``: transposed,
    rows r, z, n moved to columns z, r, h~, the two biases kept as the two rows of ``bias``."""
    def move(a):
        return reorder(a, GRU_TORCH, GRU_KERAS)
    return move(weight_ih.T), move(weight_hh.T), np.stack([move(bias_ih), move(bias_hh)])


def torch_gru_from_keras(kernel: np.ndarray, recurrent_kernel: np.ndarray,
                         bias: np.ndarray) -> TorchGRU:
    """The inverse of :func:`keras_gru_from_torch`: ``(weight_ih, weight_hh, bias_ih,
    bias_hh)`` from a ``reset_after=True`` Keras GRU (``reset_after=False`` has no PyTorch
    equivalent)."""
    def move(a):
        return reorder(a, GRU_KERAS, GRU_TORCH)
    return move(kernel).T, move(recurrent_kernel).T, move(bias[0]), move(bias[1])


def gru_cell(step: Callable[..., np.ndarray], *weights: np.ndarray,
             **options: Any) -> Callable[..., Any]:
    """A GRU step function (:func:`tf1_gru_step`, ...) with its weights as a ``step`` for
    :func:`unroll`: the state is h."""
    def run(x, h):
        h_new = step(x, h, *weights, **options)
        return h_new, h_new
    return run


# ---------------------------------------------------------------------------------------------
# Running a cell over time: unrolled, stacked, chunked (Chapters 1, 2 and 4)


def unroll(step: Callable[..., Any], inputs: np.ndarray, state: Any,
           carry: bool = True) -> tuple[np.ndarray, Any]:
    """Run ``step(x_t, state) -> (output, new_state)`` over ``inputs`` (B, T, D).

    Returns ``(outputs (B, T, ...), final_state)``. ``carry=False`` starts every step from the
    given ``state`` (the state-not-carried mistake).
    """
    outputs, start = [], state
    for t in range(inputs.shape[1]):
        output, new = step(inputs[:, t], state)
        outputs.append(output)
        state = new if carry else start
    return np.stack(outputs, axis=1), (new if inputs.shape[1] else state)


def rnn_cell(kernel: np.ndarray, bias: np.ndarray, **options: Any) -> Callable[..., Any]:
    """BasicRNNCell as a ``step`` for :func:`unroll`: the state is h."""
    def step(x, h):
        h_new = basic_rnn_step(x, h, kernel, bias, **options)
        return h_new, h_new
    return step


def lstm_cell(kernel: np.ndarray, bias: np.ndarray, forget_bias: float = 1.0,
              **options: Any) -> Callable[..., Any]:
    """BasicLSTMCell as a ``step`` for :func:`unroll`: the state is ``(c, h)``."""
    def step(x, state):
        c, h = basic_lstm_step(x, *state, kernel, bias, forget_bias, **options)
        return h, (c, h)
    return step


def keras_cell(kernel: np.ndarray, recurrent_kernel: np.ndarray, bias: np.ndarray,
               **options: Any) -> Callable[..., Any]:
    """Keras 3's LSTM as a ``step`` for :func:`unroll`: the state is ``[h, c]``."""
    def step(x, state):
        h, c = keras_lstm_step(x, *state, kernel, recurrent_kernel, bias, **options)
        return h, [h, c]
    return step


def stacked(steps: Sequence[Callable[..., Any]], output_layer: int = -1) -> Callable[..., Any]:
    """Layers ``steps`` (bottom first) as one ``step``: layer l reads layer l-1's output; the
    state is a tuple with one state per layer; the output is layer ``output_layer``'s."""
    def step(x, states):
        new, outputs = [], []
        for layer, state in zip(steps, states, strict=True):
            x, s = layer(x, state)
            new.append(s)
            outputs.append(x)
        return outputs[output_layer], tuple(new)
    return step


def chunks(T: int, size: int) -> list[tuple[int, int]]:
    """The ``[start, stop)`` time ranges of chunks of ``size`` steps (the last may be shorter)."""
    return [(start, min(start + size, T)) for start in range(0, T, size)]


def run_in_chunks(step: Callable[..., Any], inputs: np.ndarray, state: Any, size: int,
                  between: Callable[[Any, int], Any] | None = None) -> tuple[np.ndarray, Any]:
    """:func:`unroll` over ``inputs`` (B, T, D) in chunks of ``size`` steps, each chunk starting
    from the state the one before ended in: equal to one run over the whole sequence.

    ``between(k, state) -> state`` changes the state handed to chunk ``k`` (k >= 1), for the
    mistakes that drop or garble it on the way.
    """
    outputs = []
    for k, (a, b) in enumerate(chunks(inputs.shape[1], size)):
        if k and between is not None:
            state = between(k, state)
        out, state = unroll(step, inputs[:, a:b], state)
        outputs.append(out)
    return np.concatenate(outputs, axis=1), state


def pack(states: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """A tuple of ``(c, h)`` per layer as one ``(L, 2, B, H)`` array (the placeholder layout)."""
    return np.stack([np.stack([c, h]) for c, h in states])


def unpack(packed: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The inverse of :func:`pack`: a tuple of ``(c, h)`` per layer."""
    return tuple((layer[0], layer[1]) for layer in packed)


def reset_rows(packed: np.ndarray, ended: Sequence[bool] | np.ndarray) -> np.ndarray:
    """A packed state ``(L, 2, B, H)`` with c and h of the rows where ``ended`` ``(B,)`` is True
    set to zero (the cell's ``zero_state``) in every layer; a new array."""
    return np.where(np.asarray(ended, bool)[None, None, :, None], 0.0, packed).astype(
        np.asarray(packed).dtype)


def split_state(state: Any, num_units: int) -> tuple[np.ndarray, np.ndarray]:
    """LSTMCell's concatenated state ``[c, m]`` ``(B, H + P)`` as ``(c (B, H), m (B, P))``."""
    return state[:, :num_units], state[:, num_units:]


# ---------------------------------------------------------------------------------------------
# Padded batches: sequence lengths, reversal within them (Chapter 7)


def _kept(alive: np.ndarray, new: Any, old: Any) -> Any:
    """``new`` where ``alive`` (B,) is True, ``old`` elsewhere, through nested tuples and lists
    of (B, ...) arrays (a state, a stack's tuple of states)."""
    if isinstance(new, (tuple, list)):
        return type(new)(_kept(alive, n, o) for n, o in zip(new, old, strict=True))
    return np.where(alive.reshape(-1, *([1] * (np.ndim(new) - 1))), new, old)


def unroll_lengths(step: Callable[..., Any], inputs: np.ndarray, state: Any,
                   lengths: np.ndarray | Sequence[int],
                   past: str = "zeros") -> tuple[np.ndarray, Any]:
    """:func:`unroll` over a padded batch, as ``dynamic_rnn(..., sequence_length=lengths)``:
    row b runs its first ``lengths[b]`` steps; past them its state is copied through (the final
    state is each row's state at its last valid step) and its output is zeros.

    ``past``: what the outputs hold past each length, ``"zeros"`` (TF1), ``"last"`` (the last
    valid output repeated, zeros before the first) or ``"run"`` (the step's output as if the row
    went on; the state is still kept). Returns ``(outputs (B, T, ...), final_state)``.
    """
    lengths = np.asarray(lengths)
    outputs = []
    last = None
    for t in range(inputs.shape[1]):
        output, new = step(inputs[:, t], state)
        alive = t < lengths  # (B,)
        state = _kept(alive, new, state)
        last = np.where(alive[:, None], output, 0.0 if last is None else last)
        outputs.append({"zeros": np.where(alive[:, None], output, 0.0), "last": last,
                        "run": output}[past])
    return np.stack(outputs, axis=1), state


def reverse_within(inputs: np.ndarray, lengths: np.ndarray | Sequence[int]) -> np.ndarray:
    """``tf.reverse_sequence(inputs, lengths, seq_axis=1, batch_axis=0)``: each row's first
    ``lengths[b]`` steps in reverse order, the padding after them where it was."""
    T = inputs.shape[1]
    t = np.arange(T)[None, :]  # (1, T)
    n = np.asarray(lengths)[:, None]  # (B, 1)
    source = np.where(t < n, n - 1 - t, t)  # (B, T): where each step comes from
    return np.take_along_axis(np.asarray(inputs), source.reshape(*source.shape,
                              *([1] * (np.ndim(inputs) - 2))), axis=1)
