from rnnbook.grading.cli import entry

entry()
