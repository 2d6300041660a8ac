# Quick start: `make run` serves a demo vault; `make test` runs the whole suite.
#   make run PORT=8766 HOST=127.0.0.1   serve elsewhere (default: the config's, 127.0.0.1:8765)
#   make run PYTHON=python3.12          build .venv with that interpreter (default: tools/pick-python)
#   make run VENV=DIR INSTALL=no        serve this checkout's code with an environment already installed in DIR
#                                       (another clone's .venv, say), as is: nothing is built or downloaded (offline)
VENV   := .venv
BIN    := $(VENV)/bin
DEMO   := var/demo
# The interpreter .venv is built with; a .venv of another Python version is rebuilt, not reused: the stamp
# names the version, so a change of interpreter (or of pyproject.toml) reinstalls.
PY         := $(shell PYTHON='$(PYTHON)' sh tools/pick-python 2>/dev/null)
PY_VERSION := $(if $(PY),$(shell '$(PY)' -c 'import sys; print("%d.%d" % sys.version_info[:2])'),none)
STAMP      := $(VENV)/.installed-$(PY_VERSION)
SERVE_ARGS := $(if $(PORT),--port $(PORT)) $(if $(HOST),--host $(HOST))
# INSTALL=no: use $(VENV) as it is, with this checkout's src/ first on the path (the code served is this one's).
INSTALL    := yes
ENV_READY  := $(if $(filter no,$(INSTALL)),installed-venv,$(STAMP))
RUN_ENV    := $(if $(filter no,$(INSTALL)),PYTHONPATH='$(CURDIR)/src')

CLAUDE_CODE := @anthropic-ai/claude-code@2.1.332

.PHONY: run test lint bench lab clean distclean claude-cli python installed-venv

$(STAMP): pyproject.toml
	@PYTHON='$(PYTHON)' sh tools/pick-python >/dev/null  # says why when no interpreter fits
	@PYTHON='$(PYTHON)' sh tools/pick-python --venv $(VENV)
	@test -x $(BIN)/python || '$(PY)' -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,meaning]'
	@rm -f $(VENV)/.installed $(VENV)/.installed-*
	@touch $(STAMP)

installed-venv:
	@test -x $(BIN)/notegate || { echo "INSTALL=no: $(BIN)/notegate not found; run make without INSTALL=no to build $(VENV)" >&2; exit 1; }

# Which interpreter make would use, and why (see tools/pick-python).
python:
	@PYTHON='$(PYTHON)' sh tools/pick-python

run: $(ENV_READY)
	@test -f $(DEMO)/notegate.toml || $(RUN_ENV) $(BIN)/notegate init $(DEMO)
	@test -f $(DEMO)/demo.token || $(RUN_ENV) $(BIN)/notegate token create --config $(DEMO)/notegate.toml \
		--name demo-workstation --class workstation --tier trusted --output $(DEMO)/demo.token
	$(RUN_ENV) $(BIN)/notegate serve --config $(DEMO)/notegate.toml --token-file $(DEMO)/demo.token $(SERVE_ARGS)

test: $(STAMP) .tools/.installed
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

# The whole stack on this machine (server, origins, model stand-in, phone over OAuth, owner in Chromium,
# workstation under sync), then the promises as named PASS/FAIL checks; exit 1 on any FAIL. Needs
# /usr/bin/chromium (apt-get install -y chromium). LAB_ARGS="--dir DIR --keep" keeps what it made.
lab: $(ENV_READY)
	$(RUN_ENV) $(BIN)/notegate lab $(LAB_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# The long power-loss run (bench/power_loss.py): 200 cuts at random instants under a real server on a FUSE
# file system that drops every unflushed byte; POWER_ARGS="--durability off" runs the control. Root, /dev/fuse.
power-loss: $(STAMP)
	$(BIN)/python bench/power_loss.py $(POWER_ARGS)

# Claude Code's CLI, pinned, in a repo-local prefix: the plugin and `claude mcp` tests drive it (offline).
claude-cli:
	npm install --prefix .tools --no-audit --no-fund --loglevel=error $(CLAUDE_CODE)
	@touch .tools/.installed

# Installed once when npm is there; without npm those few tests skip (CI requires them).
.tools/.installed:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory claude-cli; \
	else echo "npm not found: the Claude Code CLI tests will be skipped"; fi

# The virtual environment and caches only: var/ holds the demo vault and its origin (your notes), kept.
clean:
	rm -rf $(VENV) .pytest_cache build src/*.egg-info
	@test ! -d var || echo "kept var/ (the demo vault and its origin); make distclean deletes it"

# Everything clean removes, and var/: the demo vault, its origin and its tokens. Says so first.
distclean: clean
	@if [ -d var ]; then \
		echo "WARNING: deleting var/ (the demo vault $(DEMO), its origin $(DEMO)/origin.git and its tokens)"; \
		rm -rf var; \
	fi
