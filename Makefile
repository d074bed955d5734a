# The two set-up commands of the README: `make demo` and `make test`.
# Both create (or reuse) a local virtual environment in .venv.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint

$(BIN)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/croupier demo

lint: $(BIN)/.installed
	$(BIN)/ruff check controller drivers vision tests bench
	$(BIN)/mypy controller drivers

test: lint
	$(BIN)/pytest
