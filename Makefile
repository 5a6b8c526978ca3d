# The two commands a new machine needs: `make ci-local` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LANE ?= cpu-triton-3.6.0
RUN_ARGS ?=

.PHONY: venv ci-local test lint dashboard

$(BIN)/flagci: pyproject.toml requirements/lock.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r requirements/lock.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

venv: $(BIN)/flagci

# The main job on the embedded default: localhost, the CPU lane, no accelerator.
ci-local: venv
	$(BIN)/flagci run --lane $(LANE) $(RUN_ARGS)

test: venv lint
	$(BIN)/python -m pytest tests

lint: venv
	$(BIN)/ruff check ci tests benchmarks
	$(BIN)/ruff format --check ci tests benchmarks
	$(BIN)/mypy ci

# Merge every run folder under results/ into the history, then rebuild results/dashboard/.
dashboard: venv
	$(BIN)/flagci history ingest --all results
	$(BIN)/flagci dashboard
