# websec: `make run` serves the app, `make test` runs every test. Both set everything up first.
#
# Setup is idempotent and cached: Python packages are reinstalled only when a requirements file
# changes (stamp files in .venv/), bun only when BUN_VERSION changes (stamp in .tools/), and apt-get
# runs only when a needed binary is missing.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

PORT ?= 3000
HOST ?= 0.0.0.0
PYTEST_ARGS ?=

# Python 3.11 is what the project targets (pyproject.toml); fall back to whatever python3 is.
PY ?= $(or $(shell command -v python3.11 2>/dev/null),python3)
VENV := .venv
BIN := $(VENV)/bin
TOOLS := .tools
BUN_VERSION := 1.4.5
# The accessibility tests inject axe-core into headless Chromium (tests/ui/test_accessibility.py).
AXE_VERSION := 4.14.1
# Microsoft's SARIF validator (with GitHub code scanning's rules) and the SARIF 2.1.0 schema it ships:
# tests/report_formats/test_sarif.py checks `scan --format sarif` with both.
SARIF_MULTITOOL_VERSION := 5.7.0

# Reflex 0.10.1 wants bun >= 1.4.4 and would download it from the internet; we install it from the
# npm registry instead and tell Reflex to use the one on PATH.
export PATH := $(CURDIR)/$(TOOLS)/node_modules/.bin:$(CURDIR)/$(BIN):$(PATH)
export REFLEX_USE_SYSTEM_BUN := 1
export REFLEX_CHECK_LATEST_VERSION := false
export REFLEX_HTTP_CLIENT_BIND_ADDRESS := 0.0.0.0
# Reflex's per-user directory (installation id, caches) stays inside the checkout.
export REFLEX_DIR := $(CURDIR)/$(TOOLS)/reflex
# bun does not read npm's config; without this Reflex probes registries over the internet.
ifeq ($(origin NPM_CONFIG_REGISTRY),undefined)
NPM_CONFIG_REGISTRY := $(shell npm config get registry 2>/dev/null)
endif
NPM_CONFIG_REGISTRY := $(or $(NPM_CONFIG_REGISTRY),https://registry.npmjs.org/)
export NPM_CONFIG_REGISTRY

# apt-get only as root or through sudo; APT_PACKAGES lists "binary:package" pairs.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
# Fonts for the PDFs (any script: services/pdf/_fonts.py); a font is "installed" when its file exists.
RUN_APT_PACKAGES := node:nodejs npm:npm /usr/share/fonts/truetype/noto/NotoSans-Regular.ttf:fonts-noto-core \
	/usr/share/fonts/truetype/noto/NotoSansMono-Regular.ttf:fonts-noto-mono \
	/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf:fonts-droid-fallback \
	/usr/share/fonts/truetype/nanum/NanumGothic.ttf:fonts-nanum \
	/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf:fonts-symbola
# initdb is not on PATH on Debian, so PostgreSQL is detected by its version directory instead.
TEST_APT_PACKAGES := pdftoppm:poppler-utils chromium:chromium chromedriver:chromium-driver redis-server:redis-server \
	datefudge:datefudge nginx:nginx apache2:apache2 caddy:caddy
PG_BINDIR = $(lastword $(sort $(wildcard /usr/lib/postgresql/*/bin)))

define apt_install_missing
	missing=""; \
	for pair in $(1); do \
	  need="$${pair%%:*}"; \
	  case "$$need" in /*) [ -e "$$need" ] ;; *) command -v "$$need" >/dev/null 2>&1 ;; esac \
	    || missing="$$missing $${pair#*:}"; \
	done; \
	$(if $(2),[ -x "$$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -n1)/initdb" ] || missing="$$missing $(2)";) \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

.PHONY: help run test test-clock lint bench setup setup-test system-deps system-deps-test clean distclean

help:  ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 14

run: setup  ## Set up, then serve UI + API in prod mode on http://localhost:3000 (PORT=, HOST=)
	WEBSEC_RUN_PORT=$(PORT) $(BIN)/reflex run --env prod --single-port --frontend-port $(PORT) --backend-host $(HOST)

# Two pytest-xdist workers, one a core: about 440 s where one process took 670 (the tests wait on servers and
# sockets much of the time). The tests that start Reflex all run in one of them (tests/conftest.py).
# PYTEST_ARGS="-n 0" runs them in one process.
test: setup setup-test  ## Set up, then run every test (pytest over tests/), then test-clock
	$(if $(PG_BINDIR),PATH="$(PG_BINDIR):$$PATH") $(BIN)/python -m pytest --numprocesses 2 $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory test-clock

# The tests read one clock (tests/clock.py), never the real date. To keep it so, the scanner, store and API
# tests run again with the system clock a year ahead and a year back: datefudge moves what time(),
# gettimeofday() and the realtime clock say (Python, OpenSSL) and leaves the monotonic clock and sleeps alone.
# Also the tests of what checks a certificate at the real time (the fixtures' self-tests, the callbacks' client):
# the whole suite passes so too (28 November 2026), but twice over it would double make test.
# The two runs go side by side (their test sites claim distinct loopback addresses, tests/fixtures/sites.py,
# and ports, tests/fixtures/ports.py): about 400 s where one after the other took 610 s. Each run's output is
# printed when both have ended.
CLOCK_SHIFTED_TESTS := tests/scanner tests/store tests/api tests/test_fixtures_selftest.py \
  tests/jobs/test_async_scans.py tests/usecases/test_monitors.py
test-clock: setup setup-test  ## The scanner, store, API and clock-reading tests with the system clock a year ahead and back
	@logs=$$(mktemp -d); pids=""; \
	for shift in "+1 year" "-1 year"; do \
	  $(if $(PG_BINDIR),PATH="$(PG_BINDIR):$$PATH") datefudge "$$(date -u -d "$$shift" '+%Y-%m-%d %H:%M:%S UTC')" \
	    $(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) $(CLOCK_SHIFTED_TESTS) \
	    > "$$logs/$${shift% *}.log" 2>&1 & pids="$$pids $$!"; \
	done; \
	status=0; for pid in $$pids; do wait $$pid || status=1; done; \
	for shift in "+1 year" "-1 year"; do \
	  echo "== $(CLOCK_SHIFTED_TESTS) with the system clock $$shift"; cat "$$logs/$${shift% *}.log"; \
	done; \
	rm -rf "$$logs"; exit $$status

# mypy --strict over all of the application and the benches (a bench that no longer matches the code it
# measures fails here, not when someone next measures); pyproject.toml relaxes one check for the Reflex pages
# and components only (Reflex types its component constructors as returning Any), and says why.
lint: $(VENV)/.dev-installed  ## ruff (lint and format check) and mypy --strict
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict websec_app api_routes bench

bench: $(VENV)/.dev-installed  ## Run every bench/*_bench.py and print its figures
	@shopt -s nullglob; scripts=(bench/*_bench.py); \
	if [ $${#scripts[@]} -eq 0 ]; then echo "No benchmarks in bench/ yet"; fi; \
	for script in "$${scripts[@]}"; do \
	  echo "== $$script"; PYTHONPATH=$(CURDIR) $(BIN)/python "$$script"; \
	done

setup: system-deps $(VENV)/.installed $(TOOLS)/.bun-$(BUN_VERSION)
setup-test: system-deps-test $(VENV)/.dev-installed $(TOOLS)/.axe-$(AXE_VERSION) $(TOOLS)/.sarif-$(SARIF_MULTITOOL_VERSION)

system-deps:
	@$(call apt_install_missing,$(RUN_APT_PACKAGES))

system-deps-test:
	@$(call apt_install_missing,$(TEST_APT_PACKAGES),postgresql)

$(BIN)/python:
	@$(PY) -c 'import ensurepip' 2>/dev/null || { \
	  echo "Installing Debian packages: python3 python3-venv"; $(SUDO) apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3 python3-venv; }
	$(PY) -m venv $(VENV)

$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt requirements.txt $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(TOOLS)/.bun-$(BUN_VERSION): | system-deps
	npm install --prefix $(TOOLS) --no-save --no-audit --no-fund --loglevel=error bun@$(BUN_VERSION)
	$(TOOLS)/node_modules/.bin/bun --version
	touch $@

# axe-core from the npm registry, pinned, into .tools/axe (the stamp skips it on re-runs).
$(TOOLS)/.axe-$(AXE_VERSION): | system-deps
	npm install --prefix $(TOOLS)/axe --no-save --no-audit --no-fund --loglevel=error axe-core@$(AXE_VERSION)
	test -f $(TOOLS)/axe/node_modules/axe-core/axe.min.js
	touch $@

# The Linux build of the multitool is a self-contained executable inside an npm package (no .NET install).
$(TOOLS)/.sarif-$(SARIF_MULTITOOL_VERSION): | system-deps
	rm -rf $(TOOLS)/sarif && mkdir -p $(TOOLS)/sarif
	npm pack --pack-destination $(TOOLS)/sarif --loglevel=error @microsoft/sarif-multitool-linux@$(SARIF_MULTITOOL_VERSION)
	tar -xzf $(TOOLS)/sarif/microsoft-sarif-multitool-linux-$(SARIF_MULTITOOL_VERSION).tgz -C $(TOOLS)/sarif
	rm $(TOOLS)/sarif/*.tgz
	chmod +x $(TOOLS)/sarif/package/Sarif.Multitool
	test -f $(TOOLS)/sarif/package/sarif-2.1.0.json
	touch $@

clean:  ## Remove build output and caches (keeps .venv and .tools)
	rm -rf .web .states .pytest_cache .ruff_cache .mypy_cache
	find . -name __pycache__ -type d -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean  ## Also remove the virtualenv and the JS tooling
	rm -rf $(VENV) $(TOOLS)
