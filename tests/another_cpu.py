"""The numeric environment nbval's kernels run in: another CPU, as far as one machine can play
one (issue 34).

``make execute`` stores a notebook's outputs in the machine's own environment. nbval (in ``make
test`` and ``make exercise-check``) re-executes every committed notebook in a kernel started
with :data:`ANOTHER_CPU` added (the root ``conftest.py`` calls :func:`patch_nbval`) and compares
the outputs as always, with ``tests/nbval_sanitize.cfg``. So a digit that depends on the CPU,
kept by a glue record or a print, fails on the machine that wrote it rather than on the next
one. ``tests/test_another_cpu.py`` holds that the change reaches the kernels and changes the
last digits here.
"""
import os
import platform

#: what changes the digits a float32 computation ends with, on one machine (set in the kernel
#: only: the tests themselves run in the machine's own environment)
ANOTHER_CPU = {
    "TF_NUM_INTRAOP_THREADS": "1",  # TensorFlow's reductions split over threads otherwise
    "OPENBLAS_NUM_THREADS": "1",  # NumPy's BLAS: one thread sums in another order
}
if platform.machine().lower() in ("x86_64", "amd64"):
    ANOTHER_CPU |= {
        # TensorFlow's matmuls (Eigen's contraction calls oneDNN's sgemm, even with
        # TF_ENABLE_ONEDNN_OPTS=0): SSE4.1 kernels, not AVX, AVX2 or AVX-512 ones
        "ONEDNN_MAX_CPU_ISA": "SSE41",
        "OPENBLAS_CORETYPE": "Nehalem",  # NumPy's matmuls: SSE kernels, not Haswell or Zen
    }


def patch_nbval():
    """Start every nbval kernel with :data:`ANOTHER_CPU` in its environment (nbval has no
    option for a kernel's environment; it starts each through ``nbval.kernel``'s
    ``start_new_kernel``, which passes ``env`` on to jupyter_client)."""
    try:
        from nbval import kernel
    except ImportError:  # no nbval: nothing to patch
        return
    start = kernel.start_new_kernel
    if getattr(start, "another_cpu", False):
        return

    def start_new_kernel(*args, **kwargs):
        kwargs["env"] = {**os.environ, **kwargs.get("env", {}), **ANOTHER_CPU}
        return start(*args, **kwargs)

    start_new_kernel.another_cpu = True
    kernel.start_new_kernel = start_new_kernel
