"""The instructor's side: grading, Gradescope, the learner release. Never shipped to learners.

Modules, one job each:

- :mod:`.config`      the settings, with one set of defaults
- :mod:`.run`         a grading run: the exercise table, trials drawn once, oracle, children
- :mod:`.attempt`     one child's attempt at a submission, stage by stage: its job, its events,
                      the limits, what it gave
- :mod:`.child`       the child that runs a submission's notebook and answers its trials
- :mod:`.zygote`      imports what children need once and forks them (NumPy-only, or TensorFlow)
- :mod:`.wire`        the protocol between grader and child (JSON lines, bounded, plain data)
- :mod:`.procs`       process control: zygotes, process trees, memory, killing
- :mod:`.walls`       the Linux namespaces around each child
- :mod:`.results`     results.json, feedback.md and the gradebook; safe report names
- :mod:`.classreport` the class report: ``python -m rnnbook.grading.classreport DIR``
- :mod:`.similarity`  similar submissions in the class report (copydetect), per exercise
- :mod:`.cli`         ``python -m rnnbook.grading``
- :mod:`.gradescope`  Gradescope's ``run_autograder``
- :mod:`.release`     ``make autograder`` and ``make release``; templates in ``templates/``
"""
