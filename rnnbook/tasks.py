"""The two small training tasks of Chapter 4, kept here so that the page shows what they
prove rather than their plumbing.

- :func:`sine_batches`  a sine wave laid out for stateful batches: predict the next value
- :func:`train_sine`    the same Keras 3 model trained stateful, or from zeros every batch,
  from each of several seeds at once (:func:`one_model` takes one seed's out)
- :func:`sine_comparison`  both, over :data:`SEEDS`: the error at each step of a chunk
  (:class:`SineComparison`), what the chapter's claims are computed from
- :func:`cue_batch`     a cue at step 0 to recall at the last step (a memory of a whole sequence)

Both train in seconds on a CPU and are seeded, so the chapter's numbers are the same on every
run (``keras.utils.set_random_seed``).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


def sine_batches(rows: int, steps: int, length: int = 961,
                 period: int = 22) -> tuple[np.ndarray, np.ndarray]:
    """A sine wave of ``length`` values and ``period`` steps, laid out for stateful batches:
    ``(xs, ys)``, each ``(n, rows, steps)``, input ``x_t`` and target ``x_{t+1}``. Row i of
    batch k + 1 continues row i of batch k (the chapter's layout); the tail is dropped."""
    wave = np.sin(2 * np.pi * np.arange(length) / period).astype(np.float32)  # (length,)
    n = (length - 1) // (rows * steps)
    xs, ys = (v[: n * rows * steps].reshape(rows, n, steps).transpose(1, 0, 2)
              for v in (wave[:-1], wave[1:]))
    return xs, ys


#: the seeds (initial weights) a claim drawn from a training run is computed over (issue 37)
SEEDS = tuple(range(8))
#: Chapter 4: the steps of a chunk from which both models have read enough of it
LATE = 4


def _blocks(owner: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """1 where row i and column j belong to the same seed (``owner`` of the rows, ``columns``
    of the columns), else 0: the entries of a side-by-side weight that stay in one model."""
    return (owner[:, None] == columns[None, :]).astype(np.float32)


def train_sine(xs: np.ndarray, ys: np.ndarray, stateful: bool,
               seeds: tuple[int, ...] = SEEDS, units: int = 8, epochs: int = 8,
               rate: float = 0.02) -> tuple[Any, np.ndarray]:
    """Train ``LSTM(units) -> Dense(1)`` on the batches ``xs -> ys`` (``(n, B, steps)``), in
    order (``shuffle=False``), either ``stateful`` (the state reset once per epoch) or starting
    every batch from zeros, once per seed of ``seeds`` (``keras.utils.set_random_seed(seed)``
    then the model: its initial weights). Returns ``(model, predictions)``, predictions
    ``(len(seeds), n, B, steps)`` made batch after batch from a reset state, as in training.

    The seeds' models train side by side, as one ``LSTM(S * units) -> Dense(S)`` whose
    weights are block-diagonal: unit k belongs to seed ``k // units``, and every weight that
    would join two seeds' models starts at 0 and is set back to 0 after each update (a
    constraint), so each model sees only its own input, state and loss (the loss is the sum
    of the seeds' mean squared errors, and Adam's update is per weight). One model's cost
    for all the seeds; ``tests/test_claims.py`` holds each block to the model trained alone.
    """
    import keras  # here, so that importing this module does not import TensorFlow

    n, batch, steps = xs.shape
    count, h = len(seeds), units
    alone = []  # each seed's initial weights: kernel, recurrent kernel, bias, dense, bias
    for seed in seeds:
        keras.utils.set_random_seed(seed)
        one = keras.Sequential([keras.Input(shape=(None, 1), batch_size=batch),
                                keras.layers.LSTM(units, stateful=stateful,
                                                  return_sequences=True),
                                keras.layers.Dense(1)])
        alone.append(one.get_weights())
    owner = np.repeat(np.arange(count), h)  # (S * H,): the seed of each unit
    gates = np.tile(owner, 4)  # (4 * S * H,): Keras' gate blocks i, f, g, o
    kernel = np.concatenate([w[0].reshape(1, 4, h) for w in alone], axis=2)  # (1, 4, S * H)
    recurrent = np.zeros((count * h, 4, count * h), np.float32)
    dense = np.zeros((count * h, count), np.float32)
    for s, w in enumerate(alone):
        block = slice(s * h, (s + 1) * h)
        recurrent[block, :, block] = w[1].reshape(h, 4, h)
        dense[block, s] = w[3][:, 0]
    bias = np.concatenate([w[2].reshape(4, h) for w in alone], axis=1)  # (4, S * H)

    class Blocks(keras.constraints.Constraint):
        def __init__(self, mask: np.ndarray) -> None:
            self.mask = mask

        def __call__(self, w: Any) -> Any:
            return w * self.mask

    lstm = keras.layers.LSTM(count * h, stateful=stateful, return_sequences=True,
                             recurrent_constraint=Blocks(_blocks(owner, gates)))
    model = keras.Sequential([
        keras.Input(shape=(None, 1), batch_size=batch), lstm,
        keras.layers.Dense(count, kernel_constraint=Blocks(_blocks(owner, np.arange(count))))])
    model.set_weights([kernel.reshape(1, -1), recurrent.reshape(count * h, -1),
                       bias.reshape(-1), dense, np.concatenate([w[4] for w in alone])])

    def loss(y: Any, predicted: Any) -> Any:  # (B, steps, 1) against (B, steps, S)
        return keras.ops.sum(keras.ops.mean((predicted - y) ** 2, axis=(0, 1)))

    model.compile(keras.optimizers.Adam(rate), loss)
    reset = lstm.reset_state if stateful else (lambda: None)
    every_epoch = keras.callbacks.LambdaCallback(on_epoch_begin=lambda *_: reset())
    model.fit(xs.reshape(-1, steps, 1), ys.reshape(-1, steps, 1), batch_size=batch,
              epochs=epochs, shuffle=False, verbose=0, callbacks=[every_epoch])
    reset()
    predictions = np.stack([model.predict_on_batch(x[..., None]) for x in xs])  # (n,B,T,S)
    return model, np.moveaxis(predictions, -1, 0)


def one_model(model: Any, seed: int, seeds: tuple[int, ...] = SEEDS) -> Any:
    """Seed ``seed``'s model out of :func:`train_sine`'s side-by-side one: a plain
    ``LSTM(units) -> Dense(1)`` with its trained weights (stateful if the side-by-side one
    is, built for the same batch)."""
    import keras

    lstm, _ = (layer for layer in model.layers)
    count = len(seeds)
    h, s = lstm.units // count, seeds.index(seed)
    kernel, recurrent, bias, dense, dense_bias = model.get_weights()
    block = slice(s * h, (s + 1) * h)
    gate = lambda w: w.reshape(*w.shape[:-1], 4, count * h)[..., block].reshape(  # noqa: E731
        *w.shape[:-1], 4 * h)
    one = keras.Sequential([keras.Input(batch_shape=model.inputs[0].shape),
                            keras.layers.LSTM(h, stateful=lstm.stateful,
                                              return_sequences=True),
                            keras.layers.Dense(1)])
    one.set_weights([gate(kernel), gate(recurrent[block]), gate(bias),
                     dense[block, s : s + 1], dense_bias[s : s + 1]])
    return one


@dataclasses.dataclass(frozen=True)
class SineComparison:
    """Chapter 4's two models, stateful and from zeros every batch, trained from each seed:
    the mean squared error at each step of a chunk, ``(S, steps)`` each, over every batch
    and row (the predictions of :func:`train_sine`, ``(S, n, B, steps)``, and the trained
    stateful side-by-side model are kept for the page's figure and serving)."""

    seeds: tuple[int, ...]
    kept: np.ndarray  # (S, steps): the stateful model's error at each step
    zeros: np.ndarray  # (S, steps): the model from zeros'
    kept_predictions: np.ndarray  # (S, n, B, steps)
    zeros_predictions: np.ndarray  # (S, n, B, steps)
    model: Any  # the stateful models, side by side (one_model takes one out)

    @property
    def step0_gain(self) -> np.ndarray:
        """(S,): how many times lower the stateful model's error is at step 0."""
        return self.zeros[:, 0] / self.kept[:, 0]

    @property
    def late_ratio(self) -> np.ndarray:
        """(S,): the stateful model's mean error over steps LATE.. over the other's."""
        return self.kept[:, LATE:].mean(axis=1) / self.zeros[:, LATE:].mean(axis=1)

    @property
    def late_wins(self) -> tuple[int, int]:
        """(seeds where the model from zeros is lower at every step from LATE on, seeds
        where the stateful one is)."""
        late = self.zeros[:, LATE:] < self.kept[:, LATE:]  # (S, steps - LATE)
        return int(late.all(axis=1).sum()), int((~late).all(axis=1).sum())


def sine_comparison(xs: np.ndarray, ys: np.ndarray,
                    seeds: tuple[int, ...] = SEEDS) -> SineComparison:
    """Both models of Chapter 4 trained on ``xs -> ys`` from each seed (:func:`train_sine`)."""
    seeds = tuple(seeds)
    model, kept = train_sine(xs, ys, stateful=True, seeds=seeds)
    _, zeros = train_sine(xs, ys, stateful=False, seeds=seeds)
    error = lambda p: ((p - ys) ** 2).mean(axis=(1, 2))  # noqa: E731  # (S, steps)
    return SineComparison(seeds, error(kept), error(zeros), kept, zeros, model)


def cue_batch(rng: np.random.Generator, size: int = 32,
              steps: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)``: ``x`` ``(size, steps, 1)`` holds a cue, +1 or -1, at step 0 and noise
    (standard deviation 0.5) after it; the target ``y`` ``(size, 1)`` is the cue."""
    x = rng.normal(0.0, 0.5, size=(size, steps, 1)).astype(np.float32)
    x[:, 0] = rng.choice([-1.0, 1.0], size=(size, 1))
    return x, x[:, 0]


# --- Chapter 5: how a loss at the last step reaches the first, at initialisation ---


def state_gradients(cell: Any, seq: Any, scale_u: float = 1.0) -> list[float]:
    """``||dL/dh_t||`` for t = 0 .. T-1, ``L = sum(h_T)``, a TF1 ``cell`` with its own initial
    weights run eagerly over ``seq`` ``(1, T, D)``, its recurrent block U scaled by
    ``scale_u`` (the kernel is ``[W; U]``)."""
    import tensorflow as tf

    depth = seq.shape[-1]
    cell.build(tf.TensorShape([None, depth]))
    kernel = cell.variables[0]
    kernel.assign(tf.concat([kernel[:depth], scale_u * kernel[depth:]], 0))  # scale U only
    with tf.GradientTape() as tape:
        state, hs = cell.zero_state(1, tf.float32), []
        for t in range(seq.shape[1]):
            out, state = cell(seq[:, t], state)
            hs.append(out)
        loss = tf.reduce_sum(hs[-1])
    return [float(tf.norm(g)) for g in tape.gradient(loss, hs)]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


def forget_gates(kernel: np.ndarray, bias: np.ndarray, seq: Any,
                 forget_bias: float = 1.0) -> np.ndarray:
    """``sigma(f + forget_bias)`` at every step, ``(T, H)``: a BasicLSTMCell with ``kernel``
    ``(D + H, 4H)`` and ``bias`` run by hand over ``seq`` ``(1, T, D)`` from zeros (gates i,
    j, f, o): what c is multiplied by at each step."""
    x = np.asarray(seq)[0]  # (T, D)
    units = kernel.shape[1] // 4
    c, h, forget = np.zeros((1, units)), np.zeros((1, units)), []
    for x_t in x:
        z = np.concatenate([x_t[None], h], 1) @ kernel + bias  # (1, 4H)
        i, j, f, o = np.split(z, 4, axis=1)
        forget.append(_sigmoid(f + forget_bias))  # (1, H)
        c = c * forget[-1] + _sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * _sigmoid(o)
    return np.concatenate(forget)


@dataclasses.dataclass(frozen=True)
class Fades:
    """log10 of what a loss at the last step keeps at the first, per initialisation ``(S,)``:
    the plain RNN's ``||dL/dh_0|| / ||dL/dh_T-1||``, the LSTM's, and, along the LSTM's c
    alone (the product of its forget gates over steps 1 .. T-1), the lowest and highest unit's."""

    seeds: tuple[int, ...]
    rnn: np.ndarray
    lstm: np.ndarray
    c_low: np.ndarray
    c_high: np.ndarray


def gradient_fades(seq: Any, units: int = 16, seeds: tuple[int, ...] = SEEDS) -> Fades:
    """A BasicRNNCell and a BasicLSTMCell of ``units`` over ``seq`` ``(1, T, D)``, initialised
    from each seed (``tf.random.set_seed``): :class:`Fades`."""
    import tensorflow as tf

    cells = tf.compat.v1.nn.rnn_cell
    rows = []
    for seed in seeds:
        tf.random.set_seed(seed)
        rnn, lstm = cells.BasicRNNCell(units), cells.BasicLSTMCell(units)
        lost = [np.log10(g[0] / g[-1]) for g in (state_gradients(rnn, seq),
                                                  state_gradients(lstm, seq))]
        kernel, bias = (v.numpy() for v in lstm.variables)
        along_c = np.log10(forget_gates(kernel, bias, seq)[1:]).sum(axis=0)  # (H,)
        rows.append((*lost, along_c.min(), along_c.max()))
    rnn_lost, lstm_lost, low, high = np.array(rows).T  # (S,) each
    return Fades(tuple(seeds), rnn_lost, lstm_lost, low, high)
