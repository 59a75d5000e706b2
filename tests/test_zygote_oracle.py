"""The TensorFlow zygote's oracle (issue 39): a fork of the zygote, made with the chapters whole
before the zygote serves, answers the grader's one request for expected answers, so that a
grading run with a fresh seed imports TensorFlow once (in the zygote), not twice. Its answers
are TensorFlow's own; one that fails says why and the grader computes the answers itself."""
import json
import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import ROOT
from rnnbook import checks, environment, expected, source
from rnnbook.grading import cli, procs
from rnnbook.plaindata import to_plain

STEM = "01-basic-rnn-cell"
SOLUTION = ROOT / "solutions" / f"{STEM}.ipynb"

slow = pytest.mark.slow


@pytest.fixture
def zygote(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with open(tmp_path / "zygote.log", "wb") as log:
        made = procs.Zygote("tf", [str(ROOT), STEM], procs.child_env(home), log)
    made.wait_ready()
    yield made
    made.close()


def same(found, wanted, where):
    """``found`` and ``wanted`` the same plain data, numbers to float32's last digits."""
    if isinstance(wanted, list):
        assert isinstance(found, list) and len(found) == len(wanted), where
        for a, b in zip(found, wanted, strict=True):
            same(a, b, where)
    elif isinstance(wanted, dict):
        assert isinstance(found, dict) and set(found) == set(wanted), where
        for key in wanted:
            same(found[key], wanted[key], where)
    elif isinstance(wanted, (np.ndarray, float)):
        np.testing.assert_allclose(found, wanted, rtol=1e-5, atol=1e-6, err_msg=where)
    else:
        assert found == wanted, where


def children(pid):
    """The processes whose parent is ``pid``."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found += [int(c) for c in f.read().split()]
    return found


@slow
def test_the_oracle_answers_every_exercise_as_tensorflow_does(zygote):
    """Every exercise of the chapter, on seed 5's trials, with their digests (so the grader
    takes them: :func:`rnnbook.expected.matching`), as this process's TensorFlow answers them,
    and each exercise's time; asked again, it has nothing more to say."""
    chapter = checks.load(STEM)
    names = [ex.name for ex in chapter.exercises]
    said = pickle.loads(zygote.oracle(5, {STEM: names}))
    assert sorted(said) == ["records", "times"], said.get("error")
    cases = {(STEM, n): chapter.trial_cases(n, 5) for n in names}
    found = expected.matching(said["records"][0], 5, cases)
    assert set(found) == set(cases)
    for (_, name), answers in found.items():
        ours = [to_plain(chapter[name].oracle(case)) for case in cases[(STEM, name)]]
        same(to_plain(answers), ours, name)
    spans = [t[0] for t in said["times"]]  # in the order they started
    # each exercise once, or twice where the oracle and its helper shared its trials
    assert list(dict.fromkeys(s.removesuffix(" (helper)") for s in spans)) == [
        f"{ex.number} {ex.name}" for ex in chapter.exercises]
    # one core: no helper; two: a helper side by side with the oracle, which takes as many
    # trials as the machine's load lets it (test_what_the_helper_did_not_answer_the_oracle_
    # computes holds its part): how many is the machine's, said, not asserted
    helped = [s for s in spans if s.endswith(" (helper)")]
    if environment.usable_cores() < 2:
        assert not helped, spans
    print(f"note: the oracle's helper took {len(helped)} of {len(spans)} spans")
    assert all(start <= end for _, start, end in said["times"])
    assert zygote.oracle(5, {STEM: names}) == b""  # one request per zygote
    assert expected.matching(said["records"][0], 6, cases) == {}  # not another seed's


@slow
def test_an_oracle_that_fails_says_why(zygote):
    said = pickle.loads(zygote.oracle(5, {"99-no-such-chapter": ["f"]}))
    assert list(said) == ["error"] and "99-no-such-chapter" in said["error"], said


@slow
def test_an_oracle_asked_nothing_ends_and_the_zygote_serves_on(zygote):
    """Nothing wanted (the bundle held every answer): the oracle ends at once, and the zygote,
    its parent and subreaper, neither kills a child for it nor stops serving."""
    pid = zygote.proc.pid
    before = children(pid)
    assert len(before) == 1, before  # the oracle, waiting for its request
    assert zygote.oracle(None, {}) == b""
    deadline = time.monotonic() + 60
    while children(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children(pid) == []
    assert zygote.proc.poll() is None
    events_r, events_w = os.pipe()
    token, _ = zygote.spawn(b"not a job", events_w)  # a keeper: it reads no job and ends
    os.close(events_w)
    os.close(events_r)
    assert zygote.wait(token, timeout=60) is not None


@slow
def test_the_grader_computes_what_the_oracle_did_not_answer(tmp_path, monkeypatch, capfd):
    """An oracle that answers nothing costs a note and TensorFlow's import in the grader, not a
    mark: the solution still gets every point."""
    monkeypatch.setattr(procs.Zygote, "oracle", lambda self, seed, wanted: pickle.dumps(
        {"error": "RuntimeError: forced by the test"}))
    out = tmp_path / "out"
    status = cli.main([str(SOLUTION), "--out", str(out), "--seed", "5", "--no-walls"])
    err = capfd.readouterr().err
    assert status == 0, err
    assert ("note: the TensorFlow zygote's oracle did not answer (RuntimeError: forced by the "
            "test); the grader computes the expected answers itself") in err
    top = sum(ex.points for ex in source.exercises(source.read(SOLUTION)))
    assert f"{SOLUTION.name}: {top:g} / {top}" in err, err


HELPER_DIES = """
import os, sys, time
sys.path.insert(0, sys.argv[1] + '/rnnbook/grading')
sys.path.insert(0, sys.argv[1])
import zygote
from rnnbook import expected
oracle = os.getpid()
def answer(stem, name, case):  # the helper dies on the first trial it takes
    if os.getpid() != oracle:
        open('helper-took-one', 'w').close()
        os._exit(3)
    deadline = time.monotonic() + 60
    while not os.path.exists('helper-took-one') and time.monotonic() < deadline:
        time.sleep(0.01)  # (the oracle waits for it: one trial is surely the helper's)
    return [name, case]
expected.trials = lambda stem, name, seed: [seed, seed + 1]  # two trials an exercise
expected.trial_answer = answer
expected.label = lambda stem, name: name
expected.wanted = lambda request: [('s', n) for n in request['exercises']['s']]
request = {'seed': 7, 'exercises': {'s': [str(n) for n in range(40)]}}
helped = zygote._helped(request)
print(len(helped), flush=True)
assert all(entry[1] == [[name, 7], [name, 8]] for (_, name), (entry, _) in helped.items())
import pickle
said = pickle.loads(expected.answer(request, helped))
print(sorted(said['records'][0]['exercises']) == sorted(request['exercises']['s']))
"""


def test_what_the_helper_did_not_answer_the_oracle_computes(tmp_path):
    """The helper (a fork of the oracle, where two cores are usable) dies on the first trial
    it takes: the oracle answers the rest off the pipe, and :func:`rnnbook.expected.answer`
    computes the exercise the helper took a trial of, whole, so every exercise is answered."""
    made = subprocess.run([sys.executable, "-c", HELPER_DIES, str(ROOT)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    answered, whole = made.stdout.split()
    assert int(answered) == 39, made.stdout  # all but the one the helper took a trial of
    assert whole == "True", made.stdout


DIGESTS = """
import json
from rnnbook import checks, expected
print(json.dumps({f"{stem} {ex.name} {seed}": expected.trials_digest(
    expected.trials(stem, ex.name, seed))
    for stem in checks.CHAPTERS for ex in checks.load(stem).exercises for seed in range(4)}))
"""


@slow
def test_trials_are_the_same_bits_whatever_blas_kernel_draws_them():
    """The grader draws the trials in its own environment, the zygote's oracle (and a bundle's
    answers, on the instructor's machine) in another: their digests must agree, or the
    grader computes TensorFlow's answers itself. So no trial may depend on a BLAS kernel's
    last bits (an SSE kernel against the machine's own; where the two agree this cannot
    tell, and passes)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}
    drawn = []
    for core in ({}, {"OPENBLAS_CORETYPE": "Nehalem"}):
        done = subprocess.run([sys.executable, "-c", DIGESTS], capture_output=True, text=True,
                              env={**env, **core}, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        drawn.append(json.loads(done.stdout))
    own, sse = drawn
    assert [k for k in own if own[k] != sse[k]] == []
