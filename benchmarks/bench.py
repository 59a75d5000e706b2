"""``make bench``: the speed and memory figures quoted in the README.

1. A bare ``python -c "import tensorflow"`` (the yardstick), best of 3.
2. Grading Chapter 1's solution notebook (goal: at most 3x the yardstick), with the peak resident
   memory of the whole grading process tree.
3. Each in-notebook check of every chapter on its solution, TensorFlow already imported
   (goal: < 1 s).
4. Eight submissions with ``--workers 1`` and ``--workers 2`` (goal: at least 1.6x faster): five
   pairs of runs, the median of their speed-ups, seconds and peak memory per submission (from the
   grader's progress lines), and this machine's ceiling for that speed-up (two CPU-bound
   processes at once against one after the other).
"""
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rnnbook.environment import TF_ENV  # noqa: E402
from rnnbook.grade import _rss_mb, collect  # noqa: E402  (memory of a process tree; notebooks)

SOLUTION = ROOT / "solutions" / "01-basic-rnn-cell.ipynb"
ROUNDS = 5  # pairs of runs, --workers 1 then --workers 2
ENV = {**os.environ, **TF_ENV}


def measure(cmd):
    """Wall seconds and peak resident MB of ``cmd`` and all its children, and its stderr."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0.0
    stop = threading.Event()

    def poll():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _rss_mb(proc.pid))
            stop.wait(0.25)  # (polling more often takes CPU from the grader it measures)

    watcher = threading.Thread(target=poll)
    watcher.start()
    _, err = proc.communicate()
    took = time.monotonic() - start
    stop.set()
    watcher.join()
    if proc.returncode not in (0,):
        raise SystemExit(f"bench: {' '.join(map(str, cmd))} failed:\n{err.decode()[-2000:]}")
    return took, peak, err.decode()


def parallel_ceiling():
    """How much faster two CPU-bound processes finish at once than one after the other, here
    (median of ROUNDS tries). On a virtual machine this is often well under 2, and it bounds the
    workers' speed-up."""
    spin = [sys.executable, "-c", "x = 0\nfor i in range(30_000_000): x += i"]
    ratios = []
    for _ in range(ROUNDS):
        one = measure(spin)[0]
        start = time.monotonic()
        procs = [subprocess.Popen(spin) for _ in range(2)]
        for proc in procs:
            proc.wait()
        ratios.append(2 * one / (time.monotonic() - start))
    return statistics.median(ratios)


#: the grader's progress line: "grade: [###...] 3/8 student2.ipynb: 4.1 s, peak 612 MB (...)"
PROGRESS = re.compile(r"^grade: \[.*: (?P<seconds>[\d.]+) s, peak (?P<mb>\d+) MB", re.MULTILINE)


def grade(subs, out, workers):
    """Wall seconds, peak MB of the whole run, and ``[(seconds, peak MB)]`` per submission."""
    took, peak, err = measure([sys.executable, "-m", "rnnbook.grade", *map(str, subs), "--out",
                               str(out), "--seed", "0", "--workers", str(workers)])
    each = [(float(m["seconds"]), int(m["mb"])) for m in PROGRESS.finditer(err)]
    if len(each) != len(collect(map(str, subs))):
        raise SystemExit("bench: the grader's progress lines no longer give seconds and peak memory")
    return took, peak, each


CHECKS = """
import contextlib, io, os, time
import rnnbook
tf = rnnbook.setup()
from rnnbook import checks, source
for stem in checks.CHAPTERS:
    os.environ["RNNBOOK_GRADING"] = "1"  # run the solution cells with their checks silenced
    ns = {}
    for cell in source.read(f"solutions/{stem}.ipynb").cells:
        if cell.cell_type == "code":
            exec(cell.source, ns)
    del os.environ["RNNBOOK_GRADING"]
    chapter = checks.load(stem)
    for ex in chapter.exercises:
        start = time.monotonic()
        with contextlib.redirect_stdout(io.StringIO()):
            chapter.check(ns[ex.name])
        print(f"{ex.number}_{ex.name} {time.monotonic() - start:.2f}")
"""

def main():
    print("RNN Internals benchmark (2 cores expected; figures vary with load)\n")
    bare = min(measure([sys.executable, "-c", "import tensorflow"])[0] for _ in range(3))
    print(f"bare `import tensorflow`:            {bare:6.2f} s (best of 3)")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-bench-"))
    try:
        seconds, peak, _ = grade([SOLUTION], tmp / "one", 2)
        ratio = seconds / bare
        verdict = "ok" if ratio <= 3 else "OVER GOAL"
        print(f"grade Chapter 1 solution:            {seconds:6.2f} s = {ratio:.2f}x import "
              f"(goal <= 3x: {verdict}); peak memory {peak:.0f} MB")

        out = subprocess.run([sys.executable, "-c", CHECKS], cwd=ROOT, env=ENV, capture_output=True,
                             text=True, check=True).stdout.split("\n")
        for line in filter(None, out):
            name, took = line.split()
            verdict = "ok" if float(took) < 1 else "OVER GOAL"
            print(f"in-notebook check {name.replace('_', ' ', 1):28s} {float(took):5.2f} s "
                  f"(goal < 1 s: {verdict})")

        subs = tmp / "eight"
        subs.mkdir()
        for k in range(8):
            shutil.copy(SOLUTION, subs / f"student{k}.ipynb")
        # The machine's speed drifts from minute to minute: run the two settings in pairs, one
        # right after the other, and take the median of the pairs' speed-ups.
        runs = {1: [], 2: []}
        for k in range(ROUNDS):
            for workers in runs:
                runs[workers].append(grade([subs], tmp / f"w{workers}-{k}", workers))
        ratios = sorted(one[0] / two[0] for one, two in zip(runs[1], runs[2], strict=True))
        ratio = statistics.median(ratios)
        verdict = "ok" if ratio >= 1.6 else "UNDER GOAL"
        for workers, all_runs in runs.items():
            took, peak, each = sorted(all_runs)[ROUNDS // 2]  # the median run
            seconds = [s for s, _ in each]
            mbs = [mb for _, mb in each]
            every = ", ".join(f"{run[0]:.1f}" for run in all_runs)
            print(f"8 submissions, --workers {workers}:          {took:6.2f} s (median of {every} s), "
                  f"peak {peak:.0f} MB in all")
            print(f"  per submission:                    {min(seconds):.1f}-{max(seconds):.1f} s, "
                  f"peak {min(mbs)}-{max(mbs)} MB")
        print(f"speed-up with 2 workers:             {ratio:6.2f}x (goal >= 1.6x: {verdict}; "
              f"median of {', '.join(f'{r:.2f}' for r in ratios)})")
        ceiling = parallel_ceiling()
        print(f"this machine's ceiling:              {ceiling:6.2f}x (two CPU-bound processes at once "
              "against one: what 2 workers could reach at best)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
