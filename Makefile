# Quick start: `make run` serves a demo vault; `make test` runs the whole suite.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   := var/demo

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	@test -f $(DEMO)/notegate.toml || $(BIN)/notegate init $(DEMO)
	@test -f $(DEMO)/demo.token || $(BIN)/notegate token create --config $(DEMO)/notegate.toml \
		--name demo-workstation --class workstation --tier trusted --output $(DEMO)/demo.token
	$(BIN)/notegate serve --config $(DEMO)/notegate.toml --token-file $(DEMO)/demo.token

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) var
