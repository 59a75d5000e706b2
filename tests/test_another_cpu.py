"""nbval re-executes every committed notebook as another CPU would (issue 34): its kernels run
with tests/another_cpu.py's ANOTHER_CPU, ``make execute``'s do not. Where that changes the last
digits of float32 results (an x86-64 CPU with AVX: TensorFlow's and NumPy's matmuls then run
other kernels), a glue record or a print that keeps a digit the CPU decides fails on the
machine that wrote it: a record glued at full precision fails, the same number glued by
``rnnbook.numbers.glue`` passes. Whether the digits move is this machine's property (a CPU
without AVX runs the same SSE kernels both ways): the tests measure it and say it, and assert
only what holds on every CPU, that the libraries read ANOTHER_CPU's variables (issue 54)."""
import functools
import os
import pathlib
import platform
import re
import subprocess
import sys

import nbformat
import pytest

from tests.another_cpu import ANOTHER_CPU
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import focus  # noqa: E402

X86 = platform.machine().lower() in ("x86_64", "amd64")

#: a float32 matmul and its sum, in TensorFlow and in NumPy: last digits set by the kernels
SUMS = ("import numpy as np\n"
        "import rnnbook\n"
        "tf = rnnbook.setup()\n"
        "a = np.random.default_rng(0).normal(size=(300, 300)).astype(np.float32)\n"
        "tf_sum = float(tf.reduce_sum(tf.matmul(a, a)))\n"
        "np_sum = float(np.sum(a @ a))\n")


def own_environment():
    """This process's environment without ANOTHER_CPU's variables: ``make execute``'s."""
    return {k: v for k, v in os.environ.items() if k not in ANOTHER_CPU}


@functools.cache
def sums(another: bool) -> tuple[str, str]:
    """SUMS' TensorFlow and NumPy sums, as ``repr``s, in ``make execute``'s environment or with
    ANOTHER_CPU added: the digits this machine's kernels give each way."""
    env = {**own_environment(), **(ANOTHER_CPU if another else {})}
    done = subprocess.run([sys.executable, "-c", SUMS + "print(repr(tf_sum), repr(np_sum))"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    tf_sum, np_sum = done.stdout.split()
    return tf_sum, np_sum


def digits_move() -> bool:
    """Whether ANOTHER_CPU changes a last digit of SUMS on this machine (printed either way)."""
    own, other = sums(False), sums(True)
    moved = own != other
    print(f"note: ANOTHER_CPU {'changes' if moved else 'does not change'} the last digits of "
          f"TensorFlow's and NumPy's sums on this CPU: {own} -> {other}")
    return moved


@pytest.mark.slow
def test_nbval_kernels_run_as_another_cpu_and_catch_a_digit_the_cpu_decides(tmp_path):
    from rnnbook import numbers

    folder = ROOT / "_build" / "another-cpu"  # inside the repository: the root conftest.py
    folder.mkdir(parents=True, exist_ok=True)  # (which patches nbval) applies there
    path = folder / f"sums-{os.getpid()}.ipynb"
    cells = [
        SUMS,
        "import os\nprint(os.environ.get('TF_NUM_INTRAOP_THREADS'))",  # the kernel's own
        "from myst_nb import glue\n"  # every digit: what numbers.glue did before issue 34
        "glue('tf_sum', tf_sum, display=False)\nglue('np_sum', np_sum, display=False)",
        "from rnnbook import numbers\nnumbers.glue(tf_sum=tf_sum, np_sum=np_sum)",
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]),
                   path)
    try:
        jupyter = pathlib.Path(sys.executable).with_name("jupyter")
        stored = subprocess.run([str(jupyter), *focus.NBCONVERT, str(path)], cwd=folder,
                                capture_output=True, text=True, env=own_environment(),
                                timeout=600)  # as `make execute` does
        assert stored.returncode == 0, stored.stderr
        outputs = nbformat.read(path, as_version=4).cells[3].outputs
        assert len(outputs) == 2 and all(
            len(re.sub(r"\D", "", o.data["application/papermill.record/text/plain"]).strip("0"))
            <= numbers.DIGITS for o in outputs), outputs
        ran = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-v",
             "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
             "tests/nbval_sanitize.cfg", str(path.relative_to(ROOT))],
            capture_output=True, text=True, cwd=ROOT, env=own_environment(), timeout=600)
    finally:
        path.unlink(missing_ok=True)
    verdicts = dict(re.findall(r"::Cell (\d+) (PASSED|FAILED)", ran.stdout))
    assert verdicts["0"] == "PASSED" and verdicts["3"] == "PASSED", ran.stdout[-3000:]
    # the kernel had ANOTHER_CPU; nbconvert's (make execute's) had not
    assert verdicts["1"] == "FAILED", ran.stdout[-3000:]
    assert f"'{ANOTHER_CPU['TF_NUM_INTRAOP_THREADS']}" in ran.stdout
    # full precision: where the other kernels change a last digit, nbval sees it
    if digits_move():
        assert verdicts["2"] == "FAILED", ran.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.skipif(not X86, reason="ANOTHER_CPU changes the ISA on x86-64 only")
def test_tensorflow_and_numpy_read_another_cpus_kernel_choices():
    """If a TensorFlow or NumPy release stops reading these variables, the re-execution no
    longer plays another CPU: this fails, and tests/another_cpu.py needs another knob. What the
    libraries report is asserted (oneDNN's ISA, OpenBLAS's core type), not the digits, which
    move only where the CPU has kernels beyond SSE4.1 (they are printed, see digits_move)."""
    code = ("import threadpoolctl\n" + SUMS
            + "print('openblas', *[i.get('architecture') for i in "
              "threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas'])\n")
    env = {**own_environment(), **ANOTHER_CPU, "ONEDNN_VERBOSE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    isa = re.findall(r"onednn_verbose,.*?info,cpu,isa:(.*)", done.stdout + done.stderr)
    assert isa and all("SSE4.1" in line for line in isa), isa  # oneDNN's own word
    cores = done.stdout.split("openblas", 1)[1].split()
    assert cores and all(c.lower() == ANOTHER_CPU["OPENBLAS_CORETYPE"].lower()
                         for c in cores), cores
    digits_move()
