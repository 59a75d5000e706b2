"""The numbers a chapter's prose states, computed by the page and glued into it.

``numbers.glue(settled=c_star, ratio=r)`` stores each value with myst-nb's ``glue`` (no
visible output), and the prose inserts it with ``{glue:text}`settled:.2f```: the sentence and
the run that produced it cannot drift apart (``tests/test_book_numbers.py`` finds numbers
typed into the prose). Floats are stored to :data:`DIGITS` significant digits, the most any
page shows (``.2f`` of a value under 10, ``.1f``, ``.1e``): the stored record holds what a
reader sees, not the 6th or 7th digit that another CPU computes otherwise (BLAS and Eigen
kernels sum in another order, and nbval compares the records exactly; issue 34).
``tests/test_book_numbers.py`` holds every page's formats to it. Without myst-nb (a
reader's own Jupyter or Colab) this does nothing.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

#: significant digits kept of a glued float: as many as the prose shows at most (a format that
#: shows more fails tests/test_book_numbers.py), never a digit a CPU decides
DIGITS = 3


def rounded(value: Any) -> float | int:
    """``value`` as a plain Python number, a float to :data:`DIGITS` significant digits.

    Where those digits end on a half point that a coarser format rounds (-3.7455 to -3.75,
    which ``.1f`` shows as -3.8 where the value is -3.7), one more digit is kept, one unit
    off the half point on the value's side (-3.749): every format of at most DIGITS digits
    then shows what it shows of the value itself."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if not isinstance(value, numbers.Real):
        raise TypeError(f"glue a number, not {type(value).__name__}: {value!r}")
    number = float(value)
    kept = float(f"{number:.{DIGITS}g}")
    mantissa = f"{kept:.{DIGITS}e}".split("e")[0].rstrip("0").rstrip(".")
    if math.isfinite(kept) and kept.is_integer() and abs(kept) >= 10 ** DIGITS:
        kept = int(kept)  # 14400, not 14400.0: no digit shown that is not kept
    if kept == number or not math.isfinite(kept) or not mantissa.endswith("5"):
        return kept
    unit = 10.0 ** (math.floor(math.log10(abs(kept))) - DIGITS)  # one (DIGITS + 1)th digit
    return float(f"{kept + math.copysign(unit, number - kept):.{DIGITS + 1}g}")


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
