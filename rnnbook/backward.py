"""The one NumPy backward pass of each cell the book differentiates (Chapter 5), held to
TensorFlow's automatic differentiation by ``tests/test_backward.py``.

Each function takes a cell's inputs, weights and the *upstream* gradients (of some loss L with
respect to what the cell returns) and returns the gradients of L with respect to the cell's
inputs, previous state and weights, laid out exactly as TensorFlow lays out its variables: a TF1
kernel's gradient is ``[x, h]^T @ dz`` of shape ``(D + H, G * H)``, W's rows on top of U's,
gate blocks in TF1's order i, j, f, o. The forward values come from
:mod:`rnnbook.reference` (the book's one forward model), recomputed where the backward pass
needs intermediate results.

As in :mod:`rnnbook.reference`, a check's mistake model is one of these functions with one
thing changed: an argument (``order=KERAS``) or a named ``slip`` (``slip="tanh' of z"``).

This module solves the by-hand exercises of Chapter 5. It is instructor-side, like
:mod:`rnnbook.reference`: the learner release must replace it with a stub, and a checks module
imports it as ``from rnnbook import backward as bwd`` and touches ``bwd.X`` only inside
functions.

Conventions (book/notation.md): batch-major, right-multiplied; ``x`` (B, D), ``h`` (B, H);
``d<name>`` is dL/d<name>, with the shape of <name>.
"""
from __future__ import annotations

from typing import Any, Collection

import numpy as np

from rnnbook import reference as ref


def _slip(slip: str | None, allowed: Collection[str]) -> str | None:
    if slip is not None and slip not in allowed:
        raise ValueError(f"unknown slip {slip!r}; this function knows {sorted(allowed)}")
    return slip


def _dsigmoid(s: np.ndarray) -> np.ndarray:
    """sigmoid'(z) from s = sigmoid(z)."""
    return s * (1.0 - s)


# ---------------------------------------------------------------------------------------------
# Gradient clipping


def clip_by_global_norm(grads: list[np.ndarray], clip_norm: float,
                        slip: str | None = None) -> tuple[list[np.ndarray], float]:
    """``tf.clip_by_global_norm``: ``(clipped, global_norm)``.

    ``global_norm = sqrt(sum of every entry squared, over all tensors)``; each tensor is scaled
    by ``clip_norm / max(global_norm, clip_norm)``, so nothing changes below the threshold and
    all tensors shrink by the same factor above it. Slips: ``"per tensor"`` (``tf.clip_by_norm``
    on each tensor), ``"sum of norms"`` (the global norm as the sum of the tensors' norms),
    ``"no sqrt"`` (the sum of squares used as the norm), ``"always"`` (scaled to ``clip_norm``
    even when the norm is below it).
    """
    _slip(slip, {"per tensor", "sum of norms", "no sqrt", "always"})
    grads = [np.asarray(g, np.float64) for g in grads]
    squares = sum(float((g ** 2).sum()) for g in grads)
    norm = np.sqrt(squares)
    if slip == "per tensor":
        out = []
        for g in grads:
            own = np.sqrt((g ** 2).sum())
            out.append(g * clip_norm / max(own, clip_norm))
        return out, float(norm)
    if slip == "sum of norms":
        norm = sum(float(np.sqrt((g ** 2).sum())) for g in grads)
    if slip == "no sqrt":
        norm = squares
    scale = clip_norm / norm if slip == "always" else clip_norm / max(norm, clip_norm)
    return [g * scale for g in grads], float(norm)


# ---------------------------------------------------------------------------------------------
# BasicRNNCell


RNN_STEP_SLIPS = {
    "no tanh'",  # dz = dh': the derivative of tanh forgotten
    "tanh' of z",  # dz = dh' * (1 - z^2): tanh' taken at the pre-activation
    "kernel transposed",  # dkernel = dz^T @ [x, h]
    "bias per row",  # dbias not summed over the batch
}


def basic_rnn_step_backward(x: np.ndarray, h: np.ndarray, kernel: np.ndarray, bias: np.ndarray,
                            dh_new: np.ndarray,
                            slip: str | None = None) -> tuple[np.ndarray, ...]:
    """One BasicRNNCell step backward: ``(dx, dh, dkernel, dbias)``.

    Forward ``z = [x, h] @ kernel + bias``, ``h' = tanh(z)``; backward
    ``dz = dh' * (1 - h'^2)``, ``dkernel = [x, h]^T @ dz`` (D + H, H): dW on top of dU, as the
    kernel stacks W on U; ``dbias = sum of dz over the batch``; ``[dx, dh] = dz @ kernel^T``.
    """
    _slip(slip, RNN_STEP_SLIPS)
    D = x.shape[1]
    xh = np.concatenate([x, h], axis=1)  # (B, D + H)
    z = xh @ kernel + bias  # (B, H)
    h_new = ref.basic_rnn_step(x, h, kernel, bias)  # (B, H) = tanh(z)
    if slip == "no tanh'":
        dz = dh_new
    elif slip == "tanh' of z":
        dz = dh_new * (1.0 - z ** 2)
    else:
        dz = dh_new * (1.0 - h_new ** 2)  # (B, H)
    dxh = dz @ kernel.T  # (B, D + H)
    dkernel = dz.T @ xh if slip == "kernel transposed" else xh.T @ dz  # (D + H, H)
    dbias = dz if slip == "bias per row" else dz.sum(axis=0)  # (H,)
    return dxh[:, :D], dxh[:, D:], dkernel, dbias


RNN_SLIPS = {
    "not accumulated",  # dkernel (and dbias) overwritten at every step: step 0's remains
    "dh not carried",  # dh_t = doutputs[t] only: nothing flows back from step t + 1
    "skips step 0",  # the backward loop stops before step 0
}


def basic_rnn_backward(inputs: np.ndarray, h0: np.ndarray, kernel: np.ndarray, bias: np.ndarray,
                       doutputs: np.ndarray, chunk: int | None = None, slip: str | None = None,
                       step_slip: str | None = None) -> tuple[np.ndarray, ...]:
    """Backpropagation through time for BasicRNNCell over ``inputs`` (B, T, D) from ``h0``.

    ``doutputs`` (B, T, H) is dL/dh_t for every output (the loss may use any of them). Returns
    ``(dinputs (B, T, D), dh0 (B, H), dkernel, dbias)``: each step's kernel gradient is added
    up over time. ``chunk``: truncated BPTT: the forward state is carried through the whole
    sequence, but the gradient does not flow back across the start of a chunk (steps 0,
    chunk, 2 chunk, ...), as when each chunk's initial state is a ``tf.stop_gradient``; then
    dh0 holds the first chunk's gradient only. ``step_slip`` makes every step make one
    :data:`RNN_STEP_SLIPS` mistake.
    """
    _slip(slip, RNN_SLIPS)
    T = inputs.shape[1]
    step = ref.rnn_cell(kernel, bias)
    outputs, _ = ref.unroll(step, inputs, h0)  # (B, T, H)
    states = [h0] + [outputs[:, t] for t in range(T)]  # states[t] is the h step t reads
    dinputs = np.zeros(inputs.shape, np.float64)
    dkernel, dbias = np.zeros(kernel.shape), np.zeros(np.shape(bias))
    dh_next = np.zeros(h0.shape)
    stop = 0 if slip == "skips step 0" else -1
    for t in range(T - 1, stop, -1):
        dh = doutputs[:, t] if slip == "dh not carried" else doutputs[:, t] + dh_next
        dx, dh_prev, dk, db = basic_rnn_step_backward(inputs[:, t], states[t], kernel, bias, dh,
                                                      slip=step_slip)
        dinputs[:, t] = dx
        if slip == "not accumulated":
            dkernel, dbias = dk, db
        else:
            dkernel, dbias = dkernel + dk, dbias + db
        dh_next = dh_prev
        if chunk and t % chunk == 0 and t > 0:
            dh_next = np.zeros(h0.shape)  # the state entering this chunk is a constant
    return dinputs, dh_next, dkernel, dbias


# ---------------------------------------------------------------------------------------------
# BasicLSTMCell and LSTMCell


LSTM_SLIPS = {
    "sigmoid' of f without forget_bias",  # sigmoid'(f) where the forward used f + forget_bias
    "no c' from h'",  # the path h' = tanh(c') * sigmoid(o) back to c' left out
    "tanh' of c'",  # (1 - c'^2) instead of (1 - tanh(c')^2)
    "clip not zeroed",  # cell_clip: the gradient of c passed where the clip bit
    "clip zeroes dc' only",  # cell_clip: only the upstream dc' masked, not the m' path
    "dw_o from old c",  # dw_o = sum(do * c_prev) instead of the new (clipped) c
    "no o peephole into c",  # the w_o path from o back into the new c left out
    "projection transposed",  # dprojection = dm'^T @ m (P, H)
}


def lstm_cell_step_backward(x: np.ndarray, c: np.ndarray, m: np.ndarray, kernel: np.ndarray,
                            bias: np.ndarray, dc_new: np.ndarray, dm_new: np.ndarray,
                            forget_bias: float = 1.0, w_i_diag: np.ndarray | None = None,
                            w_f_diag: np.ndarray | None = None,
                            w_o_diag: np.ndarray | None = None, cell_clip: Any = None,
                            projection: np.ndarray | None = None, order: tuple[str, ...] = ref.TF1,
                            slip: str | None = None) -> dict[str, np.ndarray]:
    """One LSTMCell (or BasicLSTMCell) step backward, TF1 layout.

    ``dc_new`` and ``dm_new`` are dL/dc' and dL/dm' (dL/dh' for BasicLSTMCell), for the state
    the cell returns (c' after ``cell_clip``, m' after the projection). Returns a dict:
    ``dx, dc, dm`` (the previous state), ``dkernel`` ([x, m]^T @ dz, gate blocks i, j, f, o),
    ``dbias``, and where the cell has them ``dw_i_diag, dw_f_diag, dw_o_diag`` and
    ``dprojection``. ``forget_bias`` is a constant: it gets no gradient, but sigmoid' of f is
    taken at ``f + forget_bias``. Where ``cell_clip`` bites, the gradient of the unclipped c'
    is zero (``tf.clip_by_value``'s gradient). ``order`` is the gate order the gradient blocks
    are laid out in (a mistake when not TF1; the forward pass always reads TF1's blocks).
    """
    _slip(slip, LSTM_SLIPS)
    H = c.shape[1]
    D = x.shape[1]
    zero = np.zeros(H)
    wi, wf, wo = (zero if w is None else w for w in (w_i_diag, w_f_diag, w_o_diag))
    g = ref.lstm_preactivations(x, m, kernel, bias)  # TF1 blocks, each (B, H)
    gi = ref.sigmoid(g["i"] + wi * c)
    gf = ref.sigmoid(g["f"] + forget_bias + wf * c)
    tj = np.tanh(g["j"])
    c_unclipped = gf * c + gi * tj  # (B, H)
    c_new, m_out = ref.lstm_cell_step(x, c, m, kernel, bias, forget_bias, w_i_diag, w_f_diag,
                                      w_o_diag, cell_clip, projection)
    go = ref.sigmoid(g["o"] + wo * c_new)
    tc = np.tanh(c_new)
    m_pre = go * tc  # (B, H): m' before the projection
    grads = {}
    if projection is not None:
        dm_pre = dm_new @ projection.T  # (B, H)
        grads["dprojection"] = (dm_new.T @ m_pre if slip == "projection transposed"
                                else m_pre.T @ dm_new)  # (H, P)
    else:
        dm_pre = dm_new
    do = dm_pre * tc * _dsigmoid(go)
    through_h = dm_pre * go * (1.0 - (c_new ** 2 if slip == "tanh' of c'" else tc ** 2))
    if slip == "no c' from h'":
        through_h = 0.0
    peep_o = 0.0 if slip == "no o peephole into c" else do * wo
    if cell_clip is not None and slip not in ("clip not zeroed", "clip zeroes dc' only"):
        bites = np.abs(c_unclipped) > cell_clip
        dc_total = np.where(bites, 0.0, dc_new + through_h + peep_o)
    elif cell_clip is not None and slip == "clip zeroes dc' only":
        dc_total = np.where(np.abs(c_unclipped) > cell_clip, 0.0, dc_new) + through_h + peep_o
    else:
        dc_total = dc_new + through_h + peep_o
    di = dc_total * tj * _dsigmoid(gi)
    dj = dc_total * gi * (1.0 - tj ** 2)
    if slip == "sigmoid' of f without forget_bias":
        df = dc_total * c * _dsigmoid(ref.sigmoid(g["f"] + wf * c))
    else:
        df = dc_total * c * _dsigmoid(gf)
    dc = dc_total * gf + di * wi + df * wf
    dz = ref.join_gates({"i": di, "j": dj, "f": df, "o": do}, order)  # (B, 4H)
    xm = np.concatenate([x, m], axis=1)  # (B, D + P)
    dxm = dz @ kernel.T
    grads.update(dx=dxm[:, :D], dc=dc, dm=dxm[:, D:], dkernel=xm.T @ dz, dbias=dz.sum(axis=0),
                 dz=dz)
    if w_i_diag is not None:
        grads["dw_i_diag"] = (di * c).sum(axis=0)
        grads["dw_f_diag"] = (df * c).sum(axis=0)
        grads["dw_o_diag"] = (do * (c if slip == "dw_o from old c" else c_new)).sum(axis=0)
    return grads


def basic_lstm_step_backward(x: np.ndarray, c: np.ndarray, h: np.ndarray, kernel: np.ndarray,
                             bias: np.ndarray, dc_new: np.ndarray, dh_new: np.ndarray,
                             forget_bias: float = 1.0, order: tuple[str, ...] = ref.TF1,
                             slip: str | None = None) -> tuple[np.ndarray, ...]:
    """One BasicLSTMCell step backward: ``(dx, dc, dh, dkernel, dbias)`` (see
    :func:`lstm_cell_step_backward`, of which BasicLSTMCell is the case without peepholes,
    clip or projection)."""
    g = lstm_cell_step_backward(x, c, h, kernel, bias, dc_new, dh_new, forget_bias,
                                order=order, slip=slip)
    return g["dx"], g["dc"], g["dm"], g["dkernel"], g["dbias"]


def basic_lstm_backward(inputs: np.ndarray, c0: np.ndarray, h0: np.ndarray, kernel: np.ndarray,
                        bias: np.ndarray, doutputs: np.ndarray,
                        forget_bias: float = 1.0) -> dict[str, np.ndarray]:
    """BPTT for BasicLSTMCell over ``inputs`` (B, T, D) from ``(c0, h0)``, with ``doutputs``
    (B, T, H) = dL/dh_t. Returns a dict: ``dinputs, dc0, dh0, dkernel, dbias`` and ``dz``
    (B, T, 4H), the gradient of each step's pre-activation (what TF's ``split_grad`` holds),
    and ``dh`` (B, T, H), the total dL/dh_t (from the loss and from every later step)."""
    T = inputs.shape[1]
    states = [(c0, h0)]
    for t in range(T):
        states.append(ref.basic_lstm_step(inputs[:, t], *states[-1], kernel, bias, forget_bias))
    dc_next, dh_next = np.zeros(c0.shape), np.zeros(h0.shape)
    out = {"dinputs": np.zeros(inputs.shape), "dkernel": np.zeros(kernel.shape),
           "dbias": np.zeros(np.shape(bias)), "dz": np.zeros(inputs.shape[:2] + (4 * c0.shape[1],)),
           "dh": np.zeros(doutputs.shape)}
    for t in range(T - 1, -1, -1):
        dh = doutputs[:, t] + dh_next
        out["dh"][:, t] = dh
        g = lstm_cell_step_backward(inputs[:, t], *states[t], kernel, bias, dc_next, dh,
                                    forget_bias)
        out["dinputs"][:, t] = g["dx"]
        out["dkernel"] += g["dkernel"]
        out["dbias"] += g["dbias"]
        out["dz"][:, t] = g["dz"]
        dc_next, dh_next = g["dc"], g["dm"]
    out["dc0"], out["dh0"] = dc_next, dh_next
    return out
