"""rnnbook.oracles' helpers for the checks' objects: what the grader's zygote may call before it
forks (imports only) and the sessions the checks build (without Grappler, same numbers)."""
import os
import subprocess
import sys

import numpy as np

from rnnbook.environment import TF_ENV
from tests.test_book import ROOT

WARM = """
import os, sys
from rnnbook.environment import import_tensorflow
import_tensorflow()
threads = len(os.listdir("/proc/self/task"))
from rnnbook.oracles import warm_imports
warm_imports(*[tuple(a for a in sys.argv[1:] if a != "none")] if sys.argv[1:] else [])
from tensorflow.python.eager import context
print(len(os.listdir("/proc/self/task")) - threads, context.context()._initialized,
      "tf_keras.api._v1.keras" in sys.modules, "tf_keras.api._v2.keras" in sys.modules,
      "tensorboard.backend.event_processing.event_accumulator" in sys.modules)
"""


def test_warm_imports_only_imports_so_a_fork_after_it_stays_safe():
    """Forking after TensorFlow started a thread pool or ran an op is unsafe: the zygote calls
    ``warm_imports`` before it forks, so it must start no thread and leave eager uninitialised."""
    done = subprocess.run([sys.executable, "-c", WARM], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, **TF_ENV})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "False", "True", "True", "True"]


def test_warm_imports_import_only_the_lazy_parts_asked_for():
    """A chapter names what its learners load lazily (``Chapter.warm``): the zygote of a chapter
    that reads no event file and builds no ``tf.keras`` layer does not import them."""
    env = {**os.environ, **TF_ENV}
    for asked, seen in (("none", ["True", "False", "False"]),
                        ("tensorboard", ["True", "False", "True"]),
                        ("tf.keras", ["True", "True", "False"])):
        done = subprocess.run([sys.executable, "-c", WARM, asked], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split() == ["0", "False", *seen], asked
    done = subprocess.run([sys.executable, "-c", WARM, "keras"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert "no lazy import called keras" in done.stderr  # not one of LAZY: a clear error
    from rnnbook import checks

    lazy = {stem: checks.load(stem).warm for stem in checks.CHAPTERS}
    assert lazy["02-lstm-gate-tensors"] == ("tensorboard",)
    assert lazy["07-final-state"] == ("tf.keras",)


def test_a_quick_session_gives_the_numbers_of_a_plain_one():
    from rnnbook.graphs import lstm_graph
    from rnnbook.oracles import load_weights, quick_session, tensorflow

    v1 = tensorflow().compat.v1
    graph, x, outputs, _ = lstm_graph(T=3, D=2, H=3, forget_bias=0.5)
    rng = np.random.default_rng(0)
    weights = {"kernel": rng.normal(size=(5, 12)), "bias": rng.normal(size=12)}
    inputs = rng.normal(size=(2, 3, 2)).astype(np.float32)
    got = []
    for session in (quick_session(graph), v1.Session(graph=graph)):
        with session:
            load_weights(session, graph.get_collection("variables"), weights)
            got.append(np.stack(session.run(outputs, {x: inputs})))
    assert quick_session(graph)._config.graph_options.rewrite_options.disable_meta_optimizer
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6, atol=1e-6)
    assert np.abs(got[0]).max() > 0.1  # real outputs, not zeros
