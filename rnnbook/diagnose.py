"""A diagnosis that needs no list: what is wrong with an answer no :class:`Mistake` names.

:func:`generic` runs after an exercise's listed mistakes fail to match (from
:func:`rnnbook.compare.evaluate`, so the notebook's ``check(fn)``, the learner release, the grader
and Gradescope say the same). It looks for two kinds of evidence, and says the first it finds
in ONE sentence that names what is wrong, never the code to write:

- *relations* between the learner's answer and the expected one on the first failing trial,
  found from the arrays alone (:func:`relation`): the wrong shape or type, transposed, blocks in
  another order or one block wrong (in the exercise's own block names, :attr:`Exercise.blocks`),
  scaled by a constant, shifted by one position along an axis (a time step, a layer), the value
  of another part or an input unchanged, right on some rows of the batch or some steps only,
  right only to float16 rounding, off by the same amount in every row;
- *probes* (:func:`probe_sentence`): extra trials made from the first trial with one input
  changed (:class:`Probe`, declared on the exercise: ``h`` set to zero, one block of the bias
  changed, one batch row changed), answered by the learner's function and by the oracle, each in
  its own process in the grader (no expected value enters the learner's process): how the
  learner's answer responds is compared with how the oracle's does;
- *pins* (:func:`pinned_sentence`), for a formula wrong everywhere (every probe moves the
  answer otherwise): a quantity inside the answer that the case can hold at either end of its
  range (a gate held shut or open through its bias, :class:`Pin`, declared on the exercise),
  the answer being affine in it. The right answers with it held at each end tell, entry by
  entry, which value of it the learner's answer implies: one that rises and falls with
  TensorFlow's but takes other values (it is squashed wrong), or the one quantity whose
  implied values stay in its range while every other's leave theirs (it alone is wrong).

An exercise declares only its block names, its probes and its pins (CONTRIBUTING.md, *Diagnosis*); the
rest is generic.
"""
from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from rnnbook.plaindata import Case, Raised

#: the axis names a case's sizes give (an axis whose length is one of these sizes, and no
#: other's, is named by it)
AXES = {"B": ("row", "rows", "of the batch"), "T": ("step", "steps", "in time"),
        "layers": ("layer", "layers", ""), "L": ("layer", "layers", "")}
#: the constants a scaled answer is recognised by, in words
SCALES = ((2.0, "twice"), (0.5, "half"), (-1.0, "minus"), (4.0, "four times"),
          (0.25, "a quarter of"))
#: float16 keeps about three digits: an answer right to this and no better is a dtype problem
F16_RTOL, F16_ATOL = 2e-3, 2e-3


@dataclass(frozen=True)
class Probe:
    """One input of a trial changed, to see how the answer responds (declared per exercise).

    ``input``: the case's key (``"h"``); ``how``: ``"zero"`` (set to zeros), ``"all"`` (every
    value changed), ``"row"`` (the last batch row changed: axis 0), ``"block"`` (block
    ``block`` of ``of`` equal blocks of its last axis changed), ``"step"`` (step ``block``
    of a (B, T, ...) input changed: axis 1, -1 the last), or ``"padding"`` (a padded batch
    ``(B, T, ...)``: the steps past each row's length, the case's ``lengths`` ``(B,)``,
    changed, and nothing else); ``said``: how the message names the change (``"h"``, ``"the
    candidate's bias"``; default: the input's name)."""

    input: str
    how: str = "all"
    block: int = 0
    of: int = 1
    said: str = ""

    def __post_init__(self):
        if self.how not in ("zero", "all", "row", "block", "step", "padding"):
            raise ValueError(f"probe of {self.input!r}: how={self.how!r} is not one of zero, "
                             "all, row, block, step, padding")
        if self.how == "block" and not 0 <= self.block < self.of:
            raise ValueError(f"probe of {self.input!r}: block {self.block} of {self.of}")

    @property
    def name(self) -> str:
        """The probe's name, unique within an exercise: ``h:zero``, ``bias:block2``."""
        return f"{self.input}:{self.how}" + (str(self.block) if self.how in ("block", "step")
                                             else "")

    @property
    def words(self) -> str:
        """``h``, ``the candidate's bias``: the change, in words."""
        return self.said or f"`{self.input}`"

    def change(self, case: Case) -> Case:
        """``case`` with this probe's input changed (a new case; the others' arrays shared)."""
        value = np.array(case[self.input], dtype=np.asarray(case[self.input]).dtype)
        if self.how == "zero":
            value = np.zeros_like(value)
        elif self.how == "row":
            value[-1] = _moved(value[-1])
        elif self.how == "block":
            width = value.shape[-1] // self.of
            cut = slice(self.block * width, (self.block + 1) * width)
            value[..., cut] = _moved(value[..., cut])
        elif self.how == "step":
            value[:, self.block] = _moved(value[:, self.block])
        elif self.how == "padding":
            steps = np.arange(value.shape[1])[None, :]  # (1, T)
            padded = steps >= np.asarray(case["lengths"])[:, None]  # (B, T)
            value[padded] = _moved(value[padded])  # zero padding moves too (to 0.5)
        else:
            value = _moved(value)
        return {**case, self.input: value, "probe": self.name}


@dataclass(frozen=True)
class Pin:
    """A quantity inside the answer that a case can hold at either end of its range, the
    answer being affine in it (a GRU's h' = z * h + (1 - z) * h~ in z and in h~; an LSTM's c' in
    f, i and j), declared per exercise for :func:`pinned_sentence`.

    ``said``: its name in a message (``"the update gate z"``); ``hold(case, end)``: the case
    with the quantity held at ``end`` (``low`` or ``high``: its bias set so large that the
    squashing gives that end); ``low``, ``high``: its range (a sigmoid's 0 and 1, a tanh's -1
    and 1). ``answer`` is bound by the :class:`~rnnbook.exercise.Chapter`: the exercise's right
    answer on ``hold(case, end)`` (the reference, or the oracle in the learner release)."""

    said: str
    hold: Callable[[Any, float], Any]  # (an exercise's trial, end) -> a trial of it
    low: float = 0.0
    high: float = 1.0
    answer: Callable[[Case, float], Any] | None = None

    def bound(self, right: Callable[[Case], Any]) -> Pin:
        """This pin with ``answer`` made from ``right`` (the right answer on a case)."""
        if self.answer is not None:
            return self
        hold = self.hold
        return dataclasses.replace(self, answer=lambda case, end: right(hold(case, end)))

    @property
    def range(self) -> str:
        return f"({self.low:g}, {self.high:g})"


def _moved(value: np.ndarray) -> np.ndarray:
    """Every value changed, deterministically and by about its own size."""
    return (0.5 - 1.5 * np.asarray(value)).astype(np.asarray(value).dtype)


def probe_cases(ex: Any, cases: Sequence[Case]) -> list[Case]:
    """The extra trials of ``ex``'s probes: each probe's change of one trial
    (:func:`probed_trial`), which each names (``probed``)."""
    if not cases or not ex.probes:
        return []
    k = probed_trial(cases)
    return [{**p.change(cases[k]), "probed": k} for p in ex.probes]


def probed_trial(cases: Sequence[Case]) -> int:
    """Which trial the probes change: the first of those with the most rows in the batch (a
    changed row can then show in another)."""
    rows = [int(c["B"]) if isinstance(c.get("B"), (int, np.integer)) else 0 for c in cases]
    return rows.index(max(rows))


# --- relations between an answer and the expected one ---------------------------------------


def _close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        return bool((np.abs(a - b) <= atol + rtol * np.abs(b)).all())


def _float(value: Any) -> np.ndarray | None:
    """``value`` as a float array when it is numbers, else None."""
    if isinstance(value, Raised) or isinstance(value, str) or value is None:
        return None
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return array if array.size else None


def _axis_names(shape: tuple[int, ...], case: Case) -> dict[int, tuple[str, str, str]]:
    """``{axis: (one, many, where)}`` for the axes a size of the case names uniquely."""
    sizes = {k: v for k, v in case.items() if k in AXES and isinstance(v, (int, np.integer))}
    named = {}
    for axis, length in enumerate(shape):
        keys = [k for k, v in sizes.items() if v == length]
        if len(keys) == 1 and sum(n == length for n in shape) == 1:
            named[axis] = AXES[keys[0]]
    return named


def relation(want: Any, got: Any, path: str, case: Case, ex: Any,
             others: Sequence[tuple[str, Any]] = ()) -> str | None:
    """One sentence relating ``got`` to ``want`` (one array, or one part), or None.

    ``others``: ``(name, expected value)`` of the other parts, and the case's inputs, that a
    wrong answer may hold instead."""
    rtol, atol = ex.rtol, ex.atol
    if isinstance(want, str):
        return _name_sentence(want, got, path) if isinstance(got, str) else None
    if isinstance(want, list) and isinstance(got, list):
        return _list_sentence(want, got, path, case, ex)
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        for key, value in case.items():
            if (isinstance(value, float) and not isinstance(value, bool) and key != "probe"
                    and np.isclose(got, value, rtol=rtol, atol=atol)):
                return f"{path} is the input `{key}` unchanged, not the value computed from it."
    w, g = _float(want), _float(got)
    if w is None:
        return None
    if g is None:
        if isinstance(got, list) and isinstance(want, np.ndarray):
            return (f"{path} is a sequence of {len(got)} pieces where one array of shape "
                    f"{want.shape} is expected.")
        return None
    if g.shape != w.shape:
        if g.ndim == 2 and g.T.shape == w.shape and _close(g.T, w, rtol, atol):
            return f"{path} is transposed: its rows are the expected columns."
        if g.size == w.size and _close(g.reshape(w.shape), w, rtol, atol):
            return (f"{path} holds the right values in shape {g.shape}, where shape {w.shape} "
                    "is expected.")
        for name, other in others:
            o = _float(other)
            if o is not None and o.shape == g.shape and _close(g, o, rtol, atol):
                return f"{path} holds {name}, where another value is expected."
        return _shape_sentence(path, w.shape, g.shape, case)
    if not np.isfinite(g).all():
        return f"{path} holds NaN or infinite values where TensorFlow's are finite."
    if _close(g, w, F16_RTOL, F16_ATOL):
        return (f"{path} is right only to about three digits: a float16 rounding (the "
                "dtype), not the formula.")
    if g.ndim == 2 and g.shape[0] == g.shape[1] and _close(g.T, w, rtol, atol):
        return f"{path} is transposed: its rows are the expected columns."
    for name, other in others:
        o = _float(other)
        if o is not None and o.shape == g.shape and _close(g, o, rtol, atol):
            return f"{path} holds {name}, where another value is expected."
    said = _piece_sentence(g, path, others, rtol, atol)
    if said:
        return said
    said = _blocks_sentence(w, g, path, ex.blocks, rtol, atol, _units(case))
    if said:
        return said
    said = _scale_sentence(w, g, path, rtol, atol) or _divided_sentence(w, g, path, case,
                                                                        rtol, atol)
    if said:
        return said
    if g.size > 1 and _close(np.sort(g, axis=None), np.sort(w, axis=None), rtol, atol):
        return (f"{path} holds the expected values in another order: the same numbers, "
                "placed at other positions.")
    names = _axis_names(g.shape, case)
    said = _shift_sentence(w, g, path, names, rtol, atol)
    if said:
        return said
    said = _some_sentence(w, g, path, names, rtol, atol, _padded_rows(case))
    if said:
        return said
    if g.ndim >= 2 and g.shape[0] > 1:
        gap = g - w
        if np.allclose(gap, gap[:1], rtol=0, atol=atol + rtol * float(np.abs(w).max())):
            return (f"{path} is off by the same amount in every row: a term that does not "
                    "depend on the rows' inputs (a bias, a constant) is wrong.")
    if _close(g, np.zeros_like(g), 0, atol):
        return f"{path} is all zeros where TensorFlow's is not."
    said = _zero_blocks_sentence(w, g, path, ex.blocks, atol, _units(case))
    if said:
        return said
    # a gradient (Exercise.relative_error) is no squashed value
    return _range_sentence(w, g, path, rtol, atol, not ex.relative_error)


def _range_sentence(w: np.ndarray, g: np.ndarray, path: str, rtol: float,
                    atol: float, squashed: bool = True) -> str | None:
    """Values outside the range every expected value keeps, or zeros where none are
    expected, or right at most entries only."""
    wrong = ~(np.abs(g - w) <= atol + rtol * np.abs(w))
    if squashed and w.size >= 4 and (np.abs(w) < 1).all() and (
            np.abs(g[wrong]) > 1 + atol).any():
        inside = "(0, 1)" if (w > 0).all() else "(-1, 1)"
        return (f"{path} has values outside {inside}, where every expected value is inside "
                "it: a squashing step (tanh, sigmoid) is missing or another one is used.")
    if squashed and w.size >= 8 and (w > 0).all() and (g[wrong] <= 0).any():
        return f"{path} has values at or below 0 where every expected value is positive."
    if (g[wrong] == 0).all() and wrong.sum() < g.size:
        return (f"{path} is zero at {int(wrong.sum())} entries where the expected values are "
                "not: more is reset or masked than should be.")
    if (w[wrong] == 0).all() and wrong.sum() < g.size:
        return (f"{path} is not zero at {int(wrong.sum())} entries where the expected values "
                "are: what should be reset or masked there is not.")
    if g.size >= 4 and wrong.sum() <= g.size // 2:
        return (f"{path} is right at {g.size - int(wrong.sum())} of its {g.size} values and "
                "wrong at the rest: a step that applies to some values only (a clip, a mask, "
                "a condition) is wrong.")
    return None


def _piece_sentence(g: np.ndarray, path: str, others: Sequence[tuple[str, Any]],
                    rtol: float, atol: float) -> str | None:
    """``g`` equal to a piece of a bigger value (one layer's c of a whole state)."""
    for name, other in others:
        o = _float(other)
        if o is None or o.ndim <= g.ndim or o.shape[o.ndim - g.ndim:] != g.shape:
            continue
        for index in np.ndindex(*o.shape[:o.ndim - g.ndim]):
            if _close(g, o[index], rtol, atol):
                return f"{path} holds a piece of {name}, where another value is expected."
    return None


def _divided_sentence(w: np.ndarray, g: np.ndarray, path: str, case: Case, rtol: float,
                      atol: float) -> str | None:
    """``g`` the expected value divided or multiplied by a size of the case."""
    sizes = {k: int(v) for k, v in case.items()
             if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and int(v) > 1}
    seen = set()
    for key, n in list(sizes.items()) + [(f"{a}*{b}", sizes[a] * sizes[b])
                                         for a in sizes for b in sizes if a < b]:
        if n in seen or n > 4096:
            continue
        seen.add(n)
        if _close(g * n, w, rtol, atol):
            return (f"{path} is the expected value divided by {n} ({key} here): an average "
                    "where a sum is expected, or a division too many.")
        if _close(g, w * n, rtol, atol):
            return f"{path} is {n} times the expected value ({key} here)."
    return None


def _list_sentence(want: list, got: list, path: str, case: Case, ex: Any) -> str | None:
    """A sequence with another number of items, or items differing one by one."""
    if want and all(isinstance(e, str) for e in want):
        if not all(isinstance(g, str) for g in got):
            return None
        short = [g for g in got if g not in want and any(e.endswith("/" + g) for e in want)]
        if short:
            return (f"{path} holds short names ({short[0]!r}): each expected name is the full "
                    "path from the graph's root.")
        if len(got) != len(want):
            return (f"{path} lists {len(got)} names where {len(want)} are expected: "
                    f"{len([e for e in want if e not in got])} are missing.")
        return None
    if len(got) != len(want):
        named = f" ({', '.join(ex.parts)})" if len(ex.parts) == len(want) else ""
        return (f"{path} has {len(got)} parts where {len(want)} are expected{named}: some "
                "part is missing, merged with another or extra.")
    for k, (e, g) in enumerate(zip(want, got, strict=True)):
        if not _close_any(e, g, ex):
            said = relation(e, g, f"{path}[{k}]", case, ex)
            if said:
                return said
    return None


def _name_sentence(want: str, got: str, path: str) -> str | None:
    """How a graph name (``scope/op_k:i``) differs from the expected one, piece by piece."""
    if got == want:
        return None
    w_op, _, w_out = want.rpartition(":") if ":" in want else (want, "", "")
    g_op, _, g_out = got.rpartition(":") if ":" in got else (got, "", "")
    if ":" in want and ":" not in got:
        return f"{path} is an op's name where a tensor's is expected (op name, colon, output)."
    if w_op == g_op:
        return f"{path} names the right op but another of its outputs (after the colon)."
    w_scope, _, w_last = w_op.rpartition("/")
    g_scope, _, g_last = g_op.rpartition("/")
    step = re.compile(r"_\d+$")
    if w_scope != g_scope:
        return f"{path} is in scope {g_scope or '(none)'!r}, not the scope the tensor lives in."
    if step.sub("", w_last) == step.sub("", g_last):
        return (f"{path} names the right kind of op at another time step (the suffix _k "
                "numbers the op's copies, one a step).")
    return (f"{path} names another op in the right scope: `{step.sub('', g_last)}` does not "
            "hold this value.")


def _shape_sentence(path: str, want: tuple[int, ...], got: tuple[int, ...],
                    case: Case) -> str:
    named = {a: n[0] for a, n in _axis_names(want, case).items()}
    if len(got) != len(want):
        return (f"{path} has {len(got)} axes (shape {got}) where {len(want)} are expected "
                f"(shape {want}).")
    axes = [a for a in range(len(want)) if want[a] != got[a]]
    which = ", ".join(f"axis {a}" + (f" ({named[a]}s)" if a in named else "") for a in axes)
    return f"{path} has the wrong length along {which}: shape {got} where {want} is expected."


def block_axis(shape: tuple[int, ...], k: int, units: int | None) -> int | None:
    """The axis an array's ``k`` named blocks lie along: the last, else the first, whose
    length is ``k`` blocks of ``units`` (the case's H), else whose length is ``k``."""
    if k < 2 or not shape:
        return None
    ends = [len(shape) - 1, 0] if len(shape) > 1 else [0]
    for want in ([k * units] if units else []) + [k]:
        for axis in ends:
            if shape[axis] == want:
                return axis
    return None


def _blocks_sentence(w: np.ndarray, g: np.ndarray, path: str, blocks: Sequence[str],
                     rtol: float, atol: float, units: int | None = None) -> str | None:
    k = len(blocks)
    axis = block_axis(w.shape, k, units)
    if axis is None:
        return None
    wb, gb = np.split(w, k, axis=axis), np.split(g, k, axis=axis)
    same = [_close(gb[j], wb[j], rtol, atol) for j in range(k)]
    if all(same):
        return None
    holds = {}  # your block j holds the expected block holds[j]
    for j in range(k):
        for m in range(k):
            if m != j and _close(gb[j], wb[m], rtol, atol) and not _close(wb[j], wb[m], rtol,
                                                                         atol):
                holds[j] = m
                break
    wrong = [j for j in range(k) if not same[j]]
    if wrong and all(j in holds for j in wrong):
        pairs = [f"your {blocks[j]} block holds the {blocks[holds[j]]} values" for j in wrong]
        return f"{path} has its blocks in another order: " + ", ".join(pairs) + "."
    if len(wrong) == 1:
        j = wrong[0]
        if j in holds:
            return (f"{path}: the {blocks[j]} block holds the {blocks[holds[j]]} values; the "
                    "other blocks are right.")
        scaled = _scale_word(wb[j], gb[j], rtol, atol)
        extra = f" ({scaled} the expected values)" if scaled else ""
        if wb[j].ndim == 2 and wb[j].shape[0] == wb[j].shape[1] and _close(gb[j].T, wb[j],
                                                                            rtol, atol):
            extra = " (transposed)"
        return f"{path}: the {blocks[j]} block is wrong{extra}; the other blocks are right."
    if len(wrong) < k and holds:
        j = next(iter(holds))
        return (f"{path}: blocks {', '.join(blocks[j] for j in wrong)} are wrong (your "
                f"{blocks[j]} block holds the {blocks[holds[j]]} values).")
    if len(wrong) < k:
        right = [blocks[j] for j in range(k) if same[j]]
        return (f"{path}: the {', '.join(blocks[j] for j in wrong)} blocks are wrong; "
                f"{', '.join(right)} {'is' if len(right) == 1 else 'are'} right.")
    return None


def _zero_blocks_sentence(w: np.ndarray, g: np.ndarray, path: str, blocks: Sequence[str],
                          atol: float, units: int | None) -> str | None:
    """Some named blocks all zeros where the expected ones are not (the others wrong too:
    :func:`_blocks_sentence` says when they are right)."""
    k = len(blocks)
    axis = block_axis(w.shape, k, units)
    if axis is None:
        return None
    wb, gb = np.split(w, k, axis=axis), np.split(g, k, axis=axis)
    zero = [blocks[j] for j in range(k) if _close(gb[j], np.zeros_like(gb[j]), 0, atol)
            and not _close(wb[j], np.zeros_like(wb[j]), 0, 10 * atol)]
    if not zero or len(zero) == k:
        return None
    one = len(zero) == 1
    return (f"{path}: your {_and(zero)} block{'' if one else 's'} {'is' if one else 'are'} "
            f"all zeros where TensorFlow's {'is' if one else 'are'} not, and the other blocks "
            f"are wrong too: {_and(zero)} {'plays' if one else 'play'} no part in what you "
            "computed.")


def _units(case: Case) -> int | None:
    """The case's H (the width of one named block), None without one."""
    units = case.get("H")
    return int(units) if isinstance(units, (int, np.integer)) else None


def _scale_word(w: np.ndarray, g: np.ndarray, rtol: float, atol: float) -> str | None:
    if not np.abs(w).max() > 10 * atol:
        return None
    for factor, word in SCALES:
        if _close(g, factor * w, rtol, atol):
            return word
    return None


def _scale_sentence(w: np.ndarray, g: np.ndarray, path: str, rtol: float,
                    atol: float) -> str | None:
    word = _scale_word(w, g, rtol, atol)
    if word == "minus":
        return f"{path} has the right size but the opposite sign everywhere."
    if word:
        return f"{path} is {word} the expected values everywhere."
    return None


def _shift_sentence(w: np.ndarray, g: np.ndarray, path: str,
                    names: dict[int, tuple[str, str, str]], rtol: float,
                    atol: float) -> str | None:
    for axis in range(g.ndim):
        n = g.shape[axis]
        if n < 2:
            continue
        one = names.get(axis, ("position", "positions", f"along axis {axis}"))
        head = [slice(None)] * g.ndim
        tail = [slice(None)] * g.ndim
        head[axis], tail[axis] = slice(0, n - 1), slice(1, n)
        if n > 2 or axis in names:
            if _close(g[tuple(tail)], w[tuple(head)], rtol, atol):
                return (f"{path} is one {one[0]} late: each {one[0]} holds the value "
                        f"expected one {one[0]} before.")
            if _close(g[tuple(head)], w[tuple(tail)], rtol, atol):
                return (f"{path} is one {one[0]} early: each {one[0]} holds the value "
                        f"expected one {one[0]} after.")
        if n > 1 and axis in names:  # every entry the value of its neighbour
            reverse = np.flip(g, axis=axis)
            if n > 2 and _close(reverse, w, rtol, atol):
                return f"{path} has its {one[1]} in reverse order."
    return None


def _padded_rows(case: Case) -> np.ndarray | None:
    """``(B,)`` bool: the rows of a padded batch (a case with ``lengths`` and ``T``, Chapter
    7) that hold padding; None for any other case."""
    lengths, T = case.get("lengths"), case.get("T")
    if not isinstance(lengths, np.ndarray) or not isinstance(T, (int, np.integer)):
        return None
    return np.asarray(lengths) < T


def _some_sentence(w: np.ndarray, g: np.ndarray, path: str,
                   names: dict[int, tuple[str, str, str]], rtol: float,
                   atol: float, padded: np.ndarray | None = None) -> str | None:
    """Right at some positions along a named axis only: some batch rows, the first steps.
    ``padded`` ``(B,)``: which rows of a padded batch hold padding; an answer right on
    exactly the others is named by the padding."""
    for axis, (one, many, where) in names.items():
        n = g.shape[axis]
        if n < 2:
            continue
        right = [_close(np.take(g, t, axis), np.take(w, t, axis), rtol, atol)
                 for t in range(n)]
        if not any(right) or all(right):
            continue
        if one == "step" and right[0]:
            first = right.index(False)
            return (f"{path} is right at the first {first} {many if first > 1 else one} and "
                    f"wrong from step {first} on: what carries from step to step is wrong.")
        good = [t for t in range(n) if right[t]]
        bad = [t for t in range(n) if not right[t]]
        if (one == "row" and padded is not None and len(padded) == n
                and list(padded) == [not r for r in right]):
            return (f"{path} is right on the rows without padding and wrong on every row "
                    "with padding: how the padded steps are handled is wrong.")
        return (f"{path} is right on {many} {_listing(good)} {where} and wrong on "
                f"{_listing(bad)}: what differs between the {many} is handled wrong.")
    for axis in range(g.ndim - 1):  # an axis no size names: whole slices right or wrong
        n = g.shape[axis]
        if axis in names or n < 2:
            continue
        right = [_close(np.take(g, t, axis), np.take(w, t, axis), rtol, atol)
                 for t in range(n)]
        if any(right) and not all(right):
            good = [t for t in range(n) if right[t]]
            bad = [t for t in range(n) if not right[t]]
            return (f"{path} is right at {_listing(good)} along axis {axis} and wrong at "
                    f"{_listing(bad)}.")
    return None


def _listing(indices: Sequence[int]) -> str:
    return ", ".join(map(str, indices[:6])) + ("..." if len(indices) > 6 else "")


def relations(ex: Any, case: Case, want: Any, got: Any) -> str | None:
    """The first relation found between the answer ``got`` and ``want`` on one trial: for an
    answer of parts, part by part in order (a part's value may be another part's)."""
    inputs = [(f"the input `{k}` unchanged", v) for k, v in case.items()
              if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size > 1]
    if (isinstance(want, list) and isinstance(got, list) and len(want) == len(got)
            and want and not all(isinstance(e, str) for e in want) and ex.parts):
        names = [ex.parts[k] if k < len(ex.parts) else f"answer[{k}]"
                 for k in range(len(want))]
        for k, (e, g) in enumerate(zip(want, got, strict=True)):
            if _close_any(e, g, ex):
                continue
            others = [(f"the value expected for {names[j]}", want[j])
                      for j in range(len(want)) if j != k] + inputs
            said = relation(e, g, names[k], case, ex, others)
            if said:
                return said
        return None
    if isinstance(want, list) and not isinstance(got, list) and got is not None:
        return None
    return relation(want, got, "your answer", case, ex, inputs)


def _close_any(e: Any, g: Any, ex: Any) -> bool:
    """``g`` is ``e`` within the exercise's tolerances: numbers as float arrays, lists part by
    part, anything else by equality (which parts to skip: the verdict is compare's)."""
    if isinstance(e, list) and isinstance(g, list):
        return len(e) == len(g) and all(_close_any(a, b, ex) for a, b in zip(e, g, strict=True))
    want, got = _float(e), _float(g)
    if want is not None and got is not None:
        return _close(got, want, ex.rtol, ex.atol)
    try:
        return bool(e == g)
    except (TypeError, ValueError):
        return False


# --- probes ---------------------------------------------------------------------------------


def _flat(value: Any, parts: Sequence[str]) -> list[tuple[str, np.ndarray]]:
    """``[(name, float array)]``: an answer's arrays, part by part (one for a single array)."""
    if parts and isinstance(value, list) and len(value) == len(parts):
        found = [(name, _float(v)) for name, v in zip(parts, value, strict=True)]
        return [(name, a) for name, a in found if a is not None]
    a = _float(value)
    return [("your answer", a)] if a is not None else []


def probe_sentence(ex: Any, base: tuple[Any, Any], probed: Sequence[tuple[Any, Any, Any]],
                   units: int | None = None, steps: int | None = None) -> str | None:
    """The first probe whose answers respond otherwise than the oracle's, in one sentence.

    ``base``: ``(expected, got)`` on the first trial; ``probed``: ``(probe, expected, got)``
    on each probe's trial; ``units``, ``steps``: the H and T of the trial the probes changed."""
    want0, got0 = base
    w0, g0 = dict(_flat(want0, ex.parts)), dict(_flat(got0, ex.parts))
    said = _moves(ex, w0, g0, probed, units, steps)
    return said or _contrast(ex, w0, g0, probed) or _right_without(ex, w0, g0, probed)


def _right_without(ex: Any, w0: dict[str, np.ndarray], g0: dict[str, np.ndarray],
                   probed: Sequence[tuple[Any, Any, Any]]) -> str | None:
    """A probe that sets an input to zero and makes the answer right (where the oracle's is
    not zero, so that the agreement says something): how that input enters is wrong."""
    tol = (ex.rtol, ex.atol)
    wrong = any(name in g0 and g0[name].shape == w.shape and not _close(g0[name], w, *tol)
                for name, w in w0.items())
    if not wrong:
        return None
    for probe, want, got in probed:
        if probe.how != "zero" or isinstance(got, Raised):
            continue
        w1, g1 = dict(_flat(want, ex.parts)), dict(_flat(got, ex.parts))
        if (w1 and w1.keys() == g1.keys()
                and all(g1[n].shape == w1[n].shape and _close(g1[n], w1[n], *tol) for n in w1)
                and not all(_close(w, np.zeros_like(w), 0, tol[1]) for w in w1.values())):
            return (f"your answer is right when {probe.words} is zero and wrong otherwise: how "
                    f"{probe.words} enters is wrong.")
    return None


def _contrast(ex: Any, w0: dict[str, np.ndarray], g0: dict[str, np.ndarray],
              probed: Sequence[tuple[Any, Any, Any]]) -> str | None:
    """Some probes move the answer as they move the oracle's and one does not: the wrong
    response names the input whose way in is wrong."""
    right: dict[str, list[Probe]] = {name: [] for name in w0}
    wrong: dict[str, list[Probe]] = {name: [] for name in w0}
    for probe, want, got in probed:
        if isinstance(got, Raised):
            return None
        w1, g1 = dict(_flat(want, ex.parts)), dict(_flat(got, ex.parts))
        for name in w0:
            if not all(name in d and d[name].shape == w0[name].shape for d in (w1, g0, g1)):
                return None
            if _close(w1[name], w0[name], ex.rtol, ex.atol):
                continue
            same = _close(g1[name] - g0[name], w1[name] - w0[name], 1e-3, 1e-4)
            (right if same else wrong)[name].append(probe)
    for name in w0:
        if right[name] and wrong[name]:
            yours = "your answer" if name == "your answer" else f"your {name}"
            what = wrong[name][0].words
            return (f"{yours} responds to a change of {what} otherwise than TensorFlow's, "
                    f"while it responds right to {right[name][0].words}: how {what} enters "
                    "is wrong.")
    return None


def _moves(ex: Any, w0: dict[str, np.ndarray], g0: dict[str, np.ndarray],
           probed: Sequence[tuple[Any, Any, Any]], units: int | None,
           steps: int | None = None) -> str | None:
    """The first probe that moves the answer where it does not move the oracle's, or the
    other way round."""
    for probe, want, got in probed:
        if isinstance(got, Raised):
            continue
        w1, g1 = dict(_flat(want, ex.parts)), dict(_flat(got, ex.parts))
        what = probe.words
        for name in w0:
            if not all(name in d for d in (w1, g0, g1)):
                continue
            if w0[name].shape != w1[name].shape or g0[name].shape != g1[name].shape:
                continue
            said = _respond(name, what, probe, ex, w0[name], w1[name], g0[name], g1[name],
                           units, steps)
            if said:
                return said
    return None


def _respond(name: str, what: str, probe: Probe, ex: Any, w0: np.ndarray, w1: np.ndarray,
             g0: np.ndarray, g1: np.ndarray, units: int | None,
             steps: int | None = None) -> str | None:
    tol = (ex.rtol, ex.atol)
    moved_w = not _close(w1, w0, *tol)
    moved_g = not _close(g1, g0, *tol)
    yours = "your answer" if name == "your answer" else f"your {name}"
    theirs = "TensorFlow's" if name == "your answer" else f"TensorFlow's {name}"
    if moved_w and not moved_g:
        return f"{yours} does not change when {what} changes; {theirs} does."
    if moved_g and not moved_w:
        return f"changing {what} moves {yours}; it does not move {theirs}."
    if not (moved_w and moved_g) or w0.shape != g0.shape:
        return None
    if probe.how == "row" and w0.ndim >= 1 and w0.shape[0] > 1:
        for r in range(w0.shape[0] - 1):
            if _close(w1[r], w0[r], *tol) and not _close(g1[r], g0[r], *tol):
                return (f"changing row {w0.shape[0] - 1} of the batch in {what} changes row "
                        f"{r} of {yours}; rows of the batch are independent.")
    if probe.how == "step" and w0.ndim >= 3 and steps and w0.shape[1] == steps:
        said = _steps_respond(yours, theirs, what, ex, w0, w1, g0, g1)
        if said:
            return said
    k = len(ex.blocks)
    axis = block_axis(w0.shape, k, units)
    if axis is not None:
        cuts = [np.split(a, k, axis=axis) for a in (w0, w1, g0, g1)]
        for j in range(k):
            mw = not _close(cuts[1][j], cuts[0][j], *tol)
            mg = not _close(cuts[3][j], cuts[2][j], *tol)
            if mg and not mw:
                return f"changing {what} moves your {ex.blocks[j]}; TensorFlow's stays."
            if mw and not mg:
                return (f"your {ex.blocks[j]} does not change when {what} changes; "
                        f"TensorFlow's does.")
    return None


def _steps_respond(yours: str, theirs: str, what: str, ex: Any, w0: np.ndarray,
                   w1: np.ndarray, g0: np.ndarray, g1: np.ndarray) -> str | None:
    """A step probe's response along the answer's time axis (axis 1 of (B, T, ...)): steps
    that move where the oracle's stay, or stay where its move; for a gradient, the right steps
    moved by other amounts."""
    tol = (ex.rtol, ex.atol)
    moved = [[not _close(a1[:, t], a0[:, t], *tol) for t in range(w0.shape[1])]
             for a0, a1 in ((w0, w1), (g0, g1))]
    extra = [t for t, (mw, mg) in enumerate(zip(*moved, strict=True)) if mg and not mw]
    missing = [t for t, (mw, mg) in enumerate(zip(*moved, strict=True)) if mw and not mg]
    if extra:
        return (f"changing {what} moves {yours} at {_steps(extra)}, where {theirs} stays: "
                f"{what} reaches steps it must not.")
    if missing:
        return (f"changing {what} leaves {yours} unchanged at {_steps(missing)}, where "
                f"{theirs} moves: {what} does not reach every step it must.")
    if ex.relative_error and not _close(g1 - g0, w1 - w0, 1e-3, 1e-4):
        return (f"changing {what} moves {yours} at the same steps as {theirs} but by other "
                "amounts: the local derivative it is multiplied by at a step (the "
                "derivative of that step's squashing) is wrong.")
    return None


def _steps(indices: Sequence[int]) -> str:
    return ("step " if len(indices) == 1 else "steps ") + _listing(indices)


# --- pins: a quantity inside the answer held at either end of its range -------------------

#: an entry tells a pin's value only where holding it at its two ends moves the right answer
#: by this much at least (elsewhere the learner's float32 rounding is magnified); a pin is
#: judged on this many such entries at least (fewer could be monotone by chance)
PIN_SPAN, PIN_ENTRIES = 0.05, 6
#: how far an implied value may stray outside its range, or back against its order
PIN_TOL = 1e-3


def implied(pin: Pin, case: Case, want: Any,
            got: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(right, yours)``: the pin's value in TensorFlow's answer ``want`` and the one the
    answer ``got`` implies, entry by entry where the pin's ends tell them apart; None when the
    answers are not one array of the same shape, or too few entries tell."""
    w, g = _float(want), _float(got)
    if pin.answer is None or w is None or g is None or w.shape != g.shape:
        return None
    try:
        lo, hi = (_float(pin.answer(case, end)) for end in (pin.low, pin.high))
    except Exception:  # noqa: BLE001 - a pin that does not apply to this case
        return None
    if lo is None or hi is None or lo.shape != w.shape or hi.shape != w.shape:
        return None
    span = hi - lo
    tells = np.abs(span) > PIN_SPAN
    if tells.sum() < PIN_ENTRIES or not np.isfinite(g).all():
        return None
    width = pin.high - pin.low

    def value(a: np.ndarray) -> np.ndarray:
        return pin.low + width * (a[tells] - lo[tells]) / span[tells]

    return value(w), value(g)


def _monotone(right: np.ndarray, yours: np.ndarray, ends: float = 1.0) -> int:
    """1 (-1) when ``yours`` rises (falls) wherever ``right`` rises and is neither ``right``
    itself nor its mirror in the range (``ends - right``, ``ends`` the sum of its ends), 0
    otherwise."""
    order = np.argsort(right, kind="stable")
    steps = np.diff(yours[order])
    apart = np.diff(right[order]) > PIN_TOL  # entries whose right values differ
    if apart.sum() < PIN_ENTRIES - 1 or np.ptp(yours) < 10 * PIN_TOL:
        return 0
    if _close(yours, right, 0, 10 * PIN_TOL) or _close(yours, ends - right, 0, 10 * PIN_TOL):
        return 0  # right, or the other end of the range (a listed mistake's business)
    if (steps[apart] > 0).all() and (steps >= -PIN_TOL).all():
        return 1
    if (steps[apart] < 0).all() and (steps <= PIN_TOL).all():
        return -1
    return 0


def _inside(pin: Pin, values: np.ndarray) -> bool:
    return bool(((values >= pin.low - PIN_TOL) & (values <= pin.high + PIN_TOL)).all())


def pinned_sentence(ex: Any, trials: Sequence[tuple[Case, Any, Any]]) -> str | None:
    """What the exercise's pins (:class:`Pin`) say about an answer wrong everywhere, on
    ``trials`` (``(case, expected, got)``: the trial the probes changed, then the probes'
    trials; a probe's ``zero`` trial first, where fewer quantities move): the first pin whose
    implied values rise and fall with TensorFlow's on some trial but are other values (squashed
    wrong: an h set to zero leaves a gate alone to show); else the one pin whose implied values
    stay inside its range on every trial while every other pin's leave theirs on some trial
    (it alone is wrong); else None. Each pin's right answers are asked once a trial, and only
    as far as the answer needs (the oracle's calls, in the learner release)."""
    pins = [p for p in getattr(ex, "pins", ()) if p.answer is not None]
    if not pins or not trials:
        return None
    trials = sorted(trials, key=lambda t: not str(t[0].get("probe", "")).endswith(":zero"))
    found: dict[tuple[int, int], tuple[np.ndarray, np.ndarray] | None] = {}

    def values(p: int, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        if (p, k) not in found:
            found[p, k] = implied(pins[p], *trials[k])
        return found[p, k]

    for k in range(len(trials)):
        for p, pin in enumerate(pins):
            seen = values(p, k)
            way = _monotone(*seen, ends=pin.low + pin.high) if seen is not None else 0
            if seen is None or not way:
                continue
            outside = "" if _inside(pin, seen[1]) else (
                f", some outside {pin.range} where every value of it lies")
            if way > 0:
                return (f"your answer's {pin.said} (the one it implies) rises and falls "
                        f"with TensorFlow's but takes other values{outside}: how the {pin.said} "
                        "is squashed from its pre-activation, or where its bias enters, is "
                        "wrong.")
            return (f"your answer's {pin.said} (the one it implies) falls where "
                    f"TensorFlow's rises{outside}: the {pin.said} is turned the wrong way round.")
    if len(pins) < 2:
        return None
    every = range(len(trials))
    inside = [all((v := values(p, k)) is not None and _inside(pin, v[1]) for k in every)
              for p, pin in enumerate(pins)]
    wrong = [any((v := values(p, k)) is not None and not _close(v[1], v[0], 0, 10 * PIN_TOL)
                 for k in every) for p in range(len(pins))]
    alone = [p for p in range(len(pins)) if inside[p] and wrong[p]]
    if len(alone) == 1 and sum(inside) == 1:
        pin = pins[alone[0]]
        return (f"your answer is what TensorFlow computes with another {pin.said}, the rest "
                f"as it is: the {pin.said} alone is wrong (what it is computed from: its "
                "inputs, their order or its weights).")
    return None


# --- left out: the answer is the oracle's with one input at zero ----------------------------


@dataclass(frozen=True)
class Without:
    """An input (or one block of it) an answer may leave out, declared per exercise: the right
    answer on the trial with it set to zero is compared with the learner's answer, the
    learner's function not called again (an API exercise's answer costs a layer a call).

    ``input``: the case's key; ``said``: how a message names it; ``block``, ``of``: only block
    ``block`` of ``of`` equal blocks of its last axis (``of=1``: all of it). ``answer`` is bound
    by the :class:`~rnnbook.exercise.Chapter`, as a :class:`Pin`'s is."""

    input: str
    said: str
    block: int = 0
    of: int = 1
    answer: Callable[[Case], Any] | None = None

    def zeroed(self, case: Case) -> Case:
        value = np.array(case[self.input], copy=True)
        width = value.shape[-1] // self.of
        value[..., self.block * width:(self.block + 1) * width] = 0
        return {**case, self.input: value}

    def bound(self, right: Callable[[Case], Any]) -> Without:
        if self.answer is not None:
            return self
        zeroed = self.zeroed
        return dataclasses.replace(self, answer=lambda case: right(zeroed(case)))


def without_sentence(ex: Any, failing: Sequence[tuple[Case, Any]],
                     wanted: Sequence[Any]) -> str | None:
    """The first declared :class:`Without` whose right answer, with its input at zero, is the
    learner's on every failing trial (and is not the right answer itself)."""
    for left in getattr(ex, "without", ()):
        if left.answer is None or not failing:
            continue
        try:
            alike = [_close_any(left.answer(case), got, ex) and not _close_any(want, got, ex)
                     for (case, got), want in zip(failing, wanted, strict=True)]
        except Exception:  # noqa: BLE001 - an input this trial does not have
            continue
        if all(alike):
            return (f"your answer is what TensorFlow computes with {left.said} at zero: "
                    f"{left.said} plays no part in your computation, or it is lost on the "
                    "way.")
    return None


# --- another input in an input's place ------------------------------------------------------

#: the most substitutions tried (each one right answer: the oracle's, in the learner release)
SUBSTITUTIONS = 12


def substitutions(case: Case) -> list[tuple[str, Case]]:
    """``(sentence, case)``: the case with a square input transposed, two inputs of one shape
    swapped, or one in the other's place (no declaration: read from the case's arrays), and
    what an answer computed from it got wrong."""
    arrays = [(k, v) for k, v in case.items() if isinstance(v, np.ndarray) and
              v.dtype.kind == "f" and v.size > 1]
    found: list[tuple[str, Case]] = [
        (f"`{a}` transposed: `{a}` is read in another layout, its rows for its columns",
         {**case, a: x.T}) for a, x in arrays if x.ndim == 2 and x.shape[0] == x.shape[1] > 1]
    for (a, x), (b, y) in itertools.combinations(arrays, 2):
        if x.shape == y.shape and not np.array_equal(x, y):
            found += [(f"`{a}` and `{b}` swapped: the two are taken one for the other",
                       {**case, a: y, b: x}),
                      (f"`{b}` in the place of `{a}`: `{a}` is not what your computation "
                       "reads", {**case, a: y}),
                      (f"`{a}` in the place of `{b}`: `{b}` is not what your computation "
                       "reads", {**case, b: x})]
    return found[:SUBSTITUTIONS]


def substitution_sentence(ex: Any, failing: Sequence[tuple[Case, Any]],
                          wanted: Sequence[Any]) -> str | None:
    """The first substitution (:func:`substitutions`) whose right answer is the learner's on
    every failing trial it applies to (one at least): the inputs the answer mixes up."""
    right = getattr(ex, "right", None)
    if right is None or not failing:
        return None
    for said, _ in substitutions(failing[0][0]):
        hits = 0
        for (case, got), want in zip(failing, wanted, strict=True):
            same = [c for w, c in substitutions(case) if w == said]
            if not same:
                continue
            try:
                alt = right(same[0])
            except Exception:  # noqa: BLE001 - the cell cannot run with it (shapes)
                hits = -1
                break
            if not _close_any(alt, got, ex) or _close_any(want, got, ex):
                hits = -1
                break
            hits += 1
        if hits > 0:
            return f"your answer is what TensorFlow computes with {said}."
    return None


# --- the one entry -------------------------------------------------------------------------


def generic(ex: Any, failing: Sequence[tuple[Case, Any]], wanted: Sequence[Any],
            probed: Sequence[tuple[Any, Any, Any]] = (),
            base: tuple[Any, Any] | None = None, relations: bool = True,
            units: int | None = None, last: bool = True, steps: int | None = None,
            cases: Sequence[Case] = (), pinned: Sequence[tuple[Case, Any, Any]] = ()) -> str:
    """The one sentence of the generic diagnosis of the failing trials (``(case, got)``, and
    the expected answers ``wanted``), "" when nothing is found. Relations come first, on the
    first failing trial that shows one (they say what the value is); then the probes, when the
    exercise has them (how it responds). ``relations=False``: the probes only (the relations
    were asked already); ``units``, ``steps``: the H and T of the trial the probes changed
    (:func:`units`).
    Then the pins (:func:`pinned_sentence`) on the ``pinned`` trials (``(case, expected,
    got)``: the trial the probes changed and the probes' trials), and the inputs the answer
    may leave out (:func:`without_sentence`) or take one for another
    (:func:`substitution_sentence`). Last (``last``), for an answer of parts, which
    parts are wrong (:func:`parts_sentence`), else which trials passed
    (:func:`trials_sentence`, given every trial's ``cases``)."""
    failed = [id(case) for case, _ in failing]
    for (case, got), want in zip(failing, wanted, strict=True) if relations else ():
        said = _relations(ex, case, want, got)
        if said:
            return _capital(said)
    if base is not None and probed and failing:
        said = probe_sentence(ex, base, probed,
                              units if units is not None else _units(failing[0][0]), steps)
        if said:
            return _capital(said)
    said = (pinned_sentence(ex, pinned) if pinned else None) or (
        without_sentence(ex, failing, wanted) or substitution_sentence(ex, failing, wanted)
        if last or not relations else None)
    if said:
        return _capital(said)
    if not last:
        return ""
    said = parts_sentence(ex, failing, wanted) or (
        trials_sentence(cases, [id(c) in failed for c in cases]) if cases else "")
    return _capital(said)


#: the sizes a trials' sentence names first, in words (the rest by their key)
SIZES = {"B": "rows in the batch", "T": "steps", "L": "layers", "layers": "layers"}


def trials_sentence(cases: Sequence[Case], failed: Sequence[bool]) -> str:
    """Right on some trials and wrong on the others, told apart by one of the trials' sizes
    or options (``B`` is 1 where it passed, or ``D`` equal to ``H``): the quantity whose
    handling is wrong; "" when no size or option separates them."""
    if len(cases) < 2 or all(failed) or not any(failed):
        return ""
    scalars = (bool, int, float, str, np.integer, np.floating, np.bool_)
    keys = [k for k in cases[0] if isinstance(cases[0][k], scalars) and k != "probe"]
    keys = sorted(keys, key=lambda k: k not in SIZES)  # stable: the case's order otherwise

    def values(key: str, wrong: bool) -> list[Any]:
        return sorted({c.get(key) for c, f in zip(cases, failed, strict=True) if f == wrong},
                      key=str)

    for key in keys:
        good, bad = values(key, False), values(key, True)
        if None in good + bad or set(map(str, good)) & set(map(str, bad)):
            continue
        what = f"`{key}`" + (f" ({SIZES[key]})" if key in SIZES else "")
        return (f"your answer is right on the trials where {what} is {_or(good)} and wrong "
                f"where it is {_or(bad)}: look at what changes with {what}.")
    if all("D" in c and "H" in c for c in cases):
        square = [c["D"] == c["H"] for c in cases]
        if all(s != f for s, f in zip(square, failed, strict=True)):
            return ("your answer is right where D equals H and wrong where they differ: an "
                    "input's width and the units' are taken one for the other.")
    return ""


def _or(values: Sequence[Any]) -> str:
    said = [f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + f" or {said[-1]}"


def parts_sentence(ex: Any, failing: Sequence[tuple[Case, Any]],
                   wanted: Sequence[Any]) -> str:
    """The last resort for an answer of parts: which parts are wrong on some failing trial
    while the others are right on all of them (the quantities to look at), "" when every
    part is wrong or the answers are not made of the exercise's parts."""
    parts = list(ex.parts)
    if len(parts) < 2 or not failing:
        return ""
    wrong: set[str] = set()
    for (_, got), want in zip(failing, wanted, strict=True):
        if not (isinstance(got, list) and isinstance(want, list)
                and len(got) == len(want) == len(parts)):
            return ""
        wrong |= {name for name, e, g in zip(parts, want, got, strict=True)
                  if not _close_any(e, g, ex)}
    if not wrong or len(wrong) == len(parts):
        return ""
    bad = [p for p in parts if p in wrong]
    good = [p for p in parts if p not in wrong]
    are = "is" if len(bad) == 1 else "are"
    only = "it" if len(bad) == 1 else "they"
    return (f"{_and(bad)} {are} wrong while {_and(good)} {'is' if len(good) == 1 else 'are'} "
            f"right: what {only} alone {'depends' if len(bad) == 1 else 'depend'} on is "
            "computed wrong.")


def _and(names: Sequence[str]) -> str:
    """``dx``, ``dx and dh``, ``dx, dh and dc``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _capital(sentence: str) -> str:
    """"Your ..." at the start of a sentence; a part's own name keeps its case."""
    return "Your" + sentence[4:] if sentence.startswith("your") else sentence


def unique_names(probes: Sequence[Probe]) -> None:
    """ValueError when two probes of an exercise have one name."""
    names = [p.name for p in probes]
    for a, b in itertools.combinations(names, 2):
        if a == b:
            raise ValueError(f"two probes named {a!r}")


_relations = relations  # generic's parameter of that name hides the function
units = _units
