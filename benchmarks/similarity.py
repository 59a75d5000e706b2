"""The cost of "Similar submissions" in the class report: 300 submissions of each chapter.

Each synthetic submission answers every exercise with one of tests/learners' answers (right or
wrong, read as text), varied as a class would: names changed, comments and blank lines added,
a line of its own here and there; one in ten copies a classmate's answer (varied again). The
figure is the time of :func:`rnnbook.grading.similarity.add_to_report` on their report folders:
reading the saved code, fingerprinting, comparing, the HTML section and the CSV (wall time,
and the CPU time of this process and its workers, which a busy machine inflates less).

    python benchmarks/similarity.py [--quick]    (make bench runs it; --quick: 6 submissions of
                                                  Chapter 1, for tests/test_similarity.py)
"""
import json
import os
import pathlib
import random
import re
import shutil
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rnnbook.grading import similarity  # noqa: E402
from tests.learners import sources  # noqa: E402

SUBMISSIONS = 300
NAMES = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:,\s*[A-Za-z_]\w*\s*)*=[^=]", re.MULTILINE)
#: lines a learner adds of their own (k: the submission's number)
OWN_LINES = ("assert np is not None", "print('step {k}')", "checked_{k} = True",
             "debug_{k} = []")


def vary(body, rng, k):
    """``body`` as another learner might type it: its assigned names renamed, comments, blank
    lines and a line of its own added."""
    for name in set(NAMES.findall(body)):
        if rng.random() < 0.6:
            body = re.sub(rf"\b{name}\b", f"{name}_{rng.randrange(100)}", body)
    lines = []
    for line in body.split("\n"):
        indent = line[: len(line) - len(line.lstrip())]
        if rng.random() < 0.15 and line.strip():
            lines.append(f"{indent}# step {rng.randrange(1000)}")
        lines.append(line + (f"  # note {rng.randrange(1000)}" if rng.random() < 0.2 else ""))
        if rng.random() < 0.1 and line.strip() and not line.rstrip().endswith((":", ",", "(")):
            lines.append(indent + rng.choice(OWN_LINES).format(k=k))
        if rng.random() < 0.1:
            lines.append("")
    return "\n".join(lines)


def class_codes(stem, count, rng):
    """``{student: {exercise: code}}`` for ``count`` synthetic submissions of a chapter."""
    base = similarity.baseline(stem)
    right, wrong = sources.answers(stem), sources.answers(stem, "WRONG")
    students = {}
    for k in range(count):
        codes = {}
        for exercise, (stub, _) in base.items():
            name = exercise.split()[-1]
            pool = right.get(name, []) + wrong.get(name, [])
            if students and rng.random() < 0.1:  # copies a classmate's answer
                donor = rng.choice(sorted(students))
                body = students[donor][exercise][1]
            else:
                body = rng.choice(pool)[1]
            codes[exercise] = (sources.as_cell(stub, vary(body, rng, k)), body)
        students[f"student{k:03d}"] = codes
    return {who: {ex: cell for ex, (cell, _) in codes.items()} for who, codes in students.items()}


def report_folders(top, stem, codes):
    """Report folders as a grading run leaves them (results.json and exercise-code.json)."""
    for who, exercises in codes.items():
        folder = top / who
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps({"score": 0, "tests": []}))
        (folder / similarity.CODE).write_text(json.dumps({"chapter": stem,
                                                          "exercises": exercises}))


def _cpu():
    """CPU seconds of this process and of its children that have ended (the comparison's
    worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main(argv):
    unknown = [a for a in argv if a != "--quick"]
    if unknown:
        print(f"similarity bench: unknown argument {unknown[0]!r} (the only option is --quick)",
              file=sys.stderr)
        return 2
    quick = "--quick" in argv
    count = 6 if quick else SUBMISSIONS
    stems = list(sources.FILES)[:1] if quick else list(sources.FILES)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-similar-"))
    try:
        for stem in stems:
            top = tmp / stem
            codes = class_codes(stem, count, random.Random(stem))
            report_folders(top, stem, codes)
            page = top / "page.html"
            page.write_text("<html><body></body></html>")
            start, cpu = time.perf_counter(), _cpu()
            similarity.add_to_report([top], top, page)
            took, cpu = time.perf_counter() - start, _cpu() - cpu
            with open(top / similarity.TABLE) as table:
                listed = sum(1 for _ in table) - 1
            print(f"similar submissions, {count} of chapter {stem}: {took:6.2f} s "
                  f"(CPU {cpu:.2f} s; {len(next(iter(codes.values())))} exercises, {listed} "
                  "pairs listed)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
