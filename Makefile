# RNN Internals: the one entry point. `make book` and `make test` set everything up themselves.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# What to grade with `make grade` (a notebook or a folder of notebooks) and where reports go.
SUBMISSIONS ?= submissions
OUT ?= _build/grades
# `make book EDITION=course`: the book without the Solutions part (for a course that grades
# the exercises), into _build/course/_build/html. The default edition keeps the solutions.
EDITION ?= self-study
# `make autograder` settings: CHAPTER (required) is the assignment; SEED (optional) one seed for all.
CHAPTER ?=
SEED ?=
# One exercise or one notebook (CONTRIBUTING.md): `make exercise-check EXERCISE=1.7` (or
# STEM=01-basic-rnn-cell), `make execute STEM=01-basic-rnn-cell`; JOBS: pytest-xdist workers.
EXERCISE ?=
STEM ?=
JOBS ?= auto

.PHONY: help venv book test exercise-check notebooks execute grade autograder release bench lint tensorboard clean

help:
	@echo "make venv        create .venv and install the package into it, editable (every"
	@echo "                 target does it first; it reinstalls when requirements.txt or"
	@echo "                 pyproject.toml is newer than .venv/.installed)"
	@echo "make book        build the HTML book into _build/html (strict, offline)"
	@echo "                 EDITION=course: without solutions, into _build/course/_build/html"
	@echo "make test        run the whole suite: package, checks both ways, grader, nbval, book build"
	@echo "make exercise-check EXERCISE=N.K  one exercise's tests, its 200-seed sweep, nbval of"
	@echo "                 its notebook (STEM=<stem>: every exercise of one notebook; JOBS=0: one process)"
	@echo "make notebooks   regenerate notebooks/ (learner copies) from solutions/"
	@echo "make execute     re-run book/ and solutions/ notebooks and store their outputs"
	@echo "                 STEM=<stem>: only that chapter's book/ and solutions/ copies"
	@echo "make grade       grade SUBMISSIONS=<notebook or folder> into OUT=$(OUT)"
	@echo "make autograder  Gradescope bundle _build/autograder.zip CHAPTER=<stem> [SEED=<n>] [VISIBILITY=<v>]"
	@echo "make release     what students get, in _build/release (notebooks, package, README)"
	@echo "make bench       speed and memory figures (goals: CONTRIBUTING.md; history: CHANGELOG.md)"
	@echo "make lint        ruff over the package, tests, benchmarks and scripts"
	@echo "make tensorboard serve book/logs/ (the chapters' graphs) on http://127.0.0.1:6006"
	@echo "make clean       remove _build"

$(STAMP): requirements.txt pyproject.toml
	@test -n "$(PYTHON)" || { echo "make: need python3.11 (or python3) on PATH" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

venv: $(STAMP)

book: $(STAMP)
ifeq ($(EDITION),course)
	$(BIN)/python scripts/course_edition.py _build/course/_toc.yml
	$(BIN)/jupyter-book build . -W -n --keep-going --toc _build/course/_toc.yml \
		--path-output _build/course
else ifeq ($(EDITION),self-study)
	$(BIN)/jupyter-book build . -W -n --keep-going
else
	@echo "make: EDITION must be self-study (the default) or course, not '$(EDITION)'" >&2; exit 2
endif

test: $(STAMP)
	$(BIN)/python -m pytest

# The values reach scripts/focus.py through the environment ("$$EXERCISE"): any text is safe.
exercise-check: $(STAMP)
	@$(BIN)/python scripts/focus.py check --exercise "$$EXERCISE" --stem "$$STEM" --jobs "$(JOBS)"

notebooks: $(STAMP)
	$(BIN)/python -m rnnbook.generate

execute: $(STAMP)
ifeq ($(strip $(STEM)),)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace book/[0-9]*.ipynb solutions/*.ipynb
else
	@$(BIN)/python scripts/focus.py execute --stem "$$STEM"
endif

grade: $(STAMP)
	$(BIN)/python -m rnnbook.grading $(SUBMISSIONS) --out $(OUT)

autograder: $(STAMP)
	@test -n "$(CHAPTER)" || { echo "make: give the assignment's chapter: make autograder CHAPTER=01-basic-rnn-cell" >&2; exit 2; }
	$(BIN)/python -m rnnbook.grading.release autograder --out _build/autograder.zip \
		--chapter $(CHAPTER) $(if $(SEED),--seed $(SEED)) \
		$(if $(VISIBILITY),--visibility $(VISIBILITY))

release: $(STAMP)
	$(BIN)/python -m rnnbook.grading.release learners --out _build/release

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

lint: $(STAMP)
	$(BIN)/ruff check rnnbook tests benchmarks scripts

tensorboard: $(STAMP)
	$(BIN)/tensorboard --logdir book/logs --host 127.0.0.1 --port 6006

clean:
	rm -rf _build
