"""Grade submitted exercise notebooks into Gradescope-format reports.

    python -m rnnbook.grade SUBMISSION.ipynb|FOLDER [...] --out DIR [--seed N] [--workers K]
                            [--timeout SECONDS] [--memory MB] [--chapter STEM]

For each submission it writes ``DIR/<stem>/results.json`` (Gradescope's results format),
``DIR/<stem>/feedback.md`` (what a student reads), and one ``DIR/gradebook.csv`` for all.

How it stays fair and safe:

- Each exercise is graded on hidden random trials drawn from ``--seed`` (random if not given;
  recorded in every report). The same seed gives the same report.
- The submission's code runs in a child process (:mod:`rnnbook.sandbox`) in its own temporary
  folder, with limits per cell and per exercise (time, memory, output size). A function that
  loops, crashes the process or exhausts memory costs that exercise only: the child is restarted
  for the rest.
- The expected answers are computed here, by TensorFlow, and never enter the child. Answers come
  back as JSON and ``.npz`` read with ``allow_pickle=False``: plain data, never unpickled.
- Points come from the exercise headers in ``solutions/`` (``# Exercise 1.2 (2 points)``), never
  from the submission. A submission file is only read, never written.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import io
import json
import os
import pathlib
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from rnnbook import __version__, checks, source
from rnnbook.checking import Outcome, evaluate
from rnnbook.environment import TF_ENV
from rnnbook.sandbox import decode, encode

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
MAX_ANSWER = 64 * 2**20  # bytes of one exercise's answer file


class GradeError(Exception):
    """A problem with one submission that stops it being graded (one line, names the file)."""


@dataclass
class Limits:
    timeout: float = 10.0  # seconds per exercise (all its trials)
    cell_timeout: float = 120.0  # seconds per notebook cell
    memory: int = 2048  # MB resident, per submission process


@dataclass
class Submission:
    path: pathlib.Path
    stem: str  # report folder name
    chapter: str = ""
    cells: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what happened to the cells
    answers: dict = field(default_factory=dict)  # exercise name -> list of answers | limit message
    error: str = ""


# ---------------------------------------------------------------------------------------------
# What to grade against (trusted: from solutions/, never from the submission)


def exercise_table(stem):
    """``[(ExerciseCell, Exercise)]`` for a chapter, in book order, points from solutions/."""
    chapter = checks.load(stem)
    cells = source.exercises(source.read(SOLUTIONS / f"{stem}.ipynb"), f"solutions/{stem}.ipynb")
    return [(cell, chapter[cell.name]) for cell in cells]


def which_chapter(path, nb, forced):
    if forced:
        return forced
    meta = nb.metadata.get("rnnbook", {})
    stem = meta.get("chapter") if isinstance(meta, dict) else None
    if stem in checks.CHAPTERS:
        return stem
    matches = [s for s in checks.CHAPTERS if s in path.name or s[:2] == path.name[:2]]
    if len(matches) == 1:
        return matches[0]
    raise GradeError(f"{path}: cannot tell which chapter this notebook is; pass --chapter")


def expected_answers(stems, seed):
    """``{stem: {name: (cases, expected)}}``: the oracle's answers, computed in this process."""
    table = {}
    for stem in stems:
        chapter = checks.load(stem)
        table[stem] = {}
        for cell, ex in exercise_table(stem):
            cases = chapter.cases(ex.name, seed)
            table[stem][ex.name] = (cases, [ex.oracle(case) for case in cases])
    return table


# ---------------------------------------------------------------------------------------------
# Running a submission in the sandbox


def _rss_mb(pid):
    """Resident memory of a process and its children, in MB (0 when gone)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total / 1024


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def _run_child(jobdir, workdir, limits, log):
    """Start the sandbox; yield its events; a limit breach yields ``{"limit": message}``."""
    read_fd, write_fd = os.pipe()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNBOOK_")}
    env.update(TF_ENV, RNNBOOK_GRADING="1", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               HOME=str(workdir))
    proc = subprocess.Popen(
        [sys.executable, "-I", "-m", "rnnbook.sandbox", str(jobdir), str(write_fd)],
        cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        pass_fds=(write_fd,), start_new_session=True,
    )
    os.close(write_fd)
    reader = os.fdopen(read_fd, "rb", buffering=0)
    sel = selectors.DefaultSelector()
    sel.register(reader, selectors.EVENT_READ)
    buffer = b""
    deadline, current = time.monotonic() + limits.cell_timeout, None
    try:
        while True:
            ready = sel.select(timeout=0.05)
            if ready:
                chunk = reader.read(65536)
                if not chunk:  # the child closed its end: it ended (or closed the pipe itself)
                    proc.wait()
                    yield {"ended": proc.returncode}
                    return
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(event, dict):
                        continue
                    if event.get("status") == "start":
                        current = event
                        span = limits.timeout if "exercise" in event else limits.cell_timeout
                        deadline = time.monotonic() + span
                    yield event
            if _rss_mb(proc.pid) > limits.memory:
                _kill(proc)
                yield {"limit": f"went over the memory limit of {limits.memory} MB", "at": current}
                return
            if time.monotonic() > deadline:
                _kill(proc)
                span = limits.timeout if current and "exercise" in current else limits.cell_timeout
                yield {"limit": f"went over the time limit of {span:g} s", "at": current}
                return
    finally:
        sel.close()
        reader.close()
        if proc.poll() is None:
            _kill(proc)


def _write_job(jobdir, sub, names, skip, cases_by_name):
    (jobdir / "cases").mkdir(parents=True, exist_ok=True)
    for name in names:
        arrays = {}
        meta = encode([[list(c.keys()), list(c.values())] for c in cases_by_name[name]], arrays)
        np.savez(jobdir / "cases" / f"{name}.npz", **arrays)
        (jobdir / "cases" / f"{name}.json").write_text(json.dumps(meta))
    job = {"chapter": sub.chapter, "cells": sub.cells, "skip": sorted(skip), "exercises": names}
    (jobdir / "job.json").write_text(json.dumps(job))


def _read_answers(jobdir, name, trials):
    path = jobdir / "answers" / f"{name}.json"
    arrays_path = jobdir / "answers" / f"{name}.npz"
    if arrays_path.stat().st_size > MAX_ANSWER:
        return f"returned more than {MAX_ANSWER // 2**20} MB of data"
    meta = json.loads(path.read_text())
    if not meta.get("defined"):
        return None
    with np.load(arrays_path, allow_pickle=False) as data:
        answers = decode(meta["answers"], {k: data[k] for k in data.files})
    if not isinstance(answers, list) or len(answers) != trials:
        return "did not return one answer per trial"
    return answers


def run_submission(sub, cases_by_name, limits):
    """Fill ``sub.answers`` by running the submission in as many children as it takes."""
    pending = list(cases_by_name)
    skip = set()
    work = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-grade-"))
    try:
        for attempt in range(len(sub.cells) + len(pending) + 2):
            if not pending:
                break
            jobdir = work / f"job{attempt}"
            workdir = work / f"run{attempt}"
            jobdir.mkdir()
            workdir.mkdir()
            os.chmod(workdir, 0o777)
            _write_job(jobdir, sub, pending, skip, cases_by_name)
            with open(jobdir / "output.log", "wb") as log:
                events = list(_run_child(jobdir, workdir, limits, log))
            progressed = _apply_events(sub, events, pending, skip, jobdir, cases_by_name)
            if not progressed:
                break
        for name in pending:
            sub.answers.setdefault(name, "was not run: the notebook's process kept failing")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _apply_events(sub, events, pending, skip, jobdir, cases_by_name):
    """Record what one child did; return whether the next child can get further."""
    before = (len(pending), len(skip))
    current = None
    for event in events:
        if "cell" in event:
            current = event
            if event["status"] == "error":
                sub.notes.append(f"cell {event['cell'] + 1} raised {event['error']}")
        elif "exercise" in event:
            current = event
            if event["status"] == "done":
                name = event["exercise"]
                if name in pending:
                    try:
                        sub.answers[name] = _read_answers(jobdir, name, len(cases_by_name[name]))
                    except (OSError, ValueError, KeyError) as error:
                        sub.answers[name] = f"sent back an answer that is not plain data ({error})"
                    pending.remove(name)
        elif "limit" in event or "ended" in event:
            at = event.get("at") or current
            why = event.get("limit") or f"ended the process (exit code {event['ended']})"
            if event.get("ended") == 0 and not pending:
                continue
            if at and "exercise" in at and at["exercise"] in pending:
                sub.answers[at["exercise"]] = why
                pending.remove(at["exercise"])
            elif at and "cell" in at and at["status"] == "start":
                skip.add(at["cell"])
                sub.notes.append(f"cell {at['cell'] + 1} {why}; it was skipped")
            elif pending:
                name = pending.pop(0)
                sub.answers[name] = why
    return (len(pending), len(skip)) != before


# ---------------------------------------------------------------------------------------------
# Reports


def outcome_for(ex, cases, expected, got):
    if got is None:
        return Outcome(ex, False, f"✗ {ex.title}: no function called `{ex.name}` is defined in the "
                                  "notebook. Define it with exactly this name.")
    if isinstance(got, str):
        return Outcome(ex, False, f"✗ {ex.title} {got}; it gets no points.")
    return evaluate(ex, cases, expected, got)


def report(sub, table, seed, oracle):
    tests, score, maximum = [], 0.0, 0
    for cell, ex in table:
        cases, expected = oracle[ex.name]
        outcome = outcome_for(ex, cases, expected, sub.answers.get(ex.name))
        points = cell.points if outcome.passed else 0
        score += points
        maximum += cell.points
        tests.append({
            "name": f"Exercise {cell.number} {ex.name}",
            "score": points,
            "max_score": cell.points,
            "output": outcome.message,
            "visibility": "visible",
        })
    notes = "".join(f"\nNote: {n}" for n in sub.notes)
    return {
        "score": score,
        "output": f"{sub.path.name}: chapter {sub.chapter}, graded with seed {seed} "
                  f"(rnnbook {__version__}).{notes}",
        "tests": tests,
        "extra_data": {"seed": seed, "chapter": sub.chapter, "max_score": maximum},
    }


def error_report(sub, seed):
    return {
        "score": 0,
        "output": f"Not graded: {sub.error}",
        "tests": [],
        "extra_data": {"seed": seed, "chapter": sub.chapter, "error": sub.error},
    }


def feedback_markdown(results):
    lines = [f"# Feedback: {results['score']:g} / {results['extra_data'].get('max_score', 0)} points", "",
             results["output"], ""]
    for test in results["tests"]:
        lines += [f"## {test['name']}: {test['score']:g} / {test['max_score']}", "", "```",
                  test["output"], "```", ""]
    return "\n".join(lines)


def _write(path, text):
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_text(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Command line


def collect(paths):
    """Expand folders into their notebooks; one-line error for a path that does not exist."""
    found = []
    for raw in paths:
        path = pathlib.Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.glob("*.ipynb") if p.is_file())
        elif path.exists():
            found.append(path)
        else:
            raise GradeError(f"{path}: no such file or folder")
    return found


def load_submission(path, forced_chapter):
    sub = Submission(path=path, stem=path.stem)
    try:
        nb = source.read(path)
    except source.SourceError as error:
        sub.error = str(error)
        return sub
    try:
        sub.chapter = which_chapter(path, nb, forced_chapter)
    except GradeError as error:
        sub.error = str(error)
        return sub
    sub.cells = [c.source for c in nb.cells if c.cell_type == "code"]
    return sub


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m rnnbook.grade", description=__doc__.split("\n")[0])
    parser.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    parser.add_argument("--out", required=True, type=pathlib.Path, help="folder for the reports")
    parser.add_argument("--seed", type=int, help="reproduce a grading run (default: random)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="submissions graded at once (default: the number of cores)")
    parser.add_argument("--timeout", type=float, default=Limits.timeout,
                        help=f"seconds per exercise (default {Limits.timeout:g})")
    parser.add_argument("--cell-timeout", type=float, default=Limits.cell_timeout,
                        help=f"seconds per notebook cell (default {Limits.cell_timeout:g})")
    parser.add_argument("--memory", type=int, default=Limits.memory,
                        help=f"MB of memory per submission (default {Limits.memory})")
    parser.add_argument("--chapter", choices=sorted(checks.CHAPTERS), help="grade all as this chapter")
    parser.add_argument("--overwrite", action="store_true", help="replace reports already in --out")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.timeout <= 0 or args.memory <= 0 or args.cell_timeout <= 0:
        parser.error("--workers, --timeout, --cell-timeout and --memory must be positive")
    try:
        return grade(args)
    except GradeError as error:
        print(f"grade: error: {error}", file=sys.stderr)
        return 2


def grade(args):
    paths = collect(args.submissions)
    if not paths:
        raise GradeError("no notebooks found in " + " ".join(args.submissions))
    subs = [load_submission(p, args.chapter) for p in paths]
    stems = [s.stem for s in subs]
    for stem in stems:
        if stems.count(stem) > 1:
            raise GradeError(f"two submissions are called {stem}.ipynb; their reports would collide")
    if args.out.exists() and not args.overwrite:
        taken = [s.stem for s in subs if (args.out / s.stem / "results.json").exists()]
        if (args.out / "gradebook.csv").exists() or taken:
            raise GradeError(f"{args.out} already holds reports; choose a new --out or pass --overwrite")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    limits = Limits(args.timeout, args.cell_timeout, args.memory)
    gradable = [s for s in subs if not s.error]
    chapters = sorted({s.chapter for s in gradable})
    tables = {stem: exercise_table(stem) for stem in chapters}
    cases = {stem: {ex.name: checks.load(stem).cases(ex.name, seed) for _, ex in tables[stem]}
             for stem in chapters}

    oracle = {}
    oracle_thread = threading.Thread(target=lambda: oracle.update(expected_answers(chapters, seed)))
    oracle_thread.start()  # TensorFlow computes the expected answers while the children run
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.workers) as pool:
        futures = {pool.submit(run_submission, s, cases[s.chapter], limits): s for s in gradable}
        for future in concurrent.futures.as_completed(futures):
            future.result()
            done += 1
            print(f"[{done}/{len(gradable)}] ran {futures[future].path.name}", file=sys.stderr)
    oracle_thread.join()
    if len(oracle) != len(chapters):
        raise GradeError("TensorFlow could not compute the expected answers (see the error above)")

    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for sub in subs:
        folder = args.out / sub.stem
        folder.mkdir(exist_ok=True)
        if sub.error:
            print(f"grade: error: {sub.error}", file=sys.stderr)
            results = error_report(sub, seed)
        else:
            results = report(sub, tables[sub.chapter], seed, oracle[sub.chapter])
        _write(folder / "results.json", json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        _write(folder / "feedback.md", feedback_markdown(results))
        rows.append((sub, results))
    _write(args.out / "gradebook.csv", gradebook(rows, tables))
    for sub, results in rows:
        if not sub.error:
            print(f"{sub.path.name}: {results['score']:g} / {results['extra_data']['max_score']}",
                  file=sys.stderr)
    return 1 if any(s.error for s in subs) else 0


def gradebook(rows, tables):
    """One row per submission, a column per exercise in book order, then total and max."""
    columns = [f"{cell.number} {ex.name}" for stem in sorted(tables) for cell, ex in tables[stem]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["submission", "chapter", "seed", *columns, "total", "max", "error"])
    for sub, results in rows:
        scores = {t["name"].removeprefix("Exercise "): t["score"] for t in results["tests"]}
        writer.writerow([sub.path.name, sub.chapter, results["extra_data"]["seed"],
                         *[scores.get(c, "") for c in columns], results["score"],
                         results["extra_data"].get("max_score", ""), sub.error])
    return out.getvalue()


if __name__ == "__main__":
    sys.exit(main())
