# Quick start: `make run` serves a demo vault; `make test` runs the whole suite.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   := var/demo

CLAUDE_CODE := @anthropic-ai/claude-code@2.1.332

.PHONY: run test lint bench clean claude-cli

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	@test -f $(DEMO)/notegate.toml || $(BIN)/notegate init $(DEMO)
	@test -f $(DEMO)/demo.token || $(BIN)/notegate token create --config $(DEMO)/notegate.toml \
		--name demo-workstation --class workstation --tier trusted --output $(DEMO)/demo.token
	$(BIN)/notegate serve --config $(DEMO)/notegate.toml --token-file $(DEMO)/demo.token

test: $(STAMP) .tools/.installed
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# Claude Code's CLI, pinned, in a repo-local prefix: the plugin and `claude mcp` tests drive it (offline).
claude-cli:
	npm install --prefix .tools --no-audit --no-fund --loglevel=error $(CLAUDE_CODE)
	@touch .tools/.installed

# Installed once when npm is there; without npm those few tests skip (CI requires them).
.tools/.installed:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory claude-cli; \
	else echo "npm not found: the Claude Code CLI tests will be skipped"; fi

clean:
	rm -rf $(VENV) var
