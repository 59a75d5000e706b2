"""rnnbook.setup(): what it sets, and its one clear sentence when it comes too late."""
import os
import subprocess
import sys
import types

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


def test_import_heavy_leaves_the_collector_on_and_what_it_imported_frozen():
    done = run(
        "import gc, sys\n"
        "from rnnbook.environment import import_heavy\n"
        "before = gc.get_freeze_count()\n"
        "mod = import_heavy('json')\n"
        "print(mod is sys.modules['json'], gc.isenabled(), gc.get_freeze_count() > before)\n"
        "gc.disable()\n"
        "import_heavy('csv')\n"
        "print(gc.isenabled())\n"  # (it was off: it stays off)
        "frozen = gc.get_freeze_count()\n"
        "import_heavy('json')\n"
        "print(gc.get_freeze_count() == frozen)\n")  # already imported: nothing frozen again
    assert done.stdout.split() == ["True", "True", "True", "False", "True"], done.stderr


def test_call_with_roomy_stack_passes_arguments_and_errors_through():
    from rnnbook.environment import call_with_roomy_stack

    assert call_with_roomy_stack(divmod, 7, 2) == (3, 1)
    with pytest.raises(ZeroDivisionError):
        call_with_roomy_stack(divmod, 1, 0)


@pytest.mark.skipif(not os.path.exists("/usr/bin/strace"), reason="needs strace")
def test_call_with_roomy_stack_stops_the_frame_stack_thrashing():
    """A call that sits right on a chunk boundary maps and unmaps a chunk each time on 3.11."""
    code = (
        "import sys\n"
        "from rnnbook.environment import call_with_roomy_stack\n"
        "def deep(n, k):\n"
        "    if n:\n"
        "        return deep(n - 1, k)\n"
        "    for _ in range(k):\n"
        "        leaf()\n"
        "def leaf():\n"
        "    a = b = c = d = e = f = g = h = 0\n"
        "    return a\n"
        "def churn():\n"
        "    for n in range(1, 400):\n"  # some depths put leaf() across a 16 KB boundary
        "        deep(n, 20)\n"
        "call_with_roomy_stack(churn) if sys.argv[1] == 'roomy' else churn()\n")
    counts = {}
    for how in ("plain", "roomy"):
        done = subprocess.run(["strace", "-f", "-e", "trace=munmap", "-o", "/dev/stdout", sys.executable,
                               "-c", code, how], capture_output=True, text=True, timeout=120)
        counts[how] = done.stdout.count("munmap(")
    if sys.version_info < (3, 13):
        assert counts["plain"] > 200, counts  # the bug is there to fix
    assert counts["roomy"] < 100, counts


def test_on_colab_setup_installs_tf_keras_matching_colabs_tensorflow(monkeypatch, capsys):
    from rnnbook import environment

    ran = []
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(environment.importlib.util, "find_spec",
                        lambda name: None if name == "tf_keras" else object())
    monkeypatch.setattr(environment.importlib.metadata, "version", lambda name: "2.19.1")
    command = environment.colab_packages(run=lambda cmd, check: ran.append(cmd))
    assert ran == [command] and command[-1] == "tf-keras~=2.19.0"
    assert "installed tf-keras 2.19.* to match Colab's TensorFlow 2.19.1" in capsys.readouterr().out


def test_off_colab_setup_installs_nothing(monkeypatch):
    from rnnbook import environment

    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    assert environment.colab_packages(run=lambda *a, **k: pytest.fail("ran pip")) is None
