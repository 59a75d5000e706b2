# RNN Internals: the one entry point. `make book` and `make test` set everything up themselves.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# What to grade with `make grade` (a notebook or a folder of notebooks) and where reports go.
SUBMISSIONS ?= submissions
OUT ?= _build/grades
# `make book EDITION=course REPOSITORY=<the course's repository>`: the book for a course that
# grades the exercises (no Solutions, no page for instructors; its Colab cells install the
# learner release from the course's repository), into _build/course/_build/html. The default
# edition keeps the solutions. REPOSITORY (or $RNNBOOK_REPOSITORY: a URL or GitHub owner/name)
# is the repository the book points to; default _config.yml's repository.url.
EDITION ?= self-study
REPOSITORY ?=
# `make autograder` settings: CHAPTER (required) is the assignment; SEED (optional) one seed
# for all; VISIBILITY; OPTIONS: any other option the bundle carries, as its flags
# (OPTIONS="--max-output 16 --timeout 20"; `python -m rnnbook.grading.release autograder -h`).
CHAPTER ?=
SEED ?=
VISIBILITY ?=
OPTIONS ?=
# One exercise or one notebook (CONTRIBUTING.md): `make exercise-check EXERCISE=rnn_step`
# (its function's name, or its number: EXERCISE=1.3; or STEM=01-basic-rnn-cell), `make execute STEM=01-basic-rnn-cell`; JOBS: pytest-xdist workers.
EXERCISE ?=
# `make notebooks FORCE=1`: overwrite notebooks/ even where it holds a learner's answers.
FORCE ?=
STEM ?=
JOBS ?= auto
# `make test-fast BASE=<git revision>`: what the working tree changes against it (default HEAD).
BASE ?= HEAD
export BASE
# `make mutations MUTATION=<id>`: one entry of tests/mutations.toml (default: every one).
MUTATION ?=

.PHONY: help venv book test test-fast test-times test-as-user exercise-check mutations notebooks workspace execute grade autograder release bench feedback lint tensorboard clean

help:
	@echo "make venv        create .venv and install the package into it, editable (every"
	@echo "                 target does it first; it reinstalls when requirements.txt or"
	@echo "                 pyproject.toml is newer than .venv/.installed)"
	@echo "make book        build the HTML book into _build/html (strict, offline)"
	@echo "                 REPOSITORY=<url or owner/name>: the repository it points to"
	@echo "                 EDITION=course REPOSITORY=<the course's>: no solutions, no page"
	@echo "                 for instructors, into _build/course/_build/html"
	@echo "make test        run the whole suite: package, checks both ways, grader, nbval, book build"
	@echo "make test-fast   only the tests the change against BASE=<rev> (default HEAD) touches,"
	@echo "                 seed sweeps on 20 seeds; prints the selection and what it leaves to CI"
	@echo "make test-times  the suite as make test does, then each file's time, the 30 slowest"
	@echo "                 tests and the coverage of rnnbook/ (_build/test-times/summary.md)"
	@echo "make test-as-user as root: the hostile corpus again as a user who is not root (CI)"
	@echo "make exercise-check EXERCISE=N.K  one exercise's tests (EXERCISE=<function name> too),"
	@echo "                 its 200-seed sweep, nbval of"
	@echo "                 its notebook (STEM=<stem>: every exercise of one notebook; JOBS=0: one process)"
	@echo "make mutations   every hand mutation of tests/mutations.toml, in a scratch copy, must"
	@echo "                 fail the tests it names (MUTATION=<id>: one; JOBS=2: two at a time)"
	@echo "make notebooks   regenerate notebooks/ (learner copies) from solutions/; refuses"
	@echo "                 to overwrite a learner's answers there unless FORCE=1"
	@echo "make workspace   copy notebooks/ into my-notebooks/ (yours, git-ignored); again"
	@echo "                 after git pull: updates it, your answers carried over"
	@echo "make execute     re-run book/ and solutions/ notebooks and store their outputs"
	@echo "                 STEM=<stem>: only that chapter's book/ and solutions/ copies"
	@echo "make grade       grade SUBMISSIONS=<notebook or folder> into OUT=$(OUT)"
	@echo "make autograder  Gradescope bundle _build/autograder.zip CHAPTER=<stem> [SEED=<n>] [VISIBILITY=<v>]"
	@echo "                 [OPTIONS='--<option> <value> ...']: any other option the bundle carries"
	@echo "make release     what students get, in _build/release (notebooks, package, README)"
	@echo "                 REPOSITORY=<url>: the course's repository its Colab cells install from"
	@echo "make bench       speed and memory figures (goals: CONTRIBUTING.md; dated runs: benchmarks/RESULTS.md)"
	@echo "make feedback    the share of tests/learners' wrong answers whose message names the"
	@echo "                 mistake, per chapter (listed, generic, raised, plain); -v lists the plain"
	@echo "make lint        ruff over the package, tests, benchmarks and scripts; mypy over"
	@echo "                 the package (pyproject.toml's [tool.mypy])"
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
	$(if $(REPOSITORY),RNNBOOK_REPOSITORY='$(REPOSITORY)') $(BIN)/python scripts/edition.py course _build/course
	$(BIN)/jupyter-book build . -W -n --keep-going --config _build/course/_config.yml \
		--toc _build/course/_toc.yml --path-output _build/course
else ifeq ($(EDITION),self-study)
	$(if $(REPOSITORY),RNNBOOK_REPOSITORY='$(REPOSITORY)') $(BIN)/python scripts/edition.py self-study _build/self-study
	$(BIN)/jupyter-book build . -W -n --keep-going --config _build/self-study/_config.yml
else
	@echo "make: EDITION must be self-study (the default) or course, not '$(EDITION)'" >&2; exit 2
endif

test: $(STAMP)
	$(BIN)/python -m pytest

# BASE reaches scripts/fast.py through the environment ("$$BASE"): any text is safe.
test-fast: $(STAMP)
	@$(BIN)/python scripts/fast.py --base "$$BASE" --jobs "$(JOBS)"

test-times: $(STAMP)
	mkdir -p _build/test-times
	$(BIN)/python -m pytest --junitxml=_build/test-times/junit.xml --cov=rnnbook \
		--cov-branch --cov-report=json:_build/test-times/coverage.json --cov-report=; \
		status=$$?; $(BIN)/python scripts/test_times.py && exit $$status

test-as-user: $(STAMP)
	bash .ci/as-user

# The values reach scripts/focus.py through the environment ("$$EXERCISE"): any text is safe.
exercise-check: $(STAMP)
	@$(BIN)/python scripts/focus.py check --exercise "$$EXERCISE" --stem "$$STEM" --jobs "$(JOBS)"

mutations: $(STAMP)
	@$(BIN)/python scripts/mutations.py --only "$$MUTATION" --jobs "$(JOBS)"

notebooks: $(STAMP)
	$(BIN)/python -m rnnbook.generate $(if $(FORCE),--force)

# A learner's own copy of the notebooks (my-notebooks/, git-ignored): made, then updated.
workspace: $(STAMP)
	$(BIN)/python -m rnnbook.workspace update

# Without STEM, every chapter notebook; nbconvert's options are scripts/focus.py's NBCONVERT.
execute: $(STAMP)
	@$(BIN)/python scripts/focus.py execute --stem "$$STEM"

grade: $(STAMP)
	$(BIN)/python -m rnnbook.grading $(SUBMISSIONS) --out $(OUT)

autograder: $(STAMP)
	@test -n "$(CHAPTER)" || { echo "make: give the assignment's chapter: make autograder CHAPTER=01-basic-rnn-cell" >&2; exit 2; }
	$(BIN)/python -m rnnbook.grading.release autograder --out _build/autograder.zip \
		--chapter $(CHAPTER) $(if $(SEED),--seed $(SEED)) \
		$(if $(VISIBILITY),--visibility $(VISIBILITY)) $(OPTIONS)

release: $(STAMP)
	$(BIN)/python -m rnnbook.grading.release learners --out _build/release \
		$(if $(REPOSITORY),--repository '$(REPOSITORY)')

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

feedback: $(STAMP)
	$(BIN)/python scripts/feedback.py -v

lint: $(STAMP)
	$(BIN)/ruff check rnnbook tests benchmarks scripts
	$(BIN)/mypy

tensorboard: $(STAMP)
	$(BIN)/tensorboard --logdir book/logs --host 127.0.0.1 --port 6006

clean:
	rm -rf _build
