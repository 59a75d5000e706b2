"""Similar submissions: per exercise, the pairs of submissions whose code is most alike.

The grader saves each submission's exercise cells beside its report (:data:`CODE`,
:func:`save`); the class report reads them back (:func:`collect_code`), compares them exercise by
exercise with copydetect (tokens, not text: names become ``V``/``F``, strings ``S``, comments
and whitespace go; winnowed k-grams of what is left) and adds a "Similar submissions" section,
with the matched regions side by side, and ``similar-submissions.csv`` (:func:`add_to_report`).

What every answer shares is set aside first, with copydetect's boilerplate: the learner's stub
and the instructor's solution of that exercise (both from ``solutions/``), the code of the
chapter's own pages (:func:`pages`: the book's chapter and the learner's notebook; each call,
attribute or subscript written there, such as ``cell.variables[0]``, is blanked out of the
answers, :func:`without_idioms`), and the code that
more than :data:`COMMON_MIN` submissions (or :data:`COMMON_SHARE` of a large class) wrote alike
(as MOSS's ``-m``: the natural way to write a short answer is no evidence). A pair is listed
when either side has at least :data:`THRESHOLD` of its code beyond the stub and the solution in
the other and they share at least :data:`MIN_SHARED` characters of it. A listed pair is a
reason to look, never a proof.
"""
from __future__ import annotations

import ast
import collections
import concurrent.futures
import copy
import csv
import difflib
import html
import io
import itertools
import json
import os
import pathlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rnnbook import source
from rnnbook.grading import results
from rnnbook.grading import roster as rosters
from rnnbook.grading.config import SOLUTIONS

#: the class report's tables (its similarity section's too): a table scrolls sideways on a
#: phone (classreport.REPORT_STYLE), and a keyboard reaches a scrolling region by its tabindex
HTML_TABLE = '<table tabindex="0">'

if TYPE_CHECKING:
    import numpy as np

CODE = "exercise-code.json"  # beside results.json: the submission's exercise cells
TABLE = "similar-submissions.csv"
#: copydetect's noise threshold (k, characters of filtered code): a k-gram of 16 is about one
#: short line such as ``V=V.V(V[:,V],V)``; 25 (its default) misses most answers here, which
#: are 2 to 10 lines long. The window is 1 (guarantee threshold = noise threshold): every
#: k-gram is kept, since the answers are short; and so which k-grams are kept does not hang on
#: ``hash()``, whose seed changes from process to process: the same reports give the same pairs.
K = 16
WINDOW = 1
#: listed when one side has this share of its (non-baseline) code in the other...
THRESHOLD = 0.6
#: ...and the two share at least this many characters of filtered code beyond the baseline
MIN_SHARED = 24
#: code written alike by more than this share of the class (and more than COMMON_MIN
#: submissions) joins the baseline
COMMON_SHARE, COMMON_MIN = 0.05, 10
MAX_CODE = 20_000  # characters of one exercise's cell that are compared (the rest is cut)
SHOWN = 10  # pairs shown side by side per exercise (the CSV has all)
PARALLEL_FROM = 500  # answers (all exercises together) from which exercises run in parallel


def exercise_code(cells: list[str], exercise_cells: Sequence[source.ExerciseCell]
                  ) -> dict[str, str]:
    """``{"Exercise N.K name": code}``: per exercise, the submission's cell whose header is
    ``# Exercise N.K`` (the last one that defines the function, if several), else the last
    cell that defines the function; exercises with neither are left out."""
    found = {}
    for ex in exercise_cells:
        header = re.compile(rf"# Exercise {re.escape(ex.number)}\b")
        defines = re.compile(rf"^def {re.escape(ex.name)}\(", re.MULTILINE)
        headed = [c for c in cells if header.match(c)]
        defining = [c for c in cells if defines.search(c)]
        both = [c for c in headed if defines.search(c)]
        chosen = both or defining or headed
        if chosen:
            found[f"Exercise {ex.number} {ex.name}"] = chosen[-1][:MAX_CODE]
    return found


def save(out: str | pathlib.Path, subs: Sequence[results.Submission],
         cells: Mapping[str, Sequence[source.ExerciseCell]]) -> None:
    """The grader's hook: ``out/<name>/exercise-code.json`` for every graded submission (its
    chapter and :func:`exercise_code`); removed from a folder whose submission was not graded,
    so that a regrade with --overwrite leaves nothing stale. Each on its own: one that cannot
    be saved is named in the error raised at the end, and every other is saved."""
    failed = []
    for sub in subs:
        path = pathlib.Path(out) / sub.name / CODE
        try:
            if sub.error or sub.chapter not in cells:
                path.unlink(missing_ok=True)
                continue
            data = {"chapter": sub.chapter,
                    "exercises": exercise_code(sub.cells, cells[sub.chapter])}
            results.write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        except Exception as error:  # noqa: BLE001 - one submission never stops the others
            failed.append(f"{sub.name} ({type(error).__name__})")
    if failed:
        raise OSError(f"not saved for {len(failed)}: {', '.join(failed)}")


def baseline(stem: str) -> dict[str, list[str]]:
    """``{"Exercise N.K name": [stub, solution]}`` for a chapter, from ``solutions/`` (the stub is
    made from the solution cell as the learner's notebook is); ``{}`` without it."""
    path = SOLUTIONS / f"{stem}.ipynb"
    if not re.fullmatch(r"\d\d-[\w-]+", stem) or not path.exists():
        return {}
    try:
        nb = source.read(path)
        found = {}
        for ex in source.exercises(nb, f"solutions/{stem}.ipynb"):
            code = nb.cells[ex.cell].source
            found[f"Exercise {ex.number} {ex.name}"] = [
                source.stub(code, ex.number, ex.name), code]
        return found
    except source.SourceError:
        return {}


#: code in a markdown cell: a fenced block of Python (or no language), an inline span
FENCED = re.compile(r"^```(?:python|ipython3?|py)?[ \t]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def pages(stem: str) -> str:
    """The code of the chapter's own pages, which every learner read: the book's chapter
    (``book/NN-<stem>.ipynb``) and the learner's notebook made from ``solutions/`` (its
    statements, set-up and stubs; no solution), code cells and the code in markdown (fenced
    blocks, inline spans), one piece a line; "" without them. Part of the baseline: an idiom
    the chapter teaches (``cell.build((None, D))``, ``cell.variables[0].numpy()``) pairs no
    one."""
    from rnnbook import generate

    if not re.fullmatch(r"\d\d-[\w-]+", stem):
        return ""
    found = []
    for path, learner in ((SOLUTIONS.parent / "book" / f"{stem}.ipynb", False),
                          (SOLUTIONS / f"{stem}.ipynb", True)):
        try:
            nb = source.read(path)
            nb = generate.learner_copy(nb) if learner else nb
        except (OSError, source.SourceError):
            continue
        for cell in nb.cells:
            if cell.cell_type == "code":
                found.append(cell.source)
            elif cell.cell_type == "markdown":
                found += FENCED.findall(cell.source)
                found += INLINE.findall(FENCED.sub("", cell.source))
    return "\n".join(found)


def collect_code(paths: Sequence[str | pathlib.Path], roster: dict[str, str] | None = None
                 ) -> tuple[dict[tuple[str, str], dict[str, str]], int]:
    """Every saved :data:`CODE` below ``paths`` (beside a results.json) as ``{(chapter,
    exercise): {student: code}}``, the student named as the class report names it; and how many
    report folders had no saved code."""
    found: dict[tuple[str, str], dict[str, str]] = collections.defaultdict(dict)
    beside: dict[pathlib.Path, results.Beside] = {}
    missing, taken = 0, set()
    for raw in paths:
        path = pathlib.Path(raw)
        folders = [path.parent] if path.is_file() else sorted(
            p.parent for p in path.rglob("results.json"))
        for folder in folders:
            try:
                data = json.loads((folder / CODE).read_text(encoding="utf-8"))
                chapter, codes = str(data["chapter"]), dict(data["exercises"])
            except (OSError, ValueError, KeyError, TypeError):
                missing += 1
                continue
            if folder.parent not in beside:
                beside[folder.parent] = results.Beside.read(folder.parent)
            student = beside[folder.parent].student(folder.name, roster)
            if student in taken:  # the same name in two runs (two sections, two terms)
                student = f"{student} ({folder})"
            taken.add(student)
            for exercise, code in codes.items():
                if isinstance(code, str):
                    found[(chapter, str(exercise))][student] = code[:MAX_CODE]
    return dict(found), missing


#: one exercise's comparison:
#: ``(chapter, exercise, {student: code}, stub, solution, pages)``
PairingJob = tuple[str, str, dict[str, str], str, str, str]


@dataclass
class Pair:
    chapter: str
    exercise: str
    a: str  # student
    b: str
    score: float  # the larger of the two shares below
    share_a: float  # of a's code (beyond the baseline), the share found in b
    share_b: float
    shared: int  # characters of filtered code in common
    shown_a: str  # a's code as HTML (escaped), the matched regions in <mark>
    shown_b: str


def _fingerprint(code: str, boilerplate: np.ndarray | None = None) -> Any:
    from copydetect import CodeFingerprint

    return CodeFingerprint("cell.py", K, WINDOW, boilerplate=boilerplate, fp=io.StringIO(code),
                           language="python")


def _set_aside(fp: Any, common: set[int]) -> Any:
    """``fp`` without the hashes in ``common`` (copydetect's boilerplate, applied after the fact
    to a fingerprint already made, so that each cell is tokenized once). Its token coverage,
    the denominator of its share, stays that of its code beyond the stub and the solution:
    code much of the class wrote alike is no evidence, but it still counts as the student's
    code, so that two natural answers with one rare line in common score low."""
    if common & fp.hashes:
        fp.hashes = fp.hashes - common
        fp.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in common}
    return fp


def _highlight(code: str, slices: np.ndarray) -> str:
    from copydetect.utils import highlight_overlap

    if not len(slices) or not slices.shape[-1]:
        return html.escape(code)
    shown, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return shown


def without_stub(code: str, stub: str) -> str:
    """``code`` with the lines it kept from the stub (header, ``def`` line, docstring) blanked
    out, each by as many spaces, so that positions in it are positions in ``code``.

    copydetect's boilerplate removes the k-grams of the stub, but not those that straddle its
    last line and the learner's first: every answer would share "docstring, then ``x = y``"."""
    if not stub:
        return code
    lines = code.splitlines(keepends=True)
    kept = [line.rstrip() for line in stub.splitlines()
            if line.strip() and "raise NotImplementedError" not in line]
    matcher = difflib.SequenceMatcher(None, [line.rstrip() for line in lines], kept,
                                      autojunk=False)
    for block in matcher.get_matching_blocks():
        for i in range(block.a, block.a + block.size):
            body = lines[i].rstrip("\r\n")
            lines[i] = " " * len(body) + lines[i][len(body):]
    return "".join(lines)


class _Anonymous(ast.NodeTransformer):
    """Every name becomes ``V`` (attributes, constants and the shape of the code stay)."""

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name("V", node.ctx), node)


IDIOMS = (ast.Call, ast.Attribute, ast.Subscript)  # the expressions that can be an idiom
NUMPY = ("np", "numpy")  # the names NumPy goes by: its calls are never an idiom set aside


def _idiom(node: ast.AST) -> str:
    return ast.unparse(_Anonymous().visit(copy.deepcopy(node)))


def _root(node: ast.AST) -> str:
    """The name an expression starts from (``np`` of ``np.split(z, 4)[0]``), or ""."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def idioms(code: str) -> set[str]:
    """The API idioms of ``code`` (a chapter's :func:`pages`): each call, attribute and
    subscript it writes that reads an attribute, names made anonymous
    (``keras_cell.build((None, D))`` is ``V.build((None, V))``), but not NumPy's
    (``np.tanh(z)``: NumPy is what a by-hand answer is made of, the very code compared).
    Each piece is parsed alone; one that is not Python is skipped."""
    trees = []
    for piece in code.split("\n"):
        try:
            trees.append(ast.parse(piece.strip()))
        except (SyntaxError, ValueError):
            continue
    return {_idiom(node) for tree in trees for node in ast.walk(tree)
            if isinstance(node, IDIOMS) and _root(node) not in NUMPY
            and any(isinstance(n, ast.Attribute) for n in ast.walk(node))}


def without_idioms(code: str, known: set[str]) -> str:
    """``code`` with each expression that is one of the ``known`` idioms (the outermost one)
    blanked out in place, as :func:`without_stub` does: copydetect's k-grams (16 characters)
    are longer than an idiom such as ``V.V[0].V()``, so two answers that string the chapter's
    idioms together would share k-grams that no page holds. Code that does not parse is left
    as it is."""
    if not known:
        return code
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode()))
    raw = bytearray(code.encode())
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, IDIOMS) and node.end_lineno \
                and node.end_col_offset is not None \
                and _root(node) not in NUMPY and _idiom(node) in known:
            first = starts[node.lineno - 1] + node.col_offset
            last = starts[node.end_lineno - 1] + node.end_col_offset
            raw[first:last] = bytes(b if b in b"\r\n" else 32 for b in raw[first:last])
            continue
        stack += ast.iter_child_nodes(node)
    return raw.decode()


def pairs_of(chapter: str, exercise: str, codes: dict[str, str], stub: str = "",
             solution: str = "", chapter_pages: str = "") -> list[Pair]:
    """The pairs of ``codes`` (``{student: code}``) listed for one exercise, best first. The
    ``stub``, the ``solution`` and the code of the chapter's pages (:func:`pages`) are the
    baseline: what any answer may share."""
    import numpy as np
    from copydetect import compare_files

    known = idioms(chapter_pages)
    base_hashes: set[int] = set()
    for code in (stub, solution, chapter_pages):
        for form in {code, without_idioms(code, known)} if code else ():  # as answers are
            base_hashes |= set(_fingerprint(without_stub(form, stub)).hashes)  # every k-gram
    boilerplate = np.array(sorted(base_hashes))
    # the same code (an untouched stub, a shared answer) is tokenized once
    made: dict[str, Any] = {}
    prints: dict[str, Any] = {}  # copydetect's CodeFingerprint of each student
    for who, code in sorted(codes.items()):
        if code not in made:
            made[code] = _fingerprint(without_stub(without_idioms(code, known), stub),
                                      boilerplate)
        prints[who] = made[code]
    holders: dict[int, list[str]] = collections.defaultdict(list)
    for who, fp in prints.items():
        for h in fp.hashes:
            holders[h].append(who)
    limit = max(COMMON_MIN, COMMON_SHARE * len(prints))
    common = {h for h, who in holders.items() if len(who) > limit}
    if common:
        prints = {who: _set_aside(fp, common) for who, fp in prints.items()}  # (idempotent)
    candidates: set[tuple[str, str]] = set()
    for h, holding in holders.items():
        if h not in common:
            candidates.update(itertools.combinations(holding, 2))
    found = []
    for a, b in sorted(candidates):
        shared, (share_a, share_b), (slices_a, slices_b) = compare_files(prints[a], prints[b])
        score = max(share_a, share_b)
        if score >= THRESHOLD and shared >= MIN_SHARED:
            found.append(Pair(chapter, exercise, a, b, float(score), float(share_a),
                              float(share_b), int(shared), _highlight(codes[a], slices_a),
                              _highlight(codes[b], slices_b)))
    return sorted(found, key=lambda p: (-p.score, -p.shared, p.a, p.b))


def find(codes_by_exercise: dict[tuple[str, str], dict[str, str]],
         baselines: Mapping[str, dict[str, list[str]]] | None = None,
         workers: int | None = None,
         chapter_pages: Mapping[str, str] | None = None) -> list[Pair]:
    """Every listed pair, exercise by exercise in book order; ``baselines`` maps a chapter to
    :func:`baseline` (read from ``solutions/`` when not given), ``chapter_pages`` a chapter to
    its :func:`pages` (read from ``book/`` and ``solutions/`` when not given). Exercises are
    compared in ``workers`` processes at once (default: one per core when there are at least
    :data:`PARALLEL_FROM` answers, else here): tokenizing is most of the cost. Each exercise is
    done whole in one process, since copydetect's hashes are Python's ``hash()``, which differs
    between processes."""
    baselines = {} if baselines is None else dict(baselines)
    chapter_pages = {} if chapter_pages is None else dict(chapter_pages)
    jobs: list[PairingJob] = []
    for chapter, exercise in sorted(codes_by_exercise, key=_order):
        if chapter not in baselines:
            baselines[chapter] = baseline(chapter)
        if chapter not in chapter_pages:
            chapter_pages[chapter] = pages(chapter)
        stub, solution = baselines[chapter].get(exercise, ("", ""))
        jobs.append((chapter, exercise, codes_by_exercise[(chapter, exercise)], stub, solution,
                     chapter_pages[chapter]))
    if workers is None:
        answers = sum(len(job[2]) for job in jobs)
        workers = (os.cpu_count() or 1) if answers >= PARALLEL_FROM else 1
    workers = min(workers, len(jobs))
    if workers <= 1:
        return [p for job in jobs for p in pairs_of(*job)]
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        return [p for found in pool.map(_pairs_of, jobs) for p in found]


def _pairs_of(job: PairingJob) -> list[Pair]:
    return pairs_of(*job)


def _order(key: tuple[str, str]) -> tuple[str, tuple[int, int], str]:
    match = re.search(r"(\d+)\.(\d+)", key[1])
    return (key[0], (int(match[1]), int(match[2])) if match else (999, 999), key[1])


COLUMNS = ["chapter", "exercise", "student_a", "student_b", "score", "share_a", "share_b",
           "shared_characters"]


def write_pairs_csv(pairs: list[Pair], path: str | pathlib.Path) -> None:
    """``similar-submissions.csv``: a row per listed pair, every cell through ``csv_cell``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in pairs:
        writer.writerow([rosters.csv_cell(v) for v in (
            p.chapter, p.exercise, p.a, p.b, f"{p.score:.2f}", f"{p.share_a:.2f}",
            f"{p.share_b:.2f}", p.shared)])
    results.write_atomic(pathlib.Path(path), out.getvalue())


PAIRS_STYLE = """.sbs{display:flex;gap:1em}.sbs>div{flex:1;min-width:0}.sbs pre{background:#f7f7f7;
padding:.5em;overflow-x:auto;font-size:85%;border:1px solid #ddd}mark{background:#f4a261}
details{margin:.4em 0}summary{cursor:pointer}"""
MEANING = ("A pair is listed when one student's code for an exercise, once names, comments and "
           "formatting are set aside, is mostly found in the other's (copydetect's fingerprints; "
           "the stub, the solution and code that more than {common} students wrote alike, or "
           "{share:.0%} of a class over {large}, do not count). It is a reason to read the two "
           "answers, not a proof: short answers to tightly specified exercises are often "
           "alike, and students may have worked together as allowed, or used the same public "
           "source. See the instructors' page, \"Similar submissions\".")


def section(pairs: list[Pair], compared: dict[tuple[str, str], int],
            missing: int) -> str:
    """The report's "Similar submissions" section (HTML, everything from a student escaped)."""
    e = html.escape
    parts = [f"<style>{PAIRS_STYLE}</style><h2 id='similar'>Similar submissions</h2>"]
    if not compared:
        parts.append("<p class=note>No code was saved beside these reports (files downloaded "
                     "from Gradescope hold only results.json), so similar submissions were not "
                     "looked for. A grading run with <code>python -m rnnbook.grading</code> "
                     "saves it.</p>")
        return "\n".join(parts)
    meaning = MEANING.format(common=COMMON_MIN, share=COMMON_SHARE,
                             large=round(COMMON_MIN / COMMON_SHARE))
    parts.append(f"<p class=note>{e(meaning)} Threshold: "
                 f"{THRESHOLD:.0%} of one side's code, and at least {MIN_SHARED} characters "
                 f"of code in common. Every pair is in <code>{TABLE}</code>.</p>")
    if missing:
        parts.append(f"<p class=note>{missing} report folder{'s' * (missing != 1)} had no "
                     f"saved code and {'was' if missing == 1 else 'were'} left out.</p>")
    by_exercise = collections.defaultdict(list)
    for p in pairs:
        by_exercise[(p.chapter, p.exercise)].append(p)
    parts.append(HTML_TABLE + "<tr><th>chapter</th><th>exercise</th><th>submissions</th>"
                 "<th>pairs listed</th><th>highest score</th></tr>")
    for key in sorted(compared, key=_order):
        listed = by_exercise.get(key, [])
        top = f"{listed[0].score:.0%}" if listed else ""
        parts.append(f"<tr><td>{e(key[0])}</td><td>{e(key[1])}</td>"
                     f"<td class=n>{compared[key]}</td><td class=n>{len(listed)}</td>"
                     f"<td class=n>{top}</td></tr>")
    parts.append("</table>")
    for key in sorted(by_exercise, key=_order):
        listed = by_exercise[key]
        more = len(listed) - SHOWN
        parts.append(f"<h3>{e(key[1])} ({e(key[0])})</h3>")
        for p in listed[:SHOWN]:
            parts.append(
                f"<details><summary><b>{e(p.a)}</b> and <b>{e(p.b)}</b>: {p.score:.0%} "
                f"({p.share_a:.0%} of {e(p.a)}'s code is in {e(p.b)}'s, {p.share_b:.0%} the "
                f"other way; {p.shared} characters in common)</summary><div class=sbs>"
                f"<div><b>{e(p.a)}</b><pre>{p.shown_a}</pre></div>"
                f"<div><b>{e(p.b)}</b><pre>{p.shown_b}</pre></div></div></details>")
        if more > 0:
            parts.append(f"<p class=note>{more} more pair{'s' * (more != 1)} in "
                         f"<code>{TABLE}</code>.</p>")
    if not pairs:
        parts.append("<p>No pair of submissions is above the threshold.</p>")
    return "\n".join(parts)


def compare(paths: Sequence[str | pathlib.Path], roster: dict[str, str] | None = None
            ) -> tuple[str, list[Pair] | None]:
    """Compare the code saved below ``paths``: the class report's section (HTML) and the
    pairs for ``similar-submissions.csv`` (None when there was no code to compare)."""
    codes, missing = collect_code(paths, roster)
    compared = {key: len(who) for key, who in codes.items()}
    try:
        pairs = find(codes) if codes else []
        return section(pairs, compared, missing), pairs if codes else None
    except Exception as error:  # noqa: BLE001 - the rest of the class report still stands
        return (f"<h2 id='similar'>Similar submissions</h2><p class=note>Not computed: "
                f"{html.escape(type(error).__name__)}: {html.escape(str(error)[:300])}</p>",
                None)


def into_page(page: str, shown: str) -> str:
    """``page`` (HTML) with ``shown`` before its ``</body>`` (at its end without one)."""
    head, tail, end = page.rpartition("</body>")
    return head + shown + tail + end if tail else page + shown


def add_to_report(paths: Sequence[str | pathlib.Path], out: str | pathlib.Path,
                  page: str | pathlib.Path,
                  roster: dict[str, str] | None = None) -> pathlib.Path | None:
    """Compare the code saved below ``paths`` (:func:`compare`), add the section to the page
    at ``page`` (before ``</body>``) and write ``out/similar-submissions.csv`` (only when
    there was code to compare). Returns the CSV's path or None."""
    shown, pairs = compare(paths, roster)
    page = pathlib.Path(page)
    results.write_atomic(page, into_page(page.read_text(), shown))
    if pairs is None:
        return None
    table = pathlib.Path(out) / TABLE
    write_pairs_csv(pairs, table)
    return table
