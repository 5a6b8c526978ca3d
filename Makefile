# The two commands a new machine needs: `make ci-local` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The lane of ci-local; empty: the matrix's default_lane (ci/data/lanes.toml).
LANE ?=
RUN_ARGS ?=
# Remote runs: an inventory (a path, or a name under playbooks/inventories/) and lanes.
INVENTORY ?= lab
LANES ?=
# The inventory group of each family's nodes (ci-<family>).
GROUP_iluvatar := iluvatar_bi_v150
GROUP_kunlun := kunlun_p800

.PHONY: venv ci-local ci-iluvatar ci-kunlun test lint dashboard

$(BIN)/flagci: pyproject.toml requirements/lock.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r requirements/lock.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

venv: $(BIN)/flagci

# The main job on the embedded default: localhost, the CPU lane, no accelerator.
ci-local: venv
	$(BIN)/flagci run $(if $(LANE),--lane $(LANE)) $(RUN_ARGS)

# Nodes through Ansible (playbooks/): the family's lanes (its entry in [families] of
# ci/data/lanes.toml) on its group: Iluvatar on BI-V150, Kunlunxin on P800.
# Override with INVENTORY=... LANES=a,b.
ci-iluvatar ci-kunlun: ci-%: venv
	lanes=$$($(BIN)/flagci lanes list --family $* --names) && \
	$(BIN)/flagci run --inventory $(INVENTORY) --limit $(GROUP_$*) \
	  --lanes $(if $(LANES),$(LANES),"$$lanes") $(RUN_ARGS)

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
