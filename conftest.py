"""Loaded by pytest for every test path (tests/, book/, solutions/): whatever the suite runs,
kernels included, keeps its record of passed exercises in a throw-away file, never in the
maintainer's own ~/.rnnbook (see rnnbook/record.py); and nbval's kernels run in another numeric
environment than ``make execute``'s (tests/another_cpu.py)."""
import os
import tempfile

from tests.another_cpu import patch_nbval

os.environ["RNNBOOK_PROGRESS"] = os.path.join(tempfile.mkdtemp(prefix="rnnbook-progress-"),
                                              "progress.json")
patch_nbval()
