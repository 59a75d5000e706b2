"""Set-up for every notebook: one call, made before TensorFlow is imported.

``tf = rnnbook.setup()`` checks that TensorFlow and a matching tf-keras are installed (one line
naming the command that installs what is missing), switches on the legacy (tf-keras) cells,
silences TensorFlow's C++ log so no log line lands in a stored output (through the first graph
run too), turns oneDNN off (last-digit differences between CPUs), turns TF32 matmuls off and
op determinism on (a GPU then gives the CPU's numbers and verdicts: :func:`same_numbers`), seeds
Python, NumPy, TensorFlow and Keras 3, sets NumPy's print options, and returns ``tensorflow``.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import os
import random
import subprocess
import sys
import types
import warnings
from typing import Any, Callable, Iterator

# (NumPy and importlib.metadata are imported where used: the grader's process control imports
# TF_ENV from here, first thing on Gradescope's cold path, and needs neither)

#: Environment the TF1 cells and reproducible outputs need; set before ``import tensorflow``.
TF_ENV = {
    "TF_USE_LEGACY_KERAS": "1",  # tf.compat.v1.nn.rnn_cell.* load only with tf-keras and this
    "TF_CPP_MIN_LOG_LEVEL": "3",  # no C++ log lines in cell outputs
    "TF_ENABLE_ONEDNN_OPTS": "0",  # no oneDNN notice, identical digits on every CPU
}
#: the file of a Gradescope bundle (next to the package) holding the graphs its chapter's checks
#: prebuild (``rnnbook.grading.config.PREBUILT``): here, so that the grader's zygote, which
#: may import only this and the learner side, finds it by the same name
PREBUILT_GRAPHS = "prebuilt.pickle"
PRINT_OPTIONS = dict(precision=4, suppress=True, linewidth=100)
TOO_LATE = (
    "TensorFlow was imported before rnnbook.setup(): restart the kernel and run the set-up cell "
    "first."
)


class SetupError(RuntimeError):
    """Raised when the set-up call comes too late, or a package the book needs is missing."""


def set_environment() -> None:
    """Put :data:`TF_ENV` into ``os.environ`` (also used for the grader's child processes)."""
    os.environ.update(TF_ENV)


#: Unused slots in the frame :func:`call_with_roomy_stack` calls from (8 bytes each).
ROOMY_SLOTS = 1 << 18


def call_with_roomy_stack(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, called from a frame that makes the interpreter's frame stack one 4 MB chunk.

    CPython 3.11 keeps Python frames in 16 KB chunks and unmaps a chunk as soon as the calls
    return below its start, so code whose calls keep crossing one boundary pays an ``mmap`` and a
    ``munmap`` per call (python/cpython#142183, fixed in 3.13 and 3.14 only). Importing
    TensorFlow crosses one about 28,000 times, and a grading child about 85,000: most of a
    second of system time each, and more when two processes pay it at once. A frame with
    :data:`ROOMY_SLOTS` unused stack slots gets a chunk of its own with room left for every frame
    above it. Used for the set-up's imports, the grader's child and the grader's oracle thread.
    """

    def roomy(fn, args):
        return fn(*args)

    code = roomy.__code__.replace(co_stacksize=ROOMY_SLOTS)  # reserved, never used
    return types.FunctionType(code, {})(fn, args)


def usable_cores(cgroup: str = "/sys/fs/cgroup") -> int:
    """The cores this process can run on at once: its CPU affinity, bounded by the CPU quota of
    the ``cgroup`` folder (a container's ``--cpus``: cgroup v2's ``cpu.max``, v1's
    ``cpu.cfs_quota_us``), at least 1. ``os.cpu_count()`` counts the host's cores, which a
    container may not have."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    for quota, period in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            with open(os.path.join(cgroup, quota)) as f:
                words = f.read().split()
            if period:
                with open(os.path.join(cgroup, period)) as f:
                    words = [words[0], f.read().strip()]
        except (OSError, IndexError):
            continue
        if len(words) == 2 and words[0].lstrip("-").isdigit() and int(words[0]) > 0 and (
                words[1].isdigit() and int(words[1]) > 0):
            cores = min(cores, int(words[0]) // int(words[1]))
        break
    return max(1, cores)


def import_heavy(name: str) -> types.ModuleType:
    """``importlib.import_module(name)`` for TensorFlow and Keras, about twice as fast.

    - No cyclic garbage collection while they load. CPython collects in full, again and again,
      while their hundreds of thousands of objects are created, each time over everything
      created so far: half of TensorFlow's import time. Then ``gc.freeze()`` moves what is there
      (modules, classes, functions: never garbage; the import leaves a few thousand garbage
      objects, under a megabyte) out of the collector's sight, so later collections skip it.
    - From a frame stack with room: see :func:`call_with_roomy_stack`.
    """
    if name in sys.modules:
        return sys.modules[name]
    enabled = gc.isenabled()
    gc.disable()
    try:
        return call_with_roomy_stack(importlib.import_module, name)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[Any]:
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


def _installed(name: str) -> bool:
    """Whether module ``name`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a parent package or an import hook refused it
        return False


def _version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None (read without importing it)."""
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _series(version: str) -> str:
    """``"2.19"`` for ``"2.19.1"``."""
    return ".".join(version.split(".")[:2])


def _declared(name: str) -> str:
    """``name``'s requirement as rnnbook's metadata declares it (pyproject.toml's
    ``dependencies``, e.g. ``"tensorflow<2.22,>=2.19"``), or the bare name."""
    import importlib.metadata

    try:
        requires = importlib.metadata.requires("rnnbook") or []
    except importlib.metadata.PackageNotFoundError:  # run from a checkout, not installed
        requires = []
    for requirement in requires:
        spec = requirement.split(";")[0].replace(" ", "")
        if spec.lower().replace("_", "-").startswith(name) and spec[len(name):][:1] in "<>=!~":
            return spec
    return name


def tf_keras_requirement() -> str:
    """The pip requirement of the tf-keras that matches the installed TensorFlow,
    ``"tf-keras~=2.19.0"`` for TensorFlow 2.19.1 (tf-keras is released in step with it)."""
    return f"tf-keras~={_series(_version('tensorflow') or '2.21')}.0"


def missing_packages() -> str | None:
    """One line saying which package the book's TF1 cells lack and the command that installs
    it, or None when TensorFlow and a matching tf-keras are there.

    Without tf-keras, TensorFlow's TF1 cells fail only when first touched, with "Keras cannot
    be imported" (Keras 3 is there; tf-keras is what is missing) and then RecursionError: this
    says it at the set-up cell instead.
    """
    if not _installed("tensorflow"):
        both = " ".join(f'"{_declared(name)}"' for name in ("tensorflow", "tf-keras"))
        return (f"TensorFlow is not installed: run  pip install {both}  (in a notebook: "
                f"%pip install {both}), then restart the kernel.")
    requirement = tf_keras_requirement()
    tf_version, keras2 = _version("tensorflow"), _version("tf-keras")
    if not _installed("tf_keras"):
        return (f"tf-keras is not installed, and TensorFlow's TF1 cells "
                f"(tf.compat.v1.nn.rnn_cell) live in it: run  pip install \"{requirement}\"  "
                f"(in a notebook: %pip install \"{requirement}\"), then restart the kernel.")
    if tf_version and keras2 and _series(keras2) != _series(tf_version):
        return (f"tf-keras {keras2} does not match TensorFlow {tf_version}: run  pip install "
                f"\"{requirement}\"  (in a notebook: %pip install \"{requirement}\"), then "
                f"restart the kernel.")
    return None


def require_packages() -> None:
    """Raise :class:`SetupError` with :func:`missing_packages`' one line, if it has one."""
    missing = missing_packages()
    if missing:
        raise SetupError(missing)


def import_tensorflow() -> types.ModuleType:
    """``tensorflow``, imported quietly with the legacy cells available."""
    if "tensorflow" not in sys.modules:
        set_environment()
        with _quiet_stderr():
            import_heavy("tensorflow")
    if os.environ.get("TF_USE_LEGACY_KERAS") != "1":
        raise SetupError(TOO_LATE)
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    # The TF1 cells warn on every construction that they are deprecated: the book says so once.
    warnings.filterwarnings("ignore", message=r".*is deprecated and will be removed", category=UserWarning)
    return tf


def import_keras() -> types.ModuleType:
    """Keras 3 (``tf.keras`` is tf-keras, Keras 2, once the legacy switch is on), imported after
    TensorFlow and with :func:`import_heavy`."""
    import_tensorflow()
    return import_heavy("keras")


def in_colab() -> bool:
    """Whether this kernel runs on Google Colab."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def colab_packages(run: Callable[..., Any] = subprocess.run) -> list[str] | None:
    """On Colab, install what it lacks for the book: tf-keras matching Colab's own TensorFlow
    (the TF1 cells live there), when it is missing or of another series. Says what it did;
    does nothing elsewhere or when a matching one is there.

    The checks need no particular TensorFlow version: their oracle is the TensorFlow that runs
    in the same process as the learner's code.
    """
    if not in_colab():
        return None
    version, keras2 = _version("tensorflow"), _version("tf-keras")
    if version is None or (_installed("tf_keras") and keras2
                           and _series(keras2) == _series(version)):
        return None
    requirement = tf_keras_requirement()
    command = [sys.executable, "-m", "pip", "install", "--quiet", requirement]
    run(command, check=True)
    importlib.invalidate_caches()
    print(f"rnnbook: installed tf-keras {_series(version)}.* to match Colab's TensorFlow "
          f"{version}")
    return command


#: The first graph run of TensorFlow 2.19 and 2.20 writes "All log messages before
#: absl::InitializeLog() is called are written to STDERR" and an "MLIR V1 optimization pass is
#: not enabled" line to the process's stderr, whatever TF_CPP_MIN_LOG_LEVEL says; 2.21 does not.
FIRST_RUN_LOGS = ((2, 19), (2, 20))


def _first_graph_run_quietly(tf: types.ModuleType) -> None:
    """Run one tiny graph in a session of its own and one ``tf.function``, with the process's
    stderr sent to /dev/null: the one-time log lines of :data:`FIRST_RUN_LOGS` go there, not
    into the first check cell's output. Only on those versions (a grading zygote never calls
    this: it forks after the import, before any op runs)."""
    if tuple(int(p) for p in tf.__version__.split(".")[:2]) not in FIRST_RUN_LOGS:
        return
    with _quiet_stderr():
        with tf.Graph().as_default():
            x = tf.compat.v1.placeholder(tf.float32, [None])
            with tf.compat.v1.Session() as session:
                session.run(x * 2.0, {x: [1.0]})
        tf.function(lambda y: y * 2.0)(tf.constant(1.0))


_said_on_gpu = False
#: :func:`setup` imports Keras 3 (and seeds it). Only a grading child of a chapter that never
#: uses Keras 3 has it False (its zygote sets it: ``Chapter.keras3``); a notebook keeps it.
KERAS3 = True
#: said once by :func:`setup` where TensorFlow sees a GPU (nothing is said on a CPU)
ON_GPU = "rnnbook: GPU found; TF32 off, ops deterministic: the numbers are a CPU's"


def same_numbers(tf: types.ModuleType) -> bool:
    """Make a GPU compute what a CPU does: TF32 off (on Ampere and newer GPUs TensorFlow turns
    it on by default, and a float32 matmul is then off by about 1e-3 relative, while the checks
    compare at rtol 1e-4) and op determinism on (the same numbers on every run). Returns
    whether TensorFlow sees a GPU."""
    tf.config.experimental.enable_tensor_float_32_execution(False)
    tf.config.experimental.enable_op_determinism()
    return bool(tf.config.list_physical_devices("GPU"))


def setup(seed: int = 0, tensorflow: bool = True) -> types.ModuleType | None:
    """Prepare this process for the book's code and return the ``tensorflow`` module.

    Call it once, at the top of a notebook, before anything imports TensorFlow. Calling it again
    later (re-running the cell) only re-seeds. ``tensorflow=False`` sets everything up without
    importing TensorFlow and returns None. On Colab it first installs tf-keras to match
    Colab's TensorFlow (:func:`colab_packages`); elsewhere a missing TensorFlow or tf-keras
    raises :class:`SetupError`, one line naming the command that installs it.
    """
    if "tensorflow" in sys.modules and os.environ.get("TF_USE_LEGACY_KERAS") != "1":
        raise SetupError(TOO_LATE)
    colab_packages()
    if tensorflow:
        require_packages()
    set_environment()
    import numpy as np

    np.set_printoptions(**PRINT_OPTIONS)  # type: ignore[arg-type]  # ints
    random.seed(seed)
    np.random.seed(seed)
    if not tensorflow:
        return None
    tf = import_tensorflow()
    keras = import_keras() if KERAS3 or "keras" in sys.modules else None
    _first_graph_run_quietly(tf)
    global _said_on_gpu
    if same_numbers(tf) and not _said_on_gpu:
        print(ON_GPU)
        _said_on_gpu = True  # once per process, not at every re-run of the set-up cell
    if keras is not None:
        keras.utils.set_random_seed(seed)  # seeds random, NumPy, TensorFlow and Keras 3
    else:
        tf.random.set_seed(seed)  # (random and NumPy: above)
    return tf
