"""The grader's settings: one set of defaults for the command line, Gradescope and the bundle."""
import os
import pathlib
from dataclasses import asdict, dataclass, fields

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
#: the table of exercises (number, name, points, kind per chapter) the Gradescope bundle carries
#: in place of solutions/
EXERCISES = "exercises.json"
WALLS = ("required", "auto", "off")
#: Gradescope's visibility of each test's output (its trials): shown at once, never, after the
#: due date, or once the grades are published
VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")


@dataclass
class Config:
    seed: int | None = None  # None: a fresh random seed, recorded in every report
    chapter: str | None = None  # grade every submission as this chapter
    timeout: float = 10.0  # seconds per exercise (all its trials), by the grader's clock
    cell_timeout: float = 120.0  # seconds per notebook cell
    budget: float = 300.0  # seconds of wall time per submission, all its children together
    memory: int = 2048  # MB resident, per submission's child and what it starts
    processes: int = 256  # processes and threads of a submission's child, together
    workers: int = os.cpu_count() or 1
    walls: str = "required"  # "auto": without them where they cannot stand; "off"
    overwrite: bool = False
    visibility: str = "visible"  # each test's, in results.json (Gradescope)
    roster: str | None = None  # a CSV mapping submission files (names or paths) to students
    class_report: bool = True  # class-report.html and .csv after the run (not on Gradescope)

    def limits_text(self):
        return (f"--timeout {self.timeout:g} --cell-timeout {self.cell_timeout:g} "
                f"--budget {self.budget:g} --memory {self.memory} "
                f"--processes {self.processes}")

    def check(self):
        if min(self.workers, self.timeout, self.cell_timeout, self.budget, self.memory) <= 0:
            raise ValueError("--workers, --timeout, --cell-timeout, --budget and --memory must "
                             "be positive")
        if self.processes < 16:
            raise ValueError("--processes must be at least 16 (a TensorFlow child has a few "
                             "threads of its own)")
        if self.walls not in WALLS:
            raise ValueError(f"walls must be one of {', '.join(WALLS)}")
        if self.visibility not in VISIBILITY:
            raise ValueError(f"visibility must be one of {', '.join(VISIBILITY)}, not "
                             f"{self.visibility!r}")
        return self


#: what the Gradescope bundle's autograder.json may set, with its defaults
BUNDLE_KEYS = ("chapter", "seed", "timeout", "cell_timeout", "budget", "memory", "visibility")


def bundle_defaults():
    config = Config()
    return {f.name: getattr(config, f.name) for f in fields(Config) if f.name in BUNDLE_KEYS}


def as_dict(config):
    return asdict(config)
