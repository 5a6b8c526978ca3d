# The two commands a new machine needs: `make ci-local` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LANE ?= cpu-triton-3.6.0
RUN_ARGS ?=
# Remote runs: an inventory (a path, or a name under playbooks/inventories/) and lanes.
INVENTORY ?= lab
LANES ?=
ILUVATAR_LANES := iluvatar-flagtree-0.6.0,iluvatar-triton-3.2.0
KUNLUN_LANES := kunlun-flagtree-0.6.1,kunlun-flagtree-0.6.1a1,kunlun-flagtree-0.7.0rc2

.PHONY: venv ci-local ci-iluvatar ci-kunlun test lint dashboard

$(BIN)/flagci: pyproject.toml requirements/lock.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r requirements/lock.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

venv: $(BIN)/flagci

# The main job on the embedded default: localhost, the CPU lane, no accelerator.
ci-local: venv
	$(BIN)/flagci run --lane $(LANE) $(RUN_ARGS)

# Nodes through Ansible (playbooks/): both Iluvatar lanes on the BI-V150 group, the three
# Kunlunxin lanes on the P800 group. Override with INVENTORY=... LANES=a,b.
ci-iluvatar: venv
	$(BIN)/flagci run --inventory $(INVENTORY) --limit iluvatar_bi_v150 \
	  --lanes $(if $(LANES),$(LANES),$(ILUVATAR_LANES)) $(RUN_ARGS)

ci-kunlun: venv
	$(BIN)/flagci run --inventory $(INVENTORY) --limit kunlun_p800 \
	  --lanes $(if $(LANES),$(LANES),$(KUNLUN_LANES)) $(RUN_ARGS)

# The triage scores (tuning corpus and frozen split) are printed first; the test suite
# asserts them (tests/unit/test_triage_score.py).
test: venv lint
	$(BIN)/python benchmarks/triage_score.py --quiet
	$(BIN)/python -m pytest tests --durations=25

lint: venv
	$(BIN)/ruff check ci tests benchmarks
	$(BIN)/ruff format --check ci tests benchmarks
	$(BIN)/mypy ci

# Merge every run folder under results/ into the history, then rebuild results/dashboard/.
dashboard: venv
	$(BIN)/flagci history ingest --all results
	$(BIN)/flagci dashboard
