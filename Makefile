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
LIVESYNC_NPM := tests/livesync/npm
# The tools gateway's test upstreams (issue 32), pinned; tests/support/upstreams.py holds the same pins with digests.
UPSTREAM_CACHE := .tools/upstreams
MCP_SERVER_TIME := mcp-server-time==2026.10.19
SERVER_EVERYTHING := @modelcontextprotocol/server-everything@2026.8.31

.PHONY: run test lint bench lab clean distclean claude-cli livesync-npm python installed-venv docs security-pdf upstream-cache

$(STAMP): pyproject.toml
	@PYTHON='$(PYTHON)' sh tools/pick-python >/dev/null  # says why when no interpreter fits
	@PYTHON='$(PYTHON)' sh tools/pick-python --venv $(VENV)
	@test -x $(BIN)/python || '$(PY)' -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,docs,meaning]'
# Search by meaning's model: two files copied out of the pinned wordllama wheel (pip download, hash-checked).
	$(BIN)/python -m notegate.vault.meaning_model install >/dev/null
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

test: $(STAMP) .tools/.installed $(LIVESYNC_NPM)/node_modules/.installed $(UPSTREAM_CACHE)/.installed
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools

# The documentation site (docs/ + mkdocs.yml) into site/, strictly and offline: open site/index.html.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The printable security model (every Explanation page) as one PDF, printed by Debian's chromium.
security-pdf: docs
	PYTHONPATH=tools $(BIN)/python -m docsgen.printview site notegate-security-model.pdf

# The whole stack on this machine (server, origins, model stand-in, phone over OAuth, owner in Chromium,
# workstation under sync), then the promises as named PASS/FAIL checks; exit 1 on any FAIL. Needs
# /usr/bin/chromium (apt-get install -y chromium). LAB_ARGS="--dir DIR --keep" keeps what it made. The phone as an
# Obsidian device needs node and `make livesync-npm`, the second person the dev extra: else each is skipped, saying why.
lab: $(ENV_READY)
	$(RUN_ENV) $(BIN)/notegate lab $(LAB_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# The long power-loss run (bench/power_loss.py): 200 cuts at random instants under a real server on a FUSE
# file system that drops every unflushed byte, cycling through every writer (MCP writes, inbox promotion,
# contracts, import, backup, restore, sync, the hook's quarantine); POWER_ARGS="--writers" the other writers
# only, POWER_ARGS="--durability off --alone" the control. Root, /dev/fuse.
power-loss: $(STAMP)
	$(BIN)/python bench/power_loss.py $(POWER_ARGS)

# Claude Code's CLI, pinned, in a repo-local prefix: the plugin and `claude mcp` tests drive it (offline).
claude-cli:
	npm install --prefix .tools --no-audit --no-fund --loglevel=error $(CLAUDE_CODE)
	@touch .tools/.installed

# The LiveSync gate's test peers, pinned by $(LIVESYNC_NPM)/package-lock.json: pouchdb-server (a
# CouchDB-protocol server), pouchdb (LiveSync's replication client), octagonal-wheels (LiveSync's encryption),
# and LiveSync's own common library (vendored at a pinned commit in tests/livesync/commonlib), bundled by esbuild.
livesync-npm:
	npm ci --prefix $(LIVESYNC_NPM) --no-audit --no-fund --loglevel=error
	npm run --prefix $(LIVESYNC_NPM) --silent build-commonlib
	@touch $(LIVESYNC_NPM)/node_modules/.installed

$(LIVESYNC_NPM)/node_modules/.installed: $(LIVESYNC_NPM)/package-lock.json $(shell find tests/livesync/commonlib -type f)
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory livesync-npm; \
	else echo "npm not found: the LiveSync gate tests will be skipped"; fi

# Installed once when npm is there; without npm those few tests skip (CI requires them).
.tools/.installed:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory claude-cli; \
	else echo "npm not found: the Claude Code CLI tests will be skipped"; fi

# The tools gateway's test upstreams (issue 32), pinned: a local cache the tools process installs from and verifies
# against each catalog pin (the wheel's SHA-256, the tarball's npm integrity); nothing downloads in tests or at run
# time. The npm packages' dependencies land in a local npm cache that `npm install --offline` reads.
upstream-cache: $(STAMP)
	mkdir -p $(UPSTREAM_CACHE)/pypi $(UPSTREAM_CACHE)/npm $(UPSTREAM_CACHE)/npm-cache
	$(BIN)/pip download --quiet --disable-pip-version-check --only-binary :all: -d $(UPSTREAM_CACHE)/pypi $(MCP_SERVER_TIME)
	cd $(UPSTREAM_CACHE)/npm && npm pack --silent --cache ../npm-cache $(SERVER_EVERYTHING)
	npm install --prefix $(UPSTREAM_CACHE)/npm-warm --cache $(UPSTREAM_CACHE)/npm-cache --no-audit --no-fund \
		--loglevel=error $(UPSTREAM_CACHE)/npm/*.tgz
	@touch $(UPSTREAM_CACHE)/.installed

# Filled once when npm is there (the PyPI half alone is not enough for the tests); without it those tests skip.
$(UPSTREAM_CACHE)/.installed:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory upstream-cache; \
	else echo "npm not found: the tools gateway's upstream tests will be skipped"; fi

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
