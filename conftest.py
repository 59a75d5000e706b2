"""Loaded by pytest for every test path (tests/, book/, solutions/): whatever the suite runs,
kernels included, keeps its record of passed exercises in a throw-away file, never in the
maintainer's own ~/.rnnbook (see rnnbook/record.py)."""
import os
import tempfile

os.environ["RNNBOOK_PROGRESS"] = os.path.join(tempfile.mkdtemp(prefix="rnnbook-progress-"),
                                              "progress.json")
