"""The instructor's side: grading, Gradescope, the learner release. Never shipped to learners.

Modules, one job each:

- :mod:`.config`      the options, each declared once (flag, help, default, bounds, bundle)
- :mod:`.run`         a grading run: the exercise table, trials drawn once, oracle, children
- :mod:`.attempt`     one child's attempt at a submission, stage by stage: its job, its events,
                      the limits, what it gave
- :mod:`.child`       the child that runs a submission's notebook and answers its trials
- :mod:`.zygote`      imports what children need once and forks them (NumPy-only, or TensorFlow)
- :mod:`.wire`        the protocol between grader and child (JSON lines, bounded, plain data)
- :mod:`.procs`       process control: zygotes, process trees, memory, killing
- :mod:`.profile`     ``--profile``: where a run's wall time goes
- :mod:`.walls`       the Linux namespaces around each child
- :mod:`.results`     results.json, feedback.md and the gradebook; safe report names;
                      every output written whole (``write_atomic``)
- :mod:`.lock`        the lock on ``--out``: one grading run at a time writes into it
- :mod:`.classreport` the class report: ``python -m rnnbook.grading.classreport DIR``
- :mod:`.similarity`  similar submissions in the class report (copydetect), per exercise
- :mod:`.cli`         ``python -m rnnbook.grading``
- :mod:`.gradescope`  Gradescope's ``run_autograder``
- :mod:`.release`     ``make autograder`` and ``make release``; templates in ``templates/``

No import shows the zygote and the child: :mod:`.procs` starts ``python -I [-S] zygote.py`` in
a process of its own, and the zygote loads ``child.py``, ``wire.py``, ``walls.py``,
``../plaindata.py`` and ``../environment.py`` by path, as ``rnnbook_child``, ``rnnbook_wire``,
... (the NumPy-only zygote cannot import ``rnnbook``). So at module level they import the
standard library only (the child also ``rnnbook_plaindata``), and never the grader, the checks
or the instructor's side; ``tests/test_imports.py`` holds them to it (``BY_PATH``, ``LOADED``).
"""
