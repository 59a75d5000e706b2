"""rnnbook.setup(): what it sets, and its one clear sentence when it comes too late."""
import os
import subprocess
import sys
import types

import pytest

from rnnbook import environment


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
        "a = np.random.rand(); rnnbook.setup(seed=3); print(a == np.random.rand())\n"
        # the first graph run and tf.function: TF 2.19 and 2.20 log there (absl, MLIR)
        "with tf.Graph().as_default():\n"
        "    x = tf.compat.v1.placeholder(tf.float32, [None])\n"
        "    with tf.compat.v1.Session() as s:\n"
        "        print(s.run(x + 1.0, {x: [1.0]}))\n"
        "print(tf.function(lambda y: y * 2.0)(tf.constant(2.0)).numpy())\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tf_keras.src.layers.rnn.legacy_cells", "0", "4", "True",
                                   "[2.]", "4.0"]
    assert done.stderr == ""  # no absl/MLIR/cuda/oneDNN line that would land in an output


@pytest.mark.slow
def test_a_grading_child_of_a_chapter_without_keras_3_sets_up_without_it():
    """With ``environment.KERAS3`` False (the zygote of a chapter whose children never use
    Keras 3 sets it) setup() neither imports Keras 3 nor forgets to seed TensorFlow; a
    notebook (KERAS3 True) gets Keras 3 imported and seeded as before."""
    done = run(
        "import sys, rnnbook, rnnbook.environment as env\n"
        "env.KERAS3 = False\n"
        "tf = rnnbook.setup(seed=3)\n"
        "a = tf.random.uniform((3,)).numpy()\n"
        "print('keras' in sys.modules)\n"
        "rnnbook.setup(seed=3)\n"
        "print((a == tf.random.uniform((3,)).numpy()).all())\n"
        "env.KERAS3 = True\n"
        "rnnbook.setup(seed=3)\n"
        "print('keras' in sys.modules)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]


@pytest.mark.slow
def test_setup_after_tensorflow_says_so_in_one_sentence():
    late = run("import tensorflow\nimport rnnbook\nrnnbook.setup()\n")
    assert late.returncode != 0
    last = late.stderr.strip().splitlines()[-1]
    assert last == ("rnnbook.environment.SetupError: TensorFlow was imported before "
                    "rnnbook.setup(): restart the kernel and run the set-up cell first.")


#: Makes ``tf_keras`` look uninstalled, as on a plain Jupyter or a pip install without it.
NO_TF_KERAS = (
    "import importlib.machinery, sys\n"
    "class NoTfKeras(importlib.machinery.PathFinder):\n"
    "    @classmethod\n"
    "    def find_spec(cls, name, path=None, target=None):\n"
    "        if name.split('.')[0] == 'tf_keras':\n"
    "            return None\n"
    "        return importlib.machinery.PathFinder.find_spec(name, path, target)\n"
    "sys.meta_path[:] = [NoTfKeras if f is importlib.machinery.PathFinder else f\n"
    "                    for f in sys.meta_path]\n")


@pytest.mark.slow
def test_without_tf_keras_setup_says_what_is_missing_and_how_to_install_it():
    """Without it, the set-up cell used to pass and the first TF1 cell to fail with "Keras
    cannot be imported" (misleading: Keras 3 is there), then RecursionError everywhere."""
    import importlib.metadata

    series = ".".join(importlib.metadata.version("tensorflow").split(".")[:2])
    failed = run(NO_TF_KERAS + "import rnnbook\nrnnbook.setup()\n")
    assert failed.returncode != 0
    last = failed.stderr.strip().splitlines()[-1]
    assert last == (
        "rnnbook.environment.SetupError: tf-keras is not installed, and TensorFlow's TF1 cells "
        f'(tf.compat.v1.nn.rnn_cell) live in it: run  pip install "tf-keras~={series}.0"  (in '
        f'a notebook: %pip install "tf-keras~={series}.0"), then restart the kernel.')
    # what the learner met before: the blocker is faithful to a missing tf-keras
    before = run(NO_TF_KERAS + "import os\nos.environ['TF_USE_LEGACY_KERAS'] = '1'\n"
                 "import tensorflow as tf\ntf.compat.v1.nn.rnn_cell.BasicRNNCell(2)\n")
    assert before.returncode != 0 and "Keras cannot be imported" in before.stderr


def test_without_tensorflow_setup_names_the_declared_range():
    """The command installs what pyproject.toml declares (read from the package's metadata)."""
    failed = run(NO_TF_KERAS.replace("'tf_keras'", "'tensorflow'")
                 + "import rnnbook\nrnnbook.setup()\n")
    assert failed.returncode != 0
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("rnnbook.environment.SetupError: TensorFlow is not installed: run  "
                           'pip install "tensorflow'), last
    assert "tf-keras" in last and "then restart the kernel." in last


def test_a_tf_keras_of_another_series_is_named_with_the_matching_command(monkeypatch):
    from rnnbook import environment

    versions = {"tensorflow": "2.19.1", "tf-keras": "2.21.0"}
    monkeypatch.setattr(environment, "_version", versions.get)
    assert environment.missing_packages() == (
        'tf-keras 2.21.0 does not match TensorFlow 2.19.1: run  pip install "tf-keras~=2.19.0"  '
        '(in a notebook: %pip install "tf-keras~=2.19.0"), then restart the kernel.')
    versions["tf-keras"] = "2.19.0"
    assert environment.missing_packages() is None


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


def test_on_colab_a_matching_tf_keras_is_left_alone(monkeypatch):
    from rnnbook import environment

    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-20261101")
    monkeypatch.setattr(environment, "_version",
                        {"tensorflow": "2.20.0", "tf-keras": "2.20.1"}.get)
    monkeypatch.setattr(environment, "_installed", lambda name: True)
    assert environment.colab_packages(run=lambda *a, **k: pytest.fail("ran pip")) is None


def test_off_colab_setup_installs_nothing(monkeypatch):
    from rnnbook import environment

    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    assert environment.colab_packages(run=lambda *a, **k: pytest.fail("ran pip")) is None


#: TensorFlow's own reading of the two settings rnnbook.setup() makes for a GPU
SETTINGS = ("from tensorflow.python.framework import config\n"
            "print(tf.config.experimental.tensor_float_32_execution_enabled(),\n"
            "      config.is_op_determinism_enabled())\n")


@pytest.mark.slow
def test_setup_turns_tf32_off_and_op_determinism_on_and_says_so_on_a_gpu_only():
    """Issue 37: on an Ampere or newer GPU TensorFlow runs float32 matmuls in TF32 (about 1e-3
    relative, the checks compare at 1e-4). After setup() TensorFlow's own config says TF32 off
    and determinism on; one line says so where a GPU is seen (here one is made to appear),
    once however often the set-up cell runs, and nothing is said on a CPU."""
    from rnnbook.environment import ON_GPU

    before = run("import rnnbook.environment as e\ne.set_environment()\n"
                 "import tensorflow as tf\n" + SETTINGS)
    assert before.stdout.split() == ["True", "False"], before.stderr  # TensorFlow's defaults
    on_cpu = run("import rnnbook\ntf = rnnbook.setup()\n" + SETTINGS)
    assert on_cpu.stdout.split() == ["False", "True"], on_cpu.stderr
    on_gpu = run("import rnnbook.environment as e\ne.set_environment()\n"
                 "import tensorflow as tf\n"
                 "seen = tf.config.list_physical_devices\n"
                 "tf.config.list_physical_devices = lambda kind=None: (\n"
                 "    ['GPU:0'] if kind == 'GPU' else seen(kind))\n"
                 "import rnnbook\ntf = rnnbook.setup()\nrnnbook.setup(seed=1)\n" + SETTINGS)
    assert on_gpu.stdout.splitlines() == [ON_GPU, "False True"], on_gpu.stderr
    assert len(ON_GPU) <= 88


@pytest.mark.parametrize("files, most", [
    ({"cpu.max": "150000 100000\n"}, 1),  # docker --cpus 1.5: one core's worth of two
    ({"cpu.max": "400000 100000\n"}, 4),
    ({"cpu.max": "max 100000\n"}, None),  # no quota
    ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),  # v1
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({"cpu.max": "50000 100000\n"}, 1),  # half a core: still one
    ({}, None),  # no cgroup files at all
])
def test_usable_cores_is_the_affinity_bounded_by_the_cgroups_quota(tmp_path, files, most):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    affinity = len(os.sched_getaffinity(0))
    assert environment.usable_cores(str(tmp_path)) == min(affinity, most or affinity)
