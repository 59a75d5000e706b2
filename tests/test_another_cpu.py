"""nbval re-executes every committed notebook as another CPU would (issue 34): its kernels run
with tests/another_cpu.py's ANOTHER_CPU, ``make execute``'s do not, and on this machine that
changes the last digits of float32 results. So a glue record or a print that keeps a digit
the CPU decides fails here, on the machine that wrote it: a record glued at full precision
fails, the same number glued by ``rnnbook.numbers.glue`` passes."""
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
    if X86:  # full precision: the other ISA changed a last digit, and nbval saw it
        assert verdicts["2"] == "FAILED", ran.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.skipif(not X86, reason="ANOTHER_CPU changes the ISA on x86-64 only")
def test_another_cpu_changes_the_last_digits_of_tensorflow_and_numpy():
    """If a TensorFlow or NumPy release stops reading these variables, the re-execution no
    longer plays another CPU: this fails, and tests/another_cpu.py needs another knob."""
    code = SUMS + "print(repr(tf_sum), repr(np_sum))"
    sums = []
    for env in (own_environment(), {**own_environment(), **ANOTHER_CPU}):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        sums.append(done.stdout.split())
    (tf_own, np_own), (tf_other, np_other) = sums
    assert tf_own != tf_other and np_own != np_other, sums
    assert abs(float(tf_own) / float(tf_other) - 1) < 1e-5  # last digits only
