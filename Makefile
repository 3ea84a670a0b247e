# Two commands set everything up: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# Recorded traces: $RATELAB_DATA when set, else ../shared/traces when it is there.
ifneq ($(wildcard ../shared/traces),)
export RATELAB_DATA ?= $(abspath ../shared/traces)
endif

.PHONY: lab test notebooks bench clean

# (Re)install when pyproject.toml changes; creates .venv when missing.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	@touch $(STAMP)

lab: $(STAMP)
	$(BIN)/ratelab lab

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

notebooks: $(STAMP)
	$(BIN)/ratelab notebooks

bench: $(STAMP)
	$(BIN)/ratelab bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# The course as a static website from the executed notebooks (nothing is re-executed):
# build/site/_build/html/index.html. Needs the site extra, installed once.
.PHONY: site
$(VENV)/.site-stamp: pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[site]'
	@touch $@

site: $(VENV)/.site-stamp
	$(BIN)/jupyter-book build . --config site/_config.yml --toc site/_toc.yml --path-output build/site
