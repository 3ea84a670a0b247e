# Two commands set everything up: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
LAB_STAMP  := $(VENV)/.lab-stamp
TEST_STAMP := $(VENV)/.test-stamp

.PHONY: lab test check notebooks bench clean

# (Re)install when pyproject.toml changes; creates .venv when missing.
# The lab needs only the package; the tests add the test, bench and site extras.
# `ratelab compile` compiles the numba kernels of a first command into numba's cache (about a
# minute on two cores, once), so that no command or notebook stalls on them later.
$(LAB_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/ratelab compile
	@touch $(LAB_STAMP)

$(TEST_STAMP): $(LAB_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench,site]'
	@touch $(TEST_STAMP)

lab: $(LAB_STAMP)
	$(BIN)/ratelab lab

# Everything: unit, property, notebooks (nbval), real services (skipped with a reason when
# redis-server, nginx or chromium are not installed; RATELAB_REQUIRE_SERVICES=1 fails instead).
test: $(TEST_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The fast lane, on every core (pytest-xdist): unit and property tests, each property drawing a
# tenth of its examples (tests/budget.py); no notebooks, services, Dask clusters or tests marked slow.
# First, the package's floors (docs/architecture.md): lint-imports fails on an import running back up.
check: $(TEST_STAMP)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest tests -m "not service and not slow and not site" --hypothesis-profile=check -n auto --dist loadgroup $(PYTEST_ARGS)

notebooks: $(LAB_STAMP)
	$(BIN)/ratelab notebooks

bench: $(TEST_STAMP)
	$(BIN)/ratelab bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# The course as a static website from the executed notebooks (nothing is re-executed):
# build/site/_build/html/index.html. Needs the site extra, installed once. It shows the student
# notebooks, never the solutions; site-instructor adds them, in build/site-instructor (not for
# publishing). Beside them: the guides (docs/), the syllabus, and the API and command-line
# reference, which site/configure.py generates from the code into site/_generated/ first.
.PHONY: site site-instructor
$(VENV)/.site-stamp: $(LAB_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[site]'
	@touch $@

site: $(VENV)/.site-stamp
	$(BIN)/python site/configure.py build/site/_config.yml
	$(BIN)/jupyter-book build . --config build/site/_config.yml --toc site/_toc.yml --path-output build/site

site-instructor: $(VENV)/.site-stamp
	$(BIN)/python site/configure.py build/site-instructor/_config.yml --instructor
	$(BIN)/jupyter-book build . --config build/site-instructor/_config.yml --toc build/site-instructor/_toc.yml --path-output build/site-instructor
