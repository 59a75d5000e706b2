"""The numbers a chapter's prose states, computed by the page and glued into it.

``numbers.glue(settled=c_star, ratio=r)`` stores each value with myst-nb's ``glue`` (no
visible output), and the prose inserts it with ``{glue:text}`settled:.2f```: the sentence and
the run that produced it cannot drift apart (``tests/test_book_numbers.py`` finds numbers
typed into the prose). Floats are rounded to :data:`DIGITS` significant digits, so the stored
outputs do not change with a last-bit difference between machines (nbval compares them).
Without myst-nb (a reader's own Jupyter or Colab) this does nothing.
"""
from __future__ import annotations

import numbers
from typing import Any

#: significant digits kept of a glued float: more than any page shows, fewer than float32's
DIGITS = 6


def rounded(value: Any) -> float | int:
    """``value`` as a plain Python number, a float to :data:`DIGITS` significant digits."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(f"{float(value):.{DIGITS}g}")
    raise TypeError(f"glue a number, not {type(value).__name__}: {value!r}")


def glue(**values: Any) -> None:
    """Glue every ``name=value`` for the prose (``{glue:text}`name:.2f```). Returns None, so
    that a cell may end with the call and show nothing."""
    kept = {name: rounded(value) for name, value in values.items()}
    try:
        from myst_nb import glue as myst_glue
    except ImportError:  # no book build here: nothing to insert into
        return
    for name, value in kept.items():
        myst_glue(name, value, display=False)
