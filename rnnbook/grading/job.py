"""What the grader sends a child: one typed :class:`Job`, plain data on the wire.

Built by the grader (:func:`rnnbook.grading.attempt.job`, from the run's
:class:`~rnnbook.grading.config.Config`) and read by the zygote's keeper and the child, which
cannot import the package: this module needs only the standard library, and the zygote loads
it by path as ``rnnbook_job`` (as it loads ``wire.py`` and ``walls.py``).

``limits`` holds the options the child enforces itself: every :class:`Config` field declared
``child=True``, by its field name, in the option's own unit (MB, N). Their defaults live in
``config.py`` only; the child reads ``job.limits[name]``. A new child-side limit is its
declaration in ``config.py`` and its use in ``zygote.py`` or ``child.py``
(``tests/test_config.py`` fails for a declared option that no code reads).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class Job:
    """One child's work. ``workdir``: its working folder; ``env``: its whole environment;
    ``limits``: the child-side options (``{field name: value}``); ``chapter``, ``cells`` (the
    notebook's, markdown as ""), ``skip`` (cells not to run) and ``exercises``
    (``[{"name": name, "trials": [trial]}]``, only those pending); ``drop_to``: the uid to
    drop to (no walls, as root); ``scratch_mb``: the scratch pool's size (behind the walls);
    ``walls``: the walls' spec (None: none); ``processes``: RLIMIT_NPROC (None: a pids
    cgroup bounds them, or no walls); ``probe``: only build the walls and check them."""

    workdir: str
    env: dict[str, str]
    limits: dict[str, int | float]
    chapter: str = ""
    cells: list[str] = field(default_factory=list)
    skip: list[int] = field(default_factory=list)
    exercises: list[dict[str, Any]] = field(default_factory=list)
    drop_to: int | None = None
    scratch_mb: int | None = None
    walls: dict[str, Any] | None = None
    processes: int | None = None
    probe: bool = False

    def plain(self) -> dict[str, Any]:
        """The job as a dict for :func:`wire.encode` (its values are not copied)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def read(cls, plain: dict[str, Any]) -> Job:
        """The job of a decoded dict; a TypeError for a key it does not have (or lacks)."""
        return cls(**plain)
