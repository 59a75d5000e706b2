"""``make feedback``: how many of the learners' wrong answers get a message that names the
mistake (issue 35).

Every wrong answer in ``tests/learners/chNN.py`` (``WRONG``, ``MORE_WRONG`` and
``WRONG_XFAIL``, whatever is there) is checked as the notebook's ``check(fn, seed=...)``
checks it (the trials and the probes' trials, :meth:`rnnbook.exercise.Chapter.trial_cases`;
the expected answers from the NumPy reference, which ``tests/test_sweep.py`` holds to
TensorFlow). Its message is:

- *listed*: a listed :class:`~rnnbook.exercise.Mistake` named it;
- *generic*: the generic diagnosis (:mod:`rnnbook.diagnose`) named it;
- *raised*: the function raised, and the message says what and where;
- *plain*: only "values differ" and what the function should return.

Named is listed + generic + raised. Prints one row a chapter and the total, and every plain
answer (``-v``). ``tests/test_feedback.py`` holds the total at 100 %: no answer plain.
"""
from __future__ import annotations

import argparse
import importlib
import pathlib
import sys
from dataclasses import dataclass, field

from rnnbook import checks
from rnnbook.byhand import answer
from rnnbook.compare import evaluate
from rnnbook.exercise import right_answer
from rnnbook.plaindata import Raised, to_plain

KINDS = ("listed", "generic", "raised", "plain", "passed")


@dataclass
class Tally:
    """The wrong answers of one chapter, by the kind of message they got."""

    stem: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    plain: list[str] = field(default_factory=list)  # "1.3 step_forgot_tanh (seed 0)"

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def named(self) -> int:
        return self.counts["listed"] + self.counts["generic"] + self.counts["raised"]


def wrong_answers(stem: str) -> dict[str, list]:
    """``{exercise: [function]}``: the chapter's learners' wrong answers, every table."""
    module = importlib.import_module(f"tests.learners.ch{stem[:2]}")
    found: dict[str, list] = {}
    for table in ("WRONG", "MORE_WRONG", "WRONG_XFAIL"):  # XFAIL: wrong, judged unevenly
        for name, pairs in getattr(module, table, {}).items():
            found.setdefault(name, []).extend(
                p[0] if isinstance(p, tuple) else p for p in pairs)
    return found


def judge(stem: str, name: str, fn, seed: int):
    """The outcome of ``fn`` as the notebook's check gives it at ``seed``."""
    chapter = checks.load(stem)
    ex = chapter[name]
    cases = chapter.trial_cases(name, seed)
    right = right_answer(ex)
    expected = [to_plain(right(case)) for case in cases]
    answers = [answer(ex, fn, case) for case in cases]
    return evaluate(ex, cases, expected, answers, seed=seed), answers


def kind_of(outcome, answers, ex) -> str:
    if outcome.passed:
        return "passed"
    if outcome.mistake:
        return "listed" if any(m.sentence == outcome.mistake for m in ex.mistakes) \
            else "generic"
    if any(isinstance(a, Raised) for a in answers[:ex.trials]):
        return "raised"
    return "plain"


def measure(stems=None, seeds=(0,)) -> list[Tally]:
    tallies = []
    for stem in stems or checks.CHAPTERS:
        tally = Tally(stem)
        ex_of = checks.load(stem)
        for name, fns in wrong_answers(stem).items():
            for fn in fns:
                for seed in seeds:
                    outcome, answers = judge(stem, name, fn, seed)
                    kind = kind_of(outcome, answers, ex_of[name])
                    tally.counts[kind] += 1
                    if kind in ("plain", "passed"):
                        tally.plain.append(f"{ex_of[name].number} {getattr(fn, '__name__', fn)}"
                                           f" (seed {seed}, {kind})")
        tallies.append(tally)
    return tallies


def table(tallies: list[Tally]) -> str:
    rows = [f"{'chapter':<24}{'wrong':>6}{'listed':>8}{'generic':>9}{'raised':>8}"
            f"{'plain':>7}{'named':>8}"]
    for t in [*tallies, _sum(tallies)]:
        c = t.counts
        share = t.named / t.total if t.total else 1.0
        rows.append(f"{t.stem:<24}{t.total:>6}{c['listed']:>8}{c['generic']:>9}"
                    f"{c['raised']:>8}{c['plain'] + c['passed']:>7}{share:>8.0%}")
    return "\n".join(rows)


def _sum(tallies: list[Tally]) -> Tally:
    total = Tally("all")
    for t in tallies:
        for k, v in t.counts.items():
            total.counts[k] += v
        total.plain += t.plain
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stem", action="append", help="a chapter's stem (default: all)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 (default 1)")
    parser.add_argument("-v", action="store_true", help="list every answer left plain")
    args = parser.parse_args(argv)
    tallies = measure(args.stem, range(args.seeds))
    print(table(tallies))
    if args.v:
        for line in _sum(tallies).plain:
            print("  plain:", line)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # tests.learners
    sys.exit(main())
