"""``python -m rnnbook.report DIR [...]``: the class report, rebuilt from a grading run's
reports (or Gradescope's downloaded results.json files). The instructor's side lives in
:mod:`rnnbook.grading.report`; this is its short name (left out of the learner release)."""
import sys

if __name__ == "__main__":
    from rnnbook.grading.report import main

    sys.exit(main())
