"""The two small training tasks of Chapter 4, kept here so that the page shows what they
prove rather than their plumbing.

- :func:`sine_batches`  a sine wave laid out for stateful batches: predict the next value
- :func:`train_sine`    the same Keras 3 model trained stateful, or from zeros every batch
- :func:`cue_batch`     a cue at step 0 to recall at the last step (a memory of a whole sequence)

Both train in seconds on a CPU and are seeded, so the chapter's numbers are the same on every
run (``keras.utils.set_random_seed``).
"""
from __future__ import annotations

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


def train_sine(xs: np.ndarray, ys: np.ndarray, stateful: bool, units: int = 8, epochs: int = 8,
               rate: float = 0.02) -> tuple[Any, np.ndarray]:
    """Train ``LSTM(units) -> Dense(1)`` on the batches ``xs -> ys`` (``(n, B, steps)``), in
    order (``shuffle=False``), either ``stateful`` (the state reset once per epoch) or starting
    every batch from zeros. Returns ``(model, predictions)``, predictions ``(n, B, steps)``
    made batch after batch from a reset state, as in training."""
    import keras  # here, so that importing this module does not import TensorFlow

    n, batch, steps = xs.shape
    keras.utils.set_random_seed(0)
    lstm = keras.layers.LSTM(units, stateful=stateful, return_sequences=True)
    model = keras.Sequential([keras.Input(shape=(None, 1), batch_size=batch), lstm,
                              keras.layers.Dense(1)])
    model.compile(keras.optimizers.Adam(rate), "mse")
    reset = lstm.reset_state if stateful else (lambda: None)
    every_epoch = keras.callbacks.LambdaCallback(on_epoch_begin=lambda *_: reset())
    model.fit(xs.reshape(-1, steps, 1), ys.reshape(-1, steps, 1), batch_size=batch,
              epochs=epochs, shuffle=False, verbose=0, callbacks=[every_epoch])
    reset()
    predictions = np.stack([np.asarray(model(x[..., None]))[..., 0] for x in xs])
    return model, predictions


def cue_batch(rng: np.random.Generator, size: int = 32,
              steps: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)``: ``x`` ``(size, steps, 1)`` holds a cue, +1 or -1, at step 0 and noise
    (standard deviation 0.5) after it; the target ``y`` ``(size, 1)`` is the cue."""
    x = rng.normal(0.0, 0.5, size=(size, steps, 1)).astype(np.float32)
    x[:, 0] = rng.choice([-1.0, 1.0], size=(size, 1))
    return x, x[:, 0]
