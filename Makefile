# The two set-up commands of the README: `make demo` and `make test`.
# Both create (or reuse) a local virtual environment in .venv.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint browser

$(BIN)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/croupier demo

lint: $(BIN)/.installed
	$(BIN)/ruff check controller drivers vision signage tests bench examples
	$(BIN)/mypy controller drivers signage

# The signage page's browser tests drive Debian's Chromium (Playwright comes with the dev extra and
# is pointed at /usr/bin/chromium; it never downloads a browser). Installed here when missing and
# we are root; otherwise the browser tests say loudly why they are skipped.
browser:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the signage browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

test: lint browser
	$(BIN)/pytest
