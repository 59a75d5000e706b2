"""Answers written as learners write them, right and wrong, per chapter (tests/test_sweep.py)."""
