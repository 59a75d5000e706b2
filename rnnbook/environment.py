"""Set-up for every notebook: one call, made before TensorFlow is imported.

``tf = rnnbook.setup()`` switches on the legacy (tf-keras) cells, silences TensorFlow's C++ log so
no log line lands in a stored output, turns oneDNN off (last-digit differences between CPUs),
seeds Python, NumPy, TensorFlow and Keras 3, sets NumPy's print options, and returns
``tensorflow``.
"""
import contextlib
import os
import random
import sys
import warnings

import numpy as np

#: Environment the TF1 cells and reproducible outputs need; set before ``import tensorflow``.
TF_ENV = {
    "TF_USE_LEGACY_KERAS": "1",  # tf.compat.v1.nn.rnn_cell.* load only with tf-keras and this
    "TF_CPP_MIN_LOG_LEVEL": "3",  # no C++ log lines in cell outputs
    "TF_ENABLE_ONEDNN_OPTS": "0",  # no oneDNN notice, identical digits on every CPU
}
PRINT_OPTIONS = dict(precision=4, suppress=True, linewidth=100)
TOO_LATE = (
    "TensorFlow was imported before rnnbook.setup(): restart the kernel and run the set-up cell "
    "first."
)


class SetupError(RuntimeError):
    """Raised when the set-up call comes too late to take effect."""


def set_environment():
    """Put :data:`TF_ENV` into ``os.environ`` (also used for the grader's child processes)."""
    os.environ.update(TF_ENV)


@contextlib.contextmanager
def _quiet_stderr():
    """Send the process's own stderr (fd 2) to /dev/null: TensorFlow's C++ layer writes there at
    import ("All log messages before absl::InitializeLog()...", "Could not find cuda drivers")
    before any log level applies, and ipykernel would forward it into the cell's output."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def import_tensorflow():
    """``tensorflow``, imported quietly with the legacy cells available."""
    if "tensorflow" not in sys.modules:
        set_environment()
        with _quiet_stderr():
            import tensorflow  # noqa: F401
    if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
        raise SetupError(TOO_LATE)
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    # The TF1 cells warn on every construction that they are deprecated: the book says so once.
    warnings.filterwarnings("ignore", message=r".*is deprecated and will be removed", category=UserWarning)
    return tf


def setup(seed=0, tensorflow=True):
    """Prepare this process for the book's code and return the ``tensorflow`` module.

    Call it once, at the top of a notebook, before anything imports TensorFlow. Calling it again
    later (re-running the cell) only re-seeds. ``tensorflow=False`` sets everything up without
    importing TensorFlow and returns None.
    """
    if "tensorflow" in sys.modules and os.environ.get("TF_USE_LEGACY_KERAS") != "1":
        raise SetupError(TOO_LATE)
    set_environment()
    np.set_printoptions(**PRINT_OPTIONS)
    random.seed(seed)
    np.random.seed(seed)
    if not tensorflow:
        return None
    tf = import_tensorflow()
    import keras  # Keras 3 (``tf.keras`` is tf-keras, Keras 2, once the legacy switch is on)

    keras.utils.set_random_seed(seed)  # seeds random, NumPy, TensorFlow and Keras 3
    return tf
