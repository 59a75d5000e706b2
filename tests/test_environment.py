"""rnnbook.setup(): what it sets, and its one clear sentence when it comes too late."""
import os
import subprocess
import sys

import pytest


def run(code):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "RNNBOOK_"))}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.slow
def test_setup_loads_the_legacy_cells_quietly_and_seeds():
    done = run(
        "import rnnbook, numpy as np, os\n"
        "tf = rnnbook.setup(seed=3)\n"
        "cell = tf.compat.v1.nn.rnn_cell.BasicRNNCell(2)\n"
        "print(type(cell).__module__)\n"
        "print(os.environ['TF_ENABLE_ONEDNN_OPTS'], np.get_printoptions()['precision'])\n"
        "a = np.random.rand(); rnnbook.setup(seed=3); print(a == np.random.rand())\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tf_keras.src.layers.rnn.legacy_cells", "0", "4", "True"]
    assert done.stderr == ""  # no absl/cuda/oneDNN line that would land in a notebook output


@pytest.mark.slow
def test_setup_after_tensorflow_says_so_in_one_sentence():
    late = run("import tensorflow\nimport rnnbook\nrnnbook.setup()\n")
    assert late.returncode != 0
    last = late.stderr.strip().splitlines()[-1]
    assert last == ("rnnbook.environment.SetupError: TensorFlow was imported before "
                    "rnnbook.setup(): restart the kernel and run the set-up cell first.")


def test_setup_without_tensorflow_does_not_import_it():
    done = run("import sys, rnnbook\nrnnbook.setup(tensorflow=False)\nprint('tensorflow' in sys.modules)")
    assert done.stdout.strip() == "False", done.stderr
