"""Not part of the learner release: this module belongs to the instructor's side.

It holds the NumPy reference of the book's cells, which would solve the by-hand exercises. The
checks work without it (they just do not name some mistakes).
"""


def __getattr__(name):
    raise ImportError(f"{__name__} is not part of the learner release")
